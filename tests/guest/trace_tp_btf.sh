#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tests/guest/trace.sh's core checks with lclkctl trace's fallback attach
# mode, tp_btf on raw_syscalls. Runs in the VM as root from the repository
# root; TAP.
TRACE_ATTACH=tp_btf TRACE_PARTS=core exec sh "$(dirname "$0")/trace.sh"
