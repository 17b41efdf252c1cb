#!/bin/sh
# shellcheck shell=sh
# NVMe over Fabrics through the overlay's rdma_cm on Soft-RoCE (issue 26,
# item 8): the in-tree nvmet-rdma target and nvme-rdma host, the kernel's
# own ULPs, on one rxe device (the host connects to the target's
# 192.0.2.1), with the overlay's ib_cm/rdma_cm loaded. What a kABI check
# cannot see is their behaviour: nvmet-rdma's completion handlers take
# their queue from wc->qp->qp_context (nvmet_rdma_recv_done), so an
# rdma_cm that touched the consumer's QP context would oops the target on
# the first command.
#
# nvmeof:stack        the overlay's rdma_cm and ib_cm are the loaded ones
# nvmeof:target       a subsystem with one namespace (a file on tmpfs,
#                     buffered I/O) on an RDMA port, through nvmet's configfs
# nvmeof:connect      the host connects with the fabrics options string
#                     nvme-cli would write (/dev/nvme-fabrics): controller
#                     live over rdma at 192.0.2.1:4420, namespace present
# nvmeof:io           4 MiB of random data written to the namespace and
#                     read back after dropping the page cache: equal, and
#                     equal to the target's backing file
# nvmeof:disconnect   the controller deleted, the target torn down, no
#                     rdma_cm id left
# Then nvmeof:dmesg: no WARN/Oops/BUG while it ran.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

T=nvmeof-rxe
NQN=nqn.2026-12.org.ib-routed:nvmeof-rxe
PORT=4420
IMG=/tmp/nvmeof.img
MIB=4

done_() {
	t_summary
	exit 0
}

# modules.dep names them with dashes (nvmet-rdma.ko), modprobe either way.
for m in nvmet nvmet-rdma nvme-rdma nvme-fabrics; do
	if ! grep -q "/${m}\.ko[.a-z]*:" "$MODDIR/modules.dep"; then
		t_skip $T "$m is not in the image's modules (the kernel has no CONFIG for it?)"
		done_
	fi
done
mark=$(dmesg_mark)
rxe_stack stack || done_

# ---- the target -------------------------------------------------------------
if nvmet_up $NQN $IMG "$RXE_IP" $PORT; then t_pass $T:target; else t_fail $T:target "$why"; fi

# ---- the host ---------------------------------------------------------------
if nvme_connect $NQN "$RXE_IP" $PORT; then
	t_pass $T:connect
	diag "controller $ctrl, namespace /dev/$ns: $(cat /sys/class/nvme/"$ctrl"/address)"
else
	t_fail $T:connect "$why"
fi

# ---- I/O with verification -------------------------------------------------
if [ -n "$ns" ] && [ -b "/dev/$ns" ]; then
	_bad=
	nvme_io "$ns" $MIB /tmp/nvmeof || _bad=$why
	# The target's file holds what the host wrote (nvmet flushed it).
	dd if=$IMG of=/tmp/nvmeof.tgt bs=64k count=$((MIB * 16)) 2>/dev/null
	cmp -s /tmp/nvmeof.pat /tmp/nvmeof.tgt || _bad="$_bad target-file-differs"
	if [ -z "$_bad" ]; then
		t_pass $T:io
		diag "$MIB MiB written and read back, md5 $(md5sum </tmp/nvmeof.pat | cut -d' ' -f1)"
	else
		t_fail $T:io "${_bad# }"
	fi
	rm -f /tmp/nvmeof.pat /tmp/nvmeof.back /tmp/nvmeof.tgt
else
	t_fail $T:io "no namespace to write to"
fi

# ---- teardown -----------------------------------------------------------------
_bad=
nvme_disconnect "$ctrl" || _bad=$why
nvmet_down $NQN $IMG || _bad="$_bad $why"
for m in nvme_rdma nvmet_rdma; do
	unload_tree $m 2>/tmp/nvmeof.rmmod || _bad="$_bad $m not unloaded: $(cat /tmp/nvmeof.rmmod)"
done
_ids=$(rdma resource show 2>/dev/null | sed -n 's/.* cm_id \([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
[ "$_ids" -eq 0 ] || _bad="$_bad $_ids rdma_cm ids left"
if [ -z "$_bad" ]; then t_pass $T:disconnect; else t_fail $T:disconnect "${_bad# }"; fi

# ---- the kernel's log -----------------------------------------------------------
dmesg_since "$mark" >/tmp/nvmeof.dmesg
if grep -E 'Oops|WARNING:|BUG:|Call Trace|general protection' /tmp/nvmeof.dmesg >/tmp/nvmeof.trouble; then
	diag_file /tmp/nvmeof.trouble
	t_fail $T:dmesg "kernel trouble during the test"
else
	t_pass $T:dmesg
fi
done_
