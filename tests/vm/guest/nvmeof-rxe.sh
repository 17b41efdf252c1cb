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
CFG=/sys/kernel/config/nvmet
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
if ! rxe_up; then
	t_fail $T:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	done_
fi
if ! load_stack; then
	t_fail $T:stack "modprobe rdma_ucm failed"
	done_
fi
_bad=
for m in ib_cm rdma_cm; do
	overlay_check $m || _bad="$_bad $why"
done
if [ -z "$_bad" ]; then t_pass $T:stack; else t_fail $T:stack "${_bad# }"; fi

# ---- the target -------------------------------------------------------------
_bad=
modprobe nvmet_rdma || _bad="modprobe nvmet_rdma failed"
# configfs is a module: /init's mount came before anything loaded it.
[ -d $CFG ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
[ -d $CFG ] || _bad="$_bad no $CFG"
if [ -z "$_bad" ]; then
	dd if=/dev/zero of=$IMG bs=1M count=16 2>/dev/null || _bad="no backing file"
	S=$CFG/subsystems/$NQN
	mkdir $S && echo 1 >$S/attr_allow_any_host || _bad="$_bad subsystem"
	mkdir $S/namespaces/1 && echo $IMG >$S/namespaces/1/device_path &&
		echo 1 >$S/namespaces/1/buffered_io &&
		echo 1 >$S/namespaces/1/enable || _bad="$_bad namespace"
	P=$CFG/ports/1
	mkdir $P && echo rdma >$P/addr_trtype && echo ipv4 >$P/addr_adrfam &&
		echo "$RXE_IP" >$P/addr_traddr && echo $PORT >$P/addr_trsvcid &&
		ln -s $S $P/subsystems/$NQN || _bad="$_bad port"
	dmesg_since "$mark" | grep -q "nvmet_rdma: enabling port 1 ($RXE_IP:$PORT)" ||
		_bad="$_bad port-not-enabled"
fi
if [ -z "$_bad" ]; then t_pass $T:target; else t_fail $T:target "${_bad# }"; fi

# ---- the host ---------------------------------------------------------------
_bad=
modprobe nvme_rdma || _bad="modprobe nvme_rdma failed"
if [ -z "$_bad" ] && [ -c /dev/nvme-fabrics ]; then
	# What nvme-cli's `nvme connect -t rdma -a ... -s ... -n ...` writes.
	printf 'transport=rdma,traddr=%s,trsvcid=%s,nqn=%s' "$RXE_IP" $PORT $NQN \
		>/dev/nvme-fabrics 2>/tmp/nvmeof.connect || _bad="connect: $(cat /tmp/nvmeof.connect)"
else
	_bad="$_bad no /dev/nvme-fabrics"
fi
ctrl="" ns=""
if [ -z "$_bad" ]; then
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = $NQN ] && ctrl=$(basename "$c")
	done
	[ -n "$ctrl" ] || _bad="no controller for $NQN"
fi
if [ -n "$ctrl" ]; then
	# The namespace's disk: nvmeXnY, the multipath head when native
	# multipath is on (Debian's default), its device the subsystem.
	wait_for 10 sh -c 'ls /sys/block | grep -q "^nvme[0-9]*n1$"' || true
	for b in /sys/block/nvme*n1; do
		[ -e "$b" ] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = $NQN ] && ns=$(basename "$b")
	done
	[ "$(cat /sys/class/nvme/"$ctrl"/transport)" = rdma ] || _bad="$_bad transport=$(cat /sys/class/nvme/"$ctrl"/transport)"
	[ "$(cat /sys/class/nvme/"$ctrl"/state)" = live ] || _bad="$_bad state=$(cat /sys/class/nvme/"$ctrl"/state)"
	grep -q "traddr=$RXE_IP,trsvcid=$PORT" /sys/class/nvme/"$ctrl"/address || _bad="$_bad address=$(cat /sys/class/nvme/"$ctrl"/address)"
	[ -n "$ns" ] && [ -b "/dev/$ns" ] || _bad="$_bad no namespace block device"
fi
if [ -z "$_bad" ]; then
	t_pass $T:connect
	diag "controller $ctrl, namespace /dev/$ns: $(cat /sys/class/nvme/"$ctrl"/address)"
else
	t_fail $T:connect "${_bad# }"
fi

# ---- I/O with verification -------------------------------------------------
if [ -n "$ns" ] && [ -b "/dev/$ns" ]; then
	_bad=
	dd if=/dev/urandom of=/tmp/nvmeof.pat bs=1M count=$MIB 2>/dev/null
	dd if=/tmp/nvmeof.pat of=/dev/"$ns" bs=64k conv=fsync 2>/tmp/nvmeof.dd || _bad="write: $(tail -n 1 /tmp/nvmeof.dd)"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	dd if=/dev/"$ns" of=/tmp/nvmeof.back bs=64k count=$((MIB * 16)) 2>/tmp/nvmeof.dd || _bad="$_bad read: $(tail -n 1 /tmp/nvmeof.dd)"
	cmp -s /tmp/nvmeof.pat /tmp/nvmeof.back || _bad="$_bad read-back-differs"
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
if [ -n "$ctrl" ]; then
	echo 1 >/sys/class/nvme/"$ctrl"/delete_controller 2>/dev/null || _bad="delete_controller refused"
	wait_for 10 sh -c "[ ! -e /sys/class/nvme/$ctrl ]" || _bad="$_bad $ctrl still there"
fi
rm -f $CFG/ports/1/subsystems/$NQN 2>/dev/null
rmdir $CFG/ports/1 2>/dev/null
echo 0 >$CFG/subsystems/$NQN/namespaces/1/enable 2>/dev/null
rmdir $CFG/subsystems/$NQN/namespaces/1 $CFG/subsystems/$NQN 2>/dev/null
[ ! -e $CFG/subsystems/$NQN ] || _bad="$_bad subsystem not removed"
for m in nvme_rdma nvmet_rdma; do
	unload_tree $m 2>/tmp/nvmeof.rmmod || _bad="$_bad $m not unloaded: $(cat /tmp/nvmeof.rmmod)"
done
_ids=$(rdma resource show 2>/dev/null | sed -n 's/.* cm_id \([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
[ "$_ids" -eq 0 ] || _bad="$_bad $_ids rdma_cm ids left"
rm -f $IMG
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
