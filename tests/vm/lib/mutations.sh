# shellcheck shell=sh
# The mutation checks' guest side (tests/simfab/mutate): several mutated
# simfab builds, one after the other, in one boot. Sourced by /init when
# the kernel command line has ibr_mutations=1; /ibr/mutations/list has a
# unit a line, "NAME<TAB>REGEX<TAB>TEST...", and /ibr/mutations/NAME/ the
# unit's simfab modules (simfab.ko and the test drivers built with it).
#
# For each unit: its modules replace those in /lib/modules/KVER/extra/
# (the same names and paths, so modules.dep stays right), its tests run
# as /init runs any test, and the unit stops at the first result line
# "not ok NAME" with NAME matching REGEX (the failure that catches the
# mutation: the rest of the test cannot change the verdict). Then
# everything the unit started is undone: every process but this one is
# killed, what it mounted is unmounted, every module loaded since the
# boot is unloaded, simfab's default topology is put back in modprobe.d
# and /tmp is emptied. A unit that does not leave the guest as the boot
# left it (a module that does not unload, a kernel warning or oops in its
# log) ends the boot: the host boots the units after it in a fresh guest,
# so no unit runs on what another left.
#
# On the result channel (fd 3), around each unit's tests:
#   # ibr-mutation-begin NAME
#   ...# ibr-begin TEST / the test's lines / # ibr-end TEST secs=N rc=N...
#   # ibr-mutation-cleanup NAME
#   # ibr-mutation-end NAME clean | dirty: WHY
# A unit with a begin and no end was cut short (the guest died or timed
# out in it); the host boots it again on its own.

# The module names loaded now, sorted, one a line.
mut_modules() {
	awk '{ print $1 }' /proc/modules | sort
}

# mut_unload: unload every module that is not in /run/ibr-mut/base; a
# module that others hold goes when they have gone, so a few passes.
mut_unload() {
	# A test driver runs its cases in its module init (simfab_rc_test):
	# killing its modprobe does not end them, and a module that is still
	# coming cannot go. Up to 20 s for them to end (a reboot is not much
	# dearer).
	for _i in $(seq 40); do
		grep -q ' Loading ' /proc/modules || break
		sleep 0.5
	done
	for _pass in 1 2 3 4 5 6 7 8; do
		mut_modules | grep -vxF -f /run/ibr-mut/base >/run/ibr-mut/extra
		[ -s /run/ibr-mut/extra ] || return 0
		while read -r _m; do
			[ -z "$(ls /sys/module/"$_m"/holders 2>/dev/null)" ] || continue
			timeout 30 rmmod "$_m" 2>/dev/null
		done </run/ibr-mut/extra
	done
	mut_modules | grep -vxF -f /run/ibr-mut/base >/run/ibr-mut/extra
	[ ! -s /run/ibr-mut/extra ]
}

# mut_test TEST REGEX: run one test, its output to the channel, killed at
# the first failure matching REGEX; status 0 when that failure came. Its
# time limit is /init's for any test.
# shellcheck disable=SC2154 # test_timeout: /init's
mut_test() {
	echo "# ibr-begin $1" >&3
	_t0=$(cut -d. -f1 /proc/uptime)
	: >/run/ibr-mut/out
	timeout "$test_timeout" sh "/ibr/tests/$1.sh" >/run/ibr-mut/out 2>&1 </dev/null &
	_pid=$!
	_caught=1
	while kill -0 "$_pid" 2>/dev/null; do
		if tr -d '\r' </run/ibr-mut/out | grep -Eq "^not ok [^ ]*($2)"; then
			_caught=0
			kill -KILL -1 2>/dev/null
			break
		fi
		sleep 0.5
	done
	wait "$_pid"
	_rc=$?
	tr -d '\r' </run/ibr-mut/out | grep -Eq "^not ok [^ ]*($2)" && _caught=0
	cat /run/ibr-mut/out >&3
	echo "# ibr-end $1 secs=$(($(cut -d. -f1 /proc/uptime) - _t0)) rc=$_rc" >&3
	return "$_caught"
}

mutation_units() {
	_kmod=/lib/modules/$(uname -r)/extra
	_bad='Oops|WARNING:|WARN|BUG:|Call Trace|general protection|Kernel panic'
	mkdir -p /run/ibr-mut
	# (at least a line: grep -f with no pattern matches nothing)
	{ echo '#'; mut_modules; } >/run/ibr-mut/base
	awk '{ print $2 }' /proc/mounts >/run/ibr-mut/mounts
	cp /etc/modprobe.d/simfab-topology.conf /run/ibr-mut/topology.conf 2>/dev/null
	while IFS='	' read -r _name _re _tests; do
		[ -n "$_name" ] || continue
		echo "# ibr-mutation-begin $_name" >&3
		_lines=$(dmesg | wc -l)
		cp "/ibr/mutations/$_name"/*.ko "$_kmod/"
		for _t in $_tests; do
			mut_test "$_t" "$_re" && break
		done
		# undo what the unit did (the kill: what a stopped test left
		# running; this shell, PID 1, is not signalled); the host gives
		# it a minute (tests/vm/run)
		echo "# ibr-mutation-cleanup $_name" >&3
		kill -KILL -1 2>/dev/null
		sleep 0.2
		_why=
		# what the unit mounted (configfs: its module goes with rdma_cm)
		awk '{ print $2 }' /proc/mounts | grep -vxF -f /run/ibr-mut/mounts | tac |
			while read -r _mp; do umount "$_mp" 2>/dev/null; done
		mut_unload || _why="modules still loaded: $(tr '\n' ' ' </run/ibr-mut/extra)"
		if dmesg | tail -n +"$((_lines + 1))" | grep -Eq "$_bad"; then
			_why="${_why:+$_why; }the kernel log: $(dmesg | tail -n +"$((_lines + 1))" | grep -Em1 "$_bad")"
		fi
		cp /run/ibr-mut/topology.conf /etc/modprobe.d/simfab-topology.conf 2>/dev/null
		find /tmp -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null
		if [ -n "$_why" ]; then
			echo "# ibr-mutation-end $_name dirty: $_why" >&3
			return 0
		fi
		echo "# ibr-mutation-end $_name clean" >&3
	done </ibr/mutations/list
}
