// SPDX-License-Identifier: GPL-2.0
/*
 * Field numbers are those of Perfetto's trace_packet.proto,
 * track_descriptor.proto, process_descriptor.proto, thread_descriptor.proto,
 * interned_data.proto, clock_snapshot.proto, track_event.proto and
 * debug_annotation.proto (perfetto_proto.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pb.h"
#include "perfetto_proto.h"
#include "pftrace_intern.h"
#include "pftrace_write.h"

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
	int clock_declared;
	uint32_t clock_id;
	struct intern_table intern;
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
	w->clock_declared = 0;
	w->clock_id = CLOCK_ID_LOGICAL_GLOBAL;
	memset(&w->intern, 0, sizeof(w->intern));
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

/*
 * The fields every packet ends with: its sequence, and its flags: the
 * first clears the sequence's state, and those that define or use interned
 * strings need it.
 */
static unsigned int packet_flags(const struct pftrace_writer *w, bool interned)
{
	return (w->started ? 0 : SEQ_INCREMENTAL_STATE_CLEARED) |
	       (interned ? SEQ_NEEDS_INCREMENTAL_STATE : 0);
}

static size_t tail_size(const struct pftrace_writer *w, bool interned)
{
	unsigned int flags = packet_flags(w, interned);

	return pb_uint_size(PKT_SEQUENCE_ID, SEQUENCE_ID) +
	       (flags ? pb_uint_size(PKT_SEQUENCE_FLAGS, flags) : 0);
}

static uint8_t *put_tail(struct pftrace_writer *w, uint8_t *o, bool interned)
{
	unsigned int flags = packet_flags(w, interned);

	o = pb_put_uint(o, PKT_SEQUENCE_ID, SEQUENCE_ID);
	if (flags)
		o = pb_put_uint(o, PKT_SEQUENCE_FLAGS, flags);
	w->started = 1;
	return o;
}

/* A packet of the fields in body, and the tail. 0 or -errno. */
static int put_packet(struct pftrace_writer *w, const struct pb *body)
{
	size_t pkt_len;
	uint8_t *o;

	if (body->overflow)
		return -EMSGSIZE;
	pkt_len = body->len + tail_size(w, false);
	o = room(w, pb_bytes_size(TRACE_PACKET, pkt_len));
	if (!o)
		return w->err;
	o = pb_put_len(o, TRACE_PACKET, pkt_len);
	memcpy(o, body->buf, body->len);
	w->len = put_tail(w, o + body->len, false) - w->buf;
	return 0;
}

static void clock_at_zero(struct pb *snap, uint32_t id)
{
	struct pb c;

	pb_reset(&c);
	pb_uint(&c, CLK_ID, id);
	pb_uint(&c, CLK_TIMESTAMP, 0);
	pb_msg(snap, CS_CLOCKS, &c);
}

void pftrace_writer_clock(struct pftrace_writer *w, bool logical)
{
	w->clock_id = logical ? CLOCK_ID_LOGICAL_GLOBAL : CLOCK_ID_MONOTONIC;
}

/*
 * Before the first event: the clock of the timestamps, BOOTTIME's equal
 * from 0 on (one snapshot, both at 0). CLOCK_MONOTONIC needs it as much as
 * the logical clock: trace_processor puts every event on BOOTTIME, and
 * drops one in a clock no snapshot relates to it, builtin or not.
 */
static int declare_clock(struct pftrace_writer *w)
{
	struct pb pkt, snap, def;
	int err;

	if (w->clock_declared)
		return 0;
	pb_reset(&pkt);
	pb_reset(&snap);
	pb_reset(&def);
	clock_at_zero(&snap, w->clock_id);
	clock_at_zero(&snap, CLOCK_ID_BOOTTIME);
	pb_msg(&pkt, PKT_CLOCK_SNAPSHOT, &snap);
	pb_uint(&def, DEF_TIMESTAMP_CLOCK_ID, w->clock_id);
	pb_msg(&pkt, PKT_DEFAULTS, &def);
	err = put_packet(w, &pkt);
	if (err && !w->err)
		w->err = err;
	w->clock_declared = !err;
	return err;
}

static int put_descriptor(struct pftrace_writer *w, const struct pb *td)
{
	struct pb pkt;

	pb_reset(&pkt);
	pb_msg(&pkt, PKT_TRACK_DESCRIPTOR, td);
	return put_packet(w, &pkt);
}

int pftrace_track(struct pftrace_writer *w, uint64_t uuid, uint64_t parent,
		  const char *name)
{
	struct pb td;

	pb_reset(&td);
	pb_uint(&td, TD_UUID, uuid);
	pb_str(&td, TD_NAME, name);
	if (parent)
		pb_uint(&td, TD_PARENT_UUID, parent);
	return put_descriptor(w, &td);
}

int pftrace_process(struct pftrace_writer *w, uint64_t uuid, int32_t pid, const char *name)
{
	struct pb td, pd;

	pb_reset(&td);
	pb_reset(&pd);
	pb_uint(&td, TD_UUID, uuid);
	pb_uint(&pd, PD_PID, (uint64_t)(int64_t)pid);
	pb_str(&pd, PD_PROCESS_NAME, name);
	pb_msg(&td, TD_PROCESS, &pd);
	return put_descriptor(w, &td);
}

int pftrace_thread(struct pftrace_writer *w, uint64_t uuid, int32_t pid, int64_t tid,
		   const char *name)
{
	struct pb td, thd;

	pb_reset(&td);
	pb_reset(&thd);
	pb_uint(&td, TD_UUID, uuid);
	pb_uint(&thd, THD_PID, (uint64_t)(int64_t)pid);
	pb_uint(&thd, THD_TID, (uint64_t)tid);
	pb_str(&thd, THD_THREAD_NAME, name);
	pb_msg(&td, TD_THREAD, &thd);
	return put_descriptor(w, &td);
}

/* A debug annotation of an integer: its size, then its bytes. */
static size_t int_arg_size(const struct pftrace_int_arg *a)
{
	return pb_bytes_size(DA_NAME, a->name_len) + pb_uint_size(DA_INT_VALUE, (uint64_t)a->val);
}

/* An interned string's definition: EventName or EventCategory. */
static size_t entry_size(uint32_t iid, size_t len)
{
	return pb_uint_size(IE_IID, iid) + pb_bytes_size(IE_NAME, len);
}

static uint8_t *put_entry(uint8_t *o, unsigned int field, uint32_t iid, const char *s,
			  size_t len)
{
	o = pb_put_len(o, field, entry_size(iid, len));
	o = pb_put_uint(o, IE_IID, iid);
	return pb_put_bytes(o, IE_NAME, s, len);
}

/* The event's name or category: its iid, or the string when not interned. */
struct event_str {
	const char *s;
	size_t len;
	uint32_t iid;
	int fresh;		/* interned by this event: defined in its packet */
};

static size_t str_size(const struct event_str *x, unsigned int iid_field, unsigned int field)
{
	return x->iid ? pb_uint_size(iid_field, x->iid) : pb_bytes_size(field, x->len);
}

static uint8_t *put_str(uint8_t *o, const struct event_str *x, unsigned int iid_field,
			unsigned int field)
{
	return x->iid ? pb_put_uint(o, iid_field, x->iid) : pb_put_bytes(o, field, x->s, x->len);
}

static size_t defs_size(const struct event_str *cat, const struct event_str *name)
{
	size_t n = 0;

	if (cat->fresh)
		n += pb_bytes_size(ID_EVENT_CATEGORIES, entry_size(cat->iid, cat->len));
	if (name->fresh)
		n += pb_bytes_size(ID_EVENT_NAMES, entry_size(name->iid, name->len));
	return n;
}

/*
 * Each packet is sized first and then written straight into the output
 * buffer: building it in a struct pb and copying that twice, with a check
 * per field, was a quarter of a merge's instructions.
 */
static int put_begin(struct pftrace_writer *w, const struct pftrace_event *e)
{
	struct event_str cat = { e->category, e->category_len, 0, 0 };
	struct event_str name = { e->name, e->name_len, 0, 0 };
	unsigned int nflows_in = e->instant ? e->nflows_in : 0;
	size_t arg_len[PFTRACE_MAX_ARGS];
	size_t ev_len, pkt_len, defs_len;
	bool interned;
	unsigned int i;
	uint8_t *o;

	if (e->nargs > PFTRACE_MAX_ARGS)
		return -EINVAL;
	if (declare_clock(w))
		return w->err;
	if (e->category)
		cat.iid = intern(&w->intern, INTERN_CATEGORY, cat.s, cat.len, &cat.fresh);
	name.iid = intern(&w->intern, INTERN_NAME, name.s, name.len, &name.fresh);
	interned = cat.iid || name.iid;
	defs_len = defs_size(&cat, &name);
	ev_len = pb_uint_size(TE_TYPE, e->instant ? TYPE_INSTANT : TYPE_SLICE_BEGIN) +
		 pb_uint_size(TE_TRACK_UUID, e->track) +
		 (e->category ? str_size(&cat, TE_CATEGORY_IIDS, TE_CATEGORIES) : 0) +
		 str_size(&name, TE_NAME_IID, TE_NAME) + e->annotations_len +
		 (e->nflows_out * (size_t)pb_fixed64_size(TE_FLOW_IDS)) +
		 (nflows_in * (size_t)pb_fixed64_size(TE_TERMINATING_FLOW_IDS));
	for (i = 0; i < e->nargs; i++) {
		arg_len[i] = int_arg_size(&e->args[i]);
		ev_len += pb_bytes_size(TE_DEBUG_ANNOTATIONS, arg_len[i]);
	}
	pkt_len = pb_uint_size(PKT_TIMESTAMP, e->begin_ns) +
		  pb_bytes_size(PKT_TRACK_EVENT, ev_len) +
		  (defs_len ? pb_bytes_size(PKT_INTERNED_DATA, defs_len) : 0) +
		  tail_size(w, interned);
	o = room(w, pb_bytes_size(TRACE_PACKET, pkt_len));
	if (!o)
		return w->err;

	o = pb_put_len(o, TRACE_PACKET, pkt_len);
	o = pb_put_uint(o, PKT_TIMESTAMP, e->begin_ns);
	o = pb_put_len(o, PKT_TRACK_EVENT, ev_len);
	o = pb_put_uint(o, TE_TYPE, e->instant ? TYPE_INSTANT : TYPE_SLICE_BEGIN);
	o = pb_put_uint(o, TE_TRACK_UUID, e->track);
	if (e->category)
		o = put_str(o, &cat, TE_CATEGORY_IIDS, TE_CATEGORIES);
	o = put_str(o, &name, TE_NAME_IID, TE_NAME);
	memcpy(o, e->annotations, e->annotations_len);
	o += e->annotations_len;
	for (i = 0; i < e->nargs; i++) {
		o = pb_put_len(o, TE_DEBUG_ANNOTATIONS, arg_len[i]);
		o = pb_put_bytes(o, DA_NAME, e->args[i].name, e->args[i].name_len);
		o = pb_put_uint(o, DA_INT_VALUE, (uint64_t)e->args[i].val);
	}
	for (i = 0; i < e->nflows_out; i++)
		o = pb_put_fixed64(o, TE_FLOW_IDS, e->flows_out[i]);
	for (i = 0; i < nflows_in; i++)
		o = pb_put_fixed64(o, TE_TERMINATING_FLOW_IDS, e->flows_in[i]);
	if (defs_len) {
		o = pb_put_len(o, PKT_INTERNED_DATA, defs_len);
		if (cat.fresh)
			o = put_entry(o, ID_EVENT_CATEGORIES, cat.iid, cat.s, cat.len);
		if (name.fresh)
			o = put_entry(o, ID_EVENT_NAMES, name.iid, name.s, name.len);
	}
	w->len = put_tail(w, o, interned) - w->buf;
	return 0;
}

/* A slice's end, with the arrows that end on it. */
static int put_end(struct pftrace_writer *w, const struct pftrace_event *e)
{
	size_t ev_len = pb_uint_size(TE_TYPE, TYPE_SLICE_END) +
			pb_uint_size(TE_TRACK_UUID, e->track) +
			e->nflows_in * (size_t)pb_fixed64_size(TE_TERMINATING_FLOW_IDS);
	size_t pkt_len = pb_uint_size(PKT_TIMESTAMP, e->end_ns) +
			 pb_bytes_size(PKT_TRACK_EVENT, ev_len) + tail_size(w, false);
	uint8_t *o = room(w, pb_bytes_size(TRACE_PACKET, pkt_len));
	unsigned int i;

	if (!o)
		return w->err;
	o = pb_put_len(o, TRACE_PACKET, pkt_len);
	o = pb_put_uint(o, PKT_TIMESTAMP, e->end_ns);
	o = pb_put_len(o, PKT_TRACK_EVENT, ev_len);
	o = pb_put_uint(o, TE_TYPE, TYPE_SLICE_END);
	o = pb_put_uint(o, TE_TRACK_UUID, e->track);
	for (i = 0; i < e->nflows_in; i++)
		o = pb_put_fixed64(o, TE_TERMINATING_FLOW_IDS, e->flows_in[i]);
	w->len = put_tail(w, o, false) - w->buf;
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
	intern_free(&w->intern);
	free(w);
	return err;
}
