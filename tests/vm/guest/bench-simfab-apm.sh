#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): APM failover on simfab's default
# topology through simfab_rc_test.ko's apm cases (ib_cm, RC QPs, h1 ->
# the dual-ported host's port 1, the alternate on its port 2): the time
# from the primary's failure (linkdown under traffic: apm-auto) to a
# burst of messages through on the alternate without reconnecting, next
# to the same after a requested migration (apm-manual: no failure to
# detect), and the time from re-arming (the old primary as the new
# alternate) to both QPs ARMED again. ROUNDS rounds of each, printed as
#   # bench apm CASE ROUND to_alt_ns=N rearm_ns=N
# for tests/bench/run. Results say only that each case's KTAP passed.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=bench-simfab-apm
D=/sys/kernel/debug/simfab
ROUNDS=4
RETRY=3

if ! has_mod simfab || ! has_mod simfab_rc_test; then
	t_skip $T "simfab.ko or simfab_rc_test.ko not in the image"
	t_summary
	exit 0
fi
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
! mod_loaded simfab || rmmod simfab
if ! modprobe simfab; then
	t_fail $T:load "modprobe simfab failed"
	t_summary
	exit 0
fi
TOPO=/tmp/ba.topo
cat $D/topology >$TOPO
dev() { echo "$(topo_host "${1%/*}" dev):${1#*/}"; }
# the SM's host (first), and the dual-ported host
H1=$(sed -n 's/^host \([^ ]*\) .*/\1/p' $TOPO | head -n 1)
H2=$(awk '$1 == "host" { for (i = 3; i <= NF; i++) if ($i == "ports=2") { print $2; exit } }' $TOPO)

bad=0
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for c in apm-manual apm-auto; do
		set -- cases=$c act="$(dev "$H1/1")" pas="$(dev "$H2/1")" \
			act_alt="$(dev "$H1/1")" pas_alt="$(dev "$H2/2")" retry=$RETRY
		[ $c = apm-manual ] || set -- "$@" fail_ctl="linkdown+$H2/1" restore_ctl="up+$H2/1"
		m=$(dmesg_mark)
		if ! timeout 120 modprobe simfab_rc_test "$@"; then
			t_fail "$T:$c-$r" "modprobe simfab_rc_test $* failed"
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
		sed -n "s/^# $c timing \(.*\) msgs=.*/# bench apm $c $r \1/p" /tmp/ba.ktap
	done
	r=$((r + 1))
done
[ "$bad" -eq 0 ] && t_pass "$T:cases ($ROUNDS rounds of apm-manual and apm-auto, every KTAP step ok)"
rmmod simfab
t_summary
