#!/bin/sh
# shellcheck shell=sh
# NFS over RDMA through the overlay's rdma_cm on Soft-RoCE (issue 26, item
# 8): the kernel's own knfsd with svcrdma and its NFS client with xprtrdma,
# on one rxe device (the client mounts from the server at 192.0.2.1), with
# the overlay's ib_cm/rdma_cm loaded: a regression check of an in-tree
# consumer's behaviour, which a kABI check cannot see (svcrdma's and
# xprtrdma's completion handlers find their transport through the QP's
# and CQ's contexts, as nvmet-rdma does).
#
# nfs:stack    the overlay's rdma_cm and ib_cm are the loaded ones
# nfs:server   knfsd serving a tmpfs as the NFSv4 root on an RDMA listener
#              (guest.sh nfsd_up: no userspace server in the image)
# nfs:mount    `mount -t nfs4 -o proto=rdma` (util-linux's mount): NFSv4.1
#              over rdma to 192.0.2.1
# nfs:io       4 MiB of random data written, the page cache dropped, read
#              back equal, and equal to the server's file
# nfs:umount   unmounted, the server stopped, no rdma_cm id left
# Then dmesg: nothing bad in the kernel's log while it ran.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=nfs-rxe
MOUNT=/ibr/bin/mount
EXPORT=/srv/nfs
MNT=/tmp/nfs-rxe
MIB=4

done_() {
	t_summary
	exit 0
}
for m in nfsd nfsv4 rpcrdma; do
	if ! grep -q "/${m}\.ko[.a-z]*:" "$MODDIR/modules.dep"; then
		t_skip $T "$m is not in the image's modules (the kernel has no CONFIG for it?)"
		done_
	fi
done
if [ ! -x $MOUNT ]; then
	t_skip $T "util-linux's mount is not in the image (tests/vm/lib/mkinitramfs)"
	done_
fi
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
if [ -z "$_bad" ]; then t_pass $T:nfs:stack; else t_fail $T:nfs:stack "${_bad# }"; fi

# ---- the server: its client is this host, on the same address -----------------
if nfsd_up $EXPORT "$RXE_IP"; then t_pass $T:nfs:server; else t_fail $T:nfs:server "$why"; fi

# ---- the client ---------------------------------------------------------------
modprobe nfsv4
mkdir -p $MNT
_bad=
if timeout 60 $MOUNT -t nfs4 -o "vers=4.1,proto=rdma,port=$NFSD_PORT,addr=$RXE_IP" "$RXE_IP:/" $MNT \
	>/tmp/nfs-rxe.mount 2>&1; then
	_m=$(grep " $MNT nfs4 " /proc/mounts)
	case $_m in
	*proto=rdma*port=$NFSD_PORT*) ;;
	*) _bad="not NFS over RDMA: ${_m:-not in /proc/mounts}" ;;
	esac
else
	_bad="mount: $(tail -n 1 /tmp/nfs-rxe.mount)"
fi
if [ -z "$_bad" ]; then
	t_pass $T:nfs:mount
	diag "$_m"
else
	t_fail $T:nfs:mount "$_bad"
	dmesg_since "$mark" | grep -i 'nfs\|rpc\|rdma' | tail -n 20 >/tmp/nfs-rxe.dmesg
	diag_file /tmp/nfs-rxe.dmesg
fi

# ---- I/O with verification ----------------------------------------------------
if grep -q " $MNT nfs4 " /proc/mounts; then
	_bad=
	dd if=/dev/urandom of=/tmp/nfs-rxe.pat bs=64k count=$((MIB * 16)) 2>/dev/null
	# The server's grace period (10 s) holds the first OPEN back.
	timeout 60 cp /tmp/nfs-rxe.pat $MNT/data && timeout 60 sync || _bad="write failed"
	echo 3 >/proc/sys/vm/drop_caches
	_h=$(md5sum </tmp/nfs-rxe.pat | cut -d' ' -f1)
	_r=$(timeout 60 md5sum <$MNT/data | cut -d' ' -f1)
	[ "$_r" = "$_h" ] || _bad="$_bad read back ${_r:-nothing}, wrote $_h"
	_s=$(md5sum <$EXPORT/data | cut -d' ' -f1)
	[ "$_s" = "$_h" ] || _bad="$_bad the server's file ${_s:-missing}, wrote $_h"
	if [ -z "$_bad" ]; then
		t_pass $T:nfs:io
		diag "$MIB MiB written and read back, md5 $_h"
	else
		t_fail $T:nfs:io "${_bad# }"
	fi
	rm -f /tmp/nfs-rxe.pat
else
	t_fail $T:nfs:io "nothing mounted to write to"
fi

# ---- teardown -----------------------------------------------------------------
_bad=
if grep -q " $MNT nfs4 " /proc/mounts; then
	timeout 60 umount $MNT || _bad="umount failed"
fi
unload_tree nfsv4 2>/dev/null
nfsd_down $EXPORT || _bad="$_bad $why"
unload_tree nfsd 2>/dev/null
unload_tree rpcrdma 2>/dev/null || _bad="$_bad rpcrdma not unloaded"
_ids=$(cm_ids)
[ "$_ids" = 0 ] || _bad="$_bad rdma_cm ids left: $_ids"
if [ -z "$_bad" ]; then t_pass $T:nfs:umount; else t_fail $T:nfs:umount "${_bad# }"; fi
chk_dmesg $T "$mark"
done_
