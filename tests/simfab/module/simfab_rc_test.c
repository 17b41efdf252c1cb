// SPDX-License-Identifier: GPL-2.0
/*
 * simfab_rc_test: an in-kernel test driver for RC connections on simfab,
 * printing KTAP in the kernel log (Debian's kernel has no KUnit). Load it
 * after simfab; each load runs the cases named in "cases" and prints the
 * results, then "1..N". The guest tests (tests/vm/guest/simfab-rc.sh)
 * derive every expected value from simfab's debugfs topology and compare
 * it with the "# CASE KEY=VALUE" diagnostics printed here.
 *
 * It connects real RC QPs through rdma_cm (AF_IB, as a kernel ULP does)
 * and through ib_cm directly with a primary and an alternate path (which
 * unpatched rdma_cm never sends), moves traffic both ways (SEND/RECV,
 * RDMA WRITE and READ), migrates paths (IBA 17.2.8), and reports the QP
 * attributes from query_qp, the QP events and the completion statuses.
 * Later issues add their cases here. tests/simfab/README.md describes the
 * cases and their parameters.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/ktime.h>
#include <linux/kprobes.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_sa.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib.h>
#include <rdma/ib_user_sa.h>	/* IB_PATH_* record flags */

#include "simfab.h"		/* simfab_ctl() */
#include "simfab_devget.h"

static char *cases = "";
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "comma-separated: rc, big, link-down, apm-manual, apm-auto, apm-dreq, alt-routed, ibcm, lap, lap-silent, lap-deaf, lap-qp-refuses, cma-apm, cma-lap, cma-lap-unloadable, cma-lap-refused, cma-altroute, cma-altroute-route, cma-altroute-destroy, cma-altroute-late, cma-altwait-destroy, ip, ibcm-flap, scale, lost-rtu, mig-err, rkey, alt-other-device");
static char *act = "";
module_param(act, charp, 0444);
MODULE_PARM_DESC(act, "active side DEV:PORT (primary path)");
static char *pas = "";
module_param(pas, charp, 0444);
MODULE_PARM_DESC(pas, "passive side DEV:PORT (primary path)");
static char *act_alt = "";
module_param(act_alt, charp, 0444);
MODULE_PARM_DESC(act_alt, "active side DEV:PORT of the alternate path");
static char *pas_alt = "";
module_param(pas_alt, charp, 0444);
MODULE_PARM_DESC(pas_alt, "passive side DEV:PORT of the alternate path");
static ushort alt_dlid;
module_param(alt_dlid, ushort, 0444);
MODULE_PARM_DESC(alt_dlid, "alternate path's DLID instead of the SA's (a second router)");
static bool t_ret;
module_param_named(ret, t_ret, bool, 0444);
MODULE_PARM_DESC(ret, "ib_cm cases: hand ib_cm return records from the passive side's SA");
static ushort pri_dlid;
module_param(pri_dlid, ushort, 0444);
MODULE_PARM_DESC(pri_dlid, "primary path's DLID instead of the SA's (another router)");
static ushort ret_dlid;
module_param(ret_dlid, ushort, 0444);
MODULE_PARM_DESC(ret_dlid, "primary return record's DLID instead of the passive SA's");
static ushort alt_ret_dlid;
module_param(alt_ret_dlid, ushort, 0444);
MODULE_PARM_DESC(alt_ret_dlid, "alternate return record's DLID instead of the passive SA's");
static char *lap_drop_ctl = "";
module_param(lap_drop_ctl, charp, 0444);
MODULE_PARM_DESC(lap_drop_ctl, "lap-silent, lap-deaf: simfab ctl command that loses the LAP ('+' for blanks)");
static char *fail_ctl = "";
module_param(fail_ctl, charp, 0444);
MODULE_PARM_DESC(fail_ctl, "simfab ctl command that breaks the primary path ('+' for blanks)");
static char *restore_ctl = "";
module_param(restore_ctl, charp, 0444);
MODULE_PARM_DESC(restore_ctl, "simfab ctl command that repairs it");
static char *fail_alt_ctl = "";
module_param(fail_alt_ctl, charp, 0444);
MODULE_PARM_DESC(fail_alt_ctl, "cma-lap: simfab ctl command that breaks the alternate path");
static char *restore_alt_ctl = "";
module_param(restore_alt_ctl, charp, 0444);
MODULE_PARM_DESC(restore_alt_ctl, "cma-lap: simfab ctl command that repairs it");
static int ack_timeout = 16;
module_param(ack_timeout, int, 0444);
MODULE_PARM_DESC(ack_timeout, "Local ACK Timeout exponent for the QPs (16: 268 ms); -1: the one ib_cm/rdma_cm compute (cm_ack_timeout)");
static int retry = 3;
module_param(retry, int, 0444);
MODULE_PARM_DESC(retry, "retry_cnt for the QPs");
static ushort wrong_dlid;
module_param(wrong_dlid, ushort, 0444);
MODULE_PARM_DESC(wrong_dlid, "rc: then reload the active AV with this DLID and send");
static bool wrong_nogrh;
module_param(wrong_nogrh, bool, 0444);
MODULE_PARM_DESC(wrong_nogrh, "rc: then reload the active AV without its GRH and send");
static int wrong_sl = -1;
module_param(wrong_sl, int, 0444);
MODULE_PARM_DESC(wrong_sl, "rc: then reload the active AV with this SL and send (-1: no)");
static bool wrong_pas;
module_param(wrong_pas, bool, 0444);
MODULE_PARM_DESC(wrong_pas, "rc: the wrong AV is the passive side's, not the active's");
static bool cma_notify = true;
module_param(cma_notify, bool, 0444);
MODULE_PARM_DESC(cma_notify, "rdma_cm cases: the QP event handler calls rdma_notify() on PATH_MIG, as rdma_cm's consumers must (N: it does not, as kernel ULPs do not; rdma_cm then reads the migration from the QP it created)");
static bool cm_notify = true;
module_param(cm_notify, bool, 0444);
MODULE_PARM_DESC(cm_notify, "ib_cm cases: the QP event handler calls ib_cm_notify() on PATH_MIG (N: it does not, as kernel ULPs do not)");
static int msgs = 8;
module_param(msgs, int, 0444);
MODULE_PARM_DESC(msgs, "messages each way per burst");
static int wait_ms = 10000;
module_param(wait_ms, int, 0444);
MODULE_PARM_DESC(wait_ms, "how long to wait for a completion or a CM step, ms (more for a path whose Local ACK Timeout is long)");
static char *act_ip = "";
module_param(act_ip, charp, 0444);
MODULE_PARM_DESC(act_ip, "ip: the active side's IPv4 address");
static char *pas_ip = "";
module_param(pas_ip, charp, 0444);
MODULE_PARM_DESC(pas_ip, "ip: the passive side's IPv4 address");
static bool opt_in = true;
module_param(opt_in, bool, 0444);
MODULE_PARM_DESC(opt_in, "cma-altroute*: the active id takes the APM events (rdma_set_apm_events()) before rdma_resolve_route(), and the passive one on its listener (a late alternate goes by LAP, which only an opted-in id takes)");
static int route_ms = 5000;
module_param(route_ms, int, 0444);
MODULE_PARM_DESC(route_ms, "cma-altroute*: rdma_resolve_route() timeout in ms");
static int connect_delay_ms;
module_param(connect_delay_ms, int, 0444);
MODULE_PARM_DESC(connect_delay_ms, "cma-altroute*: wait this long after ROUTE_RESOLVED before rdma_connect() (the alternate's discovery, which ROUTE_RESOLVED does not wait for, ends meanwhile and goes into the REQ)");
static int destroy_ms = 3000;
module_param(destroy_ms, int, 0444);
MODULE_PARM_DESC(destroy_ms, "cma-altroute-destroy: destroy the id this long after rdma_resolve_route(), ms");
static int rounds = 20;
module_param(rounds, int, 0444);
MODULE_PARM_DESC(rounds, "cma-altwait-destroy: route resolutions whose ROUTE_RESOLVED handler destroys the id");
static int race_hold_ms = 300;
module_param(race_hold_ms, int, 0444);
MODULE_PARM_DESC(race_hold_ms, "cma-altwait-destroy: once ROUTE_RESOLVED has come, how long ib_remote_sa_alt_path_get()'s return is held for the id to be freed, ms");
static int act_ns;
module_param(act_ns, int, 0444);
MODULE_PARM_DESC(act_ns, "ip: a pid in the active side's netns (0: init)");
static int pas_ns;
module_param(pas_ns, int, 0444);
MODULE_PARM_DESC(pas_ns, "ip: a pid in the passive side's netns (0: init)");
static int addr_timeout = 3000;
module_param(addr_timeout, int, 0444);
MODULE_PARM_DESC(addr_timeout, "ip: rdma_resolve_addr() timeout in ms");
static int cm_timeout = 20;
module_param(cm_timeout, int, 0444);
MODULE_PARM_DESC(cm_timeout, "ib_cm cases: the REQ's remote/local CM response timeout (4.096 us x 2^N; 20 as rdma_cm)");
static int life_max;
module_param(life_max, int, 0444);
MODULE_PARM_DESC(life_max, "ib_cm cases: cap the PacketLifeTime of every path record the SA gives (0: as given); ib_cm's CM MAD timeout is twice the connection's lifetime plus the peer's response timeout, so the LAP retry cases wait seconds, not minutes, under TCG");
static int cm_retries = 15;
module_param(cm_retries, int, 0444);
MODULE_PARM_DESC(cm_retries, "ib_cm cases: the REQ's max CM retries (15 as rdma_cm)");
static int flap_ms;
module_param(flap_ms, int, 0444);
MODULE_PARM_DESC(flap_ms, "ibcm-flap: restore_ctl this long after the REQ went out (0: only after the REQ's last try)");
static int conns = 1000;
module_param(conns, int, 0444);
MODULE_PARM_DESC(conns, "scale: rdma_cm connections with RC QPs open at once");
static int hold_ms;
module_param(hold_ms, int, 0444);
MODULE_PARM_DESC(hold_ms, "scale: with every connection open, wait up to this long for 'release' (a guest test measures meanwhile)");
static bool release;
module_param(release, bool, 0644);
static int big_len = 65536;
module_param(big_len, int, 0444);
MODULE_PARM_DESC(big_len, "big: the large message size, bytes (4096 is sent too; at most 65536, simfab's max_msg_sz)");
static char *big_cm = "cma";
module_param(big_cm, charp, 0444);
MODULE_PARM_DESC(big_cm, "big: connect through cma (rdma_cm, the route it resolves) or ibcm (ib_cm with the SA's records; ret=1 adds the return record)");
static bool big_lost;
module_param(big_lost, bool, 0444);
MODULE_PARM_DESC(big_lost, "big: the path's MTU is known to exceed a link's: one large SEND must be lost (RETRY_EXC_ERR), nothing else is sent");
MODULE_PARM_DESC(release, "scale: written Y by the guest test to end the hold");

#define T_MSG		256
#define T_NRECV		32
#define T_SID		0x53460000000000a1ULL	/* ib_cm service ID */
#define T_CMA_PORT	7301
#define T_REP_PSN	0x300

static int t_num;
static const char *t_case;

static void t_result(bool ok, const char *name, const char *why)
{
	t_num++;
	if (ok)
		pr_info("ok %d simfab_rc_%s_%s\n", t_num, t_case, name);
	else
		pr_info("not ok %d simfab_rc_%s_%s # %s\n", t_num, t_case, name,
			why);
}

/*
 * In-kernel ULPs take their own structure from the QP's context in their
 * completion and event handlers (nvmet-rdma nvmet_rdma_recv_done(),
 * ib_isert, ib_srpt, nvme-rdma, iser): so does this consumer. A side
 * starts with T_SIDE_MAGIC, and every completion and QP event it takes
 * checks that wc->qp->qp_context (ev->element.qp->qp_context) is still
 * its own side.
 */
#define T_SIDE_MAGIC	0x5f1dc0de

struct t_side {
	u32 magic;			/* T_SIDE_MAGIC */
	const char *name;		/* "act" or "pas" */
	struct ib_device *dev;
	struct ib_device *alt_dev;	/* alt-other-device: not dev */
	u32 port, alt_port;
	union ib_gid gid, alt_gid;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	u8 *buf;			/* recv slots, send slot, RDMA area */
	int posted;			/* receives outstanding */
	u64 next_recv;
	struct rdma_cm_id *id, *listen_id;
	struct ib_cm_id *cm, *listen_cm;
	struct completion step;		/* rdma_cm / ib_cm progress */
	int step_status;
	atomic_t path_mig, other_events;
	atomic_t comm_est, mig_err;	/* IB_EVENT_COMM_EST, _PATH_MIG_ERR */
	int est_event;			/* the ib_cm event that established it */
	bool established;
	/* LAP/APR (ib-routed) */
	int lap_rcvd, lap_dlid, lap_sl, apr_status, apr_sent, lap_error;
	/* rdma_cm's APM events (ib-routed): ALT_PATH_LOADED/_ERROR, MIGRATED */
	atomic_t cma_loaded, cma_alt_error, cma_migrated;
	int cma_alt_status;
	bool drep;
	bool disconnected;		/* rdma_cm DISCONNECTED */
	int req_send_status;		/* IB_CM_REQ_ERROR's send status */
	int rej_reason;			/* IB_CM_REJ_RECEIVED's reason */
	u8 *big;			/* big: receive slots, send, RDMA area */
};

#define T_SEND_OFF	(T_NRECV * T_MSG)
#define T_RDMA_OFF	(T_SEND_OFF + T_MSG)
#define T_BUF_LEN	(T_RDMA_OFF + T_MSG)

static struct t_side t_act = { .magic = T_SIDE_MAGIC, .name = "act" },
		     t_pas = { .magic = T_SIDE_MAGIC, .name = "pas" };
/* alt-other-device: an alternate end may be a port of another device */
static bool t_alt_any_dev;

/* Completions and QP events seen, and those whose QP context was not ours */
static atomic_t t_ctx_seen, t_ctx_bad;

/* @qp's context as a ULP reads it: one of our sides, with its magic. */
static void t_check_qp_context(const struct ib_qp *qp, const char *what)
{
	const struct t_side *s = qp ? qp->qp_context : NULL;

	atomic_inc(&t_ctx_seen);
	if ((s == &t_act || s == &t_pas) && READ_ONCE(s->magic) == T_SIDE_MAGIC)
		return;
	if (atomic_inc_return(&t_ctx_bad) <= 3)
		pr_info("# %s %s: qp_context %p is not the consumer's (act %p pas %p)\n",
			t_case, what, s, &t_act, &t_pas);
}

static struct ib_sa_client t_sa;

/* The paths of the last t_ibcm_connect(): forward and return records */
static struct sa_path_rec t_pri, t_pri_in, t_alt, t_alt_in;

/*
 * ib-routed's rdma_cm APM events (enum rdma_cm_event_type): its numbers
 * start at 0x1000, apart from upstream's (16-19 are Linux 7.x's
 * ADDRINFO_RESOLVED, ADDRINFO_ERROR, USER and INTERNAL; docs/uapi.md)
 */
#define T_EV_ALT_PATH_LOADED	0x1000
#define T_EV_ALT_PATH_ERROR	0x1001
#define T_EV_PATH_MIGRATED	0x1002

/* ib-routed's rdma_cm APM calls, looked up in t_case_cma_lap() */
static int (*t_apm_events)(struct rdma_cm_id *id, bool on);
static int (*t_cma_lap)(struct rdma_cm_id *id, const struct sa_path_rec *alt,
			const struct sa_path_rec *alt_in);
/* t_cma_connect(): the active id takes the APM events */
static bool t_act_apm;
/*
 * t_cma_connect(): the passive id takes them (set on the listener, whose
 * connections take its setting); otherwise it is as a kernel ULP's, which
 * takes none
 */
static bool t_pas_apm;
/* t_ibcm_connect(): fail_ctl just before the REQ, restore_ctl flap_ms after */
static bool t_req_flap;
static int t_ctl(const char *cmd);
/* lost-rtu: the passive QP stays in RTR until established (ib_srpt) */
static bool t_pas_rts_at_rtu;
/* t_ibcm_connect(): do not wait for the passive side's ESTABLISHED */
static bool t_no_pas_wait;

/* ib-routed's LAP/APR calls, looked up in t_case_lap() (symbol_get) */
static int (*t_lap_enable)(struct ib_cm_id *cm_id);
static int (*t_lap_send)(struct ib_cm_id *cm_id, struct sa_path_rec *alt,
			 struct sa_path_rec *alt_in, const void *pd, u8 len);
static int (*t_apr_send)(struct ib_cm_id *cm_id, enum ib_cm_apr_status st,
			 const void *info, u8 info_len, const void *pd,
			 u8 len);
/* ib_cm_lap_loaded(): only in a series whose ib_cm waits for the QP load */
static int (*t_lap_loaded)(struct ib_cm_id *cm_id, int err);
/* lap-qp-refuses: the active QP refuses the alternate an APR accepted */
static bool t_lap_fail_load;
/* lap-deaf: the active LAP_ERROR handler takes its time; who overlaps it */
static bool t_lap_slow_error;
static atomic_t t_lap_in_error = ATOMIC_INIT(0);
static bool t_lap_overlap;
static int t_lap_seq, t_lap_err_seq, t_lap_dreq_seq;
static DECLARE_COMPLETION(t_lap_err_started);

/* "DEV:PORT" -> device reference and port. */
static int t_parse_end(const char *spec, struct ib_device **dev, u32 *port)
{
	char name[IB_DEVICE_NAME_MAX];
	const char *c = strchr(spec, ':');

	if (!c || c - spec >= sizeof(name) || kstrtou32(c + 1, 0, port))
		return -EINVAL;
	memcpy(name, spec, c - spec);
	name[c - spec] = '\0';
	*dev = sf_device_get_by_name(name);
	return *dev ? 0 : -ENODEV;
}

static void t_qp_event(struct ib_event *ev, void *ctx)
{
	struct t_side *s = ctx;

	t_check_qp_context(ev->element.qp, "qp event");
	if (ctx != ev->element.qp->qp_context)
		atomic_inc(&t_ctx_bad);
	if (ev->event == IB_EVENT_PATH_MIG) {
		atomic_inc(&s->path_mig);
		/* The CM hears of it only from the consumer (cm.c
		 * ib_cm_notify): its address vector follows the QP.
		 */
		if (s->cm && cm_notify)
			ib_cm_notify(s->cm, IB_EVENT_PATH_MIG);
		else if (s->id && cma_notify)
			rdma_notify(s->id, IB_EVENT_PATH_MIG);
	} else if (ev->event == IB_EVENT_COMM_EST) {
		/*
		 * The ULP contract: tell the CM, as nvmet-rdma
		 * (nvmet_rdma_qp_event), ib_srpt (srpt_qp_event), ib_isert and
		 * rtrs do; a passive side whose RTU was lost is established
		 * by it (cm.c cm_establish -> IB_CM_USER_ESTABLISHED).
		 */
		atomic_inc(&s->comm_est);
		if (s->cm)
			ib_cm_notify(s->cm, IB_EVENT_COMM_EST);
		else if (s->id)
			rdma_notify(s->id, IB_EVENT_COMM_EST);
	} else if (ev->event == IB_EVENT_PATH_MIG_ERR) {
		/* ib_cm_notify takes COMM_EST and PATH_MIG only (cm.c) */
		atomic_inc(&s->mig_err);
		pr_info("# %s %s qp event PATH_MIG_ERR\n", t_case, s->name);
	} else {
		atomic_inc(&s->other_events);
	}
}

/* The other side's R_Key for its buffer (its PD's DMA MR). */
static u32 t_peer_rkey(const struct t_side *s)
{
	const struct t_side *r = s == &t_act ? &t_pas : &t_act;

	return r->pd ? r->pd->unsafe_global_rkey : 0;
}

static int t_side_init(struct t_side *s, const char *spec, const char *alt)
{
	struct ib_cq_init_attr ca = { .cqe = 256 };
	struct ib_device *d2;
	int ret;

	ret = t_parse_end(spec, &s->dev, &s->port);
	if (ret)
		return ret;
	s->alt_port = s->port;
	if (alt && *alt) {
		ret = t_parse_end(alt, &d2, &s->alt_port);
		if (ret)
			return ret;
		if (d2 != s->dev && t_alt_any_dev) {
			s->alt_dev = d2;	/* t_side_fini() puts it */
		} else {
			ib_device_put(d2);
			if (d2 != s->dev)
				return -EINVAL;
		}
	}
	ret = rdma_query_gid(s->dev, s->port, 0, &s->gid);
	if (!ret)
		ret = rdma_query_gid(s->alt_dev ?: s->dev, s->alt_port, 0,
				     &s->alt_gid);
	if (ret)
		return ret;
	s->magic = T_SIDE_MAGIC;
	init_completion(&s->step);
	atomic_set(&s->path_mig, 0);
	atomic_set(&s->other_events, 0);
	atomic_set(&s->cma_loaded, 0);
	atomic_set(&s->cma_alt_error, 0);
	atomic_set(&s->cma_migrated, 0);
	s->cma_alt_status = 0;
	s->buf = kzalloc(T_BUF_LEN, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	atomic_set(&s->comm_est, 0);
	atomic_set(&s->mig_err, 0);
	s->est_event = 0;
	/*
	 * simfab checks R_Keys (simfab_rc.c): the RDMA a side lets its peer
	 * do goes through its PD's DMA MR with remote access, the way
	 * ULPs without fast registration do it (ib_srp register_always=N,
	 * iser without register_always).
	 */
	s->pd = ib_alloc_pd(s->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(s->pd))
		return PTR_ERR(s->pd);
	s->scq = ib_create_cq(s->dev, NULL, NULL, NULL, &ca);
	if (IS_ERR(s->scq))
		return PTR_ERR(s->scq);
	s->rcq = ib_create_cq(s->dev, NULL, NULL, NULL, &ca);
	if (IS_ERR(s->rcq))
		return PTR_ERR(s->rcq);
	return 0;
}

static void t_qp_init_attr(struct t_side *s, struct ib_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->event_handler = t_qp_event;
	qa->qp_context = s;
	qa->send_cq = s->scq;
	qa->recv_cq = s->rcq;
	qa->qp_type = IB_QPT_RC;
	qa->sq_sig_type = IB_SIGNAL_ALL_WR;
	qa->cap.max_send_wr = 64;
	qa->cap.max_recv_wr = T_NRECV;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

static void t_side_fini(struct t_side *s)
{
	if (s->cm)
		ib_destroy_cm_id(s->cm);
	if (s->listen_cm)
		ib_destroy_cm_id(s->listen_cm);
	if (s->id) {
		if (s->qp)
			rdma_destroy_qp(s->id);
		rdma_destroy_id(s->id);
		s->qp = NULL;
	}
	if (s->listen_id)
		rdma_destroy_id(s->listen_id);
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (!IS_ERR_OR_NULL(s->scq))
		ib_destroy_cq(s->scq);
	if (!IS_ERR_OR_NULL(s->rcq))
		ib_destroy_cq(s->rcq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	kfree(s->buf);
	kvfree(s->big);
	if (s->dev)
		ib_device_put(s->dev);
	if (s->alt_dev)
		ib_device_put(s->alt_dev);
	memset(s, 0, sizeof(*s));
}

/* ---- traffic ------------------------------------------------------------- */

#define T_BIG_NRECV	4
#define T_BIG_SEND_OFF	(T_BIG_NRECV * big_len)
#define T_BIG_RDMA_OFF	(T_BIG_SEND_OFF + big_len)
#define T_BIG_BUF_LEN	(T_BIG_RDMA_OFF + big_len)

/*
 * Keep the receive queue full: T_NRECV slots of T_MSG bytes, or for the
 * big case T_BIG_NRECV slots of big_len bytes (from the connection on).
 */
static int t_post_recvs(struct t_side *s)
{
	int nrecv = s->big ? T_BIG_NRECV : T_NRECV;
	u32 len = s->big ? big_len : T_MSG;
	u8 *base = s->big ? s->big : s->buf;

	while (s->posted < nrecv) {
		struct ib_sge sge = {
			.addr = (uintptr_t)(base + (s->next_recv % nrecv) * len),
			.length = len,
			.lkey = s->pd->local_dma_lkey,
		};
		struct ib_recv_wr wr = {
			.wr_id = s->next_recv, .sg_list = &sge, .num_sge = 1,
		};
		int ret = ib_post_recv(s->qp, &wr, NULL);

		if (ret)
			return ret;
		s->next_recv++;
		s->posted++;
	}
	return 0;
}

/* One completion from @cq within @ms; false on timeout. */
static bool t_poll(struct ib_cq *cq, struct ib_wc *wc, int ms)
{
	for (; ms > 0; ms -= 5) {
		if (ib_poll_cq(cq, 1, wc) == 1) {
			t_check_qp_context(wc->qp, "completion");
			return true;
		}
		usleep_range(4000, 6000);
	}
	return false;
}

static int t_send_one(struct t_side *s, enum ib_wr_opcode op, u64 raddr,
		      u32 len, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(s->buf + (op == IB_WR_RDMA_READ ?
					       T_RDMA_OFF : T_SEND_OFF)),
		.length = len,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = t_peer_rkey(s),
	};

	return ib_post_send(s->qp, &wr.wr, NULL);
}

/* One 64-byte SEND from @s: its completion status, -1 when none came. */
static int t_send_status(struct t_side *s, u64 wr_id, int ms)
{
	struct ib_wc wc = {};

	if (t_send_one(s, IB_WR_SEND, 0, 64, wr_id) ||
	    !t_poll(s->scq, &wc, ms))
		return -1;
	return wc.status;
}

/* How many of @s's posted receives completed flushed (a QP in Error). */
static int t_recv_flushed(struct t_side *s)
{
	struct ib_wc wc;
	int n = 0;

	while (t_poll(s->rcq, &wc, 50))
		n += wc.status == IB_WC_WR_FLUSH_ERR;
	return n;
}

/*
 * @n SENDs from @s to @r, each a different pattern; returns how many
 * arrived intact, and in *st the first bad send completion status (or
 * IB_WC_SUCCESS; -1 when no completion came).
 */
static int t_burst(struct t_side *s, struct t_side *r, int n, int *st)
{
	static u32 seq;
	struct ib_wc wc;
	int i, good = 0;

	*st = IB_WC_SUCCESS;
	if (t_post_recvs(r))
		return 0;
	for (i = 0; i < n; i++) {
		u32 tag = ++seq;

		memset(s->buf + T_SEND_OFF, tag & 0xff, T_MSG);
		memcpy(s->buf + T_SEND_OFF, &tag, sizeof(tag));
		if (t_send_one(s, IB_WR_SEND, 0, T_MSG, tag)) {
			*st = -2;
			break;
		}
		if (!t_poll(s->scq, &wc, wait_ms)) {
			*st = -1;
			break;
		}
		if (wc.status != IB_WC_SUCCESS) {
			*st = wc.status;
			break;
		}
		if (!t_poll(r->rcq, &wc, wait_ms))
			break;
		r->posted--;
		if (wc.status == IB_WC_SUCCESS && wc.byte_len == T_MSG &&
		    !memcmp(r->buf + (wc.wr_id % T_NRECV) * T_MSG, &tag,
			    sizeof(tag)))
			good++;
		t_post_recvs(r);
	}
	return good;
}

static void t_traffic(const char *tag, struct t_side *s, struct t_side *r)
{
	char name[48], why[64];
	int st, good = t_burst(s, r, msgs, &st);

	pr_info("# %s %s good=%d of=%d status=%d\n", t_case, tag, good, msgs,
		st);
	snprintf(why, sizeof(why), "%d of %d messages, status %d (%s)", good,
		 msgs, st, st >= 0 ? ib_wc_status_msg(st) : "none");
	snprintf(name, sizeof(name), "%s", tag);
	t_result(good == msgs, name, why);
}

/* RDMA WRITE of a pattern into @r's buffer, then a READ of it back. */
static void t_rdma(struct t_side *s, struct t_side *r)
{
	struct ib_qp_attr a = { .qp_access_flags = IB_ACCESS_REMOTE_WRITE |
						   IB_ACCESS_REMOTE_READ };
	u64 raddr = (uintptr_t)(r->buf + T_RDMA_OFF);
	struct ib_wc wc = {};
	bool ok;

	/* rdma_cm's active INIT grants none (cma.c), ib_cm's passive
	 * INIT some: set them here (RTS -> RTS).
	 */
	ib_modify_qp(r->qp, &a, IB_QP_ACCESS_FLAGS);
	memset(s->buf + T_SEND_OFF, 0xa5, T_MSG);
	memset(r->buf + T_RDMA_OFF, 0, T_MSG);
	ok = !t_send_one(s, IB_WR_RDMA_WRITE, raddr, T_MSG, 1) &&
	     t_poll(s->scq, &wc, wait_ms) && wc.status == IB_WC_SUCCESS &&
	     r->buf[T_RDMA_OFF] == 0xa5 && r->buf[T_RDMA_OFF + T_MSG - 1] == 0xa5;
	t_result(ok, "rdma-write", "RDMA WRITE did not land");
	r->buf[T_RDMA_OFF + 7] = 0x5a;
	memset(s->buf + T_RDMA_OFF, 0, T_MSG);
	ok = !t_send_one(s, IB_WR_RDMA_READ, raddr, T_MSG, 2) &&
	     t_poll(s->scq, &wc, wait_ms) && wc.status == IB_WC_SUCCESS &&
	     wc.opcode == IB_WC_RDMA_READ && s->buf[T_RDMA_OFF] == 0xa5 &&
	     s->buf[T_RDMA_OFF + 7] == 0x5a;
	t_result(ok, "rdma-read", "RDMA READ did not bring the data back");
}

/* ---- reporting ---------------------------------------------------------- */

static void t_dump(const char *when, struct t_side *s)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;
	const struct ib_global_route *g, *ag;

	if (!s->qp || ib_query_qp(s->qp, &a, ~0, &init)) {
		pr_info("# %s %s.%s query_qp=none\n", t_case, s->name, when);
		return;
	}
	g = rdma_ah_read_grh(&a.ah_attr);
	ag = rdma_ah_read_grh(&a.alt_ah_attr);
	pr_info("# %s %s.%s state=%d mig=%d port=%u dlid=%u sl=%u bits=%u global=%d dgid=%pI6 hop=%u pkey_index=%u timeout=%u retry=%u mtu=%u rate=%u dqpn=%u\n",
		t_case, s->name, when, a.qp_state, a.path_mig_state,
		a.port_num, rdma_ah_get_dlid(&a.ah_attr),
		rdma_ah_get_sl(&a.ah_attr), rdma_ah_get_path_bits(&a.ah_attr),
		!!(rdma_ah_get_ah_flags(&a.ah_attr) & IB_AH_GRH), g->dgid.raw,
		g->hop_limit, a.pkey_index, a.timeout, a.retry_cnt,
		a.path_mtu, rdma_ah_get_static_rate(&a.ah_attr), a.dest_qp_num);
	pr_info("# %s %s.%s alt_port=%u alt_dlid=%u alt_sl=%u alt_rate=%u alt_bits=%u alt_global=%d alt_dgid=%pI6 alt_hop=%u alt_timeout=%u events=%d/%d\n",
		t_case, s->name, when, a.alt_port_num,
		rdma_ah_get_dlid(&a.alt_ah_attr),
		rdma_ah_get_sl(&a.alt_ah_attr),
		rdma_ah_get_static_rate(&a.alt_ah_attr),
		rdma_ah_get_path_bits(&a.alt_ah_attr),
		!!(rdma_ah_get_ah_flags(&a.alt_ah_attr) & IB_AH_GRH),
		ag->dgid.raw, ag->hop_limit, a.alt_timeout,
		atomic_read(&s->path_mig), atomic_read(&s->other_events));
}

static int t_mig_state(struct t_side *s)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(s->qp, &a, IB_QP_PATH_MIG_STATE, &init))
		return -1;
	return a.path_mig_state;
}

static int t_qp_state(struct t_side *s)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(s->qp, &a, IB_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* ---- rdma_cm ------------------------------------------------------------ */

static void t_sib(struct sockaddr_ib *sib, const union ib_gid *gid, u16 port)
{
	memset(sib, 0, sizeof(*sib));
	sib->sib_family = AF_IB;
	sib->sib_pkey = cpu_to_be16(0xffff);
	memcpy(&sib->sib_addr, gid, sizeof(*gid));
	if (port) {
		sib->sib_sid = cpu_to_be64(RDMA_IB_IP_PS_IB | port);
		sib->sib_sid_mask = cpu_to_be64(~0ULL);
	}
}

static void t_step(struct t_side *s, int status)
{
	s->step_status = status;
	complete(&s->step);
}

static int t_wait_step(struct t_side *s)
{
	if (!wait_for_completion_timeout(&s->step,
					 msecs_to_jiffies(wait_ms)))
		return -ETIMEDOUT;
	reinit_completion(&s->step);
	return s->step_status;
}

static int t_cma_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct t_side *s = id->context;
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = retry, .rnr_retry_count = 7,
	};
	struct ib_qp_init_attr qa;
	int e = ev->event;

	/* ib-routed's APM events (not in the distribution's enum) */
	if (e >= T_EV_ALT_PATH_LOADED && e <= T_EV_PATH_MIGRATED) {
		pr_info("# %s %s rdma_cm event 0x%x status %d\n", t_case,
			s->name, e, ev->status);
		if (e == T_EV_PATH_MIGRATED) {
			atomic_inc(&s->cma_migrated);
		} else if (e == T_EV_ALT_PATH_LOADED) {
			atomic_inc(&s->cma_loaded);
			t_step(s, 0);
		} else {
			atomic_inc(&s->cma_alt_error);
			s->cma_alt_status = ev->status;
			t_step(s, ev->status ?: -EIO);
		}
		return 0;
	}

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		t_step(s, 0);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* The passive side: a QP on the new id, then accept (from
		 * the handler: rdma_accept needs the handler mutex).
		 */
		t_qp_init_attr(s, &qa);
		if (rdma_create_qp(id, s->pd, &qa)) {
			t_step(s, -ENOMEM);
			return 1;	/* rdma_cm destroys the id */
		}
		s->id = id;
		s->qp = id->qp;
		t_post_recvs(s);
		if (ack_timeout >= 0)
			rdma_set_ack_timeout(id, ack_timeout);
		if (rdma_accept(id, &cp))
			t_step(s, -EIO);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		s->established = true;
		t_step(s, 0);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		s->disconnected = true;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		pr_info("# %s %s rdma_cm event %s status %d\n", t_case,
			s->name, rdma_event_msg(ev->event), ev->status);
		t_step(s, ev->status ? ev->status : -EIO);
		break;
	}
	return 0;
}

static int t_cma_set_paths(struct t_side *a, struct t_side *p);
/* t_cma_connect(): how long rdma_resolve_route() took, ms */
static s64 t_route_ms = -1;
/*
 * The paths of the route rdma_connect() built the REQ from, read as it
 * returns: a discovery that ends later loads its alternate by LAP after
 * the RTU, which may come before the connecting thread runs again.
 */
static int t_req_paths;
/* t_cma_connect(): called once rdma_connect() has sent the REQ */
static void (*t_route_hook)(struct t_side *a);

/*
 * act -> pas through rdma_cm with AF_IB addresses and a bound source;
 * the route from rdma_resolve_route(), or with @set_paths a path record
 * set with an alternate (t_cma_set_paths()).
 */
static int t_cma_connect(struct t_side *a, struct t_side *p, bool set_paths)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = retry, .rnr_retry_count = 7,
	};
	struct sockaddr_ib src, dst;
	struct ib_qp_init_attr qa;
	int ret;

	p->listen_id = rdma_create_id(&init_net, t_cma_handler, p, RDMA_PS_IB,
				      IB_QPT_RC);
	if (IS_ERR(p->listen_id)) {
		ret = PTR_ERR(p->listen_id);
		p->listen_id = NULL;
		return ret;
	}
	t_sib(&dst, &p->gid, T_CMA_PORT);
	ret = rdma_bind_addr(p->listen_id, (struct sockaddr *)&dst);
	if (!ret && t_pas_apm && t_apm_events)
		ret = t_apm_events(p->listen_id, true);
	if (!ret)
		ret = rdma_listen(p->listen_id, 1);
	if (ret)
		return ret;
	a->id = rdma_create_id(&init_net, t_cma_handler, a, RDMA_PS_IB,
			       IB_QPT_RC);
	if (IS_ERR(a->id)) {
		ret = PTR_ERR(a->id);
		a->id = NULL;
		return ret;
	}
	if (t_act_apm && t_apm_events)
		t_apm_events(a->id, true);
	/* 6.1 needs a bound source GID for an off-subnet DGID (cma.c). */
	t_sib(&src, &a->gid, 0);
	ret = rdma_bind_addr(a->id, (struct sockaddr *)&src);
	if (!ret)
		ret = rdma_resolve_addr(a->id, (struct sockaddr *)&src,
					(struct sockaddr *)&dst, 5000);
	if (!ret)
		ret = t_wait_step(a);
	if (!ret && set_paths) {
		ret = t_cma_set_paths(a, p);
	} else if (!ret) {
		ktime_t t0 = ktime_get();
		s64 ms;

		ret = rdma_resolve_route(a->id, route_ms);
		if (!ret)
			ret = t_wait_step(a);
		/*
		 * The caller's timeout bounds the whole resolution, the
		 * return record and the alternate included: a ULP such as
		 * rpcrdma stops waiting for ROUTE_RESOLVED after its own.
		 */
		ms = ktime_ms_delta(ktime_get(), t0);
		t_route_ms = ms;
		pr_info("# %s route-time ms=%lld timeout=%d ret=%d\n", t_case, ms,
			route_ms, ret);
		t_result(ms < route_ms, "route-within-timeout",
			 "ROUTE_RESOLVED (or ROUTE_ERROR) came after rdma_resolve_route()'s timeout");
	}
	if (ret)
		return ret;
	if (!set_paths && connect_delay_ms)
		msleep(connect_delay_ms);
	t_qp_init_attr(a, &qa);
	ret = rdma_create_qp(a->id, a->pd, &qa);
	if (ret)
		return ret;
	a->qp = a->id->qp;
	t_post_recvs(a);
	if (ack_timeout >= 0)
		rdma_set_ack_timeout(a->id, ack_timeout);
	ret = rdma_connect(a->id, &cp);
	t_req_paths = a->id->route.num_pri_alt_paths;
	/* the route as the REQ has it */
	if (!ret && t_route_hook)
		t_route_hook(a);
	if (!ret)
		ret = t_wait_step(a);
	if (!ret)
		ret = t_wait_step(p);
	return ret;
}

/* ---- ib_cm with an alternate path --------------------------------------- */

struct t_pr {
	struct completion done;
	int status;
	struct sa_path_rec rec;
};

static void t_pr_done(int status, struct sa_path_rec *resp, SF_NUM_PRS num,
		      void *ctx)
{
	struct t_pr *q = ctx;

	q->status = status;
	if (!status && resp)
		q->rec = *resp;
	complete(&q->done);
}

/* The SA's PathRecord for sgid -> dgid, asked as rdma_cm asks (cma.c). */
static int t_path(struct ib_device *dev, u32 port, const union ib_gid *sgid,
		  const union ib_gid *dgid, struct sa_path_rec *out)
{
	struct ib_sa_query *q;
	struct t_pr pr = {};
	struct sa_path_rec rec = {};
	int id;

	init_completion(&pr.done);
	rec.rec_type = SA_PATH_REC_TYPE_IB;
	rec.sgid = *sgid;
	rec.dgid = *dgid;
	rec.pkey = cpu_to_be16(0xffff);
	rec.numb_path = 1;
	rec.reversible = 1;
	id = ib_sa_path_rec_get(&t_sa, dev, port, &rec,
				IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID |
				IB_SA_PATH_REC_PKEY | IB_SA_PATH_REC_NUMB_PATH |
				IB_SA_PATH_REC_REVERSIBLE, 5000, GFP_KERNEL,
				t_pr_done, &pr, &q);
	if (id < 0)
		return id;
	wait_for_completion(&pr.done);
	if (pr.status)
		return pr.status;
	*out = pr.rec;
	if (life_max > 0 && out->packet_life_time > life_max)
		out->packet_life_time = life_max;
	return 0;
}

/* ib_cm_init_qp_attr, with the test's ACK timeout for speed under TCG. */
static int t_cm_modify(struct t_side *s, enum ib_qp_state st)
{
	struct ib_qp_attr a = { .qp_state = st };
	int mask, ret;

	ret = ib_cm_init_qp_attr(s->cm, &a, &mask);
	if (ret)
		return ret;
	/* Before its REP the passive CM id has no rq_psn yet (cm.c sets
	 * it in ib_send_cm_rep); rdma_cm puts its own there (cma.c).
	 */
	if (mask & IB_QP_RQ_PSN && s == &t_pas)
		a.rq_psn = T_REP_PSN;
	if (mask & IB_QP_TIMEOUT && ack_timeout >= 0)
		a.timeout = ack_timeout;
	if (mask & IB_QP_ALT_PATH && ack_timeout >= 0)
		a.alt_timeout = ack_timeout;
	if (mask & IB_QP_ACCESS_FLAGS)
		a.qp_access_flags |= IB_ACCESS_REMOTE_READ |
				     IB_ACCESS_REMOTE_WRITE;
	return ib_modify_qp(s->qp, &a, mask);
}

/*
 * lap-qp-refuses: load the alternate ib_cm gives for RTS with a P_Key
 * index the port does not have: the HCA (simfab_rc.c, as a real one)
 * refuses the modify and the QP keeps what it had.
 */
static int t_cm_modify_bad_alt(struct t_side *s)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS };
	int mask, ret;

	ret = ib_cm_init_qp_attr(s->cm, &a, &mask);
	if (ret)
		return ret;
	if (!(mask & IB_QP_ALT_PATH))
		return -ENOENT;
	if (ack_timeout >= 0)
		a.alt_timeout = ack_timeout;
	a.alt_pkey_index = 0xffff;
	return ib_modify_qp(s->qp, &a, mask);
}

static int t_cm_handler(struct ib_cm_id *cm_id, const struct ib_cm_event *ev)
{
	struct t_side *s = cm_id->context;
	struct ib_cm_rep_param rep = {
		.starting_psn = T_REP_PSN, .responder_resources = 1,
		.initiator_depth = 1, .failover_accepted = 1,
		.flow_control = 1, .rnr_retry_count = 7,
	};
	int ret;

	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		/* The passive side; cm_id is the connection's new id. */
		s->cm = cm_id;
		rep.qp_num = s->qp->qp_num;
		ret = t_cm_modify(s, IB_QPS_INIT);
		if (!ret)
			ret = t_cm_modify(s, IB_QPS_RTR);
		/* lost-rtu: RTS only once established, as ib_srpt does */
		if (!ret && !t_pas_rts_at_rtu)
			ret = t_cm_modify(s, IB_QPS_RTS);
		if (!ret)
			t_post_recvs(s);
		if (!ret)
			ret = ib_send_cm_rep(cm_id, &rep);
		if (ret)
			t_step(s, ret);
		break;
	case IB_CM_REP_RECEIVED:
		ret = t_cm_modify(s, IB_QPS_RTR);
		if (!ret)
			ret = t_cm_modify(s, IB_QPS_RTS);
		if (!ret)
			ret = ib_send_cm_rtu(cm_id, NULL, 0);
		if (!ret)
			s->established = true;
		t_step(s, ret);
		break;
	case IB_CM_RTU_RECEIVED:
	case IB_CM_USER_ESTABLISHED:
		ret = 0;
		/* ib_srpt srpt_cm_rtu_recv(): RTS now */
		if (t_pas_rts_at_rtu && s == &t_pas)
			ret = t_cm_modify(s, IB_QPS_RTS);
		s->est_event = ev->event;
		pr_info("# %s %s established by %s ret=%d\n", t_case, s->name,
			ev->event == IB_CM_RTU_RECEIVED ? "rtu" : "comm-est",
			ret);
		s->established = !ret;
		t_step(s, ret);
		break;
	case IB_CM_DREQ_RECEIVED:
		if (s == &t_act && t_lap_slow_error) {
			/* lap-deaf: never while LAP_ERROR is being handled */
			if (atomic_read(&t_lap_in_error))
				t_lap_overlap = true;
			t_lap_dreq_seq = ++t_lap_seq;
		}
		ib_send_cm_drep(cm_id, NULL, 0);
		break;
	case IB_CM_LAP_RECEIVED:
		/* Load the alternate the LAP names, re-arm, answer. */
		s->lap_rcvd++;
		s->lap_dlid = be32_to_cpu(sa_path_get_dlid(ev->param.lap_rcvd.alternate_path));
		s->lap_sl = ev->param.lap_rcvd.alternate_path->sl;
		ret = t_cm_modify(s, IB_QPS_RTS);
		pr_info("# %s %s lap_rcvd dlid=%u sl=%u load=%d\n", t_case,
			s->name, s->lap_dlid, s->lap_sl, ret);
		if (t_apr_send)
			s->apr_sent = t_apr_send(cm_id, ret ? IB_CM_APR_REJECT :
						 IB_CM_APR_SUCCESS, NULL, 0,
						 NULL, 0);
		break;
	case IB_CM_APR_RECEIVED:
		s->apr_status = ev->param.apr_rcvd.ap_status;
		if (s->apr_status)
			ret = -EREMOTEIO;
		else if (t_lap_fail_load)
			ret = t_cm_modify_bad_alt(s);
		else
			ret = t_cm_modify(s, IB_QPS_RTS);
		/* Tell ib_cm whether the QP took the accepted alternate */
		if (!s->apr_status && t_lap_loaded)
			t_lap_loaded(cm_id, ret);
		pr_info("# %s %s apr status=%d load=%d\n", t_case, s->name,
			s->apr_status, ret);
		t_step(s, ret);
		break;
	case IB_CM_LAP_ERROR:
		s->lap_error++;
		pr_info("# %s %s lap_timeout send_status=%d\n", t_case, s->name,
			ev->param.send_status);
		if (s == &t_act && t_lap_slow_error) {
			atomic_inc(&t_lap_in_error);
			t_lap_err_seq = ++t_lap_seq;
			complete(&t_lap_err_started);
			msleep(4000);
			atomic_dec(&t_lap_in_error);
		}
		t_step(s, -ETIMEDOUT);
		break;
	case IB_CM_DREP_RECEIVED:
		s->drep = true;
		break;
	case IB_CM_REQ_ERROR:
		/* No REP after every try (cm.c cm_process_send_error) */
		s->req_send_status = ev->param.send_status;
		pr_info("# %s %s req_unanswered send_status=%d\n", t_case,
			s->name, ev->param.send_status);
		t_step(s, ev->param.send_status == IB_WC_RESP_TIMEOUT_ERR ?
			  -ETIMEDOUT : -EIO);
		break;
	case IB_CM_REJ_RECEIVED:
		s->rej_reason = ev->param.rej_rcvd.reason;
		pr_info("# %s %s rej_rcvd reason=%d\n", t_case, s->name,
			s->rej_reason);
		t_step(s, -ECONNREFUSED);
		break;
	case IB_CM_TIMEWAIT_EXIT:
	case IB_CM_DREQ_ERROR:
		break;
	default:
		pr_info("# %s %s ib_cm event %d\n", t_case, s->name, ev->event);
		t_step(s, -EIO);
		break;
	}
	return 0;
}

static void t_print_path(const char *what, struct sa_path_rec *r)
{
	pr_info("# %s %s dlid=%u slid=%u sl=%u mtu=%u rate=%u life=%u hop=%u flow=%u tclass=%u flags=0x%x\n",
		t_case, what, be32_to_cpu(sa_path_get_dlid(r)),
		be32_to_cpu(sa_path_get_slid(r)), r->sl, r->mtu, r->rate,
		r->packet_life_time, r->hop_limit, be32_to_cpu(r->flow_label),
		r->traffic_class, r->flags);
}

/* ib-routed's rdma_cm path-set calls, looked up (symbol_get) when used */
typedef int (*t_set_set_fn)(struct rdma_cm_id *id, struct sa_path_rec *path_rec,
			    const struct sa_path_rec *outbound,
			    const struct sa_path_rec *inbound);
typedef int (*t_set_alt_fn)(struct rdma_cm_id *id,
			    const struct sa_path_rec *alt,
			    const struct sa_path_rec *alt_inbound);

/*
 * The route of @a's id set by hand (ADDR_RESOLVED): the SA's forward path
 * (DLID pri_dlid when given), the passive side's own SA's return record
 * (DLID ret_dlid), and an alternate: the forward path with DLID alt_dlid
 * (another router) and the passive SA's return record (DLID
 * alt_ret_dlid when given), through rdma_set_ib_path_set() and
 * rdma_set_ib_alt_path().
 */
static int t_cma_set_paths(struct t_side *a, struct t_side *p)
{
	t_set_set_fn set_fn;
	t_set_alt_fn alt_fn;
	int err;

	err = t_path(a->dev, a->port, &a->gid, &p->gid, &t_pri);
	if (!err)
		err = t_path(p->dev, p->port, &p->gid, &a->gid, &t_pri_in);
	if (!err)
		err = t_path(p->dev, p->port, &p->gid, &a->gid, &t_alt_in);
	if (err)
		return err;
	if (pri_dlid)
		sa_path_set_dlid(&t_pri, pri_dlid);
	if (ret_dlid)
		sa_path_set_dlid(&t_pri_in, ret_dlid);
	t_pri_in.flags = IB_PATH_PRIMARY | IB_PATH_INBOUND;
	t_alt = t_pri;
	if (alt_dlid)
		sa_path_set_dlid(&t_alt, alt_dlid);
	if (alt_ret_dlid)
		sa_path_set_dlid(&t_alt_in, alt_ret_dlid);
	t_alt_in.flags = IB_PATH_ALTERNATE | IB_PATH_INBOUND;
	t_print_path("fwd", &t_pri);
	t_print_path("ret", &t_pri_in);
	t_print_path("alt-fwd", &t_alt);
	t_print_path("alt-ret", &t_alt_in);
	set_fn = (t_set_set_fn)__symbol_get("rdma_set_ib_path_set");
	alt_fn = (t_set_alt_fn)__symbol_get("rdma_set_ib_alt_path");
	if (set_fn && alt_fn) {
		err = set_fn(a->id, &t_pri, NULL, &t_pri_in);
		if (!err)
			err = alt_fn(a->id, &t_alt, &t_alt_in);
	} else {
		err = -EOPNOTSUPP;
	}
	pr_info("# %s set_paths api=%d ret=%d\n", t_case, set_fn && alt_fn, err);
	if (set_fn)
		__symbol_put("rdma_set_ib_path_set");
	if (alt_fn)
		__symbol_put("rdma_set_ib_alt_path");
	return err;
}

/*
 * ib_send_cm_req_alt_inbound() (ib-routed) through the symbol table, so
 * that this driver also builds and runs against an unpatched ib_cm
 * (without it a routed alternate goes through ib_send_cm_req()).
 */
typedef int (*t_req_alt_fn)(struct ib_cm_id *cm_id,
			    struct ib_cm_req_param *param,
			    struct sa_path_rec *alternate_path_inbound);

static int t_send_req(struct ib_cm_id *cm_id, struct ib_cm_req_param *req,
		      struct sa_path_rec *alt_in)
{
	t_req_alt_fn fn;
	int r;

	if (!alt_in)
		return ib_send_cm_req(cm_id, req);
	fn = (t_req_alt_fn)__symbol_get("ib_send_cm_req_alt_inbound");
	pr_info("# %s req via=%s\n", t_case,
		fn ? "ib_send_cm_req_alt_inbound" : "ib_send_cm_req");
	if (!fn)
		return ib_send_cm_req(cm_id, req);
	r = fn(cm_id, req, alt_in);
	__symbol_put("ib_send_cm_req_alt_inbound");
	return r;
}

/* act -> pas through ib_cm, with the SA's primary path (its DLID replaced
 * by pri_dlid when given) and, with @with_alt, an alternate from act_alt
 * to pas_alt (its DLID replaced by alt_dlid when given). With "ret", the
 * return records come from the passive side's own SA (pas -> act, as
 * ib_remote_sa would ask it), DLIDs replaced by ret_dlid/alt_ret_dlid.
 */
static int t_ibcm_connect(struct t_side *a, struct t_side *p, bool with_alt)
{
	struct sa_path_rec *pri_in = &t_pri_in, *alt_in = &t_alt_in;
	struct sa_path_rec *pri = &t_pri, *alt = &t_alt;
	struct ib_cm_req_param req = {
		.service_id = cpu_to_be64(T_SID), .qp_type = IB_QPT_RC,
		.starting_psn = 0x200, .responder_resources = 1,
		.initiator_depth = 1, .remote_cm_response_timeout = cm_timeout,
		.local_cm_response_timeout = cm_timeout, .flow_control = 1,
		.retry_count = retry, .rnr_retry_count = 7,
		.max_cm_retries = cm_retries,
	};
	struct ib_qp_attr at = {};
	struct ib_qp_init_attr qa;
	u16 pki;
	int ret, err;

	err = t_path(a->dev, a->port, &a->gid, &p->gid, pri);
	if (err)
		return err;
	if (pri_dlid)
		sa_path_set_dlid(pri, pri_dlid);
	t_print_path("fwd", pri);
	if (t_ret) {
		err = t_path(p->dev, p->port, &p->gid, &a->gid, pri_in);
		if (err)
			return err;
		if (ret_dlid)
			sa_path_set_dlid(pri_in, ret_dlid);
		pri_in->flags = IB_PATH_PRIMARY | IB_PATH_INBOUND;
		req.primary_path_inbound = pri_in;
		t_print_path("ret", pri_in);
	}
	if (with_alt) {
		err = t_path(a->alt_dev ?: a->dev, a->alt_port, &a->alt_gid,
			     &p->alt_gid, alt);
		if (err)
			return err;
		if (alt_dlid)
			sa_path_set_dlid(alt, alt_dlid);
		t_print_path("alt-fwd", alt);
		req.alternate_path = alt;
	}
	if (with_alt && t_ret) {
		err = t_path(p->alt_dev ?: p->dev, p->alt_port, &p->alt_gid,
			     &a->alt_gid, alt_in);
		if (err)
			return err;
		if (alt_ret_dlid)
			sa_path_set_dlid(alt_in, alt_ret_dlid);
		alt_in->flags = IB_PATH_ALTERNATE | IB_PATH_INBOUND;
		t_print_path("alt-ret", alt_in);
	}
	pr_info("# %s req pri_dlid=%u pri_sl=%u pri_hop=%u alt_dlid=%u alt_sl=%u alt_hop=%u\n",
		t_case, be32_to_cpu(sa_path_get_dlid(pri)), pri->sl,
		pri->hop_limit,
		with_alt ? be32_to_cpu(sa_path_get_dlid(alt)) : 0,
		with_alt ? alt->sl : 0, with_alt ? alt->hop_limit : 0);
	t_qp_init_attr(a, &qa);
	a->qp = ib_create_qp(a->pd, &qa);
	if (IS_ERR(a->qp))
		return PTR_ERR(a->qp);
	t_qp_init_attr(p, &qa);
	p->qp = ib_create_qp(p->pd, &qa);
	if (IS_ERR(p->qp))
		return PTR_ERR(p->qp);
	p->listen_cm = ib_create_cm_id(p->dev, t_cm_handler, p);
	if (IS_ERR(p->listen_cm)) {
		ret = PTR_ERR(p->listen_cm);
		p->listen_cm = NULL;
		return ret;
	}
	ret = ib_cm_listen(p->listen_cm, cpu_to_be64(T_SID));
	if (ret)
		return ret;
	/* The active QP to INIT by hand, as rdma_cm does (cma.c). */
	ret = ib_find_cached_pkey(a->dev, a->port, be16_to_cpu(pri->pkey), &pki);
	if (ret)
		return ret;
	at.qp_state = IB_QPS_INIT;
	at.pkey_index = pki;
	at.port_num = a->port;
	at.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(a->qp, &at, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	t_post_recvs(a);
	a->cm = ib_create_cm_id(a->dev, t_cm_handler, a);
	if (IS_ERR(a->cm)) {
		ret = PTR_ERR(a->cm);
		a->cm = NULL;
		return ret;
	}
	req.primary_path = pri;
	req.qp_num = a->qp->qp_num;
	if (t_lap_enable) {
		t_lap_enable(p->listen_cm);
		t_lap_enable(a->cm);
	}
	if (t_req_flap)
		t_ctl(fail_ctl);
	ret = t_send_req(a->cm, &req, with_alt && t_ret ? alt_in : NULL);
	pr_info("# %s send_req ret=%d\n", t_case, ret);
	if (!ret && t_req_flap && flap_ms > 0) {
		/* back before the CM's retry (timeout_ms, cm.c) */
		msleep(flap_ms);
		t_ctl(restore_ctl);
	}
	if (!ret)
		ret = t_wait_step(a);
	if (!ret && !t_no_pas_wait)
		ret = t_wait_step(p);
	return ret;
}

static void t_disconnect(struct t_side *a, struct t_side *p)
{
	if (a->id && a->established)
		rdma_disconnect(a->id);
	if (a->cm && a->established)
		ib_send_cm_dreq(a->cm, NULL, 0);
	msleep(50);
}

/* Migrate @s by request (IBA 17.2.8: Modify QP, path_mig_state MIGRATED). */
static int t_migrate(struct t_side *s)
{
	struct ib_qp_attr a = { .path_mig_state = IB_MIG_MIGRATED };

	return ib_modify_qp(s->qp, &a, IB_QP_PATH_MIG_STATE);
}

/*
 * Load the path @s had before migrating as its new alternate and re-arm
 * (IBA 17.2.8: Modify QP with the alternate path and REARM).
 */
static int t_rearm(struct t_side *s, const struct ib_qp_attr *old)
{
	struct ib_qp_attr a = {
		.alt_ah_attr = old->ah_attr, .alt_port_num = old->port_num,
		.alt_pkey_index = old->pkey_index, .alt_timeout = old->timeout,
		.path_mig_state = IB_MIG_REARM,
	};

	rdma_ah_set_port_num(&a.alt_ah_attr, old->port_num);
	return ib_modify_qp(s->qp, &a, IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE);
}

/* A simfab ctl command; '+' stands for a blank (module parameters). */
static int t_ctl(const char *cmd)
{
	char *buf = kstrdup(cmd, GFP_KERNEL), *c;
	int ret;

	if (!buf)
		return -ENOMEM;
	for (c = buf; *c; c++)
		if (*c == '+')
			*c = ' ';
	ret = *buf ? simfab_ctl(buf) : 0;
	kfree(buf);

	pr_info("# %s ctl \"%s\" ret=%d\n", t_case, cmd, ret);
	return ret;
}

/* ---- cases ---------------------------------------------------------------- */

static int t_setup(bool alternate)
{
	int ret = t_side_init(&t_act, act, alternate ? act_alt : NULL);

	if (!ret)
		ret = t_side_init(&t_pas, pas, alternate ? pas_alt : NULL);
	t_act.name = "act";
	t_pas.name = "pas";
	return ret;
}

static void t_teardown(void)
{
	int seen = atomic_read(&t_ctx_seen), bad = atomic_read(&t_ctx_bad);

	t_disconnect(&t_act, &t_pas);
	t_side_fini(&t_act);
	t_side_fini(&t_pas);
	/* every case with traffic: the QPs' context stayed the consumer's */
	if (seen) {
		pr_info("# %s qp_context checked=%d foreign=%d\n", t_case, seen,
			bad);
		t_result(!bad, "qp-context-consumers",
			 "a completion or QP event carried a qp_context that is not the consumer's");
	}
	atomic_set(&t_ctx_seen, 0);
	atomic_set(&t_ctx_bad, 0);
}

/*
 * A wrong address vector breaks the connection: the QP is drained
 * (RTS -> SQD), gets its AV with another DLID, SL or without the GRH (SQD ->
 * SQD, IBA 10.3), goes back to RTS and sends: a real HCA
 * and simfab then retry in vain (RETRY_EXC_ERR).
 */
static void t_wrong_av(struct t_side *s)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;
	int ret, st;

	ret = ib_query_qp(s->qp, &a, ~0, &init);
	if (!ret) {
		a.qp_state = IB_QPS_SQD;
		ret = ib_modify_qp(s->qp, &a, IB_QP_STATE);
	}
	if (wrong_dlid)
		rdma_ah_set_dlid(&a.ah_attr, wrong_dlid);
	if (wrong_nogrh)
		a.ah_attr.ah_flags &= ~IB_AH_GRH;
	if (wrong_sl >= 0)
		rdma_ah_set_sl(&a.ah_attr, wrong_sl);
	if (!ret)
		ret = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_AV);
	t_dump("wrong", s);
	a.qp_state = IB_QPS_RTS;
	if (!ret)
		ret = ib_modify_qp(s->qp, &a, IB_QP_STATE);
	t_result(!ret, "sqd-av-rts", "RTS -> SQD -> SQD (AV) -> RTS refused");
	st = ret ? -1 : t_send_status(s, 55, wait_ms);
	pr_info("# %s wrong send status=%d\n", t_case, st);
	t_result(st == IB_WC_RETRY_EXC_ERR, "wrong-av-breaks",
		 "a send with a wrong AV completed without RETRY_EXC_ERR");
}

/* rc: an rdma_cm connection, traffic both ways, RDMA WRITE and READ. */
static void t_case_rc(void)
{
	int ret = t_setup(false);

	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, false);
	t_result(!ret, "connect", "rdma_cm connection not established");
	if (!ret) {
		t_dump("conn", &t_act);
		t_dump("conn", &t_pas);
		t_traffic("act-to-pas", &t_act, &t_pas);
		t_traffic("pas-to-act", &t_pas, &t_act);
		t_rdma(&t_act, &t_pas);
		if (wrong_dlid || wrong_nogrh || wrong_sl >= 0)
			t_wrong_av(wrong_pas ? &t_pas : &t_act);
	}
	t_teardown();
}

/*
 * big: messages longer than the path MTU (4096 bytes and big_len) both
 * ways, SEND, RDMA WRITE and READ: simfab sends them in packets of the
 * QP's path MTU and drops any packet longer than a port's MTU on the way
 * (IB never fragments), so each completes only when the connection's
 * path MTU fits every link. Every byte is checked: the pattern depends on
 * the offset, so a segment out of place shows.
 */
static void t_big_fill(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 7 + (i >> 8) + seed);
}

static bool t_big_same(const u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (p[i] != (u8)(i * 7 + (i >> 8) + seed))
			return false;
	return true;
}

static int t_big_post(struct t_side *s, enum ib_wr_opcode op, u32 off,
		      u64 raddr, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(s->big + off), .length = len,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = op, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = t_peer_rkey(s),
	};

	return ib_post_send(s->qp, &wr.wr, NULL);
}

/* The send completion of the last post: its status, -1 if none came. */
static int t_big_done(struct t_side *s)
{
	struct ib_wc wc;

	return t_poll(s->scq, &wc, wait_ms) ? wc.status : -1;
}

static void t_big_result(const char *dir, const char *op, u32 len, int st,
			 bool ok)
{
	char name[64], why[96];

	pr_info("# %s %s %s len=%u status=%d data=%d\n", t_case, dir, op,
		len, st, ok);
	snprintf(name, sizeof(name), "%s-%s-%u", dir, op, len);
	snprintf(why, sizeof(why), "status %d (%s), data %s", st,
		 st >= 0 ? ib_wc_status_msg(st) : "none",
		 ok ? "intact" : "wrong or missing");
	t_result(st == IB_WC_SUCCESS && ok, name, why);
}

static void t_big_send(const char *dir, struct t_side *s, struct t_side *r,
		       u32 len)
{
	u8 seed = (u8)(len >> 8) ^ (s == &t_act ? 0x11 : 0x22);
	struct ib_wc wc;
	bool ok = false;
	int st;

	t_big_fill(s->big + T_BIG_SEND_OFF, len, seed);
	st = t_big_post(s, IB_WR_SEND, T_BIG_SEND_OFF, 0, len) ? -2 :
	     t_big_done(s);
	if (st == IB_WC_SUCCESS && t_poll(r->rcq, &wc, wait_ms)) {
		r->posted--;
		ok = wc.status == IB_WC_SUCCESS && wc.byte_len == len &&
		     t_big_same(r->big + (wc.wr_id % T_BIG_NRECV) * big_len,
				len, seed);
		t_post_recvs(r);
	}
	t_big_result(dir, "send", len, st, ok);
}

static void t_big_write_read(const char *dir, struct t_side *s,
			     struct t_side *r, u32 len)
{
	u64 raddr = (uintptr_t)(r->big + T_BIG_RDMA_OFF);
	u8 seed = (u8)(len >> 8) ^ (s == &t_act ? 0x33 : 0x44);
	int st;

	t_big_fill(s->big + T_BIG_SEND_OFF, len, seed);
	memset(r->big + T_BIG_RDMA_OFF, 0, len);
	st = t_big_post(s, IB_WR_RDMA_WRITE, T_BIG_SEND_OFF, raddr, len) ?
	     -2 : t_big_done(s);
	t_big_result(dir, "rdma-write", len, st,
		     t_big_same(r->big + T_BIG_RDMA_OFF, len, seed));
	seed ^= 0x5a;
	t_big_fill(r->big + T_BIG_RDMA_OFF, len, seed);
	memset(s->big + T_BIG_RDMA_OFF, 0, len);
	st = t_big_post(s, IB_WR_RDMA_READ, T_BIG_RDMA_OFF, raddr, len) ?
	     -2 : t_big_done(s);
	t_big_result(dir, "rdma-read", len, st,
		     t_big_same(s->big + T_BIG_RDMA_OFF, len, seed));
}

static void t_big_both(const char *dir, struct t_side *s, struct t_side *r)
{
	struct ib_qp_attr a = { .qp_access_flags = IB_ACCESS_REMOTE_WRITE |
						   IB_ACCESS_REMOTE_READ };
	u32 lens[] = { 4096, big_len };
	int i;

	/* rdma_cm's INIT grants no remote access (cma.c): RTS -> RTS. */
	ib_modify_qp(r->qp, &a, IB_QP_ACCESS_FLAGS);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		t_big_send(dir, s, r, lens[i]);
		t_big_write_read(dir, s, r, lens[i]);
	}
}

static void t_case_big(void)
{
	int ret;

	if (big_len < 4096 || big_len > 65536) {
		t_result(false, "big-len", "big_len is not 4096 to 65536");
		return;
	}
	ret = t_setup(false);
	if (!ret) {
		t_act.big = kvzalloc(T_BIG_BUF_LEN, GFP_KERNEL);
		t_pas.big = kvzalloc(T_BIG_BUF_LEN, GFP_KERNEL);
		if (!t_act.big || !t_pas.big)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = strcmp(big_cm, "ibcm") ?
		      t_cma_connect(&t_act, &t_pas, false) :
		      t_ibcm_connect(&t_act, &t_pas, false);
	t_result(!ret, "connect", "connection not established");
	if (!ret) {
		t_dump("conn", &t_act);
		t_dump("conn", &t_pas);
		if (big_lost) {
			int st;

			/* The packets the link cannot carry are dropped:
			 * the sender retries retry_cnt times in vain.
			 */
			t_big_fill(t_act.big + T_BIG_SEND_OFF, big_len, 1);
			st = t_big_post(&t_act, IB_WR_SEND, T_BIG_SEND_OFF, 0,
					big_len) ? -2 : t_big_done(&t_act);
			pr_info("# %s lost status=%d\n", t_case, st);
			t_result(st == IB_WC_RETRY_EXC_ERR, "send-lost",
				 "a SEND whose packets exceed a link's MTU did not end in RETRY_EXC_ERR");
		} else {
			t_big_both("act-to-pas", &t_act, &t_pas);
			t_big_both("pas-to-act", &t_pas, &t_act);
		}
	}
	t_teardown();
}

/*
 * link-down: an rdma_cm connection without an alternate; the primary path
 * breaks (fail_ctl); what a real HCA does (IBA 9.7.6, 10.3.1): the
 * send completes with RETRY_EXC_ERR after retry_cnt retries, the QP is in
 * Error, posted receives and later WRs complete flushed.
 */
static void t_case_link_down(void)
{
	struct ib_wc wc = {};
	int ret = t_setup(false), st, flushed;
	bool got;

	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, false);
	t_result(!ret, "connect", "rdma_cm connection not established");
	if (ret)
		goto out;
	t_traffic("before", &t_act, &t_pas);
	t_dump("before", &t_act);
	t_ctl(fail_ctl);
	st = t_send_status(&t_act, 77, wait_ms);
	pr_info("# %s send status=%d (%s)\n", t_case, st,
		st >= 0 ? ib_wc_status_msg(st) : "none");
	t_result(st == IB_WC_RETRY_EXC_ERR, "retry-exc-err",
		 "want IB_WC_RETRY_EXC_ERR for the send");
	t_result(t_qp_state(&t_act) == IB_QPS_ERR, "qp-err",
		 "want the QP in the ERR state");
	flushed = t_recv_flushed(&t_act);
	pr_info("# %s recv flushed=%d\n", t_case, flushed);
	t_result(flushed == T_NRECV, "recv-flushed",
		 "want every posted receive flushed");
	got = !t_send_one(&t_act, IB_WR_SEND, 0, 64, 78) &&
	      t_poll(t_act.scq, &wc, 1000);
	t_result(got && wc.status == IB_WC_WR_FLUSH_ERR && wc.wr_id == 78,
		 "post-after-err-flushed",
		 "want a later send completed with WR_FLUSH_ERR");
	t_dump("after", &t_act);
	t_ctl(restore_ctl);
out:
	t_teardown();
}

/*
 * apm-manual / apm-auto: an ib_cm connection with an alternate path,
 * armed on both sides after traffic; then a migration requested on the
 * active side (manual) or forced by breaking the primary path under
 * traffic (auto: fail_ctl); traffic on the alternate, PATH_MIG events,
 * and a re-arm with the old primary as the new alternate.
 */
static void t_case_apm(bool automatic)
{
	struct ib_qp_attr oa, op;
	struct ib_qp_init_attr init;
	ktime_t t0, t1, t2;
	int ret = t_setup(true);

	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, true);
	t_result(!ret, "connect", "ib_cm connection not established");
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_dump("before", &t_act);
	t_dump("before", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "armed",
		 "want both QPs ARMED (IBA 17.2.8)");
	ib_query_qp(t_act.qp, &oa, ~0, &init);
	ib_query_qp(t_pas.qp, &op, ~0, &init);
	/* make bench: from the failure to traffic through on the alternate */
	t0 = ktime_get();
	if (automatic)
		t_ctl(fail_ctl);
	else
		t_result(!t_migrate(&t_act), "migrate-request",
			 "modify_qp path_mig_state=MIGRATED refused");
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t1 = ktime_get();
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
	t_result(atomic_read(&t_act.path_mig) == 1 &&
		 atomic_read(&t_pas.path_mig) == 1, "path-mig-events",
		 "want one IB_EVENT_PATH_MIG on each side");
	t_result(t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated",
		 "want both QPs MIGRATED");
	if (automatic)
		t_ctl(restore_ctl);
	/* Re-arm: the old primary is the new alternate on both sides. */
	t2 = ktime_get();
	t_result(!t_rearm(&t_act, &oa) && !t_rearm(&t_pas, &op), "rearm",
		 "modify_qp with an alternate and REARM refused");
	t_traffic("rearmed-act-to-pas", &t_act, &t_pas);
	t_traffic("rearmed-pas-to-act", &t_pas, &t_act);
	/* ... and from the re-arm to both QPs ARMED again (after traffic) */
	pr_info("# %s timing to_alt_ns=%lld rearm_ns=%lld msgs=%d\n", t_case,
		ktime_to_ns(ktime_sub(t1, t0)),
		ktime_to_ns(ktime_sub(ktime_get(), t2)), msgs);
	t_dump("rearmed", &t_act);
	t_dump("rearmed", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "rearmed",
		 "want both QPs ARMED again");
out:
	t_teardown();
}

/*
 * apm-dreq: an ib_cm connection with an alternate, its primary fails under
 * traffic (fail_ctl) and both QPs migrate; then, the primary still down,
 * the active side disconnects. With cm_notify=N nobody told ib_cm of the
 * migration, as kernel ULPs tell it nothing: the DREQ first goes to the
 * failed primary, and after its retries ib_cm sends it again on the
 * alternate; the passive side, whose DREQ came over its alternate path,
 * answers there. The active side must get the DREP.
 */
static void t_case_apm_dreq(void)
{
	int ret = t_setup(true), i;

	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, true);
	t_result(!ret, "connect", "ib_cm connection not established");
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_dump("before", &t_act);
	t_dump("before", &t_pas);
	t_ctl(fail_ctl);
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated",
		 "want both QPs MIGRATED");
	t_result(!ib_send_cm_dreq(t_act.cm, NULL, 0), "dreq-sent",
		 "ib_send_cm_dreq() failed");
	t_act.established = false;
	for (i = 0; i < wait_ms / 100 && !t_act.drep; i++)
		msleep(100);
	pr_info("# %s dreq drep=%d after_ms=%d\n", t_case, t_act.drep, i * 100);
	t_result(t_act.drep, "drep-after-migration",
		 "no DREP after the migration: the DREQ or the DREP went to the old primary, down");
	t_ctl(restore_ctl);
out:
	t_teardown();
}

/*
 * cma-apm: an rdma_cm connection whose route is a path record set with an
 * alternate through another router (ib-routed), the primary router fails
 * under traffic (fail_ctl): both QPs migrate, the consumer's QP event
 * handler sees PATH_MIG with its own context, and its rdma_notify() tells
 * ib_cm: the DREQ then goes through the alternate and reaches the passive
 * side. With cma_notify=N nobody tells rdma_cm, as kernel ULPs do not:
 * rdma_cm reads the migration from the QP it created before the DREQ
 * goes, and the DREQ takes the alternate all the same. Both sides'
 * completions carry the consumer's qp_context (the passive id's route has
 * the REQ's alternate).
 */
static void t_case_cma_apm(void)
{
	int ret = t_setup(false), i;

	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, true);
	t_result(!ret, "connect", "rdma_cm connection with a path set not established");
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_dump("before", &t_act);
	t_dump("before", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "armed",
		 "want both QPs ARMED with the set's alternate");
	t_ctl(fail_ctl);
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
	t_result(atomic_read(&t_act.path_mig) == 1 &&
		 atomic_read(&t_pas.path_mig) == 1, "path-mig-events",
		 "want one IB_EVENT_PATH_MIG at each consumer's handler");
	t_result(t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated",
		 "want both QPs MIGRATED");
	rdma_disconnect(t_act.id);
	t_act.established = false;
	for (i = 0; i < 50 && !t_pas.disconnected; i++)
		msleep(100);
	pr_info("# %s dreq after_ms=%d\n", t_case, i * 100);
	/*
	 * Told or not (rdma_cm never takes over the QP's event handler or
	 * context; it reads the state of the QP it created), the DREQ
	 * takes the path the QPs are on.
	 */
	t_result(t_pas.disconnected, "dreq-after-migration",
		 cma_notify ? "no DREQ reached the passive side after the migration (ib_cm told)" :
		 "no DREQ reached the passive side after the migration: rdma_cm did not follow the QP it created");
	t_ctl(restore_ctl);
out:
	t_teardown();
}

/*
 * alt-routed: an ib_cm connection across a router whose alternate path
 * goes through another router (alt_dlid). Without return records ("ret")
 * ib_send_cm_req() sends it as 6.1 does (permissive alternate LIDs; the
 * passive side's LRH fix-up arms the alternate with the first router's
 * LID): existing callers connect as before. With them, the passive side's
 * alternate is whatever ib_cm made of the REQ; after a requested
 * migration the test reports what happens to traffic. With
 * alt_ret_dlid=0xffff (a return record that names no router port) the REQ
 * must be refused. The guest test judges.
 */
static void t_case_alt_routed(void)
{
	struct ib_wc wc = {};
	int ret = t_setup(true), st;
	bool got;

	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, true);
	if (t_ret && alt_ret_dlid == 0xffff) {
		/*
		 * A return record naming no router port (as rdma_cm keeps
		 * the primary's): the passive side would arm the alternate
		 * with the REQ's router, the primary's. Refused, no REQ.
		 */
		pr_info("# %s permissive-return ret=%d pas_req=%d\n", t_case,
			ret, !!t_pas.cm);
		t_result(ret == -EINVAL, "permissive-return-refused",
			 "ib_send_cm_req_alt_inbound() took an alternate return record with a permissive DLID");
		t_result(t_act.cm && t_act.cm->state == IB_CM_IDLE, "id-idle",
			 "the refused REQ left the cm_id out of IB_CM_IDLE");
		t_result(!t_pas.cm, "pas-no-req",
			 "a REQ reached the passive side");
		goto out;
	}
	if (!t_ret) {
		t_result(!ret, "connect-without-return",
			 "ib_send_cm_req() with a routed alternate and no return record did not connect, as 6.1 does");
		if (!ret) {
			t_dump("noret", &t_act);
			t_dump("noret", &t_pas);
		}
		goto out;
	}
	t_result(!ret, "connect", "ib_cm connection not established");
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_dump("before", &t_act);
	t_dump("before", &t_pas);
	ret = t_migrate(&t_act);
	pr_info("# %s migrate ret=%d\n", t_case, ret);
	got = !t_send_one(&t_act, IB_WR_SEND, 0, 64, 99) &&
	      t_poll(t_act.scq, &wc, wait_ms);
	st = got ? wc.status : -1;
	pr_info("# %s after send status=%d (%s)\n", t_case, st,
		got ? ib_wc_status_msg(st) : "none");
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
out:
	t_teardown();
}

/*
 * ibcm: an ib_cm connection without an alternate (across a router: with
 * the return record when "ret"), traffic both ways, RDMA WRITE and READ.
 */
static void t_case_ibcm(void)
{
	int ret = t_setup(false);

	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, false);
	t_result(!ret, "connect", "ib_cm connection not established");
	if (!ret) {
		t_dump("conn", &t_act);
		t_dump("conn", &t_pas);
		t_traffic("act-to-pas", &t_act, &t_pas);
		t_traffic("pas-to-act", &t_pas, &t_act);
		t_rdma(&t_act, &t_pas);
	}
	t_teardown();
}

/*
 * lost-rtu: an ib_cm connection whose passive side keeps its QP in RTR
 * until it is established, as ib_srpt does (RTS in srpt_cm_rtu_recv(),
 * on IB_CM_RTU_RECEIVED or IB_CM_USER_ESTABLISHED); fail_ctl loses the
 * RTU. The active side sends at once: the passive QP, still in RTR,
 * takes the SEND and raises IB_EVENT_COMM_EST (IBA 11.6.3), the QP
 * event handler calls ib_cm_notify() (t_qp_event) and ib_cm establishes
 * the connection without the RTU (cm.c cm_establish); then RTS and
 * traffic both ways.
 */
static void t_case_lost_rtu(void)
{
	struct ib_wc wc = {};
	int ret = t_setup(false), st, pst;
	bool got, est0;

	t_pas_rts_at_rtu = true;
	t_no_pas_wait = true;
	if (!ret)
		ret = t_ctl(fail_ctl);
	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, false);
	t_no_pas_wait = false;
	t_result(!ret, "connect", "ib_cm REQ/REP not done");
	if (ret)
		goto out;
	/* At once: the RTU is lost, the passive side still in RTR */
	pst = t_qp_state(&t_pas);
	est0 = t_pas.established;
	got = !t_send_one(&t_act, IB_WR_SEND, 0, T_MSG, 91) &&
	      t_poll(t_act.scq, &wc, wait_ms);
	st = got ? wc.status : -1;
	pr_info("# %s first send status=%d pas_state_before=%d\n", t_case, st,
		pst);
	t_result(pst == IB_QPS_RTR && !est0,
		 "passive-rtr-before-data",
		 "the passive QP was not in RTR (or already established) when the data came");
	t_result(st == IB_WC_SUCCESS, "first-send-acked-in-rtr",
		 "the first SEND to the passive QP in RTR did not complete");
	got = t_poll(t_pas.rcq, &wc, wait_ms);
	if (got)
		t_pas.posted--;
	t_result(got && wc.status == IB_WC_SUCCESS && wc.byte_len == T_MSG,
		 "first-send-received", "the passive side got no receive completion");
	ret = t_wait_step(&t_pas);
	pr_info("# %s pas established=%d ret=%d by=%d comm_est=%d act_comm_est=%d\n",
		t_case, t_pas.established, ret, t_pas.est_event,
		atomic_read(&t_pas.comm_est), atomic_read(&t_act.comm_est));
	t_result(atomic_read(&t_pas.comm_est) == 1, "passive-comm-est-event",
		 "want one IB_EVENT_COMM_EST at the passive QP");
	t_result(!ret && t_pas.est_event == IB_CM_USER_ESTABLISHED,
		 "passive-established-by-comm-est",
		 "the passive side was not established by IB_CM_USER_ESTABLISHED (ib_cm_notify)");
	t_result(atomic_read(&t_act.comm_est) == 0, "active-no-comm-est",
		 "the active QP, in RTS before any packet came, raised COMM_EST");
	t_dump("est", &t_act);
	t_dump("est", &t_pas);
	t_result(t_qp_state(&t_pas) == IB_QPS_RTS, "passive-rts",
		 "the passive QP did not reach RTS");
	t_traffic("act-to-pas", &t_act, &t_pas);
	t_traffic("pas-to-act", &t_pas, &t_act);
out:
	t_pas_rts_at_rtu = false;
	t_ctl(restore_ctl);
	t_teardown();
}

/*
 * mig-err: apm-manual's connection, but the active side's alternate
 * (alt_dlid) is not the path the passive side armed: a stale alternate.
 * Both ARMED after traffic, the active migrates on request and sends
 * with MigReq set to a port that is not the passive QP's alternate: the
 * passive QP refuses the migration, raises IB_EVENT_PATH_MIG_ERR and goes
 * to Error (IBA 11.6.3, 17.2.8); the active send ends in
 * RETRY_EXC_ERR.
 */
static void t_case_mig_err(void)
{
	int ret = t_setup(true), st, flushed;

	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, true);
	t_result(!ret, "connect", "ib_cm connection not established");
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_dump("before", &t_act);
	t_dump("before", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "armed",
		 "want both QPs ARMED (IBA 17.2.8)");
	t_result(!t_migrate(&t_act), "migrate-request",
		 "modify_qp path_mig_state=MIGRATED refused");
	st = t_send_status(&t_act, 93, wait_ms);
	pr_info("# %s send status=%d mig_err=%d/%d path_mig=%d/%d\n", t_case,
		st, atomic_read(&t_act.mig_err), atomic_read(&t_pas.mig_err),
		atomic_read(&t_act.path_mig), atomic_read(&t_pas.path_mig));
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
	t_result(atomic_read(&t_pas.mig_err) == 1, "passive-path-mig-err",
		 "want one IB_EVENT_PATH_MIG_ERR at the passive QP");
	t_result(atomic_read(&t_pas.path_mig) == 0 &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "passive-not-migrated",
		 "the passive QP migrated to a path the request did not come on");
	t_result(t_qp_state(&t_pas) == IB_QPS_ERR, "passive-qp-err",
		 "want the passive QP in Error (an affiliated asynchronous error)");
	flushed = t_recv_flushed(&t_pas);
	pr_info("# %s pas recv flushed=%d\n", t_case, flushed);
	t_result(flushed == T_NRECV, "passive-recv-flushed",
		 "want every posted receive of the passive QP flushed");
	t_result(st == IB_WC_RETRY_EXC_ERR && atomic_read(&t_act.mig_err) == 0,
		 "active-retry-exc-err",
		 "want RETRY_EXC_ERR for the active send and no PATH_MIG_ERR there");
out:
	t_teardown();
}

/*
 * rkey: R_Key checks at the responder (IBA 10.6, 9.7.5.2; rxe
 * check_rkey): the passive side registers T_MSG bytes of its buffer
 * with fast registration (ib_alloc_mr, ib_map_mr_sg, IB_WR_REG_MR), and
 * the active side does one RDMA op on it per connection: with the right
 * key inside the range (WRITE and READ complete, the data arrives),
 * with a stale key, past the end of the range, without the access the
 * op needs, and with a key of another PD. Each bad one: the active WC
 * is REM_ACCESS_ERR, both QPs go to Error, the memory is untouched.
 */
struct t_rk {
	const char *name;
	int access;		/* the MR's remote access */
	bool read;		/* RDMA READ, else WRITE */
	u32 key_xor;		/* a stale key: another key byte */
	u32 off;		/* from the MR's start */
	bool other_pd;		/* the active side's own PD's DMA MR key */
	bool send_inv;		/* a SEND with Invalidate of the key first */
};

#define T_RK_RW	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

static const struct t_rk t_rks[] = {
	{ "good", T_RK_RW },
	{ "wrong-rkey", T_RK_RW, false, 0x01 },
	{ "too-long", T_RK_RW, false, 0, T_MSG / 2 },
	{ "too-long-read", T_RK_RW, true, 0, T_MSG / 2 },
	{ "no-remote-write", IB_ACCESS_REMOTE_READ },
	{ "no-remote-read", IB_ACCESS_REMOTE_WRITE, true },
	{ "other-pd", T_RK_RW, false, 0, 0, true },
	{ "invalidated", T_RK_RW, false, 0, 0, false, true },
};

/*
 * SEND with Invalidate (IBA 9.4.1, 10.6; rxe invalidate_rkey): a SEND
 * naming @rkey in its IETH; the receive completion must say so
 * (IB_WC_WITH_INVALIDATE, ex.invalidate_rkey), the MR then answers to
 * no key.
 */
static bool t_send_inv(u32 rkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(t_act.buf + T_SEND_OFF), .length = 64,
		.lkey = t_act.pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 0x1e7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND_WITH_INV, .send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};
	struct ib_wc wc = {}, rwc = {};

	if (ib_post_send(t_act.qp, &wr, NULL) ||
	    !t_poll(t_act.scq, &wc, wait_ms) || wc.status != IB_WC_SUCCESS ||
	    !t_poll(t_pas.rcq, &rwc, wait_ms))
		return false;
	t_pas.posted--;
	pr_info("# %s send-inv status=%d flags=0x%x invalidate_rkey=0x%x\n",
		t_case, rwc.status, rwc.wc_flags, rwc.ex.invalidate_rkey);
	return rwc.status == IB_WC_SUCCESS &&
	       (rwc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	       rwc.ex.invalidate_rkey == rkey;
}

/* Register T_MSG bytes at @s->buf + T_RDMA_OFF with @access; 0 or -err. */
static int t_frwr(struct t_side *s, int access, struct ib_mr **out,
		  struct scatterlist *sg)
{
	struct ib_reg_wr wr = {};
	struct ib_mr *mr;
	struct ib_wc wc;
	int n;

	mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, 2);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	*out = mr;
	sg_init_one(sg, s->buf + T_RDMA_OFF, T_MSG);
	if (ib_dma_map_sg(s->dev, sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -EIO;
	n = ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EIO;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_id = 0x4e6;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access | IB_ACCESS_LOCAL_WRITE;
	if (ib_post_send(s->qp, &wr.wr, NULL))
		return -EINVAL;
	if (!t_poll(s->scq, &wc, wait_ms))
		return -ETIMEDOUT;
	return wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_REG_MR ?
	       0 : -EIO;
}

static int t_rk_op(struct t_side *s, bool read, u64 raddr, u32 rkey, u64 id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(s->buf + (read ? T_RDMA_OFF : T_SEND_OFF)),
		.length = T_MSG, .lkey = s->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = id, .sg_list = &sge, .num_sge = 1,
			.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr, .rkey = rkey,
	};
	struct ib_wc wc;

	if (ib_post_send(s->qp, &wr.wr, NULL))
		return -2;
	return t_poll(s->scq, &wc, wait_ms) ? wc.status : -1;
}

static bool t_all(const u8 *p, u8 v, u32 len)
{
	return !memchr_inv(p, v, len);
}

static void t_rk_one(const struct t_rk *k)
{
	const char *saved = t_case;
	struct scatterlist sg;
	struct ib_mr *mr = NULL;
	char name[64], tag[48];
	u32 rkey;
	u64 raddr;
	int ret, st, st2 = IB_WC_SUCCESS;
	bool good = !strcmp(k->name, "good"), mem;

	snprintf(tag, sizeof(tag), "rkey-%s", k->name);
	t_case = tag;
	ret = t_setup(false);
	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, false);
	if (!ret)
		ret = t_frwr(&t_pas, k->access, &mr, &sg);
	snprintf(name, sizeof(name), "%s-connect-register", k->name);
	t_case = saved;
	t_result(!ret, name, "connection or fast registration failed");
	t_case = tag;
	if (ret)
		goto out;
	rkey = (k->other_pd ? t_act.pd->unsafe_global_rkey : mr->rkey) ^
	       k->key_xor;
	raddr = mr->iova + k->off;
	pr_info("# %s mr iova=0x%llx length=%llu rkey=0x%x access=0x%x op=%s raddr=+%u rkey_used=0x%x\n",
		t_case, mr->iova, mr->length, mr->rkey, k->access,
		k->read ? "read" : "write", k->off, rkey);
	if (k->send_inv) {
		t_case = saved;
		t_result(t_send_inv(rkey), "invalidated-recv-with-invalidate",
			 "the receive completion does not name the invalidated R_Key");
		t_case = tag;
	}
	memset(t_pas.buf + T_RDMA_OFF, 0x11, T_MSG);
	memset(t_act.buf + T_SEND_OFF, 0xa7, T_MSG);
	memset(t_act.buf + T_RDMA_OFF, 0, T_MSG);
	st = t_rk_op(&t_act, k->read, raddr, rkey, 0x77);
	if (good) {
		mem = t_all(t_pas.buf + T_RDMA_OFF, 0xa7, T_MSG);
		memset(t_pas.buf + T_RDMA_OFF, 0x3c, T_MSG);
		st2 = t_rk_op(&t_act, true, raddr, rkey, 0x78);
		mem = mem && t_all(t_act.buf + T_RDMA_OFF, 0x3c, T_MSG);
	} else {
		mem = t_all(t_pas.buf + T_RDMA_OFF, 0x11, T_MSG) &&
		      t_all(t_act.buf + T_RDMA_OFF, 0, T_MSG);
	}
	pr_info("# %s status=%d status2=%d act_state=%d pas_state=%d mem=%d\n",
		t_case, st, st2, t_qp_state(&t_act), t_qp_state(&t_pas), mem);
	t_case = saved;
	if (good) {
		t_result(st == IB_WC_SUCCESS && st2 == IB_WC_SUCCESS && mem,
			 "good-write-read",
			 "RDMA WRITE and READ with the registered key failed");
		t_result(t_qp_state(&t_act) == IB_QPS_RTS &&
			 t_qp_state(&t_pas) == IB_QPS_RTS, "good-qps-rts",
			 "a good RDMA op moved a QP out of RTS");
	} else {
		snprintf(name, sizeof(name), "%s-rem-access-err", k->name);
		t_result(st == IB_WC_REM_ACCESS_ERR, name,
			 "want IB_WC_REM_ACCESS_ERR at the requester");
		snprintf(name, sizeof(name), "%s-both-qps-err", k->name);
		t_result(t_qp_state(&t_act) == IB_QPS_ERR &&
			 t_qp_state(&t_pas) == IB_QPS_ERR, name,
			 "want both QPs in Error");
		snprintf(name, sizeof(name), "%s-memory-untouched", k->name);
		t_result(mem, name, "the refused op read or wrote memory");
	}
	t_case = tag;
out:
	if (!IS_ERR_OR_NULL(mr)) {
		ib_dma_unmap_sg(t_pas.dev, &sg, 1, DMA_BIDIRECTIONAL);
		ib_dereg_mr(mr);
	}
	t_teardown();
	t_case = saved;
}

static void t_case_rkey(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(t_rks); i++)
		t_rk_one(&t_rks[i]);
}

/* ---- LAP/APR (ib-routed) ------------------------------------------------- */

static bool t_lap_get(void)
{
	t_lap_enable = __symbol_get("ib_cm_enable_lap");
	t_lap_send = __symbol_get("ib_send_cm_lap");
	t_apr_send = __symbol_get("ib_send_cm_apr");
	t_lap_loaded = __symbol_get("ib_cm_lap_loaded");
	return t_lap_enable && t_lap_send && t_apr_send;
}

static void t_lap_put(void)
{
	if (t_lap_enable)
		__symbol_put("ib_cm_enable_lap");
	if (t_lap_send)
		__symbol_put("ib_send_cm_lap");
	if (t_apr_send)
		__symbol_put("ib_send_cm_apr");
	if (t_lap_loaded)
		__symbol_put("ib_cm_lap_loaded");
	t_lap_loaded = NULL;
	t_lap_enable = NULL;
	t_lap_send = NULL;
	t_apr_send = NULL;
}

static void t_raw_sent(struct ib_mad_agent *agent,
		       struct ib_mad_send_wc *wc)
{
	rdma_destroy_ah(wc->send_buf->ah, 0);
	ib_free_send_mad(wc->send_buf);
}

static void t_put_be(u8 *p, u64 v, int n)
{
	while (n--) {
		p[n] = v & 0xff;
		v >>= 8;
	}
}

/*
 * Send one hand-made CM message (LAP or APR) from @s's port to the
 * peer's QP1 over @path, with a send-only MAD agent: what a broken or
 * hostile peer could send. @qpn_delta shifts the LAP's Remote QPN,
 * @comm the communication IDs (0: the connection's).
 */
static void t_raw_cm(const char *what, struct t_side *s, struct t_side *r,
		     struct sa_path_rec *path, struct sa_path_rec *ret_rec,
		     __be16 attr, u32 qpn_delta, u32 comm)
{
	struct ib_mad_agent *agent;
	struct ib_mad_send_buf *msg;
	struct rdma_ah_attr ah_attr;
	struct ib_ah *ah = NULL;
	struct ib_mad *mad;
	u16 pki = 0;
	u8 *d;
	int err;

	agent = ib_register_mad_agent(s->dev, s->port, IB_QPT_GSI, NULL, 0,
				      t_raw_sent, NULL, NULL, 0);
	if (IS_ERR(agent)) {
		pr_info("# %s raw %s agent=%ld\n", t_case, what,
			PTR_ERR(agent));
		return;
	}
	err = ib_init_ah_attr_from_path(s->dev, s->port, path, &ah_attr, NULL);
	if (!err) {
		ah = rdma_create_ah(agent->qp->pd, &ah_attr, 0);
		rdma_destroy_ah_attr(&ah_attr);
		if (IS_ERR(ah)) {
			err = PTR_ERR(ah);
			ah = NULL;
		}
	}
	ib_find_cached_pkey(s->dev, s->port, 0xffff, &pki);
	msg = err ? NULL : ib_create_send_mad(agent, 1, pki, 0, IB_MGMT_MAD_HDR,
					      IB_MGMT_MAD_DATA, GFP_KERNEL,
					      IB_MGMT_BASE_VERSION);
	if (IS_ERR_OR_NULL(msg)) {
		pr_info("# %s raw %s err=%d\n", t_case, what, err);
		goto out;
	}
	mad = msg->mad;
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = IB_MGMT_CLASS_CM;
	mad->mad_hdr.class_version = 2;
	mad->mad_hdr.method = IB_MGMT_METHOD_SEND;
	mad->mad_hdr.attr_id = attr;
	mad->mad_hdr.tid = cpu_to_be64(0x5346000000000000ULL | t_num);
	d = mad->data;		/* CM message byte 0 */
	t_put_be(d, comm ?: be32_to_cpu(s->cm->local_id), 4);
	t_put_be(d + 4, comm ?: be32_to_cpu(s->cm->remote_id), 4);
	if (attr == cpu_to_be16(0x0019)) {	/* LAP, IBA 12.6.12 */
		t_put_be(d + 12, r->qp->qp_num + qpn_delta, 3);
		d[15] = 20 << 3;
		t_put_be(d + 20, be16_to_cpu(ret_rec->ib.dlid), 2);
		t_put_be(d + 22, be16_to_cpu(ret_rec->ib.slid), 2);
		memcpy(d + 24, path->sgid.raw, 16);
		memcpy(d + 40, path->dgid.raw, 16);
		d[59] = ret_rec->traffic_class;
		d[60] = ret_rec->hop_limit;
		d[61] = path->rate & 0x3f;
		d[62] = ret_rec->sl << 4;	/* SubnetLocal 0 */
		d[63] = (path->packet_life_time + 1) << 3;
	}
	msg->ah = ah;
	msg->timeout_ms = 0;
	err = ib_post_send_mad(msg, NULL);
	pr_info("# %s raw %s sent=%d\n", t_case, what, err);
	if (err) {
		ib_free_send_mad(msg);
	} else {
		ah = NULL;	/* t_raw_sent() destroys it */
		msleep(300);	/* sent and answered before the agent goes */
	}
out:
	if (ah)
		rdma_destroy_ah(ah, 0);
	ib_unregister_mad_agent(agent);
}

/*
 * The LAP cases' start: both sides set up with their alternate ports, the
 * ib-routed LAP/APR calls looked up, and an ib_cm connection with an
 * alternate. 0, or the case is over (its results said).
 */
static int t_lap_connect(void)
{
	int ret = t_setup(true);

	if (!t_lap_get()) {
		t_result(false, "lap-api", "ib_cm has no LAP/APR calls");
		return -EOPNOTSUPP;
	}
	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, true);
	t_result(!ret, "connect", "ib_cm connection not established");
	return ret;
}

/*
 * lap: a routed ib_cm connection with return records (as apm-auto on the
 * routed topology), the primary router fails under traffic (fail_ctl),
 * both QPs migrate, the router comes back (restore_ctl), and a LAP loads
 * the old primary (t_pri with its return record) as the new alternate on
 * both sides; traffic re-arms them. Then hand-made LAP/APR that the CM
 * must refuse: a LAP naming another QP, one for no connection, an APR
 * with no LAP outstanding (the guest test reads cm_rx_rejected).
 */
static void t_case_lap(void)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;
	int ret;

	ret = t_lap_connect();
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_ctl(fail_ctl);
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_result(atomic_read(&t_act.path_mig) == 1 &&
		 atomic_read(&t_pas.path_mig) == 1 &&
		 t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated",
		 "want one PATH_MIG on each side and both QPs MIGRATED");
	t_dump("migrated", &t_act);
	t_dump("migrated", &t_pas);
	t_ctl(restore_ctl);

	/* The LAP: the old primary, with its return record, as alternate */
	ret = t_lap_send(t_act.cm, &t_pri, &t_pri_in, NULL, 0);
	pr_info("# %s lap send=%d\n", t_case, ret);
	t_result(!ret, "lap-send", "ib_send_cm_lap failed");
	if (!ret)
		ret = t_wait_step(&t_act);
	t_result(!ret && t_act.apr_status == IB_CM_APR_SUCCESS &&
		 t_pas.lap_rcvd == 1 && !t_pas.apr_sent, "lap-apr",
		 "want one LAP_RECEIVED on the passive side and an APR with status 0");
	t_traffic("lapped-act-to-pas", &t_act, &t_pas);
	t_traffic("lapped-pas-to-act", &t_pas, &t_act);
	t_dump("lapped", &t_act);
	t_dump("lapped", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "lap-rearmed",
		 "want both QPs ARMED with the LAP's alternate");

	/* Malformed and out-of-state LAP/APR; the connection goes on */
	if (!ib_query_qp(t_act.qp, &a, IB_QP_STATE, &init)) {
		t_raw_cm("lap-bad-qpn", &t_act, &t_pas, &t_pri, &t_pri_in,
			 cpu_to_be16(0x0019), 1000, 0);
		t_raw_cm("lap-no-conn", &t_act, &t_pas, &t_pri, &t_pri_in,
			 cpu_to_be16(0x0019), 0, 0x5346a1a1);
		t_raw_cm("apr-no-lap", &t_act, &t_pas, &t_pri, &t_pri_in,
			 cpu_to_be16(0x001a), 0, 0);
	}
	t_traffic("after-bad-act-to-pas", &t_act, &t_pas);
	t_traffic("after-bad-pas-to-act", &t_pas, &t_act);
	t_result(t_pas.lap_rcvd == 1, "bad-lap-not-delivered",
		 "a malformed LAP reached the consumer");
out:
	t_teardown();
	t_lap_put();
}

/* Wait for @s's next ib_cm step (APR, LAP_ERROR), up to @ms. */
static int t_lap_wait(struct t_side *s, int ms)
{
	int ret;

	if (!wait_for_completion_timeout(&s->step, msecs_to_jiffies(ms)))
		ret = -EBUSY;
	else
		ret = s->step_status;
	reinit_completion(&s->step);
	return ret;
}

/*
 * lap-silent: the first CM MAD to the peer after the connection is lost
 * (lap_drop_ctl, count=1), twice: first the probe ib_cm sends to a peer
 * not yet known to handle LAPs, then, the peer known, the LAP itself.
 * Each is sent again after the CM timeout (the connection's max CM
 * retries) and the LAP is accepted both times. The connection carries
 * traffic and disconnects cleanly (DREQ answered by DREP).
 */
static void t_case_lap_silent(void)
{
	int ret;
	unsigned long start;

	ret = t_lap_connect();
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);

	t_ctl(lap_drop_ctl);
	start = jiffies;
	ret = t_lap_send(t_act.cm, &t_alt, &t_alt_in, NULL, 0);
	pr_info("# %s lap send=%d\n", t_case, ret);
	if (!ret)
		ret = t_lap_wait(&t_act, 100000);
	pr_info("# %s lap1 wait=%d after_ms=%u\n", t_case, ret,
		jiffies_to_msecs(jiffies - start));
	t_result(!ret && !t_act.lap_error && !t_act.apr_status &&
		 t_pas.lap_rcvd == 1, "first-lost-retried-accepted",
		 "want the LAP accepted after its first try was lost");

	t_ctl(lap_drop_ctl);
	start = jiffies;
	ret = t_lap_send(t_act.cm, &t_alt, &t_alt_in, NULL, 0);
	pr_info("# %s lap again=%d\n", t_case, ret);
	if (!ret)
		ret = t_lap_wait(&t_act, 100000);
	pr_info("# %s lap2 wait=%d after_ms=%u\n", t_case, ret,
		jiffies_to_msecs(jiffies - start));
	t_result(!ret && !t_act.lap_error && !t_act.apr_status &&
		 t_pas.lap_rcvd == 2, "second-lost-retried-accepted",
		 "want a second LAP, lost once, accepted after its retry");
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
	ret = ib_send_cm_dreq(t_act.cm, NULL, 0);
	t_act.established = false;
	msleep(2000);
	t_result(!ret && t_act.drep, "disconnect",
		 "want the DREQ answered by a DREP");
out:
	t_teardown();
	t_lap_put();
}

/*
 * lap-deaf: a peer that never answers (lap_drop_ctl drops every CM MAD
 * to it, as a 6.1 CM ignores what a LAP-capable CM answers). No LAP for
 * the connection reaches the wire, only the probe, with the CM's retries
 * (the guest test reads the capture). IB_CM_LAP_ERROR comes after them;
 * its handler here takes 4 s, during which the peer sends a DREQ: the
 * DREQ_RECEIVED event must wait for it, as any two ib_cm events of one
 * id are delivered one after the other.
 */
static void t_case_lap_deaf(void)
{
	int ret;
	unsigned long start;

	ret = t_lap_connect();
	if (ret)
		goto out;
	t_lap_slow_error = true;
	t_lap_overlap = false;
	t_lap_seq = 0;
	t_lap_err_seq = 0;
	t_lap_dreq_seq = 0;
	reinit_completion(&t_lap_err_started);
	t_ctl(lap_drop_ctl);
	start = jiffies;
	ret = t_lap_send(t_act.cm, &t_alt, &t_alt_in, NULL, 0);
	pr_info("# %s lap send=%d\n", t_case, ret);
	if (!ret && !wait_for_completion_timeout(&t_lap_err_started,
						 msecs_to_jiffies(100000)))
		ret = -EBUSY;
	pr_info("# %s lap_unanswered wait=%d after_ms=%u\n", t_case, ret,
		jiffies_to_msecs(jiffies - start));
	t_result(!ret && t_act.lap_error == 1, "unanswered-after-retries",
		 "want IB_CM_LAP_ERROR for the unanswered LAP");
	/* The peer disconnects while a1 is in its LAP_ERROR handler */
	t_ctl("nofault");
	if (!ret)
		ret = ib_send_cm_dreq(t_pas.cm, NULL, 0);
	pr_info("# %s pas dreq=%d\n", t_case, ret);
	t_pas.established = false;
	ret = t_lap_wait(&t_act, 20000);
	msleep(3000);
	pr_info("# %s lap_unanswered step=%d overlap=%d seq unanswered=%d dreq=%d drep=%d\n",
		t_case, ret, t_lap_overlap, t_lap_err_seq, t_lap_dreq_seq,
		t_pas.drep);
	t_result(t_lap_err_seq && t_lap_dreq_seq && !t_lap_overlap,
		 "dreq-waits-for-unanswered-event",
		 "DREQ_RECEIVED ran while the LAP_ERROR handler was running");
	t_result(t_lap_err_seq && t_lap_dreq_seq > t_lap_err_seq && t_pas.drep,
		 "unanswered-event-then-dreq",
		 "want LAP_ERROR, then DREQ_RECEIVED answered by a DREP");
	t_act.established = false;
	t_lap_slow_error = false;
out:
	t_lap_slow_error = false;
	t_teardown();
	t_lap_put();
}

/* The alternate DLID ib_cm gives for RTS (0: none) and the QP's own. */
static void t_alt_dlids(struct t_side *s, const char *when, u32 *cm_dlid,
			u32 *qp_dlid)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS };
	struct ib_qp_init_attr init;
	int mask = 0;

	*cm_dlid = 0;
	*qp_dlid = 0;
	if (!ib_cm_init_qp_attr(s->cm, &a, &mask) && (mask & IB_QP_ALT_PATH))
		*cm_dlid = rdma_ah_get_dlid(&a.alt_ah_attr);
	if (!ib_query_qp(s->qp, &a, ~0, &init))
		*qp_dlid = rdma_ah_get_dlid(&a.alt_ah_attr);
	pr_info("# %s %s.%s cm_alt_dlid=%u qp_alt_dlid=%u mig=%d\n", t_case,
		s->name, when, *cm_dlid, *qp_dlid, t_mig_state(s));
}

/*
 * lap-qp-refuses: an armed connection (alternate through the second
 * router); a LAP offers the primary's path (t_pri, first router) as the
 * alternate, the peer accepts it, and the active side's QP refuses the
 * load (a P_Key index the port lacks, t_cm_modify_bad_alt()). ib_cm
 * must then give the alternate the QP still has, not the refused one.
 * A second LAP with the old alternate brings the peer back to it, and
 * each side's ib_cm and QP agree.
 */
static void t_case_lap_qp_refuses(void)
{
	int ret;
	u32 cm_dlid, qp_dlid, qp_dlid0, pcm, pqp;

	ret = t_lap_connect();
	if (ret)
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_alt_dlids(&t_act, "before", &cm_dlid, &qp_dlid0);
	t_lap_fail_load = true;
	ret = t_lap_send(t_act.cm, &t_pri, &t_pri_in, NULL, 0);
	pr_info("# %s lap send=%d\n", t_case, ret);
	if (!ret)
		ret = t_lap_wait(&t_act, 100000);
	t_lap_fail_load = false;
	pr_info("# %s lap wait=%d apr=%d\n", t_case, ret, t_act.apr_status);
	t_result(ret == -EINVAL && !t_act.apr_status && t_pas.lap_rcvd == 1,
		 "accepted-load-refused",
		 "want APR Success and the QP refusing the load (-EINVAL)");
	t_alt_dlids(&t_act, "refused", &cm_dlid, &qp_dlid);
	t_result(qp_dlid == qp_dlid0 && t_mig_state(&t_act) == IB_MIG_ARMED,
		 "qp-unchanged", "the refused modify changed the QP");
	t_result(cm_dlid && cm_dlid == qp_dlid, "cm-alt-is-qp-alt",
		 "ib_cm's alternate for RTS is not the one in the QP");
	t_traffic("refused-act-to-pas", &t_act, &t_pas);

	/* The old alternate again: the peer goes back to it */
	ret = t_lap_send(t_act.cm, &t_alt, &t_alt_in, NULL, 0);
	pr_info("# %s lap2 send=%d\n", t_case, ret);
	if (!ret)
		ret = t_lap_wait(&t_act, 100000);
	/* traffic re-arms both QPs (REARM -> ARMED) */
	t_traffic("again-act-to-pas", &t_act, &t_pas);
	t_traffic("again-pas-to-act", &t_pas, &t_act);
	t_alt_dlids(&t_act, "again", &cm_dlid, &qp_dlid);
	t_alt_dlids(&t_pas, "again", &pcm, &pqp);
	t_dump("again", &t_act);
	t_dump("again", &t_pas);
	t_result(!ret && !t_act.apr_status && t_pas.lap_rcvd == 2 &&
		 cm_dlid == qp_dlid && qp_dlid == qp_dlid0 && pcm == pqp &&
		 t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "reoffered-consistent",
		 "want the old alternate loaded again, ib_cm and QP agreeing on both sides");
out:
	t_lap_fail_load = false;
	t_teardown();
	t_lap_put();
}

/* Wait up to @ms for @s's PATH_MIGRATED count to reach @n. */
static bool t_wait_migrated(struct t_side *s, int n, int ms)
{
	for (; ms > 0 && atomic_read(&s->cma_migrated) < n; ms -= 100)
		msleep(100);
	return atomic_read(&s->cma_migrated) >= n;
}

static int t_pas_apm_events(void)
{
	return atomic_read(&t_pas.cma_loaded) +
	       atomic_read(&t_pas.cma_alt_error) +
	       atomic_read(&t_pas.cma_migrated);
}

/*
 * cma-lap: as cma-apm (a path set with an alternate through the second
 * router), both ids taking rdma_cm's APM events (rdma_set_apm_events(),
 * the passive one on its listener). The first router fails under
 * traffic: both QPs migrate, both consumers get PATH_MIGRATED. The router
 * comes back; rdma_load_ib_alt_path() loads the old primary as the new
 * alternate (LAP, APR): rdma_cm loads it into both QPs, ALT_PATH_LOADED
 * on both sides; traffic re-arms them. The second router fails: both
 * migrate back, PATH_MIGRATED again, and the DREQ later reaches the
 * passive side. (A passive id that takes no APM events: cma-lap-refused;
 * a peer that rejects or never answers a LAP: simfab-pathset through
 * rdma_ucm.)
 */
/*
 * cma-lap*: the APM calls looked up, and the connection of cma-apm (a
 * path set with an alternate) with the active id taking the APM events,
 * the passive one too when @pas_apm. Non-zero: not connected (the result
 * says why).
 */
static int t_cma_lap_connect(bool pas_apm)
{
	int ret;

	t_apm_events = __symbol_get("rdma_set_apm_events");
	t_cma_lap = __symbol_get("rdma_load_ib_alt_path");
	ret = t_setup(false);
	if (!t_apm_events || !t_cma_lap) {
		t_result(false, "api", "rdma_cm has no rdma_set_apm_events/rdma_load_ib_alt_path");
		return -ENOENT;
	}
	t_act_apm = true;
	t_pas_apm = pas_apm;
	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, true);
	t_act_apm = false;
	t_pas_apm = false;
	t_result(!ret, "connect", "rdma_cm connection with a path set not established");
	return ret;
}

static void t_cma_lap_end(void)
{
	t_teardown();
	if (t_apm_events)
		__symbol_put("rdma_set_apm_events");
	if (t_cma_lap)
		__symbol_put("rdma_load_ib_alt_path");
	t_apm_events = NULL;
	t_cma_lap = NULL;
}

/*
 * cma-lap-unloadable, cma-lap-refused: the active id offers the primary's
 * path as the new alternate by LAP; the step that answers it (0 for
 * ALT_PATH_LOADED, ALT_PATH_ERROR's status, -ETIMEDOUT), or the send's
 * error.
 */
static int t_cma_lap_primary(void)
{
	int ret = t_cma_lap(t_act.id, &t_pri, &t_pri_in);

	pr_info("# %s lap send=%d\n", t_case, ret);
	t_result(!ret, "lap-send", "rdma_load_ib_alt_path failed");
	if (!ret)
		ret = t_wait_step(&t_act);
	pr_info("# %s step=%d alt_err=%d status=%d loaded=%d\n", t_case, ret,
		atomic_read(&t_act.cma_alt_error), t_act.cma_alt_status,
		atomic_read(&t_act.cma_loaded));
	return ret;
}

/* cma-lap: the mark of the LAP's return record (Preference, any value) */
#define T_LAP_IN_MARK	0x5a

static void t_case_cma_lap(void)
{
	struct sa_path_rec lap_in, *rt_in;
	int ret, i;

	if (t_cma_lap_connect(true))
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_ctl(fail_ctl);
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_dump("migrated", &t_act);
	t_dump("migrated", &t_pas);
	t_result(atomic_read(&t_act.path_mig) == 1 &&
		 atomic_read(&t_pas.path_mig) == 1 &&
		 t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated",
		 "want one PATH_MIG on each side and both QPs MIGRATED");
	t_result(t_wait_migrated(&t_act, 1, 5000) &&
		 atomic_read(&t_act.cma_migrated) == 1, "path-migrated-event",
		 "want one RDMA_CM_EVENT_PATH_MIGRATED at the active (opted-in) id");
	t_ctl(restore_ctl);

	/*
	 * Re-arm: the old primary, with its return record, by LAP. The
	 * return record carries a mark in a field no message takes
	 * (Preference) so that the route shows whose record it keeps.
	 */
	lap_in = t_pri_in;
	lap_in.preference = T_LAP_IN_MARK;
	ret = t_cma_lap(t_act.id, &t_pri, &lap_in);
	pr_info("# %s lap send=%d\n", t_case, ret);
	t_result(!ret, "lap-send", "rdma_load_ib_alt_path failed");
	if (!ret)
		ret = t_wait_step(&t_act);
	t_result(!ret && atomic_read(&t_act.cma_loaded) == 1, "alt-path-loaded",
		 "want RDMA_CM_EVENT_ALT_PATH_LOADED (status 0) at the active id");
	t_traffic("lapped-act-to-pas", &t_act, &t_pas);
	t_traffic("lapped-pas-to-act", &t_pas, &t_act);
	t_dump("lapped", &t_act);
	t_dump("lapped", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "rearmed",
		 "want both QPs ARMED with the LAP's alternate (loaded by rdma_cm)");

	/* The second router fails: back to the first */
	t_ctl(fail_alt_ctl);
	t_traffic("back-act-to-pas", &t_act, &t_pas);
	t_traffic("back-pas-to-act", &t_pas, &t_act);
	t_dump("back", &t_act);
	t_dump("back", &t_pas);
	t_result(atomic_read(&t_act.path_mig) == 2 &&
		 atomic_read(&t_pas.path_mig) == 2 &&
		 t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated-again",
		 "want a second PATH_MIG on each side onto the LAP's alternate");
	t_result(t_wait_migrated(&t_act, 2, 5000) &&
		 atomic_read(&t_act.cma_migrated) == 2, "path-migrated-again-event",
		 "want a second RDMA_CM_EVENT_PATH_MIGRATED at the active id");
	/*
	 * The route now runs on the LAP's path: its return record must be
	 * the one the LAP came with, not the one of the alternate before.
	 */
	rt_in = t_act.id->route.path_rec_inbound;
	pr_info("# %s route-inbound preference=0x%x\n", t_case,
		rt_in ? rt_in->preference : 0);
	t_result(rt_in && rt_in->preference == T_LAP_IN_MARK,
		 "route-return-record-after-lap-migration",
		 "after LAP and migration the route's return record is not the LAP's");

	t_result(atomic_read(&t_pas.cma_loaded) == 1 &&
		 !atomic_read(&t_pas.cma_alt_error), "passive-alt-path-loaded",
		 "want one RDMA_CM_EVENT_ALT_PATH_LOADED at the passive (opted-in) id");

	rdma_disconnect(t_act.id);
	t_act.established = false;
	for (i = 0; i < 50 && !t_pas.disconnected; i++)
		msleep(100);
	pr_info("# %s dreq after_ms=%d\n", t_case, i * 100);
	t_result(t_pas.disconnected, "dreq-after-second-migration",
		 "no DREQ reached the passive side after migrating back");
	t_ctl(restore_alt_ctl);
out:
	t_cma_lap_end();
}

/*
 * cma-lap-unloadable: the connection of cma-lap, armed with the path
 * set's alternate (through the second router). The active QP goes to
 * the error state, as after a fatal completion error (ERR -> RTS is no
 * valid transition, ib_modify_qp_is_ok(), IBA 10.3.1), then
 * rdma_load_ib_alt_path() offers the primary's path. The peer accepts
 * it and rdma_cm's load into the QP it created fails: the active id
 * gets ALT_PATH_ERROR with the load's (negative) error, and ib_cm's
 * alternate for RTS and the route's record 1 stay the alternate the QP
 * has, not the refused one.
 */
static u32 t_cma_alt_dlids(struct t_side *s, const char *when, u32 *route_dlid)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS };
	struct rdma_route *rt = &s->id->route;
	int mask = 0;
	u32 cm_dlid = 0;

	*route_dlid = rt->num_pri_alt_paths == 2 ?
		be32_to_cpu(sa_path_get_dlid(&rt->path_rec[1])) : 0;
	if (!rdma_init_qp_attr(s->id, &a, &mask) && (mask & IB_QP_ALT_PATH))
		cm_dlid = rdma_ah_get_dlid(&a.alt_ah_attr);
	pr_info("# %s %s.%s cm_alt_dlid=%u route_alt_dlid=%u\n", t_case,
		s->name, when, cm_dlid, *route_dlid);
	return cm_dlid;
}

/* The alternate DLID the QP itself has (0: none). */
static u32 t_qp_alt_dlid(struct t_side *s)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(s->qp, &a, IB_QP_ALT_PATH, &init))
		return 0;
	pr_info("# %s %s qp_alt_dlid=%u\n", t_case, s->name,
		rdma_ah_get_dlid(&a.alt_ah_attr));
	return rdma_ah_get_dlid(&a.alt_ah_attr);
}

static void t_case_cma_lap_unloadable(void)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	u32 qp_before, cm_after, rt_before, rt_after;
	int ret;

	if (t_cma_lap_connect(true))
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	/*
	 * Before any LAP, ib_cm gives no alternate for RTS (it went in at
	 * RTR): the QP's own alternate is the reference.
	 */
	t_cma_alt_dlids(&t_act, "before", &rt_before);
	qp_before = t_qp_alt_dlid(&t_act);
	ret = ib_modify_qp(t_act.qp, &err, IB_QP_STATE);
	t_result(!ret, "qp-to-err-state", "the active QP did not go to IB_QPS_ERR");

	ret = t_cma_lap_primary();
	t_result(ret < 0 && ret != -ETIMEDOUT &&
		 atomic_read(&t_act.cma_alt_error) == 1 &&
		 t_act.cma_alt_status < 0 && !atomic_read(&t_act.cma_loaded),
		 "alt-path-event-with-load-errno",
		 "want RDMA_CM_EVENT_ALT_PATH_ERROR with the QP load's negative errno");
	cm_after = t_cma_alt_dlids(&t_act, "after", &rt_after);
	t_result(qp_before && cm_after == qp_before, "cm-keeps-qp-alternate",
		 "ib_cm's alternate for RTS is not the one the QP kept");
	t_result(rt_before && rt_after == rt_before, "route-keeps-qp-alternate",
		 "the route's record 1 is not the alternate the QP kept");
	rdma_disconnect(t_act.id);
	t_act.established = false;
out:
	t_cma_lap_end();
}

/*
 * cma-lap-refused: the connection of cma-lap (a path set with an
 * alternate through the second router, armed at connect), the active id
 * taking the APM events, the passive one not: as a kernel ULP's
 * (nvmet-rdma, ib_srpt, ib_isert), whose QP rdma_create_qp() made too.
 * The active id offers the primary's path as a new alternate by LAP. The
 * passive side answers APR Unsupported and loads nothing: the active id
 * gets ALT_PATH_ERROR -EOPNOTSUPP, neither QP's alternate changes, the
 * passive id hears nothing, and the connection carries on.
 */
static void t_case_cma_lap_refused(void)
{
	u32 act_before, pas_before, act_after, pas_after;
	int ret;

	if (t_cma_lap_connect(false))
		goto out;
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	act_before = t_qp_alt_dlid(&t_act);
	pas_before = t_qp_alt_dlid(&t_pas);
	ret = t_cma_lap_primary();
	t_result(atomic_read(&t_act.cma_alt_error) == 1 &&
		 t_act.cma_alt_status == -EOPNOTSUPP &&
		 !atomic_read(&t_act.cma_loaded), "apr-unsupported",
		 "want RDMA_CM_EVENT_ALT_PATH_ERROR -EOPNOTSUPP (APR Unsupported) at the active id");
	act_after = t_qp_alt_dlid(&t_act);
	pas_after = t_qp_alt_dlid(&t_pas);
	t_result(pas_before && pas_after == pas_before,
		 "passive-qp-alternate-kept",
		 "the passive QP, whose id takes no APM events, got the LAP's alternate");
	t_result(act_before && act_after == act_before,
		 "active-qp-alternate-kept",
		 "the active QP's alternate changed though the LAP was refused");
	t_result(!t_pas_apm_events(), "passive-no-events",
		 "the passive id, which takes no APM events, got one");
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	rdma_disconnect(t_act.id);
	t_act.established = false;
out:
	t_cma_lap_end();
}

/*
 * cma-altroute*: the alternate rdma_resolve_route() itself finds for a
 * routed destination (ib-routed: ib_remote_sa's alternate discovery),
 * the active id taking the APM events when opt_in. The route's records
 * are printed for the guest test to check against the topology:
 * "# CASE route n=N" and "route-pri"/"route-alt" (t_print_path) with
 * "route-pri-gids"/"route-alt-gids".
 */
static void t_print_route(struct t_side *a)
{
	struct rdma_route *rt = &a->id->route;
	int i;

	pr_info("# %s route n=%d\n", t_case, rt->num_pri_alt_paths);
	for (i = 0; i < rt->num_pri_alt_paths && i < 2; i++) {
		t_print_path(i ? "route-alt" : "route-pri", &rt->path_rec[i]);
		pr_info("# %s %s sgid=%pI6 dgid=%pI6 pkey=0x%04x\n", t_case,
			i ? "route-alt-gids" : "route-pri-gids",
			rt->path_rec[i].sgid.raw, rt->path_rec[i].dgid.raw,
			be16_to_cpu(rt->path_rec[i].pkey));
	}
}

static bool t_altroute_get(void)
{
	t_apm_events = __symbol_get("rdma_set_apm_events");
	if (!t_apm_events && opt_in) {
		t_result(false, "api", "rdma_cm has no rdma_set_apm_events");
		return false;
	}
	/* the late alternate goes by LAP: the passive id takes it too */
	t_act_apm = opt_in;
	t_pas_apm = opt_in;
	t_route_hook = t_print_route;
	return true;
}

static void t_altroute_put(void)
{
	t_act_apm = false;
	t_pas_apm = false;
	t_route_hook = NULL;
	if (t_apm_events)
		__symbol_put("rdma_set_apm_events");
	t_apm_events = NULL;
}

/*
 * cma-altroute: rdma_resolve_route() to pas gives the route an alternate
 * through other ports (the guest test checks which); both QPs are armed
 * with it, traffic, the primary fails (fail_ctl): both QPs migrate
 * under traffic without a new connection, PATH_MIGRATED at the opted-in
 * id, and the DREQ, which ib_cm sends on the new path, reaches pas.
 */
static void t_case_cma_altroute(void)
{
	int ret = t_setup(false), i;

	if (!t_altroute_get())
		goto out;
	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, false);
	t_result(!ret, "connect", "rdma_cm connection not established");
	if (ret)
		goto out;
	t_result(t_act.id->route.num_pri_alt_paths == 2, "route-has-alternate",
		 "rdma_resolve_route() gave no alternate path");
	t_traffic("before-act-to-pas", &t_act, &t_pas);
	t_traffic("before-pas-to-act", &t_pas, &t_act);
	t_dump("before", &t_act);
	t_dump("before", &t_pas);
	t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
		 t_mig_state(&t_pas) == IB_MIG_ARMED, "armed",
		 "want both QPs ARMED with the route's alternate");
	t_ctl(fail_ctl);
	t_traffic("after-act-to-pas", &t_act, &t_pas);
	t_traffic("after-pas-to-act", &t_pas, &t_act);
	t_dump("after", &t_act);
	t_dump("after", &t_pas);
	t_result(atomic_read(&t_act.path_mig) == 1 &&
		 atomic_read(&t_pas.path_mig) == 1 &&
		 t_mig_state(&t_act) == IB_MIG_MIGRATED &&
		 t_mig_state(&t_pas) == IB_MIG_MIGRATED, "migrated",
		 "want one PATH_MIG on each side and both QPs MIGRATED");
	t_result(t_wait_migrated(&t_act, 1, 5000) &&
		 atomic_read(&t_act.cma_migrated) == 1, "path-migrated-event",
		 "want one RDMA_CM_EVENT_PATH_MIGRATED at the active (opted-in) id");
	rdma_disconnect(t_act.id);
	t_act.established = false;
	for (i = 0; i < 50 && !t_pas.disconnected; i++)
		msleep(100);
	pr_info("# %s dreq after_ms=%d\n", t_case, i * 100);
	t_result(t_pas.disconnected, "dreq-after-migration",
		 "no DREQ reached the passive side after the migration");
	t_ctl(restore_ctl);
out:
	t_teardown();
	t_altroute_put();
}

/*
 * cma-altroute-route: the route rdma_resolve_route() gives (with or
 * without an alternate, the guest test judges), the connection, traffic
 * both ways, both QPs' paths.
 */
static void t_case_cma_altroute_route(void)
{
	int ret = t_setup(false);

	if (!t_altroute_get())
		goto out;
	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, false);
	t_result(!ret, "connect", "rdma_cm connection not established");
	if (ret)
		goto out;
	t_traffic("act-to-pas", &t_act, &t_pas);
	t_traffic("pas-to-act", &t_pas, &t_act);
	t_dump("conn", &t_act);
	t_dump("conn", &t_pas);
out:
	t_teardown();
	t_altroute_put();
}

/*
 * Bind an AF_IB id to the active port's GID and resolve the passive
 * port's GID, service T_CMA_PORT: how the rdma_cm cases start.
 */
static int t_resolve_act_pas(struct rdma_cm_id *id)
{
	struct sockaddr_ib src, dst;
	int ret;

	t_sib(&src, &t_act.gid, 0);
	t_sib(&dst, &t_pas.gid, T_CMA_PORT);
	ret = rdma_bind_addr(id, (struct sockaddr *)&src);
	if (!ret)
		ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
					(struct sockaddr *)&dst, 5000);
	return ret;
}

/*
 * cma-altroute-destroy: rdma_resolve_route(), ROUTE_RESOLVED at once
 * (route-resolved-first: well within the timeout), then rdma_destroy_id()
 * destroy_ms later, while the alternate's discovery is held up (the
 * guest test makes a remote service silent); the destroy must not wait
 * for the discovery's timeouts. The guest test checks what is left.
 */
static void t_case_cma_altroute_destroy(void)
{
	ktime_t t0;
	s64 ms;
	int ret = t_setup(false);

	if (!t_altroute_get())
		goto out;
	if (ret)
		goto out;
	t_act.id = rdma_create_id(&init_net, t_cma_handler, &t_act, RDMA_PS_IB,
				  IB_QPT_RC);
	if (IS_ERR(t_act.id)) {
		ret = PTR_ERR(t_act.id);
		t_act.id = NULL;
		goto out;
	}
	if (opt_in)
		t_apm_events(t_act.id, true);
	ret = t_resolve_act_pas(t_act.id);
	if (!ret)
		ret = t_wait_step(&t_act);
	t0 = ktime_get();
	if (!ret)
		ret = rdma_resolve_route(t_act.id, route_ms);
	t_result(!ret, "resolve-route", "rdma_resolve_route() refused");
	if (ret)
		goto out;
	/* ROUTE_RESOLVED does not wait for the discovery */
	ret = t_wait_step(&t_act);
	ms = ktime_ms_delta(ktime_get(), t0);
	pr_info("# %s route_resolved=%d route_ms=%lld\n", t_case, ret, ms);
	t_result(!ret && ms < route_ms / 4, "route-resolved-first",
		 "ROUTE_RESOLVED waited for the alternate's discovery");
	msleep(destroy_ms);
	t0 = ktime_get();
	rdma_destroy_id(t_act.id);
	t_act.id = NULL;
	pr_info("# %s destroy_ms=%lld\n", t_case,
		ktime_ms_delta(ktime_get(), t0));
out:
	t_teardown();
	t_altroute_put();
}

/*
 * cma-altroute-late: rdma_resolve_route() of an id that takes no APM
 * events (alt_path=1: no discovery, the primary alone), timed; then the
 * connection of cma-altroute-route, its id taking the APM events when
 * opt_in, while the alternate's discovery is held up (the guest test
 * delays the alternate ports' queries): ROUTE_RESOLVED comes in about
 * the primary's time ("# CASE route-times"), the REQ has the primary
 * alone, and the alternate comes by LAP after ESTABLISHED: the
 * ALT_PATH_LOADED event, both QPs armed, the route's record 1
 * ("late-route"). Without opt_in (alt_path=2) none of that comes.
 */
static s64 t_route_alone_ms(void)
{
	struct rdma_cm_id *id;
	ktime_t t0;
	int ret;

	id = rdma_create_id(&init_net, t_cma_handler, &t_act, RDMA_PS_IB,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = t_resolve_act_pas(id);
	if (!ret)
		ret = t_wait_step(&t_act);
	t0 = ktime_get();
	if (!ret)
		ret = rdma_resolve_route(id, route_ms);
	if (!ret)
		ret = t_wait_step(&t_act);
	rdma_destroy_id(id);
	return ret ? ret : ktime_ms_delta(ktime_get(), t0);
}

/*
 * The first ALT_PATH_LOADED (0) or ALT_PATH_ERROR (its status) @s has
 * had, whenever it came; -ETIMEDOUT when none within wait_ms.
 */
static int t_wait_alt_event(struct t_side *s)
{
	int ms;

	for (ms = wait_ms; ms > 0; ms -= 100) {
		if (atomic_read(&s->cma_loaded))
			return 0;
		if (atomic_read(&s->cma_alt_error))
			return s->cma_alt_status ?: -EIO;
		msleep(100);
	}
	return -ETIMEDOUT;
}

static void t_case_cma_altroute_late(void)
{
	struct rdma_route *rt;
	s64 alone_ms = -1;
	int ret = t_setup(false), step;

	if (!t_altroute_get())
		goto out;
	if (!ret) {
		alone_ms = t_route_alone_ms();
		ret = alone_ms < 0 ? alone_ms : 0;
	}
	if (!ret)
		ret = t_cma_connect(&t_act, &t_pas, false);
	pr_info("# %s route-times primary_alone_ms=%lld with_discovery_ms=%lld\n",
		t_case, alone_ms, t_route_ms);
	t_result(!ret, "connect", "rdma_cm connection not established");
	if (ret)
		goto out;
	rt = &t_act.id->route;
	t_result(t_req_paths == 1, "req-primary-alone",
		 "the REQ had an alternate: the discovery was not held up");
	t_dump("conn", &t_act);
	/*
	 * ALT_PATH_LOADED or ALT_PATH_ERROR, or nothing within wait_ms. On
	 * the counts, not the step: a discovery that ends as the REQ leaves
	 * gets its APR before t_cma_connect() has taken ESTABLISHED's step,
	 * and the reinit_completion() after that wait loses the second one.
	 */
	step = t_wait_alt_event(&t_act);
	pr_info("# %s late step=%d loaded=%d alt_err=%d status=%d\n", t_case,
		step, atomic_read(&t_act.cma_loaded),
		atomic_read(&t_act.cma_alt_error), t_act.cma_alt_status);
	pr_info("# %s late-route n=%d\n", t_case, rt->num_pri_alt_paths);
	if (rt->num_pri_alt_paths == 2) {
		t_print_path("late-alt", &rt->path_rec[1]);
		pr_info("# %s late-alt-gids sgid=%pI6 dgid=%pI6 pkey=0x%04x\n",
			t_case, rt->path_rec[1].sgid.raw,
			rt->path_rec[1].dgid.raw,
			be16_to_cpu(rt->path_rec[1].pkey));
	}
	/* a QP loaded with an alternate is ARMED once traffic has synced (IBA 17.2.8) */
	t_traffic("late-act-to-pas", &t_act, &t_pas);
	t_traffic("late-pas-to-act", &t_pas, &t_act);
	t_dump("late", &t_act);
	t_dump("late", &t_pas);
	if (opt_in) {
		t_result(!step && atomic_read(&t_act.cma_loaded) == 1,
			 "alt-path-loaded",
			 "want RDMA_CM_EVENT_ALT_PATH_LOADED for the alternate found after the REQ");
		t_result(rt->num_pri_alt_paths == 2, "route-has-alternate",
			 "the loaded alternate is not the route's record 1");
		t_result(t_mig_state(&t_act) == IB_MIG_ARMED &&
			 t_mig_state(&t_pas) == IB_MIG_ARMED, "armed",
			 "want both QPs ARMED with the alternate");
	} else {
		t_result(step == -ETIMEDOUT &&
			 !atomic_read(&t_act.cma_loaded) &&
			 !atomic_read(&t_act.cma_alt_error), "no-apm-event",
			 "an id that takes no APM events heard of an alternate");
		t_result(rt->num_pri_alt_paths == 1 &&
			 t_mig_state(&t_act) != IB_MIG_ARMED &&
			 t_mig_state(&t_pas) != IB_MIG_ARMED, "primary-alone",
			 "an id that takes no APM events got an alternate after the REQ");
	}
out:
	t_teardown();
	t_altroute_put();
}

/*
 * cma-altwait-destroy (issue 41 item 1): rdma_cm's alt_path_wait parks
 * the route's work, which holds the route's reference on the id, with
 * ib_remote_sa's alternate discovery, whose end queues it. A discovery
 * that ends before ib_remote_sa_alt_path_get() has returned to
 * cma_alt_path_query() (on another CPU, at once when there is no other
 * pair of ports to try) delivers ROUTE_RESOLVED, and this consumer's
 * handler destroys the id (it returns non-zero), while the caller still
 * has the id's rsa_lock to take. The caller must hold a reference of its
 * own across the call, so that the id outlives it.
 *
 * The window is a few instructions wide; a kretprobe on
 * ib_remote_sa_alt_path_get() holds the return of the test's own call
 * (bounded) until ROUTE_RESOLVED has been delivered, and then up to
 * race_hold_ms for the id to be freed; a kprobe on kfree() sees the id
 * go. Freed before the call returned is the use after free that follows
 * (Debian's kernels have no KASAN). The guest test makes the return
 * record come from ib_remote_sa's cache (a warm-up resolution first), so
 * that rdma_cm asks for the discovery from ib_remote_sa's per-port
 * workqueue, not from the MAD completion that the discovery's own answer
 * needs. Each round is one id: bind, resolve the address, resolve the
 * route; the first use after free ends the rounds.
 */
static struct {
	struct ib_device *dev;
	u32 port;
	bool armed;		/* this round's call is the one held */
	bool routing;		/* the address is resolved: route events */
	unsigned long id;	/* the round's id, as kfree() is given it */
	bool resolved;		/* ROUTE_RESOLVED delivered (then destroyed) */
	bool freed;		/* kfree() of the id */
	int route_event, route_status;
	int calls;		/* ib_remote_sa_alt_path_get() calls held */
	bool in_call_resolved, in_call_freed;
	bool returned;		/* the held call has returned */
	long call_ret;
	struct completion addr;
	int addr_status;
} t_aw;

static int t_aw_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (!READ_ONCE(t_aw.routing)) {
		t_aw.addr_status = ev->event == RDMA_CM_EVENT_ADDR_RESOLVED ?
				   0 : (ev->status ?: -EIO);
		complete(&t_aw.addr);
		return 0;
	}
	/* the route's end, whatever it is: rdma_cm destroys the id */
	t_aw.route_event = ev->event;
	t_aw.route_status = ev->status;
	/* the event before the flag that t_aw_return() waits for */
	smp_store_release(&t_aw.resolved, true);
	return 1;
}

static int t_aw_kfree(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long id = READ_ONCE(t_aw.id);

	/* rdma_id_private starts with its rdma_cm_id */
	if (id && regs_get_kernel_argument(regs, 0) == id)
		WRITE_ONCE(t_aw.freed, true);
	return 0;
}

static int t_aw_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (!READ_ONCE(t_aw.armed) ||
	    regs_get_kernel_argument(regs, 0) != (unsigned long)t_aw.dev ||
	    (u32)regs_get_kernel_argument(regs, 1) != t_aw.port)
		return 1;	/* not the test's: no return handler */
	return 0;
}

/* Spin (atomic context) until *@flag is set or @ms have passed. */
static bool t_aw_spin(bool *flag, int ms)
{
	ktime_t end = ktime_add_ms(ktime_get(), ms);

	while (!READ_ONCE(*flag) && ktime_before(ktime_get(), end))
		cpu_relax();
	return READ_ONCE(*flag);
}

/* Runs as the call returns to cma_alt_path_query(): atomic, so bounded. */
static int t_aw_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	t_aw.calls++;
	t_aw.call_ret = regs_return_value(regs);
	if (t_aw.call_ret >= 0)
		t_aw.in_call_resolved = t_aw_spin(&t_aw.resolved, 2000);
	if (t_aw.in_call_resolved)
		t_aw.in_call_freed = t_aw_spin(&t_aw.freed, race_hold_ms);
	if (t_aw.in_call_freed)
		pr_info("# %s use-after-free: the id was freed before ib_remote_sa_alt_path_get() returned to its caller, which takes the id's rsa_lock next\n",
			t_case);
	/* pairs with t_aw_round()'s acquire: the verdict before the flag */
	smp_store_release(&t_aw.returned, true);
	return 0;
}

static struct kprobe t_aw_kfree_kp = {
	.symbol_name = "kfree",
	.pre_handler = t_aw_kfree,
};

static struct kretprobe t_aw_krp = {
	.kp.symbol_name = "ib_remote_sa_alt_path_get",
	.entry_handler = t_aw_entry,
	.handler = t_aw_return,
	.maxactive = 4,
};

/* One round: 0 when the id is gone (freed), else an errno. */
static int t_aw_round(bool hold)
{
	struct rdma_cm_id *id;
	int ret, i;

	t_aw.routing = false;
	t_aw.resolved = false;
	t_aw.freed = false;
	t_aw.calls = 0;
	t_aw.in_call_resolved = false;
	t_aw.in_call_freed = false;
	t_aw.returned = false;
	t_aw.route_event = -1;
	reinit_completion(&t_aw.addr);
	id = rdma_create_id(&init_net, t_aw_handler, &t_aw, RDMA_PS_IB,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (opt_in)
		t_apm_events(id, true);
	ret = t_resolve_act_pas(id);
	if (!ret && !wait_for_completion_timeout(&t_aw.addr,
						 msecs_to_jiffies(wait_ms)))
		ret = -ETIMEDOUT;
	if (!ret)
		ret = t_aw.addr_status;
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	WRITE_ONCE(t_aw.id, (unsigned long)id);
	WRITE_ONCE(t_aw.routing, true);
	WRITE_ONCE(t_aw.armed, hold);
	ret = rdma_resolve_route(id, route_ms);
	if (ret) {
		WRITE_ONCE(t_aw.armed, false);
		WRITE_ONCE(t_aw.id, 0);
		rdma_destroy_id(id);
		return ret;
	}
	/* from here the id is rdma_cm's to destroy (the handler says so) */
	for (i = 0; i < wait_ms / 5 && !READ_ONCE(t_aw.freed); i++)
		usleep_range(5000, 6000);
	/*
	 * and for the held call's verdict (none without a discovery); pairs
	 * with t_aw_return()'s release
	 */
	for (i = 0; hold && i < 600 && !smp_load_acquire(&t_aw.returned); i++)
		usleep_range(5000, 6000);
	WRITE_ONCE(t_aw.armed, false);
	WRITE_ONCE(t_aw.id, 0);
	return READ_ONCE(t_aw.freed) ? 0 : -ETIMEDOUT;
}

static void t_case_cma_altwait_destroy(void)
{
	int ret = t_setup(false), n, reached = 0, uaf = 0, gone = 0;
	int resolved = 0, held = 0;

	t_result(!ret, "setup", "the two ports' devices or GIDs");
	if (ret || !t_altroute_get())
		goto out;
	t_aw.dev = t_act.dev;
	t_aw.port = t_act.port;
	init_completion(&t_aw.addr);
	/* registrable again in a later case of the same load */
	t_aw_kfree_kp.addr = NULL;
	t_aw_kfree_kp.flags = 0;
	t_aw_krp.kp.addr = NULL;
	t_aw_krp.kp.flags = 0;
	ret = register_kprobe(&t_aw_kfree_kp);
	t_result(!ret, "kprobe-kfree", "register_kprobe(kfree) failed");
	if (ret)
		goto out_put;
	ret = register_kretprobe(&t_aw_krp);
	t_result(!ret, "kretprobe",
		 "register_kretprobe(ib_remote_sa_alt_path_get) failed (no ib_remote_sa?)");
	if (ret)
		goto out_kfree;
	/* the return record into ib_remote_sa's cache, nothing held */
	ret = t_aw_round(false);
	pr_info("# %s warm-up ret=%d event=%d status=%d\n", t_case, ret,
		t_aw.route_event, t_aw.route_status);
	t_result(!ret && t_aw.route_event == RDMA_CM_EVENT_ROUTE_RESOLVED,
		 "warm-up", "the first route resolution failed");
	for (n = 0; !ret && n < rounds && !uaf; n++) {
		ret = t_aw_round(true);
		resolved += t_aw.route_event == RDMA_CM_EVENT_ROUTE_RESOLVED;
		held += t_aw.calls;
		reached += t_aw.in_call_resolved;
		uaf += t_aw.in_call_freed;
		gone += !ret;
		pr_info("# %s round=%d ret=%d event=%d status=%d calls=%d call_ret=%ld resolved_in_call=%d freed_in_call=%d freed=%d\n",
			t_case, n, ret, t_aw.route_event, t_aw.route_status,
			t_aw.calls, t_aw.call_ret, t_aw.in_call_resolved,
			t_aw.in_call_freed, t_aw.freed);
	}
	pr_info("# %s rounds=%d resolved=%d discoveries=%d reached=%d uaf=%d freed=%d\n",
		t_case, n, resolved, held, reached, uaf, gone);
	t_result(n && resolved == n, "route-resolved",
		 "ROUTE_RESOLVED did not come in every round");
	t_result(n && held == n, "discovery-each-round",
		 "not one alternate discovery per round (alt_path_wait, alt_path or the return record missing?)");
	t_result(n && reached == n, "race-reached",
		 "ROUTE_RESOLVED was not delivered while ib_remote_sa_alt_path_get() had not returned: the race was not run");
	t_result(n && !uaf, "no-use-after-free",
		 "the id was freed while cma_alt_path_query() still had to take its rsa_lock (no reference held across ib_remote_sa_alt_path_get())");
	t_result(n && gone == n, "ids-freed",
		 "an id destroyed by its ROUTE_RESOLVED handler was not freed");
	unregister_kretprobe(&t_aw_krp);
out_kfree:
	unregister_kprobe(&t_aw_kfree_kp);
out_put:
	t_altroute_put();
out:
	t_teardown();
}

/* ---- ip: an IP-addressed connection ------------------------------------- */

static struct net *t_net(int pid)
{
	return pid ? get_net_ns_by_pid(pid) : get_net(&init_net);
}

static int t_sin(struct sockaddr_in *sin, const char *ip, u16 port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return in4_pton(ip, -1, (u8 *)&sin->sin_addr.s_addr, -1, NULL) ?
	       0 : -EINVAL;
}

/*
 * ip: act_ip -> pas_ip through rdma_cm by IPv4 (RDMA_PS_TCP), each side in
 * its host's network namespace, with real RC QPs: the time
 * rdma_resolve_addr() takes (addr_timeout; across an IB router the GID
 * comes from userspace, ib-routed-ipresolved), the resolved GID, the
 * route's forward and return records, the QPs, traffic both ways.
 */
static void t_case_ip(void)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = retry, .rnr_retry_count = 7,
	};
	struct t_side *a = &t_act, *p = &t_pas;
	struct net *an = NULL, *pn = NULL;
	struct sockaddr_in src, dst;
	struct ib_qp_init_attr qa;
	union ib_gid dgid = {};
	struct rdma_route *rt;
	ktime_t t0;
	int ret;

	ret = t_setup(false);
	if (!ret) {
		an = t_net(act_ns);
		pn = t_net(pas_ns);
		if (IS_ERR_OR_NULL(an) || IS_ERR_OR_NULL(pn))
			ret = -ESRCH;
	}
	ret = ret ?: t_sin(&src, act_ip, 0) ?: t_sin(&dst, pas_ip, T_CMA_PORT);
	if (!ret) {
		p->listen_id = rdma_create_id(pn, t_cma_handler, p, RDMA_PS_TCP,
					      IB_QPT_RC);
		if (IS_ERR(p->listen_id)) {
			ret = PTR_ERR(p->listen_id);
			p->listen_id = NULL;
		}
	}
	ret = ret ?: rdma_bind_addr(p->listen_id, (struct sockaddr *)&dst) ?:
	      rdma_listen(p->listen_id, 1);
	t_result(!ret, "listen", "no netns, or bind/listen on pas_ip failed");
	if (ret)
		goto out;
	a->id = rdma_create_id(an, t_cma_handler, a, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(a->id)) {
		ret = PTR_ERR(a->id);
		a->id = NULL;
		goto out;
	}
	t0 = ktime_get();
	ret = rdma_resolve_addr(a->id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst, addr_timeout);
	if (!ret)
		ret = t_wait_step(a);
	rdma_addr_get_dgid(&a->id->route.addr.dev_addr, &dgid);
	pr_info("# ip resolve status=%d ms=%lld timeout=%d dgid=%pI6\n", ret,
		ktime_ms_delta(ktime_get(), t0), addr_timeout, dgid.raw);
	t_result(!ret, "addr-resolved", "rdma_resolve_addr() failed");
	if (ret)
		goto out;
	ret = rdma_resolve_route(a->id, 5000) ?: t_wait_step(a);
	t_result(!ret, "route-resolved", "rdma_resolve_route() failed");
	if (ret)
		goto out;
	rt = &a->id->route;
	t_print_path("fwd", rt->path_rec);
	if (rt->path_rec_inbound)
		t_print_path("ret", rt->path_rec_inbound);
	else
		pr_info("# ip ret none\n");
	t_qp_init_attr(a, &qa);
	ret = rdma_create_qp(a->id, a->pd, &qa);
	if (!ret) {
		a->qp = a->id->qp;
		t_post_recvs(a);
		if (ack_timeout >= 0)
			rdma_set_ack_timeout(a->id, ack_timeout);
		ret = rdma_connect(a->id, &cp) ?: t_wait_step(a) ?:
		      t_wait_step(p);
	}
	t_result(!ret, "connect", "no ESTABLISHED on both sides");
	if (ret)
		goto out;
	t_dump("conn", a);
	t_dump("conn", p);
	t_traffic("act-to-pas", a, p);
	t_traffic("pas-to-act", p, a);
out:
	t_teardown();
	if (!IS_ERR_OR_NULL(an))
		put_net(an);
	if (!IS_ERR_OR_NULL(pn))
		put_net(pn);
}

/* ---- ibcm-flap: the router of the path goes down as the REQ is sent ---- */

/*
 * ibcm-flap: an ib_cm connection (as ibcm, cm_timeout/cm_retries for the
 * REQ) whose path's router goes down (fail_ctl) just before the REQ
 * goes out, so that the REQ is lost. With flap_ms the router comes back
 * (restore_ctl) that long after, before the CM's retry: the REQ goes
 * again and the connection is made, traffic both ways. Without it the
 * router stays down through every try: IB_CM_REQ_ERROR with
 * IB_WC_RESP_TIMEOUT_ERR, nothing at the passive side; then restore_ctl.
 * The guest test (simfab-faults) reads the tries on the wire and in
 * ib_cm's counters.
 */
static void t_case_ibcm_flap(void)
{
	int ret = t_setup(false);
	ktime_t t0 = ktime_get();

	t_req_flap = true;
	if (!ret)
		ret = t_ibcm_connect(&t_act, &t_pas, false);
	t_req_flap = false;
	pr_info("# %s connect ret=%d ms=%lld flap_ms=%d cm_timeout=%d cm_retries=%d send_status=%d\n",
		t_case, ret, ktime_ms_delta(ktime_get(), t0), flap_ms,
		cm_timeout, cm_retries, t_act.req_send_status);
	if (flap_ms > 0) {
		t_result(!ret, "connect-after-retry",
			 "no connection after the router came back");
		if (!ret) {
			t_traffic("act-to-pas", &t_act, &t_pas);
			t_traffic("pas-to-act", &t_pas, &t_act);
		}
	} else {
		t_result(ret == -ETIMEDOUT &&
			 t_act.req_send_status == IB_WC_RESP_TIMEOUT_ERR &&
			 !t_pas.cm, "req-unanswered",
			 "want IB_CM_REQ_ERROR with IB_WC_RESP_TIMEOUT_ERR and no REQ at the passive side");
		t_ctl(restore_ctl);
	}
	t_teardown();
}

/* ---- scale: many rdma_cm connections with RC QPs, traffic on each ----- */

#define T_SC_MSG	256
#define T_SC_PORT	7302
#define T_SC_MAGIC	0x53464353	/* "SFCS", the REQ's private data */

struct t_sc_conn;

struct t_sc_end {
	struct t_sc_conn *c;
	struct rdma_cm_id *id;
	struct ib_qp *qp;
	u8 *buf;		/* recv slot, send slot, RDMA area */
	bool passive, established;
};

struct t_sc_conn {
	u32 idx;
	struct t_sc_end a, p;
};

/*
 * The REQ's private data. Its first bytes stay 0: rdma_cm reads an AF_IB
 * REQ's private data as a cma_hdr first (cma.c cma_save_ip_info) and
 * rejects the REQ unless the version is 0 and the IP version neither 4
 * nor 6.
 */
struct t_sc_pdata {
	__be32 hdr, magic, idx;
};

static struct {
	struct t_sc_conn *c;
	u8 *bufs;
	struct ib_cq *acq, *pcq;
	struct rdma_cm_id *listen;
	wait_queue_head_t wq;
	atomic_t addr, route, est_act, est_pas, disc_act, disc_pas, bad;
	int reported;
} t_sc;

static void t_sc_bad(struct t_sc_end *e, struct rdma_cm_event *ev)
{
	atomic_inc(&t_sc.bad);
	if (t_sc.reported++ < 5)
		pr_info("# %s %s %d rdma_cm event %s status %d\n", t_case,
			e && e->passive ? "pas" : "act", e ? e->c->idx : -1,
			rdma_event_msg(ev->event), ev->status);
}

static void t_sc_qp_attr(struct ib_cq *cq, struct ib_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = cq;
	qa->recv_cq = cq;
	qa->qp_type = IB_QPT_RC;
	qa->sq_sig_type = IB_SIGNAL_ALL_WR;
	qa->cap.max_send_wr = 4;
	qa->cap.max_recv_wr = 2;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

static int t_sc_post_recv(struct t_sc_end *e)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)e->buf, .length = T_SC_MSG,
		.lkey = e->qp->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = (u64)e->c->idx << 2 | 3, .sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(e->qp, &wr, NULL);
}

/* CONNECT_REQUEST at the listener: the connection its private data names */
static int t_sc_request(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct t_sc_pdata *pd = ev->param.conn.private_data;
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = retry, .rnr_retry_count = 7,
	};
	struct ib_qp_init_attr qa;
	struct t_sc_end *e;
	u32 i;

	i = pd && ev->param.conn.private_data_len >= sizeof(*pd) &&
	    be32_to_cpu(pd->magic) == T_SC_MAGIC ? be32_to_cpu(pd->idx) : conns;
	if (i >= conns || t_sc.c[i].p.id) {
		t_sc_bad(NULL, ev);
		return 1;	/* rdma_cm destroys the id */
	}
	e = &t_sc.c[i].p;
	t_sc_qp_attr(t_sc.pcq, &qa);
	if (rdma_create_qp(id, t_pas.pd, &qa)) {
		t_sc_bad(e, ev);
		return 1;
	}
	e->qp = id->qp;
	if (t_sc_post_recv(e)) {
		rdma_destroy_qp(id);
		e->qp = NULL;
		t_sc_bad(e, ev);
		return 1;
	}
	id->context = e;
	e->id = id;
	if (ack_timeout >= 0)
		rdma_set_ack_timeout(id, ack_timeout);
	if (rdma_accept(id, &cp))
		t_sc_bad(e, ev);
	return 0;
}

static int t_sc_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct t_sc_end *e = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return t_sc_request(id, ev);
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		atomic_inc(&t_sc.addr);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		atomic_inc(&t_sc.route);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		e->established = true;
		atomic_inc(e->passive ? &t_sc.est_pas : &t_sc.est_act);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		atomic_inc(e->passive ? &t_sc.disc_pas : &t_sc.disc_act);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		t_sc_bad(e, ev);
		break;
	}
	wake_up(&t_sc.wq);
	return 0;
}

/*
 * Until @cnt reaches @want, what has gone wrong makes up the rest, or
 * nothing has moved for wait_ms; returns the count.
 */
static int t_sc_wait(atomic_t *cnt, int want)
{
	int now;

	for (;;) {
		now = atomic_read(cnt);
		if (now >= want || now + atomic_read(&t_sc.bad) >= want)
			return now;
		if (!wait_event_timeout(t_sc.wq, atomic_read(cnt) != now,
					msecs_to_jiffies(wait_ms)))
			return atomic_read(cnt);
	}
}

static int t_sc_send(struct t_sc_end *e, enum ib_wr_opcode op, u64 raddr,
		     int kind)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(e->buf + T_SC_MSG), .length = T_SC_MSG,
		.lkey = e->qp->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = (u64)e->c->idx << 2 | kind, .sg_list = &sge,
			.num_sge = 1, .opcode = op,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		/* the peer end's PD: its DMA MR's R_Key */
		.rkey = (e == &e->c->a ? &e->c->p : &e->c->a)->qp->pd->unsafe_global_rkey,
	};

	return ib_post_send(e->qp, &wr.wr, NULL);
}

/* Each connection's pattern: its index and the direction. */
static void t_sc_fill(u8 *p, u32 idx, u8 dir)
{
	memset(p, dir, T_SC_MSG);
	memcpy(p, &idx, sizeof(idx));
}

static bool t_sc_same(const u8 *p, u32 idx, u8 dir)
{
	u8 want[T_SC_MSG];

	t_sc_fill(want, idx, dir);
	return !memcmp(p, want, T_SC_MSG);
}

/*
 * A SEND each way and an RDMA WRITE from the active side on every
 * established connection, all posted before any is polled; every
 * completion checked (status, opcode, length, the connection's pattern).
 * Returns the good completions; *want the expected number.
 */
static int t_sc_traffic(int n, int *want, int *bad_status)
{
	int i, good = 0, got = 0, idle = 0, k, done;
	struct ib_cq *cqs[2] = { t_sc.acq, t_sc.pcq };
	struct ib_qp_attr at = { .qp_access_flags = IB_ACCESS_REMOTE_WRITE };
	struct ib_wc wc[16];

	*want = 0;
	*bad_status = 0;
	for (i = 0; i < n; i++) {
		struct t_sc_conn *c = &t_sc.c[i];

		if (!c->a.established || !c->p.established)
			continue;
		ib_modify_qp(c->p.qp, &at, IB_QP_ACCESS_FLAGS);
		t_sc_fill(c->a.buf + T_SC_MSG, i, 0xa1);
		t_sc_fill(c->p.buf + T_SC_MSG, i, 0xb1);
		memset(c->p.buf + 2 * T_SC_MSG, 0, T_SC_MSG);
		if (!t_sc_send(&c->a, IB_WR_SEND, 0, 0))
			++*want;
		if (!t_sc_send(&c->a, IB_WR_RDMA_WRITE,
			       (uintptr_t)(c->p.buf + 2 * T_SC_MSG), 1))
			++*want;
		if (!t_sc_send(&c->p, IB_WR_SEND, 0, 2))
			++*want;
		*want += 2;	/* a receive each side */
	}
	while (got < *want && idle < wait_ms) {
		done = 0;
		for (k = 0; k < 2; k++) {
			int m = ib_poll_cq(cqs[k], ARRAY_SIZE(wc), wc);

			for (i = 0; i < m; i++) {
				u32 idx = wc[i].wr_id >> 2;
				int kind = wc[i].wr_id & 3;
				struct t_sc_conn *c = idx < n ? &t_sc.c[idx] : NULL;
				bool ok = c && wc[i].status == IB_WC_SUCCESS;

				if (wc[i].status != IB_WC_SUCCESS && !*bad_status)
					*bad_status = wc[i].status;
				if (ok && kind == 3)	/* a receive */
					ok = wc[i].opcode == IB_WC_RECV &&
					     wc[i].byte_len == T_SC_MSG &&
					     t_sc_same(k ? c->p.buf : c->a.buf,
						       idx, k ? 0xa1 : 0xb1);
				else if (ok && kind == 1)
					ok = wc[i].opcode == IB_WC_RDMA_WRITE &&
					     t_sc_same(c->p.buf + 2 * T_SC_MSG,
						       idx, 0xa1);
				else if (ok)
					ok = wc[i].opcode == IB_WC_SEND;
				good += ok;
			}
			got += m;
			done += m;
		}
		if (!done) {
			usleep_range(1000, 2000);
			idle += 2;
		} else {
			idle = 0;
		}
	}
	return good;
}

static void t_sc_fini(int n)
{
	int i;

	for (i = 0; t_sc.c && i < n; i++) {
		struct t_sc_end *ends[2] = { &t_sc.c[i].a, &t_sc.c[i].p };
		int k;

		for (k = 0; k < 2; k++) {
			if (!ends[k]->id)
				continue;
			if (ends[k]->qp)
				rdma_destroy_qp(ends[k]->id);
			rdma_destroy_id(ends[k]->id);
		}
	}
	if (t_sc.listen)
		rdma_destroy_id(t_sc.listen);
	if (!IS_ERR_OR_NULL(t_sc.acq))
		ib_destroy_cq(t_sc.acq);
	if (!IS_ERR_OR_NULL(t_sc.pcq))
		ib_destroy_cq(t_sc.pcq);
	vfree(t_sc.c);
	vfree(t_sc.bufs);
	memset(&t_sc, 0, sizeof(t_sc));
}

/*
 * scale: "conns" AF_IB rdma_cm connections act -> pas (across a router
 * on the routed topology) with an RC QP each (two CQs, one a side), all
 * ESTABLISHED at once: every address resolution started, then every
 * route, then every connect, each step waited for as a whole. With
 * hold_ms the driver then waits for the guest test (bench-simfab-scale
 * reads the kernel's memory) to write "release". Then traffic on every
 * connection (t_sc_traffic), a disconnect of each from the active side
 * (DISCONNECTED at both ends), and everything destroyed. Prints
 * "# scale KEY=VALUE" figures. The test's own buffers are vmalloc'ed,
 * so that the kernel's slab holds only what the stack allocates.
 */
static void t_case_scale(void)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = retry, .rnr_retry_count = 7,
	};
	struct ib_cq_init_attr ca = {};
	int ret = t_setup(false), n = conns, i, est = 0, good = 0, want = 0;
	int bad_st = 0, disc = 0, routed = 0;
	struct sockaddr_ib src, dst;
	struct ib_qp_init_attr qa;
	s64 addr_ms = 0, route_ms = 0, conn_ms = 0, tr_ms = 0, disc_ms = 0;
	ktime_t t0, t1;

	memset(&t_sc, 0, sizeof(t_sc));
	init_waitqueue_head(&t_sc.wq);
	if (n < 1 || n > 16000)
		ret = ret ?: -EINVAL;
	if (!ret) {
		t_sc.c = vzalloc(array_size(n, sizeof(*t_sc.c)));
		t_sc.bufs = vzalloc(array_size(n, 5 * T_SC_MSG));
		if (!t_sc.c || !t_sc.bufs)
			ret = -ENOMEM;
	}
	if (!ret) {
		/* a receive and two sends a connection on the active side */
		ca.cqe = 4 * n;
		t_sc.acq = ib_create_cq(t_act.dev, NULL, NULL, NULL, &ca);
		t_sc.pcq = ib_create_cq(t_pas.dev, NULL, NULL, NULL, &ca);
		if (IS_ERR(t_sc.acq) || IS_ERR(t_sc.pcq))
			ret = -ENOMEM;
	}
	for (i = 0; !ret && i < n; i++) {
		struct t_sc_conn *c = &t_sc.c[i];

		c->idx = i;
		c->a.c = c;
		c->p.c = c;
		c->p.passive = true;
		c->a.buf = t_sc.bufs + (size_t)i * 5 * T_SC_MSG;
		c->p.buf = c->a.buf + 2 * T_SC_MSG;
	}
	if (!ret) {
		t_sc.listen = rdma_create_id(&init_net, t_sc_handler, NULL,
					     RDMA_PS_IB, IB_QPT_RC);
		if (IS_ERR(t_sc.listen)) {
			ret = PTR_ERR(t_sc.listen);
			t_sc.listen = NULL;
		}
	}
	t_sib(&dst, &t_pas.gid, T_SC_PORT);
	t_sib(&src, &t_act.gid, 0);
	if (!ret)
		ret = rdma_bind_addr(t_sc.listen, (struct sockaddr *)&dst) ?:
		      rdma_listen(t_sc.listen, 1024);
	t_result(!ret, "listen", "setup, CQs or the listener failed");
	if (ret)
		goto out;

	t0 = ktime_get();
	for (i = 0; i < n; i++) {
		struct t_sc_end *e = &t_sc.c[i].a;

		e->id = rdma_create_id(&init_net, t_sc_handler, e, RDMA_PS_IB,
				       IB_QPT_RC);
		if (IS_ERR(e->id)) {
			e->id = NULL;
			atomic_inc(&t_sc.bad);
			continue;
		}
		if (rdma_bind_addr(e->id, (struct sockaddr *)&src) ||
		    rdma_resolve_addr(e->id, (struct sockaddr *)&src,
				      (struct sockaddr *)&dst, 20000))
			atomic_inc(&t_sc.bad);
	}
	t_sc_wait(&t_sc.addr, n);
	t1 = ktime_get();
	addr_ms = ktime_ms_delta(t1, t0);
	atomic_set(&t_sc.bad, 0);
	for (i = 0; i < n; i++)
		if (t_sc.c[i].a.id && rdma_resolve_route(t_sc.c[i].a.id, 20000))
			atomic_inc(&t_sc.bad);
	routed = t_sc_wait(&t_sc.route, atomic_read(&t_sc.addr));
	route_ms = ktime_ms_delta(ktime_get(), t1);
	t1 = ktime_get();
	atomic_set(&t_sc.bad, 0);
	for (i = 0; i < n; i++) {
		struct t_sc_end *e = &t_sc.c[i].a;
		struct t_sc_pdata pd = {
			.magic = cpu_to_be32(T_SC_MAGIC), .idx = cpu_to_be32(i),
		};

		if (!e->id)
			continue;
		cp.private_data = &pd;
		cp.private_data_len = sizeof(pd);
		t_sc_qp_attr(t_sc.acq, &qa);
		if (rdma_create_qp(e->id, t_act.pd, &qa)) {
			atomic_inc(&t_sc.bad);
			continue;
		}
		e->qp = e->id->qp;
		if (ack_timeout >= 0)
			rdma_set_ack_timeout(e->id, ack_timeout);
		if (t_sc_post_recv(e) || rdma_connect(e->id, &cp))
			atomic_inc(&t_sc.bad);
	}
	t_sc_wait(&t_sc.est_act, routed);
	t_sc_wait(&t_sc.est_pas, atomic_read(&t_sc.est_act));
	conn_ms = ktime_ms_delta(ktime_get(), t1);
	for (i = 0; i < n; i++)
		est += t_sc.c[i].a.established && t_sc.c[i].p.established;
	pr_info("# %s connections wanted=%d addr=%d route=%d established=%d act=%d pas=%d addr_ms=%lld route_ms=%lld connect_ms=%lld total_ms=%lld\n",
		t_case, n, atomic_read(&t_sc.addr), routed, est,
		atomic_read(&t_sc.est_act), atomic_read(&t_sc.est_pas),
		addr_ms, route_ms, conn_ms, ktime_ms_delta(ktime_get(), t0));
	t_result(est == n, "established", "not every connection ESTABLISHED at both ends");

	if (hold_ms > 0) {
		pr_info("# %s holding established=%d\n", t_case, est);
		for (i = 0; i < hold_ms && !READ_ONCE(release); i += 100)
			msleep(100);
		pr_info("# %s released after_ms=%d by=%s\n", t_case, i,
			READ_ONCE(release) ? "release" : "hold_ms");
	}

	t1 = ktime_get();
	good = t_sc_traffic(n, &want, &bad_st);
	tr_ms = ktime_ms_delta(ktime_get(), t1);
	pr_info("# %s traffic completions=%d of=%d status=%d messages=%d bytes=%d ms=%lld\n",
		t_case, good, want, bad_st, est * 3, est * 3 * T_SC_MSG, tr_ms);
	t_result(est && good == want && want == 5 * est, "traffic",
		 "a completion missing, with a bad status or with the wrong data");

	/* DREQ from the active side; rdma_cm's passive side answers with
	 * the DREP when its consumer disconnects too (cma.c rdma_disconnect).
	 */
	t1 = ktime_get();
	atomic_set(&t_sc.bad, 0);
	for (i = 0; i < n; i++)
		if (t_sc.c[i].a.established)
			rdma_disconnect(t_sc.c[i].a.id);
	disc = t_sc_wait(&t_sc.disc_pas, est);
	for (i = 0; i < n; i++)
		if (t_sc.c[i].p.established)
			rdma_disconnect(t_sc.c[i].p.id);
	disc += t_sc_wait(&t_sc.disc_act, est);
	disc_ms = ktime_ms_delta(ktime_get(), t1);
	pr_info("# %s disconnected=%d of=%d ms=%lld\n", t_case, disc, 2 * est,
		disc_ms);
	t_result(disc == 2 * est, "disconnected",
		 "want DISCONNECTED at both ends of every connection");
out:
	t_sc_fini(n);
	t_teardown();
}

/*
 * A QP migrates to its alternate path by itself, so the alternate's port
 * is a port of the QP's own CA (IBA 17.2.8); the other port of an
 * mlx5-style adapter is another ib_device. With act_alt on another device
 * than act, ib_send_cm_req() refuses the alternate (-EINVAL), sends no REQ
 * and leaves the id idle; with pas_alt on another device than pas, the
 * passive CM rejects the REQ (Invalid Alternate GID, IBA 12.6.7.2) before
 * its consumer sees it.
 */
static void t_case_alt_other_device(void)
{
	bool act_other, pas_other;
	int ret;

	t_alt_any_dev = true;
	ret = t_setup(true);
	t_alt_any_dev = false;
	act_other = t_act.alt_dev;
	pas_other = t_pas.alt_dev;
	t_result(!ret && (act_other || pas_other), "setup",
		 "no side with its alternate on another device");
	if (ret || !(act_other || pas_other))
		goto out;
	ret = t_ibcm_connect(&t_act, &t_pas, true);
	pr_info("# %s connect ret=%d act_other=%d pas_other=%d rej=%d pas_req=%d\n",
		t_case, ret, act_other, pas_other, t_act.rej_reason,
		!!t_pas.cm);
	if (act_other) {
		t_result(ret == -EINVAL, "req-refused",
			 "ib_send_cm_req() took an alternate from another device");
		t_result(t_act.cm && t_act.cm->state == IB_CM_IDLE, "id-idle",
			 "the refused REQ left the cm_id out of IB_CM_IDLE");
	} else {
		t_result(ret == -ECONNREFUSED &&
			 t_act.rej_reason == IB_CM_REJ_INVALID_ALT_GID,
			 "rej-invalid-alt-gid",
			 "the REQ was not rejected with Invalid Alternate GID");
	}
	t_result(!t_pas.cm, "pas-no-req",
		 "the passive consumer got a REQ with an alternate it cannot load");
out:
	t_teardown();
}

static int __init t_init(void)
{
	char *list = kstrdup(cases, GFP_KERNEL), *p = list, *c;

	if (!list)
		return -ENOMEM;
	ib_sa_register_client(&t_sa);
	pr_info("KTAP version 1\n");
	while ((c = strsep(&p, ",")) != NULL) {
		if (!*c)
			continue;
		t_case = c;
		pr_info("# case %s act=%s pas=%s act_alt=%s pas_alt=%s alt_dlid=%u ret=%d pri_dlid=%u ret_dlid=%u alt_ret_dlid=%u\n",
			c, act, pas, act_alt, pas_alt, alt_dlid, t_ret, pri_dlid,
			ret_dlid, alt_ret_dlid);
		if (!strcmp(c, "rc"))
			t_case_rc();
		else if (!strcmp(c, "big"))
			t_case_big();
		else if (!strcmp(c, "link-down"))
			t_case_link_down();
		else if (!strcmp(c, "apm-manual"))
			t_case_apm(false);
		else if (!strcmp(c, "apm-auto"))
			t_case_apm(true);
		else if (!strcmp(c, "apm-dreq"))
			t_case_apm_dreq();
		else if (!strcmp(c, "alt-routed"))
			t_case_alt_routed();
		else if (!strcmp(c, "cma-apm"))
			t_case_cma_apm();
		else if (!strcmp(c, "cma-lap"))
			t_case_cma_lap();
		else if (!strcmp(c, "cma-lap-unloadable"))
			t_case_cma_lap_unloadable();
		else if (!strcmp(c, "cma-lap-refused"))
			t_case_cma_lap_refused();
		else if (!strcmp(c, "cma-altroute"))
			t_case_cma_altroute();
		else if (!strcmp(c, "cma-altroute-route"))
			t_case_cma_altroute_route();
		else if (!strcmp(c, "cma-altroute-destroy"))
			t_case_cma_altroute_destroy();
		else if (!strcmp(c, "cma-altroute-late"))
			t_case_cma_altroute_late();
		else if (!strcmp(c, "cma-altwait-destroy"))
			t_case_cma_altwait_destroy();
		else if (!strcmp(c, "ibcm"))
			t_case_ibcm();
		else if (!strcmp(c, "lap"))
			t_case_lap();
		else if (!strcmp(c, "lap-silent"))
			t_case_lap_silent();
		else if (!strcmp(c, "lap-deaf"))
			t_case_lap_deaf();
		else if (!strcmp(c, "lap-qp-refuses"))
			t_case_lap_qp_refuses();
		else if (!strcmp(c, "ip"))
			t_case_ip();
		else if (!strcmp(c, "ibcm-flap"))
			t_case_ibcm_flap();
		else if (!strcmp(c, "scale"))
			t_case_scale();
		else if (!strcmp(c, "lost-rtu"))
			t_case_lost_rtu();
		else if (!strcmp(c, "mig-err"))
			t_case_mig_err();
		else if (!strcmp(c, "rkey"))
			t_case_rkey();
		else if (!strcmp(c, "alt-other-device"))
			t_case_alt_other_device();
		else
			t_result(false, "case", "unknown case");
	}
	pr_info("1..%d\n", t_num);
	ib_sa_unregister_client(&t_sa);
	kfree(list);
	return 0;
}

static void __exit t_exit(void)
{
}

module_init(t_init);
module_exit(t_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("simfab RC, APM and connection test driver (KTAP)");
