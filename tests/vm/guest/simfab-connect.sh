#!/bin/sh
# shellcheck shell=sh
# simfab (tests/simfab): AF_IB rdma_cm connections between simulated hosts,
# RDMA_PS_IB, RC, without QPs (qp_num only in the REQ/REP), driven by one
# simfab-cm process playing both sides. For each pair: the active side
# bound to its source GID resolves the passive's GID (a PathRecord Get to
# the SA, seen in the capture), REQ -> REP -> RTU, ESTABLISHED on the
# passive side, CONNECT_RESPONSE + accept on the active side; both sides'
# QP attributes and QUERY_PATH carry the LIDs, SL, MTU and rate the
# topology implies (derived here from debugfs simfab/topology with the SA's
# rules in tests/simfab/README.md), and the captured CM MADs (class 0x07)
# carry the expected fields. Pairs: h1 -> h3 (h3's SL/MTU/rate win), the
# dual-ported h2 on its second port as the active side and as the passive
# side, and h1 -> h2 port 2 over a path set at LMC offset 1 (path bits in
# the LRHs, the receive completions and the QP attributes). Last, simfab is unloaded while a connection attempt has MADs
# outstanding and rdma_cm ids on its devices. Skips without simfab.ko or
# simfab-cm in the image.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-connect
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab

if ! has_mod simfab; then
	t_skip $T "simfab.ko not in the image (run tests/simfab/build)"
	t_summary
	exit 0
fi
if [ ! -x "$CM" ]; then
	t_skip $T "simfab-cm not in the image (make simfab)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
start=$(cut -d' ' -f1 /proc/uptime)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if modprobe rdma_ucm && modprobe simfab; then
	t_pass $T:load
else
	t_fail $T:load "modprobe rdma_ucm simfab failed"
	t_summary
	exit 0
fi
TOPO=/tmp/sfc.topo
cat $D/topology >$TOPO

# ---- the topology ---------------------------------------------------------
# topo_port H/P KEY, topo_host H KEY: a value of debugfs simfab/topology.
topo_port() {
	sed -n "s|^port $1 .* $2=\([^ ]*\).*|\1|p" $TOPO
}
topo_host() {
	sed -n "s|^host $1 .* $2=\([^ ]*\).*|\1|p" $TOPO
}
LMC=$(sed -n 's/^subnet .* lmc=\([0-9]*\).*/\1/p' $TOPO)
SM_LID=$(sed -n 's/^subnet .* sm_lid=\([0-9]*\).*/\1/p' $TOPO)
MASK=$(((1 << ${LMC:-0}) - 1))

# ---- one connection --------------------------------------------------------
# connect_pair NAME ACTIVE-H/P PASSIVE-H/P PORT ACTIVE-QPN PASSIVE-QPN [OFFSET]
# With OFFSET the route is not asked of the SA but set (RDMA_OPTION_IB_PATH)
# to the LIDs at that LMC offset at both ends, with the SA's other values.
connect_pair() {
	_c=$1 _a=$2 _p=$3 _port=$4 _qa=$5 _qp=$6 _off=${7:-}
	_o=/tmp/sfc-$_c.out _cap=/tmp/sfc-$_c.cap
	_agid=$(port_gid "$_a") _pgid=$(port_gid "$_p")
	_alid=$(topo_port "$_a" lid) _plid=$(topo_port "$_p" lid)
	_ah=${_a%/*} _ph=${_p%/*}
	# The SA's rules (tests/simfab/README.md): SL and PacketLifeTime the
	# larger of the two hosts', MTU and rate the smaller (rate enums grow
	# with the rate for the values simfab takes).
	_sl=$(max "$(topo_host "$_ah" sl)" "$(topo_host "$_ph" sl)")
	_mtu=$(min "$(topo_host "$_ah" mtu)" "$(topo_host "$_ph" mtu)")
	_rate=$(min "$(topo_host "$_ah" rate)" "$(topo_host "$_ph" rate)")
	_life=$(max "$(topo_host "$_ah" life)" "$(topo_host "$_ph" life)")
	_sid=$((0x13f0000 | _port))
	if [ -n "$_off" ]; then
		set -- "path dgid=$_pgid sgid=$_agid dlid=$((_plid + _off)) slid=$((_alid + _off)) pkey=0xffff sl=$_sl mtu_selector=2 mtu=$_mtu rate_selector=2 rate=$_rate packet_life_selector=2 packet_life=$_life reversible=1 numb_path=1" \
			'set-path'
	else
		set -- 'resolve-route timeout=5000'
	fi

	echo clear >$D/ctl
	if ! timeout 60 "$CM" 'timeout 10000' \
		'id srv ps=ib' "bind gid=$_pgid port=$_port" 'listen backlog=4' \
		'id cli ps=ib' "bind gid=$_agid" \
		"resolve-addr dst-gid=$_pgid dst-port=$_port timeout=5000" \
		'wait ADDR_RESOLVED id=cli' \
		"$@" 'wait ROUTE_RESOLVED id=cli' \
		'tag cli' 'query-path' 'query-addr' "connect qpn=$_qa" \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' \
		"accept qpn=$_qp" \
		'tag cli' 'wait CONNECT_RESPONSE id=cli' \
		'tag cli-rtr' 'qp-attr rtr' 'accept id=cli' \
		'tag conn' 'wait ESTABLISHED id=conn' \
		'tag conn-rtr' 'qp-attr rtr' 'tag conn' 'query-path' 'query-addr' \
		'tag' 'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' \
		>"$_o" 2>"$_o.err"; then
		t_fail "$T:$_c-connect" "simfab-cm failed: $(tail -n 1 "$_o.err")"
		diag_file "$_o.err"
		cat $D/capture >"$_cap"
		diag_file "$_cap"
		return
	fi
	cat $D/capture >"$_cap"
	[ -z "${SIMFAB_DEBUG:-}" ] || { diag_file "$_o"; diag_file "$_cap"; }

	# Events: the peer's qp_num arrives in the REQ and the REP.
	chk_begin
	chk req-qpn "$(out "$_o" srv.event.qp_num)" "$(printf '0x%06x' "$_qa")"
	chk rep-qpn "$(out "$_o" cli.event.qp_num)" "$(printf '0x%06x' "$_qp")"
	grep -qxF 'conn.event ESTABLISHED id=conn status=0' "$_o" ||
		_bad="$_bad no-ESTABLISHED"
	grep -qxF 'cli.event CONNECT_RESPONSE id=cli status=0' "$_o" ||
		_bad="$_bad no-CONNECT_RESPONSE"
	chk_end "$_c-connect" "$_o"

	# The active side's path: its port to the passive's, the SA's
	# SL/MTU/rate/life; LIDs within each port's LMC range.
	_dlid=$(($(out "$_o" 'cli.path[0].dlid'))) _slid=$(($(out "$_o" 'cli.path[0].slid')))
	chk_begin
	chk_num num-paths "$(out "$_o" cli.path.num_paths)" 1
	chk sgid "$(gid_hex "$(out "$_o" 'cli.path[0].sgid')")" "$(port_gidhex "$_a")"
	chk dgid "$(gid_hex "$(out "$_o" 'cli.path[0].dgid')")" "$(port_gidhex "$_p")"
	chk_num dlid-base $((_dlid & ~MASK)) "$_plid"
	chk_num slid-base $((_slid & ~MASK)) "$_alid"
	if [ -n "$_off" ]; then
		chk_num dlid "$_dlid" $((_plid + _off))
		chk_num slid "$_slid" $((_alid + _off))
	fi
	chk_num sl "$(out "$_o" 'cli.path[0].sl')" "$_sl"
	chk_num mtu "$(out "$_o" 'cli.path[0].mtu')" "$_mtu"
	chk_num rate "$(out "$_o" 'cli.path[0].rate')" "$_rate"
	chk_num life "$(out "$_o" 'cli.path[0].packet_life')" "$_life"
	chk_num hop-limit "$(out "$_o" 'cli.path[0].hop_limit')" 0
	chk_num port "$(out "$_o" cli.addr.port_num)" "${_a#*/}"
	chk_end "$_c-path-active" "$_o"

	# The passive side's path is built from the REQ: the same path seen
	# from the other end.
	chk_begin
	chk_num dlid "$(out "$_o" 'conn.path[0].dlid')" "$_slid"
	chk_num slid "$(out "$_o" 'conn.path[0].slid')" "$_dlid"
	chk sgid "$(gid_hex "$(out "$_o" 'conn.path[0].sgid')")" "$(port_gidhex "$_p")"
	chk dgid "$(gid_hex "$(out "$_o" 'conn.path[0].dgid')")" "$(port_gidhex "$_a")"
	chk_num sl "$(out "$_o" 'conn.path[0].sl')" "$_sl"
	chk_num mtu "$(out "$_o" 'conn.path[0].mtu')" "$_mtu"
	chk_num rate "$(out "$_o" 'conn.path[0].rate')" "$_rate"
	chk_num port "$(out "$_o" conn.addr.port_num)" "${_p#*/}"
	chk_end "$_c-path-passive" "$_o"

	# QP attributes for RTR: the peer's LID and QPN, our own LMC path
	# bits, the path's SL, MTU and rate, the port the path leaves from,
	# no GRH on the subnet.
	chk_begin
	chk_num dest-qpn "$(out "$_o" cli-rtr.qp_attr.dest_qp_num)" "$_qp"
	chk_num dlid "$(out "$_o" cli-rtr.qp_attr.ah.dlid)" "$_dlid"
	chk_num path-bits "$(out "$_o" cli-rtr.qp_attr.ah.src_path_bits)" $((_slid & MASK))
	chk_num sl "$(out "$_o" cli-rtr.qp_attr.ah.sl)" "$_sl"
	chk_num mtu "$(out "$_o" cli-rtr.qp_attr.path_mtu)" "$_mtu"
	chk_num rate "$(out "$_o" cli-rtr.qp_attr.ah.static_rate)" "$_rate"
	chk_num port "$(out "$_o" cli-rtr.qp_attr.ah.port_num)" "${_a#*/}"
	chk_num global "$(out "$_o" cli-rtr.qp_attr.ah.is_global)" 0
	chk_end "$_c-qp-attr-active" "$_o"
	chk_begin
	chk_num dest-qpn "$(out "$_o" conn-rtr.qp_attr.dest_qp_num)" "$_qa"
	chk_num dlid "$(out "$_o" conn-rtr.qp_attr.ah.dlid)" "$_slid"
	chk_num path-bits "$(out "$_o" conn-rtr.qp_attr.ah.src_path_bits)" $((_dlid & MASK))
	chk_num sl "$(out "$_o" conn-rtr.qp_attr.ah.sl)" "$_sl"
	chk_num mtu "$(out "$_o" conn-rtr.qp_attr.path_mtu)" "$_mtu"
	chk_num rate "$(out "$_o" conn-rtr.qp_attr.ah.static_rate)" "$_rate"
	chk_num port "$(out "$_o" conn-rtr.qp_attr.ah.port_num)" "${_p#*/}"
	chk_num global "$(out "$_o" conn-rtr.qp_attr.ah.is_global)" 0
	chk_end "$_c-qp-attr-passive" "$_o"

	# The SA saw a PathRecord Get from the active port and answered it;
	# the answer's record (MAD byte 56 on, IBA 15.2.5.16) is what
	# QUERY_PATH reports. (A path set by hand asks no SA.)
	[ -n "$_off" ] || sa_check
	cm_check
}

# sa_check: connect_pair's SA part (it sets the variables used here).
sa_check() {
	_q=$(grep " slid=$_slid dlid=$SM_LID .* class=0x03 .* method=0x01 .* attr=0x0035 .* verdict=sa " "$_cap" | head -n 1)
	_r=$(grep " dlid=$_slid .* class=0x03 .* method=0x81 status=0x0000 .* attr=0x0035 .* verdict=delivered " "$_cap" | head -n 1)
	chk_begin
	if [ -z "$_q" ] || [ -z "$_r" ]; then
		_bad="no PathRecord Get from LID $_slid and GetResp to it"
	else
		_qm=$(capf "$_q" mad) _rm=$(capf "$_r" mad)
		chk tid "$(capf "$_r" tid)" "$(capf "$_q" tid)"
		chk req-dgid "$(mad "$_qm" 64 16)" "$(port_gidhex "$_p")"
		chk req-sgid "$(mad "$_qm" 80 16)" "$(port_gidhex "$_a")"
		chk dgid "$(mad "$_rm" 64 16)" "$(gid_hex "$(out "$_o" 'cli.path[0].dgid')")"
		chk sgid "$(mad "$_rm" 80 16)" "$(gid_hex "$(out "$_o" 'cli.path[0].sgid')")"
		chk_num dlid "$(madn "$_rm" 96 2)" "$_dlid"
		chk_num slid "$(madn "$_rm" 98 2)" "$_slid"
		chk_num flow $(($(madn "$_rm" 100 4) >> 8 & 0xfffff)) "$(out "$_o" 'cli.path[0].flow_label')"
		chk_num hop $(($(madn "$_rm" 103 1))) "$(out "$_o" 'cli.path[0].hop_limit')"
		chk_num tclass "$(madn "$_rm" 104 1)" "$(out "$_o" 'cli.path[0].tclass')"
		chk_num reversible $(($(madn "$_rm" 105 1) >> 7)) "$(out "$_o" 'cli.path[0].reversible')"
		chk_num pkey "$(madn "$_rm" 106 2)" "$(out "$_o" 'cli.path[0].pkey')"
		chk_num sl $(($(madn "$_rm" 108 2) & 0xf)) "$(out "$_o" 'cli.path[0].sl')"
		chk_num mtu $(($(madn "$_rm" 110 1) & 0x3f)) "$(out "$_o" 'cli.path[0].mtu')"
		chk_num rate $(($(madn "$_rm" 111 1) & 0x3f)) "$(out "$_o" 'cli.path[0].rate')"
		chk_num life $(($(madn "$_rm" 112 1) & 0x3f)) "$(out "$_o" 'cli.path[0].packet_life')"
	fi
	chk_end "$_c-sa-path" "$_cap"
}

# cm_check: connect_pair's CM MAD part.
cm_check() {

	# CM MADs (class 0x07, Send): REQ (0x0010), REP (0x0013), RTU
	# (0x0014), in that order, between the two ports' LIDs on the path's
	# SL, QP1 to QP1 with the GSI Q_Key, all delivered.
	_cm() { # ATTR SLID DLID: the first such CM MAD's line number:line
		grep -n " slid=$2 dlid=$3 sl=$_sl sqp=1 dqp=1 qkey=0x80010000 .* class=0x07 cv=2 method=0x03 .* attr=$1 .* verdict=delivered " "$_cap" | head -n 1
	}
	_req=$(_cm 0x0010 "$_slid" "$_dlid")
	_rep=$(_cm 0x0013 "$_dlid" "$_slid")
	_rtu=$(_cm 0x0014 "$_slid" "$_dlid")
	chk_begin
	if [ -z "$_req" ] || [ -z "$_rep" ] || [ -z "$_rtu" ]; then
		_bad="REQ/REP/RTU missing: '${_req%%:*}' '${_rep%%:*}' '${_rtu%%:*}' (capture lines)"
	elif [ "${_req%%:*}" -ge "${_rep%%:*}" ] || [ "${_rep%%:*}" -ge "${_rtu%%:*}" ]; then
		_bad="out of order: REQ line ${_req%%:*}, REP ${_rep%%:*}, RTU ${_rtu%%:*}"
	fi
	chk_end "$_c-cm-order" "$_cap"
	[ -n "$_req" ] && [ -n "$_rep" ] && [ -n "$_rtu" ] || return

	# REQ (IBA 12.6.5; CM data from MAD byte 24).
	_qm=$(capf "$_req" mad) _pm=$(capf "$_rep" mad) _tm=$(capf "$_rtu" mad)
	_lcid=$(mad "$_qm" 24 4)
	chk_begin
	[ "$_lcid" != 00000000 ] || _bad="$_bad local-comm-id=0"
	chk service-id "$(mad "$_qm" 32 8)" "$(printf '%016x' "$_sid")"
	chk_num ca-guid "0x$(mad "$_qm" 40 8)" "$(out "$_o" cli.addr.node_guid)"
	chk_num local-qpn "$(madn "$_qm" 56 3)" "$_qa"
	chk_num transport-rc $(($(madn "$_qm" 67 1) >> 1 & 3)) 0
	chk_num pkey "$(madn "$_qm" 72 2)" "$(out "$_o" 'cli.path[0].pkey')"
	chk_num mtu $(($(madn "$_qm" 74 1) >> 4)) "$_mtu"
	chk_num local-lid "$(madn "$_qm" 76 2)" "$_slid"
	chk_num remote-lid "$(madn "$_qm" 78 2)" "$_dlid"
	chk local-gid "$(mad "$_qm" 80 16)" "$(port_gidhex "$_a")"
	chk remote-gid "$(mad "$_qm" 96 16)" "$(port_gidhex "$_p")"
	chk_num rate $(($(madn "$_qm" 115 1) & 0x3f)) "$_rate"
	chk_num sl $(($(madn "$_qm" 118 1) >> 4)) "$_sl"
	chk_num subnet-local $(($(madn "$_qm" 118 1) >> 3 & 1)) 1
	chk_end "$_c-cm-req" "$_cap"
	# REP (IBA 12.6.8): its own comm id, the REQ's echoed, our QPN.
	_rcid=$(mad "$_pm" 24 4)
	chk_begin
	[ "$_rcid" != 00000000 ] || _bad="$_bad local-comm-id=0"
	chk remote-comm-id "$(mad "$_pm" 28 4)" "$_lcid"
	chk_num local-qpn "$(madn "$_pm" 36 3)" "$_qp"
	chk_num ca-guid "0x$(mad "$_pm" 52 8)" "$(out "$_o" conn.addr.node_guid)"
	chk tid "$(capf "${_rep#*:}" tid)" "$(capf "${_req#*:}" tid)"
	chk_end "$_c-cm-rep" "$_cap"
	# RTU (IBA 12.6.9): the active's comm id, then the passive's.
	chk_begin
	chk local-comm-id "$(mad "$_tm" 24 4)" "$_lcid"
	chk remote-comm-id "$(mad "$_tm" 28 4)" "$_rcid"
	chk_end "$_c-cm-rtu" "$_cap"
}

# h1 -> h3: h3's SL, MTU and rate decide the path.
connect_pair h1-h3 h1/1 h3/1 7100 0x123 0x456
# The dual-ported host on its second port, active then passive: the path,
# the SA query and the QP leave from port 2, the REQ arrives on port 2.
connect_pair h2p2-h1 h2/2 h1/1 7101 0x1234 0xabcdef
connect_pair h3-h2p2 h3/1 h2/2 7102 0xfffffe 0x2
# LMC path bits: a path set at LMC offset 1 at both ends. The REQ leaves
# from LID+1 to LID+1; the passive side answers from what its receive
# completion says (slid, dlid_path_bits) and takes the REQ's LIDs.
if [ "$MASK" -ge 1 ]; then
	connect_pair h1-h2p2-lmc h1/1 h2/2 7104 0x4321 0x8765 1
else
	t_skip $T:lmc "the topology has LMC 0"
fi

# Unload with MADs outstanding: a connection whose REQ is never answered
# (the passive side never accepts), rdma_cm ids open on both devices, and
# simfab goes away under them: ib_cm's REQ send still waits for its answer.
echo clear >$D/ctl
_a=h1/1 _p=h3/1
timeout 30 "$CM" 'timeout 5000' \
	'id srv ps=ib' "bind gid=$(port_gid $_p) port=7103" 'listen' \
	'id cli ps=ib' "bind gid=$(port_gid $_a)" \
	"resolve-addr dst-gid=$(port_gid $_p) dst-port=7103" 'wait ADDR_RESOLVED id=cli' \
	'resolve-route' 'wait ROUTE_RESOLVED id=cli' 'connect qpn=0x777' \
	'wait CONNECT_REQUEST id=srv' 'sleep 8000' >/tmp/sfc-unload.out 2>&1 &
cmpid=$!
i=0
while [ $i -lt 50 ] && ! grep -q ' class=0x07 .* attr=0x0010 .*verdict=delivered' $D/capture; do
	sleep 0.1
	i=$((i + 1))
done
if ! grep -q ' class=0x07 .* attr=0x0010 .*verdict=delivered' $D/capture; then
	t_fail $T:unload-in-flight "no REQ on the wire before the unload"
	diag_file /tmp/sfc-unload.out
elif timeout 30 rmmod simfab; then
	t_pass $T:unload-in-flight
else
	t_fail $T:unload-in-flight "rmmod simfab with a connection in progress failed"
fi
kill "$cmpid" 2>/dev/null
wait "$cmpid" 2>/dev/null
mod_loaded simfab && rmmod simfab

dmesg_since "$mark" | grep -v 'module verification failed' >/tmp/sfc.dmesg
if grep -Eq "$DMESG_BAD" /tmp/sfc.dmesg; then
	grep -E "$DMESG_BAD" /tmp/sfc.dmesg | while read -r l; do diag "$l"; done
	t_fail $T:kernel-log "errors in the kernel log"
else
	t_pass $T:kernel-log
fi
diag "guest time $(awk -v s="$start" '{ print $1 - s }' /proc/uptime) s"
t_summary
