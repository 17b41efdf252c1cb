#!/bin/sh
# shellcheck shell=sh
# Benchmark (make bench, tests/bench; issue 26's bench row): NVMe over
# Fabrics on Soft-RoCE with the in-tree CM stack and with the overlay, in
# the same boot, alternating the order per round as bench-rxe-connect
# does. Each round and stack: the stack swapped with ib-routed-reload,
# nvmet-rdma's target (a 16 MiB file, buffered) and nvme-rdma's host on
# rxe0 (nvmet_up, nvme_connect), fio 4 KiB random reads, O_DIRECT, queue
# depth 1 (psync), time-based, then everything torn down and unloaded so
# that the next swap finds no consumer. The CM is not on the data path:
# what a difference would show is the overlay disturbing the ULP's QPs.
# Figures, from fio's terse output (version 3: field 8 read IOPS, 16
# completion latency mean in us, the 99.00th percentile among 18-37):
#   # bench rxe-nvmeof STACK ROUND iops N
#   # bench rxe-nvmeof STACK ROUND clat-us N
#   # bench rxe-nvmeof STACK ROUND clat-p99-us N
# Results say only that each round ran on the stack it claims and fio
# read without an error; no timing is judged here.
# Knobs on the kernel command line: ibr_bench_rounds=N (6),
# ibr_bench_nvme_secs=N (5, fio's runtime per stack and round).
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

T=bench-rxe-nvmeof
NQN=nqn.2026-12.org.ib-routed:bench-rxe-nvmeof
PORT=4420
IMG=/tmp/bench-nvmeof.img
rounds=6
secs=5
# shellcheck disable=SC2013 # one line of words
for arg in $(cat /proc/cmdline); do
	case $arg in
	ibr_bench_rounds=*) rounds=${arg#*=} ;;
	ibr_bench_nvme_secs=*) secs=${arg#*=} ;;
	esac
done

done_() {
	t_summary
	exit 0
}

if ! command -v fio >/dev/null; then
	t_skip $T "fio is not in the image (scripts/install-deps bench installs it; tests/vm/run --tier bench puts it in)"
	done_
fi
need_mods $T nvmet nvmet-rdma nvme-rdma nvme-fabrics || done_
if ! [ -f "$STAMP_FILE" ]; then
	t_skip $T "no overlay in the image (--in-tree boot): nothing to compare"
	done_
fi
if ! rxe_up; then
	t_fail $T:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	done_
fi

# round STACK N: one measured run on the loaded stack; its bench lines on
# stdout. Fails with $why set; everything it set up is gone either way.
# shellcheck disable=SC2317 # called by stack_rounds
round() {
	why='' ctrl=''
	if ! nvmet_up "$NQN" "$IMG" "$RXE_IP" "$PORT"; then
		why="target: $why"
	elif ! nvme_connect "$NQN" "$RXE_IP" "$PORT"; then
		why="connect: $why"
	else
		fio_randread rxe-nvmeof "$1" "$2" "$ns" "$secs"
	fi
	[ -z "$why" ] || diag_file /tmp/bench-fio.err
	_rw=$why
	nvme_disconnect "$ctrl" || _rw="$_rw; $why"
	nvmet_down "$NQN" "$IMG" || _rw="$_rw; $why"
	for _m in nvme_rdma nvmet_rdma; do
		unload_tree "$_m" 2>/dev/null || _rw="$_rw; $_m not unloaded"
	done
	why=${_rw#; }
	[ -z "$why" ]
}

modprobe rdma_ucm || true
stack_rounds $T "$rounds" round
[ "$ran" -eq $((2 * rounds)) ] && t_pass "$T:rounds ($rounds rounds of ${secs} s of fio on each stack)"
done_
