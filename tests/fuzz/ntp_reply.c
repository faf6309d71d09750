// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the NTP reply parser and validator: the first 24
 * bytes are the request we "sent" (transmit, origin and receive cookies),
 * the rest is the reply. Any reply accepted must satisfy every rule
 * ntp_validate_reply() promises, in basic and interleaved mode, and go on
 * to become a filter sample and a measurement the way ntp_source.c makes
 * them: whatever the server says, the sample's error covers its precision
 * and the bound covers the sample.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntp/ntp_filter.h"
#include "ntp/ntp_packet.h"
#include "ntp/ntp_sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The accepted reply p as our exchange: sent at pivot and answered up to
 * 268 ms later, path, error and drift taken from the cookie's bits.
 */
static void to_measurement(const struct ntp_packet *p, bool interleaved, int64_t pivot,
			   uint64_t xmt)
{
	struct ntp_filter_opts fo = NTP_FILTER_DEFAULTS;
	struct ntp_exchange x = { .reply = *p, .interleaved = interleaved };
	struct ntp_filter_result r;
	struct ntp_sample s;

	x.ours.t1 = pivot;
	x.ours.t4 = pivot + (int64_t)(xmt & 0xfffffff);
	x.ours.base1 = 1000000000LL;
	x.ours.base4 = x.ours.base1 + (x.ours.t4 - x.ours.t1);
	x.ours.err_ns = (int64_t)(xmt >> 60);
	x.send_path_ns = (int64_t)(xmt & 0xffff);
	ntp_exchange_compute(&x, p->receive_ts);
	if (x.verdict != NTP_OK)
		return;
	fo.drift_ppb = (uint32_t)((xmt >> 40) & 0xfffff);
	ntp_exchange_sample(&x, 1, fo.drift_ppb, &s);
	if (s.err_ns < ntp_log2_to_ns(p->precision) || s.root_ns < 0)
		abort();
	if (ntp_filter(&s, 1, &fo, &r, NULL)) {
		if (s.delay_ns <= fo.max_delay_ns)
			abort();
		return;
	}
	/* One sample: the bound is its interval's half width and its root. */
	if (r.bound_ns < s.delay_ns / 2 + s.err_ns + s.root_ns ||
	    r.offset_ns < s.offset_ns - s.delay_ns / 2 - s.err_ns - 1 ||
	    r.offset_ns > s.offset_ns + s.delay_ns / 2 + s.err_ns + 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ntp_request rq;
	struct ntp_packet p;
	enum ntp_verdict v;
	bool interleaved;
	char refid[16];
	uint64_t xmt;

	if (size < 24)
		return 0;
	memcpy(&rq.xmt, data, 8);
	memcpy(&rq.org, data + 8, 8);
	memcpy(&rq.rec, data + 16, 8);
	xmt = rq.xmt;
	data += 24;
	size -= 24;
	v = ntp_decode(data, size, &p);
	if (v != NTP_OK) {
		if (size >= NTP_HEADER_LEN && size <= NTP_MAX_LEN && size % 4 == 0)
			abort();
		return 0;
	}
	ntp_refid_str(&p, refid, sizeof(refid));
	if (strlen(refid) >= sizeof(refid))
		abort();
	v = ntp_validate_reply(&p, &rq, &interleaved);
	if (v == NTP_KISS_OF_DEATH)
		(void)ntp_kiss(&p);
	if (v != NTP_OK)
		return 0;
	if (p.mode != NTP_MODE_SERVER || (p.version != 3 && p.version != 4) ||
	    p.stratum < 1 || p.stratum > NTP_MAX_STRATUM ||
	    p.leap == NTP_LEAP_UNSYNC || !p.receive_ts || !p.transmit_ts)
		abort();
	if (interleaved ? !rq.org || !rq.rec || p.origin_ts != rq.rec ||
			  (int64_t)(p.transmit_ts - rq.org) < 0 ||
			  (int64_t)(p.receive_ts - p.transmit_ts) < 0 :
			  p.origin_ts != rq.xmt || (int64_t)(p.transmit_ts - p.receive_ts) < 0)
		abort();
	if (p.reference_ts &&
	    (int64_t)((interleaved ? p.receive_ts : p.transmit_ts) - p.reference_ts) < 0)
		abort();
	/* Conversions of accepted timestamps, pivoted anywhere. */
	{
		int64_t pivot = (int64_t)(xmt >> 2) - (int64_t)(1ULL << 61);
		int64_t t2 = ntp_ts_to_unix_ns(p.receive_ts, pivot);
		int64_t t3 = ntp_ts_to_unix_ns(p.transmit_ts, pivot);

		if (llabs(t2 / 1000000000LL - pivot / 1000000000LL) > (1LL << 31) + 1)
			abort();
		(void)t3;
		to_measurement(&p, interleaved, pivot, xmt);
	}
	return 0;
}
