// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/units.h"
#include "uapi/linux/lclk.h"
#include "daemon_ctl.h"
#include "daemon_log.h"
#include "lclk_model.h"

/* A client waits this long for a daemon busy with a reload. */
#define CTL_QUERY_TIMEOUT_S	5
#define CTL_MAX_ANSWER		(1 << 20)

const char *ctl_socket_path(void)
{
	const char *p = getenv("LCLK_CONTROL");

	return p && *p ? p : CONFIG_DEFAULT_CONTROL;
}

static int make_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	strcpy(sun->sun_path, path);
	return 0;
}

/*
 * Make path free for our socket: nothing there, or a socket no one listens
 * on any more (its daemon died). A live daemon's socket, or anything that is
 * not a socket, is not ours to remove.
 */
static int claim_path(const char *path, const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, ret;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Connected, or a full backlog (EAGAIN): someone is listening. */
	ret = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) ? -errno : -EADDRINUSE;
	close(fd);
	if (ret == -EAGAIN)
		return -EADDRINUSE;
	if (ret != -ECONNREFUSED)
		return ret;
	return unlink(path) && errno != ENOENT ? -errno : 0;
}

int ctl_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	mode_t umask_was;
	int fd, ret;

	ret = make_addr(path, &sun);
	if (!ret)
		ret = claim_path(path, &sun);
	if (ret) {
		snprintf(err, errlen, "control socket %s: %s", path,
			 ret == -EADDRINUSE ? "a daemon is running there already" : strerror(-ret));
		return ret;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	/*
	 * The socket is created 0666 by bind() itself: a chmod() of the path
	 * afterwards would follow whatever someone put there meanwhile. The
	 * umask is the process's; the daemon binds while no runner thread
	 * runs, so nothing else is created under this one.
	 */
	umask_was = umask(0111);
	ret = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(umask_was);
	if (ret < 0 || listen(fd, 8) < 0)
		goto fail;
	return fd;
fail:
	ret = -errno;
	snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret;
}

void ctl_close(int listen_fd, const char *path)
{
	if (listen_fd < 0)
		return;
	close(listen_fd);
	unlink(path);
}

static void set_timeouts(int fd, struct timeval tv)
{
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* To a socket whose peer may be gone: an error, never SIGPIPE. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

bool ctl_request_whole(const char *buf, size_t len)
{
	return len >= CTL_REQUEST_MAX || memchr(buf, '\n', len);
}

void ctl_answer(const char *buf, size_t len, const struct daemon_report *r, FILE *f)
{
	char req[CTL_REQUEST_MAX];
	int stratum;

	snprintf(req, sizeof(req), "%.*s", (int)(len < sizeof(req) ? len : sizeof(req) - 1), buf);
	req[strcspn(req, "\r\n")] = '\0';
	if (!strcmp(req, "sources json")) {
		ctl_report_json(r, f);
	} else if (!strcmp(req, "sources text")) {
		ctl_report_text(r, f);
	} else if (!strcmp(req, "stratum")) {
		stratum = ctl_report_stratum(r);
		if (stratum)
			fprintf(f, "%s %d\n", r->device, stratum);
		else
			fprintf(f, "%s none\n", r->device);
	} else {
		fprintf(f, "error: unknown request '%.32s' (expected 'sources json', 'sources text' or 'stratum')\n",
			req);
	}
}

int ctl_report_stratum(const struct daemon_report *r)
{
	int s;

	if (r->selected < 0 || (unsigned int)r->selected >= r->nsources)
		return 0;
	s = r->sources[r->selected].stratum + 1;
	return s > 16 ? 16 : s;
}

/* ---- renderings ------------------------------------------------------- */

static void json_ns_or_null(struct json *j, const char *key, int64_t v)
{
	if (v == LCLK_BOUND_UNKNOWN)
		json_null(j, key);
	else
		json_int(j, key, v);
}

void ctl_report_json(const struct daemon_report *r, FILE *f)
{
	struct json j;
	unsigned int i;

	json_init(&j, f);
	json_obj_begin(&j, NULL);
	json_str(&j, "device", r->device);
	json_str(&j, "status", lclk_status_name(r->status));
	json_int(&j, "offset_ns", r->offset_ns);
	json_int(&j, "rate_ppt", r->rate_ppt);
	json_int(&j, "freq_ppt", r->freq_ppt);
	json_ns_or_null(&j, "bound_ns", r->bound_ns);
	json_int(&j, "poll_ns", r->poll_ns);
	json_int(&j, "last_update_ns", r->last_update_ns);
	json_int(&j, "now_ns", r->now_ns);
	json_uint(&j, "updates", r->updates);
	json_uint(&j, "steps", r->steps);
	json_uint(&j, "rejected", r->rejected);
	json_uint(&j, "disruptions", r->disruptions);
	if (r->selected >= 0)
		json_str(&j, "selected", r->sources[r->selected].url);
	else
		json_null(&j, "selected");
	json_arr_begin(&j, "sources");
	for (i = 0; i < r->nsources; i++) {
		const struct source_report *s = &r->sources[i];

		json_obj_begin(&j, NULL);
		json_str(&j, "url", s->url);
		json_str(&j, "class", config_class_name(s->class));
		json_bool(&j, "prefer", s->prefer);
		json_str(&j, "state", source_state_name(s->state));
		json_uint(&j, "reach", s->reach);
		if (s->measured) {
			json_int(&j, "offset_ns", s->offset_ns);
			json_int(&j, "delay_ns", s->delay_ns);
			json_int(&j, "bound_ns", s->bound_ns);
			json_int(&j, "age_ns", r->now_ns - s->base_ns);
			json_int(&j, "stratum", s->stratum);
			json_str(&j, "refid", s->refid);
		}
		json_uint(&j, "polls", s->polls);
		json_uint(&j, "failures", s->failures);
		json_uint(&j, "rejected", s->rejected);
		if (s->error[0])
			json_str(&j, "error", s->error);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

void ctl_report_text(const struct daemon_report *r, FILE *f)
{
	char a[UNITS_BUFSZ], b[UNITS_BUFSZ], c[UNITS_BUFSZ], d[UNITS_BUFSZ];
	unsigned int i;

	fprintf(f, "daemon:       %s, %s, poll %s, rate %s, %llu updates, %llu steps, %llu rejected replies",
		r->device, lclk_status_name(r->status), units_ns(a, sizeof(a), r->poll_ns),
		units_ppt(b, sizeof(b), r->rate_ppt), (unsigned long long)r->updates,
		(unsigned long long)r->steps, (unsigned long long)r->rejected);
	if (r->disruptions)
		fprintf(f, ", %llu VM restores or migrations", (unsigned long long)r->disruptions);
	fputc('\n', f);
	fprintf(f, "  %-36s %-5s %5s %11s %11s %11s %10s\n", "S Source", "Class", "Reach",
		"Offset", "Delay", "Bound", "Age");
	for (i = 0; i < r->nsources; i++) {
		const struct source_report *s = &r->sources[i];
		char name[40];

		snprintf(name, sizeof(name), "%c %s%s", source_state_char(s->state), s->url,
			 s->prefer ? " (prefer)" : "");
		fprintf(f, "  %-36s %-5s %5o", name, config_class_name(s->class), s->reach);
		if (s->measured)
			fprintf(f, " %11s %11s %11s %10s",
				units_ns(a, sizeof(a), s->offset_ns),
				units_ns(b, sizeof(b), s->delay_ns),
				units_ns(c, sizeof(c), s->bound_ns),
				units_ns(d, sizeof(d), r->now_ns - s->base_ns));
		else
			fprintf(f, " %11s %11s %11s %10s", "-", "-", "-", "-");
		if (s->state == SRC_UNREACHABLE && s->error[0])
			fprintf(f, "  (%s)", s->error);
		fputc('\n', f);
	}
}

/* ---- client ----------------------------------------------------------- */

int ctl_query(const char *path, const char *request, char **out)
{
	struct sockaddr_un sun;
	size_t len = 0, cap = 4096;
	char *buf, line[64];
	int fd, ret;

	*out = NULL;
	ret = make_addr(path, &sun);
	if (ret)
		return ret;
	/*
	 * One write: the daemon answers what its first read gets and closes,
	 * and a newline still on its way then resets the connection.
	 */
	if ((size_t)snprintf(line, sizeof(line), "%s\n", request) >= sizeof(line))
		return -EMSGSIZE;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	set_timeouts(fd, (struct timeval){ .tv_sec = CTL_QUERY_TIMEOUT_S });
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    write_all(fd, line, strlen(line))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	buf = malloc(cap);
	for (ret = 0; buf; ) {
		ssize_t n;

		if (len + 1 == cap) {
			char *nb = cap < CTL_MAX_ANSWER ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
				ret = -EMSGSIZE;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

void ctl_async_init(struct ctl_async *q)
{
	q->fd = -1;
	q->len = 0;
	q->answer[0] = '\0';
}

void ctl_async_cancel(struct ctl_async *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
}

int ctl_async_start(struct ctl_async *q, const char *path, const char *request,
		    int64_t now_ns, int64_t timeout_ns)
{
	struct sockaddr_un sun;
	char line[64];
	size_t len;
	ssize_t n;
	int ret;

	ctl_async_cancel(q);
	q->len = 0;
	q->answer[0] = '\0';
	ret = make_addr(path, &sun);
	if (ret)
		return ret;
	len = (size_t)snprintf(line, sizeof(line), "%s\n", request);
	if (len >= sizeof(line))
		return -EMSGSIZE;
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (q->fd < 0)
		return -errno;
	/*
	 * A UNIX stream connect completes at once or fails: with EAGAIN when
	 * the backlog is full (as it is while someone holds every slot). The
	 * request is one write (see ctl_query()) into an empty socket buffer:
	 * whole, or a failure.
	 */
	if (connect(q->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		goto fail;
	}
	n = send(q->fd, line, len, MSG_NOSIGNAL);
	if (n != (ssize_t)len) {
		ret = n < 0 ? -errno : -EAGAIN;
		goto fail;
	}
	q->deadline_ns = now_ns + timeout_ns;
	return 0;
fail:
	ctl_async_cancel(q);
	return ret;
}

int ctl_async_run(struct ctl_async *q, short revents, int64_t now_ns)
{
	if (q->fd < 0)
		return -EBADF;
	while (revents) {
		ssize_t n = read(q->fd, q->answer + q->len, sizeof(q->answer) - 1 - q->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			int ret = -errno;

			ctl_async_cancel(q);
			return ret;
		}
		if (n == 0) {
			q->answer[q->len] = '\0';
			ctl_async_cancel(q);
			return 1;
		}
		q->len += n;
		if (q->len == sizeof(q->answer) - 1) {
			ctl_async_cancel(q);
			return -EMSGSIZE;
		}
	}
	if (now_ns >= q->deadline_ns) {
		ctl_async_cancel(q);
		return -ETIMEDOUT;
	}
	return 0;
}

/* ---- "lclkctl status" ------------------------------------------------- */

static bool not_running(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED;
}

void daemon_ctl_status_text(const struct status *s)
{
	const char *path = ctl_socket_path();
	char *answer;
	int err;

	(void)s;
	err = ctl_query(path, "sources text", &answer);
	if (not_running(err)) {
		printf("daemon:       not running (no %s)\n", path);
		return;
	}
	if (err) {
		printf("daemon:       %s: %s\n", path, strerror(-err));
		return;
	}
	fputs(answer, stdout);
	free(answer);
}

/*
 * The daemon's answer is a JSON document already; put it in as the value
 * of "daemon" (the comma rule is json.c's: none before the first member).
 */
void daemon_ctl_status_json(const struct status *s, struct json *j)
{
	char *answer = NULL;
	int err;

	(void)s;
	err = ctl_query(ctl_socket_path(), "sources json", &answer);
	if (err || answer[0] != '{') {
		json_null(j, "daemon");
		free(answer);
		return;
	}
	answer[strcspn(answer, "\n")] = '\0';
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	fprintf(j->f, "\"daemon\":%s", answer);
	free(answer);
}
