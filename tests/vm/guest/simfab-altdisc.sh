#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 42 (measured under TCG; tests/vm/run --boots balances by it)
# ib_remote_sa's alternate path discovery (ib_remote_sa_alt_path_get,
# docs/remote-sa-protocol.md "NodePorts" and "Alternate paths") on
# simfab's altdisc.topo: routed.topo's subnets A and B with a dual-ported
# node on each (a3, b3). simfab_rsa_test.ko alt=1 takes the primary's
# forward record from A's SA and its return record through ib_remote_sa,
# then asks for an alternate. Every expected value comes from debugfs
# simfab/topology or from the capture; none is written into the test.
#
# alt:  a3/1 -> b3/1 gets the pair that shares nothing with the primary
#       (a3/2 -> b3/2) with both records, the return record through the
#       forward record's router (PairedPathRecord: its port on B as DLID,
#       B's SL/MTU/rate/life of the path to it); a1 -> b3/1 another port of the
#       remote node (found by its node GUID through b3's service); a3/1 ->
#       b1 another local port; a1 -> b1 (one port each) nothing
#       (-ENODATA), as without a service at b3; cancel.
# wire: the NodePorts Get at b3/1 and its answer, b3/1's NodeRecord
#       queries to B's SA, the alternate's PairedPathRecord Get at b3/2
#       arriving through the forward router, b3/2's two PathRecord Gets
#       to B's SA (the second to that router's port) and the answer.
# paired: PairedPathRecord Gets sent with ib-remote-sa-query through
#       each router: through B's SA's own router one SA query and that
#       record, through the other one two and its port as DLID; a
#       responder without the attribute (parameter paired=N) answers
#       0x000c and the discovery finds nothing (alt_unpaired);
#       malformed PairedPathRecord Gets refused and counted.
# rc:   a3/1 -> b3/1 through ib_cm (simfab_rc_test alt-routed) with the
#       discovered alternate a3/2 -> b3/2, migrated: traffic flows with
#       the paired return record; with the unpaired one (B's SA's own
#       router) the alternate's packets are dropped (IBA 9.6.1.5).
# sa:   B's NodeRecords as saquery NR reads them.
# no-worker-waits-for-a-mad: while the discovery waits on a silent
#       service, no thread's stack is in it (callback-driven).
# malformed: NodePorts requests crafted with ib-remote-sa-query, each
#       refused with its status and counter.
#
# Skips without simfab.ko, the topology or ib_remote_sa.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-altdisc
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
TOPOFILE=/ibr/simfab/topology/altdisc.topo

if ! has_mod simfab || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
if ! has_mod ib_remote_sa || ! has_mod simfab_rsa_test; then
	t_skip $T "ib_remote_sa.ko or simfab_rsa_test.ko not in the image (the series has no ib_remote_sa?)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
! mod_loaded simfab || rmmod simfab
CONF=/etc/modprobe.d/simfab-topology.conf
cp $CONF /tmp/alt-default.conf
printf 'options simfab topology="%s"\n' "$(cat $TOPOFILE)" >$CONF
modprobe ib_umad
modprobe ib_remote_sa && modprobe simfab
rc=$?
cp /tmp/alt-default.conf $CONF
if [ $rc -eq 0 ] && [ "$(cat /sys/module/simfab/parameters/topology)" = "$(cat $TOPOFILE)" ]; then
	t_pass $T:load
else
	t_fail $T:load "modprobe ib_remote_sa / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
TOPO=/tmp/alt.topo
cat $D/topology >$TOPO
# Every query goes on the wire (the TTL is put back at the end: the
# module may stay loaded for the next test).
TTLP=/sys/module/ib_remote_sa/parameters/cache_ttl_ms
TTL0=$(cat $TTLP)
echo 0 >$TTLP

dev_of() { topo_host "${1%/*}" dev; }
cnt() {
	cat "$S/$(dev_of "$1")/${1#*/}/counters/$2" 2>/dev/null || echo x
}
# alt NAME H/P TARGET-H/P [ARGS...]: the discovery from H/P for the
# primary H/P -> TARGET; its lines in /tmp/alt-NAME.out, the capture in
# /tmp/alt-NAME.cap.
alt() {
	_n=$1 _p=$2 _t=$3
	shift 3
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	modprobe simfab_rsa_test alt=1 "dev=$(dev_of "$_p")" "port=${_p#*/}" \
		"target=$(port_gid "$_t")" timeout_ms=3000 retries=1 "$@" \
		>"/tmp/alt-$_n.err" 2>&1
	rmmod simfab_rsa_test 2>>"/tmp/alt-$_n.err"
	dmesg_since "$_m" | sed -n 's/.*simfab_rsa_test: //p' >"/tmp/alt-$_n.out"
	cat $D/capture >"/tmp/alt-$_n.cap"
}
# af NAME KEY: a field of the discovery's "alt" line.
af() {
	sed -n "s/^alt \(.* \)*$2=\([^ ]*\).*/\2/p" "/tmp/alt-$1.out" | head -n 1
}
# Values the records must carry, from the topology: the router each SA
# names for the other subnet, and its port's LID there.
A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PA=$(topo_subnet "$A" prefix) PB=$(topo_subnet "$B" prefix)
RA=$(route_via "$A" "$PB") RB=$(route_via "$B" "$PA")
RALID=$(topo_port "$(rport "$RA" "$A")" lid)
RBLID=$(topo_port "$(rport "$RB" "$B")" lid)
# The forward router's port on B: a paired return record's DLID.
RAB=$(rport "$RA" "$B")
RABLID=$(topo_port "$RAB" lid)
# B's SA's router's port on A: a Get sent there arrives at B through it.
RBALID=$(topo_port "$(rport "$RB" "$A")" lid)
diag "A=$A B=$B A's router to B: $RA (lid $RALID, on B $RABLID); B's router to A: $RB (lid $RBLID, on A $RBALID)"
# GMP|ALTERNATE|OUTBOUND and GMP|ALTERNATE|INBOUND (ib_user_sa.h).
FWD_FLAGS=0xd RET_FLAGS=0x15

chk_begin
chk a3-ports "$(topo_host a3 ports)" 2
chk b3-ports "$(topo_host b3 ports)" 2
chk a3-subnet "$(topo_host a3 subnet)" "$A"
chk b3-subnet "$(topo_host b3 subnet)" "$B"
# The case PairedPathRecord is for: each SA picks another router.
chk_ne routers "$(echo "$RA" | tr -dc 0-9)" "$(echo "$RB" | tr -dc 0-9)"
chk_end alt:topology $TOPO

# B's SA's NodeRecords, read by infiniband-diags' saquery (a GetTable
# over RMPP from b1): one per present port of B, hosts' and routers';
# b3's two with its node GUID, port numbers 1 and 2 and their GUIDs.
if command -v saquery >/dev/null; then
	timeout 30 saquery -C "$(dev_of b1/1)" -P 1 NR >/tmp/alt-nr.out 2>&1
	awk '$1 ~ /^node_guid\./ { sub(/^node_guid\.+/, "", $1); n = $1 }
		$1 ~ /^port_guid\./ { sub(/^port_guid\.+/, "", $1); g = $1 }
		$1 ~ /^port_num\./ { sub(/^port_num\.+/, "", $1); print n, $1, g }' /tmp/alt-nr.out >/tmp/alt-nr.recs
	b3node=0x$(port_gidhex b3/1 | cut -c17-30)00
	chk_begin
	chk_num records "$(wc -l </tmp/alt-nr.recs)" "$(grep -c "^port [^ ]* .* subnet=$B " $TOPO)"
	chk b3-ports "$(awk -v n="$b3node" '$1 == n { print $2 ":" $3 }' /tmp/alt-nr.recs | paste -sd ' ' -)" \
		"1:0x$(port_gidhex b3/1 | cut -c17-32) 2:0x$(port_gidhex b3/2 | cut -c17-32)"
	chk_end sa:noderecords-saquery /tmp/alt-nr.out
else
	t_skip "$T:sa:noderecords-saquery" "saquery not in the image (install infiniband-diags)"
fi

# rate_min R1 R2: the slower of two IB rate codes (the codes are not
# ordered: 5 is 5 Gb/s, 3 is 10).
rate_min() {
	echo "$1 $2" | awk 'BEGIN { split("2.5 10 30 5 20 40 60 80 120", g) }
		{ a = g[$1 - 1] + 0; b = g[$2 - 1] + 0; print (a <= b) ? $1 : $2 }'
}
# check_alt NAME LOCAL-H/P REMOTE-H/P: the alternate found is that pair,
# with the forward record of A's SA and the return record of B's SA
# through the forward router: DLID its port on B, the SL, MTU, rate and
# life of the path from the remote port to it.
check_alt() {
	_l=$2 _r=$3
	chk_begin
	chk status "$(af "$1" status)" 0
	chk_num port "$(af "$1" port)" "${_l#*/}"
	chk sgid "$(gid_hex "$(af "$1" sgid)")" "$(port_gidhex "$_l")"
	chk dgid "$(gid_hex "$(af "$1" dgid)")" "$(port_gidhex "$_r")"
	chk_num fwd-dlid "$(af "$1" fwd_dlid)" "$RALID"
	chk_num fwd-slid "$(af "$1" fwd_slid)" "$(topo_port "$_l" lid)"
	chk_num fwd-flags "$(af "$1" fwd_flags)" $FWD_FLAGS
	chk_num ret-dlid "$(af "$1" ret_dlid)" "$RABLID"
	chk_num ret-slid "$(af "$1" ret_slid)" "$(topo_port "$_r" lid)"
	chk_num ret-sl "$(af "$1" ret_sl)" "$(max "$(prop "$_r" sl)" "$(prop "$RAB" sl)")"
	chk_num ret-mtu "$(af "$1" ret_mtu)" "$(min "$(prop "$_r" mtu)" "$(prop "$RAB" mtu)")"
	chk_num ret-rate "$(af "$1" ret_rate)" "$(rate_min "$(prop "$_r" rate)" "$(prop "$RAB" rate)")"
	chk_num ret-life "$(af "$1" ret_life)" "$(max "$(prop "$_r" life)" "$(prop "$RAB" life)")"
	chk_num ret-flags "$(af "$1" ret_flags)" $RET_FLAGS
	chk_end "alt:$1" "/tmp/alt-$1.out" "/tmp/alt-$1.err"
}

# ---- both ends have another port: the pair sharing nothing wins ---------------
f0=$(cnt a3/1 alt_found) np0=$(cnt b3/1 node_ports)
p0=$(cnt b3/2 paired) pr0=$(cnt b3/2 paired_rerouted) q0=$(cnt b3/2 sa_queries)
alt both a3/1 b3/1
check_alt both a3/2 b3/2
# Each PairedPathRecord Get at b3/2 that carried a3/2's key (SM_Key, MAD
# byte 36: the one sent again after the BUSY that handed the key out)
# came through the forward router, not B's SA's: two SA queries each,
# answered rerouted.
npg=$(grep " at=b3/2 .* class=0x0d cv=1 method=0x01 .* attr=0xff02 .* verdict=delivered " /tmp/alt-both.cap |
	while read -r l; do [ "$(mad "$(capf "$l" mad)" 36 8)" = 0000000000000000 ] || echo keyed; done | grep -c keyed || true)
chk_begin
chk_num alt-found $(($(cnt a3/1 alt_found) - f0)) 1
chk_num b3-node-ports $(($(cnt b3/1 node_ports) - np0)) 1
[ "$npg" -ge 1 ] || _bad="$_bad no-paired-get-at-b3/2"
chk_num b3/2-paired $(($(cnt b3/2 paired) - p0)) "$npg"
chk_num b3/2-paired-rerouted $(($(cnt b3/2 paired_rerouted) - pr0)) "$npg"
chk_num b3/2-sa-queries $(($(cnt b3/2 sa_queries) - q0)) $((2 * npg))
chk_end alt:counters "/tmp/alt-both.out"

# The wire: a3/1's NodePorts Get at b3/1 (GRH from a3/1, the target's
# GID, AttributeOffset and ComponentMask 0); b3/1's NodeRecord GetTables
# to B's SA, by PortGUID then by NodeGUID; the answer at a3/1 naming b3's
# node and both its ports in port order; the alternate's PairedPathRecord
# Get from a3/2 at b3/2, through the forward router (LRH SLID its port on
# B); b3/2's Gets to B's SA: SGID/DGID, then SLID b3/2 and DLID that port;
# the answer at a3/2 with that DLID.
C=/tmp/alt-both.cap
get=$(grep " at=b3/1 .* class=0x0d cv=1 method=0x01 .* attr=0xff01 .* verdict=delivered " $C | head -n 1)
resp=$(grep " at=a3/1 .* class=0x0d cv=1 method=0x81 status=0x0000 .* attr=0xff01 .* verdict=delivered " $C | head -n 1)
nr1=$(grep " slid=$(topo_port b3/1 lid) .* class=0x03 .* method=0x12 .* attr=0x0011 .* verdict=sa " $C | sed -n 1p)
nr2=$(grep " slid=$(topo_port b3/1 lid) .* class=0x03 .* method=0x12 .* attr=0x0011 .* verdict=sa " $C | sed -n 2p)
rget=$(grep " at=b3/2 .* class=0x0d cv=1 method=0x01 .* attr=0xff02 .* verdict=delivered " $C | head -n 1)
rresp=$(grep " at=a3/2 .* class=0x0d cv=1 method=0x81 status=0x0000 .* attr=0xff02 .* verdict=delivered " $C | head -n 1)
B32=$(topo_port b3/2 lid)
sa1=$(grep " slid=$B32 .* class=0x03 .* method=0x01 .* attr=0x0035 .* verdict=sa " $C | sed -n 1p)
sa2=$(grep " slid=$B32 .* class=0x03 .* method=0x01 .* attr=0x0035 .* verdict=sa " $C | sed -n 2p)
chk_begin
if [ -z "$get" ] || [ -z "$resp" ] || [ -z "$nr2" ] || [ -z "$rget" ] ||
	[ -z "$rresp" ] || [ -z "$sa1" ] || [ -z "$sa2" ]; then
	[ -n "$get" ] || _bad="$_bad no-nodeports-get-at-b3/1"
	[ -n "$resp" ] || _bad="$_bad no-nodeports-answer-at-a3/1"
	[ -n "$nr2" ] || _bad="$_bad not-two-noderecord-gettables"
	[ -n "$rget" ] || _bad="$_bad no-paired-get-at-b3/2"
	[ -n "$rresp" ] || _bad="$_bad no-paired-answer-at-a3/2"
	[ -n "$sa2" ] || _bad="$_bad no-pathrecord-gets-from-b3/2"
else
	m=$(capf "$get" mad)
	chk get-grh-sgid "$(gid_hex "$(capf "$get" sgid)")" "$(port_gidhex a3/1)"
	chk get-attr-offset "$(mad "$m" 44 2)" 0000
	chk get-comp-mask "$(mad "$m" 48 8)" 0000000000000000
	chk get-port-gid "$(mad "$m" 56 16)" "$(port_gidhex b3/1)"
	m=$(capf "$nr1" mad)
	chk nr1-mask "$(mad "$m" 48 8)" 0000000000000100
	chk nr1-portguid "$(mad "$m" 80 8)" "$(port_gidhex b3/1 | cut -c17-32)"
	m=$(capf "$nr2" mad)
	chk nr2-mask "$(mad "$m" 48 8)" 0000000000000080
	chk nr2-nodeguid "$(mad "$m" 72 8)" "$(port_gidhex b3/1 | cut -c17-30)00"
	m=$(capf "$resp" mad)
	chk_num resp-tid "$(capf "$resp" tid)" "$(capf "$get" tid)"
	chk resp-port-gid "$(mad "$m" 56 16)" "$(port_gidhex b3/1)"
	chk resp-node-guid "$(mad "$m" 72 8)" "$(port_gidhex b3/1 | cut -c17-30)00"
	chk_num resp-num-ports "$(madn "$m" 80 1)" 2
	chk resp-gid0 "$(mad "$m" 88 16)" "$(port_gidhex b3/1)"
	chk resp-gid1 "$(mad "$m" 104 16)" "$(port_gidhex b3/2)"
	m=$(capf "$rget" mad)
	chk ret-grh-sgid "$(gid_hex "$(capf "$rget" sgid)")" "$(port_gidhex a3/2)"
	chk ret-dgid "$(mad "$m" 64 16)" "$(port_gidhex a3/2)"
	chk ret-sgid "$(mad "$m" 80 16)" "$(port_gidhex b3/2)"
	# SGID, DGID and the primary's P_Key (0xffff, the connection's)
	chk ret-comp-mask "$(mad "$m" 48 8)" 000000000000200c
	chk ret-pkey "$(mad "$m" 106 2)" ffff
	chk_num ret-lrh-slid "$(capf "$rget" slid)" "$RABLID"
	m=$(capf "$sa1" mad)
	chk sa1-mask "$(mad "$m" 48 8)" 000000000000200c
	chk sa1-pkey "$(mad "$m" 106 2)" ffff
	chk sa1-sgid "$(mad "$m" 80 16)" "$(port_gidhex b3/2)"
	m=$(capf "$sa2" mad)
	chk sa2-mask "$(mad "$m" 48 8)" 0000000000002030
	chk_num sa2-dlid "$(madn "$m" 96 2)" "$RABLID"
	chk_num sa2-slid "$(madn "$m" 98 2)" "$B32"
	m=$(capf "$rresp" mad)
	chk_num rresp-tid "$(capf "$rresp" tid)" "$(capf "$rget" tid)"
	chk_num rresp-dlid "$(madn "$m" 96 2)" "$RABLID"
	chk_num rresp-slid "$(madn "$m" 98 2)" "$B32"
fi
grep -E "class=0x(0d|03) " $C | sed 's/ mad=.*//' >/tmp/alt-both.mads
chk_end alt:wire /tmp/alt-both.mads

# ---- an explicit service: b3/1 answers for b3's other port too --------------------
# The PairedPathRecord Gets go to the service's GID through each
# candidate's forward router (its DLID), not through a route of their own.
alt svc a3/1 b3/1 "service=$(port_gid b3/1)"
check_alt svc a3/2 b3/2
sget=$(grep " at=b3/1 .* class=0x0d cv=1 method=0x01 .* attr=0xff02 .* verdict=delivered " /tmp/alt-svc.cap |
	while read -r l; do [ "$(mad "$(capf "$l" mad)" 80 16)" != "$(port_gidhex b3/2)" ] || echo "$l"; done | head -n 1)
chk_begin
if [ -z "$sget" ]; then
	_bad="no-paired-get-for-b3/2-at-b3/1"
else
	chk grh-dgid "$(gid_hex "$(capf "$sget" dgid)")" "$(port_gidhex b3/1)"
	chk_num lrh-slid "$(capf "$sget" slid)" "$RABLID"
fi
[ "$(grep -c " at=b3/2 .* class=0x0d " /tmp/alt-svc.cap)" -eq 0 ] || _bad="$_bad a-get-at-b3/2"
chk_end alt:service-through-forward-router /tmp/alt-svc.cap

# ---- one end with another port ------------------------------------------------
# a1 has one port: another port of the remote node, found through b3's
# service by its node GUID.
alt remote a1/1 b3/1
check_alt remote a1/1 b3/2
# b1 has one port: another local port.
alt local a3/1 b1/1
check_alt local a3/2 b1/1

# ---- none exists -----------------------------------------------------------------
n0=$(cnt a1/1 alt_none) s0=$(cnt a1/1 client_sent)
alt none a1/1 b1/1
chk_begin
chk status "$(af none status)" -61
chk_num alt-none $(($(cnt a1/1 alt_none) - n0)) 1
# The primary's return query and the NodePorts Get (sent twice: without
# a1's key, answered BUSY with it, then with it), no other remote query.
chk_num sent $(($(cnt a1/1 client_sent) - s0)) 3
chk_num nodeports-one-port "$(grep " at=a1/1 .* class=0x0d .* method=0x81 status=0x0000 .* attr=0xff01 " /tmp/alt-none.cap | while read -r l; do madn "$(capf "$l" mad)" 80 1; done)" 1
chk_end alt:none-when-one-port-each /tmp/alt-none.out /tmp/alt-none.cap

# b3 without its service: the NodePorts Get is refused at once
# (UNSUPPORTED) and no return path can be had from b3/1 to another local
# port: nothing.
echo 0 >"$S/$(dev_of b3/1)/1/responder"
echo 0 >"$S/$(dev_of b3/1)/2/responder"
alt nosvc a3/1 b3/1
echo 1 >"$S/$(dev_of b3/1)/1/responder"
echo 1 >"$S/$(dev_of b3/1)/2/responder"
chk_begin
chk status "$(af nosvc status)" -61
grep -q " at=a3/1 .* class=0x0d .* method=0x81 status=0x000c .* attr=0xff01 " /tmp/alt-nosvc.cap ||
	_bad="$_bad no-unsupported-nodeports-answer"
chk_end alt:none-without-remote-service /tmp/alt-nosvc.out /tmp/alt-nosvc.cap

# ---- malformed NodePorts requests, crafted with the query tool -------------------
# Each refused by b3/1 with its status and counter (a1 across the
# routers; b1, on b3's own subnet, for no-grh and same-subnet).
# The tool sends a PathRecord-shaped body: bytes 56-71 (the PortGID) are
# its ServiceID and half its DGID, a GID of no subnet.
Q=/ibr/bin/ib-remote-sa-query
# refused KIND ATTR TARGET: each line of stdin, "NAME FROM COUNTER STATUS
# ARGS...", is a request of attribute ATTR from host port FROM (ARGS and
# TARGET: the tool's), which b3/1 must refuse with STATUS and count once
# in COUNTER.
refused() {
	while read -r name from counter status args; do
		c0=$(cnt b3/1 "$counter")
		# shellcheck disable=SC2086
		timeout 30 "$Q" --kv -C "$(dev_of "$from")" -P "${from#*/}" --attr "$2" \
			$args $3 >"/tmp/alt-tool-$1-$name.out" 2>&1
		chk_begin
		_got=$(sed -n 's/^status=//p' "/tmp/alt-tool-$1-$name.out" | head -n 1)
		# none: dropped unanswered (the tool times out)
		if [ "$status" = none ]; then
			chk status "$_got" none
		else
			chk_num status "$_got" "$status"
		fi
		chk_num "$counter" $(($(cnt b3/1 "$counter") - c0)) 1
		chk_end "malformed:$1-$name" "/tmp/alt-tool-$1-$name.out"
	done
}
if [ -x "$Q" ]; then
	m0=$(dmesg_mark)
	refused nodeports 0xff01 "$(port_gid b3/1)" <<-EOF
	attr-offset a1/1 rej_malformed none --retries 0 --timeout 1500 --attr-offset 8 --comp-mask 0
	comp-mask a1/1 rej_bad_mask none --retries 0 --timeout 1500 --attr-offset 0 --comp-mask 0xc
	not-served a1/1 rej_not_served 0x0500 --attr-offset 0 --comp-mask 0
	no-grh b1/1 rej_no_grh none --retries 0 --timeout 1500 --attr-offset 0 --comp-mask 0 --no-grh
	same-subnet b1/1 rej_not_remote 0x0200 --attr-offset 0 --comp-mask 0
	EOF
	dmesg_since "$m0" >/tmp/alt-malformed.dmesg
	chk_begin
	grep -q 'ib_remote_sa: port 1: request from LID .* dropped: AttributeOffset is not 0' /tmp/alt-malformed.dmesg ||
		_bad="$_bad no-log-line-for-attr-offset"
	[ -z "$(trouble /tmp/alt-malformed.dmesg)" ] || _bad="$_bad kernel-trouble"
	chk_end malformed:nodeports-logged /tmp/alt-malformed.dmesg
else
	t_skip "$T:malformed" "ib-remote-sa-query not in the image (make tools)"
fi

# ---- PairedPathRecord through each router, crafted with the query tool ----------
# From a1 to b3/1's service: through A's SA's router (RA) the answer is
# B's SA's record with RA's port on B as DLID (two SA queries, the second
# from b3/1 to that port); sent to B's SA's own router (RB, --dlid its
# port on A) it is B's SA's record unchanged (one SA query).
# kv NAME KEY: a field of the tool's --kv output.
kv() {
	sed -n "s/^$2=//p" "/tmp/alt-tool-$1.out" | head -n 1
}
paired() { # NAME ARGS...: a PairedPathRecord Get from a1/1 for b3/1
	_n=$1
	shift
	echo clear >$D/ctl
	timeout 30 "$Q" --kv -C "$(dev_of a1/1)" -P 1 --attr 0xff02 "$@" \
		"$(port_gid b3/1)" >"/tmp/alt-tool-$_n.out" 2>&1
	cat $D/capture >"/tmp/alt-tool-$_n.cap"
}
if [ -x "$Q" ]; then
	B31=$(topo_port b3/1 lid)
	q0=$(cnt b3/1 sa_queries) p0=$(cnt b3/1 paired) pr0=$(cnt b3/1 paired_rerouted)
	paired via-ra
	sa2=$(grep " slid=$B31 .* class=0x03 .* method=0x01 .* attr=0x0035 .* verdict=sa " /tmp/alt-tool-via-ra.cap | sed -n 2p)
	get=$(grep " at=b3/1 .* class=0x0d cv=1 method=0x01 .* attr=0xff02 .* verdict=delivered " /tmp/alt-tool-via-ra.cap | head -n 1)
	chk_begin
	chk_num status "$(kv via-ra status)" 0
	chk_num dlid "$(kv via-ra dlid)" "$RABLID"
	chk_num slid "$(kv via-ra slid)" "$B31"
	chk_num sl "$(kv via-ra sl)" "$(max "$(prop b3/1 sl)" "$(prop "$RAB" sl)")"
	chk_num mtu "$(kv via-ra mtu)" "$(min "$(prop b3/1 mtu)" "$(prop "$RAB" mtu)")"
	chk_num rate "$(kv via-ra rate)" "$(rate_min "$(prop b3/1 rate)" "$(prop "$RAB" rate)")"
	chk_num lrh-slid "$(capf "$get" slid)" "$RABLID"
	chk_num sa-queries $(($(cnt b3/1 sa_queries) - q0)) 2
	chk_num paired $(($(cnt b3/1 paired) - p0)) 1
	chk_num paired-rerouted $(($(cnt b3/1 paired_rerouted) - pr0)) 1
	chk_num sa2-dlid "$(madn "$(capf "$sa2" mad)" 96 2)" "$RABLID"
	chk_end paired:through-other-router-two-sa-queries /tmp/alt-tool-via-ra.out /tmp/alt-tool-via-ra.cap

	q0=$(cnt b3/1 sa_queries) p0=$(cnt b3/1 paired) pr0=$(cnt b3/1 paired_rerouted)
	paired via-rb --dlid "$RBALID"
	get=$(grep " at=b3/1 .* class=0x0d cv=1 method=0x01 .* attr=0xff02 .* verdict=delivered " /tmp/alt-tool-via-rb.cap | head -n 1)
	chk_begin
	chk_num status "$(kv via-rb status)" 0
	chk_num dlid "$(kv via-rb dlid)" "$RBLID"
	chk_num slid "$(kv via-rb slid)" "$B31"
	chk_num lrh-slid "$(capf "$get" slid)" "$RBLID"
	chk_num sa-queries $(($(cnt b3/1 sa_queries) - q0)) 1
	chk_num sa-gets "$(grep -c " slid=$B31 .* class=0x03 .* method=0x01 .* attr=0x0035 .* verdict=sa " /tmp/alt-tool-via-rb.cap)" 1
	chk_num paired $(($(cnt b3/1 paired) - p0)) 1
	chk_num paired-rerouted $(($(cnt b3/1 paired_rerouted) - pr0)) 0
	chk_end paired:through-sa-router-one-sa-query /tmp/alt-tool-via-rb.out /tmp/alt-tool-via-rb.cap

	# Malformed PairedPathRecord Gets: the PathRecord rules, each refused
	# by b3/1 with its status and counter.
	m0=$(dmesg_mark)
	refused paired 0xff02 "" <<-EOF
	attr-offset a1/1 rej_malformed none --retries 0 --timeout 1500 --attr-offset 0 $(port_gid b3/1)
	no-sgid a1/1 rej_bad_mask none --retries 0 --timeout 1500 --comp-mask 0x4 $(port_gid b3/1)
	dlid-component a1/1 rej_bad_mask none --retries 0 --timeout 1500 --comp-mask 0x1c $(port_gid b3/1)
	not-requester a1/1 rej_not_requester 0x0200 --dgid $(port_gid a2/1) $(port_gid b3/1)
	not-served a1/1 rej_not_served 0x0500 --service $(port_gid b3/1) $(port_gid b1/1)
	no-grh b1/1 rej_no_grh none --retries 0 --timeout 1500 --no-grh --dlid $(topo_port b3/1 lid) $(port_gid b3/1)
	same-subnet b1/1 rej_not_remote 0x0200 $(port_gid b3/1)
	EOF
	dmesg_since "$m0" >/tmp/alt-paired-malformed.dmesg
	chk_begin
	grep -q 'ib_remote_sa: port 1: request from LID .* dropped: AttributeOffset is not 8' /tmp/alt-paired-malformed.dmesg ||
		_bad="$_bad no-log-line-for-attr-offset"
	[ -z "$(trouble /tmp/alt-paired-malformed.dmesg)" ] || _bad="$_bad kernel-trouble"
	chk_end malformed:paired-logged /tmp/alt-paired-malformed.dmesg
else
	t_skip "$T:paired" "ib-remote-sa-query not in the image (make tools)"
fi

# ---- a responder without PairedPathRecord -----------------------------------------
# b3 as a responder that predates the attribute (ib_remote_sa paired=N):
# every candidate's PairedPathRecord Get is answered 0x000c, none is
# taken from a PathRecord Get instead: no alternate, each skip counted.
PAIREDP=/sys/module/ib_remote_sa/parameters/paired
u0=$(cnt a3/1 alt_unpaired) ba0=$(( $(cnt b3/1 rej_bad_attr) + $(cnt b3/2 rej_bad_attr) ))
echo N >$PAIREDP
alt unpaired a3/1 b3/1
echo Y >$PAIREDP
nun=$(grep -c " at=a3/[12] .* class=0x0d .* method=0x81 status=0x000c .* attr=0xff02 " /tmp/alt-unpaired.cap)
chk_begin
chk status "$(af unpaired status)" -61
[ "$nun" -ge 1 ] || _bad="$_bad no-unsupported-paired-answer"
chk_num alt-unpaired $(($(cnt a3/1 alt_unpaired) - u0)) "$nun"
chk_num b3-rej-bad-attr $(( $(cnt b3/1 rej_bad_attr) + $(cnt b3/2 rej_bad_attr) - ba0 )) "$nun"
[ "$(grep -c " at=b3/[12] .* class=0x0d cv=1 method=0x01 .* attr=0x0035 " /tmp/alt-unpaired.cap)" -eq 1 ] ||
	_bad="$_bad not-only-the-primary's-pathrecord-get"
chk_end paired:old-responder-no-alternate /tmp/alt-unpaired.out /tmp/alt-unpaired.cap

# ---- rc: the discovered alternate under ib_cm, migrated ---------------------------
# a3/1 -> b3/1 through ib_cm (ib-routed's, with return records), the
# primary's return through its forward router, the alternate a3/2 ->
# b3/2 as discovered in "both": its return record's DLID once as found
# (paired), once B's SA's own (the unpaired record the primary's
# PathRecord Get got in "both"). After a requested migration the paired
# alternate carries a SEND; the unpaired one loses it: the passive QP
# takes packets only from the router its alternate names.
if has_mod simfab_rc_test; then
	rcdev() { echo "$(dev_of "$1"):${1#*/}"; }
	# rcv NAME WORDS KEY: a value of a "# CASE WORDS ..." line.
	rcv() {
		sed -n "s|^# [^ ]* $2 \(.* \)*$3=\([^ ]*\).*|\2|p" "/tmp/alt-rc-$1.ktap" | head -n 1
	}
	rc_alt() { # NAME ALT_RET_DLID
		echo clear >$D/ctl
		_m=$(dmesg_mark)
		timeout 120 modprobe simfab_rc_test cases=alt-routed "act=$(rcdev a3/1)" \
			"pas=$(rcdev b3/1)" "act_alt=$(rcdev a3/2)" "pas_alt=$(rcdev b3/2)" \
			ret=1 "ret_dlid=$RABLID" "alt_ret_dlid=$2" retry=3 >"/tmp/alt-rc-$1.err" 2>&1
		rmmod simfab_rc_test 2>>"/tmp/alt-rc-$1.err"
		dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"/tmp/alt-rc-$1.ktap"
		cat $D/capture >"/tmp/alt-rc-$1.cap"
	}
	PAIRED_RET=$(af both ret_dlid)
	UNPAIRED_RET=$(sed -n 's/^primary .*ret_dlid=\([0-9]*\).*/\1/p' /tmp/alt-both.out)
	B32=$(topo_port b3/2 lid)
	rc_alt paired "$PAIRED_RET"
	chk_begin
	grep -q '^ok [0-9]* simfab_rc_alt-routed_connect' /tmp/alt-rc-paired.ktap || _bad="$_bad no-connection"
	chk_num pas-alt-dlid "$(rcv paired pas.before alt_dlid)" "$PAIRED_RET"
	chk_num send-status "$(rcv paired 'after send' status)" 0
	chk_num pas-mig "$(rcv paired pas.after mig)" 0
	chk_num pas-dlid "$(rcv paired pas.after dlid)" "$PAIRED_RET"
	[ "$(grep -cE " at=b3/2 slid=$RABLID dlid=$B32 .* rc op=0x04 .*mig=1 .*verdict=delivered" /tmp/alt-rc-paired.cap)" -ge 1 ] ||
		_bad="$_bad no-send-delivered-at-b3/2"
	[ "$(grep -c 'verdict=drop-path' /tmp/alt-rc-paired.cap)" -eq 0 ] || _bad="$_bad drop-path"
	chk_end rc:paired-alternate-carries-traffic /tmp/alt-rc-paired.ktap /tmp/alt-rc-paired.err
	chk_begin
	chk_ne unpaired-ret "$UNPAIRED_RET" "$PAIRED_RET"
	rc_alt unpaired "$UNPAIRED_RET"
	chk_ne send-status "$(rcv unpaired 'after send' status)" 0
	[ "$(grep -c 'verdict=drop-path' /tmp/alt-rc-unpaired.cap)" -ge 1 ] || _bad="$_bad no-drop-path"
	chk_end rc:unpaired-alternate-drops-traffic /tmp/alt-rc-unpaired.ktap
else
	t_skip "$T:rc" "simfab_rc_test.ko not in the image (tests/simfab/build)"
fi

# ---- no worker waits for a MAD (issue 22 item 4) ---------------------------------
# b3/2's service silent: the discovery's return queries to it (the first
# two pairs) time out, 3 s a try, two tries each. 2 s in, the kernel's
# stacks: the test module's load waits for the callback (a stack with
# [simfab_rsa_test] in it: stacks can be read), and no thread sleeps in
# ib_remote_sa's discovery (rsa_alt_*): each query's completion queues
# the work item that sends the next one.
echo "drop class=0x0d to=b3/2" >$D/ctl
alt silent-wait a3/1 b3/1 &
apid=$!
sleep 2
control=$(grep -l '\[simfab_rsa_test\]' /proc/[0-9]*/stack 2>/dev/null | wc -l)
waiting=$(grep -l 'rsa_alt_' /proc/[0-9]*/stack 2>/dev/null | wc -l)
grep -H 'rsa_alt_' /proc/[0-9]*/stack 2>/dev/null >/tmp/alt-silent-wait.stacks
wait $apid
echo nofault >$D/ctl
chk_begin
[ "$control" -ge 1 ] || _bad="$_bad no-stack-shows-the-test-module"
chk_num threads-in-discovery "$waiting" 0
[ -n "$(af silent-wait status)" ] || _bad="$_bad no-callback"
chk_end alt:no-worker-waits-for-a-mad /tmp/alt-silent-wait.stacks /tmp/alt-silent-wait.out

# ---- cancel ----------------------------------------------------------------------
# The NodePorts Get is held at b3/1 for 1.5 s, so the discovery is surely
# in flight when it is canceled.
echo "delay ms=1500 class=0x0d to=b3/1" >$D/ctl
alt cancel a3/1 b3/1 cancel=1
echo nofault >$D/ctl
chk_begin
chk status "$(af cancel status)" -4
chk_end alt:cancel /tmp/alt-cancel.out

echo "$TTL0" >$TTLP
# ib_remote_sa goes too, with what another test left using it (rdma_cm).
sf_unload_rsa
rc=$?
chk_begin
chk rmmod "$rc" 0
chk_end alt:unload

chk_dmesg "$T" "$mark"
t_summary
