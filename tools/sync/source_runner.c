// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "source_runner.h"

static void measure(struct source_runner *r, struct runner_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!r->open) {
		target_mark(r->tc, &r->mark);
		res->ret = source_open(&r->src, r->url, &r->opts, res->err, sizeof(res->err));
		if (res->ret)
			return;
		r->open = true;
	}
	r->idle_failed = false;
	if (!r->src.ops->samples_before)
		target_mark(r->tc, &r->mark);
	res->ret = r->src.ops->measure(&r->src, r->tc, &res->m, res->err, sizeof(res->err));
	res->m.vmclock = r->mark;
	/* the next measurement's mark: read before it, unless it uses older samples */
	if (r->src.ops->samples_before)
		target_mark(r->tc, &r->mark);
	if (r->src.ops->next_due)
		res->not_before_ns = r->src.ops->next_due(&r->src);
	if (res->ret && !res->err[0])
		snprintf(res->err, sizeof(res->err), "%s", strerror(-res->ret));
}

/*
 * One slice of the source's idle op, called unlocked. False if it has none
 * or it failed: then the thread sleeps until the next poll.
 */
static bool idle(struct source_runner *r)
{
	struct timespec ts;
	int err;

	if (!r->open || !r->src.ops->idle || r->idle_failed)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	err = r->src.ops->idle(&r->src, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec +
				RUNNER_IDLE_NS);
	r->idle_failed = err != 0;
	return !err;
}

static void *runner_main(void *arg)
{
	struct source_runner *r = arg;
	struct runner_result res;
	char byte = 1;
	bool idled;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->requested && !r->quit) {
			pthread_mutex_unlock(&r->lock);
			idled = idle(r);
			pthread_mutex_lock(&r->lock);
			if (!idled && !r->requested && !r->quit)
				pthread_cond_wait(&r->cond, &r->lock);
		}
		if (r->quit)
			break;
		r->requested = false;
		r->busy = true;
		pthread_mutex_unlock(&r->lock);

		measure(r, &res);

		pthread_mutex_lock(&r->lock);
		r->result = res;
		r->busy = false;
		r->done = true;
		if (write(r->wake_fd, &byte, 1) < 0 && errno != EAGAIN)
			perror("lclkctl daemon: wake");
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int runner_resume(struct source_runner *r)
{
	int err;

	r->quit = false;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	err = pthread_create(&r->thread, NULL, runner_main, r);
	if (err) {
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		return -err;
	}
	r->running = true;
	return 0;
}

int runner_start(struct source_runner *r, const char *url,
		 const struct source_opts *opts, const struct target_clock *tc,
		 int wake_fd)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->url, sizeof(r->url), "%s", url);
	r->opts = *opts;
	r->tc = tc;
	r->wake_fd = wake_fd;
	return runner_resume(r);
}

bool runner_poll(struct source_runner *r)
{
	bool ok;

	pthread_mutex_lock(&r->lock);
	ok = !r->busy && !r->requested;
	if (ok) {
		/*
		 * A result never collected finished after its poll's cycle
		 * was over; the clock may have been steered since it was
		 * measured, which its offset does not include.
		 */
		r->done = false;
		r->requested = true;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

bool runner_collect(struct source_runner *r, struct runner_result *out)
{
	bool done;

	pthread_mutex_lock(&r->lock);
	done = r->done;
	if (done) {
		*out = r->result;
		r->done = false;
	}
	pthread_mutex_unlock(&r->lock);
	return done;
}

void runner_pause(struct source_runner *r)
{
	if (!r->running)
		return;
	pthread_mutex_lock(&r->lock);
	r->quit = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	r->running = false;
}

void runner_stop(struct source_runner *r)
{
	runner_pause(r);
	if (r->open)
		source_close(&r->src);
	r->open = false;
}
