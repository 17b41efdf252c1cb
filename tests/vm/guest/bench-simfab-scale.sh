#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): many concurrent routed connections
# a1 -> b1 across the router on simfab's routed topology, held open at
# once: how many got ESTABLISHED, how long that took, the kernel's
# unreclaimable slab per connection (/proc/meminfo SUnreclaim, before and
# with them all open), and that everything goes away: no cm_id left after
# they close (rdma resource's counts), the CM modules and ib_remote_sa
# unload. Twice, SCALE connections each (kernel command line
# ibr_bench_scale=N, default 1000):
# - through rdma_ucm without QPs (simfab has no userspace verbs), in
#   simfab-cm processes of PER connections each (simfab-cm has 32 ids):
#   the CM side as userspace consumers use it, closed by ending the
#   processes. Printed as "# bench scale KEY VALUE".
# - in the kernel with an RC QP each (simfab_rc_test.ko's scale case),
#   then traffic on every connection (a SEND each way and an RDMA WRITE,
#   every completion checked), a disconnect of each, everything destroyed;
#   the driver holds the connections open (hold_ms) until this script has
#   read the memory and writes its "release" parameter. Also no QP, CQ or
#   PD left. Printed as "# bench scale-qp KEY VALUE".
# for tests/bench/run.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=bench-simfab-scale
CM=/ibr/bin/simfab-cm
TOPOFILE=/ibr/simfab/topology/routed.topo
SCALE=1000
PER=15
# shellcheck disable=SC2013 # one line of words
for arg in $(cat /proc/cmdline); do
	case $arg in ibr_bench_scale=*) SCALE=${arg#*=} ;; esac
done

if ! has_mod simfab || ! has_mod ib_remote_sa || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, ib_remote_sa.ko, simfab-cm or $TOPOFILE not in the image"
	t_summary
	exit 0
fi
TOPO=/tmp/bs.topo
if ! sf_load_topo "$TOPOFILE" ib_remote_sa rdma_ucm; then
	t_fail $T:load "modprobe ib_remote_sa / rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
AP=a1/1 BP=b1/1
# one connection first: a1's ib_remote_sa cache holds b1's return path
cm_connect scale-warm $AP $BP 7900 || diag "the warm-up connection failed"
sunrec() { sed -n 's/^SUnreclaim: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
sync
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
m0=$(sunrec)

# proc I N: N connections on one listener (port 8000+I), held open until
# the process is killed, which closes everything with its file. Each
# connection has QP numbers of its own: ib_cm refuses a second one from
# the same CA and QPN as stale (REJ reason 10).
proc() {
	_n=$1 _k=$2 _p=$((8000 + $1))
	set -- 'timeout 60000' 'id srv ps=ib' "bind gid=$(port_gid $BP) port=$_p" 'listen backlog=8'
	_i=0
	while [ $_i -lt "$_k" ]; do
		set -- "$@" "id c$_i ps=ib" "bind gid=$(port_gid $AP)" \
			"resolve-addr dst-gid=$(port_gid $BP) dst-port=$_p timeout=20000" \
			"wait ADDR_RESOLVED id=c$_i" 'resolve-route timeout=20000' "wait ROUTE_RESOLVED id=c$_i" \
			"connect qpn=$((0x10000 + _n * 32 + _i))" "wait CONNECT_REQUEST id=srv as=s$_i" \
			"accept qpn=$((0x20000 + _n * 32 + _i))" \
			"wait CONNECT_RESPONSE id=c$_i" "accept id=c$_i" "wait ESTABLISHED id=s$_i"
		_i=$((_i + 1))
	done
	# exec: the background job's pid is simfab-cm's, for the kill below
	exec "$CM" "$@" 'sleep 600000' >"/tmp/bs-$_n.out" 2>&1
}
t0=$(cut -d' ' -f1 /proc/uptime)
n=0 i=0 pids=
while [ $n -lt "$SCALE" ]; do
	k=$PER
	[ $((SCALE - n)) -ge $k ] || k=$((SCALE - n))
	proc $i $k &
	pids="$pids $!"
	n=$((n + k))
	i=$((i + 1))
done
nproc=$i
# until every connection is ESTABLISHED or nothing moves for 60 s
last=-1 still=0 est=0
while [ "$still" -lt 60 ]; do
	est=$(cat /tmp/bs-*.out 2>/dev/null | grep -c '^event ESTABLISHED ')
	[ "$est" -ge "$SCALE" ] && break
	if [ "$est" = "$last" ]; then still=$((still + 1)); else still=0; last=$est; fi
	sleep 1
done
t1=$(cut -d' ' -f1 /proc/uptime)
m1=$(sunrec)
ids=$(cm_ids)
printf '# bench scale wanted %d\n# bench scale established %d\n' "$SCALE" "$est"
printf '# bench scale processes %d\n# bench scale seconds %s\n' "$nproc" "$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')"
printf '# bench scale cm-ids-open %d\n' "$ids"
printf '# bench scale sunreclaim-kb-before %d\n# bench scale sunreclaim-kb-open %d\n' "$m0" "$m1"
[ "$est" -gt 0 ] && printf '# bench scale bytes-per-connection %d\n' $(((m1 - m0) * 1024 / est))
# shellcheck disable=SC2086 # pid list
kill $pids 2>/dev/null
# shellcheck disable=SC2086
wait $pids 2>/dev/null
i=0
while [ $i -lt 60 ] && [ "$(cm_ids)" -ne 0 ]; do
	sleep 1
	i=$((i + 1))
done
left=$(cm_ids)
printf '# bench scale cm-ids-left %d\n' "$left"
chk_begin
[ "$est" -eq "$SCALE" ] || _bad="$est of $SCALE established"
# two ids a connection (each side's) and one listener a process
[ "$ids" -eq $((2 * SCALE + nproc)) ] || _bad="$_bad $ids cm_ids open (want $((2 * SCALE + nproc)))"
[ "$left" -eq 0 ] || _bad="$_bad $left cm_ids left"
rmmod simfab || _bad="$_bad rmmod-simfab"
unload_tree ib_remote_sa || _bad="$_bad ib_remote_sa"
for m in rdma_ucm rdma_cm ib_cm; do unload_tree $m || _bad="$_bad $m"; done
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
printf '# bench scale sunreclaim-kb-after-unload %d\n' "$(sunrec)"
chk_end "connections ($SCALE at once, all closed, modules unloaded)"
[ "$est" -eq "$SCALE" ] || { tail -n 5 /tmp/bs-0.out | sed 's/^/#   /'; }

# ---- the same in the kernel, with RC QPs and traffic on each ----------------
T=bench-simfab-scale-qp
if ! has_mod simfab_rc_test; then
	t_skip $T "simfab_rc_test.ko not in the image"
	modprobe rdma_ucm
	t_summary
	exit 0
fi
if ! sf_load_topo "$TOPOFILE" ib_remote_sa rdma_ucm; then
	t_fail $T:load "modprobe ib_remote_sa / rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
cm_connect scale-qp-warm $AP $BP 7900 || diag "the warm-up connection failed"
# ksv KEY: a value from the driver's "# scale ..." lines
ksv() {
	sed -n "s/^# scale .* $1=\([^ ]*\).*/\1/p" /tmp/bs-qp.ktap | head -n 1
}
qp0=$(res_total qp) cq0=$(res_total cq) pd0=$(res_total pd)
sync
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
m0=$(sunrec)
mk=$(dmesg_mark)
modprobe simfab_rc_test cases=scale act="$(topo_host a1 dev):1" pas="$(topo_host b1 dev):1" \
	conns="$SCALE" hold_ms=600000 wait_ms=30000 &
mp=$!
# the driver holds them open once every connection is made (or the rest
# given up on): read the memory then, and let it go on
i=0
while [ $i -lt 1200 ] && ! dmesg_since "$mk" | grep -q '# scale holding'; do
	kill -0 $mp 2>/dev/null || break
	sleep 1
	i=$((i + 1))
done
m1=$(sunrec)
qp1=$(res_total qp) ids1=$(cm_ids)
echo Y >/sys/module/simfab_rc_test/parameters/release 2>/dev/null
wait $mp
mrc=$?
rmmod simfab_rc_test 2>/dev/null
dmesg_since "$mk" | sed -n 's/^\[[^]]*\] //p' >/tmp/bs-qp.ktap
i=0
while [ $i -lt 60 ] && [ "$(cm_ids)" -ne 0 ]; do
	sleep 1
	i=$((i + 1))
done
qp2=$(res_total qp) cq2=$(res_total cq) pd2=$(res_total pd) ids2=$(cm_ids)
est=$(ksv established)
est=${est:-0}
printf '# bench scale-qp wanted %d\n# bench scale-qp established %d\n' "$SCALE" "$est"
for k in addr_ms route_ms connect_ms total_ms; do
	printf '# bench scale-qp %s %s\n' $k "$(ksv $k)"
done
printf '# bench scale-qp traffic-completions %s\n# bench scale-qp traffic-wanted %s\n' \
	"$(sed -n 's/^# scale traffic completions=\([0-9]*\).*/\1/p' /tmp/bs-qp.ktap)" \
	"$(sed -n 's/^# scale traffic .* of=\([0-9]*\).*/\1/p' /tmp/bs-qp.ktap)"
printf '# bench scale-qp traffic-ms %s\n# bench scale-qp messages %s\n# bench scale-qp bytes %s\n' \
	"$(sed -n 's/^# scale traffic .* ms=\([0-9]*\).*/\1/p' /tmp/bs-qp.ktap)" "$(ksv messages)" "$(ksv bytes)"
printf '# bench scale-qp disconnected %s\n# bench scale-qp disconnect-ms %s\n' \
	"$(sed -n 's/^# scale disconnected=\([0-9]*\).*/\1/p' /tmp/bs-qp.ktap)" \
	"$(sed -n 's/^# scale disconnected=.* ms=\([0-9]*\).*/\1/p' /tmp/bs-qp.ktap)"
printf '# bench scale-qp qps-open %d\n# bench scale-qp cm-ids-open %d\n' $((qp1 - qp0)) "$ids1"
printf '# bench scale-qp sunreclaim-kb-before %d\n# bench scale-qp sunreclaim-kb-open %d\n' "$m0" "$m1"
[ "$est" -gt 0 ] && printf '# bench scale-qp bytes-per-connection %d\n' $(((m1 - m0) * 1024 / est))
printf '# bench scale-qp left qp=%d cq=%d pd=%d cm_id=%d\n' $((qp2 - qp0)) $((cq2 - cq0)) $((pd2 - pd0)) "$ids2"
chk_begin
[ "$mrc" -eq 0 ] || _bad="modprobe simfab_rc_test exited $mrc"
grep -q '^not ok ' /tmp/bs-qp.ktap && _bad="$_bad $(grep '^not ok ' /tmp/bs-qp.ktap | tr '\n' ' ')"
grep -q '^ok .*_scale_traffic' /tmp/bs-qp.ktap || _bad="$_bad no traffic result"
[ "$est" -eq "$SCALE" ] || _bad="$_bad $est of $SCALE established"
# two QPs and two cm_ids a connection (each side's), one listener
[ $((qp1 - qp0)) -eq $((2 * SCALE)) ] || _bad="$_bad $((qp1 - qp0)) QPs open (want $((2 * SCALE)))"
[ "$ids1" -eq $((2 * SCALE + 1)) ] || _bad="$_bad $ids1 cm_ids open (want $((2 * SCALE + 1)))"
[ "$qp2" -eq "$qp0" ] && [ "$cq2" -eq "$cq0" ] && [ "$pd2" -eq "$pd0" ] && [ "$ids2" -eq 0 ] ||
	_bad="$_bad left: qp $((qp2 - qp0)) cq $((cq2 - cq0)) pd $((pd2 - pd0)) cm_id $ids2"
rmmod simfab || _bad="$_bad rmmod-simfab"
unload_tree ib_remote_sa || _bad="$_bad ib_remote_sa"
for m in rdma_ucm rdma_cm ib_cm; do unload_tree $m || _bad="$_bad $m"; done
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
printf '# bench scale-qp sunreclaim-kb-after-unload %d\n' "$(sunrec)"
chk_end "connections ($SCALE with RC QPs at once, traffic on each, all closed, modules unloaded)" /tmp/bs-qp.ktap
modprobe rdma_ucm
t_summary
