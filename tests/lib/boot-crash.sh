# shellcheck shell=sh
# crashed_before_init CHANNEL CONSOLE: the guest kernel oopsed or panicked
# before the guest's init wrote its first line to CHANNEL (the harness's
# result port), as CONSOLE shows. Nothing of ib-routed runs before that
# init (it loads the overlay), so such a boot is the emulation's to blame
# and is booted again: seen with -smp 2 under multi-threaded TCG on
# Debian's 6.12 and 7.3 kernels, "Oops: int3" in sched_clock_cpu while
# sched_clock_init_late() flips __sched_clock_stable with text_poke_bp()
# and the other vCPU still executes the breakpoint after the poke is
# complete (tests/vm/run, the pkg tier's boot cases).
crashed_before_init() {
	[ ! -s "$1" ] && grep -Eq 'Oops|Kernel panic' "$2"
}
