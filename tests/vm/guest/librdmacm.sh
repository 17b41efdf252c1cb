#!/bin/sh
# shellcheck shell=sh
# The patched librdmacm (userspace/librdmacm, make librdmacm) under the
# unmodified rdmacm-utils programs of the distribution, linked against
# librdmacm1's librdmacm.so.1: the loader is pointed at the package's
# private directory (the ld.so.conf.d entry that does this on an installed
# system is checked by the pkg tier), and rping, ucmatose and cmtime run
# over Soft-RoCE through the loaded CM stack with it. rdma_path_caps, the
# series' example, reports the capabilities the kernel's query answers and
# makes the new APM calls on a connected id. It runs on the overlay (vm-rxe)
# and on the in-tree stack (vm-stock: stock-librdmacm.sh runs this file),
# each with its documented answers.
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

# rdma_query_path_caps(): the library asks RDMA_USER_CM_QUERY_IBR_CAPS on an
# unbound id of its own. The overlay's rdma_ucm answers its twelve forms,
# 16 records of 72 bytes, alternates at connect, LAP and the APM events
# (remote SA when ib_remote_sa is loaded); the in-tree rdma_ucm answers
# ENOSYS, which the library reports as the classic record alone.
MODE=$(sed -n 's/^MODE=//p' /ibr/config 2>/dev/null)
if [ "$MODE" = in-tree ]; then
	want="sets 0 alternate 0 lap 0 apm_events 0 remote_sa 0" wforms=0x2b wmax="max_records 1 max_bytes 72"
else
	want="sets 1 alternate 1 lap 1 apm_events 1 remote_sa [01]"
	wforms="0x2b 0x03 0x0b 0x0a 0x2a 0x12 0x2d 0x05 0x0d 0x0c 0x2c 0x14"
	wmax="max_records 16 max_bytes 1152"
fi
if [ -x /ibr/bin/rdma_path_caps ]; then
	if /ibr/bin/rdma_path_caps >/tmp/pathcaps.out 2>&1; then
		forms=$(awk '$1 == "form" { print $2 }' /tmp/pathcaps.out | paste -sd' ')
		if grep -Eqx "$want" /tmp/pathcaps.out && grep -qxF "$wmax" /tmp/pathcaps.out &&
			[ "$forms" = "$wforms" ]; then
			t_pass librdmacm:path-caps
		else
			t_fail librdmacm:path-caps "rdma_path_caps ($MODE) does not report '$want', '$wmax', forms $wforms"
			diag_file /tmp/pathcaps.out
		fi
	else
		t_fail librdmacm:path-caps "rdma_path_caps failed"
		diag_file /tmp/pathcaps.out
	fi
else
	t_skip librdmacm:path-caps "rdma_path_caps is not in the image (the series' example)"
fi

# The APM calls on a connected RoCE id (rdma_path_caps -a against
# rdma_server): rdma_set_apm_events() is taken by the overlay and
# EOPNOTSUPP on the in-tree kernel (its ENOSYS); rdma_load_alt_path() asks
# the query on the id itself: no LAP on a RoCE port (overlay) and no query
# (in-tree) are both EOPNOTSUPP, nothing sent. The connection then still
# carries rdma_server's message exchange and both sides disconnect and
# exit 0 within seconds (a side left waiting for a DREP would take the
# CM's retries, about a minute: the 30 s bound catches that).
if [ -x /ibr/bin/rdma_path_caps ]; then
	if [ "$MODE" = in-tree ]; then
		wev="rdma_set_apm_events: Operation not supported (95)"
	else
		wev="rdma_set_apm_events: ok"
	fi
	wlap="rdma_load_alt_path: Operation not supported (95)"
	if server_client apm 7573 30 "rdma_server -s $RXE_IP -p 7573" 		"/ibr/bin/rdma_path_caps -a -d $RXE_IP -p 7573"; then
		if grep -qxF connected /tmp/apm.client && grep -qxF "$wev" /tmp/apm.client &&
			grep -qxF "$wlap" /tmp/apm.client && grep -qxF exchanged /tmp/apm.client; then
			t_pass librdmacm:apm-calls
		else
			t_fail librdmacm:apm-calls "want 'connected', '$wev', '$wlap' and 'exchanged'"
			diag_file /tmp/apm.client
		fi
	else
		t_fail librdmacm:apm-calls "$why"
	fi
else
	t_skip librdmacm:apm-calls "rdma_path_caps is not in the image (the series' example)"
fi
t_summary
