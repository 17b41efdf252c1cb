#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 24 (measured under TCG; tests/vm/run --boots balances by it)
# Faults during connection setup on simfab's routed topology (a2 -> b1
# through rdma_ucm, cm_connect): each fails or recovers as rdma_cm and
# ib_remote_sa document, and nothing is left behind.
#
# faults:sa-down-*       A's SA drops a2's queries (drop class=0x03): route
#                        resolution ends in ROUTE_ERROR -ETIMEDOUT, no REQ
#                        is sent; with the SA back the connection is made.
# faults:router-flap-*   the router A's SA names for B goes down and A's
#                        SM sweeps (OpenSM: A's "*" route then names the
#                        lowest-GUID router left): the remote query and the
#                        REQ go through the other one; back up and swept,
#                        the first one again.
# faults:req-flap-*      the router goes down as a REQ is sent (ib_cm from
#                        simfab_rc_test.ko's ibcm-flap, a short CM
#                        response timeout): lost, the router back before
#                        the CM's retry, the REQ again and the connection
#                        made; down through every try: IB_CM_REQ_ERROR
#                        (IB_WC_RESP_TIMEOUT_ERR), nothing at b1, nothing
#                        left. On the wire and in ib_cm's counters.
# faults:lid-change-*    a2's LID changes: its ib_remote_sa cache is
#                        dropped (LID_CHANGE); until the next sweep the
#                        routers' GID-to-LID tables still hold the old LID,
#                        so b1's REP goes to it and is lost (stale-router);
#                        after the sweep the next REQ carries the new LID
#                        and is answered.
# faults:pkey-removal-*  a1 leaves its second partition: its cached answers
#                        are dropped (PKEY_CHANGE), the next connection on
#                        the default P_Key asks again and is made.
# faults:clean-*         no cm_id left, the CM modules and ib_remote_sa
#                        unload.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-faults
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! has_mod simfab || ! has_mod ib_remote_sa || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, ib_remote_sa.ko, simfab-cm or $TOPOFILE not in the image"
	t_summary
	exit 0
fi
TOPO=/tmp/fl.topo
if ! sf_load_topo "$TOPOFILE" ib_remote_sa rdma_ucm; then
	t_fail $T:load "modprobe ib_remote_sa / rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
dev_of() { topo_host "${1%/*}" dev; }
SRC=a2/1 DST=b1/1
A=$(topo_host a2 subnet) B=$(topo_host b1 subnet)
PB=$(topo_subnet "$B" prefix)
established() { grep -qx 'event ESTABLISHED id=conn status=0' "/tmp/cm-$1.out"; }
# req_at NAME: the port the REQ was routed at on A (its router)
req_at() {
	grep " sn=$A .* class=0x07 .* attr=0x0010 .* verdict=routed " "/tmp/fl-$1.cap" | head -n 1 | sed 's/.* at=\([^ ]*\) .*/\1/'
}
run() { # NAME: cm_connect a2 -> b1, capture in /tmp/fl-NAME.cap
	echo clear >$D/ctl
	port=$((${port:-7800} + 1))
	cm_connect "$1" $SRC $DST $port
	_rc=$?
	cat $D/capture >"/tmp/fl-$1.cap"
	return $_rc
}

# ---- the SA does not answer ---------------------------------------------------
echo "drop class=0x03 from=$SRC" >$D/ctl
echo clear >$D/ctl
timeout 60 "$CM" 'timeout 20000' 'id cli ps=ib' "bind gid=$(port_gid $SRC)" \
	"resolve-addr dst-gid=$(port_gid $DST) dst-port=7800 timeout=5000" \
	'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=1000' \
	'wait ROUTE_ERROR id=cli status=any' >/tmp/cm-sa-down.out 2>&1
cat $D/capture >/tmp/fl-sa-down.cap
chk_begin
chk route-error "$(sed -n 's/^event ROUTE_ERROR id=cli status=//p' /tmp/cm-sa-down.out)" -110
! grep -q " class=0x07 " /tmp/fl-sa-down.cap || _bad="$_bad a-CM-MAD-was-sent"
grep -q " class=0x03 .* verdict=drop-inject " /tmp/fl-sa-down.cap || _bad="$_bad no-query-dropped"
chk_end faults:sa-down-route-error /tmp/cm-sa-down.out /tmp/fl-sa-down.cap
echo nofault >$D/ctl
run sa-back
t_check $T:faults:sa-down-recovers "no connection after the SA came back" established sa-back ||
	diag_file /tmp/cm-sa-back.out

# ---- a router goes down and comes back ------------------------------------------
R1=$(route_via "$A" "$PB")
run flap-before
r_before=$(req_at flap-before)
echo "router $R1 down" >$D/ctl
echo sweep >$D/ctl
echo 1 >"$S/$(dev_of $SRC)/1/cache_flush"
run flap-down
cat $D/topology >$TOPO		# the router's ports are down in it now
R2=$(route_via "$A" "$PB")
r_down=$(req_at flap-down)
echo "router $R1 up" >$D/ctl
echo sweep >$D/ctl
echo 1 >"$S/$(dev_of $SRC)/1/cache_flush"
run flap-up
cat $D/topology >$TOPO
r_up=$(req_at flap-up)
chk_begin
established flap-down || _bad="no-connection-with-$R1-down"
chk "req-router-while-down" "${r_down%/*}" "$R2"
[ "$R2" != "$R1" ] || _bad="$_bad A's SA still names $R1"
chk_end faults:router-flap-other-router /tmp/cm-flap-down.out /tmp/fl-flap-down.cap
chk_begin
established flap-up || _bad="no-connection-after-$R1-up"
chk "req-router-after" "${r_up%/*}" "${r_before%/*}"
chk_end faults:router-flap-back /tmp/cm-flap-up.out /tmp/fl-flap-up.cap

# ---- a router flaps while the REQ is on its way ---------------------------------
# ib_cm a2 -> b1 through the router A's SA names (no return record: the
# passive side takes the router from the REQ's LRH), the REQ with a CM
# response timeout of 16 and two retries: ib_cm waits 2 x 2^(life - 8) +
# 2^(16 - 8) ms for each try (cm.c timeout_ms; life 18 on A: 2304 ms).
# The router goes down just before the REQ; with flap_ms=1000 it is back
# long before the retry.
if has_mod simfab_rc_test; then
	RF=$(route_via "$A" "$PB")
	RFA=$(rport "$RF" "$A")
	ADEV=$(dev_of $SRC) BDEV=$(dev_of $DST)
	cmc() { # DEV GROUP ATTR: an ib_cm counter of the device's port 1
		cat "/sys/class/infiniband/$1/ports/1/$2/$3" 2>/dev/null || echo none
	}
	res() { # the QPs and cm_ids of every device
		echo "qp=$(res_total qp) cm_id=$(cm_ids)"
	}
	# flap NAME FLAP_MS: one load of the driver; the REQ tries' TIDs
	# and verdicts at RF's port in /tmp/fl-NAME.reqs, ib_cm's counter
	# moves in $retries (a2's REQ retries) and $rx (b1's REQs received).
	flap() {
		echo clear >$D/ctl
		_r0=$(cmc "$ADEV" cm_tx_retries req) _x0=$(cmc "$BDEV" cm_rx_msgs req)
		_m=$(dmesg_mark)
		timeout 120 modprobe simfab_rc_test cases=ibcm-flap act="$ADEV:1" pas="$BDEV:1" \
			fail_ctl="router+$RF+down" restore_ctl="router+$RF+up" flap_ms="$2" \
			cm_timeout=16 cm_retries=2 wait_ms=40000 || diag "modprobe simfab_rc_test failed"
		rmmod simfab_rc_test
		dmesg_since "$_m" | sed -n 's/^\[[^]]*\] //p' >"/tmp/fl-$1.ktap"
		cat $D/capture >"/tmp/fl-$1.cap"
		grep " sn=$A at=$RFA .* class=0x07 .* attr=0x0010 " "/tmp/fl-$1.cap" |
			sed 's/.* tid=\([^ ]*\) .* verdict=\([^ ]*\).*/\1 \2/' >"/tmp/fl-$1.reqs"
		retries=$(($(cmc "$ADEV" cm_tx_retries req) - _r0))
		rx=$(($(cmc "$BDEV" cm_rx_msgs req) - _x0))
		conn_ms=$(sed -n 's/^# ibcm-flap connect ret=.* ms=\([0-9]*\) .*/\1/p' "/tmp/fl-$1.ktap")
		diag "$1: REQ tries at $RFA: $(tr '\n' ' ' <"/tmp/fl-$1.reqs"); a2 REQ retries +$retries, b1 REQs +$rx, $conn_ms ms"
	}
	ktap_ok() { # NAME STEP: the driver's KTAP result
		grep -q "^ok [0-9]* simfab_rc_ibcm-flap_$2\$" "/tmp/fl-$1.ktap"
	}
	res0=$(res)
	flap req-flap 1000
	chk_begin
	ktap_ok req-flap connect-after-retry || _bad="no connection"
	ktap_ok req-flap act-to-pas && ktap_ok req-flap pas-to-act || _bad="$_bad no traffic"
	# the first try dropped at the router that was down, the second
	# (the same TID) routed, one REQ at b1
	chk req-verdicts "$(cut -d' ' -f2 /tmp/fl-req-flap.reqs | tr '\n' ' ')" "drop-port-down routed "
	chk_num req-tids "$(cut -d' ' -f1 /tmp/fl-req-flap.reqs | sort -u | wc -l)" 1
	chk_num a2-req-retries "$retries" 1
	chk_num b1-reqs "$rx" 1
	# not before the CM's retry timer (2304 ms; a lower bound only)
	[ "${conn_ms:-0}" -ge 2000 ] || _bad="$_bad connected in ${conn_ms:-?} ms, before any retry"
	chk_end faults:req-flap-retried-connects /tmp/fl-req-flap.ktap /tmp/fl-req-flap.reqs
	# down through the REQ and both retries (3 x 2304 ms)
	flap req-down 0
	chk_begin
	ktap_ok req-down req-unanswered || _bad="no IB_CM_REQ_ERROR with IB_WC_RESP_TIMEOUT_ERR"
	# IB_WC_RESP_TIMEOUT_ERR (20): the MAD layer's last try unanswered
	chk_num send-status "$(sed -n 's/^# ibcm-flap act req_unanswered send_status=\([0-9]*\)/\1/p' /tmp/fl-req-down.ktap)" 20
	chk req-verdicts "$(cut -d' ' -f2 /tmp/fl-req-down.reqs | tr '\n' ' ')" "drop-port-down drop-port-down drop-port-down "
	chk_num req-tids "$(cut -d' ' -f1 /tmp/fl-req-down.reqs | sort -u | wc -l)" 1
	chk_num a2-req-retries "$retries" 2
	chk_num b1-reqs "$rx" 0
	[ "${conn_ms:-0}" -ge 6000 ] || _bad="$_bad gave up after ${conn_ms:-?} ms, before the last try's timeout"
	chk res-after "$(res)" "$res0"
	chk_end faults:req-flap-down-too-long-fails /tmp/fl-req-down.ktap /tmp/fl-req-down.reqs
else
	t_skip $T:faults:req-flap "simfab_rc_test.ko not in the image"
fi

# ---- the active port's LID changes --------------------------------------------------
old=$(topo_port $SRC lid)
new=$((old + 40))
fl0=$(cat "$S/$(dev_of $SRC)/1/counters/cache_flushes")
run lid-warm
echo "lid $SRC $new" >$D/ctl
sleep 1
# Before a sweep: the REQ gets through, b1's REP (and its resends, one a
# retried REQ) are routed to the old LID and dropped there; a2 sees no
# CONNECT_RESPONSE.
echo clear >$D/ctl
timeout 30 "$CM" 'timeout 4000' \
	'id srv ps=ib' "bind gid=$(port_gid $DST) port=7890" 'listen backlog=4' \
	'id cli ps=ib' "bind gid=$(port_gid $SRC)" \
	"resolve-addr dst-gid=$(port_gid $DST) dst-port=7890 timeout=5000" \
	'wait ADDR_RESOLVED id=cli' 'resolve-route timeout=3000' 'wait ROUTE_RESOLVED id=cli' \
	'connect qpn=0x111' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x222' \
	'wait CONNECT_RESPONSE id=cli' >/tmp/cm-lid-stale.out 2>&1
cat $D/capture >/tmp/fl-lid-stale.cap
chk_begin
grep -q '^event CONNECT_REQUEST ' /tmp/cm-lid-stale.out || _bad="no REQ at b1"
! grep -q '^event CONNECT_RESPONSE' /tmp/cm-lid-stale.out || _bad="$_bad a CONNECT_RESPONSE"
grep -q " sn=$A at=- slid=[0-9]* dlid=$old .* class=0x07 .* attr=0x0013 .* verdict=drop-no-dlid " /tmp/fl-lid-stale.cap ||
	_bad="$_bad no REP to the old LID $old dropped on $A"
! grep -q " sn=$A at=$SRC .* attr=0x0013 .* verdict=delivered " /tmp/fl-lid-stale.cap || _bad="$_bad a REP delivered"
chk_end faults:lid-change-stale-router /tmp/cm-lid-stale.out /tmp/fl-lid-stale.cap
echo sweep >$D/ctl
run lid-changed
chk_begin
chk_num cache-flushed $(($(cat "$S/$(dev_of $SRC)/1/counters/cache_flushes") - fl0)) 1
established lid-changed || _bad="$_bad no-connection"
_req=$(grep " sn=$A .* class=0x07 .* attr=0x0010 .* verdict=routed " /tmp/fl-lid-changed.cap | head -n 1)
chk_num req-slid "$(capf "$_req" slid)" "$new"
chk_end faults:lid-change-new-lid-used /tmp/cm-lid-changed.out /tmp/fl-lid-changed.cap
echo "lid $SRC $old" >$D/ctl
echo sweep >$D/ctl

# ---- a P_Key is removed from the active port --------------------------------------
# a1 leaves its second partition (index 1, the topology's pkey2, becomes
# another one, as an SM rewrites a P_Key table; simfab takes no invalid
# P_Key): PKEY_CHANGE drops
# a1's cached answers (docs/remote-sa-protocol.md), the next connection on
# the default P_Key asks b1 again and is made.
PA=a1/1
pk=$(topo_port $PA pkeys | cut -d, -f2)
cm_connect pkey-warm $PA $DST 7890 || diag "the warm-up connection failed"
e0=$(cat "$S/$(dev_of $PA)/1/cache_entries")
fl0=$(cat "$S/$(dev_of $PA)/1/counters/cache_flushes")
q0=$(cat "$S/$(dev_of $PA)/1/counters/client_sent")
pk_ok=1
echo "pkey $PA 1 $(printf '0x%04x' $((pk ^ 1)))" >$D/ctl || pk_ok=
sleep 1
e1=$(cat "$S/$(dev_of $PA)/1/cache_entries")
echo clear >$D/ctl
cm_connect pkey-removed $PA $DST 7891
chk_begin
[ -n "$pk_ok" ] || _bad="simfab refused the P_Key change"
chk_num entries-before "$e0" 1
chk_num entries-after "$e1" 0
chk_num cache-flushed $(($(cat "$S/$(dev_of $PA)/1/counters/cache_flushes") - fl0)) 1
chk_num asked-again $(($(cat "$S/$(dev_of $PA)/1/counters/client_sent") - q0)) 1
established pkey-removed || _bad="$_bad no-connection"
chk_end faults:pkey-removal-cache-dropped-connects /tmp/cm-pkey-removed.out
[ -z "$pk" ] || echo "pkey $PA 1 $pk" >$D/ctl

# ---- nothing left behind ------------------------------------------------------------
sleep 1
chk_begin
[ "$(cm_ids)" -eq 0 ] || _bad="$(cm_ids) cm_ids left: $(rdma resource show | tr '\n' ' ')"
chk_end faults:clean-no-cm-id
chk_begin
rmmod simfab || _bad="rmmod simfab"
unload_tree ib_remote_sa || _bad="$_bad ib_remote_sa"
for m in rdma_ucm rdma_cm ib_cm; do unload_tree $m || _bad="$_bad $m"; done
chk_end faults:clean-unload
modprobe rdma_ucm
t_summary
