#!/bin/sh
# shellcheck shell=sh
# Overlay and stock hosts on one routed fabric (issue 26; tests/simfab/
# README.md "Guests"; docs/routed-cm.md "Mixed fleets"). This guest runs
# the overlay and the fabric (guest 1: a1 on subnet A, b2 on subnet B as
# the service node); the peer guest (guest 2) runs the distribution's own
# ib_cm, rdma_cm and rdma_ucm, untouched, with b1 (its kernel: tests/vm/run
# --peer-kver, this one's by default). routed.topo with guest=2 on b1.
#
# mixed:peer-*        the peer answers and runs the in-tree stack, no
#                     ib_remote_sa; this guest runs the overlay
# mixed:load-*        simfab in both kernels, each with its own hosts' CAs
# mixed:link-sa       b1's own PathRecord query crosses the link to the
#                     fabric's SA and back
# mixed:svc-*         a1 (overlay) -> b1 (stock) with the return record from
#                     b2's ib_remote_sa (the service map for B's prefix): the
#                     REQ on the wire, both QPs, a clean disconnect; RC
#                     traffic of 4 KiB and 64 KiB both ways (simfab_echo_test),
#                     in packets of the path MTU on the wire
# mixed:nosvc-*       a1 -> b1 with no service anywhere: the Get reaches the
#                     stock kernel, whose ib_mad answers UNSUPPORTED at once,
#                     and rdma_cm falls back to the forward record, with
#                     B's MTU from the service map (stated there); traffic
# mixed:lap-*         a1 offers the stock b1 an alternate (LAP): only ib_cm's
#                     probe reaches b1, dropped there, b1's connection intact
# mixed:stock-active-* b1 (stock) -> a1 (overlay): the stock REQ, the
#                     overlay's passive side; traffic
# Every connection ends with no rdma_cm id left on either side.
#
# Skips without simfab.ko, simfab-cm, ib_remote_sa or the routed topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=mixed-routed
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
TOPOFILE=/ibr/simfab/topology/routed.topo
TOPO=/tmp/mx.topo
P=/sys/module/rdma_cm/parameters
S=/sys/kernel/ib_remote_sa

if ! has_mod simfab || [ ! -x "$CM" ] || [ ! -f "$TOPOFILE" ] || ! has_mod ib_remote_sa; then
	t_skip $T "simfab.ko, simfab-cm, ib_remote_sa.ko or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
mark=$(dmesg_mark)

# ---- the peer ------------------------------------------------------------------
if ! peer_up; then
	t_summary
	exit 0
fi
# The peer runs the distribution's stack; this guest the overlay's.
chk_begin
peer_in_tree
chk_end peer-in-tree-stack /tmp/mixed-peer-modprobe.out /tmp/mixed-peer-stack.out

# ---- simfab in both kernels ----------------------------------------------------------
if mixed_load "ib_remote_sa rdma_ucm" rdma_ucm; then
	t_pass $T:load
else
	t_fail $T:load "simfab with routed.topo (b1 in the peer) did not load in both guests"
	diag_file /tmp/mixed-peer-load.out
	t_summary
	exit 0
fi
chk_begin
for m in ib_cm rdma_cm rdma_ucm; do
	overlay_check $m || _bad="$_bad $why"
done
chk_end overlay-here
peer "cat $D/topology" >/tmp/mx-peer.topo
routed_players
chk_begin
chk b1-here "$(topo_host b1 dev) $(topo_host b1 guest)" "- 2"
chk a1-here "$(topo_host a1 guest)" 1
[ "$(topo_host a1 dev)" != - ] || _bad="$_bad a1-not-registered"
chk b1-peer "$(sed -n 's/^host b1 .* guest=\([0-9]*\) dev=\([^ ]*\).*/\1 \2/p' /tmp/mx-peer.topo)" "2 simfab0"
chk a1-peer "$(sed -n 's/^host a1 .* dev=\([^ ]*\).*/\1/p' /tmp/mx-peer.topo)" -
chk peer-devices "$(peer 'ls /sys/class/infiniband' | tr '\n' ' ')" "simfab0 "
chk peer-port "$(peer 'cat /sys/class/infiniband/simfab0/ports/1/state; cat /sys/class/infiniband/simfab0/ports/1/lid')" \
	"$(printf '4: ACTIVE\n0x%x' "$BLID")"
chk_end load-each-its-hosts $TOPO /tmp/mx-peer.topo
diag "RA=$RA ($RA_ALID/$RA_BLID) RB=$RB ($RB_ALID/$RB_BLID); fwd SL $SL_F MTU $MTU_F; ret SL $SL_R MTU $MTU_R; e2e MTU $MTU_E; SL in B $SL_IN_B, in A $SL_IN_A"

# ---- b1's own SA query, through the link --------------------------------------------
echo clear >$D/ctl
peer "timeout 30 $CM 'id own ps=ib' 'bind gid=$(port_gid $BP)' \
	'resolve-addr dst-gid=$(port_gid $AP) dst-port=7600 timeout=5000' \
	'wait ADDR_RESOLVED' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED' \
	'query-path'" >/tmp/mx-own.out 2>&1
cat $D/capture >/tmp/mx-own.cap
chk_begin
chk_num dlid "$(out /tmp/mx-own.out 'path[0].dlid')" "$RB_BLID"
chk_num sl "$(out /tmp/mx-own.out 'path[0].sl')" "$SL_R"
chk_num mtu "$(out /tmp/mx-own.out 'path[0].mtu')" "$MTU_R"
grep -q " sn=$B at=$BP .* class=0x03 .* method=0x81 .* attr=0x0035 .* verdict=to-guest " /tmp/mx-own.cap ||
	_bad="$_bad no-SA-answer-sent-to-the-peer"
chk_end link-sa /tmp/mx-own.out /tmp/mx-own.cap

# ---- connections --------------------------------------------------------------------
# cap FILE ATTR AT VERDICT: the first captured CM MAD of that attribute
# at port AT with that verdict.
cap() {
	grep " at=$3 .* class=0x07 cv=2 method=0x03 .* attr=$2 .* verdict=$4 " "$1" | head -n 1
}
rsa_cap() { # FILE METHOD AT VERDICT: an ib_remote_sa PathRecord MAD
	grep -i " at=$3 .* class=0x0d .* method=$2 .* attr=0x0035 .* verdict=$4 " "$1" | head -n 1
}
# The ids left: rdma_cm's own count, here and in the peer.
ids_left() {
	echo "$(cm_ids) $(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')"
}

# b1_listens NAME PORT: b1's passive side in the peer, in the background:
# listen, take the REQ, its QP attributes (from the REQ, before the REP:
# the active side disconnects right after its RTU, and an id that got
# the DREQ has no RTR attributes to give), accept, ESTABLISHED, then the
# active side's DREQ and its own DREP. Output in the peer's /tmp/NAME.out.
b1_listens() {
	peer "timeout 90 $CM 'timeout 30000' 'id srv ps=ib' 'bind gid=$(port_gid $BP) port=$2' \
		'listen backlog=4' 'tag listening' 'query-addr' \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' \
		'tag conn-rtr' 'qp-attr rtr' 'tag conn' 'query-path' 'accept qpn=0x222' \
		'wait ESTABLISHED id=conn' 'wait DISCONNECTED id=conn' 'disconnect id=conn' \
		>/tmp/$1.out 2>&1 &"
	wait_for 20 peer "grep -q ^listening /tmp/$1.out"
}

# a1_connects NAME PORT: a1's active side here: route, REQ, REP, RTU, its
# QP attributes, then DREQ and the DREP.
a1_connects() {
	timeout 90 "$CM" 'timeout 30000' 'id cli ps=ib' "bind gid=$(port_gid $AP)" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=$2 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=8000' 'wait ROUTE_RESOLVED id=cli' \
		'tag cli' 'query-path' 'connect qpn=0x111' 'wait CONNECT_RESPONSE id=cli' \
		'tag cli-rtr' 'qp-attr rtr' 'accept id=cli' \
		'tag' 'disconnect id=cli' 'wait DISCONNECTED id=cli' \
		>"/tmp/$1.out" 2>&1
}

# connection NAME PORT: b1 listens in the peer, a1 connects here; the
# capture, the peer's output and its capture are kept as /tmp/NAME.*.
connection() {
	echo clear >$D/ctl
	peer "echo clear >$D/ctl"
	if ! b1_listens "$1" "$2"; then
		t_fail "$T:$1-connect" "b1 did not listen in the peer"
		peer "cat /tmp/$1.out" >"/tmp/$1.peer"
		diag_file "/tmp/$1.peer"
		return 1
	fi
	a1_connects "$1" "$2"
	_rc=$?
	wait_for 20 peer '! pidof simfab-cm'
	peer "cat /tmp/$1.out" >"/tmp/$1.peer"
	peer "cat $D/capture" >"/tmp/$1.pcap"
	cat $D/capture >"/tmp/$1.cap"
	if [ $_rc -eq 0 ] && grep -qxF 'conn.event ESTABLISHED id=conn status=0' "/tmp/$1.peer"; then
		t_pass "$T:$1-connect"
	else
		t_fail "$T:$1-connect" "simfab-cm a1 exit $_rc; b1: $(grep -c 'event ESTABLISHED' "/tmp/$1.peer") ESTABLISHED"
		diag_file "/tmp/$1.out"
		diag_file "/tmp/$1.peer"
		return 1
	fi
}

# wire_req NAME: the REQ a1 sent, at the router's port on A (this guest's
# capture), and the same REQ as the stock kernel got it: sent to the peer
# by the fabric here, taken by b1 there (the peer's capture), unchanged.
wire_req() {
	_req=$(cap "/tmp/$1.cap" 0x0010 "$RA_A" routed)
	_sent=$(cap "/tmp/$1.cap" 0x0010 "$BP" to-guest)
	_got=$(cap "/tmp/$1.pcap" 0x0010 "$BP" delivered)
	if [ -z "$_req" ] || [ -z "$_sent" ] || [ -z "$_got" ]; then
		_bad="$_bad REQ-routed:${_req:+y} sent:${_sent:+y} got-in-peer:${_got:+y}"
		return 1
	fi
	chk peer-mad "$(capf "$_got" mad)" "$(capf "$_sent" mad)"
	chk peer-lrh "$(capf "$_got" slid) $(capf "$_got" dlid) $(capf "$_got" sl)" \
		"$(capf "$_sent" slid) $(capf "$_sent" dlid) $(capf "$_sent" sl)"
	chk peer-grh "$(capf "$_got" sgid) $(capf "$_got" dgid) $(capf "$_got" hop)" \
		"$(capf "$_sent" sgid) $(capf "$_sent" dgid) $(capf "$_sent" hop)"
	_m=$(capf "$_req" mad)
}

# ---- RC traffic between the kernels (simfab_echo_test) -------------------------------
# The client's run (its modprobe) as KTAP: its kernel log since MARK,
# timestamps removed, in FILE.
ktap_since() { # MARK FILE
	dmesg_since "$1" | sed -n 's/^\[[^]]*\] //p' >"$2"
}
# rc_wire NAME SUBNET-MTU: the largest messages went in packets of the path
# MTU both ways (this guest's capture: a1's side on A, b1's delivery on
# B), none longer.
rc_wire() {
	_b=$(mtu_bytes "$2")
	_to_b=$(grep -c " sn=$B at=$BP .* len=$_b grh=1 .* rc op=.* verdict=to-guest" "/tmp/$1.cap")
	_to_a=$(grep -c " sn=$A at=$AP .* len=$_b grh=1 .* rc op=.* verdict=delivered" "/tmp/$1.cap")
	_long=$(grep ' rc op=' "/tmp/$1.cap" | sed -n 's/.* len=\([0-9]*\) .*/\1/p' | awk -v m="$_b" '$1 > m' | wc -l)
	[ "$_to_b" -gt 0 ] || _bad="$_bad no-$_b-byte-packet-to-b1"
	[ "$_to_a" -gt 0 ] || _bad="$_bad no-$_b-byte-packet-to-a1"
	chk_num longer-than-mtu "$_long" 0
}

# traffic_to_peer NAME PORT MTU: the echo server on b1 in the peer (its
# stock stack), the client on a1 here; then the server's QP as logged.
traffic_to_peer() {
	echo clear >$D/ctl
	peer "modprobe simfab_echo_test role=server gid=$(port_gid $BP) port=$2"
	_m=$(dmesg_mark)
	modprobe simfab_echo_test role=client "gid=$(port_gid $AP)" "dst_gid=$(port_gid $BP)" \
		port="$2" len=65536 && rmmod simfab_echo_test
	ktap_since "$_m" "/tmp/$1.ktap"
	cat $D/capture >"/tmp/$1.cap"
	ktap_relay "$T:$1:" simfab_echo_ "/tmp/$1.ktap" "$T:$1-plan"
	peer "rmmod simfab_echo_test; dmesg | grep 'simfab_echo: server'" >"/tmp/$1.server"
	chk_begin
	rc_wire "$1" "$3"
	chk_end "$1-wire-mtu" "/tmp/$1.cap"
}

# traffic_from_peer NAME PORT MTU: the server on a1 here, the client on b1
# in the peer.
traffic_from_peer() {
	echo clear >$D/ctl
	modprobe simfab_echo_test role=server "gid=$(port_gid $AP)" port="$2"
	peer ". /ibr/lib/guest.sh; m=\$(dmesg_mark)
modprobe simfab_echo_test role=client gid=$(port_gid $BP) dst_gid=$(port_gid $AP) port=$2 len=65536 &&
	rmmod simfab_echo_test
dmesg_since \$m | sed -n 's/^\[[^]]*\] //p'" >"/tmp/$1.ktap"
	cat $D/capture >"/tmp/$1.cap"
	ktap_relay "$T:$1:" simfab_echo_ "/tmp/$1.ktap" "$T:$1-plan"
	dmesg | grep 'simfab_echo: server' >"/tmp/$1.server"
	rmmod simfab_echo_test
	chk_begin
	rc_wire "$1" "$3"
	chk_end "$1-wire-mtu" "/tmp/$1.cap"
}

# ---- mixed:svc: a1 -> b1 with the return record from b2 -----------------------------
B2P=b2/1
[ -w $P/remote_sa ] && echo Y >$P/remote_sa
[ -w $P/remote_sa_required ] && echo N >$P/remote_sa_required
if svc_map_b2 on; then
	connection mx-svc 7601
	chk_begin
	_q=$(rsa_cap /tmp/mx-svc.cap 0x01 $B2P delivered)
	_a=$(rsa_cap /tmp/mx-svc.cap 0x81 $AP delivered)
	if [ -z "$_q" ] || [ -z "$_a" ]; then
		_bad="no ib_remote_sa Get at b2 and answer at a1"
	else
		chk a-status "$(capf "$_a" status)" 0x0000
		chk_num a-slid "$(madn "$(capf "$_a" mad)" 98 2)" "$BLID"
		chk_num a-dlid "$(madn "$(capf "$_a" mad)" 96 2)" "$RB_BLID"
	fi
	! grep -q " class=0x0d " /tmp/mx-svc.pcap || _bad="$_bad a-remote-SA-MAD-reached-the-peer"
	chk_end svc-return-record-from-b2 /tmp/mx-svc.cap

	# The REQ names b1's LID and B's SA's SL (the return record), the
	# local LID permissive (b1 takes the router from the LRH); the stock
	# kernel got it byte for byte.
	chk_begin
	if wire_req mx-svc; then
		chk_num local-lid "$(madn "$_m" 76 2)" 0xffff
		chk_num remote-lid "$(madn "$_m" 78 2)" "$BLID"
		chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_R"
		chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
		chk_num subnet-local $(($(madn "$_m" 118 1) >> 3 & 1)) 0
	fi
	chk_end svc-req-wire /tmp/mx-svc.cap /tmp/mx-svc.pcap

	# a1's QP: the forward record's router and SL, the end-to-end MTU.
	chk_begin
	chk_num dlid "$(out /tmp/mx-svc.out cli-rtr.qp_attr.ah.dlid)" "$RA_ALID"
	chk_num sl "$(out /tmp/mx-svc.out cli-rtr.qp_attr.ah.sl)" "$SL_F"
	chk_num mtu "$(out /tmp/mx-svc.out cli-rtr.qp_attr.path_mtu)" "$MTU_E"
	chk_end svc-active-qp /tmp/mx-svc.out

	# b1's QP, as the stock kernel programs it from that REQ: the router
	# from the LRH (cm_process_routed_req: the permissive Local Port LID
	# is the LRH's SLID), and with it the LRH's SL, the router's map of
	# A's SL, not the SL B's SA gave in the REQ (the overlay's passive side
	# keeps the REQ's: simfab-cma); the end-to-end MTU.
	chk_begin
	chk_num dlid "$(out /tmp/mx-svc.peer conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
	chk_num sl "$(out /tmp/mx-svc.peer conn-rtr.qp_attr.ah.sl)" "$SL_IN_B"
	chk_ne lrh-vs-sa-sl "$SL_IN_B" "$SL_R"
	chk_num mtu "$(out /tmp/mx-svc.peer conn-rtr.qp_attr.path_mtu)" "$MTU_E"
	chk dgid "$(gid_hex "$(out /tmp/mx-svc.peer conn-rtr.qp_attr.ah.grh.dgid)")" "$(port_gidhex $AP)"
	chk_end svc-stock-passive-qp /tmp/mx-svc.peer

	# DREQ from a1, DREP from b1, and nothing left on either side.
	chk_begin
	[ -n "$(cap /tmp/mx-svc.pcap 0x0015 "$BP" delivered)" ] || _bad="$_bad no-DREQ-at-b1"
	[ -n "$(cap /tmp/mx-svc.cap 0x0016 "$AP" delivered)" ] || _bad="$_bad no-DREP-at-a1"
	grep -qxF 'event DISCONNECTED id=cli status=0' /tmp/mx-svc.out || _bad="$_bad a1-not-disconnected"
	chk ids-left "$(ids_left)" "0 0"
	chk_end svc-disconnect /tmp/mx-svc.out /tmp/mx-svc.peer

	# Traffic: 4 KiB and 64 KiB both ways (SEND and its echo, RDMA WRITE
	# and READ), in packets of the end-to-end MTU; b1's QP (stock) on the
	# router's SL as above, which routed.topo's B carries.
	if has_mod simfab_echo_test; then
		traffic_to_peer svc-traffic 7701 "$MTU_E"
		chk_begin
		_l=$(grep 'server established qp ' /tmp/svc-traffic.server | tail -n 1)
		chk_num b-dlid "$(capf "$_l" dlid)" "$RA_BLID"
		chk_num b-sl "$(capf "$_l" sl)" "$SL_IN_B"
		chk_num b-mtu "$(capf "$_l" mtu)" "$MTU_E"
		grep -q 'server conn closed echoed=2$' /tmp/svc-traffic.server || _bad="$_bad server-not-closed-after-2-echoes"
		chk ids-left "$(ids_left)" "0 0"
		chk_end svc-traffic-stock-qp /tmp/svc-traffic.server
	else
		t_fail $T:svc-traffic "simfab_echo_test.ko not in the image"
	fi

	# A LAP toward the stock peer: a1's id takes the APM events and is
	# handed an alternate through RB (the forward record with RB's LID,
	# b1's own SA's record back through RB) once connected. A stock CM
	# takes a LAP for a connection as its new paths before checking
	# anything and never answers (docs/routed-cm.md), so ib_cm sends
	# only its probe (Remote Communication ID 0), which the stock CM
	# drops untouched: at b1 nothing but probes, no APR back, b1's
	# connection unharmed (its DREQ/DREP); the stock kernel counts what
	# it received (cm_rx_msgs/lap).
	ALT="path flags=0x0d $(rec /tmp/mx-svc.out cli.) "
	ALT=$(echo "$ALT" | sed "s/ dlid=[^ ]* / dlid=$RB_ALID /")
	ALT_RET="path flags=0x14 $(rec /tmp/mx-own.out '')"
	echo clear >$D/ctl
	peer "echo clear >$D/ctl"
	plap0=$(peer "cat /sys/class/infiniband/simfab0/ports/1/cm_rx_msgs/lap")
	if b1_listens mx-lap 7604; then
		timeout 90 "$CM" 'timeout 30000' 'id cli ps=ib' "bind gid=$(port_gid $AP)" \
			'set-option apm-events=1' \
			"resolve-addr dst-gid=$(port_gid $BP) dst-port=7604 timeout=5000" \
			'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=8000' 'wait ROUTE_RESOLVED id=cli' \
			'connect qpn=0x111' 'wait CONNECT_RESPONSE id=cli' 'accept id=cli' \
			"$ALT" "$ALT_RET" 'set-alt-path id=cli' 'sleep 3000' \
			'none ALT_PATH_LOADED id=cli timeout=0' \
			'disconnect id=cli' 'wait DISCONNECTED id=cli' >/tmp/mx-lap.out 2>&1
		lrc=$?
		wait_for 20 peer '! pidof simfab-cm'
	else
		lrc=x
	fi
	peer "cat /tmp/mx-lap.out" >/tmp/mx-lap.peer
	peer "cat $D/capture" >/tmp/mx-lap.pcap
	cat $D/capture >/tmp/mx-lap.cap
	plap1=$(peer "cat /sys/class/infiniband/simfab0/ports/1/cm_rx_msgs/lap")
	chk_begin
	chk a1-exit "$lrc" 0
	_laps=$(grep " at=$BP .* class=0x07 .* attr=0x0019 .* verdict=delivered " /tmp/mx-lap.pcap | sed 's/.* mad=//')
	_n=0 _nz=0
	for _h in $_laps; do
		_n=$((_n + 1))
		[ "$(madn "$_h" 28 4)" = 0 ] || _nz=$((_nz + 1))
	done
	[ $_n -ge 1 ] || _bad="$_bad no-probe-at-b1"
	chk_num laps-for-the-connection "$_nz" 0
	chk_num aprs-at-a1 "$(grep -c " at=$AP .* class=0x07 .* attr=0x001a " /tmp/mx-lap.cap)" 0
	chk_num stock-cm-rx-lap $((plap1 - plap0)) "$_n"
	grep -qxF 'conn.event ESTABLISHED id=conn status=0' /tmp/mx-lap.peer || _bad="$_bad b1-not-established"
	grep -q 'event DISCONNECTED id=conn status=0' /tmp/mx-lap.peer || _bad="$_bad b1-not-disconnected"
	[ -n "$(cap /tmp/mx-lap.cap 0x0016 "$AP" delivered)" ] || _bad="$_bad no-DREP-from-b1"
	chk ids-left "$(ids_left)" "0 0"
	chk_end lap-stock-peer-gets-probes-only /tmp/mx-lap.out /tmp/mx-lap.peer /tmp/mx-lap.pcap
	svc_map_b2 off
else
	t_fail $T:svc "could not set up b2 as B's service node (service map, serve)"
fi

# ---- mixed:nosvc: no service anywhere ----------------------------------------------------
# The Get goes to b1 itself, the default service GID: the stock kernel has
# no agent for the class and its ib_mad answers UNSUPPORTED (0x000C,
# docs/remote-sa-protocol.md section 11: final, at once).
echo 1 >"$S/$(topo_host a1 dev)/1/cache_flush" 2>/dev/null
# The administrator states B's MTU in ib_remote_sa's service map (an entry
# without a service: the Get still goes to b1): without a return record
# rdma_cm takes the lower of it and the forward record's, where by
# default it keeps the forward record's, as the stock kernel does.
mount -t configfs configfs /sys/kernel/config 2>/dev/null
MTU_MAP=/sys/kernel/config/ib_remote_sa/services/mtuB
if ! { mkdir $MTU_MAP && topo_subnet "$B" prefix >$MTU_MAP/prefix && mtu_bytes "$MTU_R" >$MTU_MAP/mtu; }; then
	diag "cannot state B's MTU in $MTU_MAP"
fi
connection mx-nosvc 7602
chk_begin
_q=$(rsa_cap /tmp/mx-nosvc.pcap 0x01 $BP delivered)
_a=$(rsa_cap /tmp/mx-nosvc.cap 0x81 $AP delivered)
[ -n "$_q" ] || _bad="$_bad no-Get-at-b1-in-the-peer"
if [ -z "$_a" ]; then
	_bad="$_bad no-answer-at-a1"
else
	chk a-status "$(capf "$_a" status)" 0x000c
fi
chk_end nosvc-stock-answers-unsupported /tmp/mx-nosvc.cap /tmp/mx-nosvc.pcap
MTU_N=$(min "$MTU_F" "$MTU_R")
chk_begin
if wire_req mx-nosvc; then
	chk_num local-lid "$(madn "$_m" 76 2)" 0xffff
	chk_num remote-lid "$(madn "$_m" 78 2)" 0xffff
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_F"
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_N"
fi
chk_end nosvc-req-wire /tmp/mx-nosvc.cap /tmp/mx-nosvc.pcap
chk_begin
chk_num a-dlid "$(out /tmp/mx-nosvc.out cli-rtr.qp_attr.ah.dlid)" "$RA_ALID"
chk_num a-mtu "$(out /tmp/mx-nosvc.out cli-rtr.qp_attr.path_mtu)" "$MTU_N"
chk_num b-dlid "$(out /tmp/mx-nosvc.peer conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
chk_num b-sl "$(out /tmp/mx-nosvc.peer conn-rtr.qp_attr.ah.sl)" "$SL_IN_B"
chk_num b-mtu "$(out /tmp/mx-nosvc.peer conn-rtr.qp_attr.path_mtu)" "$MTU_N"
chk ids-left "$(ids_left)" "0 0"
chk_end nosvc-qps-and-disconnect /tmp/mx-nosvc.out /tmp/mx-nosvc.peer
# Traffic without a return record: B's MTU from the map keeps it on B's
# links (the forward record's MTU, A's, would be lost there).
if has_mod simfab_echo_test; then
	traffic_to_peer nosvc-traffic 7702 "$MTU_N"
else
	t_fail $T:nosvc-traffic "simfab_echo_test.ko not in the image"
fi
rmdir $MTU_MAP 2>/dev/null

# ---- mixed:stock-active: b1 (stock) -> a1 (overlay) ---------------------------------------
echo clear >$D/ctl
peer "echo clear >$D/ctl"
timeout 90 "$CM" 'timeout 30000' 'id srv ps=ib' "bind gid=$(port_gid $AP) port=7603" \
	'listen backlog=4' 'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' \
	'tag conn-rtr' 'qp-attr rtr' 'accept qpn=0x444' 'tag conn' 'wait ESTABLISHED id=conn' \
	'wait DISCONNECTED id=conn' 'disconnect id=conn' >/tmp/mx-sa.out 2>&1 &
srv=$!
sleep 1
peer "timeout 60 $CM 'timeout 30000' 'id cli ps=ib' 'bind gid=$(port_gid $BP)' \
	'resolve-addr dst-gid=$(port_gid $AP) dst-port=7603 timeout=5000' \
	'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=8000' 'wait ROUTE_RESOLVED id=cli' \
	'connect qpn=0x333' 'wait CONNECT_RESPONSE id=cli' 'tag cli-rtr' 'qp-attr rtr' 'accept id=cli' \
	'tag' 'disconnect id=cli' 'wait DISCONNECTED id=cli'" >/tmp/mx-sa.peer 2>&1
prc=$?
wait $srv
src=$?
cat $D/capture >/tmp/mx-sa.cap
if [ $prc -eq 0 ] && [ $src -eq 0 ]; then
	t_pass $T:stock-active-connect
else
	t_fail $T:stock-active-connect "b1 (stock) exit $prc, a1 exit $src"
	diag_file /tmp/mx-sa.peer
	diag_file /tmp/mx-sa.out
fi
# The stock REQ (6.1's cm_format_req, no return record): both LIDs
# permissive, B's SL; it arrives at a1 through RB with RB's map of it.
chk_begin
_req=$(cap /tmp/mx-sa.cap 0x0010 $AP delivered)
if [ -z "$_req" ]; then
	_bad="no REQ at a1"
else
	_m=$(capf "$_req" mad)
	chk_num local-lid "$(madn "$_m" 76 2)" 0xffff
	chk_num remote-lid "$(madn "$_m" 78 2)" 0xffff
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_R"
	chk_num lrh-slid "$(capf "$_req" slid)" "$RB_ALID"
	chk_num lrh-sl "$(capf "$_req" sl)" "$SL_IN_A"
fi
chk_num b-dlid "$(out /tmp/mx-sa.peer cli-rtr.qp_attr.ah.dlid)" "$RB_BLID"
chk_num b-sl "$(out /tmp/mx-sa.peer cli-rtr.qp_attr.ah.sl)" "$SL_R"
chk_num a-dlid "$(out /tmp/mx-sa.out conn-rtr.qp_attr.ah.dlid)" "$RB_ALID"
chk_num a-sl "$(out /tmp/mx-sa.out conn-rtr.qp_attr.ah.sl)" "$SL_IN_A"
chk ids-left "$(ids_left)" "0 0"
chk_end stock-active-req-and-qps /tmp/mx-sa.cap /tmp/mx-sa.out /tmp/mx-sa.peer
# Traffic from the stock client: its forward record is B's SA's (B's MTU).
if has_mod simfab_echo_test; then
	traffic_from_peer stock-active-traffic 7703 "$(min "$MTU_R" "$(prop $AP mtu)")"
	chk_begin
	_l=$(grep 'server established qp ' /tmp/stock-active-traffic.server | tail -n 1)
	chk_num a-dlid "$(capf "$_l" dlid)" "$RB_ALID"
	chk ids-left "$(ids_left)" "0 0"
	chk_end stock-active-traffic-qp /tmp/stock-active-traffic.server
else
	t_fail $T:stock-active-traffic "simfab_echo_test.ko not in the image"
fi

# ---- the link's own counters, and both kernels' logs ----------------------------------
chk_begin
_l=$(grep '^link ' $D/counters)
_pl=$(peer "grep '^link ' $D/counters")
chk_num bad "$(capf "$_l" bad)" 0
chk_num peer-bad "$(capf "$_pl" bad)" 0
[ "$(capf "$_l" tx)" -gt 0 ] && [ "$(capf "$_pl" rx)" -gt 0 ] || _bad="$_bad no-frames: $_l / $_pl"
chk_end link-counters
peer_dmesg peer-dmesg "the peer during the test"
peer "rmmod simfab" >/dev/null 2>&1
rmmod simfab
chk_dmesg $T "$mark"
t_summary
