/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simfab: a simulated InfiniBand fabric for ib-routed's tests.
 *
 * Test-only code: never installed by the packages. See tests/simfab/README.md
 * for the topology syntax and the IBA/OpenSM reference of each behaviour.
 */
#ifndef SIMFAB_H
#define SIMFAB_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>

#include "simfab_compat.h"

#define SF_MAX_HOSTS	16
#define SF_MAX_PORTS	2
#define SF_MAX_SUBNETS	4
#define SF_MAX_ROUTERS	4
#define SF_MAX_RPORTS	SF_MAX_SUBNETS
#define SF_MAX_ROUTES	8
#define SF_MAX_VIA	2
#define SF_MAX_FAULTS	8
#define SF_SUBNET_PORTS	(SF_MAX_HOSTS * SF_MAX_PORTS + SF_MAX_ROUTERS)
#define SF_NAME_LEN	16
#define SF_PKEYS	2
#define SF_MAX_SGE	4
#define SF_MAX_PAYLOAD	4096	/* one packet: IBA's largest MTU */
#define SF_RC_MAX_MSG	65536	/* an RC message, segmented (max_msg_sz) */
#define SF_GRH_LEN	40
#define SF_NCOUNTERS	64
#define SF_CAPTURE_LEN	256
#define SF_MAX_CQE	65536
#define SF_MC_LID_BASE	0xc000	/* IBA 4.1.2: multicast LIDs */
#define SF_MAX_MCG	128	/* multicast groups, all subnets */
#define SF_MC_QPN	0xffffff	/* IBA 10.5.2: the multicast QPN */
#define SF_MC_FANOUT	32	/* QPs one multicast packet reaches */
#define SF_MAX_GUESTS	4	/* kernels sharing one fabric (README "Guests") */

struct sf_dev;
struct seq_file;
struct sf_router;
struct sf_qp;

struct sf_counter {
	u8 dir;			/* 0 = sent, 1 = received */
	u8 mgmt_class;
	u8 method;
	u16 attr_id;
	u64 count;
};

/* What the SA computes paths from (README "Topology"). */
struct sf_props {
	u8 sl;			/* SL the SA hands out for paths to/from here */
	u8 mtu;			/* enum ib_mtu */
	u8 rate;		/* enum ib_rate */
	u8 life;		/* PacketLifeTime exponent */
};

/*
 * The virtual lanes of a port as its SM set them up (README "SL to VL"):
 * PortInfo:OperationalVLs and the SLtoVLMappingTable (IBA 7.6.6,
 * 14.2.5.6, 14.2.5.8).
 */
struct sf_vlcfg {
	u8 vls;			/* data VLs the port runs: 1, 2, 4, 8 or 15 */
	bool table;		/* sl2vl given in the topology, taken as it is */
	u8 sl2vl[16];		/* SL -> VL; VL15 drops (IBA 7.6.6) */
};

struct sf_port {
	struct sf_dev *dev;	/* a host's port: its device */
	struct sf_router *rtr;	/* a router's port: its router */
	int subnet;		/* index in sf_fab.subnets */
	u32 num;		/* 1-based port number on its device */
	u32 hnum;		/* 1-based port number on its host or router:
				 * the "H/P" of ctl, debugfs and the capture
				 * (= num but on an mlx5-style host)
				 */
	u64 guid;
	u16 lid;		/* base LID, aligned to 2^LMC (IBA 7.11.1) */
	u16 router_lid;		/* its entry in the routers' GID-to-LID
				 * table: its LID as of the last sweep
				 */
	u16 pkeys[SF_PKEYS];
	bool down;		/* set through debugfs simfab/ctl */
	u8 phys;		/* PortPhysicalState while down */
	u8 side;		/* partition side (ctl "partition") */
	struct sf_counter ctr[SF_NCOUNTERS];
	struct sf_qp *gsi;	/* QP1 of this port, set by create_qp */
	u64 rc_tx, rc_rx;	/* RC packets sent and taken */
	u64 ud_tx, ud_rx;	/* UD packets (not QP1) sent and taken */
	u64 mc_tx, mc_rx;	/* of them multicast: sent, copies taken */
	u64 mtu_drops;		/* longer than this port's MTU (drop-mtu) */
	u64 down_drops;		/* for it while it was down (drop-port-down) */
	u64 vl_drops;		/* SL mapped to VL15 or a VL not run here */
};

/*
 * The adapter generation a host models (README "Topology", hca=):
 * mlx4 (ConnectX-3 and before) one ib_device with all the ports and one
 * NodeGUID; mlx5 (ConnectX-4 and later, IB link layer) one ib_device per
 * port, each with its own NodeGUID, the SystemImageGUID shared.
 */
enum sf_hca { SF_HCA_MLX4, SF_HCA_MLX5 };

struct sf_host {
	char name[SF_NAME_LEN];
	int nports;
	u8 hca;			/* enum sf_hca */
	u8 ack_delay;		/* local_ca_ack_delay of its devices */
	int ndevs;		/* its ib_devices (mlx5: one per port) */
	struct sf_dev *devs[SF_MAX_PORTS];
	struct sf_port *port[SF_MAX_PORTS];	/* by host port number - 1 */
	int subnet;		/* its (first) port's subnet: props apply there */
	int psubnet[SF_MAX_PORTS];	/* each port's subnet ("subnets=") */
	bool iprouter;		/* the guest forwards IP between its ports */
	u8 guest;		/* the kernel that holds it (1: the fabric's) */
	struct sf_props props;
	struct sf_vlcfg vl;	/* its ports on its own subnet */
	/*
	 * The default partition's entry: 0xffff (full member) or 0x7fff
	 * (limited, as the compute nodes of a partitioned fabric are).
	 */
	u16 pkey1;
	u16 pkey2;		/* second P_Key table entry */
	u16 lids[SF_MAX_PORTS];	/* assigned at parse time */
};

/* An IB router (IBA 19): one port on each of its subnets. */
struct sf_router {
	char name[SF_NAME_LEN];
	int nports;
	struct sf_port port[SF_MAX_RPORTS];
	u8 slmap[16];		/* ingress SL -> egress SL */
	u16 pkey2;
	bool dlid_gid;		/* dlid=gid: DLID = DGID[15:0] (NVIDIA) */
	bool down;
	bool sa_down;		/* the SAs' view: down as of the last sweep */
	u64 forwarded;
	u64 dropped;
};

/* OpenSM prefix route (opensm(8) PREFIX ROUTES): prefix 0 is "*". */
struct sf_route {
	u64 prefix;
	int nvia;		/* 0 with any: via=* (OpenSM's router GUID 0) */
	int via[SF_MAX_VIA];	/* router indexes, tried in order */
	bool any;
};

/* router_choice=opensm (OpenSM find_router) or first-present (not OpenSM) */
extern bool sf_rc_opensm;

struct sf_subnet {
	char name[SF_NAME_LEN];
	u64 prefix;
	u8 lmc;
	struct sf_props def;	/* host defaults and router ports' props */
	struct sf_vlcfg vl;	/* every port's, switches' and routers' too */
	char sm_name[SF_NAME_LEN];
	unsigned int sm_portnum;
	struct sf_port *sm;
	u16 sm_lid;
	int next_lid;
	int nroutes;
	struct sf_route routes[SF_MAX_ROUTES];
	int nports;		/* every port, hosts' and routers', in order */
	struct sf_port *ports[SF_SUBNET_PORTS];
};

struct sf_dev {
	struct ib_device ibdev;
	int host;
	int nports;		/* phys_port_cnt */
	struct sf_port port[SF_MAX_PORTS];
	bool registered;
};

/*
 * A multicast group of one subnet as its SA keeps it (IBA 15.2.5.17
 * MCMemberRecord), with the member ports and their JoinState bits
 * (IBA table 212: 1 FullMember, 2 NonMember, 4 SendOnlyNonMember,
 * 8 SendOnlyFullMember). The switch forwards the group's MLID to the
 * members that receive (Full or NonMember).
 */
struct sf_mcg {
	bool used;
	bool well_known;	/* created in advance: kept without members */
	int subnet;
	union ib_gid mgid;
	u16 mlid;
	u32 qkey;
	u16 pkey;
	u8 mtu, rate, life, sl, tclass, hop, scope;
	u32 flow;
	u8 join[SF_SUBNET_PORTS];	/* by index in the subnet's ports[] */
};

/* A UD QP attached to a multicast group (attach_mcast), under sf_lock. */
struct sf_mcatt {
	struct list_head list;
	struct sf_qp *qp;
	union ib_gid mgid;
	u16 mlid;
	int count;		/* attaches not yet detached */
};

struct sf_fabric {
	int nsubnets;
	struct sf_subnet subnets[SF_MAX_SUBNETS];
	int nhosts;
	struct sf_host hosts[SF_MAX_HOSTS];
	int ndevs;
	struct sf_dev *devs[SF_MAX_HOSTS * SF_MAX_PORTS];	/* in registration order */
	int nrouters;
	struct sf_router routers[SF_MAX_ROUTERS];
	struct sf_mcg mcgs[SF_MAX_MCG];	/* under sf_lock */
};

extern struct sf_fabric sf_fab;
extern spinlock_t sf_lock;

/* A packet on the simulated wire: LRH, optional GRH, BTH/DETH, payload. */
struct sf_pkt {
	struct list_head list;
	struct sf_port *src;	/* the port that put it on this subnet */
	struct sf_port *at;	/* the port its DLID names, once looked up */
	int subnet;		/* the subnet it is on now */
	bool delayed;		/* already held back by a delay fault */
	struct sf_port *link_dst; /* came over the link for this local port */
	unsigned long due;	/* jiffies, while held back */
	struct sf_qp *sqp;	/* NULL for packets the SA originates */
	u64 wr_id;
	bool signaled;
	u16 slid;
	u16 dlid;
	u8 sl;
	bool has_grh;
	u8 grh[SF_GRH_LEN];	/* wire format */
	u32 dqpn;
	u32 sqpn;
	u32 qkey;
	u16 pkey;
	bool has_imm;
	__be32 imm;
	/* RC (IBA 9.2-9.4): BTH, RETH, AETH; the payload is data[]. */
	bool rc;
	u8 opcode;		/* BTH OpCode, enum sf_rc_op */
	bool mig;		/* BTH MigReq */
	u32 psn;
	u64 va;			/* RETH */
	u32 rkey;
	u32 dma_len;
	u8 syndrome;		/* AETH */
	u32 ieth;		/* IETH: the R_Key a SEND with Invalidate names */
	u32 len;
	u8 data[];
};

/* BTH OpCodes, RC (IBA 9.2, table 38). */
enum sf_rc_op {
	SF_RC_SEND_FIRST = 0x00,
	SF_RC_SEND_MIDDLE = 0x01,
	SF_RC_SEND_LAST = 0x02,
	SF_RC_SEND_LAST_IMM = 0x03,
	SF_RC_SEND_ONLY = 0x04,
	SF_RC_SEND_ONLY_IMM = 0x05,
	SF_RC_WRITE_FIRST = 0x06,
	SF_RC_WRITE_MIDDLE = 0x07,
	SF_RC_WRITE_LAST = 0x08,
	SF_RC_WRITE_LAST_IMM = 0x09,
	SF_RC_WRITE_ONLY = 0x0a,
	SF_RC_WRITE_ONLY_IMM = 0x0b,
	SF_RC_READ_REQ = 0x0c,
	SF_RC_READ_RESP_FIRST = 0x0d,
	SF_RC_READ_RESP_MIDDLE = 0x0e,
	SF_RC_READ_RESP_LAST = 0x0f,
	SF_RC_READ_RESP_ONLY = 0x10,
	SF_RC_ACK = 0x11,
	SF_RC_SEND_LAST_INV = 0x16,	/* with Invalidate: IETH (IBA 9.3.5.x) */
	SF_RC_SEND_ONLY_INV = 0x17,
};

/* OpCodes with an ImmDt (IBA 9.2, table 38): the last packet's. */
static inline bool sf_op_imm(u8 op)
{
	return op == SF_RC_SEND_LAST_IMM || op == SF_RC_SEND_ONLY_IMM ||
	       op == SF_RC_WRITE_LAST_IMM || op == SF_RC_WRITE_ONLY_IMM;
}

/* SEND Last/Only with Invalidate: the IETH names an R_Key to invalidate. */
static inline bool sf_op_inv(u8 op)
{
	return op == SF_RC_SEND_LAST_INV || op == SF_RC_SEND_ONLY_INV;
}

/* AETH syndromes (IBA 9.3, 9.7.5). */
#define SF_AETH_ACK		0x00
#define SF_AETH_RNR_NAK		0x20
#define SF_AETH_NAK_INV		0x61
#define SF_AETH_NAK_ACCESS	0x62

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

/* One path of an RC QP: the primary or the alternate (IBA 11.2.4). */
struct sf_path {
	struct rdma_ah_attr ah;	/* sgid_attr not kept (NULL) */
	u32 port;
	u16 pkey_index;
	u8 timeout;		/* Local ACK Timeout exponent, 0 = none */
};

/* An RC send WQE: sent, waiting for its ACK or READ response. */
struct sf_swqe {
	struct list_head list;
	u64 wr_id;
	enum ib_wr_opcode opcode;
	bool signaled;
	enum ib_wc_status status;	/* once completed */
	u32 psn;			/* of its first packet */
	u32 npkts;			/* PSNs it takes (READ: responses) */
	u32 rd_next;			/* READ: next response PSN expected */
	u32 len;
	u64 remote_addr;
	u32 rkey;
	__be32 imm;
	u32 inv_rkey;			/* SEND_WITH_INV: the peer's R_Key */
	bool local;			/* REG_MR / LOCAL_INV: no packets */
	int num_sge;
	struct ib_sge sge[SF_MAX_SGE];	/* READ: where the response goes */
	u8 data[];			/* SEND/WRITE payload */
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
	bool mc_block_lb;	/* IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK */
	/* RC only (simfab_rc.c); under sf_lock. */
	struct sf_path pri, alt;
	bool has_alt;		/* an alternate path is loaded */
	u8 mig;			/* enum ib_mig_state */
	u32 dest_qpn;
	u32 sq_psn;		/* next PSN to send */
	u32 rq_psn;		/* next PSN expected */
	u8 retry_cnt, rnr_retry, min_rnr_timer;
	u8 max_rd_atomic, max_dest_rd_atomic;
	u8 path_mtu;
	/* The responder's message in progress (IBA 9.7.4), FIRST to LAST. */
	bool rmsg;		/* a FIRST came, its LAST not yet */
	bool rmsg_wqe;		/* rmsg_w is a receive WQE taken for it */
	u8 rmsg_op;		/* the FIRST's OpCode */
	struct sf_rwqe rmsg_w;
	u32 rmsg_len;		/* payload bytes so far */
	u64 rmsg_va;		/* RDMA WRITE: the RETH's VA and length */
	u32 rmsg_dma_len;
	int access;
	int sq_size, sq_count;
	struct list_head sq;	/* struct sf_swqe, oldest first */
	u8 retries;		/* left for the oldest unacknowledged PSN */
	u8 rnr_retries;
	bool rnr_wait;		/* the timer runs for an RNR NAK */
	struct delayed_work rto; /* the Local ACK Timeout */
	u64 tx, rx, retrans, path_drops, migrations;
	/* Appended for the COMM_EST, PATH_MIG_ERR and R_Key rules. */
	bool comm_est;		/* IB_EVENT_COMM_EST raised since RTR */
	u32 rmsg_rkey;		/* RDMA WRITE in progress: its RETH R_Key */
};

/*
 * A memory region (simfab_rc.c): what the responder checks an R_Key
 * against (IBA 10.6, 9.7.5.2; rxe check_rkey). A DMA MR covers all of
 * memory; a fast-registration MR (IB_MR_TYPE_MEM_REG) its pages from
 * ib_map_mr_sg once an IB_WR_REG_MR made it valid.
 */
struct sf_mr {
	struct ib_mr ibmr;
	u32 key;		/* the R_Key it answers to while valid */
	int access;		/* IB_ACCESS_* */
	bool dma;		/* get_dma_mr: every address */
	bool valid;
	u64 iova, length;	/* registered range (fast registration) */
	u64 off0;		/* first byte's offset in pages[0] */
	u64 *pages;		/* kernel virtual page addresses */
	u32 max_pages, npages;
};

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

u64 sf_host_sysimage(const struct sf_host *h);
struct sf_port *sf_port_by_lid(int subnet, u16 lid, u16 *path_bits);
struct sf_port *sf_port_by_guid(int subnet, u64 guid);

/*
 * GIDs per port (module parameter gids, 1 or 2). With 2, GID index 1 is an
 * alias GUID, as an SM assigns alias GUIDs to SR-IOV virtual functions
 * through GUIDInfo (IBA 14.2.5.13; OpenSM osm_sa_guidinfo_record.c): a
 * second GID of the same port, owned by it for delivery and in the SA.
 */
extern unsigned int sf_gids;
#define SF_ALIAS_BIT	BIT_ULL(48)	/* 0x5346... -> 0x5347... */
/*
 * alias=lid: the alias GUID is {0, LID} instead, as the SM allocates it
 * for hosts behind NVIDIA SB7780/SB7880 routers ("alias GID = {subnet
 * prefix, reserved[63:16] 0, LID[15:0]}", MLNX-OS user manual, "IB
 * Router"), which take the next subnet's DLID from those 16 bits.
 */
extern bool sf_alias_lid;

static inline u64 sf_port_iid(const struct sf_port *port, unsigned int index)
{
	if (!index)
		return port->guid;
	return sf_alias_lid ? port->lid : port->guid ^ SF_ALIAS_BIT;
}

bool sf_port_owns_iid(const struct sf_port *port, u64 iid);

/*
 * Several kernels on one fabric (README "Guests"): module parameter guest
 * says which of the topology's guests this kernel is; guest 1 runs the
 * fabric (switches, routers, SAs, faults), the others only their hosts'
 * CAs, and packets cross between them over the network device `link`.
 */
extern unsigned int sf_guest;

static inline bool sf_host_local(const struct sf_host *h)
{
	return h->guest == sf_guest;
}

/* A host's port held by another guest's kernel (no ib_device here). */
static inline bool sf_port_remote(const struct sf_port *port)
{
	return port->dev && !sf_host_local(&sf_fab.hosts[port->dev->host]);
}

/* simfab_link.c */
int sf_link_init(const char *topology);
void sf_link_exit(void);
const char *sf_link_send(const struct sf_pkt *pkt, const struct sf_port *port);
void sf_link_counters(struct seq_file *m);
u32 sf_port_mtu(const struct sf_port *port);
struct sf_pkt *sf_pkt_alloc(u32 len, gfp_t gfp);
int sf_rq_push(struct sf_qp *qp, const struct ib_recv_wr *wr);
bool sf_deliver(struct sf_pkt *pkt);
void sf_count(struct sf_port *port, int dir, const u8 *mad, u32 len);
void sf_capture(const struct sf_pkt *pkt, const char *verdict);
void sf_port_props(const struct sf_port *port, struct sf_props *props);
bool sf_port_absent(const struct sf_port *port);
bool sf_port_cut_off(const struct sf_port *port);

void sf_cq_add(struct sf_cq *cq, const struct ib_wc *wc);
void sf_build_grh(struct sf_pkt *pkt, struct sf_port *port,
		  const struct ib_global_route *g);
bool sf_pkey_match(u16 a, u16 b);
bool sf_scatter(struct sf_rwqe *w, const u8 *src, u32 len, u32 skip);
void sf_xmit(struct sf_pkt *pkt);
int simfab_ctl(const char *cmd);

/* simfab_rc.c */
int sf_rc_create(struct sf_qp *qp, struct ib_qp_init_attr *init);
void sf_rc_destroy(struct sf_qp *qp);
int sf_rc_modify(struct sf_qp *qp, struct ib_qp_attr *attr, int mask);
void sf_rc_query(struct sf_qp *qp, struct ib_qp_attr *attr,
		 struct ib_qp_init_attr *init);
int sf_rc_post_send(struct sf_qp *qp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad);
int sf_rc_post_recv(struct sf_qp *qp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad);
const char *sf_rc_rx(struct sf_pkt *pkt, struct sf_port *dst);
struct ib_mr *sf_mr_get_dma(struct ib_pd *pd, int acc);
struct ib_mr *sf_mr_alloc(struct ib_pd *pd, enum ib_mr_type type,
			  u32 max_num_sg);
int sf_mr_map_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		 unsigned int *sg_offset);
int sf_mr_dereg(struct ib_mr *mr);
extern struct workqueue_struct *sf_wq;
extern struct xarray sf_qps;

int sf_port_index(const struct sf_port *port);

/* simfab_sa.c */
void sf_sa_recv(struct sf_pkt *pkt);
u64 sf_sa_count(int which);
void sf_sa_cleanup(void);
void sf_sa_mcast_init(void);
struct sf_mcg *sf_mcg_by_mlid(int subnet, u16 mlid);

#endif
