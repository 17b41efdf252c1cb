#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): connection setup over Soft-RoCE with
# the in-tree CM stack and with the overlay, in the same boot, alternating
# (in-tree, overlay, overlay, in-tree, ...) so drift in the emulator's
# speed falls on both alike. Each round swaps the stack with
# ib-routed-reload and runs cmtime (CONNS connections); the figures are
# cmtime's per-step microseconds per connection, printed as
#   # bench rxe-connect STACK ROUND STEP US_PER_CONN
# for tests/bench/run to turn into ratios. Results say only that each
# round ran on the stack it claims; no timing is judged here.
# Knobs on the kernel command line: ibr_bench_rounds=N ibr_bench_conns=N.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

rounds=6
conns=50
# shellcheck disable=SC2013 # one line of words
for arg in $(cat /proc/cmdline); do
	case $arg in
	ibr_bench_rounds=*) rounds=${arg#*=} ;;
	ibr_bench_conns=*) conns=${arg#*=} ;;
	esac
done
port=7480

if ! rxe_up; then
	t_fail bench-rxe-connect:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi
if ! [ -f "$STAMP_FILE" ]; then
	t_skip bench-rxe-connect "no overlay in the image (--in-tree boot): nothing to compare"
	t_summary
	exit 0
fi

# cmtime's table: "step  total ms  max ms  min us  us / conn" (rdma-core's
# cmtime.c); print the last column of each step as a bench line. Fails
# with $why set (and cmtime's output as diagnostics).
# shellcheck disable=SC2317 # called by stack_rounds
run_cmtime() {
	_stack=$1 _round=$2
	port=$((port + 1))
	why=
	if ! SERVER_PERSISTS=1 server_client "cmtime-$_round" "$port" 120 \
		"cmtime -b $RXE_IP -p $port -c $conns" "cmtime -s $RXE_IP -p $port -c $conns" ||
		! grep -q '^[a-z][a-z ]*:' "/tmp/cmtime-$_round.client"; then
		why="cmtime failed: ${why:-no step table}"
		diag_file "/tmp/cmtime-$_round.client"
		diag_file "/tmp/cmtime-$_round.server"
		return 1
	fi
	awk -v s="$_stack" -v r="$_round" '
		/^[a-z][a-z ]*:/ {
			split($0, a, ":"); step = a[1]; sub(/ +$/, "", step); gsub(/ /, "-", step)
			n = split(a[2], v, " ")
			if (n >= 4) printf "# bench rxe-connect %s %d %s %s\n", s, r, step, v[n]
		}' "/tmp/cmtime-$_round.client"
}

modprobe rdma_ucm || true
stack_rounds bench-rxe-connect "$rounds" run_cmtime
[ "$ran" -eq $((2 * rounds)) ] && t_pass "bench-rxe-connect:rounds ($rounds rounds of $conns connections on each stack)"
t_summary
