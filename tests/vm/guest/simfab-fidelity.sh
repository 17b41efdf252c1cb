#!/bin/sh
# shellcheck shell=sh
# simfab's SA against a real one (issue 3 item 7): every PathRecord query
# of /ibr/opensm-pr.txt (written on the host by tests/simfab/fidelity/run,
# OpenSM 3.3.23 on ibsim for the same topology) is asked of simfab with
# saquery, normalized the same way, and compared field by field; a field
# that differs fails unless tests/simfab/fidelity/differences documents it.
# Also checks that simfab runs the topology the reference was built from
# (tests/simfab/topology/default.topo, loaded through modprobe.d).
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

ref=/ibr/opensm-pr.txt
lib=/ibr/lib/fidelity
if [ ! -f "$ref" ]; then
	t_skip simfab-fidelity "no $ref in the image (run tests/simfab/fidelity/run on the host; needs ibsim-utils opensm)"
	t_summary
	exit 0
fi
if ! grep -q "/simfab\.ko[.a-z]*:" "$MODDIR/modules.dep"; then
	t_skip simfab-fidelity "simfab.ko not in the image (run tests/simfab/build)"
	t_summary
	exit 0
fi
if ! command -v saquery >/dev/null; then
	t_skip simfab-fidelity "saquery not in the image (install infiniband-diags)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
if modprobe ib_umad && modprobe simfab; then
	t_pass simfab-fidelity:load
else
	t_fail simfab-fidelity:load "modprobe simfab failed"
	t_summary
	exit 0
fi
sleep 1

# The module runs default.topo (the reference's topology).
if [ "$(cat /sys/module/simfab/parameters/topology)" = "$(cat /ibr/simfab-default.topo)" ]; then
	t_pass simfab-fidelity:topology
else
	diag "simfab: $(cat /sys/module/simfab/parameters/topology)"
	diag "file:   $(cat /ibr/simfab-default.topo)"
	t_fail simfab-fidelity:topology "simfab was not loaded with tests/simfab/topology/default.topo"
fi

# The requester port (PORT = HOST/N) is on the CA simfabI, I = the host's
# place in the topology; the LMC from simfab's debugfs topology.
portmap=$(grep '^port ' "$ref")
req=$(sed -n 's/^requester //p' "$ref")
idx=$(printf '%s\n' "$portmap" | awk -v h="${req%/*}" '
	{ split($2, a, "/"); if (!(a[1] in seen)) { seen[a[1]] = n++ } }
	END { print (h in seen) ? seen[h] : -1 }')
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
lmc=$(sed -n 's/^subnet .* lmc=\([0-9]*\) .*/\1/p' /sys/kernel/debug/simfab/topology)
out=/tmp/simfab-pr.txt
: >"$out"
grep '^query ' "$ref" | while read -r _ name args; do
	rc=0
	# shellcheck disable=SC2086 # args are words
	timeout 20 saquery -C "simfab$idx" -P "${req#*/}" PR $args >/tmp/fq.out 2>&1 || rc=$?
	awk -v q="$name" -v rc="$rc" -v lmc="${lmc:-0}" -v portmap="$portmap" \
		-f "$lib/normalize.awk" /tmp/fq.out >>"$out"
done

awk -f "$lib/compare.awk" "$lib/differences" "$ref" "$out" >/tmp/fidelity.out
while read -r verdict name rest; do
	case $verdict in
	ok) t_pass "simfab-fidelity:$name" ;;
	fail) t_fail "simfab-fidelity:$name" "$rest" ;;
	allowed) ;;
	esac
done </tmp/fidelity.out
# The documented differences that showed, once per reason.
sed -n 's/^allowed .* # //p' /tmp/fidelity.out | sort | uniq -c | while read -r n why; do
	diag "documented difference ($n fields): $why"
done
[ -z "${SIMFAB_DEBUG:-}" ] || diag_file "$out"
if ! grep -q '^ok ' /tmp/fidelity.out; then
	t_fail simfab-fidelity:compare "no query compared"
fi

rmmod simfab
dmesg_since "$mark" | grep -v 'module verification failed' >/tmp/fid.dmesg
if grep -Eq "$DMESG_BAD" /tmp/fid.dmesg; then
	grep -E "$DMESG_BAD" /tmp/fid.dmesg | while read -r l; do diag "$l"; done
	t_fail simfab-fidelity:kernel-log "errors in the kernel log"
else
	t_pass simfab-fidelity:kernel-log
fi
t_summary
