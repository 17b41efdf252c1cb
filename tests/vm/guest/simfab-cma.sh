#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 25 (measured under TCG; tests/vm/run --boots balances by it)
# rdma_cm across an IB router (issue 9) on simfab's routed topology
# (tests/simfab/topology/routed.topo): route resolution takes the forward
# record from the local SA and the return record from ib_remote_sa, and
# hands both to ib_cm; AF_IB source selection for a destination on no
# local subnet; what happens when the remote service is absent or silent
# (rdma_cm's remote_sa_required parameter). Every expected value comes
# from debugfs simfab/topology or the capture; none is written in here.
#
# cma:routed-*     a1 (subnet A) -> b1 (subnet B) through rdma_ucm
#                  (simfab-cm): the remote query on the wire, the REQ's
#                  return-record fields and end-to-end values, both QPs.
# cma:traffic-*    the same through the kernel API with QPs and traffic
#                  (simfab_rc_test.ko, case rc).
# cma:apm-*        an alternate from a path set (kernel API): armed, the
#                  primary router fails, both QPs migrate, the DREQ
#                  follows (rdma_cm tells ib_cm of the QP's migration).
# cma:lap-*        the same, the active id taking the APM events: migrated
#                  (PATH_MIGRATED), a new alternate by LAP (APR, both QPs
#                  loaded by rdma_cm, ALT_PATH_LOADED), re-armed, migrated
#                  back; the passive id (not opted in) gets no event.
# cma:absent-*     b1's responder off (UNSUPPORTED at once): ROUTE_ERROR
#                  -EOPNOTSUPP when required, else today's REQ.
# cma:silent-*     a destination on no subnet, no bound source: a source
#                  port is picked; the router drops the query (timeout):
#                  ROUTE_ERROR -ETIMEDOUT when required, else resolved.
#
# Skips without simfab.ko, simfab-cm, ib_remote_sa or the routed topology.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-cma
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
P=/sys/module/rdma_cm/parameters
TOPOFILE=/ibr/simfab/topology/routed.topo
RETRY=3

if ! has_mod simfab || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, simfab-cm or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
if ! has_mod ib_remote_sa; then
	t_skip $T "ib_remote_sa.ko not in the image (the series has no ib_remote_sa?)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
! mod_loaded simfab || rmmod simfab
CONF=/etc/modprobe.d/simfab-topology.conf
cp $CONF /tmp/sfc-default.conf
printf 'options simfab topology="%s"\n' "$(cat $TOPOFILE)" >$CONF
modprobe ib_remote_sa && modprobe rdma_ucm && modprobe simfab
rc=$?
cp /tmp/sfc-default.conf $CONF
if [ $rc -eq 0 ] && [ "$(cat /sys/module/simfab/parameters/topology)" = "$(cat $TOPOFILE)" ]; then
	t_pass $T:load
else
	t_fail $T:load "modprobe ib_remote_sa / rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
# rdma_cm's switches (absent on an unpatched series: the checks fail).
param() { # NAME VALUE
	[ -w "$P/$1" ] && echo "$2" >"$P/$1"
}
param remote_sa Y
param remote_sa_required N

TOPO=/tmp/sfc.topo
cat $D/topology >$TOPO
dev_of() { topo_host "${1%/*}" dev; }
# cnt H/P NAME: an ib_remote_sa counter of a host port.
cnt() {
	cat "$S/$(dev_of "$1")/${1#*/}/counters/$2" 2>/dev/null || echo x
}
# cap FILE ATTR AT VERDICT: the first captured CM MAD of that attribute
# that arrived at port AT with that verdict.
cap() {
	grep " at=$3 .* class=0x07 cv=2 method=0x03 .* attr=$2 .* verdict=$4 " "$1" | head -n 1
}
# rsa_cap FILE METHOD AT VERDICT: the first ib_remote_sa MAD (vendor class
# 0x0d, PathRecord) of that method at port AT with that verdict.
rsa_cap() {
	grep -i " at=$3 .* class=0x0d .* method=$2 .* attr=0x0035 .* verdict=$4 " "$1" | head -n 1
}

# The players and both halves' values (simfab.sh): RA/RB the routers A's
# and B's SAs pick, the forward half (A's SA, a1 -> RA's port: *_F), the
# return half (B's SA, b1 -> RB's port: *_R), end to end (*_E,
# docs/routed-cm.md), and SL_IN_B, the SL the REQ arrives at b1 with
# (RA's map): the passive side's SL when it takes the router from the
# REQ's LRH.
routed_players
# A prefix no subnet has.
PX=0xfec0000000000c00
grep -q "^subnet .* prefix=$PX " $TOPO && PX=0xfec0000000000d00
XGID=$(hex_gid "$(printf '%016x' "$PX")$(port_gidhex $BP | cut -c17-32)")
diag "A=$A B=$B RA=$RA ($RA_ALID/$RA_BLID) RB=$RB; fwd SL $SL_F MTU $MTU_F rate $RATE_F life $LIFE_F; ret SL $SL_R MTU $MTU_R rate $RATE_R life $LIFE_R; e2e MTU $MTU_E rate $RATE_E life $LIFE_E; SL in B $SL_IN_B"

chk_begin
[ -n "$RA" ] && [ -n "$RB" ] || _bad="no routers between $A and $B"
# The halves must differ, or the checks below could not tell them apart.
chk_ne asym-mtu "$MTU_F" "$MTU_R"
chk_ne asym-rate "$RATE_F" "$RATE_R"
chk_ne asym-lid "$BLID" 0xffff
chk_end topology $TOPO

# connect NAME PORT: one simfab-cm run playing both sides, a1 -> b1,
# bound source GID (as 6.1 needed).
connect() {
	_c=$1 _port=$2
	_o=/tmp/sfc-$_c.out _cap=/tmp/sfc-$_c.cap
	echo clear >$D/ctl
	timeout 90 "$CM" 'timeout 20000' \
		'id srv ps=ib' "bind gid=$(port_gid $BP) port=$_port" 'listen backlog=4' \
		'id cli ps=ib' "bind gid=$(port_gid $AP)" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=$_port timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=3000' 'wait ROUTE_RESOLVED id=cli' \
		'tag cli' 'query-path' "connect qpn=0x111" \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' "accept qpn=0x222" \
		'tag cli' 'wait CONNECT_RESPONSE id=cli' \
		'tag cli-rtr' 'qp-attr rtr' 'accept id=cli' \
		'tag conn' 'wait ESTABLISHED id=conn' \
		'tag conn-rtr' 'qp-attr rtr' 'tag conn' 'query-path' \
		'tag' 'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' \
		>"$_o" 2>"$_o.err"
	_rc=$?
	cat $D/capture >"$_cap"
	[ -z "${SIMFAB_DEBUG:-}" ] || { diag_file "$_o"; diag_file "$_cap"; }
	return $_rc
}

# ---- cma:routed: a1 -> b1 with the return record from b1's service -------------
n0=$(cnt $AP client_answered)
if connect routed 7401; then
	t_pass $T:cma:routed-connect
else
	t_fail $T:cma:routed-connect "simfab-cm failed: $(tail -n 1 /tmp/sfc-routed.out.err)"
	diag_file /tmp/sfc-routed.out.err
fi
o=/tmp/sfc-routed.out c=/tmp/sfc-routed.cap

# The query: a1 -> b1's GID through RA (the forward record's router), the
# answer back at a1 with status 0 and b1 -> RB's port on B.
chk_begin
_q=$(rsa_cap $c 0x01 "$RA_A" routed)
_a=$(rsa_cap $c 0x81 $AP delivered)
if [ -z "$_q" ] || [ -z "$_a" ]; then
	_bad="no ib_remote_sa Get routed at $RA_A and answer at $AP"
else
	chk_num q-slid "$(capf "$_q" slid)" "$ALID"
	chk_num q-dlid "$(capf "$_q" dlid)" "$RA_ALID"
	chk q-dgid "$(gid_hex "$(capf "$_q" dgid)")" "$(port_gidhex $BP)"
	chk a-status "$(capf "$_a" status)" 0x0000
	_m=$(capf "$_a" mad)
	# the record at MAD byte 56: DGID at 64 (a1), SGID at 80 (b1)
	chk a-dgid "$(mad "$_m" 64 16)" "$(port_gidhex $AP)"
	chk a-sgid "$(mad "$_m" 80 16)" "$(port_gidhex $BP)"
	chk_num a-dlid "$(madn "$_m" 96 2)" "$(topo_port "$RB_B" lid)"
	chk_num a-slid "$(madn "$_m" 98 2)" "$BLID"
fi
chk_num client-answered "$(cnt $AP client_answered)" $((n0 + 1))
chk_end cma:routed-remote-query $c

# The REQ as a1 sent it (at RA's port on A): Remote Port LID = b1 and the
# passive side's SL, flow label, traffic class and hop limit from the
# return record; Local Port LID permissive (the router is the one the REQ
# goes through: b1 takes it from the LRH); end-to-end MTU, rate and ACK
# timeout; SubnetLocal 0.
chk_begin
_req=$(cap $c 0x0010 "$RA_A" routed)
if [ -z "$_req" ]; then
	_bad="no REQ routed at $RA_A"
else
	_m=$(capf "$_req" mad)
	chk_num lrh-dlid "$(capf "$_req" dlid)" "$RA_ALID"
	chk_num local-lid "$(madn "$_m" 76 2)" 0xffff
	chk_num remote-lid "$(madn "$_m" 78 2)" "$BLID"
	chk_num sl $(($(madn "$_m" 118 1) >> 4)) "$SL_R"
	chk_num hop-limit "$(madn "$_m" 117 1)" 255
	chk_num subnet-local $(($(madn "$_m" 118 1) >> 3 & 1)) 0
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$MTU_E"
	chk_num rate $(($(madn "$_m" 115 1) & 0x3f)) "$RATE_E"
	chk_num ack-timeout $(($(madn "$_m" 119 1) >> 3)) $((LIFE_E + 1))
	chk local-gid "$(mad "$_m" 80 16)" "$(port_gidhex $AP)"
	chk remote-gid "$(mad "$_m" 96 16)" "$(port_gidhex $BP)"
fi
grep -qxF 'conn.event ESTABLISHED id=conn status=0' "$o" || _bad="$_bad no-ESTABLISHED"
chk_end cma:routed-req-wire $c $o

# a1's QP: the forward record's router and SL, end-to-end MTU and rate.
chk_begin
chk_num dlid "$(out $o cli-rtr.qp_attr.ah.dlid)" "$RA_ALID"
chk_num sl "$(out $o cli-rtr.qp_attr.ah.sl)" "$SL_F"
chk_num mtu "$(out $o cli-rtr.qp_attr.path_mtu)" "$MTU_E"
chk_num rate "$(out $o cli-rtr.qp_attr.ah.static_rate)" "$RATE_E"
chk_num hop "$(out $o cli-rtr.qp_attr.ah.grh.hop_limit)" 255
chk_end cma:routed-active-qp $o

# b1's QP: back through the router the REQ came through (RA's port on B,
# from the LRH), on the SL B's SA gave (the REQ's, not the LRH's: the
# router's; simfab-sl shows a wrong one is lost), end-to-end MTU and
# rate; its path record names b1's own LID (6.1's fix-up left 0 there).
chk_begin
chk_num dlid "$(out $o conn-rtr.qp_attr.ah.dlid)" "$RA_BLID"
chk_ne sa-vs-router-sl "$SL_R" "$SL_IN_B"
chk_num sl "$(out $o conn-rtr.qp_attr.ah.sl)" "$SL_R"
chk_num mtu "$(out $o conn-rtr.qp_attr.path_mtu)" "$MTU_E"
chk_num rate "$(out $o conn-rtr.qp_attr.ah.static_rate)" "$RATE_E"
chk_num global "$(out $o conn-rtr.qp_attr.ah.is_global)" 1
chk dgid "$(gid_hex "$(out $o conn-rtr.qp_attr.ah.grh.dgid)")" "$(port_gidhex $AP)"
chk_num path-slid "$(out $o 'conn.path[0].slid')" "$BLID"
chk_num path-mtu "$(out $o 'conn.path[0].mtu')" "$MTU_E"
chk_end cma:routed-passive-qp $o

# ---- cma:traffic: the kernel API with QPs (simfab_rc_test case rc) ------------
if has_mod simfab_rc_test; then
	echo clear >$D/ctl
	n0=$(cnt $AP client_answered)
	_m=$(dmesg_mark)
	if timeout 120 modprobe simfab_rc_test cases=rc "act=$(dev_of $AP):1" "pas=$(dev_of $BP):1" retry=$RETRY; then
		rmmod simfab_rc_test
		dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >/tmp/sfc-traffic.ktap
		cat $D/capture >/tmp/sfc-traffic.cap
		k=/tmp/sfc-traffic.ktap
		qa() { sed -n "s|^# [^ ]* $1 \(.* \)*$2=\([^ ]*\).*|\2|p" $k | head -n 1; }
		chk_begin
		_nok=$(grep -cE '^not ok [0-9]+ simfab_rc_' $k)
		_ok=$(grep -cE '^ok [0-9]+ simfab_rc_' $k)
		[ "$_nok" -eq 0 ] && [ "$_ok" -gt 0 ] || _bad="$_bad ktap ok=$_ok not-ok=$_nok"
		chk_num client-answered "$(cnt $AP client_answered)" $((n0 + 1))
		chk_num pas-dlid "$(qa pas.conn dlid)" "$RA_BLID"
		chk_num pas-mtu "$(qa pas.conn mtu)" "$MTU_E"
		chk_num pas-rate "$(qa pas.conn rate)" "$RATE_E"
		chk_num act-mtu "$(qa act.conn mtu)" "$MTU_E"
		chk_end cma:traffic-routed-resolve-route $k
		# The SENDs at b1: on the LRH the router gave them, none dropped.
		chk_begin
		[ "$(grep -cE " sn=$B at=$BP slid=$RA_BLID dlid=$BLID .* rc op=0x04 .*verdict=delivered" /tmp/sfc-traffic.cap)" -ge 1 ] ||
			_bad="$_bad no SENDs delivered at b1 through $RA"
		[ "$(grep -c ' rc op=.*verdict=drop' /tmp/sfc-traffic.cap)" -eq 0 ] || _bad="$_bad rc drops"
		chk_end cma:traffic-wire /tmp/sfc-traffic.cap
	else
		t_fail $T:cma:traffic-routed-resolve-route "modprobe simfab_rc_test failed"
	fi
else
	t_skip $T:cma:traffic-routed-resolve-route "simfab_rc_test.ko not in the image"
fi

# ---- cma:apm: an alternate from a path set, migration, ib_cm told -----------------
# simfab_rc_test case cma-apm: the route set by hand through rdma_cm's
# path-set calls (forward through RA paired with RA's port on B as the
# return DLID; the alternate through RB, B's own return record), RC QPs,
# RA fails under traffic: both QPs migrate to RB, the consumer's handler
# sees PATH_MIG with its own qp_context, its rdma_notify() tells ib_cm,
# and the DREQ (ib_cm's path) reaches b1 through RB, the DREP a1.
# apm NAME NOTIFY: one run; NOTIFY=1: the consumer calls rdma_notify(),
# as rdma_cm's consumers must; NOTIFY=0: it does not, as kernel ULPs do
# not, and rdma_cm, which never takes over a QP's event handler or
# context, reads the migration from the QP it created before the DREQ:
# the DREQ and the DREP go through RB all the same (before "RDMA/cma: Let
# ib_cm follow the migration of the QPs rdma_cm created" the DREQ went to
# RA and was lost).
apm() {
	_n=$1
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	if ! timeout 180 modprobe simfab_rc_test cases=cma-apm "act=$(dev_of $AP):1" "pas=$(dev_of $BP):1" \
		ret_dlid="$RA_BLID" alt_dlid="$RB_ALID" retry=$RETRY cma_notify="$2" \
		fail_ctl="router+$RA+down" restore_ctl="router+$RA+up"; then
		t_fail "$T:cma:$_n" "modprobe simfab_rc_test cases=cma-apm failed"
		return
	fi
	rmmod simfab_rc_test
	dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"/tmp/sfc-$_n.ktap"
	cat $D/capture >"/tmp/sfc-$_n.cap"
	ktap_relay "$T:cma:$_n-" simfab_rc_cma-apm_ "/tmp/sfc-$_n.ktap" "$T:cma:$_n-plan"
	k=/tmp/sfc-$_n.ktap
	chk_begin
	chk_num act-alt-dlid "$(qa act.before alt_dlid)" "$RB_ALID"
	chk_num pas-alt-dlid "$(qa pas.before alt_dlid)" "$(topo_port "$RB_B" lid)"
	chk_num act-dlid-after "$(qa act.after dlid)" "$RB_ALID"
	chk_num pas-dlid-after "$(qa pas.after dlid)" "$(topo_port "$RB_B" lid)"
	# the DREQ left a1 through RB, RA being down, and none went to RA
	grep -q " at=$(rport "$RB" "$A") .* class=0x07 .* attr=0x0015 .* verdict=routed " "/tmp/sfc-$_n.cap" ||
		_bad="$_bad no-DREQ-through-$RB"
	! grep -q " at=$(rport "$RA" "$A") .* class=0x07 .* attr=0x0015 " "/tmp/sfc-$_n.cap" ||
		_bad="$_bad DREQ-to-$RA"
	# the DREP left b1 through RB and reached a1
	grep -q " at=$(rport "$RB" "$B") .* class=0x07 .* attr=0x0016 .* verdict=routed " "/tmp/sfc-$_n.cap" ||
		_bad="$_bad no-DREP-through-$RB"
	grep -q " at=$AP .* class=0x07 .* attr=0x0016 .* verdict=delivered " "/tmp/sfc-$_n.cap" ||
		_bad="$_bad no-DREP-at-a1"
	chk_end "cma:$_n-paths-and-dreq-route" "$k" "/tmp/sfc-$_n.cap"
}
qa() { sed -n "s|^# [^ ]* $1 \(.* \)*$2=\([^ ]*\).*|\2|p" "$k" | head -n 1; }
if has_mod simfab_rc_test && [ "$RA" != "$RB" ]; then
	RB_ALID=$(topo_port "$(rport "$RB" "$A")" lid)
	apm apm 1
	apm apm-unnotified 0
else
	t_skip $T:cma:apm "simfab_rc_test.ko not in the image, or one router only"
fi

# ---- cma:lap: APM events, a new alternate by LAP, re-armed --------------------
# simfab_rc_test case cma-lap: the connection of cma:apm, both ids
# taking rdma_cm's APM events (rdma_set_apm_events(); rdma_cm accepts a
# LAP only for such an id). RA fails under traffic: both QPs migrate to
# RB, PATH_MIGRATED. RA comes back; rdma_load_ib_alt_path() offers the
# old primary (through RA, its return record RA's port on B): LAP to b1,
# APR back, rdma_cm loads both QPs, ALT_PATH_LOADED on both sides;
# traffic re-arms them. RB fails: both migrate back to RA, PATH_MIGRATED
# again, the DREQ goes through RA. The alternates' Local ACK Timeout
# comes from their paths' packet lifetime, not rdma_set_ack_timeout()'s,
# and the QP waits it out on each of its 1 + RETRY tries before it
# migrates back: with routed.topo's lifetimes (end to end 21: 2^22 x
# 4.096 us, about 17 s a try) about 70 s of a TCG boot. life_max=16 caps
# the records the driver takes from the SAs (17 end to end: about 0.5 s
# a try); which path the QPs migrate to, and when, is what is checked.
# wait_ms stays the bound for the unshortened case.
if has_mod simfab_rc_test && [ "$RA" != "$RB" ]; then
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	if timeout 330 modprobe simfab_rc_test cases=cma-lap "act=$(dev_of $AP):1" "pas=$(dev_of $BP):1" \
		ret_dlid="$RA_BLID" alt_dlid="$RB_ALID" retry=$RETRY wait_ms=150000 life_max=16 \
		fail_ctl="router+$RA+down" restore_ctl="router+$RA+up" \
		fail_alt_ctl="router+$RB+down" restore_alt_ctl="router+$RB+up"; then
		rmmod simfab_rc_test
		k=/tmp/sfc-lap.ktap c=/tmp/sfc-lap.cap
		dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >$k
		cat $D/capture >$c
		while read -r _st _ _name _rest; do
			case $_st in
			ok) t_pass "$T:cma:lap-${_name#simfab_rc_cma-lap_}" ;;
			not) _name=${_rest%% *}; t_fail "$T:cma:lap-${_name#simfab_rc_cma-lap_}" "${_rest#* # }" ;;
			esac
		done <<-EOF
		$(grep -E '^(ok|not ok) [0-9]+ simfab_rc_' $k)
		EOF
		chk_begin
		# both QPs: the LAP's alternate back through RA, then on it
		chk_num act-alt-dlid-lapped "$(qa act.lapped alt_dlid)" "$RA_ALID"
		chk_num pas-alt-dlid-lapped "$(qa pas.lapped alt_dlid)" "$RA_BLID"
		chk_num pas-alt-sl-lapped "$(qa pas.lapped alt_sl)" "$SL_R"
		chk_num act-dlid-lapped "$(qa act.lapped dlid)" "$RB_ALID"
		chk_num act-dlid-back "$(qa act.back dlid)" "$RA_ALID"
		chk_num pas-dlid-back "$(qa pas.back dlid)" "$RA_BLID"
		# the LAP at b1 (through RB, the path then) with RA's LIDs on B,
		# the APR at a1 with status 0; ALT_PATH_LOADED at both ids. b1
		# is not yet known to take LAPs: ib_cm's probe goes first (the
		# LAP with Remote Communication ID 0, MAD bytes 28-31; b1's
		# answer has Local Communication ID 0, bytes 24-27).
		_lap=$(grep " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0019 .* verdict=delivered " $c |
			while read -r _l; do [ "$(madn "$(capf "$_l" mad)" 28 4)" = 0 ] || { echo "$_l"; break; }; done)
		_apr=$(grep " at=$AP .* class=0x07 cv=2 method=0x03 .* attr=0x001a .* verdict=delivered " $c |
			while read -r _l; do [ "$(madn "$(capf "$_l" mad)" 24 4)" = 0 ] || { echo "$_l"; break; }; done)
		_probe=$(grep " at=$BP .* class=0x07 cv=2 method=0x03 .* attr=0x0019 .* verdict=delivered " $c | head -n 1)
		[ -n "$_probe" ] && [ "$(madn "$(capf "$_probe" mad)" 28 4)" = 0 ] || _bad="$_bad no-probe-first"
		if [ -z "$_lap" ] || [ -z "$_apr" ]; then
			_bad="$_bad no LAP at $BP or no APR at $AP"
		else
			chk_num lap-local-lid "$(madn "$(capf "$_lap" mad)" 44 2)" "$RA_BLID"
			chk_num lap-remote-lid "$(madn "$(capf "$_lap" mad)" 46 2)" "$BLID"
			chk_num apr-status "$(madn "$(capf "$_apr" mad)" 33 1)" 0
		fi
		chk_num lap-via-rb "$(grep -c " at=$(rport "$RB" "$A") .* attr=0x0019 .* verdict=routed " $c)" 2
		# ib-routed's events are 0x1000-0x1002 (one the module does not
		# know shows as UNRECOGNIZED)
		grep -q "pas rdma_cm event 0x1000 status 0" $k || _bad="$_bad no-ALT_PATH_LOADED-0x1000-at-passive"
		grep -q "act rdma_cm event 0x1000 status 0" $k || _bad="$_bad no-ALT_PATH_LOADED-0x1000"
		grep -q " at=$RA_A .* class=0x07 .* attr=0x0015 .* verdict=routed " $c || _bad="$_bad no-DREQ-through-$RA"
		chk_end cma:lap-paths-and-wire $k $c
	else
		t_fail $T:cma:lap "modprobe simfab_rc_test cases=cma-lap failed"
	fi
else
	t_skip $T:cma:lap "simfab_rc_test.ko not in the image, or one router only"
fi

# ---- cma:lapunload: an accepted alternate that the QP refuses ----------------
# simfab_rc_test case cma-lap-unloadable: the connection of cma:lap (armed
# through RB); the active QP goes to ERR, then rdma_load_ib_alt_path()
# offers the primary. b1 accepts, rdma_cm's load into the QP is refused:
# ALT_PATH_ERROR with the load's errno, and ib_cm and the route keep RB.
# (No 'fail'/'error' in names printed to dmesg: DMESG_BAD matches them.)
if has_mod simfab_rc_test && [ "$RA" != "$RB" ]; then
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	if timeout 120 modprobe simfab_rc_test cases=cma-lap-unloadable "act=$(dev_of $AP):1" "pas=$(dev_of $BP):1" \
		ret_dlid="$RA_BLID" alt_dlid="$RB_ALID" retry=$RETRY wait_ms=30000; then
		rmmod simfab_rc_test
		k=/tmp/sfc-lapunload.ktap
		dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >$k
		_n=0
		while read -r _st _ _name _rest; do
			case $_st in
			ok) t_pass "$T:cma:lapunload-${_name#simfab_rc_cma-lap-unloadable_}" ;;
			not) _name=${_rest%% *}; t_fail "$T:cma:lapunload-${_name#simfab_rc_cma-lap-unloadable_}" "${_rest#* # }" ;;
			esac
			_n=$((_n + 1))
		done <<-EOF
		$(grep -E '^(ok|not ok) [0-9]+ simfab_rc_' $k)
		EOF
		grep -q "simfab_rc_cma-lap-unloadable_route-keeps-qp-alternate" $k ||
			t_fail $T:cma:lapunload-ran "the case ended before its last check ($_n results, see $k)"
	else
		t_fail $T:cma:lapunload "modprobe simfab_rc_test cases=cma-lap-unloadable failed"
	fi
else
	t_skip $T:cma:lapunload "simfab_rc_test.ko not in the image, or one router only"
fi

# ---- cma:laprefused: a LAP to an id that takes no APM events ----------------
# simfab_rc_test case cma-lap-refused: the connection of cma:lap (armed
# through RB at connect), the passive id taking no APM events, as a
# kernel ULP's (nvmet-rdma, ib_srpt) takes none, its QP rdma_create_qp()'s
# as theirs. rdma_load_ib_alt_path() offers the primary: b1 answers APR
# Unsupported (AP Status 2, ib_cm.h IB_CM_APR_UNSUPPORTED) and loads nothing;
# ALT_PATH_ERROR -EOPNOTSUPP at the active id, both QPs keep RB, and the
# connection carries on. The APR checked on the wire at a1.
if has_mod simfab_rc_test && [ "$RA" != "$RB" ]; then
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	if timeout 120 modprobe simfab_rc_test cases=cma-lap-refused "act=$(dev_of $AP):1" "pas=$(dev_of $BP):1" \
		ret_dlid="$RA_BLID" alt_dlid="$RB_ALID" retry=$RETRY wait_ms=30000; then
		rmmod simfab_rc_test
		k=/tmp/sfc-laprefused.ktap c=/tmp/sfc-laprefused.cap
		dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >$k
		cat $D/capture >$c
		ktap_relay "$T:cma:laprefused-" simfab_rc_cma-lap-refused_ $k "$T:cma:laprefused-plan"
		chk_begin
		_apr=$(grep " at=$AP .* class=0x07 cv=2 method=0x03 .* attr=0x001a .* verdict=delivered " $c |
			while read -r _l; do [ "$(madn "$(capf "$_l" mad)" 24 4)" = 0 ] || { echo "$_l"; break; }; done)
		if [ -z "$_apr" ]; then
			_bad="$_bad no-APR-at-$AP"
		else
			chk_num apr-status-unsupported "$(madn "$(capf "$_apr" mad)" 33 1)" 2
		fi
		! grep -Eq "pas rdma_cm event (0x100[0-2]|UNRECOGNIZED) " $k || _bad="$_bad passive-id-got-apm-event"
		chk_end cma:laprefused-wire $k $c
	else
		t_fail $T:cma:laprefused "modprobe simfab_rc_test cases=cma-lap-refused failed"
	fi
else
	t_skip $T:cma:laprefused "simfab_rc_test.ko not in the image, or one router only"
fi

# ---- cma:absent: b1 runs no service (ib_mad answers UNSUPPORTED) --------------
RSP=$S/$(dev_of $BP)/1/responder
echo 0 >"$RSP" 2>/dev/null
# a1 keeps b1's earlier answers (ib_remote_sa's client cache): forget
# them, as a failed connection attempt would (ib_remote_sa_invalidate).
echo 1 >"$S/$(dev_of $AP)/1/cache_flush" 2>/dev/null
# route NAME EVENT DST-GID [BIND-GID]: resolve address and route, wait
# for EVENT (ROUTE_RESOLVED or ROUTE_ERROR); the events and the source
# address in /tmp/sfc-NAME.out (another event: listed as unclaimed).
route() {
	_n=$1 _e=$2 _dst=$3
	shift 3
	_b='tag'
	[ $# -eq 0 ] || _b="bind gid=$1"
	echo clear >$D/ctl
	timeout 60 "$CM" 'timeout 20000' 'id cli ps=ib' "$_b" \
		"resolve-addr dst-gid=$_dst dst-port=7402 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'query-addr' 'resolve-route timeout=1000' \
		"wait $_e id=cli status=any" >"/tmp/sfc-$_n.out" 2>&1
	cat $D/capture >"/tmp/sfc-$_n.cap"
}
# ev NAME: the route event, "EVENT status".
ev() {
	sed -n 's/^event \(ROUTE_[A-Z]*\) id=cli status=\(-*[0-9]*\)$/\1 \2/p' "/tmp/sfc-$1.out" | tail -n 1
}
param remote_sa_required Y
route absent-req ROUTE_ERROR "$(port_gid $BP)" "$(port_gid $AP)"
chk_begin
chk event "$(ev absent-req)" "ROUTE_ERROR -95"
[ -n "$(rsa_cap /tmp/sfc-absent-req.cap 0x81 $AP delivered)" ] || _bad="$_bad no-UNSUPPORTED-answer"
chk_end cma:absent-required-route-error /tmp/sfc-absent-req.out /tmp/sfc-absent-req.cap
param remote_sa_required N
if connect absent 7403; then
	# 6.1's REQ: both LIDs permissive; the MTU the lower of the
	# forward record's and rdma_cm's routed_default_mtu (simfab-mtu
	# sends large messages over such a connection).
	_req=$(cap /tmp/sfc-absent.cap 0x0010 "$RA_A" routed)
	_m=$(capf "$_req" mad)
	chk_begin
	chk_num remote-lid "$(madn "$_m" 78 2)" 0xffff
	chk_num mtu $(($(madn "$_m" 74 1) >> 4)) "$(routed_mtu "$MTU_F")"
	chk_end cma:absent-fallback-connects /tmp/sfc-absent.out /tmp/sfc-absent.cap
else
	t_fail $T:cma:absent-fallback-connects "simfab-cm failed: $(tail -n 1 /tmp/sfc-absent.out.err)"
fi
echo 1 >"$RSP" 2>/dev/null

# ---- cma:silent: no bound source, a destination on no subnet ------------------
# A's SA routes any prefix through RA, which has no route for it and drops
# the query: the remote service never answers.
param remote_sa_required Y
t0=$(cut -d. -f1 /proc/uptime)
route silent-req ROUTE_ERROR "$XGID"
t1=$(cut -d. -f1 /proc/uptime)
chk_begin
chk src-gid "$(gid_hex "$(out /tmp/sfc-silent-req.out addr.src.gid)")" "$(port_gidhex $AP)"
chk event "$(ev silent-req)" "ROUTE_ERROR -110"
grep -q " class=0x0[dD] .* verdict=drop-no-route" /tmp/sfc-silent-req.cap || _bad="$_bad no-query-dropped-at-router"
diag "silent: $((t1 - t0)) s"
chk_end cma:silent-unbound-required-route-error /tmp/sfc-silent-req.out /tmp/sfc-silent-req.cap
param remote_sa_required N
route silent ROUTE_RESOLVED "$XGID"
chk_begin
chk event "$(ev silent)" "ROUTE_RESOLVED 0"
chk_end cma:silent-unbound-fallback-resolved /tmp/sfc-silent.out

# ---- the end --------------------------------------------------------------------
param remote_sa Y
param remote_sa_required N
rmmod simfab
chk_begin
dmesg_since "$mark" >/tmp/sfc-dmesg.txt
! grep -E "$DMESG_BAD" /tmp/sfc-dmesg.txt | grep -qv 'module verification failed' || _bad="kernel trouble"
chk_end kernel-log /tmp/sfc-dmesg.txt
t_summary
