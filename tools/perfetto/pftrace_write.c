// SPDX-License-Identifier: GPL-2.0
/*
 * Field numbers are those of Perfetto's trace_packet.proto,
 * track_descriptor.proto, process_descriptor.proto, track_event.proto and
 * debug_annotation.proto (as in perfetto.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pb.h"
#include "pftrace_write.h"

#define TRACE_PACKET		1
#define PKT_TIMESTAMP		8
#define PKT_SEQUENCE_ID		10
#define PKT_TRACK_EVENT		11
#define PKT_SEQUENCE_FLAGS	13
#define PKT_TRACK_DESCRIPTOR	60
#define SEQ_INCREMENTAL_STATE_CLEARED	1
#define TD_UUID			1
#define TD_NAME			2
#define TD_PROCESS		3
#define TD_PARENT_UUID		5
#define PD_PID			1
#define PD_PROCESS_NAME		6
#define TE_DEBUG_ANNOTATIONS	4
#define TE_TYPE			9
#define TE_TRACK_UUID		11
#define TE_CATEGORIES		22
#define TE_NAME			23
#define TE_FLOW_IDS		47
#define TE_TERMINATING_FLOW_IDS	48
#define TYPE_SLICE_BEGIN	1
#define TYPE_SLICE_END		2
#define TYPE_INSTANT		3
#define DA_INT_VALUE		4
#define DA_NAME			10

/*
 * Any value but 0 (reserved); one sequence for the whole merged trace.
 * Every packet names it: 1 is one byte, where "lclk" as a number took five
 * and a loop to write them, 1 % of a merge.
 */
#define SEQUENCE_ID		1

/*
 * Packets are copied into buf and written out a buffer at a time: stdio
 * cost two calls and a copy per packet, 7 % of a merge's instructions. A
 * larger buffer is no better: with stdio's at 1 MiB, the merge bench
 * spent twice the system time (0.6 s instead of 0.3 s).
 */
#define OUT_BUF			(64 << 10)

struct pftrace_writer {
	int fd;
	int started;
	int err;
	size_t len;
	uint8_t buf[OUT_BUF];
};

struct pftrace_writer *pftrace_writer_open(const char *path)
{
	struct pftrace_writer *w = malloc(sizeof(*w));

	if (!w)
		return NULL;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (w->fd < 0) {
		int err = errno;	/* for the caller's message */

		free(w);
		errno = err;
		return NULL;
	}
	w->started = 0;
	w->err = 0;
	w->len = 0;
	return w;
}

static int flush(struct pftrace_writer *w)
{
	size_t done = 0;
	ssize_t n;

	while (done < w->len && !w->err) {
		n = write(w->fd, w->buf + done, w->len - done);
		if (n > 0)
			done += n;
		else if (!n)
			w->err = -EIO;
		else if (errno != EINTR)
			w->err = -errno;
	}
	w->len = 0;
	return w->err;
}

/*
 * Room for a packet of n bytes, header included, at the end of the buffer;
 * NULL on an error, which w->err then holds. The caller writes exactly n
 * bytes there and adds them to w->len.
 */
static uint8_t *room(struct pftrace_writer *w, size_t n)
{
	if (w->err)
		return NULL;
	if (n > OUT_BUF) {
		w->err = -EMSGSIZE;
		return NULL;
	}
	if (OUT_BUF - w->len < n && flush(w))
		return NULL;
	return w->buf + w->len;
}

/* The fields every packet ends with: its sequence, and the first's flags. */
static size_t tail_size(const struct pftrace_writer *w)
{
	return pb_uint_size(PKT_SEQUENCE_ID, SEQUENCE_ID) +
	       (w->started ? 0 : pb_uint_size(PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED));
}

static uint8_t *put_tail(struct pftrace_writer *w, uint8_t *o)
{
	o = pb_put_uint(o, PKT_SEQUENCE_ID, SEQUENCE_ID);
	if (!w->started) {
		o = pb_put_uint(o, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
		w->started = 1;
	}
	return o;
}

int pftrace_track(struct pftrace_writer *w, uint64_t uuid, uint64_t parent,
		  const char *name, int32_t pid)
{
	struct pb td = { .len = 0 }, pd = { .len = 0 };
	size_t pkt_len;
	uint8_t *o;

	pb_uint(&td, TD_UUID, uuid);
	pb_str(&td, TD_NAME, name);
	if (parent)
		pb_uint(&td, TD_PARENT_UUID, parent);
	if (pid > 0) {
		pb_uint(&pd, PD_PID, pid);
		pb_str(&pd, PD_PROCESS_NAME, name);
		pb_msg(&td, TD_PROCESS, &pd);
	}
	if (td.overflow)
		return -EMSGSIZE;
	pkt_len = pb_bytes_size(PKT_TRACK_DESCRIPTOR, td.len) + tail_size(w);
	o = room(w, pb_bytes_size(TRACE_PACKET, pkt_len));
	if (!o)
		return w->err;
	o = pb_put_len(o, TRACE_PACKET, pkt_len);
	o = pb_put_bytes(o, PKT_TRACK_DESCRIPTOR, td.buf, td.len);
	w->len = put_tail(w, o) - w->buf;
	return 0;
}

/* A debug annotation of an integer: its size, then its bytes. */
static size_t int_arg_size(const struct pftrace_int_arg *a)
{
	return pb_bytes_size(DA_NAME, a->name_len) + pb_uint_size(DA_INT_VALUE, (uint64_t)a->val);
}

/*
 * Each packet is sized first and then written straight into the output
 * buffer: building it in a struct pb and copying that twice, with a check
 * per field, was a quarter of a merge's instructions.
 */
static int put_begin(struct pftrace_writer *w, const struct pftrace_event *e)
{
	size_t arg_len[PFTRACE_MAX_ARGS];
	size_t ev_len, pkt_len;
	unsigned int i;
	uint8_t *o;

	if (e->nargs > PFTRACE_MAX_ARGS)
		return -EINVAL;
	ev_len = pb_uint_size(TE_TYPE, e->instant ? TYPE_INSTANT : TYPE_SLICE_BEGIN) +
		 pb_uint_size(TE_TRACK_UUID, e->track) +
		 (e->category ? pb_bytes_size(TE_CATEGORIES, e->category_len) : 0) +
		 pb_bytes_size(TE_NAME, e->name_len) + e->annotations_len +
		 (e->nflows_out * (size_t)pb_fixed64_size(TE_FLOW_IDS)) +
		 (e->nflows_in * (size_t)pb_fixed64_size(TE_TERMINATING_FLOW_IDS));
	for (i = 0; i < e->nargs; i++) {
		arg_len[i] = int_arg_size(&e->args[i]);
		ev_len += pb_bytes_size(TE_DEBUG_ANNOTATIONS, arg_len[i]);
	}
	pkt_len = pb_uint_size(PKT_TIMESTAMP, e->begin_ns) +
		  pb_bytes_size(PKT_TRACK_EVENT, ev_len) + tail_size(w);
	o = room(w, pb_bytes_size(TRACE_PACKET, pkt_len));
	if (!o)
		return w->err;

	o = pb_put_len(o, TRACE_PACKET, pkt_len);
	o = pb_put_uint(o, PKT_TIMESTAMP, e->begin_ns);
	o = pb_put_len(o, PKT_TRACK_EVENT, ev_len);
	o = pb_put_uint(o, TE_TYPE, e->instant ? TYPE_INSTANT : TYPE_SLICE_BEGIN);
	o = pb_put_uint(o, TE_TRACK_UUID, e->track);
	if (e->category)
		o = pb_put_bytes(o, TE_CATEGORIES, e->category, e->category_len);
	o = pb_put_bytes(o, TE_NAME, e->name, e->name_len);
	memcpy(o, e->annotations, e->annotations_len);
	o += e->annotations_len;
	for (i = 0; i < e->nargs; i++) {
		o = pb_put_len(o, TE_DEBUG_ANNOTATIONS, arg_len[i]);
		o = pb_put_bytes(o, DA_NAME, e->args[i].name, e->args[i].name_len);
		o = pb_put_uint(o, DA_INT_VALUE, (uint64_t)e->args[i].val);
	}
	for (i = 0; i < e->nflows_out; i++)
		o = pb_put_fixed64(o, TE_FLOW_IDS, e->flows_out[i]);
	for (i = 0; i < e->nflows_in; i++)
		o = pb_put_fixed64(o, TE_TERMINATING_FLOW_IDS, e->flows_in[i]);
	w->len = put_tail(w, o) - w->buf;
	return 0;
}

static int put_end(struct pftrace_writer *w, const struct pftrace_event *e)
{
	size_t ev_len = pb_uint_size(TE_TYPE, TYPE_SLICE_END) + pb_uint_size(TE_TRACK_UUID, e->track);
	size_t pkt_len = pb_uint_size(PKT_TIMESTAMP, e->end_ns) +
			 pb_bytes_size(PKT_TRACK_EVENT, ev_len) + tail_size(w);
	uint8_t *o = room(w, pb_bytes_size(TRACE_PACKET, pkt_len));

	if (!o)
		return w->err;
	o = pb_put_len(o, TRACE_PACKET, pkt_len);
	o = pb_put_uint(o, PKT_TIMESTAMP, e->end_ns);
	o = pb_put_len(o, PKT_TRACK_EVENT, ev_len);
	o = pb_put_uint(o, TE_TYPE, TYPE_SLICE_END);
	o = pb_put_uint(o, TE_TRACK_UUID, e->track);
	w->len = put_tail(w, o) - w->buf;
	return 0;
}

int pftrace_event(struct pftrace_writer *w, const struct pftrace_event *e)
{
	int err = put_begin(w, e);

	if (err || e->instant)
		return err;
	return put_end(w, e);
}

int pftrace_writer_close(struct pftrace_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = flush(w);
	if (close(w->fd) && !err)
		err = -errno;
	free(w);
	return err;
}
