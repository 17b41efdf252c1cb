#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): is APM worth it when an RC
# consumer can reconnect after a failure? (issue 26 "Bench rows", an old
# question on the RDMA lists.) NVMe over Fabrics across the IB router as
# mixed-nvmeof-apm sets it up (nvme-rdma on a1 here with the overlay, the
# stock nvmet-rdma target on b1 in the peer guest, PacketLifeTime 12), the
# same O_DIRECT writes and the same failure, two ways in each round (the
# order alternating):
#   apm        rdma_cm alt_path=2 alt_path_wait=Y, ib_remote_sa
#              alt_routers=1: every REQ carries the alternate through the
#              other router, and the HCAs migrate
#   reconnect  alt_path=0: no alternate; nvme-rdma's own error recovery
#              and reconnect, with nvme-cli's defaults (reconnect delay
#              10 s), the new route through the other router
# The failure: the first router down and, at once, a sweep by both SMs (as
# OpenSM's on the port's trap), so that a new route goes through the
# second router; after the round's disconnect, the router still down,
# the router up and a sweep again.
# Printed per case and round, for tests/bench/run:
#   # bench nvmeof-failover CASE ROUND stall-ms N     the longest gap between
#                                                    two write completions
#   # bench nvmeof-failover CASE ROUND errors N       writes that failed
#   # bench nvmeof-failover CASE ROUND reconnects N   nvme-rdma's reconnects
#   # bench nvmeof-failover CASE ROUND iops N         fio's 4 KiB random
#     reads (QD 1, FIO_S s) before the failure, with clat-us and clat-p99-us
# Results say that each case ran (connected, wrote, disconnected) and
# that the APM case kept its first association; the figures are
# reported, not judged.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=bench-mixed-nvmeof-failover
D=/sys/kernel/debug/simfab
TOPO=/tmp/bnf.topo
NQN=nqn.2026-12.org.ib-routed:bench-nvmeof-failover
PORT=4420
IMG=/tmp/bench-nvmeof-failover.img
ROUNDS=3
BLOCKS=64
FAIL_AFTER=24
GO_ON_S=8
FIO_S=3

done_() {
	t_summary
	exit 0
}
mixed_nvmf_ready || done_
peer_up || done_
MIXED_SED="$MIXED_SED;s/ life=[0-9]*/ life=12/g"
chk_begin
mixed_ulp_stack
if ! ulp_apm default; then
	t_skip $T "this overlay has $why"
	done_
fi
peer ". /ibr/lib/guest.sh; nvmet_up $NQN $IMG $BIP $PORT || { echo \"\$why\"; exit 1; }" >/tmp/bnf-target.out 2>&1 ||
	_bad="$_bad target: $(tail -n 1 /tmp/bnf-target.out)"
chk_end setup /tmp/mixed-peer-stack.out /tmp/mixed-peer-load.out /tmp/bnf-target.out
modprobe nvme_rdma

sweep_both() { # simfab's SMs of both guests look at the fabric again
	echo sweep >$D/ctl
	peer "echo sweep >$D/ctl"
}

# target_idle: the target's queues gone, only its listener left
# shellcheck disable=SC2317 # called by wait_for
target_idle() {
	[ "$(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')" -le 1 ]
}

# failover CASE ROUND: connect, write through the failure, disconnect,
# the router back; the figures printed, CASE:ROUND passed when it ran.
failover() {
	if [ "$1" = apm ]; then ulp_apm on; else ulp_apm off; fi
	_m=$(dmesg_mark)
	_bad=
	if mixed_nvme_connect $NQN $PORT /tmp/bnf-connect.out; then
		_cntlid=$(cat /sys/class/nvme/"$ctrl"/cntlid)
		# what the connection carries before the failure (fio in the
		# bench image only)
		if command -v fio >/dev/null; then
			fio_randread nvmeof-failover "$1" "$2" "$ns" "$FIO_S" || _bad="$_bad $why"
		fi
		nvmf_failover "$ns" /tmp/bnf $BLOCKS $FAIL_AFTER $GO_ON_S 90 \
			"echo 'router $RA down' >$D/ctl; sweep_both"
		_rc=$(dmesg_since "$_m" | grep -c 'Successfully reconnected')
		echo "# bench nvmeof-failover $1 $2 stall-ms $fo_stall_ms"
		echo "# bench nvmeof-failover $1 $2 errors $fo_errors"
		echo "# bench nvmeof-failover $1 $2 reconnects $_rc"
		[ "$(cat /sys/class/nvme/"$ctrl"/state)" = live ] || _bad="$_bad state=$(cat /sys/class/nvme/"$ctrl"/state)"
		if [ "$1" = apm ]; then
			chk cntlid "$(cat /sys/class/nvme/"$ctrl"/cntlid)" "$_cntlid"
			chk_num reconnects "$_rc" 0
		fi
	else
		_bad="$_bad connect: $why"
	fi
	# The disconnect with the router still down: after a migration the
	# host's CM follows its QPs (mixed-nvmeof-apm apm:disconnect), so the
	# DREQs reach the target through the other router and its queues go
	# at once, not after its keep-alive; then the router back.
	nvme_disconnect "$ctrl" || _bad="$_bad $why"
	wait_for 5 target_idle || _bad="$_bad target-ids-left"
	echo "router $RA up" >$D/ctl
	sweep_both
	rm -f /tmp/bnf.pat /tmp/bnf.failed
	chk_end "$1:$2" /tmp/bnf-connect.out /tmp/bnf.w
}

r=1
while [ $r -le $ROUNDS ]; do
	if [ $((r % 2)) = 1 ]; then
		failover apm $r
		failover reconnect $r
	else
		failover reconnect $r
		failover apm $r
	fi
	r=$((r + 1))
done

ulp_apm default
unload_tree nvme_rdma 2>/dev/null
peer ". /ibr/lib/guest.sh; nvmet_down $NQN $IMG; unload_tree nvmet_rdma" >/dev/null 2>&1
mixed_ip_down
unload_tree ib_ipoib 2>/dev/null
peer ". /ibr/lib/guest.sh; unload_tree ib_ipoib; rmmod simfab" >/dev/null 2>&1
rmmod simfab 2>/dev/null
done_
