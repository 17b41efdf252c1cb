// SPDX-License-Identifier: GPL-2.0
/*
 * simfab: the RC transport (IBA 9, 10.3, 11.2, 17.2.8) for simfab's QPs.
 *
 * A SEND or RDMA WRITE goes out in packets of the QP's path MTU (FIRST,
 * MIDDLE..., LAST, or ONLY), one PSN each, and an RDMA READ takes one PSN
 * per response packet of that size (IBA 9.4, 9.7.1): IB never fragments,
 * and a port drops a packet longer than its MTU (simfab_main.c). Every
 * packet carries the LRH and GRH built from the QP's current address
 * vector, so that the fabric and its routers carry it like any other
 * packet and a wrong address vector breaks the connection. What a
 * real HCA does and simfab reproduces: the state machine with the masks
 * ib_modify_qp_is_ok checks, PSNs, ACKs, the Local ACK Timeout with
 * retry_cnt, RNR NAKs with rnr_retry, the errors and flushes when retries
 * run out, the responder's path check, and automatic path migration with
 * the BTH MigReq bit. Test-only: tests/simfab/README.md ("RC", "APM").
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/jiffies.h>
#include <rdma/ib_verbs.h>

#include "simfab.h"

#define SF_PSN_MASK	0xffffff

/* Sign of a - b in 24-bit PSN space (IBA 9.7). */
static int sf_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

static u32 sf_psn_next(u32 psn)
{
	return (psn + 1) & SF_PSN_MASK;
}

static u32 sf_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SF_PSN_MASK;
}

/* The payload of every packet but a message's last (IBA 9.4: PMTU). */
static u32 sf_pmtu(const struct sf_qp *qp)
{
	return ib_mtu_enum_to_int(qp->path_mtu);
}

/* The PSNs a message of @len bytes takes: one a packet, at least one. */
static u32 sf_rc_npkts(const struct sf_qp *qp, u32 len)
{
	return max_t(u32, 1, DIV_ROUND_UP(len, sf_pmtu(qp)));
}

/* The PSN of the last packet of @w (its READ's last response). */
static u32 sf_wqe_last(const struct sf_swqe *w)
{
	return sf_psn_add(w->psn, w->npkts - 1);
}

/* OpCode classes (IBA 9.2, table 38). */
static bool sf_op_send(u8 op)
{
	return op <= SF_RC_SEND_ONLY_IMM || sf_op_inv(op);
}

static bool sf_op_write(u8 op)
{
	return op >= SF_RC_WRITE_FIRST && op <= SF_RC_WRITE_ONLY_IMM;
}

/* A message's first packet: FIRST or ONLY. */
static bool sf_op_first(u8 op)
{
	return op == SF_RC_SEND_FIRST || op == SF_RC_SEND_ONLY ||
	       op == SF_RC_SEND_ONLY_IMM || op == SF_RC_SEND_ONLY_INV ||
	       op == SF_RC_WRITE_FIRST ||
	       op == SF_RC_WRITE_ONLY || op == SF_RC_WRITE_ONLY_IMM;
}

/* A message's last packet: LAST or ONLY. */
static bool sf_op_last(u8 op)
{
	return (sf_op_send(op) || sf_op_write(op)) &&
	       op != SF_RC_SEND_FIRST && op != SF_RC_SEND_MIDDLE &&
	       op != SF_RC_WRITE_FIRST && op != SF_RC_WRITE_MIDDLE;
}

/*
 * The OpCode of packet @i of @n of a SEND or WRITE: ONLY for a single
 * packet, else FIRST, MIDDLE..., LAST; the immediate goes with the last.
 */
static u8 sf_seg_op(enum ib_wr_opcode wr, u32 i, u32 n)
{
	bool write = wr == IB_WR_RDMA_WRITE || wr == IB_WR_RDMA_WRITE_WITH_IMM;
	bool imm = wr == IB_WR_SEND_WITH_IMM ||
		   wr == IB_WR_RDMA_WRITE_WITH_IMM;
	u8 base = write ? SF_RC_WRITE_FIRST : SF_RC_SEND_FIRST;

	if (wr == IB_WR_SEND_WITH_INV && i == n - 1)
		return n == 1 ? SF_RC_SEND_ONLY_INV : SF_RC_SEND_LAST_INV;
	if (n == 1)
		return base + (imm ? 5 : 4);
	if (!i)
		return base;
	if (i < n - 1)
		return base + 1;
	return base + (imm ? 3 : 2);
}

/* Local ACK Timeout: 4.096 us * 2^timeout, 0 = never (IBA 11.2.4). */
static unsigned long sf_rto(u8 timeout)
{
	if (!timeout)
		return 0;
	return max_t(unsigned long, 1,
		     nsecs_to_jiffies(4096ULL << min_t(u8, timeout, 31)));
}

/* RNR NAK timer field (IBA 9.7.5), roughly: 0 = 655 ms. */
static unsigned long sf_rnr_delay(u8 t)
{
	if (!t)
		return msecs_to_jiffies(655);
	return max_t(unsigned long, 1, usecs_to_jiffies(10U << (t / 2)));
}

static struct sf_dev *sf_qp_dev(struct sf_qp *qp)
{
	return container_of(qp->ibqp.device, struct sf_dev, ibdev);
}

/* What is left to do once sf_lock is dropped. */
struct sf_rc_done {
	struct list_head swqes;		/* completed send WQEs */
	struct list_head pkts;		/* packets to put on the wire */
	struct ib_wc *rwc;		/* receive completions */
	int nrwc;
	bool mig;			/* raise IB_EVENT_PATH_MIG */
	bool comm_est;			/* raise IB_EVENT_COMM_EST */
	bool mig_err;			/* raise IB_EVENT_PATH_MIG_ERR */
};

static void sf_rc_done_init(struct sf_rc_done *d)
{
	INIT_LIST_HEAD(&d->swqes);
	INIT_LIST_HEAD(&d->pkts);
	d->rwc = NULL;
	d->nrwc = 0;
	d->mig = false;
	d->comm_est = false;
	d->mig_err = false;
}

static void sf_rc_event(struct sf_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static enum ib_wc_opcode sf_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}

/* Completions, packets and events, outside sf_lock. */
static void sf_rc_finish(struct sf_qp *qp, struct sf_rc_done *d)
{
	struct sf_swqe *w, *n;
	struct sf_pkt *pkt, *pn;
	int i;

	/* The first request packet in RTR, before it is executed (rdmavt
	 * rvt_comm_est() from qib/hfi1 rc_rcv).
	 */
	if (d->comm_est)
		sf_rc_event(qp, IB_EVENT_COMM_EST);
	list_for_each_entry_safe(pkt, pn, &d->pkts, list) {
		list_del(&pkt->list);
		sf_xmit(pkt);
	}
	list_for_each_entry_safe(w, n, &d->swqes, list) {
		list_del(&w->list);
		/* Unsignaled WRs complete only in error (IBA 10.8). */
		if (w->signaled || w->status != IB_WC_SUCCESS) {
			struct ib_wc wc = {
				.wr_id = w->wr_id,
				.status = w->status,
				.opcode = sf_wc_opcode(w->opcode),
				.byte_len = w->len,
				.qp = &qp->ibqp,
			};

			sf_cq_add(container_of(qp->ibqp.send_cq, struct sf_cq,
					       ibcq), &wc);
		}
		kfree(w);
	}
	for (i = 0; i < d->nrwc; i++)
		sf_cq_add(container_of(qp->ibqp.recv_cq, struct sf_cq, ibcq),
			  &d->rwc[i]);
	kfree(d->rwc);
	if (d->mig)
		sf_rc_event(qp, IB_EVENT_PATH_MIG);
	if (d->mig_err)
		sf_rc_event(qp, IB_EVENT_PATH_MIG_ERR);
}

/*
 * A packet of @qp on its current (primary) path: LRH from the address
 * vector and the path's port (SLID = port LID | source path bits), GRH
 * when the AV is global (IBA 8.3), BTH with the MigReq bit set while the
 * QP is MIGRATED (IBA 9.2, 17.2.8).
 */
static struct sf_pkt *sf_rc_pkt(struct sf_qp *qp, u8 opcode, u32 psn,
				u32 len)
{
	struct sf_port *port = &sf_qp_dev(qp)->port[qp->pri.port - 1];
	struct rdma_ah_attr *ah = &qp->pri.ah;
	struct sf_pkt *pkt = sf_pkt_alloc(len, GFP_ATOMIC);

	if (!pkt)
		return NULL;
	pkt->rc = true;
	pkt->src = port;
	pkt->subnet = port->subnet;
	pkt->slid = port->lid | rdma_ah_get_path_bits(ah);
	pkt->dlid = rdma_ah_get_dlid(ah);
	pkt->sl = rdma_ah_get_sl(ah);
	if (rdma_ah_get_ah_flags(ah) & IB_AH_GRH)
		sf_build_grh(pkt, port, rdma_ah_read_grh(ah));
	pkt->dqpn = qp->dest_qpn;
	pkt->sqpn = qp->ibqp.qp_num;
	pkt->pkey = port->pkeys[qp->pri.pkey_index % SF_PKEYS];
	pkt->opcode = opcode;
	pkt->psn = psn;
	pkt->mig = qp->mig == IB_MIG_MIGRATED;
	port->rc_tx++;
	qp->tx++;
	return pkt;
}

static void sf_rc_queue(struct sf_rc_done *d, struct sf_pkt *pkt)
{
	if (pkt)
		list_add_tail(&pkt->list, &d->pkts);
}

/*
 * The request packets of a send WQE (first transmission or retry): an
 * RDMA READ request, or the SEND/WRITE in packets of the path MTU with
 * consecutive PSNs, the RETH in the first, the immediate in the last
 * (IBA 9.4.1-9.4.4).
 */
static void sf_rc_send_wqe(struct sf_qp *qp, struct sf_swqe *w,
			   struct sf_rc_done *d)
{
	u32 i, off, seg, mtu = sf_pmtu(qp);
	struct sf_pkt *pkt;
	u8 op;

	if (w->local)
		return;
	if (w->opcode == IB_WR_RDMA_READ) {
		pkt = sf_rc_pkt(qp, SF_RC_READ_REQ, w->psn, 0);
		if (!pkt)
			return;
		pkt->va = w->remote_addr;
		pkt->rkey = w->rkey;
		pkt->dma_len = w->len;
		sf_rc_queue(d, pkt);
		return;
	}
	for (i = 0; i < w->npkts; i++) {
		off = i * mtu;
		seg = min(mtu, w->len - off);
		op = sf_seg_op(w->opcode, i, w->npkts);
		pkt = sf_rc_pkt(qp, op, sf_psn_add(w->psn, i), seg);
		if (!pkt)
			return;
		memcpy(pkt->data, w->data + off, seg);
		if (!i) {
			pkt->va = w->remote_addr;
			pkt->rkey = w->rkey;
			pkt->dma_len = w->len;
		}
		if (sf_op_imm(op)) {
			pkt->has_imm = true;
			pkt->imm = w->imm;
		}
		if (sf_op_inv(op))
			pkt->ieth = w->inv_rkey;
		sf_rc_queue(d, pkt);
	}
}

static void sf_rc_arm_timer(struct sf_qp *qp)
{
	unsigned long t = sf_rto(qp->pri.timeout);

	if (list_empty(&qp->sq))
		cancel_delayed_work(&qp->rto);
	else if (t)
		mod_delayed_work(sf_wq, &qp->rto, t);
}

/* Every unacknowledged WQE again, oldest first (go-back-N, IBA 9.7.6). */
static void sf_rc_resend_all(struct sf_qp *qp, struct sf_rc_done *d)
{
	struct sf_swqe *w;

	list_for_each_entry(w, &qp->sq, list)
		sf_rc_send_wqe(qp, w, d);
	qp->retrans++;
}

/*
 * Migrate to the alternate path (IBA 17.2.8): it becomes the primary,
 * the QP is MIGRATED and needs a new alternate before it can be armed
 * again. The consumer hears of it through IB_EVENT_PATH_MIG (IBA 11.6.3).
 */
static void sf_rc_migrate(struct sf_qp *qp, struct sf_rc_done *d)
{
	qp->pri = qp->alt;
	qp->port = qp->pri.port;
	qp->pkey_index = qp->pri.pkey_index;
	qp->mig = IB_MIG_MIGRATED;
	qp->has_alt = false;
	qp->retries = qp->retry_cnt;
	qp->migrations++;
	d->mig = true;
}

/* Receive queue flushed: every posted WQE completes with WR_FLUSH_ERR. */
static void sf_rc_flush_rq(struct sf_qp *qp, struct sf_rc_done *d)
{
	bool taken = qp->rmsg && qp->rmsg_wqe;
	int i;

	qp->rmsg = false;
	if (!qp->rq_count && !taken)
		return;
	d->rwc = kcalloc(qp->rq_count + 1, sizeof(*d->rwc), GFP_ATOMIC);
	if (d->rwc && taken) {
		/* The WQE a half-received SEND took (IBA 10.3.1). */
		d->rwc[0].wr_id = qp->rmsg_w.wr_id;
		d->rwc[0].status = IB_WC_WR_FLUSH_ERR;
		d->rwc[0].opcode = IB_WC_RECV;
		d->rwc[0].qp = &qp->ibqp;
		d->nrwc = 1;
	}
	for (i = 0; d->rwc && i < qp->rq_count; i++) {
		struct ib_wc *wc = &d->rwc[d->nrwc++];

		wc->wr_id = qp->rq[(qp->rq_head + i) % qp->rq_size].wr_id;
		wc->status = IB_WC_WR_FLUSH_ERR;
		wc->opcode = IB_WC_RECV;
		wc->qp = &qp->ibqp;
	}
	qp->rq_head = 0;
	qp->rq_count = 0;
}

/*
 * The QP enters the Error state (IBA 10.3.1): outstanding send WQEs and
 * posted receives complete with WR_FLUSH_ERR; @first, if any, has its
 * own error status already and completes first.
 */
static void sf_rc_to_err(struct sf_qp *qp, struct sf_swqe *first,
			 enum ib_wc_status st, struct sf_rc_done *d)
{
	struct sf_swqe *w, *n;

	if (first) {
		list_del(&first->list);
		first->status = st;
		list_add_tail(&first->list, &d->swqes);
		qp->sq_count--;
	}
	list_for_each_entry_safe(w, n, &qp->sq, list) {
		list_del(&w->list);
		w->status = IB_WC_WR_FLUSH_ERR;
		list_add_tail(&w->list, &d->swqes);
	}
	qp->sq_count = 0;
	sf_rc_flush_rq(qp, d);
	qp->state = IB_QPS_ERR;
	cancel_delayed_work(&qp->rto);
}

/*
 * The Local ACK Timeout expired (IBA 9.7.6): retransmit from the
 * oldest unacknowledged PSN while retries are left; then, with an armed
 * alternate, migrate and go on there (IBA 17.2.8); else the oldest WQE
 * completes with RETRY_EXC_ERR and the QP goes to Error (IBA 10.3.1,
 * 11.6.2), as a real HCA does when the path is gone.
 */
static void sf_rc_timeout(struct work_struct *work)
{
	struct sf_qp *qp = container_of(to_delayed_work(work), struct sf_qp,
					rto);
	struct sf_rc_done d;
	unsigned long flags;

	sf_rc_done_init(&d);
	spin_lock_irqsave(&sf_lock, flags);
	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    list_empty(&qp->sq)) {
		spin_unlock_irqrestore(&sf_lock, flags);
		return;
	}
	if (qp->rnr_wait) {
		qp->rnr_wait = false;
		sf_rc_resend_all(qp, &d);
		sf_rc_arm_timer(qp);
	} else if (qp->retries) {
		qp->retries--;
		sf_rc_resend_all(qp, &d);
		sf_rc_arm_timer(qp);
	} else if (qp->mig == IB_MIG_ARMED) {
		sf_rc_migrate(qp, &d);
		sf_rc_resend_all(qp, &d);
		sf_rc_arm_timer(qp);
	} else {
		sf_rc_to_err(qp, list_first_entry(&qp->sq, struct sf_swqe,
						  list),
			     IB_WC_RETRY_EXC_ERR, &d);
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	sf_rc_finish(qp, &d);
}

/* ---- memory regions and R_Keys (IBA 10.6, 9.7.5.2) ---------------------- */

/*
 * MRs by key index (key >> 8, as an HCA's MPT index; the low byte is the
 * key's variant, which fast registration changes: ib_update_fast_reg_key).
 * Looked up under sf_lock by the responder; index 0 never used: no key is
 * 0 (ib_srp WARNs on a zero rkey from IB_PD_UNSAFE_GLOBAL_RKEY).
 */
static DEFINE_XARRAY_ALLOC1(sf_mrs);

static struct sf_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct sf_mr, ibmr);
}

static struct sf_mr *sf_mr_new(struct ib_pd *pd, int acc, bool dma)
{
	struct sf_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	u32 index;
	int ret;

	if (!mr)
		return ERR_PTR(-ENOMEM);
	ret = xa_alloc(&sf_mrs, &index, mr, XA_LIMIT(1, 0xffffff),
		       GFP_KERNEL);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	mr->ibmr.lkey = index << 8;
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.rkey;
	mr->access = acc;
	mr->dma = dma;
	mr->valid = dma;
	return mr;
}

struct ib_mr *sf_mr_get_dma(struct ib_pd *pd, int acc)
{
	struct sf_mr *mr = sf_mr_new(pd, acc, true);

	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

/* Fast registration MRs only (IB_MR_TYPE_MEM_REG), as ULPs use them. */
struct ib_mr *sf_mr_alloc(struct ib_pd *pd, enum ib_mr_type type,
			  u32 max_num_sg)
{
	struct sf_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg || max_num_sg > 1024)
		return ERR_PTR(-EINVAL);
	mr = sf_mr_new(pd, 0, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		sf_mr_dereg(&mr->ibmr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	return &mr->ibmr;
}

static int sf_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sf_mr *mr = to_smr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/* No dma_device: the DMA addresses are kernel virtual (ib_dma_virt_map_sg). */
int sf_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		 unsigned int *sg_offset)
{
	struct sf_mr *mr = to_smr(ibmr);
	u64 first = sg_dma_address(sg) + (sg_offset ? *sg_offset : 0);

	mr->npages = 0;
	mr->off0 = first & (ibmr->page_size - 1);
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sf_mr_set_page);
}

int sf_mr_dereg(struct ib_mr *ibmr)
{
	struct sf_mr *mr = to_smr(ibmr);
	unsigned long flags;

	xa_erase(&sf_mrs, ibmr->lkey >> 8);
	/* a responder that found it is done with it once it drops sf_lock */
	spin_lock_irqsave(&sf_lock, flags);
	spin_unlock_irqrestore(&sf_lock, flags);
	kfree(mr->pages);
	kfree(mr);
	return 0;
}

/*
 * IB_WR_REG_MR: the MR answers to the WR's key with its access rights
 * over the range ib_map_mr_sg gave it (IBA 10.6, fast registration);
 * IB_WR_LOCAL_INV: it answers to none (IBA 10.6). Under sf_lock.
 */
static int sf_mr_local_op(struct sf_qp *qp, const struct ib_send_wr *wr)
{
	struct sf_mr *mr;
	u32 key;

	if (wr->opcode == IB_WR_REG_MR) {
		const struct ib_reg_wr *reg = reg_wr(wr);

		mr = to_smr(reg->mr);
		if (mr->dma || reg->mr->pd != qp->ibqp.pd ||
		    (reg->key >> 8) != (reg->mr->lkey >> 8))
			return -EINVAL;
		mr->key = reg->key;
		mr->access = reg->access;
		mr->iova = reg->mr->iova;
		mr->length = reg->mr->length;
		mr->valid = true;
		return 0;
	}
	key = wr->ex.invalidate_rkey;
	mr = xa_load(&sf_mrs, key >> 8);
	if (!mr || mr->dma || mr->key != key || mr->ibmr.pd != qp->ibqp.pd)
		return -EINVAL;
	mr->valid = false;
	return 0;
}

/*
 * The responder's R_Key check (IBA 9.7.5.2, 10.6; rxe check_rkey and
 * lookup_mr / mr_check_range): @rkey must name a valid MR of the QP's
 * PD granting @acc (IB_ACCESS_REMOTE_READ or _WRITE), and [@va, @va +
 * @len) must lie within it. A zero-length operation needs no key (rxe).
 */
static bool sf_rkey_ok(struct sf_qp *qp, u32 rkey, u64 va, u32 len, int acc,
		       struct sf_mr **out)
{
	struct sf_mr *mr;

	*out = NULL;
	if (!len)
		return true;
	mr = xa_load(&sf_mrs, rkey >> 8);
	if (!mr || !mr->valid || mr->key != rkey ||
	    mr->ibmr.pd != qp->ibqp.pd || !(mr->access & acc))
		return false;
	if (!mr->dma && (va < mr->iova || len > mr->length ||
			 va - mr->iova > mr->length - len))
		return false;
	*out = mr;
	return true;
}

/* Copy @len bytes between @buf and the MR's memory at @va (checked). */
static void sf_mr_copy(const struct sf_mr *mr, u64 va, void *buf, u32 len,
		       bool to_mr)
{
	u64 ps, o;

	if (!mr || !len)
		return;
	if (mr->dma) {
		/* No dma_device: remote addresses are kernel virtual too. */
		if (to_mr)
			memcpy((void *)(uintptr_t)va, buf, len);
		else
			memcpy(buf, (void *)(uintptr_t)va, len);
		return;
	}
	ps = mr->ibmr.page_size;
	o = va - mr->iova + mr->off0;
	while (len) {
		u64 in = o & (ps - 1);
		u32 n = min_t(u64, len, ps - in);
		void *p = (void *)(uintptr_t)(mr->pages[o >> ilog2(ps)] + in);

		if (to_mr)
			memcpy(p, buf, n);
		else
			memcpy(buf, p, n);
		buf += n;
		o += n;
		len -= n;
	}
}

int sf_rc_create(struct sf_qp *qp, struct ib_qp_init_attr *init)
{
	INIT_LIST_HEAD(&qp->sq);
	qp->sq_size = max_t(u32, init->cap.max_send_wr, 1);
	qp->mig = IB_MIG_MIGRATED;
	INIT_DELAYED_WORK(&qp->rto, sf_rc_timeout);
	return 0;
}

static void sf_rc_free_sq(struct list_head *sq)
{
	struct sf_swqe *w, *n;

	list_for_each_entry_safe(w, n, sq, list) {
		list_del(&w->list);
		kfree(w);
	}
}

void sf_rc_destroy(struct sf_qp *qp)
{
	cancel_delayed_work_sync(&qp->rto);
	sf_rc_free_sq(&qp->sq);
}

static bool sf_rc_port_ok(struct sf_qp *qp, u32 port)
{
	return port >= 1 && port <= qp->ibqp.device->phys_port_cnt;
}

/*
 * Modify QP (IBA 11.2.4, 10.3): the transition and its attribute mask
 * must be what ib_modify_qp_is_ok allows for RC (IBA 10.3, 11.2.4).
 * Path migration state (IBA 17.2.8): REARM with an alternate loaded waits
 * for the peer (sf_rc_rx) to become ARMED; MIGRATED while ARMED migrates
 * now, as a consumer-requested migration.
 */
int sf_rc_modify(struct sf_qp *qp, struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state cur, next;
	struct sf_rc_done d;
	LIST_HEAD(freed);
	unsigned long flags;
	int ret = 0;

	sf_rc_done_init(&d);
	spin_lock_irqsave(&sf_lock, flags);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, IB_QPT_RC, mask) ||
	    (mask & IB_QP_PORT && !sf_rc_port_ok(qp, attr->port_num)) ||
	    (mask & IB_QP_ALT_PATH && !sf_rc_port_ok(qp, attr->alt_port_num)) ||
	    (mask & IB_QP_PKEY_INDEX && attr->pkey_index >= SF_PKEYS) ||
	    (mask & IB_QP_ALT_PATH && attr->alt_pkey_index >= SF_PKEYS) ||
	    (mask & IB_QP_DEST_QPN && attr->dest_qp_num > SF_PSN_MASK)) {
		ret = -EINVAL;
		goto out;
	}
	/* IBA 9.4: a PMTU is 256 to 4096 (mlx4, mlx5 refuse others). */
	if (mask & IB_QP_PATH_MTU &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)) {
		ret = -EINVAL;
		goto out;
	}
	if (mask & IB_QP_PATH_MIG_STATE) {
		/* rdmavt and mlx5 refuse these too. */
		if ((attr->path_mig_state == IB_MIG_REARM &&
		     !qp->has_alt && !(mask & IB_QP_ALT_PATH)) ||
		    (attr->path_mig_state == IB_MIG_MIGRATED &&
		     qp->mig == IB_MIG_REARM)) {
			ret = -EINVAL;
			goto out;
		}
	}
	if (mask & IB_QP_PORT)
		qp->pri.port = attr->port_num;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pri.pkey_index = attr->pkey_index;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_AV) {
		qp->pri.ah = attr->ah_attr;
		qp->pri.ah.grh.sgid_attr = NULL;	/* not ours to keep */
	}
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->pri.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & SF_PSN_MASK;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & SF_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_ALT_PATH) {
		qp->alt.ah = attr->alt_ah_attr;
		qp->alt.ah.grh.sgid_attr = NULL;
		qp->alt.port = attr->alt_port_num;
		qp->alt.pkey_index = attr->alt_pkey_index;
		qp->alt.timeout = attr->alt_timeout;
		qp->has_alt = true;
	}
	if (mask & IB_QP_PATH_MIG_STATE) {
		if (attr->path_mig_state != IB_MIG_MIGRATED)
			qp->mig = IB_MIG_REARM;
		else if (qp->mig == IB_MIG_ARMED)
			sf_rc_migrate(qp, &d);
	}
	switch (next) {
	case IB_QPS_RESET:
		/* Everything back as created; nothing completes. */
		cancel_delayed_work(&qp->rto);
		list_splice_init(&qp->sq, &freed);
		qp->sq_count = 0;
		qp->rq_head = 0;
		qp->rq_count = 0;
		qp->has_alt = false;
		qp->mig = IB_MIG_MIGRATED;
		memset(&qp->pri, 0, sizeof(qp->pri));
		memset(&qp->alt, 0, sizeof(qp->alt));
		qp->sq_psn = 0;
		qp->rq_psn = 0;
		qp->rnr_wait = false;
		qp->rmsg = false;
		break;
	case IB_QPS_ERR:
		if (cur != IB_QPS_ERR)
			sf_rc_to_err(qp, NULL, IB_WC_SUCCESS, &d);
		break;
	case IB_QPS_RTR:
		/* COMM_EST once per entry into RTR (rdmavt qp.c) */
		if (cur != IB_QPS_RTR)
			qp->comm_est = false;
		break;
	default:
		break;
	}
	qp->port = qp->pri.port;
	qp->pkey_index = qp->pri.pkey_index;
	qp->retries = qp->retry_cnt;
	qp->rnr_retries = qp->rnr_retry;
	qp->state = next;
	if (d.mig && !list_empty(&qp->sq)) {
		/* Outstanding requests go again, on the new path. */
		sf_rc_resend_all(qp, &d);
		sf_rc_arm_timer(qp);
	}
out:
	spin_unlock_irqrestore(&sf_lock, flags);
	sf_rc_free_sq(&freed);
	sf_rc_finish(qp, &d);
	return ret;
}

void sf_rc_query(struct sf_qp *qp, struct ib_qp_attr *attr,
		 struct ib_qp_init_attr *init)
{
	unsigned long flags;

	spin_lock_irqsave(&sf_lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = qp->mig;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->ah_attr = qp->pri.ah;
	attr->alt_ah_attr = qp->alt.ah;
	attr->pkey_index = qp->pri.pkey_index;
	attr->alt_pkey_index = qp->alt.pkey_index;
	attr->port_num = qp->pri.port;
	attr->alt_port_num = qp->alt.port;
	attr->timeout = qp->pri.timeout;
	attr->alt_timeout = qp->alt.timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->sq_draining = 0;
	attr->cap.max_send_wr = qp->sq_size;
	attr->cap.max_recv_wr = qp->rq_size;
	attr->cap.max_send_sge = SF_MAX_SGE;
	attr->cap.max_recv_sge = SF_MAX_SGE;
	init->qp_type = IB_QPT_RC;
	init->send_cq = qp->ibqp.send_cq;
	init->recv_cq = qp->ibqp.recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	spin_unlock_irqrestore(&sf_lock, flags);
}

/* A WR posted to a QP in Error completes at once, flushed (IBA 10.3.1). */
static void sf_rc_flush_wr(struct sf_qp *qp, struct ib_cq *cq, u64 wr_id,
			   enum ib_wc_opcode op)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = op,
		.qp = &qp->ibqp,
	};

	sf_cq_add(container_of(cq, struct sf_cq, ibcq), &wc);
}

/*
 * IB_WR_REG_MR, IB_WR_LOCAL_INV: executed when posted (simfab sends in
 * order and nothing after them is on the wire yet), completed in order:
 * at once on an empty send queue, else after the WQEs before them.
 */
static int sf_rc_post_local(struct sf_qp *qp, const struct ib_send_wr *wr)
{
	struct sf_swqe *w = kzalloc(sizeof(*w), GFP_ATOMIC);
	struct sf_rc_done d;
	unsigned long flags;
	int ret = 0;

	if (!w)
		return -ENOMEM;
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->signaled = (wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all;
	w->local = true;
	sf_rc_done_init(&d);
	spin_lock_irqsave(&sf_lock, flags);
	if (qp->state == IB_QPS_ERR) {
		spin_unlock_irqrestore(&sf_lock, flags);
		sf_rc_flush_wr(qp, qp->ibqp.send_cq, w->wr_id,
			       sf_wc_opcode(w->opcode));
		kfree(w);
		return 0;
	}
	if (qp->state != IB_QPS_RTS || qp->sq_count >= qp->sq_size)
		ret = qp->state != IB_QPS_RTS ? -EINVAL : -ENOMEM;
	if (!ret)
		ret = sf_mr_local_op(qp, wr);
	if (ret) {
		spin_unlock_irqrestore(&sf_lock, flags);
		kfree(w);
		return ret;
	}
	w->psn = qp->sq_psn;
	w->status = IB_WC_SUCCESS;
	if (list_empty(&qp->sq)) {
		list_add_tail(&w->list, &d.swqes);
	} else {
		list_add_tail(&w->list, &qp->sq);
		qp->sq_count++;
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	sf_rc_finish(qp, &d);
	return 0;
}

int sf_rc_post_send(struct sf_qp *qp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad)
{
	struct sf_rc_done d;
	unsigned long flags;
	int ret = 0;

	for (; wr; wr = wr->next) {
		const struct ib_rdma_wr *rdma = rdma_wr(wr);
		struct sf_swqe *w;
		u32 len = 0, off = 0;
		bool payload;
		int i;

		if (wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV) {
			ret = sf_rc_post_local(qp, wr);
			if (ret)
				break;
			continue;
		}
		if (wr->num_sge > SF_MAX_SGE) {
			ret = -EINVAL;
			break;
		}
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		payload = wr->opcode != IB_WR_RDMA_READ;
		if (len > SF_RC_MAX_MSG ||
		    (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM &&
		     wr->opcode != IB_WR_SEND_WITH_INV &&
		     wr->opcode != IB_WR_RDMA_WRITE &&
		     wr->opcode != IB_WR_RDMA_WRITE_WITH_IMM &&
		     wr->opcode != IB_WR_RDMA_READ)) {
			ret = -EINVAL;
			break;
		}
		w = kzalloc(struct_size(w, data, payload ? len : 0), GFP_ATOMIC);
		if (!w) {
			ret = -ENOMEM;
			break;
		}
		w->wr_id = wr->wr_id;
		w->opcode = wr->opcode;
		w->signaled = (wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all;
		w->len = len;
		w->imm = wr->ex.imm_data;
		if (wr->opcode == IB_WR_SEND_WITH_INV)
			w->inv_rkey = wr->ex.invalidate_rkey;
		w->num_sge = wr->num_sge;
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
		if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM &&
		    wr->opcode != IB_WR_SEND_WITH_INV) {
			w->remote_addr = rdma->remote_addr;
			w->rkey = rdma->rkey;
		}
		/* No dma_device: SGE addresses are kernel virtual. */
		for (i = 0; payload && i < wr->num_sge; i++) {
			memcpy(w->data + off,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		sf_rc_done_init(&d);
		spin_lock_irqsave(&sf_lock, flags);
		if (qp->state == IB_QPS_ERR) {
			spin_unlock_irqrestore(&sf_lock, flags);
			sf_rc_flush_wr(qp, qp->ibqp.send_cq, w->wr_id,
				       sf_wc_opcode(w->opcode));
			kfree(w);
			continue;
		}
		if (qp->state != IB_QPS_RTS || qp->sq_count >= qp->sq_size) {
			spin_unlock_irqrestore(&sf_lock, flags);
			kfree(w);
			ret = qp->state != IB_QPS_RTS ? -EINVAL : -ENOMEM;
			break;
		}
		w->psn = qp->sq_psn;
		w->npkts = sf_rc_npkts(qp, len);
		w->rd_next = w->psn;
		qp->sq_psn = sf_psn_add(qp->sq_psn, w->npkts);
		if (list_empty(&qp->sq)) {
			qp->retries = qp->retry_cnt;
			qp->rnr_retries = qp->rnr_retry;
		}
		list_add_tail(&w->list, &qp->sq);
		qp->sq_count++;
		sf_rc_send_wqe(qp, w, &d);
		if (!delayed_work_pending(&qp->rto))
			sf_rc_arm_timer(qp);
		spin_unlock_irqrestore(&sf_lock, flags);
		sf_rc_finish(qp, &d);
	}
	if (ret)
		*bad = wr;
	return ret;
}

int sf_rc_post_recv(struct sf_qp *qp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad)
{
	unsigned long flags;
	int ret = 0;

	for (; wr; wr = wr->next) {
		spin_lock_irqsave(&sf_lock, flags);
		if (qp->state == IB_QPS_ERR) {
			spin_unlock_irqrestore(&sf_lock, flags);
			sf_rc_flush_wr(qp, qp->ibqp.recv_cq, wr->wr_id,
				       IB_WC_RECV);
			continue;
		}
		ret = sf_rq_push(qp, wr);
		spin_unlock_irqrestore(&sf_lock, flags);
		if (ret)
			break;
	}
	if (ret)
		*bad = wr;
	return ret;
}

/*
 * Did @pkt come in on path @p? A connected QP takes packets only from its
 * remote port on its current path: the LRH SLID must be the path's DLID,
 * the packet must arrive at the path's port, and a GRH must be there
 * exactly when the path is global, with the SGID the path's DGID (IBA
 * 9.6.1.5; as rdmavt's ruc_check_hdr). Across a router the SLID is the
 * router port's on this subnet (IBA 19.2.4).
 */
static bool sf_rc_path_ok(const struct sf_pkt *pkt, const struct sf_port *dst,
			  const struct sf_path *p)
{
	const struct ib_grh *g = (const struct ib_grh *)pkt->grh;
	bool global = rdma_ah_get_ah_flags(&p->ah) & IB_AH_GRH;

	if (dst->num != p->port || pkt->slid != rdma_ah_get_dlid(&p->ah) ||
	    pkt->has_grh != global)
		return false;
	return !global || !memcmp(&g->sgid, &p->ah.grh.dgid, sizeof(g->sgid));
}

/* An ACK, RNR NAK or NAK with @syndrome for @psn (IBA 9.7.5). */
static void sf_rc_ack(struct sf_qp *qp, u32 psn, u8 syndrome,
		      struct sf_rc_done *d)
{
	struct sf_pkt *pkt = sf_rc_pkt(qp, SF_RC_ACK, psn, 0);

	if (pkt)
		pkt->syndrome = syndrome;
	sf_rc_queue(d, pkt);
}

/*
 * The responses to an RDMA READ request: its length in packets of the
 * responder's path MTU, one PSN each from the request's (IBA 9.4.5,
 * 9.7.1); FIRST, MIDDLE..., LAST, or ONLY.
 */
static void sf_rc_read_resp(struct sf_qp *qp, const struct sf_pkt *req,
			    const struct sf_mr *mr, struct sf_rc_done *d)
{
	u32 i, off, seg, mtu = sf_pmtu(qp), n = sf_rc_npkts(qp, req->dma_len);
	struct sf_pkt *pkt;
	u8 op;

	for (i = 0; i < n; i++) {
		off = i * mtu;
		seg = min(mtu, req->dma_len - off);
		if (n == 1)
			op = SF_RC_READ_RESP_ONLY;
		else if (!i)
			op = SF_RC_READ_RESP_FIRST;
		else if (i < n - 1)
			op = SF_RC_READ_RESP_MIDDLE;
		else
			op = SF_RC_READ_RESP_LAST;
		pkt = sf_rc_pkt(qp, op, sf_psn_add(req->psn, i), seg);
		if (!pkt)
			return;
		sf_mr_copy(mr, req->va + off, pkt->data, seg, false);
		sf_rc_queue(d, pkt);
	}
}

/* Take a receive WQE for a SEND or a WRITE with immediate. */
static bool sf_rc_take_rwqe(struct sf_qp *qp, struct sf_rwqe *w)
{
	if (!qp->rq_count)
		return false;
	*w = qp->rq[qp->rq_head];
	qp->rq_head = (qp->rq_head + 1) % qp->rq_size;
	qp->rq_count--;
	return true;
}

/* The receive completion of the message that ends with @pkt. */
static void sf_rc_recv_wc(struct sf_qp *qp, const struct sf_pkt *pkt,
			  struct sf_port *dst, enum ib_wc_status st,
			  struct sf_rc_done *d)
{
	struct ib_wc *wc;

	d->rwc = kzalloc(sizeof(*d->rwc), GFP_ATOMIC);
	if (!d->rwc)
		return;
	wc = d->rwc;
	d->nrwc = 1;
	wc->wr_id = qp->rmsg_w.wr_id;
	wc->status = st;
	wc->opcode = sf_op_send(pkt->opcode) ? IB_WC_RECV :
					       IB_WC_RECV_RDMA_WITH_IMM;
	wc->byte_len = qp->rmsg_len;	/* the message's, as rxe and mlx5 */
	wc->qp = &qp->ibqp;
	wc->src_qp = pkt->sqpn;
	wc->slid = pkt->slid;
	wc->sl = pkt->sl;
	wc->port_num = dst->num;
	wc->pkey_index = qp->pri.pkey_index;
	if (sf_op_imm(pkt->opcode)) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = pkt->imm;
	}
	if (sf_op_inv(pkt->opcode) && st == IB_WC_SUCCESS) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = pkt->ieth;
	}
}

/*
 * SEND with Invalidate (IBA 9.4.1, 10.6.6.x; rxe invalidate_rkey): at
 * the message's last packet the responder invalidates the MR the IETH's
 * R_Key names, which must be a valid fast-registration MR of the QP's PD
 * (a DMA MR, another PD's or an unknown key: NAK Invalid Request, the
 * receive completes in error). Under sf_lock.
 */
static bool sf_rc_invalidate(struct sf_qp *qp, u32 rkey)
{
	struct sf_mr *mr = xa_load(&sf_mrs, rkey >> 8);

	if (!mr || mr->dma || !mr->valid || mr->key != rkey ||
	    mr->ibmr.pd != qp->ibqp.pd)
		return false;
	mr->valid = false;
	return true;
}

/*
 * A remote access error (IBA 9.7.5.2, NAK Remote Access Error; 10.6):
 * the request's R_Key, range or the QP's access flags do not allow it.
 * As rxe's responder (class C, do_class_ac_error): the NAK goes out and
 * the responder QP goes to Error; the requester completes its WQE with
 * REM_ACCESS_ERR and goes to Error too (sf_rc_requester).
 */
static const char *sf_rc_nak_access(struct sf_qp *qp, const struct sf_pkt *pkt,
				    struct sf_rc_done *d, const char *verdict)
{
	sf_rc_ack(qp, pkt->psn, SF_AETH_NAK_ACCESS, d);
	sf_rc_to_err(qp, NULL, IB_WC_SUCCESS, d);
	return verdict;
}

/*
 * The responder (IBA 9.7.4, 9.7.5): PSN check, then the packet in its
 * message: the OpCode sequence (a MIDDLE or LAST only after a FIRST of
 * the same kind), the payload length (FIRST and MIDDLE exactly the path
 * MTU, LAST and ONLY at most that), execution, and an ACK for the
 * message's last packet (IBA permits coalescing the others' ACKs).
 */
static const char *sf_rc_responder(struct sf_qp *qp, struct sf_pkt *pkt,
				   struct sf_port *dst, struct sf_rc_done *d)
{
	int c = sf_psn_cmp(pkt->psn, qp->rq_psn);
	u8 op = pkt->opcode;
	bool send = sf_op_send(op), first = sf_op_first(op);
	bool last = sf_op_last(op);
	u32 mtu = sf_pmtu(qp);
	struct sf_mr *mr;

	if (c > 0)	/* a gap: dropped, the requester's timer resends */
		return "drop-psn";
	if (c < 0) {
		/* A duplicate (IBA 9.7.5): acknowledged again, a READ
		 * answered again, nothing executed twice.
		 */
		if (op == SF_RC_READ_REQ) {
			/* executed again: checked again (rxe_recheck_mr) */
			if (!sf_rkey_ok(qp, pkt->rkey, pkt->va, pkt->dma_len,
					IB_ACCESS_REMOTE_READ, &mr))
				return sf_rc_nak_access(qp, pkt, d, "nak-rkey");
			sf_rc_read_resp(qp, pkt, mr, d);
		} else {
			sf_rc_ack(qp, (qp->rq_psn - 1) & SF_PSN_MASK,
				  SF_AETH_ACK, d);
		}
		return "duplicate";
	}
	/* Opcode sequence (IBA 9.7.4.1): NAK Invalid Request. */
	if (qp->rmsg ? (first || op == SF_RC_READ_REQ ||
			send != sf_op_send(qp->rmsg_op)) :
		       !first && op != SF_RC_READ_REQ) {
		sf_rc_ack(qp, pkt->psn, SF_AETH_NAK_INV, d);
		return "nak-sequence";
	}
	if (op != SF_RC_READ_REQ &&
	    (pkt->len > mtu || (!last && pkt->len != mtu))) {
		sf_rc_ack(qp, pkt->psn, SF_AETH_NAK_INV, d);
		return "nak-length";
	}
	if (first && sf_op_write(op)) {
		if (!(qp->access & IB_ACCESS_REMOTE_WRITE))
			return sf_rc_nak_access(qp, pkt, d, "nak-access");
		/* The whole message's range, at its first packet (rxe) */
		if (!sf_rkey_ok(qp, pkt->rkey, pkt->va, pkt->dma_len,
				IB_ACCESS_REMOTE_WRITE, &mr))
			return sf_rc_nak_access(qp, pkt, d, "nak-rkey");
		qp->rmsg_rkey = pkt->rkey;
	}
	if (op == SF_RC_READ_REQ) {
		if (!(qp->access & IB_ACCESS_REMOTE_READ))
			return sf_rc_nak_access(qp, pkt, d, "nak-access");
		if (!sf_rkey_ok(qp, pkt->rkey, pkt->va, pkt->dma_len,
				IB_ACCESS_REMOTE_READ, &mr))
			return sf_rc_nak_access(qp, pkt, d, "nak-rkey");
		sf_rc_read_resp(qp, pkt, mr, d);
		qp->rq_psn = sf_psn_add(qp->rq_psn,
					sf_rc_npkts(qp, pkt->dma_len));
		return "delivered";
	}
	if (first) {
		qp->rmsg_op = op;
		qp->rmsg_wqe = false;
		qp->rmsg_len = 0;
		qp->rmsg_va = pkt->va;
		qp->rmsg_dma_len = pkt->dma_len;
	}
	/* A SEND takes its receive WQE at its first packet, a WRITE with
	 * immediate at its last; none: RNR NAK (IBA 9.7.5.2.8).
	 */
	if (((send && first) || (!send && sf_op_imm(op))) &&
	    !sf_rc_take_rwqe(qp, &qp->rmsg_w)) {
		sf_rc_ack(qp, pkt->psn, SF_AETH_RNR_NAK |
			  (qp->min_rnr_timer & 0x1f), d);
		return "rnr-nak";
	}
	if ((send && first) || (!send && sf_op_imm(op)))
		qp->rmsg_wqe = true;
	if (send) {
		if (!sf_scatter(&qp->rmsg_w, pkt->data, pkt->len,
				qp->rmsg_len)) {
			qp->rmsg_len += pkt->len;
			sf_rc_recv_wc(qp, pkt, dst, IB_WC_LOC_LEN_ERR, d);
			qp->rmsg = false;
			sf_rc_ack(qp, pkt->psn, SF_AETH_NAK_INV, d);
			return "len-error";
		}
	} else if (pkt->len) {
		if (qp->rmsg_len + pkt->len > qp->rmsg_dma_len) {
			qp->rmsg = false;
			sf_rc_ack(qp, pkt->psn, SF_AETH_NAK_INV, d);
			return "nak-length";
		}
		/* each packet's MR looked up again (it may be gone, rxe) */
		if (!sf_rkey_ok(qp, qp->rmsg_rkey, qp->rmsg_va + qp->rmsg_len,
				pkt->len, IB_ACCESS_REMOTE_WRITE, &mr)) {
			qp->rmsg = false;
			return sf_rc_nak_access(qp, pkt, d, "nak-rkey");
		}
		sf_mr_copy(mr, qp->rmsg_va + qp->rmsg_len, pkt->data, pkt->len,
			   true);
	}
	qp->rmsg_len += pkt->len;
	qp->rq_psn = sf_psn_next(qp->rq_psn);
	qp->rmsg = !last;
	if (!last)
		return "delivered";
	if (sf_op_inv(op) && !sf_rc_invalidate(qp, pkt->ieth)) {
		sf_rc_recv_wc(qp, pkt, dst, IB_WC_REM_INV_REQ_ERR, d);
		sf_rc_ack(qp, pkt->psn, SF_AETH_NAK_INV, d);
		return "nak-invalidate";
	}
	if (qp->rmsg_wqe)
		sf_rc_recv_wc(qp, pkt, dst, IB_WC_SUCCESS, d);
	sf_rc_ack(qp, pkt->psn, SF_AETH_ACK, d);
	return "delivered";
}

static bool sf_op_read_resp(u8 op)
{
	return op >= SF_RC_READ_RESP_FIRST && op <= SF_RC_READ_RESP_ONLY;
}

/*
 * The requester takes an ACK, NAK or READ response (IBA 9.7.5): an ACK
 * acknowledges every PSN up to its own, a READ response every PSN before
 * its own; a WQE completes once its last PSN is acknowledged, a READ
 * once its last response came, each response in order at its offset.
 */
static const char *sf_rc_requester(struct sf_qp *qp, struct sf_pkt *pkt,
				   struct sf_rc_done *d)
{
	struct sf_swqe *w, *n;
	bool progress = false, placed;
	const char *verdict = "stale";

	w = list_first_entry_or_null(&qp->sq, struct sf_swqe, list);
	if (pkt->opcode == SF_RC_ACK && pkt->syndrome & 0x60) {
		if (!w || sf_psn_cmp(pkt->psn, w->psn) < 0 ||
		    sf_psn_cmp(pkt->psn, sf_wqe_last(w)) > 0)
			return "stale";
		if ((pkt->syndrome & 0x60) == SF_AETH_RNR_NAK) {
			/* rnr_retry 7 means "retry for ever". */
			if (qp->rnr_retry != 7 && !qp->rnr_retries--) {
				sf_rc_to_err(qp, w, IB_WC_RNR_RETRY_EXC_ERR, d);
				return "rnr-retry-exceeded";
			}
			qp->rnr_wait = true;
			mod_delayed_work(sf_wq, &qp->rto,
					 sf_rnr_delay(pkt->syndrome & 0x1f));
			return "rnr-nak";
		}
		sf_rc_to_err(qp, w, pkt->syndrome == SF_AETH_NAK_ACCESS ?
			     IB_WC_REM_ACCESS_ERR : IB_WC_REM_INV_REQ_ERR, d);
		return "nak";
	}
	list_for_each_entry_safe(w, n, &qp->sq, list) {
		if (w->local) {
			/* done at post; completes after those before it */
			w->status = IB_WC_SUCCESS;
			list_del(&w->list);
			list_add_tail(&w->list, &d->swqes);
			qp->sq_count--;
			continue;
		}
		if (sf_psn_cmp(w->psn, pkt->psn) > 0)
			break;
		if (w->opcode == IB_WR_RDMA_READ) {
			struct sf_rwqe r = { .num_sge = w->num_sge };
			u32 i = (pkt->psn - w->psn) & SF_PSN_MASK;

			/* Only its own responses complete a READ, in order. */
			if (!sf_op_read_resp(pkt->opcode) ||
			    sf_psn_cmp(pkt->psn, sf_wqe_last(w)) > 0)
				break;
			if (pkt->psn != w->rd_next) {
				verdict = sf_psn_cmp(pkt->psn, w->rd_next) < 0 ?
					  "duplicate" : "drop-psn";
				break;
			}
			memcpy(r.sge, w->sge, sizeof(r.sge));
			w->rd_next = sf_psn_next(w->rd_next);
			progress = true;
			placed = sf_scatter(&r, pkt->data, pkt->len,
					    i * sf_pmtu(qp));
			if (placed && pkt->psn != sf_wqe_last(w))
				break;	/* more responses to come */
			w->status = placed ? IB_WC_SUCCESS : IB_WC_LOC_LEN_ERR;
		} else {
			if (sf_psn_cmp(sf_wqe_last(w), pkt->psn) > 0)
				break;
			w->status = IB_WC_SUCCESS;
		}
		list_del(&w->list);
		list_add_tail(&w->list, &d->swqes);
		qp->sq_count--;
		progress = true;
	}
	if (!progress)
		return verdict;
	qp->retries = qp->retry_cnt;
	qp->rnr_retries = qp->rnr_retry;
	qp->rnr_wait = false;
	sf_rc_arm_timer(qp);
	return "delivered";
}

/*
 * An RC packet reached port @dst (its DLID named it; sf_rx checked the
 * port's state and P_Key table). Called by the wire's worker, no lock
 * held. Returns the capture verdict.
 */
const char *sf_rc_rx(struct sf_pkt *pkt, struct sf_port *dst)
{
	const char *verdict;
	struct sf_rc_done d;
	unsigned long flags;
	struct sf_qp *qp;
	bool resp;

	sf_rc_done_init(&d);
	spin_lock_irqsave(&sf_lock, flags);
	qp = xa_load(&sf_qps, pkt->dqpn);
	/* IBA 10.3.1: RESET, INIT and Error QPs discard what arrives. */
	if (!qp || qp->ibqp.qp_type != IB_QPT_RC || !dst->dev ||
	    qp->ibqp.device != &dst->dev->ibdev || qp->state < IB_QPS_RTR ||
	    qp->state == IB_QPS_ERR) {
		verdict = "drop-no-qp";
		goto unlock;
	}
	if (qp->mig == IB_MIG_ARMED && pkt->mig) {
		/* The peer migrated (IBA 17.2.8): follow it if the packet
		 * came in on our alternate path.
		 */
		if (!sf_rc_path_ok(pkt, dst, &qp->alt)) {
			/* A migration request this QP does not accept: Path
			 * Migration Request Error, an affiliated asynchronous
			 * error, and the QP goes to Error (IBA 11.6.3,
			 * 17.2.8; mlx5 PATH_MIG_FAILED -> PATH_MIG_ERR).
			 */
			qp->path_drops++;
			sf_rc_to_err(qp, NULL, IB_WC_SUCCESS, &d);
			d.mig_err = true;
			verdict = "drop-path";
			goto unlock;
		}
		sf_rc_migrate(qp, &d);
	} else {
		if (!sf_rc_path_ok(pkt, dst, &qp->pri)) {
			qp->path_drops++;
			verdict = "drop-path";
			goto unlock;
		}
		/* The peer is armed again: so are we (IBA 17.2.8). */
		if (qp->mig == IB_MIG_REARM && !pkt->mig)
			qp->mig = IB_MIG_ARMED;
	}
	/* IBA 10.9.3: a connected QP takes only its own partition. */
	if (!sf_pkey_match(pkt->pkey, dst->pkeys[qp->pri.pkey_index])) {
		verdict = "drop-pkey";
		goto unlock;
	}
	dst->rc_rx++;
	qp->rx++;
	/* Communication Established (IBA 11.6.3): the first request
	 * packet reaching a QP in RTR raises IB_EVENT_COMM_EST, once (rdmavt
	 * rvt_comm_est() from qib_rc_rcv/hfi1_rc_rcv; mlx5 COMM_EST): the CM
	 * of a passive side whose RTU was lost learns from it.
	 */
	resp = sf_op_read_resp(pkt->opcode) || pkt->opcode == SF_RC_ACK;
	if (!resp && qp->state == IB_QPS_RTR && !qp->comm_est) {
		qp->comm_est = true;
		d.comm_est = true;
	}
	if (resp)
		verdict = sf_rc_requester(qp, pkt, &d);
	else
		verdict = sf_rc_responder(qp, pkt, dst, &d);
unlock:
	spin_unlock_irqrestore(&sf_lock, flags);
	if (qp)
		sf_rc_finish(qp, &d);
	return verdict;
}
