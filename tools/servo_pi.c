// SPDX-License-Identifier: GPL-2.0
/*
 * Proportional-integral servo, in the manner of linuxptp's pi.c. For an
 * offset X with the next sample due in I:
 *
 *   freq += ki * X / I		(the integral: the frequency estimate)
 *   rate  = freq + kp * X / I	(plus a proportional correction)
 *
 * The correction kp * X / I removes at most X over I (kp <= 1; the
 * configuration also keeps kp + ki <= 1 so that the first interval after a
 * disturbance, when the integral's change is itself mostly correction,
 * does not overshoot either). Both terms scale with 1 / I so the loop
 * behaves alike at any poll interval: with the defaults (0.7, 0.3) the
 * poles have modulus sqrt(1 - kp) = 0.55 per sample.
 */
#include <stdlib.h>

#include "servo.h"

struct servo_pi {
	struct servo s;
	double kp, ki;
	double freq_ppt;
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

	(void)local_ns;
	pi->freq_ppt += pi->ki * corr_ppt;
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
