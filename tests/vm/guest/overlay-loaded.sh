#!/bin/sh
# shellcheck shell=sh
# The CM modules in use are the overlay's: loading the stack the ordinary
# way (modprobe rdma_ucm) must pick up /lib/modules/KVER/updates/, and the
# loaded modules must carry the build's stamp and come from those files.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

if [ -f "$STAMP_FILE" ]; then
	t_pass overlay-loaded:stamp-file
else
	t_fail overlay-loaded:stamp-file "no $STAMP_FILE in the image (in-tree run?)"
fi

if load_stack; then
	t_pass overlay-loaded:modprobe
else
	t_fail overlay-loaded:modprobe "modprobe rdma_ucm failed"
fi

for m in $OVERLAY_MODS; do
	if overlay_check "$m"; then
		t_pass "overlay-loaded:$m"
	else
		t_fail "overlay-loaded:$m" "$why"
	fi
done

# iw_cm is not replaced: it must still be the in-tree one.
p=$(modinfo -n iw_cm 2>/dev/null)
case $p in
"$MODDIR"/kernel/*) t_pass overlay-loaded:iw_cm-in-tree ;;
*) t_fail overlay-loaded:iw_cm-in-tree "modinfo -n iw_cm gives '$p'" ;;
esac

t_summary
