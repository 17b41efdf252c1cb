#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 46 (measured under TCG; tests/vm/run --boots balances by it)
# ib_remote_sa against malformed input from the wire (issue 22, items 3, 8
# and 9; docs/remote-sa-protocol.md "Answers" and "Limits"), on simfab's
# routed topology: a1 on subnet A asks b1's service on subnet B. The bad
# bytes are made on the wire by simfab's "mangle" fault rule
# (tests/simfab/README.md); every expected value comes from the topology,
# the counters or the wire.
#
# sa-answer:   b1's SA answers made malformed on their way to b1 (a short
#              AttributeOffset, a short RMPP payload, a wrong attribute,
#              an error status; a NodeRecord table with a short
#              AttributeOffset, NodeRecords naming GUID 0 (one query, not
#              a loop)): refused and counted in sa_bad_answers, a1 gets
#              NO_RESOURCES (as when the SA does not answer).
# sa-values:   b1's SA record with a value out of range: not passed on
#              (bad_values), NO_RESOURCES.
# answer:      b1's answer to a1 with a value out of range (MTU, rate,
#              PacketLifeTime, LIDs, P_Key, HopLimit): refused by a1's
#              client (-EPROTO, bad_values), and rdma_cm still connects
#              without the return record.
# drop:        malformed requests at b1 are dropped unanswered (nothing of
#              class 0x0d leaves b1), each counted.
# flood:       a flood of requests with forged SGIDs at b1: answered no
#              more than the unknown senders' budget allows, counted, and
#              an established requester (a1) is still answered; with that
#              budget no bound, the PathRecord Gets b1 sends to B's SA
#              stay within its SA-query budget (sa_query_rate), the rest
#              answered BUSY and counted, a1 still answered.
# key:         NodePorts Gets from forged SGIDs (no budget on the SA
#              queries): each answered BUSY with its requester's key, none
#              becomes an SA query; a1's, with its key, answered.
# unload:      ib_remote_sa and simfab unload (no request, AH or query
#              left: ib_dealloc_pd would WARN about AHs left behind).
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-rsa-safety
CM=/ibr/bin/simfab-cm
Q=/ibr/bin/ib-remote-sa-query
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
P=/sys/module/ib_remote_sa/parameters
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! has_mod simfab || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ] || [ ! -x "$Q" ]; then
	t_fail $T "simfab.ko, simfab-cm, ib-remote-sa-query or $TOPOFILE not in the image (make simfab tools)"
	t_summary
	exit 0
fi
if ! has_mod ib_remote_sa || ! has_mod simfab_rsa_test; then
	t_fail $T "ib_remote_sa.ko or simfab_rsa_test.ko not in the image"
	t_summary
	exit 0
fi
mark=$(dmesg_mark)
modprobe ib_remote_sa
TOPO=/tmp/rs.topo
if ! sf_load_topo "$TOPOFILE" rdma_ucm ib_umad; then
	t_fail $T:load "modprobe rdma_ucm / ib_umad / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
dev_of() { topo_host "${1%/*}" dev; }
cnt() { cat "$S/$(dev_of "$1")/${1#*/}/counters/$2" 2>/dev/null || echo x; }
# tx H/P CLASS METHOD: MADs of that class and method the port has sent
tx() {
	awk -v p="port=$1" -v c="class=$2" -v m="method=$3" '$1 == p && $2 == "dir=tx" &&
		$3 == c && $4 == m { sub(/count=/, "", $6); n += $6 } END { print n + 0 }' $D/counters
}
# rq NAME FROM ARGS...: simfab_rsa_test from FROM, lines in /tmp/rs-NAME.out
rq() {
	_rn=$1 _rf=$2
	shift 2
	_rm=$(dmesg_mark)
	modprobe simfab_rsa_test "dev=$(dev_of "$_rf")" port=1 "$@" >"/tmp/rs-$_rn.err" 2>&1
	rmmod simfab_rsa_test 2>>"/tmp/rs-$_rn.err"
	dmesg_since "$_rm" | sed -n 's/.*simfab_rsa_test: //p' >"/tmp/rs-$_rn.out"
}
qf() { sed -n "s/^q=$2 \(.* \)*$3=\([^ ]*\).*/\2/p" "$1" | head -n 1; }
# tool NAME ARGS...: ib-remote-sa-query from a1, key=value lines
tool() {
	_tn=$1
	shift
	timeout 30 "$Q" --kv --retries 0 --timeout 1500 -C "$(dev_of $AP)" -P 1 "$@" \
		>"/tmp/rs-tool-$_tn.out" 2>&1
}
kv() { sed -n "s/^$2=//p" "/tmp/rs-tool-$1.out" | head -n 1; }
ctl() { echo "$*" >$D/ctl; }

AP=a1/1 A2P=a2/1 BP=b1/1
BGID=$(port_gid $BP)
diag "b1 $BGID"
# no cache: every query goes on the wire (restored at the end, for the
# tests that run after this one in the same guest)
TTL0=$(cat $P/cache_ttl_ms) NEG0=$(cat $P/neg_ttl_ms)
echo 0 >$P/cache_ttl_ms
echo 0 >$P/neg_ttl_ms

# ---- b1's SA answers made malformed ------------------------------------------
# sa NAME SETS...: the next PathRecord GetResp of B's SA to b1 mangled
# (MAD byte offsets: AttributeOffset 44, attribute 16, status 4, RMPP
# header 24-35); a1's query must fail with NO_RESOURCES, counted at b1.
sa() {
	_n=$1 _want=$2
	shift 2
	ctl nofault
	_r=
	for _s in "$@"; do _r="$_r set=$_s"; done
	# shellcheck disable=SC2086
	ctl mangle class=0x03 method=0x81 attr=0x0035 to=$BP count=1 $_r
	b0=$(cnt $BP sa_bad_answers) e0=$(cnt $BP rej_sa_error)
	rq "sa-$_n" $AP "target=$BGID" timeout_ms=4000 retries=0
	ctl nofault
	chk_begin
	chk status "$(qf "/tmp/rs-sa-$_n.out" 0 status)" -11
	chk_num mad-status "$(qf "/tmp/rs-sa-$_n.out" 0 mad_status)" 0x0100
	chk_num sa_bad_answers $(($(cnt $BP sa_bad_answers) - b0)) "$_want"
	chk_num rej_sa_error $(($(cnt $BP rej_sa_error) - e0)) 1
	chk_end "sa-answer:$_n" "/tmp/rs-sa-$_n.out" $D/counters
}
sa short-attr-offset 1 44:0001
sa zero-attr-offset 1 44:0000
sa wrong-attr 1 16:0011
# one RMPP segment of 8 bytes of records (PayloadLength 28), 8-byte stride:
# the old reader took a 64-byte record out of an 8-byte buffer
sa short-rmpp-payload 1 24:01010700 28:00000001 32:0000001c 44:0001
sa short-rmpp-no-record 1 24:01010700 28:00000001 32:0000001c
# an error status with the record still in it: the status passed on, no
# record read (and not counted as malformed)
ctl mangle class=0x03 method=0x81 attr=0x0035 to=$BP count=1 set=4:0100
rq sa-status $AP "target=$BGID" timeout_ms=4000 retries=0
ctl nofault
chk_begin
chk status "$(qf /tmp/rs-sa-status.out 0 status)" -11
chk_num mad-status "$(qf /tmp/rs-sa-status.out 0 mad_status)" 0x0100
chk_end sa-answer:error-status /tmp/rs-sa-status.out

# NodePorts: the NodeRecord table (GetTableResp, AttributeOffset 14) with
# AttributeOffset 1: the old reader walked 112-byte records over a count
# of 8-byte ones, past the end of the buffer. a1's alternate path discovery
# asks b1's service for b1's node's ports (NodePorts), which asks B's SA.
ctl mangle class=0x03 method=0x92 attr=0x0011 to=$BP count=1 set=44:0001
b0=$(cnt $BP sa_bad_answers) e0=$(cnt $BP rej_sa_error) q0=$(cnt $BP node_ports)
rq np-short $AP alt=1 "target=$BGID" timeout_ms=4000 retries=0
ctl nofault
chk_begin
chk_num sa_bad_answers $(($(cnt $BP sa_bad_answers) - b0)) 1
chk_num rej_sa_error $(($(cnt $BP rej_sa_error) - e0)) 1
chk_num node_ports $(($(cnt $BP node_ports) - q0)) 0
chk_end sa-answer:noderecord-short-attr-offset /tmp/rs-np-short.out
# and unmangled, b1's service answers NodePorts: a keyed Get, sent first
# without a1's key and answered BUSY with it (rej_no_key), then at once
# with it, no try spent (retries=0)
q0=$(cnt $BP node_ports) k0=$(cnt $BP rej_no_key)
rq np-good $AP alt=1 "target=$BGID" timeout_ms=4000 retries=0
chk_begin
[ $(($(cnt $BP node_ports) - q0)) -ge 1 ] || _bad="$_bad node_ports=$(($(cnt $BP node_ports) - q0))(min 1)"
[ $(($(cnt $BP rej_no_key) - k0)) -ge 1 ] || _bad="$_bad rej_no_key=$(($(cnt $BP rej_no_key) - k0))(min 1)"
chk_end sa-answer:noderecord-good-with-key /tmp/rs-np-good.out
# An SA whose NodeRecords name the node by GUID 0, no node's (IBA 14.2.5.3:
# a GUID is never 0), and that answers a query by NodeGUID with them: b1's
# GetTables made to ask for b1's node (its GUID in the query template),
# B's answers to b1 made to name GUID 0. NodePorts takes two queries at
# most: the answer is refused at the first (sa_bad_answers, NO_RESOURCES);
# the old responder asked the SA again, by NodeGUID, for as long as it
# answered.
_ng=$(tr -d ':' <"/sys/class/infiniband/$(dev_of $BP)/node_guid")
ctl nofault
ctl clear
ctl mangle class=0x03 method=0x12 attr=0x0011 from=$BP "set=72:$_ng"
ctl mangle class=0x03 method=0x92 attr=0x0011 to=$BP set=72:0000000000000000
b0=$(cnt $BP sa_bad_answers) e0=$(cnt $BP rej_sa_error) q0=$(cnt $BP node_ports)
rq np-zero-guid $AP alt=1 "target=$BGID" timeout_ms=4000 retries=0
sleep 1
# the GetTables b1 sent that reached B's SA (not their RMPP ACKs)
nq=$(grep -c " at=$BP .* class=0x03 .* method=0x12 .* attr=0x0011 .* verdict=sa " $D/capture)
ctl nofault
grep ' class=0x03 \| class=0x0d ' $D/capture >/tmp/rs-np-zero-guid.cap
chk_begin
chk_num node-record-queries "$nq" 1
chk_num sa_bad_answers $(($(cnt $BP sa_bad_answers) - b0)) 1
chk_num rej_sa_error $(($(cnt $BP rej_sa_error) - e0)) 1
chk_num node_ports $(($(cnt $BP node_ports) - q0)) 0
chk_end sa-answer:noderecord-guid-zero-two-queries-at-most /tmp/rs-np-zero-guid.out /tmp/rs-np-zero-guid.cap

# ---- b1's SA record with values out of range: not passed on -----------------
# values NAME SET: the record's byte (MAD byte 56 + record offset) changed
values() {
	ctl nofault
	ctl mangle class=0x03 method=0x81 attr=0x0035 to=$BP count=1 "set=$2"
	v0=$(cnt $BP bad_values)
	rq "val-$1" $AP "target=$BGID" timeout_ms=4000 retries=0
	ctl nofault
	chk_begin
	chk_num mad-status "$(qf "/tmp/rs-val-$1.out" 0 mad_status)" 0x0100
	chk_num bad_values $(($(cnt $BP bad_values) - v0)) 1
	chk_end "sa-values:$1" "/tmp/rs-val-$1.out"
}
values mtu-0 110:80
values life-63 112:bf
values hop-0 103:00

# ---- b1's answers to a1 with values out of range -----------------------------
# answer NAME SET: b1's next GetResp (class 0x0d) to a1 changed at SET
answer() {
	ctl nofault
	ctl mangle class=0x0d method=0x81 attr=0x0035 to=$AP count=1 "set=$2"
	v0=$(cnt $AP bad_values) a0=$(cnt $AP client_bad_answers)
	rq "ans-$1" $AP "target=$BGID" timeout_ms=4000 retries=0
	ctl nofault
	chk_begin
	chk status "$(qf "/tmp/rs-ans-$1.out" 0 status)" -71
	chk_num bad_values $(($(cnt $AP bad_values) - v0)) 1
	chk_num client_bad_answers $(($(cnt $AP client_bad_answers) - a0)) 1
	chk_end "answer:$1" "/tmp/rs-ans-$1.out"
}
# record offsets: DLID 40, SLID 42, HopLimit 47, P_Key 50, MTU 54, rate 55,
# PacketLifeTime 56 (MAD byte 56 + offset)
answer mtu-0 110:80
answer mtu-7 110:87
answer rate-0 111:80
answer rate-23 111:97
answer life-32 112:a0
answer life-63 112:bf
answer dlid-multicast 96:c001
answer dlid-permissive 96:ffff
answer slid-0 98:0000
answer pkey-0 106:0000
answer pkey-8000 106:8000
answer hop-1 103:01
# a good answer is still taken
rq ans-good $AP "target=$BGID" timeout_ms=4000 retries=0
t_check $T:answer:good "$(cat /tmp/rs-ans-good.out)" [ "$(qf /tmp/rs-ans-good.out 0 status)" = 0 ]
# rdma_cm: a refused answer is no answer; the connection goes ahead
# without the return record (the LRH fix-up), as it does without a service
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
ctl mangle class=0x0d method=0x81 attr=0x0035 to=$AP count=1 set=112:bf
v0=$(cnt $AP bad_values)
cm_connect life63 $AP $BP 7801
ctl nofault
chk_begin
grep -qx 'event ESTABLISHED id=conn status=0' /tmp/cm-life63.out || _bad="$_bad not-established"
chk_num bad_values $(($(cnt $AP bad_values) - v0)) 1
chk_end answer:rdma-cm-falls-back /tmp/cm-life63.out

# ---- malformed requests: dropped, not answered ------------------------------
# drop NAME COUNTER ARGS...: a1 -> b1, no answer (the tool times out),
# counted, nothing of class 0x0d sent by b1
drop() {
	_n=$1 _c=$2
	shift 2
	c0=$(cnt $BP "$_c") t0=$(tx $BP 0x0d 0x81)
	tool "drop-$_n" "$@" "$BGID"
	sleep 1
	chk_begin
	chk result "$(kv "drop-$_n" result)" timeout
	chk_num "$_c" $(($(cnt $BP "$_c") - c0)) 1
	chk_num b1-answers $(($(tx $BP 0x0d 0x81) - t0)) 0
	chk_end "drop:$_n" "/tmp/rs-tool-drop-$_n.out"
}
drop attr-offset rej_malformed --attr-offset 4
drop attr-mod rej_malformed --attr-mod 1
drop sm-key rej_malformed --sm-key 0x1
drop rmpp-byte rej_malformed --rmpp-byte 0x31
drop mask-dlid rej_bad_mask --comp-mask 0x1c
drop mask-no-sgid rej_bad_mask --comp-mask 0x4
drop np-attr-offset rej_malformed --attr 0xff01 --attr-offset 8 --comp-mask 0
drop np-mask rej_bad_mask --attr 0xff01 --attr-offset 0 --comp-mask 0xc
# a well-formed request of another version is still answered (BAD_VERSION)
tool version --class-version 2 "$BGID"
t_check $T:drop:other-version-answered "$(cat /tmp/rs-tool-version.out)" \
	[ "$(kv version status)" = 0x0004 ]

# ---- a flood with forged SGIDs ------------------------------------------------
# Every request a2 sends gets a new GRH SGID on its way (mangle sgid-seq);
# b1's answers go to GIDs that do not exist. a1 asked twice, 2 s apart
# (established), before the flood; two floods 2 s apart (the second after
# the first's buckets have refilled); a1 asks again during the second
# (ib-remote-sa-query, its GID as the kernel client's) and after it.
# rate_burst 200: a bucket takes 3 s to refill, the window in which a
# table full of forged senders once refused every newcomer and every
# requester it had just forgotten.
NEWL=20
echo $NEWL >$P/new_rate_limit
echo 200 >$P/rate_burst
rq est1 $AP "target=$BGID" timeout_ms=4000 retries=0
sleep 2
rq est2 $AP "target=$BGID" timeout_ms=4000 retries=0
r0=$(cnt $BP requests) p0=$(cnt $BP replies) n0=$(cnt $BP rej_new_rate_limited)
t0=$(tx $BP 0x0d 0x81) s0=$(date +%s)
ctl mangle class=0x0d method=0x01 from=$A2P sgid-seq=1
rq flood1 $A2P "target=$BGID" timeout_ms=1000 retries=0 count=300 quiet=1
sleep 2
rq flood2 $A2P "target=$BGID" timeout_ms=1000 retries=0 count=300 quiet=1 &
fl=$!
sleep 1
tool during "$BGID"
wait $fl
s1=$(date +%s)
ctl nofault
rq after $AP "target=$BGID" timeout_ms=4000 retries=0
el=$((s1 - s0 + 1))
req=$(($(cnt $BP requests) - r0)) rep=$(($(cnt $BP replies) - p0))
newl=$(($(cnt $BP rej_new_rate_limited) - n0)) sent=$(($(tx $BP 0x0d 0x81) - t0))
diag "flood: ${el}s, $req requests, $rep replies, $newl over the unknown senders' budget, $sent answers on the wire"
chk_begin
chk est1 "$(qf /tmp/rs-est1.out 0 status)" 0
chk est2 "$(qf /tmp/rs-est2.out 0 status)" 0
chk_num requests "$req" 602
# budget: NEWL at once plus NEWL a second (a1's two requests besides)
[ "$rep" -le $((NEWL + NEWL * el + 2)) ] || _bad="$_bad replies=$rep(max $((NEWL + NEWL * el + 2)))"
[ "$newl" -ge $((600 - NEWL - NEWL * el)) ] || _bad="$_bad rej_new_rate_limited=$newl(min $((600 - NEWL - NEWL * el)))"
chk_num wire-answers "$sent" "$rep"
chk_end flood:bounded-and-counted /tmp/rs-flood1.out /tmp/rs-flood2.out
t_check $T:flood:established-requester-answered-during "$(cat /tmp/rs-tool-during.out)" \
	[ "$(kv during status)" = 0x0000 ]
t_check $T:flood:established-requester-answered-after "$(cat /tmp/rs-after.out)" \
	[ "$(qf /tmp/rs-after.out 0 status)" = 0 ]
echo 1000 >$P/new_rate_limit
echo 20 >$P/rate_burst

# ---- the SA queries b1's responder asks: a budget per port ------------------
# A flood like the one above (each request a new forged SGID, none
# established), whose requests also name the forged GID as the record's
# DGID (as a forger that wants answers sent would), with the unknown
# senders' budget no bound (new_rate_limit 1000): every request is
# admitted and passes the responder's checks, and without a budget each
# became a PathRecord Get to B's SA (the old responder: about 300 for 300). With sa_query_rate
# SQR, the Gets b1 sends to B's SA (counted on b1's port, every one
# reaches B's SA) stay within what the newcomers may take (the half of
# the burst above the reserve, SQR a second after), plus a1's; the rest
# are answered BUSY and counted (rej_sa_budget); a1, established, is
# answered during the flood and after it.
SQR=10
SQR0=$(cat $P/sa_query_rate)
echo $SQR >$P/sa_query_rate
rq bud-est1 $AP "target=$BGID" timeout_ms=4000 retries=0
sleep 2
rq bud-est2 $AP "target=$BGID" timeout_ms=4000 retries=0
# the bucket full again (a1's two Gets spent from it)
sleep 1
g0=$(tx $BP 0x03 0x01) b0=$(cnt $BP rej_sa_budget) s0=$(date +%s)
r0=$(cnt $BP requests) l0=$(cnt $BP rej_rate_limited) n0=$(cnt $BP rej_new_rate_limited)
# (seq-at=72: the record's DGID interface ID, MAD byte 56 + 16, the same
# forged GID, so that each request asks about its own sender, check 8)
ctl mangle class=0x0d method=0x01 from=$A2P sgid-seq=1 seq-at=72
rq bud-flood $A2P "target=$BGID" timeout_ms=1000 retries=0 count=300 quiet=1 &
fl=$!
sleep 1
tool bud-during "$BGID"
wait $fl
s1=$(date +%s)
ctl nofault
rq bud-after $AP "target=$BGID" timeout_ms=4000 retries=0
el=$((s1 - s0 + 1))
gets=$(($(tx $BP 0x03 0x01) - g0)) bud=$(($(cnt $BP rej_sa_budget) - b0))
diag "budget: ${el}s, $(($(cnt $BP requests) - r0)) requests ($(($(cnt $BP rej_rate_limited) - l0)) over a requester's rate, $(($(cnt $BP rej_new_rate_limited) - n0)) over the unknown senders'), $gets PathRecord Gets to B's SA, $bud answered BUSY over the budget"
chk_begin
chk est1 "$(qf /tmp/rs-bud-est1.out 0 status)" 0
chk est2 "$(qf /tmp/rs-bud-est2.out 0 status)" 0
# newcomers: SQR/2 at once, SQR a second; a1: two (during, after)
[ "$gets" -le $((SQR / 2 + SQR * el + 2)) ] || _bad="$_bad sa-gets=$gets(max $((SQR / 2 + SQR * el + 2)))"
[ "$bud" -ge $((300 - SQR / 2 - SQR * el)) ] || _bad="$_bad rej_sa_budget=$bud(min $((300 - SQR / 2 - SQR * el)))"
chk_end flood:sa-queries-within-budget /tmp/rs-bud-flood.out
t_check $T:flood:budget-established-requester-answered-during "$(cat /tmp/rs-tool-bud-during.out)" \
	[ "$(kv bud-during status)" = 0x0000 ]
t_check $T:flood:budget-established-requester-answered-after "$(cat /tmp/rs-bud-after.out)" \
	[ "$(qf /tmp/rs-bud-after.out 0 status)" = 0 ]
echo "$SQR0" >$P/sa_query_rate

# ---- keyed Gets: NodePorts only for a requester that has its key -----------
# NodePorts costs B's SA two RMPP GetTables. A flood of NodePorts Gets for
# b1's port, each from a new forged SGID (a2's PathRecord Gets made
# NodePorts on the wire: attribute 0xff01, AttributeOffset and
# ComponentMask 0, b1's port GID at MAD byte 56), with no budget on the
# SA queries (sa_query_rate 0) and the unknown senders' budget no bound:
# every Get is admitted and answered BUSY with its requester's key, which
# goes to the forged GID; b1 sends no NodeRecord GetTable to B's SA (the
# responder without keys: one for each of the 300). a1, which receives its
# answers, still gets b1's node's ports.
SQR0=$(cat $P/sa_query_rate)
echo 0 >$P/sa_query_rate
_bp=$(port_gidhex $BP | cut -c1-16) _bi=$(port_gidhex $BP | cut -c17-32)
g0=$(tx $BP 0x03 0x12) k0=$(cnt $BP rej_no_key) r0=$(cnt $BP requests) q0=$(cnt $BP node_ports)
ctl mangle class=0x0d method=0x01 from=$A2P sgid-seq=1 set=16:ff01 \
	set=44:0000000000000000 set=52:00000000 "set=56:$_bp" "set=64:$_bi"
rq key-flood $A2P "target=$BGID" timeout_ms=1000 retries=0 count=300 quiet=1
ctl nofault
req=$(($(cnt $BP requests) - r0)) nokey=$(($(cnt $BP rej_no_key) - k0))
gets=$(($(tx $BP 0x03 0x12) - g0)) np=$(($(cnt $BP node_ports) - q0))
diag "key flood: $req requests, $nokey answered BUSY without the key, $gets NodeRecord GetTables to B's SA, $np NodePorts answered"
chk_begin
chk_num requests "$req" 300
chk_num rej_no_key "$nokey" 300
chk_num noderecord-gettables "$gets" 0
chk_num node_ports "$np" 0
chk_end key:forged-sgid-nodeports-no-sa-query /tmp/rs-key-flood.out
q0=$(cnt $BP node_ports)
rq key-after $AP alt=1 "target=$BGID" timeout_ms=4000 retries=0
t_check $T:key:real-requester-nodeports-answered "$(cat /tmp/rs-key-after.out)" \
	[ $(($(cnt $BP node_ports) - q0)) -ge 1 ]
echo "$SQR0" >$P/sa_query_rate

# ---- nothing left behind --------------------------------------------------------
echo "$TTL0" >$P/cache_ttl_ms
echo "$NEG0" >$P/neg_ttl_ms
rmmod ib_umad 2>/dev/null
if rmmod simfab; then t_pass $T:unload; else t_fail $T:unload "rmmod simfab failed"; fi
chk_dmesg $T "$mark"
t_summary
