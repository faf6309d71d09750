#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# lclk_conftest.sh: what the kernel being built against offers, found by
# compiling, not by its version number.
#
# Distribution kernels backport interfaces without changing their version:
# RHEL 9.4's 5.14.0-427 has the one-argument class_create() of Linux 6.4,
# RHEL 9.5's made vma->vm_flags read-only behind vm_flags_set() as 6.3 did.
# A helper chosen by LINUX_VERSION_CODE fails to build there. So kmod/Kbuild
# runs this script once per build, before any of the module's objects, as
# the rule for $(obj)/lclk_conftest.h:
#
#   lclk_conftest.sh OUT CC CFLAGS...
#
# CC and CFLAGS are the kernel's own compiler and the very flags Kbuild
# compiles the module's objects with ($(c_flags) with part-of-module set,
# its dependency-file option taken out): the target kernel's headers, its
# config, its -std, W=1's warnings, any sanitizer. Each feature below is a
# tiny C file compiled with them (-fsyntax-only: no code is generated) and
# the script writes OUT, a header of one line per feature:
#
#   #define LCLK_HAVE_CLASS_CREATE_ONE_ARG 1    (it compiled)
#   #define LCLK_HAVE_VM_FLAGS_SET 0            (it did not)
#
# kmod/lclk_compat.h includes OUT and chooses each helper by those macros.
# Only where one is not defined does it fall back to LINUX_VERSION_CODE:
# when LCLK_CONFTEST=0 is given to make (no tests run at all), and when
# the first test below, a file that uses nothing new, fails to compile:
# then the flags or the headers are not what this script expects, every
# other answer would be a guess, so OUT defines no feature and the script
# says so on stderr (a warning the matrix build fails on).
#
# A test fails on a compiler error only: each is written so that the
# absence of its feature is an error (an undeclared function with
# -Werror=implicit-function-declaration, a macro given the wrong number of
# arguments, a _Static_assert on a type), and free of warnings otherwise,
# so that a kernel built with CONFIG_WERROR answers the same.
#
# The tests run side by side: on 6.1's headers 1.5 s of CPU, 1.4 s of wall
# time on two cores (each file is parsed, no code is generated). Kbuild's if_changed
# runs the script again only when the command line (kernel, flags) or the
# script changes. Temporary files live in a directory of their own.
#
# To add a feature: a test_* function below (its body on stdin, after the
# includes it names), a line in the list at the bottom, and a fallback in
# lclk_compat.h ("#ifndef LCLK_HAVE_X ... LINUX_VERSION_CODE ...").

set -u

out=${1:?usage: lclk_conftest.sh OUT CC [CFLAGS...]}
cc=${2:?usage: lclk_conftest.sh OUT CC [CFLAGS...]}
shift 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lclk_conftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# write NAME HEADER...: the test's source, the body from stdin.
write() {
	name=$1
	shift
	{
		for h in "$@"; do
			echo "#include <$h>"
		done
		cat
	} >"$tmp/$name.c"
}

# compile NAME CFLAGS...: in the background; NAME.ok when it compiled.
compile() {
	name=$1
	shift
	# $cc unquoted: CC may be a command with arguments ("ccache gcc").
	# shellcheck disable=SC2086
	{ $cc "$@" -fsyntax-only -Werror=implicit-function-declaration \
		-Werror=incompatible-pointer-types "$tmp/$name.c" \
		>"$tmp/$name.log" 2>&1 && : >"$tmp/$name.ok"; } &
}

# Uses every header the tests do, and nothing a kernel might lack.
test_sanity() {
	write sanity linux/device.h linux/hrtimer.h linux/mm.h linux/module.h linux/pm.h <<'EOF'
int lclk_conftest(struct vm_area_struct *vma);
int lclk_conftest(struct vm_area_struct *vma)
{
	return vma->vm_start == 0;
}
EOF
}

# 6.3: vma->vm_flags read-only, changed through vm_flags_set/_clear().
test_vm_flags_set() {
	write vm_flags_set linux/mm.h <<'EOF'
void lclk_conftest(struct vm_area_struct *vma);
void lclk_conftest(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
	vm_flags_clear(vma, VM_MAYWRITE);
}
EOF
}

# 6.4: class_create(name), without the owner module.
test_class_create_one_arg() {
	write class_create_one_arg linux/device.h linux/module.h <<'EOF'
struct class *lclk_conftest(void);
struct class *lclk_conftest(void)
{
	return class_create("lclk_conftest");
}
EOF
}

# 6.2: a class's devnode() takes a const struct device.
test_const_devnode() {
	write const_devnode linux/device.h <<'EOF'
_Static_assert(__builtin_types_compatible_p(typeof(((struct class *)0)->devnode),
					    char *(*)(const struct device *, umode_t *)),
	       "devnode() takes a struct device that is not const");
EOF
}

# 6.13: hrtimer_setup() sets the callback with the rest.
test_hrtimer_setup() {
	write hrtimer_setup linux/hrtimer.h <<'EOF'
static enum hrtimer_restart lclk_conftest_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

void lclk_conftest(struct hrtimer *t);
void lclk_conftest(struct hrtimer *t)
{
	hrtimer_setup(t, lclk_conftest_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}
EOF
}

# 5.17: pm_sleep_ptr(), NULL without CONFIG_PM_SLEEP, yet always compiled.
test_pm_sleep_ptr() {
	write pm_sleep_ptr linux/device.h linux/pm.h <<'EOF'
static int lclk_conftest_resume(struct device *dev)
{
	return 0;
}

static const struct dev_pm_ops lclk_conftest_ops = {
	.resume = pm_sleep_ptr(lclk_conftest_resume),
};

const struct dev_pm_ops *lclk_conftest(void);
const struct dev_pm_ops *lclk_conftest(void)
{
	return pm_sleep_ptr(&lclk_conftest_ops);
}
EOF
}

# 5.17: DEFINE_SIMPLE_DEV_PM_OPS(), whose callbacks need no __maybe_unused.
test_define_simple_dev_pm_ops() {
	write define_simple_dev_pm_ops linux/device.h linux/pm.h <<'EOF'
static int lclk_conftest_resume(struct device *dev)
{
	return 0;
}

static DEFINE_SIMPLE_DEV_PM_OPS(lclk_conftest_ops, NULL, lclk_conftest_resume);

const struct dev_pm_ops *lclk_conftest(void);
const struct dev_pm_ops *lclk_conftest(void)
{
	return &lclk_conftest_ops;
}
EOF
}

# 6.13: the vmclock page's layout in a uapi header; lclk_vmclock.h has a
# copy, checked against it where it exists.
test_vmclock_abi() {
	write vmclock_abi linux/types.h linux/vmclock-abi.h <<'EOF'
_Static_assert(sizeof(((struct vmclock_abi *)0)->disruption_marker) == 8,
	       "no disruption_marker");
EOF
}

features="vm_flags_set class_create_one_arg const_devnode hrtimer_setup pm_sleep_ptr
	  define_simple_dev_pm_ops vmclock_abi"

for t in sanity $features; do
	"test_$t"
	compile "$t" "$@"
done
wait

{
	echo "/* Generated by kmod/lclk_conftest.sh for the kernel built against. */"
	echo "#ifndef _LCLK_CONFTEST_H"
	echo "#define _LCLK_CONFTEST_H"
	if [ -e "$tmp/sanity.ok" ]; then
		for t in $features; do
			have=0
			[ -e "$tmp/$t.ok" ] && have=1
			echo "#define LCLK_HAVE_$(echo "$t" | tr '[:lower:]' '[:upper:]') $have"
		done
	else
		echo "/* The tests could not compile: helpers chosen by LINUX_VERSION_CODE. */"
	fi
	echo "#endif"
} >"$tmp/out.h" || exit 1

if [ ! -e "$tmp/sanity.ok" ]; then
	echo "lclk_conftest.sh: warning: cannot compile against this kernel's headers;" \
	     "helpers chosen by LINUX_VERSION_CODE:" >&2
	head -n 5 "$tmp/sanity.log" >&2
fi
# Whole or not at all: a build interrupted here leaves no half header.
cp "$tmp/out.h" "$out.$$" && mv "$out.$$" "$out"
