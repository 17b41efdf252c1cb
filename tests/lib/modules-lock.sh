# shellcheck shell=bash
# The host's /lib/modules/KVER between make check's two lanes: the build
# tier's dkms case installs the overlay there (depmod then leaves the
# in-tree copies of its modules out of modules.dep) while the VM tiers'
# image builder reads it. Who changes it holds the lock exclusively, who
# reads it shared.
#
# ibr_modules_lock KVER [-s]: take it on fd 7 (-s: shared); released by
# ibr_modules_unlock or when the process exits.
ibr_modules_lock() {
	mkdir -p /run/lock/ib-routed
	exec 7>"/run/lock/ib-routed/modules-$1.lock"
	flock ${2:+"$2"} 7
}
ibr_modules_unlock() {
	exec 7>&-
}
