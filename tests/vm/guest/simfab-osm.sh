#!/bin/sh
# shellcheck shell=sh
# simfab's router_choice=opensm (tests/simfab/README.md "OpenSM's router
# choice"): routed.topo loaded with it; A's SA answers a1 -> b1 as OpenSM's
# find_router() does: the first matching route only (A's names r1 first:
# r1 alone in this mode), a router the SM does not know (down as of the
# last sweep) ERR_REQ_INVALID_GID (status 0x0500), and a router's down/up
# seen by the SA only at a "sweep" (debugfs ctl).
#
# osm:first-route        DLID = r1's port on A
# osm:down-no-sweep      r1 down, no sweep: the SA still names r1
# osm:down-sweep         after sweep: ERR_REQ_INVALID_GID, not r2
# osm:up-no-sweep        r1 up, no sweep: still ERR_REQ_INVALID_GID
# osm:up-sweep           after sweep: r1 again
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
if sf_load_topo -o router_choice=opensm "$TOPOFILE" rdma_ucm &&
	[ "$(cat /sys/module/simfab/parameters/router_choice)" = opensm ]; then
	t_pass $T:load
else
	t_fail $T:load "modprobe simfab router_choice=opensm failed"
	t_summary
	exit 0
fi
A=$(topo_host a1 subnet)
R1LID=$(topo_port "$(rport r1 "$A")" lid)

# resolve NAME PORT: a1 -> b1's PathRecord from A's SA into /tmp/sfo-NAME.out
resolve() {
	echo clear >$D/ctl
	timeout 20 "$CM" 'id x ps=ib' "bind gid=$(port_gid a1/1)" \
		"resolve-addr dst-gid=$(port_gid b1/1) dst-port=$2" 'wait ADDR_RESOLVED' \
		'resolve-route timeout=3000' 'wait ROUTE_RESOLVED status=any' 'query-path' \
		>"/tmp/sfo-$1.out" 2>&1
}
# via_r1 NAME / invalid NAME: the check's verdict
via_r1() {
	chk_begin
	chk_num dlid "$(out "/tmp/sfo-$1.out" 'path[0].dlid')" "$R1LID"
	chk_end "$1" "/tmp/sfo-$1.out"
}
invalid() {
	chk_begin
	grep -q 'method=0x81 status=0x0500 ' $D/capture || _bad="no SA status 0x0500"
	[ -z "$(out "/tmp/sfo-$1.out" 'path[0].dlid')" ] || _bad="$_bad a path"
	chk_end "$1" "/tmp/sfo-$1.out" $D/capture
}

resolve first-route 7301
via_r1 first-route
echo "router r1 down" >$D/ctl
resolve down-no-sweep 7302
via_r1 down-no-sweep
echo sweep >$D/ctl
resolve down-sweep 7303
invalid down-sweep
echo "router r1 up" >$D/ctl
resolve up-no-sweep 7304
invalid up-no-sweep
echo sweep >$D/ctl
resolve up-sweep 7305
via_r1 up-sweep

rmmod simfab
modprobe simfab || t_fail $T:reload "modprobe simfab (default topology) failed"
t_summary
