/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel API differences between the series simfab and its test
 * drivers build for (kernel-patches/series.conf): one switch a change,
 * named after the upstream change, so that every series builds the same
 * code (docs/porting.md).
 *
 * checkpatch: LINUX_VERSION_CODE: an out-of-tree module for several series
 * checkpatch: CONSTANT_COMPARISON: the form of every version switch
 */
#ifndef SIMFAB_COMPAT_H
#define SIMFAB_COMPAT_H

#include <linux/version.h>

/* 6.12 moved the unaligned accessors out of asm/, with no compat header. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * "RDMA/cma: Refactor the inbound/outbound path records process flow"
 * (6.3): an SA PathRecord query's callback gets the record count unsigned.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define SF_NUM_PRS	unsigned int
#else
#define SF_NUM_PRS	int
#endif

/*
 * "RDMA: Pass entire uverbs attr bundle to create cq function" (6.11):
 * a driver's create_cq gets the uverbs bundle instead of the udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define SF_CREATE_CQ_UDATA	struct uverbs_attr_bundle
#else
#define SF_CREATE_CQ_UDATA	struct ib_udata
#endif

/*
 * "RDMA/core: Introduce a DMAH object and its alloc/free APIs" (6.17):
 * reg_user_mr gets the DMA handle (TPH) of the registration.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define SF_REG_USER_MR_DMAH	struct ib_dmah *dmah,
#else
#define SF_REG_USER_MR_DMAH
#endif

/*
 * hex2bin() is declared in linux/hex.h (there in 6.12, not in 6.1), which
 * 7.x's kernel.h no longer includes.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/hex.h>
#endif

#endif
