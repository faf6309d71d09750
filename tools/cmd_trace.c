// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl trace: where collective-communication time goes. The probes in
 * bpf/trace.bpf.c count the latency of the calls the libraries block or
 * spin in into in-kernel histograms, which this reads every interval; calls
 * above a threshold stream through a ring buffer and are stamped in logical
 * time, so that traces taken on many hosts line up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/trace_merge.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "perfetto/perfetto.h"
#include "trace/trace_probe.h"
#include "trace/trace_record.h"
#include "trace/trace_report.h"
#include "trace/trace_sys.h"
#include "lclk.h"

#define NSEC_PER_MSEC	1000000LL
/*
 * Without --interval or --duration the loop still wakes up this often, and
 * moves exited processes' series out of the kernel's map.
 */
#define IDLE_POLL_MS	1000

static const char usage[] =
"Usage: lclkctl trace [--pid PID | --comm NAME | --cgroup PATH]... [OPTIONS]\n"
"       lclkctl trace merge HOST.pftrace... [-o OUT.pftrace] (see merge --help)\n"
"\n"
"Time the system calls collective-communication libraries block or spin in\n"
"(NCCL sockets, Gloo, Open MPI TCP): sendto recvfrom sendmsg recvmsg sendmmsg\n"
"recvmmsg, read write readv writev on sockets, poll ppoll select pselect6,\n"
"epoll_wait epoll_pwait epoll_pwait2, futex waits, futex_waitv and ioctl (by\n"
"device: /dev/nvidia*, /dev/infiniband/*, other). Per process, call and\n"
"outcome (data, zero, eagain, error, intr): log2 latency histograms in the\n"
"kernel, calls, blocked time, EAGAIN share and bytes moved. Calls slower\n"
"than the threshold are outliers, stamped in logical time: CLOCK_MONOTONIC\n"
"through the model of the lclk device (-d), or plain CLOCK_MONOTONIC, with a\n"
"warning, when there is no device. A call the kernel restarts after a stop\n"
"or a signal is one call from its first entry to its last exit, the time of\n"
"a handler's own calls included (so is a call a signal handler interrupted,\n"
"with EINTR, and that the program makes again at once); a futex wait whose\n"
"word had changed (EAGAIN) is zero. A\n"
"thread that busy-polls waits in a run of empty calls (poll, epoll, select\n"
"finding nothing, recv/read -EAGAIN): the run, up to the call that gets data,\n"
"is one outlier, with the count of its empty calls (see --spin-gap).\n"
"\n"
"Filters (combined: a process must pass all; none: every process):\n"
"      --pid PID         all threads of process PID\n"
"      --comm NAME       processes whose command name is NAME (15 chars max)\n"
"      --cgroup PATH     processes in cgroup v2 directory PATH or below it\n"
"Options:\n"
"      --interval DUR    print (and write --prom-out) every DUR; default: once\n"
"                        at the end\n"
"      --duration DUR    stop after DUR; default: at SIGINT or SIGTERM\n"
"      --threshold DUR   outliers are calls of at least DUR (default 1ms)\n"
"      --spin-gap DUR    a busy-polling thread that runs for over DUR between\n"
"                        two empty calls (or sleeps) ends its wait (default\n"
"                        1ms; more where a CPU may vanish under the thread, as\n"
"                        a vCPU of an overcommitted host does)\n"
"      --trace-out FILE  write outliers as a Perfetto trace (protobuf), one\n"
"                        track per thread, in the trace's clock, each with\n"
"                        its bound; see lclkctl trace merge for many hosts\n"
"      --messages        with --trace-out: also every traced call that moved\n"
"                        bytes over TCP, with its connection and sequence\n"
"                        range, which trace merge matches across hosts;\n"
"                        needs fentry (5.12+). Records the ring buffer\n"
"                        cannot take are counted as lost\n"
"      --prom-out FILE   node_exporter textfile: histograms, bytes, outliers\n"
"                        and losses since the start, replaced atomically\n"
"      --json            one JSON object per report (and per outlier with -v)\n"
"      --attach MODE     fentry: on the traced syscalls only (x86_64, Linux\n"
"                        5.12+); tp_btf: on raw_syscalls, which slows every\n"
"                        syscall of every process by ~100 ns while tracing;\n"
"                        auto (default): fentry where the kernel allows it\n"
"  -v, --verbose         print every outlier; -vv adds libbpf's messages\n"
"  -d, --device DEV      lclk instance giving logical time (/dev/lclk0)\n"
"\n"
"Needs Linux 5.8 or later with BTF (/sys/kernel/btf/vmlinux) and CAP_BPF\n"
"with CAP_PERFMON, or CAP_SYS_ADMIN. The first line on stderr names the\n"
"attach mode. Before 5.12 the kernel may free an fexit trampoline under a\n"
"thread sleeping in it when tracing stops, so auto takes tp_btf there and\n"
"--attach fentry is refused. Calls through the 32-bit entry (ia32 processes,\n"
"int $0x80) are not traced.\n"
"Exit status: 0 ok, 1 failure (no BTF, old kernel, attach mode not\n"
"available, load error, output error), 2 bad command line (also: unknown pid, missing cgroup), 3 missing\n"
"capabilities.\n"
"\n"
"Examples:\n"
"  lclkctl trace --comm python3 --interval 10s\n"
"  lclkctl trace --pid 4242 --threshold 200us --trace-out rank0.pftrace\n"
"  lclkctl trace --cgroup /sys/fs/cgroup/job17 --interval 15s \\\n"
"          --prom-out /var/lib/node_exporter/textfile/lclk_trace.prom\n"
"  lclkctl trace merge host*.pftrace -o all.pftrace   # then ui.perfetto.dev\n";

struct trace_run {
	const struct cli_global *g;
	struct lclk_clock clock;
	bool logical;
	int clock_err;		/* lclk_open()'s, warned of once tracing */
	struct trace_clock tc;	/* the one of the run: it keeps the vmclock's marker */
	struct perfetto *pf;
	const char *trace_out;
	struct json json;
	uint64_t outliers, period_outliers;
	uint64_t messages;	/* message records */
	uint64_t bad_records;	/* of an unknown type, or short */
	int out_err;		/* first --trace-out error, -errno */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The trace clock at a CLOCK_MONOTONIC time read on cpu (< 0: unknown). */
static int64_t trace_time(struct trace_run *r, int64_t base_ns, int cpu)
{
	return trace_clock_time(&r->tc, base_ns, cpu, NULL);
}

static void print_outlier(struct trace_run *r, const struct trace_outlier *e,
			  const struct trace_span *t)
{
	struct json *j = &r->json;

	if (!r->g->json) {
		printf("OUTLIER %lld.%09lld %u/%u %-16s %s%s%s %s fd=%d bytes=%llu ret=%lld %.3f ms",
		       (long long)(t->start / 1000000000), (long long)(t->start % 1000000000),
		       e->pid, e->tid, e->comm, trace_sys_name(e->sys),
		       e->dev ? ":" : "", trace_dev_name(e->dev),
		       trace_outcome_name(e->outcome), e->fd,
		       (unsigned long long)e->bytes, (long long)e->ret,
		       e->latency_ns / 1e6);
		if (e->empty_calls)
			printf(" after %u empty calls", e->empty_calls);
		putchar('\n');
		return;
	}
	json_init(j, stdout);	/* one document per line */
	json_obj_begin(j, NULL);
	json_str(j, "type", "outlier");
	json_int(j, "start_ns", t->start);
	json_int(j, "end_ns", t->end);
	json_int(j, "bound_start_ns", t->bound_start);
	json_int(j, "bound_end_ns", t->bound_end);
	json_uint(j, "latency_ns", e->latency_ns);
	json_uint(j, "pid", e->pid);
	json_uint(j, "tid", e->tid);
	json_str(j, "comm", e->comm);
	json_str(j, "syscall", trace_sys_name(e->sys));
	json_str(j, "outcome", trace_outcome_name(e->outcome));
	if (e->dev)
		json_str(j, "device", trace_dev_name(e->dev));
	json_int(j, "fd", e->fd);
	json_uint(j, "bytes", e->bytes);
	json_int(j, "ret", e->ret);
	json_uint(j, "empty_calls", e->empty_calls);
	json_uint(j, "cpu", e->cpu);
	json_uint(j, "end_cpu", e->end_cpu);
	json_obj_end(j);
	json_end(j);
}

/*
 * The bound at each end goes with the slice (bound_begin_ns, bound_end_ns,
 * as the Python recorder names them): lclkctl trace merge turns them into
 * each event's [earliest, latest] window.
 */
static int write_slice(struct trace_run *r, const struct trace_outlier *e,
		       const struct trace_span *t)
{
	struct perfetto_arg args[] = {
		{ .name = "outcome", .str = trace_outcome_name(e->outcome) },
		{ .name = "fd", .val = e->fd },
		{ .name = "bytes", .val = (int64_t)e->bytes },
		{ .name = "ret", .val = e->ret },
		{ .name = "bound_begin_ns", .val = t->bound_start },
		{ .name = "bound_end_ns", .val = t->bound_end },
		{ .name = "empty_calls", .val = e->empty_calls },
		{ .name = "device", .str = trace_dev_name(e->dev) },
	};
	struct perfetto_slice s = {
		.pid = e->pid,
		.tid = e->tid,
		.thread_name = e->comm,
		.name = trace_sys_name(e->sys),
		.start_ns = t->start,
		.end_ns = t->end,
		.args = args,
		.nargs = e->dev ? 8 : 7,
	};

	return perfetto_slice(r->pf, &s);
}

/* "10.0.0.1:5000", "[fd00::1]:5000"; IPv4-mapped addresses as IPv4, as the peer may see them. */
static void format_endpoint(char *buf, size_t len, unsigned int family,
			    const __u8 addr[16], unsigned int port)
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	char ip[INET6_ADDRSTRLEN] = "?";

	if (family == AF_INET6 && !memcmp(addr, v4mapped, sizeof(v4mapped))) {
		inet_ntop(AF_INET, addr + 12, ip, sizeof(ip));
		family = AF_INET;
	} else {
		inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, ip, sizeof(ip));
	}
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

/*
 * A message record: a slice from entry to exit on its thread's track, its
 * source and destination the direction of the bytes (the same strings on
 * the other host's record of them).
 */
static void on_message(struct trace_run *r, const struct trace_msg *m)
{
	char local[MSG_ENDPOINT_MAX], remote[MSG_ENDPOINT_MAX];
	struct trace_span t;
	struct perfetto_arg args[] = {
		{ .name = "src", .str = m->send ? local : remote },
		{ .name = "dst", .str = m->send ? remote : local },
		{ .name = "seq", .val = m->seq },
		{ .name = "len", .val = m->len },
		{ .name = "bound_begin_ns", .val = 0 },
		{ .name = "bound_end_ns", .val = 0 },
	};
	struct perfetto_slice s = {
		.pid = m->pid,
		.tid = m->tid,
		.thread_name = m->comm,
		.category = MSG_CATEGORY,
		.name = m->send ? MSG_SEND : MSG_RECV,
		.args = args,
		.nargs = 6,
	};
	int err;

	r->messages++;
	if (!r->pf || r->out_err)
		return;
	format_endpoint(local, sizeof(local), m->family, m->laddr, m->lport);
	format_endpoint(remote, sizeof(remote), m->family, m->raddr, m->rport);
	trace_msg_span(&r->tc, m, &t);
	s.start_ns = t.start;
	s.end_ns = t.end;
	args[4].val = t.bound_start;
	args[5].val = t.bound_end;
	err = perfetto_slice(r->pf, &s);
	if (err) {
		r->out_err = err;
		fprintf(stderr, "lclkctl trace: %s: %s\n", r->trace_out, strerror(-err));
	}
}

static void on_outlier(struct trace_run *r, const struct trace_outlier *e)
{
	struct trace_span t;
	int err;

	trace_outlier_span(&r->tc, e, &t);
	r->outliers++;
	r->period_outliers++;
	if (r->g->verbose)
		print_outlier(r, e, &t);
	if (r->pf && !r->out_err) {
		err = write_slice(r, e, &t);
		if (err) {
			r->out_err = err;
			fprintf(stderr, "lclkctl trace: %s: %s\n", r->trace_out,
				strerror(-err));
		}
	}
}

/* A ring-buffer record, by its type; an invalid one is counted, not used. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct trace_run *r = ctx;
	union trace_record rec;

	switch (trace_record_decode(data, size, &rec)) {
	case TRACE_REC_OUTLIER:
		on_outlier(r, &rec.outlier);
		break;
	case TRACE_REC_MSG:
		on_message(r, &rec.msg);
		break;
	default:
		r->bad_records++;
		break;
	}
	return 0;
}

struct trace_opts {
	struct trace_filter filter;
	int64_t interval_ns, duration_ns;
	const char *trace_out, *prom_out;
};

static int parse_opts(int argc, char **argv, struct cli_global *g,
		      struct trace_opts *o)
{
	enum { O_PID = 0x100, O_COMM, O_CGROUP, O_INTERVAL, O_DURATION,
	       O_THRESHOLD, O_TRACE_OUT, O_PROM_OUT, O_ATTACH, O_MESSAGES, O_SPIN_GAP };
	static const struct option opts[] = {
		{ "pid",	required_argument, NULL, O_PID },
		{ "comm",	required_argument, NULL, O_COMM },
		{ "cgroup",	required_argument, NULL, O_CGROUP },
		{ "interval",	required_argument, NULL, O_INTERVAL },
		{ "duration",	required_argument, NULL, O_DURATION },
		{ "threshold",	required_argument, NULL, O_THRESHOLD },
		{ "spin-gap",	required_argument, NULL, O_SPIN_GAP },
		{ "trace-out",	required_argument, NULL, O_TRACE_OUT },
		{ "prom-out",	required_argument, NULL, O_PROM_OUT },
		{ "attach",	required_argument, NULL, O_ATTACH },
		{ "messages",	no_argument,	   NULL, O_MESSAGES },
		CLI_COMMON_LONGOPTS,
		{}
	};
	long long v;
	int opt, code = -1;

	o->filter.threshold_ns = TRACE_DEFAULT_THRESHOLD_NS;
	o->filter.spin_gap_ns = TRACE_SPIN_GAP_NS;
	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, &cmd_trace, g, &code)) != -1) {
		switch (opt) {
		case O_PID:
			if (!cli_parse_s64(&cmd_trace, "--pid", optarg, &v))
				return EXIT_USAGE;
			if (v <= 0 || v > INT32_MAX)
				return cli_usage_error(&cmd_trace, "--pid: %lld is not a pid", v);
			o->filter.pid = v;
			break;
		case O_COMM:
			o->filter.comm = optarg;
			break;
		case O_CGROUP:
			o->filter.cgroup = optarg;
			break;
		case O_INTERVAL:
		case O_DURATION:
		case O_THRESHOLD:
		case O_SPIN_GAP:
			if (!cli_parse_duration_ns(&cmd_trace, cli_opt_name(opts, opt), optarg, &v))
				return EXIT_USAGE;
			if (v <= 0 || (opt == O_INTERVAL && v < NSEC_PER_MSEC))
				return cli_usage_error(&cmd_trace, "%s: '%s' is too short",
						       cli_opt_name(opts, opt), optarg);
			if (opt == O_INTERVAL)
				o->interval_ns = v;
			else if (opt == O_DURATION)
				o->duration_ns = v;
			else if (opt == O_SPIN_GAP)
				o->filter.spin_gap_ns = v;
			else
				o->filter.threshold_ns = v;
			break;
		case O_TRACE_OUT:
			o->trace_out = optarg;
			break;
		case O_PROM_OUT:
			o->prom_out = optarg;
			break;
		case O_MESSAGES:
			o->filter.messages = true;
			break;
		case O_ATTACH:
			if (!strcmp(optarg, "fentry"))
				o->filter.attach = TRACE_ATTACH_FENTRY;
			else if (!strcmp(optarg, "tp_btf"))
				o->filter.attach = TRACE_ATTACH_TP_BTF;
			else if (!strcmp(optarg, "auto"))
				o->filter.attach = TRACE_ATTACH_AUTO;
			else
				return cli_usage_error(&cmd_trace,
						       "--attach: '%s' is not fentry, tp_btf or auto",
						       optarg);
			break;
		}
	}
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage_error(&cmd_trace, "unexpected argument '%s'", argv[optind]);
	if (o->filter.messages && !o->trace_out)
		return cli_usage_error(&cmd_trace, "--messages: the records go to --trace-out FILE");
	return -1;
}

/*
 * Before the probes start, so that the trace clock has read the vmclock's
 * marker before the first stamp (trace_clock_init()); the warning waits
 * for warn_clock(), after the probes' own messages, as before.
 */
static void open_clock(struct trace_run *r, const char *device)
{
	r->clock_err = lclk_open(&r->clock, device);
	r->logical = !r->clock_err;
	trace_clock_init(&r->tc, &r->clock, r->logical);
}

static void warn_clock(const struct trace_run *r, const char *device)
{
	if (r->clock_err)
		fprintf(stderr,
			"lclkctl trace: warning: %s: %s; outlier times are CLOCK_MONOTONIC, not logical time\n",
			device, strerror(-r->clock_err));
}

static int64_t monotonic_ns(void)
{
	return lclk_monotonic_ns();
}

/* Report the period since *prev and make the current counts the new *prev. */
static int report(struct trace_run *r, struct trace_probe *tp,
		  const struct trace_opts *o, struct trace_snapshot *prev,
		  int64_t length_ns)
{
	struct trace_snapshot cur, delta;
	struct trace_period per = {
		.length_ns = length_ns,
		.clock = r->logical ? "logical" : "monotonic",
		.outliers = r->period_outliers,
	};
	int err;

	err = trace_probe_read(tp, &cur);
	if (err) {
		fprintf(stderr, "lclkctl trace: reading the histograms: %s\n", strerror(-err));
		return EXIT_FAIL;
	}
	err = trace_snapshot_delta(&cur, prev, &delta);
	if (err) {
		trace_snapshot_free(&cur);
		fprintf(stderr, "lclkctl trace: %s\n", strerror(-err));
		return EXIT_FAIL;
	}
	per.end_ns = trace_time(r, monotonic_ns(), -1);
	if (r->g->json) {
		json_init(&r->json, stdout);
		trace_report_json(&r->json, &delta, &per);
	}
	else
		trace_report_text(stdout, &delta, &per);
	fflush(stdout);
	trace_report_warnings(stderr, &delta);
	r->period_outliers = 0;
	trace_snapshot_free(&delta);
	if (o->prom_out) {
		err = trace_report_prom(o->prom_out, &cur, r->outliers);
		if (err) {
			fprintf(stderr, "lclkctl trace: %s: %s\n", o->prom_out, strerror(-err));
			trace_snapshot_free(&cur);
			return EXIT_FAIL;
		}
	}
	trace_snapshot_free(prev);
	*prev = cur;
	return EXIT_OK;
}

static int trace_loop(struct trace_run *r, struct trace_probe *tp,
		      const struct trace_opts *o)
{
	int64_t start = monotonic_ns(), last = start, now, wake;
	int64_t next = o->interval_ns ? start + o->interval_ns : INT64_MAX;
	int64_t end = o->duration_ns ? start + o->duration_ns : INT64_MAX;
	int64_t next_reap = start + IDLE_POLL_MS * NSEC_PER_MSEC;
	unsigned int reap_warned = 0;
	struct trace_snapshot prev = { .n = 0 };
	int code = EXIT_OK, err, timeout;

	while (!stop) {
		now = monotonic_ns();
		wake = next < end ? next : end;
		timeout = wake - now > IDLE_POLL_MS * NSEC_PER_MSEC ? IDLE_POLL_MS :
			  wake > now ? (wake - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC : 0;
		err = trace_probe_poll(tp, timeout);
		if (err && err != -EINTR) {
			fprintf(stderr, "lclkctl trace: ring buffer: %s\n", strerror(-err));
			code = EXIT_FAIL;
			break;
		}
		now = monotonic_ns();
		if (now >= next_reap) {
			/* Losing this only costs kernel memory: go on. */
			err = trace_probe_reap(tp);
			if (err && !reap_warned++)
				fprintf(stderr, "lclkctl trace: warning: moving exited processes' counts: %s\n",
					strerror(-err));
			next_reap = now + IDLE_POLL_MS * NSEC_PER_MSEC;
		}
		if (now >= next) {
			code = report(r, tp, o, &prev, now - last);
			if (code)
				break;
			last = now;
			next += o->interval_ns;
		}
		if (now >= end)
			break;
	}
	if (!code) {
		/* What is still in the ring buffer belongs to the last period. */
		trace_probe_poll(tp, 0);
		now = monotonic_ns();
		if (!o->interval_ns || now > last)
			code = report(r, tp, o, &prev, now - last);
	}
	trace_snapshot_free(&prev);
	return code;
}

/* The line tests and scripts wait for: what is traced, and how. */
static void describe_probe(const struct trace_probe *tp, const struct trace_filter *f)
{
	char how[64];

	if (tp->mode == TRACE_ATTACH_FENTRY)
		snprintf(how, sizeof(how), "fentry/fexit on %u syscalls", tp->nsyscalls);
	else
		snprintf(how, sizeof(how), "tp_btf on raw_syscalls");
	if (tp->why[0])
		fprintf(stderr, "lclkctl trace: not using fentry: %s\n", tp->why);
	fprintf(stderr, "Tracing %s with %s, starts in %s (threshold %.3f ms). Hit Ctrl-C to end.\n",
		f->pid || f->comm || f->cgroup ? "the selected processes" : "all processes",
		how, tp->task_storage ? "task storage" : "a hash",
		f->threshold_ns / 1e6);
}

static int run_trace(int argc, char **argv, struct cli_global *g)
{
	struct trace_opts o = { .interval_ns = 0 };
	struct trace_run r = { .g = g };
	struct sigaction sa = { .sa_handler = on_signal };
	struct trace_probe tp;
	char host[256] = "localhost";
	int code, err;

	if (argc > 1 && !strcmp(argv[1], "merge"))
		return cmd_trace_merge_run(argc - 1, argv + 1, g);
	code = parse_opts(argc, argv, g, &o);
	if (code >= 0)
		return code;

	open_clock(&r, g->device);
	code = trace_probe_start(&tp, &o.filter, on_record, &r, g->verbose > 1 ? 2 : 0);
	if (code) {
		if (r.logical)
			lclk_close(&r.clock);
		return code;
	}
	warn_clock(&r, g->device);
	if (o.trace_out) {
		gethostname(host, sizeof(host) - 1);
		r.trace_out = o.trace_out;
		struct perfetto_clock clock = {
			.logical = r.logical,
			.now_ns = trace_time(&r, monotonic_ns(), -1),
		};

		r.pf = perfetto_open(o.trace_out, host, &clock);
		if (!r.pf) {
			fprintf(stderr, "lclkctl trace: %s: %s\n", o.trace_out, strerror(errno));
			code = EXIT_FAIL;
			goto out;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	describe_probe(&tp, &o.filter);

	code = trace_loop(&r, &tp, &o);
	if (o.filter.messages)
		fprintf(stderr, "lclkctl trace: %llu message records\n",
			(unsigned long long)r.messages);
	if (r.bad_records)
		fprintf(stderr, "lclkctl trace: warning: %llu ring-buffer records of an unknown type or short, ignored\n",
			(unsigned long long)r.bad_records);
	if (r.out_err)
		code = EXIT_FAIL;
	err = perfetto_close(r.pf);
	if (err && !r.out_err) {
		fprintf(stderr, "lclkctl trace: %s: %s\n", o.trace_out, strerror(-err));
		code = EXIT_FAIL;
	}
out:
	trace_probe_stop(&tp);
	if (r.logical)
		lclk_close(&r.clock);
	return code;
}

const struct cli_cmd cmd_trace = {
	.name = "trace",
	.summary = "latency of collective-communication syscalls, in logical time",
	.usage = usage,
	.run = run_trace,
};
