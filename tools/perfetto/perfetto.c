// SPDX-License-Identifier: GPL-2.0
/*
 * Perfetto protobuf output, encoded by hand: a trace is "repeated
 * TracePacket packet = 1", and the few messages used here need only varints
 * and length-delimited fields. Field numbers are those of Perfetto's
 * protos/perfetto/trace/trace_packet.proto and track_event/.
 */
#include <errno.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pb.h"
#include "perfetto.h"
#include "perfetto_proto.h"

struct perfetto {
	FILE *f;
	char host[256];
	uint64_t host_hash;
	uint32_t seq_id;
	bool started;
	void *seen;		/* tsearch tree of the uuids declared */
};

static uint64_t fnv1a64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

/* splitmix64's finaliser: distinct inputs, well-spread distinct outputs. */
static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Track uuids: kind 0 = host, 1 = process, 2 = thread; never 0 (global). */
static uint64_t track_uuid(const struct perfetto *p, unsigned int kind,
			   uint32_t id)
{
	return mix64(p->host_hash + ((uint64_t)kind << 32 | id)) | 1;
}

static int put_packet(struct perfetto *p, struct pb *pkt)
{
	struct pb hdr = { .len = 0 };

	pb_uint(pkt, PKT_SEQUENCE_ID, p->seq_id);
	if (!p->started) {
		pb_uint(pkt, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
		p->started = true;
	}
	if (pkt->overflow)
		return -EMSGSIZE;
	pb_varint(&hdr, TRACE_PACKET << 3 | PB_WIRE_LEN);
	pb_varint(&hdr, pkt->len);
	if (fwrite(hdr.buf, hdr.len, 1, p->f) != 1 ||
	    fwrite(pkt->buf, pkt->len, 1, p->f) != 1)
		return -errno;
	return 0;
}

static int uuid_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Returns 1 the first time uuid is seen, 0 after, -ENOMEM. */
static int first_sight(struct perfetto *p, uint64_t uuid)
{
	uint64_t *key = malloc(sizeof(*key)), **found;

	if (!key)
		return -ENOMEM;
	*key = uuid;
	found = tsearch(key, &p->seen, uuid_cmp);
	if (!found) {
		free(key);
		return -ENOMEM;
	}
	if (*found != key) {
		free(key);
		return 0;
	}
	return 1;
}

static void process_name(const struct perfetto_slice *s, char *name, size_t len)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", s->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	if (!comm[0] && s->pid == s->tid)
		snprintf(comm, sizeof(comm), "%s", s->thread_name);
	snprintf(name, len, "%s (pid %u)", comm[0] ? comm : "?", s->pid);
}

/* Declare track uuid, named name, under parent (0: none), if not yet done. */
static int declare_track(struct perfetto *p, uint64_t uuid, uint64_t parent,
			 const char *name)
{
	struct pb pkt = { .len = 0 }, td = { .len = 0 };
	int err = first_sight(p, uuid);

	if (err <= 0)
		return err;
	pb_uint(&td, TD_UUID, uuid);
	pb_str(&td, TD_NAME, name);
	if (parent)
		pb_uint(&td, TD_PARENT_UUID, parent);
	pb_msg(&pkt, PKT_TRACK_DESCRIPTOR, &td);
	return put_packet(p, &pkt);
}

/* The host's, the process's and the thread's track. */
static int declare_tracks(struct perfetto *p, const struct perfetto_slice *s,
			  uint64_t thread_uuid)
{
	uint64_t host_uuid = track_uuid(p, 0, 0), proc_uuid = track_uuid(p, 1, s->pid);
	char name[64];
	int err;

	err = declare_track(p, host_uuid, 0, p->host);
	if (!err) {
		process_name(s, name, sizeof(name));
		err = declare_track(p, proc_uuid, host_uuid, name);
	}
	if (!err) {
		snprintf(name, sizeof(name), "%s (tid %u)", s->thread_name, s->tid);
		err = declare_track(p, thread_uuid, proc_uuid, name);
	}
	return err;
}

int perfetto_slice(struct perfetto *p, const struct perfetto_slice *s)
{
	uint64_t uuid = track_uuid(p, 2, s->tid);
	struct pb pkt = { .len = 0 }, ev = { .len = 0 };
	unsigned int i;
	int err;

	err = declare_tracks(p, s, uuid);
	if (err)
		return err;

	pb_uint(&ev, TE_TYPE, TYPE_SLICE_BEGIN);
	pb_uint(&ev, TE_TRACK_UUID, uuid);
	pb_str(&ev, TE_CATEGORIES, s->category ? s->category : "syscall");
	pb_str(&ev, TE_NAME, s->name);
	for (i = 0; i < s->nargs; i++) {
		const struct perfetto_arg *a = &s->args[i];
		struct pb da = { .len = 0 };

		pb_str(&da, DA_NAME, a->name);
		if (a->str)
			pb_str(&da, DA_STRING_VALUE, a->str);
		else
			pb_int(&da, DA_INT_VALUE, a->val);
		pb_msg(&ev, TE_DEBUG_ANNOTATIONS, &da);
	}
	pb_uint(&pkt, PKT_TIMESTAMP, s->start_ns);
	pb_msg(&pkt, PKT_TRACK_EVENT, &ev);
	err = put_packet(p, &pkt);
	if (err)
		return err;

	pkt.len = ev.len = 0;
	pb_uint(&ev, TE_TYPE, TYPE_SLICE_END);
	pb_uint(&ev, TE_TRACK_UUID, uuid);
	pb_uint(&pkt, PKT_TIMESTAMP, s->end_ns);
	pb_msg(&pkt, PKT_TRACK_EVENT, &ev);
	return put_packet(p, &pkt);
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pb_clock(struct pb *b, uint32_t id, int64_t ns)
{
	struct pb c = { .len = 0 };

	pb_uint(&c, CLK_ID, id);
	pb_uint(&c, CLK_TIMESTAMP, ns);
	pb_msg(b, CS_CLOCKS, &c);
}

/*
 * The sequence's first packet: the clock its timestamps are in, and where
 * that clock stands against the trace's (BOOTTIME).
 */
static int declare_clock(struct perfetto *p, const struct perfetto_clock *clock)
{
	struct pb pkt = { .len = 0 }, snap = { .len = 0 }, def = { .len = 0 };
	uint32_t id = clock->logical ? CLOCK_ID_LOGICAL : CLOCK_ID_MONOTONIC;

	if (clock->logical) {
		pb_clock(&snap, id, clock->now_ns);
		pb_clock(&snap, CLOCK_ID_BOOTTIME, clock->now_ns);
	} else {
		pb_clock(&snap, id, clock_ns(CLOCK_MONOTONIC));
		pb_clock(&snap, CLOCK_ID_BOOTTIME, clock_ns(CLOCK_BOOTTIME));
	}
	pb_uint(&def, DEF_TIMESTAMP_CLOCK_ID, id);
	pb_msg(&pkt, PKT_CLOCK_SNAPSHOT, &snap);
	pb_msg(&pkt, PKT_DEFAULTS, &def);
	return put_packet(p, &pkt);
}

struct perfetto *perfetto_open(const char *path, const char *host,
			       const struct perfetto_clock *clock)
{
	struct perfetto *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	p->f = fopen(path, "we");
	if (!p->f) {
		free(p);
		return NULL;
	}
	snprintf(p->host, sizeof(p->host), "%s", host);
	p->host_hash = fnv1a64(host);
	/* Distinct per host and per writer, never 0 (reserved). */
	p->seq_id = (uint32_t)mix64(p->host_hash ^ (uint64_t)getpid()) | 1;
	err = declare_clock(p, clock);
	if (err) {
		perfetto_close(p);
		errno = -err;
		return NULL;
	}
	return p;
}

int perfetto_close(struct perfetto *p)
{
	int err = 0;

	if (!p)
		return 0;
	if (ferror(p->f))
		err = -EIO;
	if (fclose(p->f) && !err)
		err = -errno;
	tdestroy(p->seen, free);
	free(p);
	return err;
}
