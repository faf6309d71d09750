#!/bin/bash
# The module's helpers are chosen by what the kernel has, not by its version
# (kmod/lclk_conftest.sh): a header set whose version and features disagree,
# as a RHEL kernel's do, builds.
#
# The headers are a copy of the 6.1 kernel's build tree (scripts/kernel-cache;
# LCLK_CONFTEST_KERNEL names another), made here in a temporary directory,
# with two of RHEL 9's backports laid over it: 6.4's one-argument
# class_create() (RHEL 9.4) and 6.3's read-only vma->vm_flags behind
# vm_flags_set()/vm_flags_clear() (RHEL 9.5). LINUX_VERSION_CODE still says
# 6.1. (The overlay fits 6.1's headers: 5.10's mm.h writes vm_flags itself,
# so there the copy is no kernel at all, and the feature tests say so.) The module's DKMS tree (make dkms-tree) is built against it twice,
# with that release's make and compiler:
#   1. LCLK_CONFTEST=0, helpers chosen by version alone: must fail, on
#      class_create() and vm_flags (else the overlay did not take);
#   2. as DKMS builds it: must build, W=1 clean, with the generated
#      lclk_conftest.h saying CLASS_CREATE_ONE_ARG 1 and VM_FLAGS_SET 1
#      where the version says 0 (shown below as "# " lines).
# TAP; leaves nothing behind.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

alias=${LCLK_CONFTEST_KERNEL:-6.1}
failed=0
echo "TAP version 13"
echo "1..3"
if ! kinfo=$(scripts/kernel-cache "$alias"); then
	for i in 1 2 3; do echo "not ok $i - no kernel cache for $alias"; done
	exit 1
fi
eval "$kinfo"
inside() { scripts/in-release "$KALIAS" "$@"; }

mkdir -p "$KROOT/tmp"
tmp=$(mktemp -d "$KROOT/tmp/lclk-conftest-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
in=${tmp#"$KROOT"}
log=$tmp/log

# The build tree, and the source tree it includes when it is Debian's split
# of one into -amd64 (config, generated headers) and -common (the rest).
build=$(readlink -f "$KROOT$KBUILD")
common=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$build/Makefile" | head -n 1)
copy() { # copy FROM TO: symlinks out of FROM point where they did (in KROOT)
	local l t
	cp -a "$1" "$2" || return 1
	find "$2" -type l | while read -r l; do
		[ -e "$l" ] && continue
		t=$(readlink -f "$1${l#"$2"}")
		ln -sfn "${t#"$KROOT"}" "$l"
	done
}
fail_all() {
	sed 's/^/# /' "$log" 2>/dev/null | tail -20
	for i in 1 2 3; do echo "not ok $i - $1"; done
	exit 1
}
: >"$log"
copy "$build" "$tmp/build" || fail_all "cannot copy $build"
hdrs=$tmp/build
if [ -n "$common" ]; then
	copy "$KROOT$common" "$tmp/common" || fail_all "cannot copy $common"
	sed -i "s|^include $common/Makefile\$|include $in/common/Makefile|" "$tmp/build/Makefile"
	hdrs=$tmp/common
fi

# RHEL 9.4: class_create(name), the owner gone (a macro here, over 6.1's
# __class_create(), so that the module also links).
class=$hdrs/include/linux/device/class.h
sed -i -e 's|^#define class_create(owner, name)|#define class_create(name)|' \
       -e 's|__class_create(owner, name, &__key);|__class_create(THIS_MODULE, name, \&__key);|' "$class"
# RHEL 9.5: vm_flags read-only, written through vm_flags_set()/_clear().
types=$hdrs/include/linux/mm_types.h
sed -i 's|^\tunsigned long vm_flags;\t\t/\* Flags, see mm.h. \*/$|\tunion {\n\t\tconst unsigned long vm_flags;\n\t\tunsigned long __private __vm_flags;\n\t};|' "$types"
mm=$hdrs/include/linux/mm.h
sed -i 's|^#endif /\* _LINUX_MM_H \*/$|static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)\n{\n\tACCESS_PRIVATE(vma, __vm_flags) \|= flags;\n}\n\nstatic inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)\n{\n\tACCESS_PRIVATE(vma, __vm_flags) \&= ~flags;\n}\n\n&|' "$mm"
if ! grep -q '^#define class_create(name)' "$class" ||
   ! grep -q 'const unsigned long vm_flags;' "$types" ||
   ! grep -q '^static inline void vm_flags_set' "$mm"; then
	fail_all "the overlay did not apply to $alias's headers ($KVER)"
fi

version=$(sed -n 's/^#define LINUX_VERSION_CODE \([0-9]*\)$/\1/p' \
	"$tmp/build/include/generated/uapi/linux/version.h")
echo "# headers: $KVER's (LINUX_VERSION_CODE $version: $((version >> 16)).$(((version >> 8) & 255)))" \
	"with class_create(name) and vm_flags_set() of 6.4 and 6.3"

make -s dkms-tree DESTDIR="$tmp/dkms" >"$log" 2>&1 || fail_all "make dkms-tree failed"
src=$in/dkms/usr/src/lclk-0.1/kmod

# 1. By version alone.
if inside make -C "$in/build" M="$src" W=1 LCLK_CONFTEST=0 modules >"$log" 2>&1; then
	failed=1
	echo "not ok 1 - version checks alone build on headers where the version lies (the overlay did not take)"
elif grep -q 'class_create' "$log" && grep -q 'vm_flags' "$log"; then
	grep -E 'error:' "$log" | sed -e 's|^.*/kmod/||' -e 's/^/# /' | head -4
	echo "ok 1 - helpers chosen by LINUX_VERSION_CODE alone fail: class_create() and vm_flags"
else
	sed 's/^/# /' "$log" | tail -20
	failed=1
	echo "not ok 1 - the version-only build failed, but not on class_create() and vm_flags"
fi
inside make -C "$in/build" M="$src" clean >/dev/null 2>&1

# 2. As DKMS builds it: the feature tests choose.
gen=$tmp/dkms/usr/src/lclk-0.1/kmod/lclk_conftest.h
if inside make -C "$in/build" M="$src" W=1 modules >"$log" 2>&1 &&
   ! grep -q 'warning:' "$log" && [ -e "$gen" ]; then
	echo "ok 2 - built with the feature tests, W=1 clean"
else
	grep -E 'warning:|error:' "$log" | head -20 | sed 's/^/# /'
	failed=1
	echo "not ok 2 - the build with the feature tests failed"
fi
sed 's/^/#   /' "$gen" 2>/dev/null
if grep -qx '#define LCLK_HAVE_CLASS_CREATE_ONE_ARG 1' "$gen" 2>/dev/null &&
   grep -qx '#define LCLK_HAVE_VM_FLAGS_SET 1' "$gen" &&
   [ "$version" -lt $(((6 << 16) + (3 << 8))) ]; then
	echo "ok 3 - the feature tests chose against LINUX_VERSION_CODE $version: one-argument class_create(), vm_flags_set()"
else
	failed=1
	echo "not ok 3 - the feature tests did not find the backports"
fi
exit $failed
