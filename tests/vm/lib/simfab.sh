# shellcheck shell=sh
# Helpers shared by the simfab guest tests (busybox sh), sourced as
# /ibr/lib/simfab.sh after /ibr/lib/guest.sh: topology lookups in simfab's
# debugfs topology, check accumulation (chk_begin ... chk_end NAME, which
# uses $T as the result-name prefix), simfab-cm output and MAD capture
# fields. Defines functions only.

has_mod() {
	grep -q "/$1\.ko[.a-z]*:" "$MODDIR/modules.dep"
}

max() { if [ "$1" -gt "$2" ]; then echo "$1"; else echo "$2"; fi; }

min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }

# Values of debugfs simfab/topology as saved in $TOPO by the test:
# topo_port H/P KEY, topo_host H KEY: a port's or a host's value.
topo_port() {
	sed -n "s|^port $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$TOPO"
}
topo_host() {
	sed -n "s|^host $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$TOPO"
}
# route_via SUBNET PREFIX: the router SUBNET's SA names for PREFIX, worked
# out from $TOPO by the rule of simfab's router_choice (tests/simfab/
# README.md "OpenSM's router choice"). The first route line with that
# prefix or "*" decides. opensm (OpenSM find_router()): its one router if
# the SM knew it at the last sweep (sa=up), via=* the lowest-GUID router
# with a port on SUBNET that the SM knows. first-present (not OpenSM): the
# first of via= (via=*: of every router) whose port on SUBNET is active.
# Prints nothing when there is none (ERR_REQ_INVALID_GID).
route_via() {
	_via=$(awk -v s="$1" -v p="prefix=$2" '$1 == "route" && $2 == s &&
		($3 == p || $3 == "prefix=*") { sub(/^via=/, "", $4); print $4; exit }' "$TOPO")
	_all=$(sed -n 's/^router \([^ ]*\) .*/\1/p' "$TOPO")
	if [ "$(cat /sys/module/simfab/parameters/router_choice)" = first-present ]; then
		[ "$_via" != "*" ] || _via=$(echo "$_all" | tr '\n' ,)
		for _r in $(echo "$_via" | tr , ' '); do
			if [ "$(topo_port "$(rport "$_r" "$1")" state)" = active ]; then
				echo "$_r"
				return
			fi
		done
		return
	fi
	[ "$_via" = "*" ] || _all=${_via%%,*}
	for _r in $_all; do
		_p=$(rport "$_r" "$1")
		if [ -n "$_p" ] && [ "$(topo_router "$_r" sa)" = up ]; then
			echo "$(topo_port "$_p" guid) $_r"
		fi
	done | sort | sed -n '1s/.* //p'
}
# port_dev H/P, port_devport H/P: the ib_device a host's port is on and
# its port number there (an mlx5-style host, hca=mlx5, has one device per
# port: its port 2 is port 1 of its second device).
port_dev() { topo_port "$1" dev; }
port_devport() { topo_port "$1" devport; }
# port_param H/P: the port as simfab_rc_test's and simfab_rsa_test's
# parameters name it, DEV:PORT (its own device's, for either HCA kind).
port_param() { echo "$(port_dev "$1"):$(port_devport "$1")"; }
# iba_ack_timeout DELAY LIFE: the Local ACK Timeout for a CA ACK delay and
# a PacketLifeTime, as IBA 12.7.34 defines the REQ's: 4.096 us x 2^T =
# 4.096 us x 2^DELAY + 2 x 4.096 us x 2^LIFE, T rounded to the nearest
# exponent, at most 31. With M the larger and N the smaller of DELAY and
# LIFE + 1, log2 of the sum is M + log2(1 + 2^(N - M)), which rounds up
# exactly when N >= M - 1 (1 + 1/2 > sqrt 2 > 1 + 1/4); busybox awk may
# lack log().
iba_ack_timeout() {
	_x=$1 _y=$(($2 + 1))
	[ "$_x" -ge "$_y" ] || { _x=$_y _y=$1; }
	[ "$_y" -lt $((_x - 1)) ] || _x=$((_x + 1))
	min "$_x" 31
}
hex_gid() {
	echo "$1" | sed 's/..../&:/g; s/:$//'
}

# prop H/P KEY: a host port's SA property (sl mtu rate life); a router
# port's are its subnet's.
prop() {
	_o=${1%/*}
	if grep -q "^host $_o " "$TOPO"; then
		topo_host "$_o" "$2"
	else
		topo_subnet "$(topo_port "$1" subnet)" "$2"
	fi
}

topo_subnet() {
	sed -n "s|^subnet $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$TOPO"
}

topo_router() {
	sed -n "s|^router $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$TOPO"
}

# rport R SUBNET: the router's port (R/N) on that subnet.
rport() {
	sed -n "s|^port \($1/[0-9]*\) .* subnet=$2 .*|\1|p" "$TOPO"
}

# slmap R SL: the SL a packet on SL leaves router R with.
slmap() {
	_m=$(topo_router "$1" slmap | tr , '\n' | sed -n "s/^$2://p")
	echo "${_m:-$2}"
}

# GIDs as 32 hex digits (the topology's prefix:guid, the capture's bytes)
# and as text for simfab-cm; gid_hex turns any IPv6 text into hex.
port_gidhex() {
	topo_port "$1" gid | tr -d :
}

port_gid() {
	port_gidhex "$1" | sed 's/..../&:/g; s/:$//'
}

gid_hex() {
	echo "$1" | awk -F'::' '{
		nl = ($1 == "") ? 0 : split($1, l, ":")
		nr = (NF > 1 && $2 != "") ? split($2, r, ":") : 0
		s = ""
		for (i = 1; i <= nl; i++) s = s substr("0000" l[i], length(l[i]) + 1)
		for (i = 0; i < 8 - nl - nr; i++) s = s "0000"
		for (i = 1; i <= nr; i++) s = s substr("0000" r[i], length(r[i]) + 1)
		print tolower(s)
	}'
}

# ---- checks ----------------------------------------------------------------
# A result is a list of comparisons; every mismatch is named in the reason.
chk_begin() {
	_bad=
}

chk() { # WHAT GOT WANT: equal strings
	[ "$2" = "$3" ] || _bad="$_bad $1=${2:-<none>}(want $3)"
}

chk_num() { # WHAT GOT WANT: equal numbers (decimal or 0x)
	if [ -z "$2" ] || [ -z "$3" ] || [ $(($2)) -ne $(($3)) ]; then
		_bad="$_bad $1=${2:-<none>}(want $3)"
	fi
}

chk_ne() { # WHAT A B: numbers that must differ
	if [ -z "$2" ] || [ -z "$3" ] || [ $(($2)) -eq $(($3)) ]; then
		_bad="$_bad $1:${2:-<none>}=${3:-<none>}(want different)"
	fi
}

chk_end() { # NAME [FILE...]: the result; the files as diagnostics on failure
	_n=$1
	shift
	if [ -z "$_bad" ]; then
		t_pass "$T:$_n"
	else
		t_fail "$T:$_n" "${_bad# }"
		for _f in "$@"; do diag_file "$_f"; done
	fi
}

# ---- KTAP ---------------------------------------------------------------------
# ktap_relay PREFIX STRIP FILE PLAN-NAME: every KTAP result of a test
# module in FILE (the kernel log of its run, timestamps removed) whose name
# starts with STRIP becomes a result PREFIX<name less STRIP>; then
# PLAN-NAME passes only when the module's plan line "1..N" is there with
# N > 0 and every test 1..N reported exactly once. A run that printed
# nothing, stopped halfway (its plan never came) or lost lines (a log that
# wrapped) fails, and each number never reported is a failure of its own,
# PREFIXtest-I-not-reached, instead of being left out of the totals.
ktap_relay() {
	_kp=$1 _ks=$2 _kf=$3 _kn=$4
	while read -r _st _ _name _rest; do
		case $_st in
		ok) t_pass "$_kp${_name#"$_ks"}" ;;
		not) _name=${_rest%% *}; t_fail "$_kp${_name#"$_ks"}" "${_rest#* # }" ;;
		esac
	done <<-EOF
	$(grep -E "^(ok|not ok) [0-9]+ $_ks" "$_kf")
	EOF
	_plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$_kf" | head -n 1)
	# the numbers 1..plan that were not reported once
	_gone=$(awk -v n="${_plan:-0}" '
		/^not ok [0-9]+ / { seen[$3]++; next }
		/^ok [0-9]+ / { seen[$2]++ }
		END { for (i = 1; i <= n; i++) if (seen[i] != 1) printf "%d ", i }' "$_kf")
	_ran=$(grep -cE '^(ok|not ok) [0-9]+ ' "$_kf")
	for _i in $_gone; do
		t_fail "${_kp}test-$_i-not-reached" "planned ${_plan}, test $_i reported $(grep -cE "^(not )?ok $_i " "$_kf") times"
	done
	if [ "${_plan:-0}" -gt 0 ] && [ "$_ran" -eq "$_plan" ] && [ -z "$_gone" ]; then
		t_pass "$_kn"
	else
		t_fail "$_kn" "planned ${_plan:-none}, ran $_ran${_gone:+, not reported once: $_gone}"
		diag_file "$_kf"
	fi
}

# out FILE KEY: the value of simfab-cm's line KEY=value.
out() {
	awk -v k="$2=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' "$1"
}

# rec FILE [TAG.]: record 0 of a query-path output (under that tag) as
# simfab-cm 'path' keys.
rec() {
	for _k in service_id dgid sgid dlid slid raw_traffic flow_label hop_limit \
		tclass reversible numb_path pkey qos_class sl mtu_selector mtu \
		rate_selector rate packet_life_selector packet_life preference; do
		printf '%s=%s ' "$_k" "$(out "$1" "${2:-}path[0].$_k")"
	done
}

# capf LINE KEY: a key=value field of a capture line.
capf() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# mad HEX OFFSET N: N bytes at MAD byte OFFSET of a capture's mad= hex, as
# hex digits; madn: the same as a number.
mad() {
	echo "$1" | cut -c$((2 * $2 + 1))-$((2 * $2 + 2 * $3))
}

madn() {
	echo $((0x$(mad "$@")))
}

# cm_connect NAME SRC DST PORT: one AF_IB connection SRC -> DST (host
# ports H/P) through rdma_ucm with simfab-cm, both sides in one process,
# no QPs: route, REQ/REP/RTU, then DREQ/DREP. Output in /tmp/cm-NAME.out;
# the exit status is simfab-cm's. Needs CM (the client's path) set.
cm_connect() {
	timeout 60 "$CM" 'timeout 20000' \
		'id srv ps=ib' "bind gid=$(port_gid "$3") port=$4" 'listen backlog=4' \
		'id cli ps=ib' "bind gid=$(port_gid "$2")" \
		"resolve-addr dst-gid=$(port_gid "$3") dst-port=$4 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=3000' 'wait ROUTE_RESOLVED id=cli' \
		'connect qpn=0x111' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
		'wait CONNECT_RESPONSE id=cli' 'accept id=cli' 'wait ESTABLISHED id=conn' \
		'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' >"/tmp/cm-$1.out" 2>&1
}

# down_drops COUNTERS H/P: the packets for port H/P that simfab dropped
# while it was down, in a copy of its counters file.
down_drops() {
	_dd=$(sed -n "s|^port=$2 drop-port-down=||p" "$1")
	echo "${_dd:-0}"
}

# res_total KIND: the count of one kind of resource (pd, cq, qp, cm_id,
# mr) summed over every device, from the per-device counts of `rdma
# resource show`; cm_ids: the rdma_cm ids (its cm_id listing leaves out
# AF_IB ids, the counts do not).
res_total() {
	rdma resource show 2>/dev/null | sed -n "s/.* $1 \\([0-9]*\\) .*/\\1/p" | awk '{ s += $1 } END { print s + 0 }'
}
cm_ids() {
	res_total cm_id
}

# trouble FILE...: kernel trouble in a dmesg excerpt, less the taint note of
# the first out-of-tree module when a test runs alone.
trouble() {
	grep -E "$DMESG_BAD" "$@" | grep -v 'module verification failed'
}

# chk_dmesg NAME MARK: NAME:dmesg passes when the kernel log since
# dmesg_mark MARK has no trouble, else fails and shows it.
chk_dmesg() {
	dmesg_since "$2" >"/tmp/$1.dmesg"
	if trouble "/tmp/$1.dmesg" >"/tmp/$1.trouble"; then
		diag_file "/tmp/$1.trouble"
		t_fail "$1:dmesg" "kernel trouble during the test"
	else
		t_pass "$1:dmesg"
	fi
}

# sf_load_topo [-o OPTIONS] TOPOFILE MODULE...: the MODULEs loaded, then
# simfab (re)loaded with TOPOFILE's topology (one line, as the image has
# them) and OPTIONS (more simfab parameters, e.g. gids=2), the default
# topology left in modprobe.d, debugfs mounted, and the topology as debugfs
# shows it saved in $TOPO. Fails if a modprobe does.
sf_load_topo() {
	_opts=
	if [ "$1" = -o ]; then
		_opts=" $2"
		shift 2
	fi
	_tf=$1
	shift
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	! mod_loaded simfab || rmmod simfab
	_conf=/etc/modprobe.d/simfab-topology.conf
	cp $_conf /tmp/sf-default-topology.conf
	printf 'options simfab topology="%s"%s\n' "$(cat "$_tf")" "$_opts" >$_conf
	_rc=0
	for _m in "$@" simfab; do
		modprobe "$_m" || _rc=1
	done
	cp /tmp/sf-default-topology.conf $_conf
	[ $_rc -eq 0 ] && cat /sys/kernel/debug/simfab/topology >"$TOPO"
}

# sf_unload_rsa: simfab, then what the ib_remote_sa tests leave loaded
# (rdma_ucm, rdma_cm) and ib_remote_sa itself; fails if any stays (an id or
# a discovery left behind keeps it).
sf_unload_rsa() {
	rmmod simfab && { ! mod_loaded rdma_ucm || rmmod rdma_ucm; } &&
		{ ! mod_loaded rdma_cm || rmmod rdma_cm; } && rmmod ib_remote_sa
}

# mtu_bytes CODE: an MTU code (IBA 9.4: 1 = 256 ... 5 = 4096) in bytes;
# mtu_code BYTES: the code of a size (empty if it is none of them).
mtu_bytes() {
	echo $((128 << $1))
}
mtu_code() {
	case $1 in
	256) echo 1 ;; 512) echo 2 ;; 1024) echo 3 ;; 2048) echo 4 ;; 4096) echo 5 ;;
	esac
}
# routed_mtu FORWARD-CODE: the MTU code rdma_cm gives a routed path without
# a return record (and no MTU in the service map): the lower of the
# forward record's and rdma_cm's routed_default_mtu (docs/routed-cm.md);
# with it at 0 (the default), or a series without it, the forward
# record's.
routed_mtu() {
	_d=$(cat /sys/module/rdma_cm/parameters/routed_default_mtu 2>/dev/null) || _d=
	if [ -n "$_d" ] && [ "$_d" != 0 ]; then
		min "$1" "$(mtu_code "$_d")"
	else
		echo "$1"
	fi
}

# ---- simfab_rc_test runs (tests/simfab/module/simfab_rc_test.c) ------------
# sf_rc_run PFX NAME PARAMS...: one load of simfab_rc_test with PARAMS;
# its KTAP results become results named $T:$KPFX:RESULT, its kernel log
# goes to PFX-NAME.ktap, the capture to PFX-NAME.cap, the counters to
# PFX-NAME.counters; NAME-plan fails unless every planned result came.
sf_rc_run() {
	_p=$1 _c=$2
	shift 2
	echo clear >/sys/kernel/debug/simfab/ctl
	_m=$(dmesg_mark)
	if ! timeout 120 modprobe simfab_rc_test "$@"; then
		t_fail "$T:$KPFX:$_c" "modprobe simfab_rc_test $* failed"
		return 1
	fi
	rmmod simfab_rc_test
	dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"$_p-$_c.ktap"
	cat /sys/kernel/debug/simfab/capture >"$_p-$_c.cap"
	cat /sys/kernel/debug/simfab/counters >"$_p-$_c.counters"
	[ -z "${SIMFAB_DEBUG:-}" ] || { diag_file "$_p-$_c.ktap"; diag_file "$_p-$_c.cap"; }
	ktap_relay "$T:$KPFX:" simfab_rc_ "$_p-$_c.ktap" "$T:$KPFX:$_c-plan"
}
# sf_rc_diag PFX NAME WORDS KEY: a value from a diagnostic line of run NAME
# starting "# CASE WORDS" (a query_qp dump: WORDS = WHO.WHEN).
sf_rc_diag() {
	sed -n "s|^# [^ ]* $3 \(.* \)*$4=\([^ ]*\).*|\2|p" "$1-$2.ktap" | head -n 1
}
# sf_rc_pkts PFX NAME PATTERN: run NAME's captured RC packets matching an
# extended regex.
sf_rc_pkts() {
	grep ' rc op=' "$1-$2.cap" | grep -E -- "$3"
}

# routed_players: the names a test of a1 (subnet A) -> b1 (subnet B) on
# routed.topo computes from $TOPO: the subnets and prefixes (A B PA PB),
# the ports and LIDs (AP BP ALID BLID), the routers each SA picks (RA for
# A -> B, RB for B -> A) and their ports (RA_A RA_B RB_A RB_B, LIDs
# RA_ALID RA_BLID RB_ALID RB_BLID), the forward half a1 -> RA's port by
# A's SA (SL_F MTU_F RATE_F LIFE_F), the return half b1 -> RB's port by
# B's SA (SL_R MTU_R RATE_R LIFE_R), end to end (MTU_E RATE_E LIFE_E,
# docs/routed-cm.md), and the SLs the routers' maps give a packet of the
# forward SL on B (SL_IN_B) and of the return SL on A (SL_IN_A).
# shellcheck disable=SC2034 # set for the sourcing test
routed_players() {
	A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
	PA=$(topo_subnet "$A" prefix) PB=$(topo_subnet "$B" prefix)
	AP=a1/1 BP=b1/1
	ALID=$(topo_port $AP lid) BLID=$(topo_port $BP lid)
	RA=$(route_via "$A" "$PB")
	RB=$(route_via "$B" "$PA")
	RA_A=$(rport "$RA" "$A") RA_B=$(rport "$RA" "$B")
	RB_A=$(rport "$RB" "$A") RB_B=$(rport "$RB" "$B")
	RA_ALID=$(topo_port "$RA_A" lid) RA_BLID=$(topo_port "$RA_B" lid)
	RB_ALID=$(topo_port "$RB_A" lid) RB_BLID=$(topo_port "$RB_B" lid)
	SL_F=$(max "$(prop $AP sl)" "$(prop "$RA_A" sl)")
	MTU_F=$(min "$(prop $AP mtu)" "$(prop "$RA_A" mtu)")
	RATE_F=$(min "$(prop $AP rate)" "$(prop "$RA_A" rate)")
	LIFE_F=$(max "$(prop $AP life)" "$(prop "$RA_A" life)")
	SL_R=$(max "$(prop $BP sl)" "$(prop "$RB_B" sl)")
	MTU_R=$(min "$(prop $BP mtu)" "$(prop "$RB_B" mtu)")
	RATE_R=$(min "$(prop $BP rate)" "$(prop "$RB_B" rate)")
	LIFE_R=$(max "$(prop $BP life)" "$(prop "$RB_B" life)")
	MTU_E=$(min "$MTU_F" "$MTU_R") RATE_E=$(min "$RATE_F" "$RATE_R")
	LIFE_E=$(min 63 $(($(max "$LIFE_F" "$LIFE_R") + 1)))
	SL_IN_B=$(slmap "$RA" "$SL_F")
	SL_IN_A=$(slmap "$RB" "$SL_R")
}

# ---- the mixed tier: b1 in the peer guest (tests/vm/README.md "vm-mixed") ----
# routed.topo with b1 in guest 2: the same edit of the same file in both
# guests, so both load one topology (simfab's link header carries its crc32).
MIXED_SED='s/;host b1 /;host b1 guest=2 /'
# mixed_load "MODULES" "PEER-MODULES": that topology loaded here (after
# MODULES; link=eth0) and in the peer (after PEER-MODULES, guest=2),
# $TOPO from this guest's debugfs; fails if either load does, the peer's
# output in /tmp/mixed-peer-load.out.
mixed_load() {
	sed "$MIXED_SED" /ibr/simfab/topology/routed.topo >/tmp/mixed.topo
	# shellcheck disable=SC2086 # module lists
	sf_load_topo -o " link=eth0" /tmp/mixed.topo $1 &&
		peer "sed '$MIXED_SED' /ibr/simfab/topology/routed.topo >/tmp/mixed.topo
. /ibr/lib/guest.sh; . /ibr/lib/simfab.sh; TOPO=/tmp/peer.topo
sf_load_topo -o ' guest=2 link=eth0' /tmp/mixed.topo $2" >/tmp/mixed-peer-load.out 2>&1
}

# peer_up: the peer answers ($T:peer-up; 1 when it does not, and the
# test ends), the mark of its kernel log in $pmark, the distribution's
# stack loaded there (its modprobe's output in
# /tmp/mixed-peer-modprobe.out).
peer_up() {
	if ! peer_wait 240; then
		t_fail "$T:peer-up" "the peer guest's agent did not answer at $PEER_IP within 240 s"
		return 1
	fi
	t_pass "$T:peer-up"
	# shellcheck disable=SC2034 # for the sourcing test
	pmark=$(peer '. /ibr/lib/guest.sh; dmesg_mark')
	peer 'modprobe rdma_ucm' >/tmp/mixed-peer-modprobe.out 2>&1
}

# peer_dmesg NAME WHOSE: nothing bad in the peer's kernel log since
# $pmark ($T:NAME; WHOSE names that kernel in a failure).
peer_dmesg() {
	peer ". /ibr/lib/guest.sh; dmesg_since $pmark" >/tmp/mixed-peer.dmesg
	if trouble /tmp/mixed-peer.dmesg >/tmp/mixed-peer.trouble; then
		diag_file /tmp/mixed-peer.trouble
		t_fail "$T:$1" "kernel trouble in $2"
	else
		t_pass "$T:$1"
	fi
}

# IP over IPoIB between a1 here and b1 in the peer, for the ULPs that
# address their target by IP (NVMe-oF, NFS): IPv4 subnets of A and B
# (RFC 1918), each host's address by its number.
NET_A=10.10.1 NET_B=10.10.2
IPRD=/usr/sbin/ib-routed-ipresolved
# mixed_ip_up: a1's and b1's IPoIB netdevs (AND, BND) with AIP and BIP,
# each reaching the other's subnet through a gateway (so the kernel asks
# userspace for a1's destination GID, and rdma_cm's check of an incoming
# REQ finds b1's route back); b2 as B's service node (the return record
# asked for); ib-routed-ipresolved answering b1's GID from a host file
# (pid in $ipr, its files in /tmp/mixed-ipr). Adds to $_bad.
# shellcheck disable=SC2034 # set for the sourcing test
mixed_ip_up() {
	AIP=$NET_A.1
	wait_for 20 sh -c ". /ibr/lib/guest.sh; [ -n \"\$(ipoib_by_gid $(port_gidhex "$AP"))\" ]" || true
	AND=$(ipoib_by_gid "$(port_gidhex "$AP")")
	if [ -n "$AND" ]; then
		ip addr add $AIP/24 dev "$AND" && ip link set "$AND" up &&
			ip route add $NET_B.0/24 via $NET_A.254 dev "$AND" || _bad="$_bad a1-addr"
	else
		_bad="$_bad no-ipoib-netdev-for-a1"
	fi
	mixed_ip_peer
	_bgh=$(port_gidhex "$BP")
	[ -w /sys/module/rdma_cm/parameters/remote_sa ] && echo Y >/sys/module/rdma_cm/parameters/remote_sa
	svc_map_b2 on || _bad="$_bad service-map"
	mkdir -p /tmp/mixed-ipr
	printf '%s 0x%s b1\n' "$BIP" "$(echo "$_bgh" | cut -c17-32)" >/tmp/mixed-ipr/b.hosts
	printf 'subnet %s.0/24 gid-prefix %s hosts b.hosts\npath-queries refuse\n' "$NET_B" \
		"$(hex_gid "$(printf '%016x' "$(topo_subnet "$B" prefix)")0000000000000000")" >/tmp/mixed-ipr/ipresolved.conf
	$IPRD -c /tmp/mixed-ipr/ipresolved.conf >/tmp/mixed-ipr/log 2>&1 &
	ipr=$!
	wait_for 5 grep -q 'listening on the RDMA netlink' /tmp/mixed-ipr/log || _bad="$_bad ipresolved-not-listening"
}
# mixed_ulp_stack: for a ULP test of the mixed tier: the peer's stack
# checked in-tree, routed.topo with IPoIB loaded in both guests, the
# routed players, the overlay here, mixed_ip_up. Adds to $_bad
# (chk_begin first).
mixed_ulp_stack() {
	peer_in_tree
	if mixed_load "ib_remote_sa rdma_ucm ib_ipoib" "rdma_ucm ib_ipoib"; then
		routed_players
	else
		_bad="$_bad simfab-did-not-load: $(tail -n 1 /tmp/mixed-peer-load.out)"
	fi
	for _m in ib_cm rdma_cm; do
		# shellcheck disable=SC2154 # why: set by guest.sh's overlay_check
		overlay_check $_m || _bad="$_bad $why"
	done
	mixed_ip_up
}

# req_at_b1 PCAP: the first REQ b1 got in the peer's capture PCAP came
# through RA (the router's SLID on B) and names b1's LID and B's SA's SL
# (the return record) and the end-to-end MTU; the number of REQs b1 got
# in $_reqs. Adds to $_bad (chk_begin first).
req_at_b1() {
	_reqs=$(grep -c " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " "$1")
	_req=$(grep " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " "$1" | head -n 1)
	if [ -z "$_req" ]; then
		_bad="$_bad no-REQ-at-b1-in-the-peer's-capture"
		return
	fi
	_m=$(capf "$_req" mad)
	chk_num lrh-slid "$(capf "$_req" slid)" "$RA_BLID"
	chk_num remote-lid "$(madn "$_m" 78 2)" "$BLID"
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_R"
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
}

# mixed_ip_peer: b1's side (BND, BIP), again after ib_ipoib was reloaded
# in the peer. Adds to $_bad.
mixed_ip_peer() {
	BIP=$NET_B.1
	_bgh=$(port_gidhex "$BP")
	BND=$(peer ". /ibr/lib/guest.sh; wait_for 20 sh -c '. /ibr/lib/guest.sh; [ -n \"\$(ipoib_by_gid $_bgh)\" ]'; ipoib_by_gid $_bgh")
	if [ -n "$BND" ]; then
		peer "ip addr add $BIP/24 dev $BND && ip link set $BND up &&
			ip route add $NET_A.0/24 via $NET_B.254 dev $BND" || _bad="$_bad b1-addr"
	else
		_bad="$_bad no-ipoib-netdev-for-b1"
	fi
}
# mixed_ip_down: the resolver stopped, the service map removed.
mixed_ip_down() {
	kill "$ipr" 2>/dev/null
	wait "$ipr" 2>/dev/null
	svc_map_b2 off
}

# ---- NVMe over Fabrics in the mixed tier (mixed-nvmeof, mixed-nvmeof-apm,
# bench-mixed-nvmeof-failover): the target on b1 in the peer, the host here ----
NVME=/usr/sbin/nvme
# An explicit host NQN and ID, one pair: nvme-cli's defaults (from DMI,
# zeros in QEMU) may pair another ID with the kernel's default host's,
# which 6.12 and later refuse ("found same hostid ... but different
# hostnqn").
MIXED_HOSTNQN=nqn.2026-12.org.ib-routed:host-a1
MIXED_HOSTID=5346a100-0000-4000-8000-000000000001
# mixed_nvmf_ready: the modules and tools those need are in the image;
# else $T is skipped with the reason, and 1.
mixed_nvmf_ready() {
	for _m in simfab ib_ipoib nvmet nvmet-rdma nvme-rdma ib_remote_sa; do
		if ! has_mod $_m; then
			t_skip "$T" "$_m is not in the image (make simfab; the kernel's CONFIG)"
			return 1
		fi
	done
	if [ ! -x $NVME ] || [ ! -x "$IPRD" ]; then
		t_skip "$T" "nvme-cli or ib-routed-ipresolved not in the image (scripts/install-deps, make tools)"
		return 1
	fi
}
# mixed_nvme_connect NQN PORT OUT: nvme-cli's `nvme connect -t rdma` to
# b1's address ($BIP) and PORT, its output in OUT; $ctrl and $ns as
# nvme_find sets them. Fails with $why set.
mixed_nvme_connect() {
	# shellcheck disable=SC2034 # for the caller, as nvme_find sets them
	ctrl='' ns=''
	if $NVME connect -t rdma -a "$BIP" -s "$2" -n "$1" --hostnqn=$MIXED_HOSTNQN \
		--hostid=$MIXED_HOSTID >"$3" 2>&1; then
		nvme_find "$1" "$BIP" "$2"
	else
		why="nvme connect: $(tail -n 1 "$3")"
		return 1
	fi
}

# ---- NVMe-oF writes through a router's failure (mixed-nvmeof-apm,
# bench-mixed-nvmeof-failover) ----
# uptime_cs: the guest's uptime in centiseconds.
uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
# nvmf_failover_writer NS PAT BLOCKS GO_ON_S FLAG: nvmf_failover's loop.
nvmf_failover_writer() {
	_i=0 _until=
	while :; do
		_b=$((_i % $3))
		dd if="$2" of=/dev/"$1" bs=64k count=1 skip=$_b seek=$_b \
			oflag=direct conv=notrunc 2>/dev/null
		echo "$(uptime_cs) $_b $?"
		_i=$((_i + 1))
		if [ -z "$_until" ] && [ -e "$5" ]; then
			_until=$(($(uptime_cs) + $4 * 100))
		fi
		[ -z "$_until" ] || [ "$(uptime_cs)" -lt "$_until" ] || break
	done
}

# nvmf_failover NS PREFIX BLOCKS FAIL_AFTER GO_ON_S BOUND FAIL: PREFIX.pat
# (BLOCKS blocks of 64 KiB of random data) written to /dev/NS, then block
# i to block i again, one O_DIRECT dd each; after FAIL_AFTER of them the
# shell command FAIL runs (e.g. "echo 'router r1 down' >$D/ctl"), and the
# writes go on for GO_ON_S seconds after it. PREFIX.w: "centiseconds
# block rc" per write, and "centiseconds hung 1" when the writer had not
# ended BOUND seconds after the failure (a write blocked in the kernel
# ignores signals; the loop is left behind). Sets fo_writes, fo_errors
# (failed or hung), fo_stall_ms (the longest gap between two completions,
# or between the last one and the end of the wait for a hung writer) and
# fo_down_cs (uptime at the failure, centiseconds).
# shellcheck disable=SC2034 # set for the sourcing test
nvmf_failover() {
	rm -f "$2.failed"
	fo_down_cs=0
	dd if=/dev/urandom of="$2.pat" bs=64k count="$3" 2>/dev/null
	dd if="$2.pat" of=/dev/"$1" bs=64k oflag=direct 2>/dev/null || diag "the first write of the pattern failed"
	nvmf_failover_writer "$1" "$2.pat" "$3" "$5" "$2.failed" >"$2.w" &
	_wpid=$!
	wait_for 120 sh -c "[ \$(wc -l <$2.w) -ge $4 ]" || true
	eval "$7"
	fo_down_cs=$(uptime_cs)
	touch "$2.failed"
	if wait_for "$6" sh -c "! kill -0 $_wpid 2>/dev/null"; then
		wait $_wpid
	else
		echo "$(uptime_cs) hung 1" >>"$2.w"
		kill $_wpid 2>/dev/null
	fi
	fo_writes=$(grep -vc hung "$2.w")
	fo_errors=$(awk '$3 != 0' "$2.w" | wc -l)
	fo_stall_ms=$(awk 'NR > 1 && $1 - p > m { m = $1 - p } { p = $1 } END { print m * 10 }' "$2.w")
}

# ulp_apm on|off|default: rdma_cm's and ib_remote_sa's parameters for the
# path migration of kernel ULPs (docs/path-records.md, alt_path_wait): on
# = alt_path=2 alt_path_wait=Y alt_routers=1 (every routed REQ carries an
# alternate, through the other router too), off = alt_path=0 (none),
# default = the modules' own (1, N, N). Fails with $why set when a
# parameter is missing (a series without it).
ulp_apm() {
	why=
	case $1 in
	on) _ap=2 _aw=Y _ar=Y ;;
	off) _ap=0 _aw=N _ar=N ;;
	*) _ap=1 _aw=N _ar=N ;;
	esac
	echo $_ap >/sys/module/rdma_cm/parameters/alt_path || why="no alt_path"
	echo $_aw 2>/dev/null >/sys/module/rdma_cm/parameters/alt_path_wait || why="$why no alt_path_wait"
	echo $_ar 2>/dev/null >/sys/module/ib_remote_sa/parameters/alt_routers || why="$why no alt_routers"
	why=${why# }
	[ -z "$why" ]
}

# peer_switch overlay|stock NAME: the peer switched to its kernel's
# overlay (guest.sh overlay_in) or back to the distribution's stack
# (overlay_out, then the in-tree check), ib_ipoib and b1's address again;
# $T:NAME. Its ULP modules must be unloaded first.
peer_switch() {
	chk_begin
	if [ "$1" = overlay ]; then _sw=overlay_in; else _sw=overlay_out; fi
	peer ". /ibr/lib/guest.sh; unload_tree ib_ipoib; $_sw || { echo \"\$why\"; exit 1; }
modprobe rdma_ucm && modprobe ib_ipoib" >/tmp/mixed-switch.out 2>&1 ||
		_bad="$_sw: $(tail -n 1 /tmp/mixed-switch.out)"
	[ -n "$_bad" ] || mixed_ip_peer
	[ "$1" = overlay ] || peer_in_tree
	chk_end "$2" /tmp/mixed-switch.out /tmp/mixed-peer-stack.out
}

# peer_in_tree: the peer's CM modules are the kernel's own: modprobe
# finds them in kernel/ (not updates/), the loaded ones are not out of
# tree (no O taint) and carry no version (the overlay's carry its stamp),
# there is no overlay stamp and no ib_remote_sa in its module tree, and
# it runs the kernel asked for (tests/vm/run --peer-kver, on this
# guest's command line; this one's by default). Adds to $_bad (chk_begin
# first); the peer's answers in /tmp/mixed-peer-stack.out.
peer_in_tree() {
	# shellcheck disable=SC2016 # expanded in the peer
	peer '. /ibr/lib/guest.sh
for m in ib_cm rdma_cm rdma_ucm; do
	p=$(modinfo -n $m)
	case $p in $MODDIR/kernel/drivers/infiniband/core/*) p=kernel ;; esac
	echo "$m path=$p taint=$(cat /sys/module/$m/taint)- version=$(cat /sys/module/$m/version 2>/dev/null)-"
done
[ -e /ibr/stamp ] && echo stamp=yes
modprobe -n ib_remote_sa 2>/dev/null && echo rsa=yes
uname -r' >/tmp/mixed-peer-stack.out 2>&1
	_pk=$(sed -n 's/.*ibr_peer_kver=\([^ ]*\).*/\1/p' /proc/cmdline)
	for _m in ib_cm rdma_cm rdma_ucm; do
		_l=$(grep "^$_m " /tmp/mixed-peer-stack.out)
		chk "$_m-in-tree" "$(capf "$_l" path) $(capf "$_l" taint) $(capf "$_l" version)" "kernel - -"
	done
	! grep -q '^stamp=yes' /tmp/mixed-peer-stack.out || _bad="$_bad overlay-stamp"
	! grep -q '^rsa=yes' /tmp/mixed-peer-stack.out || _bad="$_bad ib_remote_sa-present"
	chk kernel "$(tail -n 1 /tmp/mixed-peer-stack.out)" "${_pk:-$KVER}"
}

# svc_map_b2 on|off: b2 (this guest) as subnet B's ib_remote_sa service
# node, named in this guest's service map for B's prefix (serve=subnet),
# or that undone. Needs $B and $TOPO; fails if a step does.
svc_map_b2() {
	_map=/sys/kernel/config/ib_remote_sa/services/siteB
	_serve=/sys/kernel/ib_remote_sa/$(topo_host b2 dev)/1/serve
	if [ "$1" = off ]; then
		rmdir $_map && echo own >"$_serve"
		return
	fi
	mount -t configfs configfs /sys/kernel/config 2>/dev/null
	mkdir $_map && topo_subnet "$B" prefix >$_map/prefix &&
		port_gid b2/1 >$_map/service && echo subnet >"$_serve"
}
