// SPDX-License-Identifier: GPL-2.0
/*
 * Linear-regression servo, in the manner of linuxptp's linreg.c. It
 * reconstructs what the offset would have been had the clock never been
 * corrected ("free-running" offset = measured offset + everything the
 * applied rates moved the clock), fits a line to the last
 * LINREG_POINTS of those, and takes its slope as the frequency and its
 * value now as the offset to remove over the next interval:
 *
 *   rate = slope + (fit(now) - moved) / I
 *
 * The fit averages out measurement noise; the correction is kept between
 * zero and the measured offset (see servo.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servo.h"

#define LINREG_POINTS 16
#define LINREG_MIN_FIT 4	/* two points would make noise a frequency */

struct point {
	double x_s;	/* seconds since origin */
	double y_ns;	/* free-running offset */
};

struct servo_linreg {
	struct servo s;
	struct point pts[LINREG_POINTS];
	unsigned int n, head;		/* ring of the last n points */
	int64_t origin_ns;		/* local time of x = 0 */
	int64_t last_local_ns;		/* of the previous sample, 0 if none */
	double moved_ns;		/* clock movement by the rates since origin */
	double freq_ppt;		/* slope of the last fit */
};

static struct servo_linreg *to_lr(struct servo *s)
{
	return (struct servo_linreg *)s;
}

/* Least squares over the ring; false with fewer than LINREG_MIN_FIT points. */
static bool fit(const struct servo_linreg *lr, double *a, double *b)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, n = lr->n, d;
	unsigned int i;

	for (i = 0; i < lr->n; i++) {
		sx += lr->pts[i].x_s;
		sy += lr->pts[i].y_ns;
		sxx += lr->pts[i].x_s * lr->pts[i].x_s;
		sxy += lr->pts[i].x_s * lr->pts[i].y_ns;
	}
	d = n * sxx - sx * sx;
	if (lr->n < LINREG_MIN_FIT || d <= 0)
		return false;
	*b = (n * sxy - sx * sy) / d;	/* ns per s */
	*a = (sy - *b * sx) / n;
	return true;
}

static int64_t lr_sample(struct servo *s, int64_t offset_ns, int64_t local_ns,
			 int64_t interval_ns)
{
	struct servo_linreg *lr = to_lr(s);
	double a, b, x, predicted = offset_ns, max = (double)s->max_rate_ppt;

	if (!lr->last_local_ns)
		lr->origin_ns = local_ns;
	else
		lr->moved_ns += (double)s->rate_ppt * 1e-12 * (double)(local_ns - lr->last_local_ns);
	lr->last_local_ns = local_ns;

	x = (double)(local_ns - lr->origin_ns) * 1e-9;
	lr->pts[lr->head] = (struct point){ x, (double)offset_ns + lr->moved_ns };
	lr->head = (lr->head + 1) % LINREG_POINTS;
	if (lr->n < LINREG_POINTS)
		lr->n++;

	if (fit(lr, &a, &b)) {
		lr->freq_ppt = b * 1e3;		/* ns/s = ppb */
		if (lr->freq_ppt > max)
			lr->freq_ppt = max;
		if (lr->freq_ppt < -max)
			lr->freq_ppt = -max;
		predicted = a + b * x - lr->moved_ns;
	}
	/*
	 * Remove the fitted offset, but never more than was measured nor in
	 * the other direction: that is the contract of servo.h.
	 */
	if ((predicted > 0) != (offset_ns > 0))
		predicted = 0;
	else if (fabs(predicted) > fabs((double)offset_ns))
		predicted = (double)offset_ns;
	return (int64_t)(lr->freq_ppt + predicted / (double)interval_ns * 1e12);
}

static int64_t lr_freq(const struct servo *s)
{
	return (int64_t)((const struct servo_linreg *)s)->freq_ppt;
}

static void lr_reset(struct servo *s, int64_t freq_ppt)
{
	struct servo_linreg *lr = to_lr(s);

	memset(lr->pts, 0, sizeof(lr->pts));
	lr->n = lr->head = 0;
	lr->last_local_ns = 0;
	lr->moved_ns = 0;
	lr->freq_ppt = (double)freq_ppt;
}

static void lr_destroy(struct servo *s)
{
	free(to_lr(s));
}

static const struct servo_ops linreg_ops = {
	.sample = lr_sample,
	.freq = lr_freq,
	.reset = lr_reset,
	.destroy = lr_destroy,
};

struct servo *servo_linreg_create(int64_t freq_ppt)
{
	struct servo_linreg *lr = calloc(1, sizeof(*lr));

	if (!lr)
		return NULL;
	lr->s.ops = &linreg_ops;
	lr->freq_ppt = (double)freq_ppt;
	return &lr->s;
}
