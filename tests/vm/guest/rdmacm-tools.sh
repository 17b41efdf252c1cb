#!/bin/sh
# shellcheck shell=sh
# rdma-core's librdmacm tools run over Soft-RoCE through the loaded CM stack:
# each server runs in the background, its client connects to the same rxe
# device's address; both are bounded so a hang fails instead of blocking.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

if ! rxe_up; then
	t_fail rdmacm-tools:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi
modprobe rdma_ucm || t_fail rdmacm-tools:modprobe "modprobe rdma_ucm failed"

# rping: 10 verified messages; the data lines must show up on the client.
if rping_check rping 7174 10; then
	t_pass rdmacm-tools:rping
	diag "rping: $(grep -m1 'ping data' /tmp/rping.client)"
else
	t_fail rdmacm-tools:rping "$why"
fi

# ucmatose: connect, 10 sends each way, disconnect.
if server_client ucmatose 7471 60 \
	"ucmatose -b $RXE_IP -p 7471" "ucmatose -s $RXE_IP -p 7471"; then
	t_pass rdmacm-tools:ucmatose
else
	t_fail rdmacm-tools:ucmatose "$why"
fi

# cmtime: times each connection step over several connections; its server
# serves until stopped. The client's table must show the connect step.
if SERVER_PERSISTS=1 server_client cmtime 7472 90 \
	"cmtime -b $RXE_IP -p 7472 -c 10" "cmtime -s $RXE_IP -p 7472 -c 10"; then
	if grep -q '^connect ' /tmp/cmtime.client; then
		t_pass rdmacm-tools:cmtime
		diag "cmtime: $(grep '^connect ' /tmp/cmtime.client)"
	else
		t_fail rdmacm-tools:cmtime "client printed no connect timing"
		diag_file /tmp/cmtime.client
	fi
else
	t_fail rdmacm-tools:cmtime "$why"
fi

# rdma_server/rdma_client: the rdma_create_ep / rdma_get_request path.
if server_client rdma_server 7473 60 \
	"rdma_server -s $RXE_IP -p 7473" "rdma_client -s $RXE_IP -p 7473"; then
	t_pass rdmacm-tools:rdma_server-client
else
	t_fail rdmacm-tools:rdma_server-client "$why"
fi

t_summary
