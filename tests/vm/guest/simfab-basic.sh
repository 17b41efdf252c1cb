#!/bin/sh
# shellcheck shell=sh
# simfab (tests/simfab): the simulated IB subnet registers every port
# ACTIVE with its LID, the SA answers saquery's PathRecord GetTable with the
# topology's DLID/SL/MTU/rate, and unloading leaves a clean kernel log.
# Skips when the image has no simfab.ko (tests/simfab/build not run) or no
# infiniband-diags. Default topology (simfab.c): LMC 1, h1/1 LID 2 (SM),
# h2/1 LID 4, h2/2 LID 6, h3/1 LID 8; h3 has SL 1, MTU 1024, 10 Gb/s, life 20.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

# modules.dep names every module of the image (in an image without
# simfab.ko, `modinfo simfab` and `modprobe -n -q` did not tell absent from
# present here), so ask depmod's list.
has_mod() {
	grep -q "/$1\.ko[.a-z]*:" "$MODDIR/modules.dep"
}
if ! has_mod simfab; then
	t_skip simfab-basic "simfab.ko not in the image (run tests/simfab/build)"
	t_summary
	exit 0
fi
if ! command -v ibstat >/dev/null || ! command -v saquery >/dev/null; then
	t_skip simfab-basic "ibstat/saquery not in the image (install infiniband-diags)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if modprobe ib_umad && modprobe simfab; then
	t_pass simfab-basic:load
else
	t_fail simfab-basic:load "modprobe simfab failed"
	t_summary
	exit 0
fi
# ib_sa and ib_umad see the ports asynchronously; give them a moment.
sleep 1

# ibstat: every port Active with the expected base LID.
check_port() { # CA PORT LID
	if timeout 20 ibstat "$1" "$2" >/tmp/ibstat.out 2>&1 &&
		grep -q 'State: Active' /tmp/ibstat.out &&
		grep -q "Base lid: $3\$" /tmp/ibstat.out &&
		grep -q 'SM lid: 2$' /tmp/ibstat.out; then
		t_pass "simfab-basic:ibstat-$1-$2"
	else
		diag_file /tmp/ibstat.out
		t_fail "simfab-basic:ibstat-$1-$2" "port not Active with LID $3, SM LID 2"
	fi
}
check_port simfab0 1 2
check_port simfab1 1 4
check_port simfab1 2 6
check_port simfab2 1 8

# saquery PR --slid --dlid through h2's port 1: GetTable over RMPP.
# saquery prints LIDs in decimal and MTU/rate/life with their selector
# (2 = "exactly", bits 7:6), e.g. mtu 0x84 = exactly 2048.
check_pr() { # NAME SLID DLID SL MTU RATE LIFE
	if timeout 30 saquery -C simfab1 -P 1 PR --slid "$2" --dlid "$3" >/tmp/pr.out 2>&1 &&
		grep -Eq "dlid\.+$3\$" /tmp/pr.out &&
		grep -Eq "slid\.+$2\$" /tmp/pr.out &&
		grep -Eq "[^_]sl\.+0x$4\$" /tmp/pr.out &&
		grep -Eq "mtu\.+0x$5\$" /tmp/pr.out &&
		grep -Eq "rate\.+0x$6\$" /tmp/pr.out &&
		grep -Eq "pkt_life\.+0x$7\$" /tmp/pr.out &&
		grep -Eq "num_path_revers\.+0x80\$" /tmp/pr.out; then
		t_pass "simfab-basic:pr-$1"
	else
		diag_file /tmp/pr.out
		t_fail "simfab-basic:pr-$1" "want SLID $2 DLID $3 SL $4 MTU $5 rate $6 life $7, reversible"
	fi
}
# h1/1 -> h2/2: min MTU 2048 (h1) and 40 Gb/s, SL 0, life 18.
check_pr h1-h2 2 6 0 84 87 92
# h2/1 -> h3/1: h3's SL 1, MTU 1024, 10 Gb/s and life 20 win.
check_pr h2-h3 4 8 1 83 83 94
# The same pair through the LMC path bits (LID + 1 at both ends).
check_pr h2-h3-lmc 5 9 1 83 83 94
# A pair naming LIDs at different LMC offsets (base to base+1).
check_pr h2-h3-mixed 4 9 1 83 83 94

# By GIDs (SGID h2/1, DGID h2/2; GUIDs are 0x5346..HHPP): the dual-ported
# host to itself, its own MTU 4096 and default SL/rate/life.
if timeout 30 saquery -C simfab1 -P 1 PR --sgid fe80::5346:0:0:201 \
	--dgid fe80::5346:0:0:202 >/tmp/pr.out 2>&1 &&
	grep -Eq 'dlid\.+6$' /tmp/pr.out && grep -Eq 'mtu\.+0x85$' /tmp/pr.out; then
	t_pass simfab-basic:pr-gid
else
	diag_file /tmp/pr.out
	t_fail simfab-basic:pr-gid "want DLID 6 MTU 4096 from GIDs"
fi

# Every pair (4 ports x 4 ports x 2x2 LMC LID pairs = 64 records, 4096
# bytes; OpenSM returns every LID pair, the preferred ones first): a
# GetTableResp of 21 RMPP segments paced by ACKs.
if timeout 30 saquery -C simfab1 -P 1 PR >/tmp/pr.out 2>&1 &&
	[ "$(grep -c 'PathRecord dump' /tmp/pr.out)" -eq 64 ]; then
	t_pass simfab-basic:pr-all-rmpp
else
	diag_file /tmp/pr.out
	t_fail simfab-basic:pr-all-rmpp "want 64 PathRecords, got $(grep -c 'PathRecord dump' /tmp/pr.out)"
fi

no_record() { # NAME WHY SAQUERY-ARGS...
	_n=$1 _w=$2
	shift 2
	if timeout 30 saquery -C simfab1 -P 1 PR "$@" >/tmp/pr.out 2>&1 &&
		grep -q 'PathRecord dump' /tmp/pr.out; then
		diag_file /tmp/pr.out
		t_fail "simfab-basic:$_n" "a PathRecord although $_w"
	else
		t_pass "simfab-basic:$_n"
	fi
}
# h3's second key is 0x0001 (partial 0x8001's base): 0x8002 is nowhere.
no_record pr-pkey "no port has P_Key 0x8002" --slid 4 --dlid 8 --pkey 0x8002
no_record pr-sl "the h2-h3 SL is 1" --slid 4 --dlid 8 --sl 0
no_record pr-unknown-gid "no port has that GUID" \
	--sgid fe80::5346:0:0:201 --dgid fe80::5346:0:0:901

# An unknown LID: no record (saquery fails or prints none).
if timeout 30 saquery -C simfab1 -P 1 PR --slid 4 --dlid 40 >/tmp/pr.out 2>&1 &&
	grep -q 'PathRecord dump' /tmp/pr.out; then
	diag_file /tmp/pr.out
	t_fail simfab-basic:pr-unknown "a PathRecord for DLID 40, which no port has"
else
	t_pass simfab-basic:pr-unknown
fi

# simfab_test.ko: KTAP checks of UD delivery (GRH, path bits, Q_Key and
# P_Key drops) and of ib_sa's own PathRecord Get, in the kernel log.
if has_mod simfab_test; then
	m2=$(dmesg_mark)
	if timeout 60 modprobe simfab_test; then
		dmesg_since "$m2" | sed -n 's/^\[[^]]*\] //p' >/tmp/ktap.out
		ktap_relay simfab-basic: simfab_ /tmp/ktap.out simfab-basic:ktap-plan
		rmmod simfab_test
	else
		t_fail simfab-basic:ktap "modprobe simfab_test failed"
	fi
else
	t_skip simfab-basic:ktap "simfab_test.ko not in the image"
fi

# debugfs topology reads back what the module built.
cat /sys/kernel/debug/simfab/topology >/tmp/simfab.topo
if grep -q '^subnet s0 prefix=0xfe80000000000000 lmc=1 sm=h1:1 sm_lid=2 ' /tmp/simfab.topo &&
	grep -q '^port h2/2 guid=0x5346000000000202 lid=6 .*state=active$' /tmp/simfab.topo; then
	t_pass simfab-basic:topology
else
	diag_file /tmp/simfab.topo
	t_fail simfab-basic:topology "debugfs topology does not show the default subnet"
fi

# Port events through simfab/ctl: a port that goes down shows Down and
# leaves the SA's records; a LID change shows in ibstat and the SA.
ctl=/sys/kernel/debug/simfab/ctl
echo "down h3/1" >"$ctl"
timeout 20 ibstat simfab2 1 >/tmp/ibstat.out 2>&1
if grep -q 'State: Down' /tmp/ibstat.out; then
	t_pass simfab-basic:port-down
else
	diag_file /tmp/ibstat.out
	t_fail simfab-basic:port-down "h3/1 not Down after 'down h3/1'"
fi
no_record pr-port-down "h3/1 is down" --slid 4 --dlid 8
echo "up h3/1" >"$ctl"
echo "lid h3/1 16" >"$ctl"
timeout 20 ibstat simfab2 1 >/tmp/ibstat.out 2>&1
if grep -q 'State: Active' /tmp/ibstat.out && grep -q 'Base lid: 16$' /tmp/ibstat.out; then
	t_pass simfab-basic:lid-change
else
	diag_file /tmp/ibstat.out
	t_fail simfab-basic:lid-change "h3/1 not Active with LID 16"
fi
check_pr h2-h3-newlid 4 16 1 83 83 94
echo "lid h3/1 8" >"$ctl"

# The capture ring saw the GetTable and its RMPP answer.
# (debugfs files have size 0: copy them before diag_file.)
cap=/tmp/simfab.capture
cat /sys/kernel/debug/simfab/capture >"$cap"
[ -z "${SIMFAB_DEBUG:-}" ] || diag_file "$cap"
if grep -q 'method=0x12 .*attr=0x0035' "$cap" &&
	grep -q 'method=0x92 .*attr=0x0035' "$cap"; then
	t_pass simfab-basic:capture
else
	diag_file "$cap"
	t_fail simfab-basic:capture "no GetTable/GetTableResp PathRecord in $cap"
fi
# The unknown GID got ERR_REQ_INVALID_GID (SA status 5, IBA 15.2.1.1), the
# answers came from the SM LID to QP1 with the QP1 Q_Key (IBA 13.5.3.1).
if grep -q 'slid=2 .*dqp=1 qkey=0x80010000 .*method=0x92 status=0x0500 .*attr=0x0035' "$cap"; then
	t_pass simfab-basic:invalid-gid-status
else
	t_fail simfab-basic:invalid-gid-status "no GetTableResp with status 0x0500 from LID 2"
fi

# The SA answered each GetTable once (one segment 1 each; RMPP header at
# MAD byte 24, segment number at 28) and never answered an ACK as if it
# were a request; every answer was ACKed (ib_mad's RMPP receiver).
cat /sys/kernel/debug/simfab/counters >/tmp/simfab.counters
acks=$(sed -n 's/.* rmpp_acks=\([0-9]*\).*/\1/p' /tmp/simfab.counters)
tables=$(grep -c 'method=0x12 .*attr=0x0035 .*verdict=sa mad' "$cap")
ackcap=$(grep -c 'method=0x12 .*attr=0x0035 .*verdict=sa-rmpp-ctl' "$cap")
firsts=$(grep 'method=0x92 .*attr=0x0035 .*verdict=delivered' "$cap" |
	sed 's/.* mad=//' | cut -c57-64 | grep -c '^00000001$')
if [ "${acks:-0}" -ge "$tables" ] && [ "$firsts" -eq "$tables" ] &&
	[ "$ackcap" -eq "$acks" ]; then
	t_pass simfab-basic:rmpp-one-answer
else
	diag_file /tmp/simfab.counters
	t_fail simfab-basic:rmpp-one-answer "acks=$acks (captured $ackcap) GetTable=$tables first segments=$firsts"
fi
if rmmod simfab; then
	t_pass simfab-basic:unload
else
	t_fail simfab-basic:unload "rmmod simfab failed"
fi
# Unload with MADs in flight: saquery keeps querying while simfab goes.
if modprobe simfab; then
	sleep 1
	(
		i=0
		while [ $i -lt 40 ]; do
			timeout 5 saquery -C simfab1 -P 1 PR --slid 4 --dlid 8 >/dev/null 2>&1
			i=$((i + 1))
		done
	) &
	loop=$!
	sleep 1
	if rmmod simfab; then
		t_pass simfab-basic:unload-in-flight
	else
		t_fail simfab-basic:unload-in-flight "rmmod simfab with saquery running failed"
	fi
	kill "$loop" 2>/dev/null
	wait "$loop" 2>/dev/null
else
	t_fail simfab-basic:unload-in-flight "modprobe simfab (again) failed"
fi

# The unsigned-module taint line is expected (tests/vm/README.md).
dmesg_since "$mark" | grep -v 'module verification failed' >/tmp/simfab.dmesg
if grep -Eq "$DMESG_BAD" /tmp/simfab.dmesg; then
	grep -E "$DMESG_BAD" /tmp/simfab.dmesg | while read -r l; do diag "$l"; done
	t_fail simfab-basic:kernel-log "errors in the kernel log"
else
	t_pass simfab-basic:kernel-log
fi
t_summary
