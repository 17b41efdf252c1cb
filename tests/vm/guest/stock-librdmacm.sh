#!/bin/sh
# shellcheck shell=sh
# The vm-stock tier (tests/vm/run --tier stock boots the distribution's
# own RDMA stack, no overlay): ib-routed's additions on a stock kernel
# answer with the documented errno and nothing else changes.
#
# stock:mode              the image really runs the in-tree modules.
# stock:ibr-enosys        raw rdma_ucm (simfab-cm): RDMA_USER_CM_QUERY_IBR_CAPS,
#                          RDMA_OPTION_IB_APM_EVENTS and RDMA_OPTION_IB_ALT_PATH
#                          are ENOSYS (ucma's unknown option), the classic
#                          RDMA_OPTION_IB_PATH record still gives
#                          ROUTE_RESOLVED.
# then librdmacm.sh: the patched librdmacm under rdmacm-utils, and its new
# calls (rdma_query_path_caps: the classic record alone;
# rdma_set_apm_events, rdma_load_alt_path: EOPNOTSUPP).
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

CM=/ibr/bin/simfab-cm
MODE=$(sed -n 's/^MODE=//p' /ibr/config 2>/dev/null)
if [ "$MODE" = in-tree ] && [ ! -f /ibr/stamp ] &&
	! find "/lib/modules/$(uname -r)/updates" -name '*.ko' 2>/dev/null | grep -q .; then
	t_pass stock:mode
else
	t_fail stock:mode "MODE=${MODE:-none}: not booted with --in-tree (tests/vm/run --tier stock)"
fi

if [ ! -x "$CM" ]; then
	t_skip stock:ibr-enosys "simfab-cm is not in the image (make simfab)"
elif ! rxe_up; then
	t_fail stock:ibr-enosys "could not bring up $RXE_DEV on $RXE_NETDEV"
else
	modprobe rdma_ucm
	_o=/tmp/stock-enosys.out
	if ! timeout 60 "$CM" 'timeout 15000' \
		'id q ps=tcp' "resolve-addr dst-ip=$RXE_IP dst-port=7491 timeout=5000" \
		'wait ADDR_RESOLVED id=q' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED id=q' \
		'!query-caps' '!set-option apm-events=1' \
		'tag q' 'query-path' 'tag' 'build-set from=query' '!set-alt-path' \
		'id cli ps=tcp' "resolve-addr dst-ip=$RXE_IP dst-port=7491 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' 'build-set from=query id=q' 'set-path id=cli' \
		'wait ROUTE_RESOLVED id=cli' >"$_o" 2>"$_o.err"; then
		t_fail stock:ibr-enosys "simfab-cm failed: $(tail -n 1 "$_o.err")"
		diag_file "$_o"
	else
		_bad=
		for _l in 'expected-failure QUERY IBR_CAPS errno=38 (Function not implemented)' \
			'expected-failure SET_OPTION apm-events errno=38 (Function not implemented)' \
			'expected-failure SET_OPTION IB_ALT_PATH errno=38 (Function not implemented)' \
			'build_set.caps=none' 'build_set.num=1' 'build_set[0].flags=0x2b' \
			'event ROUTE_RESOLVED id=cli status=0'; do
			grep -qxF -- "$_l" "$_o" || _bad="$_bad '$_l'"
		done
		if [ -z "$_bad" ]; then
			t_pass stock:ibr-enosys
		else
			t_fail stock:ibr-enosys "missing:$_bad"
			diag_file "$_o"
		fi
	fi
fi

# The patched librdmacm's checks, with their in-tree answers.
. /ibr/tests/librdmacm.sh
