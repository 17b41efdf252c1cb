#!/bin/sh
# shellcheck shell=sh
# The pkg tier's boot case, inside the Debian 12 root booted in QEMU with
# its own kernel and initramfs (tests/pkg/run boot). Prints result lines
# (tests/lib/result.sh, at /ibr/result.sh) named boot-PHASE:ITEM.
#
# usage: checks.sh [ROOT-]installed|removed
#   (ROOT-: the name of another root, trixie-installed for the Debian 13
#   root: the same checks, results named boot-trixie-installed:ITEM)
#   installed  ib-routed-dkms and ib-routed-utils installed with apt: the
#              in-tree stack loaded by path (as an initramfs that carried
#              in-tree copies would leave it) is swapped for the overlay by
#              the boot unit's own command line; each loaded module is the
#              DKMS-installed file; ib-routed-verify passes; rping runs
#              over Soft-RoCE through the overlay; ib-routed-reload refuses
#              while an rping server has /dev/infiniband/rdma_cm open
#   removed    after apt-get purge ib-routed-dkms and a reboot: the unit's
#              condition no longer holds, modprobe loads the in-tree
#              modules, rping works on them, ib-routed-verify says
#              ib-routed is not installed, ib-routed-reload exits 5
# shellcheck source=tests/lib/result.sh
. /ibr/result.sh

phase=${1:?usage: checks.sh [ROOT-]installed|removed}
KVER=$(uname -r)
MODDIR=/lib/modules/$KVER
STACK="ib_cm rdma_cm rdma_ucm"
IP=192.0.2.1
UNIT=/lib/systemd/system/ib-routed-reload.service
n() { printf 'boot-%s:%s' "$phase" "$1"; }
diag() { printf '# %s\n' "$*"; }
diag_file() { [ -s "$1" ] && sed 's/^/#   /' "$1"; return 0; }

# Soft-RoCE on a dummy netdev (tests/vm/lib/guest.sh's rxe_up, with the
# root's own iproute2).
rxe_up() {
	# crc32_generic up to 6.x; 7.x has crc32 in the library and no module
	if modinfo crc32_generic >/dev/null 2>&1; then
		modprobe crc32_generic || return 1
	fi
	modprobe rdma_rxe || return 1
	ip link set lo up
	ip link add ibr0 type dummy && ip addr add "$IP/24" dev ibr0 && ip link set ibr0 up || return 1
	rdma link add rxe0 type rxe netdev ibr0 || return 1
	i=0
	while [ $i -lt 50 ]; do
		rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
wait_listen() {
	i=0
	while [ $i -lt 150 ]; do
		rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ":$1 " && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# rping_ok PORT COUNT: client and server exit 0 and both print every
# message; sets $why.
rping_ok() {
	timeout 60 rping -s -a "$IP" -p "$1" -C "$2" -v -V >/tmp/rping.server 2>&1 &
	spid=$!
	if ! wait_listen "$1"; then
		why="the rping server did not listen"
		kill "$spid" 2>/dev/null
		diag_file /tmp/rping.server
		return 1
	fi
	timeout 60 rping -c -a "$IP" -p "$1" -C "$2" -v -V >/tmp/rping.client 2>&1
	crc=$?
	wait "$spid"
	src=$?
	why="client exit $crc, server exit $src"
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		diag_file /tmp/rping.client
		diag_file /tmp/rping.server
		return 1
	fi
	for side in client server; do
		got=$(grep -c 'ping data: rdma-ping-' "/tmp/rping.$side")
		[ "$got" -eq "$2" ] || { why="$side printed $got of $2 messages"; return 1; }
	done
}
# The loaded module's version and srcversion are those of the file modprobe
# resolves, under updates/dkms; sets $why.
overlay_loaded() {
	why=
	for m in $STACK; do
		f=$(modinfo -n "$m" 2>/dev/null)
		case $f in "$MODDIR"/updates/dkms/*) ;; *) why="modprobe resolves $m to '$f'"; return 1 ;; esac
		[ -n "$(modinfo -F ib_routed_version "$f")" ] || { why="$f has no ib-routed stamp"; return 1; }
		v=$(cat "/sys/module/$m/version" 2>/dev/null)
		[ "$v" = "$(modinfo -F version "$f")" ] || { why="$m: loaded version '$v', file '$(modinfo -F version "$f")'"; return 1; }
		s=$(cat "/sys/module/$m/srcversion" 2>/dev/null)
		[ "$s" = "$(modinfo -F srcversion "$f")" ] || { why="$m: loaded srcversion '$s' is not $f's"; return 1; }
	done
}
# The in-tree modules are loaded (no version: the overlay's carry the
# stamp); with "resolved", modprobe also resolves them to kernel/.
intree_loaded() {
	why=
	for m in $STACK; do
		[ -e "/sys/module/$m/initstate" ] || { why="$m is not loaded"; return 1; }
		v=$(cat "/sys/module/$m/version" 2>/dev/null)
		[ -z "$v" ] || { why="$m has version '$v' (an ib-routed build)"; return 1; }
		[ "${1:-}" = resolved ] || continue
		f=$(modinfo -n "$m" 2>/dev/null)
		case $f in "$MODDIR"/kernel/*) ;; *) why="modprobe resolves $m to '$f'"; return 1 ;; esac
	done
}
# unit_condition: a ConditionPathExistsGlob of the installed unit matches.
unit_condition() {
	# shellcheck disable=SC2013 # one glob a line, no spaces
	for g in $(sed -n 's/^ConditionPathExistsGlob=|\{0,1\}//p' "$UNIT" | sed "s/%v/$KVER/g"); do
		# shellcheck disable=SC2086 # the glob is meant to expand
		for p in $g; do [ -e "$p" ] && return 0; done
	done
	return 1
}

if rxe_up; then
	t_pass "$(n rxe)"
else
	t_fail "$(n rxe)" "could not bring up rxe0: $(rdma link show 2>&1)"
fi

case ${phase##*-} in
installed)
	# The unit: installed, enabled by the package, its condition holds.
	if [ -f "$UNIT" ] && [ -L /etc/systemd/system/sysinit.target.wants/ib-routed-reload.service ] && unit_condition; then
		t_pass "$(n unit-enabled)"
	else
		t_fail "$(n unit-enabled)" "$UNIT missing, not enabled, or its ConditionPathExistsGlob does not match"
	fi
	cmd=$(sed -n 's/^ExecStart=//p' "$UNIT")
	diag "unit runs: $cmd"
	# What an initramfs with in-tree copies (or a boot before DKMS) leaves.
	ok=yes
	for m in $STACK; do
		f=$(find "$MODDIR/kernel/drivers/infiniband/core" -name "$m.ko*" | head -n 1)
		for d in $(modinfo -F depends "$f" | tr , ' '); do
			[ -e "/sys/module/$d/initstate" ] || modprobe "$d" || ok="modprobe $d failed"
		done
		insmod "$f" 2>/tmp/insmod.err || ok="insmod $f: $(cat /tmp/insmod.err)"
	done
	modprobe rpcrdma || ok="modprobe rpcrdma failed"
	if [ "$ok" = yes ] && intree_loaded; then
		t_pass "$(n intree-by-path)"
	else
		t_fail "$(n intree-by-path)" "${why:-$ok}"
	fi
	# shellcheck disable=SC2086 # the unit's command line
	timeout 120 $cmd >/tmp/reload.out 2>&1
	rc=$?
	diag_file /tmp/reload.out
	if [ $rc -eq 0 ] && overlay_loaded && [ -e /sys/module/rdma_cm/holders/rpcrdma ]; then
		t_pass "$(n reload-overlay)"
	else
		t_fail "$(n reload-overlay)" "exit $rc; ${why:-rpcrdma not loaded again}"
	fi
	timeout 60 ib-routed-verify --json >/tmp/verify.json 2>&1
	vrc=$?
	bad=$(grep -E '"severity": "(warn|error)"' /tmp/verify.json | sed -n 's/^ *"\([^"]*\)": {"severity": "\([a-z]*\)".*/\1=\2/p' | tr '\n' ' ')
	if [ $vrc -eq 0 ] || { [ $vrc -eq 1 ] && [ -n "$bad" ] && ! echo "$bad" | grep -q '=error'; }; then
		t_pass "$(n verify)"
		diag "ib-routed-verify exit $vrc${bad:+, warnings: $bad}"
	else
		t_fail "$(n verify)" "ib-routed-verify exit $vrc: $bad"
		diag_file /tmp/verify.json
	fi
	if rping_ok 7201 5; then
		t_pass "$(n rping-overlay)"
	else
		t_fail "$(n rping-overlay)" "$why"
	fi
	# A consumer: an rping server with /dev/infiniband/rdma_cm open.
	timeout 60 rping -s -a "$IP" -p 7202 -C 1000000 >/dev/null 2>&1 &
	spid=$!
	wait_listen 7202 || diag "the rping server did not listen"
	timeout 60 ib-routed-reload --in-tree >/tmp/refuse.out 2>&1
	rc=$?
	diag_file /tmp/refuse.out
	if [ $rc -eq 4 ] && grep -q '(rping) has /dev/infiniband/rdma_cm open' /tmp/refuse.out && overlay_loaded; then
		t_pass "$(n refuse-consumer)"
	else
		t_fail "$(n refuse-consumer)" "exit $rc (expected 4), no message naming rping, or the stack changed: ${why:-}"
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	;;
removed)
	if [ -f "$UNIT" ] && ! unit_condition; then
		t_pass "$(n unit-condition-false)"
	else
		t_fail "$(n unit-condition-false)" "the unit is missing or its condition still holds"
	fi
	modprobe rdma_ucm
	if intree_loaded resolved; then
		t_pass "$(n intree-loaded)"
	else
		t_fail "$(n intree-loaded)" "$why"
	fi
	if rping_ok 7203 3; then
		t_pass "$(n rping-intree)"
	else
		t_fail "$(n rping-intree)" "$why"
	fi
	timeout 60 ib-routed-verify --json >/tmp/verify.json 2>&1
	vrc=$?
	if [ $vrc -eq 2 ] && grep -q '"package": {"severity": "error", "message": "ib-routed is not installed' /tmp/verify.json; then
		t_pass "$(n verify-not-installed)"
	else
		t_fail "$(n verify-not-installed)" "ib-routed-verify exit $vrc, expected 2 with package: ib-routed is not installed"
		diag_file /tmp/verify.json
	fi
	timeout 60 ib-routed-reload >/tmp/reload.out 2>&1
	rc=$?
	diag_file /tmp/reload.out
	if [ $rc -eq 5 ] && grep -q 'ib-routed is not installed for kernel' /tmp/reload.out && intree_loaded resolved; then
		t_pass "$(n reload-not-installed)"
	else
		t_fail "$(n reload-not-installed)" "ib-routed-reload exit $rc, expected 5 'not installed' and no change"
	fi
	;;
*) t_fail "boot:phase" "unknown phase '$phase'" ;;
esac
t_summary
