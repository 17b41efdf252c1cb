#!/bin/sh
# shellcheck shell=sh
# SCSI RDMA Protocol through the overlay's CM stack on Soft-RoCE (issue 26,
# item 8): the in-tree ib_srpt target (LIO, a file backstore) and ib_srp
# initiator, logged in over RDMA/CM (ib_srp's dest=, ib_srpt's
# rdma_cm_port), with the overlay's ib_cm/rdma_cm loaded. ib_srpt is a
# consumer of both ib_cm (its IB listener) and rdma_cm, and takes its
# channel from the QP context in its completion handlers, so this is
# behaviour a kABI check cannot see. No userspace tools: LIO is set up
# through configfs, the initiator through its add_target attribute, as
# targetcli and srp_daemon would.
#
# srp:stack       the overlay's rdma_cm and ib_cm are the loaded ones
# srp:target      a fileio backstore (16 MiB file on tmpfs) exported by
#                 ib_srpt on rxe0's port as LUN 0 to the initiator's
#                 address, listening for RDMA/CM logins on SRP_PORT
# srp:login       ib_srp logs in with id_ext/ioc_guid = ib_srpt's service
#                 GUID, dest=RXE_IP:SRP_PORT: an SRP remote port, a SCSI
#                 disk of the backstore's size, an rdma_cm id connected to
#                 the target's address and port
# srp:io          4 MiB of random data written to the disk and read back
#                 after dropping the page cache: equal, and equal to the
#                 backstore file
# srp:logout      the remote port deleted, ib_srp and the target unloaded,
#                 no rdma_cm id left
# Then srp:dmesg: no WARN/Oops/BUG while it ran.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

T=srp-rxe
IMG=/tmp/srp.img
MIB=4
SRP_PORT=5555
C=/sys/kernel/config/target

done_() {
	t_summary
	exit 0
}

need_mods $T ib_srpt ib_srp target_core_mod target_core_file sd_mod || done_
mark=$(dmesg_mark)
rxe_stack stack || done_

# ---- the target: a fileio backstore, ib_srpt's port, LUN 0, an ACL -----------
# ib_srpt names a RoCE port by its GID 0: a link-local one (fe80::/64)
# without its prefix, as targetcli lists it.
gid=$(cat /sys/class/infiniband/$RXE_DEV/ports/1/gids/0)
wwn=${gid#fe80:0000:0000:0000:}
[ "$wwn" != "$gid" ] || wwn=0x$(echo "$gid" | tr -d :)
tpg=$C/srpt/$wwn/$wwn
_bad=
[ -d $C ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
modprobe target_core_mod && modprobe target_core_file && modprobe ib_srpt || _bad="modprobe"
[ -n "$_bad" ] || [ -d $C/core ] || _bad="no $C/core"
if [ -z "$_bad" ]; then
	dd if=/dev/zero of=$IMG bs=1M count=16 2>/dev/null
	{ mkdir -p $C/core/fileio_0/srp0 &&
		echo "fd_dev_name=$IMG,fd_dev_size=$((16 << 20))" >$C/core/fileio_0/srp0/control &&
		echo 1 >$C/core/fileio_0/srp0/enable; } || _bad="backstore"
	{ mkdir -p $C/srpt && echo $SRP_PORT >$C/srpt/discovery_auth/rdma_cm_port; } || _bad="$_bad rdma_cm_port"
	{ mkdir -p "$tpg/lun/lun_0" && ln -s $C/core/fileio_0/srp0 "$tpg/lun/lun_0/srp0"; } || _bad="$_bad lun"
	# RDMA/CM logins are known by the initiator's address.
	{ mkdir -p "$tpg/acls/$RXE_IP/lun_0" &&
		ln -s "$tpg/lun/lun_0" "$tpg/acls/$RXE_IP/lun_0/lun_0"; } || _bad="$_bad acl"
	echo 1 >"$tpg/enable" || _bad="$_bad enable"
fi
if [ -z "$_bad" ]; then t_pass $T:target; else t_fail $T:target "${_bad# }"; fi

# ---- the initiator: a login over RDMA/CM -------------------------------------
_bad='' disk=''
modprobe sd_mod && modprobe ib_srp || _bad="modprobe ib_srp"
ioc=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid 2>/dev/null)
login=$(ls -d /sys/class/infiniband_srp/srp-$RXE_DEV-1 2>/dev/null)
[ -n "$login" ] || _bad="$_bad no /sys/class/infiniband_srp/srp-$RXE_DEV-1"
if [ -z "$_bad" ]; then
	echo "id_ext=$ioc,ioc_guid=$ioc,initiator_ext=$(echo "$gid" | tr -d : | cut -c1-16),src=$RXE_IP,dest=$RXE_IP:$SRP_PORT" \
		>"$login/add_target" 2>/tmp/srp.login || _bad="add_target: $(cat /tmp/srp.login)"
fi
# srp_disk: the block device of the SRP host's LUN 0, once it is there.
srp_disk() {
	for _h in /sys/class/srp_remote_ports/port-*; do
		[ -e "$_h" ] || continue
		_n=${_h##*/port-}
		for _b in /sys/class/scsi_device/"${_n%%:*}":*/device/block/*; do
			[ -e "$_b" ] && basename "$_b"
		done
	done | head -n 1
}
if [ -z "$_bad" ]; then
	wait_for 20 sh -c 'ls /sys/class/srp_remote_ports/port-* >/dev/null 2>&1' ||
		_bad="no SRP remote port"
	wait_for 20 sh -c 'ls /sys/class/scsi_device/*/device/block/* >/dev/null 2>&1' || true
	disk=$(srp_disk)
	[ -n "$disk" ] || _bad="$_bad no SCSI disk"
	[ -z "$disk" ] || [ "$(cat "/sys/block/$disk/size")" -eq $((16 << 11)) ] ||
		_bad="$_bad size=$(cat "/sys/block/$disk/size") sectors"
fi
# The login went over RDMA/CM: a connected rdma_cm id to the target's port.
rdma resource show cm_id >/tmp/srp.cmids 2>&1
grep -q "dst-addr $RXE_IP:$SRP_PORT" /tmp/srp.cmids || _bad="$_bad no rdma_cm id to $RXE_IP:$SRP_PORT"
if [ -z "$_bad" ]; then
	t_pass $T:login
	diag "SRP disk /dev/$disk: $(ls /sys/class/srp_remote_ports/)"
	diag_file /tmp/srp.cmids
else
	t_fail $T:login "${_bad# }"
fi

# ---- I/O with verification -----------------------------------------------------
chk_io $T "$disk" $MIB /tmp/srp $IMG

# ---- logout and teardown ----------------------------------------------------------
_bad=
for _p in /sys/class/srp_remote_ports/port-*; do
	[ -e "$_p" ] && { echo 1 >"$_p/delete" || _bad="delete $_p refused"; }
done
wait_for 20 sh -c '! ls /sys/class/srp_remote_ports/port-* >/dev/null 2>&1' || _bad="$_bad remote port still there"
unload_tree ib_srp 2>/tmp/srp.rmmod || _bad="$_bad ib_srp not unloaded: $(cat /tmp/srp.rmmod)"
echo 0 >"$tpg/enable" 2>/dev/null
rm -f "$tpg/acls/$RXE_IP/lun_0/lun_0" "$tpg/lun/lun_0/srp0"
rmdir "$tpg/acls/$RXE_IP/lun_0" "$tpg/acls/$RXE_IP" "$tpg/lun/lun_0" "$tpg" \
	"$C/srpt/$wwn" $C/srpt $C/core/fileio_0/srp0 $C/core/fileio_0 2>/dev/null
for m in ib_srpt target_core_file target_core_mod; do
	unload_tree $m 2>/tmp/srp.rmmod || _bad="$_bad $m not unloaded: $(cat /tmp/srp.rmmod)"
done
rm -f $IMG
cm_ids_gone || _bad="$_bad rdma_cm ids left: $(rdma resource show cm_id 2>&1 | head -n 2)"
if [ -z "$_bad" ]; then t_pass $T:logout; else t_fail $T:logout "${_bad# }"; fi

# ---- the kernel's log ---------------------------------------------------------
chk_oops $T "$mark"
done_
