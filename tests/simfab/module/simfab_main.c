// SPDX-License-Identifier: GPL-2.0
/*
 * simfab: registers one IB-link-layer CA per host of a simulated subnet and
 * carries UD/GSI packets between their ports, so that ib_mad, ib_sa, ib_cm
 * and rdma_cm run unmodified on a machine without InfiniBand hardware.
 *
 * The topology comes from the "topology" module parameter (syntax in
 * tests/simfab/README.md) and is readable back from debugfs
 * simfab/topology. Test-only: never installed by the packages.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <linux/workqueue.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/ktime.h>
#include <linux/uaccess.h>
#include <asm/unaligned.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>

#include "simfab.h"

static char *topology =
	"subnet prefix=0xfe80000000000000 lmc=1 sm=h1:1;"
	"host h1 ports=1;"
	"host h2 ports=2 mtu=5;"
	"host h3 ports=1 sl=1 mtu=3 rate=3 life=20 pkey2=0x0001";
module_param(topology, charp, 0444);
MODULE_PARM_DESC(topology, "subnet and hosts, see tests/simfab/README.md");

struct sf_fabric sf_fab;
DEFINE_SPINLOCK(sf_lock);

static DEFINE_XARRAY_ALLOC1(sf_qps);	/* UD QP numbers, fabric-wide */
static struct workqueue_struct *sf_wq;
static LIST_HEAD(sf_wire);		/* packets in flight, under sf_lock */
static struct dentry *sf_debugfs;
static bool sf_stopping;

/* ---- verbs objects ---------------------------------------------------- */

struct sf_pd {
	struct ib_pd ibpd;
};

struct sf_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
};

struct sf_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* protects the ring and the arm state */
	struct ib_wc *ring;
	int size, head, count;
	u8 armed;		/* 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP */
	u64 overflows;
};

struct sf_rwqe {
	u64 wr_id;
	int num_sge;
	struct ib_sge sge[SF_MAX_SGE];
};

struct sf_qp {
	struct ib_qp ibqp;
	enum ib_qp_state state;
	u32 port;
	u16 pkey_index;
	u32 qkey;
	struct sf_rwqe *rq;
	int rq_size, rq_head, rq_count;
	u64 rq_empty_drops;
	bool sig_all;
};

static inline struct sf_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sf_dev, ibdev);
}

static inline struct sf_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct sf_cq, ibcq);
}

static inline struct sf_qp *to_sqp(struct ib_qp *qp)
{
	return container_of(qp, struct sf_qp, ibqp);
}

static inline struct sf_ah *to_sah(struct ib_ah *ah)
{
	return container_of(ah, struct sf_ah, ibah);
}

int sf_host_of_port(const struct sf_port *port)
{
	return port->dev->host;
}

static struct sf_host *host_of(struct sf_dev *sdev)
{
	return &sf_fab.hosts[sdev->host];
}

/* ---- topology --------------------------------------------------------- */

static int sf_parse_kv(struct sf_host *h, const char *key, const char *val)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v))
		return -EINVAL;
	if (!strcmp(key, "ports") && v >= 1 && v <= SF_MAX_PORTS)
		h->nports = v;
	else if (!strcmp(key, "sl") && v < 16)
		h->sl = v;
	else if (!strcmp(key, "mtu") && v >= IB_MTU_256 && v <= IB_MTU_4096)
		h->mtu = v;
	else if (!strcmp(key, "rate") &&
		 (v == IB_RATE_10_GBPS || v == IB_RATE_20_GBPS ||
		  v == IB_RATE_40_GBPS || v == IB_RATE_56_GBPS ||
		  v == IB_RATE_100_GBPS))
		h->rate = v;
	else if (!strcmp(key, "life") && v < 64)
		h->life = v;
	else if (!strcmp(key, "pkey2") && v <= 0xffff && (v & 0x7fff))
		h->pkey2 = v;
	else
		return -EINVAL;
	return 0;
}

static int sf_parse_entry(char *e, char **sm)
{
	char *tok, *kind = NULL, *name = NULL;
	struct sf_host *h = NULL;
	int ret = 0;

	while ((tok = strsep(&e, " \t\n")) != NULL) {
		char *val;

		if (!*tok)
			continue;
		if (!kind) {
			kind = tok;
			if (!strcmp(kind, "host")) {
				if (sf_fab.nhosts >= SF_MAX_HOSTS)
					return -E2BIG;
				h = &sf_fab.hosts[sf_fab.nhosts];
				/* Defaults: OpenSM's SL 0, 2048 MTU, 4X QDR,
				 * PacketLifeTime 18 (OpenSM subnet_timeout).
				 */
				*h = (struct sf_host){ .nports = 1, .sl = 0,
					.mtu = IB_MTU_2048,
					.rate = IB_RATE_40_GBPS, .life = 18,
					.pkey2 = 0x8001 };
			} else if (strcmp(kind, "subnet")) {
				return -EINVAL;
			}
			continue;
		}
		if (h && !name) {
			name = tok;
			if (strlen(name) >= SF_NAME_LEN || strchr(name, '='))
				return -EINVAL;
			strscpy(h->name, name, SF_NAME_LEN);
			continue;
		}
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (h) {
			ret = sf_parse_kv(h, tok, val);
		} else if (!strcmp(tok, "prefix")) {
			ret = kstrtou64(val, 0, &sf_fab.prefix);
		} else if (!strcmp(tok, "lmc")) {
			ret = kstrtou8(val, 0, &sf_fab.lmc);
			if (!ret && sf_fab.lmc > 7)
				ret = -EINVAL;
		} else if (!strcmp(tok, "sm")) {
			*sm = val;
		} else {
			ret = -EINVAL;
		}
		if (ret)
			return ret;
	}
	if (h) {
		if (!name)
			return -EINVAL;
		sf_fab.nhosts++;
	}
	return 0;
}

static int sf_parse_topology(void)
{
	char *buf, *p, *e, *sm = NULL;
	int ret = 0, i;

	sf_fab.prefix = 0xfe80000000000000ULL;
	buf = kstrdup(topology, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = buf;
	while ((e = strsep(&p, ";")) != NULL) {
		ret = sf_parse_entry(e, &sm);
		if (ret) {
			pr_err("simfab: bad topology entry near \"%s\"\n", e);
			goto out;
		}
	}
	ret = -EINVAL;
	if (!sf_fab.nhosts) {
		pr_err("simfab: topology has no host\n");
		goto out;
	}
	sf_fab.sm_host = 0;
	sf_fab.sm_port = 1;
	if (sm) {
		char *pn = strchr(sm, ':');
		unsigned int n = 1;

		if (pn) {
			*pn++ = '\0';
			if (kstrtouint(pn, 0, &n))
				goto out;
		}
		for (i = 0; i < sf_fab.nhosts; i++)
			if (!strcmp(sf_fab.hosts[i].name, sm))
				break;
		if (i == sf_fab.nhosts || n < 1 || n > sf_fab.hosts[i].nports) {
			pr_err("simfab: sm=%s:%u names no port\n", sm, n);
			goto out;
		}
		sf_fab.sm_host = i;
		sf_fab.sm_port = n;
	}
	ret = 0;
out:
	kfree(buf);
	return ret;
}

struct sf_port *sf_port_by_lid(u16 lid, u16 *path_bits)
{
	u16 mask = (1 << sf_fab.lmc) - 1;
	int h, p;

	for (h = 0; h < sf_fab.nhosts; h++) {
		struct sf_dev *d = sf_fab.devs[h];

		if (!d)
			continue;
		for (p = 0; p < sf_fab.hosts[h].nports; p++)
			if ((lid & ~mask) == d->port[p].lid) {
				if (path_bits)
					*path_bits = lid & mask;
				return &d->port[p];
			}
	}
	return NULL;
}

struct sf_port *sf_port_by_guid(u64 guid)
{
	int h, p;

	for (h = 0; h < sf_fab.nhosts; h++) {
		struct sf_dev *d = sf_fab.devs[h];

		if (!d)
			continue;
		for (p = 0; p < sf_fab.hosts[h].nports; p++)
			if (d->port[p].guid == guid)
				return &d->port[p];
	}
	return NULL;
}

/* ---- device and port attributes ---------------------------------------- */

static int sf_query_device(struct ib_device *ibdev, struct ib_device_attr *a,
			   struct ib_udata *udata)
{
	struct sf_dev *sdev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->fw_ver = 1;
	a->sys_image_guid = cpu_to_be64(sdev->port[0].guid - 1);
	a->max_mr_size = U64_MAX;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = 0xffffff;
	a->max_qp = 1024;
	a->max_qp_wr = 4096;
	a->max_send_sge = SF_MAX_SGE;
	a->max_recv_sge = SF_MAX_SGE;
	a->max_sge_rd = SF_MAX_SGE;
	a->max_cq = 1024;
	a->max_cqe = 8192;
	a->max_mr = 1024;
	a->max_pd = 1024;
	a->max_ah = 4096;
	a->max_pkeys = SF_PKEYS;
	return 0;
}

static enum ib_port_speed sf_speed(u8 rate)
{
	/* All links are 4X; the rate picks the lane speed (IBA 7.7). */
	switch (rate) {
	case IB_RATE_10_GBPS: return IB_SPEED_SDR;
	case IB_RATE_20_GBPS: return IB_SPEED_DDR;
	case IB_RATE_56_GBPS: return IB_SPEED_FDR;
	case IB_RATE_100_GBPS: return IB_SPEED_EDR;
	default: return IB_SPEED_QDR;
	}
}

static int sf_query_port(struct ib_device *ibdev, u32 port_num,
			 struct ib_port_attr *a)
{
	struct sf_dev *sdev = to_sdev(ibdev);
	struct sf_host *h = host_of(sdev);
	struct sf_port *port = &sdev->port[port_num - 1];

	/* ib_core has zeroed *a. */
	a->state = port->down ? IB_PORT_DOWN : IB_PORT_ACTIVE;
	a->phys_state = port->down ? IB_PORT_PHYS_STATE_DISABLED :
				     IB_PORT_PHYS_STATE_LINK_UP;
	a->max_mtu = IB_MTU_4096;
	a->active_mtu = h->mtu;
	a->gid_tbl_len = 1;
	a->pkey_tbl_len = SF_PKEYS;
	a->port_cap_flags = IB_PORT_CM_SUP;
	if (sdev->host == sf_fab.sm_host && port_num == sf_fab.sm_port)
		a->port_cap_flags |= IB_PORT_SM;
	a->max_msg_sz = SF_MAX_PAYLOAD;
	a->lid = port->lid;
	a->sm_lid = sf_fab.sm_lid;
	a->lmc = sf_fab.lmc;
	a->sm_sl = 0;
	a->subnet_timeout = 18;
	a->max_vl_num = 4;
	a->active_width = IB_WIDTH_4X;
	a->active_speed = sf_speed(h->rate);
	return 0;
}

static int sf_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				 struct ib_port_immutable *im)
{
	/* No SMI: no QP0, the module is the SM (see README). */
	im->core_cap_flags = RDMA_CORE_PORT_IBA_IB & ~RDMA_CORE_CAP_IB_SMI;
	im->pkey_tbl_len = SF_PKEYS;
	im->gid_tbl_len = 1;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int sf_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			union ib_gid *gid)
{
	struct sf_dev *sdev = to_sdev(ibdev);

	if (index)
		return -EINVAL;
	/* GID index 0 = subnet prefix + port GUID (IBA 4.1.1). */
	gid->global.subnet_prefix = cpu_to_be64(sf_fab.prefix);
	gid->global.interface_id = cpu_to_be64(sdev->port[port_num - 1].guid);
	return 0;
}

static int sf_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			 u16 *pkey)
{
	if (index >= SF_PKEYS)
		return -EINVAL;
	*pkey = to_sdev(ibdev)->port[port_num - 1].pkeys[index];
	return 0;
}

static int sf_modify_port(struct ib_device *ibdev, u32 port_num, int mask,
			  struct ib_port_modify *props)
{
	/* ib_cm sets IB_PORT_CM_SUP here; the port already advertises it. */
	return 0;
}

static void sf_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "1.0.0");
}

/* ---- PD, MR, AH --------------------------------------------------------- */

static int sf_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int sf_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static struct ib_mr *sf_get_dma_mr(struct ib_pd *pd, int acc)
{
	struct ib_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* Addresses are kernel virtual (no dma_device): any lkey works. */
	return mr;
}

static struct ib_mr *sf_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				    u64 virt, int acc, struct ib_udata *udata)
{
	/* Present only so ib_core counts us as a kernel verbs provider. */
	return ERR_PTR(-EOPNOTSUPP);
}

static int sf_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	kfree(mr);
	return 0;
}

static int sf_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			struct ib_udata *udata)
{
	/* May run in atomic context (no RDMA_CREATE_AH_SLEEPABLE). */
	to_sah(ibah)->attr = *init->ah_attr;
	return 0;
}

static int sf_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	/* ib_mad matches responses with rdma_query_ah (mad.c). */
	*attr = to_sah(ibah)->attr;
	return 0;
}

static int sf_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

/* ---- CQ ----------------------------------------------------------------- */

static int sf_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct ib_udata *udata)
{
	struct sf_cq *cq = to_scq(ibcq);

	if (udata || attr->flags || attr->cqe < 1 || attr->cqe > 8192)
		return -EINVAL;
	cq->ring = kcalloc(attr->cqe, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

static int sf_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	/* No packet in flight may still complete on this CQ. */
	flush_workqueue(sf_wq);
	kfree(to_scq(ibcq)->ring);
	return 0;
}

/* Add a completion; call the handler if armed (outside the CQ lock). */
static void sf_cq_add(struct sf_cq *cq, const struct ib_wc *wc)
{
	unsigned long flags;
	bool fire = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count == cq->size) {
		cq->overflows++;
		spin_unlock_irqrestore(&cq->lock, flags);
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->size] = *wc;
	cq->count++;
	if (cq->armed == IB_CQ_NEXT_COMP ||
	    (cq->armed == IB_CQ_SOLICITED && wc->wc_flags & IB_WC_WITH_IMM)) {
		cq->armed = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

static int sf_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct sf_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < n && cq->count; i++) {
		wc[i] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

static int sf_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags fl)
{
	struct sf_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->armed != IB_CQ_NEXT_COMP)
		cq->armed = fl & IB_CQ_SOLICITED_MASK;
	/* ib_core's re-arm wants > 0 when entries remain (cq.c). */
	if ((fl & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, flags);
	return ret;
}

/* ---- QP ----------------------------------------------------------------- */

static int sf_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			struct ib_udata *udata)
{
	struct sf_dev *sdev = to_sdev(ibqp->device);
	struct sf_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	u32 id;
	int ret;

	if (udata)
		return -EOPNOTSUPP;
	if (init->qp_type != IB_QPT_GSI && init->qp_type != IB_QPT_UD)
		return -EOPNOTSUPP;
	if (init->srq || init->cap.max_recv_sge > SF_MAX_SGE ||
	    init->cap.max_send_sge > SF_MAX_SGE ||
	    init->cap.max_recv_wr > 4096 || init->cap.max_send_wr > 4096)
		return -EINVAL;
	qp->rq_size = max_t(u32, init->cap.max_recv_wr, 1);
	qp->rq = kcalloc(qp->rq_size, sizeof(*qp->rq), GFP_KERNEL);
	if (!qp->rq)
		return -ENOMEM;
	qp->state = IB_QPS_RESET;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	if (init->qp_type == IB_QPT_GSI) {
		/* IBA 3.9.3: the GSI QP is QP1 on every port. */
		if (init->port_num < 1 || init->port_num > host_of(sdev)->nports ||
		    sdev->port[init->port_num - 1].gsi) {
			kfree(qp->rq);
			return -EINVAL;
		}
		qp->port = init->port_num;
		ibqp->qp_num = 1;
		spin_lock_irqsave(&sf_lock, flags);
		sdev->port[qp->port - 1].gsi = qp;
		spin_unlock_irqrestore(&sf_lock, flags);
		return 0;
	}
	ret = xa_alloc_irq(&sf_qps, &id, qp, XA_LIMIT(2, 0xffffff), GFP_KERNEL);
	if (ret) {
		kfree(qp->rq);
		return ret;
	}
	ibqp->qp_num = id;
	return 0;
}

static int sf_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			struct ib_udata *udata)
{
	struct sf_qp *qp = to_sqp(ibqp);
	unsigned long flags;

	if (mask & IB_QP_PORT &&
	    (attr->port_num < 1 || attr->port_num > ibqp->device->phys_port_cnt))
		return -EINVAL;
	if (mask & IB_QP_PKEY_INDEX && attr->pkey_index >= SF_PKEYS)
		return -EINVAL;
	spin_lock_irqsave(&sf_lock, flags);
	if (mask & IB_QP_PORT && ibqp->qp_type != IB_QPT_GSI)
		qp->port = attr->port_num;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_STATE) {
		qp->state = attr->qp_state;
		if (qp->state == IB_QPS_RESET)
			qp->rq_count = 0;
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	return 0;
}

static int sf_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		       struct ib_qp_init_attr *init)
{
	struct sf_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->port_num = qp->port;
	attr->pkey_index = qp->pkey_index;
	attr->qkey = qp->qkey;
	attr->path_mtu = host_of(to_sdev(ibqp->device))->mtu;
	init->qp_type = ibqp->qp_type;
	init->port_num = qp->port;
	return 0;
}

/* Called with sf_lock held (interrupts off): take the xarray's own lock
 * with irqsave so that leaving it does not re-enable interrupts.
 */
static void sf_qpn_erase(u32 qpn)
{
	unsigned long flags;

	xa_lock_irqsave(&sf_qps, flags);
	__xa_erase(&sf_qps, qpn);
	xa_unlock_irqrestore(&sf_qps, flags);
}

static int sf_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sf_dev *sdev = to_sdev(ibqp->device);
	struct sf_qp *qp = to_sqp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&sf_lock, flags);
	if (ibqp->qp_type == IB_QPT_GSI)
		sdev->port[qp->port - 1].gsi = NULL;
	else
		sf_qpn_erase(ibqp->qp_num);
	qp->state = IB_QPS_ERR;
	spin_unlock_irqrestore(&sf_lock, flags);
	/* Packets from this QP hold a pointer to it until sent. */
	flush_workqueue(sf_wq);
	kfree(qp->rq);
	return 0;
}

static int sf_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad)
{
	struct sf_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&sf_lock, flags);
	for (; wr; wr = wr->next) {
		struct sf_rwqe *w;

		if (wr->num_sge > SF_MAX_SGE || qp->rq_count == qp->rq_size ||
		    qp->state == IB_QPS_RESET) {
			ret = -ENOMEM;
			*bad = wr;
			break;
		}
		w = &qp->rq[(qp->rq_head + qp->rq_count) % qp->rq_size];
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
		qp->rq_count++;
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	return ret;
}

struct sf_pkt *sf_pkt_alloc(u32 len, gfp_t gfp)
{
	struct sf_pkt *pkt = kzalloc(struct_size(pkt, data, len), gfp);

	if (pkt)
		pkt->len = len;
	return pkt;
}

static void sf_build_grh(struct sf_pkt *pkt, struct sf_port *port,
			 const struct ib_global_route *g)
{
	struct ib_grh *grh = (struct ib_grh *)pkt->grh;

	/* IBA 8.3: IPVer 6, TClass, FlowLabel; PayLen counts BTH, DETH,
	 * payload and ICRC; NxtHdr 0x1B (IBA transport).
	 */
	grh->version_tclass_flow = cpu_to_be32(6 << 28 |
					       (u32)g->traffic_class << 20 |
					       (g->flow_label & 0xfffff));
	grh->paylen = cpu_to_be16(12 + 8 + pkt->len + 4);
	grh->next_hdr = 0x1b;
	grh->hop_limit = g->hop_limit;
	grh->sgid.global.subnet_prefix = cpu_to_be64(sf_fab.prefix);
	grh->sgid.global.interface_id = cpu_to_be64(port->guid);
	grh->dgid = g->dgid;
	pkt->has_grh = true;
}

static void sf_queue(struct sf_pkt *pkt)
{
	unsigned long flags;

	spin_lock_irqsave(&sf_lock, flags);
	list_add_tail(&pkt->list, &sf_wire);
	spin_unlock_irqrestore(&sf_lock, flags);
}

static struct work_struct sf_work;

static int sf_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad)
{
	struct sf_dev *sdev = to_sdev(ibqp->device);
	struct sf_qp *qp = to_sqp(ibqp);
	int queued = 0, ret = 0;

	for (; wr; wr = wr->next) {
		const struct ib_ud_wr *ud = ud_wr(wr);
		struct rdma_ah_attr *ah;
		struct sf_port *port;
		struct sf_pkt *pkt;
		u32 len = 0, off = 0;
		int i;

		if (qp->state != IB_QPS_RTS || wr->num_sge > SF_MAX_SGE ||
		    (wr->opcode != IB_WR_SEND &&
		     wr->opcode != IB_WR_SEND_WITH_IMM) || !ud->ah) {
			ret = -EINVAL;
			break;
		}
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > SF_MAX_PAYLOAD) {
			ret = -EINVAL;
			break;
		}
		pkt = sf_pkt_alloc(len, GFP_ATOMIC);
		if (!pkt) {
			ret = -ENOMEM;
			break;
		}
		/* No dma_device: SGE addresses are kernel virtual. */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(pkt->data + off,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		ah = &to_sah(ud->ah)->attr;
		port = &sdev->port[(qp->port ? qp->port : ah->port_num) - 1];
		pkt->src = port;
		pkt->sqp = qp;
		pkt->wr_id = wr->wr_id;
		pkt->signaled = (wr->send_flags & IB_SEND_SIGNALED) ||
				qp->sig_all;
		pkt->slid = port->lid | rdma_ah_get_path_bits(ah);
		pkt->dlid = rdma_ah_get_dlid(ah);
		pkt->sl = rdma_ah_get_sl(ah);
		if (rdma_ah_get_ah_flags(ah) & IB_AH_GRH)
			sf_build_grh(pkt, port, rdma_ah_read_grh(ah));
		pkt->dqpn = ud->remote_qpn;
		pkt->sqpn = ibqp->qp_num;
		/* IBA 10.2.5: a WR Q_Key with the high bit set means "use
		 * the QP's Q_Key". That holds for QP1 too, whose Q_Key
		 * ib_mad sets to 0x80010000: every MAD it sends carries
		 * IB_QP_SET_QKEY (0x80000000), as mlx4/rxe resolve it.
		 */
		pkt->qkey = ud->remote_qkey & 0x80000000 ?
			    qp->qkey : ud->remote_qkey;
		/* GSI sends name their P_Key per WR (IBA 13.5.3.2). */
		pkt->pkey = port->pkeys[ibqp->qp_type == IB_QPT_GSI ?
				ud->pkey_index % SF_PKEYS : qp->pkey_index];
		if (wr->opcode == IB_WR_SEND_WITH_IMM) {
			pkt->has_imm = true;
			pkt->imm = wr->ex.imm_data;
		}
		if (pkt->dqpn == 1)
			sf_count(port, 0, pkt->data, pkt->len);
		sf_queue(pkt);
		queued++;
	}
	if (ret)
		*bad = wr;
	if (queued)
		queue_work(sf_wq, &sf_work);
	return ret;
}

/* ---- the wire ----------------------------------------------------------- */

/* IBA 10.9.3: P_Keys match when the low 15 bits agree and at least one of
 * the two is a full member.
 */
static bool sf_pkey_match(u16 a, u16 b)
{
	return (a & 0x7fff) == (b & 0x7fff) && ((a | b) & 0x8000);
}

static void sf_send_done(struct sf_pkt *pkt)
{
	struct ib_wc wc = {};

	if (!pkt->sqp || !pkt->signaled)
		return;
	wc.wr_id = pkt->wr_id;
	wc.status = IB_WC_SUCCESS;
	wc.opcode = IB_WC_SEND;
	wc.qp = &pkt->sqp->ibqp;
	wc.port_num = pkt->src->num;
	sf_cq_add(to_scq(pkt->sqp->ibqp.send_cq), &wc);
}

/* Copy into the receive WQE's scatter list; false if it does not fit. */
static bool sf_scatter(struct sf_rwqe *w, const u8 *src, u32 len, u32 skip)
{
	int i;

	for (i = 0; i < w->num_sge && (len || skip); i++) {
		u32 n = w->sge[i].length, o = 0;

		if (skip) {
			o = min(skip, n);
			skip -= o;
			n -= o;
		}
		n = min(n, len);
		memcpy((void *)(uintptr_t)(w->sge[i].addr + o), src, n);
		src += n;
		len -= n;
	}
	return !len && !skip;
}

/*
 * Is this MAD for the SA behind the SM port rather than for the SM host's
 * own ib_mad? Requests of the SA class are, and so are RMPP ACK/STOP/ABORT
 * (their method is GetTableResp); responses, including the SA's own
 * answers to a requester on the SM host, are the host's.
 */
static bool sf_to_sa(const struct sf_pkt *pkt)
{
	const u8 *m = pkt->data;

	if (pkt->len < 36 || m[1] != IB_MGMT_CLASS_SUBN_ADM)
		return false;
	if (!(m[3] & IB_MGMT_METHOD_RESP))
		return true;
	return (m[26] & IB_MGMT_RMPP_FLAG_ACTIVE) &&
	       m[25] != IB_MGMT_RMPP_TYPE_DATA;
}

/* Returns the capture verdict, or NULL when already captured. */
static const char *sf_rx(struct sf_pkt *pkt)
{
	struct sf_port *dst;
	struct sf_qp *qp;
	struct sf_rwqe w;
	struct ib_wc wc = {};
	unsigned long flags;
	u16 bits;
	int pi;

	dst = sf_port_by_lid(pkt->dlid, &bits);
	if (!dst)
		return "drop-no-dlid";
	/* A link that is down carries nothing (IBA 7.2: only Active ports
	 * forward data packets).
	 */
	if (dst->down || (pkt->src && pkt->src->down))
		return "drop-port-down";
	if (pkt->dlid == sf_fab.sm_lid && pkt->dqpn == 1 && sf_to_sa(pkt)) {
		bool ctl = (pkt->data[26] & IB_MGMT_RMPP_FLAG_ACTIVE) &&
			   pkt->data[25] != IB_MGMT_RMPP_TYPE_DATA;

		/* Captured before the SA's answer, which it delivers now. */
		sf_count(dst, 1, pkt->data, pkt->len);
		sf_capture(pkt, ctl ? "sa-rmpp-ctl" : "sa");
		sf_sa_recv(pkt);
		return NULL;
	}
	/* IBA 10.9.3: the P_Key must be in the receiving port's table. */
	for (pi = 0; pi < SF_PKEYS; pi++)
		if (sf_pkey_match(pkt->pkey, dst->pkeys[pi]))
			break;
	if (pi == SF_PKEYS)
		return "drop-pkey";

	spin_lock_irqsave(&sf_lock, flags);
	if (pkt->dqpn == 1) {
		qp = dst->gsi;
		/* IBA 13.5.3.1: QP1 takes only the well-known Q_Key. */
		if (qp && pkt->qkey != IB_QP1_QKEY) {
			spin_unlock_irqrestore(&sf_lock, flags);
			return "drop-qkey";
		}
	} else {
		qp = xa_load(&sf_qps, pkt->dqpn);
		if (qp && (to_sdev(qp->ibqp.device) != dst->dev ||
			   qp->port != dst->num))
			qp = NULL;
		if (qp && (pkt->qkey != qp->qkey ||
			   !sf_pkey_match(pkt->pkey, dst->pkeys[qp->pkey_index]))) {
			spin_unlock_irqrestore(&sf_lock, flags);
			return "drop-qkey-pkey";
		}
	}
	if (!qp || qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQD) {
		spin_unlock_irqrestore(&sf_lock, flags);
		return "drop-no-qp";
	}
	if (!qp->rq_count) {
		/* IBA 9.8.3.1 / 11.4.1.1: UD with no WQE: silently dropped. */
		qp->rq_empty_drops++;
		spin_unlock_irqrestore(&sf_lock, flags);
		return "drop-no-wqe";
	}
	w = qp->rq[qp->rq_head];
	qp->rq_head = (qp->rq_head + 1) % qp->rq_size;
	qp->rq_count--;

	/* IBA 11.4.1.1: the first 40 bytes of a UD receive buffer hold the
	 * GRH when present, and are counted in byte_len in any case.
	 */
	wc.status = IB_WC_SUCCESS;
	if ((pkt->has_grh && !sf_scatter(&w, pkt->grh, SF_GRH_LEN, 0)) ||
	    !sf_scatter(&w, pkt->data, pkt->len, SF_GRH_LEN))
		wc.status = IB_WC_LOC_LEN_ERR;
	wc.wr_id = w.wr_id;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = SF_GRH_LEN + pkt->len;
	wc.qp = &qp->ibqp;
	wc.src_qp = pkt->sqpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	wc.dlid_path_bits = bits;
	wc.pkey_index = pkt->dqpn == 1 ? pi : qp->pkey_index;
	wc.port_num = dst->num;
	if (pkt->has_grh)
		wc.wc_flags |= IB_WC_GRH;
	if (pkt->has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	/* The destination QP cannot go away while the worker runs:
	 * destroy_qp flushes the workqueue after unlinking it.
	 */
	spin_unlock_irqrestore(&sf_lock, flags);
	if (pkt->dqpn == 1)
		sf_count(dst, 1, pkt->data, pkt->len);
	sf_cq_add(to_scq(qp->ibqp.recv_cq), &wc);
	return wc.status == IB_WC_SUCCESS ? "delivered" : "len-error";
}

/* Also used by the SA to put its answers on the wire. */
void sf_deliver(struct sf_pkt *pkt)
{
	const char *verdict = sf_stopping ? "drop-unload" : sf_rx(pkt);

	if (verdict && pkt->dqpn == 1)
		sf_capture(pkt, verdict);
}

static void sf_worker(struct work_struct *work)
{
	struct sf_pkt *pkt;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&sf_lock, flags);
		pkt = list_first_entry_or_null(&sf_wire, struct sf_pkt, list);
		if (pkt)
			list_del(&pkt->list);
		spin_unlock_irqrestore(&sf_lock, flags);
		if (!pkt)
			break;
		sf_deliver(pkt);
		sf_send_done(pkt);
		kfree(pkt);
		cond_resched();
	}
}

/* ---- counters and capture ------------------------------------------------ */

void sf_count(struct sf_port *port, int dir, const u8 *mad, u32 len)
{
	u16 attr;
	unsigned long flags;
	int i;

	if (len < 24)
		return;
	attr = get_unaligned_be16(mad + 16);
	spin_lock_irqsave(&sf_lock, flags);
	for (i = 0; i < SF_NCOUNTERS; i++) {
		struct sf_counter *c = &port->ctr[i];

		if (!c->count) {
			*c = (struct sf_counter){ dir, mad[1], mad[3], attr, 0 };
		} else if (c->dir != dir || c->mgmt_class != mad[1] ||
			   c->method != mad[3] || c->attr_id != attr) {
			continue;
		}
		c->count++;
		break;
	}
	spin_unlock_irqrestore(&sf_lock, flags);
}

struct sf_cap {
	u64 seq;
	u64 ns;
	u16 slid, dlid;
	u8 sl;
	u8 has_grh;
	u8 hop_limit;
	u32 sqpn, dqpn, qkey;
	u16 pkey;
	union ib_gid sgid, dgid;
	u8 mad[IB_MGMT_MAD_SIZE];	/* the whole MAD (GSI MADs are 256) */
	u32 len;
	const char *verdict;
};

static struct sf_cap sf_ring[SF_CAPTURE_LEN];
static u64 sf_cap_seq;

void sf_capture(const struct sf_pkt *pkt, const char *verdict)
{
	struct sf_cap *c;
	unsigned long flags;

	spin_lock_irqsave(&sf_lock, flags);
	c = &sf_ring[sf_cap_seq % SF_CAPTURE_LEN];
	memset(c, 0, sizeof(*c));
	c->seq = ++sf_cap_seq;
	c->ns = ktime_get_ns();
	c->slid = pkt->slid;
	c->dlid = pkt->dlid;
	c->sl = pkt->sl;
	c->sqpn = pkt->sqpn;
	c->dqpn = pkt->dqpn;
	c->qkey = pkt->qkey;
	c->pkey = pkt->pkey;
	c->len = pkt->len;
	c->verdict = verdict;
	if (pkt->has_grh) {
		const struct ib_grh *g = (const struct ib_grh *)pkt->grh;

		c->has_grh = 1;
		c->hop_limit = g->hop_limit;
		c->sgid = g->sgid;
		c->dgid = g->dgid;
	}
	memcpy(c->mad, pkt->data, min_t(u32, pkt->len, sizeof(c->mad)));
	spin_unlock_irqrestore(&sf_lock, flags);
}

static int sf_capture_show(struct seq_file *m, void *v)
{
	u64 first, s;
	unsigned long flags;
	struct sf_cap *c;
	int i, n;

	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	spin_lock_irqsave(&sf_lock, flags);
	first = sf_cap_seq > SF_CAPTURE_LEN ? sf_cap_seq - SF_CAPTURE_LEN : 0;
	s = sf_cap_seq;
	spin_unlock_irqrestore(&sf_lock, flags);
	for (; first < s; first++) {
		spin_lock_irqsave(&sf_lock, flags);
		*c = sf_ring[first % SF_CAPTURE_LEN];
		spin_unlock_irqrestore(&sf_lock, flags);
		if (c->seq != first + 1)
			continue;
		seq_printf(m, "seq=%llu ns=%llu slid=%u dlid=%u sl=%u sqp=%u dqp=%u qkey=0x%08x pkey=0x%04x len=%u",
			   c->seq, c->ns, c->slid, c->dlid, c->sl, c->sqpn,
			   c->dqpn, c->qkey, c->pkey, c->len);
		if (c->has_grh)
			seq_printf(m, " grh=1 hop=%u sgid=%pI6 dgid=%pI6",
				   c->hop_limit, c->sgid.raw, c->dgid.raw);
		else
			seq_puts(m, " grh=0");
		seq_printf(m, " class=0x%02x cv=%u method=0x%02x status=0x%04x tid=0x%016llx attr=0x%04x attrmod=0x%08x verdict=%s mad=",
			   c->mad[1], c->mad[2], c->mad[3],
			   get_unaligned_be16(c->mad + 4),
			   get_unaligned_be64(c->mad + 8),
			   get_unaligned_be16(c->mad + 16),
			   get_unaligned_be32(c->mad + 20), c->verdict);
		/* The whole MAD in hex; %ph prints at most 64 bytes a time. */
		n = min_t(u32, c->len, sizeof(c->mad));
		for (i = 0; i < n; i += 64)
			seq_printf(m, "%*phN", min(n - i, 64), c->mad + i);
		seq_putc(m, '\n');
	}
	kfree(c);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_capture);

static int sf_counters_show(struct seq_file *m, void *v)
{
	int h, p, i;

	for (h = 0; h < sf_fab.nhosts; h++) {
		struct sf_dev *d = sf_fab.devs[h];

		for (p = 0; d && p < sf_fab.hosts[h].nports; p++) {
			for (i = 0; i < SF_NCOUNTERS; i++) {
				struct sf_counter c;
				unsigned long flags;

				spin_lock_irqsave(&sf_lock, flags);
				c = d->port[p].ctr[i];
				spin_unlock_irqrestore(&sf_lock, flags);
				if (!c.count)
					break;
				seq_printf(m, "port=%s/%d dir=%s class=0x%02x method=0x%02x attr=0x%04x count=%llu\n",
					   sf_fab.hosts[h].name, p + 1,
					   c.dir ? "rx" : "tx", c.mgmt_class,
					   c.method, c.attr_id, c.count);
			}
		}
	}
	seq_printf(m, "sa requests=%llu answered=%llu dropped=%llu rmpp_acks=%llu\n",
		   sf_sa_count(0), sf_sa_count(1), sf_sa_count(2),
		   sf_sa_count(3));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_counters);

static int sf_topology_show(struct seq_file *m, void *v)
{
	int h, p;

	seq_printf(m, "subnet prefix=0x%016llx lmc=%u sm=%s:%d sm_lid=%u\n",
		   sf_fab.prefix, sf_fab.lmc, sf_fab.hosts[sf_fab.sm_host].name,
		   sf_fab.sm_port, sf_fab.sm_lid);
	for (h = 0; h < sf_fab.nhosts; h++) {
		struct sf_host *hh = &sf_fab.hosts[h];
		struct sf_dev *d = sf_fab.devs[h];

		seq_printf(m, "host %s ports=%d sl=%u mtu=%u rate=%u life=%u pkey2=0x%04x dev=%s\n",
			   hh->name, hh->nports, hh->sl, hh->mtu, hh->rate,
			   hh->life, hh->pkey2, d ? dev_name(&d->ibdev.dev) : "-");
		for (p = 0; d && p < hh->nports; p++)
			seq_printf(m, "port %s/%d guid=0x%016llx lid=%u lmc=%u gid=%016llx:%016llx pkeys=0x%04x,0x%04x state=%s\n",
				   hh->name, p + 1, d->port[p].guid,
				   d->port[p].lid, sf_fab.lmc, sf_fab.prefix,
				   d->port[p].guid, d->port[p].pkeys[0],
				   d->port[p].pkeys[1],
				   d->port[p].down ? "down" : "active");
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_topology);

/* ---- control: port events, as an SM's actions would cause them ------------ */

static void sf_port_event(struct sf_dev *d, u32 port, enum ib_event_type t);

static struct sf_port *sf_port_by_name(const char *hp)
{
	const char *slash = strchr(hp, '/');
	unsigned int pn;
	int h;

	if (!slash || kstrtouint(slash + 1, 0, &pn))
		return NULL;
	for (h = 0; h < sf_fab.nhosts; h++)
		if (strlen(sf_fab.hosts[h].name) == slash - hp &&
		    !strncmp(sf_fab.hosts[h].name, hp, slash - hp) &&
		    pn >= 1 && pn <= sf_fab.hosts[h].nports && sf_fab.devs[h])
			return &sf_fab.devs[h]->port[pn - 1];
	return NULL;
}

/*
 * Commands (one per write): "down H/P", "up H/P", "lid H/P LID",
 * "pkey H/P INDEX PKEY", "sm H/P", "clear" (the capture ring). Each raises
 * the event a real HCA raises when the SM changes that PortInfo field or
 * P_Key table (IBA 11.6.3: PORT_ERR/PORT_ACTIVE, LID_CHANGE, PKEY_CHANGE,
 * SM_CHANGE).
 */
static int sf_ctl_cmd(char *buf)
{
	char *argv[4] = {}, *p = strim(buf);
	struct sf_port *port = NULL;
	unsigned long flags;
	unsigned int v = 0, w = 0;
	int argc = 0, h, i;

	while (p && argc < 4) {
		argv[argc] = strsep(&p, " \t");
		if (*argv[argc])
			argc++;
	}
	if (argc == 1 && !strcmp(argv[0], "clear")) {
		spin_lock_irqsave(&sf_lock, flags);
		sf_cap_seq = 0;
		memset(sf_ring, 0, sizeof(sf_ring));
		spin_unlock_irqrestore(&sf_lock, flags);
		return 0;
	}
	if (argc < 2)
		return -EINVAL;
	port = sf_port_by_name(argv[1]);
	if (!port)
		return -ENODEV;
	if ((argc > 2 && kstrtouint(argv[2], 0, &v)) ||
	    (argc > 3 && kstrtouint(argv[3], 0, &w)))
		return -EINVAL;
	if (!strcmp(argv[0], "down") && argc == 2) {
		port->down = true;
		sf_port_event(port->dev, port->num, IB_EVENT_PORT_ERR);
	} else if (!strcmp(argv[0], "up") && argc == 2) {
		port->down = false;
		sf_port_event(port->dev, port->num, IB_EVENT_PORT_ACTIVE);
	} else if (!strcmp(argv[0], "lid") && argc == 3) {
		/* Base LIDs stay aligned to 2^LMC (IBA 7.11.1). */
		if (!v || v >= 0xc000 || v & ((1 << sf_fab.lmc) - 1) ||
		    sf_port_by_lid(v, NULL))
			return -EINVAL;
		spin_lock_irqsave(&sf_lock, flags);
		if (port->lid == sf_fab.sm_lid)
			sf_fab.sm_lid = v;
		port->lid = v;
		spin_unlock_irqrestore(&sf_lock, flags);
		sf_port_event(port->dev, port->num, IB_EVENT_LID_CHANGE);
	} else if (!strcmp(argv[0], "pkey") && argc == 4) {
		if (v >= SF_PKEYS || w > 0xffff || !(w & 0x7fff))
			return -EINVAL;
		port->pkeys[v] = w;
		sf_port_event(port->dev, port->num, IB_EVENT_PKEY_CHANGE);
	} else if (!strcmp(argv[0], "sm") && argc == 2) {
		sf_fab.sm_host = port->dev->host;
		sf_fab.sm_port = port->num;
		sf_fab.sm_lid = port->lid;
		for (h = 0; h < sf_fab.nhosts; h++)
			for (i = 1; i <= sf_fab.hosts[h].nports; i++)
				sf_port_event(sf_fab.devs[h], i,
					      IB_EVENT_SM_CHANGE);
	} else {
		return -EINVAL;
	}
	return 0;
}

static ssize_t sf_ctl_write(struct file *f, const char __user *ubuf,
			    size_t len, loff_t *pos)
{
	char buf[64];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	ret = sf_ctl_cmd(buf);
	return ret ? ret : len;
}

static const struct file_operations sf_ctl_fops = {
	.owner = THIS_MODULE,
	.write = sf_ctl_write,
	.llseek = noop_llseek,
};

/* ---- registration ------------------------------------------------------- */

static const struct ib_device_ops sf_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,

	.alloc_pd = sf_alloc_pd,
	.create_ah = sf_create_ah,
	.create_cq = sf_create_cq,
	.create_qp = sf_create_qp,
	.dealloc_pd = sf_dealloc_pd,
	.dereg_mr = sf_dereg_mr,
	.destroy_ah = sf_destroy_ah,
	.destroy_cq = sf_destroy_cq,
	.destroy_qp = sf_destroy_qp,
	.get_dev_fw_str = sf_get_dev_fw_str,
	.get_dma_mr = sf_get_dma_mr,
	.get_port_immutable = sf_get_port_immutable,
	.modify_port = sf_modify_port,
	.modify_qp = sf_modify_qp,
	.poll_cq = sf_poll_cq,
	.post_recv = sf_post_recv,
	.post_send = sf_post_send,
	.query_ah = sf_query_ah,
	.query_device = sf_query_device,
	.query_gid = sf_query_gid,
	.query_pkey = sf_query_pkey,
	.query_port = sf_query_port,
	.query_qp = sf_query_qp,
	.reg_user_mr = sf_reg_user_mr,
	.req_notify_cq = sf_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sf_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sf_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, sf_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sf_qp, ibqp),
};

static void sf_port_event(struct sf_dev *d, u32 port, enum ib_event_type t)
{
	struct ib_event ev = {
		.device = &d->ibdev,
		.event = t,
		.element.port_num = port,
	};

	ib_dispatch_event(&ev);
}

static int sf_add_dev(int h)
{
	struct sf_host *hh = &sf_fab.hosts[h];
	struct sf_dev *d;
	static int next_lid;
	int p;

	d = ib_alloc_device(sf_dev, ibdev);
	if (!d)
		return -ENOMEM;
	d->host = h;
	for (p = 0; p < hh->nports; p++) {
		struct sf_port *port = &d->port[p];

		port->dev = d;
		port->num = p + 1;
		/* Locally administered GUIDs: "SF", host, port. */
		port->guid = 0x5346000000000000ULL | (u64)(h + 1) << 8 | (p + 1);
		/* IBA 7.11.1: base LIDs are multiples of 2^LMC, as OpenSM
		 * assigns them; LID 0 is reserved.
		 */
		next_lid++;
		port->lid = next_lid << sf_fab.lmc;
		port->pkeys[0] = IB_DEFAULT_PKEY_FULL;
		port->pkeys[1] = hh->pkey2;
		if (h == sf_fab.sm_host && p + 1 == sf_fab.sm_port)
			sf_fab.sm_lid = port->lid;
	}
	d->ibdev.node_type = RDMA_NODE_IB_CA;
	d->ibdev.phys_port_cnt = hh->nports;
	d->ibdev.num_comp_vectors = 1;
	d->ibdev.node_guid = cpu_to_be64(0x5346000000000000ULL | (u64)(h + 1) << 8);
	snprintf(d->ibdev.node_desc, sizeof(d->ibdev.node_desc),
		 "%s simfab", hh->name);
	ib_set_device_ops(&d->ibdev, &sf_dev_ops);
	sf_fab.devs[h] = d;
	return 0;
}

static void sf_remove_all(void)
{
	int h;

	sf_stopping = true;
	for (h = sf_fab.nhosts - 1; h >= 0; h--) {
		struct sf_dev *d = sf_fab.devs[h];

		if (!d)
			continue;
		if (d->registered)
			ib_unregister_device(&d->ibdev);
		flush_workqueue(sf_wq);
		sf_fab.devs[h] = NULL;
		ib_dealloc_device(&d->ibdev);
	}
}

static int __init sf_init(void)
{
	int h, p, ret;

	ret = sf_parse_topology();
	if (ret)
		return ret;
	sf_wq = alloc_ordered_workqueue("simfab", 0);
	if (!sf_wq)
		return -ENOMEM;
	INIT_WORK(&sf_work, sf_worker);
	/* LIDs first: every port must know the SM LID before ib_sa asks. */
	for (h = 0; h < sf_fab.nhosts; h++) {
		ret = sf_add_dev(h);
		if (ret)
			goto fail;
	}
	for (h = 0; h < sf_fab.nhosts; h++) {
		struct sf_dev *d = sf_fab.devs[h];

		ret = ib_register_device(&d->ibdev, "simfab%d", NULL);
		if (ret)
			goto fail;
		d->registered = true;
		/* What an SM's PortInfo Set causes on a real HCA: ib_sa
		 * rebuilds its SM AH on these (sa_query.c update_sm_ah).
		 */
		for (p = 1; p <= sf_fab.hosts[h].nports; p++) {
			sf_port_event(d, p, IB_EVENT_PORT_ACTIVE);
			sf_port_event(d, p, IB_EVENT_SM_CHANGE);
		}
	}
	sf_debugfs = debugfs_create_dir("simfab", NULL);
	debugfs_create_file("topology", 0444, sf_debugfs, NULL,
			    &sf_topology_fops);
	debugfs_create_file("capture", 0444, sf_debugfs, NULL,
			    &sf_capture_fops);
	debugfs_create_file("counters", 0444, sf_debugfs, NULL,
			    &sf_counters_fops);
	debugfs_create_file("ctl", 0200, sf_debugfs, NULL, &sf_ctl_fops);
	pr_info("simfab: %d hosts, SM LID %u, LMC %u\n", sf_fab.nhosts,
		sf_fab.sm_lid, sf_fab.lmc);
	return 0;
fail:
	sf_remove_all();
	destroy_workqueue(sf_wq);
	return ret;
}

static void __exit sf_exit(void)
{
	debugfs_remove_recursive(sf_debugfs);
	sf_remove_all();
	destroy_workqueue(sf_wq);
	sf_sa_cleanup();
	/* Packets queued after the last flush (none expected). */
	while (!list_empty(&sf_wire)) {
		struct sf_pkt *pkt = list_first_entry(&sf_wire, struct sf_pkt,
						      list);

		list_del(&pkt->list);
		kfree(pkt);
	}
}

module_init(sf_init);
module_exit(sf_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("simfab: simulated InfiniBand subnet for ib-routed tests");
