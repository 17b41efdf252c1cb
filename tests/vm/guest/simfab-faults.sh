#!/bin/sh
# shellcheck shell=sh
# Faults during connection setup on simfab's routed topology (a2 -> b1
# through rdma_ucm, cm_connect): each fails or recovers as rdma_cm and
# ib_remote_sa document, and nothing is left behind.
#
# faults:sa-down-*       A's SA drops a2's queries (drop class=0x03): route
#                        resolution ends in ROUTE_ERROR -ETIMEDOUT, no REQ
#                        is sent; with the SA back the connection is made.
# faults:router-flap-*   the router A's SA names for B goes down: the SA
#                        names the other one, the remote query and the REQ
#                        go through it; back up, the first one again.
# faults:lid-change-*    a2's LID changes: its ib_remote_sa cache is
#                        dropped (LID_CHANGE), the next REQ carries the new
#                        LID and is answered.
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
echo 1 >"$S/$(dev_of $SRC)/1/cache_flush"
run flap-down
cat $D/topology >$TOPO		# the router's ports are down in it now
R2=$(route_via "$A" "$PB")
r_down=$(req_at flap-down)
echo "router $R1 up" >$D/ctl
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

# ---- the active port's LID changes --------------------------------------------------
old=$(topo_port $SRC lid)
new=$((old + 40))
fl0=$(cat "$S/$(dev_of $SRC)/1/counters/cache_flushes")
run lid-warm
echo "lid $SRC $new" >$D/ctl
sleep 1
run lid-changed
chk_begin
chk_num cache-flushed $(($(cat "$S/$(dev_of $SRC)/1/counters/cache_flushes") - fl0)) 1
established lid-changed || _bad="$_bad no-connection"
_req=$(grep " sn=$A .* class=0x07 .* attr=0x0010 .* verdict=routed " /tmp/fl-lid-changed.cap | head -n 1)
chk_num req-slid "$(capf "$_req" slid)" "$new"
chk_end faults:lid-change-new-lid-used /tmp/cm-lid-changed.out /tmp/fl-lid-changed.cap
echo "lid $SRC $old" >$D/ctl

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
