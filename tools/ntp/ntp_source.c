// SPDX-License-Identifier: GPL-2.0
/*
 * The ntp:// source: a burst of client-mode exchanges with one server,
 * filtered into one measurement whose bound is the root distance.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync/clock_quality.h"
#include "sync/source.h"
#include "ntp_client.h"
#include "ntp_filter.h"
#include "ntp_policy.h"
#include "ntp_sample.h"

/* Give up on a server whose first requests all go unanswered, silently. */
#define NTP_GIVE_UP_AFTER	3
/* Longest burst; longer requests are clamped. */
#define NTP_MAX_SAMPLES		64
struct ntp_source {
	struct ntp_client client;
	char host[256], port[8];	/* as given */
	bool named;		/* host is a name, not an address */
	bool resolve;		/* look the name up again before the next burst */
	int64_t interval_ns;	/* between the exchanges of a burst */
	bool private;		/* the server has a private address */
	int64_t rate_poll_ns;	/* since a KoD RATE: time between bursts */
	int64_t next_burst_ns;	/* CLOCK_MONOTONIC: not asked before */
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

static bool numeric_host(const char *host)
{
	struct in6_addr a;

	return inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1;
}

/* What follows from the server's address: is it ours to ask fast. */
static void addressed(struct source *src, struct ntp_source *ns)
{
	ns->private = ntp_private_address(&ns->client.addr);
	ns->interval_ns = src->opts.interval_ns;
	if (ns->interval_ns < 0)
		ns->interval_ns = ntp_burst_interval_ns(ns->private);
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
	snprintf(ns->host, sizeof(ns->host), "%s", host);
	snprintf(ns->port, sizeof(ns->port), "%s", port);
	ns->named = !numeric_host(host);
	addressed(src, ns);
	src->priv = ns;
	return 0;
}

/*
 * The server stopped answering: it may have moved. Look its name up again,
 * as chrony does, and ask the new address from now on; keep the old one
 * if the lookup fails.
 */
static void resolve_again(struct source *src, struct ntp_source *ns)
{
	struct ntp_client fresh;
	char err[256];

	if (ntp_client_open(&fresh, ns->host, ns->port, err, sizeof(err))) {
		if (src->opts.verbose)
			fprintf(stderr, "lclkctl: %s: %s\n", src->url, err);
		return;
	}
	if (src->opts.verbose && strcmp(fresh.name, ns->client.name))
		fprintf(stderr, "lclkctl: %s: now at %s\n", src->url, fresh.name);
	ntp_client_close(&ns->client);
	ns->client = fresh;
	addressed(src, ns);
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
		ns->rate_poll_ns = ntp_rate_poll_ns(ns->rate_poll_ns);
		fprintf(stderr, "lclkctl: %s: server asks us to slow down (KoD RATE): next request in %lld s\n",
			src->url, (long long)(ns->rate_poll_ns / 1000000000LL));
		return false;
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

/* One burst, filtered; *slowed when the server sent KoD RATE. */
static int burst(struct source *src, const struct target_clock *tc,
		 struct measurement *m, char *err, size_t errlen, bool *slowed)
{
	struct ntp_source *ns = src->priv;
	struct ntp_sample samples[NTP_MAX_SAMPLES];
	struct ntp_packet replies[NTP_MAX_SAMPLES];
	struct ntp_filter_opts fo = NTP_FILTER_DEFAULTS;
	struct ntp_filter_result fr;
	unsigned int want = src->opts.samples, n = 0, i, lost = 0;
	int64_t precision = clock_quality_precision_ns(tc);
	int last = -1;	/* sample of the previous exchange, if basic */
	const char *why = "no reply";
	int ret, error = 0;	/* the last send or ICMP error */

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
			if (!x.rejected && ++lost == NTP_GIVE_UP_AFTER && !n)
				break;
		} else if (ret) {
			/*
			 * An ICMP error (or a failed send) loses this exchange
			 * only, as chrony takes it: a router or the server
			 * restarting may send one in the middle of a burst.
			 */
			error = ret;
			why = ret == -ECONNREFUSED ? "port unreachable (no NTP server there)" :
			      strerror(-ret);
			if (++lost == NTP_GIVE_UP_AFTER && !n)
				break;
		} else if (x.verdict == NTP_KISS_OF_DEATH) {
			m->rejected++;
			why = "Kiss-o'-Death";
			*slowed = ntp_kiss(&x.reply) == NTP_KISS_RATE;
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

			ntp_exchange_sample(&x, precision, fo.drift_ppb, &samples[k]);
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
	if (!n && error && !m->rejected) {
		snprintf(err, errlen, "%s: %s", ns->client.name, why);
		return error;
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

static int ntp_measure(struct source *src, const struct target_clock *tc,
		       struct measurement *m, char *err, size_t errlen)
{
	struct ntp_source *ns = src->priv;
	int64_t start = mono_now(), poll;
	bool slowed = false;
	int ret;

	memset(m, 0, sizeof(*m));
	if (ns->denied) {
		snprintf(err, errlen, "server refused service earlier (KoD %s)", ns->kiss);
		return -EACCES;
	}
	if (start < ns->next_burst_ns) {
		snprintf(err, errlen, "%s: not asked again for %lld s (%s)", ns->client.name,
			 (long long)((ns->next_burst_ns - start + 999999999) / 1000000000LL),
			 ns->rate_poll_ns ? "it sent KoD RATE" :
			 "a public server is asked at most every 64 s");
		return -EAGAIN;
	}
	if (ns->resolve)
		resolve_again(src, ns);
	ret = burst(src, tc, m, err, errlen, &slowed);
	ns->resolve = ns->named && ret && !slowed;
	if (!slowed)
		ns->rate_poll_ns = 0;
	poll = ntp_min_poll_ns(ns->private);
	if (ns->rate_poll_ns > poll)
		poll = ns->rate_poll_ns;
	ns->next_burst_ns = start + poll;
	return ret;
}

/* A public server's 64 s floor, or a KoD RATE's longer spacing. */
static int64_t ntp_next_due(const struct source *src)
{
	const struct ntp_source *ns = src->priv;

	return ns->next_burst_ns;
}

const struct source_ops ntp_source_ops = {
	.scheme = "ntp",
	.sep = "://",
	.open = ntp_open,
	.measure = ntp_measure,
	.next_due = ntp_next_due,
	.close = ntp_close,
};
