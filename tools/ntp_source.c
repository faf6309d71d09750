// SPDX-License-Identifier: GPL-2.0
/*
 * The ntp:// source: a burst of client-mode exchanges with one server,
 * filtered into one measurement whose bound is the root distance.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_quality.h"
#include "ntp_client.h"
#include "ntp_filter.h"
#include "source.h"

/* Give up on a server whose first requests all go unanswered, silently. */
#define NTP_GIVE_UP_AFTER	3
/* Longest burst; longer requests are clamped. */
#define NTP_MAX_SAMPLES		64
/*
 * Default spacing of a burst: fast on a private network, where syncing
 * within 2 s matters, and the 2 s ntpd's "discard minimum" asks for from
 * anything else, so public servers never see us as abusive.
 */
#define NTP_LAN_INTERVAL_NS	100000000LL
#define NTP_WAN_INTERVAL_NS	2000000000LL
/* KoD RATE doubles the spacing, up to RFC 5905's default poll (64 s). */
#define NTP_MAX_INTERVAL_NS	64000000000LL

struct ntp_source {
	struct ntp_client client;
	int64_t interval_ns;	/* may grow on KoD RATE */
	bool denied;		/* KoD DENY or RSTR: never ask again */
	bool measured;		/* a measurement succeeded */
	char kiss[8];
};

/*
 * "HOST", "HOST:PORT", "[V6]", "[V6]:PORT"; a bare IPv6 address (more than
 * one colon) has no port. Returns false on a malformed spec.
 */
static bool parse_spec(const char *spec, char *host, size_t hlen, char *port, size_t plen)
{
	const char *p = NULL, *h = spec, *end;
	size_t n;
	char *e;
	long v;

	if (*spec == '[') {
		end = strchr(spec, ']');
		if (!end || (end[1] && end[1] != ':'))
			return false;
		h = spec + 1;
		n = end - h;
		if (end[1] == ':')
			p = end + 2;
	} else if ((end = strchr(spec, ':')) && !strchr(end + 1, ':')) {
		n = end - spec;
		p = end + 1;
	} else {
		n = strlen(spec);
	}
	if (!n || n >= hlen)
		return false;
	memcpy(host, h, n);
	host[n] = 0;
	if (strchr(host, '/') || strchr(host, ' '))
		return false;
	if (!p) {
		snprintf(port, plen, "%d", NTP_PORT);
		return true;
	}
	v = strtol(p, &e, 10);
	if (!*p || *e || v < 1 || v > 65535)
		return false;
	snprintf(port, plen, "%ld", v);
	return true;
}

/* Loopback, RFC 1918, link-local, unique local (and those in IPv6 form). */
static bool private_address(const struct sockaddr_storage *ss)
{
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	uint32_t a;

	if (ss->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_LINKLOCAL(a6) ||
		    (a6->s6_addr[0] & 0xfe) == 0xfc)
			return true;
		if (!IN6_IS_ADDR_V4MAPPED(a6))
			return false;
		memcpy(&a, &a6->s6_addr[12], 4);
	} else {
		a = ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
	}
	a = ntohl(a);
	return (a >> 24) == 10 || (a >> 24) == 127 || (a >> 20) == 0xac1 ||
	       (a >> 16) == 0xc0a8 || (a >> 16) == 0xa9fe;
}

static int ntp_open(struct source *src, const char *spec, char *err, size_t errlen)
{
	char host[256], port[8];
	struct ntp_source *ns;
	int ret;

	if (!parse_spec(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "'%s': bad URL, expected ntp://HOST[:PORT] or ntp://[IPV6]:PORT",
			 src->url);
		return -EINVAL;
	}
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ret = ntp_client_open(&ns->client, host, port, err, errlen);
	if (ret) {
		free(ns);
		return ret;
	}
	ns->interval_ns = src->opts.interval_ns;
	if (ns->interval_ns < 0)
		ns->interval_ns = private_address(&ns->client.addr) ?
				  NTP_LAN_INTERVAL_NS : NTP_WAN_INTERVAL_NS;
	src->priv = ns;
	return 0;
}

static void ntp_close(struct source *src)
{
	struct ntp_source *ns = src->priv;

	if (!ns)
		return;
	ntp_client_close(&ns->client);
	free(ns);
	src->priv = NULL;
}

static void sleep_until(int64_t mono)
{
	struct timespec ts = { .tv_sec = mono / 1000000000LL, .tv_nsec = mono % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Act on a Kiss-o'-Death; false when the burst must stop. */
static bool kiss(struct source *src, struct ntp_source *ns, const struct ntp_exchange *x)
{
	char code[8];

	ntp_refid_str(&x->reply, code, sizeof(code));
	snprintf(ns->kiss, sizeof(ns->kiss), "%s", code);
	switch (ntp_kiss(&x->reply)) {
	case NTP_KISS_RATE:
		ns->interval_ns = ns->interval_ns ? ns->interval_ns * 2 : 1000000000LL;
		fprintf(stderr, "lclkctl: %s: server asks us to slow down (KoD RATE): %s\n",
			src->url, ns->interval_ns > NTP_MAX_INTERVAL_NS ?
			"stopping this burst" : "doubling the spacing");
		return ns->interval_ns <= NTP_MAX_INTERVAL_NS;
	case NTP_KISS_DENY:
	case NTP_KISS_RSTR:
		ns->denied = true;
		fprintf(stderr, "lclkctl: %s: server refuses service (KoD %s): not asking it again\n",
			src->url, code);
		return false;
	default:
		fprintf(stderr, "lclkctl: %s: rejected reply: Kiss-o'-Death %s (server unsynchronised)\n",
			src->url, code);
		return true;
	}
}

/* A usable exchange as a filter sample; precision_ns is ours. */
static void to_sample(const struct ntp_exchange *x, int64_t precision_ns,
		      uint32_t drift_ppb, struct ntp_sample *s)
{
	s->offset_ns = x->offset_ns;
	s->delay_ns = x->delay_ns;
	/* +1: the offset is a halved sum, truncated. */
	s->err_ns = x->ours.err_ns + precision_ns + ntp_log2_to_ns(x->reply.precision) +
		    (int64_t)ceil((double)(x->ours.t4 - x->ours.t1) * drift_ppb / 1e9) + 1;
	s->root_ns = ntp_short_to_ns(x->reply.root_delay) / 2 +
		     ntp_short_to_ns(x->reply.root_dispersion);
	s->base_ns = x->ours.base1 + (x->ours.base4 - x->ours.base1) / 2;
	/* An interleaved t3 is the kernel's: no send path to make up for. */
	s->shift_ns = x->interleaved ? 0 : x->send_path_ns / 2;
}

static int ntp_measure(struct source *src, const struct target_clock *tc,
		       struct measurement *m, char *err, size_t errlen)
{
	struct ntp_source *ns = src->priv;
	struct ntp_sample samples[NTP_MAX_SAMPLES];
	struct ntp_packet replies[NTP_MAX_SAMPLES];
	struct ntp_filter_opts fo = NTP_FILTER_DEFAULTS;
	struct ntp_filter_result fr;
	unsigned int want = src->opts.samples, n = 0, i, timeouts = 0;
	int64_t precision = clock_quality_precision_ns(tc);
	int last = -1;	/* sample of the previous exchange, if basic */
	const char *why = "no reply";
	int ret;

	memset(m, 0, sizeof(*m));
	if (ns->denied) {
		snprintf(err, errlen, "server refused service earlier (KoD %s)", ns->kiss);
		return -EACCES;
	}
	/*
	 * chrony's iburst: the first measurement decides the first step, so
	 * it rests on several exchanges (with chronyd, interleaved ones).
	 */
	if (!ns->measured && src->opts.first_samples > want)
		want = src->opts.first_samples;
	if (!want)
		want = 1;
	if (want > NTP_MAX_SAMPLES)
		want = NTP_MAX_SAMPLES;
	fo.drift_ppb = clock_quality_drift_ppb(tc);
	/* One exchange alone cannot wait for its transmit time: basic mode. */
	if (want == 1)
		ntp_client_forget(&ns->client);

	for (i = 0; i < want; i++) {
		int64_t start = mono_now();
		struct ntp_exchange x;
		int prev;

		ret = ntp_client_exchange(&ns->client, tc, src->opts.timeout_ns, &x);
		prev = last;
		last = -1;
		m->rejected += x.rejected;
		if (ret == -ETIMEDOUT) {
			why = x.rejected ? "only rejected packets" : "timeout";
			/* A server that sends junk is not silent: keep asking. */
			if (!x.rejected && ++timeouts == NTP_GIVE_UP_AFTER && !n)
				break;
		} else if (ret) {
			snprintf(err, errlen, "%s: %s", ns->client.name,
				 ret == -ECONNREFUSED ? "port unreachable (no NTP server there)" :
				 strerror(-ret));
			return ret;
		} else if (x.verdict == NTP_KISS_OF_DEATH) {
			m->rejected++;
			why = "Kiss-o'-Death";
			if (!kiss(src, ns, &x))
				break;
		} else if (x.verdict != NTP_OK) {
			m->rejected++;
			why = ntp_verdict_str(x.verdict);
			fprintf(stderr, "lclkctl: %s: rejected reply: %s\n", src->url, why);
		} else if (x.interleaved && !i) {
			/*
			 * The first request names the last burst's final
			 * exchange: chronyd keeps the transmit times only of
			 * replies to requests that name one, so without it no
			 * reply of a two-sample burst would ever be
			 * interleaved. That exchange is stale: no sample.
			 */
		} else {
			/*
			 * An interleaved reply supersedes the previous
			 * exchange's basic sample and leaves none for this
			 * one: its transmit time comes with the next reply.
			 */
			unsigned int k = x.interleaved && prev >= 0 ? (unsigned int)prev : n++;

			to_sample(&x, precision, fo.drift_ppb, &samples[k]);
			replies[k] = x.reply;
			last = x.interleaved ? -1 : (int)k;
			if (src->opts.verbose >= 2)
				fprintf(stderr, "lclkctl: %s: offset %lld delay %lld err %lld%s%s%s\n",
					src->url, (long long)x.offset_ns, (long long)x.delay_ns,
					(long long)samples[k].err_ns,
					x.ours.kernel_t1 ? " ktx" : "", x.ours.kernel_t4 ? " krx" : "",
					x.interleaved ? " interleaved" : "");
		}
		if (i + 1 < want)
			sleep_until(start + ns->interval_ns);
	}
	if (ntp_filter(samples, n, &fo, &fr, NULL)) {
		snprintf(err, errlen, "%s: no usable reply (%u rejected; last: %s)",
			 ns->client.name, m->rejected, why);
		return -ENODATA;
	}
	ns->measured = true;
	m->offset_ns = fr.offset_ns;
	m->delay_ns = fr.delay_ns;
	m->bound_ns = fr.bound_ns;
	m->base_ns = fr.base_ns;
	m->stratum = replies[fr.best].stratum;
	m->leap = replies[fr.best].leap;
	m->tai = false;
	m->samples = fr.used;
	ntp_refid_str(&replies[fr.best], m->refid, sizeof(m->refid));
	if (fr.inconsistent)
		fprintf(stderr, "lclkctl: %s: samples disagree beyond their bounds; using the least delayed alone\n",
			src->url);
	return 0;
}

const struct source_ops ntp_source_ops = {
	.scheme = "ntp",
	.sep = "://",
	.open = ntp_open,
	.measure = ntp_measure,
	.close = ntp_close,
};
