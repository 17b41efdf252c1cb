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

need_mods $T nvmet nvmet-rdma nvme-rdma nvme-fabrics || done_
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
chk_io $T "$ns" $MIB /tmp/nvmeof $IMG

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
chk_oops $T "$mark"
done_
