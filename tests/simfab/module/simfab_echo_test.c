// SPDX-License-Identifier: GPL-2.0
/*
 * simfab_echo_test: RC traffic between two kernels (tests/simfab/README.md
 * "Guests"), as a kernel ULP moves it: rdma_cm with AF_IB addresses, one
 * QP per connection, completions through ib_alloc_cq(). Unlike
 * simfab_rc_test, which plays both ends in one kernel, each end is a load
 * of its own, so that the other end can run the distribution's stack in
 * another guest.
 *
 * role=server: listens on gid:port until unloaded. Each connection gets a
 * QP, a receive buffer that every SEND lands in and is sent back from
 * (echo), and a region the client may RDMA WRITE and READ, announced in
 * the REP's private data (address, R_Key, length). Each connection's QP
 * attributes once it is established, and its end, are logged as
 * "simfab_echo: server ..." lines.
 *
 * role=client: connects from gid to dst_gid:port, then for each size of
 * 4096 and len bytes: a SEND of a pattern and its echo, compared byte for
 * byte; an RDMA WRITE of another pattern into the server's region and an
 * RDMA READ of it back, compared; then disconnects. KTAP in the kernel
 * log (simfab_echo_* results, "# client KEY=VALUE" diagnostics), the load
 * returns when done. Messages larger than the path MTU go as several
 * packets: len larger than both subnets' MTUs crosses both.
 *
 * Path migration (IBA 17.2.8), for a test that fails a router under
 * traffic: with alt_dlid the client gives its connection an alternate
 * before connecting, the primary's forward record with that DLID (the
 * other router's port on its subnet) and the primary's return record
 * (alt_ret_dlid: another DLID for it), through the overlay's
 * rdma_set_ib_alt_path(), looked up at run time so that the module
 * still loads on a stock kernel (the server never needs it). With
 * stream_ms the client then sends len-byte echoes for that long after
 * "# client stream begins", each compared, and reports the longest
 * round. Both ends log their QP's path migration events; as nvmet-rdma
 * and nvme-rdma, they tell rdma_cm only of IB_EVENT_COMM_EST, unless
 * notify_mig=1, with which they also report IB_EVENT_PATH_MIG through
 * rdma_notify() so that their CM sends its messages on the new path.
 * ack_timeout sets both QPs' Local ACK Timeout as a consumer may
 * (rdma_set_ack_timeout()): routed.topo's packet lifetimes give 8 s and
 * more per try, longer than a test can wait for a migration.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/workqueue.h>
#include <linux/ktime.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib.h>

static char *role = "";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static char *gid = "";
module_param(gid, charp, 0444);
MODULE_PARM_DESC(gid, "the local port's GID (server: listens on it; client: binds it)");
static char *dst_gid = "";
module_param(dst_gid, charp, 0444);
MODULE_PARM_DESC(dst_gid, "client: the server's GID");
static ushort port = 7700;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "the service's port (RDMA_PS_IB service ID)");
static uint len = 65536;
module_param(len, uint, 0444);
MODULE_PARM_DESC(len, "the largest message, bytes (4096..65536)");
static int wait_ms = 20000;
module_param(wait_ms, int, 0444);
MODULE_PARM_DESC(wait_ms, "client: how long to wait for each step or completion, ms");
static int retry = 7;
module_param(retry, int, 0444);
MODULE_PARM_DESC(retry, "client: retry_count of the connection");
static uint alt_dlid;
module_param(alt_dlid, uint, 0444);
MODULE_PARM_DESC(alt_dlid, "client: an alternate path, the primary's forward record with this DLID (0: none)");
static uint alt_ret_dlid;
module_param(alt_ret_dlid, uint, 0444);
MODULE_PARM_DESC(alt_ret_dlid, "client: the alternate's return record's DLID (0: the primary return record's)");
static int stream_ms;
module_param(stream_ms, int, 0444);
MODULE_PARM_DESC(stream_ms, "client: echo len-byte messages for this long after the sizes (0: no stream)");
static int ack_timeout = -1;
module_param(ack_timeout, int, 0444);
MODULE_PARM_DESC(ack_timeout, "the QP's Local ACK Timeout through rdma_set_ack_timeout() (-1: rdma_cm's, from the path)");
static bool notify_mig;
module_param(notify_mig, bool, 0444);
MODULE_PARM_DESC(notify_mig, "report IB_EVENT_PATH_MIG to rdma_cm (rdma_notify), as nvme-rdma does not");

#define E_MAX_LEN	65536	/* simfab's largest RC message */
#define E_MIN_LEN	4096

/* The server's region, in the REP's private data (network order). */
struct e_region {
	__be64 addr;
	__be32 rkey;
	__be32 len;
};

/* ---- the server ------------------------------------------------------------ */

struct e_conn {
	struct list_head list;
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;		/* two receive buffers, then the region */
	u64 dma;
	int cur;		/* the receive buffer posted */
	struct ib_cqe recv_cqe, send_cqe;
	struct work_struct free_work;
	u64 echoed;
};

static struct rdma_cm_id *e_listen;
static LIST_HEAD(e_conns);		/* under e_lock */
static DEFINE_MUTEX(e_lock);
static bool e_stopping;			/* under e_lock: frees are the unload's */
static struct workqueue_struct *e_wq;	/* connections' ends */

static u64 e_rbuf(struct e_conn *c, int i)
{
	return c->dma + (u64)i * len;
}

static int e_post_recv(struct e_conn *c)
{
	struct ib_sge sge = {
		.addr = e_rbuf(c, c->cur), .length = len,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &c->recv_cqe, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(c->id->qp, &wr, NULL);
}

static void e_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info("simfab_echo: server echo send status %s\n",
			ib_wc_status_msg(wc->status));
}

/*
 * A message arrived: the next receive goes into the other buffer before
 * the echo leaves from this one (the client sends its next message once
 * the echo is back, which may be before the echo's own ACK is).
 */
static void e_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct e_conn *c = container_of(wc->wr_cqe, struct e_conn, recv_cqe);
	int got = c->cur;
	struct ib_sge sge = {
		.addr = e_rbuf(c, got), .length = wc->byte_len,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = { .wr_cqe = &c->send_cqe, .sg_list = &sge,
				 .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	if (wc->status != IB_WC_SUCCESS)
		return;
	c->cur ^= 1;
	if (e_post_recv(c) || ib_post_send(c->id->qp, &wr, NULL))
		pr_info("simfab_echo: server cannot echo\n");
	else
		c->echoed++;
}

static void e_log_qp(const char *who, struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(qp, &a, ~0, &init)) {
		pr_info("simfab_echo: %s qp=none\n", who);
		return;
	}
	pr_info("simfab_echo: %s qp dlid=%u sl=%u mtu=%u rate=%u global=%d dgid=%pI6 hop=%u timeout=%u dqpn=%u mig=%u alt_dlid=%u alt_sl=%u\n",
		who, rdma_ah_get_dlid(&a.ah_attr), rdma_ah_get_sl(&a.ah_attr),
		a.path_mtu, rdma_ah_get_static_rate(&a.ah_attr),
		!!(rdma_ah_get_ah_flags(&a.ah_attr) & IB_AH_GRH),
		rdma_ah_read_grh(&a.ah_attr)->dgid.raw,
		rdma_ah_read_grh(&a.ah_attr)->hop_limit, a.timeout,
		a.dest_qp_num, a.path_mig_state,
		rdma_ah_get_dlid(&a.alt_ah_attr), rdma_ah_get_sl(&a.alt_ah_attr));
}

/*
 * A QP's asynchronous event, as nvmet-rdma handles one: the first packet
 * before the RTU establishes the connection (rdma_notify), anything else
 * is logged; a path migration is reported to rdma_cm only with notify_mig.
 */
static void e_qp_event(struct ib_event *ev, struct rdma_cm_id *id,
		       const char *who)
{
	char what[32];
	int ret;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(id, ev->event);
		break;
	case IB_EVENT_PATH_MIG:
		ret = notify_mig ? rdma_notify(id, ev->event) : 0;
		pr_info("simfab_echo: %s qp event %s notified=%d ret=%d\n", who,
			ib_event_msg(ev->event), notify_mig, ret);
		snprintf(what, sizeof(what), "%s migrated", who);
		e_log_qp(what, id->qp);
		break;
	default:
		pr_info("simfab_echo: %s qp event %s\n", who,
			ib_event_msg(ev->event));
		break;
	}
}

static void e_server_qp_event(struct ib_event *ev, void *context)
{
	struct e_conn *c = context;

	e_qp_event(ev, c->id, "server");
}

/* What a connection holds besides its id (any part may not be there). */
static void e_conn_release(struct e_conn *c)
{
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->buf) {
		ib_dma_unmap_single(c->id->device, c->dma, 3 * len,
				    DMA_BIDIRECTIONAL);
		kfree(c->buf);
	}
	if (c->pd)
		ib_dealloc_pd(c->pd);
}

static void e_conn_free(struct e_conn *c)
{
	e_conn_release(c);
	rdma_destroy_id(c->id);
	kfree(c);
}

/* A connection's end, from its DISCONNECTED (never in its handler). */
static void e_free_work(struct work_struct *w)
{
	struct e_conn *c = container_of(w, struct e_conn, free_work);

	mutex_lock(&e_lock);
	list_del(&c->list);
	mutex_unlock(&e_lock);
	pr_info("simfab_echo: server conn closed echoed=%llu\n", c->echoed);
	e_conn_free(c);
}

static int e_accept(struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR, .qp_type = IB_QPT_RC,
	};
	struct e_region reg;
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.rnr_retry_count = 7, .private_data = &reg,
		.private_data_len = sizeof(reg),
	};
	struct e_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int ret = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->id = id;
	id->context = c;
	INIT_WORK(&c->free_work, e_free_work);
	c->recv_cqe.done = e_recv_done;
	c->send_cqe.done = e_send_done;
	c->pd = ib_alloc_pd(id->device, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		goto err;
	}
	c->cq = ib_alloc_cq(id->device, c, 16, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		goto err;
	}
	c->buf = kzalloc(3 * len, GFP_KERNEL);
	if (!c->buf)
		goto err;
	c->dma = ib_dma_map_single(id->device, c->buf, 3 * len,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(id->device, c->dma)) {
		kfree(c->buf);
		c->buf = NULL;
		goto err;
	}
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.event_handler = e_server_qp_event;
	qa.qp_context = c;
	ret = rdma_create_qp(id, c->pd, &qa);
	if (!ret && ack_timeout >= 0)
		ret = rdma_set_ack_timeout(id, ack_timeout);
	if (ret)
		goto err;
	ret = e_post_recv(c);
	if (ret)
		goto err;
	reg.addr = cpu_to_be64(e_rbuf(c, 2));
	reg.rkey = cpu_to_be32(c->pd->unsafe_global_rkey);
	reg.len = cpu_to_be32(len);
	mutex_lock(&e_lock);
	list_add(&c->list, &e_conns);
	mutex_unlock(&e_lock);
	ret = rdma_accept(id, &cp);
	if (ret) {
		mutex_lock(&e_lock);
		list_del(&c->list);
		mutex_unlock(&e_lock);
		goto err;
	}
	return 0;
err:
	/* rdma_cm destroys the id when the handler fails: not here */
	e_conn_release(c);
	kfree(c);
	id->context = NULL;
	return ret;
}

static int e_server_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct e_conn *c = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* non-zero: rdma_cm destroys the new id */
		return e_accept(id);
	case RDMA_CM_EVENT_ESTABLISHED:
		e_log_qp("server established", id->qp);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_disconnect(id);
		mutex_lock(&e_lock);
		if (!e_stopping)
			queue_work(e_wq, &c->free_work);
		mutex_unlock(&e_lock);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		pr_info("simfab_echo: server event %s status %d\n",
			rdma_event_msg(ev->event), ev->status);
		break;
	}
	return 0;
}

/* ---- shared ----------------------------------------------------------------- */

static int e_sib(struct sockaddr_ib *sib, const char *text, u16 sport)
{
	memset(sib, 0, sizeof(*sib));
	sib->sib_family = AF_IB;
	sib->sib_pkey = cpu_to_be16(0xffff);
	if (!in6_pton(text, -1, sib->sib_addr.sib_raw, -1, NULL))
		return -EINVAL;
	if (sport) {
		sib->sib_sid = cpu_to_be64(RDMA_IB_IP_PS_IB | sport);
		sib->sib_sid_mask = cpu_to_be64(~0ULL);
	}
	return 0;
}

static int e_server_start(void)
{
	struct sockaddr_ib sib;
	int ret = e_sib(&sib, gid, port);

	if (ret)
		return ret;
	e_wq = alloc_ordered_workqueue("simfab_echo", 0);
	if (!e_wq)
		return -ENOMEM;
	e_listen = rdma_create_id(&init_net, e_server_handler, NULL,
				  RDMA_PS_IB, IB_QPT_RC);
	if (IS_ERR(e_listen)) {
		destroy_workqueue(e_wq);
		return PTR_ERR(e_listen);
	}
	ret = rdma_bind_addr(e_listen, (struct sockaddr *)&sib);
	if (!ret)
		ret = rdma_listen(e_listen, 4);
	if (ret) {
		rdma_destroy_id(e_listen);
		destroy_workqueue(e_wq);
		return ret;
	}
	pr_info("simfab_echo: server listening on %s port %u\n", gid, port);
	return 0;
}

static void e_server_stop(void)
{
	struct e_conn *c, *n;

	/*
	 * No new connection; the ends already queued run; then the
	 * connections left are freed here (their handlers queue nothing
	 * more, and rdma_destroy_id() waits for a handler still running).
	 */
	rdma_destroy_id(e_listen);
	mutex_lock(&e_lock);
	e_stopping = true;
	mutex_unlock(&e_lock);
	destroy_workqueue(e_wq);
	list_for_each_entry_safe(c, n, &e_conns, list) {
		list_del(&c->list);
		rdma_disconnect(c->id);
		e_conn_free(c);
	}
}

/* ---- the client -------------------------------------------------------------- */

static struct {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;		/* send, receive, read */
	u64 dma;
	struct completion step;
	int status;
	struct e_region reg;
	bool established, disconnected;
	int num;
} e_cli;

static void e_result(bool ok, const char *name, const char *why)
{
	e_cli.num++;
	if (ok)
		pr_info("ok %d simfab_echo_%s\n", e_cli.num, name);
	else
		pr_info("not ok %d simfab_echo_%s # %s\n", e_cli.num, name, why);
}

static int e_client_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		e_cli.status = 0;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		e_cli.established = true;
		e_cli.status = 0;
		if (ev->param.conn.private_data_len >= sizeof(e_cli.reg))
			memcpy(&e_cli.reg, ev->param.conn.private_data,
			       sizeof(e_cli.reg));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		e_cli.disconnected = true;
		e_cli.status = 0;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		pr_info("# client event %s status %d\n",
			rdma_event_msg(ev->event), ev->status);
		e_cli.status = ev->status ?: -EIO;
		break;
	}
	complete(&e_cli.step);
	return 0;
}

static int e_wait(void)
{
	if (!wait_for_completion_timeout(&e_cli.step,
					 msecs_to_jiffies(wait_ms)))
		return -ETIMEDOUT;
	reinit_completion(&e_cli.step);
	return e_cli.status;
}

/* One completion, polled: its status, or -ETIMEDOUT. */
static int e_poll(struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(wait_ms);

	do {
		if (ib_poll_cq(e_cli.cq, 1, wc) > 0)
			return wc->status;
		usleep_range(200, 1000);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

#define E_SEND	0
#define E_RECV	1
#define E_READ	2

static u8 *e_at(int which)
{
	return e_cli.buf + (size_t)which * len;
}

/* A send WR (SEND, RDMA WRITE or READ) of n bytes at buffer @which. */
static int e_post(enum ib_wr_opcode op, int which, u32 n)
{
	struct ib_sge sge = { .addr = e_cli.dma + (u64)which * len,
			      .length = n, .lkey = e_cli.pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = which, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = be64_to_cpu(e_cli.reg.addr),
		.rkey = be32_to_cpu(e_cli.reg.rkey),
	};

	return ib_post_send(e_cli.id->qp, &wr.wr, NULL);
}

static int e_post_recv_cli(void)
{
	struct ib_sge sge = { .addr = e_cli.dma + (u64)E_RECV * len,
			      .length = len, .lkey = e_cli.pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = E_RECV, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(e_cli.id->qp, &wr, NULL);
}

static void e_fill(u8 *p, u32 n, u32 seed)
{
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = (u8)(seed + i * 7 + (i >> 8));
}

/*
 * SEND n bytes of a pattern from @seed and wait for its echo: 0 when it
 * came back whole and equal, else a completion status (> 0), -EBADMSG
 * (a wrong echo) or a negative errno; the echo's length in @got.
 */
static int e_echo(u32 n, u32 seed, u32 *got)
{
	struct ib_wc wc, echo = {};
	int st = 0, seen = 0;

	e_fill(e_at(E_SEND), n, seed);
	memset(e_at(E_RECV), 0, len);
	if (e_post_recv_cli() || e_post(IB_WR_SEND, E_SEND, n))
		return -EIO;
	/* the SEND's completion and the echo's, in either order */
	while (seen < 2 && st == 0) {
		st = e_poll(&wc);
		if (st == 0 && wc.wr_id == E_RECV)
			echo = wc;
		seen++;
	}
	*got = echo.byte_len;
	if (st)
		return st;
	return echo.byte_len == n &&
	       !memcmp(e_at(E_RECV), e_at(E_SEND), n) ? 0 : -EBADMSG;
}

/* SEND n bytes; the echo must come back whole. */
static void e_case_send(u32 n)
{
	char name[32], why[96];
	u32 got = 0;
	int st;

	snprintf(name, sizeof(name), "send_echo_%u", n);
	st = e_echo(n, n, &got);
	snprintf(why, sizeof(why), "status %d (%s), echo %u bytes", st,
		 st > 0 ? ib_wc_status_msg(st) : "none", got);
	e_result(!st, name, why);
}

/* RDMA WRITE n bytes into the server's region, READ them back. */
static void e_case_rdma(u32 n)
{
	char name[40], why[96];
	struct ib_wc wc;
	int st;

	snprintf(name, sizeof(name), "write_read_%u", n);
	e_fill(e_at(E_SEND), n, n + 3);
	memset(e_at(E_READ), 0, len);
	st = e_post(IB_WR_RDMA_WRITE, E_SEND, n) ?: e_poll(&wc);
	if (!st)
		st = e_post(IB_WR_RDMA_READ, E_READ, n) ?: e_poll(&wc);
	snprintf(why, sizeof(why), "status %d (%s)", st,
		 st > 0 ? ib_wc_status_msg(st) : "none");
	e_result(st == 0 && !memcmp(e_at(E_READ), e_at(E_SEND), n), name,
		 st ? why : "the data read back differs");
}

static void e_client_qp_event(struct ib_event *ev, void *context)
{
	e_qp_event(ev, e_cli.id, "client");
}

typedef int (*e_set_alt_fn)(struct rdma_cm_id *id,
			    const struct sa_path_rec *alt,
			    const struct sa_path_rec *alt_inbound);

/*
 * The alternate: the primary's forward record through another DLID, and
 * its return record (another DLID too, with alt_ret_dlid). Only the
 * overlay's rdma_cm takes an alternate from a kernel consumer.
 */
static int e_client_alt(void)
{
	struct rdma_route *rt = &e_cli.id->route;
	struct sa_path_rec alt, alt_in;
	e_set_alt_fn set_alt;
	int ret;

	if (!rt->path_rec || rt->num_pri_alt_paths != 1)
		return -EINVAL;
	set_alt = (e_set_alt_fn)__symbol_get("rdma_set_ib_alt_path");
	if (!set_alt) {
		pr_info("# client no rdma_set_ib_alt_path: not the overlay's rdma_cm\n");
		return -EOPNOTSUPP;
	}
	alt = rt->path_rec[0];
	sa_path_set_dlid(&alt, alt_dlid);
	if (rt->path_rec_inbound) {
		alt_in = *rt->path_rec_inbound;
		if (alt_ret_dlid)
			sa_path_set_dlid(&alt_in, alt_ret_dlid);
	}
	ret = set_alt(e_cli.id, &alt, rt->path_rec_inbound ? &alt_in : NULL);
	__symbol_put("rdma_set_ib_alt_path");
	pr_info("# client alternate dlid=%u ret_dlid=%u ret=%d\n", alt_dlid,
		rt->path_rec_inbound ?
		be32_to_cpu(sa_path_get_dlid(&alt_in)) : 0, ret);
	return ret;
}

static int e_client_setup(void)
{
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR, .qp_type = IB_QPT_RC,
	};
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = retry, .rnr_retry_count = 7,
	};
	struct sockaddr_ib src, dst;
	int ret;

	ret = e_sib(&src, gid, 0) ?: e_sib(&dst, dst_gid, port);
	if (ret)
		return ret;
	e_cli.id = rdma_create_id(&init_net, e_client_handler, NULL,
				  RDMA_PS_IB, IB_QPT_RC);
	if (IS_ERR(e_cli.id)) {
		ret = PTR_ERR(e_cli.id);
		e_cli.id = NULL;
		return ret;
	}
	ret = rdma_bind_addr(e_cli.id, (struct sockaddr *)&src) ?:
	      rdma_resolve_addr(e_cli.id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst, 5000) ?: e_wait() ?:
	      rdma_resolve_route(e_cli.id, 8000) ?: e_wait();
	if (!ret && alt_dlid)
		ret = e_client_alt();
	if (ret)
		return ret;
	e_cli.pd = ib_alloc_pd(e_cli.id->device, 0);
	if (IS_ERR(e_cli.pd)) {
		ret = PTR_ERR(e_cli.pd);
		e_cli.pd = NULL;
		return ret;
	}
	e_cli.cq = ib_alloc_cq(e_cli.id->device, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(e_cli.cq)) {
		ret = PTR_ERR(e_cli.cq);
		e_cli.cq = NULL;
		return ret;
	}
	e_cli.buf = kzalloc(3 * len, GFP_KERNEL);
	if (!e_cli.buf)
		return -ENOMEM;
	e_cli.dma = ib_dma_map_single(e_cli.id->device, e_cli.buf, 3 * len,
				      DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(e_cli.id->device, e_cli.dma)) {
		kfree(e_cli.buf);
		e_cli.buf = NULL;
		return -ENOMEM;
	}
	qa.send_cq = e_cli.cq;
	qa.recv_cq = e_cli.cq;
	qa.event_handler = e_client_qp_event;
	ret = rdma_create_qp(e_cli.id, e_cli.pd, &qa);
	if (!ret && ack_timeout >= 0)
		ret = rdma_set_ack_timeout(e_cli.id, ack_timeout);
	if (ret)
		return ret;
	return rdma_connect(e_cli.id, &cp) ?: e_wait();
}

static void e_client_teardown(void)
{
	if (!e_cli.id)
		return;
	if (e_cli.id->qp)
		rdma_destroy_qp(e_cli.id);
	if (e_cli.cq)
		ib_free_cq(e_cli.cq);
	if (e_cli.buf) {
		ib_dma_unmap_single(e_cli.id->device, e_cli.dma, 3 * len,
				    DMA_BIDIRECTIONAL);
		kfree(e_cli.buf);
	}
	if (e_cli.pd)
		ib_dealloc_pd(e_cli.pd);
	rdma_destroy_id(e_cli.id);
}

/*
 * len-byte SEND echoes for stream_ms, each compared; the longest round
 * is the longest stall the traffic saw (a migration's retries).
 */
static void e_case_stream(void)
{
	ktime_t start = ktime_get(), t;
	u64 longest = 0, us;
	char why[96];
	u32 rounds = 0;
	int st = 0;

	e_log_qp("client before stream", e_cli.id->qp);
	pr_info("# client stream begins\n");
	while (ktime_ms_delta(ktime_get(), start) < stream_ms) {
		u32 got;

		t = ktime_get();
		st = e_echo(len, rounds, &got);
		if (st)
			break;
		us = ktime_us_delta(ktime_get(), t);
		longest = max(longest, us);
		rounds++;
	}
	pr_info("# client stream rounds=%u longest_us=%llu status=%d\n", rounds,
		longest, st);
	snprintf(why, sizeof(why), "round %u: status %d (%s)", rounds, st,
		 st > 0 ? ib_wc_status_msg(st) : "none");
	e_result(st == 0 && rounds > 0, "stream", why);
	e_log_qp("client after stream", e_cli.id->qp);
}

static void e_client_run(void)
{
	char why[64];
	int ret;
	u32 n;

	init_completion(&e_cli.step);
	pr_info("KTAP version 1\n");
	ret = e_client_setup();
	snprintf(why, sizeof(why), "connect: %d", ret);
	e_result(!ret && e_cli.established && e_cli.reg.len, "connect", why);
	if (!ret && e_cli.established) {
		e_log_qp("client", e_cli.id->qp);
		for (n = E_MIN_LEN; ; n = len) {
			e_case_send(n);
			e_case_rdma(n);
			if (n == len)
				break;
		}
		if (stream_ms > 0)
			e_case_stream();
		ret = rdma_disconnect(e_cli.id) ?: e_wait();
		snprintf(why, sizeof(why), "disconnect: %d", ret);
		e_result(!ret && e_cli.disconnected, "disconnect", why);
	}
	pr_info("1..%d\n", e_cli.num);
	e_client_teardown();
}

static int __init e_init(void)
{
	if (len < E_MIN_LEN || len > E_MAX_LEN || ack_timeout > 31)
		return -EINVAL;
	if (!strcmp(role, "server"))
		return e_server_start();
	if (strcmp(role, "client"))
		return -EINVAL;
	e_client_run();
	/* a client's load is its run: nothing stays behind */
	return 0;
}

static void __exit e_exit(void)
{
	if (e_listen)
		e_server_stop();
}

module_init(e_init);
module_exit(e_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("simfab echo server and client: RC traffic between kernels (KTAP)");
