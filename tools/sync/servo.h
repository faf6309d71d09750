/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * Clock servos behind one interface, as linuxptp's servo.h: each turns a
 * series of offsets into the rate of the logical clock. Rates are in parts
 * per trillion of CLOCK_MONOTONIC, offsets are reference - clock in ns.
 *
 * A servo only slews: it never asks for a step. Whether to step is the
 * daemon's policy (sync_policy.h); after a step the daemon resets the servo,
 * keeping its frequency, since the history no longer fits a line.
 *
 * Every servo splits its rate into a frequency estimate, servo_freq(), and
 * a correction, and guarantees that the correction, applied for the
 * interval it was given, moves the clock towards the reference by no more
 * than the offset it was given. So until the next sample the error stays
 * within |offset| + measurement bound + the frequency error, which is what
 * the daemon publishes; when samples stop it falls back to servo_freq().
 */
#ifndef LCLK_SERVO_H
#define LCLK_SERVO_H

#include <stdint.h>

#include "daemon/daemon_config.h"

struct servo;

struct servo_ops {
	/* Rate to apply now; interval_ns: until the next sample is due. */
	int64_t (*sample)(struct servo *s, int64_t offset_ns, int64_t local_ns,
			  int64_t interval_ns);
	int64_t (*freq)(const struct servo *s);
	void (*reset)(struct servo *s, int64_t freq_ppt);
	void (*destroy)(struct servo *s);
};

struct servo {
	const struct servo_ops *ops;
	int64_t max_rate_ppt;	/* every rate returned is within +-this */
	int64_t rate_ppt;	/* last rate returned */
};

/*
 * A servo of the configured type, starting from freq_ppt (e.g. the rate the
 * model already has when the daemon restarts). NULL on ENOMEM.
 */
struct servo *servo_create(const struct daemon_config *c, int64_t max_rate_ppt,
			   int64_t freq_ppt);

/* One sample: returns the rate to apply now, within +-max_rate_ppt. */
int64_t servo_sample(struct servo *s, int64_t offset_ns, int64_t local_ns,
		     int64_t interval_ns);
/* The frequency estimate alone, for when samples stop. */
int64_t servo_freq(const struct servo *s);
/* Forget the history, keep freq_ppt as the estimate. */
void servo_reset(struct servo *s, int64_t freq_ppt);
void servo_destroy(struct servo *s);

/* Constructors of the implementations, for servo_create(). */
struct servo *servo_pi_create(double kp, double ki, int64_t freq_ppt);
struct servo *servo_linreg_create(int64_t freq_ppt);

/* Clamp to +-limit. */
static inline int64_t servo_clamp(int64_t v, int64_t limit)
{
	return v > limit ? limit : v < -limit ? -limit : v;
}

#endif /* LCLK_SERVO_H */
