#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 11 (measured under TCG; tests/vm/run --boots balances by it)
# rdma_cm's alt_path_wait=Y (issue 41 item 1): ROUTE_RESOLVED waits for
# ib_remote_sa's alternate discovery, its work parked with the discovery
# and queued by the discovery's end. A discovery that ends before
# ib_remote_sa_alt_path_get() has returned to cma_alt_path_query() lets
# the consumer destroy the id from its ROUTE_RESOLVED handler while that
# caller still has the id's rsa_lock to take: a use after free unless
# the caller holds a reference of its own across the call.
#
# altwait:destroy-*   simfab_rc_test case cma-altwait-destroy, a1/1 ->
#                     b1/1 on altdisc.topo (single-ported at both ends:
#                     the discovery has no pair to try and ends after the
#                     remote node's ports), the return record from
#                     ib_remote_sa's cache after a warm-up round, so that
#                     rdma_cm starts the discovery from ib_remote_sa's
#                     workqueue; a handler that destroys the id (returns
#                     non-zero); `rounds` rounds, each call's return held
#                     by a kretprobe until ROUTE_RESOLVED came and then up
#                     to race_hold_ms; a kprobe on kfree() tells whether
#                     the id was freed before the call returned
#                     (no-use-after-free). Debian's kernels have no KASAN.
# altwait:counters    one discovery per round at a1/1, each ending with
#                     none found, none left in flight.
# altwait:unload      the modules unload (no id or discovery left).
# dmesg               no kernel trouble meanwhile.
#
# Skips without simfab.ko, simfab_rc_test.ko or ib_remote_sa.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-altwait
S=/sys/kernel/ib_remote_sa
P=/sys/module/rdma_cm/parameters
TOPOFILE=/ibr/simfab/topology/altdisc.topo
TOPO=/tmp/aw.topo
ROUNDS=20

if ! has_mod simfab || ! has_mod simfab_rc_test || [ ! -f "$TOPOFILE" ]; then
	t_skip $T "simfab.ko, simfab_rc_test.ko or $TOPOFILE not in the image (make simfab)"
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

# rdma_cm's switches, put back at the end; a series without
# alt_path_wait fails altwait:params.
saved=
for p in remote_sa remote_sa_required alt_path alt_path_wait; do
	saved="$saved $p=$(cat "$P/$p" 2>/dev/null || echo -)"
done
TTLP=/sys/module/ib_remote_sa/parameters/cache_ttl_ms
TTL0=$(cat $TTLP)
chk_begin
for pv in remote_sa=Y remote_sa_required=N alt_path=1 alt_path_wait=Y; do
	{ [ -w "$P/${pv%=*}" ] && echo "${pv#*=}" >"$P/${pv%=*}"; } || _bad="$_bad no-${pv%=*}"
done
# the return record from the cache after the warm-up round
echo 60000 >$TTLP
chk_end altwait:params

cnt() {
	cat "$S/$(port_dev "$1")/$(port_devport "$1")/counters/$2" 2>/dev/null || echo x
}
q0=$(cnt a1/1 alt_queries) n0=$(cnt a1/1 alt_none)
KPFX=altwait
sf_rc_run /tmp/aw destroy cases=cma-altwait-destroy \
	act="$(port_param a1/1)" pas="$(port_param b1/1)" opt_in=1 \
	route_ms=8000 rounds=$ROUNDS race_hold_ms=300
diag "$(grep -E '^# cma-altwait-destroy (rounds=|warm-up|.*use-after-free)' /tmp/aw-destroy.ktap)"

# The warm-up round and every held round until the first use after free
# (all of them when there is none) made one discovery each.
rounds=$(sed -n 's/^# [^ ]* rounds=\([0-9]*\) .*/\1/p' /tmp/aw-destroy.ktap | head -n 1)
sleep 1
chk_begin
chk_num alt-queries $(($(cnt a1/1 alt_queries) - q0)) $((${rounds:-0} + 1))
chk_num alt-none $(($(cnt a1/1 alt_none) - n0)) $((${rounds:-0} + 1))
chk_num in-flight $(($(cnt a1/1 alt_queries) - $(cnt a1/1 alt_found) - $(cnt a1/1 alt_none) - $(cnt a1/1 alt_failed))) 0
chk_end altwait:counters /tmp/aw-destroy.ktap

for pv in $saved; do
	[ "${pv#*=}" = - ] || echo "${pv#*=}" >"$P/${pv%=*}"
done
echo "$TTL0" >$TTLP
# Nothing keeps the modules: simfab, rdma_ucm, rdma_cm, ib_remote_sa go.
sf_unload_rsa
rc=$?
chk_begin
chk rmmod "$rc" 0
chk_end altwait:unload

chk_dmesg "$T" "$mark"
t_summary
