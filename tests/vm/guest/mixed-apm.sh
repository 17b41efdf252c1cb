#!/bin/sh
# shellcheck shell=sh
# Path migration with a stock peer (issue 26; docs/routed-cm.md "Mixed
# fleets"). a1 (the overlay, this guest, which runs the fabric) connects
# to b1 in the peer guest (the distribution's ib_cm and rdma_cm,
# untouched) on routed.topo, the return record from b2 (the service map),
# and gives the connection an alternate through the other router: the
# primary's forward record with that router's LID, B's SA's return record
# (which names the other router already). simfab_echo_test on both ends,
# each QP's Local ACK Timeout set by the consumer (rdma_set_ack_timeout:
# routed.topo's packet lifetimes make a try 8 s and more). Under a stream
# of echoes the first router goes down: both QPs migrate (IBA 17.2.8) and
# the stream goes on without an error; the longest round is the stall.
#
# A stock rdma_cm tells its ib_cm of a migration only when the consumer
# calls rdma_notify(IB_EVENT_PATH_MIG) from its QP's event handler;
# nvme-rdma and nvmet-rdma do not. The overlay's rdma_cm reads the path
# of a QP it created before a DREQ or DREP (docs/routed-cm.md). So the CM
# messages after it:
# mixed-apm:quiet-*   both ends as those ULPs: the QPs on the second router;
#                     a1's CM follows its QP, so its DREQ goes through the
#                     second router, b1's stays on the first, so its DREP
#                     goes through the first (up again here; while it is
#                     down it is lost, docs/routed-cm.md)
# mixed-apm:notify-*  both ends report it: the DREQ and the stock side's
#                     DREP go through the second router, the first still
#                     down, and the connection closes cleanly
# Each: the stock passive armed from the REQ's alternate, both PATH_MIG
# events, both QPs MIGRATED onto the second router, its drops counted at
# the first, the stream verified, no rdma_cm id left on either side.
#
# Skips without simfab.ko, simfab_echo_test.ko, ib_remote_sa or the routed
# topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=mixed-apm
D=/sys/kernel/debug/simfab
TOPOFILE=/ibr/simfab/topology/routed.topo
TOPO=/tmp/mapm.topo
P=/sys/module/rdma_cm/parameters
# 4.096 us * 2^16 = 268 ms per try, 1 + RETRY tries before the HCA
# migrates; STREAM_MS of echoes, the failure a second into it.
ACK=16
RETRY=2
STREAM_MS=8000

if ! has_mod simfab || ! has_mod simfab_echo_test || [ ! -f "$TOPOFILE" ] || ! has_mod ib_remote_sa; then
	t_skip $T "simfab.ko, simfab_echo_test.ko, ib_remote_sa.ko or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
mark=$(dmesg_mark)

if ! peer_up; then
	t_summary
	exit 0
fi
chk_begin
peer_in_tree
chk_end peer-in-tree-stack /tmp/mixed-peer-modprobe.out /tmp/mixed-peer-stack.out
if ! mixed_load "ib_remote_sa rdma_ucm" rdma_ucm; then
	t_fail $T:load "simfab with routed.topo (b1 in the peer) did not load in both guests"
	diag_file /tmp/mixed-peer-load.out
	t_summary
	exit 0
fi
routed_players
[ -w $P/remote_sa ] && echo Y >$P/remote_sa
[ -w $P/remote_sa_required ] && echo N >$P/remote_sa_required
if [ "$RA" = "$RB" ] || ! svc_map_b2 on; then
	t_fail $T:setup "need two routers (A's SA names $RA, B's $RB) and b2 as B's service node"
	t_summary
	exit 0
fi
t_pass $T:setup
diag "primary through $RA ($RA_ALID/$RA_BLID), alternate through $RB ($RB_ALID/$RB_BLID)"

ids_left() {
	echo "$(cm_ids) $(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')"
}
router_count() { # FILE ROUTER KEY: a router's counter
	capf "$(grep "^router $2 " "$1")" "$3"
}
client_migrated() {
	dmesg_since "$1" | grep -q 'simfab_echo: client qp event path migration successful'
}
stream_began() {
	dmesg_since "$1" | grep -q '# client stream begins'
}
# last_cm FILE ATTR AT: the last CM MAD of that attribute delivered at AT.
last_cm() {
	grep " at=$3 .* class=0x07 cv=2 method=0x03 .* attr=$2 .* verdict=delivered " "$1" | tail -n 1
}

# apm_run NAME PORT NOTIFY: the echo server on b1 (peer, stock), the client
# on a1 with the alternate; RA fails a second into the stream. NOTIFY=0:
# RA comes back once a1's QP has migrated (the CM messages then cross
# it); NOTIFY=1: it stays down until the connection is closed.
apm_run() {
	echo clear >$D/ctl
	peer "echo clear >$D/ctl"
	cp $D/counters "/tmp/$1.c0"
	peer "modprobe simfab_echo_test role=server gid=$(port_gid $BP) port=$2 len=4096 \
		ack_timeout=$ACK notify_mig=$3"
	_m=$(dmesg_mark)
	modprobe simfab_echo_test role=client "gid=$(port_gid $AP)" "dst_gid=$(port_gid $BP)" \
		port="$2" len=4096 alt_dlid="$RB_ALID" alt_ret_dlid="$RB_BLID" retry=$RETRY ack_timeout=$ACK \
		notify_mig="$3" stream_ms=$STREAM_MS wait_ms=60000 &
	_cl=$!
	if wait_for 120 stream_began "$_m"; then
		sleep 1
		echo "router $RA down" >$D/ctl
		if [ "$3" = 0 ]; then
			wait_for 60 client_migrated "$_m"
			echo "router $RA up" >$D/ctl
		fi
	fi
	wait $_cl
	echo "router $RA up" >$D/ctl
	rmmod simfab_echo_test
	cp $D/counters "/tmp/$1.c1"
	cat $D/capture >"/tmp/$1.cap"
	peer "cat $D/capture" >"/tmp/$1.pcap"
	dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"/tmp/$1.ktap"
	ktap_relay "$T:$1:" simfab_echo_ "/tmp/$1.ktap" "$T:$1-plan"
	peer "rmmod simfab_echo_test; dmesg | grep 'simfab_echo: server' | sed 's/^\[[^]]*\] //'" >"/tmp/$1.server"

	# Armed at both ends: a1 with the alternate it gave (ARMED once
	# packets went both ways, before the stream), b1 (stock) with the
	# REQ's alternate, its DLID the second router's port on B (REARM or
	# already ARMED when it is established: simfab arms on the first
	# packet from the peer, tests/simfab/README.md "APM").
	_c=$(grep 'simfab_echo: client before stream qp ' "/tmp/$1.ktap" | head -n 1)
	_s=$(grep 'simfab_echo: server established qp ' "/tmp/$1.server" | tail -n 1)
	chk_begin
	chk_num a-dlid "$(capf "$_c" dlid)" "$RA_ALID"
	chk_num a-alt-dlid "$(capf "$_c" alt_dlid)" "$RB_ALID"
	chk_num a-mig "$(capf "$_c" mig)" 2	# IB_MIG_ARMED
	chk_num b-dlid "$(capf "$_s" dlid)" "$RA_BLID"
	chk_num b-alt-dlid "$(capf "$_s" alt_dlid)" "$RB_BLID"
	chk_num b-alt-sl "$(capf "$_s" alt_sl)" "$SL_R"
	case $(capf "$_s" mig) in 1|2) ;; *) _bad="$_bad b-mig=$(capf "$_s" mig)(want REARM or ARMED)" ;; esac
	chk_end "$1-armed" "/tmp/$1.ktap" "/tmp/$1.server"

	# Migrated at both ends (each HCA's PATH_MIG), onto the second router;
	# the first dropped the tries it got.
	_c=$(grep 'simfab_echo: client after stream qp ' "/tmp/$1.ktap" | tail -n 1)
	_s=$(grep 'simfab_echo: server migrated qp ' "/tmp/$1.server" | tail -n 1)
	chk_begin
	grep -q "simfab_echo: client qp event path migration successful notified=$3 ret=0" "/tmp/$1.ktap" ||
		_bad="$_bad no-PATH_MIG-at-a1"
	grep -q "simfab_echo: server qp event path migration successful notified=$3 ret=0" "/tmp/$1.server" ||
		_bad="$_bad no-PATH_MIG-at-b1"
	chk_num a-dlid "$(capf "$_c" dlid)" "$RB_ALID"
	chk_num a-mig "$(capf "$_c" mig)" 0	# IB_MIG_MIGRATED
	chk_num b-dlid "$(capf "$_s" dlid)" "$RB_BLID"
	chk_num b-sl "$(capf "$_s" sl)" "$SL_R"
	chk_num b-mig "$(capf "$_s" mig)" 0
	# Whichever end was sending when RA went down ran out of tries on
	# it (its SEND or b1's echo): drops at either of RA's ports.
	_d=$(($(down_drops "/tmp/$1.c1" "$RA_A") + $(down_drops "/tmp/$1.c1" "$RA_B") -
		$(down_drops "/tmp/$1.c0" "$RA_A") - $(down_drops "/tmp/$1.c0" "$RA_B")))
	[ "$_d" -ge $((1 + RETRY)) ] || _bad="$_bad dropped-for-$RA=$_d(want >=$((1 + RETRY)))"
	_f=$(($(router_count "/tmp/$1.c1" "$RB" forwarded) - $(router_count "/tmp/$1.c0" "$RB" forwarded)))
	[ "$_f" -gt 0 ] || _bad="$_bad $RB-forwarded-nothing"
	# The data stays on the second router (no alternate is loaded again:
	# a stock peer takes no LAP), RA up again or not.
	_last=$(grep -E " sn=$A at=($RA_A|$RB_A) .* rc op=0x0[0-4] .* verdict=routed" "/tmp/$1.cap" | tail -n 1)
	chk last-send-routed-at "$(capf "$_last" at)" "$RB_A"
	chk_end "$1-migrated" "/tmp/$1.ktap" "/tmp/$1.server" "/tmp/$1.c1"
	diag "$1: $(grep '# client stream rounds=' "/tmp/$1.ktap")"

	# Where the CM messages after the migration went: the DREQ as b1 got
	# it, the DREP as a1 got it, by the router that put them on the
	# subnet (the LRH's SLID).
	if [ "$3" = 1 ]; then _rl_b=$RB_BLID _rl_a=$RB_ALID; else _rl_b=$RB_BLID _rl_a=$RA_ALID; fi
	_dreq=$(last_cm "/tmp/$1.pcap" 0x0015 "$BP")
	_drep=$(last_cm "/tmp/$1.cap" 0x0016 "$AP")
	chk_begin
	chk_num dreq-at-b1-from "$(capf "$_dreq" slid)" "$_rl_b"
	chk_num drep-at-a1-from "$(capf "$_drep" slid)" "$_rl_a"
	grep -q 'server conn closed echoed=' "/tmp/$1.server" || _bad="$_bad b1-connection-not-closed"
	chk ids-left "$(ids_left)" "0 0"
	chk_end "$1-cm-after-migration" "/tmp/$1.cap" "/tmp/$1.pcap" "/tmp/$1.server"
}

apm_run quiet 7801 0
apm_run notify 7802 1

svc_map_b2 off
peer_dmesg peer-dmesg "the peer during the test"
peer "rmmod simfab" >/dev/null 2>&1
rmmod simfab
chk_dmesg $T "$mark"
t_summary
