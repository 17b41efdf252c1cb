#!/bin/sh
# shellcheck shell=sh
# NVMe over Fabrics across the IB router with path migration, to a stock
# target (issue 26 item 6; docs/routed-cm.md "Mixed fleets"): the
# kernel's own nvme-rdma host on a1 here (the overlay), the kernel's own
# nvmet-rdma target on b1 in the peer guest (the distribution's stack),
# set up as mixed-nvmeof does. Neither ULP knows of APM: nvme-rdma calls
# rdma_connect() from its ROUTE_RESOLVED handler and takes no APM
# events. rdma_cm's alt_path=2 and alt_path_wait=Y (docs/path-records.md
# "An alternate at route time") make ROUTE_RESOLVED wait for ib_remote_sa's
# discovery, which finds the path through the other router
# (ib_remote_sa alt_routers=1; a1 and b1 have one port each; b2, B's
# service node, answers for b1): every queue's REQ carries it, the stock
# target arms it, and when the first router fails under I/O both HCAs
# migrate (IBA 17.2.8) with no help from either ULP.
#
# The stall is (1 + nvme-rdma's retry_count 7) tries of the QP's Local
# ACK Timeout, which ib_cm takes from the path's packet lifetime: with
# OpenSM's default PacketLifeTime 18 that is over a minute, past nvme's
# keep-alive (5 s) and I/O (30 s) timeouts, so the subnets here have
# PacketLifeTime 12 (docs/routed-cm.md "Mixed fleets": what an
# administrator sets for it).
#
# apm:stack        the stacks, simfab (routed.topo, lifetimes 12), IPoIB
# apm:target       the stock target in the peer
# apm:connect      `nvme connect -t rdma` here, the controller live
# apm:req-alternate  every queue's REQ at b1 carries the alternate: its
#                  local LID the other router's port on B (the return
#                  record's DLID), its remote LID b1's, on B's SA's SL
# apm:io-during-failure  O_DIRECT writes of 64 KiB blocks go on while the
#                  first router goes down, none fails; the longest gap
#                  between two completions is the stall (diag)
# apm:migrated     the first router dropped the QPs' tries, the second
#                  forwarded their packets after it, the stock target's
#                  nvmet-rdma logged the migration of its QP and the host's
#                  nvme-rdma (dynamic debug) of its own
# apm:no-reconnect the controller live on its first association: no error
#                  recovery, reset or reconnect in the host's log
# apm:io           the blocks read back (O_DIRECT) equal what was written,
#                  and the target's file holds them
# apm:disconnect   `nvme disconnect` with the first router still down:
#                  each queue's DREQ through the second router (the
#                  host's rdma_cm lets ib_cm follow the QPs nvme-rdma
#                  never reported migrated), none to the first, all at
#                  b1, and the target's queues gone at once (not after its
#                  keep-alive)
# apm:reconnect    a new association at once, the first router still
#                  down (after an SM sweep routes through the second):
#                  no stale connection at the target refuses it
# apm:teardown     the target torn down, no rdma_cm id left on either side
# apm:peer-dmesg   nothing bad in the target's kernel log
#
# Against the series without "RDMA/cma: Optionally let ROUTE_RESOLVED
# wait for the alternate path" the REQs carry no alternate and the I/O
# stops when the router fails (apm:req-alternate, apm:io-during-failure,
# apm:no-reconnect fail); without "RDMA/cma: Let ib_cm follow the
# migration of the QPs rdma_cm created" the DREQs go to the failed router
# (apm:disconnect fails).
#
# Skips without simfab.ko, ib_ipoib, the NVMe modules, nvme-cli,
# ib-routed-ipresolved or ib_remote_sa.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=mixed-nvmeof-apm
D=/sys/kernel/debug/simfab
TOPO=/tmp/mna.topo
NQN=nqn.2026-12.org.ib-routed:mixed-nvmeof-apm
PORT=4420
IMG=/tmp/mixed-nvmeof-apm.img
# 64 KiB blocks of a 4 MiB region, written in turn (simfab.sh
# nvmf_failover); the first router fails after FAIL_AFTER writes, the
# writes go on for GO_ON_S seconds.
BLOCKS=64
FAIL_AFTER=24
GO_ON_S=8

done_() {
	t_summary
	exit 0
}
mixed_nvmf_ready || done_
mark=$(dmesg_mark)
peer_up || done_

# ---- both kernels: the stacks, simfab with PacketLifeTime 12, IPoIB ------
MIXED_SED="$MIXED_SED;s/ life=[0-9]*/ life=12/g"
chk_begin
mixed_ulp_stack
# A series without alt_path_wait (or alt_routers) runs on and fails below.
ulp_apm on || diag "$why"
[ "$RA" != "$RB" ] || _bad="$_bad one-router($RA)"
chk_num life-e "$LIFE_E" 13
chk_end apm:stack /tmp/mixed-peer-stack.out /tmp/mixed-peer-load.out /tmp/mixed-ipr/log
diag "a1 $AND $AIP, b1 $BND $BIP in the peer; primary through $RA, alternate through $RB"

# ---- the stock target, the host ----
if peer ". /ibr/lib/guest.sh; nvmet_up $NQN $IMG $BIP $PORT || { echo \"\$why\"; exit 1; }" >/tmp/mna-target.out 2>&1; then
	t_pass $T:apm:target
else
	t_fail $T:apm:target "$(tail -n 1 /tmp/mna-target.out)"
fi
echo clear >$D/ctl
peer "echo clear >$D/ctl"
modprobe nvme_rdma
# nvme-rdma's QP events are pr_debug
echo 'module nvme_rdma +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
_bad=
mixed_nvme_connect $NQN $PORT /tmp/mna-connect.out || _bad=$why
if [ -z "$_bad" ]; then
	t_pass $T:apm:connect
	diag "controller $ctrl, namespace /dev/$ns"
else
	t_fail $T:apm:connect "$_bad"
	diag_file /tmp/mna-connect.out
fi
_cntlid=$(cat /sys/class/nvme/"$ctrl"/cntlid 2>/dev/null)

# Every REQ b1 got (the admin queue's and each I/O queue's) carries the
# alternate: IBA 12.6.5, the alternate path's fields 44 bytes after the
# primary's (MAD bytes 120.. against 76..): its local LID (the DLID the
# passive side sends the alternate to) the other router's port on B, its
# remote LID b1's, its SL B's SA's.
peer "cat $D/capture" >/tmp/mna.pcap
chk_begin
_reqs=0 _alt=0
for _m in $(grep " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " /tmp/mna.pcap |
	tr ' ' '\n' | sed -n 's/^mad=//p'); do
	_reqs=$((_reqs + 1))
	[ "$(madn "$_m" 120 2)" -eq $((RB_BLID)) ] && [ "$(madn "$_m" 122 2)" -eq $((BLID)) ] &&
		[ $(($(madn "$_m" 162 1) >> 4)) -eq $((SL_R)) ] && _alt=$((_alt + 1))
	[ $_reqs -gt 1 ] || diag "the first REQ's alternate: local LID $(madn "$_m" 120 2), remote LID $(madn "$_m" 122 2), SL $(($(madn "$_m" 162 1) >> 4))"
done
[ "$_reqs" -ge 2 ] || _bad="$_bad only-$_reqs-REQs(admin-and-io-queues)"
chk_num reqs-with-alternate "$_alt" "$_reqs"
chk_end apm:req-alternate /tmp/mna.pcap

# ---- writes while the first router fails ----
cp $D/counters /tmp/mna.c0
mmark=$(dmesg_mark)
pmmark=$(peer '. /ibr/lib/guest.sh; dmesg_mark')
fo_writes=0 fo_errors=0 fo_stall_ms=
[ -z "$ns" ] || nvmf_failover "$ns" /tmp/mna $BLOCKS $FAIL_AFTER $GO_ON_S $((GO_ON_S + 40)) \
	"echo 'router $RA down' >$D/ctl"
cp $D/counters /tmp/mna.c1
cat $D/capture >/tmp/mna.cap
chk_begin
[ "$fo_writes" -gt $((FAIL_AFTER + 1)) ] || _bad="$_bad only-$fo_writes-writes"
chk_num write-errors "$fo_errors" 0
chk_end apm:io-during-failure /tmp/mna.w
diag "$fo_writes writes of 64 KiB, $fo_errors failed; the longest gap between two completions ${fo_stall_ms:-?} ms (router $RA down at ${fo_down_cs}0 ms uptime)"

# ---- migrated: RA dropped the tries, RB carried the queues after it ----
dmesg_since "$mmark" >/tmp/mna.dmesg
peer ". /ibr/lib/guest.sh; dmesg_since $pmmark" >/tmp/mna.pdmesg
chk_begin
_d=$(($(down_drops /tmp/mna.c1 "$RA_A") + $(down_drops /tmp/mna.c1 "$RA_B") -
	$(down_drops /tmp/mna.c0 "$RA_A") - $(down_drops /tmp/mna.c0 "$RA_B")))
[ "$_d" -gt 0 ] || _bad="$_bad $RA-dropped-nothing"
_fa=$(grep -c -E " sn=$A at=$RB_A .* rc op=.* verdict=routed" /tmp/mna.cap)
[ "$_fa" -gt 0 ] || _bad="$_bad no-RC-packet-through-$RB"
_last=$(grep -E " sn=$A at=($RA_A|$RB_A) .* rc op=.* verdict=routed" /tmp/mna.cap | tail -n 1)
chk last-rc-routed-at "$(capf "$_last" at)" "$RB_A"
grep -q 'nvmet_rdma: received IB QP event: path migration successful' /tmp/mna.pdmesg ||
	_bad="$_bad no-migration-at-the-target"
grep -q 'QP event path migration successful' /tmp/mna.dmesg ||
	_bad="$_bad no-migration-at-the-host"
chk_end apm:migrated /tmp/mna.c1 /tmp/mna.dmesg /tmp/mna.pdmesg
diag "dropped at $RA: $_d; RC packets of A through $RB: $_fa; $(grep -c 'path migration successful' /tmp/mna.pdmesg) target QPs migrated"

chk_begin
grep -E 'error recovery|Reconnecting|reconnect|resetting controller|I/O error|timeout' /tmp/mna.dmesg >/tmp/mna.recovery
[ ! -s /tmp/mna.recovery ] || _bad="$_bad recovery-in-the-host's-log"
chk state "$(cat /sys/class/nvme/"$ctrl"/state 2>/dev/null)" live
chk cntlid "$(cat /sys/class/nvme/"$ctrl"/cntlid 2>/dev/null)" "$_cntlid"
chk_end apm:no-reconnect /tmp/mna.recovery

# ---- the data ----
chk_begin
if [ "$(cat /sys/class/nvme/"$ctrl"/state 2>/dev/null)" != live ]; then
	# a read would block until the controller is back, or for good
	_bad="the controller is not live: nothing read back"
elif [ -n "$ns" ]; then
	timeout 60 dd if=/dev/"$ns" of=/tmp/mna.back bs=64k count=$BLOCKS iflag=direct 2>/tmp/mna.dd ||
		_bad="read: $(tail -n 1 /tmp/mna.dd)"
	cmp -s /tmp/mna.pat /tmp/mna.back || _bad="$_bad read-back-differs"
	_h=$(md5sum </tmp/mna.pat | cut -d' ' -f1)
	chk target-file "$(peer "dd if=$IMG bs=64k count=$BLOCKS 2>/dev/null | md5sum | cut -d' ' -f1")" "$_h"
else
	_bad="no namespace"
fi
chk_end apm:io /tmp/mna.dd
rm -f /tmp/mna.pat /tmp/mna.back /tmp/mna.failed

# ---- disconnect, the first router still down ----
# target_idle: the target's queues gone, only its listener left
# shellcheck disable=SC2317 # called by wait_for
target_idle() {
	[ "$(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')" -le 1 ]
}
echo clear >$D/ctl
peer "echo clear >$D/ctl"
chk_begin
if [ -n "$ctrl" ]; then
	$NVME disconnect -n $NQN >/tmp/mna-disc.out 2>&1 || _bad="nvme disconnect: $(tail -n 1 /tmp/mna-disc.out)"
	wait_for 30 sh -c "[ ! -e /sys/class/nvme/$ctrl ]" || _bad="$_bad $ctrl still there"
fi
# nvmet's keep-alive would clear a queue whose DREQ was lost after
# seconds more: the queues must go with their DREQs
wait_for 3 target_idle || _bad="$_bad target-queues-left"
cat $D/capture >/tmp/mna-disc.cap
peer "cat $D/capture" >/tmp/mna-disc.pcap
chk_num "dreqs-through-$RB" "$(grep -c " at=$RB_A .* class=0x07 .* attr=0x0015 .* verdict=routed " /tmp/mna-disc.cap)" "$_reqs"
chk_num "dreqs-to-$RA" "$(grep -c " at=$RA_A .* class=0x07 .* attr=0x0015 " /tmp/mna-disc.cap)" 0
chk_num dreqs-at-b1 "$(grep -c " at=$BP .* class=0x07 .* attr=0x0015 .* verdict=delivered " /tmp/mna-disc.pcap)" "$_reqs"
chk_end apm:disconnect /tmp/mna-disc.out /tmp/mna-disc.cap /tmp/mna-disc.pcap

# ---- a new association at once, the first router still down ----
echo sweep >$D/ctl
peer "echo sweep >$D/ctl"
chk_begin
if mixed_nvme_connect $NQN $PORT /tmp/mna-reconnect.out; then
	chk state "$(cat /sys/class/nvme/"$ctrl"/state 2>/dev/null)" live
else
	_bad=$why
fi
chk_end apm:reconnect /tmp/mna-reconnect.out

# ---- teardown ----
chk_begin
if [ -n "$ctrl" ]; then
	$NVME disconnect -n $NQN >/tmp/mna-disc2.out 2>&1 || _bad="nvme disconnect: $(tail -n 1 /tmp/mna-disc2.out)"
	wait_for 30 sh -c "[ ! -e /sys/class/nvme/$ctrl ]" || _bad="$_bad $ctrl still there"
fi
unload_tree nvme_rdma 2>/dev/null || _bad="$_bad nvme_rdma not unloaded"
peer ". /ibr/lib/guest.sh; nvmet_down $NQN $IMG || echo \"\$why\"; unload_tree nvmet_rdma" >/tmp/mna-down.out 2>&1 ||
	_bad="$_bad target: $(tail -n 1 /tmp/mna-down.out)"
# shellcheck disable=SC2016 # expanded by that shell
wait_for 30 sh -c '[ "$(. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids)" = 0 ]' || true
chk ids-left "$(cm_ids) $(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')" "0 0"
chk_end apm:teardown /tmp/mna-disc2.out /tmp/mna-down.out
echo "router $RA up" >$D/ctl
echo sweep >$D/ctl
peer "echo sweep >$D/ctl"

ulp_apm default
mixed_ip_down
peer_dmesg apm:peer-dmesg "the target's kernel"
unload_tree ib_ipoib 2>/dev/null
peer ". /ibr/lib/guest.sh; unload_tree ib_ipoib; rmmod simfab" >/dev/null 2>&1
rmmod simfab 2>/dev/null
chk_dmesg $T "$mark"
done_
