// SPDX-License-Identifier: GPL-2.0
/*
 * The suspend scenario's arithmetic (issue 30 #5): a system sleep folded
 * into the model by the module's own lclk_fold_sleep() (kmod/lclk_state.h,
 * built here through the host tests' kernel shim), checked against exact
 * integer truth. Suspending the VM for hours is not practical; the fold is
 * the whole of what the module does about a sleep.
 *
 * The sleep goes through the module's own path for it: lclk_next() with
 * an LCLK_CHANGE_SLEEP change, as lclk_resume() applies it.
 *
 * Fault: a sleep of S (1 s to 24 h) with a learned rate r (up to 500 ppm).
 * Truth: a clock at t0 + offset0 when the model was set, that has run at
 * 1 + r_true since, r_true at either end of [r - max_drift, r + max_drift]
 * (what the bound assumes), through the sleep as before it: after resume,
 * at base time t, truth = t0 + offset0 + (t - t0 + S) * (1 + r_true).
 * Why the fault cannot move it: the truth is arithmetic over the sleep's
 * length, which the fold is given, not over the model.
 *
 *	fault_suspend CASES
 *
 * Prints VIOLATION lines (the first 20) and one READER line per run, as
 * fault_reader does.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernel_shim.h"
#include "rand.h"

#define S		1000000000LL
#define PPT		1000000000000LL

int main(int argc, char **argv)
{
	long cases = argc > 1 ? atol(argv[1]) : 100000, readings = 0, violations = 0;
	double max_ratio = 0;
	s64 max_err = 0;
	long i;

	for (i = 0; i < cases; i++) {
		struct lclk_change c = { .modes = LCLK_CHANGE_SLEEP };
		struct lclk_state st = { 0 }, next;
		struct lclk_params o = { 0 }, m;
		struct lclk_step_at at;
		s64 rate = test_between(-500000000LL, 500000000LL);
		s64 drift_ppb = 50000, sleep = test_between(S, 24 * 3600 * S);
		s64 t0 = test_between(S, 3600 * S);
		s64 now = t0 + test_between(0, 3600 * S);
		s64 later[] = { 0, S, 3600 * S };
		int j, k;

		o.t0_ns = t0;
		o.offset_ns = 1700000000 * S;
		o.rate_ppt = rate;
		o.rate_mult = lclk_ppt_to_mult(rate);
		o.bound0_ns = 1000;
		o.last_update_ns = t0;
		o.holdover_ns = 60 * S;
		o.max_drift_ppb = (u32)drift_ppb;
		o.drift_mult = lclk_ppb_to_mult((u32)drift_ppb);
		o.status = LCLK_STATUS_SYNCED;
		st.params = o;
		c.sleep_ns = sleep;
		if (lclk_check_change(&c, 500000000LL) ||
		    lclk_next(&st, &c, now, &next, &at)) {
			printf("# a sleep of %lld ns refused\n", (long long)sleep);
			return 1;
		}
		m = next.params;
		for (j = 0; j < 3; j++) {
			s64 t = now + later[j];
			s64 logical = lclk_logical(t, m.t0_ns, m.offset_ns, m.rate_mult);
			s64 bound = lclk_bound(t, m.status, m.bound0_ns, m.last_update_ns,
					       m.drift_mult);

			for (k = -1; k <= 1; k += 2) {
				__int128 rt = rate + k * drift_ppb * 1000;
				__int128 truth = (__int128)(t0 + o.offset_ns) * PPT +
						 (__int128)(t - t0 + sleep) * (PPT + rt);
				__int128 d = (__int128)logical * PPT - truth;
				__int128 e = d < 0 ? -d : d;
				s64 err = (s64)(e / PPT);

				readings++;
				if (m.status == LCLK_STATUS_UNSYNCED)
					continue;
				if ((double)err / bound > max_ratio)
					max_ratio = (double)err / bound;
				if (err > max_err)
					max_err = err;
				if (e <= (__int128)bound * PPT)
					continue;
				if (violations++ < 20)
					printf("VIOLATION suspend arith sleep=%lld rate_ppt=%lld r_true_ppt=%lld at=+%lld logical=%lld bound=%lld err=%lld\n",
					       (long long)sleep, (long long)rate, (long long)rt,
					       (long long)later[j], (long long)logical,
					       (long long)bound, (long long)err);
			}
		}
	}
	printf("START suspend arith\n");
	printf("READER suspend arith readings %ld synced %ld violations %ld max_err_over_bound %.6f max_err_ns %lld\n",
	       readings, readings, violations, max_ratio, (long long)max_err);
	return 0;
}
