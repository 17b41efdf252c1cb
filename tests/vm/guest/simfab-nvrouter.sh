#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 10 (measured under TCG; tests/vm/run --boots balances by it)
# Routers that take the DLID from the DGID (simfab router dlid=gid, as
# NVIDIA's SB7780/SB7880 IB routers do: "the DLID in the new LRH is built
# using simplified GID-to-LID mapping (LID = 16 LSB bits of GID)", with
# the SM giving every host an alias GID {prefix, 0, LID}; MLNX-OS user
# manual, "IB Router"). routed.topo with both routers dlid=gid, simfab
# gids=2 alias=lid (GID index 1 is that alias GID).
#
# nvrouter:alias-gid          a port's GID index 1 is {prefix, 0, LID}
# nvrouter:primary-gid-lost   a1 -> b1 addressed by the primary GIDs: what the
#                        router relays goes to DLID = the GUID's low 16
#                        bits on B and is dropped; no connection
# nvrouter:alias-connects     a1 -> b1 by their alias GIDs through rdma_cm with
#                        ib_remote_sa: ESTABLISHED, both REQ and REP
#                        routed to the right LIDs
#
# Skips without simfab.ko, ib_remote_sa.ko, simfab-cm or the topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-nvrouter
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! has_mod simfab || ! has_mod ib_remote_sa || [ ! -x "$CM" ] || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, ib_remote_sa.ko, simfab-cm or $TOPOFILE not in the image"
	t_summary
	exit 0
fi
NV=/tmp/nvr-topo
sed 's/router r1 A B slmap=0:4/& dlid=gid/; s/router r2 A B slmap=0:6,3:1/& dlid=gid/' "$TOPOFILE" >$NV
TOPO=/tmp/nvr.topo
if grep -q 'r2 A B slmap=0:6,3:1 dlid=gid' $NV &&
	sf_load_topo -o "gids=2 alias=lid" $NV ib_remote_sa rdma_ucm &&
	[ "$(grep -c '^router .* dlid=gid ' $TOPO)" -eq 2 ]; then
	t_pass $T:load
else
	t_fail $T:load "simfab with dlid=gid routers and alias=lid did not load"
	t_summary
	exit 0
fi
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)

# alias_hex H/P: the alias GID {prefix, 0, LID} as 32 hex digits;
# alias_gid H/P: as simfab-cm takes it
alias_hex() {
	printf '%s000000000000%04x\n' "$(port_gidhex "$1" | cut -c1-16)" "$(topo_port "$1" lid)"
}
alias_gid() {
	alias_hex "$1" | sed 's/..../&:/g; s/:$//'
}

dev=$(topo_host b1 dev)
got=$(tr -d : <"/sys/class/infiniband/$dev/ports/1/gids/1")
if [ "$got" = "$(alias_hex b1/1)" ]; then
	t_pass $T:alias-gid
else
	t_fail $T:alias-gid "b1's GID index 1 is $got, want $(alias_hex b1/1)"
fi

# conn NAME SRC-GID DST-GID PORT: a connection a1 -> b1 by those GIDs
conn() {
	echo clear >$D/ctl
	timeout 60 "$CM" 'timeout 8000' \
		'id srv ps=ib' "bind gid=$3 port=$4" 'listen backlog=4' \
		'id cli ps=ib' "bind gid=$2" \
		"resolve-addr dst-gid=$3 dst-port=$4 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=3000' 'wait ROUTE_RESOLVED id=cli status=any' \
		'connect qpn=0x111' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
		'wait CONNECT_RESPONSE id=cli' 'accept id=cli' 'wait ESTABLISHED id=conn' \
		'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' >"/tmp/nvr-$1.out" 2>&1
	cat $D/capture >"/tmp/nvr-$1.cap"
}
established() { grep -q '^event ESTABLISHED ' "/tmp/nvr-$1.out"; }

B1GUID=$(topo_port b1/1 guid)
conn primary "$(port_gid a1/1)" "$(port_gid b1/1)" 7951
chk_begin
! established primary || _bad="a connection"
grep -q " sn=$B at=- slid=[0-9]* dlid=$((B1GUID & 0xffff)) .* verdict=drop-no-dlid " /tmp/nvr-primary.cap ||
	_bad="$_bad nothing dropped on $B at DLID $((B1GUID & 0xffff))"
chk_end primary-gid-lost /tmp/nvr-primary.out /tmp/nvr-primary.cap

conn alias "$(alias_gid a1/1)" "$(alias_gid b1/1)" 7952
chk_begin
established alias || _bad="no connection"
grep -q " sn=$B at=b1/1 slid=[0-9]* dlid=$(topo_port b1/1 lid) .* class=0x07 .* attr=0x0010 .* verdict=delivered " /tmp/nvr-alias.cap ||
	_bad="$_bad no REQ delivered at b1"
grep -q " sn=$A at=a1/1 slid=[0-9]* dlid=$(topo_port a1/1 lid) .* class=0x07 .* attr=0x0013 .* verdict=delivered " /tmp/nvr-alias.cap ||
	_bad="$_bad no REP delivered at a1"
chk_end alias-connects /tmp/nvr-alias.out /tmp/nvr-alias.cap

rmmod simfab
modprobe simfab || t_fail $T:reload "modprobe simfab (default topology) failed"
t_summary
