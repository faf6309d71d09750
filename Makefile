# SPDX-License-Identifier: GPL-2.0
# lclk: module, BPF probes, lclkctl, tests. "make help" lists the targets.

KVER	?= $(shell scripts/test-kernel 2>/dev/null)
KDIR	?= /lib/modules/$(KVER)/build
BUILD	:= build
V	?= 0

CC	:= gcc
CLANG	:= clang
BPFTOOL	:= bpftool
CFLAGS	?= -O2 -g
CFLAGS	+= -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	   -I. -Iinclude -Iinclude/uapi -Itools -I$(BUILD)/bpf -I$(BUILD)/kselftest
LDLIBS	:= -l:libbpf.a -lelf -lz -lpthread -lm

# Userspace: every tools/*.c and tools/SUBSYSTEM/*.c but the entry point
# goes into a library that lclkctl and the host unit tests link.
TOOL_SRCS	:= $(filter-out tools/lclkctl.c,$(wildcard tools/*.c tools/*/*.c))
# bpf/'s headers without .bpf. are the records and keys both sides share.
TOOL_HDRS	:= $(wildcard tools/*.h tools/*/*.h) $(filter-out %.bpf.h,$(wildcard bpf/*.h))
TOOL_OBJS	:= $(TOOL_SRCS:%.c=$(BUILD)/%.o)
TOOL_LIB	:= $(BUILD)/tools/liblclk.a
LCLKCTL		:= $(BUILD)/lclkctl

BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(BPF_SRCS:%.bpf.c=$(BUILD)/%.bpf.o)
BPF_SKELS	:= $(BPF_SRCS:%.bpf.c=$(BUILD)/%.skel.h)
VMLINUX_H	:= $(BUILD)/bpf/vmlinux.h
HOST_BTF	:= /sys/kernel/btf/vmlinux

# Tests: each tests/<suite>/<name>.c is one binary build/tests/<suite>/<name>;
# the unit tests mirror tools/, a directory per subsystem.
HOST_TESTS	:= $(patsubst %.c,$(BUILD)/%,$(wildcard tests/host/*.c tests/host/*/*.c))
GUEST_TESTS	:= $(patsubst %.c,$(BUILD)/%,$(wildcard tests/guest/*.c))
BENCHES		:= $(patsubst %.c,$(BUILD)/%,$(filter-out %.bpf.c,$(wildcard tests/bench/*.c)))
# A benchmark's own BPF programs: tests/bench/X.bpf.c → build/tests/bench/X.skel.h.
BENCH_SKELS	:= $(patsubst %.bpf.c,$(BUILD)/%.skel.h,$(wildcard tests/bench/*.bpf.c))
# The fault campaign's programs: tests/faults/X.c → build/tests/faults/X.
FAULT_BINS	:= $(patsubst %.c,$(BUILD)/%,$(wildcard tests/faults/*.c))
FUZZERS		:= $(patsubst %.c,$(BUILD)/%,$(wildcard tests/fuzz/*.c))
# LD_PRELOAD shims that inject failures: tests/shim/X.c → build/tests/shim/X.so.
SHIMS		:= $(patsubst %.c,$(BUILD)/%.so,$(wildcard tests/shim/*.c))

KSFT_H		:= $(BUILD)/kselftest/kselftest_harness.h
CHECKPATCH	:= $(BUILD)/kernel-src/scripts/checkpatch.pl
LINUX_SRC_TAR	:= $(firstword $(wildcard /usr/src/linux-source-*.tar.xz))

ifeq ($(V),0)
Q := @
endif

# The kernel matrix: every kernel the module is built for and tested on,
# with the debug kernel once "make debug-kernel" has built it, unless
# LCLK_DEBUG_KERNEL=0 (scripts/kernel-cache --list).
KERNELS		:= $(shell scripts/kernel-cache --list)

.PHONY: all deps module matrix debug-kernel fuzz-kernel bpf bpf-arm64 tools tests python lint check check-debug demo \
	bench trace-processor clean help install install-files install-python dkms-tree deb version
# BPF objects are intermediates of the skeletons; keep them for bpftool/debugging.
.SECONDARY:

all: module tools tests

help:
	@echo "make            build module (KDIR=$(KDIR)), BPF objects, lclkctl, tests"
	@echo "make deps       install missing Debian packages (root)"
	@echo "make matrix     build the module for every kernel of tests/vm/kernels ($(KERNELS)),"
	@echo "                each with its release's compiler, W=1 and sparse clean"
	@echo "make debug-kernel  build the test bed's KASAN/lockdep/UBSAN kernel once (cached"
	@echo "                outside the repo) and the module for it; then in the matrix (LCLK_DEBUG_KERNEL=0: not)"
	@echo "make fuzz-kernel   fuzz the module's interfaces under it (SECONDS=1800 SEED=0: random)"
	@echo "make bpf-arm64  compile the BPF probes for arm64 too (a compile test, in make check)"
	@echo "make lint       checkpatch --strict, and sparse on every kernel; fails on any finding"
	@echo "make check      deps, build, lint, every suite; last line 'N passed, N failed'"
	@echo "                (on the debug kernel, once built: the module's guest tests)"
	@echo "make check-debug   the whole guest suite on the debug kernel (about 35 min)"
	@echo "make demo       boot the VM test bed and show lclk working"
	@echo "make bench      run tests/bench, one 'BENCH name value' line per figure; first builds"
	@echo "                Perfetto's trace_processor_shell if missing (about an hour, once)"
	@echo "make trace-processor  build Perfetto's trace_processor_shell once (cached outside the"
	@echo "                repo, about an hour on 2 cores); then make check loads every trace in it"
	@echo "make install    install on this host (KDIR=/lib/modules/\$$(uname -r)/build), for development"
	@echo "make deb        the Debian packages lclk-dkms, lclkctl, python3-lclk in build/deb/, lintian-checked"
	@echo "                (RELEASE=trixie: built in that release's root, in build/deb-trixie/)"

deps:
	$(Q)scripts/deps.sh

# ---- module ---------------------------------------------------------------
module:
	$(Q)test -d "$(KDIR)" || { echo "no kernel build dir $(KDIR): make deps, or set KDIR" >&2; exit 1; }
	$(Q)$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# Each kernel of the matrix, built in its release's chroot: build/kernels/ALIAS/lclk.ko.
matrix:
	$(Q)for k in $(KERNELS); do scripts/kmod-build $$k || exit 1; done

# The debug kernel: built once per machine (scripts/debug-kernel), slow.
debug-kernel:
	$(Q)scripts/debug-kernel
	$(Q)scripts/kmod-build debug

# The kernel-interface fuzzer, long, under the debug kernel; SEED=0 picks one
# (printed, to run it again).
SECONDS	?= 1800
SEED	?= 0
fuzz-kernel: tests
	$(Q)scripts/kernel-cache debug >/dev/null
	$(Q)scripts/kmod-build debug
	$(Q)LCLK_MODULE=build/kernels/debug/lclk.ko LCLK_KFUZZ_SECONDS=$(SECONDS) LCLK_KFUZZ_SEED=$(SEED) \
		LCLK_TEST_TIMEOUT=$$(($(SECONDS) + 600)) \
		tests/vm/vm-run -k debug -s 2 -t $$(($(SECONDS) + 900)) -- \
		'LCLK_GUEST_TESTS=build/tests/guest/lclk_kfuzz tests/guest/run.sh'

# ---- BPF ------------------------------------------------------------------
bpf: $(BPF_SKELS)

$(VMLINUX_H):
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(HOST_BTF) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: %.bpf.c $(VMLINUX_H) $(wildcard bpf/*.h) include/uapi/linux/lclk.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wextra -Wno-unused-parameter -Werror \
		-I$(BUILD)/bpf -Ibpf -Iinclude -Iinclude/uapi -c $< -o $@

# The probes for arm64 too, as a compile test (make check): the same
# source through bpf/trace_arch.bpf.h's arm64 registers, with this machine's
# vmlinux.h (arm64's fields are CO-RE flavours). lclkctl embeds the x86 one.
BPF_ARM64_OBJS	:= $(BPF_SRCS:%.bpf.c=$(BUILD)/arm64/%.bpf.o)
bpf-arm64: $(BPF_ARM64_OBJS)

$(BUILD)/arm64/%.bpf.o: %.bpf.c $(VMLINUX_H) $(wildcard bpf/*.h) include/uapi/linux/lclk.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_arm64 -Wall -Wextra -Wno-unused-parameter -Werror \
		-I$(BUILD)/bpf -Ibpf -Iinclude -Iinclude/uapi -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# ---- tools ----------------------------------------------------------------
tools: $(LCLKCTL)

$(BUILD)/tools/%.o: tools/%.c $(TOOL_HDRS) $(wildcard include/*.h include/uapi/linux/*.h) | $(BPF_SKELS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# The loader embeds the BPF object: rebuild it when the skeleton changes.
$(filter %/trace_probe.o,$(TOOL_OBJS)): $(BPF_SKELS)

$(TOOL_LIB): $(TOOL_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LCLKCTL): $(BUILD)/tools/lclkctl.o $(TOOL_LIB)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# ---- Python ---------------------------------------------------------------
# Debian's interpreter, whatever python3 comes first on PATH: the package is
# built and installed for it, with Debian's setuptools and pip.
PYTHON		:= /usr/bin/python3
PY_LIB		:= $(BUILD)/python/lib
PY_STAMP	:= $(PY_LIB)/lclk/.built
PY_SRCS		:= $(wildcard python/lclk/*.py python/lclk/*.pyi python/lclk/*.c python/lclk/py.typed) \
		   python/setup.py python/pyproject.toml

# The package, built where the tests import it from (PYTHONPATH=$(PY_LIB)).
python: $(PY_STAMP)

$(PY_STAMP): $(PY_SRCS) $(wildcard include/*.h include/uapi/linux/*.h)
	$(Q)cd python && $(PYTHON) setup.py -q build --build-base ../$(BUILD)/python/tmp \
		--build-lib ../$(PY_LIB) 2>&1 | { grep -v 'byte-compiling is disabled' || true; }
	$(Q)touch $@

# ---- tests ----------------------------------------------------------------
tests: $(HOST_TESTS) $(GUEST_TESTS) $(BENCHES) $(FAULT_BINS) $(SHIMS) $(PY_STAMP)

$(KSFT_H): $(LINUX_SRC_TAR)
	$(Q)test -n "$(LINUX_SRC_TAR)" || { echo "linux-source is not installed (make deps)" >&2; exit 1; }
	$(Q)rm -rf $(BUILD)/kernel-src && mkdir -p $(BUILD)/kernel-src $(@D)
	$(Q)tar -xJf $(LINUX_SRC_TAR) -C $(BUILD)/kernel-src --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
	$(Q)cp $(BUILD)/kernel-src/tools/testing/selftests/kselftest*.h $(@D)/
$(CHECKPATCH): $(KSFT_H)

# kmod/lclk_state.h: the model's transition function, built on the host too.
$(BUILD)/tests/host/%: tests/host/%.c $(KSFT_H) $(TOOL_LIB) $(wildcard tests/host/*.h tests/host/*/*.h include/*.h) \
		include/uapi/linux/lclk.h kmod/lclk_state.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/host $< $(TOOL_LIB) -o $@ $(LDLIBS)

$(BUILD)/tests/guest/%: tests/guest/%.c $(KSFT_H) $(TOOL_LIB) $(wildcard tests/guest/*.h include/*.h)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Wno-unused-parameter -Itests/guest $< $(TOOL_LIB) -o $@ $(LDLIBS)

$(BUILD)/tests/faults/%: tests/faults/%.c $(TOOL_LIB) $(wildcard include/*.h include/uapi/linux/*.h tests/host/*.h tests/guest/*.h) kmod/lclk_state.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/host -Itests/guest $< $(TOOL_LIB) -o $@ $(LDLIBS)

# The ABI's headers too: a shim built against an older SET_MODEL size
# answers ENOTTY to a newer lclkctl (stale build of a changed struct).
$(BUILD)/tests/shim/%.so: tests/shim/%.c $(wildcard include/*.h include/uapi/linux/*.h)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -shared -fPIC $< -o $@ -ldl

$(BUILD)/tests/bench/%: tests/bench/%.c $(TOOL_LIB) $(wildcard include/*.h) $(BENCH_SKELS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(@D) $< $(TOOL_LIB) -o $@ $(LDLIBS)

# libFuzzer targets: each tests/fuzz/X.c defines LLVMFuzzerTestOneInput.
$(BUILD)/tests/fuzz/%: tests/fuzz/%.c $(TOOL_SRCS) $(TOOL_HDRS) $(wildcard include/*.h) | $(BPF_SKELS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I. -Iinclude -Iinclude/uapi -Itools \
		-I$(BUILD)/bpf $< $(TOOL_SRCS) -o $@ $(LDLIBS)

fuzzers: $(FUZZERS)

# ---- lint -----------------------------------------------------------------
KMOD_SRCS := $(filter-out %.mod.c kmod/lclk_conftest.h,$(wildcard kmod/*.c kmod/*.h tests/guest/clash/*.c))
CHECKPATCH_FLAGS := --strict --no-tree --terse --show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG
# Sparse runs in "make matrix", on every kernel. The compat header is where
# version checks belong (as fallbacks of kmod/lclk_conftest.sh's feature
# tests), so checkpatch's advice against them does not apply there, nor its
# caution about macro arguments used twice: there they are function names.
# scripts/check-includes keeps tools/'s subsystems talking through the
# headers each declares its interface.
lint: $(CHECKPATCH) matrix
	$(Q)scripts/check-includes
	$(Q)$(CHECKPATCH) $(CHECKPATCH_FLAGS) \
		-f $(filter-out kmod/lclk_compat.h,$(KMOD_SRCS)) include/uapi/linux/lclk.h include/lclk_model.h
	$(Q)$(CHECKPATCH) $(CHECKPATCH_FLAGS) --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_REUSE \
		-f kmod/lclk_compat.h

# ---- suites ---------------------------------------------------------------
check: deps
	$(Q)$(MAKE) all bpf-arm64 fuzzers lint
	$(Q)tests/run-suites.sh

# The whole guest suite under KASAN and lockdep: too long for every check.
check-debug: deps
	$(Q)$(MAKE) all
	$(Q)scripts/kernel-cache debug >/dev/null
	$(Q)scripts/kmod-build debug
	$(Q)LCLK_VM_KERNELS=debug LCLK_DEBUG_SUITE=full tests/run-suites.sh vm

demo: deps
	$(Q)$(MAKE) all
	$(Q)tests/vm/demo.sh

# Perfetto's trace_processor_shell checks the benchmarks' traces (BENCH
# perfetto.flows_lost): built once per machine outside the repository.
trace-processor: deps
	$(Q)scripts/trace-processor >/dev/null

bench: deps
	$(Q)$(MAKE) all matrix trace-processor
	$(Q)LCLK_TRACE_PROCESSOR=require tests/bench/run.sh

# ---- install --------------------------------------------------------------
# DESTDIR for staging, PREFIX for the tool, header, man pages and completion;
# configuration, udev rule and unit go where the local admin's belong. The
# Debian packages (make deb, debian/rules) install the same files with
# install-files and dkms-tree, with Debian's directories.
PREFIX		?= /usr/local
SYSCONFDIR	?= /etc
# The version, in one place: debian/changelog's first entry (without the
# Debian revision). dkms.conf, the Python package and the packages take it.
VERSION		:= $(shell sed -n '1s/^lclk (\([^-)]*\).*/\1/p' debian/changelog)
SBINDIR		?= $(PREFIX)/sbin
INCLUDEDIR	?= $(PREFIX)/include
MANDIR		?= $(PREFIX)/share/man
DOCDIR		?= $(PREFIX)/share/doc/lclk
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions
UDEVRULESDIR	?= $(SYSCONFDIR)/udev/rules.d
MODULESLOADDIR	?= $(SYSCONFDIR)/modules-load.d
SYSTEMDUNITDIR	?= $(SYSCONFDIR)/systemd/system
DKMS_SRC	:= /usr/src/lclk-$(VERSION)

install: module tools install-python install-files
	$(Q)$(MAKE) -s dkms-tree
	$(Q)$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) modules_install
	$(Q)test -n "$(DESTDIR)" || id lclk >/dev/null 2>&1 || \
		adduser --system --group --quiet --no-create-home --home /nonexistent lclk

# Everything but the module, its DKMS sources and the Python package: the
# tool, headers, man pages, completion, configuration (never replaced),
# udev rule, modules-load.d entry and unit. The lclkctl package is this.
install-files: tools
	$(Q)install -D -m 755 $(LCLKCTL) $(DESTDIR)$(SBINDIR)/lclkctl
	$(Q)install -D -m 644 include/lclk.h $(DESTDIR)$(INCLUDEDIR)/lclk.h
	$(Q)install -D -m 644 include/lclk_model.h $(DESTDIR)$(INCLUDEDIR)/lclk_model.h
	$(Q)install -D -m 644 include/uapi/linux/lclk.h $(DESTDIR)$(INCLUDEDIR)/linux/lclk.h
	$(Q)install -D -m 644 packaging/lclkctl.8 $(DESTDIR)$(MANDIR)/man8/lclkctl.8
	$(Q)install -D -m 644 packaging/lclk.4 $(DESTDIR)$(MANDIR)/man4/lclk.4
	$(Q)install -D -m 644 packaging/lclkctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/lclkctl
	$(Q)install -D -m 644 packaging/lclk.conf $(DESTDIR)$(DOCDIR)/lclk.conf.example
	$(Q)test -e $(DESTDIR)$(SYSCONFDIR)/lclk/lclk.conf || \
		install -D -m 644 packaging/lclk.conf $(DESTDIR)$(SYSCONFDIR)/lclk/lclk.conf
	$(Q)install -D -m 644 packaging/60-lclk.rules $(DESTDIR)$(UDEVRULESDIR)/60-lclk.rules
	$(Q)install -D -m 644 packaging/modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/lclk.conf
	$(Q)mkdir -p $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		packaging/lclk.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/lclk.service

version:
	@echo $(VERSION)

# The Debian packages lclk-dkms, lclkctl and python3-lclk (debian/), built
# with debhelper from a copy of the checkout's files, then lintian, which
# must say nothing (scripts/deb-build): for this host's release in
# build/deb/, for another (RELEASE=trixie, sid) in its root
# (scripts/release-root) with its own compiler, libbpf and Python, in
# build/deb-RELEASE/.
RELEASE		?=
deb:
	$(Q)scripts/deb-build $(RELEASE)

# PYTHON_VENV=DIR: into a virtual environment, made if missing with
# --system-site-packages (Debian's python3-torch, pip and setuptools seen
# from it), where PEP 668 does not apply: DIR/bin/python train.py.
# Without it, for Debian's /usr/bin/python3: pip with --root skips Debian's
# "externally managed" refusal, which is about pip replacing Debian's
# packages: this one is the local admin's and goes where Debian puts
# those, /usr/local/lib/python3.X/dist-packages.
# Either way pip builds from an sdist made in a temporary directory (the
# headers copied in by setup.py), so the checkout is left as it was.
PYTHON_VENV	?=
install-python:
	$(Q)set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cd python && $(PYTHON) setup.py -q egg_info --egg-base "$$tmp" sdist --dist-dir "$$tmp" \
		>/dev/null; cd ..; \
	if [ -n "$(PYTHON_VENV)" ]; then \
		[ -x "$(PYTHON_VENV)/bin/python" ] || \
			$(PYTHON) -m venv --system-site-packages "$(PYTHON_VENV)"; \
		"$(PYTHON_VENV)/bin/python" -m pip install --quiet --no-build-isolation --no-index \
			--no-deps --root-user-action=ignore "$$tmp"/lclk-*.tar.gz; \
	else \
		$(PYTHON) -m pip install --quiet --no-build-isolation --no-index --no-deps \
			--root-user-action=ignore --root "$(if $(DESTDIR),$(DESTDIR),/)" \
			"$$tmp"/lclk-*.tar.gz; \
	fi

# The module's sources as DKMS takes them, alone: the matrix's DKMS test puts
# them into each release's chroot (DESTDIR=the chroot).
dkms-tree:
	$(Q)mkdir -p $(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC)/include/uapi/linux
	$(Q)cp kmod/Kbuild kmod/lclk_conftest.sh $(filter-out %.mod.c,$(wildcard kmod/*.c)) \
		$(filter-out kmod/lclk_conftest.h,$(wildcard kmod/*.h)) $(DESTDIR)$(DKMS_SRC)/kmod/
	$(Q)cp include/lclk_model.h $(DESTDIR)$(DKMS_SRC)/include/
	$(Q)cp include/uapi/linux/lclk.h $(DESTDIR)$(DKMS_SRC)/include/uapi/linux/
	$(Q)sed 's|#MODULE_VERSION#|$(VERSION)|' packaging/dkms.conf > $(DESTDIR)$(DKMS_SRC)/dkms.conf

clean:
	$(Q)rm -rf $(BUILD)
	$(Q)test ! -d "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
