#!/bin/sh
# shellcheck shell=sh
# simfab-cm (tests/simfab/client), the raw /dev/infiniband/rdma_cm client,
# against Soft-RoCE: one process resolves 192.0.2.1 (AF_INET), listens and
# connects to itself on the same rxe device without QPs (qp_num only in the
# REQ/REP), accepts on both sides (the active side's accept sends the RTU),
# and reads back INIT_QP_ATTR and QUERY_PATH/QUERY_ADDR. Then the same for
# RDMA_PS_IB, and RDMA_OPTION_IB_PATH with a hand-made path record and with
# the set the patched librdmacm's builder makes from the kernel's route.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh

CM=$(command -v simfab-cm 2>/dev/null)
[ -n "$CM" ] || CM=/ibr/bin/simfab-cm
if [ ! -x "$CM" ]; then
	t_skip cmclient-rxe "simfab-cm is not in the image (make -C tests/simfab/client O=build/simfab; mkinitramfs must copy it)"
	t_summary
	exit
fi

if ! rxe_up; then
	t_fail cmclient-rxe:rxe "could not bring up $RXE_DEV on $RXE_NETDEV"
	t_summary
	exit
fi
modprobe rdma_ucm || t_fail cmclient-rxe:modprobe "modprobe rdma_ucm failed"

# has FILE LINE: FILE has exactly LINE.
has() {
	grep -qxF "$2" "$1"
}

# expect NAME FILE LINE...: one result, passing when every LINE is in FILE.
expect() {
	_n=$1 _f=$2
	shift 2
	for _l in "$@"; do
		if ! has "$_f" "$_l"; then
			t_fail "cmclient-rxe:$_n" "no line '$_l'"
			return 1
		fi
	done
	t_pass "cmclient-rxe:$_n"
}

# connect_test PS PORT: the whole exchange in one simfab-cm run.
connect_test() {
	_ps=$1 _port=$2 _o=/tmp/cmclient-$1.out
	if ! timeout 60 "$CM" 'timeout 15000' \
		"id srv ps=$_ps" "bind ip=$RXE_IP port=$_port" 'listen backlog=4' \
		"id cli ps=$_ps" \
		"resolve-addr dst-ip=$RXE_IP dst-port=$_port timeout=5000" \
		'wait ADDR_RESOLVED id=cli' \
		'resolve-route timeout=5000' 'wait ROUTE_RESOLVED id=cli' \
		'tag cli' 'query-addr' 'query-path' \
		'connect qpn=0x111 rr=4 id-depth=2 retry=5 rnr-retry=6' \
		'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' \
		'tag srv-rtr' 'qp-attr rtr' \
		'accept qpn=0x222 rr=2 id-depth=4 rnr-retry=3' \
		'tag cli' 'wait CONNECT_RESPONSE id=cli' \
		'tag cli-init' 'qp-attr init' 'tag cli-rtr' 'qp-attr rtr' \
		'tag cli-rts' 'qp-attr rts' \
		'accept id=cli' \
		'tag conn' 'wait ESTABLISHED id=conn' \
		'tag conn-init' 'qp-attr init' 'tag conn-rtr' 'qp-attr rtr' \
		'tag conn-rts' 'qp-attr rts' \
		'tag conn' 'query-path' 'query-addr' \
		'tag' 'disconnect id=cli' 'wait DISCONNECTED id=conn' \
		'disconnect id=conn' 'wait DISCONNECTED id=cli' \
		'destroy id=conn' 'destroy id=cli' 'destroy id=srv' \
		>"$_o" 2>"$_o.err"; then
		t_fail "cmclient-rxe:$_ps-connect" "simfab-cm failed: $(tail -n 1 "$_o.err")"
		diag_file "$_o.err"
		diag_file "$_o"
		return
	fi
	t_pass "cmclient-rxe:$_ps-connect"
	expect "$_ps-events" "$_o" \
		'event ADDR_RESOLVED id=cli status=0' \
		'event ROUTE_RESOLVED id=cli status=0' \
		'srv.event CONNECT_REQUEST id=conn status=0' \
		'srv.event.qp_num=0x000111' \
		'cli.event CONNECT_RESPONSE id=cli status=0' \
		'cli.event.qp_num=0x000222' \
		'conn.event ESTABLISHED id=conn status=0' \
		'event DISCONNECTED id=conn status=0' \
		'event DISCONNECTED id=cli status=0'
	# RoCE v2 over IPv4: GID ::ffff:192.0.2.1, global routing, the peer's
	# qp_num from the REQ/REP as dest_qp_num on each side, and each side's
	# RDMA read depths and retry counts as the REQ and REP negotiated them
	# (active sent rr=4 depth=2 retry=5 rnr=6, passive rr=2 depth=4 rnr=3).
	expect "$_ps-qp-attr-active" "$_o" \
		'cli-init.qp_attr.qp_state=1' \
		'cli-init.qp_attr.port_num=1' \
		'cli-rtr.qp_attr.qp_state=2' \
		'cli-rtr.qp_attr.dest_qp_num=0x000222' \
		'cli-rtr.qp_attr.ah.is_global=1' \
		"cli-rtr.qp_attr.ah.grh.dgid=::ffff:$RXE_IP" \
		'cli-rtr.qp_attr.ah.port_num=1' \
		'cli-rtr.qp_attr.max_dest_rd_atomic=4' \
		'cli-rts.qp_attr.qp_state=3' \
		'cli-rts.qp_attr.max_rd_atomic=2' \
		'cli-rts.qp_attr.retry_cnt=5' \
		'cli-rts.qp_attr.rnr_retry=3'
	expect "$_ps-qp-attr-passive" "$_o" \
		'srv-rtr.qp_attr.dest_qp_num=0x000111' \
		'conn-init.qp_attr.port_num=1' \
		'conn-rtr.qp_attr.dest_qp_num=0x000111' \
		"conn-rtr.qp_attr.ah.grh.dgid=::ffff:$RXE_IP" \
		'conn-rtr.qp_attr.max_dest_rd_atomic=2' \
		'conn-rts.qp_attr.max_rd_atomic=4' \
		'conn-rts.qp_attr.retry_cnt=5' \
		'conn-rts.qp_attr.rnr_retry=6'
	# Both sides agree on the PSNs: the active's sq_psn is the passive's
	# rq_psn and the other way round.
	_a_sq=$(sed -n 's/^cli-rts\.qp_attr\.sq_psn=//p' "$_o")
	_a_rq=$(sed -n 's/^cli-rtr\.qp_attr\.rq_psn=//p' "$_o")
	_p_sq=$(sed -n 's/^conn-rts\.qp_attr\.sq_psn=//p' "$_o")
	_p_rq=$(sed -n 's/^conn-rtr\.qp_attr\.rq_psn=//p' "$_o")
	if [ -n "$_a_sq" ] && [ "$_a_sq" = "$_p_rq" ] && [ "$_a_rq" = "$_p_sq" ]; then
		t_pass "cmclient-rxe:$_ps-qp-attr-psn"
	else
		t_fail "cmclient-rxe:$_ps-qp-attr-psn" "active sq/rq $_a_sq/$_a_rq, passive sq/rq $_p_sq/$_p_rq"
	fi
	_mtu=$(sed -n 's/^cli-rtr\.qp_attr\.path_mtu_bytes=//p' "$_o")
	expect "$_ps-query-path" "$_o" \
		'cli.path.num_paths=1' \
		'cli.path[0].flags=0x2b' \
		"cli.path[0].dgid=::ffff:$RXE_IP" \
		"cli.path[0].sgid=::ffff:$RXE_IP" \
		'conn.path.num_paths=1'
	expect "$_ps-query-addr" "$_o" \
		"cli.addr.src.ip=$RXE_IP" \
		"cli.addr.dst.ip=$RXE_IP" \
		"cli.addr.dst.port=$_port" \
		'cli.addr.port_num=1' \
		"conn.addr.src.port=$_port"
}

connect_test tcp 7480
connect_test ib 7481

# RDMA_OPTION_IB_PATH: a path record set by hand instead of resolve-route
# comes back from QUERY_PATH field for field, after the ROUTE_RESOLVED that
# ucma raises for it.
_o=/tmp/cmclient-setpath.out
if ! timeout 60 "$CM" 'timeout 15000' 'id p ps=tcp' \
	"resolve-addr dst-ip=$RXE_IP dst-port=7482" 'wait ADDR_RESOLVED' \
	"path dgid=::ffff:$RXE_IP sgid=::ffff:$RXE_IP pkey=0xffff mtu=3 rate=3 packet_life=14 hop_limit=64 tclass=0 reversible=1 numb_path=1 sl=0" \
	'set-path' 'wait ROUTE_RESOLVED' 'query-path' 'qp-attr init' \
	'!listen' >"$_o" 2>"$_o.err"; then
	t_fail cmclient-rxe:set-path "simfab-cm failed: $(tail -n 1 "$_o.err")"
	diag_file "$_o.err"
	diag_file "$_o"
else
	expect set-path "$_o" \
		'event ROUTE_RESOLVED id=p status=0' \
		'path.num_paths=1' \
		"path[0].dgid=::ffff:$RXE_IP" \
		'path[0].mtu=3' \
		'path[0].rate=3' \
		'path[0].packet_life=14' \
		'path[0].reversible=1'
	# '!' steps must fail in the kernel: listen after resolve is EINVAL.
	expect expected-failure "$_o" 'expected-failure LISTEN errno=22 (Invalid argument)'
fi

# The patched librdmacm's path set builder (build-set: its own path_set.c)
# turns the kernel's route (QUERY_PATH after resolve-route) into the set
# for this kernel's capabilities (RDMA_USER_CM_QUERY_IBR_CAPS on the id, as
# librdmacm asks); the kernel takes that set through
# RDMA_OPTION_IB_PATH on a second id (ROUTE_RESOLVED) and the connection
# is established on it. On RoCE the route is one record: the set holds the
# classic record, the route's own.
_o=/tmp/cmclient-buildset.out
if ! timeout 60 "$CM" 'timeout 15000' \
	'id srv ps=tcp' "bind ip=$RXE_IP port=7483" 'listen backlog=4' \
	'id q ps=tcp' "resolve-addr dst-ip=$RXE_IP dst-port=7483 timeout=5000" \
	'wait ADDR_RESOLVED id=q' 'resolve-route timeout=5000' 'wait ROUTE_RESOLVED id=q' \
	'tag q' 'query-path' 'tag' 'build-set from=query' \
	'id cli ps=tcp' "resolve-addr dst-ip=$RXE_IP dst-port=7483 timeout=5000" \
	'wait ADDR_RESOLVED id=cli' 'set-path' 'wait ROUTE_RESOLVED id=cli' \
	'tag cli' 'query-path' 'connect qpn=0x333' \
	'tag srv' 'wait CONNECT_REQUEST id=srv as=conn' 'accept qpn=0x444' \
	'tag cli' 'wait CONNECT_RESPONSE id=cli' 'accept id=cli' \
	'tag conn' 'wait ESTABLISHED id=conn' 'tag' \
	'disconnect id=cli' 'wait DISCONNECTED id=conn' >"$_o" 2>"$_o.err"; then
	t_fail cmclient-rxe:librdmacm-build-set "simfab-cm failed: $(tail -n 1 "$_o.err")"
	diag_file "$_o.err"
	diag_file "$_o"
else
	_q=$(sed -n 's/^q\.path\[0\]\.dlid=//p' "$_o")
	expect librdmacm-build-set "$_o" \
		'build_set.caps=query' 'build_set.num=1' 'build_set[0].flags=0x2b' \
		"build_set[0].dgid=::ffff:$RXE_IP" "build_set[0].dlid=$_q" \
		'event ROUTE_RESOLVED id=cli status=0' \
		"cli.path[0].dgid=::ffff:$RXE_IP" \
		'conn.event ESTABLISHED id=conn status=0'
fi

# RDMA_USER_CM_QUERY_IBR_CAPS (docs/uapi.md): on an id bound to the RoCE
# port only path sets are in effect (caps 0x1: no alternate at connect, no
# LAP, no APM events, no remote SA); on an unbound id what an IB port would
# have (ALT_CONNECT, LAP, APM_EVENTS; REMOTE_SA with ib_remote_sa), the
# twelve record forms, 16 records of 72 bytes; a response buffer of 8 bytes
# gets the first 8 (version 1, length 152); librdmacm's path_set.c takes
# the whole answer and refuses the cut one (no sets, as for a stock kernel).
_o=/tmp/cmclient-caps.out
if ! timeout 60 "$CM" 'timeout 15000' \
	'id u ps=tcp' 'tag u' 'query-caps' \
	'id r ps=tcp' "resolve-addr dst-ip=$RXE_IP dst-port=7484 timeout=5000" \
	'wait ADDR_RESOLVED id=r' 'tag r' 'query-caps' 'tag r8' 'query-caps len=8' \
	>"$_o" 2>"$_o.err"; then
	t_fail cmclient-rxe:ibr-caps "simfab-cm failed: $(tail -n 1 "$_o.err")"
	diag_file "$_o.err"
else
	_uc=$(sed -n 's/^u\.caps\.caps=//p' "$_o")
	if [ $((${_uc:-0} & 0xf)) -ne 15 ]; then
		t_fail cmclient-rxe:ibr-caps "unbound id: caps ${_uc:-none}, want 0xf or 0x1f"
		diag_file "$_o"
	else
		expect ibr-caps "$_o" 'u.caps.version=1' 'u.caps.length=152' \
			'u.caps.max_records=16' 'u.caps.max_bytes=1152' 'u.caps.num_forms=12' \
			'u.caps.form[0]=0x2b roles=0xb' 'u.caps.lib.present=1' \
			'r.caps.caps=0x1' 'r.caps.num_forms=12' 'r.caps.lib.present=1' \
			'r.caps.lib.flags=0x1' \
			'r8.caps.version=1' 'r8.caps.length=152' 'r8.caps.caps=0x0' \
			'r8.caps.num_forms=0' 'r8.caps.lib.present=0'
	fi
fi

# Failures are reported: a wait for an event that never comes times out
# with exit status 3, and a kernel error exits 1 with the errno text.
timeout 30 "$CM" 'id x' 'wait ESTABLISHED timeout=300' >/tmp/cmclient-to.out 2>&1
_rc=$?
if [ $_rc -eq 3 ] && grep -q 'timeout after 300 ms' /tmp/cmclient-to.out; then
	t_pass cmclient-rxe:wait-timeout
else
	t_fail cmclient-rxe:wait-timeout "exit $_rc"
	diag_file /tmp/cmclient-to.out
fi
timeout 30 "$CM" 'id x' 'listen' 'listen' >/tmp/cmclient-err.out 2>&1
_rc=$?
if [ $_rc -eq 1 ] && grep -q 'LISTEN: .*(errno ' /tmp/cmclient-err.out; then
	t_pass cmclient-rxe:errno-reported
else
	t_fail cmclient-rxe:errno-reported "exit $_rc"
	diag_file /tmp/cmclient-err.out
fi

t_summary
