/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a PTP hardware clock against CLOCK_MONOTONIC, the best way the
 * driver offers: PTP_SYS_OFFSET_PRECISE (a cross timestamp), else
 * PTP_SYS_OFFSET_EXTENDED (system time just before and after each PHC read,
 * several reads, the narrowest window kept, as phc2sys does), else
 * PTP_SYS_OFFSET (system readings interleaved with PHC readings). The
 * system time of those ioctls is CLOCK_REALTIME; it is moved to the
 * monotonic base with a realtime-monotonic reading taken right after.
 */
#ifndef LCLK_PHC_H
#define LCLK_PHC_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum phc_method {
	PHC_PRECISE,
	PHC_EXTENDED,
	PHC_SYS_OFFSET,
};

/* Reads per PTP_SYS_OFFSET[_EXTENDED]: phc2sys's default is 5. */
#define PHC_READS	5

struct phc {
	int fd;
	int index;		/* N of /dev/ptpN */
	enum phc_method method;	/* the best that worked */
	char path[64];
};

struct phc_reading {
	int64_t offset_ns;	/* PHC - CLOCK_MONOTONIC at base_ns */
	int64_t base_ns;	/* CLOCK_MONOTONIC of the PHC read */
	int64_t window_ns;	/* system-time window around the PHC read */
	int64_t error_ns;	/* |true offset - offset_ns| <= error_ns */
};

/*
 * Open /dev/ptpN, or the PHC of network interface IFACE (from ethtool's
 * timestamping info). Returns 0 or -errno with err set.
 */
int phc_open(struct phc *p, const char *dev_or_iface, char *err, size_t errlen);
void phc_close(struct phc *p);

/* One reading, falling back to a simpler ioctl if the driver lacks one. */
int phc_read(struct phc *p, struct phc_reading *r);

/*
 * PHC index and SOF_TIMESTAMPING_* capabilities of an interface
 * (ETHTOOL_GET_TS_INFO). *index is -1 without a PHC. Returns 0 or -errno.
 */
int phc_iface_info(const char *ifname, int *index, unsigned int *so_ts);

const char *phc_method_name(enum phc_method m);

#endif /* LCLK_PHC_H */
