// SPDX-License-Identifier: GPL-2.0
/* PTP hardware clock reading against CLOCK_MONOTONIC. */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/ptp_clock.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock_offset.h"
#include "phc.h"

static int64_t pct_ns(const struct ptp_clock_time *t)
{
	return t->sec * 1000000000LL + t->nsec;
}

int phc_iface_info(const char *ifname, int *index, unsigned int *so_ts)
{
	struct ethtool_ts_info info = { .cmd = ETHTOOL_GET_TS_INFO };
	struct ifreq ifr = { 0 };
	int fd, err = 0;

	if (strlen(ifname) >= IFNAMSIZ)
		return -ENAMETOOLONG;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, ifname);
	ifr.ifr_data = (void *)&info;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		err = -errno;
	close(fd);
	if (err)
		return err;
	*index = info.phc_index;
	*so_ts = info.so_timestamping;
	return 0;
}

int phc_open(struct phc *p, const char *spec, char *err, size_t errlen)
{
	unsigned int caps;
	int r;

	p->fd = -1;
	p->index = -1;
	p->method = PHC_PRECISE;
	if (spec[0] == '/') {
		snprintf(p->path, sizeof(p->path), "%s", spec);
		sscanf(spec, "/dev/ptp%d", &p->index);
	} else {
		r = phc_iface_info(spec, &p->index, &caps);
		if (r) {
			snprintf(err, errlen, "%s: no timestamping info: %s", spec, strerror(-r));
			return r;
		}
		if (p->index < 0) {
			snprintf(err, errlen, "%s has no PTP hardware clock", spec);
			return -ENODEV;
		}
		snprintf(p->path, sizeof(p->path), "/dev/ptp%d", p->index);
	}
	p->fd = open(p->path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", p->path, strerror(errno));
		return r;
	}
	return 0;
}

void phc_close(struct phc *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* The driver lacks this ioctl: try the next method. */
static int unsupported(int e)
{
	return e == EOPNOTSUPP || e == ENOTTY || e == EINVAL;
}

/* PHC - CLOCK_REALTIME and the window, from the chosen ioctl. */
static int read_realtime(struct phc *p, int64_t *off, int64_t *window)
{
	struct ptp_sys_offset_precise pr;
	struct ptp_sys_offset_extended ext;
	struct ptp_sys_offset so;
	int64_t best = INT64_MAX;
	unsigned int i;

	switch (p->method) {
	case PHC_PRECISE:
		memset(&pr, 0, sizeof(pr));
		if (!ioctl(p->fd, PTP_SYS_OFFSET_PRECISE, &pr)) {
			*off = pct_ns(&pr.device) - pct_ns(&pr.sys_realtime);
			*window = 0;
			return 0;
		}
		if (!unsupported(errno))
			return -errno;
		p->method = PHC_EXTENDED;
		/* fall through */
	case PHC_EXTENDED:
		memset(&ext, 0, sizeof(ext));
		ext.n_samples = PHC_READS;
		if (!ioctl(p->fd, PTP_SYS_OFFSET_EXTENDED, &ext)) {
			for (i = 0; i < ext.n_samples; i++) {
				int64_t w = pct_ns(&ext.ts[i][2]) - pct_ns(&ext.ts[i][0]);

				if (w >= 0 && w < best) {
					best = w;
					*off = pct_ns(&ext.ts[i][1]) -
					       (pct_ns(&ext.ts[i][0]) + w / 2);
				}
			}
			break;
		}
		if (!unsupported(errno))
			return -errno;
		p->method = PHC_SYS_OFFSET;
		/* fall through */
	case PHC_SYS_OFFSET:
		memset(&so, 0, sizeof(so));
		so.n_samples = PHC_READS;
		if (ioctl(p->fd, PTP_SYS_OFFSET, &so))
			return -errno;
		/* ts[2i] system, ts[2i+1] PHC, ts[2i+2] system. */
		for (i = 0; i < so.n_samples; i++) {
			int64_t w = pct_ns(&so.ts[2 * i + 2]) - pct_ns(&so.ts[2 * i]);

			if (w >= 0 && w < best) {
				best = w;
				*off = pct_ns(&so.ts[2 * i + 1]) - (pct_ns(&so.ts[2 * i]) + w / 2);
			}
		}
		break;
	}
	if (best == INT64_MAX)
		return -EIO;	/* every window ran backwards: realtime was stepped */
	*window = best;
	return 0;
}

int phc_read(struct phc *p, struct phc_reading *r)
{
	int64_t off_rt, window, rt_mono, rt_width;
	int err;

	err = read_realtime(p, &off_rt, &window);
	if (err)
		return err;
	err = clock_offset_from_mono(CLOCK_REALTIME, 3, &rt_mono, &rt_width);
	if (err)
		return err;
	r->offset_ns = off_rt + rt_mono;
	r->base_ns = monotonic_ns();
	r->window_ns = window;
	/* The PHC read lies in the window; the conversion adds its own. */
	r->error_ns = (window + 1) / 2 + (rt_width + 1) / 2;
	return 0;
}

const char *phc_method_name(enum phc_method m)
{
	switch (m) {
	case PHC_PRECISE:
		return "PTP_SYS_OFFSET_PRECISE";
	case PHC_EXTENDED:
		return "PTP_SYS_OFFSET_EXTENDED";
	case PHC_SYS_OFFSET:
		return "PTP_SYS_OFFSET";
	}
	return "?";
}
