#!/bin/sh
# shellcheck shell=sh
# ib-routed-verify on a real kernel: with the overlay loaded (modprobe
# rdma_ucm) its module checks are ok and, since this image has the overlay
# in updates/ but no package and no DKMS, the package and dkms checks are
# errors saying ib-routed is not installed, so it exits 2 (the documented
# status for an error). Then the overlay is unloaded and the in-tree ib_cm
# loaded by path: verify must call module:ib_cm an error. ib-routed-info
# shows the loaded stamp. The stack is left with the overlay loaded.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

V=/usr/sbin/ib-routed-verify
I=/usr/sbin/ib-routed-info
if [ ! -x "$V" ] || [ ! -x "$I" ]; then
	t_skip verify-overlay "ib-routed-verify/ib-routed-info not in the image (make -C userspace/tools O=build/tools)"
	t_summary
	exit 0
fi
# The lockdown check reads securityfs (lockdown none here: ok, not skip).
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null

# run_verify FILE: the JSON in FILE, the exit status in $vrc.
run_verify() {
	timeout 60 "$V" --json >"$1" 2>"$1.err"
	vrc=$?
}
# sev FILE CHECK: that check's severity (one check per line in the JSON).
sev() {
	sed -n "s/^    \"$2\": {\"severity\": \"\([a-z]*\)\".*/\1/p" "$1"
}
msg() {
	sed -n "s/^    \"$2\": {\"severity\": \"[a-z]*\", \"message\": \"\(.*\)\"\(, \"reload_pending\": true\)\{0,1\}}.*/\1/p" "$1"
}
# expect NAME FILE CHECK SEVERITY [GREP-E-PATTERN]
expect() {
	_s=$(sev "$2" "$3")
	_m=$(msg "$2" "$3")
	if [ "$_s" != "$4" ]; then
		t_fail "$1" "$3 is '$_s' ($_m), expected $4"
	elif [ $# -ge 5 ] && ! printf '%s\n' "$_m" | grep -Eq -- "$5"; then
		t_fail "$1" "$3 says '$_m', expected /$5/"
	else
		t_pass "$1"
	fi
}

# ---- the overlay loaded --------------------------------------------------
load_stack || t_fail verify-overlay:modprobe "modprobe rdma_ucm failed"
run_verify /tmp/verify.json
diag "ib-routed-verify --json exit $vrc"
for m in $OVERLAY_MODS; do
	expect "verify-overlay:module-$m" /tmp/verify.json "module:$m" ok "loaded from updates/$m.ko"
done
expect verify-overlay:module-files /tmp/verify.json module-files ok "ib-routed builds in updates"
# The image has no package database and no DKMS: exactly that, as errors.
expect verify-overlay:package /tmp/verify.json package error "ib-routed is not installed"
expect verify-overlay:dkms /tmp/verify.json dkms error "DKMS knows no ib-routed"
expect verify-overlay:initramfs /tmp/verify.json initramfs skip "no initramfs"
expect verify-overlay:lockdown /tmp/verify.json lockdown ok "not enforced"
# Skipped (issue 24) when no in-tree dependent is loaded in this image.
if [ "$(sev /tmp/verify.json dependents)" = skip ]; then
	expect verify-overlay:dependents /tmp/verify.json dependents skip "none of the [0-9]+ in-tree dependents .* is loaded and none failed"
else
	expect verify-overlay:dependents /tmp/verify.json dependents ok "none of the [0-9]+ in-tree dependents"
fi
expect verify-overlay:kernel-log /tmp/verify.json kernel-log ok
# The image carries the patched librdmacm without its ld.so.conf.d entry
# (the package is not installed here): verify says so.
expect verify-overlay:librdmacm /tmp/verify.json librdmacm skip "ib-routed-librdmacm is not installed"
# rdma_ucm's RDMA_USER_CM_QUERY_IBR_CAPS on an unbound id (issue 23): the
# twelve forms, 16 records, LAP and APM events; ib_remote_sa, loaded with
# rdma_cm, has no InfiniBand port to answer for over Soft-RoCE.
expect verify-overlay:capabilities /tmp/verify.json capabilities ok "QUERY_IBR_CAPS \\(version 1\\): 12 record forms, up to 16 records; alternate 1, lap 1, apm_events 1"
expect verify-overlay:remote-sa /tmp/verify.json remote-sa skip "no InfiniBand port to answer for"
if [ "$vrc" -eq 2 ] && grep -q '^  "exit_status": 2,$' /tmp/verify.json; then
	t_pass verify-overlay:exit-status
else
	t_fail verify-overlay:exit-status "exit $vrc, JSON says $(grep exit_status /tmp/verify.json), expected 2 (errors: package, dkms)"
fi
# The whole report as diagnostics (tests/vm/run -v shows them).
diag_file /tmp/verify.json
diag_file /tmp/verify.json.err

# ib-routed-info: the loaded stamp, and the short version.
stamp=$(stamp_get STAMP)
if timeout 30 "$I" >/tmp/info.out 2>&1 && grep -q "ib_cm     loaded: version '$stamp'" /tmp/info.out; then
	t_pass verify-overlay:info
else
	t_fail verify-overlay:info "ib-routed-info does not show ib_cm loaded with '$stamp'"
	diag_file /tmp/info.out
fi
short=$("$I" -s 2>&1)
ver=$(stamp_get IB_ROUTED_VERSION)
t_check verify-overlay:info-short "ib-routed-info -s printed '$short'" [ "$short" = "ib-routed-$ver" ]

# ---- the in-tree ib_cm loaded by path while the overlay is installed -------
# Top down, one level at a time: unload_tree's variables are global, so its
# recursion cannot be relied on for more than one level.
for m in rdma_ucm rdma_cm ib_cm; do
	unload_tree "$m" || diag "could not unload the overlay's $m"
done
intree=$(intree_ko ib_cm) || diag "no in-tree ib_cm module file: $intree"
ok=yes
for d in $(modinfo -F depends "$intree" | tr , ' '); do
	modprobe "$d" || ok="modprobe $d failed"
done
if [ "$ok" = yes ] && insmod "$intree" 2>/tmp/insmod.err; then
	run_verify /tmp/verify-intree.json
	# A reload pending (issue 24): a warning, not an error.
	expect verify-overlay:intree-module-ib_cm /tmp/verify-intree.json module:ib_cm warn "^reload pending: the loaded ib_cm is the in-tree module"
	expect verify-overlay:intree-rdma_cm-not-loaded /tmp/verify-intree.json module:rdma_cm skip "not loaded"
	# Still 2: package and dkms are errors in this image (no package).
	t_check verify-overlay:intree-exit-status "exit $vrc, expected 2" [ "$vrc" -eq 2 ]
	rmmod ib_cm || diag "could not unload the in-tree ib_cm"
else
	[ "$ok" = yes ] && ok="insmod $intree: $(cat /tmp/insmod.err)"
	t_fail verify-overlay:intree-load "$ok"
fi

# Leave the overlay loaded, as the tests before this one found it.
load_stack || diag "loading the stack failed at the end"
problem=
for m in $OVERLAY_MODS; do
	overlay_check "$m" || problem="${problem:-$why}"
done
t_check verify-overlay:overlay-restored "${problem:-?}" [ -z "$problem" ]
t_summary
