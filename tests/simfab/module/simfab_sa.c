// SPDX-License-Identifier: GPL-2.0
/*
 * simfab's Subnet Administrator: answers SubnAdmGet and SubnAdmGetTable of
 * PathRecord sent to the SM LID, QP1, computing the records from the
 * topology the way OpenSM does for a single subnet (osm_sa_path_record.c).
 * IBA references are to Volume 1, release 1.2.1 (chapter 15: SA).
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/atomic.h>
#include <asm/unaligned.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>

#include "simfab.h"

/* Offsets in a SA MAD (IBA 15.2.1.1): MAD header 24, RMPP header 12,
 * SA header (SM_Key 8, AttributeOffset 2, reserved 2, ComponentMask 8).
 */
#define SA_RMPP		24
#define SA_ATTR_OFFSET	44
#define SA_COMP_MASK	48
#define SA_DATA		56
#define SA_DATA_LEN	(IB_MGMT_MAD_SIZE - SA_DATA)
#define PR_LEN		64
#define SA_MAX_RECS	1024	/* 64 KiB of PathRecords per GetTable */

/* SA status codes, MAD status bits 8-14 (IBA 15.2.1.1 table 187). */
#define SA_ERR_NO_RESOURCES	0x0100
#define SA_ERR_NO_RECORDS	0x0300
#define SA_ERR_INVALID_GID	0x0500
#define SA_ERR_INSUFF_COMPS	0x0600

static atomic64_t sa_requests, sa_answered, sa_dropped, sa_acks;

u64 sf_sa_count(int which)
{
	atomic64_t *c[] = { &sa_requests, &sa_answered, &sa_dropped,
			    &sa_acks };

	return atomic64_read(c[which]);
}

struct pr_query {
	struct sf_subnet *sn;	/* the SA's subnet */
	u64 mask;
	const u8 *rec;
	bool get;		/* SubnAdmGet: one record */
	bool routed;		/* DGID off-subnet: to a router port */
};

static bool has(const struct pr_query *q, __be64 bit)
{
	return q->mask & be64_to_cpu(bit);
}

/*
 * IBA 15.2.5.16: selectors 0 >, 1 <, 2 =, 3 largest/smallest available.
 * Like OpenSM (pr_rcv_get_path_parms), "exactly" accepts a path that
 * can do more and answers with the value asked for: a 2048 path carries
 * 1024-byte packets. False when the path does not qualify.
 */
static bool sel_ok(u8 sel, u8 want, u8 *have, bool rate)
{
	int w = want, h = *have;

	if (rate) {
		w = ib_rate_to_mbps(want);
		h = ib_rate_to_mbps(*have);
	}
	switch (sel) {
	case 0: return h > w;
	case 1: return h < w;
	case 2:
		if (h < w)
			return false;
		*have = want;
		return true;
	default: return true;
	}
}

static u8 min_rate(u8 a, u8 b)
{
	return ib_rate_to_mbps(a) <= ib_rate_to_mbps(b) ? a : b;
}

/* OpenSM's match_pkey (osm_pkey.c): the same base, one a full member. */
static bool pkey_pair_ok(u16 a, u16 b)
{
	return (a & 0x7fff) && (a & 0x7fff) == (b & 0x7fff) &&
	       ((a | b) & 0x8000);
}

/* The entry of @p with @pkey's base, or 0. */
static u16 pkey_entry(const struct sf_port *p, u16 pkey)
{
	int i;

	for (i = 0; i < SF_PKEYS; i++)
		if ((p->pkeys[i] & 0x7fff) && (p->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return p->pkeys[i];
	return 0;
}

/*
 * The P_Key of a path when the query names none: OpenSM's
 * osm_physp_find_common_pkey returns the source port's entry of the first
 * shared key in its table map, which is ordered by the base value as a
 * network-order u16 read on a little-endian host (so 0x0001 comes before
 * 0x7fff). Checked against OpenSM 3.3.23 (tests/simfab/fidelity). 0: none.
 */
static u16 common_pkey(const struct sf_port *s, const struct sf_port *d)
{
	u16 best = 0;
	int i;

	for (i = 0; i < SF_PKEYS; i++) {
		u16 k = s->pkeys[i];

		if (!pkey_pair_ok(k, pkey_entry(d, k)))
			continue;
		if (!best || swab16(k & 0x7fff) < swab16(best & 0x7fff))
			best = k;
	}
	return best;
}

/*
 * Build the record for one (SLID, DLID) pair; false when the query's
 * components exclude it. The path crosses one switch, so (as OpenSM
 * computes it hop by hop) MTU and rate are the minimum of both end ports,
 * and the path is reversible (both directions have the same properties).
 */
static bool pr_build(const struct pr_query *q, struct sf_port *s,
		     struct sf_port *d, u16 slid, u16 dlid, u8 pref, u8 *r)
{
	struct sf_props sh, dh;
	u8 mtu, rate, sl, life;
	u16 pkey;
	const u8 *in = q->rec;

	/* A router port's properties are its subnet's defaults. */
	sf_port_props(s, &sh);
	sf_port_props(d, &dh);
	mtu = min(sh.mtu, dh.mtu);
	rate = min_rate(sh.rate, dh.rate);
	/* Symmetric by construction so that the reversible bit is true:
	 * the higher of the two hosts' SLs (the README explains the model).
	 */
	sl = max(sh.sl, dh.sl);
	/* IBA 15.2.5.16 table 205: PacketLifeTime is 0 for a loopback path
	 * (OpenSM pr_rcv_build_pr).
	 */
	life = s == d ? 0 : max(sh.life, dh.life);
	if (has(q, IB_SA_PATH_REC_PKEY)) {
		/* OpenSM osm_physp_share_this_pkey: both ports have the key,
		 * one of them as a full member (IBA 10.9.3); the answer
		 * carries the key as asked.
		 */
		pkey = get_unaligned_be16(in + 50);
		if (!pkey_pair_ok(pkey_entry(s, pkey), pkey_entry(d, pkey)))
			return false;
	} else {
		pkey = common_pkey(s, d);
		if (!pkey)
			return false;
	}
	if (has(q, IB_SA_PATH_REC_SL) && (get_unaligned_be16(in + 52) & 0xf) != sl)
		return false;
	if (has(q, IB_SA_PATH_REC_MTU) &&
	    !sel_ok(has(q, IB_SA_PATH_REC_MTU_SELECTOR) ? in[54] >> 6 : 2,
		    in[54] & 0x3f, &mtu, false))
		return false;
	if (has(q, IB_SA_PATH_REC_RATE) &&
	    !sel_ok(has(q, IB_SA_PATH_REC_RATE_SELECTOR) ? in[55] >> 6 : 2,
		    in[55] & 0x3f, &rate, true))
		return false;
	/* IBA 15.2.5.16: a Reversible component of 1 needs reversible
	 * paths; every path here is.
	 */

	memset(r, 0, PR_LEN);
	if (has(q, IB_SA_PATH_REC_SERVICE_ID))
		memcpy(r, in, 8);
	/* Off-subnet: the DGID asked for, the path to the router port, and
	 * HopLimit 0xFF (OpenSM pr_rcv_build_pr: "only set HopLimit if
	 * going through a router"); on-subnet HopLimit 0. RawTraffic 0,
	 * FlowLabel 0.
	 */
	if (q->routed) {
		memcpy(r + 8, in + 8, 16);
		put_unaligned_be32(0xff, r + 44);
	} else {
		put_unaligned_be64(q->sn->prefix, r + 8);
		put_unaligned_be64(d->guid, r + 16);
		put_unaligned_be32(0, r + 44);
	}
	put_unaligned_be64(q->sn->prefix, r + 24);
	put_unaligned_be64(s->guid, r + 32);
	put_unaligned_be16(dlid, r + 40);
	put_unaligned_be16(slid, r + 42);
	r[48] = 0;				/* TClass */
	r[49] = 0x80;				/* Reversible, NumbPath 0 */
	put_unaligned_be16(pkey, r + 50);
	put_unaligned_be16(sl, r + 52);		/* QoSClass 0, SL */
	r[54] = 2 << 6 | mtu;			/* selector "exactly" */
	r[55] = 2 << 6 | rate;
	r[56] = 2 << 6 | life;
	r[57] = pref;
	return true;
}

/*
 * An off-subnet DGID (OpenSM pr_rcv_get_end_points, with prefix routes,
 * opensm(8) "PREFIX ROUTES"): the first route whose prefix matches (or is
 * "*") names the routers; the first of them whose port on this subnet is
 * present is the path's destination. No route, or no such router:
 * ERR_REQ_INVALID_GID. OpenSM treats a link-local DGID (fe80::/10) as
 * on-subnet whatever its prefix.
 */
static struct sf_port *pr_router(struct pr_query *q, u64 prefix, u16 *err)
{
	struct sf_subnet *sn = q->sn;
	int i, v, p;

	for (i = 0; i < sn->nroutes; i++) {
		struct sf_route *rt = &sn->routes[i];

		if (rt->prefix && rt->prefix != prefix)
			continue;
		for (v = 0; v < rt->nvia; v++) {
			struct sf_router *r = &sf_fab.routers[rt->via[v]];

			for (p = 0; p < r->nports; p++)
				if (r->port[p].subnet == sn - sf_fab.subnets &&
				    !sf_port_absent(&r->port[p])) {
					q->routed = true;
					return &r->port[p];
				}
		}
		break;
	}
	*err = SA_ERR_INVALID_GID;
	return NULL;
}

static struct sf_port *pr_end(struct pr_query *q, bool src, u16 *err)
{
	__be64 gbit = src ? IB_SA_PATH_REC_SGID : IB_SA_PATH_REC_DGID;
	__be64 lbit = src ? IB_SA_PATH_REC_SLID : IB_SA_PATH_REC_DLID;
	const u8 *gid = q->rec + (src ? 24 : 8);
	int subnet = q->sn - sf_fab.subnets;
	u64 prefix = get_unaligned_be64(gid);
	struct sf_port *p;

	if (has(q, gbit)) {
		if (!src && prefix != q->sn->prefix &&
		    (prefix >> 54) != (0xfe80000000000000ULL >> 54))
			return pr_router(q, prefix, err);
		/* OpenSM: a GID no port owns is ERR_REQ_INVALID_GID. */
		p = sf_port_by_guid(subnet, get_unaligned_be64(gid + 8));
		/* A port that is down has left the subnet (OpenSM drops it
		 * at the next sweep).
		 */
		if (!p || sf_port_absent(p) || prefix != q->sn->prefix) {
			*err = SA_ERR_INVALID_GID;
			return NULL;
		}
		return p;
	}
	if (has(q, lbit)) {
		p = sf_port_by_lid(subnet,
				   get_unaligned_be16(q->rec + (src ? 42 : 40)),
				   NULL);
		if (!p || sf_port_absent(p))
			*err = SA_ERR_NO_RECORDS;
		return p;
	}
	return NULL;
}

/* Add one record; true when it does not fit. */
static bool pr_add(const struct pr_query *q, struct sf_port *sp,
		   struct sf_port *dp, u16 slid, u16 dlid, u8 pref, u8 *out,
		   int max, int *n, int *found)
{
	if (*n == max)
		return true;
	if (pr_build(q, sp, dp, slid, dlid, pref, out + *n * PR_LEN)) {
		(*n)++;
		(*found)++;
	}
	return false;
}

/*
 * Add the records of one port pair; true when they do not fit. As OpenSM
 * (pr_rcv_get_port_pair_paths): the LID ranges are the ports' 2^LMC LIDs,
 * or the one LID the query names; first the "redundant" pairs, both ends
 * stepping up together from the bottom of their ranges (Preference 0),
 * then every other pair (Preference 2). A Get takes one record, a
 * NumbPath component that many per port pair (IBA 15.2.5.16).
 */
static bool pr_pair(const struct pr_query *q, struct sf_port *sp,
		    struct sf_port *dp, u8 *out, int max, int *n)
{
	int nl = 1 << q->sn->lmc, found = 0, iters = INT_MAX, so, dof;
	u16 smin = sp->lid, smax = sp->lid + nl - 1, s;
	u16 dmin = dp->lid, dmax = dp->lid + nl - 1, d;

	if (has(q, IB_SA_PATH_REC_SLID)) {
		s = get_unaligned_be16(q->rec + 42);
		if (s < smin || s > smax)
			return false;
		smin = s;
		smax = s;
	}
	if (has(q, IB_SA_PATH_REC_DLID)) {
		d = get_unaligned_be16(q->rec + 40);
		if (d < dmin || d > dmax)
			return false;
		dmin = d;
		dmax = d;
	}
	if (q->get)
		iters = 1;
	else if (has(q, IB_SA_PATH_REC_NUMB_PATH))
		iters = q->rec[49] & 0x7f;

	for (s = smin, d = dmin; found < iters;) {
		if (pr_add(q, sp, dp, s, d, 0, out, max, n, &found))
			return true;
		if (++s > smax || ++d > dmax)
			break;
	}
	for (s = smin, d = dmin, so = 0, dof = 0; found < iters;) {
		dof++;
		if (++d > dmax) {
			so++;
			if (++s > smax)
				break;
			dof = 0;
			d = dmin;
		}
		if (so == dof)
			continue;
		if (pr_add(q, sp, dp, s, d, 2, out, max, n, &found))
			return true;
	}
	return false;
}

/* Every port of the subnet the SM sees, in port GUID order. */
static int all_ports(struct sf_subnet *sn, struct sf_port **ports)
{
	int i, n = 0;

	for (i = 0; i < sn->nports; i++)
		if (!sf_port_absent(sn->ports[i]))
			ports[n++] = sn->ports[i];
	return n;
}

static int pr_collect(struct pr_query *q, u8 *out, int max, u16 *err)
{
	struct sf_port *ports[SF_SUBNET_PORTS];
	struct sf_port *sp, *dp, *s_one, *d_one;
	int n = 0, np, i, j;

	*err = 0;
	s_one = pr_end(q, true, err);
	if (*err)
		return 0;
	d_one = pr_end(q, false, err);
	if (*err)
		return 0;
	np = all_ports(q->sn, ports);
	/* OpenSM's order (pr_rcv_process_world): destinations outside,
	 * sources inside, both by port GUID, which is topology order here.
	 */
	for (j = 0; j < np; j++) {
		dp = ports[j];
		if (d_one && dp != d_one)
			continue;
		for (i = 0; i < np; i++) {
			sp = ports[i];
			if (s_one && sp != s_one)
				continue;
			if (pr_pair(q, sp, dp, out, max, &n))
				return max + 1;
		}
	}
	return n;
}

/* Address an answer: from the SM port's QP1 back to the request's source
 * LID and QP (IBA 13.5.1.2), reversing its GRH if it had one, and put it
 * on the wire.
 */
static void sa_send(const struct sf_pkt *req, struct sf_pkt *pkt)
{
	struct sf_subnet *sn = &sf_fab.subnets[req->subnet];
	struct sf_port *sm = sn->sm;

	pkt->src = sm;
	pkt->subnet = req->subnet;
	pkt->slid = sn->sm_lid;
	pkt->dlid = req->slid;
	pkt->sl = req->sl;
	pkt->sqpn = 1;
	pkt->dqpn = req->sqpn;
	pkt->qkey = IB_QP1_QKEY;
	pkt->pkey = req->pkey;
	if (req->has_grh) {
		const struct ib_grh *g = (const struct ib_grh *)req->grh;
		struct ib_grh *r = (struct ib_grh *)pkt->grh;

		*r = *g;
		r->sgid = g->dgid;
		r->dgid = g->sgid;
		r->paylen = cpu_to_be16(12 + 8 + IB_MGMT_MAD_SIZE + 4);
		pkt->has_grh = true;
	}
	if (sm)
		sf_count(sm, 0, pkt->data, pkt->len);
	atomic64_inc(&sa_answered);
	if (!sf_deliver(pkt))
		kfree(pkt);
}

static struct sf_pkt *sa_answer(const struct sf_pkt *req, u8 method,
				u16 status)
{
	struct sf_pkt *pkt = sf_pkt_alloc(IB_MGMT_MAD_SIZE, GFP_KERNEL);
	u8 *m;

	if (!pkt) {
		atomic64_inc(&sa_dropped);
		return NULL;
	}
	m = pkt->data;
	memcpy(m, req->data, 24);		/* MAD header, TID kept */
	m[3] = method;
	put_unaligned_be16(status, m + 4);
	memcpy(m + SA_COMP_MASK, req->data + SA_COMP_MASK, 8);
	put_unaligned_be16(PR_LEN / 8, m + SA_ATTR_OFFSET);
	return pkt;
}

/* A non-RMPP answer: Get, or an error to another method. */
static void sa_reply(struct sf_pkt *req, u8 method, u16 status,
		     const u8 *recs, int n)
{
	struct sf_pkt *pkt = sa_answer(req, method, status);

	if (!pkt)
		return;
	if (n)
		memcpy(pkt->data + SA_DATA, recs, n * PR_LEN);
	sa_send(req, pkt);
}

/*
 * GetTableResp over RMPP (IBA 13.6.2): the SA data (records back to back)
 * is cut into 200-byte segments, each behind a copy of the MAD, RMPP and
 * SA headers. Only segment 1 goes at once, since the receiver's window
 * starts at 1 (mad_rmpp.c); the rest follow the receiver's ACKs up to the
 * window each ACK grants. A one-segment answer is complete when sent.
 */
#define SA_XFERS	8

struct sa_xfer {
	struct sf_pkt *req;	/* copy of the request */
	u16 status;
	u8 *data;
	u32 len;
	int nsegs;
	int sent;
	unsigned long start;
};

static struct sa_xfer sa_xfers[SA_XFERS];	/* only the worker uses it */

static void sa_xfer_free(struct sa_xfer *x)
{
	kfree(x->req);
	kfree(x->data);
	memset(x, 0, sizeof(*x));
}

void sf_sa_cleanup(void)
{
	int i;

	for (i = 0; i < SA_XFERS; i++)
		sa_xfer_free(&sa_xfers[i]);
}

static void sa_send_seg(struct sa_xfer *x, int seg)
{
	u32 off = (seg - 1) * SA_DATA_LEN;
	u32 chunk = min_t(u32, x->len - off, SA_DATA_LEN);
	struct sf_pkt *pkt;
	u8 *m, flags = IB_MGMT_RMPP_FLAG_ACTIVE;
	u32 paylen = 0;

	pkt = sa_answer(x->req, IB_SA_METHOD_GET_TABLE_RESP, x->status);
	if (!pkt)
		return;
	m = pkt->data;
	if (x->len)
		memcpy(m + SA_DATA, x->data + off, chunk);
	/* PayloadLength: in the first segment the whole transfer (every
	 * segment's SA header and data), in the last the bytes it carries,
	 * otherwise 0 (IBA 13.6.2.3); ib_mad sizes the result from the
	 * last one (mad_rmpp.c get_mad_len).
	 */
	if (seg == 1) {
		flags |= IB_MGMT_RMPP_FLAG_FIRST;
		paylen = x->nsegs * 20 + x->len;
	}
	if (seg == x->nsegs) {
		flags |= IB_MGMT_RMPP_FLAG_LAST;
		paylen = 20 + chunk;
		if (seg == 1)
			paylen = 20 + x->len;
	}
	m[SA_RMPP] = IB_MGMT_RMPP_VERSION;
	m[SA_RMPP + 1] = IB_MGMT_RMPP_TYPE_DATA;
	m[SA_RMPP + 2] = flags;
	put_unaligned_be32(seg, m + SA_RMPP + 4);
	put_unaligned_be32(paylen, m + SA_RMPP + 8);
	x->sent = seg;
	sa_send(x->req, pkt);
}

static void sa_table(struct sf_pkt *req, u16 status, u8 *data, u32 len)
{
	struct sa_xfer *x = NULL;
	int i;

	/* A free slot, else the oldest (its receiver gave up long ago). */
	for (i = 0; i < SA_XFERS; i++) {
		if (!sa_xfers[i].req) {
			x = &sa_xfers[i];
			break;
		}
		if (!x || time_before(sa_xfers[i].start, x->start))
			x = &sa_xfers[i];
	}
	sa_xfer_free(x);
	x->req = kmemdup(req, struct_size(req, data, req->len), GFP_KERNEL);
	if (!x->req) {
		kfree(data);
		atomic64_inc(&sa_dropped);
		return;
	}
	x->status = status;
	x->data = data;
	x->len = len;
	x->nsegs = max_t(int, 1, DIV_ROUND_UP(len, SA_DATA_LEN));
	x->start = jiffies;
	sa_send_seg(x, 1);
	if (x->nsegs == 1)
		sa_xfer_free(x);
}

/* An RMPP ACK, STOP or ABORT from a requester. */
static void sa_rmpp_ctl(struct sf_pkt *pkt)
{
	const u8 *m = pkt->data;
	struct sa_xfer *x = NULL;
	int i, seg, win;

	for (i = 0; i < SA_XFERS; i++)
		if (sa_xfers[i].req && sa_xfers[i].req->slid == pkt->slid &&
		    sa_xfers[i].req->subnet == pkt->subnet &&
		    !memcmp(sa_xfers[i].req->data + 8, m + 8, 8))
			x = &sa_xfers[i];
	if (!x)
		return;		/* the ACK of a one-segment answer */
	if (m[SA_RMPP + 1] != IB_MGMT_RMPP_TYPE_ACK) {
		sa_xfer_free(x);
		return;
	}
	seg = get_unaligned_be32(m + SA_RMPP + 4);
	win = get_unaligned_be32(m + SA_RMPP + 8);
	if (seg >= x->nsegs) {
		sa_xfer_free(x);
		return;
	}
	while (x->sent < min(win, x->nsegs))
		sa_send_seg(x, x->sent + 1);
}

/* Called by the worker for every SA-class MAD sent to the SM LID. */
void sf_sa_recv(struct sf_pkt *pkt)
{
	u8 *recs, method = pkt->data[3];
	struct pr_query q;
	u16 err;
	int n;

	/* RMPP ACK/STOP/ABORT for a GetTableResp: they pace a multi-segment
	 * answer; a one-segment answer is complete when sent (IBA 13.6.2.3).
	 * ib_mad's ACK carries the request method (mad_rmpp.c format_ack
	 * flips the response bit), so test the RMPP type, not the method.
	 */
	if ((pkt->data[SA_RMPP + 2] & IB_MGMT_RMPP_FLAG_ACTIVE) &&
	    pkt->data[SA_RMPP + 1] != IB_MGMT_RMPP_TYPE_DATA) {
		atomic64_inc(&sa_acks);
		sa_rmpp_ctl(pkt);
		return;
	}
	atomic64_inc(&sa_requests);
	/* A response is never answered (IBA 13.4.5). */
	if (method & IB_MGMT_METHOD_RESP || pkt->len < IB_MGMT_MAD_SIZE) {
		atomic64_inc(&sa_dropped);
		return;
	}
	if (method != IB_MGMT_METHOD_GET &&
	    method != IB_SA_METHOD_GET_TABLE) {
		sa_reply(pkt, method | IB_MGMT_METHOD_RESP,
			 IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD, NULL, 0);
		return;
	}
	if (method == IB_MGMT_METHOD_GET &&
	    get_unaligned_be16(pkt->data + 16) == IB_SA_ATTR_CLASS_PORTINFO) {
		u8 cpi[PR_LEN] = {};

		/* IBA 13.4.8.1 ClassPortInfo: base version 1, SA class
		 * version 2, no optional capabilities, RespTimeValue 18
		 * (OpenSM's default subnet timeout); ib_sa reads it at start.
		 */
		cpi[0] = 1;
		cpi[1] = 2;
		put_unaligned_be32(18, cpi + 4);
		sa_reply(pkt, IB_MGMT_METHOD_GET_RESP, 0, cpi, 1);
		return;
	}
	if (get_unaligned_be16(pkt->data + 16) != IB_SA_ATTR_PATH_REC) {
		if (method == IB_SA_METHOD_GET_TABLE)
			sa_table(pkt, IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
				 NULL, 0);
		else
			sa_reply(pkt, IB_MGMT_METHOD_GET_RESP,
				 IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
				 NULL, 0);
		return;
	}
	recs = kmalloc_array(SA_MAX_RECS, PR_LEN, GFP_KERNEL);
	if (!recs) {
		atomic64_inc(&sa_dropped);
		return;
	}
	q.sn = &sf_fab.subnets[pkt->subnet];
	q.routed = false;
	q.mask = get_unaligned_be64(pkt->data + SA_COMP_MASK);
	q.rec = pkt->data + SA_DATA;
	q.get = method == IB_MGMT_METHOD_GET;
	n = pr_collect(&q, recs, SA_MAX_RECS, &err);
	if (method == IB_MGMT_METHOD_GET) {
		/* IBA 15.4.3: Get answers one record; OpenSM gives the
		 * first (preferred) one when several match.
		 */
		if (!err && !n)
			err = SA_ERR_NO_RECORDS;
		sa_reply(pkt, IB_MGMT_METHOD_GET_RESP, err, recs, err ? 0 : 1);
		kfree(recs);
		return;
	}
	/* GetTable: no match is an empty table, not an error. */
	if (err == SA_ERR_NO_RECORDS)
		err = 0;
	if (n > SA_MAX_RECS)
		err = SA_ERR_NO_RESOURCES;
	if (err) {
		kfree(recs);
		sa_table(pkt, err, NULL, 0);
		return;
	}
	sa_table(pkt, 0, recs, n * PR_LEN);	/* takes recs */
}
