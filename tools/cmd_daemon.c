// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl daemon: keep a logical clock synchronised. The event loop: the
 * synchronisation itself (daemon.c) wakes it through its runners' pipe and
 * its timers; signals arrive through a signalfd; the clients of the control
 * socket and the metrics endpoint are served in between, never blocking
 * (daemon_clients.h): no client can delay an update or a correction's end.
 */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/daemon_clients.h"
#include "daemon/daemon_ctl.h"
#include "daemon/daemon_log.h"
#include "daemon/metrics_http.h"
#include "lib/cli.h"
#include "lib/priv.h"
#include "sync/source.h"

#define DEFAULT_CONFIG	"/etc/lclk/lclk.conf"

/* -u, --user, if given. */
static const char *user_opt;

enum { FD_SIGNAL, FD_WAKE, FD_CTL, FD_METRICS, FD_CLIENTS };

struct endpoints {
	int ctl, metrics;
	char ctl_path[CONFIG_URL_MAX];
};

static int open_endpoints(struct endpoints *e, const struct daemon_config *c)
{
	char err[256];

	e->ctl = e->metrics = -1;
	snprintf(e->ctl_path, sizeof(e->ctl_path), "%s", c->control);
	if (c->control[0]) {
		e->ctl = ctl_listen(c->control, err, sizeof(err));
		if (e->ctl < 0) {
			log_err("%s", err);
			return -1;
		}
	}
	if (c->metrics[0]) {
		e->metrics = metrics_listen(c->metrics, err, sizeof(err));
		if (e->metrics < 0) {
			log_err("%s", err);
			ctl_close(e->ctl, e->ctl_path);
			e->ctl = -1;
			return -1;
		}
	}
	return 0;
}

static void close_endpoints(struct endpoints *e)
{
	ctl_close(e->ctl, e->ctl_path);
	if (e->metrics >= 0)
		close(e->metrics);
	e->ctl = e->metrics = -1;
}

/*
 * What the daemon keeps once it runs as its user: CAP_SYS_TIME to change
 * the clock's model, and what its sources need to open (source_caps()),
 * again at every reload. The control socket, the metrics port and the
 * device are open by then.
 */
static uint64_t needed_caps(const struct daemon_config *c)
{
	uint64_t caps = PRIV_CAP(CAP_SYS_TIME);
	size_t i;

	for (i = 0; i < c->nsources; i++)
		caps |= source_caps(c->sources[i].url);
	return caps;
}

static int drop_privileges(const struct daemon_config *c)
{
	char note[256], err[256], names[256];
	uint64_t caps = needed_caps(c);

	if (priv_drop(c->user, caps, note, sizeof(note), err, sizeof(err))) {
		log_err("daemon: %s", err);
		return -1;
	}
	if (note[0])
		log_warn("daemon: %s", note);
	caps = priv_permitted();
	log_info("daemon: running as uid %d with %s", (int)getuid(),
		 priv_names(caps, names, sizeof(names)));
	return 0;
}

/* A reload's sources can use only what was kept at start. */
static void check_caps(const struct daemon_config *c, const char *user)
{
	uint64_t have = priv_permitted();
	char names[256];
	size_t i;

	if (user && strcmp(c->user, user))
		log_warn("reload: \"user\" cannot change while running; still %s", user);
	for (i = 0; i < c->nsources; i++) {
		uint64_t miss = source_caps(c->sources[i].url) & ~have;

		if (miss)
			log_err("reload: %s needs %s, which the daemon gave up at start: restart it",
				c->sources[i].url, priv_names(miss, names, sizeof(names)));
	}
}

/*
 * Move one endpoint at a reload: the new one opens first and the old one
 * closes only then, so a new one that cannot open (a path in a directory
 * the daemon's user cannot write, a port it may not bind) leaves the old
 * one working; an old one closed first could not always be opened again
 * after root is dropped. A new metrics address on the old one's port can
 * only open once the old one is closed: then the old one is reopened if
 * the new one fails.
 */
static int move_ctl(struct endpoints *e, const char *path)
{
	char err[256];
	int fd = -1;

	if (path[0]) {
		fd = ctl_listen(path, err, sizeof(err));
		if (fd < 0) {
			log_err("reload: %s; keeping %s", err, e->ctl_path[0] ? e->ctl_path : "it off");
			return -1;
		}
	}
	ctl_close(e->ctl, e->ctl_path);
	e->ctl = fd;
	snprintf(e->ctl_path, sizeof(e->ctl_path), "%s", path);
	return 0;
}

static int move_metrics(struct endpoints *e, const char *addr, const char *old)
{
	char err[256];
	int fd = -1;

	if (addr[0]) {
		fd = metrics_listen(addr, err, sizeof(err));
		if (fd == -EADDRINUSE && e->metrics >= 0) {
			close(e->metrics);
			e->metrics = -1;
			fd = metrics_listen(addr, err, sizeof(err));
			if (fd < 0 && old[0])
				e->metrics = metrics_listen(old, err, sizeof(err));
		}
		if (fd < 0) {
			log_err("reload: %s; metrics %s", err, e->metrics >= 0 ? "kept" : "off");
			return -1;
		}
	}
	if (e->metrics >= 0)
		close(e->metrics);
	e->metrics = fd;
	return 0;
}

/*
 * SIGHUP: a configuration that does not parse is reported and ignored, so
 * a typo never stops a running daemon. An endpoint moves only if the new
 * one opens.
 */
static void reload(struct daemon *d, struct endpoints *e, const char *path)
{
	struct daemon_config c;
	char err[512];

	if (config_load(path, &c, err, sizeof(err))) {
		log_err("reload: %s; keeping the running configuration", err);
		return;
	}
	log_setup(c.log_level, c.log_syslog);
	/* -u outranks the file's "user", then as now. */
	check_caps(&c, user_opt ? NULL : d->cfg.user);
	snprintf(c.user, sizeof(c.user), "%s", d->cfg.user);
	/* Endpoints are bound while no runner thread runs (see ctl_listen()). */
	daemon_stop_sources(d);
	if (strcmp(c.control, d->cfg.control) && move_ctl(e, c.control))
		snprintf(c.control, sizeof(c.control), "%s", d->cfg.control);
	if (strcmp(c.metrics, d->cfg.metrics) && move_metrics(e, c.metrics, d->cfg.metrics))
		snprintf(c.metrics, sizeof(c.metrics), "%s", e->metrics >= 0 ? d->cfg.metrics : "");
	daemon_reload(d, &c);
}

static const struct daemon_report *report_of(void *d)
{
	return daemon_report(d);
}

/* The next thing to do, as a poll() timeout in ms (rounded up). */
static int timeout_ms(const struct daemon *d, const struct clients *cl)
{
	int64_t t = daemon_next_event(d), c = clients_next_deadline(cl);
	int64_t wait = (c < t ? c : t) - daemon_now_ns();

	return wait <= 0 ? 0 : wait > INT32_MAX * 1000000LL ? INT32_MAX :
	       (int)((wait + 999999) / 1000000);
}

static int loop(struct daemon *d, struct endpoints *e, const char *path, int sfd)
{
	struct clients cl;
	int ret;

	clients_init(&cl, report_of, d);
	for (;;) {
		struct pollfd p[FD_CLIENTS + CLIENTS_MAX] = {
			[FD_SIGNAL] = { .fd = sfd, .events = POLLIN },
			[FD_WAKE] = { .fd = d->wake[0], .events = POLLIN },
			/* With every slot taken, newcomers wait in the backlog. */
			[FD_CTL] = { .fd = clients_room(&cl) ? e->ctl : -1, .events = POLLIN },
			[FD_METRICS] = { .fd = clients_room(&cl) ? e->metrics : -1, .events = POLLIN },
		};
		unsigned int n = clients_pollfds(&cl, p + FD_CLIENTS);
		struct signalfd_siginfo si;
		bool reloaded = false;

		if (poll(p, FD_CLIENTS + n, timeout_ms(d, &cl)) < 0 && errno != EINTR) {
			log_err("poll: %s", strerror(errno));
			ret = EXIT_FAIL;
			break;
		}
		if ((p[FD_SIGNAL].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				log_notice("SIGHUP: reloading %s", path);
				reload(d, e, path);
				reloaded = true;	/* the endpoints may have moved */
			} else {
				log_notice("%s: exiting, the clock keeps its model",
					   strsignal(si.ssi_signo));
				ret = EXIT_OK;
				break;
			}
		}
		daemon_run_due(d, daemon_now_ns());
		clients_run(&cl, p + FD_CLIENTS, n, daemon_now_ns());
		if (reloaded)
			continue;
		if (p[FD_CTL].revents & POLLIN)
			clients_accept(&cl, e->ctl, CLIENT_CONTROL, daemon_now_ns());
		if (p[FD_METRICS].revents & POLLIN)
			clients_accept(&cl, e->metrics, CLIENT_METRICS, daemon_now_ns());
	}
	clients_close_all(&cl);
	return ret;
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "config",	required_argument, NULL, 'c' },
		{ "check",	no_argument,	   NULL, 'n' },
		{ "user",	required_argument, NULL, 'u' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_daemon;
	const char *path = DEFAULT_CONFIG, *user = NULL;
	struct daemon_config c;
	struct endpoints e;
	struct daemon *d;
	bool check = false;
	char err[512];
	sigset_t mask;
	int opt, ret = -1, sfd;

	while ((opt = cli_getopt(argc, argv, "c:nu:" CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		if (opt == 'c')
			path = optarg;
		else if (opt == 'n')
			check = true;
		else if (opt == 'u')
			user_opt = user = optarg;
		else
			return cli_usage_error(cmd, "bad option");
	}
	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (config_load(path, &c, err, sizeof(err))) {
		fprintf(stderr, "lclkctl daemon: %s\n", err);
		return EXIT_USAGE;
	}
	if (user) {
		if (strlen(user) >= sizeof(c.user))
			return cli_usage_error(cmd, "--user: '%s' is too long", user);
		snprintf(c.user, sizeof(c.user), "%s", user);
	}
	if (check) {
		printf("%s: OK, %u sources\n", path, (unsigned int)c.nsources);
		return EXIT_OK;
	}
	if (g->verbose)
		c.log_level = LOG_DEBUG;
	log_setup(c.log_level, c.log_syslog);

	/* A client that hangs up must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	/* Signals come through the loop, never in the middle of an update. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d = calloc(1, sizeof(*d));
	if (sfd < 0 || !d) {
		log_err("daemon: %s", strerror(errno));
		return EXIT_FAIL;
	}
	/*
	 * The endpoints first: a daemon already answering on the control
	 * socket is found before anything touches the clock, and they are
	 * bound while no runner thread runs (see ctl_listen()). Runner
	 * threads inherit the signal mask: they never take these signals.
	 */
	if (open_endpoints(&e, &c)) {
		ret = EXIT_FAIL;
		goto out;
	}
	/*
	 * Then the device and its lock; then, with no thread but this one
	 * (capabilities are per thread), the user and capabilities it keeps;
	 * then the sources, opened as they will be at a reload.
	 */
	ret = daemon_init(d, &c);
	if (!ret && drop_privileges(&c))
		ret = EXIT_PERM;
	if (!ret)
		ret = daemon_start(d);
	if (!ret)
		ret = loop(d, &e, path, sfd);
	close_endpoints(&e);
	daemon_fini(d);
out:
	free(d);
	close(sfd);
	return ret;
}

const struct cli_cmd cmd_daemon = {
	.name = "daemon",
	.summary = "keep the logical clock synchronised to its sources (a service)",
	.usage =
	"Usage: lclkctl daemon [-c CONFIG] [-n] [-u USER] [-v]\n"
	"\n"
	"Poll the time sources of CONFIG (default " DEFAULT_CONFIG ", see\n"
	"lclkctl(8) and the example lclk.conf), drop falsetickers, follow the best\n"
	"survivor (PTP over NTP over peers unless \"preference\" says otherwise) and\n"
	"slew the logical clock to it with a servo, publishing the error bound.\n"
	"With no source left the clock holds over: its bound grows at the maximum\n"
	"drift, and the module reports HOLDOVER once \"holdover\" has passed.\n"
	"Runs in the foreground; logs to stderr or syslog (\"log\" directive).\n"
	"\n"
	"  -c, --config PATH  configuration file\n"
	"  -n, --check        parse the configuration, report and exit\n"
	"  -u, --user USER    run as USER once the device and sockets are open\n"
	"                     (default: the configuration's \"user\", lclk)\n"
	"  -v, --verbose      log at debug level\n"
	"\n"
	"Signals: SIGHUP reloads the configuration (a bad one is logged and\n"
	"ignored); SIGTERM and SIGINT exit and leave the clock's model in place.\n"
	"\"lclkctl status\" shows the source table; Prometheus metrics are served\n"
	"at http://127.0.0.1:9478/metrics unless \"metrics\" says otherwise.\n"
	"The device is the configuration's \"device\" (-d is not used). Needs\n"
	"CAP_SYS_TIME, and keeps only that and what its sources need (see\n"
	"lclkctl(8), PRIVILEGES). Exits 2 on a bad configuration, naming file and line.\n"
	"\n"
	"Examples:\n"
	"  lclkctl daemon -c /etc/lclk/lclk.conf\n"
	"  lclkctl daemon -n -c ./lclk.conf\n",
	.run = run,
};
