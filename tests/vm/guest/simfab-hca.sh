#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 34 (measured under TCG; tests/vm/run --boots balances by it)
# Today's HCAs in simfab (issue 25, point 4) on altdisc-mlx5.topo: a3
# and b3 mlx5-style (one ib_device per port, each its own NodeGUID, one
# SystemImageGUID: ConnectX-4 and later), a4 and b4 mlx4-style (one
# ib_device with both ports), subnet C with a short PacketLifeTime and
# hosts of three CA ACK delays. Every expected value comes from debugfs
# simfab/topology (or the capture), none is written into the test.
#
# hca:topology     the kinds, devices, NodeGUIDs and ACK delays as loaded
#                  (ack_delay 16 when the topology names none).
# hca:sysfs-H      each port's ib_device: node_guid, sys_image_guid, its
#                  port count, the port's number, LID and GID there.
# hca:sa-noderecords  B's SA NodeRecords (saquery NR): an mlx5-style
#                  port is a node of one port with its own NodeGUID and
#                  the adapter's SystemImageGUID; an mlx4-style node has
#                  two ports under one NodeGUID.
# alt:*            ib_remote_sa's alternate discovery (simfab_rsa_test
#                  alt=1) finds another port of the remote node by its
#                  NodeGUID and another port of the local ib_device,
#                  never a port of another ib_device (a QP's alternate
#                  port is on the QP's device, IBA 17.2.8): between two
#                  mlx5-style nodes none (-ENODATA, NodePorts names one
#                  port, no candidate asked for), from or to an
#                  mlx4-style node the other port of that node only.
#                  With ib_remote_sa alt_routers=1 the mlx5-style pair
#                  through the router A's SA does not name (A's routers
#                  by a NodeRecord GetTable, the PairedPathRecord Get
#                  through it), counted in alt_other_router; nothing
#                  when that router is down.
# altroute:*       the same through rdma_cm's alternate at route time
#                  (simfab_rc_test cma-altroute-route): the alternate
#                  each QP is loaded with, as simfab's qplog saw the
#                  Modify QP, is a port of the QP's own device; none
#                  between mlx5-style nodes, with alt_routers=1 the same
#                  ports through the other router (both QPs' alternate
#                  DLID that router's port).
# otherdev:*       an alternate from or to the other port of an
#                  mlx5-style adapter (another ib_device): ib_send_cm_req()
#                  refuses it and sends nothing, a passive CM rejects the
#                  REQ (Invalid Alternate GID) before its consumer sees it.
# ack:*            the Local ACK Timeout ib_cm (and rdma_cm through it)
#                  programs into both QPs (simfab_rc_test ack_timeout=-1:
#                  the driver leaves it alone; simfab's qplog and
#                  query_qp), the REQ's Local ACK Timeout and the REP's
#                  TargetACKDelay on the wire, against IBA 12.7.34's
#                  sum from the path's PacketLifeTime and the ACK delay
#                  of the CA that answers (active QP: the passive CA's,
#                  passive QP: the active CA's), for delays 0, 16 and 20.
#
# Skips without simfab.ko or the topology; the alt, altroute and ack
# parts without the modules they load.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-hca
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
P=/sys/module/rdma_cm/parameters
TOPOFILE=/ibr/simfab/topology/altdisc-mlx5.topo

if ! has_mod simfab || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
RSA=
! has_mod ib_remote_sa || RSA=ib_remote_sa
mark=$(dmesg_mark)
TOPO=/tmp/hca.topo
# shellcheck disable=SC2086 # RSA: no word or one
if sf_load_topo "$TOPOFILE" ib_umad $RSA rdma_ucm; then
	t_pass $T:load
else
	t_fail $T:load "modprobe simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi

# host_ports H: the host's ports as H/P words.
host_ports() {
	sed -n "s|^port \($1/[0-9]*\) .*|\1|p" "$TOPO"
}
# sysfmt 0xHEX16: a GUID as sysfs prints it (xxxx:xxxx:xxxx:xxxx).
sysfmt() {
	printf '%016x' "$1" | sed 's/..../&:/g; s/:$//'
}

# ---- the topology: devices, GUIDs, ACK delays ------------------------------------
chk_begin
for h in a3 b3; do
	chk "$h-hca" "$(topo_host $h hca)" mlx5
	chk_num "$h-devs" "$(topo_host $h devs)" "$(topo_host $h ports)"
	[ "$(port_dev $h/1)" != "$(port_dev $h/2)" ] || _bad="$_bad $h-one-device"
	chk_num "$h/2-devport" "$(port_devport $h/2)" 1
	chk_ne "$h-node-guids" "$(topo_port $h/1 node_guid)" "$(topo_port $h/2 node_guid)"
done
for h in a4 b4; do
	chk "$h-hca" "$(topo_host $h hca)" mlx4
	chk_num "$h-devs" "$(topo_host $h devs)" 1
	chk "$h-one-device" "$(port_dev $h/2)" "$(port_dev $h/1)"
	chk_num "$h/2-devport" "$(port_devport $h/2)" 2
	chk "$h-node-guid" "$(topo_port $h/2 node_guid)" "$(topo_port $h/1 node_guid)"
done
chk_num c1-default-ack-delay "$(topo_host c1 ack_delay)" 16
chk_num c2-ack-delay "$(topo_host c2 ack_delay)" 0
chk_num c3-ack-delay "$(topo_host c3 ack_delay)" 20
chk_end hca:topology $TOPO

# ---- each port's ib_device as ib_core shows it (sysfs) ---------------------------
for h in a3 a4 b3 b4; do
	chk_begin
	for hp in $(host_ports $h); do
		d=/sys/class/infiniband/$(port_dev "$hp")
		n=$(port_devport "$hp")
		chk "$hp-node-guid" "$(cat "$d/node_guid")" "$(sysfmt "$(topo_port "$hp" node_guid)")"
		chk "$hp-sys-image-guid" "$(cat "$d/sys_image_guid")" "$(sysfmt "$(topo_host $h sysimage)")"
		chk_num "$hp-dev-ports" "$(echo "$d"/ports/* | wc -w)" $(($(topo_host $h ports) / $(topo_host $h devs)))
		chk_num "$hp-lid" "$(cat "$d/ports/$n/lid")" "$(topo_port "$hp" lid)"
		chk "$hp-gid" "$(cat "$d/ports/$n/gids/0")" "$(port_gid "$hp")"
		chk "$hp-state" "$(cat "$d/ports/$n/state")" "4: ACTIVE"
	done
	chk_end "hca:sysfs-$h" $TOPO
done

# ---- B's SA NodeRecords through saquery -----------------------------------------
if command -v saquery >/dev/null; then
	timeout 30 saquery -C "$(port_dev b1/1)" -P 1 NR >/tmp/hca-nr.out 2>&1
	# one line per record: port_guid node_guid sys_guid num_ports port_num
	awk 'function v(s) { sub(/^[a-z_]+\.+/, "", s); return s }
		$1 ~ /^num_ports\./ { np = v($1) } $1 ~ /^sys_guid\./ { sg = v($1) }
		$1 ~ /^node_guid\./ { ng = v($1) } $1 ~ /^port_guid\./ { pg = v($1) }
		$1 ~ /^port_num\./ { print pg, ng, sg, np, v($1) }' /tmp/hca-nr.out >/tmp/hca-nr.recs
	rec() { # H/P FIELD(2-5): of the record of that port's GUID (compared
		# as strings: awk's numbers would round 64-bit GUIDs)
		awk -v g="$(topo_port "$1" guid)" -v f="$2" '$1 "" == g "" { print $f }' /tmp/hca-nr.recs
	}
	chk_begin
	chk_num records "$(wc -l </tmp/hca-nr.recs)" "$(grep -c "^port [^ ]* .* subnet=B " $TOPO)"
	for hp in b3/1 b3/2 b4/1 b4/2; do
		h=${hp%/*}
		chk_num "$hp-node-guid" "$(rec "$hp" 2)" "$(topo_port "$hp" node_guid)"
		chk_num "$hp-sys-guid" "$(rec "$hp" 3)" "$(topo_host "$h" sysimage)"
		chk_num "$hp-num-ports" "$(rec "$hp" 4)" $(($(topo_host "$h" ports) / $(topo_host "$h" devs)))
		chk_num "$hp-port-num" "$(rec "$hp" 5)" "$(port_devport "$hp")"
	done
	chk_ne b3-nodes "$(rec b3/1 2)" "$(rec b3/2 2)"
	chk b3-one-system "$(rec b3/1 3)" "$(rec b3/2 3)"
	chk_end hca:sa-noderecords /tmp/hca-nr.out /tmp/hca-nr.recs
else
	t_skip "$T:hca:sa-noderecords" "saquery not in the image (install infiniband-diags)"
fi

A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PB=$(topo_subnet "$B" prefix)
RA=$(route_via "$A" "$PB")
# RO: the other router between A and B, which A's SA does not name.
RO=$(sed -n 's/^router \([^ ]*\) .*/\1/p' "$TOPO" | grep -vx "$RA" | head -n 1)
ARP=/sys/module/ib_remote_sa/parameters/alt_routers
cnt() {
	cat "$S/$(port_dev "$1")/$(port_devport "$1")/counters/$2" 2>/dev/null || echo x
}

# ---- alternate discovery (ib_remote_sa) -------------------------------------------
if [ -n "$RSA" ] && has_mod simfab_rsa_test; then
	TTLP=/sys/module/ib_remote_sa/parameters/cache_ttl_ms
	TTL0=$(cat $TTLP)
	echo 0 >$TTLP
	# alt NAME H/P TARGET-H/P: the discovery from H/P for the primary
	# H/P -> TARGET; its lines in /tmp/hca-alt-NAME.out, the capture in
	# /tmp/hca-alt-NAME.cap.
	alt() {
		echo clear >$D/ctl
		_m=$(dmesg_mark)
		modprobe simfab_rsa_test alt=1 "dev=$(port_dev "$2")" "port=$(port_devport "$2")" \
			"target=$(port_gid "$3")" timeout_ms=3000 retries=1 >"/tmp/hca-alt-$1.err" 2>&1
		rmmod simfab_rsa_test 2>>"/tmp/hca-alt-$1.err"
		dmesg_since "$_m" | sed -n 's/.*simfab_rsa_test: //p' >"/tmp/hca-alt-$1.out"
		cat $D/capture >"/tmp/hca-alt-$1.cap"
	}
	af() {
		sed -n "s/^alt \(.* \)*$2=\([^ ]*\).*/\2/p" "/tmp/hca-alt-$1.out" | head -n 1
	}
	rate_min() {
		echo "$1 $2" | awk 'BEGIN { split("2.5 10 30 5 20 40 60 80 120", g) }
			{ a = g[$1 - 1] + 0; b = g[$2 - 1] + 0; print (a <= b) ? $1 : $2 }'
	}
	# check_alt NAME LOCAL REMOTE [ROUTER]: the alternate found is that
	# pair, with A's SA's forward record and B's SA's return record
	# through the forward router (A's SA's, $RA, unless ROUTER is named).
	check_alt() {
		_l=$2 _r=$3 _ra=${4:-$RA}
		_rab=$(rport "$_ra" "$B")
		chk_begin
		chk status "$(af "$1" status)" 0
		chk_num port "$(af "$1" port)" "$(port_devport "$_l")"
		chk sgid "$(gid_hex "$(af "$1" sgid)")" "$(port_gidhex "$_l")"
		chk dgid "$(gid_hex "$(af "$1" dgid)")" "$(port_gidhex "$_r")"
		chk_num fwd-dlid "$(af "$1" fwd_dlid)" "$(topo_port "$(rport "$_ra" "$A")" lid)"
		chk_num fwd-slid "$(af "$1" fwd_slid)" "$(topo_port "$_l" lid)"
		chk_num ret-dlid "$(af "$1" ret_dlid)" "$(topo_port "$_rab" lid)"
		chk_num ret-slid "$(af "$1" ret_slid)" "$(topo_port "$_r" lid)"
		chk_num ret-sl "$(af "$1" ret_sl)" "$(max "$(prop "$_r" sl)" "$(prop "$_rab" sl)")"
		chk_num ret-mtu "$(af "$1" ret_mtu)" "$(min "$(prop "$_r" mtu)" "$(prop "$_rab" mtu)")"
		chk_num ret-rate "$(af "$1" ret_rate)" "$(rate_min "$(prop "$_r" rate)" "$(prop "$_rab" rate)")"
		chk_end "alt:$1" "/tmp/hca-alt-$1.out" "/tmp/hca-alt-$1.err"
	}
	# nodeports NAME AT: the NodePorts answer delivered at AT.
	nodeports() {
		grep " at=$2 .* class=0x0d cv=1 method=0x81 status=0x0000 .* attr=0xff01 .* verdict=delivered " \
			"/tmp/hca-alt-$1.cap" | head -n 1
	}

	# Both nodes mlx5-style: b3's service names b3/1's node (its own
	# NodeGUID, one port); a3/1's device has no other port. No pair is
	# asked for (no PairedPathRecord Get), nothing found.
	for pair in "a3/1 b3/1" "a3/2 b3/2"; do
		# shellcheck disable=SC2086
		set -- $pair
		n=mlx5-$(echo "$1" | tr / -)
		n0=$(cnt "$1" alt_none)
		alt "$n" "$1" "$2"
		r=$(nodeports "$n" "$1")
		nr2=$(grep " slid=$(topo_port "$2" lid) .* class=0x03 .* method=0x12 .* attr=0x0011 .* verdict=sa " \
			"/tmp/hca-alt-$n.cap" | sed -n 2p)
		chk_begin
		chk status "$(af "$n" status)" -61
		chk_num alt-none $(($(cnt "$1" alt_none) - n0)) 1
		if [ -z "$r" ] || [ -z "$nr2" ]; then
			[ -n "$r" ] || _bad="$_bad no-nodeports-answer"
			[ -n "$nr2" ] || _bad="$_bad no-noderecord-query-by-node"
		else
			m=$(capf "$r" mad)
			chk_num nodeports-num-ports "$(madn "$m" 80 1)" 1
			chk nodeports-node-guid "0x$(mad "$m" 72 8)" "$(topo_port "$2" node_guid)"
			chk nodeports-gid0 "$(mad "$m" 88 16)" "$(port_gidhex "$2")"
			chk nr-by-node-guid "0x$(mad "$(capf "$nr2" mad)" 72 8)" "$(topo_port "$2" node_guid)"
		fi
		chk_num no-candidate "$(grep -c " attr=0xff02 " "/tmp/hca-alt-$n.cap")" 0
		chk_end "alt:$n-none" "/tmp/hca-alt-$n.out" "/tmp/hca-alt-$n.cap"
	done
	# An mlx4-style node at either end: its other port, nothing else.
	alt mlx4-local a4/1 b3/1
	check_alt mlx4-local a4/2 b3/1
	alt mlx4-remote a3/1 b4/1
	check_alt mlx4-remote a3/1 b4/2
	alt mlx4-both a4/1 b4/1
	check_alt mlx4-both a4/2 b4/2
	chk_begin
	chk_num mlx4-remote-nodeports "$(madn "$(capf "$(nodeports mlx4-remote a3/1)" mad)" 80 1)" 2
	chk_end alt:mlx4-remote-nodeports /tmp/hca-alt-mlx4-remote.cap

	# ib_remote_sa alt_routers=1: between the same two mlx5-style nodes
	# the pair a3/1 -> b3/1 through the router A's SA does not name
	# ($RO): A's routers from A's SA (a NodeRecord GetTable by NodeType
	# router), the forward record to $RO's port, the PairedPathRecord Get
	# arriving at b3/1 through $RO, so the return record names $RO's port
	# on B; counted in alt_other_router. Off again, nothing found.
	if [ -w "$ARP" ]; then
		echo 1 >"$ARP"
		n=routers-mlx5
		o0=$(cnt a3/1 alt_other_router)
		alt "$n" a3/1 b3/1
		echo 0 >"$ARP"
		check_alt "$n" a3/1 b3/1 "$RO"
		nrq=$(grep " slid=$(topo_port a3/1 lid) .* class=0x03 .* method=0x12 .* attr=0x0011 .* verdict=sa " \
			"/tmp/hca-alt-$n.cap" | head -n 1)
		pin=$(grep " at=b3/1 slid=$(topo_port "$(rport "$RO" "$B")" lid) .* method=0x01 .* attr=0xff02 .* verdict=delivered " \
			"/tmp/hca-alt-$n.cap" | head -n 1)
		chk_begin
		chk_num other-router $(($(cnt a3/1 alt_other_router) - o0)) 1
		if [ -z "$nrq" ]; then
			_bad="$_bad no-router-noderecord-query"
		else
			chk nr-comp-mask-nodetype "$(mad "$(capf "$nrq" mad)" 48 8)" 0000000000000010
			chk_num nr-nodetype-router "$(madn "$(capf "$nrq" mad)" 62 1)" 3
		fi
		[ -n "$pin" ] || _bad="$_bad no-paired-get-through-$RO"
		chk_end "alt:$n-wire" "/tmp/hca-alt-$n.cap"
		# $RO down (no sweep): no path through it, nothing found.
		echo "router $RO down" >$D/ctl
		echo 1 >"$ARP"
		n0=$(cnt a3/1 alt_none)
		alt "$n-down" a3/1 b3/1
		echo 0 >"$ARP"
		echo "router $RO up" >$D/ctl
		chk_begin
		chk status "$(af "$n-down" status)" -61
		chk_num alt-none $(($(cnt a3/1 alt_none) - n0)) 1
		chk_end "alt:$n-down" "/tmp/hca-alt-$n-down.out" "/tmp/hca-alt-$n-down.cap"
	else
		t_fail "$T:alt:routers-mlx5" "ib_remote_sa has no alt_routers parameter"
	fi
	echo "$TTL0" >$TTLP
else
	t_skip "$T:alt" "ib_remote_sa.ko or simfab_rsa_test.ko not in the image"
fi

# ---- rc runs (simfab_rc_test) -----------------------------------------------------
# rc_run KIND NAME CASE ARGS...: one simfab_rc_test run; its KTAP in
# /tmp/hca-NAME.ktap, the capture and qplog beside it; every KTAP result
# becomes a result KIND:NAME-STEP.
rc_run() {
	_k=$1 _n=$2 _case=$3
	shift 3
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	if ! timeout 240 modprobe simfab_rc_test "cases=$_case" "$@" >"/tmp/hca-$_n.err" 2>&1; then
		t_fail "$T:$_k:$_n" "modprobe simfab_rc_test cases=$_case failed"
		diag_file "/tmp/hca-$_n.err"
		return 1
	fi
	rmmod simfab_rc_test
	dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"/tmp/hca-$_n.ktap"
	cat $D/capture >"/tmp/hca-$_n.cap"
	cat $D/qplog >"/tmp/hca-$_n.qplog"
	ktap_relay "$T:$_k:$_n-" "simfab_rc_${_case}_" "/tmp/hca-$_n.ktap" "$T:$_k:$_n-plan"
}
qa() { sed -n "s|^# [^ ]* $2 \(.* \)*$3=\([^ ]*\).*|\2|p" "/tmp/hca-$1.ktap" | head -n 1; }
ends() { echo "act=$(port_param "$1")" "pas=$(port_param "$2")"; }
# qplog NAME H/P KEY: the values of KEY in the qplog lines of the
# Modify QPs the device of H/P took (ret=0) that set it, one a line.
qplog() {
	sed -n "/ ret=0 /s|^.* dev=$(port_dev "$2") .* $3=\([^ ]*\).*|\1|p" "/tmp/hca-$1.qplog"
}

# ---- the alternate at route time: never a port of another device ------------------
if [ -n "$RSA" ] && has_mod simfab_rc_test && [ -w "$P/alt_path" ]; then
	echo Y >$P/remote_sa
	echo N >$P/remote_sa_required
	ALT0=$(cat $P/alt_path)
	echo 1 >$P/alt_path
	TTLP=/sys/module/ib_remote_sa/parameters/cache_ttl_ms
	TTL0=$(cat $TTLP)
	echo 0 >$TTLP
	# route NAME SRC DST ACT-ALT PAS-ALT: an opted-in connection SRC ->
	# DST; the route has an alternate exactly when ACT-ALT is not "-",
	# and each side's Modify QP loads the alternate port named (none
	# for "-"), a port of that QP's own device.
	route() {
		_n=$1
		# shellcheck disable=SC2046
		rc_run altroute "$_n" cma-altroute-route $(ends "$2" "$3") opt_in=1 retry=3 connect_delay_ms=3000 || return
		chk_begin
		if [ "$4" = - ]; then
			chk_num paths "$(qa "$_n" route n)" 1
			chk_num act-alt-dlid "$(qa "$_n" act.conn alt_dlid)" 0
			chk_num alt-path-loads "$(grep -c ' alt_port=' "/tmp/hca-$_n.qplog")" 0
		else
			chk_num paths "$(qa "$_n" route n)" 2
			chk act-alt-ports "$(qplog "$_n" "$2" alt_port | sort -u | paste -sd ' ' -)" "$4"
			chk pas-alt-ports "$(qplog "$_n" "$3" alt_port | sort -u | paste -sd ' ' -)" "$5"
			chk_num act-alt-port "$(qa "$_n" act.conn alt_port)" "$(port_devport "$4")"
			chk_num pas-alt-port "$(qa "$_n" pas.conn alt_port)" "$(port_devport "$5")"
		fi
		grep -q ' alt_port=bad:' "/tmp/hca-$_n.qplog" && _bad="$_bad alt-port-not-on-the-device"
		[ -n "$(qplog "$_n" "$2" timeout)" ] || _bad="$_bad no-active-modify-logged"
		chk_end "altroute:$_n" "/tmp/hca-$_n.ktap" "/tmp/hca-$_n.qplog"
	}
	route mlx5-both a3/1 b3/1 - -
	# alt_routers=1: the same port on each device, through $RO.
	if [ -w "$ARP" ]; then
		echo 1 >"$ARP"
		route mlx5-routers a3/1 b3/1 a3/1 b3/1
		echo 0 >"$ARP"
		chk_begin
		chk_num act-alt-dlid "$(qa mlx5-routers act.conn alt_dlid)" "$(topo_port "$(rport "$RO" "$A")" lid)"
		chk_num pas-alt-dlid "$(qa mlx5-routers pas.conn alt_dlid)" "$(topo_port "$(rport "$RO" "$B")" lid)"
		chk_end altroute:mlx5-routers-dlid /tmp/hca-mlx5-routers.ktap
	else
		t_fail "$T:altroute:mlx5-routers" "ib_remote_sa has no alt_routers parameter"
	fi
	route mlx4-both a4/1 b4/1 a4/2 b4/2
	route mlx4-active a4/1 b3/1 a4/2 b3/1
	route mlx4-passive a3/1 b4/1 a3/1 b4/2
	echo "$TTL0" >$TTLP
	echo "$ALT0" >$P/alt_path
else
	t_skip "$T:altroute" "ib_remote_sa.ko, simfab_rc_test.ko or rdma_cm's alt_path not in the image"
fi

# ---- an alternate on another device: refused by ib_cm -----------------------------
# other NAME ACT ACT-ALT PAS PAS-ALT: ib_cm with the alternate ACT-ALT ->
# PAS-ALT (simfab_rc_test alt-other-device), one of them the other port
# of an mlx5-style adapter, another ib_device than the primary's. The
# active CM refuses it with no REQ on the wire; the passive CM answers
# the REQ with a REJ, reason Invalid Alternate GID (18, IBA 12.6.7.2),
# and sends no REP.
if has_mod simfab_rc_test; then
	other() {
		_n=$1
		rc_run otherdev "$_n" alt-other-device "act=$(port_param "$2")" "act_alt=$(port_param "$3")" \
			"pas=$(port_param "$4")" "pas_alt=$(port_param "$5")" retry=3 || return
		_cm=" class=0x07 cv=2 method=0x03 "
		chk_begin
		if [ "$(port_dev "$2")" != "$(port_dev "$3")" ]; then
			chk_num reqs-on-the-wire "$(grep -c "$_cm.* attr=0x0010 " "/tmp/hca-$_n.cap")" 0
		else
			_rej=$(grep "$_cm.* attr=0x0012 " "/tmp/hca-$_n.cap" | head -n 1)
			chk_num rej-reason "$(madn "$(capf "$_rej" mad)" 34 2)" 18
			chk_num reps-on-the-wire "$(grep -c "$_cm.* attr=0x0013 " "/tmp/hca-$_n.cap")" 0
		fi
		chk_end "otherdev:$_n-wire" "/tmp/hca-$_n.cap"
	}
	other active a3/1 a3/2 a4/1 a4/2
	other passive a4/1 a4/2 a3/1 a3/2
else
	t_skip "$T:otherdev" "simfab_rc_test.ko not in the image"
fi

# ---- the Local ACK Timeout ib_cm computes ------------------------------------------
# ack NAME CASE ACT PAS: a connection ACT -> PAS on subnet C with the
# timeouts the CM computes (ack_timeout=-1); both QPs' Local ACK Timeout
# as simfab's qplog saw each Modify QP that set it and as query_qp reads
# it, the REQ's Local ACK Timeout (the passive QP's, IBA 12.7.34: from
# the active CA's delay) at PAS, the REP's TargetACKDelay at ACT.
ack() {
	_n=$1 _act=$3 _pas=$4
	_life=$(max "$(prop "$_act" life)" "$(prop "$_pas" life)")
	_da=$(topo_host "${_act%/*}" ack_delay) _dp=$(topo_host "${_pas%/*}" ack_delay)
	_wa=$(iba_ack_timeout "$_dp" "$_life") _wp=$(iba_ack_timeout "$_da" "$_life")
	diag "$_n: life $_life, ack delay $_da at $_act, $_dp at $_pas: active QP $_wa, passive QP $_wp"
	# shellcheck disable=SC2046
	rc_run ack "$_n" "$2" $(ends "$_act" "$_pas") ack_timeout=-1 retry=7 || return
	_req=$(grep " at=$_pas .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " "/tmp/hca-$_n.cap" | head -n 1)
	_rep=$(grep " at=$_act .* class=0x07 cv=2 method=0x03 .* attr=0x0013 .* verdict=delivered " "/tmp/hca-$_n.cap" | head -n 1)
	chk_begin
	chk act-qplog "$(qplog "$_n" "$_act" timeout | sort -u | paste -sd ' ' -)" "$_wa"
	chk pas-qplog "$(qplog "$_n" "$_pas" timeout | sort -u | paste -sd ' ' -)" "$_wp"
	chk_num act-query-qp "$(qa "$_n" act.conn timeout)" "$_wa"
	chk_num pas-query-qp "$(qa "$_n" pas.conn timeout)" "$_wp"
	if [ -z "$_req" ] || [ -z "$_rep" ]; then
		[ -n "$_req" ] || _bad="$_bad no-REQ-at-$_pas"
		[ -n "$_rep" ] || _bad="$_bad no-REP-at-$_act"
	else
		chk_num req-local-ack-timeout $(($(madn "$(capf "$_req" mad)" 119 1) >> 3)) "$_wp"
		chk_num rep-target-ack-delay $(($(madn "$(capf "$_rep" mad)" 50 1) >> 3)) "$_dp"
	fi
	chk_end "ack:$_n" "/tmp/hca-$_n.ktap" "/tmp/hca-$_n.qplog"
}
if has_mod simfab_rc_test; then
	chk_begin
	chk_ne c1-c2-delays "$(topo_host c1 ack_delay)" "$(topo_host c2 ack_delay)"
	# the lifetime is below the delays: they decide the timeouts
	[ "$(prop c1/1 life)" -lt 15 ] || _bad="$_bad life-not-below-16"
	chk_end ack:topology $TOPO
	ack ibcm-c1-c2 ibcm c1/1 c2/1
	ack ibcm-c2-c1 ibcm c2/1 c1/1
	ack cma-c3-c1 rc c3/1 c1/1
else
	t_skip "$T:ack" "simfab_rc_test.ko not in the image (tests/simfab/build)"
fi

# ib_remote_sa and rdma_ucm stay (as simfab-altroute leaves them);
# simfab goes back to the default topology.
rmmod simfab
rc=$?
chk_begin
chk rmmod "$rc" 0
chk_end hca:unload

chk_dmesg "$T" "$mark"
t_summary
