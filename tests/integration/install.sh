#!/bin/bash
# "make install" into a staging directory installs every expected file; the
# systemd unit passes systemd-analyze verify; dkms builds the installed
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
echo "1..5"

if make -s install DESTDIR="$stage/root" KDIR="/lib/modules/$kver/build" >"$stage/make.log" 2>&1; then
	ok "make install DESTDIR=..."
else
	tail -20 "$stage/make.log" | sed 's/^/# /'
	not_ok "make install DESTDIR=..."
fi

expected="usr/local/sbin/lclkctl usr/local/include/lclk.h usr/local/include/lclk_model.h
usr/local/include/uapi/linux/lclk.h usr/local/share/man/man8/lclkctl.8
usr/local/share/man/man4/lclk.4 usr/local/share/bash-completion/completions/lclkctl
usr/local/share/doc/lclk/lclk.conf.example etc/lclk/lclk.conf
etc/udev/rules.d/60-lclk.rules etc/systemd/system/lclk.service
usr/src/lclk-0.1/dkms.conf usr/src/lclk-0.1/kmod/Kbuild usr/src/lclk-0.1/kmod/lclk_main.c
usr/src/lclk-0.1/include/lclk_model.h usr/src/lclk-0.1/include/uapi/linux/lclk.h
lib/modules/$kver/extra/kmod/lclk.ko"
missing=
for f in $expected; do
	[ -e "$stage/root/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "installed files present" || not_ok "installed files missing:$missing"
# The example configuration parses, and the man pages render cleanly.
if "$stage/root/usr/local/sbin/lclkctl" daemon -n -c "$stage/root/etc/lclk/lclk.conf" >/dev/null &&
   [ -z "$(MANWIDTH=80 man --warnings -l "$stage/root/usr/local/share/man/man8/lclkctl.8" 2>&1 >/dev/null)" ] &&
   [ -z "$(MANWIDTH=80 man --warnings -l "$stage/root/usr/local/share/man/man4/lclk.4" 2>&1 >/dev/null)" ]; then
	ok "example configuration parses, man pages render without warnings"
else
	not_ok "example configuration or man pages"
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
