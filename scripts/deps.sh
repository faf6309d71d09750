#!/bin/sh
# Install, from Debian's packages only, what building and testing lclk needs.
# Idempotent: asks apt only for packages that are missing. flex, bison, bc
# and dwarves (pahole, for BTF) build the debug kernel (make debug-kernel);
# python3-mypy checks the Python package's types (python/tests/test_types.py);
# valgrind counts the trace merge's instructions (tests/bench/cluster.sh);
# debhelper, dh-dkms, dh-python, dpkg-dev and lintian build and check the
# Debian packages (make deb, tests/integration/deb.sh); generate-ninja,
# ninja-build, g++, libprotobuf-dev and libprotoc-dev build Perfetto's trace_processor_shell
# (scripts/trace-processor, make trace-processor).
set -eu

PKGS="make gcc libc6-dev pkg-config git
linux-image-amd64 linux-headers-amd64 linux-source
clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
qemu-system-x86 busybox-static cpio kmod sparse
chrony linuxptp openmpi-bin libopenmpi-dev bpftrace iproute2
python3 protobuf-compiler sntp systemd dkms debootstrap
python3-dev python3-pip python3-setuptools python3-wheel python3-torch python3-mypy
flex bison bc dwarves valgrind
debhelper dh-dkms dh-python dpkg-dev lintian fakeroot
generate-ninja ninja-build g++ libprotobuf-dev libprotoc-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed ||
		missing="$missing $p"
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing packages:$missing (run as root to install)" >&2
		exit 1
	fi
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# chrony's package starts chronyd, which would discipline this machine's
# clock; keep it stopped: tests run their own chronyd with -x.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet chrony 2>/dev/null; then
	systemctl stop chrony || true
fi
pkill -x chronyd 2>/dev/null || true
exit 0
