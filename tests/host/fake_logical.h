/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A logical clock on a page of the test's, for host tests: the logical
 * time of CLOCK_MONOTONIC m is m + FAKE_LOGICAL.
 */
#ifndef LCLK_TEST_FAKE_LOGICAL_H
#define LCLK_TEST_FAKE_LOGICAL_H

#include <string.h>

#include "lib/clock.h"

#define FAKE_LOGICAL	(1700000000LL * 1000000000LL + 123456789)

static inline void fake_logical(struct target_clock *tc, struct lclk_page *page)
{
	memset(page, 0, sizeof(*page));
	page->magic = LCLK_PAGE_MAGIC;
	page->params.status = LCLK_STATUS_SYNCED;
	page->params.offset_ns = FAKE_LOGICAL;
	page->params.bound0_ns = 1000;
	page->params.last_update_ns = 1;
	page->params.holdover_ns = INT64_MAX / 2;
	memset(tc, 0, sizeof(*tc));
	tc->logical = true;
	tc->lc.fd = -1;
	tc->lc.page = page;
	tc->path = "/dev/null";
}

#endif /* LCLK_TEST_FAKE_LOGICAL_H */
