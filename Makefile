# ib-routed: the one entry point. See README.md.
#
#   make [KVER=<release>] [KSRC=<tree|tarball>]   build the overlay modules
#   make check                                    install test deps, run every tier
#   make demo                                     build, boot in QEMU, show it working
#   make fuzz [FUZZ_SECONDS=300]                  fuzz the codecs longer (tests/fuzz)
#   make bench                                    the benchmarks, one table (tests/bench)
#
# KVER defaults to the running kernel when its headers are installed, else the
# newest installed kernel of a supported series (scripts/lib.sh).

VERSION := $(shell cat VERSION)
KVER ?=
KSRC ?=
RDMA_CORE_SRC ?=
export KVER KSRC RDMA_CORE_SRC

# Make's -j does not reach overlay-build's own kbuild call; pass it through.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all modules deps deps-bench check check-tiers check-lint check-unit check-fuzz fuzz bench check-build check-pkg check-vm simfab tools librdmacm deb rpm repo demo \
	series-import series-export series-check \
	dkms-install dkms-uninstall clean help

all: modules

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

modules:
	scripts/overlay-build -j $(JOBS)

deps:
	scripts/install-deps

# The test command (docs/development.md, .ci/run): every tier on the default series (the
# first of kernel-patches/series.conf), then each other series' own set
# (tests/run's "series"), one totals line at the end.
# tests/run's table counts from the moment check starts (IBR_CHECK_START):
# make deps and the builds before the tiers are part of the time. The
# compilers of every build of the run go through ccache (make deps
# installs it), its cache kept outside the checkout with the other caches
# of make check (IBR_CACHE_DIR, /var/cache/ib-routed), so that a clean
# clone compiles again only what changed. Depend mode (CCACHE_DEPEND,
# inherited by the build roots and the package roots' DKMS builds): a
# miss compiles once instead of preprocessing to hash and then compiling
# (a cold overlay build: 42 CPU-seconds, not 50), and a hit is a direct
# hit as before; the hash is of the files the compiler's own dependency
# list names (kbuild's -Wp,-MMD), so a changed header still misses.
IBR_CACHE_DIR ?= /var/cache/ib-routed
check:
	@IBR_CHECK_START=$$(date +%s) IBR_CACHE_DIR=$(IBR_CACHE_DIR) IBR_BUILD_AT=$(IBR_CACHE_DIR)/build-at \
		CCACHE_DIR=$(IBR_CACHE_DIR)/ccache CCACHE_DEPEND=1 PATH=/usr/lib/ccache:$$PATH \
		$(MAKE) --no-print-directory check-tiers

# The order is each lane's queue (tests/run): the longest first, so that
# when the QEMU lane has run its own it takes the host lane's short ones
# from the end and both end together (series: build@S and S's vm sets).
check-tiers: deps modules simfab tools librdmacm
	tests/run pkg pkg-fleet series build pkg-trixie vm-rxe vm-simfab mutate vm-lockdown vm-stock vm-mixed lint unit fuzz

check-lint:
	tests/run lint

check-unit:
	tests/run unit

check-fuzz:
	tests/run fuzz

# The fuzz tier for longer: FUZZ_SECONDS per target (check runs 5 s each);
# the corpus grows in build/fuzz/TARGET/corpus from run to run.
fuzz:
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),300) tests/run fuzz

check-build: deps
	tests/run build

# The benchmarks: figures and ratios measured side by side in one run,
# printed as one table (tests/bench/README.md); not part of check.
bench: deps-bench modules simfab tools
	tests/bench/run

# make deps and what only make bench needs (fio).
deps-bench:
	scripts/install-deps bench

check-pkg: deps
	tests/run pkg

check-vm: deps modules simfab tools librdmacm
	tests/run vm-rxe vm-simfab vm-lockdown vm-stock vm-mixed

# simfab, the test-only simulated IB fabric (tests/simfab/), and its raw
# rdma_cm client: the vm tier puts them into the guest image when built.
simfab: build/simfab/opensm-pr.txt build/simfab/opensm-pr-routed-A.txt \
	build/simfab/opensm-pr-routed-B.txt
	tests/simfab/build
	$(MAKE) -C tests/simfab/client O=$(CURDIR)/build/simfab

# OpenSM's PathRecords on ibsim for simfab's default topology: the reference
# the vm tier's simfab-fidelity test compares simfab's SA with.
FIDELITY_DEPS := tests/simfab/topology/default.topo tests/simfab/fidelity/run \
	tests/simfab/fidelity/normalize.awk
build/simfab/opensm-pr.txt: $(FIDELITY_DEPS)
	tests/simfab/fidelity/run
# The same for each subnet of the routed topology, with its routers and
# prefix routes (off-subnet DGIDs). One ibsim at a time (they share the
# simulator's socket and the work directory): the order-only prerequisites
# keep make -j from running two.
FIDELITY_ROUTED := tests/simfab/fidelity/run -t tests/simfab/topology/routed.topo
build/simfab/opensm-pr-routed-A.txt: tests/simfab/topology/routed.topo $(FIDELITY_DEPS) \
		| build/simfab/opensm-pr.txt
	$(FIDELITY_ROUTED) -s A -o $@
build/simfab/opensm-pr-routed-B.txt: tests/simfab/topology/routed.topo $(FIDELITY_DEPS) \
		| build/simfab/opensm-pr-routed-A.txt
	$(FIDELITY_ROUTED) -s B -o $@

# ib-routed-verify and ib-routed-info (userspace/tools), ib-remote-sa-query
# (userspace/remote-sa) and ib-routed-ipresolved (userspace/ip-resolver)
# into build/tools; the vm tiers put them into the guest image.
tools:
	$(MAKE) -C userspace/tools O=$(CURDIR)/build/tools all
	$(MAKE) -C userspace/remote-sa O=$(CURDIR)/build/tools all
	$(MAKE) -C userspace/ip-resolver O=$(CURDIR)/build/tools all

# The patched librdmacm (userspace/librdmacm/) into build/librdmacm, from
# RDMA_CORE_SRC= or Debian's rdma-core orig tarball; cached, so a second
# run only checks the stamp. The vm tier's guest image carries it.
librdmacm:
	userspace/librdmacm/build -j $(JOBS)

# Packages: build/deb (packaging/deb/), build/rpm (packaging/rpm/).
deb:
	packaging/deb/build

rpm:
	packaging/rpm/build

# Signed apt and yum/dnf repositories of those packages in build/repo, for
# any web server (packaging/repo/README.md):
#   make repo REPO_KEY=<gpg key id> [REPO_URL=https://host/path] [GNUPGHOME=...]
REPO_KEY ?=
REPO_URL ?=
repo:
	@test -n "$(REPO_KEY)" || { echo "usage: make repo REPO_KEY=<gpg key id> [REPO_URL=<url>] (packaging/repo/README.md)"; exit 2; }
	$(MAKE) deb rpm
	packaging/repo/build --key "$(REPO_KEY)" $(if $(REPO_URL),--url "$(REPO_URL)")

demo: deps modules simfab
	tests/vm/demo

# Developer workflow for kernel-patches/<series>/ (see docs/development.md);
# SERIES=librdmacm for the librdmacm series (userspace/librdmacm/).
SERIES ?=
SERIES_OPT := $(if $(filter librdmacm,$(SERIES)),--librdmacm)
series-import:
	@test -n "$(TREE)" || { echo "usage: make series-import TREE=<dir> [SERIES=librdmacm]"; exit 2; }
	scripts/series-tree import $(SERIES_OPT) $(if $(KVER),-k $(KVER)) "$(TREE)"

series-export:
	@test -n "$(TREE)" || { echo "usage: make series-export TREE=<dir>"; exit 2; }
	scripts/series-tree export "$(TREE)"

series-check:
	scripts/series-tree check $(SERIES_OPT) $(if $(KVER),-k $(KVER))

# Install from this checkout through DKMS as the packages do: the DKMS
# source, ib-routed's autoinstall (/usr/libexec/ib-routed/dkms-kernel; dkms.conf
# says why not dkms's) and its kernel hooks, then a build for KVER (default:
# the running kernel). A kernel it cannot build is skipped with the reason.
DKMS_SRC := /usr/src/ib-routed-$(VERSION)
DKMS_FORCE := /usr/share/dkms/modules_to_force_install/ib-routed
DKMS_DRIVER := /usr/libexec/ib-routed/dkms-kernel
KERNEL_HOOKS := $(foreach h,postinst header_postinst postrm,/etc/kernel/$(h).d/ib-routed)

# Installs what building the overlay needs (scripts/install-deps dkms: DKMS,
# the compiler, the kernel's headers and source) and nothing else.
DKMS_KVER = $(or $(KVER),$(shell uname -r))
dkms-install:
	scripts/install-deps dkms $(DKMS_KVER)
	scripts/dkms-source $(DKMS_SRC) $(VERSION)
	mkdir -p $(dir $(DKMS_FORCE)) $(dir $(DKMS_DRIVER))
	echo ib-routed > $(DKMS_FORCE)
	sed 's/#MODULE_VERSION#/$(VERSION)/' scripts/dkms-kernel > $(DKMS_DRIVER)
	chmod 0755 $(DKMS_DRIVER)
	for h in $(KERNEL_HOOKS); do install -D -m 0755 scripts/kernel-hook $$h; done
	$(DKMS_DRIVER) install $(DKMS_KVER)

dkms-uninstall:
	-$(DKMS_DRIVER) remove
	rm -rf $(DKMS_SRC) $(DKMS_FORCE) $(DKMS_DRIVER) $(KERNEL_HOOKS) /var/cache/ib-routed/ksrc

clean:
	rm -rf build
