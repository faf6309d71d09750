#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tests/guest/trace_more.sh with tp_btf on raw_syscalls. Runs in the VM as
# root from the repository root; TAP.
TRACE_ATTACH=tp_btf TRACE_PARTS=more exec sh "$(dirname "$0")/trace.sh"
