// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA netlink local-service messages (ipr_msg.h): decoding the kernel's
 * requests, encoding the answers. Every length is checked before it is
 * used; a message that does not hold what its header claims is
 * IPR_MALFORMED with a reason, never read past.
 */
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "ipr_msg.h"

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static enum ipr_kind bad(struct ipr_req *req, const char *why)
{
	req->why = why;
	return IPR_MALFORMED;
}

/* The attributes of an IP_RESOLVE request: exactly one address. */
static enum ipr_kind decode_ip(const uint8_t *p, size_t len,
			       struct ipr_req *req)
{
	size_t hdr = NLMSG_ALIGN(sizeof(struct rdma_ls_ip_resolve_header));
	int found = 0;

	if (len < hdr)
		return bad(req, "IP_RESOLVE shorter than its family header");
	req->ifindex = get32(p);
	p += hdr;
	len -= hdr;
	while (len > 0) {
		uint16_t alen, atype, type;
		size_t step;

		if (len < NLA_HDRLEN)
			return bad(req, "truncated attribute header");
		alen = get16(p);
		atype = get16(p + 2);
		if (alen < NLA_HDRLEN || alen > len)
			return bad(req, "attribute length out of bounds");
		type = atype & RDMA_NLA_TYPE_MASK;
		if (type == LS_NLA_TYPE_IPV4 || type == LS_NLA_TYPE_IPV6) {
			size_t want = type == LS_NLA_TYPE_IPV4 ? 4 : 16;

			if (found)
				return bad(req, "more than one address attribute");
			if ((size_t)(alen - NLA_HDRLEN) != want)
				return bad(req, "address attribute of the wrong size");
			req->family = type == LS_NLA_TYPE_IPV4 ? AF_INET : AF_INET6;
			memset(req->addr, 0, sizeof(req->addr));
			memcpy(req->addr, p + NLA_HDRLEN, want);
			found = 1;
		} else if (atype & RDMA_NLA_F_MANDATORY) {
			/* as rdma-core's ibacm: a mandatory attribute we do
			 * not know cannot be ignored */
			return bad(req, "unknown mandatory attribute");
		}
		step = NLA_ALIGN(alen);
		if (step > len)
			step = len;
		p += step;
		len -= step;
	}
	if (!found)
		return bad(req, "no address attribute");
	return IPR_IP_RESOLVE;
}

enum ipr_kind ipr_decode(const void *buf, size_t len, struct ipr_req *req,
			 size_t *used)
{
	const uint8_t *p = buf;
	uint32_t mlen;
	uint16_t type;

	memset(req, 0, sizeof(*req));
	*used = 0;
	if (len < NLMSG_HDRLEN)
		return bad(req, "shorter than a netlink header");
	mlen = get32(p);
	type = get16(p + 4);
	req->flags = get16(p + 6);
	req->seq = get32(p + 8);
	req->pid = get32(p + 12);
	if (mlen < NLMSG_HDRLEN || mlen > len)
		return bad(req, "netlink length out of bounds");
	*used = NLMSG_ALIGN(mlen) < len ? NLMSG_ALIGN(mlen) : len;
	if (type == NLMSG_ERROR) {
		if (mlen < NLMSG_HDRLEN + sizeof(int32_t))
			return bad(req, "truncated netlink error");
		req->error = -(int32_t)get32(p + NLMSG_HDRLEN);
		return req->error ? IPR_KERNEL_ERROR : IPR_ANSWER;
	}
	if (type < NLMSG_MIN_TYPE)
		return IPR_NOT_LS;	/* NOOP, DONE, OVERRUN */
	if (RDMA_NL_GET_CLIENT(type) != RDMA_NL_LS)
		return IPR_NOT_LS;
	req->op = RDMA_NL_GET_OP(type);
	req->header_ok = 1;
	if (!(req->flags & NLM_F_REQUEST))
		return IPR_ANSWER;
	switch (req->op) {
	case RDMA_NL_LS_OP_IP_RESOLVE:
		return decode_ip(p + NLMSG_HDRLEN, mlen - NLMSG_HDRLEN, req);
	case RDMA_NL_LS_OP_RESOLVE:
		/* The attributes do not matter (it is refused whatever they
		 * say), but a request without the family header is not the
		 * kernel's: count it. It is still answerable by seq.
		 */
		if (mlen - NLMSG_HDRLEN <
		    NLMSG_ALIGN(sizeof(struct rdma_ls_resolve_header)))
			return bad(req, "RESOLVE shorter than its family header");
		return IPR_PATH_QUERY;
	default:
		return IPR_OTHER_LS;
	}
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_hdr(uint8_t *p, uint32_t len, uint16_t op, uint16_t flags,
		    uint32_t seq, uint32_t pid)
{
	put32(p, len);
	put16(p + 4, RDMA_NL_GET_TYPE(RDMA_NL_LS, op));
	put16(p + 6, flags);
	put32(p + 8, seq);
	put32(p + 12, pid);
}

size_t ipr_encode_gid(void *buf, size_t cap, uint32_t seq, uint32_t pid,
		      const uint8_t gid[16])
{
	size_t len = NLMSG_HDRLEN + NLA_HDRLEN + 16;
	uint8_t *p = buf;

	if (cap < len)
		return 0;
	memset(p, 0, len);
	put_hdr(p, len, RDMA_NL_LS_OP_IP_RESOLVE, 0, seq, pid);
	put16(p + NLMSG_HDRLEN, NLA_HDRLEN + 16);
	put16(p + NLMSG_HDRLEN + 2, LS_NLA_TYPE_DGID);
	memcpy(p + NLMSG_HDRLEN + NLA_HDRLEN, gid, 16);
	return len;
}

size_t ipr_encode_err(void *buf, size_t cap, uint32_t seq, uint32_t pid,
		      uint16_t op)
{
	if (cap < NLMSG_HDRLEN)
		return 0;
	memset(buf, 0, NLMSG_HDRLEN);
	put_hdr(buf, NLMSG_HDRLEN, op, RDMA_NL_LS_F_ERR, seq, pid);
	return NLMSG_HDRLEN;
}
