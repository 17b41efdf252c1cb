#!/bin/sh
# shellcheck shell=sh
# simfab's MTU model (tests/simfab/README.md, "Fidelity: MTU") and the
# routed connection's MTU, on routed.topo (subnet A 2048, subnet B 1024),
# with simfab_rc_test's big case: SEND, RDMA WRITE and READ of 4096 and
# 65536 bytes both ways on one connection, every byte checked.
#
# mtu:a, mtu:b   on each subnet (a1 -> a2, b1 -> b2): the messages go in
#                packets of the path MTU (no RC packet on the wire longer
#                than it, MIDDLE packets of exactly that size).
# mtu:routed     a1 -> b1 through rdma_cm with the return record from b1's
#                ib_remote_sa: the end-to-end MTU (B's), traffic both ways.
# mtu:drop       a1 -> b1 through ib_cm with the forward record only (6.1's
#                REQ, A's MTU, by design for ib_cm callers without return
#                records): every packet is dropped at the router's egress
#                onto B and counted there (drop-mtu), the SEND ends in
#                RETRY_EXC_ERR after 1 + retry_cnt transmissions.
# mtu:fallback   a1 -> b1 through rdma_cm while b1 runs no ib_remote_sa
#                service (no return record): by default the forward MTU,
#                as the stock kernel (A's 2048: the large SEND is lost),
#                the path counted (no_return_record) and the first one
#                logged; with routed_default_mtu=1024, or B's MTU in
#                ib_remote_sa's service map, the lower one and large
#                messages pass both ways (docs/routed-cm.md).
#
# Skips without simfab.ko, simfab_rc_test.ko or the routed topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-mtu
TOPOFILE=/ibr/simfab/topology/routed.topo
TOPO=/tmp/sfm.topo
RSA=/sys/kernel/ib_remote_sa
CMA=/sys/module/rdma_cm/parameters
RETRY=3
BIG=65536

if ! has_mod simfab || ! has_mod simfab_rc_test || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, simfab_rc_test.ko or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
mark=$(dmesg_mark)
start=$(cut -d' ' -f1 /proc/uptime)
# rdma_cm logs the first routed path without a return record once per
# load (pr_notice_once): loaded afresh here when nothing holds it, so that
# mtu:fallback's path is the first; else (a consumer holds it) another
# test in this boot may have logged it first, and that line counts.
rmmod rdma_ucm 2>/dev/null
rmmod rdma_cm 2>/dev/null
cm_fresh=
mod_loaded rdma_cm || cm_fresh=yes
if sf_load_topo "$TOPOFILE" rdma_ucm; then
	t_pass $T:load
else
	t_fail $T:load "modprobe rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi

run() {
	sf_rc_run /tmp/sfm "$@"
}
qa() {
	sf_rc_diag /tmp/sfm "$@"
}
rccount() {
	sf_rc_pkts /tmp/sfm "$@" | wc -l
}
# drops H/P FILE: a port's drop-mtu count in a counters file (0: none).
drops() {
	_v=$(sed -n "s|^port=$1 drop-mtu=\([0-9]*\)$|\1|p" "$2")
	echo "${_v:-0}"
}
# alldrops FILE: the drop-mtu counts of every port, summed.
alldrops() {
	sed -n 's|^port=[^ ]* drop-mtu=\([0-9]*\)$|\1|p' "$1" | awk '{ s += $1 } END { print s + 0 }'
}
# longest NAME: the longest RC payload run NAME's capture shows.
longest() {
	sf_rc_pkts /tmp/sfm "$1" '' | sed 's/.* len=\([0-9]*\) .*/\1/' | sort -n | tail -n 1
}
# wire NAME MTU: the data went in packets of MTU's size, none longer and
# none lost; no drop-mtu anywhere since the run before (FILE $3).
wire() {
	_b=$(mtu_bytes "$2")
	chk_num longest-packet "$(longest "$1")" "$_b"
	[ "$(rccount "$1" " len=$_b .* rc op=0x0(1|7|e) ")" -ge 1 ] ||
		_bad="$_bad no MIDDLE packets of $_b bytes"
	chk_num rc-drops "$(rccount "$1" 'verdict=drop')" 0
	chk_num drop-mtu $(($(alldrops "/tmp/sfm-$1.counters") - $(alldrops "$3"))) 0
}
# big NAME ACT PAS PARAMS...: the big case, both ways.
big() {
	_n=$1 _a=$2 _p=$3
	shift 3
	run "$_n" cases=big act="$(port_param "$_a")" pas="$(port_param "$_p")" big_len=$BIG retry=$RETRY "$@"
}
# traffic NAME: every big result of run NAME passed (12: 2 directions x
# SEND, WRITE, READ x 4096, BIG).
traffic() {
	chk_num passed "$(grep -cE '^ok [0-9]+ simfab_rc_big_(act|pas)-to-' "/tmp/sfm-$1.ktap")" 12
}

A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PB=$(topo_subnet "$B" prefix)
RA=$(route_via "$A" "$PB")
MTU_A=$(min "$(prop a1/1 mtu)" "$(prop a2/1 mtu)")
MTU_B=$(min "$(prop b1/1 mtu)" "$(prop b2/1 mtu)")
# The forward half a1 -> RA's port on A; B's side of the routers.
MTU_F=$(min "$(prop a1/1 mtu)" "$(prop "$(rport "$RA" "$A")" mtu)")
MTU_R=$(min "$(prop b1/1 mtu)" "$(prop "$(rport "$RA" "$B")" mtu)")
MTU_E=$(min "$MTU_F" "$MTU_R")
diag "A=$A MTU $MTU_A, B=$B MTU $MTU_B, forward via $RA $MTU_F, B's side $MTU_R"
chk_begin
chk_ne asym-mtu "$MTU_F" "$MTU_R"
[ "$(mtu_bytes "$MTU_B")" -lt $BIG ] || _bad="$_bad B's MTU holds a whole message"
chk_end mtu:topology $TOPO
cat /sys/kernel/debug/simfab/counters >/tmp/sfm-start.counters

# ---- mtu:a, mtu:b: each subnet ------------------------------------------------
for s in a b; do
	KPFX=mtu:$s
	big "$s" "${s}1/1" "${s}2/1"
	_mtu=$MTU_A
	[ $s = a ] || _mtu=$MTU_B
	chk_begin
	chk_num act-mtu "$(qa "$s" act.conn mtu)" "$_mtu"
	chk_num pas-mtu "$(qa "$s" pas.conn mtu)" "$_mtu"
	traffic "$s"
	chk_end "mtu:$s-segmented-by-path-mtu" "/tmp/sfm-$s.ktap"
	chk_begin
	wire "$s" "$_mtu" /tmp/sfm-start.counters
	chk_end "mtu:$s-wire" "/tmp/sfm-$s.cap" "/tmp/sfm-$s.counters"
done

# ---- mtu:routed: rdma_cm with the return record ----------------------------------
KPFX=mtu:routed
big routed a1/1 b1/1
chk_begin
chk_num act-mtu "$(qa routed act.conn mtu)" "$MTU_E"
chk_num pas-mtu "$(qa routed pas.conn mtu)" "$MTU_E"
traffic routed
chk_end mtu:routed-end-to-end "/tmp/sfm-routed.ktap"
chk_begin
wire routed "$MTU_E" /tmp/sfm-b.counters
chk_end mtu:routed-wire /tmp/sfm-routed.cap /tmp/sfm-routed.counters

# ---- mtu:drop: a path MTU larger than a link's --------------------------------------
KPFX=mtu:drop
big drop a1/1 b1/1 big_cm=ibcm big_lost=1
RA_B=$(rport "$RA" "$B")
chk_begin
chk_num act-mtu "$(qa drop act.conn mtu)" "$MTU_F"
grep -q "^ok [0-9]* simfab_rc_big_send-lost" /tmp/sfm-drop.ktap || _bad="$_bad send-not-lost"
# Each transmission's packets all dropped at RA's egress onto B.
chk_num drop-mtu $(($(drops "$RA_B" /tmp/sfm-drop.counters) - $(drops "$RA_B" /tmp/sfm-routed.counters))) \
	$((BIG * (RETRY + 1) / $(mtu_bytes "$MTU_F")))
[ "$(rccount drop " sn=$A at=$RA/[0-9]+ .* len=$(mtu_bytes "$MTU_F") .* rc op=0x0[0-2] .*verdict=drop-mtu")" -ge 1 ] ||
	_bad="$_bad no SEND packet captured with verdict drop-mtu at $RA"
chk_end mtu:drop-counted-at-router-egress /tmp/sfm-drop.ktap /tmp/sfm-drop.counters

# ---- mtu:fallback: no return record (b1 runs no ib_remote_sa service) ---------------
# By default rdma_cm keeps the forward record's MTU, as the stock kernel
# does (here A's, which B's links do not carry: the large SEND is lost);
# it counts the path on a1's port and logs the first such path. The
# administrator's statement of B's MTU in ib_remote_sa's service map, or
# routed_default_mtu, makes it the lower one, and large messages pass.
RSP=$RSA/$(topo_host b1 dev)/1/responder
NORET=$RSA/$(topo_host a1 dev)/1/counters/no_return_record
MAP=/sys/kernel/config/ib_remote_sa/services
echo 0 >"$RSP" 2>/dev/null
# flush A's cached answers from b1 (the client cache) before each run
flush_a1() { echo 1 >"$RSA/$(topo_host a1 dev)/1/cache_flush" 2>/dev/null; }
DEF=$(cat $CMA/routed_default_mtu 2>/dev/null || echo none)
flush_a1
nr0=$(cat "$NORET" 2>/dev/null || echo none)
fmark=$(dmesg_mark)
KPFX=mtu:fallback-default
big fallback61 a1/1 b1/1 big_lost=1
nr1=$(cat "$NORET" 2>/dev/null || echo none)
chk_begin
chk default-param "$DEF" 0
chk_num act-mtu "$(qa fallback61 act.conn mtu)" "$MTU_F"
chk_num pas-mtu "$(qa fallback61 pas.conn mtu)" "$MTU_F"
grep -q "^ok [0-9]* simfab_rc_big_send-lost" /tmp/sfm-fallback61.ktap || _bad="$_bad send-not-lost"
[ "$(drops "$RA_B" /tmp/sfm-fallback61.counters)" -gt "$(drops "$RA_B" /tmp/sfm-drop.counters)" ] ||
	_bad="$_bad no drop-mtu at $RA_B"
chk_end mtu:fallback-default-keeps-forward-mtu-as-stock /tmp/sfm-fallback61.ktap
chk_begin
case $nr0$nr1 in
*none*) _bad="$_bad no counter $NORET" ;;
*) [ "$nr1" -gt "$nr0" ] || _bad="$_bad no_return_record $nr0 -> $nr1" ;;
esac
noret_line="RDMA CM: a path to subnet $(printf '%016x' "$PB") through an IB router has no return record: it keeps the forward path's MTU $(mtu_bytes "$MTU_F")"
if [ -n "$cm_fresh" ]; then
	chk_num logged "$(dmesg_since "$fmark" | grep -c "$noret_line")" 1
else
	diag "rdma_cm was held at the start: the line may be another test's, earlier in this boot"
	[ "$(dmesg | grep -c "$noret_line")" -ge 1 ] || _bad="$_bad never-logged"
	[ "$(dmesg_since "$fmark" | grep -c "$noret_line")" -le 1 ] || _bad="$_bad logged-more-than-once"
fi
chk_end mtu:fallback-default-counted-and-logged
# routed_default_mtu=1024: the lower of the forward MTU and it.
if echo 1024 >$CMA/routed_default_mtu 2>/dev/null; then
	flush_a1
	KPFX=mtu:fallback-param
	big fallback a1/1 b1/1
	echo 0 >$CMA/routed_default_mtu
fi
chk_begin
chk_num act-mtu "$(qa fallback act.conn mtu)" "$(min "$MTU_F" 3)"
chk_num pas-mtu "$(qa fallback pas.conn mtu)" "$(min "$MTU_F" 3)"
traffic fallback
chk_end mtu:fallback-routed-default-mtu-large-messages-both-ways /tmp/sfm-fallback.ktap
chk_begin
chk_num drop-mtu $(($(alldrops /tmp/sfm-fallback.counters) - $(alldrops /tmp/sfm-fallback61.counters))) 0
chk_end mtu:fallback-routed-default-mtu-nothing-dropped /tmp/sfm-fallback.counters
# B's MTU in the service map (an entry with a prefix and an MTU, no
# service): taken with the parameter at 0.
mount -t configfs configfs /sys/kernel/config 2>/dev/null
if mkdir "$MAP/siteB" 2>/dev/null && echo "$PB" >"$MAP/siteB/prefix" && mtu_bytes "$MTU_R" >"$MAP/siteB/mtu"; then
	flush_a1
	KPFX=mtu:fallback-map
	big fallbackmap a1/1 b1/1
else
	diag "cannot make the service map entry $MAP/siteB"
fi
chk_begin
chk_num act-mtu "$(qa fallbackmap act.conn mtu)" "$MTU_E"
chk_num pas-mtu "$(qa fallbackmap pas.conn mtu)" "$MTU_E"
traffic fallbackmap
chk_num drop-mtu $(($(alldrops /tmp/sfm-fallbackmap.counters) - $(alldrops /tmp/sfm-fallback.counters))) 0
chk_end mtu:fallback-service-map-mtu-large-messages-both-ways /tmp/sfm-fallbackmap.ktap
# Both take IBA's MTUs only: anything else is refused, the value kept.
chk_begin
! echo 1000 >$CMA/routed_default_mtu 2>/dev/null || _bad="$_bad 1000-accepted"
! echo 8192 >$CMA/routed_default_mtu 2>/dev/null || _bad="$_bad 8192-accepted"
chk value-kept "$(cat $CMA/routed_default_mtu 2>/dev/null)" 0
! echo 1000 >"$MAP/siteB/mtu" 2>/dev/null || _bad="$_bad map-1000-accepted"
chk map-value-kept "$(cat "$MAP/siteB/mtu" 2>/dev/null)" "$(mtu_bytes "$MTU_R")"
echo 0 >"$MAP/siteB/mtu" 2>/dev/null || _bad="$_bad map-0-refused"
chk map-cleared "$(cat "$MAP/siteB/mtu" 2>/dev/null)" 0
chk_end mtu:routed-mtu-settings-refuse-other-sizes
rmdir "$MAP/siteB" 2>/dev/null
echo 1 >"$RSP" 2>/dev/null

rmmod simfab
chk_dmesg $T "$mark"
diag "guest time $(awk -v s="$start" '{ print $1 - s }' /proc/uptime) s"
t_summary
