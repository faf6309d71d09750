#!/bin/bash
# Nothing holds a slew past its end. In the VM with the module loaded
# (instances >= 2): /dev/lclk1 is the reference, the ground truth, read by
# the daemon of /dev/lclk0 through its PHC.
#  - Slowloris clients on the metrics port (a byte every 190 ms) and the
#    control socket (connect, say nothing) while the daemon slews a 3 ms
#    step: it must keep its cadence (an update every poll), answer a
#    well-behaved client, and end each correction on time.
#  - A reload (SIGHUP) just after an update started a slew, while a silent
#    server's burst still runs: the reload waits for that burst, and the
#    slew must end first.
# Throughout, the bound must cover the reference.
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
dir=$(mktemp -d /tmp/lclk-stall.$$.XXXXXX)
export LCLK_CONTROL=$dir/ctl.sock
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/daemon.bash
echo "TAP version 13"

$lclkctl -d /dev/lclk1 set --realtime --bound 1us --allow-backward >/dev/null
phc1=/dev/ptp$($lclkctl -d /dev/lclk1 --json status |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["device"]["phc_index"])')
$lclkctl set --realtime --unsync --allow-backward >/dev/null
cat >"$dir/lclk.conf" <<-EOC
device /dev/lclk0
source phc:$phc1?clock=utc
poll 1s 1s
maxdrift 10ppm
control $dir/ctl.sock
metrics 127.0.0.1:19479
log info
EOC
$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
pids+=("$daemon_pid")
check "daemon synchronises to /dev/lclk1's PHC" wait_for 30 status_is synced
sleep 3

# The reference jumps 3 ms: the daemon slews at maxslew (500 ppm) for 1 s
# per poll, six polls or more.
$lclkctl -d /dev/lclk1 step 3ms >/dev/null
sleep 1.5

# slowloris KIND SECONDS: a client that never completes its request, on the
# metrics port (a byte every 190 ms) or the control socket (nothing at all),
# connecting again whenever the daemon drops it.
slowloris() {
	python3 - "$1" "$2" <<-'PY' &
	import os, socket, sys, time
	kind, end = sys.argv[1], time.time() + float(sys.argv[2])
	while time.time() < end:
	    try:
	        if kind == "metrics":
	            s = socket.create_connection(("127.0.0.1", 19479))
	        else:
	            s = socket.socket(socket.AF_UNIX)
	            s.connect(os.environ["LCLK_CONTROL"])
	        s.settimeout(0.19)
	        while time.time() < end:
	            if kind == "metrics":
	                s.send(b"G")
	            try:
	                if s.recv(4096) == b"":
	                    break
	            except socket.timeout:
	                pass
	        s.close()
	    except OSError:
	        time.sleep(0.01)
	PY
	pids+=("$!")
}
hold=15
for _ in 1 2; do
	slowloris metrics $hold
	slowloris control $hold
done
sleep 0.5

# Age of the model's last update in ms, read from the device (not the daemon).
update_age() {
	LCLK_CONTROL=$dir/none $lclkctl --json status | python3 -c 'import json, sys
d = json.load(sys.stdin)
print((d["base_ns"] - d["model"]["last_update_ns"]) // 1000000)'
}
build/tests/bench/ntp_bound_check -r /dev/lclk1 -n $((hold * 4 - 12)) -i 250000 \
	>"$dir/bound.out" 2>&1 &
bound_pid=$!
gap=0 t0=$SECONDS
while [ $SECONDS -lt $((t0 + hold - 3)) ]; do
	age=$(update_age)
	[ "$age" -gt "$gap" ] && gap=$age
	sleep 0.3
done
# A well-behaved scrape, timed from its connect (not from the start of a
# process, which alone can take seconds in a loaded emulator): it waits at
# most for one slowloris client's deadline (2 s) to get a slot.
scrape=$(python3 - <<-'PY'
	import socket, time
	t = time.monotonic()
	s = socket.create_connection(("127.0.0.1", 19479), timeout=10)
	s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
	d = b""
	while True:
	    b = s.recv(65536)
	    if not b:
	        break
	    d += b
	ok = d.startswith(b"HTTP/1.0 200 OK") and b"\nlclk_status{" in d
	print("%.2f %s" % (time.monotonic() - t, "ok" if ok else "bad"))
	PY
)
wait "$bound_pid"
rc=$?
check "under slowloris the daemon still updates every poll (oldest update seen ${gap} ms, poll 1 s)" \
	test "$gap" -le 2500
check "under slowloris a well-behaved client is answered within 4 s (${scrape:-no answer} s)" \
	python3 -c 'import sys; t, ok = sys.argv[1].split(); sys.exit(not (float(t) <= 4 and ok == "ok"))' \
	"${scrape:-99 bad}"
check "under slowloris the bound covers the reference ($(cat "$dir/bound.out"))" test "$rc" -eq 0

# ---- a reload while a burst runs ---------------------------------------------
# A server that never answers: with "samples 1" every poll of it is a first
# burst of 4, given up after 3 timeouts of 6 s (18 s), so it outlives its
# cycle (deadline 7.1 s) and the daemon keeps updating from the PHC
# meanwhile, every second.
python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 11199))
time.sleep(600)' &
pids+=("$!")
wait_for 10 sh -c 'ss -Huln "sport = :11199" | grep -q .'
cat >>"$dir/lclk.conf" <<-EOC
source ntp://127.0.0.1:11199
samples 1 100ms 6s
EOC
kill -HUP "$daemon_pid"
sleep 8
# A 0.5 ms step of the reference: the next update slews at 0.7 * 0.5 ms / 1 s
# = 350 ppm on top of a frequency estimate 0.3 * 0.5 ms / 1 s = 150 ppm off,
# for 1 s. Kept on while the reload waits for the burst, that slew runs the
# clock past the reference faster than the bound grows. The reload is asked
# for as soon as the device shows the slew (its text, read every 10 ms).
# The watcher makes the step itself once it runs: the slew lasts one poll,
# and an interpreter that starts slowly in a loaded guest would miss it.
python3 - "$daemon_pid" "$lclkctl" >"$dir/hup.out" <<-'PY'
	import os, signal, subprocess, sys, time
	subprocess.run([sys.argv[2], "-d", "/dev/lclk1", "step", "500us"],
	               stdout=subprocess.DEVNULL, check=True)
	end = time.monotonic() + 5
	while time.monotonic() < end:
	    with open("/dev/lclk0") as f:
	        rate = next(int(l.split()[1]) for l in f if l.startswith("rate_ppt:"))
	    if abs(rate) > 400000000:
	        os.kill(int(sys.argv[1]), signal.SIGHUP)
	        print("rate %d ppt: SIGHUP" % rate)
	        sys.exit(0)
	    time.sleep(0.01)
	print("no slew above 400 ppm seen")
	sys.exit(1)
	PY
rc=$?
check "an update slews a 0.5 ms step of the reference: SIGHUP then ($(cat "$dir/hup.out"))" \
	test "$rc" -eq 0
build/tests/bench/ntp_bound_check -r /dev/lclk1 -n 160 -i 50000 >"$dir/bound-hup.out" 2>&1
rc=$?
check "SIGHUP during a burst: the slew ends on time, the bound covers the reference ($(cat "$dir/bound-hup.out"))" \
	test "$rc" -eq 0
check "... and the reload happened, after the burst" \
	wait_for 20 sh -c "[ \$(grep -c 'reloaded:' '$dir/daemon.log') -ge 2 ]"

kill -TERM "$daemon_pid"
wait "$daemon_pid"
check "SIGTERM: exit 0" test $? -eq 0
grep -E 'notice|warn|err' "$dir/daemon.log" | sed 's/^/# /'
echo "1..$n"
exit $failed
