// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/device.h"
#include "apply.h"
#include "lclk_model.h"

#define NS_PER_SEC		1000000000LL
/* Splitting a step across t0 and now rounds twice, 1 ns each. */
#define APPLY_ROUNDING_NS	2

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t model_logical(const struct lclk_params *m, int64_t t)
{
	return lclk_logical(t, m->t0_ns, m->offset_ns, lclk_ppt_to_mult(m->rate_ppt));
}

static int64_t drift_ns(int64_t dt, uint32_t ppb)
{
	return dt > 0 ? (int64_t)ceil((double)dt * ppb / 1e9) : 0;
}

int apply_timescale(struct measurement *m, bool clock_tai, char *err, size_t errlen)
{
	if (m->tai == clock_tai)
		return 0;
	if (!m->utc_offset_valid) {
		snprintf(err, errlen,
			 "the clock counts %s but the source gives %s, with no valid UTC offset to convert it",
			 clock_tai ? "TAI" : "UTC", m->tai ? "TAI" : "UTC");
		return -EINVAL;
	}
	/* offset is reference - clock; TAI is ahead of UTC by the offset. */
	m->offset_ns += (clock_tai ? 1 : -1) * (int64_t)m->utc_offset * NS_PER_SEC;
	m->tai = clock_tai;
	return 0;
}

void apply_mark(struct lclk_set_model *set, const struct vmclock_mark *mark)
{
	if (!mark->vmclock)
		return;
	set->modes |= LCLK_SET_VMCLOCK;
	set->vmclock_marker = mark->marker;
}

const char *apply_strerror(int err)
{
	if (err == -ESTALE)
		return "the VM was restored from a snapshot or migrated since the measurement (its vmclock's disruption marker changed): not set, measure again";
	return strerror(-err);
}

int apply_plan(const struct measurement *meas, const struct lclk_params *before,
	       const struct lclk_info *info, const struct apply_opts *o,
	       struct apply_plan *p, char *err, size_t errlen)
{
	const struct measurement *m = &p->m;
	struct lclk_set_model *s = &p->start;
	int64_t off, mag, headroom;
	int ret;

	memset(p, 0, sizeof(*p));
	p->m = *meas;
	p->before = *before;
	ret = apply_timescale(&p->m, before->model_flags & LCLK_MODEL_TAI, err, errlen);
	if (ret)
		return ret;
	if (m->vmclock.vmclock && !m->vmclock.known) {
		snprintf(err, errlen,
			 "the vmclock's page could not be read before measuring: a snapshot restore since could not be told");
		return -EAGAIN;
	}
	off = m->offset_ns;
	mag = llabs(off);
	if (m->bound_ns < 0 || mag + m->bound_ns > LCLK_MAX_BOUND_NS) {
		snprintf(err, errlen, "bound %lld ns is out of the module's range",
			 (long long)m->bound_ns);
		return -EINVAL;
	}
	s->t0_ns = m->base_ns;

	if (mag > o->step_threshold_ns) {
		if (off < 0 && !o->allow_backward) {
			snprintf(err, errlen,
				 "the clock is %.9f s ahead: stepping it back needs --allow-backward",
				 -off / 1e9);
			return -ERANGE;
		}
		p->action = APPLY_STEP;
		s->modes = LCLK_SET_OFFSET | LCLK_SET_BOUND;
		s->flags = off < 0 ? LCLK_ALLOW_BACKWARD : 0;
		s->offset_ns = model_logical(before, m->base_ns) + off - m->base_ns;
		s->bound_ns = m->bound_ns + APPLY_ROUNDING_NS;
		apply_mark(s, &m->vmclock);
		return 0;
	}

	/*
	 * Rate headroom on the side the slew goes. The slew is a correction
	 * (LCLK_SET_CORRECTION): the module ends it after slew_ns, or when
	 * this process's file is released, so a killed lclkctl leaves no
	 * slew behind, and it grows the bound by the slew rate meanwhile.
	 */
	headroom = info->max_rate_ppt - (off >= 0 ? before->rate_ppt : -before->rate_ppt);
	if (headroom <= 0) {
		snprintf(err, errlen, "no rate headroom to slew (rate %lld ppt, limit %lld ppt)",
			 (long long)before->rate_ppt, (long long)info->max_rate_ppt);
		return -EDOM;
	}
	p->action = APPLY_SLEW;
	p->slew_ns = (int64_t)ceil((double)mag * 1e12 / headroom);
	if (p->slew_ns < APPLY_MIN_SLEW_NS)
		p->slew_ns = APPLY_MIN_SLEW_NS;
	/* Truncated towards zero: never beyond the headroom. */
	p->slew_ppt = (int64_t)((double)off * 1e12 / p->slew_ns);
	s->modes = LCLK_SET_RATE | LCLK_SET_CORRECTION | LCLK_SET_BOUND;
	s->rate_ppt = before->rate_ppt;
	s->corr_ppt = p->slew_ppt;
	s->corr_ns = p->slew_ns;
	s->bound_ns = mag + m->bound_ns + APPLY_ROUNDING_NS;
	if (!s->corr_ppt)	/* offset 0: nothing to slew, a correction needs a rate */
		s->modes = LCLK_SET_BOUND;
	apply_mark(s, &m->vmclock);
	return 0;
}

void apply_slew_end(const struct apply_plan *p, const struct lclk_params *slewing,
		    int64_t t_end, struct lclk_set_model *end, int64_t *left)
{
	int64_t want = model_logical(&p->before, t_end) + p->m.offset_ns;
	int64_t bound = p->m.bound_ns + APPLY_ROUNDING_NS +
			drift_ns(t_end - p->m.base_ns, p->before.max_drift_ppb);

	memset(end, 0, sizeof(*end));
	end->modes = LCLK_SET_RATE | LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT;
	end->t0_ns = t_end;
	end->rate_ppt = p->before.rate_ppt;
	end->max_drift_ppb = p->before.max_drift_ppb;
	*left = want - model_logical(slewing, t_end);
	if (*left >= 0) {
		/* The rest is a forward step of what the timer was early. */
		end->modes |= LCLK_SET_OFFSET;
		end->offset_ns = want - t_end;
		end->bound_ns = bound;
	} else {
		/* Overshot: keep it, and own up to it in the bound. */
		end->bound_ns = bound - *left;
	}
	/* its bound is the measurement's too */
	apply_mark(end, &p->m.vmclock);
}

/* Sleep until base time t unless one of sigs arrives; false if one did. */
static bool wait_until(int64_t t, const sigset_t *sigs)
{
	for (;;) {
		int64_t left = t - mono_ns();
		struct timespec ts;

		if (left <= 0)
			return true;
		ts.tv_sec = left / 1000000000LL;
		ts.tv_nsec = left % 1000000000LL;
		if (sigtimedwait(sigs, NULL, &ts) > 0)
			return false;
	}
}

static int end_slew(int fd, const struct apply_plan *p, int64_t *residual,
		    char *err, size_t errlen)
{
	struct lclk_params slewing;
	struct lclk_set_model end;
	int64_t left;
	int ret, tries;

	ret = device_ioctl(fd, LCLK_IOC_GET_MODEL, &slewing);
	for (tries = 0; !ret && tries < 3; tries++) {
		int64_t t_end = mono_ns();

		apply_slew_end(p, &slewing, t_end, &end, &left);
		ret = device_ioctl(fd, LCLK_IOC_SET_MODEL, &end);
		*residual = left >= 0 ? 0 : -left;
		/* ERANGE: the step we computed went back after all; recompute. */
		if (ret != -ERANGE)
			break;
		ret = device_ioctl(fd, LCLK_IOC_GET_MODEL, &slewing);
		if (!ret)
			ret = -ERANGE;
	}
	if (ret)
		snprintf(err, errlen,
			 "ending the slew failed: the rate stays %+lld ppt off, but the bound still holds (it grows with the slew rate): %s",
			 (long long)p->slew_ppt, apply_strerror(ret));
	return ret;
}

int apply_execute(int fd, const struct apply_plan *p, int64_t *residual_ns,
		  char *err, size_t errlen)
{
	struct lclk_set_model start = p->start;
	struct lclk_params slewing;
	sigset_t sigs, old;
	int64_t t_end;
	int ret;

	*residual_ns = 0;
	if (p->action == APPLY_SLEW) {
		/* From here on a signal ends the slew instead of the process. */
		sigemptyset(&sigs);
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		sigaddset(&sigs, SIGHUP);
		sigprocmask(SIG_BLOCK, &sigs, &old);
	}
	ret = device_ioctl(fd, LCLK_IOC_SET_MODEL, &start);
	if (ret) {
		snprintf(err, errlen, "%s", apply_strerror(ret));
		goto out;
	}
	if (p->action == APPLY_STEP)
		return 0;

	ret = device_ioctl(fd, LCLK_IOC_GET_MODEL, &slewing);
	/*
	 * End a little early for a positive offset, a little late for a
	 * negative one: the leftover is then a tiny forward step.
	 */
	t_end = slewing.t0_ns + p->slew_ns +
		(p->m.offset_ns >= 0 ? -1 : 1) * (p->slew_ns / 100 + 100000);
	if (!ret && !wait_until(t_end, &sigs))
		fprintf(stderr, "lclkctl: interrupted: ending the slew now\n");
	ret = end_slew(fd, p, residual_ns, err, errlen);
out:
	if (p->action == APPLY_SLEW)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}
