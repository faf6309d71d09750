# SPDX-License-Identifier: GPL-2.0
# Sourced by the daemon's guest tests (tests/guest/daemon*.sh): TAP output,
# polling of "lclkctl status", the holdover check and a second daemon
# following a source on /dev/lclk1. The test sets $lclkctl, $dir (its
# temporary directory) and the array pids (killed when it exits) first.

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

# wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds, for
# SECONDS times LCLK_TIME_SCALE (the runner sets it on slow kernels).
wait_for() {
	local end=$((SECONDS + $1 * ${LCLK_TIME_SCALE:-1}))
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

# The bound and the CLOCK_MONOTONIC it is for, from one reading: "BOUND BASE"
# (the bound, milliseconds or less, sorts before the uptime in ns).
bound_and_base() {
	$lclkctl --json status | grep -oE '"(base|bound)_ns":[0-9]+' | head -2 | cut -d: -f2 |
		sort -n | tr '\n' ' '
}

# check_holdover_growth: in holdover, the bound grows at the drift the model
# publishes, maxdrift (100 ppm here) plus the frequency estimate, which may
# be off.
check_holdover_growth() {
	local r1 r2 b1 t1 b2 t2 growth drift
	r1=$(bound_and_base)
	sleep 2
	r2=$(bound_and_base)
	b1=${r1%% *} t1=${r1#* } b2=${r2%% *} t2=${r2#* }
	growth=$(( (b2 - b1) * 1000000000 / (${t2% } - ${t1% }) ))
	drift=$($lclkctl --json status |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["model"]["max_drift_ppb"])')
	check "holdover: the bound grows at the drift published, 100 ppm + |frequency| (${growth} ppb vs $drift)" \
		test "${drift:-0}" -ge 100000 -a "$growth" -ge $((${drift:-0} * 95 / 100)) -a \
		"$growth" -le $((${drift:-0} * 105 / 100))
}

# follow WHAT REF SOURCE_LINE [THEN]: /dev/lclk1's daemon with that one
# source, starting 1 ms off and unsynchronised; it synchronises, and its
# bound covers REF (empty: CLOCK_REALTIME, the reference of both; or the
# logical clock a PHC source reads, which has no bound to pass on). THEN
# runs while it is synchronised. The follower's maxdrift is $drift, 100ppm
# unless the caller sets it.
follow() {
	local what=$1 ref=$2 line=$3 then=${4:-} drift=${drift:-100ppm} pid r rc
	$lclkctl -d /dev/lclk1 set --realtime --unsync --allow-backward >/dev/null &&
		$lclkctl -d /dev/lclk1 step --allow-backward -- -1ms >/dev/null
	cat >"$dir/follow.conf" <<-EOC
	device /dev/lclk1
	$line
	poll 500ms 2s
	fastpolls 2
	samples 4 50ms 300ms
	maxdrift $drift
	control $dir/ctl-follow.sock
	log info
	EOC
	$lclkctl daemon -c "$dir/follow.conf" >"$dir/daemon-$what.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	check "$what: /dev/lclk1 synchronises ($line)" wait_for 30 follower_synced
	r=$(build/tests/bench/ntp_bound_check -d /dev/lclk1 ${ref:+-r "$ref"} -n 2000 -i 100 2>&1)
	rc=$?
	check "$what: its bound covers ${ref:-CLOCK_REALTIME} ($r)" test "$rc" -eq 0
	[ -n "$then" ] && "$then"
	LCLK_CONTROL=$dir/ctl-follow.sock $lclkctl -d /dev/lclk1 status | grep -E '^  [*+x?] ' |
		sed 's/^/# /'
	kill -TERM "$pid"
	wait "$pid"
	grep -E 'notice|warn|err' "$dir/daemon-$what.log" | sed "s/^/# $what daemon: /"
}
follower_synced() {
	LCLK_CONTROL=$dir/ctl-follow.sock $lclkctl -d /dev/lclk1 --json status 2>/dev/null |
		python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["status"] != "synced")'
}
