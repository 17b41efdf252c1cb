# shellcheck shell=sh
# ibr_patch_new_file PATCHDIR FILE OUT: write to OUT the new file FILE as
# the one patch of PATCHDIR that creates it has it (host unit tests compile
# the series' own code without applying the series). Fails, saying why,
# when no patch or more than one patch touches FILE: a file that a later
# patch changes again would need the series applied.
ibr_patch_new_file() {
	_p=$(grep -l "^+++ b/$2\$" "$1"/*.patch || true)
	if [ "$(printf '%s\n' "$_p" | grep -c .)" -ne 1 ]; then
		echo "$2 is created or changed by ${_p:-no patch} in $1 (want exactly one)"
		return 1
	fi
	awk -v f="+++ b/$2" '
		$0 == f { on = 1; next }
		on && /^@@/ { next }
		on && /^\+/ { print substr($0, 2); next }
		on { exit }' "$_p" >"$3"
}
