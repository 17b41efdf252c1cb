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

# ---- routed: two IB subnets joined by IB routers (simfab) ----------------------
# simfab (tests/simfab) is a test-only simulated fabric; present in the image
# when `make simfab` has built it (make demo does).
TOPOFILE=/ibr/simfab/topology/routed.topo
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
if grep -q "/simfab\.ko[.a-z]*:" "$MODDIR/modules.dep" && [ -x $CM ] && [ -f $TOPOFILE ]; then
	# shellcheck source=tests/vm/lib/simfab.sh
	. /ibr/lib/simfab.sh
	echo "== Routed: subnet A and subnet B joined by IB routers (simfab, simulated) =="
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	! mod_loaded simfab || rmmod simfab
	CONF=/etc/modprobe.d/simfab-topology.conf
	cp $CONF /tmp/demo-topo.conf
	printf 'options simfab topology="%s"\n' "$(cat $TOPOFILE)" >$CONF
	modprobe rdma_ucm && modprobe simfab
	cp /tmp/demo-topo.conf $CONF
	TOPO=/tmp/demo.topo
	cat $D/topology >$TOPO
	topo_port() { sed -n "s|^port $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$TOPO"; }
	topo_host() { sed -n "s|^host $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$TOPO"; }
	echo
	echo "Fabric (debugfs simfab/topology):"
	grep -E '^(subnet|route|router) ' $TOPO | sed 's/^/  /'
	AP=a1/1 BP=b1/1
	echo "  a1: $(port_gid $AP) LID $(topo_port $AP lid)   b1: $(port_gid $BP) LID $(topo_port $BP lid)"
	echo
	echo "rdma_cm, a1 -> b1 across the router (AF_IB, rdma_resolve_route):"
	echo clear >$D/ctl
	timeout 60 $CM 'timeout 20000' \
		'id srv ps=ib' "bind gid=$(port_gid $BP) port=7600" 'listen' \
		'id cli ps=ib' "bind gid=$(port_gid $AP)" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=7600 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=3000' 'wait ROUTE_RESOLVED id=cli' \
		'tag cli' 'query-path' 'connect qpn=0x111' \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
		'tag cli' 'wait CONNECT_RESPONSE id=cli' 'tag cli-rtr' 'qp-attr rtr' 'accept id=cli' \
		'tag conn' 'wait ESTABLISHED id=conn' 'tag conn-rtr' 'qp-attr rtr' 'tag' \
		'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' >/tmp/demo-cm.out 2>&1
	rc=$?
	cat $D/capture >/tmp/demo-cm.cap
	o=/tmp/demo-cm.out
	echo "  forward record (subnet A's SA): dlid $(out $o 'cli.path[0].dlid') slid $(out $o 'cli.path[0].slid')" \
		"sl $(out $o 'cli.path[0].sl') mtu $(out $o 'cli.path[0].mtu_bytes') rate $(out $o 'cli.path[0].rate')" \
		"hop_limit $(out $o 'cli.path[0].hop_limit')"
	a=$(grep -i " at=$AP .* class=0x0d .* method=0x81 .* verdict=delivered " /tmp/demo-cm.cap | head -n 1)
	if [ -n "$a" ]; then
		m=$(capf "$a" mad)
		echo "  return record (subnet B's SA, through ib_remote_sa at b1): dlid $(madn "$m" 96 2)" \
			"slid $(madn "$m" 98 2) sl $(($(madn "$m" 108 2) & 0xf)) mtu-code $(($(madn "$m" 110 1) & 0x3f))" \
			"rate $(($(madn "$m" 111 1) & 0x3f)) (status $(capf "$a" status))"
	else
		echo "  return record: none (no ib_remote_sa answer)"
	fi
	r=$(grep " class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=routed " /tmp/demo-cm.cap | head -n 1)
	if [ -n "$r" ]; then
		m=$(capf "$r" mad)
		echo "  REQ on the wire: Local Port LID 0x$(mad "$m" 76 2) Remote Port LID $(madn "$m" 78 2)" \
			"SL $(($(madn "$m" 118 1) >> 4)) MTU-code $(($(madn "$m" 74 1) >> 4)) rate $(($(madn "$m" 115 1) & 0x3f))" \
			"SubnetLocal $(($(madn "$m" 118 1) >> 3 & 1))"
	fi
	echo "  a1's QP: dlid $(out $o cli-rtr.qp_attr.ah.dlid) sl $(out $o cli-rtr.qp_attr.ah.sl) mtu $(out $o cli-rtr.qp_attr.path_mtu_bytes)"
	echo "  b1's QP: dlid $(out $o conn-rtr.qp_attr.ah.dlid) sl $(out $o conn-rtr.qp_attr.ah.sl) mtu $(out $o conn-rtr.qp_attr.path_mtu_bytes)"
	if [ $rc -eq 0 ] && grep -q 'conn.event ESTABLISHED' $o; then
		t_pass demo:routed-connect
	else
		t_fail demo:routed-connect "simfab-cm: $(grep 'simfab-cm:' $o | tail -n 1)"
	fi
	if grep -q "/simfab_rc_test\.ko[.a-z]*:" "$MODDIR/modules.dep"; then
		echo
		echo "Traffic, kernel rdma_cm with RC QPs a1 -> b1 (SEND both ways, RDMA WRITE, READ):"
		echo clear >$D/ctl
		m0=$(dmesg_mark)
		if timeout 120 modprobe simfab_rc_test cases=rc "act=$(topo_host a1 dev):1" "pas=$(topo_host b1 dev):1"; then
			rmmod simfab_rc_test
			dmesg_since "$m0" | sed -n 's/^\[[^]]*\] //p' >/tmp/demo-rc.ktap
			grep -E '^(ok|not ok) ' /tmp/demo-rc.ktap | sed 's/^/  /'
			echo "  RC packets through the router: $(grep -c ' rc op=.*verdict=routed' $D/capture) routed," \
				"$(grep -c ' rc op=.*verdict=delivered' $D/capture) delivered"
			if grep -q '^not ok' /tmp/demo-rc.ktap; then
				t_fail demo:routed-traffic "simfab_rc_test reported failures"
			else
				t_pass demo:routed-traffic
			fi
		else
			t_fail demo:routed-traffic "modprobe simfab_rc_test failed"
		fi
	fi
	rmmod simfab
	echo
fi
t_summary
