#!/bin/sh
# shellcheck shell=sh
# simfab (tests/simfab) with what IPoIB needs, on
# tests/simfab/topology/ipoib.topo (two subnets joined by an IB router, and
# an IP router host "gw" with a port on each), loaded here in place of the
# default:
#
# ktap-mc-*:  simfab_test.ko's "mc" case (before ib_ipoib loads): joins of
#             the IPoIB broadcast group through ib_sa with only MGID,
#             PortGID, P_Key and JoinState, attach_mcast, 3-SGE UD sends
#             to the MLID reaching the joined port, loopback to the
#             sender's port (and IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK),
#             nothing for a port attached but not joined, and a leave.
# sa-join-wire, sa-leave-wire: that join and leave in the capture: the
#             MCMemberRecord Set and Delete at the SA, and their answers
#             (the pre-created group's MGID, Q_Key 0x0B1B, MLID, JoinState).
# up:         ib_ipoib makes a netdev for every simfab port.
# carrier, mtu: in one network namespace per host (with IPv4 addresses,
#             10.S.0.H), every netdev gets its carrier (the broadcast join
#             succeeded) and the MTU of its subnet's broadcast group.
# sa-records: saquery MCMR on each subnet shows every port of the subnet
#             as a FullMember of its broadcast group, and a group ib_ipoib
#             created by joining (an IP multicast group).
# ping-*:     ping within each subnet, and across the IP router (TTL one
#             less), with the UD/multicast counters of simfab's ports
#             showing the packets went through the simulated fabric.
# ib-path-via-router: the IB path between the same hosts goes through
#             the IB router (A's SA: the router port's DLID, HopLimit 255).
# ktap-ipcm-*, ipcm-*: simfab_test.ko's "ipcm" case: an IP-addressed kernel
#             rdma_cm connection (RDMA_PS_TCP, RC) within subnet A, each
#             side in its host's namespace: ARP over IPoIB resolves the
#             peer's GID, the REQ on the wire carries both IPs, and SENDs
#             go both ways.
#
# Skips without simfab.ko, ib_ipoib or the topology in the image.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-ipoib
D=/sys/kernel/debug/simfab
# iproute2's ip (namespaces): busybox sh prefers its own ip applet.
IP=/usr/sbin/ip
[ -x $IP ] || IP=/bin/ip
TOPOFILE=/ibr/simfab/topology/ipoib.topo

if ! has_mod simfab || ! has_mod ib_ipoib; then
	t_skip $T "simfab.ko or ib_ipoib not in the image (run tests/simfab/build)"
	t_summary
	exit 0
fi
if [ ! -f "$TOPOFILE" ]; then
	t_skip $T "$TOPOFILE not in the image"
	t_summary
	exit 0
fi

mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
modprobe ib_umad 2>/dev/null	# saquery
! mod_loaded ib_ipoib || rmmod ib_ipoib
! mod_loaded simfab_test || rmmod simfab_test
! mod_loaded simfab || rmmod simfab
CONF=/etc/modprobe.d/simfab-topology.conf
cp $CONF /tmp/sfi-default.conf
printf 'options simfab topology="%s"\n' "$(cat $TOPOFILE)" >$CONF
modprobe rdma_ucm && modprobe simfab
rc=$?
cp /tmp/sfi-default.conf $CONF
if [ $rc -eq 0 ] &&
	[ "$(cat /sys/module/simfab/parameters/topology)" = "$(cat $TOPOFILE)" ]; then
	t_pass $T:load
else
	t_fail $T:load "modprobe simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
TOPO=/tmp/sfi.topo
cat $D/topology >$TOPO

# ---- the topology -----------------------------------------------------------
HOSTS=$(sed -n 's/^host \([^ ]*\) .*/\1/p' $TOPO)
SUBNETS=$(sed -n 's/^subnet \([^ ]*\) .*/\1/p' $TOPO)
GW=$(sed -n 's/^host \([^ ]*\) .* iprouter=1.*/\1/p' $TOPO | head -n 1)
# Host ports, H/P.
hports() {
	for _h in $HOSTS; do
		sed -n "s|^port \($_h/[0-9]*\) .*|\1|p" $TOPO
	done
}
# index WORD LIST...: 1-based position of WORD in LIST.
index() {
	_w=$1
	shift
	_i=0
	for _x in "$@"; do
		_i=$((_i + 1))
		[ "$_x" = "$_w" ] && echo $_i && return
	done
}
# ip_of H/P: 10.S.0.H, S the port's subnet and H the host's number.
# shellcheck disable=SC2086 # word lists
ip_of() {
	echo "10.$(index "$(topo_port "$1" subnet)" $SUBNETS).0.$(index "${1%/*}" $HOSTS)"
}
# gw_on SUBNET: the IP router's port on that subnet.
gw_on() {
	sed -n "s|^port \($GW/[0-9]*\) .* subnet=$1 .*|\1|p" $TOPO
}
dev_of() {
	topo_host "${1%/*}" dev
}
# counter H/P KEY: a port's ud counter (tx rx mc_tx mc_rx), 0 if none.
counter() {
	_v=$(awk -v p="port=$1" -v k="$2=" '$1 == p && $2 == "ud" {
		for (i = 3; i <= NF; i++)
			if (index($i, k) == 1) print substr($i, length(k) + 1) }' $D/counters)
	echo "${_v:-0}"
}
ALL=$(hports)
A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
diag "hosts: $(echo "$HOSTS" | tr '\n' ' ') ip router: $GW; A=$A B=$B"

# ---- multicast in the kernel, before ib_ipoib ------------------------------
# ktap NAME OUTPUT: every KTAP result line of simfab_test as $T:ktap-NAME.
ktap() {
	while read -r st _ name rest; do
		case $st in
		ok) t_pass "$T:ktap-${name#simfab_}" ;;
		not)
			_n=${rest%% *}
			t_fail "$T:ktap-${_n#simfab_}" "${rest#* # }"
			;;
		esac
	done <<-EOF
	$(grep -E '^(ok|not ok) [0-9]+ simfab_' "$2")
	EOF
	_plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$2")
	_ran=$(grep -cE '^(ok|not ok) [0-9]+ simfab_' "$2")
	if [ "$_ran" -gt 0 ] && [ "$_ran" -eq "${_plan:-0}" ]; then
		t_pass "$T:ktap-$1-plan"
	else
		t_fail "$T:ktap-$1-plan" "planned ${_plan:-none}, ran $_ran"
		diag_file "$2"
	fi
}
echo clear >$D/ctl
m=$(dmesg_mark)
if timeout 120 modprobe simfab_test cases=mc \
	mc_a="$(dev_of a1/1):1" mc_b="$(dev_of a2/1):1" mc_c="$(dev_of a3/1):1"; then
	dmesg_since "$m" | sed -n 's/^\[[^]]*\] //p' >/tmp/sfi-mc.ktap
	ktap mc /tmp/sfi-mc.ktap
	rmmod simfab_test
else
	t_fail $T:ktap-mc "modprobe simfab_test cases=mc failed"
fi
cat $D/capture >/tmp/sfi-mc.cap
cat $D/mcast >/tmp/sfi-mc.mcast

# The join and the leave on the wire (IBA 15.2.5.17, MAD bytes; the
# record from byte 56): a1's Set at the SA, the SA's GetResp back at a1.
BCAST=ff12401bffff000000000000ffffffff
sa_mad() { # AT METHOD VERDICT: the first MCMemberRecord MAD of that kind
	grep " at=$1 .* class=0x03 cv=2 method=$2 .* attr=0x0038 .* verdict=$3 " /tmp/sfi-mc.cap | head -n 1
}
SM_A=$(sed -n "s|^subnet $A .* sm=\([^ ]*\):\([0-9]*\) .*|\1/\2|p" $TOPO)
for w in join leave; do
	if [ $w = join ]; then
		who=a1/1 req=0x02 resp=0x81 js=1
	else
		who=a2/1 req=0x15 resp=0x95 js=1
	fi
	chk_begin
	q=$(sa_mad "$SM_A" $req sa)
	r=$(sa_mad $who $resp delivered)
	[ -n "$q" ] || _bad="$_bad no-$w-request-at-SA"
	[ -n "$r" ] || _bad="$_bad no-$w-answer-at-$who"
	if [ -n "$q" ] && [ -n "$r" ]; then
		qm=$(capf "$q" mad) rm=$(capf "$r" mad)
		chk slid "$(capf "$q" slid)" "$(topo_port $who lid)"
		chk req-mgid "$(mad "$qm" 56 16)" $BCAST
		chk req-portgid "$(mad "$qm" 72 16)" "$(port_gidhex $who)"
		chk_num req-joinstate "$(($(madn "$qm" 104 1) & 15))" $js
		chk status "$(capf "$r" status)" 0x0000
		chk mgid "$(mad "$rm" 56 16)" $BCAST
		chk portgid "$(mad "$rm" 72 16)" "$(port_gidhex $who)"
		chk qkey "$(mad "$rm" 88 4)" 00000b1b
		chk_num mlid "0x$(mad "$rm" 92 2)" "$(sed -n "s|^mcg $A mgid=ff12:401b:ffff::ffff:ffff mlid=\(0x[0-9a-f]*\) .*|\1|p" /tmp/sfi-mc.mcast)"
		chk_num pkey "0x$(mad "$rm" 96 2)" 0xffff
		chk_num joinstate "$(($(madn "$rm" 104 1) & 15))" $js
	fi
	chk_end sa-$w-wire /tmp/sfi-mc.mcast
done

# ---- ib_ipoib on every port -------------------------------------------------
modprobe ib_ipoib
# nd_of H/P: the IPoIB netdev whose hardware address holds the port's GID
# (flags/QPN, then the GID: RFC 4391 section 9.1.1).
nd_map() {
	for _n in /sys/class/net/*; do
		[ -f "$_n/address" ] || continue
		_a=$(tr -d : <"$_n/address" | cut -c9-40)
		echo "${_n##*/} $_a"
	done >/tmp/sfi-nd.map
}
nd_of() {
	awk -v g="$(port_gidhex "$1")" '$2 == g { print $1 }' /tmp/sfi-nd.map
}
missing=
for _ in $(seq 60); do
	nd_map
	missing=
	for p in $ALL; do
		[ -n "$(nd_of "$p")" ] || missing="$missing $p"
	done
	[ -z "$missing" ] && break
	sleep 0.5
done
if [ -z "$missing" ]; then
	t_pass $T:up
else
	t_fail $T:up "no IPoIB netdev for:$missing"
	diag_file /tmp/sfi-nd.map
fi
for p in $ALL; do
	diag "$p $(nd_of "$p") $(ip_of "$p")"
done

# One namespace per host; its netdevs moved there, addressed and up.
echo clear >$D/ctl
setup_bad=
for h in $HOSTS; do
	$IP netns add "$h" || setup_bad="$setup_bad netns-$h"
	$IP -n "$h" link set lo up
done
for p in $ALL; do
	h=${p%/*} nd=$(nd_of "$p")
	[ -n "$nd" ] || continue
	$IP link set "$nd" netns "$h" &&
		$IP -n "$h" addr add "$(ip_of "$p")/24" dev "$nd" &&
		$IP -n "$h" link set "$nd" up || setup_bad="$setup_bad $p"
done
$IP netns exec "$GW" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward' ||
	setup_bad="$setup_bad ip_forward"
for h in $HOSTS; do
	[ "$h" = "$GW" ] && continue
	s=$(topo_host "$h" subnet)
	$IP -n "$h" route add 10.0.0.0/8 via "$(ip_of "$(gw_on "$s")")" ||
		setup_bad="$setup_bad route-$h"
done
if [ -z "$setup_bad" ]; then
	t_pass $T:netns
else
	t_fail $T:netns "setting up failed:$setup_bad"
fi

# Carrier: ib_ipoib turns it on once the broadcast group is joined and
# attached (ipoib_multicast.c); MTU: the group's, less the 4-byte header.
nocarrier=
for _ in $(seq 60); do
	nocarrier=
	for p in $ALL; do
		$IP -n "${p%/*}" -o link show dev "$(nd_of "$p")" 2>/dev/null |
			grep -q LOWER_UP || nocarrier="$nocarrier $p"
	done
	[ -z "$nocarrier" ] && break
	sleep 0.5
done
cat $D/mcast >/tmp/sfi.mcast
if [ -z "$nocarrier" ]; then
	t_pass $T:carrier
else
	t_fail $T:carrier "no carrier (broadcast join) on:$nocarrier"
	diag_file /tmp/sfi.mcast
fi
chk_begin
mtu_bytes() { echo $((128 << $1)); }
for p in $ALL; do
	s=$(topo_port "$p" subnet)
	g=$(sed -n "s|^mcg $s mgid=ff12:401b:ffff::ffff:ffff .* mtu=\([0-9]*\) .*|\1|p" /tmp/sfi.mcast)
	got=$($IP -n "${p%/*}" -o link show dev "$(nd_of "$p")" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
	[ -n "$g" ] && chk "mtu-$p" "$got" $(($(mtu_bytes "$g") - 4))
done
chk_ne mtu-differs "$(sed -n "s|^mcg $A mgid=ff12:401b:ffff::ffff:ffff .* mtu=\([0-9]*\) .*|\1|p" /tmp/sfi.mcast)" \
	"$(sed -n "s|^mcg $B mgid=ff12:401b:ffff::ffff:ffff .* mtu=\([0-9]*\) .*|\1|p" /tmp/sfi.mcast)"
chk_end mtu /tmp/sfi.mcast

# ---- the SA's records ---------------------------------------------------------
# saquery MCMR through the SM host of each subnet: every port of the
# subnet a FullMember of the broadcast group; and the group ib_ipoib
# created by joining 224.0.0.1 (ip_ib_mc_map: the broadcast MGID's first
# 10 bytes, the low 28 bits of the address: ff12:401b:ffff::1).
ALLHOSTS=ff12401bffff00000000000000000001
for s in $SUBNETS; do
	sm=$(sed -n "s|^subnet $s .* sm=\([^ ]*\):\([0-9]*\) .*|\1/\2|p" $TOPO)
	timeout 30 saquery -C "$(dev_of "$sm")" -P "${sm#*/}" MCMR >"/tmp/sfi-mcmr.$s" 2>&1
	awk '/MGID/ { sub(/.*\.\./, ""); m = $0 } /PortGid/ { sub(/.*\.\./, ""); g = $0 }
		/qkey/ { sub(/.*\.\./, ""); q = $0 } /mlid/ { sub(/.*\.\./, ""); l = $0 }
		/JoinState/ { sub(/.*\.\./, ""); print m, g, q, l, $0 }' "/tmp/sfi-mcmr.$s" >"/tmp/sfi-mcmr.$s.t"
	chk_begin
	bl=
	for p in $ALL; do
		[ "$(topo_port "$p" subnet)" = "$s" ] || continue
		want=$(port_gidhex "$p")
		line=$(while read -r mg pg q l j; do
			[ "$(gid_hex "$mg")" = $BCAST ] && [ "$(gid_hex "$pg")" = "$want" ] &&
				echo "$q $l $j"
		done <"/tmp/sfi-mcmr.$s.t")
		[ -n "$line" ] || { _bad="$_bad $p-not-member"; continue; }
		# shellcheck disable=SC2086 # three words
		set -- $line
		chk "qkey-$p" "$1" 0xb1b
		chk_num "join-$p" "$(($3 & 1))" 1
		[ -z "$bl" ] && bl=$2
		chk "mlid-$p" "$2" "$bl"
	done
	other=$(while read -r mg _ _ _ _; do
		[ "$(gid_hex "$mg")" = $ALLHOSTS ] && echo y
	done <"/tmp/sfi-mcmr.$s.t" | head -n 1)
	[ -n "$other" ] || _bad="$_bad no-224.0.0.1-group"
	chk_end "sa-records-$s" "/tmp/sfi-mcmr.$s" /tmp/sfi.mcast
done
# The joins in the capture: a Set of the broadcast group from every port.
chk_begin
cat $D/capture >/tmp/sfi.cap
for p in $ALL; do
	grep " class=0x03 cv=2 method=0x02 .* attr=0x0038 .* verdict=sa .*mad=.\{112\}$BCAST$(port_gidhex "$p")" /tmp/sfi.cap |
		grep -q " slid=$(topo_port "$p" lid) " || _bad="$_bad no-join-from-$p"
done
chk_end join-capture

# ---- ping ---------------------------------------------------------------------
# ping FROM_HP TO_HP: 3 echo requests from FROM's namespace; the replies'
# TTL in /tmp/sfi-ping.out.
ping_ok() {
	$IP netns exec "${1%/*}" ping -c 3 -W 5 "$(ip_of "$2")" >/tmp/sfi-ping.out 2>&1 &&
		grep -q ' 0% packet loss' /tmp/sfi-ping.out
}
ttl() {
	sed -n 's/.* ttl=\([0-9]*\).*/\1/p' /tmp/sfi-ping.out | head -n 1
}
for pair in a1/1:a2/1 b1/1:b2/1; do
	src=${pair%:*} dst=${pair#*:}
	tx0=$(counter "$src" tx) rx0=$(counter "$dst" rx) mc0=$(counter "$src" mc_tx)
	chk_begin
	ping_ok "$src" "$dst" || _bad="$_bad no-reply"
	t1=$(ttl)
	chk ttl "$t1" 64
	# Echo requests and ARP through simfab: UD packets left src and
	# reached dst; the ARP request was multicast (broadcast group).
	[ "$(counter "$src" tx)" -ge $((tx0 + 3)) ] || _bad="$_bad src-ud-tx"
	[ "$(counter "$dst" rx)" -ge $((rx0 + 3)) ] || _bad="$_bad dst-ud-rx"
	[ "$(counter "$src" mc_tx)" -gt "$mc0" ] || _bad="$_bad no-multicast-arp"
	chk_end "ping-$(topo_port "$src" subnet)" /tmp/sfi-ping.out $D/counters
done
# Across the IP router: a1 -> b1 through gw (IP forwarding), its two ports.
g1=$(gw_on "$A") g2=$(gw_on "$B")
rx1=$(counter "$g1" rx) tx2=$(counter "$g2" tx)
chk_begin
ping_ok a1/1 b1/1 || _bad="$_bad no-reply"
chk ttl "$(ttl)" 63
[ "$(counter "$g1" rx)" -ge $((rx1 + 3)) ] || _bad="$_bad gw-$A-rx"
[ "$(counter "$g2" tx)" -ge $((tx2 + 3)) ] || _bad="$_bad gw-$B-tx"
chk_end ping-ip-router /tmp/sfi-ping.out $D/counters

# While IP goes through gw, the IB path between the same ports crosses the
# IB router: A's SA answers a1 -> b1 with the DLID of the router port its
# prefix route names and HopLimit 255 (simfab-routed checks the rest).
RTR=$(awk -v s="$A" '$1 == "route" && $2 == s { sub(/^via=/, "", $4); sub(/,.*/, "", $4); print $4; exit }' $TOPO)
RPORT=$(sed -n "s|^port \($RTR/[0-9]*\) .* subnet=$A .*|\1|p" $TOPO)
chk_begin
timeout 30 saquery -C "$(dev_of a1/1)" -P 1 PR --sgid "$(port_gid a1/1)" \
	--dgid "$(port_gid b1/1)" >/tmp/sfi-pr.out 2>&1 || _bad="$_bad saquery-failed"
chk dlid "$(sed -n 's/.*dlid\.*\([0-9]*\)$/\1/p' /tmp/sfi-pr.out)" "$(topo_port "$RPORT" lid)"
chk_num hop "$(($(sed -n 's/.*hop_flow_raw\.*\(0x[0-9A-Fa-f]*\)$/\1/p' /tmp/sfi-pr.out) & 255))" 255
chk_end ib-path-via-router /tmp/sfi-pr.out

# ---- IP-addressed kernel rdma_cm within subnet A ------------------------------
$IP netns exec a1 sleep 600 &
ns_a=$!
$IP netns exec a2 sleep 600 &
ns_p=$!
sleep 0.5
echo clear >$D/ctl
m=$(dmesg_mark)
AIP=$(ip_of a1/1) PIP=$(ip_of a2/1)
if timeout 120 modprobe simfab_test cases=ipcm act_ip="$AIP" pas_ip="$PIP" \
	act_ns=$ns_a pas_ns=$ns_p; then
	dmesg_since "$m" | sed -n 's/^\[[^]]*\] //p' >/tmp/sfi-ipcm.ktap
	ktap ipcm /tmp/sfi-ipcm.ktap
	rmmod simfab_test
else
	t_fail $T:ktap-ipcm "modprobe simfab_test cases=ipcm failed"
fi
kill $ns_a $ns_p 2>/dev/null
cat $D/capture >/tmp/sfi-ipcm.cap
# The active side resolved a2's GID by ARP over IPoIB, from a1's port.
chk_begin
l=$(grep '^# ipcm act ' /tmp/sfi-ipcm.ktap)
chk dev "$(echo "$l" | sed -n 's/.* dev=\([^ ]*\) .*/\1/p')" "$(dev_of a1/1)"
chk port "$(echo "$l" | sed -n 's/.* port=\([0-9]*\) .*/\1/p')" 1
chk dgid "$(gid_hex "$(echo "$l" | sed -n 's/.* dgid=\([^ ]*\).*/\1/p')")" "$(port_gidhex a2/1)"
chk_end ipcm-resolved /tmp/sfi-ipcm.ktap
# The REQ at a2: from a1's LID, rdma_cm's IP header in its private data
# (REQ byte 140, MAD byte 164: version, IP version, source port, then
# source and destination, IPv4 in the last 4 of 16 bytes each; cma.c
# cma_hdr).
iphex() {
	echo "$1" | awk -F. '{ printf "%02x%02x%02x%02x\n", $1, $2, $3, $4 }'
}
chk_begin
req=$(grep " at=a2/1 .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " /tmp/sfi-ipcm.cap | head -n 1)
[ -n "$req" ] || _bad="$_bad no-REQ-at-a2"
if [ -n "$req" ]; then
	rm=$(capf "$req" mad)
	chk slid "$(capf "$req" slid)" "$(topo_port a1/1 lid)"
	chk src-ip "$(mad "$rm" 180 4)" "$(iphex "$AIP")"
	chk dst-ip "$(mad "$rm" 196 4)" "$(iphex "$PIP")"
	# The destination port is in the Service ID (RDMA_PS_TCP 0x0106,
	# cma.c cma_get_service_id); the header's port is the source's.
	chk service-id "$(mad "$rm" 32 8)" "$(printf '000000000106%04x' 18515)"
fi
chk_end ipcm-req-wire

# ---- clean up -------------------------------------------------------------------
# ib_ipoib takes its interfaces down: each QP to Error, and it waits (5 s
# at most) for the receives to flush (ipoib_ib_dev_stop_default).
m=$(dmesg_mark)
rmmod ib_ipoib
if dmesg_since "$m" | grep -q 'receives not completed'; then
	t_fail $T:unload-flush "ib_ipoib timed out waiting for flushed receives"
	dmesg_since "$m" | grep 'not completed' | sed 's/^/# /'
else
	t_pass $T:unload-flush
fi
for h in $HOSTS; do
	$IP netns del "$h"
done
if rmmod simfab; then
	t_pass $T:unload
else
	t_fail $T:unload "rmmod simfab failed"
fi
t_summary
