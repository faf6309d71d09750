#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# How locked down lclk.service is, against Debian 12's chrony.service: the
# exposure score of each (0 safest .. 10) from one run of
# "systemd-analyze security --offline=yes" (scripts/unit-exposure).
#
#   BENCH daemon.security_exposure_vs_chrony  lclk.service's / chrony.service's (goal <= 0.8)
set -eu
cd "$(dirname "$0")/../.."
r=$(scripts/unit-exposure packaging/lclk.service.in)
set -- $r
echo "# exposure: lclk.service $1, chrony.service $2"
echo "BENCH daemon.security_exposure_vs_chrony $3"
