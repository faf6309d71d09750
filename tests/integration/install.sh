#!/bin/bash
# "make install" into a staging directory installs every expected file; the
# systemd unit passes systemd-analyze verify, loads no module itself (a
# modules-load.d entry does) and is locked down: its exposure score is at
# most 0.8 of Debian 12's chrony.service's; dkms builds the installed
# module sources against the test kernel's headers. TAP; cleans up.
set -uo pipefail
cd "$(dirname "$0")/../.."

stage=$(mktemp -d /tmp/lclk-install.$$.XXXXXX)
kver=$(scripts/test-kernel)
dkms_added=
cleanup() {
	[ -n "$dkms_added" ] && dkms remove -m lclk -v 0.1 --all >/dev/null 2>&1
	rm -rf "$stage"
}
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
echo "TAP version 13"
echo "1..9"

if make -s install DESTDIR="$stage/root" KDIR="/lib/modules/$kver/build" >"$stage/make.log" 2>&1; then
	ok "make install DESTDIR=..."
else
	tail -20 "$stage/make.log" | sed 's/^/# /'
	not_ok "make install DESTDIR=..."
fi

expected="usr/local/sbin/lclkctl usr/local/include/lclk.h usr/local/include/lclk_model.h
usr/local/include/linux/lclk.h usr/local/share/man/man8/lclkctl.8
usr/local/share/man/man4/lclk.4 usr/local/share/bash-completion/completions/lclkctl
usr/local/share/doc/lclk/lclk.conf.example etc/lclk/lclk.conf
etc/udev/rules.d/60-lclk.rules etc/systemd/system/lclk.service etc/modules-load.d/lclk.conf
usr/src/lclk-0.1/dkms.conf usr/src/lclk-0.1/kmod/Kbuild usr/src/lclk-0.1/kmod/lclk_main.c
usr/src/lclk-0.1/include/lclk_model.h usr/src/lclk-0.1/include/uapi/linux/lclk.h
lib/modules/$kver/extra/kmod/lclk.ko"
# The Python package, where Debian's python3 looks for the local admin's.
pydir=$(/usr/bin/python3 -c 'import sys; print("usr/local/lib/python%d.%d/dist-packages/lclk" % sys.version_info[:2])')
expected="$expected $pydir/__init__.py $pydir/torch.py $pydir/report.py $pydir/py.typed $pydir/_lclk.pyi"
missing=
for f in $expected; do
	[ -e "$stage/root/$f" ] || missing="$missing $f"
done
ls "$stage/root/$pydir"/_lclk.*.so >/dev/null 2>&1 || missing="$missing $pydir/_lclk.*.so"
[ -z "$missing" ] && ok "installed files present" || not_ok "installed files missing:$missing"
# The example configuration parses, and the man pages render cleanly.
if "$stage/root/usr/local/sbin/lclkctl" daemon -n -c "$stage/root/etc/lclk/lclk.conf" >/dev/null &&
   [ -z "$(MANWIDTH=80 man --warnings -l "$stage/root/usr/local/share/man/man8/lclkctl.8" 2>&1 >/dev/null)" ] &&
   [ -z "$(MANWIDTH=80 man --warnings -l "$stage/root/usr/local/share/man/man4/lclk.4" 2>&1 >/dev/null)" ]; then
	ok "example configuration parses, man pages render without warnings"
else
	not_ok "example configuration or man pages"
fi

# lclk(4)'s example, built from the installed headers only: no -I into
# the tree, and <stdio.h> before <lclk.h>, as the page has it.
inc=$stage/root/usr/local/include
MANWIDTH=200 man -l "$stage/root/usr/local/share/man/man4/lclk.4" 2>/dev/null |
	sed -n '/^EXAMPLE/,/^[A-Z]/{/^EXAMPLE/d;/^[A-Z]/d;p}' >"$stage/example.c"
if grep -q 'lclk_now' "$stage/example.c" &&
   gcc -Wall -Wextra -Werror -I"$inc" "$stage/example.c" -o "$stage/example" 2>"$stage/cc.log"; then
	ok "lclk(4)'s example builds from the installed <lclk.h> and <linux/lclk.h>"
else
	sed 's/^/# /' "$stage/cc.log" "$stage/example.c" | head -30
	not_ok "lclk(4)'s example builds from the installed headers"
fi
# Where there is no __int128 (a 32-bit target) the model header stops the
# build with its own reason, not with a confusing failure further on.
# -U__SIZEOF_INT128__ makes this compiler such a one.
if ! gcc -U__SIZEOF_INT128__ -fsyntax-only -I"$inc" "$stage/example.c" 2>"$stage/cc32.log" &&
   grep -q 'error: #error "lclk_model.h needs __int128' "$stage/cc32.log"; then
	ok "without __int128 the installed <lclk_model.h> says why it cannot build"
else
	sed 's/^/# /' "$stage/cc32.log" | head -10
	not_ok "without __int128 the installed <lclk_model.h> says why it cannot build"
fi

# systemd-analyze checks that ExecStart's binary exists: point it at the staged one
# (the man pages of Documentation= are staged, not installed: --man=no).
unit=$stage/lclk.service
sed "s|/usr/local/sbin/lclkctl|$stage/root/usr/local/sbin/lclkctl|; s|^ConditionPathExists=.*||" \
	"$stage/root/etc/systemd/system/lclk.service" >"$unit"
if out=$(systemd-analyze verify --man=no "$unit" 2>&1) && [ -z "$out" ]; then
	ok "systemd-analyze verify lclk.service"
else
	echo "$out" | sed 's/^/# /'
	not_ok "systemd-analyze verify lclk.service"
fi

# The module comes from modules-load.d, not from the unit, which keeps no
# right to load one.
unitf=$stage/root/etc/systemd/system/lclk.service
if [ "$(grep -v '^#' "$stage/root/etc/modules-load.d/lclk.conf" 2>/dev/null)" = lclk ] &&
   ! grep -qE 'modprobe|CAP_SYS_MODULE' "$unitf" && grep -qx 'ProtectKernelModules=yes' "$unitf"; then
	ok "modules-load.d/lclk.conf loads lclk; the unit has no modprobe, no CAP_SYS_MODULE"
else
	grep -nE 'modprobe|CAP_SYS_MODULE|ProtectKernelModules' "$unitf" | sed 's/^/# /'
	not_ok "modules-load.d/lclk.conf loads lclk; the unit has no modprobe, no CAP_SYS_MODULE"
fi
# systemd's exposure score, a fixed computation over the unit's settings.
if e=$(scripts/unit-exposure "$unitf") &&
   awk -v r="${e##* }" 'BEGIN { exit !(r <= 0.8) }'; then
	ok "lclk.service's exposure over chrony.service's <= 0.8 (lclk chrony ratio: $e)"
else
	not_ok "lclk.service's exposure over chrony.service's <= 0.8 (lclk chrony ratio: ${e:-none})"
fi

# dkms: add the staged sources (a symlink in /usr/src), build, remove.
if [ -e /usr/src/lclk-0.1 ]; then
	not_ok "dkms: /usr/src/lclk-0.1 exists already; not touching it"
else
	ln -s "$stage/root/usr/src/lclk-0.1" /usr/src/lclk-0.1
	if dkms add -m lclk -v 0.1 >"$stage/dkms.log" 2>&1; then
		dkms_added=1
		if dkms build -m lclk -v 0.1 -k "$kver" >>"$stage/dkms.log" 2>&1 &&
		   ls /var/lib/dkms/lclk/0.1/"$kver"/*/module/lclk.ko >/dev/null 2>&1; then
			ok "dkms build against $kver headers"
		else
			tail -20 "$stage/dkms.log" | sed 's/^/# /'
			cat /var/lib/dkms/lclk/0.1/build/make.log 2>/dev/null | tail -20 | sed 's/^/# /'
			not_ok "dkms build against $kver headers"
		fi
		dkms remove -m lclk -v 0.1 --all >/dev/null 2>&1 && dkms_added=
	else
		tail -20 "$stage/dkms.log" | sed 's/^/# /'
		not_ok "dkms add"
	fi
	rm -f /usr/src/lclk-0.1
fi
exit $failed
