#!/bin/sh
# shellcheck shell=sh
# The patched librdmacm (userspace/librdmacm, make librdmacm) under the
# unmodified rdmacm-utils programs of the distribution, linked against
# librdmacm1's librdmacm.so.1: the loader is pointed at the package's
# private directory (the ld.so.conf.d entry that does this on an installed
# system is checked by the pkg tier), and rping, ucmatose and cmtime run
# over Soft-RoCE through the loaded CM stack with it. rdma_path_caps, the
# series' example, reports the capabilities the kernel's file lists and
# makes the new APM calls on a connected id.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

LIBDIR=$(dirname "$(readlink -f /lib/x86_64-linux-gnu/libibverbs.so.1)")/ib-routed
if [ ! -f "$LIBDIR/librdmacm.so.1" ]; then
	t_skip librdmacm "the patched librdmacm is not in the image (make librdmacm)"
	t_summary
	exit
fi
if ! rxe_up; then
	t_fail librdmacm:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi
modprobe rdma_ucm || t_fail librdmacm:modprobe "modprobe rdma_ucm failed"
LD_LIBRARY_PATH=$LIBDIR
export LD_LIBRARY_PATH

# Each program resolves librdmacm.so.1 to the patched library, the one
# with ib-routed's symbol version.
bad=
grep -q RDMACM_IBR_1.0 "$LIBDIR/librdmacm.so.1" || bad=" $LIBDIR/librdmacm.so.1 has no RDMACM_IBR_1.0"
for p in rping ucmatose cmtime; do
	r=$(/lib64/ld-linux-x86-64.so.2 --list "$(command -v $p)" | awk '$1 == "librdmacm.so.1" { print $3 }')
	[ "$r" = "$LIBDIR/librdmacm.so.1" ] || bad="$bad $p=>${r:-nothing}"
done
if [ -z "$bad" ]; then
	t_pass librdmacm:loaded
else
	t_fail librdmacm:loaded "not the patched library:$bad"
fi

if rping_check rping 7274 10; then
	t_pass librdmacm:rping
else
	t_fail librdmacm:rping "$why"
fi
if server_client ucmatose 7571 60 \
	"ucmatose -b $RXE_IP -p 7571" "ucmatose -s $RXE_IP -p 7571"; then
	t_pass librdmacm:ucmatose
else
	t_fail librdmacm:ucmatose "$why"
fi
if SERVER_PERSISTS=1 server_client cmtime 7572 90 \
	"cmtime -b $RXE_IP -p 7572 -c 10" "cmtime -s $RXE_IP -p 7572 -c 10" &&
	grep -q '^connect ' /tmp/cmtime.client; then
	t_pass librdmacm:cmtime
else
	t_fail librdmacm:cmtime "${why:-client printed no connect timing}"
fi

# rdma_query_path_caps() against the kernel's capabilities file: the
# limits and each listed form; without the file (the in-tree stack) the
# classic record alone.
CAPS=/sys/class/misc/rdma_cm/ib_path_caps
if [ -x /ibr/bin/rdma_path_caps ]; then
	if /ibr/bin/rdma_path_caps >/tmp/pathcaps.out 2>&1; then
		if [ -f $CAPS ]; then
			# capsval KEY: the file's value, 0 when it has no such line
			capsval() { _v=$(awk -v k="$1" '$1 == k { print $2 }' $CAPS); echo "${_v:-0}"; }
			want="sets 1 alternate $(capsval alternate) lap $(capsval lap) apm_events $(capsval apm_events) remote_sa $(capsval remote_sa)"
			wforms=$(awk '$1 == "form" { print $2 }' $CAPS | paste -sd' ')
			wmax="max_records $(awk '$1 == "max_records" { print $2 }' $CAPS) max_bytes $(awk '$1 == "max_bytes" { print $2 }' $CAPS)"
		else
			want="sets 0 alternate 0 lap 0 apm_events 0 remote_sa 0" wforms=0x2b wmax="max_records 1 max_bytes 72"
		fi
		forms=$(awk '$1 == "form" { print $2 }' /tmp/pathcaps.out | paste -sd' ')
		if grep -qxF "$want" /tmp/pathcaps.out && grep -qxF "$wmax" /tmp/pathcaps.out &&
			[ "$forms" = "$wforms" ]; then
			t_pass librdmacm:path-caps
		else
			t_fail librdmacm:path-caps "rdma_path_caps does not report '$want', '$wmax', forms $wforms"
			diag_file /tmp/pathcaps.out
		fi
	else
		t_fail librdmacm:path-caps "rdma_path_caps failed"
		diag_file /tmp/pathcaps.out
	fi
else
	t_skip librdmacm:path-caps "rdma_path_caps is not in the image (the series' example)"
fi

# The APM calls on a connected id (rdma_path_caps -a against rdma_server):
# rdma_set_apm_events() is taken when the kernel lists apm_events 1, else
# the kernel's ENOSYS. rdma_load_alt_path() is refused by the library:
# EOPNOTSUPP when the kernel cannot send LAPs (lap 0); otherwise EINVAL,
# nothing sent: a RoCE v2 route has hop limit 64, so it is not
# subnet-local and as an alternate would need a return record of its own.
if [ -x /ibr/bin/rdma_path_caps ]; then
	if [ "$(awk '$1 == "apm_events" { print $2 }' $CAPS 2>/dev/null)" = 1 ]; then
		wev="rdma_set_apm_events: ok"
	else
		wev="rdma_set_apm_events: Function not implemented (38)"
	fi
	if [ "$(awk '$1 == "lap" { print $2 }' $CAPS 2>/dev/null)" = 1 ]; then
		wlap="rdma_load_alt_path: Invalid argument (22)"
	else
		wlap="rdma_load_alt_path: Operation not supported (95)"
	fi
	timeout 60 rdma_server -s "$RXE_IP" -p 7573 >/tmp/apm.server 2>&1 &
	spid=$!
	if wait_listen 7573; then
		timeout 60 /ibr/bin/rdma_path_caps -a -d "$RXE_IP" -p 7573 >/tmp/apm.client 2>&1
		crc=$?
		if [ $crc -eq 0 ] && grep -qxF connected /tmp/apm.client &&
			grep -qxF "$wev" /tmp/apm.client && grep -qxF "$wlap" /tmp/apm.client; then
			t_pass librdmacm:apm-calls
		else
			t_fail librdmacm:apm-calls "exit $crc; want '$wev' and '$wlap'"
			diag_file /tmp/apm.client
		fi
	else
		t_fail librdmacm:apm-calls "rdma_server never listened on 7573"
	fi
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
else
	t_skip librdmacm:apm-calls "rdma_path_caps is not in the image (the series' example)"
fi
t_summary
