// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptp_opts.h"

#define NS_PER_SEC 1000000000LL

static bool parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return !errno && end != s && !*end && *out >= lo && *out <= hi;
}

/* "2s", "500ms", "10" (seconds). */
static bool parse_seconds(const char *s, int64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v > 3600)
		return false;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (*end && strcmp(end, "s"))
		return false;
	*ns = (int64_t)(v * NS_PER_SEC);
	return true;
}

/* "001122.fffe.334455", as ptp4l prints a clock identity. */
static bool parse_clock_id(const char *s, uint8_t *id)
{
	int n = -1;

	return sscanf(s, "%2hhx%2hhx%2hhx.%2hhx%2hhx.%2hhx%2hhx%2hhx%n", &id[0], &id[1],
		      &id[2], &id[3], &id[4], &id[5], &id[6], &id[7], &n) == 8 &&
	       n == 18 && !s[n];
}

/* Comma-separated clock identities, at most PTP_MAX_ALLOW. */
static bool parse_allow(struct ptp_opts *o, char *val)
{
	char *save, *id;

	for (id = strtok_r(val, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
		if (o->nallow == PTP_MAX_ALLOW || !parse_clock_id(id, o->allow[o->nallow]))
			return false;
		o->nallow++;
	}
	return o->nallow > 0;
}

static bool allowed_key(const char *allowed, const char *key)
{
	size_t n = strlen(key);
	const char *p = allowed;

	while ((p = strstr(p, key))) {
		if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

static int set_opt(struct ptp_opts *o, char *key, char *val, char *err, size_t errlen)
{
	long long v;

	if (!strcmp(key, "timescale") && val &&
	    (!strcmp(val, "tai") || !strcmp(val, "utc") || !strcmp(val, "arb"))) {
		o->want_tai = !strcmp(val, "tai");
		o->arb = !strcmp(val, "arb");
	} else if (!strcmp(key, "clock") && val && (!strcmp(val, "tai") || !strcmp(val, "utc"))) {
		o->ref_utc = !strcmp(val, "utc");
	} else if (!strcmp(key, "utc_offset") && val && parse_int(val, 0, 1000, &v)) {
		o->have_utc_offset = true;
		o->utc_offset = (int)v;
	} else if (!strcmp(key, "domain") && val && parse_int(val, 0, 255, &v)) {
		o->domain = (int)v;
	} else if (!strcmp(key, "transport") && val && (!strcmp(val, "udp4") || !strcmp(val, "l2"))) {
		o->transport = val;
	} else if (!strcmp(key, "ts") && val &&
		   (!strcmp(val, "auto") || !strcmp(val, "sw") || !strcmp(val, "hw"))) {
		o->ts = val;
	} else if (!strcmp(key, "wait") && val && parse_seconds(val, &o->wait_ns)) {
		;
	} else if (!strcmp(key, "drift_ppb") && val && parse_int(val, 0, 1000000, &v)) {
		o->max_drift_ppb = v;
	} else if (!strcmp(key, "allow") && val && parse_allow(o, val)) {
		;
	} else if (!strcmp(key, "phc") && val && *val) {
		o->phc = val;
	} else {
		snprintf(err, errlen, "bad option '%s%s%s'", key, val ? "=" : "", val ? val : "");
		return -EINVAL;
	}
	return 0;
}

int ptp_opts_parse(struct ptp_opts *o, const char *spec, const char *allowed,
		   char *err, size_t errlen)
{
	const char *q = strchr(spec, '?');
	size_t alen = q ? (size_t)(q - spec) : strlen(spec);
	char *save, *tok;

	memset(o, 0, sizeof(*o));
	o->transport = "udp4";
	o->ts = "auto";
	o->wait_ns = 10 * NS_PER_SEC;
	o->max_drift_ppb = 1000;
	if (!alen || alen >= sizeof(o->addr)) {
		snprintf(err, errlen, "'%s': missing or too long address", spec);
		return -EINVAL;
	}
	memcpy(o->addr, spec, alen);
	if (!q)
		return 0;
	if (strlen(q + 1) >= sizeof(o->buf)) {
		snprintf(err, errlen, "options too long");
		return -EINVAL;
	}
	strcpy(o->buf, q + 1);
	for (tok = strtok_r(o->buf, "&", &save); tok; tok = strtok_r(NULL, "&", &save)) {
		char *val = strchr(tok, '=');

		if (val)
			*val++ = '\0';
		if (!allowed_key(allowed, tok)) {
			snprintf(err, errlen, "unknown option '%s' (this source takes: %s)",
				 tok, allowed);
			return -EINVAL;
		}
		if (set_opt(o, tok, val, err, errlen))
			return -EINVAL;
	}
	return 0;
}

void ptp_opts_timescale(const struct ptp_opts *o, struct measurement *m,
			bool ref_tai, int announced)
{
	m->tai = false;
	m->utc_offset_valid = false;
	if (o->arb)
		return;
	/*
	 * Kept in m whatever the reference counts, so that whoever applies
	 * m can move it to the clock's timescale (apply_timescale()).
	 */
	if (announced >= 0) {
		m->utc_offset_valid = true;
		m->utc_offset = announced;
	} else if (o->have_utc_offset) {
		m->utc_offset_valid = true;
		m->utc_offset = o->utc_offset;
	}
	if (!ref_tai)
		return;
	if (o->want_tai || !m->utc_offset_valid)
		m->tai = true;
	else
		m->offset_ns -= m->utc_offset * NS_PER_SEC;
}
