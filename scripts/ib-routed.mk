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
# overlay's. Both come from DKMS's build for that kernel
# (/var/lib/dkms/ib-routed/<version>/<kernel>/<arch>/devel, kept by
# dkms-post-build); without an overlay built for the kernel the build
# stops with a message.

IB_ROUTED_KVER ?= $(KERNELRELEASE)
IB_ROUTED_DEVEL ?= $(lastword $(sort $(wildcard /var/lib/dkms/ib-routed/*/$(IB_ROUTED_KVER)/*/devel)))

ifeq ($(IB_ROUTED_DEVEL),)
$(error ib-routed: no overlay built for kernel $(IB_ROUTED_KVER) (see dkms status ib-routed))
endif

NOSTDINC_FLAGS += -I$(IB_ROUTED_DEVEL)/include -I$(IB_ROUTED_DEVEL)/include/uapi
KBUILD_EXTRA_SYMBOLS += $(IB_ROUTED_DEVEL)/Module.symvers
