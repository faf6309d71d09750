// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl trace's ring-buffer decoder on arbitrary bytes, as the kernel
 * hands them over (a copy of exactly size bytes, so that ASan sees any
 * read past the record): a record is taken only when its header's type is
 * known and both sizes cover its struct, and a taken record's names end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union trace_record rec;
	struct trace_rec_hdr hdr;
	uint8_t *copy = malloc(size ? size : 1);
	int type;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	type = trace_record_decode(copy, size, &rec);
	if (type >= 0) {
		if (size < sizeof(hdr))
			abort();
		memcpy(&hdr, data, sizeof(hdr));
		if ((int)hdr.type != type || hdr.size > size)
			abort();
		if (type == TRACE_REC_OUTLIER) {
			if (size < sizeof(rec.outlier) || hdr.size < sizeof(rec.outlier) ||
			    rec.outlier.comm[TRACE_COMM_LEN - 1])
				abort();
		} else if (type == TRACE_REC_MSG) {
			if (size < sizeof(rec.msg) || hdr.size < sizeof(rec.msg) ||
			    rec.msg.comm[TRACE_COMM_LEN - 1])
				abort();
		} else {
			abort();
		}
	}
	free(copy);
	return 0;
}
