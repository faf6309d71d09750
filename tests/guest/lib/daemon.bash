# SPDX-License-Identifier: GPL-2.0
# Sourced by the daemon's guest tests (tests/guest/daemon*.sh): TAP output
# and polling of "lclkctl status". The test sets $lclkctl first.

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

# wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.5
	done
}

# status_is STATUS: the module reports it (unsynced, synced, holdover).
status_is() { $lclkctl --json status 2>/dev/null | grep -q "^{\"device\".*\"status\":\"$1\""; }
# selected_is URL: the daemon's source table marks URL as selected ("*").
selected_is() { $lclkctl status 2>/dev/null | grep -q "^  \* $1 "; }
