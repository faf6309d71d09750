// SPDX-License-Identifier: GPL-2.0
/*
 * Proportional-integral servo, in the manner of linuxptp's pi.c. For an
 * offset X measured E after the previous sample, with the next one due in I:
 *
 *   freq += ki * X / E		(the integral: the frequency estimate)
 *   rate  = freq + kp * X / I	(plus a proportional correction)
 *
 * The integral divides by E because X built up over E: the poll interval
 * may change between samples (64 s down to 1 s after a disturbance), and
 * dividing by the next interval would read 64 times the frequency error.
 * E is never taken shorter than the interval the previous sample set: a
 * measurement's time is its burst's best sample, early in one burst and
 * late in the last, and X built up over the whole poll all the same (two
 * bases 0.1 s apart at a 1 s poll would read ten times the error).
 * The first sample, and the first after a reset, has no E: it only corrects.
 *
 * The correction kp * X / I removes at most X over I (kp <= 1; the
 * configuration also keeps kp + ki <= 1: when the integral's change is
 * itself mostly correction, a disturbance, it moves ki * X * I / E, at most
 * ki * X while the interval does not grow, so the sum does not overshoot
 * either). Each term scales with the time it acts over, so the loop
 * behaves alike at any poll interval: with the defaults (0.7, 0.3) the
 * poles have modulus sqrt(1 - kp) = 0.55 per sample.
 */
#include <stdlib.h>

#include "servo.h"

struct servo_pi {
	struct servo s;
	double kp, ki;
	double freq_ppt;
	int64_t last_local_ns;	/* of the previous sample; 0: none since a reset */
	int64_t last_interval_ns;	/* the interval it set */
};

static struct servo_pi *to_pi(struct servo *s)
{
	return (struct servo_pi *)s;
}

static int64_t pi_sample(struct servo *s, int64_t offset_ns, int64_t local_ns,
			 int64_t interval_ns)
{
	struct servo_pi *pi = to_pi(s);
	double corr_ppt = (double)offset_ns / (double)interval_ns * 1e12;
	double max = (double)s->max_rate_ppt;
	int64_t elapsed_ns = local_ns - pi->last_local_ns;

	if (elapsed_ns < pi->last_interval_ns)
		elapsed_ns = pi->last_interval_ns;
	if (pi->last_local_ns && elapsed_ns > 0)
		pi->freq_ppt += pi->ki * (double)offset_ns / (double)elapsed_ns * 1e12;
	pi->last_local_ns = local_ns;
	pi->last_interval_ns = interval_ns;
	/* Anti-windup: the estimate never leaves what the clock can do. */
	if (pi->freq_ppt > max)
		pi->freq_ppt = max;
	if (pi->freq_ppt < -max)
		pi->freq_ppt = -max;
	return (int64_t)(pi->freq_ppt + pi->kp * corr_ppt);
}

static int64_t pi_freq(const struct servo *s)
{
	return (int64_t)((const struct servo_pi *)s)->freq_ppt;
}

static void pi_reset(struct servo *s, int64_t freq_ppt)
{
	to_pi(s)->freq_ppt = (double)freq_ppt;
	to_pi(s)->last_local_ns = 0;
}

static void pi_destroy(struct servo *s)
{
	free(to_pi(s));
}

static const struct servo_ops pi_ops = {
	.sample = pi_sample,
	.freq = pi_freq,
	.reset = pi_reset,
	.destroy = pi_destroy,
};

struct servo *servo_pi_create(double kp, double ki, int64_t freq_ppt)
{
	struct servo_pi *pi = calloc(1, sizeof(*pi));

	if (!pi)
		return NULL;
	pi->s.ops = &pi_ops;
	pi->kp = kp;
	pi->ki = ki;
	pi->freq_ppt = (double)freq_ppt;
	return &pi->s;
}
