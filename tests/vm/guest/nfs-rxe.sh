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
if [ ! -x $NFS_MOUNT ]; then
	t_skip $T "util-linux's mount is not in the image (tests/vm/lib/mkinitramfs)"
	done_
fi
mark=$(dmesg_mark)
rxe_stack nfs:stack || done_

# ---- the server: its client is this host, on the same address -----------------
if nfsd_up $EXPORT "$RXE_IP"; then t_pass $T:nfs:server; else t_fail $T:nfs:server "$why"; fi

# ---- the client ---------------------------------------------------------------
_bad=
nfs_mount "$RXE_IP" $MNT || _bad=$why
if [ -z "$_bad" ]; then
	t_pass $T:nfs:mount
	diag "$nfs_line"
else
	t_fail $T:nfs:mount "$_bad"
	dmesg_since "$mark" | grep -i 'nfs\|rpc\|rdma' | tail -n 20 >/tmp/nfs-rxe.dmesg
	diag_file /tmp/nfs-rxe.dmesg
fi

# ---- I/O with verification ----------------------------------------------------
if grep -q " $MNT nfs4 " /proc/mounts; then
	_bad=
	nfs_io $MNT $MIB || _bad=$why
	_s=$(md5sum <$EXPORT/data | cut -d' ' -f1)
	[ "$_s" = "$nfs_md5" ] || _bad="$_bad the server's file ${_s:-missing}, wrote $nfs_md5"
	if [ -z "$_bad" ]; then
		t_pass $T:nfs:io
		diag "$MIB MiB written and read back, md5 $nfs_md5"
	else
		t_fail $T:nfs:io "${_bad# }"
	fi
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
