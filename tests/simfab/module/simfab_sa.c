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

/* SA status codes, MAD status bits 8-14 (IBA 15.2.1.1 table 187). */
#define SA_ERR_NO_RECORDS	(3 << 8)
#define SA_ERR_INVALID_GID	(5 << 8)
#define SA_ERR_INSUFF_COMPS	(6 << 8)

static atomic64_t sa_requests, sa_answered, sa_dropped, sa_acks;

u64 sf_sa_count(int which)
{
	atomic64_t *c[] = { &sa_requests, &sa_answered, &sa_dropped,
			    &sa_acks };

	return atomic64_read(c[which]);
}

struct pr_query {
	u64 mask;
	const u8 *rec;
};

static bool has(const struct pr_query *q, __be64 bit)
{
	return q->mask & be64_to_cpu(bit);
}

/* IBA 15.2.5.16: selectors 0 >, 1 <, 2 =, 3 largest/smallest available. */
static bool sel_ok(u8 sel, u8 want, u8 have, bool rate)
{
	int w = want, h = have;

	if (rate) {
		w = ib_rate_to_mbps(want);
		h = ib_rate_to_mbps(have);
	}
	switch (sel) {
	case 0: return h > w;
	case 1: return h < w;
	case 2: return h == w;
	default: return true;
	}
}

static u8 min_rate(u8 a, u8 b)
{
	return ib_rate_to_mbps(a) <= ib_rate_to_mbps(b) ? a : b;
}

/*
 * Build the record for one (SLID, DLID) pair; false when the query's
 * components exclude it. The path crosses one switch, so (as OpenSM
 * computes it hop by hop) MTU and rate are the minimum of both end ports,
 * and the path is reversible (both directions have the same properties).
 */
static bool pr_build(const struct pr_query *q, struct sf_port *s,
		     struct sf_port *d, u16 slid, u16 dlid, u8 *r)
{
	struct sf_host *sh = &sf_fab.hosts[sf_host_of_port(s)];
	struct sf_host *dh = &sf_fab.hosts[sf_host_of_port(d)];
	u8 mtu = min(sh->mtu, dh->mtu);
	u8 rate = min_rate(sh->rate, dh->rate);
	/* Symmetric by construction so that the reversible bit is true:
	 * the higher of the two hosts' SLs (the README explains the model).
	 */
	u8 sl = max(sh->sl, dh->sl);
	u8 life = max(sh->life, dh->life);
	u16 pkey = IB_DEFAULT_PKEY_FULL;
	const u8 *in = q->rec;
	int i, j;

	if (has(q, IB_SA_PATH_REC_PKEY)) {
		bool ok_s = false, ok_d = false;

		pkey = get_unaligned_be16(in + 50);
		for (i = 0; i < SF_PKEYS; i++) {
			ok_s |= (s->pkeys[i] & 0x7fff) == (pkey & 0x7fff);
			ok_d |= (d->pkeys[i] & 0x7fff) == (pkey & 0x7fff);
		}
		if (!ok_s || !ok_d)
			return false;
	}
	if (has(q, IB_SA_PATH_REC_SL) && (get_unaligned_be16(in + 52) & 0xf) != sl)
		return false;
	if (has(q, IB_SA_PATH_REC_MTU) &&
	    !sel_ok(has(q, IB_SA_PATH_REC_MTU_SELECTOR) ? in[54] >> 6 : 2,
		    in[54] & 0x3f, mtu, false))
		return false;
	if (has(q, IB_SA_PATH_REC_RATE) &&
	    !sel_ok(has(q, IB_SA_PATH_REC_RATE_SELECTOR) ? in[55] >> 6 : 2,
		    in[55] & 0x3f, rate, true))
		return false;
	/* IBA 15.2.5.16: a Reversible component of 1 needs reversible
	 * paths; every path here is.
	 */

	memset(r, 0, PR_LEN);
	if (has(q, IB_SA_PATH_REC_SERVICE_ID))
		memcpy(r, in, 8);
	put_unaligned_be64(sf_fab.prefix, r + 8);
	put_unaligned_be64(d->guid, r + 16);
	put_unaligned_be64(sf_fab.prefix, r + 24);
	put_unaligned_be64(s->guid, r + 32);
	put_unaligned_be16(dlid, r + 40);
	put_unaligned_be16(slid, r + 42);
	/* RawTraffic 0, FlowLabel 0, HopLimit 0: on-subnet (OpenSM). */
	put_unaligned_be32(0, r + 44);
	r[48] = 0;				/* TClass */
	r[49] = 0x80;				/* Reversible, NumbPath 0 */
	put_unaligned_be16(pkey, r + 50);
	put_unaligned_be16(sl, r + 52);		/* QoSClass 0, SL */
	r[54] = 2 << 6 | mtu;			/* selector "exactly" */
	r[55] = 2 << 6 | rate;
	r[56] = 2 << 6 | life;
	/* Preference 0 for the LMC-aligned pairs OpenSM prefers. */
	i = slid - s->lid;
	j = dlid - d->lid;
	r[57] = i == j ? 0 : 1;
	return true;
}

static struct sf_port *pr_end(const struct pr_query *q, bool src, u16 *err)
{
	__be64 gbit = src ? IB_SA_PATH_REC_SGID : IB_SA_PATH_REC_DGID;
	__be64 lbit = src ? IB_SA_PATH_REC_SLID : IB_SA_PATH_REC_DLID;
	const u8 *gid = q->rec + (src ? 24 : 8);
	struct sf_port *p;

	if (has(q, gbit)) {
		/* OpenSM: a GID no port owns is ERR_REQ_INVALID_GID. */
		p = sf_port_by_guid(get_unaligned_be64(gid + 8));
		/* A port that is down has left the subnet (OpenSM drops it
		 * at the next sweep).
		 */
		if (!p || p->down || get_unaligned_be64(gid) != sf_fab.prefix) {
			*err = SA_ERR_INVALID_GID;
			return NULL;
		}
		return p;
	}
	if (has(q, lbit)) {
		p = sf_port_by_lid(get_unaligned_be16(q->rec + (src ? 42 : 40)),
				   NULL);
		if (!p || p->down)
			*err = SA_ERR_NO_RECORDS;
		return p;
	}
	return NULL;
}

/*
 * Add the records of one port pair; true when they do not fit. Without
 * an SLID or DLID in the query only OpenSM's preferred paths are given:
 * the same LMC offset at both ends (base to base, base+1 to base+1...);
 * a query naming a LID gets the pairs with that LID.
 */
static bool pr_pair(const struct pr_query *q, struct sf_port *sp,
		    struct sf_port *dp, u8 *out, int max, int *n)
{
	bool any = has(q, IB_SA_PATH_REC_SLID) || has(q, IB_SA_PATH_REC_DLID);
	int so, dof, nl = 1 << sf_fab.lmc;

	for (so = 0; so < nl; so++) {
		for (dof = 0; dof < nl; dof++) {
			u16 slid = sp->lid + so, dlid = dp->lid + dof;

			if (!any && so != dof)
				continue;
			if (has(q, IB_SA_PATH_REC_SLID) &&
			    get_unaligned_be16(q->rec + 42) != slid)
				continue;
			if (has(q, IB_SA_PATH_REC_DLID) &&
			    get_unaligned_be16(q->rec + 40) != dlid)
				continue;
			if (*n == max)
				return true;
			if (pr_build(q, sp, dp, slid, dlid, out + *n * PR_LEN))
				(*n)++;
		}
	}
	return false;
}

/* Every port of the subnet, in topology order. */
static int all_ports(struct sf_port **ports)
{
	int h, p, n = 0;

	for (h = 0; h < sf_fab.nhosts; h++)
		for (p = 0; p < sf_fab.hosts[h].nports; p++)
			if (!sf_fab.devs[h]->port[p].down)
				ports[n++] = &sf_fab.devs[h]->port[p];
	return n;
}

static int pr_collect(const struct pr_query *q, u8 *out, int max, u16 *err)
{
	struct sf_port *ports[SF_MAX_HOSTS * SF_MAX_PORTS];
	struct sf_port *sp, *dp, *s_one, *d_one;
	int n = 0, np, i, j;

	*err = 0;
	s_one = pr_end(q, true, err);
	if (*err)
		return 0;
	d_one = pr_end(q, false, err);
	if (*err)
		return 0;
	np = all_ports(ports);
	for (i = 0; i < np; i++) {
		sp = ports[i];
		if (s_one && sp != s_one)
			continue;
		for (j = 0; j < np; j++) {
			dp = ports[j];
			if (d_one && dp != d_one)
				continue;
			if (pr_pair(q, sp, dp, out, max, &n))
				return max + 1;
		}
	}
	return n;
}

static void sa_reply(struct sf_pkt *req, u8 method, u16 status,
		     const u8 *recs, int n, bool rmpp)
{
	struct sf_port *sm;
	struct sf_pkt *pkt;
	u8 *m;

	pkt = sf_pkt_alloc(IB_MGMT_MAD_SIZE, GFP_KERNEL);
	if (!pkt) {
		atomic64_inc(&sa_dropped);
		return;
	}
	m = pkt->data;
	memcpy(m, req->data, 24);		/* MAD header, TID kept */
	m[3] = method;
	put_unaligned_be16(status, m + 4);
	memcpy(m + SA_COMP_MASK, req->data + SA_COMP_MASK, 8);
	put_unaligned_be16(PR_LEN / 8, m + SA_ATTR_OFFSET);
	if (n)
		memcpy(m + SA_DATA, recs, n * PR_LEN);
	if (rmpp) {
		/* IBA 13.6.2: one DATA segment, ACTIVE|FIRST|LAST, segment 1;
		 * PayloadLength counts the SA header and the records.
		 */
		m[SA_RMPP] = IB_MGMT_RMPP_VERSION;
		m[SA_RMPP + 1] = IB_MGMT_RMPP_TYPE_DATA;
		m[SA_RMPP + 2] = IB_MGMT_RMPP_FLAG_ACTIVE |
				 IB_MGMT_RMPP_FLAG_FIRST |
				 IB_MGMT_RMPP_FLAG_LAST;
		put_unaligned_be32(1, m + SA_RMPP + 4);
		put_unaligned_be32(20 + n * PR_LEN, m + SA_RMPP + 8);
	}
	/* From the SM port's QP1 back to the requester's LID and QP
	 * (IBA 13.5.1.2: responses go to the request's source).
	 */
	sm = sf_port_by_lid(sf_fab.sm_lid, NULL);
	pkt->src = sm;
	pkt->slid = sf_fab.sm_lid;
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
		sf_count(sm, 0, m, pkt->len);
	sf_deliver(pkt);
	kfree(pkt);
	atomic64_inc(&sa_answered);
}

/* Called by the worker for every SA-class MAD sent to the SM LID. */
void sf_sa_recv(struct sf_pkt *pkt)
{
	u8 *recs, method = pkt->data[3];
	struct pr_query q;
	int n, max;
	u16 err;

	/* RMPP ACK/STOP/ABORT for our single-segment GetTableResp: the
	 * transfer is complete when sent, nothing to do (IBA 13.6.2.3).
	 * ib_mad's ACK carries the request method (mad_rmpp.c format_ack
	 * flips the response bit), so test the RMPP type, not the method.
	 */
	if ((pkt->data[SA_RMPP + 2] & IB_MGMT_RMPP_FLAG_ACTIVE) &&
	    pkt->data[SA_RMPP + 1] != IB_MGMT_RMPP_TYPE_DATA) {
		atomic64_inc(&sa_acks);
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
			 IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD, NULL, 0, false);
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
		sa_reply(pkt, IB_MGMT_METHOD_GET_RESP, 0, cpi, 1, false);
		return;
	}
	if (get_unaligned_be16(pkt->data + 16) != IB_SA_ATTR_PATH_REC) {
		sa_reply(pkt, method | IB_MGMT_METHOD_RESP,
			 IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB, NULL, 0,
			 method == IB_SA_METHOD_GET_TABLE);
		return;
	}
	recs = kmalloc(SA_DATA_LEN, GFP_KERNEL);
	if (!recs) {
		atomic64_inc(&sa_dropped);
		return;
	}
	q.mask = get_unaligned_be64(pkt->data + SA_COMP_MASK);
	q.rec = pkt->data + SA_DATA;
	max = SA_DATA_LEN / PR_LEN;
	n = pr_collect(&q, recs, max, &err);
	if (method == IB_MGMT_METHOD_GET) {
		/* IBA 15.4.3: Get answers exactly one record. */
		if (!err && !n)
			err = SA_ERR_NO_RECORDS;
		sa_reply(pkt, IB_MGMT_METHOD_GET_RESP, err, recs,
			 err ? 0 : 1, false);
	} else {
		/* Single segment only: more than three records would need
		 * a windowed RMPP transfer, which is not done yet.
		 */
		if (n > max) {
			pr_warn_ratelimited("simfab: SA GetTable truncated to %d PathRecords\n",
					    max);
			n = max;
		}
		sa_reply(pkt, IB_SA_METHOD_GET_TABLE_RESP,
			 err == SA_ERR_NO_RECORDS ? 0 : err, recs, err ? 0 : n,
			 true);
	}
	kfree(recs);
}
