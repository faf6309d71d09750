#!/bin/sh
# In the guest (tests/deb/run.sh, step 3), whose root is the host's
# (Debian 12) under a throwaway overlay: the module DKMS built for this
# kernel goes where DKMS installs it, with the modules.dep (and the
# rest of depmod's files) DKMS's depmod made; modprobe; the release's
# lclkctl and python3-lclk packages, unpacked into the release's root
# (this host's for its own release; the writes go to the guest's overlay),
# read the clock there, as a host of that release runs them; modprobe -r.
#
#   tests/deb/guest.sh MODULE DEPMOD_FILES_DIR RELEASE RELEASE_ROOT [DEB...]
#
# No DEB: the release has no lclkctl or python3-lclk (Debian 11: the
# README and tests/deb/run.sh say why).
ko=$1 depmod=$2 rel=$3 root=$4
shift 4
kver=$(uname -r)
n=0
t0=$(cut -d' ' -f1 /proc/uptime)
el() { awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.0f s", b - a }'; }
ok() { n=$((n + 1)); echo "ok $n - $kver: $1 [$(el)]"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $kver: $1 [$(el)]"; }
echo "# guest: $kver"

dir=/lib/modules/$kver/updates/dkms
if mkdir -p "$dir" && cp "$ko" "$dir/" && cp "$depmod"/modules.* "/lib/modules/$kver/" &&
   modprobe lclk && [ -c /dev/lclk0 ]; then
	ok "modprobe lclk: /dev/lclk0 (the module DKMS built, $(basename "$ko"), depends: $(modinfo -F depends lclk))"
else
	dmesg | tail -10 | sed 's/^/# /'
	not_ok "modprobe lclk"
fi

if [ $# = 0 ]; then
	ok "lclkctl and the Python module # SKIP this release has no lclkctl or python3-lclk package"
else
	# The packages' files as dpkg would put them (dpkg itself in the
	# guest, over 9p and under TCG, took 80 s; the host side installs
	# and purges them with dpkg), through the merged /usr's symbolic
	# links (Debian 12's packages have /lib/...; plain dpkg-deb -x
	# would make /lib a directory). Another release's root is run in
	# with chroot, /proc, /sys and /dev (/dev/lclk0) mounted.
	for deb; do
		dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$root" ||
			not_ok "unpacking $deb into $root"
	done
	run() { "$@"; }
	if [ "$root" != / ]; then
		mount -t proc proc "$root/proc" && mount -t sysfs sys "$root/sys" &&
			mount --rbind /dev "$root/dev" || not_ok "mounting /proc, /sys, /dev in $root"
		run() { chroot "$root" env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
	fi
	if out=$(run lclkctl status 2>&1) && echo "$out" | grep -q '^status:'; then
		ok "$rel's lclkctl status: $(echo "$out" | grep '^status:' | tr -s ' ')"
	else
		echo "$out" | sed 's/^/# /'
		not_ok "$rel's lclkctl status"
	fi
	if out=$(run sh -c 'cd / && python3 -c "import sys, lclk
with lclk.Clock(\"/dev/lclk0\") as c:
    now = c.now()
print(sys.version.split()[0], lclk.__file__, now.time_ns > 0)"' 2>&1) &&
	   [ "${out#* }" = "/usr/lib/python3/dist-packages/lclk/__init__.py True" ]; then
		ok "$rel's Python ${out%% *} reads the clock with its python3-lclk"
	else
		echo "$out" | sed 's/^/# /'
		not_ok "$rel's Python reads the clock with its python3-lclk"
	fi
fi

if modprobe -r lclk; then
	ok "modprobe -r lclk"
else
	not_ok "modprobe -r lclk"
fi
echo "1..$n"
