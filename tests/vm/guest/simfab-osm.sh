#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 13 (measured under TCG; tests/vm/run --boots balances by it)
# simfab's router choice (tests/simfab/README.md "OpenSM's router choice")
# on routed.topo. Its default, router_choice=opensm, answers as OpenSM's
# find_router() does: the first matching prefix route only, with its one
# router; "*" (GUID 0) the lowest-GUID router the SM knows; a named router
# the SM does not know ERR_REQ_INVALID_GID (status 0x0500), not the next
# line; a router's down/up seen only at a "sweep" (debugfs ctl). The
# instant fallback of router_choice=first-present is not OpenSM's and is
# only what that named mode does.
#
# osm:default             router_choice is opensm without a parameter
# osm:star-lowest-guid    A's "*" route to B: r1 (the lower GUIDs)
# osm:star-down-no-sweep  r1 down, no sweep: still r1
# osm:star-down-sweep     after a sweep: r2, the lowest GUID the SM knows
# osm:star-up-no-sweep    r1 up, no sweep: still r2
# osm:star-up-sweep       after a sweep: r1 again
# osm:star-partition      r1's port on A cut off from A's SM (ctl
#                         partition): r2, at once (as a host's port)
# osm:named               B's route to A names r2: r2
# osm:named-down-no-sweep r2 down, no sweep: still r2
# osm:named-down-sweep    after a sweep: ERR_REQ_INVALID_GID, not r1 (the
#                         "*" line after it)
# osm:named-up-no-sweep   r2 up, no sweep: still ERR_REQ_INVALID_GID
# osm:named-up-sweep      after a sweep: r2 again
# osm:list-refused        a route naming two routers does not load (an
#                         OpenSM prefix route has one router GUID)
# osm:first-present-*     router_choice=first-present with that list:
#                         r2 down, no sweep: r1 at once (NOT OpenSM)
#
# Skips without simfab.ko, simfab-cm or the routed topology in the image.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-osm
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! grep -q "/simfab\.ko[.a-z]*:" "$MODDIR/modules.dep" ||
	[ ! -x "$CM" ] || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, simfab-cm or $TOPOFILE not in the image"
	t_summary
	exit 0
fi

TOPO=/tmp/sfo.topo
if sf_load_topo "$TOPOFILE" rdma_ucm &&
	[ "$(cat /sys/module/simfab/parameters/router_choice)" = opensm ]; then
	t_pass $T:default
else
	t_fail $T:default "simfab did not load routed.topo with router_choice=opensm by default"
	t_summary
	exit 0
fi
A=$(topo_host a1 subnet)
B=$(topo_host b1 subnet)

# rlid R SUBNET: router R's LID on SUBNET; rguid R SUBNET: its port GUID
rlid() { topo_port "$(rport "$1" "$2")" lid; }
rguid() { topo_port "$(rport "$1" "$2")" guid; }
# resolve NAME FROM TO PORT: FROM -> TO's PathRecord from FROM's SA into
# /tmp/sfo-NAME.out
resolve() {
	echo clear >$D/ctl
	timeout 20 "$CM" 'id x ps=ib' "bind gid=$(port_gid "$2")" \
		"resolve-addr dst-gid=$(port_gid "$3") dst-port=$4" 'wait ADDR_RESOLVED' \
		'resolve-route timeout=3000' 'wait ROUTE_RESOLVED status=any' 'query-path' \
		>"/tmp/sfo-$1.out" 2>&1
}
# via NAME R SUBNET: the path goes to router R's port on SUBNET
via() {
	chk_begin
	chk_num dlid "$(out "/tmp/sfo-$1.out" 'path[0].dlid')" "$(rlid "$2" "$3")"
	chk_end "$1" "/tmp/sfo-$1.out"
}
# invalid NAME: the SA answered ERR_REQ_INVALID_GID, no path
invalid() {
	chk_begin
	grep -q 'method=0x81 status=0x0500 ' $D/capture || _bad="no SA status 0x0500"
	[ -z "$(out "/tmp/sfo-$1.out" 'path[0].dlid')" ] || _bad="$_bad a path"
	chk_end "$1" "/tmp/sfo-$1.out" $D/capture
}

# A's "*" route: OpenSM's rtr_guid_tbl head, the lowest GUID. r1 has the
# lower GUIDs in routed.topo (else the checks below prove nothing).
if [ $(($(rguid r1 "$A"))) -ge $(($(rguid r2 "$A"))) ]; then
	t_fail $T:star-topology "r1's GUID on $A is not below r2's"
fi
# cycle NAME R SRC DST PORT SUBNET WANT x4: R down, a sweep, R up, a
# sweep; after each step SRC -> DST is resolved (ports PORT+1 ...) and
# checked as NAME-STEP: WANT is the router the path goes to on SUBNET, or
# "invalid" (ERR_REQ_INVALID_GID).
cycle() {
	_cn=$1 _cr=$2 _cs=$3 _cd=$4 _cp=$5 _csub=$6
	shift 6
	for _cstep in "down-no-sweep:router $_cr down" "down-sweep:sweep" \
		"up-no-sweep:router $_cr up" "up-sweep:sweep"; do
		echo "${_cstep#*:}" >$D/ctl
		_cp=$((_cp + 1))
		resolve "$_cn-${_cstep%%:*}" "$_cs" "$_cd" "$_cp"
		if [ "$1" = invalid ]; then
			invalid "$_cn-${_cstep%%:*}"
		else
			via "$_cn-${_cstep%%:*}" "$1" "$_csub"
		fi
		shift
	done
}

resolve star-lowest-guid a1/1 b1/1 7301
via star-lowest-guid r1 "$A"
cycle star r1 a1/1 b1/1 7301 "$A" r1 r2 r2 r1
echo "partition $A r1/1" >$D/ctl
resolve star-partition a1/1 b1/1 7306
via star-partition r2 "$A"
echo "heal $A" >$D/ctl

# B's route to A names r2; a "*" line (r1) follows it.
resolve named b1/1 a1/1 7311
via named r2 "$B"
cycle named r2 b1/1 a1/1 7311 "$B" r2 invalid invalid r2

# A list of routers is first-present's syntax; OpenSM's route has one.
LIST=/tmp/sfo-list.topo
sed 's/route B prefix=0xfec0000000000a00 via=r2/&,r1/' "$TOPOFILE" >$LIST
if grep -q 'via=r2,r1' $LIST && ! sf_load_topo $LIST 2>/dev/null &&
	[ ! -d /sys/module/simfab ]; then
	t_pass $T:list-refused
else
	t_fail $T:list-refused "routed.topo with via=r2,r1 loaded with router_choice=opensm"
fi
if sf_load_topo -o router_choice=first-present $LIST; then
	echo "router r2 down" >$D/ctl
	resolve first-present-down b1/1 a1/1 7321
	via first-present-down r1 "$B"
	echo "router r2 up" >$D/ctl
	resolve first-present-up b1/1 a1/1 7322
	via first-present-up r2 "$B"
else
	t_fail $T:first-present-load "routed.topo with via=r2,r1 did not load with router_choice=first-present"
fi

! mod_loaded simfab || rmmod simfab
modprobe simfab || t_fail $T:reload "modprobe simfab (default topology) failed"
t_summary
