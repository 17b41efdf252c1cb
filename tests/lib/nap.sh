# shellcheck shell=bash
# nap SECONDS: wait without starting a process: bash's read timing out on
# a pipe that nothing writes to (this shell holds its write end). The
# harness polls once or twice a second for as long as its guests and
# tiers run, and a sleep(1) a poll cost a process each time: about 5 ms of
# CPU on these machines, 8,000 of them in a make check.
nap() {
	[ -n "${_nap_fd:-}" ] || exec {_nap_fd}<> <(:)
	read -r -t "$1" -u "$_nap_fd" _ || true
}
