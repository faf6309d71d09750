#!/bin/sh
# Build the test bed's initramfs for kernel KVER into OUT: static busybox,
# the modules that mounting the host root over virtio-9p under an overlay
# needs (taken from MODBASE/lib/modules/KVER, in the order modprobe would
# load them; a kernel that has one built in needs no file), /init and the
# isa-debug-exit helper. Nothing else: the guest runs the host's root.
#
#   mkinitramfs.sh KVER OUT EXITBIN [MODBASE]     (MODBASE default /)
set -eu
kver=$1
out=$2
exitbin=$3
modbase=${4:-/}
here=$(dirname "$0")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/modules" "$tmp/proc" "$tmp/sys" "$tmp/dev"
cp /bin/busybox "$tmp/bin/busybox"
ln -s busybox "$tmp/bin/sh"
cp "$exitbin" "$tmp/bin/guest-exit"
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init"

# 9p loads its virtio transport on demand, so that is named too.
deps=
for want in virtio_pci 9pnet_virtio 9p overlay; do
	deps="$deps
$(modprobe -d "$modbase" -S "$kver" --show-depends "$want")" || {
		echo "mkinitramfs: modprobe cannot resolve $want for $kver" >&2
		exit 1
	}
done
# "insmod PATH" lines, dependencies first; a module may appear twice.
echo "$deps" | awk '$1 == "insmod" { print $2 }' | while read -r f; do
	m=$(basename "$f")
	m=${m%.xz}
	m=${m%.zst}
	[ -e "$tmp/modules/$m" ] && continue
	case "$f" in
	*.ko) cp "$f" "$tmp/modules/$m" ;;
	*.ko.xz) xz -dc "$f" >"$tmp/modules/$m" ;;
	*.ko.zst) zstd -qdc "$f" >"$tmp/modules/$m" ;;
	*) echo "mkinitramfs: cannot unpack $f" >&2; exit 1 ;;
	esac
	echo "$m" >>"$tmp/modules/order"
done
touch "$tmp/modules/order"
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
