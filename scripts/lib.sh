# shellcheck shell=sh
# Shared helpers for ib-routed's build glue. Sourced (POSIX sh) by the
# scripts in this directory and by dkms.conf; defines functions only.

# The top of the ib-routed tree (this file lives in scripts/).
ibr_top() {
	# $IBR_TOP may be set by a caller that already knows it.
	if [ -n "${IBR_TOP:-}" ]; then
		printf '%s\n' "$IBR_TOP"
	else
		(cd "$(dirname "$0")/.." && pwd)
	fi
}

ibr_die() {
	printf 'ib-routed: error: %s\n' "$*" >&2
	exit 1
}

ibr_info() {
	printf 'ib-routed: %s\n' "$*" >&2
}

# MAJOR.MINOR of a kernel release string (6.1.0-57-amd64 -> 6.1,
# 5.14.0-427.el9.x86_64 -> 5.14). Every distribution keeps the upstream
# major.minor at the front of its release string.
ibr_series_of_kver() {
	printf '%s\n' "$1" | sed -n 's/^\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p'
}

# Print the series.conf line for a series (fields: series source modules...),
# or nothing when the series is not supported. $1 = series, $2 = table.
ibr_series_line() {
	awk -v s="$1" '!/^[[:space:]]*(#|$)/ && $1 == s { print; exit }' "$2"
}

# Space-separated list of supported series. $1 = table.
ibr_supported_series() {
	awk '!/^[[:space:]]*(#|$)/ { printf "%s%s", sep, $1; sep = " " } END { print "" }' "$1"
}

# The message used everywhere an unsupported kernel is skipped.
ibr_unsupported_msg() {
	# $1 = kernel release, $2 = table
	printf 'kernel %s (series %s) is not supported by ib-routed, which supports series: %s; not building, the in-tree RDMA stack stays in use\n' \
		"$1" "$(ibr_series_of_kver "$1")" "$(ibr_supported_series "$2")"
}

# The newest kernel of series $1 whose headers are installed (a build
# directory under $IBR_MODULES_DIR, default /lib/modules); status 1 if none.
ibr_series_kver() {
	_k=$(find "${IBR_MODULES_DIR:-/lib/modules}" -mindepth 2 -maxdepth 2 -name build 2>/dev/null |
		sed 's,/build$,,; s,.*/,,' | sort -rV |
		awk -v s="$1" 'index($0, s ".") == 1 { print; exit }')
	[ -n "$_k" ] || return 1
	printf '%s\n' "$_k"
}

# The kernel to build for when none is named: $KVER, else the running
# kernel if its headers are installed, else the newest installed kernel
# with headers of the first series in the table that has one (the table's
# order: its first line is the series the checks are made for, so a build
# host with headers of several series tests that one unless told). $1 =
# table; $IBR_MODULES_DIR (default /lib/modules) for tests/unit/default-kver.
ibr_default_kver() {
	if [ -n "${KVER:-}" ]; then
		printf '%s\n' "$KVER"
		return
	fi
	_m=${IBR_MODULES_DIR:-/lib/modules}
	_r=$(uname -r)
	if [ -d "$_m/$_r/build" ]; then
		printf '%s\n' "$_r"
		return
	fi
	for _s in $(ibr_supported_series "$1"); do
		if ibr_series_kver "$_s"; then
			return
		fi
	done
	return 1
}

# ibr_snapshot_part VERSION: what a package version (scripts/version, or
# one given to a package build) adds to the release in VERSION: nothing
# for the release, ~gitTS.SHA or +gitTS.SHA for a snapshot, +ibrVERSION for
# a version of another release. The packages ib-routed builds from another
# upstream (ib-routed-librdmacm) put it after their own revision, so that
# their snapshots sort as ib-routed's do.
ibr_snapshot_part() {
	_rel=$(cat "$(ibr_top)/VERSION")
	case $1 in
	"$_rel"*) printf '%s\n' "${1#"$_rel"}" ;;
	*) printf '+ibr%s\n' "$1" ;;
	esac
}

# ibr_librdmacm_conf KEY: a value of userspace/librdmacm/source.conf (the
# rdma-core release the librdmacm series is for: version, tarball, sha256...).
ibr_librdmacm_conf() {
	awk -v k="$1" '!/^[[:space:]]*(#|$)/ && $1 == k { print $2; exit }' "$(ibr_top)/userspace/librdmacm/source.conf"
}

# ibr_mirror_uri [security]: the Debian mirror of this machine's APT
# sources (its first URIs that are not the security archive's), or with
# "security" its security mirror; Debian's own when there is none. The
# roots made for tests and builds of other releases read the same archive.
ibr_mirror_uri() {
	if [ "${1:-}" = security ]; then
		_u=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep security | head -n 1)
		printf '%s\n' "${_u:-http://deb.debian.org/debian-security}"
	else
		_u=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)
		printf '%s\n' "${_u:-http://deb.debian.org/debian}"
	fi
}

# ibr_is_rooted SERIES: the series is built in a root of the release that
# ships it, not on this host (scripts/build-root list).
ibr_is_rooted() {
	"$(ibr_top)/scripts/build-root" list | grep -qx "$1"
}

# make check (IBR_BUILD_AT set, compiles through ccache): a build runs with
# its directory bind-mounted at that one fixed path, in a private mount
# namespace. ccache hashes the paths the compiler is given (the source's,
# the -I options', the preprocessor's line markers), so a build under a
# clean clone's own path would miss every object another clone cached.
# Kbuild's .cmd files then name that path: a directory built so is always
# built so (make check's), or kbuild builds it all again.

# The propagation of the build's namespace: a command of scripts/build-root
# runs in a chroot (whose / is no mount point, so "--propagation private"
# fails there) inside a private mount namespace of its own, whose mounts
# are private already.
_ibr_at_propagation() {
	if [ -n "${IBR_IN_BUILD_ROOT:-}" ]; then echo unchanged; else echo private; fi
}

# ibr_build_at DIR: the path to hand the build for DIR (DIR itself where
# no private mount namespace can be made).
ibr_build_at() {
	if [ -n "${IBR_BUILD_AT:-}" ] && [ -n "${CCACHE_DIR:-}" ] && command -v mount >/dev/null &&
		unshare --mount --propagation "$(_ibr_at_propagation)" true 2>/dev/null; then
		printf '%s\n' "$IBR_BUILD_AT"
	else
		printf '%s\n' "$1"
	fi
}

# ibr_run_built_at DIR CMD...: CMD with DIR at "$(ibr_build_at DIR)".
ibr_run_built_at() {
	_ibr_dir=$1
	shift
	if [ "$(ibr_build_at "$_ibr_dir")" = "$_ibr_dir" ]; then
		"$@"
		return
	fi
	mkdir -p "$IBR_BUILD_AT"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation "$(_ibr_at_propagation)" /bin/sh -c \
		'mount --bind "$1" "$2" && shift 2 && exec "$@"' build-at "$_ibr_dir" "$IBR_BUILD_AT" "$@"
}
