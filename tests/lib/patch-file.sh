# shellcheck shell=sh
# ibr_series_file PATCHDIR FILE OUT: write to OUT the file FILE as the
# patch series in PATCHDIR (its series file, NNNN-*.patch) leaves it: the
# parts for FILE of the patches that touch it, applied in series order
# with patch(1) to nothing, so FILE must be created by the series. Host
# unit tests and test clients compile the series' own code this way
# without the upstream source. Fails, saying why, when no patch creates
# FILE or a part does not apply.
ibr_series_file() {
	_dir=$1 _f=$2 _out=$3
	_src=$(mktemp -d)
	_n=0
	while read -r _p _; do
		case $_p in '' | '#'*) continue ;; esac
		grep -q "^+++ b/$_f\$" "$_dir/$_p" || continue
		if ! awk -v f="diff --git a/$_f b/$_f" '
			/^diff --git / { on = ($0 == f) }
			on' "$_dir/$_p" | patch -s -p1 -d "$_src" >/dev/null 2>&1; then
			rm -rf "$_src"
			echo "$_p does not apply to $_f"
			return 1
		fi
		_n=$((_n + 1))
	done <"$_dir/series"
	if [ "$_n" -eq 0 ] || [ ! -f "$_src/$_f" ]; then
		rm -rf "$_src"
		echo "no patch of $_dir creates $_f"
		return 1
	fi
	cp "$_src/$_f" "$_out"
	rm -rf "$_src"
}
