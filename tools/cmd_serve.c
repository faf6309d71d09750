// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl serve: an NTP server answering from the logical clock, so one
 * host (rank 0, say) can be the reference of the others when no NTP or PTP
 * server is reachable. Replies say "unsynchronised" whenever lclk is.
 */
#include <errno.h>
#include <getopt.h>
#include <linux/net_tstamp.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_serve.h"
#include "daemon/daemon_ctl.h"
#include "lib/cli.h"
#include "lib/clock.h"
#include "lib/clock_offset.h"
#include "lib/net_tstamp.h"
#include "lib/priv.h"
#include "ntp/ntp_server.h"

#define OPT_RATE	0x100
#define OPT_BURST	0x101
#define OPT_STRATUM	0x102
#define OPT_ALLOW	0x103

/* Who runs serve once the port is bound, as chronyd's -u. */
#define SERVE_DEFAULT_USER	PRIV_DEFAULT_USER
/* Without a daemon to ask: as if following a stratum-1 server. */
#define SERVE_DEFAULT_STRATUM	2

/*
 * Once the port is bound and the device open, no privilege is needed any
 * more: reading the mapped clock, the socket's timestamps and the daemon's
 * control socket (world-connectable) need none. serve becomes user with
 * no capability at all, not even in its bounding set; "root", or a user
 * that does not exist (said on stderr), keeps uid 0 without capabilities.
 */
static int drop_privileges(const char *user)
{
	char note[256], err[256];

	if (priv_drop(user, 0, note, sizeof(note), err, sizeof(err))) {
		fprintf(stderr, "lclkctl serve: %s\n", err);
		return -1;
	}
	if (note[0])
		fprintf(stderr, "lclkctl serve: %s\n", note);
	return 0;
}

static int open_socket(const struct serve_opts *o, char *err, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	int fd, ret;

	ret = getaddrinfo(o->addr, o->port, &hints, &ai);
	if (ret) {
		snprintf(err, len, "%s port %s: %s", o->addr, o->port, gai_strerror(ret));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		ret = -errno;
		snprintf(err, len, "%s port %s: %s", o->addr, o->port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = ret;
	}
	freeaddrinfo(ai);
	return fd;
}

/* log2 of the smallest step seen between two readings of the clock. */
static int8_t clock_precision(const struct target_clock *tc)
{
	int64_t best = INT64_MAX;
	struct lclk_now a, b;
	int i;

	for (i = 0; i < 100; i++) {
		target_now(tc, &a);
		do
			target_now(tc, &b);
		while (b.time_ns == a.time_ns);
		if (b.time_ns - a.time_ns < best)
			best = b.time_ns - a.time_ns;
	}
	return (int8_t)ceil(log2(best * 1e-9));
}

/*
 * The stratum the daemon steering tc's device derives from its selected
 * source: the one thing serve needs that only the daemon knows (time,
 * bound, status, leap and the last update come from the device's page).
 * *stratum stays as it is when the answer is of another device or no
 * source is selected (in holdover the last one stands).
 */
static void daemon_stratum(const struct target_clock *tc, const char *answer, int *stratum)
{
	struct stat ours, theirs;
	char dev[256];
	int s;

	if (sscanf(answer, "%255s %d", dev, &s) == 2 && s >= 1 && s <= 16 &&
	    !stat(dev, &theirs) && !stat(tc->path, &ours) && theirs.st_rdev == ours.st_rdev)
		*stratum = s;
}

/*
 * Ask the daemon, without ever waiting on it: a local user can hold every
 * slot of its control socket (world-connectable), and NTP replies must not
 * stop meanwhile. A query is started when due, read as its answer comes
 * (the loop polls its socket) and given up at CTL_QUERY_TIMEOUT_NS; the
 * next comes refresh_ns after one ends, answered or not.
 */
#define CTL_QUERY_TIMEOUT_NS	5000000000LL

struct stratum_query {
	struct ctl_async q;
	int64_t ask_at;		/* CLOCK_MONOTONIC of the next query */
	int64_t refresh_ns;
};

static void stratum_query_run(struct stratum_query *sq, const struct target_clock *tc,
			      short revents, int *stratum)
{
	int64_t now = monotonic_ns();
	int r;

	if (ctl_async_busy(&sq->q)) {
		r = ctl_async_run(&sq->q, revents, now);
		if (r == 1)
			daemon_stratum(tc, sq->q.answer, stratum);
		if (r)
			sq->ask_at = now + sq->refresh_ns;
	} else if (now >= sq->ask_at &&
		   ctl_async_start(&sq->q, ctl_socket_path(), "stratum", now, CTL_QUERY_TIMEOUT_NS)) {
		sq->ask_at = now + sq->refresh_ns;
	}
}

/* When the loop must wake for the query, INT64_MAX never. */
static int64_t stratum_query_wake(const struct stratum_query *sq, bool asks)
{
	if (!asks)
		return INT64_MAX;
	return ctl_async_busy(&sq->q) ? sq->q.deadline_ns : sq->ask_at;
}

static int64_t last_update_logical(const struct target_clock *tc)
{
	struct lclk_params m;

	if (!tc->logical || lclk_get_model(&tc->lc, &m))
		return 0;
	return m.last_update_ns ? target_from_base(tc, m.last_update_ns) : 0;
}

/* The leap second the clock expects at the end of the day: NTP's indicator. */
static int pending_leap(const struct target_clock *tc)
{
	struct lclk_params m;

	if (!tc->logical)
		return LCLK_LEAP_NONE;
	if (tc->lc.page)
		return __atomic_load_n(&tc->lc.page->params.leap, __ATOMIC_RELAXED);
	return ioctl(tc->lc.fd, LCLK_IOC_GET_MODEL, &m) ? LCLK_LEAP_NONE : m.leap;
}

/*
 * Kernel software timestamps: a request's arrival without our scheduling
 * delay, and each reply's departure, looped back with the reply itself
 * (no OPT_TSONLY) so it is matched by content, for interleaved mode.
 */
static bool enable_timestamps(int fd)
{
	unsigned int flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
			     SOF_TIMESTAMPING_TX_SOFTWARE;

	return !setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags));
}

/*
 * Target time (and CLOCK_MONOTONIC, *base) of a kernel CLOCK_REALTIME
 * stamp rt taken no later than CLOCK_MONOTONIC hi, converted as of its
 * taking: with the REALTIME - MONOTONIC difference in force then, which t
 * tracks across steps (realtime_track.h), not the one of now. A stamp read
 * after a step would be off by the step: a reply's interleaved t3 off by a
 * second when REALTIME is stepped back a second between its departure and
 * the read of the error queue. -ERANGE when it cannot be told which side of
 * a step the stamp is on. On the system clock the stamp is its time.
 */
static int stamp_to_target(const struct target_clock *tc, const struct realtime_track *t,
			   int64_t rt, int64_t hi, int64_t *time, int64_t *base)
{
	int64_t err;

	return target_from_realtime(tc, t, rt, INT64_MIN, hi, time, base, &err);
}

void serve_tx_stamp(struct ntp_xleave *xl, const struct target_clock *tc,
		    const struct realtime_track *t, const uint8_t *frame, size_t len,
		    int64_t rt, int64_t now)
{
	struct ntp_packet rep;
	int64_t time, base;

	if (!rt || len < NTP_HEADER_LEN ||
	    ntp_decode(frame + len - NTP_HEADER_LEN, NTP_HEADER_LEN, &rep) != NTP_OK ||
	    stamp_to_target(tc, t, rt, now, &time, &base))
		return;
	ntp_xleave_stamped(xl, &rep, time);
}

/*
 * Transmit timestamps of our replies. The looped-back data is the frame as
 * the driver saw it; the NTP header is its last 48 bytes.
 */
static void read_tx_stamps(int fd, const struct target_clock *tc,
			   const struct realtime_track *t, struct ntp_xleave *xl)
{
	uint8_t data[2048];
	char control[512];

	for (;;) {
		struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control, .msg_controllen = sizeof(control),
		};
		ssize_t n = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (n < 0)
			return;
		if (!(msg.msg_flags & MSG_TRUNC))
			serve_tx_stamp(xl, tc, t, data, n, net_tstamp(&msg, NET_TSTAMP_SOFTWARE),
				       monotonic_ns());
	}
}

/* What the loop keeps across requests. */
struct serve_state {
	struct ratelimit rl;
	struct ntp_xleave xl;
	struct ntp_server_clock c;
	struct realtime_track rt;	/* converts the kernel's software stamps */
};

/* Read one request and answer it. -1 on an error of the socket. */
static int answer_one(int fd, const struct target_clock *tc, const struct serve_opts *o,
		      struct serve_state *st, int verbose)
{
	uint8_t buf[NTP_MAX_LEN + 4], out[NTP_HEADER_LEN];
	struct sockaddr_storage from;
	char control[512];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct ntp_server_clock *c = &st->c;
	struct ntp_packet req, rep;
	struct lclk_now rx, tx;
	int64_t rt, base, t;
	bool interleaved;
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_DONTWAIT);
	target_now(tc, &rx);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		perror("lclkctl serve: recvmsg");
		return -1;
	}
	rt = net_tstamp(&msg, NET_TSTAMP_SOFTWARE);
	/* Never later than our own reading: that would be a bad conversion. */
	if (rt && !stamp_to_target(tc, &st->rt, rt, rx.base_ns, &t, &base) && t <= rx.time_ns) {
		rx.time_ns = t;
		rx.base_ns = base;
	}
	if (!ntp_allow_match(&o->allow, (struct sockaddr *)&from) ||
	    !ntp_server_request(buf, n, &req) ||
	    !ratelimit_allow(&st->rl, (struct sockaddr *)&from, rx.base_ns))
		return 0;
	c->receive_ns = rx.time_ns;
	c->reference_ns = last_update_logical(tc);
	target_now(tc, &tx);
	c->transmit_ns = tx.time_ns;
	c->status = tx.status;
	c->bound_ns = tx.bound_ns;
	c->leap = pending_leap(tc);
	ntp_server_reply(&req, c, &rep);
	interleaved = ntp_xleave_reply(&st->xl, &req, &rep);
	ntp_encode(&rep, out);
	if (sendto(fd, out, sizeof(out), 0, (struct sockaddr *)&from, msg.msg_namelen) < 0 &&
	    verbose)
		perror("lclkctl serve: sendto");
	if (verbose) {
		char host[64] = "?";

		getnameinfo((struct sockaddr *)&from, msg.msg_namelen, host, sizeof(host),
			    NULL, 0, NI_NUMERICHOST);
		fprintf(stderr, "lclkctl serve: %s: leap %u stratum %u%s, %llu dropped by the rate limit\n",
			host, rep.leap, rep.stratum, interleaved ? " interleaved" : "",
			(unsigned long long)st->rl.dropped);
	}
	return 0;
}

int serve_loop(int fd, const struct target_clock *tc, const struct serve_opts *o,
	       int verbose, const volatile int *stop)
{
	struct serve_state *st = calloc(1, sizeof(*st));
	struct stratum_query sq = {
		.ask_at = monotonic_ns(),	/* at once, and every refresh_ns */
		.refresh_ns = o->stratum_refresh_ns ? o->stratum_refresh_ns : STRATUM_REFRESH_NS,
	};
	bool asks = !o->stratum && tc->logical;
	int ret = EXIT_FAIL;

	ctl_async_init(&sq.q);
	if (!st)
		return EXIT_FAIL;
	st->c.stratum = o->stratum ? o->stratum : SERVE_DEFAULT_STRATUM;
	if (!enable_timestamps(fd))
		fprintf(stderr, "lclkctl serve: no kernel timestamps (%s): basic mode, user-space times\n",
			strerror(errno));
	ratelimit_init(&st->rl, o->rate, o->burst);
	st->c.precision = clock_precision(tc);
	if (realtime_track_start(&st->rt)) {
		perror("lclkctl serve: CLOCK_REALTIME");
		goto out;
	}
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = sq.q.fd, .events = POLLIN },
		};
		int64_t wake = stratum_query_wake(&sq, asks), now = monotonic_ns();

		if (poll(pfd, ctl_async_busy(&sq.q) ? 2 : 1,
			 wake == INT64_MAX ? -1 : timeout_ms(wake - now)) < 0) {
			if (errno == EINTR)
				continue;
			perror("lclkctl serve: poll");
			goto out;
		}
		if (stop && *stop) {
			ret = EXIT_OK;
			goto out;
		}
		/* The difference now, for the stamps of what was read meanwhile. */
		if (pfd[0].revents && realtime_track_measure(&st->rt)) {
			perror("lclkctl serve: CLOCK_REALTIME");
			goto out;
		}
		if (pfd[0].revents & POLLERR)
			read_tx_stamps(fd, tc, &st->rt, &st->xl);
		if ((pfd[0].revents & POLLIN) && answer_one(fd, tc, o, st, verbose))
			goto out;
		/* After the reply: asking never delays one. */
		if (asks)
			stratum_query_run(&sq, tc, ctl_async_busy(&sq.q) ? pfd[1].revents : 0,
					  &st->c.stratum);
	}
out:
	ctl_async_cancel(&sq.q);
	free(st);
	return ret;
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "address",	required_argument, NULL, 'a' },
		{ "port",	required_argument, NULL, 'p' },
		{ "rate",	required_argument, NULL, OPT_RATE },
		{ "burst",	required_argument, NULL, OPT_BURST },
		{ "stratum",	required_argument, NULL, OPT_STRATUM },
		{ "allow",	required_argument, NULL, OPT_ALLOW },
		{ "user",	required_argument, NULL, 'u' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_serve;
	struct serve_opts o = { .addr = "0.0.0.0", .port = "123", .rate = 2, .burst = 8,
				.user = SERVE_DEFAULT_USER };
	struct target_clock tc;
	char err[256];
	long long v;
	int opt, ret = -1, fd;

	while ((opt = cli_getopt(argc, argv, "a:p:u:" CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		switch (opt) {
		case 'a':
			o.addr = optarg;
			break;
		case 'p':
			if (!cli_parse_s64(cmd, "--port", optarg, &v))
				return EXIT_USAGE;
			if (v < 1 || v > 65535)
				return cli_usage_error(cmd, "--port: %lld is not a port", v);
			o.port = optarg;
			break;
		case OPT_RATE:
		case OPT_BURST:
			if (!cli_parse_double(cmd, opt == OPT_RATE ? "--rate" : "--burst", optarg,
					      opt == OPT_RATE ? &o.rate : &o.burst))
				return EXIT_USAGE;
			break;
		case OPT_STRATUM:
			if (!cli_parse_s64(cmd, "--stratum", optarg, &v))
				return EXIT_USAGE;
			if (v < 1 || v > NTP_MAX_STRATUM)
				return cli_usage_error(cmd, "--stratum: %lld is not in 1..15", v);
			o.stratum = v;
			break;
		case OPT_ALLOW:
			if (ntp_allow_add(&o.allow, optarg))
				return cli_usage_error(cmd, "--allow %s: %s", optarg,
						       o.allow.n == NTP_ALLOW_MAX ? "too many networks" :
						       "expected ADDR, ADDR/PREFIX or all");
			break;
		case 'u':
			o.user = optarg;
			break;
		default:
			return cli_usage_error(cmd, "bad option");
		}
	}
	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!(o.rate > 0) || o.burst < 1)
		return cli_usage_error(cmd, "--rate must be positive and --burst at least 1");
	/* As chronyd, no one is served unless allowed; this host itself is by default. */
	if (!o.allow.n && (ntp_allow_add(&o.allow, "127.0.0.0/8") ||
			   ntp_allow_add(&o.allow, "::1")))
		return EXIT_FAIL;

	ret = target_open(&tc, g->device, false);
	if (ret) {
		fprintf(stderr, "lclkctl serve: %s: %s\n", g->device, strerror(-ret));
		return ret == -EACCES || ret == -EPERM ? EXIT_PERM : EXIT_NODEV;
	}
	if (!tc.logical)
		fprintf(stderr, "lclkctl serve: no %s: every reply says unsynchronised\n",
			g->device);
	fd = open_socket(&o, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "lclkctl serve: %s\n", err);
		target_close(&tc);
		return fd == -EACCES || fd == -EPERM ? EXIT_PERM : EXIT_FAIL;
	}
	if (drop_privileges(o.user)) {
		close(fd);
		target_close(&tc);
		return EXIT_PERM;
	}
	ret = serve_loop(fd, &tc, &o, g->verbose, NULL);
	close(fd);
	target_close(&tc);
	return ret;
}

const struct cli_cmd cmd_serve = {
	.name = "serve",
	.summary = "answer NTP requests from the logical clock",
	.usage =
	"Usage: lclkctl serve [-a ADDR] [-p PORT] [--allow NET]... [-u USER] [--rate N]\n"
	"                     [--burst N] [--stratum N]\n"
	"\n"
	"Answer NTP client requests (RFC 5905 mode 4) with the logical time of\n"
	"the device, so other hosts can use this one as their reference (as an\n"
	"ntp:// source or a \"peer\" of their daemon, or with chronyd/sntp).\n"
	"While lclk is unsynchronised (or without the module) every reply has\n"
	"leap 3 and stratum 16, which clients ignore; otherwise the root\n"
	"dispersion is lclk's error bound, so a client's root distance covers it.\n"
	"Requests are stamped by the kernel as they arrive, and replies as they\n"
	"leave: a client asking in interleaved mode (lclkctl; chronyd with\n"
	"xleave) gets the real departure time of its previous reply.\n"
	"Other modes and junk get no answer; only clients in an --allow network\n"
	"are answered (as chronyd's \"allow\"; without one, only this host, over\n"
	"loopback); each client address may send --rate requests per second on\n"
	"average, --burst at once (more are dropped). Started as root, serve runs\n"
	"as --user once its port is bound and the device open. Runs in the\n"
	"foreground until killed.\n"
	"\n"
	"  -a, --address ADDR  numeric IPv4 or IPv6 address to bind (default 0.0.0.0)\n"
	"  -p, --port PORT     UDP port (default 123, which needs root)\n"
	"      --allow NET     serve clients in NET: ADDR, ADDR/PREFIX or \"all\";\n"
	"                      repeatable, up to 32 (default 127.0.0.0/8 and ::1)\n"
	"  -u, --user USER     run as USER after binding, with no capability\n"
	"                      (default " SERVE_DEFAULT_USER "; \"root\" or a missing user:\n"
	"                      uid 0, still without capabilities)\n"
	"      --rate N        requests per second per client (default 2)\n"
	"      --burst N       requests at once per client (default 8)\n"
	"      --stratum N     stratum announced while synchronised (default: the\n"
	"                      daemon's selected source's plus one, asked every\n"
	"                      10 s on its control socket, $LCLK_CONTROL or\n"
	"                      /run/lclk/lclkd.sock; 2 without a daemon)\n"
	"\n"
	"Examples:\n"
	"  lclkctl serve --allow 10.0.0.0/8 --allow fd00::/8\n"
	"  lclkctl serve -a 127.0.0.1 -p 11123 -v\n",
	.run = run,
};
