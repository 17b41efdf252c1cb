#!/bin/sh
# shellcheck shell=sh
# Secure Boot lockdown (the vm-lockdown tier boots with lockdown=integrity,
# what a Secure Boot machine runs in): the overlay's modules as built here
# are unsigned and must be refused, with the refusal in the kernel log, and
# the distribution's own signed RDMA stack must still load. (A module signed
# by DKMS with an enrolled MOK key loading is the manual check the README
# describes: QEMU here has no shim to enroll a key with.)
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mode=$(cat /sys/kernel/security/lockdown 2>/dev/null)
case $mode in
*'[integrity]'*|*'[confidentiality]'*) t_pass lockdown:active ;;
*) t_fail lockdown:active "lockdown is '$mode' (boot with lockdown=integrity)" ;;
esac

# load_intree M...: insmod the distribution's files by path, in order
# (modprobe would pick the overlay's files from updates/); sets $why.
load_intree() {
	for _m in "$@"; do
		mod_loaded "$_m" && continue
		_f=$(find "$MODDIR/kernel" -name "$_m.ko*" | head -n 1)
		if ! insmod "$_f" 2>/tmp/insmod.err; then
			why="insmod $_f: $(cat /tmp/insmod.err)"
			return 1
		fi
	done
}

# What the CM modules need, so a refusal below can only be the signature.
load_intree configfs ib_core ib_uverbs iw_cm || t_fail lockdown:deps "$why"

# module-trust (what dkms-kernel asks before it installs) must predict the
# kernel's verdict: the overlay, unsigned or signed by a key the kernel
# does not hold (/ibr/signed: a DKMS key never enrolled), is refused, and
# the kernel does refuse it. (The guest's modinfo does not read signers:
# module-trust then refuses a signed module as unverifiable; the trusted
# case is tests/unit/module-trust's, on fake /proc/keys.)
TRUST=/usr/libexec/ib-routed/module-trust
if [ ! -f "$STAMP_FILE" ]; then
	t_skip lockdown:module-trust-unsigned "no overlay in this image (--in-tree run)"
elif out=$("$TRUST" "$(uname -r)" "$MODDIR/updates/ib_cm.ko" 2>&1); then
	t_fail lockdown:module-trust-unsigned "module-trust accepts the unsigned overlay: $out"
elif echo "$out" | grep -q "(lockdown=integrity) and ib_cm.ko is unsigned"; then
	t_pass lockdown:module-trust-unsigned
else
	t_fail lockdown:module-trust-unsigned "module-trust refused, but said: $out"
fi
if [ ! -f /ibr/signed/ib_cm.ko ]; then
	t_skip lockdown:untrusted-key-refused "no /ibr/signed (no overlay, or no sign-file on the host)"
else
	if out=$("$TRUST" "$(uname -r)" /ibr/signed/ib_cm.ko 2>&1); then
		t_fail lockdown:module-trust-untrusted "module-trust accepts a module signed by a key the kernel does not hold: $out"
	elif echo "$out" | grep -Eq "signed by 'ib-routed test key no kernel trusts'.*a key it does not trust|is signed, but modinfo cannot read its signer"; then
		t_pass lockdown:module-trust-untrusted
	else
		t_fail lockdown:module-trust-untrusted "module-trust refused, but said: $out"
	fi
	# The kernel's own verdict on the same file.
	mark=$(dmesg_mark)
	if insmod /ibr/signed/ib_cm.ko 2>/tmp/insmod.err; then
		t_fail lockdown:untrusted-key-refused "ib_cm signed by an untrusted key loaded under lockdown"
		rmmod ib_cm
	elif dmesg_since "$mark" | grep -q 'Lockdown: .*unsigned module loading is restricted'; then
		t_pass lockdown:untrusted-key-refused
	else
		t_fail lockdown:untrusted-key-refused "refused, but not by lockdown: $(cat /tmp/insmod.err)"
	fi
fi

if [ ! -f "$STAMP_FILE" ]; then
	t_skip lockdown:overlay-refused "no overlay in this image (--in-tree run)"
else
	for m in $OVERLAY_MODS; do
		f=$(modinfo -n "$m" 2>/dev/null)
		case $f in
		"$MODDIR"/updates/*) ;;
		*) t_fail "lockdown:$m-refused" "modinfo -n $m gives '$f', not the overlay"; continue ;;
		esac
		mark=$(dmesg_mark)
		if insmod "$f" 2>/tmp/insmod.err; then
			t_fail "lockdown:$m-refused" "the unsigned $f loaded under lockdown"
			rmmod "$m"
		elif dmesg_since "$mark" | grep -q 'Lockdown: .*unsigned module loading is restricted'; then
			t_pass "lockdown:$m-refused"
		else
			t_fail "lockdown:$m-refused" "refused, but not by lockdown: $(cat /tmp/insmod.err)"
		fi
		# The next overlay module needs this one: give it the in-tree one.
		load_intree "$m" || true
	done
fi

# The in-tree stack, signed by the distribution, still loads.
if load_intree ib_cm rdma_cm rdma_ucm; then
	t_pass lockdown:intree-loads
else
	t_fail lockdown:intree-loads "$why"
fi

t_summary
