#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): APM failover through
# simfab_rc_test.ko's apm cases (ib_cm, RC QPs): the time from the
# primary's failure under traffic to a burst of messages through on the
# alternate without reconnecting, and the time from re-arming (the old
# primary as the new alternate) to both QPs ARMED again. Side by side in
# each round:
#   apm-manual   default topology, h1 -> the dual-ported host's port 1,
#                the alternate on its port 2: a requested migration, no
#                failure to detect
#   apm-auto     the same connection, port 1's link lost (linkdown)
#   routed-auto  routed topology, a1 -> b1 through the first router, the
#                alternate through the second (return records from B's SA,
#                as simfab-rc's apm:routed): the first router goes down
# ROUNDS rounds, simfab reloaded with each topology in turn, printed as
#   # bench apm CASE ROUND to_alt_ns=N rearm_ns=N
# for tests/bench/run. Results say that each case's KTAP passed and that
# the routed connection ended up on the second router (both QPs' DLIDs)
# and re-armed with the first.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=bench-simfab-apm
D=/sys/kernel/debug/simfab
ROUTED=/ibr/simfab/topology/routed.topo
ROUNDS=4
RETRY=3

if ! has_mod simfab || ! has_mod simfab_rc_test || [ ! -f "$ROUTED" ]; then
	t_skip $T "simfab.ko, simfab_rc_test.ko or $ROUTED not in the image"
	t_summary
	exit 0
fi
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
lid() { topo_port "$1" lid; }

# topology default|routed: simfab (re)loaded with it, saved in $TOPO
topology() {
	if [ "$1" = routed ]; then
		TOPO=/tmp/ba-routed.topo
		sf_load_topo "$ROUTED"
	else
		TOPO=/tmp/ba.topo
		! mod_loaded simfab || rmmod simfab
		modprobe simfab && cat $D/topology >$TOPO
	fi
}

if ! topology default; then
	t_fail $T:load "modprobe simfab failed"
	t_summary
	exit 0
fi
# the SM's host (first), and the dual-ported host
H1=$(sed -n 's/^host \([^ ]*\) .*/\1/p' $TOPO | head -n 1)
H2=$(awk '$1 == "host" { for (i = 3; i <= NF; i++) if ($i == "ports=2") { print $2; exit } }' $TOPO)
DEFAULT_ARGS="act=$(port_param "$H1/1") pas=$(port_param "$H2/1") act_alt=$(port_param "$H1/1") pas_alt=$(port_param "$H2/2")"
DEFAULT_FAIL="fail_ctl=linkdown+$H2/1 restore_ctl=up+$H2/1"

if ! topology routed; then
	t_fail $T:load-routed "modprobe simfab with $ROUTED failed"
	t_summary
	exit 0
fi
A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PA=$(topo_subnet "$A" prefix) PB=$(topo_subnet "$B" prefix)
AP=a1/1 BP=b1/1
# A's SA names R1 for B; the alternate goes through the other router, R2;
# B's SA names RB for A (its return record for the alternate when R2).
R1=$(route_via "$A" "$PB") RB=$(route_via "$B" "$PA")
R2=$(sed -n 's/^router \([^ ]*\) .*/\1/p' $TOPO | grep -vx "$R1" | head -n 1)
R1A=$(lid "$(rport "$R1" "$A")") R1B=$(lid "$(rport "$R1" "$B")")
R2A=$(lid "$(rport "$R2" "$A")") R2B=$(lid "$(rport "$R2" "$B")")
ROUTED_ARGS="act=$(port_param $AP) pas=$(port_param $BP) act_alt=$(port_param $AP) pas_alt=$(port_param $BP) alt_dlid=$R2A ret=1 ret_dlid=$R1B"
[ "$RB" = "$R2" ] || ROUTED_ARGS="$ROUTED_ARGS alt_ret_dlid=$R2B"
ROUTED_FAIL="fail_ctl=router+$R1+down restore_ctl=router+$R1+up"
diag "same subnet: $H1/1 -> $H2/1, alternate $H2/2; routed: $AP -> $BP via $R1 ($R1A/$R1B), alternate via $R2 ($R2A/$R2B)"

# qa CASE WHO.WHEN KEY: a query_qp value from the run's diagnostics
qa() {
	sed -n "s|^# $1 $2 \(.* \)*$3=\([^ ]*\).*|\2|p" /tmp/ba.ktap | head -n 1
}
bad=0 routed_bad=0
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for c in apm-manual apm-auto routed-auto; do
		case $c in
		apm-manual) topology default; k=apm-manual; args=$DEFAULT_ARGS ;;
		apm-auto) k=apm-auto; args="$DEFAULT_ARGS $DEFAULT_FAIL" ;;
		routed-auto) topology routed; k=apm-auto; args="$ROUTED_ARGS $ROUTED_FAIL" ;;
		esac
		m=$(dmesg_mark)
		# shellcheck disable=SC2086 # args: words without blanks
		if ! timeout 120 modprobe simfab_rc_test cases=$k $args retry=$RETRY; then
			t_fail "$T:$c-$r" "modprobe simfab_rc_test cases=$k $args failed"
			bad=$((bad + 1))
			continue
		fi
		rmmod simfab_rc_test
		dmesg_since "$m" | sed -n 's/^\[[^]]*\] //p' >/tmp/ba.ktap
		if grep -q '^not ok ' /tmp/ba.ktap || ! grep -q '^ok ' /tmp/ba.ktap; then
			t_fail "$T:$c-$r" "$(grep -m1 '^not ok ' /tmp/ba.ktap)"
			diag_file /tmp/ba.ktap
			bad=$((bad + 1))
			continue
		fi
		if [ $c = routed-auto ]; then
			# on the second router after the failure, the first one
			# the new alternate after the re-arm
			chk_begin
			chk_num act-dlid "$(qa "$k" act.after dlid)" "$R2A"
			chk_num pas-dlid "$(qa "$k" pas.after dlid)" "$R2B"
			chk_num act-rearmed-alt "$(qa "$k" act.rearmed alt_dlid)" "$R1A"
			chk_num pas-rearmed-alt "$(qa "$k" pas.rearmed alt_dlid)" "$R1B"
			if [ -n "$_bad" ]; then
				t_fail "$T:routed-auto-$r" "${_bad# }"
				routed_bad=$((routed_bad + 1))
				continue
			fi
		fi
		sed -n "s/^# $k timing \(.*\) msgs=.*/# bench apm $c $r \1/p" /tmp/ba.ktap
	done
	r=$((r + 1))
done
[ "$bad" -eq 0 ] && [ "$routed_bad" -eq 0 ] &&
	t_pass "$T:cases ($ROUNDS rounds of apm-manual, apm-auto and routed-auto, every KTAP step ok, the routed one through $R2)"
rmmod simfab
t_summary
