# shellcheck shell=sh
# Test result lines shared by every tier (host scripts and guest scripts).
#
# A result is one line:   ok NAME
#                         not ok NAME - REASON
#                         skip NAME - REASON
# tests/run collects these lines from every tier and prints the totals line
# "N passed, M failed, K skipped". A tier script sources this file, calls
# t_pass/t_fail/t_skip, and ends with t_summary (its exit status is 1 when
# anything failed).

t_passed=0
t_failed=0
t_skipped=0

t_pass() {
	t_passed=$((t_passed + 1))
	printf 'ok %s\n' "$1"
}

t_fail() {
	t_failed=$((t_failed + 1))
	printf 'not ok %s - %s\n' "$1" "${2:-failed}"
}

# A skip must say why.
t_skip() {
	t_skipped=$((t_skipped + 1))
	printf 'skip %s - %s\n' "$1" "${2:?t_skip needs a reason}"
}

# t_check NAME REASON COMMAND...: pass when COMMAND succeeds.
t_check() {
	_n=$1
	_r=$2
	shift 2
	if "$@"; then t_pass "$_n"; else t_fail "$_n" "$_r"; fi
}

t_summary() {
	printf '%d passed, %d failed, %d skipped\n' "$t_passed" "$t_failed" "$t_skipped"
	[ "$t_failed" -eq 0 ]
}
