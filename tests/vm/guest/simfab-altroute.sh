#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 40 (measured under TCG; tests/vm/run --boots balances by it)
# rdma_resolve_route() finds an alternate path for a routed destination
# (issue 9 item 7, docs/path-records.md "An alternate at route time") on
# simfab's altdisc.topo: routed.topo's subnets A and B with a
# dual-ported node on each (a3, b3). rdma_cm asks ib_remote_sa's
# alternate discovery once the routed primary is complete, for ids that
# take the APM events (rdma_cm alt_path=1) or all (alt_path=2), and
# resolves the route with the primary at once (issue 22 item 4): an
# alternate found before rdma_connect() goes into the REQ, one found
# later is loaded by LAP for an id that takes the APM events. Every
# expected value comes from debugfs simfab/topology or the capture.
#
# altroute:kernel-*   simfab_rc_test case cma-altroute, a3/1 -> b3/1,
#                     opted in, connecting 3 s after ROUTE_RESOLVED (the
#                     discovery has ended): the route's alternate (a3/2 -> b3/2, the
#                     forward router's LIDs on both subnets), the REQ,
#                     both QPs armed, a3/1's link fails under traffic,
#                     both migrate, PATH_MIGRATED, the DREQ on the new
#                     path.
# altroute:not-opted-in, all-ids, single-ported, absent, silent:
#                     case cma-altroute-route: an alternate or none, as
#                     the rule says; the connection is made either way.
# altroute:late-*     case cma-altroute-late: b3/2's service slow (its
#                     queries delayed 1.5 s): ROUTE_RESOLVED in the time
#                     of a primary-only resolution (both measured in one
#                     run, printed side by side), the REQ without an
#                     alternate, then LAP and APR on the wire after the
#                     RTU, ALT_PATH_LOADED, the alternate in both QPs and
#                     the route; an id not opted in (alt_path=2) gets no
#                     LAP.
# altroute:destroy-*  case cma-altroute-destroy: ROUTE_RESOLVED at once,
#                     rdma_destroy_id() while the discovery waits on a
#                     silent service.
# altroute:ucma-*     through rdma_ucm (simfab-cm, QP-less ids):
#                     RDMA_OPTION_IB_APM_EVENTS before resolve-route,
#                     connect 3 s later (the discovery has ended): the
#                     REQ carries the alternate, QUERY_PATH reports it
#                     as record 1.
# altroute:ucma-upstream-events  7.x's USER and INTERNAL events (queued
#                     with WRITE_CM_EVENT) on an id with the APM events
#                     keep their numbers; ib-routed's cannot be queued;
#                     6.x refuses the command.
#
# Skips without simfab.ko, simfab_rc_test.ko, simfab-cm or ib_remote_sa.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-altroute
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
P=/sys/module/rdma_cm/parameters
TOPOFILE=/ibr/simfab/topology/altdisc.topo
TOPO=/tmp/ar.topo

if ! has_mod simfab || ! has_mod simfab_rc_test || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, simfab_rc_test.ko, simfab-cm or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
if ! has_mod ib_remote_sa; then
	t_skip $T "ib_remote_sa.ko not in the image (the series has no ib_remote_sa?)"
	t_summary
	exit 0
fi

mark=$(dmesg_mark)
if sf_load_topo $TOPOFILE ib_remote_sa rdma_ucm; then
	t_pass $T:load
else
	t_fail $T:load "modprobe ib_remote_sa / rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
# rdma_cm's switches (alt_path is absent on a series without the
# alternate at route time: the checks then fail).
param() { # NAME VALUE
	[ -w "$P/$1" ] && echo "$2" >"$P/$1"
}
param remote_sa Y
param remote_sa_required N
ALT0=$(cat $P/alt_path 2>/dev/null || echo 1)
# Every remote query goes on the wire (put back at the end).
TTLP=/sys/module/ib_remote_sa/parameters/cache_ttl_ms
TTL0=$(cat $TTLP)
echo 0 >$TTLP

dev_of() { topo_host "${1%/*}" dev; }
cnt() {
	cat "$S/$(dev_of "$1")/${1#*/}/counters/$2" 2>/dev/null || echo x
}
# in_flight H/P: discoveries started at that port and not ended.
in_flight() {
	echo $(($(cnt "$1" alt_queries) - $(cnt "$1" alt_found) - $(cnt "$1" alt_none) - $(cnt "$1" alt_failed)))
}

A=$(topo_host a1 subnet) B=$(topo_host b1 subnet)
PA=$(topo_subnet "$A" prefix) PB=$(topo_subnet "$B" prefix)
RA=$(route_via "$A" "$PB") RB=$(route_via "$B" "$PA")
RA_ALID=$(topo_port "$(rport "$RA" "$A")" lid)
RA_BLID=$(topo_port "$(rport "$RA" "$B")" lid)
# The alternate of a3/1 -> b3/1: the pair sharing no port with it.
AL=a3/2 AR=b3/2
# Its return half on B (b3/2 -> the forward router's port on B).
SL_R=$(max "$(prop $AR sl)" "$(prop "$(rport "$RA" "$B")" sl)")
diag "A=$A B=$B; A -> B through $RA (lid $RA_ALID on A, $RA_BLID on B); B -> A through $RB"
chk_begin
chk a3-ports "$(topo_host a3 ports)" 2
chk b3-ports "$(topo_host b3 ports)" 2
[ -n "$RA" ] && [ -n "$RB" ] || _bad="$_bad no-routers"
chk_end altroute:topology $TOPO

# rc_run NAME CASE ARGS...: one simfab_rc_test run; its KTAP in
# /tmp/ar-NAME.ktap, the capture in /tmp/ar-NAME.cap; every KTAP result
# becomes a result NAME-STEP.
rc_run() {
	_n=$1 _case=$2
	shift 2
	echo clear >$D/ctl
	_m=$(dmesg_mark)
	if ! timeout 240 modprobe simfab_rc_test "cases=$_case" "$@" >"/tmp/ar-$_n.err" 2>&1; then
		t_fail "$T:altroute:$_n" "modprobe simfab_rc_test cases=$_case failed"
		diag_file "/tmp/ar-$_n.err"
		return 1
	fi
	rmmod simfab_rc_test
	dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"/tmp/ar-$_n.ktap"
	cat $D/capture >"/tmp/ar-$_n.cap"
	ktap_relay "$T:altroute:$_n-" "simfab_rc_${_case}_" "/tmp/ar-$_n.ktap" "$T:altroute:$_n-plan"
}
# qa NAME KEY VALUE-KEY: a value of a "# CASE KEY ..." line of that run.
qa() { sed -n "s|^# [^ ]* $2 \(.* \)*$3=\([^ ]*\).*|\2|p" "/tmp/ar-$1.ktap" | head -n 1; }
# req NAME AT: the first REQ delivered at H/P in that run's capture.
req() { grep " at=$2 .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " "/tmp/ar-$1.cap" | head -n 1; }
ends() { echo "act=$(dev_of "$1"):${1#*/}" "pas=$(dev_of "$2"):${2#*/}"; }

# ---- the kernel API: alternate, REQ, armed, migration, DREQ ----------------------
f0=$(cnt a3/1 alt_found)
param alt_path 1
# shellcheck disable=SC2046
rc_run kernel cma-altroute $(ends a3/1 b3/1) opt_in=1 retry=3 connect_delay_ms=3000 \
	fail_ctl="linkdown+a3/1" restore_ctl="up+a3/1"
n=kernel
chk_begin
chk_num alt-found $(($(cnt a3/1 alt_found) - f0)) 1
chk_num paths "$(qa $n route n)" 2
chk_num pri-slid "$(qa $n route-pri slid)" "$(topo_port a3/1 lid)"
chk alt-sgid "$(gid_hex "$(qa $n route-alt-gids sgid)")" "$(port_gidhex $AL)"
chk alt-dgid "$(gid_hex "$(qa $n route-alt-gids dgid)")" "$(port_gidhex $AR)"
chk_num alt-slid "$(qa $n route-alt slid)" "$(topo_port $AL lid)"
chk_num alt-dlid "$(qa $n route-alt dlid)" "$RA_ALID"
chk_num alt-pkey "$(qa $n route-alt-gids pkey)" "$(qa $n route-pri-gids pkey)"
chk_end altroute:kernel-route "/tmp/ar-$n.ktap"

# The REQ at b3/1: the alternate's fields (Alternate Local Port LID is
# the router the passive side sends back through: the forward router's
# port on B).
r=$(req $n b3/1)
chk_begin
if [ -z "$r" ]; then
	_bad="no-REQ-at-b3/1"
else
	m=$(capf "$r" mad)
	chk_num alt-local-lid "$(madn "$m" 120 2)" "$RA_BLID"
	chk_num alt-remote-lid "$(madn "$m" 122 2)" "$(topo_port $AR lid)"
	chk alt-local-gid "$(mad "$m" 124 16)" "$(port_gidhex $AL)"
	chk alt-remote-gid "$(mad "$m" 140 16)" "$(port_gidhex $AR)"
	chk_num alt-sl $(($(madn "$m" 162 1) >> 4)) "$SL_R"
	chk_num alt-subnet-local $(($(madn "$m" 162 1) >> 3 & 1)) 0
fi
chk_num one-req "$(grep -c " class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " "/tmp/ar-$n.cap")" 1
chk_end altroute:kernel-req-wire "/tmp/ar-$n.ktap"

# Both QPs armed with it (other port on each side), then on it.
chk_begin
chk_num act-alt-port "$(qa $n act.before alt_port)" "${AL#*/}"
chk_num act-alt-dlid "$(qa $n act.before alt_dlid)" "$RA_ALID"
chk act-alt-dgid "$(gid_hex "$(qa $n act.before alt_dgid)")" "$(port_gidhex $AR)"
chk_num pas-alt-port "$(qa $n pas.before alt_port)" "${AR#*/}"
chk_num pas-alt-dlid "$(qa $n pas.before alt_dlid)" "$RA_BLID"
chk_num pas-alt-sl "$(qa $n pas.before alt_sl)" "$SL_R"
chk pas-alt-dgid "$(gid_hex "$(qa $n pas.before alt_dgid)")" "$(port_gidhex $AL)"
chk_num act-port-after "$(qa $n act.after port)" "${AL#*/}"
chk_num pas-port-after "$(qa $n pas.after port)" "${AR#*/}"
chk_num pas-dlid-after "$(qa $n pas.after dlid)" "$RA_BLID"
# the DREQ left a3/2 and reached b3/2
grep -q " at=$AR .* class=0x07 .* attr=0x0015 .* verdict=delivered " "/tmp/ar-$n.cap" ||
	_bad="$_bad no-DREQ-at-$AR"
chk_end altroute:kernel-qps-and-dreq "/tmp/ar-$n.ktap"

# ---- who gets one --------------------------------------------------------------
# route NAME WANT-PATHS SRC DST ARGS...: cma-altroute-route, the route
# with WANT-PATHS records, the connection made, and an alternate in the
# active QP exactly when the route has one.
route() {
	_n=$1 _w=$2 _s=$3 _d=$4
	shift 4
	# shellcheck disable=SC2046
	rc_run "$_n" cma-altroute-route $(ends "$_s" "$_d") retry=3 "$@" || return
	chk_begin
	chk_num paths "$(qa "$_n" route n)" "$_w"
	if [ "$_w" -eq 2 ]; then
		chk_num act-alt-port "$(qa "$_n" act.conn alt_port)" "${AL#*/}"
		chk_num act-alt-dlid "$(qa "$_n" act.conn alt_dlid)" "$RA_ALID"
	else
		chk_num act-alt-dlid "$(qa "$_n" act.conn alt_dlid)" 0
	fi
	chk_end "altroute:$_n" "/tmp/ar-$_n.ktap"
}
q0=$(cnt a3/1 alt_queries)
route not-opted-in 1 a3/1 b3/1 opt_in=0
chk_begin
chk_num no-discovery $(($(cnt a3/1 alt_queries) - q0)) 0
grep -q " attr=0xff01 " /tmp/ar-not-opted-in.cap && _bad="$_bad nodeports-sent"
chk_end altroute:not-opted-in-no-query /tmp/ar-not-opted-in.cap
param alt_path 2
route all-ids 2 a3/1 b3/1 opt_in=0 connect_delay_ms=3000
param alt_path 0
route never 1 a3/1 b3/1 opt_in=1
param alt_path 1
n0=$(cnt a1/1 alt_none)
route single-ported 1 a1/1 b1/1 opt_in=1
chk_begin
chk_num alt-none $(($(cnt a1/1 alt_none) - n0)) 1
chk_end altroute:single-ported-none-found

# The remote service absent (UNSUPPORTED at once) or silent (dropped):
# the primary alone, without a return record, the connection made.
for p in 1 2; do echo 0 >"$S/$(dev_of b3/1)/$p/responder"; done
q0=$(cnt a3/1 alt_queries)
route absent 1 a3/1 b3/1 opt_in=1
for p in 1 2; do echo 1 >"$S/$(dev_of b3/1)/$p/responder"; done
echo "drop class=0x0d to=b3/1" >$D/ctl
route silent 1 a3/1 b3/1 opt_in=1 route_ms=1000
echo nofault >$D/ctl
chk_begin
chk_num no-discovery $(($(cnt a3/1 alt_queries) - q0)) 0
chk_end altroute:absent-silent-no-discovery

# b3/2's service silent, an alternate wanted: the discovery's first pair
# (a3/2 -> b3/2) waits on it, the route resolution does not
# (route-within-timeout, measured in the module): the primary alone, the
# discovery canceled at the route's deadline (half of route_ms) or by
# the id's destroy, whichever comes first. Before issue 22 each of the
# discovery's queries took 3 tries of the whole timeout.
echo "drop class=0x0d to=$AR" >$D/ctl
x0=$(cnt a3/1 alt_failed)
route alt-silent 1 a3/1 b3/1 opt_in=1 route_ms=4000
echo nofault >$D/ctl
sleep 1
chk_begin
chk_num discovery-canceled $(($(cnt a3/1 alt_failed) - x0)) 1
chk_num in-flight "$(in_flight a3/1)" 0
chk_end altroute:alt-silent-canceled /tmp/ar-alt-silent.ktap

# ---- an alternate after the REQ: by LAP (issue 22 item 4) -------------------------
# b3/2's service slow: every query to it held 1.5 s (within the
# discovery's per-try timeout, a third of the 10 s it has), so the
# discovery (pairs a3/2 -> b3/2 and a3/1 -> b3/2 first) ends seconds
# after the connection is up. late_run NAME ALT_PATH OPT_IN: that case.
# The driver waits up to 30 s for the LAP's answer; an id not opted in
# waits 10 s for the LAP that must not come (the discovery ends about 3 s
# after the connection, when an opted-in id's LAP goes at once; the run
# checks that it ended within the wait, so a slow discovery fails it
# rather than hiding a LAP).
late_run() {
	_wait=30000
	[ "$3" != 0 ] || _wait=10000
	param alt_path "$2"
	echo "delay class=0x0d to=$AR ms=${5:-1500}" >$D/ctl
	[ -z "${4:-}" ] || echo "$4" >$D/ctl
	_f0=$(cnt a3/1 alt_found)
	# shellcheck disable=SC2046
	rc_run "$1" cma-altroute-late $(ends a3/1 b3/1) opt_in="$3" retry=3 \
		route_ms=20000 wait_ms=$_wait
	echo nofault >$D/ctl
	late_found=$(($(cnt a3/1 alt_found) - _f0))
}
# cm ATTR AT NAME: the line number of the first CM MAD of that attribute
# delivered at H/P in that run's capture, 0 if none.
cm() {
	grep -n " at=$2 .* class=0x07 .* attr=$1 .* verdict=delivered " "/tmp/ar-$3.cap" |
		head -n 1 | cut -d: -f1 | grep . || echo 0
}
late_run late 1 1
n=late
pri_ms=$(qa $n route-times primary_alone_ms) alt_ms=$(qa $n route-times with_discovery_ms)
echo "# route resolution a3/1 -> b3/1: primary alone ${pri_ms:-?} ms, with the alternate's discovery ${alt_ms:-?} ms (b3/2's queries delayed 1500 ms)"
chk_begin
chk_num discovery-found "$late_found" 1
# about the primary's time: far less than one delayed query
[ -n "$pri_ms" ] && [ -n "$alt_ms" ] && [ "$alt_ms" -ge 0 ] && [ "$pri_ms" -ge 0 ] &&
	[ "$alt_ms" -le $((pri_ms + 750)) ] ||
	_bad="$_bad route-ms=${alt_ms:-?}-vs-primary-alone=${pri_ms:-?}"
r=$(req $n b3/1)
if [ -z "$r" ]; then
	_bad="$_bad no-REQ-at-b3/1"
else
	chk_num req-no-alt-local-lid "$(madn "$(capf "$r" mad)" 120 2)" 0
fi
rtu=$(cm 0x0014 b3/1 $n) lap=$(cm 0x0019 b3/1 $n) apr=$(cm 0x001a a3/1 $n)
[ "$rtu" -gt 0 ] && [ "$lap" -gt "$rtu" ] || _bad="$_bad no-LAP-after-RTU(rtu=$rtu,lap=$lap)"
[ "$apr" -gt "$lap" ] || _bad="$_bad no-APR-after-LAP(lap=$lap,apr=$apr)"
chk_num late-paths "$(qa $n late-route n)" 2
chk alt-sgid "$(gid_hex "$(qa $n late-alt-gids sgid)")" "$(port_gidhex $AL)"
chk alt-dgid "$(gid_hex "$(qa $n late-alt-gids dgid)")" "$(port_gidhex $AR)"
chk_num alt-dlid "$(qa $n late-alt dlid)" "$RA_ALID"
chk_num act-alt-port "$(qa $n act.late alt_port)" "${AL#*/}"
chk_num act-alt-dlid "$(qa $n act.late alt_dlid)" "$RA_ALID"
chk_num pas-alt-port "$(qa $n pas.late alt_port)" "${AR#*/}"
chk_num pas-alt-dlid "$(qa $n pas.late alt_dlid)" "$RA_BLID"
chk_end altroute:late-lap-after-established "/tmp/ar-$n.ktap"

late_run late-not-opted-in 2 0
n=late-not-opted-in
chk_begin
chk_num discovery-found "$late_found" 1
chk_num no-lap "$(grep -c " class=0x07 .* attr=0x0019 " "/tmp/ar-$n.cap")" 0
chk_num late-paths "$(qa $n late-route n)" 1
chk_num act-alt-dlid "$(qa $n act.late alt_dlid)" 0
chk_end altroute:late-not-opted-in-no-lap "/tmp/ar-$n.ktap"

# The discovery ends while the REQ is out. Held by events, not times (a
# loaded TCG guest overran a 300 ms hold once): b3/2's queries are held
# until the REQ has reached b3/1, the REP on its way to a3/1 until a3/1's
# discovery has found the alternate. So the last answer of b3/2's service
# reaches a3/1 after the REQ left and before the REP; the alternate waits
# for the RTU and goes out by LAP after it.
req_at_b() { grep -q " at=b3/1 .* class=0x07 .* attr=0x0010 .* verdict=delivered " $D/capture; }
alt_found_since() { [ "$(cnt a3/1 alt_found)" != "$1" ]; }
late_releaser() {
	wait_for 30 req_at_b || :
	echo "release class=0x0d to=$AR" >$D/ctl
	wait_for 30 alt_found_since "$1" || :
	echo "release class=0x07 attr=0x0013 to=a3/1" >$D/ctl
}
echo clear >$D/ctl
late_releaser "$(cnt a3/1 alt_found)" &
late_rel=$!
late_run late-req-out 1 1 "delay class=0x07 attr=0x0013 to=a3/1 ms=60000" 60000
wait $late_rel || true
n=late-req-out
ans() { # the line of the last ib_remote_sa answer delivered at a3/1
	grep -n " at=a3/1 .* class=0x0d .* verdict=delivered " "/tmp/ar-$n.cap" |
		tail -n 1 | cut -d: -f1 | grep . || echo 0
}
chk_begin
chk_num discovery-found "$late_found" 1
req_l=$(grep -n " at=b3/1 .* class=0x07 .* attr=0x0010 .* verdict=delivered " "/tmp/ar-$n.cap" | head -n 1 | cut -d: -f1)
rep=$(cm 0x0013 a3/1 $n) rtu=$(cm 0x0014 b3/1 $n) lap=$(cm 0x0019 b3/1 $n) last=$(ans)
[ "${req_l:-0}" -gt 0 ] && [ "$last" -gt "$req_l" ] && [ "$rep" -gt "$last" ] ||
	_bad="$_bad discovery-not-while-req-out(req=${req_l:-0},last-answer=$last,rep=$rep)"
r=$(req $n b3/1)
[ -z "$r" ] || chk_num req-no-alt-local-lid "$(madn "$(capf "$r" mad)" 120 2)" 0
[ "$rtu" -gt "$rep" ] && [ "$lap" -gt "$rtu" ] || _bad="$_bad no-LAP-after-RTU(rep=$rep,rtu=$rtu,lap=$lap)"
chk_num late-paths "$(qa $n late-route n)" 2
chk_num act-alt-dlid "$(qa $n act.late alt_dlid)" "$RA_ALID"
chk_num pas-alt-dlid "$(qa $n pas.late alt_dlid)" "$RA_BLID"
chk_end altroute:late-alternate-while-req-out "/tmp/ar-$n.ktap" "/tmp/ar-$n.cap"
param alt_path 1

# ---- destroy during the discovery ------------------------------------------------
# b3/2's service silent: the discovery's first pair (a3/2 -> b3/2) waits
# on it (two tries of a third of the 10 s it has) and would go on until
# the route's deadline (half of route_ms, 10 s); ROUTE_RESOLVED comes at
# once, and the id is destroyed 2 s after it. The counters are read at
# once: only the destroy can have ended the discovery by then.
echo "drop class=0x0d to=$AR" >$D/ctl
q0=$(cnt a3/1 alt_queries) x0=$(cnt a3/1 alt_failed)
# shellcheck disable=SC2046
rc_run destroy cma-altroute-destroy $(ends a3/1 b3/1) opt_in=1 route_ms=20000 destroy_ms=2000
echo nofault >$D/ctl
chk_begin
chk_num discovery $(($(cnt a3/1 alt_queries) - q0)) 1
chk_num canceled $(($(cnt a3/1 alt_failed) - x0)) 1
chk_num in-flight "$(in_flight a3/1)" 0
_ms=$(sed -n 's/^# [^ ]* destroy_ms=//p' /tmp/ar-destroy.ktap)
# far less than the 2 s the discovery had left
[ -n "$_ms" ] && [ "$_ms" -lt 1500 ] || _bad="$_bad destroy-took=${_ms:-?}ms"
chk_num cm-ids "$(cm_ids)" 0
chk_end altroute:destroy-nothing-left /tmp/ar-destroy.ktap

# ---- through rdma_ucm: QUERY_PATH, the REQ -------------------------------------------
echo clear >$D/ctl
o=/tmp/ar-ucma.out
timeout 90 "$CM" 'timeout 20000' \
	'id srv ps=ib' "bind gid=$(port_gid b3/1) port=7411" 'listen backlog=4' \
	'id cli ps=ib' 'set-option apm-events=1' "bind gid=$(port_gid a3/1)" \
	"resolve-addr dst-gid=$(port_gid b3/1) dst-port=7411 timeout=5000" \
	'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED id=cli' \
	'sleep 3000' 'tag cli' 'connect qpn=0x111' 'query-path' \
	'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
	'tag cli' 'wait CONNECT_RESPONSE id=cli' 'accept id=cli' \
	'tag conn' 'wait ESTABLISHED id=conn' 'tag' \
	'disconnect id=cli' 'wait DISCONNECTED id=conn' \
	'disconnect id=conn' 'wait DISCONNECTED id=cli' >$o 2>$o.err
rc=$?
cat $D/capture >/tmp/ar-ucma.cap
r=$(grep " at=b3/1 .* class=0x07 cv=2 method=0x03 .* attr=0x0010 .* verdict=delivered " /tmp/ar-ucma.cap | head -n 1)
chk_begin
chk_num simfab-cm "$rc" 0
chk_num num-paths "$(out $o cli.path.num_paths)" 2
chk path1-sgid "$(gid_hex "$(out $o 'cli.path[1].sgid')")" "$(port_gidhex $AL)"
chk path1-dgid "$(gid_hex "$(out $o 'cli.path[1].dgid')")" "$(port_gidhex $AR)"
chk_num path1-dlid "$(out $o 'cli.path[1].dlid')" "$RA_ALID"
chk path0-dgid "$(gid_hex "$(out $o 'cli.path[0].dgid')")" "$(port_gidhex b3/1)"
# record 0 flagged as in 6.1 (GMP|PRIMARY|BIDIRECTIONAL), record 1 as the
# alternate (GMP|ALTERNATE|BIDIRECTIONAL), not as a second primary
chk_num path0-flags "$(out $o 'cli.path[0].flags')" 0x2b
chk_num path1-flags "$(out $o 'cli.path[1].flags')" 0x2d
if [ -z "$r" ]; then
	_bad="$_bad no-REQ-at-b3/1"
else
	m=$(capf "$r" mad)
	chk_num req-alt-local-lid "$(madn "$m" 120 2)" "$RA_BLID"
	chk req-alt-remote-gid "$(mad "$m" 140 16)" "$(port_gidhex $AR)"
fi
chk_end altroute:ucma-query-path-and-req $o $o.err

# ---- upstream's events and ib-routed's apart, on the wire (issue 23) ---------------
# 7.x takes events 16-19 (ADDRINFO_*, USER, INTERNAL) and lets a program
# queue USER and INTERNAL on its own id (WRITE_CM_EVENT, command 24): on
# an id that opted in to the APM events they come back with their own
# numbers (0x12, 0x13), never as an APM event, and ib-routed's numbers
# (0x1000-0x1002) cannot be queued from userspace. 6.x has no such
# command: it is refused (EINVAL), whatever the series adds.
o=/tmp/ar-events.out
set -- 'timeout 5000' 'id cli ps=ib' 'set-option apm-events=1' "bind gid=$(port_gid a3/1)"
case $(uname -r) in
[0-6].*) set -- "$@" '!write-event USER' ;;
*) set -- "$@" 'write-event USER status=5 arg=0x1234' 'wait USER id=cli status=5' \
	'write-event INTERNAL' 'wait INTERNAL id=cli' \
	'!write-event 0x1000' '!write-event PATH_MIGRATED' \
	'none ALT_PATH_LOADED id=cli timeout=300' ;;
esac
timeout 30 "$CM" "$@" >$o 2>$o.err
rc=$?
chk_begin
chk_num simfab-cm "$rc" 0
case $(uname -r) in
[0-6].*)
	chk_num refused "$(grep -c '^expected-failure WRITE_CM_EVENT errno=22 ' $o)" 1 ;;
*)
	chk_num user "$(grep -c '^event USER id=cli status=5$' $o)" 1
	chk_num internal "$(grep -c '^event INTERNAL id=cli status=0$' $o)" 1
	chk_num user-number "$(grep -c '^event\.num=0x0012$' $o)" 1
	chk_num internal-number "$(grep -c '^event\.num=0x0013$' $o)" 1
	chk_num no-apm-event "$(grep -c '^event \(ALT_PATH\|PATH_MIGRATED\)' $o)" 0
	chk_num apm-numbers-refused "$(grep -c '^expected-failure WRITE_CM_EVENT errno=22 ' $o)" 2 ;;
esac
chk_end altroute:ucma-upstream-events $o $o.err

echo "$TTL0" >$TTLP
param alt_path "$ALT0"
# Nothing keeps the modules: simfab, rdma_ucm, rdma_cm, ib_remote_sa go.
sf_unload_rsa
rc=$?
chk_begin
chk rmmod "$rc" 0
chk_end altroute:unload

chk_dmesg "$T" "$mark"
t_summary
