// SPDX-License-Identifier: GPL-2.0
/* The ptp4l management client's own socket. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ptp/pmc_client.h"

#define THREADS		8
#define OPENS		2000	/* each; client ports are 16-bit */

struct opener {
	pthread_t thread;
	uint16_t port[OPENS];	/* of each client, which its socket path names */
	char last[sizeof(((struct pmc_client *)0)->local)];
	int failed;
};

static pthread_barrier_t start;

static void *open_many(void *arg)
{
	struct opener *o = arg;
	struct pmc_client c;
	char err[128];
	int i;

	pthread_barrier_wait(&start);
	for (i = 0; i < OPENS; i++) {
		if (pmc_open(&c, "/nonexistent/ptp4l", 0, err, sizeof(err))) {
			o->failed++;
			continue;
		}
		o->port[i] = c.self.port;
		/* The path is /var/run/lclkctl.PID.N with N the port. */
		if (atoi(strrchr(c.local, '.') + 1) != c.self.port)
			o->failed++;
		pmc_close(&c);
	}
	return NULL;
}

/*
 * The daemon opens each ptp4l: source from its own runner thread, at the
 * same time: every client needs a socket path (and a port identity, which
 * ptp4l answers to) of its own, or one unlinks and takes over another's.
 */
TEST(concurrent_opens_get_distinct_sockets)
{
	static struct opener o[THREADS];
	static unsigned char seen[65536];
	int i, j, same = 0;

	if (geteuid())
		SKIP(return, "binds in /var/run: needs root");
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, THREADS));
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&o[i].thread, NULL, open_many, &o[i]));
	for (i = 0; i < THREADS; i++)
		pthread_join(o[i].thread, NULL);
	for (i = 0; i < THREADS; i++) {
		EXPECT_EQ(0, o[i].failed);
		for (j = 0; j < OPENS; j++)
			same += seen[o[i].port[j]]++ > 0;
	}
	EXPECT_EQ(0, same);
}

TEST_HARNESS_MAIN
