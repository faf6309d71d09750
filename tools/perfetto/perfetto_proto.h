/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/perfetto/: other subsystems include this header.
 *
 * The field numbers of Perfetto's trace protos (protos/perfetto/trace/)
 * that lclk's trace writer and "lclkctl trace merge" use.
 */
#ifndef LCLK_PERFETTO_PROTO_H
#define LCLK_PERFETTO_PROTO_H

/* TracePacket */
#define PKT_CLOCK_SNAPSHOT	6
#define PKT_TIMESTAMP		8
#define PKT_SEQUENCE_ID		10	/* trusted_packet_sequence_id */
#define PKT_TRACK_EVENT		11
#define PKT_INTERNED_DATA	12
#define PKT_SEQUENCE_FLAGS	13
#define PKT_DEFAULTS		59	/* trace_packet_defaults */
#define PKT_TRACK_DESCRIPTOR	60
#define SEQ_INCREMENTAL_STATE_CLEARED	1
#define SEQ_NEEDS_INCREMENTAL_STATE	2
/* InternedData; EventCategory and EventName */
#define ID_EVENT_CATEGORIES	1
#define ID_EVENT_NAMES		2
#define IE_IID			1
#define IE_NAME			2
/* TracePacketDefaults */
#define DEF_TIMESTAMP_CLOCK_ID	58
/* ClockSnapshot, ClockSnapshot.Clock */
#define CS_CLOCKS		1
#define CLK_ID			1
#define CLK_TIMESTAMP		2
#define CLOCK_ID_MONOTONIC	3	/* BuiltinClocks */
#define CLOCK_ID_BOOTTIME	6
#define CLOCK_ID_LOGICAL	64	/* 64-127: the sequence's own */
/*
 * The merged trace's clock: lclk's logical time, the same on every host,
 * a global clock named as Perfetto's clock-sync docs ask: the FNV-1a hash
 * of its name "org.lclk.logical", | 0x80000000 (tools/perfetto/
 * pftrace_write.c checks it).
 */
#define CLOCK_NAME_LOGICAL	"org.lclk.logical"
#define CLOCK_ID_LOGICAL_GLOBAL	0xdbef51e8u
/* TrackDescriptor */
#define TD_UUID			1
#define TD_NAME			2
#define TD_PROCESS		3
#define TD_THREAD		4
#define TD_PARENT_UUID		5
#define TD_DESCRIPTION		14
/* ProcessDescriptor, ThreadDescriptor */
#define PD_PID			1
#define PD_PROCESS_NAME		6
#define THD_PID			1
#define THD_TID			2
#define THD_THREAD_NAME		5
/* TrackEvent */
#define TE_CATEGORY_IIDS	3
#define TE_DEBUG_ANNOTATIONS	4
#define TE_TYPE			9
#define TE_NAME_IID		10
#define TE_TRACK_UUID		11
#define TE_CATEGORIES		22
#define TE_NAME			23
#define TE_FLOW_IDS		47	/* fixed64 */
#define TE_TERMINATING_FLOW_IDS	48
#define TYPE_SLICE_BEGIN	1
#define TYPE_SLICE_END		2
#define TYPE_INSTANT		3
/* DebugAnnotation */
#define DA_INT_VALUE		4
#define DA_STRING_VALUE		6
#define DA_NAME			10
/* Trace */
#define TRACE_PACKET		1

#endif /* LCLK_PERFETTO_PROTO_H */
