// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/device.h"
#include "lib/units.h"
#include "ntp/ntp_policy.h"
#include "sync/leap.h"
#include "sync/select.h"
#include "sync/sync_policy.h"
#include "daemon.h"
#include "daemon_log.h"

/* A cycle's results are awaited this long beyond the sources' own timeouts. */
#define CYCLE_SLACK_NS	1000000000LL

int64_t daemon_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The first NTP burst of a source, as chrony's iburst: 4 exchanges. */
#define DAEMON_FIRST_SAMPLES	4

static int set_model(struct daemon *d, struct lclk_set_model *set, const char *what)
{
	int err = device_ioctl(d->fd, LCLK_IOC_SET_MODEL, set);

	if (err)
		log_err("%s: %s: %s", d->cfg.device, what, strerror(-err));
	return err;
}

/*
 * How fast the logical clock may leave the reference while it runs at the
 * frequency estimate freq_ppt: the oscillator's assumed drift plus the
 * estimate itself, which is only as good as the measurements behind it (a
 * noisy start can put it well off the truth, and the bound must hold all
 * the same). The module adds the correction on top of it to the growth
 * for as long as that runs (LCLK_SET_CORRECTION).
 */
static uint32_t drift_at(const struct daemon *d, int64_t freq_ppt)
{
	int64_t v = d->drift_ppb + (llabs(freq_ppt) + 999) / 1000;

	return v > LCLK_MAX_DRIFT_PPB ? LCLK_MAX_DRIFT_PPB : (uint32_t)v;
}

/* Holdover and drift of the configuration, and the limits they imply. */
static int apply_limits(struct daemon *d, int64_t freq_ppt)
{
	struct lclk_set_model set = { .modes = LCLK_SET_HOLDOVER | LCLK_SET_MAX_DRIFT };

	d->drift_ppb = d->cfg.max_drift_ppb ? d->cfg.max_drift_ppb : d->info.max_drift_ppb;
	d->max_rate_ppt = d->cfg.max_slew_ppt < d->info.max_rate_ppt ?
			  d->cfg.max_slew_ppt : d->info.max_rate_ppt;
	set.holdover_ns = d->cfg.holdover_ns;
	set.max_drift_ppb = drift_at(d, freq_ppt);
	return set_model(d, &set, "setting holdover and drift");
}

static void reset_sources(struct daemon *d)
{
	unsigned int i;

	d->report.nsources = d->cfg.nsources;
	d->report.selected = -1;
	for (i = 0; i < d->cfg.nsources; i++) {
		struct source_report *s = &d->report.sources[i];

		memset(s, 0, sizeof(*s));
		snprintf(s->url, sizeof(s->url), "%s", d->cfg.sources[i].url);
		s->class = d->cfg.sources[i].class;
		s->prefer = d->cfg.sources[i].prefer;
	}
}

static int start_runners(struct daemon *d)
{
	struct source_opts opts = {
		.samples = d->cfg.samples,
		.first_samples = DAEMON_FIRST_SAMPLES,
		.interval_ns = d->cfg.sample_interval_ns,
		.timeout_ns = d->cfg.timeout_ns,
		.verbose = d->cfg.log_level >= LOG_DEBUG,
	};
	unsigned int i;
	int err;

	for (i = 0; i < d->cfg.nsources; i++) {
		err = runner_start(&d->runners[i], d->cfg.sources[i].url, &opts, &d->tc, d->wake[1]);
		if (err) {
			log_err("%s: cannot start its thread: %s", d->cfg.sources[i].url, strerror(-err));
			break;
		}
		d->nrunners++;
	}
	reset_sources(d);
	d->cycle_open = false;
	d->next_poll_ns = daemon_now_ns();
	return d->nrunners == d->cfg.nsources ? 0 : -1;
}

static void stop_runners(struct daemon *d)
{
	char buf[64];

	while (d->nrunners)
		runner_stop(&d->runners[--d->nrunners]);
	while (read(d->wake[0], buf, sizeof(buf)) > 0)
		;
}

/*
 * flock DIR/NAME.lock, NAME the device's node (after symlinks): created
 * 0600 in a directory no other user can write, so no one else can hold it
 * or put something in its place. Kept open (and locked) until exit.
 */
static int lock_device(struct daemon *d, const char *device)
{
	const char *dir = getenv("LCLK_LOCK_DIR");
	char real[PATH_MAX], path[PATH_MAX];
	const char *name;
	struct stat st;

	if (!dir || !dir[0])
		dir = DAEMON_LOCK_DIR;
	name = strrchr(realpath(device, real) ? real : device, '/');
	name = name ? name + 1 : device;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		log_err("%s: cannot create %s: %s", device, dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || (st.st_mode & 022) ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		log_err("%s: %s is not a directory only its owner (root or us) can write",
			device, dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.lock", dir, name);
	d->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (d->lock_fd < 0) {
		log_err("%s: lock %s: %s", device, path, strerror(errno));
		return -1;
	}
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB)) {
		log_err("%s: %s", device, errno == EWOULDBLOCK ?
			"another daemon steers it already" : strerror(errno));
		return -1;
	}
	return 0;
}

int daemon_init(struct daemon *d, const struct daemon_config *cfg)
{
	struct lclk_params model;
	int err;

	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	d->fd = d->lock_fd = -1;
	d->wake[0] = d->wake[1] = -1;
	snprintf(d->report.device, sizeof(d->report.device), "%s", cfg->device);

	err = target_open(&d->tc, cfg->device, true);
	if (err)
		return device_error("daemon", cfg->device, "open", err);
	/*
	 * Read-only: changing the model takes CAP_SYS_TIME, not the file's
	 * mode, and the node is root's, 0644: the daemon's user (lclk under
	 * lclk.service) opens it as it is.
	 */
	d->fd = device_open(cfg->device, false);
	if (d->fd < 0)
		return device_error("daemon", cfg->device, "open", d->fd);
	if (lock_device(d, cfg->device))
		return EXIT_FAIL;
	err = device_ioctl(d->fd, LCLK_IOC_INFO, &d->info);
	if (!err)
		err = device_ioctl(d->fd, LCLK_IOC_GET_MODEL, &model);
	if (err)
		return device_error("daemon", cfg->device, "reading the model", err);
	if (apply_limits(d, model.rate_ppt))
		return EXIT_FAIL;
	/*
	 * A clock left by an earlier run keeps its time and rate: the servo
	 * starts from that rate and nothing is stepped.
	 */
	d->servo = servo_create(&d->cfg, d->max_rate_ppt, model.rate_ppt);
	if (!d->servo || pipe2(d->wake, O_CLOEXEC | O_NONBLOCK)) {
		log_err("daemon: out of memory or file descriptors");
		return EXIT_FAIL;
	}
	d->report.rate_ppt = d->report.freq_ppt = servo_freq(d->servo);
	poll_sched_init(&d->sched, cfg->minpoll_ns, cfg->maxpoll_ns, cfg->fastpolls,
			cfg->disturbance_ns);
	log_notice("%s: %s, rate %lld ppt, %u sources, holdover %llds, drift %u ppb",
		   cfg->device, lclk_status_name(model.status), (long long)model.rate_ppt,
		   (unsigned int)cfg->nsources, (long long)(cfg->holdover_ns / 1000000000LL),
		   d->drift_ppb);
	return 0;
}

int daemon_start(struct daemon *d)
{
	return start_runners(d) ? EXIT_FAIL : 0;
}

/* The model now runs at rate_ppt, since now_ns. */
static void rate_changed(struct daemon *d, int64_t rate_ppt, int64_t now_ns)
{
	d->rate_before_ppt = d->report.rate_ppt;
	d->rate_changed_ns = now_ns;
	d->report.rate_ppt = rate_ppt;
}

/*
 * The fastest the logical clock may have left the reference since
 * since_ns: the oscillator's drift plus the fastest rate it ran at then
 * (the rate changes at most once between a measurement's base and the
 * update that acts on it: when a correction ends).
 */
static int64_t growth_since(const struct daemon *d, int64_t since_ns)
{
	int64_t rate = llabs(d->report.rate_ppt);

	if (d->rate_changed_ns > since_ns && llabs(d->rate_before_ppt) > rate)
		rate = llabs(d->rate_before_ppt);
	return (int64_t)d->drift_ppb * 1000 + rate;
}

/*
 * Rate back to the frequency estimate. At the correction's end the module
 * has ended it (as it would have, were the daemon dead or stopped): only
 * the report follows. Before it (sources lost, a reload) it is ended here.
 */
static void end_correction(struct daemon *d)
{
	struct lclk_set_model set = { .modes = LCLK_SET_RATE };
	int64_t now = daemon_now_ns();

	if (!d->correction_end_ns)
		return;
	set.rate_ppt = servo_freq(d->servo);
	if (now < d->correction_end_ns && set_model(d, &set, "ending the correction"))
		return;
	d->correction_end_ns = 0;
	rate_changed(d, set.rate_ppt, now);
}

void daemon_stop_sources(struct daemon *d)
{
	/* First: joining a runner waits out its burst. */
	end_correction(d);
	stop_runners(d);
}

void daemon_reload(struct daemon *d, const struct daemon_config *cfg)
{
	int64_t freq = servo_freq(d->servo);
	char device[sizeof(d->cfg.device)];
	struct servo *s;

	if (strcmp(cfg->device, d->cfg.device))
		log_warn("reload: the device cannot change while running; keeping %s",
			 d->cfg.device);
	daemon_stop_sources(d);
	memcpy(device, d->cfg.device, sizeof(device));
	d->cfg = *cfg;
	memcpy(d->cfg.device, device, sizeof(device));
	apply_limits(d, freq);
	s = servo_create(&d->cfg, d->max_rate_ppt, freq);
	if (s) {
		servo_destroy(d->servo);
		d->servo = s;
	}
	poll_sched_init(&d->sched, cfg->minpoll_ns, cfg->maxpoll_ns, cfg->fastpolls,
			cfg->disturbance_ns);
	d->no_source = false;
	start_runners(d);
	log_notice("reloaded: %u sources", (unsigned int)cfg->nsources);
}

/* Closing the device ends a correction that runs (the module's doing). */
void daemon_fini(struct daemon *d)
{
	stop_runners(d);
	servo_destroy(d->servo);
	if (d->wake[0] >= 0) {
		close(d->wake[0]);
		close(d->wake[1]);
	}
	if (d->fd >= 0)
		close(d->fd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	target_close(&d->tc);
}

int64_t daemon_next_event(const struct daemon *d)
{
	int64_t t = d->cycle_open ? d->cycle_deadline_ns : d->next_poll_ns;

	if (d->correction_end_ns && d->correction_end_ns < t)
		t = d->correction_end_ns;
	return t;
}

static void start_cycle(struct daemon *d, int64_t now)
{
	int64_t spacing;
	unsigned int i;

	for (i = 0; i < d->nrunners; i++) {
		d->answered[i] = false;
		if (runner_poll(&d->runners[i]))
			continue;
		/*
		 * Still busy with an earlier poll (a PTP port waiting for a
		 * master): it misses this one. Waiting for it would hold the
		 * other sources' update back to the cycle's deadline.
		 */
		d->answered[i] = true;
		d->results[i].ret = -EBUSY;
		snprintf(d->results[i].err, sizeof(d->results[i].err),
			 "still measuring for an earlier poll");
	}
	d->cycle_open = true;
	/* Left to the sources, the spacing is at most an NTP burst's to a public server. */
	spacing = d->cfg.sample_interval_ns < 0 ? NTP_WAN_INTERVAL_NS : d->cfg.sample_interval_ns;
	d->cycle_deadline_ns = now + (int64_t)d->cfg.samples *
		(d->cfg.timeout_ns + spacing) + CYCLE_SLACK_NS;
}

/* Record one source's poll in the report; true if it measured. */
static bool record(struct daemon *d, unsigned int i)
{
	struct source_report *s = &d->report.sources[i];
	const struct runner_result *res = &d->results[i];
	/* The poll's own reason: a poll not due leaves s->error as it was. */
	const char *why = d->answered[i] ? res->err : "no answer within the poll";
	bool ok = source_report_poll(s, d->answered[i] ? res->ret : -ETIMEDOUT, &res->m, why);

	if (!ok) {
		log_info("%s: %s", s->url, why);
		return false;
	}
	d->report.rejected += res->m.rejected;
	log_debug("%s: offset %lld ns, delay %lld ns, bound %lld ns", s->url,
		  (long long)s->offset_ns, (long long)s->delay_ns, (long long)s->bound_ns);
	return true;
}

/*
 * Source i measured, but its measurement cannot be used this cycle (why):
 * it counts as a failed poll. Warned once per reason, as it recurs each poll.
 */
static void unusable(struct daemon *d, unsigned int i, const char *why)
{
	struct source_report *s = &d->report.sources[i];

	if (strcmp(s->error, why))
		log_warn("%s: %s", s->url, why);
	else
		log_info("%s: %s", s->url, why);
	source_report_unusable(s, why);
}

static void lost_all(struct daemon *d, const char *why)
{
	if (!d->no_source && !d->updates)
		log_warn("%s: not synchronised yet", why);
	else if (!d->no_source)
		log_warn("%s: holding over, the bound grows by %u ppb", why,
			 drift_at(d, servo_freq(d->servo)));
	d->no_source = true;
	d->report.selected = -1;
	end_correction(d);
	poll_sched_failed(&d->sched);
}

/* Step or slew to measurement m of source i, on a clock whose model is model. */
static void steer(struct daemon *d, unsigned int i, const struct measurement *m,
		  const struct lclk_params *model, bool disturbed, int64_t now)
{
	struct lclk_set_model set = { .modes = LCLK_SET_RATE | LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT };
	int64_t growth = growth_since(d, m->base_ns);
	char a[UNITS_BUFSZ];
	bool step;

	step = sync_should_step(&d->cfg, model->status == LCLK_STATUS_UNSYNCED, d->updates,
				m->offset_ns);
	if (disturbed || step)
		/* The offset history no longer fits one line. */
		servo_reset(d->servo, servo_freq(d->servo));
	poll_sched_update(&d->sched, m->offset_ns, disturbed || step);
	set.t0_ns = m->base_ns;
	if (step) {
		set.modes |= LCLK_SET_OFFSET;
		set.offset_ns = target_from_base(&d->tc, m->base_ns) + m->offset_ns - m->base_ns;
		if (m->offset_ns < 0)
			set.flags = LCLK_ALLOW_BACKWARD;
		set.rate_ppt = servo_freq(d->servo);
	} else {
		/*
		 * The part of the rate beyond the frequency estimate is a
		 * correction for one interval, whose end the module enforces:
		 * a daemon that dies or hangs leaves no slew behind.
		 */
		set.corr_ppt = servo_sample(d->servo, m->offset_ns, m->base_ns,
					    d->sched.interval_ns);
		set.rate_ppt = servo_freq(d->servo);
		set.corr_ppt -= set.rate_ppt;
		set.corr_ns = d->sched.interval_ns;
		if (set.corr_ppt)
			set.modes |= LCLK_SET_CORRECTION;
	}
	set.max_drift_ppb = drift_at(d, servo_freq(d->servo));
	/*
	 * The kernel grows the bound from the base at the new model's drift;
	 * since the base the clock ran at the old rate. A step rewrites that
	 * time at the new rate, so nothing of the offset is left over.
	 */
	set.bound_ns = step ? sync_bound(0, m->bound_ns, 0, 0, 0) :
		       sync_bound(m->offset_ns, m->bound_ns, growth, set.max_drift_ppb,
				  now - m->base_ns);
	if (set_model(d, &set, step ? "stepping" : "slewing"))
		return;
	if (step) {
		d->report.steps++;
		log_notice("%s: stepped by %s", d->report.sources[i].url,
			   units_ns(a, sizeof(a), m->offset_ns));
	}
	d->updates++;
	d->report.updates++;
	d->report.offset_ns = m->offset_ns;
	rate_changed(d, set.rate_ppt + set.corr_ppt, now);
	d->report.last_update_ns = now;
	d->correction_end_ns = set.corr_ppt ? now + set.corr_ns : 0;
}

/*
 * The leap second the sources' majority announces (c: the combination),
 * on the clock: the module steps it at its instant (lclk(4)), and TAI -
 * UTC when a source knows it. Cancelled when no longer announced. Never
 * within LEAP_QUIET_NS of the instant, where the module's step is under
 * way: after an insertion logical time repeats the day's last second,
 * and the sources still announce the leap.
 */
static void keep_leap(struct daemon *d, const struct measurement *c,
		      const struct lclk_params *model, int64_t utc)
{
	struct lclk_set_model set = { .modes = LCLK_SET_LEAP };
	int64_t at;
	int leap = leap_wanted(c->leap, model->model_flags & LCLK_MODEL_TAI, utc, &at);
	int tai = c->utc_offset_valid && c->utc_offset > 0 &&
		  c->utc_offset <= LCLK_MAX_TAI_OFFSET_S ? c->utc_offset : model->tai_offset_s;

	if (leap == model->leap && tai == model->tai_offset_s)
		return;
	if (leap_quiet(d->leap_at, utc) || leap_quiet(at, utc))
		return;
	set.leap = (uint32_t)leap;
	set.leap_ns = at;
	set.tai_offset_s = tai;
	if (set_model(d, &set, "setting the leap second"))
		return;
	if (leap != model->leap)
		log_notice("leap second: %s", leap == LEAP_INSERT ? "insertion at midnight" :
			   leap == LEAP_DELETE ? "deletion at 23:59:59" : "cancelled");
	if (leap)
		d->leap_at = at;
}

static void finish_cycle(struct daemon *d, int64_t now)
{
	struct measurement m[CONFIG_MAX_SOURCES];
	bool valid[CONFIG_MAX_SOURCES];
	enum select_state st[CONFIG_MAX_SOURCES];
	char why[CONFIG_MAX_SOURCES][SYNC_WHY_MAX];
	unsigned int i, n = d->nrunners, nvalid = 0;
	int best, prev = d->report.selected, err;
	struct lclk_params model;
	struct measurement combined;
	struct lclk_now ln;
	uint32_t drift;
	bool disturbed;

	d->cycle_open = false;
	for (i = 0; i < n; i++) {
		valid[i] = record(d, i);
		if (valid[i]) {
			m[i] = d->results[i].m;
			nvalid++;
		}
	}
	if (!nvalid) {
		lost_all(d, "no source answered");
		goto next;
	}
	/*
	 * Read each cycle: the timescale is the model's (lclkctl set --tai
	 * may change it while the daemon runs), and steer() starts from it.
	 */
	if (device_ioctl(d->fd, LCLK_IOC_GET_MODEL, &model)) {
		log_err("%s: reading the model failed", d->cfg.device);
		goto next;
	}
	drift = drift_at(d, servo_freq(d->servo));
	best = sync_select(&d->cfg, model.model_flags & LCLK_MODEL_TAI, m, valid, why, n,
			   drift, now, prev, st, &err, &combined);
	for (i = 0; i < n; i++) {
		if (why[i][0])
			unusable(d, i, why[i]);
		if (!valid[i])
			continue;
		if (err == -EDOM || st[i] == SELECT_FALSETICKER)
			d->report.sources[i].state = SRC_FALSETICKER;
		else
			d->report.sources[i].state = (int)i == best ? SRC_SELECTED : SRC_CANDIDATE;
	}
	if (best < 0) {
		lost_all(d, err == -EDOM ? "sources disagree, no majority" :
			 err == -ENODATA ? "no source on the clock's timescale" :
			 "no source survived selection");
		goto next;
	}
	disturbed = d->no_source || (prev >= 0 && prev != best);
	if (d->no_source && d->updates)
		log_notice("%s: back, leaving holdover", d->report.sources[best].url);
	else if (prev != best)
		log_notice("%s: selected", d->report.sources[best].url);
	d->no_source = false;
	d->report.selected = best;
	/* A measurement from one side of the leap's step, applied on the other, is 1 s off. */
	target_now(&d->tc, &ln);
	if (leap_quiet(d->leap_at, ln.time_ns) ||
	    leap_quiet(d->leap_at, target_from_base(&d->tc, m[best].base_ns))) {
		log_info("leap second: no sync within %lld s of it", LEAP_QUIET_NS / 1000000000LL);
		goto next;
	}
	steer(d, best, &m[best], &model, disturbed, now);
	/* On the clock as steered: the day is the one it says now. */
	target_now(&d->tc, &ln);
	keep_leap(d, &combined, &model, ln.time_ns);
next:
	d->next_poll_ns = now + d->sched.interval_ns;
	d->report.poll_ns = d->sched.interval_ns;
}

static bool all_answered(const struct daemon *d)
{
	unsigned int i;

	for (i = 0; i < d->nrunners; i++)
		if (!d->answered[i])
			return false;
	return true;
}

void daemon_run_due(struct daemon *d, int64_t now)
{
	unsigned int i;
	char buf[64];

	while (read(d->wake[0], buf, sizeof(buf)) > 0)
		;
	if (d->correction_end_ns && now >= d->correction_end_ns)
		end_correction(d);
	if (!d->cycle_open && now >= d->next_poll_ns)
		start_cycle(d, now);
	if (!d->cycle_open)
		return;
	for (i = 0; i < d->nrunners; i++)
		if (!d->answered[i] && runner_collect(&d->runners[i], &d->results[i]))
			d->answered[i] = true;
	if (all_answered(d) || now >= d->cycle_deadline_ns)
		finish_cycle(d, daemon_now_ns());
}

const struct daemon_report *daemon_report(struct daemon *d)
{
	struct lclk_now now;

	target_now(&d->tc, &now);
	d->report.now_ns = now.base_ns;
	d->report.status = now.status;
	d->report.bound_ns = now.bound_ns;
	d->report.freq_ppt = servo_freq(d->servo);
	d->report.poll_ns = d->sched.interval_ns;
	return &d->report;
}
