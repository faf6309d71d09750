#!/bin/sh
# Build the test bed's initramfs for kernel KVER into OUT: static busybox,
# the modules that mounting the host root over virtio-9p needs, /init and
# the isa-debug-exit helper. Nothing else: the guest runs the host's root.
set -eu
kver=$1
out=$2
here=$(dirname "$0")
exitbin=$3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/modules" "$tmp/proc" "$tmp/sys" "$tmp/dev"
cp /bin/busybox "$tmp/bin/busybox"
ln -s busybox "$tmp/bin/sh"
cp "$exitbin" "$tmp/bin/guest-exit"
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init"
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev \
	 virtio_pci netfs fscache 9pnet 9pnet_virtio 9p; do
	f=$(modinfo -k "$kver" -n "$m")
	case "$f" in
	*.ko) cp "$f" "$tmp/modules/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$tmp/modules/$m.ko" ;;
	*) echo "mkinitramfs: no module $m for $kver" >&2; exit 1 ;;
	esac
done
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
