/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough of the kernel for ib_remote_sa's SA answer reader
 * (rsa_sa_recv_handler() of drivers/infiniband/core/remote_sa_sa.c, as
 * the 6.1 series leaves it) to compile on the host for the fuzz target
 * tests/fuzz/fuzz_sa_answer.c. The MAD structures have the kernel's
 * layout (include/rdma/ib_mad.h, ib_sa.h); the rest is what the reader
 * touches and nothing more.
 */
#ifndef IBR_SA_ANSWER_SHIM_H
#define IBR_SA_ANSWER_SHIM_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;	/* as the kernel's */
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef __be64 ib_sa_comp_mask;

#define be16_to_cpu(x)	ntohs(x)
#define be64_to_cpu(x)	((u64)be64toh(x))
#define ALIGN(x, a)	(((x) + (a) - 1) / (a) * (a))
#define min(a, b)	((a) < (b) ? (a) : (b))
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define GFP_KERNEL	0
#define kmalloc(n, f)	malloc(n)
#define kmalloc_array(n, s, f)	((n) && (s) > SIZE_MAX / (n) ? NULL : malloc((n) * (s)))
#define kfree(p)	free(p)
#define container_of(p, t, m)	((t *)((char *)(p) - offsetof(t, m)))

struct list_head {
	struct list_head *next, *prev;
};

#define list_for_each_entry(pos, head, member)				\
	for (pos = container_of((head)->next, __typeof__(*pos), member); \
	     &pos->member != (head);					\
	     pos = container_of(pos->member.next, __typeof__(*pos), member))

#define IB_MGMT_SA_HDR			56
#define IB_MGMT_SA_DATA			200
#define IB_MGMT_METHOD_GET		0x01
#define IB_MGMT_METHOD_RESP		0x80
#define IB_SA_METHOD_GET_TABLE		0x12
#define IB_MGMT_RMPP_FLAG_ACTIVE	1

struct ib_mad_hdr {
	u8	base_version;
	u8	mgmt_class;
	u8	class_version;
	u8	method;
	__be16	status;
	__be16	class_specific;
	__be64	tid;
	__be16	attr_id;
	__be16	resv;
	__be32	attr_mod;
} __attribute__((packed));

struct ib_rmpp_hdr {
	u8	rmpp_version;
	u8	rmpp_type;
	u8	rmpp_rtime_flags;
	u8	rmpp_status;
	__be32	seg_num;
	__be32	paylen_newwin;
} __attribute__((packed));

struct ib_sa_hdr {
	__be64			sm_key;
	__be16			attr_offset;
	__be16			reserved;
	ib_sa_comp_mask		comp_mask;
} __attribute__((packed));

struct ib_sa_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	struct ib_sa_hdr	sa_hdr;
	u8			data[IB_MGMT_SA_DATA];
} __attribute__((packed));

struct ib_mad {
	u8	bytes[256];
};

struct ib_mad_recv_buf {
	struct list_head	list;
	void			*grh;
	struct ib_mad		*mad;
};

struct ib_mad_recv_wc {
	void			*wc;
	struct ib_mad_recv_buf	recv_buf;
	struct list_head	rmpp_list;
	int			mad_len;
	size_t			mad_seg_size;
};

struct ib_mad_send_buf {
	void	*context[2];
};

struct ib_mad_agent {
	void	*context;
};

/* ib_remote_sa's side: a port with its counters, and its device's name. */
enum rsa_counter { RSA_CNT_SA_BAD_ANSWERS, RSA_CNT_MAX };

struct device {
	int	unused;
};

struct ib_device {
	struct device	dev;
};

struct rsa_device {
	struct ib_device	*device;
};

struct rsa_port {
	struct rsa_device	*rsa_dev;
	u32			port_num;
	unsigned long		counters[RSA_CNT_MAX];
};

struct rsa_sm_ah;

typedef void (*rsa_sa_callback)(int status, u16 mad_status, const u8 *data,
				unsigned int n, void *context);

static inline void rsa_count(struct rsa_port *port, enum rsa_counter c)
{
	port->counters[c]++;
}

/* Not printed; sizeof() keeps the format checked and the arguments used. */
#define dev_warn_ratelimited(dev, fmt, ...)				\
	((void)(dev), (void)sizeof(printf(fmt, __VA_ARGS__)))

/* The harness frees the segments itself. */
static inline void ib_free_recv_mad(struct ib_mad_recv_wc *wc)
{
	(void)wc;
}

#endif
