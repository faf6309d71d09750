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
#include "sync/apply.h"
#include "sync/leap.h"
#include "sync/select.h"
#include "sync/sync_policy.h"
#include "daemon.h"
#include "daemon_log.h"

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

	if (err == -ESTALE)
		log_notice("%s: %s: %s", d->cfg.device, what, apply_strerror(err));
	else if (err)
		log_err("%s: %s: %s", d->cfg.device, what, apply_strerror(err));
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

static void source_opts_of(const struct daemon_config *c, struct source_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->samples = c->samples;
	opts->first_samples = DAEMON_FIRST_SAMPLES;
	opts->interval_ns = c->sample_interval_ns;
	opts->timeout_ns = c->timeout_ns;
	opts->verbose = c->log_level >= LOG_DEBUG;
}

/*
 * The sources of d->cfg: those of old[] (n of them, paused) whose URL and
 * options are unchanged are kept, with their schedule and protocol state,
 * and resumed; the others are stopped, and new ones started. old may be
 * d->src itself. Returns 0, or -1 when a source's thread could not start.
 */
static int take_sources(struct daemon *d, struct daemon_source **old, unsigned int n)
{
	struct daemon_source *kept[CONFIG_MAX_SOURCES] = { NULL };
	struct source_opts opts;
	int64_t now = daemon_now_ns();
	unsigned int i, j;
	int err, ret = 0;

	source_opts_of(&d->cfg, &opts);
	for (j = 0; j < d->cfg.nsources; j++) {
		for (i = 0; i < n; i++) {
			if (!old[i] || !dsrc_same(old[i], &d->cfg.sources[j], &opts))
				continue;
			kept[j] = old[i];
			old[i] = NULL;
			dsrc_retune(kept[j], &d->cfg.sources[j], &d->cfg);
			break;
		}
	}
	for (i = 0; i < n; i++)
		if (old[i])
			dsrc_stop(old[i]);
	d->nsrc = 0;
	for (j = 0; j < d->cfg.nsources; j++) {
		struct daemon_source *s = kept[j];

		if (s)
			err = runner_resume(&s->runner);
		else
			s = dsrc_start(&d->cfg.sources[j], &opts, &d->cfg, &d->tc, d->wake[1],
				       now, &err);
		if (err) {
			log_err("%s: cannot start its thread: %s", d->cfg.sources[j].url,
				strerror(-err));
			if (kept[j])
				dsrc_stop(kept[j]);
			ret = -1;
			continue;
		}
		/* The configuration's sources stay those of d->src, index for index. */
		d->cfg.sources[d->nsrc] = d->cfg.sources[j];
		d->src[d->nsrc++] = s;
	}
	d->cfg.nsources = d->nsrc;
	d->report.nsources = d->nsrc;
	d->report.selected = -1;
	return ret;
}

static void drain_wake(struct daemon *d)
{
	char buf[64];

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
	target_mark(&d->tc, &d->mark);
	log_notice("%s: %s, rate %lld ppt, %u sources, holdover %llds, drift %u ppb",
		   cfg->device, lclk_status_name(model.status), (long long)model.rate_ppt,
		   (unsigned int)cfg->nsources, (long long)(cfg->holdover_ns / 1000000000LL),
		   d->drift_ppb);
	return 0;
}

int daemon_start(struct daemon *d)
{
	return take_sources(d, NULL, 0) ? EXIT_FAIL : 0;
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
	unsigned int i;

	/* First: joining a runner waits out its burst. */
	end_correction(d);
	for (i = 0; i < d->nsrc; i++)
		runner_pause(&d->src[i]->runner);
}

void daemon_reload(struct daemon *d, const struct daemon_config *cfg)
{
	int64_t freq = servo_freq(d->servo);
	char device[sizeof(d->cfg.device)];
	struct daemon_source *old[CONFIG_MAX_SOURCES];
	unsigned int nold = d->nsrc;
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
	d->no_source = false;
	memcpy(old, d->src, sizeof(old[0]) * nold);
	take_sources(d, old, nold);
	log_notice("reloaded: %u sources", d->nsrc);
}

/* Closing the device ends a correction that runs (the module's doing). */
void daemon_fini(struct daemon *d)
{
	while (d->nsrc)
		dsrc_stop(d->src[--d->nsrc]);
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
	int64_t t = INT64_MAX, e;
	unsigned int i;

	for (i = 0; i < d->nsrc; i++) {
		e = dsrc_next_event(d->src[i]);
		if (e < t)
			t = e;
	}
	if (d->correction_end_ns && d->correction_end_ns < t)
		t = d->correction_end_ns;
	if (d->mark.vmclock && d->next_mark_check_ns < t)
		t = d->next_mark_check_ns;
	return t;
}

/*
 * Take the result of source s's poll (ret, m, why) at now. A source that
 * held the poll back (-EAGAIN) made no poll: nothing is counted against
 * it, and it is asked again when it will answer.
 */
static void record(struct daemon *d, struct daemon_source *s, const struct runner_result *res,
		   int64_t now)
{
	const struct measurement *m = &res->m;

	s->not_before_ns = res->not_before_ns;
	if (res->ret == -EAGAIN) {
		log_debug("%s: %s", s->cfg.url, res->err);
		dsrc_schedule(s, now);
		return;
	}
	/*
	 * Measured before a restore or a migration that watch_disruption()
	 * has seen since: not the source's fault, and not the time now.
	 */
	if (!res->ret && d->mark.known && m->vmclock.known &&
	    m->vmclock.marker != d->mark.marker) {
		log_info("%s: measured before the VM was restored or migrated: measuring again",
			 s->cfg.url);
		dsrc_schedule(s, now);
		dsrc_poll_now(s, now);
		return;
	}
	if (!source_report_poll(&s->report, res->ret, m, res->err)) {
		log_info("%s: %s", s->cfg.url, res->err);
		s->valid = false;
		poll_sched_failed(&s->sched);
		dsrc_schedule(s, now);
		return;
	}
	d->report.rejected += m->rejected;
	log_debug("%s: offset %lld ns, delay %lld ns, bound %lld ns", s->cfg.url,
		  (long long)m->offset_ns, (long long)m->delay_ns, (long long)m->bound_ns);
	s->m = *m;
	s->ref_minus_base_ns = target_from_base(&d->tc, m->base_ns) + m->offset_ns - m->base_ns;
	s->valid = true;
	s->fresh = true;
	s->measured = true;
	/* Scheduled once the update has set its poll (update()). */
}

/* A poll that produced no result: recorded as one that failed with err. */
static void record_failed(struct daemon *d, struct daemon_source *s, int err,
			  const char *why, int64_t now)
{
	struct runner_result res;

	memset(&res, 0, sizeof(res));
	res.ret = err;
	res.not_before_ns = s->not_before_ns;
	snprintf(res.err, sizeof(res.err), "%s", why);
	record(d, s, &res, now);
}

/*
 * Source i measured, but its measurement cannot be used (why):
 * it counts as a failed poll. Warned once per reason, as it recurs each poll.
 */
static void unusable(struct daemon *d, unsigned int i, const char *why)
{
	struct source_report *s = &d->src[i]->report;

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
}

/*
 * Until source s's next sample: its own poll interval, or longer where the
 * source holds its polls back (a public NTP server's 64 s floor).
 */
static int64_t until_next_sample(const struct daemon_source *s, int64_t now)
{
	int64_t t = s->sched.interval_ns;

	return s->not_before_ns - now > t ? s->not_before_ns - now : t;
}

/* Step or slew to the new measurement m of source s, on a clock whose model is model. */
static void steer(struct daemon *d, struct daemon_source *s, const struct measurement *m,
		  const struct lclk_params *model, bool disturbed, int64_t now)
{
	struct lclk_set_model set = { .modes = LCLK_SET_RATE | LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT };
	int64_t growth = growth_since(d, m->base_ns), interval;
	char a[UNITS_BUFSZ];
	bool step;

	if (m->vmclock.vmclock && !m->vmclock.known) {
		log_warn("%s: the vmclock's page could not be read before measuring: not set",
			 s->cfg.url);
		return;
	}
	/*
	 * DISRUPTED (a VM restored or migrated: lclk(4)): the clock may be
	 * seconds off and its history says nothing of it, as when unsynced.
	 */
	if (model->status == LCLK_STATUS_DISRUPTED)
		disturbed = true;
	step = sync_should_step(&d->cfg, model->status == LCLK_STATUS_UNSYNCED ||
				model->status == LCLK_STATUS_DISRUPTED, d->updates,
				m->offset_ns);
	if (disturbed || step)
		/* The offset history no longer fits one line. */
		servo_reset(d->servo, servo_freq(d->servo));
	poll_sched_update(&s->sched, m->offset_ns, disturbed || step);
	interval = until_next_sample(s, now);
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
		set.corr_ppt = servo_sample(d->servo, m->offset_ns, m->base_ns, interval);
		set.rate_ppt = servo_freq(d->servo);
		set.corr_ppt -= set.rate_ppt;
		set.corr_ns = interval;
		if (set.corr_ppt)
			set.modes |= LCLK_SET_CORRECTION;
	}
	set.max_drift_ppb = drift_at(d, servo_freq(d->servo));
	/* measured before a restore or a migration: ESTALE, and the next poll */
	apply_mark(&set, &m->vmclock);
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
		log_notice("%s: stepped by %s", s->cfg.url,
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

/*
 * The sources' latest measurements, on the clock as it is steered now
 * (daemon_source.h): a fresh one as measured, an older one moved by what
 * the clock was stepped or slewed by since. valid[i] says which are there.
 */
static unsigned int latest(const struct daemon *d, struct measurement *m, bool *valid)
{
	unsigned int i, n = 0;

	for (i = 0; i < d->nsrc; i++) {
		const struct daemon_source *s = d->src[i];

		valid[i] = s->valid;
		if (!valid[i])
			continue;
		m[i] = s->m;
		if (!s->fresh)
			m[i].offset_ns = s->ref_minus_base_ns -
					 (target_from_base(&d->tc, s->m.base_ns) - s->m.base_ns);
		n++;
	}
	return n;
}

/*
 * After new results: select over every source's latest measurement and,
 * if the selected source's is new, give it to the servo. Sources keep
 * their own polls: one that is not due is still there with its last
 * measurement, aged.
 */
static void update(struct daemon *d, int64_t now)
{
	struct measurement m[CONFIG_MAX_SOURCES];
	bool valid[CONFIG_MAX_SOURCES];
	enum select_state st[CONFIG_MAX_SOURCES];
	char why[CONFIG_MAX_SOURCES][SYNC_WHY_MAX];
	unsigned int i, n = d->nsrc;
	int best, prev = d->report.selected, err;
	struct lclk_params model;
	struct measurement combined;
	struct daemon_source *s, *steered = NULL;
	struct lclk_now ln;
	uint32_t drift;
	bool disturbed;

	if (!latest(d, m, valid)) {
		lost_all(d, "no source answered");
		goto done;
	}
	/*
	 * Read each time: the timescale is the model's (lclkctl set --tai
	 * may change it while the daemon runs), and steer() starts from it.
	 */
	if (device_ioctl(d->fd, LCLK_IOC_GET_MODEL, &model)) {
		log_err("%s: reading the model failed", d->cfg.device);
		goto done;
	}
	drift = drift_at(d, servo_freq(d->servo));
	best = sync_select(&d->cfg, model.model_flags & LCLK_MODEL_TAI, m, valid, why, n,
			   drift, now, prev, st, &err, &combined);
	for (i = 0; i < n; i++) {
		s = d->src[i];
		/* Counted once, for the measurement that came: an older one was already. */
		if (why[i][0] && s->fresh)
			unusable(d, i, why[i]);
		if (!valid[i])
			continue;
		if (err == -EDOM || st[i] == SELECT_FALSETICKER)
			s->report.state = SRC_FALSETICKER;
		else
			s->report.state = (int)i == best ? SRC_SELECTED : SRC_CANDIDATE;
	}
	if (best < 0) {
		lost_all(d, err == -EDOM ? "sources disagree, no majority" :
			 err == -ENODATA ? "no source on the clock's timescale" :
			 "no source survived selection");
		goto done;
	}
	s = d->src[best];
	disturbed = d->no_source || (prev >= 0 && prev != best);
	if (d->no_source && d->updates)
		log_notice("%s: back, leaving holdover", s->cfg.url);
	else if (prev != best)
		log_notice("%s: selected", s->cfg.url);
	d->no_source = false;
	d->report.selected = best;
	/* Its sample was given to the servo when it came. */
	if (!s->fresh)
		goto done;
	/* A measurement from one side of the leap's step, applied on the other, is 1 s off. */
	target_now(&d->tc, &ln);
	if (leap_quiet(d->leap_at, ln.time_ns) ||
	    leap_quiet(d->leap_at, target_from_base(&d->tc, m[best].base_ns))) {
		log_info("leap second: no sync within %lld s of it", LEAP_QUIET_NS / 1000000000LL);
		goto done;
	}
	steer(d, s, &m[best], &model, disturbed, now);
	steered = s;
	/* On the clock as steered: the day is the one it says now. */
	target_now(&d->tc, &ln);
	keep_leap(d, &combined, &model, ln.time_ns);
done:
	for (i = 0; i < n; i++) {
		s = d->src[i];
		if (!s->fresh)
			continue;
		/* steer() set the poll of the source it steered by. */
		if (s != steered)
			poll_sched_update(&s->sched, m[i].offset_ns, false);
		s->fresh = false;
		dsrc_schedule(s, now);
	}
}

/*
 * A VM restored from a snapshot or migrated: its vmclock's disruption
 * marker changed, and the module reports DISRUPTED, with no bound, until
 * the next update. Every source's latest measurement is of the time
 * before, on a clock that has jumped since: all are dropped, and every
 * source is polled at once, at its fast interval, rather than at its
 * next poll, up to maxpoll away. Looked at on every wakeup (a few loads
 * from the vmclock's page) and, on a VM with a vmclock, at least every
 * DISRUPTION_CHECK_NS: that long at most goes to noticing.
 */
#define DISRUPTION_CHECK_NS	1000000000LL

static void watch_disruption(struct daemon *d, int64_t now)
{
	struct vmclock_mark cur;
	unsigned int i;

	/* A VM does not gain a vmclock while it runs: without, nothing to read. */
	if (!d->mark.vmclock)
		return;
	target_mark(&d->tc, &cur);
	d->next_mark_check_ns = now + DISRUPTION_CHECK_NS;
	if (!cur.known)
		return;		/* mid-update: the next look */
	if (d->mark.known && cur.marker != d->mark.marker) {
		log_notice("the VM was restored or migrated (vmclock disruption marker %llu, was %llu): polling every source now",
			   (unsigned long long)cur.marker, (unsigned long long)d->mark.marker);
		d->report.disruptions++;
		for (i = 0; i < d->nsrc; i++) {
			d->src[i]->valid = false;
			dsrc_poll_now(d->src[i], now);
		}
	}
	d->mark = cur;
}

void daemon_run_due(struct daemon *d, int64_t now)
{
	struct runner_result res;
	bool changed = false;
	unsigned int i;
	int ret;

	drain_wake(d);
	watch_disruption(d, now);
	if (d->correction_end_ns && now >= d->correction_end_ns)
		end_correction(d);
	for (i = 0; i < d->nsrc; i++) {
		struct daemon_source *s = d->src[i];

		/* Late or not: the measurement stays good, it is on the clock of its time. */
		if (runner_collect(&s->runner, &res)) {
			record(d, s, &res, now);
			changed |= res.ret != -EAGAIN;
		} else if (s->out && now >= s->deadline_ns) {
			record_failed(d, s, -ETIMEDOUT, "no answer within the poll", now);
			changed = true;
		}
		ret = dsrc_poll(s, &d->cfg, now);
		if (ret == -EBUSY) {
			record_failed(d, s, -EBUSY, "still measuring for an earlier poll", now);
			changed = true;
		}
	}
	if (changed)
		update(d, daemon_now_ns());
}

/* The selected source's poll interval, or the shortest of all while none is. */
static int64_t report_poll(const struct daemon *d)
{
	int64_t t = 0;
	unsigned int i;

	if (d->report.selected >= 0)
		return d->src[d->report.selected]->sched.interval_ns;
	for (i = 0; i < d->nsrc; i++)
		if (!t || d->src[i]->sched.interval_ns < t)
			t = d->src[i]->sched.interval_ns;
	return t;
}

const struct daemon_report *daemon_report(struct daemon *d)
{
	struct lclk_now now;
	unsigned int i;

	target_now(&d->tc, &now);
	d->report.now_ns = now.base_ns;
	d->report.status = now.status;
	d->report.bound_ns = now.bound_ns;
	d->report.freq_ppt = servo_freq(d->servo);
	d->report.poll_ns = report_poll(d);
	d->report.nsources = d->nsrc;
	for (i = 0; i < d->nsrc; i++)
		d->report.sources[i] = d->src[i]->report;
	return &d->report;
}
