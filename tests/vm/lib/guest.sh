# shellcheck shell=sh
# Helpers for guest tests (busybox sh), sourced as /ibr/lib/guest.sh.
# Defines functions and a few variables; prints nothing by itself.
# Variables set here are read by the sourcing scripts.
# shellcheck disable=SC2034

# shellcheck source=tests/lib/result.sh
. /ibr/lib/result.sh

KVER=$(uname -r)
MODDIR=/lib/modules/$KVER
STAMP_FILE=/ibr/stamp
# The overlay's modules (from its stamp), else the ones it would replace.
OVERLAY_MODS="ib_cm rdma_cm rdma_ucm"
# RFC 5737 TEST-NET-1: documentation addresses, never routed anywhere.
RXE_IP=192.0.2.1
RXE_NETDEV=ibr0
RXE_DEV=rxe0

# A diagnostic line: anything not a result line starts with "# ".
diag() {
	printf '# %s\n' "$*"
}

# Print a file's lines as diagnostics (tool output after a failure).
diag_file() {
	[ -s "$1" ] && sed 's/^/#   /' "$1"
	return 0
}

# stamp_get KEY: a value from the stamp file, quotes removed.
stamp_get() {
	[ -f "$STAMP_FILE" ] || return 1
	sed -n "s/^$1=//p" "$STAMP_FILE" | sed 's/^"\(.*\)"$/\1/'
}
if [ -f "$STAMP_FILE" ]; then
	OVERLAY_MODS=$(stamp_get MODULES)
fi

# intree_ko NAME: the path of the kernel's own rdma core module NAME, as the
# kernel package ships it (.ko on 6.1; .ko.xz on 6.12 and later, which
# kmod's insmod and modinfo read as they are).
intree_ko() {
	for _k in "$MODDIR/kernel/drivers/infiniband/core/$1.ko" \
		"$MODDIR/kernel/drivers/infiniband/core/$1.ko.xz" \
		"$MODDIR/kernel/drivers/infiniband/core/$1.ko.zst"; do
		[ -f "$_k" ] && { echo "$_k"; return 0; }
	done
	echo "$MODDIR/kernel/drivers/infiniband/core/$1.ko"
	return 1
}

# ---- kernel log ----------------------------------------------------------
# dmesg_mark: the timestamp of the last kernel log line so far;
# dmesg_since MARK: the lines logged after it. Lets a test look at what its
# own actions logged. By time, not by line count: once the log ring wraps
# (a whole tier in one boot logs a lot), a count points at other lines.
dmesg_mark() {
	dmesg | awk 'match($0, /^\[ *[0-9]+\.[0-9]+\]/) { t = substr($0, RSTART + 1, RLENGTH - 2) }
		END { gsub(/ /, "", t); print (t == "" ? 0 : t) }'
}
dmesg_since() {
	dmesg | awk -v m="$1" 'match($0, /^\[ *[0-9]+\.[0-9]+\]/) { t = substr($0, RSTART + 1, RLENGTH - 2) + 0 }
		t > m + 0'
}
# Lines that mean something went wrong in the kernel (the host applies the
# same to the whole log; tests use it to attribute trouble to a step).
DMESG_BAD='Oops|WARNING:|WARN|BUG:|Call Trace|general protection|disagrees about version of symbol|Unknown symbol|[Ee]rror|[Ff]ail'

# need_mods NAME MODULE...: every MODULE is in the image's modules.dep
# (modules.dep may name a file with dashes, nvmet-rdma.ko; modprobe takes
# either), else NAME is skipped with the first one missing and it fails.
need_mods() {
	_t=$1
	shift
	for _m in "$@"; do
		if ! grep -q "/${_m}\.ko[.a-z]*:" "$MODDIR/modules.dep"; then
			t_skip "$_t" "$_m is not in the image's modules (the kernel has no CONFIG for it?)"
			return 1
		fi
	done
}

# chk_oops NAME MARK: NAME:dmesg passes unless the kernel log since
# dmesg_mark MARK has an oops, WARN, BUG or call trace (the ULP tests: the
# ULPs log their own errors on the way, a teardown's included).
chk_oops() {
	dmesg_since "$2" >"/tmp/$1.dmesg"
	if grep -E 'Oops|WARNING:|BUG:|Call Trace|general protection' "/tmp/$1.dmesg" >"/tmp/$1.trouble"; then
		diag_file "/tmp/$1.trouble"
		t_fail "$1:dmesg" "kernel trouble during the test"
	else
		t_pass "$1:dmesg"
	fi
}

# ---- modules -------------------------------------------------------------
# load_stack: the CM stack as a consumer loads it (modprobe rdma_ucm), then
# the overlay modules no in-tree module pulls in (ib_remote_sa, until
# rdma_cm depends on it).
load_stack() {
	modprobe rdma_ucm || return 1
	for _m in $OVERLAY_MODS; do
		modprobe "$_m" || return 1
	done
}

mod_loaded() {
	[ -d "/sys/module/$(echo "$1" | tr - _)" ]
}

# overlay_check M: succeeds when the loaded M is the overlay's; otherwise
# sets $why. Three independent views must agree: modprobe resolves M to the
# updates/ file, the loaded module carries the stamp as its version, and its
# srcversion is that of the updates/ file (so it was loaded from it, not from
# some other file with the same version string).
overlay_check() {
	why=
	_m=$1
	if ! mod_loaded "$_m"; then
		why="$_m is not loaded"
		return 1
	fi
	_path=$(modinfo -n "$_m" 2>/dev/null)
	case $_path in
	"$MODDIR"/updates/*) ;;
	*) why="modinfo -n $_m gives '$_path', not under $MODDIR/updates/"; return 1 ;;
	esac
	_stamp=$(stamp_get STAMP) || { why="no stamp file $STAMP_FILE"; return 1; }
	_ver=$(cat "/sys/module/$_m/version" 2>/dev/null)
	if [ "$_ver" != "$_stamp" ]; then
		why="/sys/module/$_m/version is '$_ver', stamp is '$_stamp'"
		return 1
	fi
	_src=$(cat "/sys/module/$_m/srcversion" 2>/dev/null)
	_fsrc=$(modinfo -F srcversion "$_path" 2>/dev/null)
	if [ -z "$_src" ] || [ "$_src" != "$_fsrc" ]; then
		why="/sys/module/$_m/srcversion '$_src' differs from $_path's '$_fsrc'"
		return 1
	fi
	return 0
}

# rxe_stack NAME: rxe up and the CM stack loaded, the overlay's ib_cm and
# rdma_cm checked when the guest booted with it: $T:NAME passes or fails;
# returns 1 when the test cannot go on ($T:rxe or $T:NAME failed).
rxe_stack() {
	if ! rxe_up; then
		t_fail "$T:rxe" "could not bring up $RXE_DEV on $RXE_NETDEV"
		return 1
	fi
	if ! load_stack; then
		t_fail "$T:$1" "modprobe rdma_ucm failed"
		return 1
	fi
	_bad=
	for _m in ib_cm rdma_cm; do
		overlay_check $_m || _bad="$_bad $why"
	done
	if [ -z "$_bad" ]; then t_pass "$T:$1"; else t_fail "$T:$1" "${_bad# }"; fi
}

# overlay_in: in a guest booted with the distribution's stack and a spare
# overlay in /ibr/overlay (tests/vm/lib/mkinitramfs
# IBR_VM_SPARE_OVERLAY: the mixed tier's peer), the overlay's modules
# replace the distribution's: everything using ib_cm or iw_cm unloaded
# (a test loads again what it needs: in-tree users such as ib_ipoib or
# nvmet-rdma take the overlay's, whose kABI is the kernel's), the
# overlay's inserted in dependency order, each then checked to be the
# file inserted (its version the spare stamp's, its srcversion the
# file's). overlay_out: back to the distribution's. Fail with $why set.
SPARE=/ibr/overlay
overlay_in() {
	why=
	[ -f $SPARE/stamp ] || { why="no spare overlay in the image ($SPARE)"; return 1; }
	_om=$(sed -n 's/^MODULES=//p' $SPARE/stamp | tr -d '"')
	_os=$(sed -n 's/^STAMP=//p' $SPARE/stamp | tr -d '"')
	for _m in ib_cm iw_cm; do
		unload_tree $_m 2>/dev/null || { why="$_m cannot be unloaded"; return 1; }
	done
	# The distribution's modules they need (configfs, ib_uverbs, iw_cm).
	for _m in $_om; do
		for _d in $(modinfo -F depends "$SPARE/$_m.ko" | tr , ' '); do
			case " $_om " in *" $_d "*) ;; *) modprobe "$_d" 2>/dev/null ;; esac
		done
	done
	for _m in $_om; do
		insmod "$SPARE/$_m.ko" || { why="insmod $_m failed"; return 1; }
		if [ "$(cat "/sys/module/$_m/version" 2>/dev/null)" != "$_os" ] ||
			[ "$(cat "/sys/module/$_m/srcversion")" != "$(modinfo -F srcversion "$SPARE/$_m.ko")" ]; then
			why="$_m is not the spare overlay's"
			return 1
		fi
	done
}
overlay_out() {
	why=
	for _m in ib_cm iw_cm ib_remote_sa; do
		unload_tree $_m 2>/dev/null || why="$why $_m cannot be unloaded"
	done
	why=${why# }
	[ -z "$why" ]
}

# unload_tree M: remove M after everything holding it (depth first). Used to
# take the CM stack down no matter which in-tree users an earlier test loaded.
unload_tree() {
	# local (busybox sh has it): the recursion must not clobber the
	# caller's module name.
	# shellcheck disable=SC3043
	local _u _h
	_u=$(echo "$1" | tr - _)
	mod_loaded "$_u" || return 0
	for _h in /sys/module/"$_u"/holders/*; do
		[ -e "$_h" ] || continue
		unload_tree "$(basename "$_h")" || return 1
	done
	rmmod "$_u"
}

# ---- Soft-RoCE -----------------------------------------------------------
# rxe_up: rxe0 on a dummy netdev with $RXE_IP, port ACTIVE. Idempotent, so
# every test can call it whatever ran before in the same boot.
rxe_up() {
	# rdma_rxe computes its ICRC with crc32 from the crypto API; without
	# the generic implementation loaded it fails to init (-ENOENT) up to
	# 6.x; 7.x has crc32 in the library and no such module.
	if find "/lib/modules/$(uname -r)" -name 'crc32[-_]generic.ko*' | grep -q .; then
		modprobe crc32_generic || return 1
	fi
	modprobe rdma_rxe || return 1
	ip link set lo up
	if ! ip link show "$RXE_NETDEV" >/dev/null 2>&1; then
		ip link add "$RXE_NETDEV" type dummy || return 1
		ip addr add "$RXE_IP/24" dev "$RXE_NETDEV" || return 1
		ip link set "$RXE_NETDEV" up || return 1
	fi
	if ! rdma link show "$RXE_DEV/1" >/dev/null 2>&1; then
		rdma link add "$RXE_DEV" type rxe netdev "$RXE_NETDEV" || return 1
	fi
	_i=0
	while [ $_i -lt 50 ]; do
		rdma link show "$RXE_DEV/1" 2>/dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	diag "$RXE_DEV did not become ACTIVE: $(rdma link show 2>&1)"
	return 1
}

# wait_for SECONDS CMD...: until CMD succeeds, polled every 0.1 s; fails
# when SECONDS pass first.
wait_for() {
	_w=$(($1 * 10))
	shift
	until "$@"; do
		_w=$((_w - 1))
		[ "$_w" -gt 0 ] || return 1
		sleep 0.1
	done
}

# wait_listen PORT [SECONDS]: until an rdma_cm id listens on PORT, so a
# client never races its server's bind (rdma's resource view shows cm_ids).
wait_listen() {
	_n=$((${2:-15} * 10))
	while [ "$_n" -gt 0 ]; do
		rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ":$1 " && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# server_client NAME PORT SECS "SERVER CMD" "CLIENT CMD": run a server in
# the background and a client against it, each bounded by SECS. Succeeds
# when both exit 0; otherwise sets $why. Output in /tmp/NAME.{server,client}.
# With SERVER_PERSISTS=1 the server is one that never exits by itself
# (cmtime's): it must still be running when the client is done, and is then
# stopped.
server_client() {
	_name=$1 _port=$2 _secs=$3
	why=
	if [ "${SERVER_PERSISTS:-}" = 1 ]; then
		_persist=1
	else
		_persist=
	fi
	# shellcheck disable=SC2086 # the commands are word lists on purpose
	timeout "$_secs" $4 >"/tmp/$_name.server" 2>&1 &
	_spid=$!
	if ! wait_listen "$_port"; then
		why="server '$4' never listened on port $_port"
		kill "$_spid" 2>/dev/null
		wait "$_spid" 2>/dev/null
		diag_file "/tmp/$_name.server"
		return 1
	fi
	# shellcheck disable=SC2086
	timeout "$_secs" $5 >"/tmp/$_name.client" 2>&1
	_crc=$?
	if [ -n "$_persist" ]; then
		if kill "$_spid" 2>/dev/null; then
			wait "$_spid" 2>/dev/null
			_src=0
		else
			wait "$_spid" 2>/dev/null
			_src="$? (exited before it was stopped)"
		fi
	else
		[ $_crc -eq 0 ] || kill "$_spid" 2>/dev/null
		wait "$_spid" 2>/dev/null
		_src=$?
	fi
	if [ $_crc -ne 0 ] || [ "$_src" != 0 ]; then
		why="client exit $_crc, server exit $_src (124/143 = timed out)"
		diag "$_name server: $4"
		diag_file "/tmp/$_name.server"
		diag "$_name client: $5"
		diag_file "/tmp/$_name.client"
		return 1
	fi
	return 0
}

# rping_check NAME PORT COUNT: an rping of COUNT verified messages; checks
# the exit codes and that both sides printed every message's data.
rping_check() {
	server_client "$1" "$2" 60 \
		"rping -s -a $RXE_IP -p $2 -C $3 -v -V" \
		"rping -c -a $RXE_IP -p $2 -C $3 -v -V" || return 1
	for _side in client server; do
		_got=$(grep -c 'ping data: rdma-ping-' "/tmp/$1.$_side")
		if [ "$_got" -ne "$3" ]; then
			why="$_side printed $_got of $3 ping data lines"
			diag_file "/tmp/$1.$_side"
			return 1
		fi
	done
	return 0
}

# ---- the peer guest (mixed tier; tests/simfab/README.md "Guests") -----------
# peer CMD...: run CMD (shell commands, any number of lines) in the peer guest through
# its agent (lib/peer-agent); prints its output, returns its exit status
# (255 when the peer does not answer). The peer runs the distribution's own
# RDMA stack; the link is 10.77.0.1 (here) to 10.77.0.2 (the peer).
PEER_IP=10.77.0.2
peer() {
	# One line on the wire whatever CMD holds: base64 (the agent decodes).
	_pout=$(printf '%s' "$*" | base64 -w 0 | { cat; echo; } | nc -w 10 $PEER_IP 7000 2>/dev/null)
	_prc=$(printf '%s\n' "$_pout" | sed -n 's/^# peer-rc=\([0-9]*\)$/\1/p' | tail -n 1)
	printf '%s\n' "$_pout" | grep -v '^# peer-rc=[0-9]*$'
	return "${_prc:-255}"
}

# peer_wait SECONDS: until the peer's agent answers (it boots next to this
# guest); fails when SECONDS pass first.
peer_wait() {
	wait_for "$1" peer true
}

# ipoib_by_gid HEX: the IPoIB netdev whose hardware address ends with the
# GID HEX (32 hex digits; the address is 4 bytes of QPN, then the GID).
ipoib_by_gid() {
	for _n in /sys/class/net/*; do
		[ "$(tr -d : <"$_n/address" 2>/dev/null | cut -c9-40)" = "$1" ] &&
			echo "${_n##*/}"
	done
}

# ---- swapping the CM stack in one boot (the bench-rxe-* benchmarks) ------------
# cm_ids_gone: no rdma_cm id left (waits up to 10 s). A consumer that
# outlived its round would keep the stack busy and make a reload refuse.
cm_ids_gone() {
	_n=100
	while [ "$_n" -gt 0 ]; do
		[ -z "$(rdma resource show cm_id 2>/dev/null)" ] && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# stack_is in-tree|overlay: the loaded CM modules are that stack's.
stack_is() {
	why=
	for _m in $OVERLAY_MODS; do
		case $_m in ib_cm|rdma_cm|rdma_ucm) ;; *) continue ;; esac
		if [ "$1" = overlay ]; then
			overlay_check "$_m" || return 1
		else
			mod_loaded "$_m" || { why="$_m is not loaded"; return 1; }
			_v=$(cat "/sys/module/$_m/version" 2>/dev/null)
			[ -z "$_v" ] || { why="$_m has version '$_v'"; return 1; }
		fi
	done
}

# swap_to in-tree|overlay: with ib-routed-reload; a consumer still holding
# the stack (a server that did not exit) is stopped by --force. Fails with
# $why set unless the stack asked for is the loaded one.
swap_to() {
	_arg=
	[ "$1" = in-tree ] && _arg=--in-tree
	cm_ids_gone || diag "cm_ids still open before the swap: $(rdma resource show cm_id 2>&1 | head -n 3)"
	# shellcheck disable=SC2086 # empty or one option
	timeout 120 /usr/sbin/ib-routed-reload $_arg >/tmp/swap.out 2>&1
	_rc=$?
	if [ "$_rc" -eq 4 ]; then
		diag "reload refused (consumers), forcing: $(grep consumer /tmp/swap.out | head -n 1)"
		# shellcheck disable=SC2086
		timeout 120 /usr/sbin/ib-routed-reload $_arg --force >/tmp/swap.out 2>&1
		_rc=$?
	fi
	[ "$_rc" -eq 0 ] || { why="ib-routed-reload $_arg exit $_rc"; diag_file /tmp/swap.out; return 1; }
	stack_is "$1"
}

# stack_rounds NAME ROUNDS FUNC: ROUNDS rounds of FUNC on each stack, the
# in-tree one first in odd rounds and the overlay first in even ones, so
# that drift in the emulator's speed falls on both alike. Each swaps the
# stack (swap_to) and runs FUNC STACK ROUND in this shell: its output (the
# bench lines, diagnostics) is printed when it succeeds, else
# "NAME:round-R-STACK" fails with FUNC's $why, and only its diagnostics
# are printed. $ran: how many ran; the overlay is loaded after.
stack_rounds() {
	ran=0
	_i=1
	while [ "$_i" -le "$2" ]; do
		if [ $((_i % 2)) -eq 1 ]; then _order="in-tree overlay"; else _order="overlay in-tree"; fi
		for _s in $_order; do
			if ! swap_to "$_s"; then
				t_fail "$1:round-$_i-$_s" "could not swap to $_s: $why"
				continue
			fi
			if "$3" "$_s" "$_i" >/tmp/stack-round.out; then
				cat /tmp/stack-round.out
				ran=$((ran + 1))
			else
				t_fail "$1:round-$_i-$_s" "$why"
				# its diagnostics, not the figures of a failed run
				grep -v '^# bench ' /tmp/stack-round.out
			fi
		done
		_i=$((_i + 1))
	done
	swap_to overlay || diag "could not leave the overlay loaded: $why"
}

# ---- NVMe over Fabrics (nvmeof-rxe, mixed-nvmeof) ----------------------------
NVMET_CFG=/sys/kernel/config/nvmet
# nvmet_up NQN FILE IP PORT: nvmet-rdma loaded and a subsystem NQN (any
# host allowed) with one namespace, FILE (16 MiB, made here; buffered
# I/O), on RDMA port 1 at IP:PORT, through nvmet's configfs; fails with
# $why set, the port's "enabling" line not logged included.
nvmet_up() {
	why=
	_nm=$(dmesg_mark)
	modprobe nvmet_rdma || { why="modprobe nvmet_rdma failed"; return 1; }
	# configfs is a module: /init's mount came before anything loaded it.
	[ -d $NVMET_CFG ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null
	[ -d $NVMET_CFG ] || { why="no $NVMET_CFG"; return 1; }
	dd if=/dev/zero of="$2" bs=1M count=16 2>/dev/null || { why="no backing file"; return 1; }
	_s=$NVMET_CFG/subsystems/$1
	mkdir "$_s" && echo 1 >"$_s/attr_allow_any_host" || why="subsystem"
	mkdir "$_s/namespaces/1" && echo "$2" >"$_s/namespaces/1/device_path" &&
		echo 1 >"$_s/namespaces/1/buffered_io" &&
		echo 1 >"$_s/namespaces/1/enable" || why="$why namespace"
	_p=$NVMET_CFG/ports/1
	mkdir $_p && echo rdma >$_p/addr_trtype && echo ipv4 >$_p/addr_adrfam &&
		echo "$3" >$_p/addr_traddr && echo "$4" >$_p/addr_trsvcid &&
		ln -s "$_s" "$_p/subsystems/$1" || why="$why port"
	dmesg_since "$_nm" | grep -q "nvmet_rdma: enabling port 1 ($3:$4)" ||
		why="$why port-not-enabled"
	why=${why# }
	[ -z "$why" ]
}

# nvmet_down NQN FILE: the port, namespace and subsystem removed, FILE
# deleted; fails with $why set.
nvmet_down() {
	why=
	rm -f "$NVMET_CFG/ports/1/subsystems/$1" 2>/dev/null
	rmdir $NVMET_CFG/ports/1 2>/dev/null
	echo 0 >"$NVMET_CFG/subsystems/$1/namespaces/1/enable" 2>/dev/null
	rmdir "$NVMET_CFG/subsystems/$1/namespaces/1" "$NVMET_CFG/subsystems/$1" 2>/dev/null
	[ ! -e "$NVMET_CFG/subsystems/$1" ] || why="subsystem not removed"
	rm -f "$2"
	[ -z "$why" ]
}

# chk_io NAME DISK MIB PREFIX BACKING: NAME:io passes when disk_io DISK
# MIB PREFIX does and BACKING, the target's file, holds what was written
# (the target flushed it); the files are removed after.
chk_io() {
	if [ -z "$2" ] || [ ! -b "/dev/$2" ]; then
		t_fail "$1:io" "no disk to write to"
		return
	fi
	_bad=
	disk_io "$2" "$3" "$4" || _bad=$why
	dd if="$5" of="$4.tgt" bs=64k count=$(($3 * 16)) 2>/dev/null
	cmp -s "$4.pat" "$4.tgt" || _bad="$_bad target-file-differs"
	if [ -z "$_bad" ]; then
		t_pass "$1:io"
		diag "$3 MiB written and read back, md5 $(md5sum <"$4.pat" | cut -d' ' -f1)"
	else
		t_fail "$1:io" "${_bad# }"
	fi
	rm -f "$4.pat" "$4.back" "$4.tgt"
}

# NFS over RDMA with the kernel's own server and no userspace: the image
# has no nfs-kernel-server, rpcbind or mountd, and needs none for NFSv4.
# nfsd_up DIR CLIENT: knfsd serves a new tmpfs at DIR as the NFSv4 root
# (fsid=0, rw, no_root_squash, no_subtree_check, insecure) to the
# address CLIENT, on an RDMA listener at NFSD_PORT (20049, RFC 8267's
# NFS-RDMA port), NFSv2/v3 off (so no lockd and no rpcbind
# registration), lease and grace at their minimum (10 s). The export
# caches are filled as rpc.mountd answers their upcalls (nfs-utils
# cache.c: auth.unix.ip "nfsd IP EXPIRY DOMAIN", nfsd.export "DOMAIN PATH
# EXPIRY FLAGS ANONUID ANONGID FSID", nfsd.fh "DOMAIN FSIDTYPE FSID
# EXPIRY PATH"; include/uapi/linux/nfsd/export.h for the flags), never
# expiring. Fails with $why set.
NFSD_PORT=20049
NFSD=/proc/fs/nfsd
nfsd_up() {
	why=
	if ! modprobe nfsd || ! modprobe rpcrdma; then
		why="modprobe nfsd rpcrdma failed"
		return 1
	fi
	[ -e $NFSD/threads ] || mount -t nfsd nfsd $NFSD || { why="cannot mount the nfsd filesystem"; return 1; }
	if ! mkdir -p "$1" || ! mount -t tmpfs -o size=64m tmpfs "$1"; then
		why="no tmpfs at $1"
		return 1
	fi
	# -2 is refused by kernels built without NFSv2 (6.2 and later): the
	# result is read back below.
	for _v in -2 -3; do echo "$_v" >$NFSD/versions 2>/dev/null; done
	echo 10 >$NFSD/nfsv4leasetime && echo 10 >$NFSD/nfsv4gracetime || why="lease/grace time"
	echo "rdma $NFSD_PORT" >$NFSD/portlist || { why="no RDMA listener (svcrdma)"; return 1; }
	echo 2 >$NFSD/threads || why="$why threads"
	_e=2147483647
	# 0x2402: NFSEXP_FSID | NFSEXP_NOSUBTREECHECK | NFSEXP_INSECURE_PORT
	echo "nfsd $2 $_e ibr" >/proc/net/rpc/auth.unix.ip/channel &&
		echo "ibr $1 $_e $((0x2402)) 65534 65534 0" >/proc/net/rpc/nfsd.export/channel &&
		printf 'ibr 1 \\x00000000 %s %s\n' "$_e" "$1" >/proc/net/rpc/nfsd.fh/channel ||
		why="$why export caches"
	grep -q "^rdma $NFSD_PORT\$" $NFSD/portlist || why="$why portlist: $(tr '\n' ' ' <$NFSD/portlist)"
	case " $(cat $NFSD/versions) " in *" -3 "*) ;; *) why="$why versions: $(cat $NFSD/versions)" ;; esac
	why=${why# }
	[ -z "$why" ]
}

# nfs_mount SERVER DIR: NFSv4.1 over RDMA from SERVER's root at DIR, with
# util-linux's mount (no mount.nfs in the image: the kernel takes the
# server's address as addr=), checked in /proc/mounts (its line in
# $nfs_line); fails with $why set, the mount's output in
# /tmp/nfs-mount.out.
NFS_MOUNT=/ibr/bin/mount
nfs_mount() {
	why='' nfs_line=''
	if ! modprobe rpcrdma || ! modprobe nfsv4; then
		why="modprobe rpcrdma nfsv4 failed"
		return 1
	fi
	mkdir -p "$2"
	if ! timeout 60 $NFS_MOUNT -t nfs4 -o "vers=4.1,proto=rdma,port=$NFSD_PORT,addr=$1" "$1:/" "$2" \
		>/tmp/nfs-mount.out 2>&1; then
		why="mount: $(tail -n 1 /tmp/nfs-mount.out)"
		return 1
	fi
	nfs_line=$(grep " $2 nfs4 " /proc/mounts)
	case $nfs_line in
	*proto=rdma*port=$NFSD_PORT*) ;;
	*) why="not NFS over RDMA: ${nfs_line:-not in /proc/mounts}"; return 1 ;;
	esac
}

# nfs_io DIR MIB: MIB MiB of random data written to DIR/data (the
# server's grace period, 10 s, holds the first OPEN back), the page
# cache dropped, read back equal; its md5 in $nfs_md5. Fails with $why set.
nfs_io() {
	why=
	dd if=/dev/urandom of=/tmp/nfs-io.pat bs=64k count=$(($2 * 16)) 2>/dev/null
	if ! timeout 60 cp /tmp/nfs-io.pat "$1/data" || ! timeout 60 sync; then
		why="write failed"
	fi
	echo 3 >/proc/sys/vm/drop_caches
	nfs_md5=$(md5sum </tmp/nfs-io.pat | cut -d' ' -f1)
	_r=$(timeout 60 md5sum <"$1/data" | cut -d' ' -f1)
	[ "$_r" = "$nfs_md5" ] || why="$why read back ${_r:-nothing}, wrote $nfs_md5"
	rm -f /tmp/nfs-io.pat
	why=${why# }
	[ -z "$why" ]
}

# nfsd_down DIR: the server stopped (its threads, listeners and export
# caches), DIR unmounted; fails with $why set.
nfsd_down() {
	why=
	echo 0 >$NFSD/threads 2>/dev/null
	[ "$(cat $NFSD/threads 2>/dev/null)" = 0 ] || why="nfsd threads left"
	# nfsd's file cache lets go of the files it kept open a moment later
	wait_for 10 umount "$1" 2>/dev/null || why="$why $1 busy"
	umount $NFSD 2>/dev/null
	why=${why# }
	[ -z "$why" ]
}

# nvme_find NQN IP PORT: the connected controller of subsystem NQN in
# $ctrl and its namespace's disk in $ns (nvmeXnY, the multipath head when
# native multipath is on, Debian's default); fails with $why set unless
# the controller is live over rdma at IP:PORT with its namespace.
nvme_find() {
	why='' ctrl='' ns=''
	for _c in /sys/class/nvme/nvme*; do
		[ "$(cat "$_c/subsysnqn" 2>/dev/null)" = "$1" ] && ctrl=$(basename "$_c")
	done
	[ -n "$ctrl" ] || { why="no controller for $1"; return 1; }
	wait_for 10 sh -c 'ls /sys/block | grep -q "^nvme[0-9]*n1$"' || true
	for _b in /sys/block/nvme*n1; do
		[ -e "$_b" ] || continue
		[ "$(cat "$_b/device/subsysnqn" 2>/dev/null)" = "$1" ] && ns=$(basename "$_b")
	done
	[ "$(cat /sys/class/nvme/"$ctrl"/transport)" = rdma ] || why="transport=$(cat /sys/class/nvme/"$ctrl"/transport)"
	[ "$(cat /sys/class/nvme/"$ctrl"/state)" = live ] || why="$why state=$(cat /sys/class/nvme/"$ctrl"/state)"
	grep -q "traddr=$2,trsvcid=$3" /sys/class/nvme/"$ctrl"/address || why="$why address=$(cat /sys/class/nvme/"$ctrl"/address)"
	[ -n "$ns" ] && [ -b "/dev/$ns" ] || why="$why no namespace block device"
	why=${why# }
	[ -z "$why" ]
}

# nvme_connect NQN IP PORT: nvme-rdma connected to subsystem NQN at
# IP:PORT with the fabrics options string nvme-cli's `nvme connect -t
# rdma -a IP -s PORT -n NQN` writes to /dev/nvme-fabrics; $ctrl and $ns as
# nvme_find sets them. Fails with $why set.
nvme_connect() {
	why='' ctrl='' ns=''
	modprobe nvme_rdma || { why="modprobe nvme_rdma failed"; return 1; }
	[ -c /dev/nvme-fabrics ] || { why="no /dev/nvme-fabrics"; return 1; }
	printf 'transport=rdma,traddr=%s,trsvcid=%s,nqn=%s' "$2" "$3" "$1" \
		>/dev/nvme-fabrics 2>/tmp/nvme-connect.err ||
		{ why="connect: $(cat /tmp/nvme-connect.err)"; return 1; }
	nvme_find "$1" "$2" "$3"
}

# nvme_disconnect CTRL: the controller deleted (nothing to do for an
# empty CTRL). Fails with $why set.
nvme_disconnect() {
	why=
	[ -n "$1" ] || return 0
	echo 1 >/sys/class/nvme/"$1"/delete_controller 2>/dev/null || why="delete_controller refused"
	wait_for 10 sh -c "[ ! -e /sys/class/nvme/$1 ]" || why="$why $1 still there"
	why=${why# }
	[ -z "$why" ]
}

# fio_randread NAME LABEL ROUND DISK SECS: fio's 4 KiB random reads of
# /dev/DISK for SECS seconds (O_DIRECT, psync, queue depth 1), printed as
# "# bench NAME LABEL ROUND iops|clat-us|clat-p99-us N" for tests/bench;
# fails with $why set (fio's errors in /tmp/bench-fio.err).
fio_randread() {
	why=
	if ! timeout $(($5 + 60)) fio --name=randread --filename="/dev/$4" \
		--rw=randread --bs=4k --direct=1 --ioengine=psync --iodepth=1 \
		--time_based --runtime="$5" --output-format=terse \
		--terse-version=3 >/tmp/bench-fio.out 2>/tmp/bench-fio.err; then
		why="fio failed: $(tail -n 1 /tmp/bench-fio.err)"
	elif ! awk -F';' -v b="$1" -v s="$2" -v r="$3" '
		$1 == 3 && $5 == 0 && $8 > 0 {
			printf "# bench %s %s %d iops %s\n", b, s, r, $8
			printf "# bench %s %s %d clat-us %s\n", b, s, r, $16
			for (i = 18; i <= 37; i++)
				if (index($i, "99.000000%=") == 1)
					printf "# bench %s %s %d clat-p99-us %s\n", b, s, r, substr($i, 12)
			ok = 1
		}
		END { exit !ok }' /tmp/bench-fio.out; then
		why="fio: no read figures (error or no I/O): $(head -c 200 /tmp/bench-fio.out)"
	fi
	[ -z "$why" ]
}

# disk_io DISK MIB PREFIX: MIB MiB of random data written to /dev/DISK
# and read back after dropping the page cache: the pattern in PREFIX.pat,
# what came back in PREFIX.back; fails with $why set unless they match.
disk_io() {
	why=
	dd if=/dev/urandom of="$3.pat" bs=1M count="$2" 2>/dev/null
	# bounded: a stuck queue fails here, not at the test's own timeout
	timeout 60 dd if="$3.pat" of=/dev/"$1" bs=64k conv=fsync 2>"$3.dd" || why="write: $(tail -n 1 "$3.dd")"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	timeout 60 dd if=/dev/"$1" of="$3.back" bs=64k count=$(($2 * 16)) 2>"$3.dd" || why="$why read: $(tail -n 1 "$3.dd")"
	cmp -s "$3.pat" "$3.back" || why="$why read-back-differs"
	why=${why# }
	[ -z "$why" ]
}
