/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace a test wrote, checked with Perfetto's own schema: decoded by
 * protoc against tests/perfetto/perfetto_trace.proto, and checked by
 * tests/perfetto/check_trace.py (interning, descriptors, the clock, flows),
 * and once scripts/trace-processor has built it, loaded in Perfetto's own
 * trace_processor_shell and checked in SQL (tests/perfetto/tp_check.py).
 * Tests run from the top of the tree (tests/run-suites.sh); LCLK_SRCDIR
 * says where it is otherwise.
 */
#ifndef LCLK_TEST_PERFETTO_CHECK_H
#define LCLK_TEST_PERFETTO_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/*
 * The checker's exit status for paths (0: the traces are right), a list
 * separated by spaces; opts are its options ("--merged", "--flows N").
 * -1 if it could not be run.
 */
static inline int perfetto_check(const char *paths, const char *opts)
{
	const char *src = getenv("LCLK_SRCDIR");
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd), "python3 %s/tests/perfetto/check_trace.py %s %s >&2",
		 src ? src : ".", opts ? opts : "", paths);
	rc = system(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

#endif /* LCLK_TEST_PERFETTO_CHECK_H */
