#!/bin/sh
# shellcheck shell=sh
# guest-seconds: 46 (measured under TCG; tests/vm/run --boots balances by it)
# Robustness on simfab's routed topology: bad input at the stack's doors,
# each refused or handled as documented, counters moving, no oops or WARN
# (the harness checks the whole kernel log), and the stack still working
# afterwards. Random values come from awk's rand() with the seed printed
# (ibr_robust_seed=N on the kernel command line repeats a run).
#
# robust:blob-*    RDMA_OPTION_IB_PATH (docs/path-records.md): lengths at
#                  and around the limits, records of random bytes with
#                  the classic flags (taken: the parser looks only at the
#                  flags and the routed test) or with random unknown flag
#                  bits (skipped: nothing usable, -EINVAL); a refused
#                  blob leaves the id in ADDR_RESOLVED (a good one is
#                  still taken on it).
# robust:rsa-*     ib_remote_sa requests with one field at a random wrong
#                  value (docs/remote-sa-protocol.md, the responder's
#                  table): its status (none: a malformed request is
#                  dropped unanswered) and counter.
# robust:cm-*      CM MADs made by hand (umad-send) at a1's ib_cm: a DREQ
#                  for no connection is answered by a DREP and counted as
#                  a duplicate; REQs, REPs and RTUs of random bytes are
#                  counted and none is answered with anything but a REJ;
#                  an unknown attribute is dropped uncounted.
# robust:sa-*      SA MADs at a host: a Get is answered UNSUPPORTED by
#                  ib_mad (no SA there); a GetResp nobody asked for is
#                  dropped.
# robust:after-*   a routed connection a1 -> b1 still works.
# shellcheck source=tests/vm/lib/guest.sh
. /ibr/lib/guest.sh
# shellcheck source=tests/vm/lib/simfab.sh
. /ibr/lib/simfab.sh

T=simfab-robust
CM=/ibr/bin/simfab-cm
U=/ibr/bin/umad-send
Q=/ibr/bin/ib-remote-sa-query
D=/sys/kernel/debug/simfab
S=/sys/kernel/ib_remote_sa
TOPOFILE=/ibr/simfab/topology/routed.topo

if ! has_mod simfab || [ ! -f "$TOPOFILE" ] || [ ! -x "$CM" ]; then
	t_skip $T "simfab.ko, simfab-cm or $TOPOFILE not in the image (make simfab)"
	t_summary
	exit 0
fi
seed=$(awk 'BEGIN { srand(); print srand() % 100000 }')
# shellcheck disable=SC2013 # one line of words
for arg in $(cat /proc/cmdline); do
	case $arg in ibr_robust_seed=*) seed=${arg#*=} ;; esac
done
diag "seed $seed (ibr_robust_seed=$seed repeats this run)"
# rnd N [MIN MAX]: N random numbers, one a line (from the seed, in order)
rnd_n=0
rnd() {
	rnd_n=$((rnd_n + 1))
	awk -v s=$((seed + rnd_n)) -v n="$1" -v lo="${2:-0}" -v hi="${3:-255}" \
		'BEGIN { srand(s); for (i = 0; i < n; i++) print lo + int(rand() * (hi - lo + 1)) }'
}
# rhex N: N random bytes as hex
rhex() {
	rnd "$1" | awk '{ printf "%02x", $1 } END { print "" }'
}

modprobe ib_remote_sa 2>/dev/null
TOPO=/tmp/rb.topo
if ! sf_load_topo "$TOPOFILE" rdma_ucm ib_umad; then
	t_fail $T:load "modprobe rdma_ucm / ib_umad / simfab with $TOPOFILE failed"
	t_summary
	exit 0
fi
dev_of() { topo_host "${1%/*}" dev; }
AP=a1/1 A2P=a2/1 BP=b1/1
ALID=$(topo_port $AP lid)

# ---- RDMA_OPTION_IB_PATH blobs ---------------------------------------------------
# blob NAME WANT LEN PATHSTEPS...: on a fresh id in ADDR_RESOLVED, queue
# the records and set them (LEN bytes of them; -: all); WANT ok:
# ROUTE_RESOLVED; einval: the set fails with EINVAL, and then the classic
# record is still taken on that id.
CLASSIC="flags=0x2b dgid=$(port_gid $BP) sgid=$(port_gid $AP) dlid=1 slid=$ALID pkey=0xffff mtu=3 rate=3 hop_limit=255 packet_life=18 reversible=1 numb_path=1"
blob() {
	_n=$1 _w=$2 _l=$3
	shift 3
	_sp=set-path
	[ "$_l" = - ] || _sp="set-path len=$_l"
	if [ "$_w" = ok ]; then
		set -- "$@" "$_sp" 'wait ROUTE_RESOLVED id=cli'
	else
		set -- "$@" "!$_sp" "path $CLASSIC" 'set-path' 'wait ROUTE_RESOLVED id=cli'
	fi
	timeout 30 "$CM" 'timeout 5000' 'id cli ps=ib' "bind gid=$(port_gid $AP)" \
		"resolve-addr dst-gid=$(port_gid $BP) dst-port=7700 timeout=5000" \
		'wait ADDR_RESOLVED id=cli' "$@" >"/tmp/rb-$_n.out" 2>&1
	_rc=$?
	chk_begin
	[ $_rc -eq 0 ] || _bad="simfab-cm exit $_rc"
	if [ "$_w" = einval ] && ! grep -q '^expected-failure .* errno=22 ' "/tmp/rb-$_n.out"; then
		_bad="$_bad not-EINVAL($(grep '^expected-failure' "/tmp/rb-$_n.out"))"
	fi
	chk_end "robust:blob-$_n" "/tmp/rb-$_n.out"
}
P="path $CLASSIC"
blob len-0 einval 0 "$P"
blob len-1 einval 1 "$P"
blob len-71 einval 71 "$P"
blob len-73 einval 73 "$P" "$P"
blob len-72 ok - "$P"
blob len-143 einval 143 "$P" "$P"
# 16 records (the most a set has); 17 are no set and are read as 6.1
# reads any blob of whole records, its first classic record alone (issue
# 23): taken with a classic record, EINVAL without one; 16 and a byte
set --
i=0
while [ $i -lt 16 ]; do set -- "$@" "$P"; i=$((i + 1)); done
blob records-16 ok - "$@"
blob records-17 ok - "$@" "$P"
blob len-1153 einval 1153 "$@" "$P"
NC="path $(echo "$CLASSIC" | sed 's/^flags=0x2b/flags=0x03/')"
set --
i=0
while [ $i -lt 17 ]; do set -- "$@" "$NC"; i=$((i + 1)); done
blob records-17-no-classic einval - "$@"
# random record bytes: taken with the classic flags, whatever they say
i=1
while [ $i -le 8 ]; do
	blob "random-classic-$i" ok - "path flags=0x2b raw=$(rhex 64)"
	i=$((i + 1))
done
# random flags with an unknown bit: skipped, nothing usable ...
i=1
while [ $i -le 6 ]; do
	f=$(rnd 1 1 67108863 | awk '{ printf "0x%x", $1 * 64 + ($1 % 64) }')
	blob "random-unknown-flags-$i" einval - "path flags=$f raw=$(rhex 64)"
	# ... and before a good record, that one is taken
	blob "random-unknown-then-classic-$i" ok - "path flags=$f raw=$(rhex 64)" "$P"
	i=$((i + 1))
done

# ---- ib_remote_sa requests with a random wrong field ----------------------------
if [ -x "$Q" ] && has_mod ib_remote_sa; then
	cnt() { cat "$S/$(dev_of "$1")/${1#*/}/counters/$2" 2>/dev/null || echo x; }
	# rsa NAME COUNTER STATUS ARGS...: from a1 to b1's responder
	rsa() {
		_n=$1 _c=$2 _st=$3
		shift 3
		_c0=$(cnt $BP "$_c")
		_r0=$(cnt $BP requests)
		timeout 30 "$Q" --kv --retries 0 --timeout 2000 -C "$(dev_of $AP)" -P 1 "$@" "$(port_gid $BP)" \
			>"/tmp/rb-rsa-$_n.out" 2>&1
		chk_begin
		_got=$(sed -n 's/^status=//p' "/tmp/rb-rsa-$_n.out" | head -n 1)
		# none: dropped unanswered (the tool times out)
		if [ "$_st" = none ]; then
			chk status "$_got" none
		else
			chk_num status "$_got" "$_st"
		fi
		chk_num "$_c" $(($(cnt $BP "$_c") - _c0)) 1
		chk_num requests $(($(cnt $BP requests) - _r0)) 1
		chk_end "robust:rsa-$_n" "/tmp/rb-rsa-$_n.out"
	}
	# ClassVersions 0 and 2-7 reach the responder (8 and above: ib_mad)
	for v in $(rnd 2 2 7) 0; do rsa "class-version-$v" rej_bad_version 0x0004 --class-version "$v"; done
	for a in $(rnd 3 2 65535); do
		[ "$a" -ne 53 ] || a=54		# 0x0035 is PathRecord
		rsa "attr-$a" rej_bad_attr 0x000c --attr "$a"
	done
	for o in $(rnd 2 9 65535) 0; do rsa "attr-offset-$o" rej_malformed none --attr-offset "$o"; done
	for m in $(rnd 2 1 2147483647); do rsa "attr-mod-$m" rej_malformed none --attr-mod "$m"; done
	for k in $(rnd 2 1 2147483647); do rsa "sm-key-$k" rej_malformed none --sm-key "$k"; done
	for b in $(rnd 2 1 255); do rsa "rmpp-byte-$b" rej_malformed none --rmpp-byte "$b"; done
	# SGID|DGID with a LID bit (DLID 0x10, SLID 0x20): forbidden
	for l in $(rnd 2 1 3); do
		rsa "mask-lid-$l" rej_bad_mask none --comp-mask $((0xc | (l << 4)))
	done
else
	t_skip "$T:rsa" "ib-remote-sa-query or ib_remote_sa.ko not in the image"
fi

# ---- CM and SA MADs by hand, a2 -> a1 -----------------------------------------------
if [ -x "$U" ]; then
	CMC=/sys/class/infiniband/$(dev_of $AP)/ports/1
	cmc() { cat "$CMC/$1/$2"; }
	# send NAME HEX [--wait MS]: from a2 to a1's QP1
	send() {
		_n=$1 _h=$2
		shift 2
		timeout 30 "$U" -C "$(dev_of $A2P)" -P 1 --dlid "$ALID" "$@" "$_h" >"/tmp/rb-$_n.out" 2>&1
	}
	# hdr CLASS VERSION METHOD ATTR: a MAD header with a random TID
	hdr() {
		printf '01%02x%02x%02x00000000%s%04x0000%08x' "$1" "$2" "$3" "$(rhex 8)" "$4" 0
	}
	echo clear >$D/ctl
	# A DREQ for no connection: a DREP back (IBA 12.9.8.4; 6.1 cm.c
	# cm_dreq_handler), counted as a duplicate. One DREP on the wire; ib_cm
	# counts an answer sent without a connection as one retry
	# (cm_send_handler): cm_tx_msgs +2, cm_tx_retries +1.
	d0=$(cmc cm_rx_duplicates dreq) dt0=$(cmc cm_tx_msgs drep) dr0=$(cmc cm_tx_retries drep)
	send dreq "$(hdr 7 2 3 0x0015)$(rhex 8)"
	sleep 1
	chk_begin
	chk_num dup-dreq $(($(cmc cm_rx_duplicates dreq) - d0)) 1
	chk_num tx-drep $(($(cmc cm_tx_msgs drep) - dt0)) 2
	chk_num tx-retries-drep $(($(cmc cm_tx_retries drep) - dr0)) 1
	cat $D/capture >/tmp/rb-dreq.cap
	chk_num wire-drep "$(grep -c " at=$A2P .* class=0x07 .* attr=0x0016 .* verdict=delivered " /tmp/rb-dreq.cap)" 1
	chk_end robust:cm-dreq-no-connection /tmp/rb-dreq.out /tmp/rb-dreq.cap
	# REQ, REP, RTU of random bytes: counted; nothing but REJs answers them.
	echo clear >$D/ctl
	for a in 0x0010 0x0013 0x0014; do
		name=$(case $a in 0x0010) echo req ;; 0x0013) echo rep ;; *) echo rtu ;; esac)
		r0=$(cmc cm_rx_msgs "$name")
		i=1
		while [ $i -le 5 ]; do
			send "$name-$i" "$(hdr 7 2 3 $a)$(rhex 232)"
			i=$((i + 1))
		done
		sleep 1
		chk_begin
		chk_num "rx-$name" $(($(cmc cm_rx_msgs "$name") - r0)) 5
		chk_end "robust:cm-random-$name-counted"
	done
	cat $D/capture >/tmp/rb-cmrand.cap
	chk_begin
	# a1's answers to a2: REJ (0x0012) only
	other=$(grep " at=$A2P .* class=0x07 " /tmp/rb-cmrand.cap | grep -v ' attr=0x0012 ' | head -n 1)
	[ -z "$other" ] || _bad="answered with: $(capf "$other" attr)"
	chk_end robust:cm-random-only-rej /tmp/rb-cmrand.cap
	# An attribute ib_cm does not know: dropped, no counter moves.
	tot0=$(cat "$CMC"/cm_rx_msgs/* | awk '{ s += $1 } END { print s }')
	send unknown-attr "$(hdr 7 2 3 0x00ff)$(rhex 232)"
	sleep 1
	chk_begin
	chk_num rx-total "$(cat "$CMC"/cm_rx_msgs/* | awk '{ s += $1 } END { print s }')" "$tot0"
	chk_end robust:cm-unknown-attr-dropped
	# An SA Get at a host that is not the SM port (a1 is A's): no SA
	# there, ib_mad answers UNSUPPORTED (a2 -> a3).
	timeout 30 "$U" -C "$(dev_of $A2P)" -P 1 --dlid "$(topo_port a3/1 lid)" --wait 3000 \
		"$(hdr 3 2 1 0x0035)" >/tmp/rb-sa-get.out 2>&1
	chk_begin
	chk answer-method "$(sed -n 's/^answer.method=//p' /tmp/rb-sa-get.out)" 0x81
	chk answer-status "$(sed -n 's/^answer.status=//p' /tmp/rb-sa-get.out)" 0x000c
	chk_end robust:sa-get-at-host-unsupported /tmp/rb-sa-get.out
	# A GetResp nobody asked for: dropped (no answer, nothing logged).
	echo clear >$D/ctl
	send sa-getresp "$(hdr 3 2 0x81 0x0035)$(rhex 232)"
	sleep 1
	chk_begin
	! grep -q " sn=$(topo_host a1 subnet) .* slid=$ALID .* class=0x03 " $D/capture || _bad="a1 answered it"
	chk_end robust:sa-unsolicited-getresp-dropped
else
	t_skip "$T:cm" "umad-send not in the image (make simfab)"
fi

# ---- and the stack still works -------------------------------------------------------
echo Y >/sys/module/rdma_cm/parameters/remote_sa 2>/dev/null
cm_connect after $AP $BP 7701
t_check $T:robust:after-routed-connection "simfab-cm exit $? (see the diagnostics)" \
	grep -qx 'event ESTABLISHED id=conn status=0' /tmp/cm-after.out || diag_file /tmp/cm-after.out
rmmod ib_umad 2>/dev/null
if rmmod simfab; then t_pass $T:unload; else t_fail $T:unload "rmmod simfab failed"; fi
t_summary
