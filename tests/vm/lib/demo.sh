#!/bin/sh
# shellcheck shell=sh
# The demo (tests/vm/demo, `make demo`): show a person that the running
# kernel's connection manager is ib-routed's, and that it carries traffic.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

echo
echo "== ib-routed demo: Linux $KVER under QEMU, Soft-RoCE (rdma_rxe) =="
echo
if [ -f "$STAMP_FILE" ]; then
	echo "overlay build: $(stamp_get STAMP)"
else
	echo "overlay build: none (in-tree stack)"
fi
echo
rxe_up || t_fail demo:rxe "could not bring up $RXE_DEV"
modprobe rdma_ucm || t_fail demo:modprobe "modprobe rdma_ucm failed"

echo "Connection-manager modules now loaded:"
printf '  %-9s %-24s %s\n' module srcversion "version (ib-routed stamp) / file"
for m in $OVERLAY_MODS iw_cm; do
	v=$(cat "/sys/module/$m/version" 2>/dev/null)
	printf '  %-9s %-24s %s\n' "$m" "$(cat "/sys/module/$m/srcversion" 2>/dev/null || echo -)" "${v:-(in-tree, no version)}"
	printf '  %-9s %-24s %s\n' "" "" "$(modinfo -n "$m")"
done
echo
ok=yes
for m in $OVERLAY_MODS; do
	overlay_check "$m" || { ok=; echo "  !! $why"; }
done
if [ -n "$ok" ]; then
	t_pass demo:overlay-loaded
else
	t_fail demo:overlay-loaded "the loaded CM modules are not the overlay's"
fi
echo
echo "RDMA link:"
rdma link show | sed 's/^/  /'
echo
echo "rping over $RXE_DEV ($RXE_IP), server and client on the same device:"
if rping_check demo-rping 7174 5; then
	# Only the data lines: stderr and buffered stdout interleave oddly.
	grep 'ping data' /tmp/demo-rping.server | sed 's/^/  /'
	grep 'ping data' /tmp/demo-rping.client | sed 's/^/  client /'
	t_pass demo:rping
else
	t_fail demo:rping "$why"
fi
echo
t_summary
