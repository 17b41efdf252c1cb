/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RDMA netlink local-service (RDMA_NL_LS) messages that
 * ib-routed-ipresolved takes from and gives to the kernel: encoding
 * and decoding with libnl's message and attribute helpers, no I/O, so
 * that the unit tier tests every byte.
 *
 * Layout (Linux include/uapi/rdma/rdma_netlink.h; ib_core addr.c and
 * sa_query.c build the requests):
 *   request  nlmsghdr (type RDMA_NL_GET_TYPE(RDMA_NL_LS, op), NLM_F_REQUEST,
 *            seq) + family header + attributes
 *     IP_RESOLVE: family header struct rdma_ls_ip_resolve_header (ifindex),
 *            one attribute RDMA_NLA_F_MANDATORY | LS_NLA_TYPE_IPV4 (4 bytes)
 *            or LS_NLA_TYPE_IPV6 (16 bytes), network byte order
 *     RESOLVE (ib_sa's PathRecord query): family header struct
 *            rdma_ls_resolve_header, then the record's attributes
 *   answer   nlmsghdr with the request's type and seq, no NLM_F_REQUEST;
 *     IP_RESOLVE: attributes right after the header (no family header),
 *            LS_NLA_TYPE_DGID (16 bytes) without the mandatory bit (the
 *            kernel parses with the plain type)
 *     refusal: no payload, RDMA_NL_LS_F_ERR in nlmsg_flags
 */
#ifndef IPR_MSG_H
#define IPR_MSG_H

#include <stddef.h>
#include <stdint.h>

/* What one netlink message is. */
enum ipr_kind {
	IPR_IP_RESOLVE,		/* a well-formed IP-to-GID request */
	IPR_PATH_QUERY,		/* ib_sa's PathRecord query (RESOLVE) */
	IPR_OTHER_LS,		/* another local-service op (not ours) */
	IPR_NOT_LS,		/* another RDMA netlink client's message */
	IPR_ANSWER,		/* an answer (no NLM_F_REQUEST): another listener's */
	IPR_KERNEL_ERROR,	/* NLMSG_ERROR: the kernel refused our answer */
	IPR_MALFORMED,		/* see ipr_req.why */
};

struct ipr_req {
	uint32_t seq;
	uint32_t pid;		/* nlmsg_pid of the message */
	uint16_t op;		/* RDMA_NL_LS op */
	uint16_t flags;
	uint32_t ifindex;	/* IP_RESOLVE: the netdev (requester's netns) */
	int family;		/* IP_RESOLVE: AF_INET or AF_INET6 */
	uint8_t addr[16];	/* IP_RESOLVE: 4 or 16 bytes, network order */
	int header_ok;		/* seq and op are valid (answerable) */
	int error;		/* IPR_KERNEL_ERROR: the errno (positive) */
	const char *why;	/* IPR_MALFORMED: the reason, a constant */
};

/*
 * Decode the message at @buf (@len bytes left in the datagram; @buf
 * 4-byte aligned, as nl_recv's buffer and NLMSG_ALIGN steps give it). Returns its
 * kind and fills @req; *@used is the number of bytes to skip to the next
 * message (0: none can follow, stop).
 */
enum ipr_kind ipr_decode(const void *buf, size_t len, struct ipr_req *req,
			 size_t *used);

/* Answer for an IP_RESOLVE request: the GID. Returns the length, or 0 if
 * @cap is too small. */
size_t ipr_encode_gid(void *buf, size_t cap, uint32_t seq, uint32_t pid,
		      const uint8_t gid[16]);

/* Refusal (RDMA_NL_LS_F_ERR) of a request with op @op. */
size_t ipr_encode_err(void *buf, size_t cap, uint32_t seq, uint32_t pid,
		      uint16_t op);

#endif
