# shellcheck shell=bash disable=SC2154 # work, v1, rpms_dir, merged, log, rc, why: tests/pkg/run's
# The pkg tier's repository case (sourced by tests/pkg/run, which has the
# root, enter/leave, in_root, run/has/show_log and overlay_installed):
# `packaging/repo/build` (what `make repo` runs) with a throwaway key, the
# tree served over HTTP on loopback; apt in the Debian root adds it with the
# generated ib-routed.sources and installs from it with signature checking
# on (and refuses it signed by another key); dnf reads the yum repository
# with the generated ib-routed.repo (repo_gpgcheck and gpgcheck on) and
# finds every package; rpmkeys verifies every RPM's signature.

repo_dir=$work/repo
repo_gnupg=$work/repo-gnupg
repo_http_pid=
repo_port=

# The packages the repository is built from: the build and rpm cases make
# them once a run (ensure_debs, ensure_rpms); when this case runs alone,
# it makes them.
repo_packages() {
	ensure_debs "$v1" && ensure_rpms
}

# A throwaway signing key (no passphrase) and an unrelated one, in a gpg
# home of their own; sets repo_fpr and repo_other_fpr.
repo_keys() {
	rm -rf "$repo_gnupg"
	mkdir -p "$repo_gnupg"
	chmod 0700 "$repo_gnupg"
	for k in test other; do
		GNUPGHOME=$repo_gnupg gpg --batch --passphrase '' --quick-gen-key \
			"ib-routed $k repository key <repo-$k@test.invalid>" rsa3072 sign 1d >/dev/null 2>&1 || return 1
	done
	repo_fpr=$(GNUPGHOME=$repo_gnupg gpg --batch --with-colons --list-secret-keys repo-test@test.invalid | awk -F: '$1 == "fpr" { print $10; exit }')
	repo_other_fpr=$(GNUPGHOME=$repo_gnupg gpg --batch --with-colons --list-secret-keys repo-other@test.invalid | awk -F: '$1 == "fpr" { print $10; exit }')
	GNUPGHOME=$repo_gnupg gpg --batch --export "$repo_other_fpr" >"$work/repo-other-keyring.gpg"
	GNUPGHOME=$repo_gnupg gpg --batch --armor --export "$repo_other_fpr" >"$work/RPM-GPG-KEY-other"
	[ -n "$repo_fpr" ] && [ -n "$repo_other_fpr" ]
}

# Serve $repo_dir on 127.0.0.1 (a free port the server picks); sets
# repo_port. repo_serve_stop ends it (by its pid).
repo_serve() {
	mkdir -p "$repo_dir"
	: >"$work/repo-http.log"
	/usr/bin/python3 -m http.server 0 --bind 127.0.0.1 --directory "$repo_dir" >"$work/repo-http.log" 2>&1 &
	repo_http_pid=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		repo_port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$work/repo-http.log" | head -n 1)
		[ -z "$repo_port" ] || return 0
		sleep 0.5
	done
	return 1
}
repo_serve_stop() {
	[ -n "$repo_http_pid" ] || return 0
	kill "$repo_http_pid" 2>/dev/null || true
	wait "$repo_http_pid" 2>/dev/null || true
	repo_http_pid=
}

# repo_build NAME: the throwaway key, the packages, the tree, served; used
# by the repository and the Ansible cases (NAME: the result's name).
repo_build() {
	local name=$1
	trap 'repo_serve_stop; leave' EXIT
	if ! repo_packages; then
		show_log
		t_fail "$name" "the packages could not be built"
		return 1
	fi
	if ! repo_keys; then
		t_fail "$name" "gpg could not make the throwaway keys"
		return 1
	fi
	if ! repo_serve; then
		cat "$work/repo-http.log"
		t_fail "$name" "the HTTP server on 127.0.0.1 did not start"
		return 1
	fi
	# A throwaway tree (--fresh; --allow-dirty: a checkout under work
	# may have uncommitted changes; case_repo checks the refusal).
	if GNUPGHOME=$repo_gnupg run "$IBR_TOP/packaging/repo/build" --key "$repo_fpr" -o "$repo_dir" \
		--fresh --allow-dirty \
		--deb-dir "$debs_dir/deb-$v1" --rpm-dir "$rpms_dir/RPMS" --rpm-dir "$rpms_dir/SRPMS" \
		--url "http://127.0.0.1:$repo_port" &&
		[ -f "$repo_dir/deb/dists/bookworm/InRelease" ] && [ -f "$repo_dir/rpm/repodata/repomd.xml.asc" ]; then
		t_pass "$name"
	else
		show_log
		t_fail "$name" "packaging/repo/build failed or made no signed InRelease and repomd.xml.asc"
		return 1
	fi
}

# apt in the root with only the ib-routed source (the root's Debian lists
# are not refreshed: no dependency is missing).
repo_apt_update() {
	run in_root apt-get update -o Dir::Etc::SourceList=/etc/apt/sources.list.d/ib-routed.sources \
		-o Dir::Etc::SourceParts=- -o APT::Get::List-Cleanup=0
}

# dnf on this machine, with its own root, cache and repos.d: the packages
# the ib-routed repository offers; a repository it cannot read fails it.
repo_dnf_dir=$work/dnf
repo_dnf() {
	local d=$repo_dnf_dir
	dnf -y -q --installroot "$d/root" --releasever 9 --setopt=reposdir="$d/repos.d" \
		--setopt=cachedir="$d/cache" --setopt=logdir="$d" --setopt=persistdir="$d/persist" \
		--setopt=skip_if_unavailable=False --disablerepo='*' --enablerepo=ib-routed \
		repoquery --qf '%{name}-%{version}-%{release}.%{arch}'
}

# repo_sources_complete TREE SOURCE...: the Sources index of TREE lists
# each SOURCE in pool/main/<letter>/SOURCE with all of its files there;
# sets $why (tests/pkg/run's check_why reads it) otherwise.
repo_sources_complete() {
	local tree=$1 src dir missing idx=$1/dists/bookworm/main/source/Sources
	shift
	why=
	[ -f "$idx" ] || { why="no $idx"; return 1; }
	for src in "$@"; do
		dir=$(awk -v p="$src" '/^Package:/ { cur = $2 } /^Directory:/ && cur == p { print $2; exit }' "$idx")
		# shellcheck disable=SC2034 # read by check_why
		[ "$dir" = "pool/main/${src:0:1}/$src" ] || { why="$src: Directory '${dir:-none}' in Sources"; return 1; }
		missing=$(awk -v p="$src" '/^Package:/ { cur = $2; next } /^[^ ]/ { inf = ($1 == "Files:") } inf && / / && cur == p { print $3 }' "$idx" |
			while read -r f; do [ -f "$tree/$dir/$f" ] || echo "$f"; done)
		# shellcheck disable=SC2034 # read by check_why
		[ -z "$missing" ] || { why="$src: missing in $dir: $(echo "$missing" | paste -sd' ' -)"; return 1; }
	done
}

case_repo() {
	repo_build pkg-repo-build || { repo_serve_stop; return 1; }
	enter
	mkdir -p "$merged/usr/share/keyrings"
	cp "$repo_dir/ib-routed-archive-keyring.gpg" "$merged/usr/share/keyrings/"
	cp "$repo_dir/deb/ib-routed.sources" "$merged/etc/apt/sources.list.d/ib-routed.sources"
	# Signature checking on (apt's default; no trusted=yes, no
	# AllowInsecureRepositories): a signed InRelease is fetched and checked.
	if repo_apt_update && has "127.0.0.1:$repo_port/deb bookworm InRelease" && ! has '^[WE]:'; then
		t_pass pkg-repo-apt-update-signed
	else
		show_log
		t_fail pkg-repo-apt-update-signed "apt-get update of the loopback repository failed or warned"
	fi
	if run in_root apt-get install -y ib-routed-dkms ib-routed-utils &&
		in_root apt-cache policy ib-routed-dkms >"$log" 2>&1 && has "127.0.0.1:$repo_port/deb bookworm/main"; then
		t_pass pkg-repo-apt-install
	else
		show_log
		t_fail pkg-repo-apt-install "apt-get install from the repository failed ($rc) or apt does not know it from there"
	fi
	check_why pkg-repo-installed-modules overlay_installed "$v1"
	# Both source packages are published, each in its pool directory, with
	# every file its .dsc names (a site can rebuild them with apt-get source).
	check_why pkg-repo-sources repo_sources_complete "$repo_dir/deb" ib-routed ib-routed-librdmacm
	# The same repository with an unrelated key as Signed-By: apt must refuse.
	cp "$work/repo-other-keyring.gpg" "$merged/usr/share/keyrings/ib-routed-archive-keyring.gpg"
	rm -rf "$merged/var/lib/apt/lists/"*127.0.0.1*
	if ! repo_apt_update && has "NO_PUBKEY\|not signed"; then
		t_pass pkg-repo-apt-refuses-other-key
	else
		show_log
		t_fail pkg-repo-apt-refuses-other-key "apt-get update accepted the repository with another key as Signed-By"
	fi
	leave

	# yum/dnf: the generated ib-routed.repo as is (gpgcheck, repo_gpgcheck):
	# dnf fetches repomd.xml, checks its signature and the metadata's
	# checksums, and must list exactly the packages built.
	local d=$repo_dnf_dir want got
	rm -rf "$d"
	mkdir -p "$d/repos.d"
	cp "$repo_dir/rpm/ib-routed.repo" "$d/repos.d/"
	want=$(find "$rpms_dir/RPMS" "$rpms_dir/SRPMS" -name '*.rpm' -printf '%f\n' | sed 's/\.rpm$//' | sort)
	if run repo_dnf; then
		got=$(grep -E '^ib-routed' "$log" | sort)
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			t_pass pkg-repo-yum-metadata
		else
			show_log
			t_fail pkg-repo-yum-metadata "dnf lists '$(echo "$got" | tr '\n' ' ')', the build made '$(echo "$want" | tr '\n' ' ')'"
		fi
	else
		show_log
		t_fail pkg-repo-yum-metadata "dnf could not read the yum repository (exit $rc)"
	fi
	# The signatures: every RPM verifies against the repository key, and
	# repomd.xml does not against another key.
	rm -rf "$d/rpmdb"
	mkdir -p "$d/rpmdb"
	local bad=
	if rpmkeys --dbpath "$d/rpmdb" --import "$repo_dir/RPM-GPG-KEY-ib-routed" >"$log" 2>&1; then
		while IFS= read -r f; do
			rpmkeys --dbpath "$d/rpmdb" --checksig "$f" 2>&1 | grep -q ': digests signatures OK$' || bad="$bad $(basename "$f")"
		done < <(find "$repo_dir/rpm" -name '*.rpm')
	else
		bad=" (the key does not import)"
	fi
	t_check pkg-repo-rpm-signatures "not signed by the repository key:$bad" [ -z "$bad" ]
	rm -rf "$d/root" "$d/cache" "$d/persist"
	sed -i "s#^gpgkey=.*#gpgkey=file://$work/RPM-GPG-KEY-other#" "$d/repos.d/ib-routed.repo"
	if ! run repo_dnf && has "GPG signature verification error"; then
		t_pass pkg-repo-yum-refuses-other-key
	else
		show_log
		t_fail pkg-repo-yum-refuses-other-key "dnf read repomd.xml signed by another key than gpgkey="
	fi
	repo_republish
	repo_serve_stop
}

# The tree's life: a later build adds a version beside the earlier one (a
# fleet can roll back), never replaces a published file, and signs a
# Release that expires (Valid-Until) with indexes by hash; packages of a
# checkout with uncommitted changes are not published.
repo_republish() {
	local rel=$repo_dir/deb/dists/bookworm/Release until days pk sha fake
	if ! ensure_debs "$v2"; then
		show_log
		t_fail pkg-repo-republish "packaging/deb/build of $v2 failed"
		return 1
	fi
	if GNUPGHOME=$repo_gnupg run "$IBR_TOP/packaging/repo/build" --key "$repo_fpr" -o "$repo_dir" \
		--deb-dir "$debs_dir/deb-$v2" --rpm-dir "$rpms_dir/RPMS" --rpm-dir "$rpms_dir/SRPMS" \
		--url "http://127.0.0.1:$repo_port" --valid-days 7; then
		t_pass pkg-repo-republish
	else
		show_log
		t_fail pkg-repo-republish "packaging/repo/build of $v2 into the published tree failed"
		return 1
	fi
	enter
	mkdir -p "$merged/usr/share/keyrings"
	cp "$repo_dir/ib-routed-archive-keyring.gpg" "$merged/usr/share/keyrings/"
	cp "$repo_dir/deb/ib-routed.sources" "$merged/etc/apt/sources.list.d/ib-routed.sources"
	if repo_apt_update && ! has '^[WE]:' && in_root apt-cache madison ib-routed-dkms >"$log" 2>&1 &&
		has " $v1 " && has " $v2 "; then
		t_pass pkg-repo-keeps-old-versions
	else
		show_log
		t_fail pkg-repo-keeps-old-versions "apt does not see both $v1 and $v2 of ib-routed-dkms after the second build"
	fi
	leave
	# Valid-Until about 7 days ahead; the indexes by hash.
	until=$(sed -n 's/^Valid-Until: //p' "$rel")
	days=$(( ($(date -d "${until:-now}" +%s) - $(date +%s) + 3600) / 86400 ))
	pk=$repo_dir/deb/dists/bookworm/main/binary-$(dpkg --print-architecture)/Packages
	sha=$(sha256sum <"$pk" | cut -d' ' -f1)
	if [ "$days" = 7 ] && grep -qx 'Acquire-By-Hash: yes' "$rel" && cmp -s "$pk" "$(dirname "$pk")/by-hash/SHA256/$sha"; then
		t_pass pkg-repo-valid-until-by-hash
	else
		t_fail pkg-repo-valid-until-by-hash "Valid-Until '$until' ($days days), Acquire-By-Hash or by-hash/SHA256/$sha missing"
	fi
	# Another file under a published name (v2's ib-routed-dkms as v1's):
	# refused, the tree as it was.
	fake=$work/repo-fake
	rm -rf "$fake"
	mkdir -p "$fake"
	cp "$debs_dir/deb-$v2/ib-routed-dkms_${v2}_all.deb" "$fake/ib-routed-dkms_${v1}_all.deb"
	cp "$rel" "$work/Release.before"
	if ! GNUPGHOME=$repo_gnupg run "$IBR_TOP/packaging/repo/build" --key "$repo_fpr" -o "$repo_dir" \
		--deb-dir "$fake" --rpm-dir "$rpms_dir/RPMS" --url "http://127.0.0.1:$repo_port" &&
		has "is published already with other content" && cmp -s "$rel" "$work/Release.before"; then
		t_pass pkg-repo-refuses-changed-file
	else
		show_log
		t_fail pkg-repo-refuses-changed-file "a different file under a published name was accepted or changed the Release"
	fi
	# A checkout with uncommitted changes: its version's packages refused.
	rm -rf "$work/dirty-clone"
	if git clone -q --shared "$IBR_TOP" "$work/dirty-clone" 2>"$log"; then
		echo "# uncommitted" >>"$work/dirty-clone/README.md"
		if ! GNUPGHOME=$repo_gnupg run "$work/dirty-clone/packaging/repo/build" --key "$repo_fpr" \
			-o "$work/repo-dirty" --deb-dir "$debs_dir/deb-$v1" --rpm-dir "$rpms_dir/RPMS" &&
			has "has uncommitted changes and .* has packages of its version $v1"; then
			t_pass pkg-repo-refuses-dirty-tree
		else
			show_log
			t_fail pkg-repo-refuses-dirty-tree "packages of $v1 were published from a checkout with uncommitted changes"
		fi
	else
		show_log
		t_fail pkg-repo-refuses-dirty-tree "git clone of $IBR_TOP failed"
	fi
	rm -rf "$work/dirty-clone" "$work/repo-dirty" "$fake"
}
