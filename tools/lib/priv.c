// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "priv.h"

/* glibc has no capget/capset: the raw system calls, 64-bit sets. */
static int cap_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static int cap_set(uint64_t eff, uint64_t prm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)eff, .permitted = (uint32_t)prm },
		{ .effective = (uint32_t)(eff >> 32), .permitted = (uint32_t)(prm >> 32) },
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

uint64_t priv_permitted(void)
{
	struct __user_cap_data_struct d[2];

	if (cap_get(d))
		return 0;
	return d[0].permitted | (uint64_t)d[1].permitted << 32;
}

static const char *const cap_names[] = {
	[CAP_CHOWN] = "CAP_CHOWN", [CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
	[CAP_NET_BIND_SERVICE] = "CAP_NET_BIND_SERVICE", [CAP_NET_ADMIN] = "CAP_NET_ADMIN",
	[CAP_NET_RAW] = "CAP_NET_RAW", [CAP_SYS_TIME] = "CAP_SYS_TIME",
};

const char *priv_names(uint64_t caps, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int c;

	buf[0] = '\0';
	for (c = 0; c < 64 && off < len; c++) {
		if (!(caps & PRIV_CAP(c)))
			continue;
		if (c < sizeof(cap_names) / sizeof(cap_names[0]) && cap_names[c])
			off += snprintf(buf + off, len - off, "%s%s", off ? " " : "", cap_names[c]);
		else
			off += snprintf(buf + off, len - off, "%scap_%u", off ? " " : "", c);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

/* Capabilities are per thread: a second thread would keep them all. */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 1;	/* no /proc: nothing to check by */
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int priv_drop(const char *user, uint64_t keep, char *note, size_t notelen,
	      char *err, size_t errlen)
{
	struct passwd *pw = NULL;
	uint64_t prm = priv_permitted();
	unsigned int c;
	int r;

	note[0] = '\0';
	if (!user || !user[0])
		user = PRIV_DEFAULT_USER;
	if (threads() != 1) {
		snprintf(err, errlen, "dropping privileges: other threads run already");
		return -EBUSY;
	}
	if (geteuid() == 0 && strcmp(user, "root")) {
		errno = 0;
		pw = getpwnam(user);
		if (!pw)
			snprintf(note, notelen, "no user %s to run as (%s): staying root, "
				 "with the capabilities cut all the same", user,
				 errno ? strerror(errno) : "not found");
	}
	/* The bounding set needs CAP_SETPCAP: first, while it is there. */
	for (c = 0; c < 64; c++) {
		if (keep & PRIV_CAP(c))
			continue;
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0)
			break;	/* past the kernel's last capability */
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EPERM) {
			r = -errno;
			snprintf(err, errlen, "dropping capability %u: %s", c, strerror(errno));
			return r;
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (pw) {
		gid_t gid = pw->pw_gid;

		/* Keep the permitted set across setresuid(); glibc sets ids in every thread. */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(1, &gid) ||
		    setresgid(gid, gid, gid) || setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)) {
			r = -errno;
			snprintf(err, errlen, "becoming %s: %s", user, strerror(errno));
			return r;
		}
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	}
	keep &= prm;
	r = cap_set(keep, keep);
	if (r) {
		snprintf(err, errlen, "setting capabilities: %s", strerror(-r));
		return r;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		r = -errno;
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return r;
	}
	return 0;
}
