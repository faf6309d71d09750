#!/bin/sh
# In the guest (tests/deb/run.sh, step 3), whose root is the host's
# (Debian 12) under a throwaway overlay: the module DKMS built for this
# kernel goes where DKMS installs it, with the modules.dep (and the
# rest of depmod's files) DKMS's depmod made; modprobe; the lclkctl and
# python3-lclk packages' programs read the clock; modprobe -r.
#
#   tests/deb/guest.sh MODULE DEPMOD_FILES_DIR PACKAGES_ROOT
ko=$1 depmod=$2 pkgroot=$3
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

# The packaged lclkctl and Python module, as dpkg-deb unpacked them on the
# host (dpkg itself in the guest, over 9p and under TCG, took 80 s; the
# host side installs and purges them with dpkg).
if out=$("$pkgroot/usr/sbin/lclkctl" status 2>&1) && echo "$out" | grep -q '^status:'; then
	ok "the package's lclkctl status: $(echo "$out" | grep '^status:' | tr -s ' ')"
else
	echo "$out" | sed 's/^/# /'
	not_ok "the package's lclkctl status"
fi
py=$pkgroot/usr/lib/python3/dist-packages
if out=$(cd / && PYTHONPATH=$py python3 -c 'import lclk
with lclk.Clock("/dev/lclk0") as c:
    now = c.now()
print(lclk.__file__, now.time_ns > 0)' 2>&1) &&
   [ "$out" = "$py/lclk/__init__.py True" ]; then
	ok "the package's Python module reads the clock"
else
	echo "$out" | sed 's/^/# /'
	not_ok "the package's Python module reads the clock"
fi

if modprobe -r lclk; then
	ok "modprobe -r lclk"
else
	not_ok "modprobe -r lclk"
fi
echo "1..$n"
