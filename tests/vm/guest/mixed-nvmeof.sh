#!/bin/sh
# shellcheck shell=sh
# NVMe over Fabrics across the IB router to a stock target and to an
# overlay one (issue 26 item 6; tests/vm/README.md "vm-mixed"): the
# kernel's own nvmet-rdma target on b1 in the peer guest (the
# distribution's stack, then the overlay), the kernel's own nvme-rdma
# host on a1 here (the overlay), addressed by IP
# over IPoIB: a1's route to B's IP subnet has a gateway, so ib_core asks
# userspace for the target's GID and ib-routed-ipresolved answers it from
# a host file; rdma_cm resolves the route through the router with the
# return record from b2, B's service node (the service map).
#
# nvmf:stack        the peer runs the distribution's stack, this guest the
#                   overlay's; simfab, IPoIB and the addresses in both
# Then, for a stock target (nvmf:*) and with the overlay on both ends
# (nvmf-ovl:*: the peer switched to its kernel's overlay, guest.sh
# overlay_in, and back to the distribution's stack after it):
# PFX:target        in the peer: a subsystem with one namespace (16 MiB on
#                   tmpfs) on an RDMA port at b1's IPoIB address
# PFX:connect       nvme-cli's `nvme connect -t rdma` here: the controller
#                   live over rdma at that address, its namespace present
# PFX:path          the connection went through the router: the REQ at
#                   b1 from the router's port, with the return record's
#                   LID of b1 and B's SA's SL, the end-to-end MTU; b1's own
#                   packets on the router's map's SL (stock: the LRH's) or
#                   on B's SA's (overlay: the REQ's)
# PFX:io            4 MiB of random data written and read back (page cache
#                   dropped), equal, and equal to the target's file in the
#                   peer
# PFX:disconnect    `nvme disconnect`, the target torn down, no rdma_cm id
#                   left on either side
# nvmf-ovl:peer-overlay, nvmf-ovl:peer-stock-again  the peer's switches
# nvmf:peer-dmesg   the target's kernel: nothing bad in its log
#
# Skips without simfab.ko, ib_ipoib, the NVMe modules, nvme-cli,
# ib-routed-ipresolved or ib_remote_sa in the image.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=mixed-nvmeof
D=/sys/kernel/debug/simfab
TOPO=/tmp/mn.topo
NQN=nqn.2026-12.org.ib-routed:mixed-nvmeof
PORT=4420
IMG=/tmp/mixed-nvmeof.img
MIB=4

done_() {
	t_summary
	exit 0
}
mixed_nvmf_ready || done_
mark=$(dmesg_mark)
peer_up || done_

# ---- both kernels: the stacks, simfab, IPoIB --------------------------------------
chk_begin
mixed_ulp_stack
chk_end nvmf:stack /tmp/mixed-peer-stack.out /tmp/mixed-peer-load.out /tmp/mixed-ipr/log
diag "a1 $AND $AIP, b1 $BND $BIP in the peer; RA=$RA RB=$RB MTU_E=$MTU_E SL_R=$SL_R"

# nvmf_run PFX SL: the target in the peer, the host here, the path, I/O
# and the teardown, as PFX:*; SL is the one b1's own packets carry on B
# (through the router the REQ came by: a stock passive side takes the
# LRH's, the router's map; the overlay's the REQ's, B's SA's).
nvmf_run() {
	# ---- the target, in the peer ----
	if peer ". /ibr/lib/guest.sh; nvmet_up $NQN $IMG $BIP $PORT || { echo \"\$why\"; exit 1; }" >/tmp/mn-target.out 2>&1; then
		t_pass "$T:$1:target"
	else
		t_fail "$T:$1:target" "$(tail -n 1 /tmp/mn-target.out)"
	fi

	# ---- the host, here ----
	echo clear >$D/ctl
	peer "echo clear >$D/ctl"
	modprobe nvme_rdma
	ctrl='' ns=''
	_bad=
	mixed_nvme_connect $NQN $PORT /tmp/mn-connect.out || _bad=$why
	cat $D/capture >/tmp/mn.cap
	peer "cat $D/capture" >/tmp/mn.pcap
	if [ -z "$_bad" ]; then
		t_pass "$T:$1:connect"
		diag "controller $ctrl, namespace /dev/$ns: $(cat /sys/class/nvme/"$ctrl"/address)"
	else
		t_fail "$T:$1:connect" "$_bad"
		diag_file /tmp/mn-connect.out
		diag_file /tmp/mixed-ipr/log
		grep ' rc op=' /tmp/mn.cap | sed 's/ sgid=[^ ]* dgid=[^ ]*//' | tail -n 40 >/tmp/mn.cap.short
		diag_file /tmp/mn.cap.short
		peer "grep ' rc op=' $D/capture" | sed 's/ sgid=[^ ]* dgid=[^ ]*//' | tail -n 20 >/tmp/mn.pcap.short
		diag_file /tmp/mn.pcap.short
	fi

	# The admin queue's REQ (the first): through RA, at b1 in the peer
	# with the router's SLID on B; b1's LID and B's SA's SL from the
	# return record; the end-to-end MTU. Every queue's REQ alike. b1's
	# own RC packets at RA's port on B: on SL $2.
	chk_begin
	req_at_b1 /tmp/mn.pcap
	[ "$_reqs" -ge 2 ] || _bad="$_bad only-$_reqs-REQs(admin-and-io-queues)"
	_sls=$(grep -E " sn=$B at=$RA_B slid=$BLID .* rc op=.* verdict=routed" /tmp/mn.cap |
		sed -n 's/.* sl=\([0-9]*\) .*/\1/p' | sort -u | tr '\n' ' ')
	chk b1-sl "$_sls" "$2 "
	chk_end "$1:path" /tmp/mn.pcap

	# ---- I/O with verification ----
	if [ -n "$ns" ] && [ -b "/dev/$ns" ]; then
		_bad=
		disk_io "$ns" $MIB /tmp/mn || _bad=$why
		_h=$(md5sum </tmp/mn.pat | cut -d' ' -f1)
		_t=$(peer "dd if=$IMG bs=64k count=$((MIB * 16)) 2>/dev/null | md5sum | cut -d' ' -f1")
		chk target-file "$_t" "$_h"
		if [ -z "$_bad" ]; then
			t_pass "$T:$1:io"
			diag "$MIB MiB written and read back across the router, md5 $_h"
		else
			t_fail "$T:$1:io" "${_bad# }"
			dmesg_since "$mark" | grep -i 'nvme\|rdma' | tail -n 20 >/tmp/mn-io.dmesg
			diag_file /tmp/mn-io.dmesg
		fi
		rm -f /tmp/mn.pat /tmp/mn.back
	else
		t_fail "$T:$1:io" "no namespace to write to"
	fi

	# ---- teardown ----
	_bad=
	if [ -n "$ctrl" ]; then
		$NVME disconnect -n $NQN >/tmp/mn-disc.out 2>&1 || _bad="nvme disconnect: $(tail -n 1 /tmp/mn-disc.out)"
		wait_for 10 sh -c "[ ! -e /sys/class/nvme/$ctrl ]" || _bad="$_bad $ctrl still there"
	fi
	unload_tree nvme_rdma 2>/dev/null || _bad="$_bad nvme_rdma not unloaded"
	peer ". /ibr/lib/guest.sh; nvmet_down $NQN $IMG || echo \"\$why\"; unload_tree nvmet_rdma" >/tmp/mn-down.out 2>&1 ||
		_bad="$_bad target: $(tail -n 1 /tmp/mn-down.out)"
	_ids="$(cm_ids) $(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')"
	chk ids-left "$_ids" "0 0"
	if [ -z "$_bad" ]; then t_pass "$T:$1:disconnect"; else t_fail "$T:$1:disconnect" "${_bad# }"; fi
}

# ---- a stock target: the REQ's SL unused, b1 answers on the router's map's --
nvmf_run nvmf "$SL_IN_B"

# ---- the overlay on both ends: the peer switches to its kernel's overlay
# (guest.sh overlay_in), ib_ipoib and b1's address again; b1 answers on
# B's SA's SL, from the REQ. Then back to the distribution's stack for the
# tests after this one.
peer_switch overlay nvmf-ovl:peer-overlay
nvmf_run nvmf-ovl "$SL_R"
peer_switch stock nvmf-ovl:peer-stock-again
mixed_ip_down

# ---- both kernels' logs ---------------------------------------------------------------
peer_dmesg nvmf:peer-dmesg "the target's kernel"
unload_tree ib_ipoib 2>/dev/null
peer ". /ibr/lib/guest.sh; unload_tree ib_ipoib; rmmod simfab" >/dev/null 2>&1
rmmod simfab 2>/dev/null
chk_dmesg $T "$mark"
done_
