/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/perfetto/: other subsystems include this header.
 *
 * Reading a Perfetto trace one packet at a time, through a buffer that
 * holds one read's worth and the packet being decoded, whatever the size
 * of the file: lclkctl trace merge streams its inputs.
 */
#ifndef LCLK_PFTRACE_READ_H
#define LCLK_PFTRACE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pftrace_reader {
	FILE *f;
	uint8_t *buf;
	size_t cap, start, end;	/* bytes [start, end) of buf not consumed */
};

/* 0 or -errno. */
int pftrace_reader_open(struct pftrace_reader *r, const char *path);
void pftrace_reader_close(struct pftrace_reader *r);

/*
 * The next TracePacket's bytes, valid until the next call: 1, 0 at the
 * end of the file, -EBADMSG on a malformed or truncated file, -errno.
 * Top-level fields other than packets are skipped.
 */
int pftrace_next_packet(struct pftrace_reader *r, const uint8_t **pkt, size_t *len);

#endif /* LCLK_PFTRACE_READ_H */
