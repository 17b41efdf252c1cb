#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): ib_remote_sa against a local SA
# PathRecord query in the same boot, on simfab's routed topology, through
# simfab_rsa_test.ko's bench mode (tests/simfab/module/simfab_rsa_test.c):
#   sa-serial        ib_sa PathRecord Gets from a1 to A's SA, one at a time
#   sa-parallel      the same from a1, a2 and a3 at once
#   remote-serial    ib_remote_sa queries a1 -> b1's responder (client cache
#                    off), the route handed in as rdma_cm does, one at a time
#   remote-parallel  the same from a1, a2 and a3 at once (the responder's
#                    throughput; it asks B's SA once per request)
#   cache-hit-serial the same query answered from a1's client cache
# ROUNDS rounds of all five after one untimed query of each kind (the
# first SA query of a port costs its address handle). Printed as
#   # bench rsa SCENARIO ROUND requesters=R n=N answered=A busy=B other=E ns=T sa_queries=Q
# (T: first query sent to last answer; Q: the responder's SA queries)
# for tests/bench/run. Results say only that every query was answered
# and every cached one was a hit. It measures the responder's own
# throughput: its budget of SA queries (sa_query_rate, 50 a second per
# port by default, the bound on what remote requesters cost the SM) is
# off while it runs, and the line says so (sa_budget=off).
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=bench-simfab-rsa
S=/sys/kernel/ib_remote_sa
P=/sys/module/ib_remote_sa/parameters
TOPOFILE=/ibr/simfab/topology/routed.topo
N=20
ROUNDS=5

if ! has_mod simfab || ! has_mod simfab_rsa_test || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, simfab_rsa_test.ko or $TOPOFILE not in the image"
	t_summary
	exit 0
fi
TOPO=/tmp/br.topo
if ! sf_load_topo "$TOPOFILE" ib_remote_sa; then
	t_fail $T:load "modprobe ib_remote_sa / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
dev_of() { topo_host "${1%/*}" dev; }
B1=b1/1
SAQ=$S/$(dev_of $B1)/1/counters/sa_queries
FROM3="$(dev_of a1/1):1,$(dev_of a2/1):1,$(dev_of a3/1):1"
FROM1="$(dev_of a1/1):1"

# run SCENARIO ROUND ARGS...: one load of the driver; its summary as a
# bench line.
run() {
	_sc=$1 _r=$2
	shift 2
	_q0=$(cat "$SAQ")
	_m=$(dmesg_mark)
	if ! timeout 120 modprobe simfab_rsa_test "target=$(port_gid $B1)" quiet=1 "$@" >"/tmp/br-$_sc.err" 2>&1; then
		t_fail "$T:$_sc" "modprobe simfab_rsa_test $*: $(cat "/tmp/br-$_sc.err")"
		return 1
	fi
	rmmod simfab_rsa_test
	_sum=$(dmesg_since "$_m" | sed -n 's/.*simfab_rsa_test: summary //p' | tail -n 1)
	printf '# bench rsa %s %s %s sa_queries=%d sa_budget=off\n' "$_sc" "$_r" "${_sum#* }" $(($(cat "$SAQ") - _q0))
	_n=$(echo "$_sum" | sed -n 's/.* n=\([0-9]*\) .*/\1/p')
	_a=$(echo "$_sum" | sed -n 's/.* answered=\([0-9]*\) .*/\1/p')
	if [ -z "$_n" ] || [ "$_n" != "$_a" ]; then
		t_fail "$T:$_sc" "not every query answered: ${_sum:-no summary}"
		return 1
	fi
	return 0
}

ttl=$(cat $P/cache_ttl_ms)
sqr=$(cat $P/sa_query_rate 2>/dev/null || echo)
[ -z "$sqr" ] || echo 0 >$P/sa_query_rate
a1_cnt=$S/$(dev_of a1/1)/1
bad=0
run warm-up-sa 0 mode=sa "from=$FROM3" count=1 >/dev/null || bad=$((bad + 1))
run warm-up-remote 0 mode=remote-route "from=$FROM3" count=1 >/dev/null || bad=$((bad + 1))
r=1
while [ "$r" -le "$ROUNDS" ]; do
	run sa-serial "$r" mode=sa "from=$FROM1" count="$N" serial=1 || bad=$((bad + 1))
	run sa-parallel "$r" mode=sa "from=$FROM3" count="$N" || bad=$((bad + 1))
	echo 0 >$P/cache_ttl_ms
	run remote-serial "$r" mode=remote-route "from=$FROM1" count="$N" serial=1 || bad=$((bad + 1))
	run remote-parallel "$r" mode=remote-route "from=$FROM3" count="$N" || bad=$((bad + 1))
	echo "$ttl" >$P/cache_ttl_ms
	# one miss fills the cache; then every query is a hit
	echo 1 >"$a1_cnt/cache_flush"
	run cache-fill "$r" mode=remote-route "from=$FROM1" count=1 >/dev/null || bad=$((bad + 1))
	h0=$(cat "$a1_cnt/counters/cache_hits")
	run cache-hit-serial "$r" mode=remote-route "from=$FROM1" count="$N" serial=1 || bad=$((bad + 1))
	h1=$(cat "$a1_cnt/counters/cache_hits")
	if [ $((h1 - h0)) -ne "$N" ]; then
		t_fail "$T:cache-hit-serial-$r" "$((h1 - h0)) cache hits counted for $N queries"
		bad=$((bad + 1))
	fi
	r=$((r + 1))
done
[ "$bad" -eq 0 ] && t_pass "$T:queries ($ROUNDS rounds: every query answered, every cached one a hit)"
[ -z "$sqr" ] || echo "$sqr" >$P/sa_query_rate
rmmod simfab
t_summary
