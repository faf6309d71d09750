#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tests/guest/trace.sh's other checks (renamed threads, containers, exited
# processes, interrupted calls, ia32) with fentry/fexit. Runs in the VM as
# root from the repository root; TAP.
TRACE_ATTACH=fentry TRACE_PARTS=more exec sh "$(dirname "$0")/trace.sh"
