#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 60 (measured under TCG; tests/vm/run --boots balances by it)
# simfab RC QPs, path migration and the in-kernel test driver
# (tests/simfab/module/simfab_rc_test.c), on default.topo and routed.topo:
#
# rc:        RC connections through rdma_cm (same subnet; across a router,
#            b1 on B's SA's SL with the router's LID from the LRH) and ib_cm, traffic both ways, RDMA
#            WRITE/READ, both sides' query_qp attributes and the data
#            packets on the wire (capture), all derived from the topology.
# hca:       what a real HCA does when the path is gone and no alternate is
#            armed: RETRY_EXC_ERR after retry_cnt retries, QP in Error,
#            receives and later WRs flushed.
# apm:       path migration (IBA 17.2.8) with an alternate on the
#            dual-ported host's second port: requested, and forced by a
#            link failure under traffic; PATH_MIG events, query_qp states,
#            the alternate's LIDs on the wire, re-arm.
# rc:routed-ret, rc:alt-routed, apm:routed: ib-routed's ib_cm (issue 8)
#            across a router with return records from the passive side's
#            own SA, handed in by the driver: the REQ's passive-side fields
#            on the wire, end-to-end MTU/rate/lifetime, both QPs, traffic;
#            a routed alternate through the second router armed on both
#            sides, sent as 6.1 sends it without its return record,
#            refused with one whose DLID names no router port (permissive,
#            as rdma_cm's primary return record); the primary router
#            failing under traffic and both QPs migrating to the alternate;
#            a LAP loading a new alternate afterwards, malformed/out-of-state
#            LAP/APR refused and counted, a LAP the peer never answers.
#            (Unpatched 6.1 fails these: it sends permissive LIDs and the
#            forward SL/MTU/rate, arms the passive alternate with the first
#            router's LID, and sends a routed alternate without a return.)
#
# Skips without simfab.ko, simfab_rc_test.ko or the routed topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-rc
D=/sys/kernel/debug/simfab
ROUTED=/ibr/simfab/topology/routed.topo
CONF=/etc/modprobe.d/simfab-topology.conf
RETRY=3

if ! has_mod simfab || ! has_mod simfab_rc_test; then
	t_skip $T "simfab.ko or simfab_rc_test.ko not in the image (run tests/simfab/build)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
start=$(cut -d' ' -f1 /proc/uptime)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
modprobe rdma_ucm

# load_topo FILE|default: (re)load simfab with that topology.
load_topo() {
	! mod_loaded simfab_rc_test || rmmod simfab_rc_test
	! mod_loaded simfab || rmmod simfab
	if [ "$1" = default ]; then
		modprobe simfab
	else
		cp $CONF /tmp/sfrc-default.conf
		printf 'options simfab topology="%s"\n' "$(cat "$1")" >$CONF
		modprobe simfab
		_rc=$?
		cp /tmp/sfrc-default.conf $CONF
		return $_rc
	fi
}

# ---- the topology (as simfab-routed.sh reads it) -----------------------------
TOPO=/tmp/sfrc.topo
# other_router R S1 S2: the first router of the topology other than R with
# ports on subnets S1 and S2.
other_router() {
	sed -n 's/^router \([^ ]*\) .*/\1/p' $TOPO | while read -r _r; do
		if [ "$_r" != "$1" ] && [ -n "$(rport "$_r" "$2")" ] && [ -n "$(rport "$_r" "$3")" ]; then
			echo "$_r"
			break
		fi
	done
}
lid() {
	topo_port "$1" lid
}
# hosts_on SUBNET: the hosts of a subnet, in topology order.
hosts_on() {
	sed -n "s|^host \([^ ]*\) subnet=$1 .*|\1|p" $TOPO
}
# gid6 H/P: the port's GID as the kernel's %pI6 prints it.
gid6() {
	topo_port "$1" gid | tr -d : | sed 's/..../&:/g; s/:$//'
}

# run NAME PARAMS...: one load of simfab_rc_test (sf_rc_run); its files
# are /tmp/sfrc-NAME.*. qa, diagv, rcpkts, rccount: its values (lib).
run() {
	sf_rc_run /tmp/sfrc "$@"
}
qa() {
	sf_rc_diag /tmp/sfrc "$@"
}
diagv() {
	sf_rc_diag /tmp/sfrc "$@"
}
rcpkts() {
	sf_rc_pkts /tmp/sfrc "$@"
}
rccount() {
	rcpkts "$@" | wc -l
}

# =========================== default.topo: one subnet ===========================
if ! load_topo default; then
	t_fail $T:load "modprobe simfab failed"
	t_summary
	exit 0
fi
cat $D/topology >$TOPO
S=$(topo_host h1 subnet)
# The single-ported host (SM's), the dual-ported one, and a third host.
# shellcheck disable=SC2046 # host names have no blanks
set -- $(hosts_on "$S")
H1=$1
H2='' H3=
for h in "$@"; do
	[ "$h" = "$H1" ] && continue
	if [ "$(topo_host "$h" ports)" = 2 ] && [ -z "$H2" ]; then H2=$h; elif [ -z "$H3" ]; then H3=$h; fi
done
if [ -z "$H2" ] || [ -z "$H3" ]; then
	t_fail $T:topology "default.topo needs a dual-ported host and two others"
	t_summary
	exit 0
fi
L1=$(lid "$H1/1") L3=$(lid "$H3/1") L2A=$(lid "$H2/1") L2B=$(lid "$H2/2")
diag "subnet $S: $H1/1 lid $L1, $H2/1 lid $L2A, $H2/2 lid $L2B, $H3/1 lid $L3"

# ---- rc: same subnet, rdma_cm -------------------------------------------------------
KPFX=rc:same
# Then the active AV gets the dual-ported host's LID instead: nothing
# arrives where the connection's QP is.
run same cases=rc act="$(port_param "$H1/1")" pas="$(port_param "$H3/1")" wrong_dlid="$L2A" retry=$RETRY
SL13=$(max "$(prop "$H1/1" sl)" "$(prop "$H3/1" sl)")
MTU13=$(min "$(prop "$H1/1" mtu)" "$(prop "$H3/1" mtu)")
chk_begin
chk_num act-dlid "$(qa same act.conn dlid)" "$L3"
chk_num act-sl "$(qa same act.conn sl)" "$SL13"
chk_num act-mtu "$(qa same act.conn mtu)" "$MTU13"
chk_num act-global "$(qa same act.conn global)" 0
chk_num act-state "$(qa same act.conn state)" 3	# IB_QPS_RTS
chk_num act-retry "$(qa same act.conn retry)" "$RETRY"
chk_num pas-dlid "$(qa same pas.conn dlid)" "$L1"
chk_num pas-sl "$(qa same pas.conn sl)" "$SL13"
chk_num pas-mtu "$(qa same pas.conn mtu)" "$MTU13"
chk_num pas-mig "$(qa same pas.conn mig)" 0	# IB_MIG_MIGRATED: no alternate
chk_end rc:same-qp-attrs /tmp/sfrc-same.ktap
# On the wire: the SENDs with the AV's LRH, the ACKs back.
chk_begin
[ "$(rccount same " at=$H3/1 slid=$L1 dlid=$L3 sl=$SL13 .* grh=0 rc op=0x04 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no SENDs $L1->$L3 SL $SL13 delivered at $H3/1"
[ "$(rccount same " at=$H1/1 slid=$L3 dlid=$L1 sl=$SL13 .* rc op=0x11 .*aeth=0x00 verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no ACKs back at $H1/1"
[ "$(rccount same " rc op=0x0a .*verdict=delivered")" -eq 1 ] || _bad="$_bad no RDMA WRITE"
[ "$(rccount same " rc op=0x10 .*verdict=delivered")" -eq 1 ] || _bad="$_bad no READ response"
[ "$(rcpkts same "verdict=drop" | grep -vc " dlid=$L2A ")" -eq 0 ] || _bad="$_bad drops"
grep -q "^port=$H1/1 rc tx=[1-9][0-9]* rx=[1-9]" /tmp/sfrc-same.counters || _bad="$_bad no rc counters on $H1/1"
chk_end rc:same-wire /tmp/sfrc-same.cap /tmp/sfrc-same.counters
# The wrong DLID on the wire: 1 + retry_cnt SENDs to $H2/1, none taken.
chk_begin
chk_num wrong-dlid "$(qa same act.wrong dlid)" "$L2A"
chk_num tries "$(rccount same " at=$H2/1 slid=$L1 dlid=$L2A .* rc op=0x04 .*verdict=drop-no-qp")" $((RETRY + 1))
chk_end rc:same-wrong-dlid-wire /tmp/sfrc-same.cap

# ---- hca: the primary path breaks, no alternate ---------------------------------------
KPFX=hca:link-down
run linkdown cases=link-down act="$(port_param "$H1/1")" pas="$(port_param "$H3/1")" \
	fail_ctl="linkdown+$H3/1" restore_ctl="up+$H3/1" retry=$RETRY
# The failing SEND went out 1 + retry_cnt times (IBA 9.7.6.1.3), all
# dropped at the dead port.
psn=$(rcpkts linkdown " at=$H3/1 .* rc op=0x04 .*verdict=drop-port-down" | head -n 1 | sed 's/.* psn=\([0-9]*\) .*/\1/')
chk_begin
chk_num transmissions "$(rccount linkdown " at=$H3/1 .* rc op=0x04 psn=$psn .*verdict=drop-port-down")" $((RETRY + 1))
chk_num qp-state "$(qa linkdown act.after state)" 6	# IB_QPS_ERR
chk_end hca:link-down-retries-on-wire /tmp/sfrc-linkdown.cap

# ---- apm: alternate on the dual-ported host's second port ---------------------------
for mode in manual auto; do
	KPFX=apm:$mode
	if [ $mode = manual ]; then
		run "apm-$mode" cases=apm-manual act="$(port_param "$H1/1")" pas="$(port_param "$H2/1")" \
			act_alt="$(port_param "$H1/1")" pas_alt="$(port_param "$H2/2")" retry=$RETRY
	else
		run "apm-$mode" cases=apm-auto act="$(port_param "$H1/1")" pas="$(port_param "$H2/1")" \
			act_alt="$(port_param "$H1/1")" pas_alt="$(port_param "$H2/2")" retry=$RETRY \
			fail_ctl="linkdown+$H2/1" restore_ctl="up+$H2/1"
	fi
	n=apm-$mode
	chk_begin
	# Armed (IBA 17.2.8: 0 MIGRATED, 1 REARM, 2 ARMED) with the SA's
	# paths: primary to port 1, alternate to port 2 of the same host.
	chk_num act-mig "$(qa $n act.before mig)" 2
	chk_num act-dlid "$(qa $n act.before dlid)" "$L2A"
	chk_num act-alt-dlid "$(qa $n act.before alt_dlid)" "$L2B"
	chk_num act-alt-port "$(qa $n act.before alt_port)" 1
	chk_num pas-mig "$(qa $n pas.before mig)" 2
	chk_num pas-port "$(qa $n pas.before port)" 1
	chk_num pas-alt-port "$(qa $n pas.before alt_port)" 2
	chk_num pas-dlid "$(qa $n pas.before dlid)" "$L1"
	chk_num pas-alt-dlid "$(qa $n pas.before alt_dlid)" "$L1"
	chk_end "apm:$mode-armed-attrs" "/tmp/sfrc-$n.ktap"
	chk_begin
	chk_num act-mig "$(qa $n act.after mig)" 0
	chk_num act-dlid "$(qa $n act.after dlid)" "$L2B"
	chk_num act-events "$(qa $n act.after events | cut -d/ -f1)" 1
	chk_num pas-mig "$(qa $n pas.after mig)" 0
	chk_num pas-port "$(qa $n pas.after port)" 2
	chk_num pas-dlid "$(qa $n pas.after dlid)" "$L1"
	chk_num pas-events "$(qa $n pas.after events | cut -d/ -f1)" 1
	chk_end "apm:$mode-migrated-attrs" "/tmp/sfrc-$n.ktap"
	# The wire after migration: SENDs to the alternate's DLID arrive at
	# port 2 with MigReq set, and port 2 answers from its own LID.
	chk_begin
	[ "$(rccount $n " at=$H2/2 slid=$L1 dlid=$L2B .* rc op=0x04 .*mig=1 .*verdict=delivered")" -ge 1 ] ||
		_bad="$_bad no MigReq SENDs $L1->$L2B at $H2/2"
	[ "$(rccount $n " at=$H1/1 slid=$L2B dlid=$L1 .* rc op=0x11 .*verdict=delivered")" -ge 1 ] ||
		_bad="$_bad no ACKs from $H2/2"
	[ "$(rccount $n " at=$H1/1 slid=$L2B dlid=$L1 .* rc op=0x04 .*verdict=delivered")" -ge 1 ] ||
		_bad="$_bad no SENDs from $H2/2"
	if [ $mode = auto ]; then
		# Retries exhausted on the dead primary, then the same PSN
		# again on the alternate.
		psn=$(rcpkts $n " at=$H2/1 .* rc op=0x04 .*verdict=drop-port-down" | head -n 1 | sed 's/.* psn=\([0-9]*\) .*/\1/')
		chk_num primary-tries "$(rccount $n " at=$H2/1 .* rc op=0x04 psn=$psn .*verdict=drop-port-down")" $((RETRY + 1))
		[ "$(rccount $n " at=$H2/2 .* rc op=0x04 psn=$psn mig=1 .*verdict=delivered")" -ge 1 ] ||
			_bad="$_bad PSN $psn not resent on the alternate"
	fi
	chk_end "apm:$mode-wire" "/tmp/sfrc-$n.cap"
	chk_begin
	chk_num act-mig "$(qa $n act.rearmed mig)" 2
	chk_num act-alt-dlid "$(qa $n act.rearmed alt_dlid)" "$L2A"
	chk_num pas-mig "$(qa $n pas.rearmed mig)" 2
	chk_num pas-alt-port "$(qa $n pas.rearmed alt_port)" 1
	chk_end "apm:$mode-rearmed-attrs" "/tmp/sfrc-$n.ktap"
done

# ---- cm:lost-rtu: COMM_EST establishes the passive side (IBA 11.6.3) ---------------
# ib_cm h1 -> h3, the passive QP in RTR until established (as ib_srpt),
# the RTU lost on its way to h3 (a fault rule); the active side sends at
# once: h3's QP takes it in RTR, raises COMM_EST, its handler calls
# ib_cm_notify() and ib_cm establishes without the RTU and without
# sending the REP again.
KPFX=cm:lost-rtu
run lostrtu cases=lost-rtu act="$(port_param "$H1/1")" pas="$(port_param "$H3/1")" retry=$RETRY \
	fail_ctl="drop+class=0x07+attr=0x0014+to=$H3/1+count=1" restore_ctl="nofault"
chk_begin
chk_num rtu-dropped "$(grep -c " at=$H3/1 .* class=0x07 .* attr=0x0014 .* verdict=drop-inject " /tmp/sfrc-lostrtu.cap)" 1
chk_num rtu-delivered "$(grep -c " at=$H3/1 .* class=0x07 .* attr=0x0014 .* verdict=delivered " /tmp/sfrc-lostrtu.cap)" 0
chk_num rep-once "$(grep -c " at=$H1/1 .* class=0x07 .* attr=0x0013 .* verdict=delivered " /tmp/sfrc-lostrtu.cap)" 1
[ "$(rccount lostrtu " at=$H3/1 slid=$L1 dlid=$L3 .* rc op=0x04 .*verdict=delivered")" -ge 1 ] ||
	_bad="$_bad no SEND delivered at $H3/1"
chk_num pas-state "$(qa lostrtu pas.est state)" 3	# IB_QPS_RTS
chk_end cm:lost-rtu-wire /tmp/sfrc-lostrtu.cap

# ---- apm:mig-err: a migration request the passive QP refuses ---------------------------
# apm-manual's connection with the active side's alternate DLID set to
# $H2/1's (alt_dlid): not the passive QP's alternate ($H2/2). After a
# requested migration the SEND with MigReq set arrives at $H2/1: the
# passive QP raises PATH_MIG_ERR and goes to Error (later tries find no
# QP), the active send ends in RETRY_EXC_ERR.
KPFX=apm:mig-err
run migerr cases=mig-err act="$(port_param "$H1/1")" pas="$(port_param "$H2/1")" \
	act_alt="$(port_param "$H1/1")" pas_alt="$(port_param "$H2/2")" alt_dlid="$L2A" retry=$RETRY
chk_begin
chk_num pas-alt-port "$(qa migerr pas.before alt_port)" 2
chk_num act-alt-dlid "$(qa migerr act.before alt_dlid)" "$L2A"
chk_num refused "$(rccount migerr " at=$H2/1 slid=$L1 dlid=$L2A .* rc op=0x04 .*mig=1 .*verdict=drop-path")" 1
chk_num tries-after "$(rccount migerr " at=$H2/1 slid=$L1 dlid=$L2A .* rc op=0x04 .*mig=1 .*verdict=drop-no-qp")" "$RETRY"
chk_num pas-state "$(qa migerr pas.after state)" 6	# IB_QPS_ERR
chk_end apm:mig-err-wire /tmp/sfrc-migerr.cap

# ---- rc:rkey: R_Key checks (IBA 10.6, 9.7.5.2; rxe check_rkey) -------------------------
# One RDMA op h1 -> h3 per connection on a fast-registered MR of h3:
# the good key (WRITE, READ), a stale key, past the range (WRITE, READ),
# without remote write, without remote read, another PD's key.
KPFX=rc:rkey
run rkey cases=rkey act="$(port_param "$H1/1")" pas="$(port_param "$H3/1")" retry=$RETRY
chk_begin
chk_num naks "$(rccount rkey " at=$H1/1 slid=$L3 dlid=$L1 .* rc op=0x11 .*aeth=0x62 verdict=")" 7
chk_num refused "$(rccount rkey " at=$H3/1 slid=$L1 dlid=$L3 .* rc op=0x(0a|0c) .*verdict=nak-rkey")" 7
chk_num good-write "$(rccount rkey " at=$H3/1 .* rc op=0x0a .*verdict=delivered")" 1
chk_num good-read "$(rccount rkey " at=$H1/1 .* rc op=0x10 .*verdict=delivered")" 1
chk_end rc:rkey-wire /tmp/sfrc-rkey.cap

# finish: the kernel log since the start, the totals.
finish() {
	load_topo default >/dev/null 2>&1
	dmesg_since "$mark" | grep -v 'module verification failed' >/tmp/sfrc.dmesg
	if grep -Eq "$DMESG_BAD" /tmp/sfrc.dmesg; then
		grep -E "$DMESG_BAD" /tmp/sfrc.dmesg | while read -r l; do diag "$l"; done
		t_fail $T:kernel-log "errors in the kernel log"
	else
		t_pass $T:kernel-log
	fi
	diag "guest time $(awk -v s="$start" '{ print $1 - s }' /proc/uptime) s"
	t_summary
}
# ibr_sfrc_part=default on the kernel command line: the default
# topology's cases only (the mutation checks of the rules they cover
# boot with it: tests/simfab/mutate's "# append:" header).
# shellcheck disable=SC2013 # one line of words
for arg in $(cat /proc/cmdline); do
	case $arg in ibr_sfrc_part=default)
		diag "ibr_sfrc_part=default: routed.topo's cases not run"
		finish
		exit 0 ;;
	esac
done

# =========================== routed.topo: two subnets ===========================
if [ ! -f "$ROUTED" ] || ! load_topo "$ROUTED"; then
	t_fail $T:load-routed "modprobe simfab with $ROUTED failed"
	t_summary
	exit 0
fi
cat $D/topology >$TOPO
A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PB=$(topo_subnet "$B" prefix)
AP=a1/1 BP=b1/1
ALID=$(lid $AP) BLID=$(lid $BP)
# A's SA names R1 for B (OpenSM's rule: route_via); the alternate goes
# through the other router.
R1=$(route_via "$A" "$PB")
R2=$(other_router "$R1" "$A" "$B")
R1A=$(lid "$(rport "$R1" "$A")") R1B=$(lid "$(rport "$R1" "$B")")
R2A=$(lid "$(rport "$R2" "$A")") R2B=$(lid "$(rport "$R2" "$B")")
SL_A=$(max "$(prop $AP sl)" "$(prop "$(rport "$R1" "$A")" sl)")
SL_IN_B=$(slmap "$R1" "$SL_A")
diag "A=$A B=$B $AP lid $ALID, $BP lid $BLID; $R1: $R1A/$R1B; $R2: $R2A/$R2B; SL $SL_A -> $SL_IN_B"

# ---- rc: across the router through rdma_cm ----------------------------------------------
# rdma_cm asks b1's ib_remote_sa for the return record, which leaves the
# router's LID to the LRH fix-up (the router the REQ came through) and
# gives b1's QP the SL of B's SA (0009), not the router's SL_IN_B.
SL_PB=$(max "$(prop $BP sl)" "$(prop "$(rport "$R1" "$B")" sl)")
KPFX=rc:routed
# Then the active AV loses its GRH: the router drops what it sends.
run routed cases=rc act="$(port_param $AP)" pas="$(port_param $BP)" wrong_nogrh=1 retry=$RETRY
chk_begin
chk_num act-dlid "$(qa routed act.conn dlid)" "$R1A"
chk_num act-global "$(qa routed act.conn global)" 1
chk_num act-hop "$(qa routed act.conn hop)" 255
chk act-dgid "$(qa routed act.conn dgid)" "$(gid6 $BP)"
chk_num pas-dlid "$(qa routed pas.conn dlid)" "$R1B"
chk_ne sa-vs-router-sl "$SL_PB" "$SL_IN_B"
chk_num pas-sl "$(qa routed pas.conn sl)" "$SL_PB"
chk_num pas-global "$(qa routed pas.conn global)" 1
chk pas-dgid "$(qa routed pas.conn dgid)" "$(gid6 $AP)"
chk_end rc:routed-qp-attrs /tmp/sfrc-routed.ktap
# Data packets through the router both ways: LRH to the router on the
# sender's subnet, rewritten on the other, GRH kept.
chk_begin
[ "$(rccount routed " sn=$A at=$R1/[0-9]+ slid=$ALID dlid=$R1A sl=$SL_A .* grh=1 hop=255 .* rc op=0x04 .*verdict=routed")" -ge 8 ] ||
	_bad="$_bad no SENDs routed at $R1 on $A"
[ "$(rccount routed " sn=$B at=$BP slid=$R1B dlid=$BLID sl=$SL_IN_B .* grh=1 hop=254 .* rc op=0x04 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no SENDs delivered at $BP from $R1"
[ "$(rccount routed " sn=$A at=$AP slid=$R1A dlid=$ALID .* grh=1 .* rc op=0x11 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no ACKs back through $R1"
[ "$(rccount routed " sn=$B at=$R1/[0-9]+ slid=$BLID dlid=$R1B sl=$SL_PB .* grh=1 .* rc op=0x04 .*verdict=routed")" -ge 8 ] ||
	_bad="$_bad no SENDs from $BP on SL $SL_PB"
[ "$(rcpkts routed "verdict=drop" | grep -vc " grh=0 ")" -eq 0 ] || _bad="$_bad drops"
grep -q "^port=$R1/[0-9]* rc tx=[1-9]" /tmp/sfrc-routed.counters || _bad="$_bad no rc counters on $R1"
chk_end rc:routed-wire /tmp/sfrc-routed.cap /tmp/sfrc-routed.counters
chk_begin
chk_num wrong-global "$(qa routed act.wrong global)" 0
chk_num tries "$(rccount routed " sn=$A at=$R1/[0-9]+ slid=$ALID dlid=$R1A .* grh=0 rc op=0x04 .*verdict=drop-no-grh")" $((RETRY + 1))
chk_end rc:routed-no-grh-wire /tmp/sfrc-routed.cap

# ---- the return half: what B's own SA says for b1 -> a1 -------------------------------
# B routes A's prefix through RB (its route's router), which need not
# be the router A's SA picks: a QP takes packets only from its DLID's
# router (the path check), so a connection whose return record names RB
# sends its forward half through RB too (pri_dlid), and one whose
# forward half goes through R1 gets R1's port on B as its return DLID
# (ret_dlid; B's SA names R1 when RB is down, with the same SL, MTU, rate
# and life: routers' ports take their subnet's).
PA=$(topo_subnet "$A" prefix)
RB=$(route_via "$B" "$PA")
RBA=$(lid "$(rport "$RB" "$A")") RBB=$(lid "$(rport "$RB" "$B")")
# A's SA, a1 -> R1's port on A (the forward half, whichever router).
SL_F=$(max "$(prop $AP sl)" "$(prop "$(rport "$R1" "$A")" sl)")
MTU_F=$(min "$(prop $AP mtu)" "$(prop "$(rport "$R1" "$A")" mtu)")
RATE_F=$(min "$(prop $AP rate)" "$(prop "$(rport "$R1" "$A")" rate)")
LIFE_F=$(max "$(prop $AP life)" "$(prop "$(rport "$R1" "$A")" life)")
# B's SA, b1 -> RB's port on B (the return half).
SL_R=$(max "$(prop $BP sl)" "$(prop "$(rport "$RB" "$B")" sl)")
MTU_R=$(min "$(prop $BP mtu)" "$(prop "$(rport "$RB" "$B")" mtu)")
RATE_R=$(min "$(prop $BP rate)" "$(prop "$(rport "$RB" "$B")" rate)")
LIFE_R=$(max "$(prop $BP life)" "$(prop "$(rport "$RB" "$B")" life)")
# End to end (docs/routed-cm.md): the lower MTU and rate (simfab's rate
# codes 3, 6, 7, 11, 16 order as their speeds), lifetime max + 1 (sum of
# the halves); the REQ's Local ACK Timeout from that lifetime and the
# active CA's ACK delay (IBA 12.7.34, cm.c cm_ack_timeout).
MTU_E=$(min "$MTU_F" "$MTU_R") RATE_E=$(min "$RATE_F" "$RATE_R")
LIFE_E=$(min 63 $(($(max "$LIFE_F" "$LIFE_R") + 1)))
diag "return half via $RB ($RBA on $A, $RBB on $B): SL $SL_R MTU $MTU_R rate $RATE_R life $LIFE_R; forward SL $SL_F MTU $MTU_F rate $RATE_F life $LIFE_F; end to end MTU $MTU_E rate $RATE_E life $LIFE_E"
chk_begin
chk_ne asym-mtu "$MTU_F" "$MTU_R"
chk_ne asym-rate "$RATE_F" "$RATE_R"
chk_ne asym-sl "$(slmap "$RB" "$SL_F")" "$SL_R"
chk_end rc:routed-ret-topology "$TOPO"

# cap_req NAME AT: the REQ (CM class, Send, attr 0x0010) captured at AT.
cap_req() {
	grep " at=$2 .* class=0x07 cv=2 method=0x03 .* attr=0x0010 " "/tmp/sfrc-$1.cap" | head -n 1
}

# ---- rc:routed-ret: ib_cm a1 -> b1 with the return record from B's SA -------------------
KPFX=rc:routed-ret
run routedret cases=ibcm act="$(port_param $AP)" pas="$(port_param $BP)" pri_dlid="$RBA" ret=1 retry=$RETRY
# The return record the driver handed in is B's SA's answer.
chk_begin
chk_num ret-dlid "$(diagv routedret ret dlid)" "$RBB"
chk_num ret-slid "$(diagv routedret ret slid)" "$BLID"
chk_num ret-sl "$(diagv routedret ret sl)" "$SL_R"
chk_num ret-mtu "$(diagv routedret ret mtu)" "$MTU_R"
chk_num ret-rate "$(diagv routedret ret rate)" "$RATE_R"
chk_num ret-hop "$(diagv routedret ret hop)" 255
chk_end rc:routed-ret-record /tmp/sfrc-routedret.ktap
# The REQ as a1 sent it (at RB's port on A): the passive side's fields
# are the return record's (IBA 12.6.5: Local Port LID = the router's
# port on B, Remote Port LID = b1), SubnetLocal 0, end-to-end values.
chk_begin
_req=$(cap_req routedret "$(rport "$RB" "$A")")
if [ -z "$_req" ]; then
	_bad="no REQ at $(rport "$RB" "$A")"
else
	_m=$(capf "$_req" mad)
	chk_num local-lid "$(madn "$_m" 76 2)" "$(diagv routedret ret dlid)"
	chk_num remote-lid "$(madn "$_m" 78 2)" "$(diagv routedret ret slid)"
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$(diagv routedret ret sl)"
	chk_num flow-label $(($(madn "$_m" 112 3) >> 4)) "$(diagv routedret ret flow)"
	chk_num tclass "$(madn "$_m" 116 1)" "$(diagv routedret ret tclass)"
	chk_num hop-limit "$(madn "$_m" 117 1)" "$(diagv routedret ret hop)"
	chk_num subnet-local $(($(madn "$_m" 118 1) >> 3 & 1)) 0
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
	chk_num rate $(($(madn "$_m" 115 1) & 0x3f)) "$RATE_E"
	chk_num ack-timeout $(($(madn "$_m" 119 1) >> 3)) "$(iba_ack_timeout "$(topo_host "${AP%/*}" ack_delay)" "$LIFE_E")"
	chk local-gid "$(mad "$_m" 80 16)" "$(port_gidhex $AP)"
	chk remote-gid "$(mad "$_m" 96 16)" "$(port_gidhex $BP)"
	chk_num lrh-dlid "$(capf "$_req" dlid)" "$RBA"
fi
chk_end rc:routed-ret-req-wire /tmp/sfrc-routedret.cap
# b1's QP: what its own SA says (DLID, SL), end-to-end MTU and rate.
chk_begin
chk_num pas-dlid "$(qa routedret pas.conn dlid)" "$RBB"
chk_num pas-sl "$(qa routedret pas.conn sl)" "$SL_R"
chk_num pas-mtu "$(qa routedret pas.conn mtu)" "$MTU_E"
chk_num pas-rate "$(qa routedret pas.conn rate)" "$RATE_E"
chk_num pas-global "$(qa routedret pas.conn global)" 1
chk pas-dgid "$(qa routedret pas.conn dgid)" "$(gid6 $AP)"
chk_end rc:routed-ret-passive-qp-own-sa /tmp/sfrc-routedret.ktap
# a1's QP: A's SA's DLID and SL, end-to-end MTU and rate.
chk_begin
chk_num act-dlid "$(qa routedret act.conn dlid)" "$RBA"
chk_num act-sl "$(qa routedret act.conn sl)" "$SL_F"
chk_num act-mtu "$(qa routedret act.conn mtu)" "$MTU_E"
chk_num act-rate "$(qa routedret act.conn rate)" "$RATE_E"
chk_num act-hop "$(qa routedret act.conn hop)" 255
chk_end rc:routed-ret-active-qp-end-to-end /tmp/sfrc-routedret.ktap
# Data both ways through RB, each subnet's SL, nothing dropped.
chk_begin
[ "$(rccount routedret " sn=$B at=$BP slid=$RBB dlid=$BLID .* grh=1 .* rc op=0x04 .*verdict=delivered")" -ge 8 ] ||
	_bad="$_bad no SENDs delivered at $BP through $RB"
[ "$(rccount routedret " sn=$B at=$(rport "$RB" "$B") slid=$BLID dlid=$RBB sl=$SL_R .* grh=1 .* rc op=0x04 .*verdict=routed")" -ge 8 ] ||
	_bad="$_bad no SENDs from $BP on SL $SL_R routed at $RB"
[ "$(rcpkts routedret "verdict=drop" | wc -l)" -eq 0 ] || _bad="$_bad drops"
chk_end rc:routed-ret-wire /tmp/sfrc-routedret.cap

# ---- cm:lost-rtu-routed: the same across the router (ib-routed's ib_cm) -----------------
# cm:lost-rtu's case a1 -> b1 through RB with the return record: the RTU
# lost at b1, b1 established by COMM_EST on a routed connection.
KPFX=cm:lost-rtu-routed
run lostrtur cases=lost-rtu act="$(port_param $AP)" pas="$(port_param $BP)" pri_dlid="$RBA" ret=1 retry=$RETRY \
	fail_ctl="drop+class=0x07+attr=0x0014+to=$BP+count=1" restore_ctl="nofault"
chk_begin
chk_num rtu-dropped "$(grep -c " at=$BP .* class=0x07 .* attr=0x0014 .* verdict=drop-inject " /tmp/sfrc-lostrtur.cap)" 1
chk_num rtu-delivered "$(grep -c " at=$BP .* class=0x07 .* attr=0x0014 .* verdict=delivered " /tmp/sfrc-lostrtur.cap)" 0
chk_num rep-once "$(grep -c " at=$AP .* class=0x07 .* attr=0x0013 .* verdict=delivered " /tmp/sfrc-lostrtur.cap)" 1
[ "$(rccount lostrtur " sn=$B at=$BP slid=$RBB dlid=$BLID .* grh=1 .* rc op=0x04 .*verdict=delivered")" -ge 1 ] ||
	_bad="$_bad no SEND delivered at $BP through $RB"
chk_num pas-state "$(qa lostrtur pas.est state)" 3	# IB_QPS_RTS
chk_num pas-dlid "$(qa lostrtur pas.est dlid)" "$RBB"
chk_end cm:lost-rtu-routed-wire /tmp/sfrc-lostrtur.cap

# ---- rc:alt-routed: a routed alternate through the second router, by ib_cm --------------
KPFX=rc:alt-routed
if [ -n "$R2" ]; then
	# Without return records ib_send_cm_req() sends it as 6.1 does, so
	# that existing callers connect as before: permissive alternate
	# LIDs in the REQ, which the passive side's LRH fix-up fills with
	# the first router's LID (6.1 cm.c:2065).
	run altr-noret cases=alt-routed act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" retry=$RETRY
	chk_begin
	_req=$(cap_req altr-noret "$(rport "$R1" "$A")")
	if [ -z "$_req" ]; then
		_bad="no REQ at $(rport "$R1" "$A")"
	else
		_m=$(capf "$_req" mad)
		chk_num alt-local-lid "$(madn "$_m" 120 2)" 0xffff
		chk_num alt-remote-lid "$(madn "$_m" 122 2)" 0xffff
	fi
	chk_num pas-alt-dlid "$(qa altr-noret pas.noret alt_dlid)" "$R1B"
	chk_end rc:alt-routed-noret-as-6.1 /tmp/sfrc-altr-noret.ktap
	# An alternate return record whose DLID is permissive (a copy of
	# rdma_cm's primary return record) names no router: b1 would arm
	# the alternate with R1's LID from the REQ's LRH. ib_cm refuses it
	# (-EINVAL) and sends no REQ.
	run altr-permret cases=alt-routed act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" alt_ret_dlid=65535 retry=$RETRY
	chk_begin
	chk_num no-req "$(grep -c " class=0x07 .* attr=0x0010 " /tmp/sfrc-altr-permret.cap)" 0
	chk_end rc:alt-routed-permissive-return-no-req /tmp/sfrc-altr-permret.cap
	# With them: primary through R1 (its return DLID R1's port on B),
	# alternate through R2 with B's SA's own return record.
	R2RET=
	[ "$RB" = "$R2" ] || R2RET="alt_ret_dlid=$R2B"
	run altr cases=alt-routed act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY
	[ -z "$R2RET" ] || diag "B's SA names $RB, not $R2: the alternate's return DLID is set"
	chk_begin
	chk_num req-alt-dlid "$(diagv altr req alt_dlid)" "$R2A"
	chk_num act-alt-dlid "$(qa altr act.before alt_dlid)" "$R2A"
	chk_num act-mig "$(qa altr act.before mig)" 2
	chk_end rc:alt-routed-active-armed /tmp/sfrc-altr.ktap
	# The REQ's alternate fields are the alternate return record's.
	chk_begin
	_req=$(cap_req altr "$(rport "$R1" "$A")")
	if [ -z "$_req" ]; then
		_bad="no REQ at $(rport "$R1" "$A")"
	else
		_m=$(capf "$_req" mad)
		chk_num pri-local-lid "$(madn "$_m" 76 2)" "$R1B"
		chk_num pri-remote-lid "$(madn "$_m" 78 2)" "$BLID"
		chk_num alt-local-lid "$(madn "$_m" 120 2)" "$R2B"
		chk_num alt-remote-lid "$(madn "$_m" 122 2)" "$BLID"
		chk_num alt-sl $(($(madn "$_m" 162 1) >> 4)) "$(diagv altr alt-ret sl)"
		chk_num alt-subnet-local $(($(madn "$_m" 162 1) >> 3 & 1)) 0
		chk_num alt-rate $(($(madn "$_m" 159 1) & 0x3f)) "$RATE_E"
		chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
	fi
	chk_end rc:alt-routed-req-wire /tmp/sfrc-altr.cap
	# b1's alternate names the second router's port on B, with B's SL.
	chk_begin
	chk_num pas-alt-dlid "$(qa altr pas.before alt_dlid)" "$R2B"
	chk_num pas-alt-sl "$(qa altr pas.before alt_sl)" "$SL_R"
	chk_num pas-dlid "$(qa altr pas.before dlid)" "$R1B"
	chk_num pas-mig "$(qa altr pas.before mig)" 2
	chk_end rc:alt-routed-passive-alt-second-router /tmp/sfrc-altr.ktap
	# After migration the active side sends through the second router,
	# b1 (ARMED) takes it on its alternate, migrates and answers.
	chk_begin
	chk_num send-status "$(diagv altr 'after send' status)" 0	# IB_WC_SUCCESS
	chk_num act-state "$(qa altr act.after state)" 3
	chk_num pas-mig "$(qa altr pas.after mig)" 0
	chk_num pas-dlid "$(qa altr pas.after dlid)" "$R2B"
	[ "$(rccount altr " sn=$B at=$BP slid=$R2B .* rc op=0x04 .*mig=1 .*verdict=delivered")" -ge 1 ] ||
		_bad="$_bad no SEND via $R2 delivered at $BP"
	[ "$(rcpkts altr "verdict=drop-path" | wc -l)" -eq 0 ] || _bad="$_bad drop-path"
	chk_end rc:alt-routed-traffic-after-migration /tmp/sfrc-altr.ktap /tmp/sfrc-altr.cap
	# The active side did move to the second router.
	chk_begin
	chk_num act-dlid "$(qa altr act.after dlid)" "$R2A"
	[ "$(rccount altr " sn=$A at=$R2/[0-9]+ slid=$ALID dlid=$R2A .* grh=1 .* rc op=0x04 .*mig=1 .*verdict=routed")" -ge 1 ] ||
		_bad="$_bad no SEND routed at $R2"
	chk_end rc:alt-routed-active-migrated /tmp/sfrc-altr.ktap /tmp/sfrc-altr.cap

	# ---- apm:routed: the primary router fails under traffic ----------------------
	KPFX=apm:routed
	run apm-routed cases=apm-auto act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY \
		fail_ctl="router+$R1+down" restore_ctl="router+$R1+up"
	n=apm-routed
	chk_begin
	chk_num act-alt-dlid "$(qa $n act.before alt_dlid)" "$R2A"
	chk_num pas-alt-dlid "$(qa $n pas.before alt_dlid)" "$R2B"
	chk_num act-mig "$(qa $n act.before mig)" 2
	chk_num pas-mig "$(qa $n pas.before mig)" 2
	chk_num act-dlid-after "$(qa $n act.after dlid)" "$R2A"
	chk_num pas-dlid-after "$(qa $n pas.after dlid)" "$R2B"
	chk_num pas-sl-after "$(qa $n pas.after sl)" "$SL_R"
	chk_num act-rearmed-alt "$(qa $n act.rearmed alt_dlid)" "$R1A"
	chk_num pas-rearmed-alt "$(qa $n pas.rearmed alt_dlid)" "$R1B"
	# The failed primary: 1 + retry_cnt tries dropped at R1, then the
	# same PSN through R2 with MigReq set.
	psn=$(rcpkts $n " sn=$A at=$R1/[0-9]+ .* rc op=0x04 .*verdict=drop" | head -n 1 | sed 's/.* psn=\([0-9]*\) .*/\1/')
	chk_num primary-tries "$(rccount $n " sn=$A at=$R1/[0-9]+ .* rc op=0x04 psn=$psn .*verdict=drop")" $((RETRY + 1))
	[ "$(rccount $n " sn=$B at=$BP slid=$R2B .* rc op=0x04 psn=$psn mig=1 .*verdict=delivered")" -ge 1 ] ||
		_bad="$_bad PSN $psn not resent through $R2"
	chk_end apm:routed-migrated-through-second-router /tmp/sfrc-$n.ktap /tmp/sfrc-$n.cap

	# ---- apm:dreq: a disconnect after a migration nobody reported ---------------
	# The same connection and failure, with a consumer that does not
	# tell ib_cm of the migration (cm_notify=N, as kernel ULPs do not),
	# then the active side disconnects, R1 still down: the DREQ goes to
	# R1 1 + cm_retries times (ib_cm's address vector is the failed
	# primary), then once more through R2 (the alternate); b1, whose DREQ
	# came over its alternate path, answers through R2, and a1 gets the
	# DREP (before "RDMA/cm: Follow a connection's path migration without
	# the consumer": DREQ_ERROR, no DREQ through R2). Short CM timeouts
	# keep the lost tries brief: ib_cm waits twice the packet lifetime
	# plus the peer's CM response timeout, about 0.6 s with life_max=16
	# and cm_timeout=14 (17.5 s with routed.topo's own), 3 retries.
	KPFX=apm:dreq
	run apm-dreq cases=apm-dreq act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY cm_notify=0 life_max=16 cm_timeout=14 cm_retries=3 \
		fail_ctl="router+$R1+down" restore_ctl="router+$R1+up"
	n=apm-dreq
	# cmmads RUN AT ATTR VERDICT: the CM MADs of an attribute at a port
	cmmads() { grep -c " at=$2 .* class=0x07 .* attr=$3 .* verdict=$4" "/tmp/sfrc-$1.cap"; }
	chk_begin
	chk_num dreq-tries-dropped-at-R1 "$(cmmads $n "$(rport "$R1" "$A")" 0x0015 drop)" 4
	chk_num dreq-routed-at-R2 "$(cmmads $n "$(rport "$R2" "$A")" 0x0015 routed)" 1
	chk_num dreq-at-b1 "$(cmmads $n "$BP" 0x0015 delivered)" 1
	chk_num drep-routed-at-R2 "$(cmmads $n "$(rport "$R2" "$B")" 0x0016 routed)" 1
	chk_num drep-at-a1 "$(cmmads $n "$AP" 0x0016 delivered)" 1
	chk_end apm:dreq-through-second-router /tmp/sfrc-$n.ktap /tmp/sfrc-$n.cap
	diag "DREP $(qa $n dreq after_ms) ms after the DREQ"

	# ---- lap: a LAP loads a new alternate after the migration -------------------
	# The same connection and failure; then a LAP offers the old
	# primary (through R1, its return record R1's port on B) as the new
	# alternate, b1 loads it and answers with an APR, both re-arm. Then
	# hand-made LAP/APR that must be refused and counted (cm_rx_rejected):
	# a LAP naming another QP and one for no connection (b1 counts two
	# LAPs and answers each with an APR, which a1 refuses: no LAP of its
	# is outstanding), an APR with no LAP outstanding (b1 counts one).
	KPFX=lap:routed
	ADEV=$(topo_host a1 dev) BDEV=$(topo_host b1 dev)
	rej() { # DEV KIND: cm_rx_rejected counter of the device's port 1
		cat "/sys/class/infiniband/$1/ports/1/cm_rx_rejected/$2" 2>/dev/null || echo none
	}
	b_lap0=$(rej "$BDEV" lap) b_apr0=$(rej "$BDEV" apr) a_apr0=$(rej "$ADEV" apr)
	run lap cases=lap act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY \
		fail_ctl="router+$R1+down" restore_ctl="router+$R1+up"
	chk_begin
	chk_num pas-lap-dlid "$(diagv lap 'pas lap_rcvd' dlid)" "$R1B"
	chk_num pas-lap-sl "$(diagv lap 'pas lap_rcvd' sl)" "$SL_R"
	chk_num act-apr-status "$(diagv lap 'act apr' status)" 0
	chk_num act-mig "$(qa lap act.lapped mig)" 2
	chk_num act-dlid "$(qa lap act.lapped dlid)" "$R2A"
	chk_num act-alt-dlid "$(qa lap act.lapped alt_dlid)" "$R1A"
	chk_num pas-mig "$(qa lap pas.lapped mig)" 2
	chk_num pas-dlid "$(qa lap pas.lapped dlid)" "$R2B"
	chk_num pas-alt-dlid "$(qa lap pas.lapped alt_dlid)" "$R1B"
	chk_num pas-alt-sl "$(qa lap pas.lapped alt_sl)" "$SL_R"
	chk_end lap:routed-loaded-and-rearmed /tmp/sfrc-lap.ktap
	# On the wire: the LAP (0x0019) at b1 with the return record's LIDs
	# and SubnetLocal 0; the APR (0x001A) back at a1 with status 0.
	chk_begin
	_lap=$(grep " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0019 .* verdict=delivered " /tmp/sfrc-lap.cap | head -n 1)
	# (the connection's APR: not the answer to ib_cm's probe, whose
	# Local Communication ID, MAD bytes 24-27, is 0)
	_apr=$(grep " at=$AP .* class=0x07 cv=2 method=0x03 .* attr=0x001a .* verdict=delivered " /tmp/sfrc-lap.cap |
		while read -r _l; do [ "$(madn "$(capf "$_l" mad)" 24 4)" = 0 ] || { echo "$_l"; break; }; done)
	if [ -z "$_lap" ] || [ -z "$_apr" ]; then
		_bad="no LAP at $BP or no APR at $AP"
	else
		_m=$(capf "$_lap" mad)
		chk_num lap-local-lid "$(madn "$_m" 44 2)" "$R1B"
		chk_num lap-remote-lid "$(madn "$_m" 46 2)" "$BLID"
		chk_num lap-sl $(($(madn "$_m" 86 1) >> 4)) "$SL_R"
		chk_num lap-subnet-local $(($(madn "$_m" 86 1) >> 3 & 1)) 0
		chk_num lap-rate $(($(madn "$_m" 85 1) & 0x3f)) "$RATE_E"
		chk_num apr-status "$(madn "$(capf "$_apr" mad)" 33 1)" 0
	fi
	chk_end lap:routed-wire /tmp/sfrc-lap.cap
	# The refused ones: counted, answered as IBA says, nothing delivered.
	chk_begin
	chk_num b-lap-rejected "$(rej "$BDEV" lap)" $((b_lap0 + 2))
	chk_num b-apr-rejected "$(rej "$BDEV" apr)" $((b_apr0 + 1))
	chk_num a-apr-rejected "$(rej "$ADEV" apr)" $((a_apr0 + 2))
	# APR statuses b1 sent: Invalid QPN (6), Invalid Communication ID (1)
	_st=$(grep " at=$AP .* class=0x07 .* attr=0x001a .* verdict=delivered " /tmp/sfrc-lap.cap |
		sed 's/.* mad=//' | while read -r _h; do madn "$_h" 33 1; done | tr '\n' ' ')
	case " $_st " in *" 6 "*) ;; *) _bad="$_bad no APR status 6 (got $_st)" ;; esac
	case " $_st " in *" 1 "*) ;; *) _bad="$_bad no APR status 1 (got $_st)" ;; esac
	chk_end lap:malformed-rejected-counted /tmp/sfrc-lap.ktap /tmp/sfrc-lap.cap

	# ---- lap-silent: the first try of a LAP lost, twice -----------------------------
	# A LAP is sent only to a peer known to handle LAPs; until then a
	# probe goes first (the LAP with Remote Communication ID 0, which
	# names no connection; a LAP-capable CM answers it with APR Invalid
	# Communication ID, a 6.1 CM drops it unseen). The first CM MAD to
	# b1 is dropped twice: once the probe, once (b1 known now) the LAP
	# itself; each goes again after the CM timeout and is accepted.
	# ib_cm's timeout for a CM MAD is the connection's packet lifetime
	# twice plus the peer's CM response timeout: 17.5 s with routed.topo's
	# lifetimes (the end-to-end 21) and rdma_cm's 20. What is checked is
	# that a lost LAP goes again, not how long ib_cm waits first:
	# life_max=16 and cm_timeout=18 make it about 2 s (this and
	# lap-deaf waited about 90 s of a TCG boot).
	KPFX=lap:silent
	run lap-silent cases=lap-silent act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY life_max=16 cm_timeout=18 lap_drop_ctl="drop+class=0x07+to=$BP+count=1"
	# lapmads FILE VERDICT: the Remote Communication IDs (MAD bytes 28-31)
	# of the LAPs (0x0019) at b1 with that verdict, in order.
	lapmads() {
		grep " at=$BP .* class=0x07 .* attr=0x0019 .* verdict=$2 " "$1" |
			sed 's/.* mad=//' | while read -r _h; do madn "$_h" 28 4; done | tr '\n' ' '
	}
	chk_begin
	_drop=$(lapmads /tmp/sfrc-lap-silent.cap drop-inject) _dlv=$(lapmads /tmp/sfrc-lap-silent.cap delivered)
	diag "lap-silent: LAPs dropped (remote comm IDs) $_drop, delivered $_dlv"
	# shellcheck disable=SC2086 # the IDs, one word each
	set -- $_drop
	chk_num lap-dropped "$#" 2
	chk_num probe-dropped-first "${1:-x}" 0
	[ "${2:-0}" != 0 ] || _bad="$_bad the second dropped LAP is not the connection's"
	# shellcheck disable=SC2086
	set -- $_dlv
	chk_num lap-delivered "$#" 3
	chk_num probe-delivered-first "${1:-x}" 0
	[ "${2:-0}" != 0 ] && [ "${3:-0}" != 0 ] || _bad="$_bad the LAPs after the probe are not the connection's"
	grep -q " at=$BP .* attr=0x0015 .* verdict=delivered " /tmp/sfrc-lap-silent.cap || _bad="$_bad no DREQ at $BP"
	grep -q " at=$AP .* attr=0x0016 .* verdict=delivered " /tmp/sfrc-lap-silent.cap || _bad="$_bad no DREP at $AP"
	chk_end lap:silent-probe-then-lap-retried-then-clean-disconnect /tmp/sfrc-lap-silent.cap

	# ---- lap-deaf: a peer that never answers, and a DREQ during LAP_ERROR ------------
	# Every CM MAD to b1 is dropped (a 6.1 peer drops the probe): the
	# probe goes 3 times, not 1 + max CM retries (cm_retries=4 here,
	# rdma_cm's 15 would hold off other LAPs for over a minute; before
	# the probe was bounded it went 5 times), no LAP naming the
	# connection is sent, LAP_ERROR follows; b1's DREQ, sent while a1's
	# handler of it runs, waits (life_max=16 as lap-silent's, but
	# rdma_cm's CM response timeout: b1's DREQ must outlast the 4 s a1's
	# LAP_ERROR handler takes, 5 tries of 4.3 s).
	KPFX=lap:deaf
	run lap-deaf cases=lap-deaf act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY cm_retries=4 life_max=16 lap_drop_ctl="drop+class=0x07+to=$BP+count=100"
	chk_begin
	_drop=$(lapmads /tmp/sfrc-lap-deaf.cap drop-inject) _dlv=$(lapmads /tmp/sfrc-lap-deaf.cap delivered)
	diag "lap-deaf: LAPs dropped (remote comm IDs) $_drop, delivered $_dlv"
	chk_num probe-tries "$(echo "$_drop" | wc -w)" 3
	chk_num probes-only "$(echo "$_drop" | tr ' ' '\n' | grep -c '^[1-9]')" 0
	chk_num lap-delivered "$(echo "$_dlv" | wc -w)" 0
	chk_end lap:deaf-probe-only-bounded-tries /tmp/sfrc-lap-deaf.cap

	# ---- lap-qp-refuses: the QP refuses the alternate an APR accepted -----------------
	KPFX=lap:qp-refuses
	run lap-qp-refuses cases=lap-qp-refuses act="$(port_param $AP)" pas="$(port_param $BP)" act_alt="$(port_param $AP)" \
		pas_alt="$(port_param $BP)" alt_dlid="$R2A" ret=1 ret_dlid="$R1B" \
		${R2RET:+"$R2RET"} retry=$RETRY
	chk_begin
	chk_num act-cm-alt-refused "$(diagv lap-qp-refuses act.refused cm_alt_dlid)" "$R2A"
	chk_num act-qp-alt-refused "$(diagv lap-qp-refuses act.refused qp_alt_dlid)" "$R2A"
	chk_num pas-cm-alt-again "$(diagv lap-qp-refuses pas.again cm_alt_dlid)" "$R2B"
	chk_num pas-qp-alt-again "$(diagv lap-qp-refuses pas.again qp_alt_dlid)" "$R2B"
	chk_end lap:qp-refuses-cm-follows-qp /tmp/sfrc-lap-qp-refuses.ktap
else
	t_fail $T:rc:alt-routed "no second router on $A's route to $B"
fi

# ---- scale: many rdma_cm connections with RC QPs at once --------------------------
# bench-simfab-scale's kernel case, small: 16 connections a1 -> b1 across
# the router, all ESTABLISHED, a SEND each way and an RDMA WRITE on each
# (the driver checks every completion and the data), DISCONNECTED at both
# ends of each, and nothing left afterwards.
KPFX=scale
SC=16
qp0=$(res_total qp) cq0=$(res_total cq)
run scale cases=scale act="$(port_param $AP)" pas="$(port_param $BP)" conns=$SC retry=$RETRY
chk_begin
chk_num established "$(diagv scale connections established)" $SC
chk_num completions "$(diagv scale traffic completions)" $((5 * SC))
chk_num wanted "$(diagv scale traffic of)" $((5 * SC))
chk_num bytes "$(diagv scale traffic bytes)" $((3 * SC * 256))
chk_num disconnected "$(sed -n 's/^# scale disconnected=\([0-9]*\) .*/\1/p' /tmp/sfrc-scale.ktap)" $((2 * SC))
chk_num qps-left $(($(res_total qp) - qp0)) 0
chk_num cqs-left $(($(res_total cq) - cq0)) 0
chk_num cm-ids-left "$(cm_ids)" 0
chk_end scale:connections-traffic-nothing-left /tmp/sfrc-scale.ktap

finish
