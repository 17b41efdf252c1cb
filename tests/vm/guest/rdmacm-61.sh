#!/bin/sh
# shellcheck shell=sh
# rdmacm:61-transcript: an unmodified program on the distribution's own
# librdmacm (librdmacm1, never the patched library) sets every
# rdma_set_option() option Linux 6.1 has and meets the rdma_cm events of
# connection setup and teardown that Soft-RoCE produces without faults
# (tests/simfab/client/rdmacm-61.c: address and
# route resolution, RDMA_OPTION_IB_PATH refused as 6.1 refuses it, on a
# connected id too, a connection with QPs, one without (CONNECT_RESPONSE,
# rdma_establish), a consumer reject, a port without a listener, an
# off-subnet address, and IB option 2, which ib-routed took before
# issue 23). Its transcript must be 6.1's, below, on the overlay (vm-rxe)
# and on the in-tree stack (vm-stock: stock-rdmacm-61.sh runs this file),
# so the overlay shows an unmodified program nothing new (issue 23). The
# transcript was taken on the stock 6.1.0-57 kernel (vm-stock).
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

P=/ibr/bin/rdmacm-61
if [ ! -x "$P" ]; then
	t_skip rdmacm:61-transcript "rdmacm-61 is not in the image (make simfab; librdmacm-dev)"
	t_summary
	exit
fi
if ! rxe_up; then
	t_fail rdmacm:61-transcript "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi
modprobe rdma_ucm || t_fail rdmacm:modprobe "modprobe rdma_ucm failed"
r=$(/lib64/ld-linux-x86-64.so.2 --list "$P" | awk '$1 == "librdmacm.so.1" { print $3 }')
case $r in
*/ib-routed/*|'') t_fail rdmacm:61-distribution-library "rdmacm-61 loads librdmacm.so.1 from '${r:-nowhere}'" ;;
*) t_pass rdmacm:61-distribution-library ;;
esac

unset LD_LIBRARY_PATH
timeout 120 "$P" "$RXE_IP" 7480 >/tmp/rdmacm-61.out 2>/tmp/rdmacm-61.err
rc=$?
cat >/tmp/rdmacm-61.want <<'WANT'
step listen-tos rc=0
step listen-tos-bad-len rc=-1 errno=EINVAL
step listen-reuseaddr rc=0
step listen-afonly rc=0
step listen-ack-timeout rc=0
step listen-unknown-id-option rc=-1 errno=ENOSYS
step listen-ib-option-2 rc=-1 errno=ENOSYS
step active-tos rc=0
step active-tos-bad-len rc=-1 errno=EINVAL
step active-reuseaddr rc=0
step active-afonly rc=0
step active-ack-timeout rc=0
step active-unknown-id-option rc=-1 errno=ENOSYS
step active-ib-option-2 rc=-1 errno=ENOSYS
step listen-bind rc=0
step listen rc=0
step resolve-addr rc=0
event RDMA_CM_EVENT_ADDR_RESOLVED status=0
step ib-path-short rc=-1 errno=EINVAL
step ib-path-no-classic rc=-1 errno=EINVAL
step resolve-route rc=0
event RDMA_CM_EVENT_ROUTE_RESOLVED status=0
step active-qp rc=0
step connect rc=0
event RDMA_CM_EVENT_CONNECT_REQUEST status=0
step passive-qp rc=0
step accept rc=0
event RDMA_CM_EVENT_ESTABLISHED status=0
event RDMA_CM_EVENT_ESTABLISHED status=0
established-both yes
step ib-path-connected rc=-1 errno=EINVAL
step qp-disconnect rc=0
event RDMA_CM_EVENT_DISCONNECTED status=0
step qp-passive-disconnect rc=0
event RDMA_CM_EVENT_DISCONNECTED status=0
qp-disconnected-both yes
step noqp-resolve-addr rc=0
event RDMA_CM_EVENT_ADDR_RESOLVED status=0
step noqp-resolve-route rc=0
event RDMA_CM_EVENT_ROUTE_RESOLVED status=0
step noqp-connect rc=0
event RDMA_CM_EVENT_CONNECT_REQUEST status=0
step noqp-accept rc=0
event RDMA_CM_EVENT_CONNECT_RESPONSE status=0
step noqp-establish rc=0
event RDMA_CM_EVENT_ESTABLISHED status=0
step noqp-disconnect rc=0
event RDMA_CM_EVENT_DISCONNECTED status=0
step noqp-passive-disconnect rc=0
event RDMA_CM_EVENT_DISCONNECTED status=0
noqp-disconnected-both yes
step reject-resolve-addr rc=0
event RDMA_CM_EVENT_ADDR_RESOLVED status=0
step reject-resolve-route rc=0
event RDMA_CM_EVENT_ROUTE_RESOLVED status=0
step reject-qp rc=0
step reject-connect rc=0
event RDMA_CM_EVENT_CONNECT_REQUEST status=0
step reject rc=0
event RDMA_CM_EVENT_REJECTED status=28
step nolisten-resolve-addr rc=0
event RDMA_CM_EVENT_ADDR_RESOLVED status=0
step nolisten-resolve-route rc=0
event RDMA_CM_EVENT_ROUTE_RESOLVED status=0
step nolisten-qp rc=0
step nolisten-connect rc=0
event RDMA_CM_EVENT_REJECTED status=8
step offnet-resolve-addr rc=0
event RDMA_CM_EVENT_ADDR_RESOLVED status=0
done
WANT
if [ "$rc" -ne 0 ]; then
	t_fail rdmacm:61-transcript "rdmacm-61 exit $rc: $(tail -n 1 /tmp/rdmacm-61.err)"
	diag_file /tmp/rdmacm-61.out
elif diff -u /tmp/rdmacm-61.want /tmp/rdmacm-61.out >/tmp/rdmacm-61.diff; then
	t_pass rdmacm:61-transcript
else
	t_fail rdmacm:61-transcript "the transcript is not 6.1's (diff below)"
	diag_file /tmp/rdmacm-61.diff
fi
t_summary
