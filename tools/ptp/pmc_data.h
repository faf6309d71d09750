/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data of the management responses ptp4l gives pmc_client.h's GETs, as
 * on the wire (IEEE 1588-2019 15.5.3 and linuxptp's _NP ids), big-endian:
 * packed structs, as linuxptp's ddt.h and tlv.h lay them out, so a field is
 * read by its name and not at a byte offset. Each size and the offsets
 * read are checked at build time against the standard's tables.
 */
#ifndef LCLK_PMC_DATA_H
#define LCLK_PMC_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptp_msg.h"

#define PMC_PACKED	__attribute__((packed))

struct pmc_clock_id {
	uint8_t id[PTP_CLOCK_ID_LEN];
};

struct pmc_port_id {
	struct pmc_clock_id clock;
	uint16_t port;
} PMC_PACKED;

struct pmc_clock_quality {
	uint8_t clock_class;
	uint8_t clock_accuracy;
	uint16_t offset_scaled_log_variance;
} PMC_PACKED;

/* ScaledNs: a 96-bit count of 2^-16 ns. */
struct pmc_scaled_ns {
	uint16_t ns_msb;
	uint64_t ns_lsb;
	uint16_t frac_ns;
} PMC_PACKED;

/* A TimeInterval is an int64 of 2^-16 ns. */
#define PMC_TIME_INTERVAL_SHIFT	16

/* CURRENT_DATA_SET */
struct pmc_current_ds {
	uint16_t steps_removed;
	int64_t offset_from_master;	/* TimeInterval */
	int64_t mean_path_delay;	/* TimeInterval */
} PMC_PACKED;

/* PARENT_DATA_SET */
struct pmc_parent_ds {
	struct pmc_port_id parent_port;
	uint8_t parent_stats;
	uint8_t reserved;
	uint16_t observed_parent_offset_scaled_log_variance;
	int32_t observed_parent_clock_phase_change_rate;
	uint8_t gm_priority1;
	struct pmc_clock_quality gm_quality;
	uint8_t gm_priority2;
	struct pmc_clock_id gm_identity;
} PMC_PACKED;

/* TIME_PROPERTIES_DATA_SET */
struct pmc_time_properties_ds {
	int16_t current_utc_offset;
	uint8_t flags;			/* PTP_FLAG_* of flagField's low octet */
	uint8_t time_source;
} PMC_PACKED;

/* PORT_DATA_SET */
struct pmc_port_ds {
	struct pmc_port_id port;
	uint8_t port_state;		/* PMC_PORT_* */
	int8_t log_min_delay_req_interval;
	int64_t peer_mean_path_delay;	/* TimeInterval */
	int8_t log_announce_interval;
	uint8_t announce_receipt_timeout;
	int8_t log_sync_interval;
	uint8_t delay_mechanism;
	int8_t log_min_pdelay_req_interval;
	uint8_t version_number;
} PMC_PACKED;

/* portState values read. UNCALIBRATED: measuring, not locked (a free_running ptp4l stays there). */
#define PMC_PORT_UNCALIBRATED	8
#define PMC_PORT_SLAVE		9

/* TIME_STATUS_NP (linuxptp): ptp4l's offset from its master at the last Sync. */
struct pmc_time_status_np {
	int64_t master_offset;		/* ns */
	int64_t ingress_time;		/* ns, on ptp4l's clock */
	int32_t cumulative_scaled_rate_offset;
	int32_t scaled_last_gm_phase_change;
	uint16_t gm_time_base_indicator;
	struct pmc_scaled_ns last_gm_phase_change;
	int32_t gm_present;
	struct pmc_clock_id gm_identity;
} PMC_PACKED;

/* PORT_PROPERTIES_NP (linuxptp): the interface's name (a PTPText) follows. */
struct pmc_port_properties_np {
	struct pmc_port_id port;
	uint8_t port_state;
	uint8_t timestamping;		/* PMC_TS_* */
	uint8_t interface_len;		/* PTPText: the length, then the text */
	uint8_t interface[];
} PMC_PACKED;

/* PORT_PROPERTIES_NP timestamping values: these stamp with the system clock. */
#define PMC_TS_SOFTWARE		0
#define PMC_TS_LEGACY_HW	2

/* The layouts of IEEE 1588-2019 tables 68, 69, 70, 71 and 73, and linuxptp's. */
_Static_assert(sizeof(struct pmc_port_id) == 10, "PortIdentity");
_Static_assert(sizeof(struct pmc_clock_quality) == 4, "ClockQuality");
_Static_assert(sizeof(struct pmc_scaled_ns) == 12, "ScaledNs");
_Static_assert(sizeof(struct pmc_current_ds) == 18, "CURRENT_DATA_SET");
_Static_assert(offsetof(struct pmc_current_ds, mean_path_delay) == 10, "meanPathDelay");
_Static_assert(sizeof(struct pmc_parent_ds) == 32, "PARENT_DATA_SET");
_Static_assert(offsetof(struct pmc_parent_ds, gm_quality) == 19, "grandmasterClockQuality");
_Static_assert(offsetof(struct pmc_parent_ds, gm_identity) == 24, "grandmasterIdentity");
_Static_assert(sizeof(struct pmc_time_properties_ds) == 4, "TIME_PROPERTIES_DATA_SET");
_Static_assert(offsetof(struct pmc_time_properties_ds, flags) == 2, "flags");
_Static_assert(sizeof(struct pmc_port_ds) == 26, "PORT_DATA_SET");
_Static_assert(offsetof(struct pmc_port_ds, port_state) == 10, "portState");
_Static_assert(sizeof(struct pmc_time_status_np) == 50, "TIME_STATUS_NP");
_Static_assert(offsetof(struct pmc_time_status_np, ingress_time) == 8, "ingress_time");
_Static_assert(offsetof(struct pmc_time_status_np, gm_present) == 38, "gmPresent");
_Static_assert(sizeof(struct pmc_port_properties_np) == 13, "PORT_PROPERTIES_NP");
_Static_assert(offsetof(struct pmc_port_properties_np, timestamping) == 11, "timestamping");
_Static_assert(offsetof(struct pmc_port_properties_np, interface_len) == 12, "interface");

/*
 * A copy of mg's data as the struct out of size bytes (still big-endian):
 * false, and out untouched, when the data are shorter.
 */
bool pmc_data(const struct ptp_management *mg, void *out, size_t size);

/*
 * PORT_PROPERTIES_NP: its fixed part to *pp, the interface's name to
 * name[size], NUL terminated. -EBADMSG when the data are short or the name
 * overruns them or name.
 */
int pmc_port_properties(const struct ptp_management *mg, struct pmc_port_properties_np *pp,
			char *name, size_t size);

#endif /* LCLK_PMC_DATA_H */
