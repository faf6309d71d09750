#!/bin/sh
# In the guest (tests/vm/vm-run), from the repo root: load MODULE, then run
# TEST from a root file system in tmpfs and end the guest from there, with
# TEST's TAP on stdout (the serial port) and its status through
# isa-debug-exit, as tests/vm/guest-session.sh would report it.
#
#   tests/vm/ram-root.sh MODULE TEST
#
# For tests that suspend the guest: the host root is virtio-9p, whose
# driver has no PM callbacks, so the virtio device reset on resume leaves
# it without queues and the next access to a host file hangs the guest.
# So everything TEST needs after a resume is copied into memory first:
# busybox, the exit helper, TEST and the shared libraries it links. The
# module and its dependencies are loaded from the host root beforehand
# (tests/guest/lib/insmod.sh), and unloaded from memory afterwards: a test
# that leaves a file or mapping behind fails, as in tests/guest/run.sh.
set -eu
module=$1
test=$2
name=$(basename "$module" .ko)

ram=/run/ram-root
mkdir -p "$ram"
mount -t tmpfs -o mode=0755 ram-root "$ram"
mkdir -p "$ram/bin" "$ram/proc" "$ram/sys" "$ram/dev"
cp /bin/busybox "$ram/bin/"
for applet in sh mount rmmod; do
	ln -s busybox "$ram/bin/$applet"
done
cp "$LCLK_REPO/build/vm/guest-exit" "$ram/bin/"
cp "$test" "$ram/bin/test"
# ldd names each library and the dynamic loader by its absolute path.
ldd "$test" | grep -o '/[^ ]*' | while read -r lib; do
	mkdir -p "$ram$(dirname "$lib")"
	cp -L "$lib" "$ram$lib"
done

cat >"$ram/bin/session" <<EOF
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "# test: $test (root in tmpfs)"
/bin/test
status=\$?
if rmmod "$name"; then
	echo "ok - $name unloaded after $test"
else
	echo "not ok - rmmod $name after $test (a file or mapping left behind?)"
	[ "\$status" -ne 0 ] || status=1
fi
exec /bin/guest-exit "\$status"
EOF

tests/guest/lib/insmod.sh "$module"
exec chroot "$ram" /bin/sh /bin/session
