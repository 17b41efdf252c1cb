#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench): management MADs on the wire per
# connection on simfab's routed topology, counted in simfab's capture.
# One rdma_ucm connection (simfab-cm, AF_IB, no QPs: route, REQ/REP/RTU,
# DREQ/DREP) a1 -> a2 within subnet A, a1 -> b1 across the router with
# a1's ib_remote_sa cache flushed first (cold), and a1 -> b1 again (warm).
# Each MAD is counted once, where it ends (a routed MAD shows twice in
# the capture, once with verdict routed), by class: SA (0x03), CM (0x07),
# ib_remote_sa (0x0d), and the SA's by subnet. Printed as
#   # bench mads SCENARIO ROUND CLASS COUNT
# for tests/bench/run; its table states the target relations
# (warm = same-subnet; cold = same-subnet + one ib_remote_sa round trip
# + one SA query on B) next to what was counted. The results only say
# that each connection was made and its MADs were all captured.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=bench-simfab-mads
CM=/ibr/bin/simfab-cm
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
TOPOFILE=/ibr/simfab/topology/routed.topo
ROUNDS=3

if ! has_mod simfab || ! has_mod ib_remote_sa || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, ib_remote_sa.ko, simfab-cm or $TOPOFILE not in the image"
	t_summary
	exit 0
fi
TOPO=/tmp/bm.topo
if ! sf_load_topo "$TOPOFILE" ib_remote_sa rdma_ucm; then
	t_fail $T:load "modprobe ib_remote_sa / rdma_ucm / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
dev_of() { topo_host "${1%/*}" dev; }

# conn NAME SRC DST PORT: one connection and its disconnection
# (cm_connect); the capture of it in /tmp/bm-NAME.cap.
conn() {
	echo clear >$D/ctl
	cm_connect "$@"
	_rc=$?
	# the DREP may still be on its way when the last wait returns
	sleep 0.5
	cat $D/capture >"/tmp/bm-$1.cap"
	return $_rc
}

# count NAME SCENARIO ROUND: the bench lines of a capture. MADs whose
# line says routed show again at their destination: not counted twice.
count() {
	awk -v s="$2" -v r="$3" -v A="$(topo_host a1 subnet)" -v B="$(topo_host b1 subnet)" '
		/ class=/ && !/ verdict=routed / {
			cl = $0; sub(/.* class=/, "", cl); sub(/ .*/, "", cl)
			sn = $0; sub(/.* sn=/, "", sn); sub(/ .*/, "", sn)
			n[cl]++; tot++
			if (cl == "0x03") sa[sn]++
		}
		END {
			printf "# bench mads %s %d sa %d\n", s, r, n["0x03"]
			printf "# bench mads %s %d sa-on-A %d\n", s, r, sa[A]
			printf "# bench mads %s %d sa-on-B %d\n", s, r, sa[B]
			printf "# bench mads %s %d cm %d\n", s, r, n["0x07"]
			printf "# bench mads %s %d remote-sa %d\n", s, r, n["0x0d"]
			printf "# bench mads %s %d total %d\n", s, r, tot
		}' "/tmp/bm-$1.cap"
}

# Let the ports' start-up MADs (ib_sa's and ib_remote_sa's own SA
# queries after PORT_ACTIVE and SM_CHANGE) pass first: until the capture
# stays empty for a second, at most 15 s.
i=0
while [ "$i" -lt 15 ]; do
	echo clear >$D/ctl
	sleep 1
	[ -n "$(cat $D/capture)" ] || break
	i=$((i + 1))
done
ok=0
port=7600
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for sc in same-subnet routed-cold routed-warm; do
		case $sc in
		same-subnet) dst=a2/1 ;;
		routed-cold) dst=b1/1; echo 1 >"$S/$(dev_of a1/1)/1/cache_flush" ;;
		routed-warm) dst=b1/1 ;;
		esac
		port=$((port + 1))
		h0=$(cat "$S/$(dev_of a1/1)/1/counters/cache_hits")
		if ! conn "$sc-$r" a1/1 "$dst" "$port"; then
			t_fail "$T:$sc-$r" "the connection failed: $(tail -n 1 "/tmp/cm-$sc-$r.out")"
			diag_file "/tmp/cm-$sc-$r.out"
			continue
		fi
		# the capture ring holds 256 lines: all of this connection's?
		if [ "$(grep -c . "/tmp/bm-$sc-$r.cap")" -ge 256 ]; then
			t_fail "$T:$sc-$r" "the capture ring overflowed"
			continue
		fi
		h1=$(cat "$S/$(dev_of a1/1)/1/counters/cache_hits")
		count "$sc-$r" "$sc" "$r"
		printf '# bench mads %s %d cache-hits %d\n' "$sc" "$r" $((h1 - h0))
		ok=$((ok + 1))
	done
	r=$((r + 1))
done
[ "$ok" -eq $((3 * ROUNDS)) ] && t_pass "$T:connections ($ROUNDS rounds of same-subnet, routed cold and warm)"
rmmod simfab
t_summary
