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
/* MCMemberRecord (IBA 15.2.5.17): 52 bytes, 56 apart in a table. */
#define MCM_LEN		52
#define MCM_STRIDE	56
#define MCM_QKEY_IPOIB	0x0b1b	/* OpenSM's IPoIB broadcast Q_Key */
/* NodeRecord (IBA 15.2.5.2): LID, reserved, NodeInfo (40 bytes, IBA
 * 14.2.5.3), NodeDescription (64); 108 bytes, 112 apart in a table.
 */
#define NR_ATTR		0x0011
#define NR_LEN		108
#define NR_STRIDE	112
/* NodeRecord ComponentMask bits (IBA 15.2.5.2; OpenSM IB_NR_COMPMASK_*). */
#define NR_COMP_LID		BIT_ULL(0)
#define NR_COMP_NODETYPE	BIT_ULL(4)
#define NR_COMP_NUMPORTS	BIT_ULL(5)
#define NR_COMP_SYSIMAGEGUID	BIT_ULL(6)
#define NR_COMP_NODEGUID	BIT_ULL(7)
#define NR_COMP_PORTGUID	BIT_ULL(8)
#define NR_COMP_PORTNUM		BIT_ULL(12)

/* SA status codes, MAD status bits 8-14 (IBA 15.2.1.1 table 187). */
#define SA_ERR_NO_RESOURCES	0x0100
#define SA_ERR_REQ_INVALID	0x0200
#define SA_ERR_NO_RECORDS	0x0300
#define SA_ERR_TOO_MANY_RECS	0x0400
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
	/* The port the query came from (by its SLID), or NULL. */
	const struct sf_port *req;
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
 * OpenSM's osm_physp_share_pkey (osm_pkey.c): a port shares with itself;
 * two ports share when they have an entry of one partition, one of them
 * as a full member.
 */
static bool share_pkey(const struct sf_port *a, const struct sf_port *b)
{
	int i;

	if (a == b)
		return true;
	for (i = 0; i < SF_PKEYS; i++)
		if (pkey_pair_ok(a->pkeys[i], pkey_entry(b, a->pkeys[i])))
			return true;
	return false;
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
	u64 s_iid = s->guid, d_iid = d->guid;

	/*
	 * A GID asked for by its alias GUID is answered with it (OpenSM
	 * pr_rcv_build_pr() takes the SGID and DGID from the requested
	 * alias GUIDs); a port found by LID, or by GID index 0, has its GUID.
	 */
	if (has(q, IB_SA_PATH_REC_SGID) &&
	    sf_port_owns_iid(s, get_unaligned_be64(in + 32)))
		s_iid = get_unaligned_be64(in + 32);
	if (has(q, IB_SA_PATH_REC_DGID) &&
	    sf_port_owns_iid(d, get_unaligned_be64(in + 16)))
		d_iid = get_unaligned_be64(in + 16);

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
		put_unaligned_be64(d_iid, r + 16);
		put_unaligned_be32(0, r + 44);
	}
	put_unaligned_be64(q->sn->prefix, r + 24);
	put_unaligned_be64(s_iid, r + 32);
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

/* A router's port on this subnet, or NULL. */
static struct sf_port *pr_rport(struct sf_router *r, int subnet)
{
	int p;

	for (p = 0; p < r->nports; p++)
		if (r->port[p].subnet == subnet)
			return &r->port[p];
	return NULL;
}

/*
 * router_choice=opensm: a router port the SM knows: its router up as of the
 * last sweep, and the port on the SM's side of a partitioned subnet (seen
 * at once, as hosts' ports are: sf_port_absent).
 */
static bool sa_router_known(const struct sf_port *p)
{
	return !p->rtr->sa_down && !sf_port_cut_off(p);
}

/*
 * router_choice=opensm, OpenSM find_router() (osm_sa_path_record.c), called
 * from pr_rcv_get_end_points(): the first prefix route whose prefix matches
 * (or is "*") decides, and only it; its router GUID is looked up in the
 * SM's router table (rtr_guid_tbl), GUID 0 ("*" here: via=* ) being that
 * table's head, the lowest GUID. A router not in the table (down as of the
 * last sweep: sa_down) is ERR_REQ_INVALID_GID; a router that went down
 * since is still named (the SM has not seen it yet).
 */
static struct sf_port *pr_router_opensm(struct pr_query *q,
					const struct sf_route *rt)
{
	int subnet = q->sn - sf_fab.subnets;
	struct sf_port *best = NULL, *p;
	int i;

	if (rt->nvia) {
		struct sf_router *r = &sf_fab.routers[rt->via[0]];

		p = pr_rport(r, subnet);
		return p && sa_router_known(p) ? p : NULL;
	}
	for (i = 0; i < sf_fab.nrouters; i++) {
		p = pr_rport(&sf_fab.routers[i], subnet);
		if (p && sa_router_known(p) &&
		    (!best || p->guid < best->guid))
			best = p;
	}
	return best;
}

/*
 * An off-subnet DGID (OpenSM pr_rcv_get_end_points, with prefix routes,
 * opensm(8) "PREFIX ROUTES"): the first route whose prefix matches (or is
 * "*") names the routers. router_choice=opensm: pr_router_opensm().
 * router_choice=first-present (NOT OpenSM): the first of via= (via=*: of
 * every router) whose port on this subnet is present now, an instant
 * fallback OpenSM does not make. No route, or no such router:
 * ERR_REQ_INVALID_GID. OpenSM treats a link-local DGID (fe80::/10) as
 * on-subnet whatever its prefix.
 */
static struct sf_port *pr_router(struct pr_query *q, u64 prefix, u16 *err)
{
	struct sf_subnet *sn = q->sn;
	struct sf_port *rp;
	int i, v;

	for (i = 0; i < sn->nroutes; i++) {
		struct sf_route *rt = &sn->routes[i];

		if (rt->prefix && rt->prefix != prefix)
			continue;
		if (sf_rc_opensm) {
			rp = pr_router_opensm(q, rt);
			if (rp) {
				q->routed = true;
				return rp;
			}
			break;
		}
		/* via=*: every router, in topology order */
		for (v = 0; v < (rt->nvia ?: sf_fab.nrouters); v++) {
			rp = pr_rport(&sf_fab.routers[rt->nvia ? rt->via[v] : v],
				      sn - sf_fab.subnets);
			if (rp && !sf_port_absent(rp)) {
				q->routed = true;
				return rp;
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

	/*
	 * OpenSM (pr_rcv_get_port_pair_paths): a requester learns only the
	 * paths between ports it shares a partition with, each end
	 * (osm_port_share_pkey), whatever the two ends share.
	 */
	if (q->req && (!share_pkey(q->req, sp) || !share_pkey(q->req, dp)))
		return false;

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

/* A port the SA does not know: router_choice=opensm sees a router's
 * down/up as of the last sweep (sa_router_known), hosts' and
 * first-present's now.
 */
static bool sa_absent(const struct sf_port *p)
{
	return sf_rc_opensm && p->rtr ? !sa_router_known(p) : sf_port_absent(p);
}

/* Every port of the subnet the SM sees, in port GUID order. */
static int all_ports(struct sf_subnet *sn, struct sf_port **ports)
{
	int i, n = 0;

	for (i = 0; i < sn->nports; i++)
		if (!sa_absent(sn->ports[i]))
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
	/*
	 * The SA answers on the P_Key index the request came in on, so the
	 * answer carries the SM port's own entry of that partition (its
	 * HCA sends its table's P_Key): a full member's, which a limited
	 * member's port accepts where its own key would not (IBA 10.9.3).
	 */
	pkt->pkey = (sm ? pkey_entry(sm, req->pkey) : 0) ?: req->pkey;
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
	/* AttributeOffset: the record's size in 8-byte words (IBA 15.2.1.1). */
	switch (get_unaligned_be16(req->data + 16)) {
	case IB_SA_ATTR_MC_MEMBER_REC:
		put_unaligned_be16(MCM_STRIDE / 8, m + SA_ATTR_OFFSET);
		break;
	case NR_ATTR:
		put_unaligned_be16(NR_STRIDE / 8, m + SA_ATTR_OFFSET);
		break;
	default:
		put_unaligned_be16(PR_LEN / 8, m + SA_ATTR_OFFSET);
		break;
	}
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

static void sa_table(struct sf_pkt *req, u16 status, u8 *data, u32 len);

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

/* ---- multicast: MCMemberRecord (IBA 15.2.5.17) ------------------------ */

/*
 * MCMemberRecord: MGID 0, PortGID 16, Q_Key 32, MLID 36, MTUSelector|MTU
 * 38, TClass 39, P_Key 40, RateSelector|Rate 42, PacketLifeTimeSelector|
 * PacketLifeTime 43, SL|FlowLabel|HopLimit 44, Scope|JoinState 48,
 * ProxyJoin 49; 52 bytes, 56 apart in a table (AttributeOffset 7).
 */

static bool mcm_has(u64 mask, __be64 bit)
{
	return mask & be64_to_cpu(bit);
}

static void mcm_encode(const struct sf_mcg *g, const struct sf_port *port,
		       u8 join, u8 *r)
{
	struct sf_subnet *sn = &sf_fab.subnets[g->subnet];

	memset(r, 0, MCM_STRIDE);
	memcpy(r, g->mgid.raw, 16);
	if (port) {
		put_unaligned_be64(sn->prefix, r + 16);
		put_unaligned_be64(port->guid, r + 24);
	}
	put_unaligned_be32(g->qkey, r + 32);
	put_unaligned_be16(g->mlid, r + 36);
	r[38] = 2 << 6 | g->mtu;
	r[39] = g->tclass;
	put_unaligned_be16(g->pkey, r + 40);
	r[42] = 2 << 6 | g->rate;
	r[43] = 2 << 6 | g->life;
	put_unaligned_be32((u32)g->sl << 28 | (g->flow & 0xfffff) << 8 | g->hop,
			   r + 44);
	r[48] = g->scope << 4 | (join & 0xf);
}

struct sf_mcg *sf_mcg_by_mlid(int subnet, u16 mlid)
{
	int i;

	for (i = 0; i < SF_MAX_MCG; i++)
		if (sf_fab.mcgs[i].used && sf_fab.mcgs[i].subnet == subnet &&
		    sf_fab.mcgs[i].mlid == mlid)
			return &sf_fab.mcgs[i];
	return NULL;
}

static struct sf_mcg *mcg_by_mgid(int subnet, const u8 *mgid)
{
	int i;

	for (i = 0; i < SF_MAX_MCG; i++)
		if (sf_fab.mcgs[i].used && sf_fab.mcgs[i].subnet == subnet &&
		    !memcmp(sf_fab.mcgs[i].mgid.raw, mgid, 16))
			return &sf_fab.mcgs[i];
	return NULL;
}

/* A free group slot with the subnet's next free MLID (OpenSM counts
 * from 0xC000), or NULL.
 */
static struct sf_mcg *mcg_new(int subnet)
{
	struct sf_mcg *g = NULL;
	u16 mlid;
	int i;

	for (i = 0; i < SF_MAX_MCG && !g; i++)
		if (!sf_fab.mcgs[i].used)
			g = &sf_fab.mcgs[i];
	if (!g)
		return NULL;
	for (mlid = SF_MC_LID_BASE; sf_mcg_by_mlid(subnet, mlid); mlid++)
		;
	memset(g, 0, sizeof(*g));
	g->used = true;
	g->subnet = subnet;
	g->mlid = mlid;
	return g;
}

/*
 * The IPoIB broadcast group of each P_Key of each subnet, created in
 * advance as OpenSM does for a partition flagged "ipoib" (its
 * partitions.conf defaults: Q_Key 0x0B1B, MTU 2048, 10 Gb/s, scope 2
 * link-local, TClass 0, FlowLabel 0): MGID ff12:401b:PKEY::ffff:ffff
 * (RFC 4391 section 4, the P_Key with its full-member bit). ib_ipoib
 * joins it with only MGID, PortGID, P_Key and JoinState, so Q_Key, MTU,
 * SL and rate must already be there. The MTU is the smaller of 2048 and
 * the subnet's smallest host port MTU, and the SL the subnet's default,
 * as an administrator would set them (mtu=, sl=) so that every port can
 * join (OpenSM refuses a port whose MTU or rate is below the group's).
 * PacketLifeTime: the subnet's.
 */
void sf_sa_mcast_init(void)
{
	struct sf_props pr;
	int s, i, k, j;

	for (s = 0; s < sf_fab.nsubnets; s++) {
		struct sf_subnet *sn = &sf_fab.subnets[s];
		u8 mtu = IB_MTU_2048;

		for (i = 0; i < sn->nports; i++) {
			if (!sn->ports[i]->dev)
				continue;
			sf_port_props(sn->ports[i], &pr);
			mtu = min(mtu, pr.mtu);
		}
		for (i = 0; i < sn->nports; i++) {
			for (k = 0; k < SF_PKEYS; k++) {
				u16 pkey = sn->ports[i]->pkeys[k] | 0x8000;
				struct sf_mcg *g;
				u8 mgid[16] = { 0xff, 0x12, 0x40, 0x1b };

				if (!sn->ports[i]->dev)
					continue;
				mgid[4] = pkey >> 8;
				mgid[5] = pkey & 0xff;
				for (j = 12; j < 16; j++)
					mgid[j] = 0xff;
				if (mcg_by_mgid(s, mgid))
					continue;
				g = mcg_new(s);
				if (!g)
					return;
				memcpy(g->mgid.raw, mgid, 16);
				g->well_known = true;
				g->qkey = MCM_QKEY_IPOIB;
				g->pkey = pkey;
				g->mtu = mtu;
				g->rate = IB_RATE_10_GBPS;
				g->life = sn->def.life;
				g->sl = sn->def.sl;
				g->scope = 2;
			}
		}
	}
}

/* The port a record's PortGID names on @subnet, or NULL. */
static struct sf_port *mcm_port(int subnet, const u8 *gid)
{
	struct sf_port *p;

	if (get_unaligned_be64(gid) != sf_fab.subnets[subnet].prefix)
		return NULL;
	p = sf_port_by_guid(subnet, get_unaligned_be64(gid + 8));
	return p && !sf_port_absent(p) ? p : NULL;
}

/*
 * A value with its selector (IBA 15.2.5.16 table 205: 0 greater than,
 * 1 less than, 2 exactly, 3 largest available) against what the group
 * or the port offers; @have is enum ib_mtu or a rate in Mb/s.
 */
static bool mcm_sel_ok(u8 sel, int want, int have)
{
	switch (sel) {
	case 0: return have > want;
	case 1: return have < want;
	case 2: return have == want;
	default: return true;
	}
}

/* The components of a join that the group must match (OpenSM
 * validate_other_comp_fields); false: ERR_REQ_INVALID.
 */
static bool mcm_matches(const struct sf_mcg *g, u64 mask, const u8 *r)
{
	u32 w = get_unaligned_be32(r + 44);

	if (mcm_has(mask, IB_SA_MCMEMBER_REC_QKEY) &&
	    get_unaligned_be32(r + 32) != g->qkey)
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_MLID) &&
	    get_unaligned_be16(r + 36) != g->mlid)
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_MTU) &&
	    !mcm_sel_ok(mcm_has(mask, IB_SA_MCMEMBER_REC_MTU_SELECTOR) ?
			r[38] >> 6 : 2, r[38] & 0x3f, g->mtu))
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_TRAFFIC_CLASS) && r[39] != g->tclass)
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_PKEY) &&
	    (get_unaligned_be16(r + 40) & 0x7fff) != (g->pkey & 0x7fff))
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_RATE) &&
	    !mcm_sel_ok(mcm_has(mask, IB_SA_MCMEMBER_REC_RATE_SELECTOR) ?
			r[42] >> 6 : 2, ib_rate_to_mbps(r[42] & 0x3f),
			ib_rate_to_mbps(g->rate)))
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_SL) && w >> 28 != g->sl)
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_FLOW_LABEL) &&
	    ((w >> 8) & 0xfffff) != g->flow)
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_HOP_LIMIT) && (w & 0xff) != g->hop)
		return false;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_SCOPE) && r[48] >> 4 != g->scope)
		return false;
	return true;
}

/* What a new group takes from the join (OpenSM mcmr_rcv_create_new_mgrp);
 * false when the port cannot carry what was asked for.
 */
static bool mcm_create(struct sf_mcg *g, u64 mask, const u8 *r,
		       const struct sf_port *port)
{
	struct sf_props pr;
	u32 w = get_unaligned_be32(r + 44);
	u8 sel;

	sf_port_props(port, &pr);
	memcpy(g->mgid.raw, r, 16);
	g->qkey = get_unaligned_be32(r + 32);
	g->pkey = get_unaligned_be16(r + 40);
	g->tclass = r[39];
	g->sl = w >> 28;
	g->flow = (w >> 8) & 0xfffff;
	g->hop = mcm_has(mask, IB_SA_MCMEMBER_REC_HOP_LIMIT) ? w & 0xff : 0;
	g->scope = r[1] & 0xf;
	g->mtu = pr.mtu;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_MTU)) {
		sel = mcm_has(mask, IB_SA_MCMEMBER_REC_MTU_SELECTOR) ?
		      r[38] >> 6 : 2;
		if (sel == 2)
			g->mtu = r[38] & 0x3f;
		if (!mcm_sel_ok(sel, r[38] & 0x3f, g->mtu) || g->mtu > pr.mtu ||
		    g->mtu < IB_MTU_256)
			return false;
	}
	g->rate = pr.rate;
	if (mcm_has(mask, IB_SA_MCMEMBER_REC_RATE)) {
		sel = mcm_has(mask, IB_SA_MCMEMBER_REC_RATE_SELECTOR) ?
		      r[42] >> 6 : 2;
		if (sel == 2)
			g->rate = r[42] & 0x3f;
		if (!mcm_sel_ok(sel, ib_rate_to_mbps(r[42] & 0x3f),
				ib_rate_to_mbps(g->rate)) ||
		    ib_rate_to_mbps(g->rate) <= 0 ||
		    ib_rate_to_mbps(g->rate) > ib_rate_to_mbps(pr.rate))
			return false;
	}
	g->life = mcm_has(mask, IB_SA_MCMEMBER_REC_PACKET_LIFE_TIME) ?
		  r[43] & 0x3f : sf_fab.subnets[g->subnet].def.life;
	return true;
}

static bool mcm_has_pkey(const struct sf_port *p, u16 pkey)
{
	int i;

	for (i = 0; i < SF_PKEYS; i++)
		if ((p->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return true;
	return false;
}

/*
 * Set (join) and Delete (leave), as OpenSM's osm_sa_mcmember_record.c
 * and IBA 15.4.2: MGID, PortGID and JoinState are required
 * (ERR_INSUFFICIENT_COMPONENTS); the PortGID must be the requester's own
 * port (no proxy joins here) and carry the group's P_Key; a port whose
 * MTU or rate is below the group's cannot join (ERR_REQ_INVALID). A join
 * to an unknown MGID creates the group when it also gives Q_Key, P_Key,
 * SL, FlowLabel and TClass (OpenSM's REQUIRED_MC_CREATE_COMP) and the
 * JoinState includes a full membership; an MGID of 0 (SA-assigned) is
 * not supported (ERR_REQ_INVALID). The answer is the group's record with
 * the port's JoinState (all the bits it holds). A leave removes the
 * given bits; a group that no longer has a FullMember is deleted unless
 * it was created in advance (OpenSM osm_mgrp_cleanup).
 */
static u16 mcm_set_delete(struct sf_pkt *pkt, bool join, u8 *out)
{
	const u64 need = be64_to_cpu(IB_SA_MCMEMBER_REC_MGID |
				     IB_SA_MCMEMBER_REC_PORT_GID |
				     IB_SA_MCMEMBER_REC_JOIN_STATE);
	const u64 create = be64_to_cpu(IB_SA_MCMEMBER_REC_QKEY |
				       IB_SA_MCMEMBER_REC_PKEY |
				       IB_SA_MCMEMBER_REC_SL |
				       IB_SA_MCMEMBER_REC_FLOW_LABEL |
				       IB_SA_MCMEMBER_REC_TRAFFIC_CLASS);
	u64 mask = get_unaligned_be64(pkt->data + SA_COMP_MASK);
	const u8 *r = pkt->data + SA_DATA;
	static const u8 zero[16];
	u8 js = r[48] & 0xf;
	struct sf_port *port;
	struct sf_props pr;
	struct sf_mcg *g;
	unsigned long flags;
	u16 err = 0;
	int idx, i;
	bool full;

	if ((mask & need) != need)
		return SA_ERR_INSUFF_COMPS;
	port = mcm_port(pkt->subnet, r + 16);
	if (!port || !js || !memcmp(r, zero, 16) || r[0] != 0xff ||
	    (r[49] & 0x80))
		return SA_ERR_REQ_INVALID;
	/* The requester's own port: its LID range holds the SLID. */
	if ((pkt->slid & ~((1 << sf_fab.subnets[pkt->subnet].lmc) - 1)) !=
	    port->lid)
		return SA_ERR_REQ_INVALID;
	idx = sf_port_index(port);
	sf_port_props(port, &pr);
	spin_lock_irqsave(&sf_lock, flags);
	g = mcg_by_mgid(pkt->subnet, r);
	if (!join) {
		if (!g || !(g->join[idx] & js)) {
			err = SA_ERR_REQ_INVALID;
			goto out;
		}
		mcm_encode(g, port, js, out);
		g->join[idx] &= ~js;
		full = false;
		for (i = 0; i < SF_SUBNET_PORTS; i++)
			full |= g->join[i] & 1;
		if (!full && !g->well_known)
			g->used = false;
		goto out;
	}
	if (!g) {
		if ((mask & create) != create) {
			err = SA_ERR_INSUFF_COMPS;
			goto out;
		}
		if (!(js & 0x9) || !mcm_has_pkey(port, get_unaligned_be16(r + 40))) {
			err = SA_ERR_REQ_INVALID;
			goto out;
		}
		g = mcg_new(pkt->subnet);
		if (!g) {
			err = SA_ERR_NO_RESOURCES;
			goto out;
		}
		if (!mcm_create(g, mask, r, port)) {
			g->used = false;
			err = SA_ERR_REQ_INVALID;
			goto out;
		}
	} else if (!mcm_matches(g, mask, r) || !mcm_has_pkey(port, g->pkey) ||
		   pr.mtu < g->mtu ||
		   ib_rate_to_mbps(pr.rate) < ib_rate_to_mbps(g->rate)) {
		err = SA_ERR_REQ_INVALID;
		goto out;
	}
	g->join[idx] |= js;
	mcm_encode(g, port, g->join[idx], out);
out:
	spin_unlock_irqrestore(&sf_lock, flags);
	return err;
}

/*
 * Get and GetTable: one record per (group, member port) whose fields
 * match the components given (MGID, PortGID, Q_Key, MLID, P_Key, SL,
 * Scope; JoinState: the bits asked are all held), as OpenSM's
 * mcmr_by_comp_mask; a Get with more than one match is
 * ERR_REQ_TOO_MANY_RECORDS, with none ERR_NO_RECORDS.
 */
static int mcm_query(struct sf_pkt *pkt, u8 *out, int max)
{
	u64 mask = get_unaligned_be64(pkt->data + SA_COMP_MASK);
	struct sf_subnet *sn = &sf_fab.subnets[pkt->subnet];
	const u8 *r = pkt->data + SA_DATA;
	unsigned long flags;
	int i, p, n = 0;

	spin_lock_irqsave(&sf_lock, flags);
	for (i = 0; i < SF_MAX_MCG; i++) {
		struct sf_mcg *g = &sf_fab.mcgs[i];

		if (!g->used || g->subnet != pkt->subnet)
			continue;
		if (mcm_has(mask, IB_SA_MCMEMBER_REC_MGID) &&
		    memcmp(g->mgid.raw, r, 16))
			continue;
		if (!mcm_matches(g, mask & be64_to_cpu(IB_SA_MCMEMBER_REC_QKEY |
						       IB_SA_MCMEMBER_REC_MLID |
						       IB_SA_MCMEMBER_REC_PKEY |
						       IB_SA_MCMEMBER_REC_SL |
						       IB_SA_MCMEMBER_REC_SCOPE),
				 r))
			continue;
		for (p = 0; p < sn->nports; p++) {
			if (!g->join[p])
				continue;
			if (mcm_has(mask, IB_SA_MCMEMBER_REC_PORT_GID) &&
			    mcm_port(pkt->subnet, r + 16) != sn->ports[p])
				continue;
			if (mcm_has(mask, IB_SA_MCMEMBER_REC_JOIN_STATE) &&
			    (r[48] & 0xf & ~g->join[p]))
				continue;
			if (n < max)
				mcm_encode(g, sn->ports[p], g->join[p],
					   out + n * MCM_STRIDE);
			n++;
		}
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	return n;
}

/* One record in a non-RMPP answer; an error carries the request's. */
static void mcm_reply(struct sf_pkt *req, u8 method, u16 err, const u8 *rec)
{
	struct sf_pkt *pkt = sa_answer(req, method, err);

	if (!pkt)
		return;
	memcpy(pkt->data + SA_DATA, err ? req->data + SA_DATA : rec, MCM_LEN);
	sa_send(req, pkt);
}

static void mcm_recv(struct sf_pkt *pkt, u8 method)
{
	u8 *recs;
	u16 err;
	int n;

	recs = kcalloc(SA_MAX_RECS, MCM_STRIDE, GFP_KERNEL);
	if (!recs) {
		atomic64_inc(&sa_dropped);
		return;
	}
	if (method == IB_MGMT_METHOD_SET || method == IB_SA_METHOD_DELETE) {
		err = mcm_set_delete(pkt, method == IB_MGMT_METHOD_SET, recs);
		/* Set answers GetResp, Delete DeleteResp (IBA 15.4.2). */
		mcm_reply(pkt, method == IB_MGMT_METHOD_SET ?
			  IB_MGMT_METHOD_GET_RESP : IB_SA_METHOD_DELETE_RESP,
			  err, recs);
		kfree(recs);
		return;
	}
	n = mcm_query(pkt, recs, SA_MAX_RECS);
	if (method == IB_MGMT_METHOD_GET) {
		err = n == 1 ? 0 : n ? SA_ERR_TOO_MANY_RECS : SA_ERR_NO_RECORDS;
		mcm_reply(pkt, IB_MGMT_METHOD_GET_RESP, err, recs);
		kfree(recs);
		return;
	}
	if (n > SA_MAX_RECS) {
		kfree(recs);
		sa_table(pkt, SA_ERR_NO_RESOURCES, NULL, 0);
		return;
	}
	sa_table(pkt, 0, recs, n * MCM_STRIDE);	/* takes recs */
}

/* ---- NodeRecord (IBA 15.2.5.2; OpenSM osm_sa_node_record.c) ----------- */

/*
 * The node a port belongs to (IBA 14.2.5.3 NodeInfo): its number of
 * ports, its type, its port number on it, its NodeGUID and
 * SystemImageGUID. A host's node is its port's ib_device: on an
 * mlx5-style host each port is a node of its own, one port, its own
 * NodeGUID, the adapter's SystemImageGUID (README "HCAs"). A router's
 * NodeGUID is its port GUIDs with port byte 0.
 */
static void nr_encode(const struct sf_port *port, u8 *r)
{
	u64 guid = port->guid & ~0xffULL, sysimage = guid;
	int nports, num;

	memset(r, 0, NR_STRIDE);
	if (port->dev) {
		nports = port->dev->nports;
		num = port->num;
		guid = be64_to_cpu(port->dev->ibdev.node_guid);
		sysimage = sf_host_sysimage(&sf_fab.hosts[port->dev->host]);
		r[4 + 2] = 1;				/* NodeType: CA */
		snprintf((char *)r + 44, 64, "%s %s",
			 sf_fab.hosts[port->dev->host].name,
			 dev_name(&port->dev->ibdev.dev));
	} else {
		nports = port->rtr->nports;
		num = port - port->rtr->port + 1;
		r[4 + 2] = 3;				/* NodeType: router */
		snprintf((char *)r + 44, 64, "%s", port->rtr->name);
	}
	put_unaligned_be16(port->lid, r);
	r[4 + 0] = 1;					/* BaseVersion */
	r[4 + 1] = 1;					/* ClassVersion (SMP) */
	r[4 + 3] = nports;
	put_unaligned_be64(sysimage, r + 4 + 4);	/* SystemImageGUID */
	put_unaligned_be64(guid, r + 4 + 12);		/* NodeGUID */
	put_unaligned_be64(port->guid, r + 4 + 20);	/* PortGUID */
	put_unaligned_be16(SF_PKEYS, r + 4 + 28);	/* PartitionCap */
	r[4 + 36] = num;				/* LocalPortNum */
	/* DeviceID, Revision and VendorID 0: simfab is nobody's product. */
}

/*
 * The records of the subnet's present ports that match the components,
 * of the ports the requester (the port of the SLID) shares a partition
 * with: OpenSM's __osm_nr_rcv_create_nr skips every port that does not
 * (osm_physp_share_pkey), so a node outside the requester's partitions
 * is not found by its GUID either.
 */
static int nr_query(struct sf_pkt *pkt, u8 *out, int max)
{
	struct sf_port *ports[SF_SUBNET_PORTS];
	struct sf_port *req = sf_port_by_lid(pkt->subnet, pkt->slid, NULL);
	u64 mask = get_unaligned_be64(pkt->data + SA_COMP_MASK);
	const u8 *q = pkt->data + SA_DATA;
	u8 r[NR_STRIDE];
	int i, n = 0, np;

	np = all_ports(&sf_fab.subnets[pkt->subnet], ports);
	for (i = 0; i < np; i++) {
		if (req && !share_pkey(req, ports[i]))
			continue;
		nr_encode(ports[i], r);
		if (((mask & NR_COMP_LID) && memcmp(q, r, 2)) ||
		    ((mask & NR_COMP_NODETYPE) && q[6] != r[6]) ||
		    ((mask & NR_COMP_NUMPORTS) && q[7] != r[7]) ||
		    ((mask & NR_COMP_SYSIMAGEGUID) && memcmp(q + 8, r + 8, 8)) ||
		    ((mask & NR_COMP_NODEGUID) && memcmp(q + 16, r + 16, 8)) ||
		    ((mask & NR_COMP_PORTGUID) && memcmp(q + 24, r + 24, 8)) ||
		    ((mask & NR_COMP_PORTNUM) && q[40] != r[40]))
			continue;
		if (n < max)
			memcpy(out + n * NR_STRIDE, r, NR_STRIDE);
		n++;
	}
	return n;
}

static void nr_recv(struct sf_pkt *pkt, u8 method)
{
	struct sf_pkt *ans;
	u8 *recs;
	u16 err;
	int n;

	recs = kcalloc(SF_SUBNET_PORTS, NR_STRIDE, GFP_KERNEL);
	if (!recs) {
		atomic64_inc(&sa_dropped);
		return;
	}
	n = nr_query(pkt, recs, SF_SUBNET_PORTS);
	if (method == IB_SA_METHOD_GET_TABLE) {
		sa_table(pkt, 0, recs, n * NR_STRIDE);	/* takes recs */
		return;
	}
	/* Get: exactly one record (OpenSM: more is TOO_MANY_RECORDS). */
	err = n == 1 ? 0 : n ? SA_ERR_TOO_MANY_RECS : SA_ERR_NO_RECORDS;
	ans = sa_answer(pkt, IB_MGMT_METHOD_GET_RESP, err);
	if (ans) {
		if (!err)
			memcpy(ans->data + SA_DATA, recs, NR_LEN);
		sa_send(pkt, ans);
	}
	kfree(recs);
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
	    method != IB_SA_METHOD_GET_TABLE &&
	    !(get_unaligned_be16(pkt->data + 16) == IB_SA_ATTR_MC_MEMBER_REC &&
	      (method == IB_MGMT_METHOD_SET || method == IB_SA_METHOD_DELETE))) {
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
	if (get_unaligned_be16(pkt->data + 16) == IB_SA_ATTR_MC_MEMBER_REC) {
		mcm_recv(pkt, method);
		return;
	}
	if (get_unaligned_be16(pkt->data + 16) == NR_ATTR) {
		nr_recv(pkt, method);
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
	q.req = sf_port_by_lid(pkt->subnet, pkt->slid, NULL);
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
