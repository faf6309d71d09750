// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <string.h>

#include "leap.h"
#include "select.h"

#define SELECT_MAX 64

int64_t select_aged_bound(const struct measurement *m, uint32_t drift_ppb, int64_t t)
{
	double age = fabs((double)(t - m->base_ns));

	return m->bound_ns + (int64_t)ceil(age * drift_ppb / 1e9);
}

/* How many intervals contain x. */
static unsigned int cover(const int64_t *lo, const int64_t *hi, unsigned int n, int64_t x)
{
	unsigned int i, c = 0;

	for (i = 0; i < n; i++)
		c += lo[i] <= x && x <= hi[i];
	return c;
}

/*
 * The smallest [*l, *u] holding every point covered by >= need intervals.
 * The lowest such point is a lower end, the highest an upper end.
 */
static bool intersect(const int64_t *lo, const int64_t *hi, unsigned int n,
		      unsigned int need, int64_t *l, int64_t *u)
{
	bool found = false;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (cover(lo, hi, n, lo[i]) < need)
			continue;
		if (!found || lo[i] < *l)
			*l = lo[i];
		found = true;
	}
	if (!found)
		return false;
	*u = INT64_MIN;
	for (i = 0; i < n; i++)
		if (cover(lo, hi, n, hi[i]) >= need && hi[i] > *u)
			*u = hi[i];
	return *l <= *u;
}

int select_combine(const struct measurement *m, const bool *valid, unsigned int n,
		   uint32_t drift_ppb, int64_t at_base_ns,
		   enum select_state *state, struct measurement *out)
{
	int64_t lo[SELECT_MAX], hi[SELECT_MAX], l = 0, u = 0, wl = 0, wu = 0;
	unsigned int idx[SELECT_MAX], k = 0, f, i, best = 0, nleap = 0;
	int leaps[SELECT_MAX];
	double wsum = 0, osum = 0;
	bool disagree = false;
	int64_t c;

	for (i = 0; i < n; i++) {
		state[i] = SELECT_UNUSED;
		if (!valid[i] || k == SELECT_MAX)
			continue;
		if (k && m[i].tai != m[idx[0]].tai)
			return -EINVAL;
		idx[k] = i;
		lo[k] = m[i].offset_ns - select_aged_bound(&m[i], drift_ppb, at_base_ns);
		hi[k] = m[i].offset_ns + select_aged_bound(&m[i], drift_ppb, at_base_ns);
		k++;
	}
	if (!k)
		return -ENODATA;
	for (f = 0; 2 * f < k; f++)
		if (intersect(lo, hi, k, k - f, &l, &u))
			break;
	/* Nonempty for f, so for the most liars a majority can outvote too. */
	if (2 * f < k)
		intersect(lo, hi, k, k - (k - 1) / 2, &wl, &wu);
	if (2 * f >= k) {
		for (i = 0; i < k; i++)
			state[idx[i]] = SELECT_FALSETICKER;
		return -EDOM;
	}

	memset(out, 0, sizeof(*out));
	out->stratum = 256;
	for (i = 0; i < k; i++) {
		const struct measurement *s = &m[idx[i]];
		double b = (double)(hi[i] - lo[i]) / 2 + 1;

		if (hi[i] < l || lo[i] > u) {
			state[idx[i]] = SELECT_FALSETICKER;
			continue;
		}
		state[idx[i]] = SELECT_SURVIVOR;
		leaps[nleap++] = s->leap;
		wsum += 1 / (b * b);
		osum += (double)s->offset_ns / (b * b);
		if (hi[i] - lo[i] < hi[best] - lo[best] || state[idx[best]] != SELECT_SURVIVOR)
			best = i;
		if (s->stratum < out->stratum)
			out->stratum = s->stratum;
		if (!out->delay_ns || s->delay_ns < out->delay_ns)
			out->delay_ns = s->delay_ns;
		out->samples += s->samples;
		out->rejected += s->rejected;
		/* The UTC offset any survivor knows, unless two disagree (a leap second). */
		if (s->utc_offset_valid && !disagree) {
			disagree = out->utc_offset_valid && out->utc_offset != s->utc_offset;
			out->utc_offset_valid = !disagree;
			out->utc_offset = s->utc_offset;
		}
	}
	c = llround(osum / wsum);
	if (c < l)
		c = l;
	if (c > u)
		c = u;
	out->offset_ns = c;
	out->bound_ns = wu - c > c - wl ? wu - c : c - wl;
	out->base_ns = at_base_ns;
	/* A leap the survivors' majority announces, not one source's word. */
	out->leap = leap_vote(leaps, nleap);
	out->tai = m[idx[best]].tai;
	memcpy(out->refid, m[idx[best]].refid, sizeof(out->refid));
	return 0;
}
