#!/bin/sh
# shellcheck shell=sh
# NFS over RDMA across the IB router to a stock server (issue 26; tests/vm/
# README.md "vm-mixed"): the kernel's own knfsd with svcrdma on b1 in the
# peer guest (the distribution's stack, no overlay), the kernel's own NFS
# client with xprtrdma on a1 here (the overlay), addressed by IP over
# IPoIB as mixed-nvmeof is (ib-routed-ipresolved answers b1's GID, the
# return record from b2, B's service node).
#
# nfs:stack        the peer runs the distribution's stack, this guest the
#                  overlay's; simfab, IPoIB and the addresses in both
# nfs:server       in the peer: knfsd serving a tmpfs as the NFSv4 root to
#                  a1's address on an RDMA listener (guest.sh nfsd_up: no
#                  userspace server in the image)
# nfs:mount        here: `mount -t nfs4 -o proto=rdma` (util-linux's mount,
#                  text options to the kernel), NFSv4.1 over rdma to b1
# nfs:path         the connection went through the router: the REQ at b1
#                  from the router's port, with the return record's LID of
#                  b1 and B's SA's SL, the end-to-end MTU
# nfs:io           4 MiB of random data written, the page cache dropped,
#                  read back equal, and equal to the server's file
# nfs:umount       unmounted, the server stopped, no rdma_cm id left on
#                  either side
# nfs-ovl:*        the same with the overlay on both ends (an overlay NFS
#                  server): the peer switched to its kernel's overlay
#                  (nfs-ovl:peer-overlay) and back after it
#                  (nfs-ovl:peer-stock-again, the in-tree check again)
# nfs:peer-dmesg   the server's kernel: nothing bad in its log
#
# Skips without simfab.ko, ib_ipoib, nfsd, nfsv4, rpcrdma,
# ib-routed-ipresolved or util-linux's mount in the image.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=mixed-nfs
D=/sys/kernel/debug/simfab
TOPO=/tmp/mnfs.topo
EXPORT=/srv/nfs
MNT=/tmp/mnfs
MIB=4

done_() {
	t_summary
	exit 0
}
for m in simfab ib_ipoib nfsd nfsv4 rpcrdma ib_remote_sa; do
	if ! has_mod $m; then
		t_skip $T "$m is not in the image (make simfab; the kernel's CONFIG)"
		done_
	fi
done
if [ ! -x $NFS_MOUNT ] || [ ! -x "$IPRD" ]; then
	t_skip $T "util-linux's mount or ib-routed-ipresolved not in the image (make tools)"
	done_
fi
mark=$(dmesg_mark)
peer_up || done_

# ---- both kernels: the stacks, simfab, IPoIB --------------------------------------
chk_begin
mixed_ulp_stack
chk_end nfs:stack /tmp/mixed-peer-stack.out /tmp/mixed-peer-load.out /tmp/mixed-ipr/log
diag "a1 $AND $AIP, b1 $BND $BIP in the peer; RA=$RA RB=$RB MTU_E=$MTU_E SL_R=$SL_R"

# nfs_run PFX: the server in the peer, the mount here, the path, I/O
# and the teardown, as PFX:*.
nfs_run() {
	# ---- the server, in the peer ----
	if peer ". /ibr/lib/guest.sh; nfsd_up $EXPORT $AIP || { echo \"\$why\"; exit 1; }" >/tmp/mnfs-server.out 2>&1; then
		t_pass "$T:$1:server"
	else
		t_fail "$T:$1:server" "$(tail -n 1 /tmp/mnfs-server.out)"
	fi

	# ---- the client, here ----------------------------------------------------------------
	echo clear >$D/ctl
	peer "echo clear >$D/ctl"
	_bad=
	nfs_mount "$BIP" $MNT || _bad=$why
	cat $D/capture >/tmp/mnfs.cap
	peer "cat $D/capture" >/tmp/mnfs.pcap
	if [ -z "$_bad" ]; then
		t_pass "$T:$1:mount"
		diag "$nfs_line"
	else
		t_fail "$T:$1:mount" "$_bad"
		diag_file /tmp/nfs-mount.out
		diag_file /tmp/mixed-ipr/log
		dmesg_since "$mark" | grep -i 'nfs\|rpc\|rdma' | tail -n 20 >/tmp/mnfs-mount.dmesg
		diag_file /tmp/mnfs-mount.dmesg
		peer ". /ibr/lib/guest.sh; dmesg_since $pmark" | grep -i 'nfs\|rpc\|rdma' | tail -n 20 >/tmp/mnfs-mount.pdmesg
		diag_file /tmp/mnfs-mount.pdmesg
	fi

	# The REQ of the RPC-over-RDMA connection: through RA, at b1 in the peer
	# with the router's SLID on B; b1's LID and B's SA's SL from the return
	# record; the end-to-end MTU.
	chk_begin
	req_at_b1 /tmp/mnfs.pcap
	chk_end "$1:path" /tmp/mnfs.pcap

	# ---- I/O with verification ---------------------------------------------------------
	if grep -q " $MNT nfs4 " /proc/mounts; then
		_bad=
		nfs_io $MNT $MIB || _bad=$why
		chk server-file "$(peer "md5sum <$EXPORT/data | cut -d' ' -f1")" "$nfs_md5"
		if [ -z "$_bad" ]; then
			t_pass "$T:$1:io"
			diag "$MIB MiB written and read back across the router, md5 $nfs_md5"
		else
			t_fail "$T:$1:io" "${_bad# }"
			dmesg_since "$mark" | grep -i 'nfs\|rpc\|rdma' | tail -n 20 >/tmp/mnfs-io.dmesg
			diag_file /tmp/mnfs-io.dmesg
		fi
	else
		t_fail "$T:$1:io" "nothing mounted to write to"
	fi

	# ---- teardown ---------------------------------------------------------------------
	_bad=
	if grep -q " $MNT nfs4 " /proc/mounts; then
		timeout 60 umount $MNT || _bad="umount failed"
	fi
	unload_tree nfsv4 2>/dev/null
	unload_tree rpcrdma 2>/dev/null || _bad="$_bad rpcrdma not unloaded"
	peer ". /ibr/lib/guest.sh; nfsd_down $EXPORT || echo \"\$why\"; unload_tree nfsd 2>/dev/null; unload_tree rpcrdma 2>/dev/null" >/tmp/mnfs-down.out 2>&1
	[ ! -s /tmp/mnfs-down.out ] || _bad="$_bad server: $(tail -n 1 /tmp/mnfs-down.out)"
	wait_for 10 sh -c "[ \"\$(. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids)\" = 0 ]" || true
	chk ids-left "$(cm_ids) $(peer '. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; cm_ids')" "0 0"
	if [ -z "$_bad" ]; then t_pass "$T:$1:umount"; else t_fail "$T:$1:umount" "${_bad# }"; fi
}

# ---- a stock server ----
nfs_run nfs

# ---- the overlay on both ends: the peer switches to its kernel's overlay
# (guest.sh overlay_in), knfsd on it, and back to the distribution's stack
# for the tests after this one.
peer_switch overlay nfs-ovl:peer-overlay
nfs_run nfs-ovl
peer_switch stock nfs-ovl:peer-stock-again
mixed_ip_down

# ---- both kernels' logs ---------------------------------------------------------------
peer_dmesg nfs:peer-dmesg "the server's kernel"
unload_tree ib_ipoib 2>/dev/null
peer ". /ibr/lib/guest.sh; unload_tree ib_ipoib; rmmod simfab" >/dev/null 2>&1
rmmod simfab 2>/dev/null
chk_dmesg $T "$mark"
done_
