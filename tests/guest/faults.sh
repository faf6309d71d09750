#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fault campaign's short version (tests/faults/run.sh): every scenario
# for a few seconds, on the kernel this VM runs. TAP.
exec "$(dirname "$0")/../faults/run.sh"
