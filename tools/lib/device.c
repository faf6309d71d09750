// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "device.h"

int device_open(const char *path, bool write)
{
	int fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int device_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

bool device_can_set_time(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	/* No libcap: capget is one system call. */
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_TIME)].effective & CAP_TO_MASK(CAP_SYS_TIME);
}

/* Reasons the module gives, in the words an admin needs. */
static const char *reason(int err)
{
	switch (err) {
	case -ENOENT:
	case -ENODEV:
	case -ENXIO:
		return "no such lclk device: is the module loaded (modprobe lclk)?";
	case -EPERM:
	case -EACCES:
		return "permission denied: changing the clock needs CAP_SYS_TIME (run as root)";
	case -ERANGE:
		return "the change would move logical time backwards: add --allow-backward";
	case -EINVAL:
		return "the module rejected a value as out of range";
	case -ENOTTY:
	case -EPROTO:
		return "not an lclk device of this ABI version (module and lclkctl differ?)";
	default:
		return strerror(-err);
	}
}

int device_error(const char *cmd, const char *path, const char *what, int err)
{
	fprintf(stderr, "lclkctl %s: %s: %s: %s\n", cmd, path, what, reason(err));
	switch (err) {
	case -ENOENT:
	case -ENODEV:
	case -ENXIO:
		return EXIT_NODEV;
	case -EPERM:
	case -EACCES:
		return EXIT_PERM;
	case -ERANGE:
		/* Fixed on the command line (--allow-backward), as sync's refusal. */
		return EXIT_USAGE;
	default:
		return EXIT_FAIL;
	}
}
