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
#include <unistd.h>

#include "perfetto.h"

/* TracePacket */
#define PKT_TIMESTAMP		8
#define PKT_SEQUENCE_ID		10	/* trusted_packet_sequence_id */
#define PKT_TRACK_EVENT		11
#define PKT_SEQUENCE_FLAGS	13
#define PKT_TRACK_DESCRIPTOR	60
#define SEQ_INCREMENTAL_STATE_CLEARED	1
/* TrackDescriptor */
#define TD_UUID			1
#define TD_PROCESS		3
#define TD_THREAD		4
#define TD_PARENT_UUID		5
/* ProcessDescriptor */
#define PD_PID			1
#define PD_PROCESS_NAME		6
/* ThreadDescriptor */
#define THD_PID			1
#define THD_TID			2
#define THD_THREAD_NAME		5
/* TrackEvent */
#define TE_DEBUG_ANNOTATIONS	4
#define TE_TYPE			9
#define TE_TRACK_UUID		11
#define TE_CATEGORIES		22
#define TE_NAME			23
#define TYPE_SLICE_BEGIN	1
#define TYPE_SLICE_END		2
/* DebugAnnotation */
#define DA_INT_VALUE		4
#define DA_STRING_VALUE		6
#define DA_NAME			10
/* Trace */
#define TRACE_PACKET		1

#define WIRE_VARINT		0
#define WIRE_LEN		2

#define PID_BITS		22	/* Linux's PID_MAX_LIMIT is 2^22 */
#define HOST_SLOTS		511

struct perfetto {
	FILE *f;
	char host[256];
	uint64_t host_hash;
	uint32_t host_slot;
	uint32_t seq_id;
	bool started;
	void *seen;		/* tsearch tree of the uuids declared */
};

/* A message under construction; an overflow fails the whole packet. */
struct pb {
	uint8_t buf[1024];
	size_t len;
	bool overflow;
};

static void pb_raw(struct pb *b, const void *p, size_t n)
{
	if (b->overflow || n > sizeof(b->buf) - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_raw(b, out, n);
}

static void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	pb_varint(b, field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

/* int32/int64: two's complement as a 64-bit varint. */
static void pb_int(struct pb *b, unsigned int field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

static void pb_bytes(struct pb *b, unsigned int field, const void *p, size_t n)
{
	pb_varint(b, field << 3 | WIRE_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

static void pb_str(struct pb *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

static void pb_msg(struct pb *b, unsigned int field, const struct pb *sub)
{
	if (sub->overflow)
		b->overflow = true;
	pb_bytes(b, field, sub->buf, sub->len);
}

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

uint32_t perfetto_host_pid(const struct perfetto *p, uint32_t pid)
{
	return p->host_slot << PID_BITS | (pid & ((1U << PID_BITS) - 1));
}

/* Track uuids: kind 1 = process, 2 = thread; never 0 (the global track). */
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
	pb_varint(&hdr, TRACE_PACKET << 3 | WIRE_LEN);
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

static void process_name(const struct perfetto *p, const struct perfetto_slice *s,
			 char *name, size_t len)
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
	if (comm[0])
		snprintf(name, len, "%s: %s", p->host, comm);
	else
		snprintf(name, len, "%s: pid %u", p->host, s->pid);
}

static int declare_tracks(struct perfetto *p, const struct perfetto_slice *s,
			  uint64_t thread_uuid)
{
	uint64_t proc_uuid = track_uuid(p, 1, s->pid);
	struct pb pkt = { .len = 0 }, td = { .len = 0 }, d = { .len = 0 };
	char name[320];
	int err;

	err = first_sight(p, proc_uuid);
	if (err < 0)
		return err;
	if (err) {
		process_name(p, s, name, sizeof(name));
		pb_uint(&d, PD_PID, perfetto_host_pid(p, s->pid));
		pb_str(&d, PD_PROCESS_NAME, name);
		pb_uint(&td, TD_UUID, proc_uuid);
		pb_msg(&td, TD_PROCESS, &d);
		pb_msg(&pkt, PKT_TRACK_DESCRIPTOR, &td);
		err = put_packet(p, &pkt);
		if (err)
			return err;
		pkt.len = td.len = d.len = 0;
	}
	pb_uint(&d, THD_PID, perfetto_host_pid(p, s->pid));
	pb_uint(&d, THD_TID, perfetto_host_pid(p, s->tid));
	pb_str(&d, THD_THREAD_NAME, s->thread_name);
	pb_uint(&td, TD_UUID, thread_uuid);
	pb_uint(&td, TD_PARENT_UUID, proc_uuid);
	pb_msg(&td, TD_THREAD, &d);
	pb_msg(&pkt, PKT_TRACK_DESCRIPTOR, &td);
	return put_packet(p, &pkt);
}

int perfetto_slice(struct perfetto *p, const struct perfetto_slice *s)
{
	uint64_t uuid = track_uuid(p, 2, s->tid);
	struct pb pkt = { .len = 0 }, ev = { .len = 0 };
	unsigned int i;
	int err;

	err = first_sight(p, uuid);
	if (err < 0)
		return err;
	if (err) {
		err = declare_tracks(p, s, uuid);
		if (err)
			return err;
	}

	pb_uint(&ev, TE_TYPE, TYPE_SLICE_BEGIN);
	pb_uint(&ev, TE_TRACK_UUID, uuid);
	pb_str(&ev, TE_CATEGORIES, "syscall");
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

struct perfetto *perfetto_open(const char *path, const char *host)
{
	struct perfetto *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->f = fopen(path, "we");
	if (!p->f) {
		free(p);
		return NULL;
	}
	snprintf(p->host, sizeof(p->host), "%s", host);
	p->host_hash = fnv1a64(host);
	p->host_slot = 1 + p->host_hash % HOST_SLOTS;
	/* Distinct per host and per writer, never 0 (reserved). */
	p->seq_id = (uint32_t)mix64(p->host_hash ^ (uint64_t)getpid()) | 1;
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
