#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 15 (measured under TCG; tests/vm/run --boots balances by it)
# simfab's SA against a real one (issue 3 item 7, issue 25 point 7): every
# PathRecord query of each reference (written on the host by
# tests/simfab/fidelity/run, OpenSM 3.3.23 on ibsim for the same topology)
# is asked of simfab with saquery, normalized the same way, and compared
# field by field; a field that differs fails unless
# tests/simfab/fidelity/differences documents it.
#   /ibr/opensm-pr.txt             default.topo (loaded through modprobe.d;
#                                  checked: simfab runs it)
#   /ibr/opensm-pr-routed-S.txt    routed.topo's subnet S with its routers
#                                  and prefix routes: off-subnet DGIDs
#                                  (checks simfab-fidelity:routed-S:QUERY)
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

ref=/ibr/opensm-pr.txt
lib=/ibr/lib/fidelity
TOPO=/tmp/fid.topo
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
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

# compare REF PREFIX: REF's queries asked of simfab as it is loaded now,
# from the reference's requester port (PORT = HOST/N, on the ib_device
# debugfs topology gives the host); results named PREFIX:QUERY.
compare() {
	cat /sys/kernel/debug/simfab/topology >"$TOPO"
	portmap=$(grep '^port ' "$1")
	req=$(sed -n 's/^requester //p' "$1")
	dev=$(topo_host "${req%/*}" dev)
	sub=$(topo_host "${req%/*}" subnet)
	lmc=$(topo_subnet "$sub" lmc)
	out=/tmp/simfab-pr.txt
	: >"$out"
	grep '^query ' "$1" | while read -r _ name args; do
		rc=0
		# shellcheck disable=SC2086 # args are words
		timeout 20 saquery -C "$dev" -P "${req#*/}" PR $args >/tmp/fq.out 2>&1 || rc=$?
		awk -v q="$name" -v rc="$rc" -v lmc="${lmc:-0}" -v portmap="$portmap" \
			-f "$lib/normalize.awk" /tmp/fq.out >>"$out"
	done
	awk -f "$lib/compare.awk" "$lib/differences" "$1" "$out" >/tmp/fidelity.out
	while read -r verdict name rest; do
		case $verdict in
		ok) t_pass "$2:$name" ;;
		fail) t_fail "$2:$name" "$rest" ;;
		allowed) ;;
		esac
	done </tmp/fidelity.out
	# The documented differences that showed, once per reason.
	sed -n 's/^allowed .* # //p' /tmp/fidelity.out | sort | uniq -c | while read -r n why; do
		diag "$2: documented difference ($n fields): $why"
	done
	[ -z "${SIMFAB_DEBUG:-}" ] || diag_file "$out"
	if ! grep -q '^ok ' /tmp/fidelity.out; then
		t_fail "$2:compare" "no query compared"
	fi
}

compare "$ref" simfab-fidelity
for ref in /ibr/opensm-pr-routed-*.txt; do
	[ -f "$ref" ] || continue
	# shellcheck disable=SC2046 # "topology FILE subnet NAME": words
	set -- $(sed -n 's/^topology //p' "$ref")
	name=routed-$3
	if [ "$1" != routed.topo ] || [ "$2" != subnet ]; then
		t_fail "simfab-fidelity:$name" "$ref names no routed.topo subnet"
		continue
	fi
	if sf_load_topo "/ibr/simfab/topology/$1" ib_umad; then
		sleep 1
		compare "$ref" "simfab-fidelity:$name"
	else
		t_fail "simfab-fidelity:$name:load" "modprobe simfab with $1 failed"
	fi
done

rmmod simfab
dmesg_since "$mark" | grep -v 'module verification failed' >/tmp/fid.dmesg
if grep -Eq "$DMESG_BAD" /tmp/fid.dmesg; then
	grep -E "$DMESG_BAD" /tmp/fid.dmesg | while read -r l; do diag "$l"; done
	t_fail simfab-fidelity:kernel-log "errors in the kernel log"
else
	t_pass simfab-fidelity:kernel-log
fi
t_summary
