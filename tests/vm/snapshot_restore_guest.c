// SPDX-License-Identifier: GPL-2.0
/*
 * The guest half of tests/vm/snapshot-restore: a static program that runs
 * as the guest's whole userspace (no 9p root: QEMU refuses savevm with
 * one) and answers the host over a serial port (PORT, /dev/ttyS1), one
 * line per message:
 *
 *   host -> guest                      guest -> host
 *   S SEQ        read the clock        R SEQ MT MB MS IT IB IS
 *   T SEQ MARK   sync from the host    Q SEQ   (then the host says:)
 *   A SEQ NS     the host's time       Y SEQ RC RTT_NS TEXT_STATUS
 *   M SEQ MARK   as T, but measured    Q SEQ, then after A:
 *                and held              W SEQ   (then the host says:)
 *   G SEQ        apply the held sync   Y SEQ RC RTT_NS TEXT_STATUS
 *   X            end                   (exits 0)
 *
 * R carries two readings of /dev/lclk0: MT MB MS through include/lclk.h's
 * mmap reader (time, bound, status), IT IB IS through the GET_TIME ioctl.
 * A sync takes CLOCK_MONOTONIC g1, sends Q, waits for the host's A with
 * its CLOCK_REALTIME, takes g4, and sets the clock to the host's time at
 * (g1 + g4) / 2 with the bound (g4 - g1) / 2 + 1: wherever between g1 and
 * g4 the host took its time, the clock is within that of it. Before it,
 * the status that read() of /dev/lclk0 gave (TEXT_STATUS: "disrupted"
 * after a restore, as the other readers). A restored
 * snapshot may answer a request from before the restore: the host
 * matches replies by SEQ.
 *
 * MARK 1: as a setter should on a VM with a vmclock, the sync reads the
 * disruption marker before g1 and sets with LCLK_SET_VMCLOCK, so that a
 * restore between its measurement and its ioctl refuses it (RC ESTALE);
 * MARK 0: without, as setters did before LCLK_SET_VMCLOCK. M holds the
 * measured sync until G: a snapshot taken meanwhile, restored later,
 * applies a measurement from before the restore.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>

#include "lclk.h"

static int port;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(port, buf, (size_t)n) < 0)
		perror("write");
}

/* One line from the port into line (NUL-terminated), or -1 on timeout. */
static int get_line(char *line, size_t size, int timeout_ms)
{
	static char buf[4096];
	static size_t len;

	for (;;) {
		char *nl = memchr(buf, '\n', len);
		struct pollfd pfd = { .fd = port, .events = POLLIN };
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - buf);

			if (l >= size)
				l = size - 1;
			memcpy(line, buf, l);
			line[l] = 0;
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
			return 0;
		}
		if (len == sizeof(buf))
			len = 0;	/* garbage without a newline */
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		n = read(port, buf + len, sizeof(buf) - len);
		if (n > 0)
			len += (size_t)n;
	}
}

static __s64 mono_ns(void)
{
	return lclk_monotonic_ns();
}

/* The status line of read() on the device ("status: synced"). */
static void text_status(char *out, size_t size)
{
	char buf[4096], *s;
	ssize_t n;
	int fd;

	snprintf(out, size, "?");
	fd = open("/dev/lclk0", O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	s = strstr(buf, "status: ");
	if (s && sscanf(s, "status: %31s", out) != 1)
		snprintf(out, size, "?");
}

/* Wait for the host's line "G SEQ"; false if it never comes. */
static bool wait_go(unsigned long long seq)
{
	unsigned long long gseq;
	char line[256];

	while (get_line(line, sizeof(line), 600000) == 0)
		if (sscanf(line, "G %llu", &gseq) == 1 && gseq == seq)
			return true;
	return false;
}

static void sync_clock(const struct lclk_clock *c, unsigned long long seq,
		       int mark, bool hold)
{
	struct lclk_set_model m;
	unsigned long long aseq;
	long long host;
	char line[256], text[32];
	__s64 g1, g4, mid;
	__u64 marker = 0;
	int rc = 0, marked;

	text_status(text, sizeof(text));
	marked = mark && !lclk_disruption_marker(c, &marker);
	g1 = mono_ns();
	say("Q %llu\n", seq);
	for (;;) {
		if (get_line(line, sizeof(line), 2000) < 0) {
			say("Y %llu -1 0 %s\n", seq, text);
			return;
		}
		if (sscanf(line, "A %llu %lld", &aseq, &host) == 2 &&
		    aseq == seq)
			break;
	}
	g4 = mono_ns();
	mid = g1 + (g4 - g1) / 2;
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET | LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.t0_ns = mid;
	m.offset_ns = host - mid;
	m.bound_ns = (g4 - g1) / 2 + 1;
	m.max_drift_ppb = 1000000;	/* 1000 ppm: TCG's clocks are rough */
	if (marked) {
		m.modes |= LCLK_SET_VMCLOCK;
		m.vmclock_marker = marker;
	}
	if (hold) {
		say("W %llu\n", seq);
		if (!wait_go(seq))
			return;
	}
	if (ioctl(c->fd, LCLK_IOC_SET_MODEL, &m) < 0)
		rc = errno;
	say("Y %llu %d %lld %s\n", seq, rc, (long long)(g4 - g1), text);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/ttyS1";
	struct lclk_clock c;
	struct termios tio;
	char line[256];
	int err;

	port = open(path, O_RDWR | O_NOCTTY);
	if (port < 0) {
		perror(path);
		return 1;
	}
	if (tcgetattr(port, &tio) == 0) {
		cfmakeraw(&tio);
		cfsetspeed(&tio, B115200);
		tcsetattr(port, TCSANOW, &tio);
	}
	err = lclk_open(&c, "/dev/lclk0");
	if (err) {
		fprintf(stderr, "lclk_open: %s\n", strerror(-err));
		return 1;
	}
	say("H hello\n");
	for (;;) {
		unsigned long long seq;
		int mark;

		if (get_line(line, sizeof(line), -1) < 0)
			continue;
		if (line[0] == 'X')
			break;
		if (sscanf(line, "S %llu", &seq) == 1) {
			struct lclk_now a, b;

			lclk_now(&c, &a);
			lclk_now_ioctl(&c, &b);
			say("R %llu %lld %lld %u %lld %lld %u\n", seq,
			    (long long)a.time_ns, (long long)a.bound_ns,
			    a.status, (long long)b.time_ns,
			    (long long)b.bound_ns, b.status);
		} else if (sscanf(line, "T %llu %d", &seq, &mark) == 2) {
			sync_clock(&c, seq, mark, false);
		} else if (sscanf(line, "M %llu %d", &seq, &mark) == 2) {
			sync_clock(&c, seq, mark, true);
		}
	}
	lclk_close(&c);
	return 0;
}
