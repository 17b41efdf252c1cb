// SPDX-License-Identifier: GPL-2.0
/*
 * simfab_test: in-kernel checks of simfab's transport and SA, printed as
 * KTAP lines in the kernel log (Debian's kernel has no KUnit). Load it
 * after simfab with its default topology; all checks run in module init.
 *
 * What it checks, and why it has to be in the kernel: UD QPs other than
 * QP1, the GRH and dlid_path_bits of a receive completion, Q_Key and P_Key
 * drops, and the SA's answer to ib_sa's own PathRecord Get -- none of them
 * reachable from userspace without a verbs provider.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_cache.h>

#define T_QKEY		0x1234
#define T_LEN		64

static int t_num;
static int t_failed;

static void t_result(bool ok, const char *name, const char *why)
{
	t_num++;
	if (ok) {
		pr_info("ok %d simfab_%s\n", t_num, name);
	} else {
		t_failed++;
		pr_info("not ok %d simfab_%s # %s\n", t_num, name, why);
	}
}

struct t_end {
	struct ib_device *dev;
	u32 port;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;
};

static int t_end_init(struct t_end *e, const char *name, u32 port, u16 pki)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp_init_attr qa = {};
	struct ib_qp_attr a = {};
	int ret;

	e->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!e->dev)
		return -ENODEV;
	e->port = port;
	e->buf = kzalloc(40 + T_LEN, GFP_KERNEL);
	if (!e->buf)
		return -ENOMEM;
	e->pd = ib_alloc_pd(e->dev, 0);
	if (IS_ERR(e->pd))
		return PTR_ERR(e->pd);
	e->cq = ib_create_cq(e->dev, NULL, NULL, NULL, &ca);
	if (IS_ERR(e->cq))
		return PTR_ERR(e->cq);
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.qp_type = IB_QPT_UD;
	qa.sq_sig_type = IB_SIGNAL_ALL_WR;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	e->qp = ib_create_qp(e->pd, &qa);
	if (IS_ERR(e->qp))
		return PTR_ERR(e->qp);
	a.qp_state = IB_QPS_INIT;
	a.pkey_index = pki;
	a.port_num = port;
	a.qkey = T_QKEY;
	ret = ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(e->qp, &a, IB_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	return ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
}

static void t_end_fini(struct t_end *e)
{
	if (!IS_ERR_OR_NULL(e->qp))
		ib_destroy_qp(e->qp);
	if (!IS_ERR_OR_NULL(e->cq))
		ib_destroy_cq(e->cq);
	if (!IS_ERR_OR_NULL(e->pd))
		ib_dealloc_pd(e->pd);
	kfree(e->buf);
	if (e->dev)
		ib_device_put(e->dev);
}

static int t_post_recv(struct t_end *e)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)e->buf,	/* no dma_device: virtual */
		.length = 40 + T_LEN,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };

	memset(e->buf, 0, 40 + T_LEN);
	return ib_post_recv(e->qp, &wr, NULL);
}

/* Poll until a completion of the given opcode shows up, up to ms. */
static bool t_poll(struct t_end *e, enum ib_wc_opcode op, struct ib_wc *wc,
		   int ms)
{
	for (; ms > 0; ms -= 10) {
		while (ib_poll_cq(e->cq, 1, wc) == 1)
			if (wc->opcode == op)
				return true;
		msleep(20);
	}
	return false;
}

static int t_send(struct t_end *s, struct t_end *d, u32 qkey, u8 bits,
		  bool grh, u8 *payload)
{
	struct rdma_ah_attr aa = {};
	struct ib_port_attr pa;
	struct ib_sge sge;
	struct ib_ud_wr wr = {};
	struct ib_wc wc;
	struct ib_ah *ah;
	int ret;

	ret = ib_query_port(d->dev, d->port, &pa);
	if (ret)
		return ret;
	aa.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(&aa, s->port);
	rdma_ah_set_dlid(&aa, pa.lid | bits);
	rdma_ah_set_sl(&aa, 3);
	rdma_ah_set_path_bits(&aa, bits);
	if (grh) {
		union ib_gid dgid;

		ret = rdma_query_gid(d->dev, d->port, 0, &dgid);
		if (ret)
			return ret;
		rdma_ah_set_grh(&aa, &dgid, 0x12345, 0, 5, 0x20);
	}
	ah = rdma_create_ah(s->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	sge.addr = (uintptr_t)payload;
	sge.length = T_LEN;
	sge.lkey = s->pd->local_dma_lkey;
	wr.wr.wr_id = 1;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.ah = ah;
	wr.remote_qpn = d->qp->qp_num;
	wr.remote_qkey = qkey;
	ret = ib_post_send(s->qp, &wr.wr, NULL);
	if (!ret && !t_poll(s, IB_WC_SEND, &wc, 2000))
		ret = -ETIMEDOUT;
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	return ret;
}

static void t_ud(void)
{
	struct t_end a = {}, b = {}, c = {};
	u8 *payload = NULL;
	struct ib_grh *grh;
	struct ib_wc wc;
	union ib_gid ga, gb;
	int ret, i;

	/* a = h2 port 2 (LID 6), b = h3 port 1 (LID 8), c = h3 with its
	 * second P_Key (0x0001, partial member).
	 */
	ret = t_end_init(&a, "simfab1", 2, 0);
	if (!ret)
		ret = t_end_init(&b, "simfab2", 1, 0);
	if (!ret)
		ret = t_end_init(&c, "simfab2", 1, 1);
	payload = kmalloc(T_LEN, GFP_KERNEL);
	if (!payload)
		ret = -ENOMEM;
	t_result(!ret, "ud_setup", "could not create UD QPs on simfab1/simfab2");
	if (ret)
		goto out;
	for (i = 0; i < T_LEN; i++)
		payload[i] = i ^ 0x5a;
	rdma_query_gid(a.dev, 2, 0, &ga);
	rdma_query_gid(b.dev, 1, 0, &gb);

	/* With GRH and LMC path bits 1 at both ends. */
	t_post_recv(&b);
	ret = t_send(&a, &b, T_QKEY, 1, true, payload);
	if (ret || !t_poll(&b, IB_WC_RECV, &wc, 2000)) {
		t_result(false, "ud_grh_delivery", "no receive completion");
	} else {
		grh = (struct ib_grh *)b.buf;
		t_result(wc.status == IB_WC_SUCCESS && wc.byte_len == 40 + T_LEN &&
			 !memcmp(b.buf + 40, payload, T_LEN),
			 "ud_grh_delivery", "status/byte_len/payload wrong");
		t_result(wc.src_qp == a.qp->qp_num && wc.slid == 7 &&
			 wc.sl == 3 && wc.dlid_path_bits == 1 &&
			 wc.pkey_index == 0 && wc.port_num == 1,
			 "ud_wc_fields", "src_qp/slid 7/sl 3/path bits 1/pkey_index 0/port wrong");
		t_result((wc.wc_flags & IB_WC_GRH) &&
			 !memcmp(&grh->sgid, &ga, 16) &&
			 !memcmp(&grh->dgid, &gb, 16) && grh->hop_limit == 5 &&
			 grh->next_hdr == 0x1b &&
			 (be32_to_cpu(grh->version_tclass_flow) & 0xfffff) == 0x12345,
			 "ud_grh_contents", "GRH flag or fields wrong");
	}

	/* Without GRH: flag clear, byte_len still counts 40 bytes. */
	t_post_recv(&b);
	ret = t_send(&a, &b, T_QKEY, 0, false, payload);
	if (ret || !t_poll(&b, IB_WC_RECV, &wc, 2000))
		t_result(false, "ud_no_grh", "no receive completion");
	else
		t_result(!(wc.wc_flags & IB_WC_GRH) && wc.byte_len == 40 + T_LEN &&
			 wc.dlid_path_bits == 0 && wc.slid == 6 &&
			 !memcmp(b.buf + 40, payload, T_LEN),
			 "ud_no_grh", "GRH flag/byte_len/path bits/slid wrong");

	/* Wrong Q_Key: dropped (IBA 10.2.5). */
	t_post_recv(&b);
	ret = t_send(&a, &b, T_QKEY + 1, 0, false, payload);
	t_result(!ret && !t_poll(&b, IB_WC_RECV, &wc, 300), "ud_qkey_drop",
		 "a packet with the wrong Q_Key was delivered");

	/* a sends with 0xFFFF; c's QP has P_Key 0x0001 (partial): neither
	 * is the other's key, so dropped (IBA 10.9.3).
	 */
	t_post_recv(&c);
	ret = t_send(&a, &c, T_QKEY, 0, false, payload);
	t_result(!ret && !t_poll(&c, IB_WC_RECV, &wc, 300), "ud_pkey_drop",
		 "a packet with a foreign P_Key was delivered");
out:
	kfree(payload);
	t_end_fini(&c);
	t_end_fini(&b);
	t_end_fini(&a);
}

static struct ib_sa_client t_sa_client;

struct t_sa {
	struct completion done;
	int status;
	struct sa_path_rec rec;
};

static void t_sa_cb(int status, struct sa_path_rec *resp, int num, void *ctx)
{
	struct t_sa *t = ctx;

	t->status = status;
	if (!status && resp)
		t->rec = *resp;
	complete(&t->done);
}

/* ib_sa's own PathRecord Get (what rdma_cm sends) from h2/1 to h3/1. */
static void t_sa_get(void)
{
	struct ib_sa_query *query;
	struct sa_path_rec rec = {};
	struct ib_device *dev;
	struct t_sa *t;
	int ret;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	dev = ib_device_get_by_name("simfab1", RDMA_DRIVER_UNKNOWN);
	if (!t || !dev) {
		t_result(false, "sa_get", "no memory or no simfab1");
		goto out;
	}
	init_completion(&t->done);
	rec.rec_type = SA_PATH_REC_TYPE_IB;
	rdma_query_gid(dev, 1, 0, &rec.sgid);
	rec.dgid.global.subnet_prefix = rec.sgid.global.subnet_prefix;
	rec.dgid.global.interface_id = cpu_to_be64(0x5346000000000301ULL);
	rec.pkey = cpu_to_be16(0xffff);
	rec.numb_path = 1;
	rec.reversible = 1;
	ret = ib_sa_path_rec_get(&t_sa_client, dev, 1, &rec,
				 IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID |
				 IB_SA_PATH_REC_PKEY | IB_SA_PATH_REC_NUMB_PATH |
				 IB_SA_PATH_REC_REVERSIBLE,
				 5000, GFP_KERNEL, t_sa_cb, t, &query);
	if (ret < 0) {
		t_result(false, "sa_get", "ib_sa_path_rec_get failed");
		goto out;
	}
	wait_for_completion(&t->done);
	t_result(!t->status && be32_to_cpu(sa_path_get_dlid(&t->rec)) == 8 &&
		 be32_to_cpu(sa_path_get_slid(&t->rec)) == 4 &&
		 t->rec.sl == 1 && t->rec.mtu == IB_MTU_1024 &&
		 t->rec.rate == IB_RATE_10_GBPS &&
		 t->rec.packet_life_time == 20 && t->rec.reversible &&
		 t->rec.hop_limit == 0,
		 "sa_get", "status or DLID 8/SLID 4/SL 1/MTU 1024/10G/life 20 wrong");
	pr_info("# sa_get status=%d dlid=%u slid=%u sl=%u mtu=%u rate=%u life=%u\n",
		t->status, be32_to_cpu(sa_path_get_dlid(&t->rec)),
		be32_to_cpu(sa_path_get_slid(&t->rec)), t->rec.sl,
		t->rec.mtu, t->rec.rate, t->rec.packet_life_time);
out:
	if (dev)
		ib_device_put(dev);
	kfree(t);
}

static int __init t_init(void)
{
	pr_info("KTAP version 1\n");
	pr_info("1..8\n");
	ib_sa_register_client(&t_sa_client);
	t_ud();
	t_sa_get();
	ib_sa_unregister_client(&t_sa_client);
	pr_info("# simfab_test: %d tests, %d not ok\n", t_num, t_failed);
	return 0;
}

static void __exit t_exit(void)
{
}

module_init(t_init);
module_exit(t_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("simfab_test: KTAP checks of simfab's transport and SA");
