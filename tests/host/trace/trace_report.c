// SPDX-License-Identifier: GPL-2.0
/* lclkctl trace's end-of-period warnings name what each loss counter counts. */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "trace/trace_report.h"

static char out[1024];

static const char *warnings_of(const struct trace_snapshot *snap)
{
	FILE *f;

	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out) - 1, "w");
	trace_report_warnings(f, snap);
	fclose(f);
	return out;
}

TEST(each_loss_named_by_what_it_counts)
{
	struct trace_snapshot snap = { .n = 0 };
	const char *w;

	snap.drops[TRACE_DROP_EVENTS] = 26;
	snap.drops[TRACE_DROP_MESSAGES] = 2694;
	w = warnings_of(&snap);
	EXPECT_NE(NULL, strstr(w, "lclkctl trace: warning: 26 outliers lost: ring buffer full (see \"lost\" in the report)\n"));
	EXPECT_NE(NULL, strstr(w, "lclkctl trace: warning: 2694 message records lost: ring buffer full"));
	EXPECT_EQ(NULL, strstr(w, "calls"));
}

TEST(nothing_lost_nothing_said)
{
	struct trace_snapshot snap = { .n = 0 };
	const char *w = warnings_of(&snap);

	EXPECT_STREQ("", w);
}

TEST_HARNESS_MAIN
