#!/bin/sh
# shellcheck shell=sh
# Unloading and reloading the overlay stack with Soft-RoCE up (what a package
# upgrade or `ib-routed reload` does): three cycles of removing rdma_ucm,
# rdma_cm and ib_cm (iw_cm stays, it is in-tree and not replaced) and
# loading them again; after each, the overlay is what is loaded, an rping
# works, and the cycle logged no errors.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

if ! rxe_up; then
	t_fail reload:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi
load_stack || t_fail reload:modprobe "modprobe rdma_ucm failed"

# Unload in reverse order of the stack; an in-tree user an earlier test
# loaded (ib_ipoib, rpcrdma, ...) holds ib_cm/rdma_cm and goes first.
reverse=
for m in $OVERLAY_MODS; do reverse="$m $reverse"; done

for cycle in 1 2 3; do
	name=reload:cycle$cycle
	mark=$(dmesg_mark)
	problem=
	for m in $reverse; do
		unload_tree "$m" || problem="could not unload $m: $(lsmod | grep "^$m ")"
	done
	for m in $OVERLAY_MODS; do
		! mod_loaded "$m" || problem="${problem:-$m still loaded after unload}"
	done
	mod_loaded iw_cm || problem="${problem:-iw_cm was unloaded too}"
	if [ -n "$problem" ]; then
		t_fail "$name" "$problem"
		continue
	fi
	if ! load_stack; then
		t_fail "$name" "modprobe rdma_ucm failed"
		continue
	fi
	for m in $OVERLAY_MODS; do
		overlay_check "$m" || problem="${problem:-$why}"
	done
	if [ -n "$problem" ]; then
		t_fail "$name" "$problem"
		continue
	fi
	if ! rping_check "rping$cycle" $((7180 + cycle)) 5; then
		t_fail "$name" "rping after reload: $why"
		continue
	fi
	bad=$(dmesg_since "$mark" | grep -E "$DMESG_BAD")
	if [ -n "$bad" ]; then
		t_fail "$name" "kernel logged: $(echo "$bad" | head -n 1)"
		printf '%s\n' "$bad" | sed 's/^/#   /'
		continue
	fi
	t_pass "$name"
done

t_summary
