#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 40 (measured under TCG; tests/vm/run --boots balances by it)
# RDMA_OPTION_IB_PATH path record sets, QUERY_PATH and the capabilities
# file (issue 9, docs/path-records.md) on simfab's routed topology, through
# rdma_ucm with simfab-cm. Expected values come from debugfs
# simfab/topology and from each subnet's own SA (resolve-route).
#
# pathset:3-record-routed  GMP, forward and return records from userspace:
#                          the REQ carries the return record's LIDs and SL
#                          and end-to-end values, b1's QP follows it, no
#                          remote query is made.
# pathset:3-record-outbound-smaller  the same with an outbound record of a
#                          smaller MTU, a slower rate and a longer lifetime
#                          than the others: the REQ's end-to-end values and
#                          both QPs are the data path's (issue 22).
# pathset:classic-single   the single GMP|PRIMARY|BIDIRECTIONAL record: the
#                          REQ as 6.1 sends it.
# pathset:alternate-armed-at-connect  the same with ALTERNATE records
#                          through the other router: the REQ's alternate,
#                          b1's QP armed with it.
# pathset:lap-*            RDMA_OPTION_IB_ALT_PATH (0x1001) on a connected
#                          id: a LAP, loaded on both sides (ALT_PATH_LOADED
#                          0x1000, b1's QP attributes), PATH_MIGRATED
#                          (0x1002) after NOTIFY, a second LAP re-arms,
#                          QUERY_PATH follows (record 0 the primary, 1 the
#                          alternate); RDMA_OPTION_IB_PATH on the connected
#                          id is EINVAL as in 6.1; a peer that does not
#                          take it (APR Unsupported on the wire:
#                          ALT_PATH_ERROR 0x1001 status -EOPNOTSUPP,
#                          neither side has the refused path, NOTIFY has
#                          nothing to migrate to); ids that did not opt in
#                          get no event; a listener that opts in after
#                          rdma_listen() gives its connections the events.
# pathset:librdmacm-builder-routed  an ibacm-like answer through the patched
#                          librdmacm's builder (simfab-cm build-set): its
#                          set is taken, the REQ as with the hand-made one.
# pathset:caps-query       RDMA_USER_CM_QUERY_IBR_CAPS on an IB id: forms,
#                          roles, limits, every capability.
# pathset:sampled          192 blobs on fresh ids in ADDR_RESOLVED: taken or
#                          refused as the query's forms and the rules
#                          say; a refused blob changes nothing.
# pathset:query-path-small-buffer
#
# Skips without simfab.ko, simfab-cm or the routed topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-pathset
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
CAPS=/tmp/sfp-caps.out
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! has_mod simfab || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, simfab-cm or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
! mod_loaded simfab || rmmod simfab
CONF=/etc/modprobe.d/simfab-topology.conf
cp $CONF /tmp/sfp-default.conf
printf 'options simfab topology="%s"\n' "$(cat $TOPOFILE)" >$CONF
modprobe rdma_ucm && modprobe simfab
rc=$?
cp /tmp/sfp-default.conf $CONF
if [ $rc -eq 0 ] && [ "$(cat /sys/module/simfab/parameters/topology)" = "$(cat $TOPOFILE)" ]; then
	t_pass $T:load
else
	t_fail $T:load "modprobe rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi

TOPO=/tmp/sfp.topo
cat $D/topology >$TOPO
cap() {
	grep " at=$3 .* class=0x07 cv=2 method=0x03 .* attr=$2 .* verdict=$4 " "$1" | head -n 1
}

A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PB=$(topo_subnet "$B" prefix)
AP=a1/1 A2P=a2/1 BP=b1/1
BLID=$(topo_port $BP lid)
RA=$(route_via "$A" "$PB")
RA_A=$(rport "$RA" "$A") RA_B=$(rport "$RA" "$B")
RA_BLID=$(topo_port "$RA_B" lid)

# own NAME FROM TO: FROM's own SA's record FROM -> TO (resolve-route).
own() {
	timeout 30 "$CM" 'id x ps=ib' "bind gid=$(port_gid "$2")" \
		"resolve-addr dst-gid=$(port_gid "$3") dst-port=7500 timeout=5000" \
		'wait ADDR_RESOLVED' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED' \
		'query-path' >"/tmp/sfp-$1.out" 2>&1
}
# rdma_cm must not ask ib_remote_sa here, nor lower the MTU of a routed
# record without a return (routed_default_mtu, 4096 keeps it): these are
# the SAs' records, which the caller hands in.
[ ! -w /sys/module/rdma_cm/parameters/remote_sa ] || echo N >/sys/module/rdma_cm/parameters/remote_sa
RDM=/sys/module/rdma_cm/parameters/routed_default_mtu
RDM0=$(cat $RDM 2>/dev/null) || RDM0=
[ -z "$RDM0" ] || echo 4096 >$RDM
own fwd $AP $BP		# A's SA: a1 -> RA's port on A (the forward half)
own ret $BP $AP		# B's SA: b1 -> a router's port on B (the return half)
own loc $AP $A2P	# A's SA: a1 -> a2 (subnet-local)
[ -z "$RDM0" ] || echo "$RDM0" >$RDM
[ ! -w /sys/module/rdma_cm/parameters/remote_sa ] || echo Y >/sys/module/rdma_cm/parameters/remote_sa
FWD=$(rec /tmp/sfp-fwd.out)
# The caller pairs the routers: the return record through RA, the router
# of the forward record (B's SA may name another one; the values of
# RA's port on B are B's, as routed.topo's router ports take their
# subnet's).
RET="$(rec /tmp/sfp-ret.out) dlid=$RA_BLID"
LOC=$(rec /tmp/sfp-loc.out)
SL_F=$(out /tmp/sfp-fwd.out 'path[0].sl') MTU_F=$(out /tmp/sfp-fwd.out 'path[0].mtu')
RATE_F=$(out /tmp/sfp-fwd.out 'path[0].rate')
SL_R=$(out /tmp/sfp-ret.out 'path[0].sl') MTU_R=$(out /tmp/sfp-ret.out 'path[0].mtu')
RATE_R=$(out /tmp/sfp-ret.out 'path[0].rate')
MTU_E=$(min "$MTU_F" "$MTU_R") RATE_E=$(min "$RATE_F" "$RATE_R")
chk_begin
[ -n "$SL_F" ] && [ -n "$SL_R" ] && [ -n "$(out /tmp/sfp-loc.out 'path[0].sl')" ] ||
	_bad="no records from the SAs"
chk_ne asym-mtu "$MTU_F" "$MTU_R"
chk_end records /tmp/sfp-fwd.out /tmp/sfp-ret.out /tmp/sfp-loc.out

# connect NAME PORT PATH-STEPS...: a1 -> b1 with the given path steps in
# place of resolve-route; b1's QP attributes for RTR (conn-rtr.) and
# a1's for RTR and RTS (cli-rtr., cli-rts.) in the output.
connect() {
	_c=$1 _port=$2
	shift 2
	_o=/tmp/sfp-$_c.out
	echo clear >$D/ctl
	timeout 60 "$CM" 'timeout 10000' \
		'id srv ps=ib' "bind gid=$(port_gid $BP) port=$_port" 'listen backlog=4' \
		'id cli ps=ib' "bind gid=$(port_gid $AP)" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=$_port timeout=5000" \
		'wait ADDR_RESOLVED id=cli' "$@" 'set-path' 'wait ROUTE_RESOLVED id=cli' \
		'tag cli' 'query-path' 'connect qpn=0x111' \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
		'tag cli' 'wait CONNECT_RESPONSE id=cli' 'accept id=cli' \
		'tag conn' 'wait ESTABLISHED id=conn' \
		'tag conn-rtr' 'qp-attr rtr' 'tag cli-rtr' 'qp-attr rtr id=cli' \
		'tag cli-rts' 'qp-attr rts id=cli' 'tag' \
		'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' >"$_o" 2>"$_o.err"
	_rc=$?
	cat $D/capture >"/tmp/sfp-$_c.cap"
	return $_rc
}

# ---- a 3-record set: GMP, forward, return ---------------------------------------
# shellcheck disable=SC2086 # the records' key=value words
if connect three 7501 "path flags=0x03 $FWD" "path flags=0x0a $FWD" "path flags=0x12 $RET"; then
	c=/tmp/sfp-three.cap o=/tmp/sfp-three.out
	_req=$(cap $c 0x0010 "$RA_A" routed)
	_m=$(capf "$_req" mad)
	chk_begin
	[ -n "$_req" ] || _bad="no REQ routed at $RA_A"
	chk_num local-lid "$(madn "$_m" 76 2)" "$RA_BLID"
	chk_num remote-lid "$(madn "$_m" 78 2)" "$BLID"
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_R"
	chk_num subnet-local $(($(madn "$_m" 118 1) >> 3 & 1)) 0
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
	chk_num rate $(($(madn "$_m" 115 1) & 0x3f)) "$RATE_E"
	chk_num pas-dlid "$(out $o conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
	chk_num pas-sl "$(out $o conn-rtr.qp_attr.ah.sl)" "$SL_R"
	chk_num pas-mtu "$(out $o conn-rtr.qp_attr.path_mtu)" "$MTU_E"
	chk_num num-paths "$(out $o cli.path.num_paths)" 1
	! grep -qi " class=0x0d " $c || _bad="$_bad remote-query-made"
	chk_end pathset:3-record-routed $o $c
else
	t_fail $T:pathset:3-record-routed "simfab-cm failed: $(tail -n 1 /tmp/sfp-three.out.err)"
	diag_file /tmp/sfp-three.out.err
fi

# ---- a 3-record set whose outbound record is the data path's narrowest part ------
# The data goes forward on the outbound (PRIMARY|OUTBOUND) path, not on the
# GMP record's: an outbound record with an MTU one below the end-to-end
# one, 2.5 Gb/s (IB_RATE_2_5_GBPS, slower than any 4X rate) and a
# lifetime two above the longer half's makes the REQ's MTU, rate and
# Local ACK Timeout (IBA 12.6.5) and both QPs the data path's
# (docs/routed-cm.md "End-to-end values"); with the GMP record's values
# the passive QP would send packets the outbound path cannot carry.
LIFE_F=$(out /tmp/sfp-fwd.out 'path[0].packet_life') LIFE_R=$(out /tmp/sfp-ret.out 'path[0].packet_life')
LIFE_H=$LIFE_F
[ "$LIFE_R" -le "$LIFE_H" ] || LIFE_H=$LIFE_R
MTU_O=$((MTU_E - 1)) RATE_O=2 LIFE_O=$((LIFE_H + 2))
# end to end over outbound + return: max(LIFE_O, LIFE_R) + 1 = LIFE_O + 1
LIFE_OE=$((LIFE_O + 1))
# The Local ACK Timeouts (IBA 12.7.34, cm.c cm_ack_timeout): the REQ's
# (the passive QP's) from the active CA's ACK delay, the active QP's
# from the passive CA's (the REP's TargetACKDelay); lifetime + 1 while
# the lifetime is above the delays (simfab's default 16).
ACK_OE=$(iba_ack_timeout "$(topo_host "${AP%/*}" ack_delay)" "$LIFE_OE")
ACK_OE_ACT=$(iba_ack_timeout "$(topo_host "${BP%/*}" ack_delay)" "$LIFE_OE")
# shellcheck disable=SC2086 # the records' key=value words
if connect outsmall 7509 "path flags=0x03 $FWD" \
	"path flags=0x0a $FWD mtu=$MTU_O rate=$RATE_O packet_life=$LIFE_O" \
	"path flags=0x12 $RET"; then
	c=/tmp/sfp-outsmall.cap o=/tmp/sfp-outsmall.out
	_req=$(cap $c 0x0010 "$RA_A" routed)
	_m=$(capf "$_req" mad)
	chk_begin
	[ -n "$_req" ] || _bad="no REQ routed at $RA_A"
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_O"
	chk_num rate $(($(madn "$_m" 115 1) & 0x3f)) "$RATE_O"
	chk_num local-ack-timeout $(($(madn "$_m" 119 1) >> 3)) "$ACK_OE"
	chk_num local-lid "$(madn "$_m" 76 2)" "$RA_BLID"
	chk_num pas-mtu "$(out $o conn-rtr.qp_attr.path_mtu)" "$MTU_O"
	chk_num pas-rate "$(out $o conn-rtr.qp_attr.ah.static_rate)" "$RATE_O"
	chk_num act-mtu "$(out $o cli-rtr.qp_attr.path_mtu)" "$MTU_O"
	chk_num act-rate "$(out $o cli-rtr.qp_attr.ah.static_rate)" "$RATE_O"
	chk_num act-ack-timeout "$(out $o cli-rts.qp_attr.timeout)" "$ACK_OE_ACT"
	chk_end pathset:3-record-outbound-smaller $o $c
else
	t_fail $T:pathset:3-record-outbound-smaller "simfab-cm failed: $(tail -n 1 /tmp/sfp-outsmall.out.err)"
	diag_file /tmp/sfp-outsmall.out.err
fi

# ---- outbound and inbound records with values the IBA does not define ----------------
# They go into the end-to-end values and the QPs (ucma_path_values_ok()):
# a set with one is refused with EINVAL and nothing set (the id stays
# without a path), the same set with good values is taken after it; the
# GMP record keeps 6.1's rules (an MTU of 0 in it is taken, as 6.1 does).
set --
n=0
for bad in "0x0a mtu=0" "0x0a mtu=6" "0x0a rate=0" "0x12 packet_life=32" \
	"0x12 dlid=0xc001" "0x12 slid=0" "0x0a pkey=0x8000"; do
	case ${bad%% *} in
	0x0a) o="${bad#* }" i='' ;;
	*) o='' i="${bad#* }" ;;
	esac
	# shellcheck disable=SC2086 # the records' key=value words
	set -- "$@" "id v$n ps=ib" "bind gid=$(port_gid $AP)" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=7530 timeout=5000" "wait ADDR_RESOLVED id=v$n" \
		"path flags=0x03 $FWD" "path flags=0x0a $FWD $o" "path flags=0x12 $RET $i" \
		"!set-path id=v$n" "tag v$n" "query-path id=v$n" 'tag' \
		"path flags=0x03 $FWD" "path flags=0x0a $FWD" "path flags=0x12 $RET" \
		"set-path id=v$n" "wait ROUTE_RESOLVED id=v$n" "destroy id=v$n"
	n=$((n + 1))
done
# shellcheck disable=SC2086
set -- "$@" "id g ps=ib" "bind gid=$(port_gid $AP)" \
	"resolve-addr dst-gid=$(port_gid $BP) dst-port=7531 timeout=5000" "wait ADDR_RESOLVED id=g" \
	"path flags=0x03 $FWD mtu=0" "path flags=0x0a $FWD" "path flags=0x12 $RET" \
	"set-path id=g" "wait ROUTE_RESOLVED id=g" "destroy id=g"
timeout 120 "$CM" 'timeout 10000' "$@" >/tmp/sfp-values.out 2>&1
rc=$?
chk_begin
[ $rc -eq 0 ] || _bad="simfab-cm exit $rc: $(grep 'simfab-cm:' /tmp/sfp-values.out | tail -n 1)"
chk_num refused "$(grep -c '^expected-failure SET_OPTION IB_PATH errno=22 ' /tmp/sfp-values.out)" $n
chk_num unchanged "$(grep -c '^v[0-9]*\.path\.num_paths=0$' /tmp/sfp-values.out)" $n
chk_num taken-after "$(grep -c '^destroyed v' /tmp/sfp-values.out)" $n
chk_num gmp-as-6.1 "$(grep -c '^destroyed g' /tmp/sfp-values.out)" 1
chk_end pathset:out-of-range-values-refused /tmp/sfp-values.out

# ---- an alternate through the other router ----------------------------------------
# The primary as above (through RA); the alternate's forward record is
# A's record with the DLID of the other router's port on A (the caller
# picks the router), its return record B's own, which names that router.
RB=$(route_via "$B" "$(topo_subnet "$A" prefix)")
if [ -n "$RB" ] && [ "$RB" != "$RA" ]; then
	RB_ALID=$(topo_port "$(rport "$RB" "$A")" lid) RB_BLID=$(topo_port "$(rport "$RB" "$B")" lid)
	# shellcheck disable=SC2086
	connect alt 7503 "path flags=0x03 $FWD" "path flags=0x0a $FWD" "path flags=0x12 $RET" \
		"path flags=0x0d $FWD dlid=$RB_ALID" "path flags=0x14 $(rec /tmp/sfp-ret.out)"
	rc=$?
	c=/tmp/sfp-alt.cap o=/tmp/sfp-alt.out
	_req=$(cap $c 0x0010 "$RA_A" routed)
	_m=$(capf "$_req" mad)
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	[ -n "$_req" ] || _bad="$_bad no REQ routed at $RA_A"
	# the REQ's alternate (IBA 12.6.5, CM data from MAD byte 24)
	chk_num alt-local-lid "$(madn "$_m" 120 2)" "$RB_BLID"
	chk_num alt-remote-lid "$(madn "$_m" 122 2)" "$BLID"
	chk alt-remote-gid "$(mad "$_m" 140 16)" "$(port_gidhex $BP)"
	chk_num alt-sl $(($(madn "$_m" 162 1) >> 4)) "$SL_R"
	chk_num alt-subnet-local $(($(madn "$_m" 162 1) >> 3 & 1)) 0
	chk_num num-paths "$(out $o cli.path.num_paths)" 2
	chk_num alt-path-dlid "$(out $o 'cli.path[1].dlid')" "$RB_ALID"
	# b1's QP armed with it: back through the other router
	chk_num pas-alt-dlid "$(out $o conn-rtr.qp_attr.alt_ah.dlid)" "$RB_BLID"
	chk_num pas-alt-sl "$(out $o conn-rtr.qp_attr.alt_ah.sl)" "$SL_R"
	chk_num pas-dlid "$(out $o conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
	chk_end pathset:alternate-armed-at-connect $o $c
else
	t_skip $T:pathset:alternate-armed-at-connect "one router only between $A and $B"
fi

# ---- a new alternate on the connected id (LAP), the APM events ----------------------
# lapconn NAME PORT SRV-APM STEPS...: a1 -> b1 with the 3-record primary
# through RA (no alternate), the client id taking the APM events, the
# listener (and so b1's connection) SRV-APM (1 or 0 before rdma_listen(),
# "after": 0 before and 1 after it); once established, STEPS (the LAP:
# RDMA_OPTION_IB_ALT_PATH with ALTERNATE records through RB on the
# client), then the disconnect.
# LAPCONN_LIFE=N: the connection's records with PacketLifeTime N (ib_cm's
# CM MAD timeout, for a lost LAP, is twice the connection's lifetime plus
# the peer's response timeout). LAPCONN_CLI_APM=0: the client id does not
# take the APM events.
lapconn() {
	_c=$1 _port=$2 _sapm=$3 _post='tag' _life=${LAPCONN_LIFE:+packet_life=$LAPCONN_LIFE}
	shift 3
	[ "$_sapm" != after ] || { _sapm=0 _post='set-option apm-events=1 id=srv'; }
	_o=/tmp/sfp-$_c.out
	echo clear >$D/ctl
	# shellcheck disable=SC2086 # the records' key=value words
	timeout 150 "$CM" 'timeout 10000' \
		'id srv ps=ib' "bind gid=$(port_gid $BP) port=$_port" "set-option apm-events=$_sapm" \
		'listen backlog=4' "$_post" \
		'id cli ps=ib' "bind gid=$(port_gid $AP)" "set-option apm-events=${LAPCONN_CLI_APM:-1}" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=$_port timeout=5000" 'wait ADDR_RESOLVED id=cli' \
		"path flags=0x03 $FWD $_life" "path flags=0x0a $FWD $_life" "path flags=0x12 $RET $_life" 'set-path' \
		'wait ROUTE_RESOLVED id=cli' 'connect qpn=0x111' \
		'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
		'wait CONNECT_RESPONSE id=cli' 'accept id=cli' 'wait ESTABLISHED id=conn' \
		"$@" \
		'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' >"$_o" 2>"$_o.err"
	_rc=$?
	cat $D/capture >"/tmp/sfp-$_c.cap"
	return $_rc
}
# lapcnt FILE ATTR AT: CM MADs of that attribute delivered at AT
lapcnt() {
	grep -c " at=$3 .* class=0x07 cv=2 method=0x03 .* attr=$2 .* verdict=delivered " "$1"
}
# aprst FILE: the AP Status of the first APR delivered at a1 for the
# connection (not the answer to ib_cm's probe, whose Local Communication
# ID, MAD bytes 24-27, is 0), or none
aprst() {
	_st=none
	while read -r _h; do
		[ "$(madn "$_h" 24 4)" != 0 ] || continue
		_st=$(madn "$_h" 33 1)
		break
	done <<-EOF
	$(grep " at=$AP .* class=0x07 cv=2 method=0x03 .* attr=0x001a .* verdict=delivered " "$1" | sed 's/.* mad=//')
	EOF
	echo "$_st"
}
# laprcid FILE VERDICT: the Remote Communication IDs (MAD bytes 28-31) of
# the LAPs at b1 with that verdict, in order: 0 is ib_cm's probe, which a
# LAP-capable CM answers with APR Invalid Communication ID
laprcid() {
	grep " at=$BP .* class=0x07 .* attr=0x0019 .* verdict=$2 " "$1" |
		sed 's/.* mad=//' | while read -r _h; do madn "$_h" 28 4; done | tr '\n' ' '
}
if [ -n "$RB" ] && [ "$RB" != "$RA" ]; then
	ALT="path flags=0x0d $FWD dlid=$RB_ALID"
	ALT_RET="path flags=0x14 $(rec /tmp/sfp-ret.out)"
	# Both ids opted in: the LAP through RB loaded on both sides (b1's
	# INIT_QP_ATTR(RTS) gives it), PATH_MIGRATED after NOTIFY, then a
	# second LAP re-arms with the old primary (through RA).
	# shellcheck disable=SC2086
	lapconn lap 7504 1 '!set-option apm-events=2 id=cli' \
		"path flags=0x2b $FWD" '!set-alt-path id=cli' \
		"$ALT" "$ALT_RET" '!set-path id=cli' \
		"$ALT" "$ALT_RET" 'set-alt-path id=cli' \
		'tag cli' 'wait ALT_PATH_LOADED id=cli' 'tag conn' 'wait ALT_PATH_LOADED id=conn' \
		'tag conn-rts' 'qp-attr rts id=conn' 'tag cli-rts' 'qp-attr rts id=cli' \
		'tag cli-q1' 'query-path id=cli' 'tag conn-q1' 'query-path id=conn' 'tag' \
		'notify id=cli' 'wait PATH_MIGRATED id=cli' 'notify id=conn' 'wait PATH_MIGRATED id=conn' \
		'tag cli-q2' 'query-path id=cli' 'tag conn-q2' 'query-path id=conn' 'tag' \
		"path flags=0x0d $FWD" "path flags=0x14 $RET" 'set-alt-path id=cli' \
		'wait ALT_PATH_LOADED id=cli' 'wait ALT_PATH_LOADED id=conn' \
		'tag conn-rearm' 'qp-attr rts id=conn' \
		'tag cli-q3' 'query-path id=cli' 'tag conn-q3' 'query-path id=conn' 'tag'
	rc=$?
	c=/tmp/sfp-lap.cap o=/tmp/sfp-lap.out
	_lap=$(cap $c 0x0019 $BP delivered)
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	# the option refuses values it does not know; a blob without an
	# alternate sends nothing (EINVAL); RDMA_OPTION_IB_PATH on the
	# connected id is 6.1's EINVAL, even with a good alternate, and
	# sends nothing either (the LAP count below)
	chk_num bad-option-refused "$(grep -c '^expected-failure SET_OPTION apm-events errno=22 ' $o)" 1
	chk_num no-alternate-refused "$(grep -c '^expected-failure SET_OPTION IB_ALT_PATH errno=22 ' $o)" 1
	chk_num ib-path-connected-einval "$(grep -c '^expected-failure SET_OPTION IB_PATH errno=22 ' $o)" 1
	# the events' numbers on ucma's wire: ALT_PATH_LOADED 0x1000 (four:
	# two LAPs, both sides), PATH_MIGRATED 0x1002 (both sides)
	chk_num loaded-0x1000 "$(grep -c 'event\.num=0x1000$' $o)" 4
	chk_num migrated-0x1002 "$(grep -c 'event\.num=0x1002$' $o)" 2
	# the LAP (IBA 12.6.12, CM data from MAD byte 24): RB's port on B,
	# b1, B's SL, SubnetLocal 0; at b1 the probe (b1 not yet known to
	# take LAPs), then two LAPs; three APRs at a1, the connection's
	# with status 0
	if [ -n "$_lap" ]; then
		_m=$(capf "$_lap" mad)
		chk_num lap-local-lid "$(madn "$_m" 44 2)" "$RB_BLID"
		chk_num lap-remote-lid "$(madn "$_m" 46 2)" "$BLID"
		chk_num lap-sl $(($(madn "$_m" 86 1) >> 4)) "$SL_R"
		chk_num lap-subnet-local $(($(madn "$_m" 86 1) >> 3 & 1)) 0
	else
		_bad="$_bad no LAP at $BP"
	fi
	chk_num laps "$(lapcnt $c 0x0019 $BP)" 3
	chk_num aprs "$(lapcnt $c 0x001a $AP)" 3
	# shellcheck disable=SC2046 # the IDs, one word each
	set -- $(laprcid $c delivered)
	chk_num probe-first "${1:-x}" 0
	[ "${2:-0}" != 0 ] && [ "${3:-0}" != 0 ] || _bad="$_bad LAPs after the probe not the connection's"
	chk apr-status "$(aprst $c)" 0
	# b1's QP gets the alternate back through RB, re-armed; then RA's
	chk_num pas-mask "$(out $o conn-rts.qp_attr.mask)" 0x44000
	chk_num pas-alt-dlid "$(out $o conn-rts.qp_attr.alt_ah.dlid)" "$RB_BLID"
	chk_num pas-alt-sl "$(out $o conn-rts.qp_attr.alt_ah.sl)" "$SL_R"
	chk_num pas-mig-rearm "$(out $o conn-rts.qp_attr.path_mig_state)" 1
	chk_num act-alt-dlid "$(out $o cli-rts.qp_attr.alt_ah.dlid)" "$RB_ALID"
	chk_num pas-rearm-alt-dlid "$(out $o conn-rearm.qp_attr.alt_ah.dlid)" "$RA_BLID"
	chk_end pathset:lap-loaded-on-connected-id $o $c
	# QUERY_PATH follows the connection: record 0 the primary, record 1
	# the alternate; an accepted LAP is record 1 at both ends, a
	# migration exchanges them, the re-arming LAP is record 1 again.
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	_fd=$(out /tmp/sfp-fwd.out 'path[0].dlid')
	qp() { # TAG REC: QUERY_PATH's record REC's DLID at TAG
		out $o "$1.path[$2].dlid"
	}
	chk_num lap-act-records "$(out $o cli-q1.path.num_paths)" 2
	chk_num lap-act-pri "$(qp cli-q1 0)" "$_fd"
	chk_num lap-act-alt "$(qp cli-q1 1)" "$RB_ALID"
	chk_num lap-pas-records "$(out $o conn-q1.path.num_paths)" 2
	chk_num lap-pas-pri "$(qp conn-q1 0)" "$RA_BLID"
	chk_num lap-pas-alt "$(qp conn-q1 1)" "$RB_BLID"
	chk_num migrated-act-pri "$(qp cli-q2 0)" "$RB_ALID"
	chk_num migrated-act-alt "$(qp cli-q2 1)" "$_fd"
	chk_num migrated-pas-pri "$(qp conn-q2 0)" "$RB_BLID"
	chk_num migrated-pas-alt "$(qp conn-q2 1)" "$RA_BLID"
	chk_num rearm-act-pri "$(qp cli-q3 0)" "$RB_ALID"
	chk_num rearm-act-alt "$(qp cli-q3 1)" "$_fd"
	chk_num rearm-pas-pri "$(qp conn-q3 0)" "$RB_BLID"
	chk_num rearm-pas-alt "$(qp conn-q3 1)" "$RA_BLID"
	chk_end pathset:lap-query-path-follows $o $c
	# b1 takes no LAP for a connection that did not opt in (its QP is
	# userspace's): APR Unsupported (2) on the wire, ALT_PATH_ERROR
	# (0x1001) with -EOPNOTSUPP at a1; b1's id gets no event. The refused path is nobody's alternate: neither
	# side's INIT_QP_ATTR(RTS) has one to load (mask 0), and a NOTIFY
	# has nothing to migrate to (EINVAL, no PATH_MIGRATED, the primary
	# kept: b1's RTR attributes still name RA).
	# shellcheck disable=SC2086
	lapconn lap-unsupported 7505 0 "$ALT" "$ALT_RET" 'set-alt-path id=cli' \
		'wait ALT_PATH_ERROR id=cli status=-95' 'none ALT_PATH_LOADED id=conn timeout=2000' \
		'tag conn-rts' 'qp-attr rts id=conn' 'tag cli-rts' 'qp-attr rts id=cli' 'tag' \
		'!notify id=conn' 'none PATH_MIGRATED id=conn timeout=2000' 'none ALT_PATH_ERROR id=conn timeout=0' \
		'tag conn-rtr' 'qp-attr rtr id=conn' 'tag'
	rc=$?
	c=/tmp/sfp-lap-unsupported.cap o=/tmp/sfp-lap-unsupported.out
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	chk apr-status "$(aprst $c)" 2
	chk_num error-0x1001 "$(grep -c 'event\.num=0x1001$' $o)" 1
	chk_num pas-no-alt-mask "$(out $o conn-rts.qp_attr.mask)" 0
	chk_num act-no-alt-mask "$(out $o cli-rts.qp_attr.mask)" 0
	chk_num notify-refused "$(grep -c '^expected-failure NOTIFY PATH_MIG errno=22 ' $o)" 1
	chk_num pas-dlid-kept "$(out $o conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
	chk_end pathset:lap-rejected-error-event $o $c
	# a1's id without the APM events: its QP is userspace's, which takes
	# an alternate only on ALT_PATH_LOADED, an APM event it would never
	# get; RDMA_OPTION_IB_ALT_PATH is refused (EINVAL) and no LAP goes
	# (before: the LAP went, b1 loaded the alternate and a1's ib_cm took
	# it, while a1's QP never had it).
	# shellcheck disable=SC2086
	LAPCONN_CLI_APM=0 lapconn lap-no-events 7518 1 "$ALT" "$ALT_RET" '!set-alt-path id=cli' \
		'none ALT_PATH_LOADED id=conn timeout=1000'
	rc=$?
	c=/tmp/sfp-lap-no-events.cap o=/tmp/sfp-lap-no-events.out
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	chk_num refused "$(grep -c '^expected-failure SET_OPTION IB_ALT_PATH errno=22 ' $o)" 1
	chk_num laps-at-b1 "$(lapcnt $c 0x0019 $BP)" 0
	chk_end pathset:lap-refused-without-events $o $c
	# The first try lost on the wire: it is the probe (b1 not yet known
	# to take LAPs), sent again after the CM timeout, answered; then the
	# LAP goes and is loaded on both sides. One lost MAD disables nothing.
	# Lifetime 15 on the connection's records: a timeout of about 4.8 s
	# instead of 17.5 s under TCG (what is checked is that the probe
	# goes again, not when).
	# shellcheck disable=SC2086
	LAPCONN_LIFE=15 lapconn lap-silent 7506 1 "ctl cmd=drop+class=0x07+to=$BP+count=1" "$ALT" "$ALT_RET" 'set-alt-path id=cli' \
		'wait ALT_PATH_LOADED id=cli timeout=120000' 'wait ALT_PATH_LOADED id=conn'
	rc=$?
	c=/tmp/sfp-lap-silent.cap o=/tmp/sfp-lap-silent.out
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	chk "probe-dropped" "$(laprcid $c drop-inject)" "0 "
	# shellcheck disable=SC2046 # the IDs, one word each
	set -- $(laprcid $c delivered)
	chk_num probe-then-lap "$#" 2
	chk_num probe-delivered-first "${1:-x}" 0
	[ "${2:-0}" != 0 ] || _bad="$_bad the LAP after the probe is not the connection's"
	chk apr-status "$(aprst $c)" 0
	chk_end pathset:lap-lost-retried-loaded $o $c
	# The listener opts in after rdma_listen(): the connection request
	# that arrives later takes the listener's setting then (issue 23), so
	# b1's connection takes the LAP and gets ALT_PATH_LOADED (a copy
	# made at rdma_listen() would refuse it: APR Unsupported).
	# shellcheck disable=SC2086
	lapconn lap-listener-after 7507 after "$ALT" "$ALT_RET" 'set-alt-path id=cli' \
		'wait ALT_PATH_LOADED id=cli' 'wait ALT_PATH_LOADED id=conn'
	rc=$?
	c=/tmp/sfp-lap-listener-after.cap o=/tmp/sfp-lap-listener-after.out
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	chk apr-status "$(aprst $c)" 0
	chk_num loaded-both "$(grep -c 'event\.num=0x1000$' $o)" 2
	chk_end pathset:lap-listener-opts-in-after-listen $o $c
else
	t_skip $T:pathset:lap "one router only between $A and $B"
fi

# ---- the patched librdmacm's builder ---------------------------------------------
# The records as an ibacm answer would tag them (the classic record for the
# routed forward path, B's return record, an alternate through the other
# router with its own return record) go through the library's own
# path_set.c (build-set) for this kernel's capabilities file: the set it
# builds (GMP, forward and return records, the alternate, the classic
# record last) is taken, the REQ carries the return record's LIDs and SL
# and the alternate, as the hand-made sets above.
if [ -n "$RB" ] && [ "$RB" != "$RA" ]; then
	# shellcheck disable=SC2086
	connect lib 7508 "path flags=0x2b $FWD" "path flags=0x12 $RET" \
		"path flags=0x0d $FWD dlid=$RB_ALID" "path flags=0x14 $(rec /tmp/sfp-ret.out)" \
		'build-set from=pending'
	rc=$?
	c=/tmp/sfp-lib.cap o=/tmp/sfp-lib.out
	_req=$(cap $c 0x0010 "$RA_A" routed)
	_m=$(capf "$_req" mad)
	chk_begin
	[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $o.err)"
	[ -n "$_req" ] || _bad="$_bad no REQ routed at $RA_A"
	chk_num set-records "$(out $o build_set.num)" 6
	chk set-forms "$(for i in 0 1 2 3 4 5; do out $o "build_set[$i].flags"; done | paste -sd' ')" \
		"0x3 0xa 0x12 0xd 0x14 0x2b"
	chk_num local-lid "$(madn "$_m" 76 2)" "$RA_BLID"
	chk_num remote-lid "$(madn "$_m" 78 2)" "$BLID"
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_R"
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
	chk_num alt-local-lid "$(madn "$_m" 120 2)" "$RB_BLID"
	chk_num alt-remote-lid "$(madn "$_m" 122 2)" "$BLID"
	chk_num num-paths "$(out $o cli.path.num_paths)" 2
	chk_num pas-dlid "$(out $o conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
	chk_num pas-alt-dlid "$(out $o conn-rtr.qp_attr.alt_ah.dlid)" "$RB_BLID"
	chk_end pathset:librdmacm-builder-routed $o $c
else
	t_skip $T:pathset:librdmacm-builder-routed "one router only between $A and $B"
fi

# ---- the single classic record, as 6.1 takes it --------------------------------
# shellcheck disable=SC2086
if connect classic 7502 "path flags=0x2b $FWD"; then
	_req=$(cap /tmp/sfp-classic.cap 0x0010 "$RA_A" routed)
	_m=$(capf "$_req" mad)
	chk_begin
	[ -n "$_req" ] || _bad="no REQ routed at $RA_A"
	chk_num local-lid "$(madn "$_m" 76 2)" 0xffff
	chk_num remote-lid "$(madn "$_m" 78 2)" 0xffff
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_F"
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_F"
	chk_end pathset:classic-single /tmp/sfp-classic.out /tmp/sfp-classic.cap
else
	t_fail $T:pathset:classic-single "simfab-cm failed: $(tail -n 1 /tmp/sfp-classic.out.err)"
fi

# ---- the capabilities: RDMA_USER_CM_QUERY_IBR_CAPS ----------------------------------
# On an id bound to a1 (IB): the parser's twelve forms with their roles
# (GMP 1, forward 2, return 4, return of a reversed record 8), 16 records
# of 72 bytes, and every capability (path sets, alternate at connect, LAP,
# APM events, remote SA: 0x1f); librdmacm's path_set.c takes the answer.
# The sampled blobs below are judged from these forms.
timeout 60 "$CM" 'id q ps=ib' "bind gid=$(port_gid $AP)" 'query-caps' >$CAPS 2>$CAPS.err
rc=$?
# caps_roles FLAGS: the roles the query gives the form, or nothing
caps_roles() {
	sed -n "s/^caps\.form\[[0-9]*\]=$(printf '0x%02x' "$1") roles=//p" $CAPS
}
chk_begin
[ $rc -eq 0 ] || _bad="simfab-cm: $(tail -n 1 $CAPS.err)"
chk version "$(out $CAPS caps.version)/$(out $CAPS caps.length)" 1/152
chk forms "$(sed -n 's/^caps\.form\[[0-9]*\]=\(0x[0-9a-f]*\) .*/\1/p' $CAPS | sort | tr '\n' ' ')" \
	"0x03 0x05 0x0a 0x0b 0x0c 0x0d 0x12 0x14 0x2a 0x2b 0x2c 0x2d "
chk_num max-records "$(out $CAPS caps.max_records)" 16
chk_num max-bytes "$(out $CAPS caps.max_bytes)" 1152
chk classic-first "$(out $CAPS 'caps.form[0]')" "0x2b roles=0xb"
chk return "$(caps_roles 0x12)" 0x4
chk alt-bidir "$(caps_roles 0x2d)" 0xb
chk_num caps "$(out $CAPS caps.caps)" 0x1f
chk lib "$(out $CAPS caps.lib.present)/$(out $CAPS caps.lib.flags)/$(out $CAPS caps.lib.num_forms)" 1/0x1f/12
chk_end pathset:caps-query $CAPS

# ---- sampled blobs on fresh ids ------------------------------------------------------
# expect FLAGS LOCAL [SECOND]: 0 if the kernel must take the blob, from the
# query's forms and the rules: a blob of one record is taken when its
# form is a primary one giving gmp and forward, and a return unless the
# path is routed (a reversed return counts only on one subnet); with a
# routed PRIMARY|INBOUND record after it, gmp and forward suffice.
expect() {
	_r=$(caps_roles "$1")
	[ -n "$_r" ] || return 1
	[ $(($1 & 6)) -eq 2 ] || return 1
	[ $((_r & 3)) -eq 3 ] || return 1
	[ -z "${3:-}" ] || return 0
	[ "$2" = 0 ] && return 0		# routed: no return needed
	[ $((_r & 12)) -ne 0 ]
}
set --
n=0
for local in 1 0; do
	for second in "" 0x12; do
		[ -z "$second" ] || [ "$local" = 0 ] || continue
		f=0
		while [ $f -lt 64 ]; do
			if [ "$local" = 1 ]; then r=$LOC; else r=$FWD; fi
			set -- "$@" "id s$n ps=ib" "bind gid=$(port_gid $AP)" \
				"resolve-addr dst-gid=$(port_gid $BP) dst-port=7510 timeout=5000" \
				"wait ADDR_RESOLVED id=s$n" "path flags=$f $r"
			[ -z "$second" ] || set -- "$@" "path flags=$second $RET"
			if expect $f $local $second; then
				set -- "$@" "set-path id=s$n" "wait ROUTE_RESOLVED id=s$n"
			else
				# refused, and nothing changed: still ADDR_RESOLVED
				# with no path; the classic record is taken after it
				set -- "$@" "!set-path id=s$n" "tag s$n" "query-path id=s$n" 'tag' \
					"path flags=0x2b $LOC" "set-path id=s$n" "wait ROUTE_RESOLVED id=s$n"
			fi
			set -- "$@" "destroy id=s$n"
			n=$((n + 1))
			f=$((f + 1))
		done
	done
done
timeout 300 "$CM" 'timeout 10000' "$@" >/tmp/sfp-sampled.out 2>&1
rc=$?
chk_begin
[ $rc -eq 0 ] || _bad="simfab-cm exit $rc: $(grep 'simfab-cm:' /tmp/sfp-sampled.out | tail -n 1)"
chk refused-unchanged "$(grep -c '^s[0-9]*\.path\.num_paths=0$' /tmp/sfp-sampled.out)" \
	"$(grep -c '^expected-failure' /tmp/sfp-sampled.out)"
chk cases "$(grep -c '^destroyed ' /tmp/sfp-sampled.out)" $n
diag "sampled: $n blobs, $(grep -c '^expected-failure' /tmp/sfp-sampled.out) refused"
chk_end pathset:sampled /tmp/sfp-sampled.out

# ---- QUERY_PATH with a buffer smaller than the route -----------------------------------
timeout 30 "$CM" 'id x ps=ib' "bind gid=$(port_gid $AP)" \
	"resolve-addr dst-gid=$(port_gid $A2P) dst-port=7520 timeout=5000" \
	'wait ADDR_RESOLVED' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED' \
	'tag none' 'query-path max=0' 'tag one' 'query-path max=1' >/tmp/sfp-qp.out 2>&1
chk_begin
chk none "$(out /tmp/sfp-qp.out none.path.num_paths)" 0
chk one "$(out /tmp/sfp-qp.out one.path.num_paths)" 1
chk_end pathset:query-path-small-buffer /tmp/sfp-qp.out

rmmod simfab
chk_begin
dmesg_since "$mark" >/tmp/sfp-dmesg.txt
! grep -E "$DMESG_BAD" /tmp/sfp-dmesg.txt | grep -qv 'module verification failed' || _bad="kernel trouble"
chk_end kernel-log /tmp/sfp-dmesg.txt
t_summary
