#!/bin/bash
# DKMS builds lclk for every other kernel of the matrix (tests/vm/kernels),
# in that release's chroot with its own dkms, compiler and headers, as a
# host running that release rebuilds lclk on a kernel upgrade. The host's
# own kernel is install.sh's. TAP; leaves nothing in the chroots.
set -uo pipefail
cd "$(dirname "$0")/../.."

kernels=$(scripts/kernel-cache --list)
echo "TAP version 13"

n=0 failed=0
for k in $kernels; do
	if ! kinfo=$(scripts/kernel-cache "$k"); then
		n=$((n + 1))
		failed=1
		echo "not ok $n - dkms build for $k: no kernel cache"
		continue
	fi
	eval "$kinfo"
	[ -n "$KROOT" ] || continue
	n=$((n + 1))
	inside() { scripts/in-release "$k" "$@"; }
	# What an interrupted run may have left (dkms cannot remove it without its sources).
	rm -rf "$KROOT/usr/src/lclk-0.1" "$KROOT/var/lib/dkms/lclk"
	log=$(mktemp)
	if make -s dkms-tree DESTDIR="$KROOT" >"$log" 2>&1 &&
	   inside dkms add -m lclk -v 0.1 >>"$log" 2>&1 &&
	   inside dkms build -m lclk -v 0.1 -k "$KVER" >>"$log" 2>&1 &&
	   ko=$(ls "$KROOT/var/lib/dkms/lclk/0.1/$KVER"/*/module/lclk.ko* 2>/dev/null | head -n 1) &&
	   [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$KVER "; then
		echo "ok $n - dkms build lclk/0.1 for $KVER ($KRELEASE, $(inside gcc --version | head -n 1))"
	else
		failed=1
		tail -20 "$log" | sed 's/^/# /'
		tail -20 "$KROOT/var/lib/dkms/lclk/0.1/build/make.log" 2>/dev/null | sed 's/^/# /'
		echo "not ok $n - dkms build lclk/0.1 for $KVER ($KRELEASE)"
	fi
	inside dkms remove -m lclk -v 0.1 --all >/dev/null 2>&1
	rm -rf "$KROOT/usr/src/lclk-0.1" "$KROOT/var/lib/dkms/lclk" "$log"
done
# At the end: the kernels with a chroot of their own (not the host's
# release, nor the debug kernel built on it) are known only now.
echo "1..$n"
exit $failed
