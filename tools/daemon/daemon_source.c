// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntp/ntp_policy.h"
#include "daemon_source.h"

/* A poll's result is awaited this long beyond the source's own timeouts. */
#define POLL_SLACK_NS	1000000000LL

static void sched_init(struct daemon_source *s, const struct daemon_config *cfg)
{
	poll_sched_init(&s->sched, cfg->minpoll_ns, cfg->maxpoll_ns, cfg->fastpolls,
			cfg->disturbance_ns);
}

struct daemon_source *dsrc_start(const struct config_source *c, const struct source_opts *opts,
				 const struct daemon_config *cfg, const struct target_clock *tc,
				 int wake_fd, int64_t now_ns, int *err)
{
	struct daemon_source *s = calloc(1, sizeof(*s));

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = runner_start(&s->runner, c->url, opts, tc, wake_fd);
	if (*err) {
		free(s);
		return NULL;
	}
	s->cfg = *c;
	s->opts = *opts;
	sched_init(s, cfg);
	s->next_poll_ns = now_ns;
	snprintf(s->report.url, sizeof(s->report.url), "%s", c->url);
	s->report.class = c->class;
	s->report.prefer = c->prefer;
	return s;
}

bool dsrc_same(const struct daemon_source *s, const struct config_source *c,
	       const struct source_opts *opts)
{
	return !strcmp(s->cfg.url, c->url) && s->opts.samples == opts->samples &&
	       s->opts.first_samples == opts->first_samples &&
	       s->opts.interval_ns == opts->interval_ns &&
	       s->opts.timeout_ns == opts->timeout_ns && s->opts.verbose == opts->verbose;
}

void dsrc_retune(struct daemon_source *s, const struct config_source *c,
		 const struct daemon_config *cfg)
{
	s->cfg = *c;
	s->report.class = c->class;
	s->report.prefer = c->prefer;
	if (s->sched.min_ns != cfg->minpoll_ns || s->sched.max_ns != cfg->maxpoll_ns ||
	    s->sched.fastpolls != cfg->fastpolls || s->sched.disturbance_ns != cfg->disturbance_ns)
		sched_init(s, cfg);
}

void dsrc_stop(struct daemon_source *s)
{
	runner_stop(&s->runner);
	free(s);
}

/*
 * How long a poll may take: its burst of timeouts and spacings, left to
 * the source at most an NTP burst's to a public server. An NTP server's
 * first is the iburst, longer than "samples" may be (ntp_source.c).
 */
static int64_t poll_span_ns(const struct daemon_source *s, const struct daemon_config *cfg)
{
	unsigned int n = s->opts.samples;
	int64_t spacing = cfg->sample_interval_ns < 0 ? NTP_WAN_INTERVAL_NS :
			  cfg->sample_interval_ns;

	if (!s->measured && s->cfg.class != CLASS_PTP && s->opts.first_samples > n)
		n = s->opts.first_samples;
	return (int64_t)n * (cfg->timeout_ns + spacing) + POLL_SLACK_NS;
}

int dsrc_poll(struct daemon_source *s, const struct daemon_config *cfg, int64_t now_ns)
{
	if (s->out || now_ns < s->next_poll_ns)
		return 0;
	/* Still busy (a PTP port waiting for a master, a result past its deadline). */
	if (!runner_poll(&s->runner))
		return -EBUSY;
	s->out = true;
	s->deadline_ns = now_ns + poll_span_ns(s, cfg);
	return 1;
}

int64_t dsrc_next_event(const struct daemon_source *s)
{
	return s->out ? s->deadline_ns : s->next_poll_ns;
}

void dsrc_poll_now(struct daemon_source *s, int64_t now_ns)
{
	poll_sched_update(&s->sched, 0, true);
	/* A poll that is out comes back measured before: record() calls again. */
	if (s->out)
		return;
	s->next_poll_ns = now_ns < s->not_before_ns ? s->not_before_ns : now_ns;
}

void dsrc_schedule(struct daemon_source *s, int64_t now_ns)
{
	s->out = false;
	s->next_poll_ns = now_ns + s->sched.interval_ns;
	if (s->next_poll_ns < s->not_before_ns)
		s->next_poll_ns = s->not_before_ns;
}
