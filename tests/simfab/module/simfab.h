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
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>

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
#define SF_MAX_PAYLOAD	4096
#define SF_GRH_LEN	40
#define SF_NCOUNTERS	64
#define SF_CAPTURE_LEN	256

struct sf_dev;
struct sf_router;

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

struct sf_port {
	struct sf_dev *dev;	/* a host's port: its device */
	struct sf_router *rtr;	/* a router's port: its router */
	int subnet;		/* index in sf_fab.subnets */
	u32 num;		/* 1-based port number */
	u64 guid;
	u16 lid;		/* base LID, aligned to 2^LMC (IBA 7.11.1) */
	u16 pkeys[SF_PKEYS];
	bool down;		/* set through debugfs simfab/ctl */
	u8 phys;		/* PortPhysicalState while down */
	u8 side;		/* partition side (ctl "partition") */
	struct sf_counter ctr[SF_NCOUNTERS];
	struct sf_qp *gsi;	/* QP1 of this port, set by create_qp */
};

struct sf_host {
	char name[SF_NAME_LEN];
	int nports;
	int subnet;
	struct sf_props props;
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
	bool down;
	u64 forwarded;
	u64 dropped;
};

/* OpenSM prefix route (opensm(8) PREFIX ROUTES): prefix 0 is "*". */
struct sf_route {
	u64 prefix;
	int nvia;
	int via[SF_MAX_VIA];	/* router indexes, tried in order */
};

struct sf_subnet {
	char name[SF_NAME_LEN];
	u64 prefix;
	u8 lmc;
	struct sf_props def;	/* host defaults and router ports' props */
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
	struct sf_port port[SF_MAX_PORTS];
	bool registered;
};

struct sf_fabric {
	int nsubnets;
	struct sf_subnet subnets[SF_MAX_SUBNETS];
	int nhosts;
	struct sf_host hosts[SF_MAX_HOSTS];
	struct sf_dev *devs[SF_MAX_HOSTS];
	int nrouters;
	struct sf_router routers[SF_MAX_ROUTERS];
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
	u32 len;
	u8 data[];
};

struct sf_port *sf_port_by_lid(int subnet, u16 lid, u16 *path_bits);
struct sf_port *sf_port_by_guid(int subnet, u64 guid);
struct sf_pkt *sf_pkt_alloc(u32 len, gfp_t gfp);
bool sf_deliver(struct sf_pkt *pkt);
void sf_count(struct sf_port *port, int dir, const u8 *mad, u32 len);
void sf_capture(const struct sf_pkt *pkt, const char *verdict);
void sf_port_props(const struct sf_port *port, struct sf_props *props);
bool sf_port_absent(const struct sf_port *port);

/* simfab_sa.c */
void sf_sa_recv(struct sf_pkt *pkt);
u64 sf_sa_count(int which);
void sf_sa_cleanup(void);

#endif
