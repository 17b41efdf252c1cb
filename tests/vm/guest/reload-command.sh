#!/bin/sh
# shellcheck shell=sh
# ib-routed-reload on a real kernel, with rxe up and an in-tree dependent
# (rpcrdma, which holds rdma_cm and ib_cm):
#  - swap: the in-tree stack loaded by path (as an initramfs would leave
#    it) is swapped for the overlay (each module checked against its file),
#    rpcrdma is loaded again against it, rping works, and a second run has
#    nothing to do;
#  - refusal: a background rping server has /dev/infiniband/rdma_cm open (a
#    consumer the guest can make; NFS over RDMA, NVMe-oF, iSER and IPoIB need
#    a target or a fabric rxe does not give, and are covered on fake trees
#    by tests/unit/reload): --in-tree exits 4 naming the process and
#    changes nothing; with --kill-rdma-cm-users (issue 24: not --force) the server is stopped and the in-tree
#    stack loaded;
#  - rollback: with the overlay's rdma_ucm.ko in updates/ made unloadable
#    (its vermagic altered past the release, which the kernel checks even
#    with modversions, while modinfo still reads it as an ib-routed build),
#    the swap fails after ib_cm and rdma_cm went in, exits 1, and the
#    in-tree stack and rpcrdma are loaded as before; rping still works.
# Leaves the overlay loaded, rpcrdma unloaded.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

R=/usr/sbin/ib-routed-reload
STACK="ib_cm rdma_cm rdma_ucm"
DEP=rpcrdma
if [ ! -x "$R" ]; then
	t_skip reload-command "ib-routed-reload not in the image"
	t_summary
	exit 0
fi
# Its module lookups are ib-routed-info's (libkmod; make tools).
if [ ! -x /usr/sbin/ib-routed-info ]; then
	t_skip reload-command "ib-routed-info not in the image (make tools)"
	t_summary
	exit 0
fi
if ! rxe_up; then
	t_fail reload-command:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi

# run_reload NAME ARGS...: output in /tmp/NAME.out, exit status in $rrc.
run_reload() {
	_n=$1
	shift
	timeout 120 "$R" "$@" >"/tmp/$_n.out" 2>&1
	rrc=$?
}
# The stack with nothing holding it (top down, one level at a time).
unload_stack() {
	unload_tree "$DEP" || diag "could not unload $DEP"
	for _m in rdma_ucm rdma_cm ib_cm; do
		unload_tree "$_m" || diag "could not unload $_m: $(lsmod | grep "^$_m ")"
	done
}
# The kernel's own files by path, each after its dependencies.
load_intree_by_path() {
	for _m in $STACK; do
		_f=$(intree_ko "$_m") || return 1
		for _d in $(modinfo -F depends "$_f" | tr , ' '); do
			mod_loaded "$_d" || modprobe "$_d" || return 1
		done
		insmod "$_f" || return 1
	done
}
# intree_check: every module of the stack loaded, none with a version (the
# in-tree modules have none; the overlay's carry the stamp); sets $why.
intree_check() {
	why=
	for _m in $STACK; do
		mod_loaded "$_m" || { why="$_m is not loaded"; return 1; }
		_v=$(cat "/sys/module/$_m/version" 2>/dev/null)
		[ -z "$_v" ] || { why="$_m has version '$_v': not the in-tree module"; return 1; }
	done
}
overlay_all() {
	for _m in $OVERLAY_MODS; do
		overlay_check "$_m" || return 1
	done
}
# The dependent is loaded and holds rdma_cm (it was loaded against the stack
# that is in now).
dep_check() {
	mod_loaded "$DEP" && [ -e "/sys/module/rdma_cm/holders/$DEP" ]
}
show() { diag_file "/tmp/$1.out"; }

# ---- the in-tree stack, by path, with a dependent ------------------------
unload_stack
if load_intree_by_path && modprobe "$DEP" && intree_check && dep_check; then
	t_pass reload-command:setup-intree
else
	t_fail reload-command:setup-intree "could not load the in-tree stack by path and $DEP: ${why:-}"
	lsmod | sed 's/^/#   /'
	t_summary
	exit
fi

# ---- swap to the overlay ---------------------------------------------------
mark=$(dmesg_mark)
run_reload swap
if [ "$rrc" -ne 0 ]; then
	t_fail reload-command:swap "exit $rrc"
	show swap
elif ! overlay_all; then
	t_fail reload-command:swap "exit 0 but $why"
	show swap
elif ! dep_check; then
	t_fail reload-command:swap "$DEP was not loaded again against the overlay"
	show swap
else
	t_pass reload-command:swap
fi
diag "swap: $(tail -n 1 /tmp/swap.out)"
bad=$(dmesg_since "$mark" | grep -E 'Oops|WARNING:|BUG:|Call Trace|disagrees about version of symbol|Unknown symbol')
t_check reload-command:swap-kernel-log "kernel logged: $(echo "$bad" | head -n 1)" [ -z "$bad" ]
if rping_check rc-rping1 7191 5; then
	t_pass reload-command:rping-overlay
else
	t_fail reload-command:rping-overlay "$why"
fi
run_reload again
if [ "$rrc" -eq 0 ] && grep -q 'is already loaded' /tmp/again.out; then
	t_pass reload-command:nothing-to-do
else
	t_fail reload-command:nothing-to-do "exit $rrc, expected 0 and 'already loaded'"
	show again
fi

# ---- refusal while rdma_cm is in use, then --kill-rdma-cm-users ------------------------
timeout 100 rping -s -a "$RXE_IP" -p 7192 -C 1000000 >/tmp/rc-server.out 2>&1 &
spid=$!
if ! wait_listen 7192; then
	t_fail reload-command:consumer-setup "the rping server did not listen"
	diag_file /tmp/rc-server.out
fi
# The server's own pid (timeout forks it).
rpid=$(pidof rping | tr ' ' '\n' | head -n 1)
run_reload refuse --in-tree
if [ "$rrc" -eq 4 ] && grep -q "consumer: process $rpid (rping) has /dev/infiniband/rdma_cm open" /tmp/refuse.out &&
	grep -q 'refusing to reload the RDMA stack while it is in use' /tmp/refuse.out; then
	t_pass reload-command:refuse-consumer
else
	t_fail reload-command:refuse-consumer "exit $rrc (expected 4) or no message naming rping $rpid"
	show refuse
fi
if overlay_all && dep_check && kill -0 "$rpid" 2>/dev/null; then
	t_pass reload-command:refuse-changes-nothing
else
	t_fail reload-command:refuse-changes-nothing "${why:-the stack, $DEP or the rping server changed}"
fi
run_reload force --in-tree --kill-rdma-cm-users
if [ "$rrc" -eq 0 ] && intree_check && dep_check && ! kill -0 "$rpid" 2>/dev/null; then
	t_pass reload-command:force-in-tree
else
	t_fail reload-command:force-in-tree "exit $rrc; ${why:-$DEP not reloaded or the rping server still running}"
	show force
fi
grep -q "terminating the processes with /dev/infiniband/rdma_cm open: $rpid" /tmp/force.out ||
	diag "force: no line naming the terminated rping $rpid"
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

# ---- a load failure rolls back -------------------------------------------
ko=$MODDIR/updates/rdma_ucm.ko
cp "$ko" /tmp/rdma_ucm.ko.orig
# "vermagic=RELEASE FLAGS...": alter the first flag's first letter.
# shellcheck disable=SC2046 # offset and first word
set -- $(strings -t d -n 8 "$ko" | grep -m 1 ' vermagic=')
off=$(($1 + ${#2} + 1))
printf X | dd of="$ko" bs=1 seek="$off" conv=notrunc 2>/dev/null
diag "corrupted: $(modinfo -F vermagic "$ko")"
mark=$(dmesg_mark)
run_reload fail
if [ "$rrc" -eq 1 ] && grep -q 'rolled back' /tmp/fail.out; then
	t_pass reload-command:load-failure-exit
else
	t_fail reload-command:load-failure-exit "exit $rrc, expected 1 and 'rolled back'"
fi
show fail
if intree_check && dep_check; then
	t_pass reload-command:rolled-back
else
	t_fail reload-command:rolled-back "${why:-$DEP not loaded again}"
	lsmod | sed 's/^/#   /'
fi
if dmesg_since "$mark" | grep -q 'rdma_ucm: version magic'; then
	t_pass reload-command:kernel-refused
else
	t_fail reload-command:kernel-refused "the kernel did not log the version magic refusal"
fi
if rping_check rc-rping2 7193 3; then
	t_pass reload-command:rping-after-rollback
else
	t_fail reload-command:rping-after-rollback "$why"
fi
cp /tmp/rdma_ucm.ko.orig "$ko"

# ---- and back to the overlay ------------------------------------------------
run_reload back
if [ "$rrc" -eq 0 ] && overlay_all && dep_check; then
	t_pass reload-command:swap-again
else
	t_fail reload-command:swap-again "exit $rrc ${why:-}"
	show back
fi
unload_tree "$DEP" || diag "could not unload $DEP at the end"
t_summary
