// SPDX-License-Identifier: GPL-2.0
/*
 * A Perfetto trace is "repeated TracePacket packet = 1": a stream of
 * length-delimited fields, each decodable on its own. The buffer grows only
 * for a packet larger than it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "pftrace_read.h"

#define READ_CHUNK	(64 << 10)
/*
 * Larger than any packet a trace writer makes (Perfetto's own stay below
 * a few MiB): a length beyond it is a corrupt file, not a reason to
 * allocate gigabytes.
 */
#define PACKET_MAX	(64 << 20)
#define TRACE_PACKET	1

int pftrace_reader_open(struct pftrace_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "re");
	if (!r->f)
		return -errno;
	r->cap = READ_CHUNK;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		fclose(r->f);
		r->f = NULL;
		return -ENOMEM;
	}
	return 0;
}

void pftrace_reader_close(struct pftrace_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Read more: the buffer holds fewer than want bytes from start. */
static size_t refill(struct pftrace_reader *r, size_t want, int *err)
{
	size_t n;

	memmove(r->buf, r->buf + r->start, r->end - r->start);
	r->end -= r->start;
	r->start = 0;
	if (want > r->cap) {
		uint8_t *nb = realloc(r->buf, want);

		if (!nb) {
			*err = -ENOMEM;
			return r->end;
		}
		r->buf = nb;
		r->cap = want;
	}
	while (r->end < want) {
		n = fread(r->buf + r->end, 1, r->cap - r->end, r->f);
		if (!n) {
			if (ferror(r->f))
				*err = -EIO;
			break;
		}
		r->end += n;
	}
	return r->end;
}

/*
 * Make at least want bytes available from start; the count available. The
 * check inline and the reading not: nearly every packet is in the buffer
 * already, and the call was 1 % of a merge.
 */
static inline size_t fill(struct pftrace_reader *r, size_t want, int *err)
{
	if (r->end - r->start >= want)
		return r->end - r->start;
	return refill(r, want, err);
}

int pftrace_next_packet(struct pftrace_reader *r, const uint8_t **pkt, size_t *len)
{
	for (;;) {
		const uint8_t *p, *q, *end;
		uint64_t tag, n;
		size_t hdr, avail;
		int err = 0;

		avail = fill(r, 20, &err);	/* room for the tag and length */
		if (err)
			return err;
		if (!avail)
			return 0;
		p = q = r->buf + r->start;
		end = r->buf + r->end;
		if (!pb_get_varint(&q, end, &tag))
			return -EBADMSG;
		if ((tag & 7) != PB_WIRE_LEN) {
			struct pb_field f;

			/* A scalar at the top level: not a packet, skip it. */
			if (!pb_next(&p, end, &f))
				return -EBADMSG;
			r->start = p - r->buf;
			continue;
		}
		if (!pb_get_varint(&q, end, &n) || n > PACKET_MAX)
			return -EBADMSG;
		hdr = q - p;
		avail = fill(r, hdr + n, &err);
		if (err)
			return err;
		if (avail < hdr + n)
			return -EBADMSG;	/* truncated */
		p = r->buf + r->start;
		r->start += hdr + n;
		if ((tag >> 3) == TRACE_PACKET) {
			*pkt = p + hdr;
			*len = n;
			return 1;
		}
	}
}
