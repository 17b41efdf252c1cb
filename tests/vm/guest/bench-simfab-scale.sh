#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): many concurrent routed connections
# a1 -> b1 across the router on simfab's routed topology, held open at
# once: how many got ESTABLISHED, how long that took, the kernel's
# unreclaimable slab per connection (/proc/meminfo SUnreclaim, before and
# with them all open), and that everything goes away: no cm_id left after
# the processes end (rdma resource's counts), the CM modules and
# ib_remote_sa unload. Connections
# through rdma_ucm without QPs (simfab has no userspace verbs), so without
# data traffic: the CM side of scale only. SCALE connections (kernel
# command line ibr_bench_scale=N, default 1000) in processes of PER
# connections each (simfab-cm has 32 ids). Printed as
#   # bench scale KEY VALUE
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
modprobe rdma_ucm
t_summary
