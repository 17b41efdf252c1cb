#!/bin/sh
# shellcheck shell=sh
# The SA's partition rule for PathRecords (issue 25, model point 6), on
# tests/simfab/topology/partitions.topo: OpenSM answers a requester only
# for paths whose two ends it shares a partition with (osm_port_share_pkey
# in pr_rcv_get_port_pair_paths; a port shares with itself), whatever
# the two ends share. The requester is the port the query came from (its
# SLID), as OpenSM's osm_get_physp_by_mad_addr finds it.
#
# x-y-by-x:   x asks x -> y: a record, with 0x8002 (the one partition
#             where one of x and y is a full member).
# x-y-by-sm:  p1 (a full member of the default partition) asks x -> y:
#             a record.
# x-y-by-z:   z (a limited member of the default partition and of
#             0x0003, which no other port has) asks
#             x -> y: no record (status 0, an empty table).
# z-p1-by-z:  z asks z -> p1: a record in the default partition, with
#             z's own (limited) entry, as osm_physp_find_common_pkey gives.
# nr-by-*:    the NodeRecords z, x and p1 are given: only of the ports
#             each shares a partition with (OpenSM __osm_nr_rcv_create_nr).
#
# Skips without simfab.ko or saquery.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-partitions
TOPOFILE=/ibr/simfab/topology/partitions.topo

if ! has_mod simfab || [ ! -f "$TOPOFILE" ] || ! command -v saquery >/dev/null; then
	t_skip $T "simfab.ko, saquery or $TOPOFILE not in the image (make simfab; infiniband-diags)"
	t_summary
	exit 0
fi
mark=$(dmesg_mark)
TOPO=/tmp/sfpk.topo
if sf_load_topo "$TOPOFILE" ib_umad; then
	t_pass $T:load
else
	t_fail $T:load "modprobe simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
dev_of() { topo_host "${1%/*}" dev; }
lid() { topo_port "$1" lid; }

# pr NAME REQUESTER SRC DST: saquery's PathRecords SRC -> DST asked
# through REQUESTER's port, in /tmp/sfpk-NAME.out; prints how many.
pr() {
	timeout 30 saquery -C "$(dev_of "$2")" -P 1 PR --slid "$(lid "$3")" --dlid "$(lid "$4")" \
		>"/tmp/sfpk-$1.out" 2>&1 || echo "saquery-failed" >>"/tmp/sfpk-$1.out"
	grep -c 'PathRecord dump' "/tmp/sfpk-$1.out"
}
chk_begin
chk_num records "$(pr x-y-by-x x/1 x/1 y/1)" 1
grep -Eiq "pkey\.+0x8002\$" /tmp/sfpk-x-y-by-x.out || _bad="$_bad pkey-not-0x8002"
chk_end x-y-by-x /tmp/sfpk-x-y-by-x.out
chk_begin
chk_num records "$(pr x-y-by-sm p1/1 x/1 y/1)" 1
chk_end x-y-by-sm /tmp/sfpk-x-y-by-sm.out
chk_begin
chk_num records "$(pr x-y-by-z z/1 x/1 y/1)" 0
! grep -q saquery-failed /tmp/sfpk-x-y-by-z.out || _bad="$_bad saquery-failed"
chk_end x-y-by-z /tmp/sfpk-x-y-by-z.out
chk_begin
chk_num records "$(pr z-p1-by-z z/1 z/1 p1/1)" 1
grep -Eiq "pkey\.+0x7fff\$" /tmp/sfpk-z-p1-by-z.out || _bad="$_bad pkey-not-0x7fff (the source entry)"
chk_end z-p1-by-z /tmp/sfpk-z-p1-by-z.out

# nr NAME REQUESTER: the NodeRecords REQUESTER's port is given, in
# /tmp/sfpk-NAME.out; prints the hosts they name, sorted, on one line.
nr() {
	timeout 30 saquery -C "$(dev_of "$2")" -P 1 NR >"/tmp/sfpk-$1.out" 2>&1 ||
		echo "saquery-failed" >>"/tmp/sfpk-$1.out"
	sed -n 's/^[[:space:]]*NodeDescription\.*\([^ ]*\) .*/\1/p' "/tmp/sfpk-$1.out" | sort | tr '\n' ' ' | sed 's/ $//'
}
# NodeRecords too (OpenSM __osm_nr_rcv_create_nr): z shares only the
# default partition with p1 (z a limited member, p1 a full one); x shares
# it with p1 and 0x8002 with y; p1 is a full member of every partition.
chk_begin
chk nodes "$(nr nr-by-z z/1)" "p1 z"
chk_end nr-by-z /tmp/sfpk-nr-by-z.out
chk_begin
chk nodes "$(nr nr-by-x x/1)" "p1 x y"
chk_end nr-by-x /tmp/sfpk-nr-by-x.out
chk_begin
chk nodes "$(nr nr-by-sm p1/1)" "p1 x y z"
chk_end nr-by-sm /tmp/sfpk-nr-by-sm.out

rmmod simfab
chk_dmesg $T "$mark"
t_summary
