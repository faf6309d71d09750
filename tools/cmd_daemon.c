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

#define DEFAULT_CONFIG	"/etc/lclk/lclk.conf"

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
 * SIGHUP: a configuration that does not parse is reported and ignored, so
 * a typo never stops a running daemon. Endpoints move only if both new ones
 * open.
 */
static void reload(struct daemon *d, struct endpoints *e, const char *path)
{
	struct daemon_config c;
	struct endpoints ne;
	char err[512];

	if (config_load(path, &c, err, sizeof(err))) {
		log_err("reload: %s; keeping the running configuration", err);
		return;
	}
	log_setup(c.log_level, c.log_syslog);
	/* Endpoints are bound while no runner thread runs (see ctl_listen()). */
	daemon_stop_sources(d);
	if (strcmp(c.control, d->cfg.control) || strcmp(c.metrics, d->cfg.metrics)) {
		close_endpoints(e);
		if (open_endpoints(&ne, &c) == 0) {
			*e = ne;
		} else {
			log_err("reload: keeping the old control and metrics addresses");
			snprintf(c.control, sizeof(c.control), "%s", d->cfg.control);
			snprintf(c.metrics, sizeof(c.metrics), "%s", d->cfg.metrics);
			if (open_endpoints(e, &c))
				log_err("reload: control and metrics are off");
		}
	}
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
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_daemon;
	const char *path = DEFAULT_CONFIG;
	struct daemon_config c;
	struct endpoints e;
	struct daemon *d;
	bool check = false;
	char err[512];
	sigset_t mask;
	int opt, ret = -1, sfd;

	while ((opt = cli_getopt(argc, argv, "c:n" CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		if (opt == 'c')
			path = optarg;
		else if (opt == 'n')
			check = true;
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
	ret = daemon_init(d, &c);
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
	"Usage: lclkctl daemon [-c CONFIG] [-n] [-v]\n"
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
	"  -v, --verbose      log at debug level\n"
	"\n"
	"Signals: SIGHUP reloads the configuration (a bad one is logged and\n"
	"ignored); SIGTERM and SIGINT exit and leave the clock's model in place.\n"
	"\"lclkctl status\" shows the source table; Prometheus metrics are served\n"
	"at http://127.0.0.1:9478/metrics unless \"metrics\" says otherwise.\n"
	"The device is the configuration's \"device\" (-d is not used). Needs\n"
	"CAP_SYS_TIME. Exits 2 on a bad configuration, naming file and line.\n"
	"\n"
	"Examples:\n"
	"  lclkctl daemon -c /etc/lclk/lclk.conf\n"
	"  lclkctl daemon -n -c ./lclk.conf\n",
	.run = run,
};
