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

R=/usr/sbin/ib-routed-reload
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

# cm_ids left: a server that outlived its round would keep the stack
# busy (and make the reload refuse). Wait for them to go.
cm_ids_gone() {
	_n=100
	while [ "$_n" -gt 0 ]; do
		[ -z "$(rdma resource show cm_id 2>/dev/null)" ] && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# stack_is in-tree|overlay: the loaded CM modules are that stack's.
stack_is() {
	why=
	for _m in $OVERLAY_MODS; do
		case $_m in ib_cm|rdma_cm|rdma_ucm) ;; *) continue ;; esac
		if [ "$1" = overlay ]; then
			overlay_check "$_m" || return 1
		else
			mod_loaded "$_m" || { why="$_m is not loaded"; return 1; }
			_v=$(cat "/sys/module/$_m/version" 2>/dev/null)
			[ -z "$_v" ] || { why="$_m has version '$_v'"; return 1; }
		fi
	done
}

# swap_to in-tree|overlay: with ib-routed-reload; a consumer still holding
# the stack (a server that did not exit) is stopped by --force.
swap_to() {
	_arg=
	[ "$1" = in-tree ] && _arg=--in-tree
	cm_ids_gone || diag "cm_ids still open before the swap: $(rdma resource show cm_id 2>&1 | head -n 3)"
	# shellcheck disable=SC2086 # empty or one option
	timeout 120 "$R" $_arg >/tmp/swap.out 2>&1
	_rc=$?
	if [ "$_rc" -eq 4 ]; then
		diag "reload refused (consumers), forcing: $(grep consumer /tmp/swap.out | head -n 1)"
		# shellcheck disable=SC2086
		timeout 120 "$R" $_arg --force >/tmp/swap.out 2>&1
		_rc=$?
	fi
	[ "$_rc" -eq 0 ] || { why="ib-routed-reload $_arg exit $_rc"; diag_file /tmp/swap.out; return 1; }
	stack_is "$1"
}

# cmtime's table: "step  total ms  max ms  min us  us / conn" (rdma-core's
# cmtime.c); print the last column of each step as a bench line.
run_cmtime() {
	_stack=$1 _round=$2
	port=$((port + 1))
	if ! SERVER_PERSISTS=1 server_client "cmtime-$_round" "$port" 120 \
		"cmtime -b $RXE_IP -p $port -c $conns" "cmtime -s $RXE_IP -p $port -c $conns"; then
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
ran=0
i=1
while [ "$i" -le "$rounds" ]; do
	# in-tree first in odd rounds, overlay first in even ones
	if [ $((i % 2)) -eq 1 ]; then order="in-tree overlay"; else order="overlay in-tree"; fi
	for s in $order; do
		if ! swap_to "$s"; then
			t_fail "bench-rxe-connect:round-$i-$s" "could not swap to $s: $why"
			continue
		fi
		if out=$(run_cmtime "$s" "$i") && [ -n "$out" ]; then
			printf '%s\n' "$out"
			ran=$((ran + 1))
		else
			t_fail "bench-rxe-connect:round-$i-$s" "cmtime failed: ${why:-no step table}"
			diag_file "/tmp/cmtime-$i.client"
			diag_file "/tmp/cmtime-$i.server"
		fi
	done
	i=$((i + 1))
done
[ "$ran" -eq $((2 * rounds)) ] && t_pass "bench-rxe-connect:rounds ($rounds rounds of $conns connections on each stack)"
swap_to overlay || diag "could not leave the overlay loaded: $why"
t_summary
