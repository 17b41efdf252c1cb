#!/bin/sh
# shellcheck shell=sh
# Several GIDs per port on the routed topology (tests/simfab/topology/
# routed.topo) with simfab's gids=2: GID index 1 of every port is an alias
# GUID, as an SM assigns alias GUIDs to SR-IOV virtual functions through
# GUIDInfo (IBA 14.2.5.13). A connection whose id is bound to GID index 1
# must ask the remote subnet for its return record as that GID: the
# responder answers only for the GRH's SGID (docs/remote-sa-protocol.md,
# check 8), and an HCA sends the GID its AH's sgid_index names.
#
# model:    the GID table (GID 0 the port GUID, GID 1 the alias from debugfs
#           topology), and b1's SA answering a PathRecord asked by the
#           alias GID with that GID.
# gid1:     rdma_ucm AF_IB a1 GID 1 -> b1 across the router: the remote
#           SA Get leaves a1 with the alias as its GRH SGID and asks about
#           it, b1's service answers (status 0), the REQ carries the return
#           record (Primary Remote Port LID = b1's LID, not permissive) and
#           a1's alias as its Primary Local Port GID, the connection is
#           made and closed.
# gid0:     the same from a1's GID 0, as before.
#
# Skips without simfab.ko, simfab-cm, the routed topology or ib_remote_sa.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-gids
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! has_mod simfab || [ ! -x "$CM" ] || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, simfab-cm or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
if ! has_mod ib_remote_sa; then
	t_skip $T "ib_remote_sa.ko not in the image (the series has no ib_remote_sa?)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
TOPO=/tmp/sfg.topo
if sf_load_topo -o gids=2 $TOPOFILE rdma_ucm &&
	[ "$(cat /sys/module/simfab/parameters/gids)" = 2 ]; then
	t_pass $T:load
else
	t_fail $T:load "modprobe simfab gids=2 with $TOPOFILE failed"
	t_summary
	exit 0
fi

# alias_gidhex H/P: the port's GID index 1 as 32 hex digits.
alias_gidhex() {
	sed -n "s|^gid port $1 index=1 gid=\([^ ]*\).*|\1|p" "$TOPO" | tr -d :
}
hex_text() {
	echo "$1" | sed 's/..../&:/g; s/:$//'
}
AP=a1/1 BP=b1/1
ADEV=$(topo_host a1 dev)
BLID=$(topo_port $BP lid)
A1=$(alias_gidhex $AP) A0=$(port_gidhex $AP)

# ---- model -----------------------------------------------------------------------
chk_begin
[ -n "$A1" ] || _bad="$_bad no-alias-in-topology"
chk_ne alias-differs "0x$(echo "$A1" | cut -c17-32)" "0x$(echo "$A0" | cut -c17-32)"
chk gid0 "$(gid_hex "$(cat "/sys/class/infiniband/$ADEV/ports/1/gids/0")")" "$A0"
chk gid1 "$(gid_hex "$(cat "/sys/class/infiniband/$ADEV/ports/1/gids/1")")" "$A1"
chk_end model:gid-table $TOPO

# b1 (SA of subnet B) asked for the path b1 -> b1's alias answers with the
# alias as DGID (OpenSM pr_rcv_build_pr takes the requested alias GUIDs).
B1=$(alias_gidhex $BP)
o=/tmp/sfg-pr.out
timeout 30 "$CM" 'timeout 5000' 'id q ps=ib' "bind gid=$(port_gid $BP)" \
	"resolve-addr dst-gid=$(hex_text "$B1") timeout=3000" 'wait ADDR_RESOLVED id=q' \
	'resolve-route timeout=3000' 'wait ROUTE_RESOLVED id=q' 'tag q' 'query-path' >$o 2>$o.err
rc=$?
chk_begin
chk_num simfab-cm "$rc" 0
chk pr-dgid "$(gid_hex "$(out $o 'q.path[0].dgid')")" "$B1"
chk pr-sgid "$(gid_hex "$(out $o 'q.path[0].sgid')")" "$(port_gidhex $BP)"
chk_end model:sa-answers-alias $o $o.err

# ---- a connection from GID 1 and from GID 0 ------------------------------------------
# conn NAME SRC-GID-HEX PORT: a1 (bound to SRC) -> b1:PORT through rdma_ucm
# and the remote SA's return record; the checks on the capture.
conn() {
	_n=$1 _src=$2 _port=$3
	_o=/tmp/sfg-$_n.out _cap=/tmp/sfg-$_n.cap
	echo clear >$D/ctl
	timeout 90 "$CM" 'timeout 15000' \
		'id srv ps=ib' "bind gid=$(port_gid $BP) port=$_port" 'listen backlog=4' \
		'id cli ps=ib' "bind gid=$(hex_text "$_src")" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=$_port timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED id=cli' \
		"connect qpn=0x5a1" \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' "accept qpn=0x5b1" \
		'tag cli' 'wait CONNECT_RESPONSE id=cli' 'accept id=cli' \
		'tag conn' 'wait ESTABLISHED id=conn' 'tag' \
		'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' >"$_o" 2>"$_o.err"
	_rc=$?
	cat $D/capture >"$_cap"
	_get=$(grep " at=$BP .* class=0x0d cv=1 method=0x01 .* attr=0x0035 .* verdict=delivered " "$_cap" | head -n 1)
	_ans=$(grep " at=$AP .* class=0x0d cv=1 method=0x81 status=0x0000 .* attr=0x0035 .* verdict=delivered " "$_cap" | head -n 1)
	_req=$(grep " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " "$_cap" | head -n 1)
	chk_begin
	chk_num simfab-cm "$_rc" 0
	if [ -z "$_get" ]; then
		_bad="$_bad no-remote-SA-Get-at-$BP"
	else
		# the GRH's SGID, and the record asked about (its DGID: the
		# requester, SA header + 24, MAD byte 56 + 8)
		chk get-grh-sgid "$(gid_hex "$(capf "$_get" sgid)")" "$_src"
		chk get-rec-dgid "$(mad "$(capf "$_get" mad)" 64 16)" "$_src"
	fi
	[ -n "$_ans" ] || _bad="$_bad no-answer-status-0-at-$AP"
	if [ -z "$_req" ]; then
		_bad="$_bad no-REQ-at-$BP"
	else
		_m=$(capf "$_req" mad)
		chk_num req-remote-lid "$(madn "$_m" 78 2)" "$BLID"
		chk req-local-gid "$(mad "$_m" 80 16)" "$_src"
		chk req-grh-sgid "$(gid_hex "$(capf "$_req" sgid)")" "$_src"
	fi
	chk_end "$_n:return-record-and-connection" "$_o" "$_o.err" "$_cap"
}
conn gid1 "$A1" 7521
conn gid0 "$A0" 7522

rmmod simfab
chk_begin
dmesg_since "$mark" | grep -E "WARNING:|BUG:|Oops|Call Trace" >/tmp/sfg-warn.log && _bad="$_bad kernel-warnings"
chk_end dmesg /tmp/sfg-warn.log
t_summary
