# shellcheck shell=bash disable=SC2154 # work, v1, merged, kver, log, rc, why, root_env, repo_*: tests/pkg/run's, repo.sh's
# The pkg tier's Ansible case (sourced by tests/pkg/run, after repo.sh):
# ansible-lint on provisioning/ansible; then the example playbook
# (provisioning/ansible/site.yml, the ib_routed role) against a fresh copy
# of the Debian root over the chroot connection, with the repository of
# repo.sh served on loopback and a site signing key: check mode changes
# nothing; then the role's scenario (roles/ib_routed/molecule/default, in
# Molecule's order): converge installs and builds (modules signed by the
# site key, verify result in the host's local facts), idempotence (a
# second run changes nothing), verify (its assertions on the host); a
# check-mode run reports no changes; local package files of a newer
# version upgrade it, again idempotently; a reload pending (the in-tree
# ib_cm loaded, the overlay installed) is success with the reload
# reported; a verify error fails the host; and ib_routed_state: absent
# removes it all, idempotently.

ansible_src=$IBR_TOP/provisioning/ansible
ansible_work=$work/ansible
ansible_scenario=roles/ib_routed/molecule/default

# [playbook=FILE] ansible_play NAME [ARG...]: ansible-playbook on the
# example playbook (or FILE, relative to provisioning/ansible) with the
# test inventory; output in $log and $ansible_work/NAME.log; sets
# ansible_changed (the recap's changed= for the root).
ansible_play() {
	local name=$1 book=${playbook:-site.yml}
	shift
	set +e
	(
		cd "$ansible_src"
		# The chroot connection hands its environment to the root: the
		# root's compiler cache and fixed build path for DKMS there
		# (in_root).
		unset IBR_BUILD_AT
		[ ${#root_env[@]} -eq 0 ] || export "${root_env[@]}"
		ANSIBLE_CONFIG=$ansible_src/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
			ANSIBLE_HOME=$ansible_work/home ANSIBLE_LOCAL_TEMP=$ansible_work/tmp \
			ANSIBLE_CACHE_PLUGIN_CONNECTION=$ansible_work/facts ANSIBLE_RETRY_FILES_ENABLED=0 \
			ansible-playbook -i "$ansible_work/inventory.yml" "$@" "$book"
	) >"$log" 2>&1
	rc=$?
	set -e
	cp "$log" "$ansible_work/$name.log"
	ansible_changed=$(sed -n 's/^ibr-pkg-root *: ok=[0-9]* *changed=\([0-9]*\) .*/\1/p' "$log" | tail -n 1)
	return $rc
}
# What changed, for a failure message.
ansible_changes() { grep -E '^(changed|TASK)' "$log" | grep -B1 '^changed' | grep '^TASK' | sed 's/^TASK \[\(.*\)\] \**$/\1/' | tr '\n' ';'; }

case_ansible() {
	rm -rf "$ansible_work"
	mkdir -p "$ansible_work/home" "$ansible_work/tmp" "$ansible_work/keys"
	if (cd "$ansible_src" && HOME=$ansible_work/home run ansible-lint --nocolor) && has 'Passed with production profile'; then
		t_pass pkg-ansible-lint
	else
		show_log
		t_fail pkg-ansible-lint "ansible-lint (production profile) reported problems in provisioning/ansible"
	fi
	repo_build pkg-ansible-repo || { repo_serve_stop; return 1; }
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -sha256 -subj "/CN=ib-routed ansible site key/" \
		-outform DER -keyout "$ansible_work/keys/site.key" -out "$ansible_work/keys/site.der" >/dev/null 2>&1
	enter
	cat >"$ansible_work/inventory.yml" <<EOF
---
ib_routed:
  hosts:
    ibr-pkg-root:
      ansible_host: $merged
      ansible_connection: community.general.chroot
      ansible_become: false
      ansible_python_interpreter: /usr/bin/python3
      ib_routed_repo_url: http://127.0.0.1:$repo_port
      ib_routed_repo_key_file: $repo_dir/ib-routed-archive-keyring.gpg
      ib_routed_mok_key_file: $ansible_work/keys/site.key
      ib_routed_mok_cert_file: $ansible_work/keys/site.der
EOF
	# Check mode on a host without ib-routed: succeeds, says what it
	# would change, changes nothing.
	# shellcheck disable=SC2016 # a dpkg-query format, not shell
	if ansible_play check-fresh --check && [ "${ansible_changed:-0}" -gt 0 ] &&
		[ ! -e "$merged/etc/apt/sources.list.d/ib-routed.sources" ] && [ ! -e "$merged/etc/ib-routed-site" ] &&
		! in_root dpkg-query -W -f '${Status}\n' ib-routed-dkms 2>/dev/null | grep -q '^install ok'; then
		t_pass pkg-ansible-check-mode-fresh
	else
		show_log
		t_fail pkg-ansible-check-mode-fresh "check mode failed ($rc), reported no change ($ansible_changed) or changed the root"
	fi
	# Secure Boot on and the site's certificate not enrolled (mokutil as
	# it answers then): the role stops before DKMS is switched to the key
	# and before any package is installed.
	# shellcheck disable=SC2016 # the fake's script and a dpkg-query format
	printf '#!/bin/sh\ncase $1 in\n--sb-state) echo "SecureBoot enabled" ;;\n--test-key) echo "$2 is not enrolled"; exit 1 ;;\nesac\n' \
		>"$merged/usr/local/bin/mokutil"
	chmod 0755 "$merged/usr/local/bin/mokutil"
	# shellcheck disable=SC2016
	if ! playbook=$ansible_scenario/converge.yml ansible_play mok-not-enrolled && has 'is not enrolled: the kernel would refuse' &&
		[ ! -e "$merged/etc/dkms/framework.conf.d/ib-routed-site.conf" ] &&
		! in_root dpkg-query -W -f '${Status}\n' ib-routed-dkms 2>/dev/null | grep -q '^install ok'; then
		t_pass pkg-ansible-mok-not-enrolled-stops
	else
		show_log
		t_fail pkg-ansible-mok-not-enrolled-stops "the role went on (exit $rc) with Secure Boot on and the site key not enrolled"
	fi
	rm -f "$merged/usr/local/bin/mokutil"
	if playbook=$ansible_scenario/converge.yml ansible_play converge && [ "${ansible_changed:-0}" -gt 0 ]; then
		t_pass pkg-ansible-apply
	else
		show_log
		t_fail pkg-ansible-apply "ansible-playbook exited $rc (changed=$ansible_changed)"
	fi
	check_why pkg-ansible-installed-modules overlay_installed "$v1"
	signer=$(modinfo -F signer "$merged/lib/modules/$kver/updates/dkms/ib_cm.ko" 2>/dev/null || true)
	t_check pkg-ansible-site-signed "ib_cm.ko's signer is '$signer'" [ "$signer" = "ib-routed ansible site key" ]
	fact=$merged/etc/ansible/facts.d/ib_routed.fact
	if /usr/bin/python3 -c 'import json, sys; f = json.load(open(sys.argv[1])); sys.exit(not (f["version"] == sys.argv[2] and f["kernel"] == sys.argv[3] and f["severity"] in ("ok", "warn") and f["checks"]["module-files"] == "ok"))' \
		"$fact" "$v1" "$kver" 2>/dev/null; then
		t_pass pkg-ansible-verify-facts
	else
		sed 's/^/    | /' "$fact" 2>/dev/null || true
		t_fail pkg-ansible-verify-facts "$fact does not record verify $v1 on $kver with module-files ok"
	fi
	if playbook=$ansible_scenario/converge.yml ansible_play idempotence && [ "$ansible_changed" = 0 ]; then
		t_pass pkg-ansible-idempotent
	else
		show_log
		t_fail pkg-ansible-idempotent "the second run exited $rc with changed=$ansible_changed: $(ansible_changes)"
	fi
	if playbook=$ansible_scenario/verify.yml ansible_play scenario-verify && [ "$ansible_changed" = 0 ]; then
		t_pass pkg-ansible-scenario-verify
	else
		show_log
		t_fail pkg-ansible-scenario-verify "$ansible_scenario/verify.yml exited $rc (changed=$ansible_changed)"
	fi
	if ansible_play check-again --check && [ "$ansible_changed" = 0 ]; then
		t_pass pkg-ansible-check-mode-no-changes
	else
		show_log
		t_fail pkg-ansible-check-mode-no-changes "check mode after the runs exited $rc with changed=$ansible_changed: $(ansible_changes)"
	fi
	# Local package files instead of the repository, a newer version: the
	# role upgrades to it (DKMS builds it), then changes nothing.
	ensure_debs "$v2" || show_log
	sed -i -e '/ib_routed_repo_/d' "$ansible_work/inventory.yml"
	cat >>"$ansible_work/inventory.yml" <<EOF
      ib_routed_install_from: local
      ib_routed_local_packages:
        - $debs_dir/deb-$v2/ib-routed-dkms_${v2}_all.deb
        - $debs_dir/deb-$v2/ib-routed-utils_${v2}_amd64.deb
EOF
	if ansible_play local && overlay_installed "$v2" && grep -q "\"version\": \"$v2\"" "$fact"; then
		t_pass pkg-ansible-local-files-upgrade
	else
		show_log
		t_fail pkg-ansible-local-files-upgrade "the run with local package files of $v2 exited $rc or did not install them ($why)"
	fi
	if ansible_play local-again && [ "$ansible_changed" = 0 ]; then
		t_pass pkg-ansible-local-files-idempotent
	else
		show_log
		t_fail pkg-ansible-local-files-idempotent "the second run with local files exited $rc with changed=$ansible_changed: $(ansible_changes)"
	fi
	# A kernel DKMS has not installed the overlay for (as after a kernel
	# update whose source came later): the role installs it with DKMS and
	# regenerates that kernel's initramfs; verify passes again.
	if run in_root dkms uninstall -m ib-routed -v "$v2" -k "$kver" && ! overlay_installed "$v2" &&
		ansible_play dkms &&
		grep -A2 'Build and install the overlay with DKMS' "$log" | grep -q "^changed: .*(item=$kver)" &&
		overlay_installed "$v2" && grep -q '"initramfs": "ok"' "$fact" && grep -q '"severity": "ok"' "$fact"; then
		t_pass pkg-ansible-dkms-install
	else
		show_log
		t_fail pkg-ansible-dkms-install "the role did not install the overlay with DKMS for $kver, or verify is not ok after ($rc, $why)"
	fi
	# A newer kernel of a supported series whose headers the archive does
	# not have: the role fails the host before installing anything.
	fake=6.1.999-ibrfake-amd64
	touch "$merged/boot/vmlinuz-$fake"
	if ! ansible_play no-headers && has "the headers of the newest kernel, $fake, are not available"; then
		t_pass pkg-ansible-fails-without-newest-headers
	else
		show_log
		t_fail pkg-ansible-fails-without-newest-headers "the role did not fail the host for $fake without headers (exit $rc)"
	fi
	rm -f "$merged/boot/vmlinuz-$fake"
	# A reload pending (issue 24): the overlay installed, the in-tree ib_cm
	# loaded (a /sys/module of the root's own, bound over the host's): not
	# a failure, the role reports the reload left to do and records it.
	# The package held, as sites hold kernel-module packages (apt-mark
	# hold): installed and healthy, its check ok.
	run in_root apt-mark hold ib-routed-dkms || show_log
	mkdir -p "$ansible_work/sys-module/ib_cm"
	echo live >"$ansible_work/sys-module/ib_cm/initstate"
	echo 0123456789ABCDEF0123456 >"$ansible_work/sys-module/ib_cm/srcversion"
	mount --bind "$ansible_work/sys-module" "$merged/sys/module"
	if ansible_play pending --tags ib_routed_verify && has 'reload pending: the overlay is installed for' &&
		/usr/bin/python3 -c 'import json, sys; f = json.load(open(sys.argv[1])); sys.exit(not (f["reload_pending"] is True and f["checks"]["module:ib_cm"] == "warn" and f["checks"]["package"] == "ok"))' "$fact"; then
		t_pass pkg-ansible-reload-pending-succeeds
	else
		show_log
		t_fail pkg-ansible-reload-pending-succeeds "with the in-tree ib_cm loaded and the package held the role exited $rc, did not report the pending reload, did not record it in $fact or did not call the held package ok"
	fi
	umount "$merged/sys/module" || umount -l "$merged/sys/module"
	# A broken installation: verify reports an error and the role fails
	# the host, naming the check.
	rm -f "$merged/lib/modules/$kver/updates/dkms/ib_cm.ko"
	if ! ansible_play broken --tags ib_routed_verify && has 'ib-routed-verify: error: .*module-files'; then
		t_pass pkg-ansible-fails-on-verify-error
	else
		show_log
		t_fail pkg-ansible-fails-on-verify-error "the role did not fail the host on verify's module-files error (exit $rc)"
	fi
	# The host runs an older kernel and boots the broken one next (a
	# kernel update waiting for its reboot): the role verifies that one
	# too and fails the host naming it, whatever the running one says.
	local older=6.0.0-ibrfake-amd64
	touch "$merged/boot/vmlinuz-$older"
	if ! ansible_play next-boot --tags ib_routed_verify -e "ansible_kernel=$older" &&
		has "ib-routed-verify: the kernel it boots next, $kver: .*module-files"; then
		t_pass pkg-ansible-verifies-next-boot-kernel
	else
		show_log
		t_fail pkg-ansible-verifies-next-boot-kernel "running $older, booting the broken $kver next: the role did not fail the host naming $kver (exit $rc)"
	fi
	rm -f "$merged/boot/vmlinuz-$older"
	# ib_routed_state: absent (issue 42 item 10), on this host as it is
	# now (the package held, a module file gone): the packages go, purged,
	# with the overlay's modules, and so does everything the role put on
	# the host, the site's key and DKMS's configuration that signs with it
	# first; a second run changes nothing.
	# shellcheck disable=SC2016 # a dpkg-query format, not shell
	if ansible_play absent -e ib_routed_state=absent && [ "${ansible_changed:-0}" -gt 0 ] &&
		! in_root dpkg-query -W -f '${db:Status-Status} ${Package}\n' ib-routed-dkms ib-routed-utils 2>/dev/null |
			grep -Eq '^(installed|config-files|half-installed|unpacked|half-configured)' &&
		[ -z "$(find "$merged/lib/modules" -path '*/updates/dkms/*' -name 'ib_*.ko*' 2>/dev/null)" ] &&
		[ ! -e "$merged/etc/dkms/framework.conf.d/ib-routed-site.conf" ] && [ ! -e "$merged/etc/ib-routed-site" ] &&
		[ ! -e "$fact" ] && [ ! -e "$merged/var/cache/ib-routed/packages" ]; then
		t_pass pkg-ansible-absent
	else
		show_log
		t_fail pkg-ansible-absent "ib_routed_state=absent exited $rc (changed=$ansible_changed), or left a package, an overlay module, the site key, its DKMS configuration, the facts or the package files"
	fi
	if ansible_play absent-again -e ib_routed_state=absent && [ "$ansible_changed" = 0 ]; then
		t_pass pkg-ansible-absent-idempotent
	else
		show_log
		t_fail pkg-ansible-absent-idempotent "the second absent run exited $rc with changed=$ansible_changed: $(ansible_changes)"
	fi
	leave
	repo_serve_stop
}

# The first-boot snippets: the cloud-config against cloud-init's own
# schema (Debian 12's cloud-init package, downloaded once, not installed),
# and the shell of its runcmd and of the kickstart %post body (shellcheck).
case_snippets() {
	local ci=$IBR_TOP/provisioning/cloud-init/ib-routed.yaml ks=$IBR_TOP/provisioning/kickstart/ib-routed-post.ks
	local cdir=$work/cloud-init schema
	schema=$(find "$cdir" -name schema-cloud-config-v1.json 2>/dev/null | head -n 1)
	if [ -z "$schema" ]; then
		rm -rf "$cdir"
		mkdir -p "$cdir"
		if (cd "$cdir" && run apt-get download cloud-init) && run dpkg-deb -x "$cdir"/cloud-init_*.deb "$cdir/x"; then
			schema=$(find "$cdir" -name schema-cloud-config-v1.json | head -n 1)
		else
			show_log
		fi
	fi
	if [ -z "$schema" ]; then
		t_fail pkg-cloud-init-schema "no cloud-init schema (apt-get download cloud-init failed)"
	elif run /usr/bin/python3 - "$schema" "$ci" <<'EOP'
import json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
if not text.startswith("#cloud-config\n"):
    sys.exit("the file does not start with #cloud-config")
config = yaml.safe_load(text)
errors = list(jsonschema.Draft4Validator(schema).iter_errors(config))
for e in errors:
    print("/".join(str(p) for p in e.path), e.message)
src = config["apt"]["sources"]["ib-routed.list"]
if "[signed-by=$KEY_FILE]" not in src["source"] or "BEGIN PGP PUBLIC KEY BLOCK" not in src["key"]:
    errors.append("the apt source is not signed-by its key")
    print(errors[-1])
sys.exit(1 if errors else 0)
EOP
	then
		t_pass pkg-cloud-init-schema
	else
		show_log
		t_fail pkg-cloud-init-schema "$ci is not valid against the cloud-config schema of $(basename "$cdir"/cloud-init_*.deb)"
	fi
	/usr/bin/python3 -c 'import sys, yaml; print("\n".join(yaml.safe_load(open(sys.argv[1]))["runcmd"]))' "$ci" >"$work/runcmd.sh" 2>"$log" || true
	if [ -s "$work/runcmd.sh" ] && run shellcheck -s sh "$work/runcmd.sh"; then
		t_pass pkg-cloud-init-runcmd-shellcheck
	else
		show_log
		t_fail pkg-cloud-init-runcmd-shellcheck "shellcheck reported problems in the runcmd script of $ci"
	fi
	sed -n '/^%post/,/^%end$/p' "$ks" | sed '1d;$d' >"$work/ks-post.sh"
	if [ "$(grep -c '^%post --log=[^ ]* --erroronfail$' "$ks")" = 1 ] && [ "$(grep -c '^%end$' "$ks")" = 1 ] &&
		[ -s "$work/ks-post.sh" ] && run shellcheck -s bash "$work/ks-post.sh"; then
		t_pass pkg-kickstart-post-shellcheck
	else
		show_log
		t_fail pkg-kickstart-post-shellcheck "$ks: not one %post --erroronfail ... %end, or shellcheck reported problems"
	fi
}
