# ib-routed.mk: build an out-of-tree kernel module against the ib-routed
# overlay instead of the in-tree RDMA CM (installed by ib-routed-dev as
# /usr/share/ib-routed/ib-routed.mk).
#
# In the module's Kbuild file (or the kbuild part of its Makefile):
#
#     include /usr/share/ib-routed/ib-routed.mk
#
# It makes the patched RDMA headers win over the kernel's and gives modpost
# the overlay's Module.symvers, so the module's symbol CRCs are the
# overlay's. Both come from the build DKMS installed for that kernel
# (/var/lib/dkms/ib-routed/<version>/<kernel>/<arch>/devel, kept by
# dkms-post-build), found through DKMS's kernel-<kernel>-<arch> link, as
# dkms status and ib-routed-verify find it: not the highest version
# directory, which may be built but not installed, and which make's
# lexical sort gets wrong (0.10.0 before 0.9.0). Without an overlay
# installed for the kernel the build stops with a message.

IB_ROUTED_KVER ?= $(KERNELRELEASE)
IB_ROUTED_ARCH ?= $(shell uname -m)
IB_ROUTED_DEVEL ?= $(wildcard $(addsuffix /devel,$(realpath /var/lib/dkms/ib-routed/kernel-$(IB_ROUTED_KVER)-$(IB_ROUTED_ARCH))))

ifeq ($(IB_ROUTED_DEVEL),)
$(error ib-routed: no overlay installed for kernel $(IB_ROUTED_KVER) (see dkms status ib-routed))
endif

NOSTDINC_FLAGS += -I$(IB_ROUTED_DEVEL)/include -I$(IB_ROUTED_DEVEL)/include/uapi
KBUILD_EXTRA_SYMBOLS += $(IB_ROUTED_DEVEL)/Module.symvers
