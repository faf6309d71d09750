// SPDX-License-Identifier: GPL-2.0
/*
 * The merge: per input, packets are decoded into events (a slice is its
 * begin packet and the end packet that follows on the same track and
 * sequence); a reorder heap per input, a heap of the inputs by the end of
 * their next event, then a FIFO of the last window's events where the
 * matcher's arrows are attached before the events are written out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto/pb.h"
#include "perfetto/perfetto_proto.h"
#include "perfetto/pftrace_read.h"
#include "perfetto/pftrace_write.h"
#include "trace_merge.h"

/*
 * Events of one input may leave the ring buffer slightly out of order (a
 * call's end is read before its record is reserved); this many are held
 * to put them back in order. Few: the held events of all inputs are the
 * merge's working set. A power of two: they are held in a ring.
 */
#define REORDER		64

enum msg_kind { MSG_NONE, MSG_IS_SEND, MSG_IS_RECV };

struct event {
	int64_t begin, end;
	int64_t bound_begin, bound_end;
	uint64_t track;			/* output track */
	uint64_t id;
	uint64_t conn;
	uint64_t *flows;		/* send: arrows out; receive: arrows in */
	uint32_t nflows, flows_cap;
	uint32_t input;
	uint32_t rank;			/* its process */
	uint32_t seq, len;
	uint8_t instant, msg;
	uint8_t waits;			/* a waiting call that got data */
	uint8_t woken;			/* a futex wait another thread ended */
	uint8_t main;			/* on its process's main thread (tid = pid) */
	uint8_t blocked;		/* a waiting call, whatever its outcome */
	uint8_t loop;			/* an event loop's wait: epoll */
	uint8_t coll;			/* a recorder's collective slice: */
	uint32_t coll_group, coll_op;	/* ... cluster_round_intern()'s */
	uint64_t coll_seq;		/* ... its process group's number */
	uint16_t name_len, cat_len;
	uint32_t ann_len;
	uint32_t data_cap;		/* of data[]; EVENT_DATA: recycled */
	struct event *next_spare;
	char data[];			/* name, NUL, category, NUL, annotations */
};

/*
 * What data[] holds at least: the names and annotations of lclkctl trace's
 * events fit. Events of that size are recycled, flows buffer and all:
 * allocating and freeing each one was 7 % of a merge's instructions.
 */
#define EVENT_DATA	256

/*
 * The largest message record lclkctl trace writes (cmd_trace.c): its names
 * and six annotations, each a length-delimited field of a name and a
 * string or a varint of up to ten bytes. In 128 bytes, records between
 * IPv6 endpoints did not fit: each was allocated and freed, its flows
 * buffer with it.
 */
#define ANN_MAX_STR(name, n)	(2 + 2 + sizeof(name) - 1 + 2 + (n))
#define ANN_MAX_INT(name)	(2 + 2 + sizeof(name) - 1 + 1 + 10)
_Static_assert(sizeof(MSG_SEND) + sizeof(MSG_CATEGORY) +
	       2 * ANN_MAX_STR("src", MSG_ENDPOINT_MAX - 1) +
	       ANN_MAX_INT("seq") + ANN_MAX_INT("len") +
	       ANN_MAX_INT("bound_begin_ns") + ANN_MAX_INT("bound_end_ns") <= EVENT_DATA,
	       "a message record's event is not recycled");

struct track {
	uint64_t uuid;			/* 0: free slot */
	uint64_t parent;
	uint64_t out;			/* output uuid, 0 until declared */
	uint64_t proc_out;		/* a process's: its output process track, 0: none yet */
	int64_t pid, tid;		/* on the host, 0: unknown */
	int32_t out_pid;		/* a process's: its pid in the merged trace */
	uint32_t rank;			/* a process's track: its rank + 1, 0: none yet */
	uint32_t event_rank;		/* of the events on it, once declared */
	bool event_main;		/* ... whether a main thread's (tid = pid) */
	char *name;
};

/*
 * A rank's process as both writers name it: the host track's name and the
 * pid (lclkctl trace and lclk.torch give the same host and process the
 * same tracks), so that a recorder's collectives find the tracer's waits
 * of the same process in another file.
 */
struct rank_id {
	uint64_t key;			/* 0: no host name or pid */
	uint32_t input;
	int64_t pair;			/* the tracer's rank of a recorder's, -1: none yet */
	bool coll;			/* has collective slices: a recorder's */
	bool traced;			/* has waits or messages: a tracer's */
};

/* A slice whose end packet is still to come. */
struct open_slice {
	uint64_t seq_id, track;
	struct event *ev;
};

/* The key beside the pointer: events are ordered without touching them. */
struct held_event {
	int64_t end;
	struct event *ev;
};

struct input {
	struct pftrace_reader rd;
	uint32_t idx;
	struct track *tracks;		/* open addressing, power of two */
	uint32_t ntracks, tracks_cap;
	struct open_slice *open;
	uint32_t nopen, open_cap;
	struct held_event held[REORDER];	/* a ring from held_head, by end */
	uint32_t held_head, nheld;
	int64_t last_end;		/* of the last event handed over */
	bool eof;
	bool host_declared;		/* host_track(): its process declared */
	struct pb ann;			/* scratch: a begin's scattered annotations */
};

/* An input and the end of its next event, beside it as in held_event. */
struct next_input {
	int64_t end;
	struct input *in;
};

struct merge {
	struct input *in;
	unsigned int n;
	struct next_input *heap;	/* inputs with an event, by its end */
	unsigned int nheap;
	struct event **ring;		/* held events, ids [head, next) */
	uint64_t ring_cap, head, next;
	int64_t window_ns, next_expire, block_ns;
	struct pftrace_writer *w;
	struct merge_result *res;
	uint64_t next_flow;
	uint64_t next_track;		/* the last output uuid: host_track()s are 1..n */
	int32_t next_pid;		/* the last pid given out in the merged trace */
	struct event *spare;		/* released events, for reuse */
	struct rank_id *ids;		/* by rank, as res->rank_names */
	int err;
};

static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * A message's connection and direction, from its addresses: eight bytes at
 * a time, the last eight overlapping the word before, where a byte at a
 * time was 3 % of a merge and the last few bytes a byte at a time 1 %.
 */
static uint64_t hash_words(const uint8_t *p, size_t n, uint64_t h)
{
	uint64_t w;
	size_t i;

	if (n < sizeof(w)) {
		for (w = n; n; n--)
			w = w << 8 | p[n - 1];
		return mix64(h ^ w);
	}
	h ^= n;
	for (i = 0; i + sizeof(w) < n; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = mix64(h ^ w);
	}
	memcpy(&w, p + n - sizeof(w), sizeof(w));
	return mix64(h ^ w);
}

/* ---- tracks of an input ------------------------------------------------ */

static struct track *track_slot(struct track *t, uint32_t cap, uint64_t uuid)
{
	uint32_t i = (uint32_t)mix64(uuid) & (cap - 1);

	while (t[i].uuid && t[i].uuid != uuid)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

static struct track *track_get(struct input *in, uint64_t uuid, bool create)
{
	struct track *t;

	uuid |= !uuid;
	t = track_slot(in->tracks, in->tracks_cap, uuid);
	if (t->uuid || !create)
		return t->uuid ? t : NULL;
	if (2 * (in->ntracks + 1) > in->tracks_cap) {
		uint32_t cap = in->tracks_cap * 2, i;
		struct track *nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (i = 0; i < in->tracks_cap; i++)
			if (in->tracks[i].uuid)
				*track_slot(nt, cap, in->tracks[i].uuid) = in->tracks[i];
		free(in->tracks);
		in->tracks = nt;
		in->tracks_cap = cap;
		t = track_slot(nt, cap, uuid);
	}
	t->uuid = uuid;
	in->ntracks++;
	return t;
}

static char *strndup_or_empty(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/*
 * The host's pid or tid in a track's name, as lclkctl trace names its
 * tracks ("python3 (pid 7)", "nccl (tid 9)"); 0 if none.
 */
static int64_t id_in_name(const char *name, const char *key)
{
	const char *p = name ? strrchr(name, '(') : NULL;
	size_t n = strlen(key);
	char *end;
	long long v;

	if (!p || strncmp(p + 1, key, n) || p[1 + n] != ' ')
		return 0;
	v = strtoll(p + 2 + n, &end, 10);
	return *end == ')' && v > 0 ? v : 0;
}

/* A ProcessDescriptor's or ThreadDescriptor's pid and tid, and its name. */
static void on_pt_descriptor(const struct pb_field *f, int64_t *pid, int64_t *tid,
			     const uint8_t **name, size_t *name_len)
{
	unsigned int want = f->num == TD_PROCESS ? PD_PROCESS_NAME : THD_THREAD_NAME;
	const uint8_t *q;
	struct pb_field g;

	for (q = f->buf; pb_next(&q, f->buf + f->len, &g);) {
		if (g.num == want && g.buf && !*name) {
			*name = g.buf;
			*name_len = g.len;
		} else if (g.num == PD_PID && g.wire == PB_WIRE_VARINT) {
			*pid = (int32_t)g.val;
		} else if (f->num == TD_THREAD && g.num == THD_TID && g.wire == PB_WIRE_VARINT) {
			*tid = (int64_t)g.val;
		}
	}
}

static int on_track_descriptor(struct input *in, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	const uint8_t *name = NULL;
	size_t name_len = 0;
	struct pb_field f;
	uint64_t uuid = 0, parent = 0;
	int64_t pid = 0, tid = 0;
	struct track *t;

	while (pb_next(&p, end, &f)) {
		if (f.num == TD_UUID)
			uuid = f.val;
		else if (f.num == TD_PARENT_UUID)
			parent = f.val;
		else if (f.num == TD_NAME && f.buf) {
			name = f.buf;
			name_len = f.len;
		} else if ((f.num == TD_PROCESS || f.num == TD_THREAD) && f.buf) {
			on_pt_descriptor(&f, &pid, &tid, &name, &name_len);
		}
	}
	t = track_get(in, uuid, true);
	if (!t)
		return -ENOMEM;
	if (t->name)
		return 0;	/* concatenated files declare again */
	t->parent = parent;
	t->name = name ? strndup_or_empty(name, name_len) : NULL;
	t->pid = pid > 0 ? pid : id_in_name(t->name, "pid");
	t->tid = tid > 0 ? tid : id_in_name(t->name, "tid");
	return 0;
}

/* The rank_id key of a process track: its host track's name and its pid. */
static uint64_t process_key(struct input *in, const struct track *proc)
{
	const struct track *host = proc->parent ? track_get(in, proc->parent, false) : NULL;

	if (!proc->pid || !host || !host->name)
		return 0;
	return hash_words((const uint8_t *)host->name, strlen(host->name),
			  (uint64_t)proc->pid) | 1;
}

/*
 * The rank of a process track (a thread's parent, or a track of its own):
 * "host process-name".
 */
static int add_rank(struct merge *m, struct input *in, struct track *proc, uint32_t *rank)
{
	struct merge_result *res = m->res;
	const char *host = res->inputs[in->idx].name;
	struct rank_id *ids;
	char **names;
	size_t len;

	if (proc->rank) {
		*rank = proc->rank - 1;
		return 0;
	}
	names = realloc(res->rank_names, (res->nranks + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	res->rank_names = names;
	ids = realloc(m->ids, (res->nranks + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	m->ids = ids;
	ids[res->nranks] = (struct rank_id){
		.key = process_key(in, proc), .input = in->idx, .pair = -1,
	};
	len = strlen(host) + (proc->name ? strlen(proc->name) : 1) + 2;
	names[res->nranks] = malloc(len);
	if (!names[res->nranks])
		return -ENOMEM;
	snprintf(names[res->nranks], len, "%s %s", host, proc->name ? proc->name : "?");
	*rank = res->nranks++;
	proc->rank = *rank + 1;
	return 0;
}

/* The output uuid of a host's process track: 1..n, before all others. */
static uint64_t host_track(const struct input *in)
{
	return in->idx + 1;
}

static void set_err(struct merge *m, int err)
{
	if (err && !m->err)
		m->err = err;
}

/*
 * Pids in the merged trace: hosts have equal pids, and Perfetto merges
 * processes by pid, so each process of each host is given the next pid
 * (1, 2, ...: no limit on hosts but int32's), its host's own pid staying
 * in its name. Each thread's tid is its host's with the host's index + 1
 * above bit 32 (ThreadDescriptor's tid is 64 bits), but for a main thread,
 * whose tid is its process's pid.
 */
static int32_t new_pid(struct merge *m)
{
	if (m->next_pid == INT32_MAX)
		set_err(m, -EOVERFLOW);
	return m->next_pid < INT32_MAX ? ++m->next_pid : INT32_MAX;
}

/* A process's output track, declared on first use: "host: name". */
static uint64_t out_process(struct merge *m, struct input *in, struct track *proc)
{
	const char *host = m->res->inputs[in->idx].name;
	char name[320];

	if (proc->proc_out)
		return proc->proc_out;
	proc->proc_out = ++m->next_track;
	proc->out_pid = new_pid(m);
	snprintf(name, sizeof(name), "%s: %s", host, proc->name ? proc->name : "?");
	if (m->w)
		set_err(m, pftrace_process(m->w, proc->proc_out, proc->out_pid, name));
	return proc->proc_out;
}

/* The host's own process track, for tracks of no process. */
static uint64_t out_host(struct merge *m, struct input *in)
{
	if (!in->host_declared && m->w)
		set_err(m, pftrace_process(m->w, host_track(in), new_pid(m),
					   m->res->inputs[in->idx].name));
	in->host_declared = true;
	return host_track(in);
}

/* The process track of t: itself or its nearest ancestor with a pid. */
static struct track *process_of(struct input *in, struct track *t)
{
	int depth;

	for (depth = 0; t && depth < 8; depth++) {
		if (t->pid && !t->tid)
			return t;
		t = t->parent ? track_get(in, t->parent, false) : NULL;
	}
	return NULL;
}

/* Declare t's output track: a thread's, a process's, or one under either. */
static void declare_out(struct merge *m, struct input *in, struct track *t, struct track *pt)
{
	struct track *proc = process_of(in, t->tid ? pt : t);
	uint64_t parent;
	char name[256];
	int64_t tid;

	if (proc == t) {
		t->out = out_process(m, in, t);
		return;
	}
	parent = proc ? out_process(m, in, proc) : out_host(m, in);
	/*
	 * Numbered in order, not hashed: every packet names its track, and a
	 * small number is a varint of two bytes where a hash took ten.
	 */
	t->out = ++m->next_track;
	if (!m->w)
		return;
	if (t->tid && proc) {
		tid = t->tid == proc->pid ? proc->out_pid : (int64_t)(in->idx + 1) << 32 | t->tid;
		set_err(m, pftrace_thread(m->w, t->out, proc->out_pid, tid,
					  t->name ? t->name : "?"));
		return;
	}
	if (pt && pt != proc && pt->parent && pt->name)
		snprintf(name, sizeof(name), "%s / %s", pt->name, t->name ? t->name : "?");
	else
		snprintf(name, sizeof(name), "%s", t->name ? t->name : "?");
	set_err(m, pftrace_track(m->w, t->out, parent, name));
}

/*
 * The output track of an input track: a thread's track (ThreadDescriptor)
 * under its process's (ProcessDescriptor, named "host: process"), other
 * tracks under their process, or under the host's own process track.
 */
static uint64_t out_track(struct merge *m, struct input *in, uint64_t uuid,
			  uint32_t *rank, uint8_t *main)
{
	struct track *t = track_get(in, uuid, true), *pt, *proc;

	if (!t)
		return 0;
	if (t->out) {
		*rank = t->event_rank;
		*main = t->event_main;
		return t->out;
	}
	pt = t->parent ? track_get(in, t->parent, false) : NULL;
	declare_out(m, in, t, pt);
	if (add_rank(m, in, pt ? pt : t, &t->event_rank))
		set_err(m, -ENOMEM);
	proc = t->tid ? process_of(in, pt) : NULL;
	t->event_main = proc && t->tid == proc->pid;
	*rank = t->event_rank;
	*main = t->event_main;
	return t->out;
}

/* ---- events -------------------------------------------------------------- */

/* A literal's length is known here: no strlen() per field of every event. */
#define str_is(p, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((p), (lit), sizeof(lit) - 1))

/* What the merge reads from a begin's annotations; the rest passes through. */
struct ann_facts {
	int64_t bound_begin, bound_end;
	uint64_t seq, len;
	const uint8_t *src, *dst, *group;
	size_t src_len, dst_len, group_len;
	bool data;			/* outcome "data": the call got something */
	bool zero;			/* outcome "zero": a futex wait woken */
};

static void annotation(const uint8_t *p, size_t len, struct ann_facts *a)
{
	const uint8_t *end = p + len, *name = NULL, *str = NULL;
	size_t name_len = 0, str_len = 0;
	struct pb_field f;
	int64_t val = 0;
	bool has_int = false;
	uint64_t v;

	/*
	 * As lclkctl trace writes one: its name, then its value, taken without
	 * the loop over fields, a sixth of the merge's reading.
	 */
	if (pb_take_bytes(&p, end, DA_NAME, &name, &name_len)) {
		if (pb_take_varint(&p, end, DA_INT_VALUE, &v)) {
			val = (int64_t)v;
			has_int = true;
		} else {
			pb_take_bytes(&p, end, DA_STRING_VALUE, &str, &str_len);
		}
	}
	while (pb_next(&p, end, &f)) {
		if (f.num == DA_NAME && f.buf) {
			name = f.buf;
			name_len = f.len;
		} else if (f.num == DA_INT_VALUE && f.wire == PB_WIRE_VARINT) {
			val = (int64_t)f.val;
			has_int = true;
		} else if (f.num == DA_STRING_VALUE && f.buf) {
			str = f.buf;
			str_len = f.len;
		}
	}
	if (!name)
		return;
	if (has_int) {
		bool both = str_is(name, name_len, "bound_ns");

		if (both || str_is(name, name_len, "bound_begin_ns"))
			a->bound_begin = val;
		if (both || str_is(name, name_len, "bound_end_ns"))
			a->bound_end = val;
		if (str_is(name, name_len, "seq"))
			a->seq = val;
		if (str_is(name, name_len, "len"))
			a->len = val;
	} else if (str) {
		if (str_is(name, name_len, "src")) {
			a->src = str;
			a->src_len = str_len;
		} else if (str_is(name, name_len, "dst")) {
			a->dst = str;
			a->dst_len = str_len;
		} else if (str_is(name, name_len, "group")) {
			a->group = str;
			a->group_len = str_len;
		} else if (str_is(name, name_len, "outcome")) {
			a->data = str_is(str, str_len, "data");
			a->zero = str_is(str, str_len, "zero");
		}
	}
}

/* The calls lclkctl trace times that wait for data (trace_sys.c's names). */
static bool waiting_call(const uint8_t *name, size_t len)
{
#define CALL(s) { s, sizeof(s) - 1 }
	static const struct {
		const char *name;
		size_t len;
	} calls[] = {
		CALL("recvfrom"), CALL("recvmsg"), CALL("recvmmsg"), CALL("read"),
		CALL("readv"), CALL("poll"), CALL("ppoll"), CALL("select"), CALL("pselect6"),
		CALL("epoll_wait"), CALL("epoll_pwait"), CALL("epoll_pwait2"),
		CALL("futex_wait"), CALL("futex_waitv"),
	};
#undef CALL
	unsigned int i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (len == calls[i].len && !memcmp(name, calls[i].name, len))
			return true;
	return false;
}

/* An event with room for data_len bytes of data, zeroed but for its buffers. */
static struct event *event_get(struct merge *m, size_t data_len)
{
	struct event *e = m->spare;
	uint64_t *flows = NULL;
	uint32_t flows_cap = 0;
	size_t cap = EVENT_DATA;

	if (e && data_len <= EVENT_DATA) {
		m->spare = e->next_spare;
		flows = e->flows;
		flows_cap = e->flows_cap;
	} else {
		if (data_len > cap)
			cap = data_len;
		e = malloc(sizeof(*e) + cap);
		if (!e)
			return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->flows = flows;
	e->flows_cap = flows_cap;
	e->data_cap = cap;
	return e;
}

static void event_free(struct event *e)
{
	free(e->flows);
	free(e);
}

static void event_put(struct merge *m, struct event *e)
{
	if (e->data_cap == EVENT_DATA) {
		e->next_spare = m->spare;
		m->spare = e;
		return;
	}
	event_free(e);
}

static struct event *new_event(struct merge *m, struct input *in, uint64_t track,
			       int64_t ts, const uint8_t *name, size_t name_len,
			       const uint8_t *cat, size_t cat_len,
			       const uint8_t *ann, size_t ann_len, const struct ann_facts *a)
{
	struct event *e;

	if (name_len > UINT16_MAX)
		name_len = UINT16_MAX;
	if (cat_len > UINT16_MAX)
		cat_len = UINT16_MAX;
	e = event_get(m, name_len + cat_len + 2 + ann_len);
	if (!e)
		return NULL;
	e->begin = e->end = ts;
	e->bound_begin = a->bound_begin;
	e->bound_end = a->bound_end;
	e->track = out_track(m, in, track, &e->rank, &e->main);
	e->blocked = str_is(cat, cat_len, "syscall") && waiting_call(name, name_len);
	e->waits = a->data && e->blocked;
	e->woken = a->zero && e->blocked &&
		   (str_is(name, name_len, "futex_wait") || str_is(name, name_len, "futex_waitv"));
	e->loop = e->blocked && name_len > 5 && !memcmp(name, "epoll", 5);
	e->input = in->idx;
	e->name_len = name_len;
	e->cat_len = cat_len;
	e->ann_len = ann_len;
	memcpy(e->data, name, name_len);
	e->data[name_len] = 0;
	memcpy(e->data + name_len + 1, cat, cat_len);
	e->data[name_len + 1 + cat_len] = 0;
	memcpy(e->data + name_len + cat_len + 2, ann, ann_len);
	if (a->group && str_is(cat, cat_len, ROUND_CATEGORY)) {
		struct cluster_round *cr = m->res->rounds;

		e->coll_group = cluster_round_intern(cr, a->group, a->group_len);
		e->coll_op = cluster_round_intern(cr, name, name_len);
		e->coll_seq = a->seq;
		/* a name not kept (no memory): the round is not either */
		e->coll = e->coll_group != UINT32_MAX && e->coll_op != UINT32_MAX;
	}
	if (a->src && a->dst && a->len && str_is(cat, cat_len, MSG_CATEGORY)) {
		if (str_is(name, name_len, MSG_SEND))
			e->msg = MSG_IS_SEND;
		else if (str_is(name, name_len, MSG_RECV))
			e->msg = MSG_IS_RECV;
		e->seq = a->seq;
		e->len = a->len;
		/* The direction of the bytes, the same at both ends. */
		e->conn = hash_words(a->dst, a->dst_len, hash_words(a->src, a->src_len, 0));
	}
	return e;
}

static struct held_event *held_at(struct input *in, uint32_t i)
{
	return &in->held[(in->held_head + i) & (REORDER - 1)];
}

/*
 * Inserted from the back: lclkctl trace writes events in the order they
 * end but for a few, so an event moves past few others, where a heap
 * sifted every event through six levels, 4 % of a merge. Events that end
 * together keep the order they were read in.
 */
static void reorder_push(struct input *in, struct event *e)
{
	uint32_t i = in->nheld++;

	for (; i && held_at(in, i - 1)->end > e->end; i--)
		*held_at(in, i) = *held_at(in, i - 1);
	*held_at(in, i) = (struct held_event){ e->end, e };
}

static struct event *reorder_pop(struct input *in)
{
	struct event *first = held_at(in, 0)->ev;

	in->held_head = (in->held_head + 1) & (REORDER - 1);
	in->nheld--;
	return first;
}

static int open_push(struct input *in, uint64_t seq_id, uint64_t track, struct event *e)
{
	if (in->nopen == in->open_cap) {
		uint32_t cap = in->open_cap ? in->open_cap * 2 : 16;
		struct open_slice *o = realloc(in->open, cap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		in->open = o;
		in->open_cap = cap;
	}
	in->open[in->nopen++] = (struct open_slice){ seq_id, track, e };
	return 0;
}

/* The innermost open slice of (seq_id, track), taken off the list. */
static struct event *open_pop(struct input *in, uint64_t seq_id, uint64_t track)
{
	uint32_t i;

	for (i = in->nopen; i-- > 0;) {
		struct open_slice *o = &in->open[i];

		if (o->seq_id == seq_id && o->track == track) {
			struct event *e = o->ev;

			*o = in->open[--in->nopen];
			return e;
		}
	}
	return NULL;
}

/*
 * The debug annotations pass through as they were encoded: one range of
 * the packet when they come together, as lclkctl trace writes them, and
 * gathered into in->ann only when other fields come between them.
 */
struct ann_range {
	const uint8_t *start, *end;
};

static void ann_add(struct input *in, struct ann_range *r, const uint8_t *field,
		    const uint8_t *end)
{
	if (field != r->end) {
		if (r->start)
			pb_raw(&in->ann, r->start, r->end - r->start);
		r->start = field;
	}
	r->end = end;
}

static int on_track_event(struct merge *m, struct input *in, const uint8_t *p,
			  size_t len, int64_t ts, uint64_t seq_id)
{
	const uint8_t *end = p + len, *name = NULL, *cat = NULL, *field, *ann, *da;
	size_t name_len = 0, cat_len = 0, ann_len, da_len;
	struct ann_facts a = {
		.bound_begin = CLUSTER_BOUND_UNKNOWN,
		.bound_end = CLUSTER_BOUND_UNKNOWN,
	};
	struct ann_range range = { NULL, NULL };
	uint64_t type = 0, track = 0;
	struct pb_field f;
	struct event *e;

	/*
	 * As lclkctl trace writes them: the type, the track, the category, the
	 * name, then the annotations together.
	 */
	if (pb_take_varint(&p, end, TE_TYPE, &type) &&
	    pb_take_varint(&p, end, TE_TRACK_UUID, &track) &&
	    pb_take_bytes(&p, end, TE_CATEGORIES, &cat, &cat_len))
		pb_take_bytes(&p, end, TE_NAME, &name, &name_len);
	for (field = p; pb_take_bytes(&p, end, TE_DEBUG_ANNOTATIONS, &da, &da_len); field = p) {
		annotation(da, da_len, &a);
		ann_add(in, &range, field, p);
	}
	for (field = p; pb_next(&p, end, &f); field = p) {
		switch (f.num) {
		case TE_TYPE:
			type = f.val;
			break;
		case TE_TRACK_UUID:
			track = f.val;
			break;
		case TE_NAME:
			name = f.buf;
			name_len = f.len;
			break;
		case TE_CATEGORIES:
			cat = f.buf;	/* the first category: ours have one */
			cat_len = cat ? f.len : 0;
			break;
		case TE_DEBUG_ANNOTATIONS:
			if (!f.buf)
				break;
			annotation(f.buf, f.len, &a);
			ann_add(in, &range, field, p);
			break;
		}
	}
	if (type == TYPE_SLICE_END) {
		in->ann.len = 0;
		in->ann.overflow = false;
		e = open_pop(in, seq_id, track);
		if (!e)
			return 0;	/* its begin was not in the file */
		e->end = ts;
		if (a.bound_end != CLUSTER_BOUND_UNKNOWN)
			e->bound_end = a.bound_end;
		reorder_push(in, e);
		return 0;
	}
	if (in->ann.len || in->ann.overflow) {
		if (range.start)
			pb_raw(&in->ann, range.start, range.end - range.start);
		ann = in->ann.buf;
		ann_len = in->ann.overflow ? 0 : in->ann.len;
		in->ann.len = 0;
		in->ann.overflow = false;
	} else if (range.start) {
		ann = range.start;
		ann_len = range.end - range.start;
	} else {
		ann = in->ann.buf;	/* none, but not NULL: memcpy()'s source */
		ann_len = 0;
	}
	if (type != TYPE_SLICE_BEGIN && type != TYPE_INSTANT)
		return 0;
	if (ann_len > sizeof(in->ann.buf))
		ann_len = 0;	/* too many to keep: the facts are read */
	if (!name) {
		name = (const uint8_t *)"?";
		name_len = 1;
	}
	e = new_event(m, in, track, ts, name, name_len, cat ? cat : (const uint8_t *)"", cat_len,
		      ann, ann_len, &a);
	if (!e)
		return -ENOMEM;
	if (type == TYPE_INSTANT) {
		e->instant = 1;
		reorder_push(in, e);
		return 0;
	}
	return open_push(in, seq_id, track, e);
}

static void on_defaults(struct input *in, struct merge_result *res,
			const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	struct pb_field f;

	while (pb_next(&p, end, &f))
		if (f.num == DEF_TIMESTAMP_CLOCK_ID && f.val == CLOCK_ID_MONOTONIC)
			res->inputs[in->idx].logical = false;
}

static int on_packet(struct merge *m, struct input *in, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len, *ev = NULL;
	size_t ev_len = 0;
	uint64_t ts = 0, seq_id = 0;
	struct pb_field f;

	/* As lclkctl trace writes them: the time, the event, its sequence. */
	if (pb_take_varint(&p, end, PKT_TIMESTAMP, &ts) &&
	    pb_take_bytes(&p, end, PKT_TRACK_EVENT, &ev, &ev_len))
		pb_take_varint(&p, end, PKT_SEQUENCE_ID, &seq_id);
	while (pb_next(&p, end, &f)) {
		switch (f.num) {
		case PKT_TIMESTAMP:
			ts = f.val;
			break;
		case PKT_SEQUENCE_ID:
			seq_id = f.val;
			break;
		case PKT_TRACK_EVENT:
			ev = f.buf;
			ev_len = f.len;
			break;
		case PKT_TRACK_DESCRIPTOR:
			if (f.buf) {
				int err = on_track_descriptor(in, f.buf, f.len);

				if (err)
					return err;
			}
			break;
		case PKT_DEFAULTS:
			if (f.buf)
				on_defaults(in, m->res, f.buf, f.len);
			break;
		}
	}
	return ev ? on_track_event(m, in, ev, ev_len, ts, seq_id) : 0;
}

/* ---- the held window and the output ------------------------------------- */

static struct event **ring_at(struct merge *m, uint64_t id)
{
	return &m->ring[id & (m->ring_cap - 1)];
}

static struct event *held(struct merge *m, uint64_t id)
{
	return id >= m->head && id < m->next ? *ring_at(m, id) : NULL;
}

static int add_flow(struct event *e, uint64_t id)
{
	if (e->nflows == e->flows_cap) {
		uint32_t cap = e->flows_cap ? e->flows_cap * 2 : 2;
		uint64_t *f = realloc(e->flows, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		e->flows = f;
		e->flows_cap = cap;
	}
	e->flows[e->nflows++] = id;
	return 0;
}

/* The most s's clock can be ahead of r's: the least OWD of r's host to s's. */
static int64_t sender_ahead(const struct merge *m, const struct msg_end *s,
			    const struct msg_end *r)
{
	const struct cluster_pair *back = cluster_pair(m->res->match, r->host, s->host);

	return back->matched ? back->min_owd_ns : CLUSTER_AHEAD_UNKNOWN;
}

static void on_match(void *ctx, const struct msg_end *s, const struct msg_end *r)
{
	struct merge *m = ctx;
	struct event *se = held(m, s->id), *re = held(m, r->id);
	uint64_t id;

	cluster_wait_message(m->res->wait, s, r, sender_ahead(m, s, r));
	if (!se || !re || !m->w)
		return;		/* one end is written already: no arrow */
	id = ++m->next_flow;
	if (add_flow(se, id) || add_flow(re, id)) {
		m->err = -ENOMEM;
		return;
	}
	m->res->flows++;
}

static int write_event(struct merge *m, struct event *e)
{
	int64_t earliest, latest;
	struct pftrace_int_arg args[2];
	struct pftrace_event pe = {
		.track = e->track,
		.begin_ns = e->begin,
		.end_ns = e->end,
		.instant = e->instant,
		.name = e->data,
		.name_len = e->name_len,
		.category = e->cat_len ? e->data + e->name_len + 1 : NULL,
		.category_len = e->cat_len,
		.annotations = (const uint8_t *)e->data + e->name_len + e->cat_len + 2,
		.annotations_len = e->ann_len,
		.args = args,
	};

	/*
	 * A window only from bounds that are bounds: known, not negative, and
	 * not so large that the window's edge would wrap past the int64 range.
	 */
	if (cluster_bound_known(e->bound_begin) && cluster_bound_known(e->bound_end) &&
	    !__builtin_sub_overflow(e->begin, e->bound_begin, &earliest) &&
	    !__builtin_add_overflow(e->end, e->bound_end, &latest)) {
		args[0] = PFTRACE_INT_ARG("earliest_ns", earliest);
		args[1] = PFTRACE_INT_ARG("latest_ns", latest);
		pe.nargs = 2;
	}
	if (e->msg == MSG_IS_SEND) {
		pe.flows_out = e->flows;
		pe.nflows_out = e->nflows;
	} else if (e->msg == MSG_IS_RECV) {
		pe.flows_in = e->flows;
		pe.nflows_in = e->nflows;
	}
	return pftrace_event(m->w, &pe);
}

/*
 * The events held longest are written out, out of cache by then: the first
 * look at each was 12 % of a merge's time (perf, 64 hosts). Fetched this
 * many events ahead, they are there when written.
 */
#define RELEASE_AHEAD	8

static void prefetch_event(const struct event *e, size_t lines)
{
	const char *p = (const char *)e;

	while (lines--) {
		__builtin_prefetch(p);
		p += 64;
	}
}

static void release(struct merge *m)
{
	struct event *e = *ring_at(m, m->head);
	int err;

	if (m->head + RELEASE_AHEAD < m->next)
		prefetch_event(*ring_at(m, m->head + RELEASE_AHEAD),
			       (sizeof(*e) + EVENT_DATA) / 64);
	m->head++;
	if (m->w && !m->err) {
		err = write_event(m, e);
		if (err)
			m->err = err;
	}
	event_put(m, e);
}

static int hold(struct merge *m, struct event *e)
{
	if (m->next - m->head == m->ring_cap) {
		uint64_t cap = m->ring_cap ? m->ring_cap * 2 : 1024, id;
		struct event **r = malloc(cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		for (id = m->head; id < m->next; id++)
			r[id & (cap - 1)] = *ring_at(m, id);
		free(m->ring);
		m->ring = r;
		m->ring_cap = cap;
	}
	e->id = m->next++;
	*ring_at(m, e->id) = e;
	return 0;
}

/*
 * The rank whose waits a recorder's collective slice of rank holds: itself
 * when its own input traced it too (both in one file); else the one
 * process of another input with the same host name and pid that has no
 * collective slices of its own (the tracer's), once it is seen; rank
 * itself until then, or when there are several (hosts of one name whose
 * pids collide: which one is not known) or none (the recorder alone).
 */
static uint32_t paired_rank(struct merge *m, uint32_t rank)
{
	struct rank_id *id = &m->ids[rank];
	uint32_t i, found = 0, pair = rank;

	id->coll = true;
	if (id->pair >= 0 || !id->key || id->traced)
		return id->pair >= 0 ? (uint32_t)id->pair : rank;
	for (i = 0; i < m->res->nranks; i++) {
		const struct rank_id *o = &m->ids[i];

		if (i != rank && o->key == id->key && o->input != id->input && !o->coll) {
			found++;
			pair = i;
		}
	}
	if (found != 1)
		return rank;
	id->pair = pair;
	return pair;
}

/* Recorders' processes left without a tracer's: their rounds have no waits. */
static void count_unpaired(struct merge *m)
{
	uint32_t i;

	for (i = 0; i < m->res->nranks; i++)
		if (m->ids[i].coll && m->ids[i].pair < 0 && !m->ids[i].traced)
			cluster_round_count_unpaired(m->res->rounds);
}

/* A settled wait, for its round by collective. */
static int on_settled(void *ctx, const struct settled_wait *w)
{
	struct merge *m = ctx;

	return cluster_round_wait(m->res->rounds, w);
}

static int on_event(struct merge *m, struct event *e)
{
	struct merge_result *res = m->res;
	struct merge_input_stats *st = &res->inputs[e->input];
	struct msg_end me;
	int err;

	st->events++;
	res->events++;
	if (res->events == 1)
		res->first_ns = e->end;
	if (e->end > res->last_ns)
		res->last_ns = e->end;
	if (e->bound_end != CLUSTER_BOUND_UNKNOWN &&
	    (st->max_bound_ns == CLUSTER_BOUND_UNKNOWN || e->bound_end > st->max_bound_ns))
		st->max_bound_ns = e->bound_end;
	err = hold(m, e);
	if (err)
		return err;
	if ((e->waits || e->woken || e->msg) && e->rank < res->nranks)
		m->ids[e->rank].traced = true;
	if (e->blocked && e->main && e->rank < res->nranks) {
		err = cluster_wait_main(res->wait, e->rank, e->begin, e->end, e->bound_begin);
		if (err)
			return err;
	}
	if ((e->waits || e->woken || e->msg == MSG_IS_RECV) && e->end - e->begin >= m->block_ns) {
		/*
		 * Another thread's epoll or woken futex: gloo's I/O thread and
		 * workers, idle between collectives. A poll or a receive (Open
		 * MPI's, NCCL's) is made by whoever needs the data.
		 */
		bool aux = !e->main && (e->loop || e->woken);

		err = cluster_wait_block(res->wait, e->rank, e->begin, e->end, e->bound_begin,
					 (e->woken ? CLUSTER_BLOCK_WOKEN : 0) |
					 (aux ? CLUSTER_BLOCK_AUX : 0));
		if (err)
			return err;
	}
	if (e->coll && !e->instant && e->rank < res->nranks) {
		err = cluster_round_slice(res->rounds, paired_rank(m, e->rank), e->coll_group,
					  e->coll_op, e->coll_seq, e->begin, e->end,
					  e->bound_begin, e->bound_end);
		if (err)
			return err;
	}
	if (e->msg) {
		me = (struct msg_end){
			.host = e->input,
			.rank = e->rank,
			.t_ns = e->msg == MSG_IS_SEND ? e->begin : e->end,
			.bound_ns = e->msg == MSG_IS_SEND ? e->bound_begin : e->bound_end,
			.seq = e->seq,
			.len = e->len,
			.id = e->id,
		};
		err = cluster_wait_seen(res->wait, e->rank, e->msg == MSG_IS_SEND, me.t_ns,
					me.bound_ns);
		err = err ?: e->msg == MSG_IS_SEND ? cluster_send(res->match, e->conn, &me) :
						     cluster_recv(res->match, e->conn, &me);
		if (err)
			return err;
	}
	while (m->head < m->next && (*ring_at(m, m->head))->end < e->end - m->window_ns)
		release(m);
	if (e->end >= m->next_expire) {
		cluster_expire(res->match, e->end);
		cluster_wait_settle(res->wait, e->end);
		set_err(m, cluster_wait_hook_err(res->wait));
		set_err(m, cluster_round_settle(res->rounds, e->end));
		m->next_expire = e->end + m->window_ns;
	}
	return m->err;
}

/* ---- the k-way merge ----------------------------------------------------- */

static int64_t head_end(struct input *in)
{
	return held_at(in, 0)->end;
}

static void inputs_sift_down(struct merge *m, unsigned int i)
{
	unsigned int c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= m->nheap)
			return;
		if (c + 1 < m->nheap && m->heap[c + 1].end < m->heap[c].end)
			c++;
		if (m->heap[i].end <= m->heap[c].end)
			return;
		struct next_input t = m->heap[i];

		m->heap[i] = m->heap[c];
		m->heap[c] = t;
		i = c;
	}
}

/*
 * Each input in the heap has its next event first among its held ones;
 * taking it reads the file until REORDER are held again.
 */
static void fill_input(struct merge *m, struct input *in)
{
	const uint8_t *pkt;
	size_t len;
	int ret;

	while (!in->eof && in->nheld < REORDER) {
		ret = pftrace_next_packet(&in->rd, &pkt, &len);
		if (ret <= 0) {
			in->eof = true;
			if (ret < 0 && !m->err)
				m->err = ret;
			break;
		}
		ret = on_packet(m, in, pkt, len);
		if (ret && !m->err)
			m->err = ret;
	}
}

static int run(struct merge *m)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		fill_input(m, &m->in[i]);
		if (m->in[i].nheld)
			m->heap[m->nheap++] = (struct next_input){ head_end(&m->in[i]), &m->in[i] };
	}
	for (i = m->nheap / 2 + 1; i-- > 0;)
		inputs_sift_down(m, i);
	/*
	 * Each input's clock is in its first packet, read by now: the merge is
	 * in logical time if they all are, else in CLOCK_MONOTONIC (and not
	 * comparable across hosts: cmd_trace_merge.c says so).
	 */
	if (m->w) {
		bool logical = true;

		for (i = 0; i < m->n; i++)
			logical &= m->res->inputs[i].logical;
		pftrace_writer_clock(m->w, logical);
	}
	while (m->nheap && !m->err) {
		struct input *in = m->heap[0].in;
		struct event *e = reorder_pop(in);

		/*
		 * Its next event is taken when every other input has had its
		 * turn, out of cache by then: 10 % of a merge's time was the
		 * first look at it. Fetched now, it is there.
		 */
		if (in->nheld)
			prefetch_event(held_at(in, 0)->ev, 2);

		if (e->end < in->last_end)
			m->res->inputs[in->idx].late++;
		else
			in->last_end = e->end;
		fill_input(m, in);
		if (in->nheld)
			m->heap[0].end = head_end(in);
		else
			m->heap[0] = m->heap[--m->nheap];
		inputs_sift_down(m, 0);
		m->err = on_event(m, e);
	}
	while (m->head < m->next)
		release(m);
	cluster_expire(m->res->match, INT64_MAX);	/* what still waits never matches */
	cluster_wait_settle(m->res->wait, INT64_MAX);
	set_err(m, cluster_wait_hook_err(m->res->wait));
	set_err(m, cluster_round_settle(m->res->rounds, INT64_MAX));
	count_unpaired(m);
	return m->err;
}

static char *host_label(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;
	char *s;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 8 && !strcmp(base + n - 8, ".pftrace"))
		n -= 8;
	s = malloc(n + 1);
	if (s) {
		memcpy(s, base, n);
		s[n] = 0;
	}
	return s;
}

static void free_inputs(struct merge *m)
{
	unsigned int i, j;

	for (i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		pftrace_reader_close(&in->rd);
		for (j = 0; j < in->tracks_cap; j++)
			free(in->tracks[j].name);
		free(in->tracks);
		for (j = 0; j < in->nopen; j++)
			event_free(in->open[j].ev);
		free(in->open);
		for (j = 0; j < in->nheld; j++)
			event_free(held_at(in, j)->ev);
	}
	while (m->spare) {
		struct event *e = m->spare;

		m->spare = e->next_spare;
		event_free(e);
	}
	free(m->in);
	free(m->heap);
	free(m->ring);
	free(m->ids);
}

int trace_merge(const char *const *paths, unsigned int n, const char *out,
		const struct merge_opts *o, struct merge_result *res,
		const char **err_path)
{
	struct merge m = {
		.n = n,
		.window_ns = o && o->window_ns ? o->window_ns : MERGE_DEFAULT_WINDOW_NS,
		.block_ns = o && o->block_ns ? o->block_ns : 1000000,
		.res = res,
		.next_track = n,
	};
	unsigned int i;
	int err = 0;

	memset(res, 0, sizeof(*res));
	*err_path = NULL;
	res->ninputs = n;
	res->inputs = calloc(n, sizeof(*res->inputs));
	m.in = calloc(n, sizeof(*m.in));
	m.heap = calloc(n, sizeof(*m.heap));
	res->match = cluster_match_new(n, 10 * m.window_ns, on_match, &m);
	res->wait = cluster_wait_new(o ? o->link_ns : 0, m.window_ns, m.block_ns);
	res->rounds = cluster_round_new(m.window_ns, o && o->link_ns ? o->link_ns :
					CLUSTER_DEFAULT_LINK_NS);
	if (!res->inputs || !m.in || !m.heap || !res->match || !res->wait || !res->rounds) {
		err = -ENOMEM;
		goto out;
	}
	cluster_wait_set_hook(res->wait, on_settled, &m);
	for (i = 0; i < n; i++) {
		struct input *in = &m.in[i];

		in->idx = i;
		res->inputs[i].logical = true;
		res->inputs[i].max_bound_ns = CLUSTER_BOUND_UNKNOWN;
		res->inputs[i].name = host_label(paths[i]);
		in->tracks_cap = 64;
		in->tracks = calloc(in->tracks_cap, sizeof(*in->tracks));
		if (!res->inputs[i].name || !in->tracks) {
			err = -ENOMEM;
			goto out;
		}
		err = pftrace_reader_open(&in->rd, paths[i]);
		if (err) {
			*err_path = paths[i];
			goto out;
		}
	}
	if (out) {
		m.w = pftrace_writer_open(out);
		if (!m.w) {
			err = -errno;
			*err_path = out;
			goto out;
		}
	}
	if (!err)
		err = run(&m);
	if (m.w) {
		/* The writer's first error, if it stopped the run as well. */
		int cerr = pftrace_writer_close(m.w);

		if (cerr && (!err || err == cerr)) {
			err = cerr;
			*err_path = out;
		}
	}
out:
	free_inputs(&m);
	return err;
}

void merge_result_free(struct merge_result *res)
{
	unsigned int i;

	for (i = 0; res->inputs && i < res->ninputs; i++)
		free(res->inputs[i].name);
	free(res->inputs);
	for (i = 0; i < res->nranks; i++)
		free(res->rank_names[i]);
	free(res->rank_names);
	cluster_match_free(res->match);
	cluster_wait_free(res->wait);
	cluster_round_free(res->rounds);
	memset(res, 0, sizeof(*res));
}
