// SPDX-License-Identifier: GPL-2.0
/*
 * lclk.conf parser. Each directive is a function that takes the line's
 * words and either fills the configuration or says what is wrong; the
 * driver adds the file name and line number, so every error reads
 * "lclk.conf:12: poll: ...".
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "uapi/linux/lclk.h"
#include "daemon_config.h"
#include "daemon_log.h"

#define MAX_WORDS 8

struct parse_ctx {
	struct daemon_config *c;
	int line;
	char *err;
	size_t errlen;
};

static int fail(struct parse_ctx *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parse_ctx *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *const class_names[NR_CLASSES] = {
	[CLASS_PTP] = "ptp", [CLASS_NTP] = "ntp", [CLASS_PEER] = "peer",
};

const char *config_class_name(enum source_class class)
{
	return class < NR_CLASSES ? class_names[class] : "?";
}

void config_defaults(struct daemon_config *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	snprintf(c->device, sizeof(c->device), "/dev/lclk0");
	for (i = 0; i < NR_CLASSES; i++)
		c->class_rank[i] = i;
	c->minpoll_ns = 1000000000LL;
	c->maxpoll_ns = 64000000000LL;
	c->fastpolls = 4;
	c->disturbance_ns = 1000000;
	c->samples = 4;
	c->sample_interval_ns = -1;	/* each source's own: ntp_policy.h */
	c->timeout_ns = 1000000000;
	c->makestep_ns = 0;
	c->makestep_limit = 0;
	c->holdover_ns = 3600 * 1000000000LL;
	c->max_slew_ppt = 500000000;	/* 500 ppm: 1 ms slews out in 2 s */
	c->servo = SERVO_PI;
	c->pi_kp = 0.7;
	c->pi_ki = 0.3;
	snprintf(c->metrics, sizeof(c->metrics), CONFIG_DEFAULT_METRICS);
	snprintf(c->control, sizeof(c->control), CONFIG_DEFAULT_CONTROL);
	snprintf(c->user, sizeof(c->user), CONFIG_DEFAULT_USER);
	c->log_level = LOG_INFO;
}

/* ---- values ------------------------------------------------------------ */

struct unit {
	const char *suffix;
	double scale;
};

static const struct unit duration_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	{ "m", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 },
}, rate_units[] = {
	{ "ppt", 1 }, { "ppb", 1e3 }, { "ppm", 1e6 },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A non-negative number with one of the units; false if not. */
static bool parse_scaled(const char *s, const struct unit *units, size_t nunits,
			 double max, int64_t *out)
{
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	for (i = 0; i < nunits; i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].scale;
		if (v > max)
			return false;
		*out = llround(v);
		return true;
	}
	return false;
}

static int duration(struct parse_ctx *p, const char *what, const char *s,
		    int64_t *out)
{
	if (!parse_scaled(s, duration_units, ARRAY_SIZE(duration_units),
			  (double)LCLK_MAX_BOUND_NS, out))
		return fail(p, "%s: '%s' is not a duration (e.g. 500ms, 16s, 1h)", what, s);
	return 0;
}

static int rate(struct parse_ctx *p, const char *what, const char *s, int64_t *out)
{
	if (!parse_scaled(s, rate_units, ARRAY_SIZE(rate_units),
			  (double)LCLK_MAX_RATE_PPT, out))
		return fail(p, "%s: '%s' is not a rate up to 1000ppm (e.g. 50ppm, 200ppb)",
			    what, s);
	return 0;
}

static int count(struct parse_ctx *p, const char *what, const char *s,
		 long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || end == s || *end || *out < min || *out > max)
		return fail(p, "%s: '%s' is not an integer in [%ld, %ld]", what, s, min, max);
	return 0;
}

static int copy_str(struct parse_ctx *p, const char *what, const char *s,
		    char *dst, size_t len)
{
	if (strlen(s) >= len)
		return fail(p, "%s: '%s' is too long", what, s);
	strcpy(dst, s);
	return 0;
}

/* ---- directives -------------------------------------------------------- */

static int dir_device(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	return copy_str(p, "device", argv[1], p->c->device, sizeof(p->c->device));
}

static int url_class(const char *url, enum source_class *class)
{
	static const struct {
		const char *prefix;
		enum source_class class;
		bool bare;	/* the prefix alone names a source */
	} schemes[] = {
		{ "ntp://", CLASS_NTP, false }, { "ptp://", CLASS_PTP, false },
		{ "phc:", CLASS_PTP, false }, { "ptp4l:", CLASS_PTP, false },
		/* the hypervisor's time, as local as a PHC's: /dev/vmclock0 alone */
		{ "vmclock:", CLASS_PTP, true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(schemes); i++) {
		size_t n = strlen(schemes[i].prefix);

		if (!strncmp(url, schemes[i].prefix, n) && (url[n] || schemes[i].bare)) {
			*class = schemes[i].class;
			return 0;
		}
	}
	return -1;
}

static int add_source(struct parse_ctx *p, const char *what, const char *url,
		      enum source_class class, int argc, char **argv)
{
	struct daemon_config *c = p->c;
	struct config_source *s;
	int i;

	if (c->nsources == CONFIG_MAX_SOURCES)
		return fail(p, "%s: more than %d sources", what, CONFIG_MAX_SOURCES);
	s = &c->sources[c->nsources];
	memset(s, 0, sizeof(*s));
	if (copy_str(p, what, url, s->url, sizeof(s->url)))
		return -1;
	s->class = class;
	s->line = p->line;
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "prefer"))
			return fail(p, "%s: unknown option '%s' (expected 'prefer')", what, argv[i]);
		s->prefer = true;
	}
	for (i = 0; i < (int)c->nsources; i++)
		if (!strcmp(c->sources[i].url, s->url))
			return fail(p, "%s: '%s' already configured on line %d", what,
				    s->url, c->sources[i].line);
	c->nsources++;
	return 0;
}

static int dir_source(struct parse_ctx *p, int argc, char **argv)
{
	enum source_class class;

	if (url_class(argv[1], &class))
		return fail(p, "source: '%s' is not ntp://HOST[:PORT], ptp://IFACE, phc:DEVICE, ptp4l:PATH or vmclock:[PATH]",
			    argv[1]);
	return add_source(p, "source", argv[1], class, argc, argv);
}

/* peer HOST[:PORT]: another host's "lclkctl serve", over NTP. */
static int dir_peer(struct parse_ctx *p, int argc, char **argv)
{
	char url[CONFIG_URL_MAX];

	if (strchr(argv[1], '/') || snprintf(url, sizeof(url), "ntp://%s", argv[1]) >= (int)sizeof(url))
		return fail(p, "peer: '%s' is not HOST[:PORT]", argv[1]);
	return add_source(p, "peer", url, CLASS_PEER, argc, argv);
}

static int dir_preference(struct parse_ctx *p, int argc, char **argv)
{
	bool seen[NR_CLASSES] = {};
	int i, k;

	if (argc != 1 + NR_CLASSES)
		return fail(p, "preference: expected the %d classes ptp, ntp, peer in some order",
			    NR_CLASSES);
	for (i = 1; i < argc; i++) {
		for (k = 0; k < NR_CLASSES; k++)
			if (!strcmp(argv[i], class_names[k]))
				break;
		if (k == NR_CLASSES || seen[k])
			return fail(p, "preference: '%s' is not one of ptp, ntp, peer or is repeated",
				    argv[i]);
		seen[k] = true;
		p->c->class_rank[k] = i - 1;
	}
	return 0;
}

static int dir_poll(struct parse_ctx *p, int argc, char **argv)
{
	struct daemon_config *c = p->c;

	if (argc != 3)
		return fail(p, "poll: expected MIN MAX (e.g. poll 1s 64s)");
	if (duration(p, "poll", argv[1], &c->minpoll_ns) ||
	    duration(p, "poll", argv[2], &c->maxpoll_ns))
		return -1;
	if (c->minpoll_ns < 10000000 || c->maxpoll_ns < c->minpoll_ns ||
	    c->maxpoll_ns > 36 * 3600 * 1000000000LL)
		return fail(p, "poll: need 10ms <= MIN <= MAX <= 36h");
	return 0;
}

static int dir_fastpolls(struct parse_ctx *p, int argc, char **argv)
{
	long n;

	(void)argc;
	if (count(p, "fastpolls", argv[1], 0, 1000, &n))
		return -1;
	p->c->fastpolls = n;
	return 0;
}

static int dir_disturbance(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	return duration(p, "disturbance", argv[1], &p->c->disturbance_ns);
}

static int dir_samples(struct parse_ctx *p, int argc, char **argv)
{
	struct daemon_config *c = p->c;
	long n;

	if (argc > 4)
		return fail(p, "samples: expected N [INTERVAL [TIMEOUT]]");
	if (count(p, "samples", argv[1], 1, 64, &n))
		return -1;
	c->samples = n;
	if (argc > 2 && duration(p, "samples", argv[2], &c->sample_interval_ns))
		return -1;
	if (argc > 3 && duration(p, "samples", argv[3], &c->timeout_ns))
		return -1;
	if (c->timeout_ns == 0)
		return fail(p, "samples: the timeout must be positive");
	return 0;
}

static int dir_makestep(struct parse_ctx *p, int argc, char **argv)
{
	long n;

	if (argc != 3)
		return fail(p, "makestep: expected THRESHOLD LIMIT (e.g. makestep 1s 3; LIMIT -1: always)");
	if (duration(p, "makestep", argv[1], &p->c->makestep_ns) ||
	    count(p, "makestep", argv[2], -1, 1000000, &n))
		return -1;
	p->c->makestep_limit = n;
	return 0;
}

static int yes_no(struct parse_ctx *p, const char *what, const char *s, bool *out)
{
	if (!strcmp(s, "yes"))
		*out = true;
	else if (!strcmp(s, "no"))
		*out = false;
	else
		return fail(p, "%s: expected yes or no, not '%s'", what, s);
	return 0;
}

static int dir_allowbackward(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	return yes_no(p, "allowbackward", argv[1], &p->c->allow_backward);
}

static int dir_holdover(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	return duration(p, "holdover", argv[1], &p->c->holdover_ns);
}

static int dir_maxdrift(struct parse_ctx *p, int argc, char **argv)
{
	int64_t ppt;

	(void)argc;
	if (rate(p, "maxdrift", argv[1], &ppt))
		return -1;
	if (ppt < 1000)
		return fail(p, "maxdrift: at least 1ppb");
	p->c->max_drift_ppb = ppt / 1000;
	return 0;
}

static int dir_maxslew(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	if (rate(p, "maxslew", argv[1], &p->c->max_slew_ppt))
		return -1;
	if (!p->c->max_slew_ppt)
		return fail(p, "maxslew: must be positive");
	return 0;
}

static int dir_servo(struct parse_ctx *p, int argc, char **argv)
{
	double kp, ki;
	char *e1, *e2;

	if (!strcmp(argv[1], "linreg") && argc == 2) {
		p->c->servo = SERVO_LINREG;
		return 0;
	}
	if (strcmp(argv[1], "pi") || (argc != 2 && argc != 4))
		return fail(p, "servo: expected 'pi [KP KI]' or 'linreg'");
	p->c->servo = SERVO_PI;
	if (argc == 2)
		return 0;
	kp = strtod(argv[2], &e1);
	ki = strtod(argv[3], &e2);
	if (*e1 || *e2 || e1 == argv[2] || e2 == argv[3] ||
	    !(kp > 0) || !(ki >= 0) || kp + ki > 1)
		/* More would overshoot: see servo_pi.c. */
		return fail(p, "servo: pi needs KP > 0, KI >= 0 and KP + KI <= 1");
	p->c->pi_kp = kp;
	p->c->pi_ki = ki;
	return 0;
}

static int dir_metrics(struct parse_ctx *p, int argc, char **argv)
{
	const char *colon = strrchr(argv[1], ':');
	long port;

	(void)argc;
	if (!strcmp(argv[1], "off")) {
		p->c->metrics[0] = '\0';
		return 0;
	}
	if (!colon || colon == argv[1] || count(p, "metrics", colon + 1, 1, 65535, &port))
		return fail(p, "metrics: expected ADDR:PORT (e.g. 127.0.0.1:9478, [::1]:9478) or off");
	return copy_str(p, "metrics", argv[1], p->c->metrics, sizeof(p->c->metrics));
}

static int dir_control(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	if (!strcmp(argv[1], "off")) {
		p->c->control[0] = '\0';
		return 0;
	}
	if (argv[1][0] != '/')
		return fail(p, "control: expected an absolute socket path or off");
	/* sun_path holds 108 bytes. */
	if (strlen(argv[1]) >= 108)
		return fail(p, "control: path longer than a UNIX socket address allows");
	return copy_str(p, "control", argv[1], p->c->control, sizeof(p->c->control));
}

static int dir_user(struct parse_ctx *p, int argc, char **argv)
{
	(void)argc;
	return copy_str(p, "user", argv[1], p->c->user, sizeof(p->c->user));
}

static int dir_log(struct parse_ctx *p, int argc, char **argv)
{
	int i, level;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "syslog")) {
			p->c->log_syslog = true;
		} else if (!strcmp(argv[i], "stderr")) {
			p->c->log_syslog = false;
		} else if ((level = log_level_parse(argv[i])) >= 0) {
			p->c->log_level = level;
		} else {
			return fail(p, "log: '%s' is not a level (err, warning, notice, info, debug), stderr or syslog",
				    argv[i]);
		}
	}
	return 0;
}

static const struct directive {
	const char *name;
	int min_args, max_args;	/* words after the name */
	int (*parse)(struct parse_ctx *p, int argc, char **argv);
} directives[] = {
	{ "device",		1, 1, dir_device },
	{ "source",		1, 2, dir_source },
	{ "peer",		1, 2, dir_peer },
	{ "preference",		1, 3, dir_preference },
	{ "poll",		1, 2, dir_poll },
	{ "fastpolls",		1, 1, dir_fastpolls },
	{ "disturbance",	1, 1, dir_disturbance },
	{ "samples",		1, 3, dir_samples },
	{ "makestep",		1, 2, dir_makestep },
	{ "allowbackward",	1, 1, dir_allowbackward },
	{ "holdover",		1, 1, dir_holdover },
	{ "maxdrift",		1, 1, dir_maxdrift },
	{ "maxslew",		1, 1, dir_maxslew },
	{ "servo",		1, 3, dir_servo },
	{ "metrics",		1, 1, dir_metrics },
	{ "control",		1, 1, dir_control },
	{ "log",		1, 2, dir_log },
	{ "user",		1, 1, dir_user },
};

/* Split at blanks, drop the comment. Returns the word count or -1. */
static int split(char *line, char **argv)
{
	char *save, *w;
	int n = 0;

	line[strcspn(line, "#\r\n")] = '\0';
	for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_WORDS)
			return -1;
		argv[n++] = w;
	}
	return n;
}

static int parse_line(struct parse_ctx *p, char *line)
{
	char *argv[MAX_WORDS];
	size_t i;
	int argc = split(line, argv);

	if (argc < 0)
		return fail(p, "too many words");
	if (argc == 0)
		return 0;
	for (i = 0; i < ARRAY_SIZE(directives); i++) {
		const struct directive *d = &directives[i];

		if (strcmp(argv[0], d->name))
			continue;
		if (argc - 1 < d->min_args || argc - 1 > d->max_args)
			return fail(p, "%s: expected %d to %d values, got %d", d->name,
				    d->min_args, d->max_args, argc - 1);
		return d->parse(p, argc, argv);
	}
	return fail(p, "unknown directive '%s'", argv[0]);
}

/* Whole-file checks, after every line was read. */
static int check(struct parse_ctx *p)
{
	const struct daemon_config *c = p->c;

	if (!c->nsources)
		return fail(p, "no 'source' or 'peer' line: nothing to synchronise to");
	if (c->holdover_ns <= c->maxpoll_ns)
		/* Else the clock would report HOLDOVER between two good polls. */
		return fail(p, "holdover: must exceed the slowest poll (%.0fs)", c->maxpoll_ns / 1e9);
	return 0;
}

int config_parse(FILE *f, const char *name, struct daemon_config *c,
		 char *err, size_t errlen)
{
	struct parse_ctx p = { .c = c, .err = err, .errlen = errlen };
	char line[1024], msg[512];

	config_defaults(c);
	p.err = msg;
	p.errlen = sizeof(msg);
	while (fgets(line, sizeof(line), f)) {
		p.line++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%d: line too long", name, p.line);
			return -1;
		}
		if (parse_line(&p, line)) {
			snprintf(err, errlen, "%s:%d: %s", name, p.line, msg);
			return -1;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", name);
		return -1;
	}
	if (check(&p)) {
		snprintf(err, errlen, "%s: %s", name, msg);
		return -1;
	}
	return 0;
}

int config_load(const char *path, struct daemon_config *c, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	ret = config_parse(f, path, c, err, errlen);
	fclose(f);
	return ret;
}
