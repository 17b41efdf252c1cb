#!/bin/sh
# shellcheck shell=sh
# The overlay keeps the kernel's exported ABI: every in-tree module that
# depends on a CM module (ib_cm, iw_cm, rdma_cm, rdma_ucm) loads against the
# overlay, with no "disagrees about version of symbol", and the overlay
# modules are still the loaded ones afterwards. The list is derived from
# modules.dep (the guest's, after depmod), and compared with the host's
# derivation from the kernel's full modules.dep, so a module missing from
# the image cannot silently shrink the test.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

cm_mods="ib_cm iw_cm rdma_cm rdma_ucm"
list=$(awk -v cm="$cm_mods" '
	function name(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z]+)?$/, "", p); gsub(/-/, "_", p); return p }
	BEGIN { n = split(cm, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
	{
		sub(/:$/, "", $1); self = name($1)
		# In-tree modules only: test modules in extra/ (simfab) use the
		# CM too but do not come with the kernel.
		if ($1 !~ /^kernel\//) next
		if (self in want) next
		for (i = 2; i <= NF; i++) if (name($i) in want) { print self; break }
	}' "$MODDIR/modules.dep" | sort -u)

if [ -n "$list" ]; then
	t_pass intree-dependents:list
	diag "dependents: $(echo "$list" | tr '\n' ' ')"
else
	t_fail intree-dependents:list "no module in $MODDIR/modules.dep depends on $cm_mods"
fi
host=$(sort -u /ibr/cm-dependents.host)
if [ "$list" = "$host" ]; then
	t_pass intree-dependents:matches-host
else
	t_fail intree-dependents:matches-host "guest: $(echo "$list" | tr '\n' ' '); host: $(echo "$host" | tr '\n' ' ')"
fi

# With an RDMA device present the dependents' ib_client add callbacks run
# too (ib_srpt, for one, creates its CM ids there), not only module init.
rxe_up || t_fail intree-dependents:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
if load_stack; then
	t_pass intree-dependents:stack
else
	t_fail intree-dependents:stack "modprobe rdma_ucm failed"
fi

loaded=
for m in $list; do
	mark=$(dmesg_mark)
	out=$(timeout 60 modprobe "$m" 2>&1)
	rc=$?
	msg=$(dmesg_since "$mark" | grep -E 'disagrees about version of symbol|Unknown symbol' | head -n 1)
	if [ $rc -ne 0 ]; then
		t_fail "intree-dependents:$m" "modprobe exit $rc: $out ${msg:+(kernel: $msg)}"
	elif [ -n "$msg" ]; then
		t_fail "intree-dependents:$m" "kernel: $msg"
	elif ! mod_loaded "$m"; then
		t_fail "intree-dependents:$m" "modprobe succeeded but /sys/module/$m is missing"
	else
		t_pass "intree-dependents:$m"
		loaded="$m $loaded"
	fi
done

problem=
for m in $OVERLAY_MODS; do
	overlay_check "$m" || problem="${problem:-$why}"
done
if [ -z "$problem" ]; then
	t_pass intree-dependents:overlay-still-loaded
else
	t_fail intree-dependents:overlay-still-loaded "$problem"
fi

# Leave the stack as found for whatever test runs next in this boot.
for m in $loaded; do
	unload_tree "$m" || diag "could not unload $m"
done

t_summary
