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
 *
 * Parameter "cases" (comma-separated; default "ud,sa", what simfab-basic
 * runs on the default topology) also takes, for simfab-ipoib:
 *   mc    multicast as ib_ipoib uses it: joins through ib_sa, attach,
 *         multi-SGE UD sends to the MLID, replication to the joined
 *         ports, loopback to the sender and IB_QP_CREATE_BLOCK_MULTICAST_
 *         LOOPBACK, no copy for a port attached but not joined, leave;
 *         ports mc_a, mc_b (joined) and mc_c (attached only), "DEV:PORT";
 *   ipcm  an IP-addressed kernel rdma_cm connection (RDMA_PS_TCP, RC)
 *         from act_ip to pas_ip, each side in the network namespace of
 *         the process act_ns / pas_ns (0: init_net), which holds that
 *         address's IPoIB netdev: address and route resolution, connect,
 *         SENDs both ways, disconnect.
 * The plan line comes last (the number of results).
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/in.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_cm.h>

#include "simfab_devget.h"
#include "simfab_compat.h"

static char *cases = "ud,sa";
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "comma-separated: ud, sa, mc, ipcm");
static char *mc_a = "", *mc_b = "", *mc_c = "";
module_param(mc_a, charp, 0444);
MODULE_PARM_DESC(mc_a, "mc: the sender's port, DEV:PORT (joins)");
module_param(mc_b, charp, 0444);
MODULE_PARM_DESC(mc_b, "mc: a receiver's port, DEV:PORT (joins)");
module_param(mc_c, charp, 0444);
MODULE_PARM_DESC(mc_c, "mc: a port that attaches but never joins");
static char *act_ip = "", *pas_ip = "";
module_param(act_ip, charp, 0444);
MODULE_PARM_DESC(act_ip, "ipcm: the active side's IPv4 address");
module_param(pas_ip, charp, 0444);
MODULE_PARM_DESC(pas_ip, "ipcm: the passive side's IPv4 address");
static int act_ns, pas_ns;
module_param(act_ns, int, 0444);
MODULE_PARM_DESC(act_ns, "ipcm: a pid in the active side's netns (0: init)");
module_param(pas_ns, int, 0444);
MODULE_PARM_DESC(pas_ns, "ipcm: a pid in the passive side's netns (0: init)");

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

static int t_end_init_flags(struct t_end *e, const char *name, u32 port,
			    u16 pki, u32 flags, int sge);

static int t_end_init(struct t_end *e, const char *name, u32 port, u16 pki)
{
	return t_end_init_flags(e, name, port, pki, 0, 1);
}

static int t_end_init_flags(struct t_end *e, const char *name, u32 port,
			    u16 pki, u32 flags, int sge)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp_init_attr qa = {};
	struct ib_qp_attr a = {};
	int ret;

	e->dev = sf_device_get_by_name(name);
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
	qa.cap.max_send_sge = sge;
	qa.cap.max_recv_sge = 1;
	qa.create_flags = flags;
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

static void t_sa_cb(int status, struct sa_path_rec *resp, SF_NUM_PRS num, void *ctx)
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
	dev = sf_device_get_by_name("simfab1");
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

/* "DEV:PORT" -> an ib_device reference and a port number. */
static int t_parse_end(const char *spec, char *name, u32 *port)
{
	const char *c = strchr(spec, ':');
	size_t n = c ? c - spec : 0;

	if (!c || !n || n >= IB_DEVICE_NAME_MAX || kstrtou32(c + 1, 0, port))
		return -EINVAL;
	memcpy(name, spec, n);
	name[n] = '\0';
	return 0;
}

/* ---- mc: multicast as ib_ipoib uses it ---------------------------------- */

struct t_join {
	struct completion done;
	int status;
	struct ib_sa_mcmember_rec rec;
};

static int t_join_cb(int status, struct ib_sa_multicast *mc)
{
	struct t_join *j = mc->context;

	j->status = status;
	if (!status)
		j->rec = mc->rec;
	complete(&j->done);
	return 0;
}

/* Join @mgid as ib_ipoib joins its broadcast group (ipoib_multicast.c):
 * only MGID, PortGID, P_Key and JoinState.
 */
static struct ib_sa_multicast *t_join(struct t_end *e, const union ib_gid *mgid,
				      struct t_join *j)
{
	struct ib_sa_mcmember_rec rec = { .join_state = 1 };
	struct ib_sa_multicast *mc;

	init_completion(&j->done);
	j->status = -ETIMEDOUT;
	rec.mgid = *mgid;
	rdma_query_gid(e->dev, e->port, 0, &rec.port_gid);
	rec.pkey = cpu_to_be16(0xffff);
	mc = ib_sa_join_multicast(&t_sa_client, e->dev, e->port, &rec,
				  IB_SA_MCMEMBER_REC_MGID |
				  IB_SA_MCMEMBER_REC_PORT_GID |
				  IB_SA_MCMEMBER_REC_PKEY |
				  IB_SA_MCMEMBER_REC_JOIN_STATE,
				  GFP_KERNEL, t_join_cb, j);
	if (IS_ERR(mc))
		return mc;
	if (!wait_for_completion_timeout(&j->done, msecs_to_jiffies(10000)))
		j->status = -ETIMEDOUT;
	return mc;
}

struct t_seen {
	int sends, recvs;
	struct ib_wc rwc;
};

/* Take every completion of @e; with @ms, wait up to that long for a
 * send completion. simfab completes a send after delivering every copy
 * of the packet, so once the sender's completion is there, every
 * receiver's is too.
 */
static void t_collect(struct t_end *e, int ms, struct t_seen *sn)
{
	struct ib_wc wc;

	memset(sn, 0, sizeof(*sn));
	for (;;) {
		while (ib_poll_cq(e->cq, 1, &wc) == 1) {
			if (wc.opcode == IB_WC_SEND) {
				sn->sends++;
			} else if (wc.opcode == IB_WC_RECV) {
				sn->recvs++;
				sn->rwc = wc;
			}
		}
		if (sn->sends || ms <= 0)
			return;
		msleep(20);
		ms -= 20;
	}
}

/* A UD SEND of @payload (T_LEN bytes) in three SGEs to the multicast
 * group, as ib_ipoib sends a header and fragments (NETIF_F_SG).
 */
static int t_mc_send(struct t_end *s, struct ib_sa_mcmember_rec *rec,
		     const u8 *payload, int *self)
{
	struct rdma_ah_attr aa = {};
	struct ib_sge sge[3];
	struct ib_ud_wr wr = {};
	struct ib_ah *ah;
	int ret, i;
	static const u32 cut[] = { 0, 10, 24, T_LEN };

	aa.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(&aa, s->port);
	rdma_ah_set_dlid(&aa, be16_to_cpu(rec->mlid));
	rdma_ah_set_sl(&aa, rec->sl);
	rdma_ah_set_grh(&aa, &rec->mgid, be32_to_cpu(rec->flow_label), 0,
			rec->hop_limit, rec->traffic_class);
	ah = rdma_create_ah(s->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	for (i = 0; i < 3; i++) {
		sge[i].addr = (uintptr_t)(payload + cut[i]);
		sge[i].length = cut[i + 1] - cut[i];
		sge[i].lkey = s->pd->local_dma_lkey;
	}
	wr.wr.wr_id = 1;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 3;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.ah = ah;
	wr.remote_qpn = 0xffffff;
	wr.remote_qkey = be32_to_cpu(rec->qkey);
	ret = ib_post_send(s->qp, &wr.wr, NULL);
	if (!ret) {
		struct t_seen sn;

		t_collect(s, 3000, &sn);
		*self = sn.recvs;	/* what the sender took (loopback) */
		if (!sn.sends)
			ret = -ETIMEDOUT;
	}
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	return ret;
}

/* Did @e get the packet, intact, as a multicast receive completion? */
static bool t_mc_got(struct t_end *e, struct t_seen *sn, struct t_end *from,
		     const struct ib_sa_mcmember_rec *rec, const u8 *payload)
{
	const struct ib_grh *grh = (const struct ib_grh *)e->buf;
	struct ib_port_attr pa;

	if (sn->recvs != 1 || ib_query_port(from->dev, from->port, &pa))
		return false;
	return sn->rwc.status == IB_WC_SUCCESS &&
	       sn->rwc.byte_len == 40 + T_LEN &&
	       (sn->rwc.wc_flags & IB_WC_GRH) &&
	       sn->rwc.src_qp == from->qp->qp_num && sn->rwc.slid == pa.lid &&
	       !memcmp(&grh->dgid, &rec->mgid, 16) &&
	       !memcmp(e->buf + 40, payload, T_LEN);
}

/*
 * A UD QP moved to Error completes its posted receives (c never got a
 * packet: two are posted) with WR_FLUSH_ERR, and one posted afterwards
 * too (IBA 10.3.1); ib_ipoib waits for that when an interface goes down.
 */
static void t_err_flush(struct t_end *e)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	int ret, n = 0, bad = 0, ms;

	ret = ib_modify_qp(e->qp, &qa, IB_QP_STATE);
	if (!ret)
		ret = t_post_recv(e);
	for (ms = 0; !ret && ms < 1000 && n < 3; ms += 20) {
		while (ib_poll_cq(e->cq, 1, &wc) == 1) {
			if (wc.status == IB_WC_WR_FLUSH_ERR &&
			    wc.opcode == IB_WC_RECV && wc.qp == e->qp)
				n++;
			else
				bad++;
		}
		if (n < 3)
			msleep(20);
	}
	pr_info("# ud err-flush ret=%d flushed=%d other=%d\n", ret, n, bad);
	t_result(!ret && n == 3 && !bad, "ud_err_flush",
		 "posted receives not completed with WR_FLUSH_ERR in Error");
}

/* query_qp of a UD QP, as ib_ipoib and ib_attach_mcast read it. */
static void t_mc_query(struct t_end *e, u32 port, u32 qkey)
{
	struct ib_qp_init_attr qi;
	struct ib_qp_attr qa;
	int ret;

	ret = ib_query_qp(e->qp, &qa, IB_QP_STATE | IB_QP_PORT | IB_QP_QKEY |
			  IB_QP_PKEY_INDEX, &qi);
	pr_info("# mc query_qp ret=%d state=%d port=%u qkey=0x%x pkey_index=%u create_flags=0x%x max_send_sge=%u\n",
		ret, qa.qp_state, qa.port_num, qa.qkey, qa.pkey_index,
		qi.create_flags, qi.cap.max_send_sge);
	t_result(!ret && qa.qp_state == IB_QPS_RTS && qa.port_num == port &&
		 qa.qkey == qkey && !qa.pkey_index &&
		 (qi.create_flags & IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) &&
		 qi.cap.max_send_sge >= 3, "mc_query_qp",
		 "UD query_qp state/port/Q_Key/P_Key index/flags/SGEs wrong");
}

static void t_mc(void)
{
	static const union ib_gid bcast = { .raw = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff } };
	struct t_end a = {}, ablk = {}, b = {}, c = {};
	struct t_end *all[] = { &a, &ablk, &b, &c };
	struct ib_sa_multicast *ma = NULL, *mb = NULL;
	struct t_join *ja = NULL, *jb = NULL;
	struct t_seen sa, sab, sb, scc;
	char na[IB_DEVICE_NAME_MAX], nb[IB_DEVICE_NAME_MAX];
	char nc[IB_DEVICE_NAME_MAX];
	u32 pa, pb, pc;
	u8 *payload = NULL;
	int ret, i, k, twice = -1;
	bool left = false;

	ret = t_parse_end(mc_a, na, &pa) ?: t_parse_end(mc_b, nb, &pb) ?:
	      t_parse_end(mc_c, nc, &pc);
	if (!ret)
		ret = t_end_init_flags(&a, na, pa, 0, 0, 3) ?:
		      t_end_init_flags(&ablk, na, pa, 0,
				       IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK, 3) ?:
		      t_end_init(&b, nb, pb, 0) ?: t_end_init(&c, nc, pc, 0);
	payload = kmalloc(T_LEN, GFP_KERNEL);
	ja = kzalloc(sizeof(*ja), GFP_KERNEL);
	jb = kzalloc(sizeof(*jb), GFP_KERNEL);
	if (!payload || !ja || !jb)
		ret = -ENOMEM;
	t_result(!ret, "mc_setup", "bad mc_a/mc_b/mc_c or UD QPs not created");
	if (ret)
		goto out;
	for (i = 0; i < T_LEN; i++)
		payload[i] = i * 7 + 1;

	/* Join the IPoIB broadcast group of P_Key 0xFFFF, created in
	 * advance by the SA, at a and b (not c).
	 */
	ma = t_join(&a, &bcast, ja);
	mb = t_join(&b, &bcast, jb);
	if (IS_ERR(ma) || IS_ERR(mb)) {
		t_result(false, "mc_join", "ib_sa_join_multicast failed");
		goto out;
	}
	pr_info("# mc join status=%d,%d mlid=0x%04x qkey=0x%08x mtu=%u rate=%u sl=%u join_state=0x%x pkey=0x%04x\n",
		ja->status, jb->status, be16_to_cpu(ja->rec.mlid),
		be32_to_cpu(ja->rec.qkey), ja->rec.mtu, ja->rec.rate,
		ja->rec.sl, ja->rec.join_state, be16_to_cpu(ja->rec.pkey));
	t_result(!ja->status && !jb->status &&
		 be16_to_cpu(ja->rec.mlid) >= 0xc000 &&
		 ja->rec.mlid == jb->rec.mlid && ja->rec.qkey == jb->rec.qkey &&
		 be32_to_cpu(ja->rec.qkey) == 0x0b1b &&
		 !memcmp(&ja->rec.mgid, &bcast, 16) && (ja->rec.join_state & 1),
		 "mc_join", "join failed, or MLID/Q_Key 0x0b1b/MGID/JoinState wrong");
	if (ja->status || jb->status)
		goto out;

	/* Every QP takes the group's Q_Key and attaches (c too). */
	ret = 0;
	for (i = 0; i < 4; i++) {
		struct ib_qp_attr qa = { .qkey = be32_to_cpu(ja->rec.qkey) };

		ret = ret ?: ib_modify_qp(all[i]->qp, &qa, IB_QP_QKEY);
		ret = ret ?: ib_attach_mcast(all[i]->qp, &ja->rec.mgid,
					     be16_to_cpu(ja->rec.mlid));
	}
	t_result(!ret, "mc_attach", "modify_qp(QKEY) or ib_attach_mcast failed");
	if (ret)
		goto out;

	t_mc_query(&ablk, pa, be32_to_cpu(ja->rec.qkey));
	/* b attached a second time: still one copy (ibv_attach_mcast(3)). */
	twice = ib_attach_mcast(b.qp, &ja->rec.mgid, be16_to_cpu(ja->rec.mlid));

	/* a sends (three SGEs): b (joined) gets it, a gets its own copy
	 * (loopback), ablk too (another QP on a's port), c (attached but
	 * not joined: the switch does not forward to it) does not.
	 */
	for (i = 0; i < 4; i++)
		t_post_recv(all[i]);
	t_post_recv(&b);	/* room for a second copy, which must not come */
	ret = t_mc_send(&a, &ja->rec, payload, &k);
	t_collect(&b, 0, &sb);
	t_collect(&ablk, 0, &sab);
	t_collect(&c, 0, &scc);
	pr_info("# mc send-from-a ret=%d a=%d ablk=%d b=%d c=%d\n", ret, k,
		sab.recvs, sb.recvs, scc.recvs);
	t_result(!ret && t_mc_got(&b, &sb, &a, &ja->rec, payload),
		 "mc_replicate_multi_sge",
		 "the joined port did not get the 3-SGE packet intact");
	t_result(!ret && k == 1 && t_mc_got(&ablk, &sab, &a, &ja->rec, payload),
		 "mc_loopback",
		 "the sending port's attached QPs (sender too) got no copy");
	t_result(!ret && !scc.recvs, "mc_not_joined_no_copy",
		 "a port attached but not joined got a copy");
	t_result(!twice && sb.recvs == 1, "mc_attach_twice_one_copy",
		 "a second attach failed or brought a second copy");

	/* ablk (BLOCK_MULTICAST_LOOPBACK) sends: a and b get it, ablk not. */
	for (i = 0; i < 4; i++)
		t_post_recv(all[i]);
	ret = t_mc_send(&ablk, &ja->rec, payload, &k);
	t_collect(&a, 0, &sa);
	t_collect(&b, 0, &sb);
	pr_info("# mc send-from-ablk ret=%d ablk=%d a=%d b=%d\n", ret, k,
		sa.recvs, sb.recvs);
	t_result(!ret && !k && t_mc_got(&a, &sa, &ablk, &ja->rec, payload) &&
		 t_mc_got(&b, &sb, &ablk, &ja->rec, payload),
		 "mc_block_loopback",
		 "BLOCK_MULTICAST_LOOPBACK sender got its copy, or a/b did not");

	/* b leaves (ib_sa sends the Delete): a's packets stop reaching it. */
	/* Two detaches undo two attaches; a third finds nothing. */
	ret = ib_detach_mcast(b.qp, &ja->rec.mgid, be16_to_cpu(ja->rec.mlid));
	i = ib_detach_mcast(b.qp, &ja->rec.mgid, be16_to_cpu(ja->rec.mlid));
	k = ib_detach_mcast(b.qp, &ja->rec.mgid, be16_to_cpu(ja->rec.mlid));
	pr_info("# mc detach b: %d %d %d\n", ret, i, k);
	t_result(!ret && !i && k == -EINVAL, "mc_detach_twice",
		 "two detaches did not undo two attaches");
	ib_attach_mcast(b.qp, &ja->rec.mgid, be16_to_cpu(ja->rec.mlid));
	ib_sa_free_multicast(mb);
	mb = NULL;
	for (i = 0; i < 25 && !left; i++) {
		msleep(200);
		t_post_recv(&b);
		t_post_recv(&a);
		if (t_mc_send(&a, &ja->rec, payload, &k))
			break;
		t_collect(&b, 0, &sb);
		left = !sb.recvs;
	}
	t_result(left, "mc_leave", "the port still gets the group's packets after leaving");
	t_err_flush(&c);
out:
	if (!IS_ERR_OR_NULL(mb))
		ib_sa_free_multicast(mb);
	if (!IS_ERR_OR_NULL(ma))
		ib_sa_free_multicast(ma);
	for (i = 3; i >= 0; i--) {
		if (!IS_ERR_OR_NULL(all[i]->qp) && ja)
			ib_detach_mcast(all[i]->qp, &ja->rec.mgid,
					be16_to_cpu(ja->rec.mlid));
		t_end_fini(all[i]);
	}
	kfree(jb);
	kfree(ja);
	kfree(payload);
}

/* ---- ipcm: IP-addressed kernel rdma_cm over IPoIB ------------------------ */

#define T_CM_PORT	18515
#define T_CM_MSG	64
#define T_CM_WAIT	15000

struct t_cm {
	const char *name;
	struct rdma_cm_id *id, *listen;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;		/* receive at 0, send at T_CM_MSG */
	struct completion step;
	int status;
};

static struct t_cm t_ca = { .name = "act" }, t_cp = { .name = "pas" };

static void t_cm_step(struct t_cm *s, int status)
{
	s->status = status;
	complete(&s->step);
}

static int t_cm_wait(struct t_cm *s)
{
	if (!wait_for_completion_timeout(&s->step, msecs_to_jiffies(T_CM_WAIT)))
		return -ETIMEDOUT;
	reinit_completion(&s->step);
	return s->status;
}

/* PD, CQ, QP and a posted receive on the id's device. */
static int t_cm_qp(struct t_cm *s, struct rdma_cm_id *id)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp_init_attr qa = {};
	struct ib_sge sge;
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	int ret;

	s->buf = kzalloc(2 * T_CM_MSG, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	s->pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(s->pd))
		return PTR_ERR(s->pd);
	s->cq = ib_create_cq(id->device, NULL, NULL, NULL, &ca);
	if (IS_ERR(s->cq))
		return PTR_ERR(s->cq);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_ALL_WR;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(id, s->pd, &qa);
	if (ret)
		return ret;
	s->id = id;
	sge.addr = (uintptr_t)s->buf;
	sge.length = T_CM_MSG;
	sge.lkey = s->pd->local_dma_lkey;
	return ib_post_recv(id->qp, &wr, NULL);
}

static int t_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct t_cm *s = id->context;
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_DISCONNECTED:
		t_cm_step(s, 0);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* The passive side's new id: a QP, then accept (from the
		 * handler, as kernel ULPs do).
		 */
		if (s->id || t_cm_qp(s, id)) {
			t_cm_step(s, -ENOMEM);
			s->id = NULL;
			return 1;	/* rdma_cm destroys the id */
		}
		if (rdma_accept(id, &cp))
			t_cm_step(s, -EIO);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		pr_info("# ipcm %s rdma_cm event %s status %d\n", s->name,
			rdma_event_msg(ev->event), ev->status);
		t_cm_step(s, ev->status ? ev->status : -EIO);
		break;
	}
	return 0;
}

static int t_cm_send(struct t_cm *s, u8 tag)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(s->buf + T_CM_MSG), .length = T_CM_MSG,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	memset(s->buf + T_CM_MSG, tag, T_CM_MSG);
	return ib_post_send(s->id->qp, &wr, NULL);
}

/* Wait for a completion of @op on @s's CQ; its status, or -ETIMEDOUT. */
static int t_cm_poll(struct t_cm *s, enum ib_wc_opcode op)
{
	struct ib_wc wc;
	int ms;

	for (ms = 0; ms < T_CM_WAIT; ms += 20) {
		while (ib_poll_cq(s->cq, 1, &wc) == 1)
			if (wc.opcode == op)
				return wc.status == IB_WC_SUCCESS ? 0 : -EIO;
		msleep(20);
	}
	return -ETIMEDOUT;
}

/* One message from @s to @r: sent, received, intact. */
static bool t_cm_msg(struct t_cm *s, struct t_cm *r, u8 tag)
{
	return !t_cm_send(s, tag) && !t_cm_poll(s, IB_WC_SEND) &&
	       !t_cm_poll(r, IB_WC_RECV) && r->buf[0] == tag &&
	       r->buf[T_CM_MSG - 1] == tag;
}

static struct net *t_net(int pid)
{
	if (!pid)
		return get_net(&init_net);
	return get_net_ns_by_pid(pid);
}

static void t_cm_fini(struct t_cm *s)
{
	if (s->id) {
		if (s->id->qp)
			rdma_destroy_qp(s->id);
		rdma_destroy_id(s->id);
	}
	if (s->listen)
		rdma_destroy_id(s->listen);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_destroy_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	kfree(s->buf);
	s->id = NULL;
	s->listen = NULL;
	s->cq = NULL;
	s->pd = NULL;
	s->buf = NULL;
}

static void t_ipcm(void)
{
	struct t_cm *a = &t_ca, *p = &t_cp;
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct net *anet = NULL, *pnet = NULL;
	struct sockaddr_in *ps, *pd;
	struct sa_path_rec *path;
	union ib_gid sgid, dgid;
	int ret;

	init_completion(&a->step);
	init_completion(&p->step);
	src.sin_addr.s_addr = in_aton(act_ip);
	dst.sin_addr.s_addr = in_aton(pas_ip);
	dst.sin_port = htons(T_CM_PORT);
	anet = t_net(act_ns);
	pnet = t_net(pas_ns);
	ret = IS_ERR(anet) || IS_ERR(pnet) || !*act_ip || !*pas_ip ? -EINVAL : 0;
	if (!ret) {
		p->listen = rdma_create_id(pnet, t_cm_handler, p, RDMA_PS_TCP,
					   IB_QPT_RC);
		if (IS_ERR(p->listen)) {
			ret = PTR_ERR(p->listen);
			p->listen = NULL;
		}
	}
	ret = ret ?: rdma_bind_addr(p->listen, (struct sockaddr *)&dst) ?:
	      rdma_listen(p->listen, 1);
	t_result(!ret, "ipcm_listen", "no netns, or rdma_bind_addr/rdma_listen on pas_ip failed");
	if (ret)
		goto out;
	a->id = rdma_create_id(anet, t_cm_handler, a, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(a->id)) {
		ret = PTR_ERR(a->id);
		a->id = NULL;
	}
	ret = ret ?: rdma_resolve_addr(a->id, (struct sockaddr *)&src,
				       (struct sockaddr *)&dst, T_CM_WAIT);
	ret = ret ?: t_cm_wait(a);
	if (!ret) {
		rdma_addr_get_sgid(&a->id->route.addr.dev_addr, &sgid);
		rdma_addr_get_dgid(&a->id->route.addr.dev_addr, &dgid);
		pr_info("# ipcm act dev=%s port=%u sgid=%pI6 dgid=%pI6\n",
			dev_name(&a->id->device->dev), a->id->port_num,
			sgid.raw, dgid.raw);
	}
	t_result(!ret, "ipcm_addr_resolved", "rdma_resolve_addr (ARP over IPoIB) failed");
	if (ret)
		goto out;
	ret = rdma_resolve_route(a->id, T_CM_WAIT) ?: t_cm_wait(a);
	if (!ret) {
		path = a->id->route.path_rec;
		pr_info("# ipcm path dlid=%u slid=%u sl=%u mtu=%u hop=%u\n",
			be32_to_cpu(sa_path_get_dlid(path)),
			be32_to_cpu(sa_path_get_slid(path)), path->sl,
			path->mtu, path->hop_limit);
	}
	t_result(!ret, "ipcm_route_resolved", "rdma_resolve_route failed");
	if (ret)
		goto out;
	/* The active side's QP on the device the address resolved to. */
	a->id->context = a;
	ret = t_cm_qp(a, a->id) ?: rdma_connect(a->id, &cp);
	ret = ret ?: t_cm_wait(a) ?: t_cm_wait(p);
	t_result(!ret, "ipcm_established", "no ESTABLISHED on both sides");
	if (ret)
		goto out;
	ps = (struct sockaddr_in *)&p->id->route.addr.src_addr;
	pd = (struct sockaddr_in *)&p->id->route.addr.dst_addr;
	pr_info("# ipcm pas dev=%s port=%u src=%pI4 dst=%pI4\n",
		dev_name(&p->id->device->dev), p->id->port_num,
		&ps->sin_addr, &pd->sin_addr);
	t_result(ps->sin_family == AF_INET && pd->sin_family == AF_INET &&
		 ps->sin_addr.s_addr == dst.sin_addr.s_addr &&
		 pd->sin_addr.s_addr == src.sin_addr.s_addr,
		 "ipcm_passive_addrs", "the passive side does not see pas_ip <- act_ip");
	t_result(t_cm_msg(a, p, 0x3c), "ipcm_send_act_to_pas",
		 "the active side's SEND did not arrive intact");
	t_result(t_cm_msg(p, a, 0xc3), "ipcm_send_pas_to_act",
		 "the passive side's SEND did not arrive intact");
	ret = rdma_disconnect(a->id) ?: t_cm_wait(p);
	t_result(!ret, "ipcm_disconnect", "the passive side saw no DISCONNECTED");
out:
	t_cm_fini(a);
	t_cm_fini(p);
	if (!IS_ERR_OR_NULL(anet))
		put_net(anet);
	if (!IS_ERR_OR_NULL(pnet))
		put_net(pnet);
}

static bool t_want(const char *c)
{
	size_t n = strlen(c);
	const char *p = cases;

	while (p && *p) {
		if (!strncmp(p, c, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static int __init t_init(void)
{
	pr_info("KTAP version 1\n");
	ib_sa_register_client(&t_sa_client);
	if (t_want("ud"))
		t_ud();
	if (t_want("sa"))
		t_sa_get();
	if (t_want("mc"))
		t_mc();
	if (t_want("ipcm"))
		t_ipcm();
	ib_sa_unregister_client(&t_sa_client);
	pr_info("1..%d\n", t_num);
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
