#!/bin/bash
# The Debian packages (make deb, debian/) on every kernel of the matrix.
# TAP; leaves nothing behind on this machine or in the kernel caches.
#
#  1. The packages of each release of the matrix, built in that release's
#     root by its own dpkg-buildpackage, compiler, libbpf and Python
#     (scripts/deb-build: "make deb RELEASE=trixie"; this host's release in
#     its own root: build/deb/), each release's lintian clean (the tags one
#     debian/ cannot avoid on every release: scripts/deb-build). The
#     releases build side by side. Debian 11 (bullseye) builds none: its
#     libbpf (0.3) lacks the API lclkctl's tracer is written to (libbpf
#     0.7's bpf_prog_load() options, btf__load_vmlinux_btf(),
#     libbpf_probe_bpf_map_type()), its bpftool (5.10) cannot read a newer
#     kernel's BTF, its uapi headers lack bpf_prog_info's recursion_misses,
#     and its Python is 3.9 (the module needs 3.10); it gets lclk-dkms
#     (Architecture: all) as built on this host, and no lclkctl or
#     python3-lclk (README: "Installing on a training host").
#  2. For each kernel, on this host: dpkg installs its release's packages
#     into that release's root (scripts/kernel-cache's chroot, with its
#     linux-headers, dkms and compiler; this host's own root for its
#     release), seen through a throwaway overlay, so that neither is
#     changed. lclk-dkms's postinst has DKMS build and install the module
#     for the release's kernel; the lclkctl unit passes systemd-analyze
#     verify; the lclk user exists, the configuration is a conffile that
#     "lclkctl daemon -n" parses, python3 imports lclk; purge leaves no file
#     that was not there before (the overlay's upper layer, against the
#     root).
#  3. For each kernel, one VM (tests/vm/vm-run), tests/deb/guest.sh: the
#     module DKMS built for it, where DKMS installed it, with the depmod
#     files DKMS made; modprobe lclk; the release's lclkctl and Python
#     module (its packages unpacked with dpkg-deb into its root, which the
#     guest sees through its own throwaway overlay) read the clock, run in
#     that root as a host of the release runs them; modprobe -r lclk.
#
# LCLK_DEB_KERNELS narrows the kernels (default: the matrix, not "debug").
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD

# --release ALIAS DEBDIR PACKAGES OUT TMPDIR: step 2 for one kernel, the
# packages (one argument) of DEBDIR, in a private mount namespace (its
# mounts vanish with it). TAP lines, no plan.
if [ "${1:-}" = --release ]; then
	k=$2 debs=$3 pkgs=$4 out=$5 t=$6
	eval "$(scripts/kernel-cache "$k")" || exit 1
	lower=${KROOT:-/}
	# The caller removes $t once this namespace, and its mounts, are gone.
	trap 'cd / && umount -R -l "$t" 2>/dev/null' EXIT
	# The root's /run is a tmpfs, as on any host: what adduser (its lock)
	# and systemd-analyze leave there is gone at the next boot.
	mount -t tmpfs -o size=2g tmpfs "$t" && mkdir "$t/u" "$t/w" "$t/m" &&
		mount -t overlay overlay -o "lowerdir=$lower,upperdir=$t/u,workdir=$t/w,xino=off" "$t/m" &&
		mount -t proc proc "$t/m/proc" && mount --rbind /dev "$t/m/dev" &&
		mount --make-rslave "$t/m/dev" && mount -t tmpfs tmpfs "$t/m/run" ||
		{ echo "not ok - $k: overlay over $lower"; exit 1; }
	m=$t/m
	# The release's root as a host running its kernel has it: the
	# kernel's modules (from the kernel cache) under /lib/modules, so
	# that DKMS's depmod there makes the modules.dep modprobe will use.
	if [ -n "$KROOT" ]; then
		mkdir -p "$t/mu" "$t/mw" "$m/lib/modules/$KVER" &&
			mount -t overlay overlay -o "lowerdir=$KMODBASE/lib/modules/$KVER:$lower/lib/modules/$KVER,upperdir=$t/mu,workdir=$t/mw,xino=off" \
				"$m/lib/modules/$KVER" || { echo "not ok - $k: overlay of $KVER's modules"; exit 1; }
	fi
	inroot() { chroot "$m" env PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"; }
	log=$out/dpkg.log
	mkdir -p "$m/tmp/lclk-debs"
	files=
	for p in $pkgs; do
		cp "$debs/${p}_"*.deb "$m/tmp/lclk-debs/"
		files="$files /tmp/lclk-debs/$(basename "$debs/${p}_"*.deb)"
	done
	start=$SECONDS
	# shellcheck disable=SC2086 # one package a word
	if inroot dpkg -i $files >"$log" 2>&1; then
		echo "ok - $k: dpkg -i $pkgs into $KRELEASE's root ($((SECONDS - start)) s, DKMS build included)"
	else
		sed 's/^/# /' "$log" | tail -30
		tail -20 "$m"/var/lib/dkms/lclk/*/build/make.log 2>/dev/null | sed 's/^/# /'
		echo "not ok - $k: dpkg -i $pkgs into $KRELEASE's root"
	fi
	ko=$(ls "$m/lib/modules/$KVER/updates/dkms/"lclk.ko* 2>/dev/null | head -n 1)
	status=$(inroot dkms status -m lclk -k "$KVER" 2>/dev/null)
	if [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$KVER " &&
	   grep -q ': installed' <<<"$status"; then
		# The module and the depmod files, for the guest (step 3).
		mkdir -p "$out/modules" && cp "$ko" "$out/" &&
			cp "$m/lib/modules/$KVER"/modules.* "$out/modules/"
		echo "ok - $k: DKMS built and installed lclk for $KVER ($(inroot gcc --version | head -n 1)): ${ko#"$m"}"
	else
		echo "# dkms status: $status"
		echo "not ok - $k: DKMS built and installed lclk for $KVER"
	fi
	if [ "$pkgs" != lclk-dkms ]; then
		# /lib/systemd/system on Debian 12, /usr/lib/systemd/system later.
		unit=$(inroot dpkg-query -L lclkctl | grep '/systemd/system/lclk\.service$')
		if v=$(inroot systemd-analyze verify "$unit" 2>&1) && [ -z "$v" ]; then
			echo "ok - $k: systemd-analyze verify $unit"
		else
			sed 's/^/# /' <<<"$v"
			echo "not ok - $k: systemd-analyze verify $unit"
		fi
		if inroot getent passwd lclk >/dev/null &&
		   inroot dpkg-query -W -f='${Conffiles}\n' lclkctl | grep -q '^ /etc/lclk/lclk.conf ' &&
		   inroot lclkctl daemon -n -c /etc/lclk/lclk.conf >/dev/null 2>&1 &&
		   inroot python3 -c 'import lclk, lclk.report; assert lclk.Clock' 2>/dev/null; then
			echo "ok - $k: the lclk user exists, /etc/lclk/lclk.conf is a conffile and parses, python3 imports lclk"
		else
			echo "not ok - $k: the lclk user, the conffile, python3's import of lclk"
		fi
	fi
	# shellcheck disable=SC2086
	if inroot dpkg --purge $pkgs >>"$log" 2>&1 && [ -z "$(inroot dkms status -m lclk 2>/dev/null)" ]; then
		echo "ok - $k: dpkg --purge $pkgs; DKMS has no lclk left"
	else
		sed 's/^/# /' "$log" | tail -20
		echo "not ok - $k: dpkg --purge $pkgs"
	fi
	rm -rf "$m/tmp/lclk-debs"
	[ -z "$KROOT" ] || umount "$m/lib/modules/$KVER"
	# What the packages left: every entry of the upper layer that the
	# root did not have, and every entry the root had that is now gone
	# (a whiteout). dpkg's, debconf's and the password files' own records
	# change with any package, and are left out; so are man-db's index,
	# which its trigger rewrites, python's bytecode caches of modules
	# that were there before, and the machine-owner key that DKMS 3.1+
	# (sid's) makes on its first build to sign every module it builds:
	# dkms's, kept for the next module, as on a real host.
	left=$(cd "$t/u" && find . -mindepth 1 \( -type c -printf 'removed %P\n' \) -o \
		\( ! -type c -printf '%P\n' \) | while read -r a b; do
			if [ "$a" = removed ]; then echo "removed $b"
			elif [ ! -e "$lower/$a" ] && [ ! -L "$lower/$a" ]; then echo "$a"; fi
		done | grep -vE '^(var/lib/dpkg/|var/log/|var/cache/debconf/|var/cache/man/|etc/(passwd|group|shadow|gshadow)-$|tmp/lclk-debs$|var/lib/dkms/mok\.(key|pub)$)')
	# Of dpkg's own records, the packages' must be gone too.
	left="$left$(find "$m/var/lib/dpkg/info" -maxdepth 1 \( -name 'lclk-dkms[.:]*' -o \
		-name 'lclkctl[.:]*' -o -name 'python3-lclk[.:]*' \) -printf ' var/lib/dpkg/info/%f')"
	if [ -z "$left" ] && ! grep -q '^lclk:' "$m/etc/passwd" "$m/etc/group" &&
	   ! inroot dpkg-query -W lclk-dkms lclkctl python3-lclk >/dev/null 2>&1; then
		echo "ok - $k: purge left nothing behind ($(cd "$t/u" && find . -type f | wc -l) files changed, none new)"
	else
		sed 's/^/# left: /' <<<"$left" | head -40
		grep '^lclk:' "$m/etc/passwd" "$m/etc/group" | sed 's/^/# left: /'
		inroot dpkg-query -W lclk-dkms lclkctl python3-lclk 2>/dev/null | sed 's/^/# left: /'
		echo "not ok - $k: purge left nothing behind"
	fi
	exit 0
fi

out=build/deb-test
rm -rf "$out" && mkdir -p "$out"
n=0 failed=0
tap() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) n=$((n + 1)); echo "ok $n ${line#ok }" ;;
		"not ok "*) n=$((n + 1)); failed=1; echo "not ok $n ${line#not ok }" ;;
		*) echo "$line" ;;
		esac
	done
}
echo "TAP version 13"

kernels=${LCLK_DEB_KERNELS:-$(scripts/kernel-cache --list | grep -vx debug)}
host_release=$(. /etc/os-release && echo "$VERSION_CODENAME")
# Step 1's exception (see above): releases that build no packages.
no_build=" bullseye "
release_of() { awk -v n="$1" '!/^#/ && NF >= 2 && ($1 == n || $2 == n) { print $2 }' tests/vm/kernels; }
debdir() { if [ "$1" = "$host_release" ]; then echo build/deb; else echo "build/deb-$1"; fi; }
builds() { [[ $no_build != *" $1 "* ]]; }

# Step 1: this host's release always (its lclk-dkms goes into the releases
# that build none), each release of the kernels that builds.
releases=$host_release
for k in $kernels; do
	r=$(release_of "$k")
	[ -n "$r" ] && builds "$r" && [[ " $releases " != *" $r "* ]] && releases="$releases $r"
done
start=$SECONDS
for r in $releases; do
	(
		s=$SECONDS
		make -s deb RELEASE="$r" >"$out/make-deb-$r.log" 2>&1
		rc=$?
		# The CPU time too (user and system, of every process of the
		# build): on a machine shared with other work, the elapsed
		# time says little of what the build costs.
		times >"$out/make-deb-$r.times"
		cpu=$(tail -n 1 "$out/make-deb-$r.times" | awk '{ split($1, u, /[ms]/); split($2, y, /[ms]/); printf "%.0f", u[1] * 60 + u[2] + y[1] * 60 + y[2] }')
		echo "$rc $((SECONDS - s)) $cpu" >"$out/make-deb-$r.rc"
	) &
done
wait
for r in $releases; do
	read -r rc took cpu <"$out/make-deb-$r.rc"
	d=$(debdir "$r")
	known=$(grep -c '^known, see scripts/deb-build' "$out/make-deb-$r.log")
	if [ "$rc" = 0 ]; then
		tap <<<"ok - make deb RELEASE=$r: $(cd "$d" && ls lclk-dkms_*.deb lclkctl_*.deb python3-lclk_*.deb | paste -sd ' '), $r's lintian -I -E --pedantic: nothing$([ "$known" = 0 ] || echo " but $known known tags") ($took s, CPU $cpu s; $((SECONDS - start)) s all side by side)"
	else
		sed 's/^/# /' "$out/make-deb-$r.log" | tail -30
		tap <<<"not ok - make deb RELEASE=$r, lintian clean"
	fi
done

for k in $kernels; do
	mkdir -p "$out/$k"
	start=$SECONDS
	r=$(release_of "$k")
	if builds "$r"; then
		debs=$repo/$(debdir "$r") pkgs="lclk-dkms lclkctl python3-lclk"
	else
		debs=$repo/$(debdir "$host_release") pkgs=lclk-dkms
	fi
	# What any host of the release has (adduser: Priority important),
	# which the minimal root may lack.
	[ "$r" = "$host_release" ] || [ "$pkgs" = lclk-dkms ] ||
		scripts/release-root "$r" adduser systemd python3 >/dev/null
	t=$(mktemp -d /tmp/lclk-deb.XXXXXX)
	tap < <(unshare --mount --propagation private "$0" --release "$k" "$debs" "$pkgs" "$repo/$out/$k" "$t")
	rmdir "$t"
	echo "# $k: host side took $((SECONDS - start)) s"
done

for k in $kernels; do
	start=$SECONDS
	ko=$(ls "$out/$k/"lclk.ko* 2>/dev/null | head -n 1)
	if [ -z "$ko" ]; then
		tap <<<"not ok - $k: no DKMS-built module to boot with"
		continue
	fi
	eval "$(scripts/kernel-cache "$k")"
	# The release's lclkctl and python3-lclk, for its root in the guest.
	debs=
	! builds "$KRELEASE" || debs="$(ls "$repo/$(debdir "$KRELEASE")"/{lclkctl,python3-lclk}_*.deb | paste -sd ' ')"
	tests/vm/vm-run -k "$k" -s 2 -t 600 -- tests/deb/guest.sh "$ko" "$out/$k/modules" "$KRELEASE" "${KROOT:-/}" "$debs" >"$out/$k/guest.log" 2>&1
	rc=$?
	tap < <(sed 's/^\(ok\|not ok\) [0-9]* /\1 /' "$out/$k/guest.log" | grep -v '^1\.\.')
	[ "$rc" = 0 ] || tap <<<"not ok - $k: the guest exited with status $rc"
	echo "# $k: guest took $((SECONDS - start)) s"
done
echo "1..$n"
exit $failed
