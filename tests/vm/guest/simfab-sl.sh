#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 12 (measured under TCG; tests/vm/run --boots balances by it)
# simfab's SL-to-VL model (tests/simfab/README.md, "Fidelity: SL to VL")
# and the SLs a routed connection's QPs take, on sl2vl.topo: subnet B's SM
# gives a data VL only to the SLs in use on B, every other SL maps to VL15.
# Connections through rdma_cm and simfab_rc_test's rc case (traffic both
# ways, RDMA WRITE and READ), then a QP reloaded with a wrong SL.
#
# sl:tables          the ports' OperationalVLs and SL2VL tables in debugfs:
#                    OpenSM's default masked to the port's VLs, B's table
#                    as given, b2's own CA table.
# sl:routed          a1 -> b1 with the return record from b1's
#                    ib_remote_sa: the passive QP on the SL B's SA gave
#                    (not the router's, not A's), traffic both ways, no
#                    packet lost to the SL-to-VL mapping.
# sl:forward-sl-lost the same connection, then b1's QP on the forward
#                    record's SL (A's): b1's port maps it to VL15, every
#                    packet is dropped there, the SEND ends in
#                    RETRY_EXC_ERR (what a passive side that took A's SL
#                    would get).
# sl:switch-egress   b2 -> b1, then b2's QP on an SL b2's own table
#                    carries and B's switch does not: dropped at the
#                    switch's egress to b1, counted there.
# sl:router-egress   a1 -> b1, then a1's QP on an SL that r1 maps to a VL15
#                    SL of B: dropped at r1's egress onto B.
# sl:vl-not-run      b1 -> b3, whose port runs VL0 only while B's table
#                    puts its SL on VL1: the REQ is dropped at the switch's
#                    egress to b3 (drop-vl), no connection.
#
# Skips without simfab.ko, simfab_rc_test.ko or the topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-sl
TOPOFILE=/ibr/simfab/topology/sl2vl.topo
TOPO=/tmp/sfs.topo
RETRY=3

if ! has_mod simfab || ! has_mod simfab_rc_test || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, simfab_rc_test.ko or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
mark=$(dmesg_mark)
start=$(cut -d' ' -f1 /proc/uptime)
if sf_load_topo "$TOPOFILE" rdma_ucm; then
	t_pass $T:load
else
	t_fail $T:load "modprobe rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi

run() {
	sf_rc_run /tmp/sfs "$@"
}
qa() {
	sf_rc_diag /tmp/sfs "$@"
}
rccount() {
	sf_rc_pkts /tmp/sfs "$@" | wc -l
}
# vlmap H/P SL: the VL the port's table (debugfs) gives SL.
vlmap() {
	sed -n "s|^vl port $1 .*sl2vl=\([0-9,]*\).*|\1|p" "$TOPO" | cut -d, -f$(($2 + 1))
}
vls() {
	sed -n "s|^vl port $1 vls=\([0-9]*\) .*|\1|p" "$TOPO"
}
# vldrops H/P FILE: a port's drop-vl count in a counters file (0: none).
vldrops() {
	_v=$(sed -n "s|^port=$1 drop-vl=\([0-9]*\)$|\1|p" "$2")
	echo "${_v:-0}"
}
alldrops() {
	sed -n 's|^port=[^ ]* drop-vl=\([0-9]*\)$|\1|p' "$1" | awk '{ s += $1 } END { print s + 0 }'
}
# wrong_lost NAME: run NAME's send with the wrong AV ended in RETRY_EXC_ERR.
wrong_lost() {
	grep -q "^ok [0-9]* simfab_rc_rc_wrong-av-breaks" "/tmp/sfs-$1.ktap" ||
		_bad="$_bad wrong-SL SEND not lost (RETRY_EXC_ERR)"
}

A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
R=r1
RA=$(rport $R "$A") RB=$(rport $R "$B")
SL_A=$(max "$(prop a1/1 sl)" "$(prop "$RA" sl)")
SL_IN_B=$(slmap $R "$SL_A")
SL_R=$(max "$(prop b1/1 sl)" "$(prop "$RB" sl)")
SL_B2=$(max "$(prop b1/1 sl)" "$(prop b2/1 sl)")
diag "A=$A B=$B: forward SL $SL_A, $R maps it to $SL_IN_B on $B, B's SA gives $SL_R (b1), $SL_B2 (b1-b2)"

# ---- sl:tables ------------------------------------------------------------------
chk_begin
# OpenSM's default table on A (vls 8): SL -> SL & 7, SL 15 -> 7.
chk a1-table "$(sed -n 's|^vl port a1/1 \(.*\)|\1|p' "$TOPO")" "vls=8 sl2vl=0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7"
chk b1-table "$(sed -n 's|^vl port b1/1 \(.*\)|\1|p' "$TOPO")" "vls=4 sl2vl=0,15,15,1,2,3,15,15,15,15,15,15,15,15,15,15"
chk r1-b-table "$(sed -n "s|^vl port $RB \(.*\)|\1|p" "$TOPO")" "vls=4 sl2vl=0,15,15,1,2,3,15,15,15,15,15,15,15,15,15,15"
chk b2-table "$(sed -n 's|^vl port b2/1 \(.*\)|\1|p' "$TOPO")" "vls=4 sl2vl=0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3"
chk_num b3-vls "$(vls b3/1)" 1
# What the rest of the test relies on: B carries its SA's and the
# router's SLs, not A's.
[ "$(vlmap b1/1 "$SL_R")" -lt "$(vls b1/1)" ] || _bad="$_bad b1's-SL-not-carried"
[ "$(vlmap b1/1 "$SL_IN_B")" -lt "$(vls b1/1)" ] || _bad="$_bad router's-SL-not-carried"
chk_num forward-sl-on-b "$(vlmap b1/1 "$SL_A")" 15
chk_ne sa-vs-router-sl "$SL_R" "$SL_IN_B"
chk_end sl:tables "$TOPO"
cat /sys/kernel/debug/simfab/counters >/tmp/sfs-start.counters

# ---- sl:routed, sl:forward-sl-lost: a1 -> b1 through rdma_cm, return record -----
KPFX=sl:routed
run routed cases=rc act="$(port_param a1/1)" pas="$(port_param b1/1)" wrong_pas=1 wrong_sl="$SL_A" retry=$RETRY
ALID=$(topo_port a1/1 lid) BLID=$(topo_port b1/1 lid)
RBLID=$(topo_port "$RB" lid)
chk_begin
chk_num act-sl "$(qa routed act.conn sl)" "$SL_A"
chk_num pas-sl "$(qa routed pas.conn sl)" "$SL_R"
chk_num pas-dlid "$(qa routed pas.conn dlid)" "$RBLID"
chk_end sl:routed-passive-on-b-sa-sl /tmp/sfs-routed.ktap
chk_begin
# a1's SENDs reach b1 on the router's SL, b1's ACKs and SENDs leave on
# B's SA's; nothing dropped before the wrong AV.
[ "$(rccount routed " sn=$B at=b1/1 slid=$RBLID dlid=$BLID sl=$SL_IN_B .* rc op=0x04 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no SENDs at b1 on SL $SL_IN_B"
[ "$(rccount routed " sn=$B at=$RB slid=$BLID dlid=$RBLID sl=$SL_R .* rc op=0x04 .*verdict=routed")" -ge 8 ] ||
	_bad="$_bad no SENDs from b1 on SL $SL_R"
[ "$(rccount routed " sn=$A at=a1/1 .* rc op=0x04 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no SENDs from b1 at a1"
chk_end sl:routed-wire /tmp/sfs-routed.cap
KPFX=sl:forward-sl-lost
chk_begin
chk_num wrong-sl "$(qa routed pas.wrong sl)" "$SL_A"
wrong_lost routed
# 1 + retry_cnt transmissions, each dropped at b1's own port.
chk_num tries "$(rccount routed " sn=$B at=[^ ]* slid=$BLID .* sl=$SL_A .* rc op=0x04 .*verdict=drop-vl15")" $((RETRY + 1))
chk_num b1-drop-vl $(($(vldrops b1/1 /tmp/sfs-routed.counters) - $(vldrops b1/1 /tmp/sfs-start.counters))) $((RETRY + 1))
chk_end sl:forward-sl-lost-at-b1 /tmp/sfs-routed.cap /tmp/sfs-routed.counters

# ---- sl:switch-egress: b2's CA carries an SL that B's switch does not ------------
KPFX=sl:switch-egress
BAD=6
run switch cases=rc act="$(port_param b2/1)" pas="$(port_param b1/1)" wrong_sl=$BAD retry=$RETRY
B2LID=$(topo_port b2/1 lid)
chk_begin
chk_num b2-carries "$(vlmap b2/1 $BAD)" 2
chk_num switch-drops "$(vlmap b1/1 $BAD)" 15
chk_num act-sl "$(qa switch act.conn sl)" "$SL_B2"
[ "$(rccount switch " at=b1/1 slid=$B2LID dlid=$BLID sl=$SL_B2 .* rc op=0x04 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no SENDs b2->b1 on SL $SL_B2"
wrong_lost switch
chk_num tries "$(rccount switch " at=b1/1 slid=$B2LID .* sl=$BAD .* rc op=0x04 .*verdict=drop-vl15")" $((RETRY + 1))
chk_num b1-drop-vl $(($(vldrops b1/1 /tmp/sfs-switch.counters) - $(vldrops b1/1 /tmp/sfs-routed.counters))) $((RETRY + 1))
chk_num b2-drop-vl $(($(vldrops b2/1 /tmp/sfs-switch.counters) - $(vldrops b2/1 /tmp/sfs-routed.counters))) 0
chk_end sl:switch-egress-drops-at-b1 /tmp/sfs-switch.cap /tmp/sfs-switch.counters

# ---- sl:router-egress: r1 maps an SL of A to a VL15 SL of B ---------------------
KPFX=sl:router-egress
BADA=0
run rtr cases=rc act="$(port_param a1/1)" pas="$(port_param b1/1)" wrong_sl=$BADA retry=$RETRY
chk_begin
chk_num maps-to "$(vlmap "$RB" "$(slmap $R $BADA)")" 15
wrong_lost rtr
chk_num tries "$(rccount rtr " sn=$A at=$RA slid=$ALID .* sl=$BADA .* rc op=0x04 .*verdict=drop-vl15")" $((RETRY + 1))
chk_num r1-drop-vl $(($(vldrops "$RB" /tmp/sfs-rtr.counters) - $(vldrops "$RB" /tmp/sfs-switch.counters))) $((RETRY + 1))
chk_end sl:router-egress-drops-at-r1 /tmp/sfs-rtr.cap /tmp/sfs-rtr.counters

# ---- sl:vl-not-run: b3's link runs VL0 only ---------------------------------------
KPFX=sl:vl-not-run
echo clear >/sys/kernel/debug/simfab/ctl
_m=$(dmesg_mark)
timeout 120 modprobe simfab_rc_test cases=rc act="$(port_param b1/1)" pas="$(port_param b3/1)" wait_ms=3000 retry=$RETRY
rmmod simfab_rc_test 2>/dev/null
dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >/tmp/sfs-vl.ktap
cat /sys/kernel/debug/simfab/capture >/tmp/sfs-vl.cap
cat /sys/kernel/debug/simfab/counters >/tmp/sfs-vl.counters
B3LID=$(topo_port b3/1 lid)
SL_B3=$(max "$(prop b1/1 sl)" "$(prop b3/1 sl)")
chk_begin
chk_num b3-vl "$(vlmap b3/1 "$SL_B3")" 1
grep -q "^not ok [0-9]* simfab_rc_rc_connect" /tmp/sfs-vl.ktap || _bad="$_bad connected"
[ "$(grep -c " at=b3/1 slid=$BLID dlid=$B3LID sl=$SL_B3 .* class=0x07 .* attr=0x0010 .*verdict=drop-vl mad=" /tmp/sfs-vl.cap)" -ge 1 ] ||
	_bad="$_bad no REQ dropped drop-vl at b3/1"
[ "$(vldrops b3/1 /tmp/sfs-vl.counters)" -ge 1 ] || _bad="$_bad no drop-vl counted at b3/1"
chk_end sl:vl-not-run-drops-at-switch-egress /tmp/sfs-vl.ktap /tmp/sfs-vl.cap /tmp/sfs-vl.counters

rmmod simfab
chk_dmesg $T "$mark"
diag "guest time $(awk -v s="$start" '{ print $1 - s }' /proc/uptime) s"
t_summary
