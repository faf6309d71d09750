/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * lclk.conf, the daemon's configuration: chrony-like directives, one per
 * line, '#' starts a comment. Documented in lclkctl(8) and
 * packaging/lclk.conf; every value has a default so an empty file with one
 * "source" line is a working configuration.
 */
#ifndef LCLK_DAEMON_CONFIG_H
#define LCLK_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_MAX_SOURCES	16
#define CONFIG_URL_MAX		256

/*
 * Preference classes, best first by default: a PTP source (ptp://, phc:,
 * ptp4l:) or the hypervisor's vmclock (vmclock:) over an NTP server over
 * a peer lclk host ("peer" lines).
 */
enum source_class {
	CLASS_PTP,
	CLASS_NTP,
	CLASS_PEER,
	NR_CLASSES
};

enum servo_type {
	SERVO_PI,
	SERVO_LINREG,
};

struct config_source {
	char url[CONFIG_URL_MAX];
	enum source_class class;
	bool prefer;		/* best within its class */
	int line;		/* where it was configured, for messages */
};

struct daemon_config {
	char device[CONFIG_URL_MAX];
	struct config_source sources[CONFIG_MAX_SOURCES];
	size_t nsources;
	int class_rank[NR_CLASSES];	/* 0 = most preferred */

	int64_t minpoll_ns;		/* fast polling, at start and after a disturbance */
	int64_t maxpoll_ns;		/* slowest polling once settled */
	unsigned int fastpolls;		/* updates at minpoll before backing off */
	int64_t disturbance_ns;		/* |offset| beyond this: poll fast again */

	unsigned int samples;		/* per measurement */
	int64_t sample_interval_ns;
	int64_t timeout_ns;		/* per sample */

	/* Stepping after the first sync, like chrony's makestep. */
	int64_t makestep_ns;		/* step if |offset| > this ... */
	int makestep_limit;		/* ... in the first N updates; -1: always */
	bool allow_backward;		/* those steps may go backwards */

	int64_t holdover_ns;		/* no update for this long: HOLDOVER */
	uint32_t max_drift_ppb;		/* bound growth; 0 = the module's default */
	int64_t max_slew_ppt;		/* |rate| limit of the servo */

	enum servo_type servo;
	double pi_kp, pi_ki;		/* PI gains per poll interval */

	char metrics[CONFIG_URL_MAX];	/* "ADDR:PORT", "" = off */
	char control[CONFIG_URL_MAX];	/* UNIX socket path, "" = off */
	/* Who the daemon runs as once its device and sockets are open. */
	char user[64];
	int log_level;			/* LOG_* */
	bool log_syslog;
};

#define CONFIG_DEFAULT_CONTROL	"/run/lclk/lclkd.sock"
#define CONFIG_DEFAULT_METRICS	"127.0.0.1:9478"
#define CONFIG_DEFAULT_USER	"lclk"

void config_defaults(struct daemon_config *c);

/*
 * Parse a configuration from f on top of the defaults. Returns 0, or -1
 * with "NAME:LINE: reason" in err; c is then unusable (the caller keeps
 * its previous configuration).
 */
int config_parse(FILE *f, const char *name, struct daemon_config *c,
		 char *err, size_t errlen);
/* Same, from a file path (err also covers "cannot open"). */
int config_load(const char *path, struct daemon_config *c, char *err, size_t errlen);

/* Printable name of a class: "ptp", "ntp", "peer". */
const char *config_class_name(enum source_class class);

#endif /* LCLK_DAEMON_CONFIG_H */
