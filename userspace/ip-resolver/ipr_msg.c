// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA netlink local-service messages (ipr_msg.h): decoding the kernel's
 * requests, encoding the answers, with libnl's message and attribute
 * helpers (the daemon's socket is libnl's too). Every length is checked
 * (nlmsg_ok, nla_ok) before it is used; a message that does not hold what
 * its header claims is IPR_MALFORMED with a reason, never read past.
 */
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>

#include "ipr_msg.h"

static enum ipr_kind bad(struct ipr_req *req, const char *why)
{
	req->why = why;
	return IPR_MALFORMED;
}

/* The attributes of an IP_RESOLVE request: exactly one address. */
static enum ipr_kind decode_ip(const struct nlmsghdr *h, struct ipr_req *req)
{
	int hdr = NLMSG_ALIGN(sizeof(struct rdma_ls_ip_resolve_header));
	const struct rdma_ls_ip_resolve_header *fh = nlmsg_data(h);
	struct nlattr *nla;
	int rem, found = 0;

	if (nlmsg_datalen(h) < hdr)
		return bad(req, "IP_RESOLVE shorter than its family header");
	req->ifindex = fh->ifindex;
	nla_for_each_attr(nla, nlmsg_attrdata(h, hdr), nlmsg_attrlen(h, hdr), rem) {
		/* RDMA netlink's own flag (RDMA_NLA_F_MANDATORY) is not
		 * one nla_type() strips. */
		int type = nla->nla_type & RDMA_NLA_TYPE_MASK;

		if (type == LS_NLA_TYPE_IPV4 || type == LS_NLA_TYPE_IPV6) {
			int want = type == LS_NLA_TYPE_IPV4 ? 4 : 16;

			if (found)
				return bad(req, "more than one address attribute");
			if (nla_len(nla) != want)
				return bad(req, "address attribute of the wrong size");
			req->family = type == LS_NLA_TYPE_IPV4 ? AF_INET : AF_INET6;
			memset(req->addr, 0, sizeof(req->addr));
			memcpy(req->addr, nla_data(nla), want);
			found = 1;
		} else if (nla->nla_type & RDMA_NLA_F_MANDATORY) {
			/* as rdma-core's ibacm: a mandatory attribute we do
			 * not know cannot be ignored */
			return bad(req, "unknown mandatory attribute");
		}
	}
	/* nla_ok() stopped before the end: what is left is no attribute. */
	if (rem >= NLA_HDRLEN)
		return bad(req, "attribute length out of bounds");
	if (rem > 0)
		return bad(req, "truncated attribute header");
	if (!found)
		return bad(req, "no address attribute");
	return IPR_IP_RESOLVE;
}

enum ipr_kind ipr_decode(const void *buf, size_t len, struct ipr_req *req,
			 size_t *used)
{
	const struct nlmsghdr *h = buf;
	int rem = len > INT32_MAX ? INT32_MAX : (int)len;
	uint16_t type;

	memset(req, 0, sizeof(*req));
	*used = 0;
	if (len < NLMSG_HDRLEN)
		return bad(req, "shorter than a netlink header");
	type = h->nlmsg_type;
	req->flags = h->nlmsg_flags;
	req->seq = h->nlmsg_seq;
	req->pid = h->nlmsg_pid;
	if (!nlmsg_ok(h, rem))
		return bad(req, "netlink length out of bounds");
	*used = NLMSG_ALIGN(h->nlmsg_len) < len ? NLMSG_ALIGN(h->nlmsg_len) : len;
	if (type == NLMSG_ERROR) {
		const struct nlmsgerr *e = nlmsg_data(h);

		if (nlmsg_datalen(h) < (int)sizeof(e->error))
			return bad(req, "truncated netlink error");
		req->error = -e->error;
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
		return decode_ip(h, req);
	case RDMA_NL_LS_OP_RESOLVE:
		/* The attributes do not matter (it is refused whatever they
		 * say), but a request without the family header is not the
		 * kernel's: count it. It is still answerable by seq.
		 */
		if (nlmsg_datalen(h) <
		    (int)NLMSG_ALIGN(sizeof(struct rdma_ls_resolve_header)))
			return bad(req, "RESOLVE shorter than its family header");
		return IPR_PATH_QUERY;
	default:
		return IPR_OTHER_LS;
	}
}

/* Build the message with libnl, then copy it out: the daemon sends raw
 * bytes (nl_sendto) and the unit tier compares them. */
static size_t encode(void *buf, size_t cap, uint32_t seq, uint32_t pid, uint16_t op,
		     int flags, const uint8_t *gid)
{
	struct nl_msg *msg = nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_LS, op), flags);
	struct nlmsghdr *h;
	size_t len = 0;

	if (!msg)
		return 0;
	h = nlmsg_hdr(msg);
	h->nlmsg_seq = seq;
	h->nlmsg_pid = pid;
	if (gid && nla_put(msg, LS_NLA_TYPE_DGID, 16, gid) < 0)
		goto out;
	if (h->nlmsg_len <= cap) {
		len = h->nlmsg_len;
		memcpy(buf, h, len);
	}
out:
	nlmsg_free(msg);
	return len;
}

size_t ipr_encode_gid(void *buf, size_t cap, uint32_t seq, uint32_t pid,
		      const uint8_t gid[16])
{
	return encode(buf, cap, seq, pid, RDMA_NL_LS_OP_IP_RESOLVE, 0, gid);
}

size_t ipr_encode_err(void *buf, size_t cap, uint32_t seq, uint32_t pid,
		      uint16_t op)
{
	return encode(buf, cap, seq, pid, op, RDMA_NL_LS_F_ERR, NULL);
}
