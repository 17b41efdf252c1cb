// SPDX-License-Identifier: GPL-2.0
/*
 * simfab: registers one IB-link-layer CA per host of simulated subnets and
 * carries UD/GSI packets between their ports and through IB routers between
 * the subnets, so that ib_mad, ib_sa, ib_cm and rdma_cm run unmodified on a
 * machine without InfiniBand hardware.
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
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>

#include "simfab.h"
#include "simfab_compat.h"

static char *topology =
	"subnet prefix=0xfe80000000000000 lmc=1 sm=h1:1;"
	"host h1 ports=1;"
	"host h2 ports=2 mtu=5;"
	"host h3 ports=1 sl=1 mtu=3 rate=3 life=20 pkey2=0x0001";
module_param(topology, charp, 0444);
MODULE_PARM_DESC(topology, "subnets, hosts, routers, routes: tests/simfab/README.md");

unsigned int sf_gids = 1;
module_param_named(gids, sf_gids, uint, 0444);
MODULE_PARM_DESC(gids, "GIDs per port: 1, or 2 for an alias GUID at GID index 1 (GUIDInfo, IBA 14.2.5.13)");

static char *alias = "guid";
module_param(alias, charp, 0444);
MODULE_PARM_DESC(alias, "the alias GUID of GID index 1 (gids=2): guid (the port GUID with bit 48 flipped) or lid ({0, LID}, for NVIDIA routers' dlid=gid): tests/simfab/README.md");
bool sf_alias_lid;

static char *router_choice = "opensm";
module_param(router_choice, charp, 0444);
MODULE_PARM_DESC(router_choice, "opensm (default; OpenSM find_router: first matching route, its one router as of the last sweep) or first-present (NOT OpenSM: the first present router of via=, at once): tests/simfab/README.md");
bool sf_rc_opensm;

unsigned int sf_guest = 1;
module_param_named(guest, sf_guest, uint, 0444);
MODULE_PARM_DESC(guest, "which of the topology's guests this kernel is (1, the default, runs the fabric): tests/simfab/README.md \"Guests\"");

struct sf_fabric sf_fab;
DEFINE_SPINLOCK(sf_lock);

DEFINE_XARRAY_ALLOC1(sf_qps);		/* UD and RC QP numbers, fabric-wide */
struct workqueue_struct *sf_wq;
static LIST_HEAD(sf_wire);		/* packets in flight, under sf_lock */
static LIST_HEAD(sf_mcatts);		/* struct sf_mcatt, under sf_lock */
static struct dentry *sf_debugfs;
static bool sf_stopping;

/* ---- verbs objects ---------------------------------------------------- */

struct sf_pd {
	struct ib_pd ibpd;
};

static inline struct sf_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sf_dev, ibdev);
}

static struct sf_subnet *subnet_of(const struct sf_port *port)
{
	return &sf_fab.subnets[port->subnet];
}

/*
 * A host's properties apply on its own subnet; a router's ports and a
 * multi-subnet host's ports on its other subnets have that subnet's
 * defaults.
 */
static const struct sf_host *sf_port_own_host(const struct sf_port *port)
{
	if (port->dev && sf_fab.hosts[port->dev->host].subnet == port->subnet)
		return &sf_fab.hosts[port->dev->host];
	return NULL;
}

void sf_port_props(const struct sf_port *port, struct sf_props *props)
{
	const struct sf_host *h = sf_port_own_host(port);

	*props = h ? h->props : subnet_of(port)->def;
}

/*
 * A port's MTU in bytes: its active MTU (a router port's and a host port
 * on another subnet's: that subnet's). The switch ports of simfab's
 * subnets run 4096, so the link to a port has that port's MTU.
 */
u32 sf_port_mtu(const struct sf_port *port)
{
	struct sf_props pr;

	sf_port_props(port, &pr);
	return ib_mtu_enum_to_int(pr.mtu);
}

/*
 * IB never fragments (IBA 7.7.8, 9.4): a packet whose payload is longer
 * than the MTU of the port it leaves by, or of the link it goes on, is
 * dropped there and counted at that port ("drop-mtu").
 */
static bool sf_mtu_drop(struct sf_port *port, const struct sf_pkt *pkt)
{
	unsigned long flags;

	if (pkt->len <= sf_port_mtu(port))
		return false;
	spin_lock_irqsave(&sf_lock, flags);
	port->mtu_drops++;
	spin_unlock_irqrestore(&sf_lock, flags);
	return true;
}

/*
 * The VLs a port runs and its SL2VL table: a host's own on its subnet, the
 * subnet's for every other port (routers', and the switch ports, which
 * sf_switch_vl() takes separately).
 */
static const struct sf_vlcfg *sf_port_vlcfg(const struct sf_port *port)
{
	const struct sf_host *h = sf_port_own_host(port);

	return h ? &h->vl : &subnet_of(port)->vl;
}

/*
 * The VL a packet of @sl takes through a port with @c on a link that runs
 * @vls data VLs (IBA 7.6.6: each port maps the SL to a VL with its
 * SLtoVLMappingTable). A table from the topology is the SM's, taken as it
 * is; without one, OpenSM's (qos_sl2vl "0,1,...,14,7",
 * OSM_DEFAULT_QOS_SL2VL) with each VL but 15 masked to the link's VLs, as
 * OpenSM's sl2vl_update_table() programs it (osm_qos.c).
 */
static u8 sf_vl_of(const struct sf_vlcfg *c, unsigned int vls, u8 sl)
{
	u8 vl;

	sl &= 15;
	if (c->table)
		return c->sl2vl[sl];
	vl = sl == 15 ? 7 : sl;
	/* OperationalVLs 1, 2, 4, 8, 15: OpenSM's mask (1 << (code - 1)) - 1 */
	return vl & (vls >= 15 ? 15 : vls - 1);
}

/*
 * IBA 7.6.6 and 7.6.2: a data packet whose SL maps to VL15 (the SMPs'
 * lane) is dropped, and so is one mapped to a VL the link does not run
 * (a real port has no buffers for it). Counted at @port ("drop-vl").
 */
static const char *sf_vl_verdict(struct sf_port *port,
				 const struct sf_vlcfg *c, unsigned int vls,
				 u8 sl)
{
	unsigned long flags;
	const char *why;
	u8 vl = sf_vl_of(c, vls, sl);

	if (vl == 15)
		why = "drop-vl15";
	else if (vl >= vls)
		why = "drop-vl";
	else
		return NULL;
	spin_lock_irqsave(&sf_lock, flags);
	port->vl_drops++;
	spin_unlock_irqrestore(&sf_lock, flags);
	return why;
}

/* A packet on @sl leaving @port (a host's CA port, a router's egress). */
static const char *sf_vl_drop(struct sf_port *port, u8 sl)
{
	const struct sf_vlcfg *c = sf_port_vlcfg(port);

	return sf_vl_verdict(port, c, c->vls, sl);
}

/*
 * A packet the subnet's switch sends to @dst: the switch port's table,
 * which the SM programs from the subnet's (a host's own table is its CA
 * port's), on a link that runs the VLs both ends run (OpenSM sets
 * OperationalVLs to the lower of the two ends' VLCap). Counted at @dst.
 */
static const char *sf_switch_vl_drop(struct sf_port *dst,
				     const struct sf_pkt *pkt)
{
	const struct sf_vlcfg *sw = &subnet_of(dst)->vl;

	return sf_vl_verdict(dst, sw, min(sw->vls, sf_port_vlcfg(dst)->vls),
			     pkt->sl);
}

/* The port's index in its subnet's ports[] (the SA's member tables). */
int sf_port_index(const struct sf_port *port)
{
	const struct sf_subnet *sn = subnet_of(port);
	int i;

	for (i = 0; i < sn->nports; i++)
		if (sn->ports[i] == port)
			return i;
	return -1;
}

/*
 * A port the SM does not see: down, or cut off from the SM's side of a
 * partitioned subnet (OpenSM drops both at its next sweep).
 */
bool sf_port_absent(const struct sf_port *port)
{
	return port->down || sf_port_cut_off(port);
}

/* On the other side of a partitioned subnet than its SM (ctl partition). */
bool sf_port_cut_off(const struct sf_port *port)
{
	const struct sf_port *sm = subnet_of(port)->sm;

	return sm && sm->side != port->side;
}

/* "[NAME:]PORT" or "NAME/PORT" of a port, for debugfs. */
static const char *sf_port_owner(const struct sf_port *port)
{
	if (port->dev)
		return sf_fab.hosts[port->dev->host].name;
	return port->rtr->name;
}

/* ---- topology --------------------------------------------------------- */

/* vls=1|2|4|8|15, sl2vl=V,...(16 VLs, 0..15) */
static int sf_parse_vl(struct sf_vlcfg *c, const char *key, char *val)
{
	unsigned int v, n = 0;
	char *e;

	if (!strcmp(key, "vls")) {
		if (kstrtouint(val, 0, &v) ||
		    (v != 1 && v != 2 && v != 4 && v != 8 && v != 15))
			return -EINVAL;
		c->vls = v;
		return 0;
	}
	if (strcmp(key, "sl2vl"))
		return -ENOENT;
	while ((e = strsep(&val, ",")) != NULL) {
		if (n >= 16 || kstrtouint(e, 0, &v) || v > 15)
			return -EINVAL;
		c->sl2vl[n++] = v;
	}
	if (n != 16)
		return -EINVAL;
	c->table = true;
	return 0;
}

static int sf_parse_props(struct sf_props *pr, const char *key, unsigned int v)
{
	if (!strcmp(key, "sl") && v < 16)
		pr->sl = v;
	else if (!strcmp(key, "mtu") && v >= IB_MTU_256 && v <= IB_MTU_4096)
		pr->mtu = v;
	else if (!strcmp(key, "rate") &&
		 (v == IB_RATE_10_GBPS || v == IB_RATE_20_GBPS ||
		  v == IB_RATE_40_GBPS || v == IB_RATE_56_GBPS ||
		  v == IB_RATE_100_GBPS))
		pr->rate = v;
	else if (!strcmp(key, "life") && v < 64)
		pr->life = v;
	else
		return -EINVAL;
	return 0;
}

static int sf_subnet_by_name(const char *name)
{
	int i;

	for (i = 0; i < sf_fab.nsubnets; i++)
		if (!strcmp(sf_fab.subnets[i].name, name))
			return i;
	return -1;
}

static int sf_router_by_name(const char *name)
{
	int i;

	for (i = 0; i < sf_fab.nrouters; i++)
		if (!strcmp(sf_fab.routers[i].name, name))
			return i;
	return -1;
}

static bool sf_name_taken(const char *name)
{
	int i;

	for (i = 0; i < sf_fab.nhosts; i++)
		if (!strcmp(sf_fab.hosts[i].name, name))
			return true;
	return sf_router_by_name(name) >= 0;
}

/* IBA 7.11.1: base LIDs are multiples of 2^LMC, as OpenSM assigns them,
 * counted per subnet from 1 (LID 0 is reserved).
 */
static u16 sf_next_lid(struct sf_subnet *sn)
{
	return ++sn->next_lid << sn->lmc;
}

static struct sf_subnet *sf_new_subnet(const char *name)
{
	struct sf_subnet *sn;

	if (sf_fab.nsubnets >= SF_MAX_SUBNETS)
		return NULL;
	sn = &sf_fab.subnets[sf_fab.nsubnets];
	/* Defaults: OpenSM's SL 0, 2048 MTU, 4X QDR, PacketLifeTime 18
	 * (OpenSM subnet_timeout), link-local prefix, LMC 0.
	 */
	*sn = (struct sf_subnet){ .prefix = 0xfe80000000000000ULL,
		.def = { .sl = 0, .mtu = IB_MTU_2048,
			 .rate = IB_RATE_40_GBPS, .life = 18 },
		.vl = { .vls = 8 } };
	if (name)
		strscpy(sn->name, name, SF_NAME_LEN);
	else
		snprintf(sn->name, SF_NAME_LEN, "s%d", sf_fab.nsubnets);
	sf_fab.nsubnets++;
	return sn;
}

static int sf_parse_subnet_kv(struct sf_subnet *sn, char *key, char *val)
{
	unsigned int v;
	char *pn;
	int ret;

	if (!strcmp(key, "prefix"))
		return kstrtou64(val, 0, &sn->prefix);
	if (!strcmp(key, "sm")) {
		pn = strchr(val, ':');
		sn->sm_portnum = 1;
		if (pn) {
			*pn++ = '\0';
			if (kstrtouint(pn, 0, &sn->sm_portnum))
				return -EINVAL;
		}
		if (strlen(val) >= SF_NAME_LEN)
			return -EINVAL;
		strscpy(sn->sm_name, val, SF_NAME_LEN);
		return 0;
	}
	ret = sf_parse_vl(&sn->vl, key, val);
	if (ret != -ENOENT)
		return ret;
	if (kstrtouint(val, 0, &v))
		return -EINVAL;
	if (!strcmp(key, "lmc")) {
		if (v > 7)
			return -EINVAL;
		sn->lmc = v;
		return 0;
	}
	return sf_parse_props(&sn->def, key, v);
}

/*
 * subnets=S1,S2: one port on each listed subnet, in order (a host that
 * can forward IP between IPoIB subnets); the host's properties start as
 * the first subnet's defaults and apply on that subnet.
 */
static int sf_parse_host_subnets(struct sf_host *h, char *val)
{
	char *name;
	int n = 0, i;

	while ((name = strsep(&val, ",")) != NULL) {
		i = sf_subnet_by_name(name);
		if (i < 0 || n >= SF_MAX_PORTS)
			return -EINVAL;
		h->psubnet[n++] = i;
	}
	if (!n)
		return -EINVAL;
	h->nports = n;
	h->subnet = h->psubnet[0];
	h->props = sf_fab.subnets[h->subnet].def;
	h->vl = sf_fab.subnets[h->subnet].vl;
	return 0;
}

static int sf_parse_host_kv(struct sf_host *h, const char *key, char *val)
{
	unsigned int v;
	int ret;

	if (!strcmp(key, "subnets"))
		return sf_parse_host_subnets(h, val);
	ret = sf_parse_vl(&h->vl, key, val);
	if (ret != -ENOENT)
		return ret;
	if (!strcmp(key, "hca")) {
		if (!strcmp(val, "mlx4"))
			h->hca = SF_HCA_MLX4;
		else if (!strcmp(val, "mlx5"))
			h->hca = SF_HCA_MLX5;
		else
			return -EINVAL;
		return 0;
	}
	if (kstrtouint(val, 0, &v))
		return -EINVAL;
	/* IBA 14.2.5.3 NodeInfo / 12.7.34: LocalCAAckDelay, 5 bits. */
	if (!strcmp(key, "ack_delay") && v <= 31) {
		h->ack_delay = v;
		return 0;
	}
	if (!strcmp(key, "iprouter") && v <= 1) {
		h->iprouter = v;
		return 0;
	}
	if (!strcmp(key, "guest") && v >= 1 && v <= SF_MAX_GUESTS) {
		h->guest = v;
		return 0;
	}
	if (!strcmp(key, "ports") && v >= 1 && v <= SF_MAX_PORTS)
		h->nports = v;
	else if (!strcmp(key, "pkey2") && v <= 0xffff && (v & 0x7fff))
		h->pkey2 = v;
	else if (!strcmp(key, "pkey1") && (v == 0xffff || v == 0x7fff))
		h->pkey1 = v;
	else
		return sf_parse_props(&h->props, key, v);
	return 0;
}

/* slmap=IN:OUT,IN:OUT... (unlisted SLs are kept). */
static int sf_parse_slmap(struct sf_router *r, char *val)
{
	unsigned int in, out;
	char *pair, *o;

	while ((pair = strsep(&val, ",")) != NULL) {
		o = strchr(pair, ':');
		if (!o)
			return -EINVAL;
		*o++ = '\0';
		if (kstrtouint(pair, 0, &in) || kstrtouint(o, 0, &out) ||
		    in > 15 || out > 15)
			return -EINVAL;
		r->slmap[in] = out;
	}
	return 0;
}

static int sf_parse_router_kv(struct sf_router *r, const char *key, char *val)
{
	unsigned int v;

	if (!strcmp(key, "slmap"))
		return sf_parse_slmap(r, val);
	if (!strcmp(key, "dlid") && (!strcmp(val, "table") ||
				     !strcmp(val, "gid"))) {
		r->dlid_gid = !strcmp(val, "gid");
		return 0;
	}
	if (!strcmp(key, "pkey2") && !kstrtouint(val, 0, &v) && v <= 0xffff &&
	    (v & 0x7fff)) {
		r->pkey2 = v;
		return 0;
	}
	return -EINVAL;
}

/* route SUBNET prefix=P|* via=R|* (first-present: via=R[,R...]) */
static int sf_parse_route_kv(struct sf_route *rt, const char *key, char *val)
{
	char *name;
	int i;

	if (!strcmp(key, "prefix")) {
		if (!strcmp(val, "*")) {
			rt->prefix = 0;
			return 0;
		}
		return kstrtou64(val, 0, &rt->prefix) || !rt->prefix ?
		       -EINVAL : 0;
	}
	if (strcmp(key, "via"))
		return -EINVAL;
	if (rt->nvia || rt->any)	/* one via= a route */
		return -EINVAL;
	/* via=*: OpenSM's router GUID 0, the lowest-GUID router (opensm) */
	if (!strcmp(val, "*")) {
		rt->any = true;
		return 0;
	}
	while ((name = strsep(&val, ",")) != NULL) {
		i = sf_router_by_name(name);
		if (i < 0 || rt->nvia >= SF_MAX_VIA)
			return -EINVAL;
		rt->via[rt->nvia++] = i;
	}
	/* An OpenSM prefix route names one router GUID (or 0): a list is
	 * first-present's only.
	 */
	return sf_rc_opensm && rt->nvia > 1 ? -EINVAL : 0;
}

enum sf_kind { SF_K_NONE, SF_K_SUBNET, SF_K_HOST, SF_K_ROUTER, SF_K_ROUTE };

struct sf_entry {
	enum sf_kind kind;
	int nwords;		/* bare words after the kind */
	struct sf_subnet *sn;
	struct sf_host *h;
	struct sf_router *r;
	struct sf_route *rt;
};

/* A bare word (no '='): a subnet's name, a host's or router's name, a
 * router's subnets, a route's subnet.
 */
static int sf_parse_word(struct sf_entry *en, char *tok)
{
	struct sf_router *r = en->r;
	struct sf_subnet *sn;
	int i;

	if (strlen(tok) >= SF_NAME_LEN)
		return -EINVAL;
	switch (en->kind) {
	case SF_K_SUBNET:
		if (en->nwords++ || sf_subnet_by_name(tok) >= 0)
			return -EINVAL;
		strscpy(en->sn->name, tok, SF_NAME_LEN);
		return 0;
	case SF_K_HOST:
		if (en->nwords++ || sf_name_taken(tok))
			return -EINVAL;
		strscpy(en->h->name, tok, SF_NAME_LEN);
		return 0;
	case SF_K_ROUTER:
		if (!en->nwords++) {
			if (sf_name_taken(tok))
				return -EINVAL;
			strscpy(r->name, tok, SF_NAME_LEN);
			return 0;
		}
		i = sf_subnet_by_name(tok);
		if (i < 0 || r->nports >= SF_MAX_RPORTS)
			return -EINVAL;
		r->port[r->nports].subnet = i;
		r->port[r->nports].num = r->nports + 1;
		r->nports++;
		return 0;
	case SF_K_ROUTE:
		i = sf_subnet_by_name(tok);
		if (en->nwords++ || i < 0)
			return -EINVAL;
		sn = &sf_fab.subnets[i];
		if (sn->nroutes >= SF_MAX_ROUTES)
			return -E2BIG;
		en->rt = &sn->routes[sn->nroutes++];
		return 0;
	default:
		return -EINVAL;
	}
}

static int sf_begin_entry(struct sf_entry *en, const char *kind)
{
	struct sf_subnet *sn;
	int i;

	if (!strcmp(kind, "subnet")) {
		en->kind = SF_K_SUBNET;
		en->sn = sf_new_subnet(NULL);
		return en->sn ? 0 : -E2BIG;
	}
	if (!strcmp(kind, "host")) {
		en->kind = SF_K_HOST;
		if (sf_fab.nhosts >= SF_MAX_HOSTS)
			return -E2BIG;
		/* A host joins the subnet declared last (one by default). */
		if (!sf_fab.nsubnets && !sf_new_subnet(NULL))
			return -E2BIG;
		sn = &sf_fab.subnets[sf_fab.nsubnets - 1];
		en->h = &sf_fab.hosts[sf_fab.nhosts];
		/* ack_delay 16: what mlx5 reports (README "HCAs"). */
		*en->h = (struct sf_host){ .nports = 1,
			.subnet = sf_fab.nsubnets - 1, .props = sn->def,
			.vl = sn->vl, .pkey2 = 0x8001, .ack_delay = 16,
			.guest = 1 };
		for (i = 0; i < SF_MAX_PORTS; i++)
			en->h->psubnet[i] = en->h->subnet;
		return 0;
	}
	if (!strcmp(kind, "router")) {
		en->kind = SF_K_ROUTER;
		if (sf_fab.nrouters >= SF_MAX_ROUTERS)
			return -E2BIG;
		en->r = &sf_fab.routers[sf_fab.nrouters];
		memset(en->r, 0, sizeof(*en->r));
		for (i = 0; i < 16; i++)
			en->r->slmap[i] = i;
		en->r->pkey2 = 0x8001;
		return 0;
	}
	if (!strcmp(kind, "route")) {
		en->kind = SF_K_ROUTE;
		return 0;
	}
	return -EINVAL;
}

/* Complete an entry: LIDs and GUIDs for a host's or router's ports. */
static int sf_end_entry(struct sf_entry *en)
{
	struct sf_subnet *sn;
	int p;

	switch (en->kind) {
	case SF_K_HOST:
		if (!en->nwords)
			return -EINVAL;
		for (p = 0; p < en->h->nports; p++)
			en->h->lids[p] =
				sf_next_lid(&sf_fab.subnets[en->h->psubnet[p]]);
		sf_fab.nhosts++;
		return 0;
	case SF_K_ROUTER:
		if (en->nwords < 3)
			return -EINVAL;
		for (p = 0; p < en->r->nports; p++) {
			struct sf_port *port = &en->r->port[p];

			sn = &sf_fab.subnets[port->subnet];
			port->rtr = en->r;
			port->hnum = port->num;
			/* Locally administered GUIDs: "SF", 'R', router, port. */
			port->guid = 0x5346520000000000ULL |
				     (u64)(sf_fab.nrouters + 1) << 8 | (p + 1);
			port->lid = sf_next_lid(sn);
			port->pkeys[0] = IB_DEFAULT_PKEY_FULL;
			port->pkeys[1] = en->r->pkey2;
		}
		sf_fab.nrouters++;
		return 0;
	case SF_K_ROUTE:
		return en->rt && (en->rt->nvia || en->rt->any) ? 0 : -EINVAL;
	default:
		return 0;
	}
}

static int sf_parse_entry(char *e)
{
	struct sf_entry en = {};
	char *tok, *val;
	int ret = 0;

	while ((tok = strsep(&e, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (en.kind == SF_K_NONE) {
			ret = sf_begin_entry(&en, tok);
			if (ret)
				return ret;
			continue;
		}
		val = strchr(tok, '=');
		if (!val) {
			ret = sf_parse_word(&en, tok);
		} else {
			*val++ = '\0';
			switch (en.kind) {
			case SF_K_SUBNET:
				ret = sf_parse_subnet_kv(en.sn, tok, val);
				break;
			case SF_K_HOST:
				ret = sf_parse_host_kv(en.h, tok, val);
				break;
			case SF_K_ROUTER:
				ret = sf_parse_router_kv(en.r, tok, val);
				break;
			default:
				ret = en.rt ? sf_parse_route_kv(en.rt, tok, val) :
					      -EINVAL;
			}
		}
		if (ret)
			return ret;
	}
	return sf_end_entry(&en);
}

static int sf_parse_topology(void)
{
	char *buf, *p, *e;
	int ret = 0, i, s;

	buf = kstrdup(topology, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = buf;
	while ((e = strsep(&p, ";")) != NULL) {
		ret = sf_parse_entry(e);
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
	/* The SM of each subnet: "sm=HOST:PORT", else its first host's
	 * port 1.
	 */
	for (s = 0; s < sf_fab.nsubnets; s++) {
		struct sf_subnet *sn = &sf_fab.subnets[s];

		for (i = 0; i < sf_fab.nhosts; i++) {
			struct sf_host *h = &sf_fab.hosts[i];
			int p;

			if (sn->sm_name[0] && strcmp(h->name, sn->sm_name))
				continue;
			if (!sn->sm_name[0]) {
				/* The first port on this subnet. */
				for (p = 0; p < h->nports; p++)
					if (h->psubnet[p] == s)
						break;
				if (p == h->nports)
					continue;
				sn->sm_portnum = p + 1;
			}
			if (sn->sm_portnum < 1 || sn->sm_portnum > h->nports ||
			    h->psubnet[sn->sm_portnum - 1] != s)
				break;
			sn->sm_lid = h->lids[sn->sm_portnum - 1];
			break;
		}
		if (!sn->sm_lid) {
			pr_err("simfab: subnet %s has no SM port\n", sn->name);
			goto out;
		}
	}
	ret = 0;
out:
	kfree(buf);
	return ret;
}

struct sf_port *sf_port_by_lid(int subnet, u16 lid, u16 *path_bits)
{
	struct sf_subnet *sn = &sf_fab.subnets[subnet];
	u16 mask = (1 << sn->lmc) - 1;
	int i;

	for (i = 0; i < sn->nports; i++)
		if ((lid & ~mask) == sn->ports[i]->lid) {
			if (path_bits)
				*path_bits = lid & mask;
			return sn->ports[i];
		}
	return NULL;
}

/* Whether @iid is one of @port's GIDs' interface IDs (GUID or alias). */
bool sf_port_owns_iid(const struct sf_port *port, u64 iid)
{
	return iid == port->guid ||
	       (sf_gids > 1 && iid == sf_port_iid(port, 1));
}

/* The port of @subnet with a GID of this interface ID (any GID index). */
struct sf_port *sf_port_by_guid(int subnet, u64 guid)
{
	struct sf_subnet *sn = &sf_fab.subnets[subnet];
	int i;

	for (i = 0; i < sn->nports; i++)
		if (sf_port_owns_iid(sn->ports[i], guid))
			return sn->ports[i];
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
	a->sys_image_guid = cpu_to_be64(sf_host_sysimage(&sf_fab.hosts[sdev->host]));
	/* mlx5_ib_query_device: MLX5_CAP_GEN(mdev, local_ca_ack_delay). */
	a->local_ca_ack_delay = sf_fab.hosts[sdev->host].ack_delay;
	a->max_mr_size = U64_MAX;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = 0xffffff;
	a->max_qp = 1024;
	a->max_qp_wr = 4096;
	a->max_send_sge = SF_MAX_SGE;
	a->max_recv_sge = SF_MAX_SGE;
	a->max_sge_rd = SF_MAX_SGE;
	a->max_cq = 1024;
	/* ib_ipoib asks for 257 + 128 + 256 x 128 entries (ipoib_verbs.c). */
	a->max_cqe = SF_MAX_CQE;
	a->max_mr = 1024;
	a->max_pd = 1024;
	a->max_ah = 4096;
	a->max_pkeys = SF_PKEYS;
	a->max_mcast_grp = SF_MAX_MCG;
	a->max_mcast_qp_attach = SF_MC_FANOUT;
	a->max_total_mcast_qp_attach = SF_MAX_MCG * SF_MC_FANOUT;
	/* IPoIB asks for it when offered (ipoib_verbs.c). */
	a->kernel_cap_flags = IBK_BLOCK_MULTICAST_LOOPBACK;
	/*
	 * Fast registration (REG_MR, LOCAL_INV, SEND with Invalidate:
	 * simfab_rc.c), which nvme-rdma and the other storage ULPs need
	 * (nvme_rdma_find_get_device). Its page list bound as mlx4's order
	 * of magnitude; sf_mr_alloc takes up to 1024.
	 */
	a->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	a->max_fast_reg_page_list_len = 512;
	/*
	 * RDMA READs a QP takes as responder and issues as requester
	 * (mlx5: 1 << log_max_ra_res_qp, 16). ULPs offer their peer as many
	 * as this says (nvme-rdma's responder_resources): 0 made ib_cm give
	 * the QP no remote read access at all.
	 */
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
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
	struct sf_port *port = &sdev->port[port_num - 1];
	struct sf_subnet *sn = subnet_of(port);
	struct sf_props pr;

	/* ib_core has zeroed *a. */
	sf_port_props(port, &pr);
	a->state = port->down ? IB_PORT_DOWN : IB_PORT_ACTIVE;
	a->phys_state = port->down ? port->phys : IB_PORT_PHYS_STATE_LINK_UP;
	a->max_mtu = IB_MTU_4096;
	a->active_mtu = pr.mtu;
	a->gid_tbl_len = sf_gids;
	a->pkey_tbl_len = SF_PKEYS;
	a->port_cap_flags = IB_PORT_CM_SUP;
	if (port == sn->sm)
		a->port_cap_flags |= IB_PORT_SM;
	a->max_msg_sz = SF_RC_MAX_MSG;
	a->lid = port->lid;
	a->sm_lid = sn->sm_lid;
	a->lmc = sn->lmc;
	a->sm_sl = 0;
	a->subnet_timeout = 18;
	/* VLCap as PortInfo encodes it (IBA 14.2.5.6): 1 VL0 ... 5 VL0-14 */
	a->max_vl_num = sf_port_vlcfg(port)->vls == 15 ? 5 :
			ilog2(sf_port_vlcfg(port)->vls) + 1;
	a->active_width = IB_WIDTH_4X;
	a->active_speed = sf_speed(pr.rate);
	return 0;
}

static int sf_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				 struct ib_port_immutable *im)
{
	/* No SMI: no QP0, the module is the SM (see README). */
	im->core_cap_flags = RDMA_CORE_PORT_IBA_IB & ~RDMA_CORE_CAP_IB_SMI;
	im->pkey_tbl_len = SF_PKEYS;
	im->gid_tbl_len = sf_gids;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int sf_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			union ib_gid *gid)
{
	struct sf_dev *sdev = to_sdev(ibdev);

	if (index < 0 || index >= sf_gids)
		return -EINVAL;
	/* GID index 0 = subnet prefix + port GUID (IBA 4.1.1); 1 an alias. */
	gid->global.subnet_prefix =
		cpu_to_be64(subnet_of(&sdev->port[port_num - 1])->prefix);
	gid->global.interface_id =
		cpu_to_be64(sf_port_iid(&sdev->port[port_num - 1], index));
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
	/* simfab_rc.c keeps MRs: the responder checks R_Keys there. */
	return sf_mr_get_dma(pd, acc);
}

static struct ib_mr *sf_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				    u64 virt, int acc, SF_REG_USER_MR_DMAH
				    struct ib_udata *udata)
{
	/* Present only so ib_core counts us as a kernel verbs provider. */
	return ERR_PTR(-EOPNOTSUPP);
}

static int sf_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return sf_mr_dereg(mr);
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

/* simfab's CQs are the kernel's only: a user's (udata or bundle) is refused. */
static int sf_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			SF_CREATE_CQ_UDATA *udata)
{
	struct sf_cq *cq = to_scq(ibcq);

	if (udata || attr->flags || attr->cqe < 1 || attr->cqe > SF_MAX_CQE)
		return -EINVAL;
	cq->ring = kvcalloc(attr->cqe, sizeof(*cq->ring), GFP_KERNEL);
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
	kvfree(to_scq(ibcq)->ring);
	return 0;
}

/* Add a completion; call the handler if armed (outside the CQ lock). */
void sf_cq_add(struct sf_cq *cq, const struct ib_wc *wc)
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
	if (init->qp_type != IB_QPT_GSI && init->qp_type != IB_QPT_UD &&
	    init->qp_type != IB_QPT_RC)
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
	qp->mc_block_lb = init->qp_type == IB_QPT_UD &&
		(init->create_flags & IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	if (init->qp_type == IB_QPT_GSI) {
		/* IBA 3.9.3: the GSI QP is QP1 on every port. */
		if (init->port_num < 1 || init->port_num > sdev->nports ||
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
	if (init->qp_type == IB_QPT_RC) {
		ret = sf_rc_create(qp, init);
		if (ret) {
			kfree(qp->rq);
			return ret;
		}
	}
	ret = xa_alloc_irq(&sf_qps, &id, qp, XA_LIMIT(2, 0xffffff), GFP_KERNEL);
	if (ret) {
		if (init->qp_type == IB_QPT_RC)
			sf_rc_destroy(qp);
		kfree(qp->rq);
		return ret;
	}
	ibqp->qp_num = id;
	return 0;
}

/* The next receive WQE of @qp (rq_count > 0); sf_lock held. */
static void sf_rq_pop(struct sf_qp *qp, struct sf_rwqe *w)
{
	*w = qp->rq[qp->rq_head];
	qp->rq_head = (qp->rq_head + 1) % qp->rq_size;
	qp->rq_count--;
}

/*
 * A UD or GSI QP in Error completes every posted receive WQE with
 * WR_FLUSH_ERR (IBA 10.3.1, 11.4.1.1), those posted later too; ib_ipoib
 * waits for them when it brings an interface down (ipoib_ib.c
 * ipoib_ib_dev_stop_default). Only wr_id, status, opcode and qp are set.
 */
static void sf_ud_flush(struct sf_qp *qp)
{
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR,
			    .opcode = IB_WC_RECV, .qp = &qp->ibqp };
	unsigned long flags;
	struct sf_rwqe w;

	for (;;) {
		spin_lock_irqsave(&sf_lock, flags);
		if (qp->state != IB_QPS_ERR || !qp->rq_count) {
			spin_unlock_irqrestore(&sf_lock, flags);
			return;
		}
		sf_rq_pop(qp, &w);
		spin_unlock_irqrestore(&sf_lock, flags);
		wc.wr_id = w.wr_id;
		sf_cq_add(to_scq(qp->ibqp.recv_cq), &wc);
	}
}

/*
 * debugfs qplog: every RC Modify QP as the HCA got it (the consumer's
 * attributes, not what a test driver reads back): the Local ACK Timeout
 * ib_cm/rdma_cm compute (cm.c cm_ack_timeout) and the alternate path
 * they load, with the verdict. "clear" (ctl) empties it.
 */
#define SF_QPLOG_LEN	128

struct sf_qplog {
	u64 seq;
	struct sf_dev *dev;
	u32 qpn;
	int mask, ret;
	u8 state;		/* after the call */
	u8 timeout, alt_timeout;
	u32 port, alt_port;	/* on dev */
	u16 dlid, alt_dlid;
};

static struct sf_qplog sf_qplog_ring[SF_QPLOG_LEN];
static u64 sf_qplog_seq;

static void sf_qplog_add(struct sf_qp *qp, const struct ib_qp_attr *attr,
			 int mask, int ret)
{
	struct sf_qplog *l;
	unsigned long flags;

	spin_lock_irqsave(&sf_lock, flags);
	l = &sf_qplog_ring[sf_qplog_seq % SF_QPLOG_LEN];
	*l = (struct sf_qplog){ .seq = ++sf_qplog_seq,
		.dev = to_sdev(qp->ibqp.device), .qpn = qp->ibqp.qp_num,
		.mask = mask, .ret = ret, .state = qp->state,
		.port = qp->pri.port };
	if (mask & IB_QP_TIMEOUT)
		l->timeout = attr->timeout;
	if (mask & IB_QP_AV)
		l->dlid = rdma_ah_get_dlid(&attr->ah_attr);
	if (mask & IB_QP_ALT_PATH) {
		l->alt_timeout = attr->alt_timeout;
		l->alt_port = attr->alt_port_num;
		l->alt_dlid = rdma_ah_get_dlid(&attr->alt_ah_attr);
	}
	spin_unlock_irqrestore(&sf_lock, flags);
}

static int sf_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			struct ib_udata *udata)
{
	struct sf_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int ret;

	if (ibqp->qp_type == IB_QPT_RC) {
		ret = sf_rc_modify(qp, attr, mask);
		sf_qplog_add(qp, attr, mask, ret);
		return ret;
	}
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
	sf_ud_flush(qp);
	return 0;
}

static int sf_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		       struct ib_qp_init_attr *init)
{
	struct sf_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	if (ibqp->qp_type == IB_QPT_RC) {
		sf_rc_query(qp, attr, init);
		return 0;
	}
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->port_num = qp->port;
	attr->pkey_index = qp->pkey_index;
	attr->qkey = qp->qkey;
	attr->sq_psn = 0;
	if (qp->port) {
		struct sf_props pr;

		sf_port_props(&to_sdev(ibqp->device)->port[qp->port - 1], &pr);
		attr->path_mtu = pr.mtu;
	}
	init->qp_type = ibqp->qp_type;
	init->port_num = qp->port;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->cap.max_recv_wr = qp->rq_size;
	init->cap.max_send_sge = SF_MAX_SGE;
	init->cap.max_recv_sge = SF_MAX_SGE;
	if (qp->mc_block_lb)
		init->create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	return 0;
}

/*
 * attach_mcast/detach_mcast (IBA 11.3.1 "Attach QP to Multicast Group"):
 * the port's CA hands every multicast packet whose DLID is @lid and (when
 * it has a GRH) whose DGID is @gid to each attached UD QP. ib_core checks
 * the MGID and the MLID range (verbs.c ib_attach_mcast). A QP attached
 * twice still gets one copy (ibv_attach_mcast(3)) and is detached by the
 * second detach (ib_core counts each attach in qp->usecnt). Joining the
 * group at the SA is the consumer's business (ib_sa_join_multicast).
 */
static int sf_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sf_qp *qp = to_sqp(ibqp);
	struct sf_mcatt *a, *n;
	unsigned long flags;
	bool found = false;

	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	n->qp = qp;
	n->mgid = *gid;
	n->mlid = lid;
	n->count = 1;
	spin_lock_irqsave(&sf_lock, flags);
	list_for_each_entry(a, &sf_mcatts, list)
		if (a->qp == qp && a->mlid == lid &&
		    !memcmp(&a->mgid, gid, sizeof(*gid))) {
			a->count++;
			found = true;
			break;
		}
	if (!found)
		list_add_tail(&n->list, &sf_mcatts);
	spin_unlock_irqrestore(&sf_lock, flags);
	if (found)
		kfree(n);
	return 0;
}

static int sf_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sf_qp *qp = to_sqp(ibqp);
	struct sf_mcatt *a, *gone = NULL;
	unsigned long flags;
	int ret = -EINVAL;

	spin_lock_irqsave(&sf_lock, flags);
	list_for_each_entry(a, &sf_mcatts, list)
		if (a->qp == qp && a->mlid == lid &&
		    !memcmp(&a->mgid, gid, sizeof(*gid))) {
			ret = 0;
			if (!--a->count) {
				gone = a;
				list_del(&a->list);
			}
			break;
		}
	spin_unlock_irqrestore(&sf_lock, flags);
	kfree(gone);
	return ret;
}

/* Every attachment of @qp (destroy_qp); sf_lock held. */
static void sf_mcast_forget(struct sf_qp *qp, struct list_head *gone)
{
	struct sf_mcatt *a, *n;

	list_for_each_entry_safe(a, n, &sf_mcatts, list)
		if (a->qp == qp)
			list_move(&a->list, gone);
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
	struct sf_mcatt *a, *n;
	unsigned long flags;
	LIST_HEAD(gone);

	spin_lock_irqsave(&sf_lock, flags);
	if (ibqp->qp_type == IB_QPT_GSI)
		sdev->port[qp->port - 1].gsi = NULL;
	else
		sf_qpn_erase(ibqp->qp_num);
	sf_mcast_forget(qp, &gone);
	qp->state = IB_QPS_ERR;
	spin_unlock_irqrestore(&sf_lock, flags);
	list_for_each_entry_safe(a, n, &gone, list)
		kfree(a);
	/* Packets from this QP hold a pointer to it until sent. */
	flush_workqueue(sf_wq);
	if (ibqp->qp_type == IB_QPT_RC)
		sf_rc_destroy(qp);
	kfree(qp->rq);
	return 0;
}

static int sf_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad)
{
	struct sf_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int ret = 0;

	if (ibqp->qp_type == IB_QPT_RC)
		return sf_rc_post_recv(qp, wr, bad);
	spin_lock_irqsave(&sf_lock, flags);
	for (; wr; wr = wr->next) {
		ret = sf_rq_push(qp, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	sf_ud_flush(qp);
	return ret;
}

/*
 * Queue one receive WR (UD and RC alike); sf_lock held. -ENOMEM for a full
 * queue, too many SGEs or a QP in RESET, as post_recv reports them.
 */
int sf_rq_push(struct sf_qp *qp, const struct ib_recv_wr *wr)
{
	struct sf_rwqe *w;

	if (wr->num_sge > SF_MAX_SGE || qp->rq_count == qp->rq_size ||
	    qp->state == IB_QPS_RESET)
		return -ENOMEM;
	w = &qp->rq[(qp->rq_head + qp->rq_count) % qp->rq_size];
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
	qp->rq_count++;
	return 0;
}

struct sf_pkt *sf_pkt_alloc(u32 len, gfp_t gfp)
{
	struct sf_pkt *pkt = kzalloc(struct_size(pkt, data, len), gfp);

	if (pkt)
		pkt->len = len;
	return pkt;
}

void sf_build_grh(struct sf_pkt *pkt, struct sf_port *port,
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
	/* The SGID is the one the AH or the QP's path names (sgid_index), as
	 * an HCA takes it from its GID table.
	 */
	grh->sgid.global.subnet_prefix = cpu_to_be64(subnet_of(port)->prefix);
	grh->sgid.global.interface_id =
		cpu_to_be64(sf_port_iid(port, g->sgid_index < sf_gids ?
					      g->sgid_index : 0));
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

/* Put a packet on the wire; the worker carries it (never the caller). */
void sf_xmit(struct sf_pkt *pkt)
{
	sf_queue(pkt);
	queue_work(sf_wq, &sf_work);
}

static int sf_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad)
{
	struct sf_dev *sdev = to_sdev(ibqp->device);
	struct sf_qp *qp = to_sqp(ibqp);
	int queued = 0, ret = 0;

	if (ibqp->qp_type == IB_QPT_RC)
		return sf_rc_post_send(qp, wr, bad);
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
		pkt->subnet = port->subnet;
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
bool sf_pkey_match(u16 a, u16 b)
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
bool sf_scatter(struct sf_rwqe *w, const u8 *src, u32 len, u32 skip)
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

/* ---- fault injection (debugfs ctl "drop", "delay", "mangle") ------------- */

#define SF_MANGLE_SETS	6
#define SF_MANGLE_BYTES	8

struct sf_fault {
	bool used;
	bool delay;
	bool mangle;		/* rewrite the packet and deliver it */
	int mgmt_class;		/* -1: any packet; else GSI MADs of it */
	int method;		/* -1: any; else GSI MADs of that method */
	int attr_id;		/* -1: any; else GSI MADs of that attribute */
	int nset;		/* mangle: MAD bytes to overwrite */
	struct {
		unsigned int off;
		unsigned int len;
		u8 val[SF_MANGLE_BYTES];
	} set[SF_MANGLE_SETS];
	bool sgid_seq;		/* mangle: a new GRH SGID every packet */
	int seq_at;		/* and the same interface ID at this MAD byte */
	struct sf_port *to;	/* the port the DLID names, or NULL */
	struct sf_port *from;	/* the port that sent it on this subnet */
	unsigned int count;	/* 0: until removed */
	unsigned int ms;
	u64 hits;
};

static struct sf_fault sf_faults[SF_MAX_FAULTS];	/* under sf_lock */
/* sgid-seq's forged interface IDs, never the same twice in a load */
static u32 sf_sgid_seq;

/*
 * A mangle rule's edits: the MAD bytes it names, and with sgid_seq the
 * GRH's SGID interface ID (a new sender every packet, as a forger sends).
 */
static void sf_mangle(struct sf_fault *f, struct sf_pkt *pkt)
{
	int i;

	for (i = 0; i < f->nset; i++)
		if (f->set[i].off + f->set[i].len <= pkt->len)
			memcpy(pkt->data + f->set[i].off, f->set[i].val,
			       f->set[i].len);
	if (f->sgid_seq && pkt->has_grh) {
		u64 id = 0x0200c9feed000000ULL | ++sf_sgid_seq;

		put_unaligned_be64(id, pkt->grh + 16);
		if (f->seq_at >= 0 && f->seq_at + 8 <= pkt->len)
			put_unaligned_be64(id, pkt->data + f->seq_at);
	}
}

/* Whether @pkt on its way to @dst is one @f's filter names. */
static bool sf_fault_names(const struct sf_fault *f, const struct sf_pkt *pkt,
			   const struct sf_port *dst)
{
	bool gmp = pkt->dqpn == 1 && pkt->len >= 24;

	if ((f->to && f->to != dst) || (f->from && f->from != pkt->src))
		return false;
	if (f->mgmt_class >= 0 && (!gmp || pkt->data[1] != f->mgmt_class))
		return false;
	if (f->method >= 0 && (!gmp || pkt->data[3] != f->method))
		return false;
	return f->attr_id < 0 ||
	       (gmp && get_unaligned_be16(pkt->data + 16) == f->attr_id);
}

/* The first rule matching @pkt on its way to @dst; counts the hit. */
static int sf_fault_match(struct sf_pkt *pkt, struct sf_port *dst,
			  unsigned int *ms)
{
	unsigned long flags;
	int i, ret = 0;

	spin_lock_irqsave(&sf_lock, flags);
	for (i = 0; i < SF_MAX_FAULTS; i++) {
		struct sf_fault *f = &sf_faults[i];

		if (!f->used || !sf_fault_names(f, pkt, dst))
			continue;
		if (f->delay && pkt->delayed)
			continue;
		f->hits++;
		if (f->count && !--f->count)
			f->used = false;
		*ms = f->ms;
		if (f->mangle)
			sf_mangle(f, pkt);
		else
			ret = f->delay ? 2 : 1;
		break;
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	return ret;
}

/* ---- routers ------------------------------------------------------------- */

/* Returned by sf_route and sf_rx: the packet is on its next subnet. */
static const char sf_routed[] = "routed";
/* Returned by sf_rx: a delay fault holds the packet back. */
static const char sf_held[] = "held";

static bool sf_port_has_pkey(const struct sf_port *port, u16 pkey)
{
	int i;

	for (i = 0; i < SF_PKEYS; i++)
		if (sf_pkey_match(pkey, port->pkeys[i]))
			return true;
	return false;
}

static const char *sf_rdrop(struct sf_router *r, const char *why)
{
	r->dropped++;
	return why;
}

/*
 * A router port received @pkt (IBA 19.2, router packet relay): it needs a
 * GRH (LNH "IBA global", IBA 7.7.4), a P_Key its ingress and egress ports
 * carry (IBA 10.9.2: routers enforce partitions at both ports), a HopLimit
 * that stays above 0 after the decrement (IBA 8.3.2 / RFC 8200; Linux's
 * ib_cm treats HopLimit <= 1 as subnet-local), and a DGID prefix of one of
 * its other ports' subnets with a port of that GUID on it. It then
 * rewrites the LRH for the egress subnet: SLID = its egress port's LID,
 * DLID = the destination's base LID from its GID-to-LID table, SL from its
 * SL map, and decrements the HopLimit (IBA 8.3.2, 19.2.4); the GRH, BTH
 * and payload are kept. The table holds what the egress subnet's SA said
 * at the last sweep (router_lid): after a LID change and before the next
 * sweep the packet goes to the old LID.
 */
static const char *sf_route(struct sf_pkt *pkt, struct sf_port *in)
{
	struct sf_router *r = in->rtr;
	struct ib_grh *g = (struct ib_grh *)pkt->grh;
	struct sf_port *out = NULL, *dst;
	const char *why;
	u16 dlid;
	u8 sl;
	u64 prefix;
	int i;

	if (pkt->dqpn == 1)
		sf_count(in, 1, pkt->data, pkt->len);
	else if (pkt->rc)
		in->rc_rx++;
	if (r->down)
		return sf_rdrop(r, "drop-router-down");
	if (!pkt->has_grh)
		return sf_rdrop(r, "drop-no-grh");
	if (!sf_port_has_pkey(in, pkt->pkey))
		return sf_rdrop(r, "drop-pkey");
	if (g->hop_limit <= 1)
		return sf_rdrop(r, "drop-hop-limit");
	prefix = be64_to_cpu(g->dgid.global.subnet_prefix);
	for (i = 0; i < r->nports; i++)
		if (&r->port[i] != in &&
		    sf_fab.subnets[r->port[i].subnet].prefix == prefix)
			out = &r->port[i];
	if (!out)
		return sf_rdrop(r, "drop-no-route");
	if (out->down)
		return sf_rdrop(r, "drop-port-down");
	/* The egress port's MTU (a router port runs its subnet's). */
	if (sf_mtu_drop(out, pkt))
		return sf_rdrop(r, "drop-mtu");
	if (!sf_port_has_pkey(out, pkt->pkey))
		return sf_rdrop(r, "drop-pkey-out");
	if (r->dlid_gid) {
		/* NVIDIA SB7780/SB7880: no table, the DLID is the DGID's
		 * low 16 bits (the LID of an SM-assigned alias GID).
		 */
		dlid = be64_to_cpu(g->dgid.global.interface_id) & 0xffff;
	} else {
		dst = sf_port_by_guid(out->subnet,
				      be64_to_cpu(g->dgid.global.interface_id));
		if (!dst)
			return sf_rdrop(r, "drop-no-dgid");
		dlid = dst->router_lid;
	}
	/* The egress SL (its SL map) on the egress port's VLs */
	sl = r->slmap[pkt->sl & 15];
	why = sf_vl_drop(out, sl);
	if (why)
		return sf_rdrop(r, why);
	/* The ingress side as it came in; the delivery shows the egress. */
	if (pkt->dqpn == 1 || pkt->rc)
		sf_capture(pkt, sf_routed);
	g->hop_limit--;
	pkt->subnet = out->subnet;
	pkt->src = out;
	pkt->slid = out->lid;
	pkt->dlid = dlid;
	pkt->sl = sl;
	pkt->at = NULL;
	if (pkt->dqpn == 1)
		sf_count(out, 0, pkt->data, pkt->len);
	else if (pkt->rc)
		out->rc_tx++;
	r->forwarded++;
	return sf_routed;
}

/* Fill the receive WQE @w of UD/GSI @qp with @pkt and complete it. */
static const char *sf_ud_complete(struct sf_pkt *pkt, struct sf_port *dst,
				  struct sf_qp *qp, struct sf_rwqe *w,
				  u16 bits, u16 pkey_index)
{
	struct ib_wc wc = {};

	/* IBA 11.4.1.1: the first 40 bytes of a UD receive buffer hold the
	 * GRH when present, and are counted in byte_len in any case.
	 */
	wc.status = IB_WC_SUCCESS;
	if ((pkt->has_grh && !sf_scatter(w, pkt->grh, SF_GRH_LEN, 0)) ||
	    !sf_scatter(w, pkt->data, pkt->len, SF_GRH_LEN))
		wc.status = IB_WC_LOC_LEN_ERR;
	wc.wr_id = w->wr_id;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = SF_GRH_LEN + pkt->len;
	wc.qp = &qp->ibqp;
	wc.src_qp = pkt->sqpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	wc.dlid_path_bits = bits;
	wc.pkey_index = pkey_index;
	wc.port_num = dst->num;
	if (pkt->has_grh)
		wc.wc_flags |= IB_WC_GRH;
	if (pkt->has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	sf_cq_add(to_scq(qp->ibqp.recv_cq), &wc);
	return wc.status == IB_WC_SUCCESS ? "delivered" : "len-error";
}

/* The P_Key table index of @port that takes @pkey, or -1 (IBA 10.9.3). */
static int sf_pkey_index_of(const struct sf_port *port, u16 pkey)
{
	int pi;

	for (pi = 0; pi < SF_PKEYS; pi++)
		if (sf_pkey_match(pkey, port->pkeys[pi]))
			return pi;
	return -1;
}

struct sf_mc_copy {
	struct sf_qp *qp;
	struct sf_port *port;
	struct sf_rwqe w;
};

/*
 * A multicast packet (DLID in the multicast range, IBA 4.1.2; DQPN
 * 0xFFFFFF, IBA 10.5.2). The subnet's switch forwards the MLID to every
 * port whose SA membership receives (FullMember or NonMember; a
 * SendOnly member does not, IBA 15.2.5.17) except the one it came in on,
 * as OpenSM programs the multicast forwarding tables; no group, no
 * forwarding (drop-no-mcg). The sending port's CA delivers a copy to its
 * own attached QPs, the sender included unless it was created with
 * IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK, as mlx4 does and ib_ipoib
 * expects (ipoib_ib.c drops its own copies by SLID and QPN). At each
 * port, every QP attached to the MLID (and to the GRH's DGID when there
 * is one) takes a copy if its state, Q_Key and P_Key admit it and it
 * has a receive WQE (IBA 10.2.5, 10.9.3; UD drops silently). Routers do
 * not relay multicast here.
 */
static const char *sf_mc_rx(struct sf_pkt *pkt, unsigned int *delay_ms)
{
	struct sf_subnet *sn = &sf_fab.subnets[pkt->subnet];
	const struct ib_grh *g = (const struct ib_grh *)pkt->grh;
	struct sf_port *src = pkt->src, *port;
	struct sf_mc_copy *cp;
	struct sf_mcatt *a;
	struct sf_mcg *mcg;
	unsigned long flags;
	int i, n = 0, pi;

	if (!src || src->down)
		return "drop-port-down";
	switch (sf_fault_match(pkt, NULL, delay_ms)) {
	case 1:
		return "drop-inject";
	case 2:
		return sf_held;
	}
	cp = kcalloc(SF_MC_FANOUT, sizeof(*cp), GFP_KERNEL);
	if (!cp)
		return "drop-nomem";
	spin_lock_irqsave(&sf_lock, flags);
	mcg = sf_mcg_by_mlid(pkt->subnet, pkt->dlid);
	for (i = 0; mcg && i <= sn->nports; i++) {
		/* The members the switch forwards to, then the loopback. */
		if (i < sn->nports) {
			port = sn->ports[i];
			if (port == src || !(mcg->join[i] & 3) || port->down ||
			    port->side != src->side)
				continue;
		} else {
			port = src;
		}
		if (!port->dev)
			continue;
		pi = sf_pkey_index_of(port, pkt->pkey);
		if (pi < 0)
			continue;
		list_for_each_entry(a, &sf_mcatts, list) {
			struct sf_qp *qp = a->qp;

			if (n == SF_MC_FANOUT)
				break;
			if (to_sdev(qp->ibqp.device) != port->dev ||
			    qp->port != port->num || a->mlid != pkt->dlid ||
			    (pkt->has_grh &&
			     memcmp(&a->mgid, &g->dgid, sizeof(a->mgid))))
				continue;
			if (qp == pkt->sqp && qp->mc_block_lb)
				continue;
			if (qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQD ||
			    pkt->qkey != qp->qkey ||
			    !sf_pkey_match(pkt->pkey, port->pkeys[qp->pkey_index]))
				continue;
			if (!qp->rq_count) {
				qp->rq_empty_drops++;
				continue;
			}
			sf_rq_pop(qp, &cp[n].w);
			cp[n].qp = qp;
			cp[n].port = port;
			port->mc_rx++;
			n++;
		}
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	for (i = 0; i < n; i++)
		sf_ud_complete(pkt, cp[i].port, cp[i].qp, &cp[i].w, 0,
			       cp[i].qp->pkey_index);
	kfree(cp);
	if (!mcg)
		return "drop-no-mcg";
	return n ? "multicast" : "drop-no-member";
}

/*
 * Returns the capture verdict, NULL when already captured, sf_routed when
 * a router put the packet on its next subnet, sf_held for a delay fault.
 */
static const char *sf_rx(struct sf_pkt *pkt, unsigned int *delay_ms)
{
	const char *why;
	struct sf_port *dst;
	struct sf_qp *qp;
	struct sf_rwqe w;
	unsigned long flags;
	u16 bits;
	int pi;

	/* README "Guests": the fabric's delivery to a port of this guest. */
	if (pkt->link_dst) {
		dst = sf_port_by_lid(pkt->subnet, pkt->dlid, &bits);
		if (dst != pkt->link_dst)
			return "drop-no-dlid";
		goto deliver;
	}
	/* A CA port of a guest that does not run the fabric: to guest 1. */
	if (sf_guest != 1)
		return pkt->src ? sf_link_send(pkt, pkt->src) : "drop-no-src";
	if (pkt->dlid >= SF_MC_LID_BASE && pkt->dlid != 0xffff)
		return sf_mc_rx(pkt, delay_ms);
	dst = sf_port_by_lid(pkt->subnet, pkt->dlid, &bits);
	pkt->at = dst;
	if (!dst)
		return "drop-no-dlid";
	/* A link that is down carries nothing (IBA 7.2: only Active ports
	 * forward data packets).
	 */
	if (dst->down || (pkt->src && pkt->src->down)) {
		/* a switch's PortXmitDiscards on its egress to @dst */
		if (dst->down)
			dst->down_drops++;
		return "drop-port-down";
	}
	/* A partitioned subnet: its two sides do not reach each other. */
	if (pkt->src && pkt->src->side != dst->side)
		return "drop-partition";
	/* The sending CA's port, then the switch's egress to @dst (a
	 * router's egress is sf_route's).
	 */
	if ((pkt->src && pkt->src->dev && sf_mtu_drop(pkt->src, pkt)) ||
	    sf_mtu_drop(dst, pkt))
		return "drop-mtu";
	/* The same two ports' SL to VL mapping (a router's egress: sf_route) */
	if (pkt->src && pkt->src->dev) {
		why = sf_vl_drop(pkt->src, pkt->sl);
		if (why)
			return why;
	}
	why = sf_switch_vl_drop(dst, pkt);
	if (why)
		return why;
	switch (sf_fault_match(pkt, dst, delay_ms)) {
	case 1:
		return "drop-inject";
	case 2:
		return sf_held;
	}
	if (dst->rtr)
		return sf_route(pkt, dst);
	if (dst == subnet_of(dst)->sm && pkt->dlid == subnet_of(dst)->sm_lid &&
	    pkt->dqpn == 1 && sf_to_sa(pkt)) {
		bool ctl = (pkt->data[26] & IB_MGMT_RMPP_FLAG_ACTIVE) &&
			   pkt->data[25] != IB_MGMT_RMPP_TYPE_DATA;

		/* Captured before the SA's answer, which it delivers now. */
		sf_count(dst, 1, pkt->data, pkt->len);
		sf_capture(pkt, ctl ? "sa-rmpp-ctl" : "sa");
		sf_sa_recv(pkt);
		return NULL;
	}
	/* The receiving CA is another guest's: it checks from here on. */
	if (sf_port_remote(dst))
		return sf_link_send(pkt, dst);
deliver:
	/* IBA 10.9.3: the P_Key must be in the receiving port's table. */
	for (pi = 0; pi < SF_PKEYS; pi++)
		if (sf_pkey_match(pkt->pkey, dst->pkeys[pi]))
			break;
	if (pi == SF_PKEYS)
		return "drop-pkey";
	if (pkt->rc)
		return sf_rc_rx(pkt, dst);

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
	sf_rq_pop(qp, &w);
	if (pkt->dqpn != 1)
		dst->ud_rx++;
	/* The destination QP cannot go away while the worker runs:
	 * destroy_qp flushes the workqueue after unlinking it.
	 */
	spin_unlock_irqrestore(&sf_lock, flags);
	if (pkt->dqpn == 1)
		sf_count(dst, 1, pkt->data, pkt->len);
	return sf_ud_complete(pkt, dst, qp, &w, bits,
			      pkt->dqpn == 1 ? pi : qp->pkey_index);
}

static LIST_HEAD(sf_held_list);		/* delayed packets, under sf_lock */
static unsigned long sf_held_next;	/* the earliest due of those */
static struct delayed_work sf_dwork;

/*
 * Carry @pkt to its destination, through routers, and capture what
 * happened. Also used by the SA to put its answers on the wire. True when
 * a delay fault kept the packet (its send is completed now: the wire has
 * it); the caller frees it otherwise.
 */
bool sf_deliver(struct sf_pkt *pkt)
{
	unsigned long flags;
	unsigned int ms = 0;
	const char *verdict;
	bool sooner;

	do {
		verdict = sf_stopping ? "drop-unload" : sf_rx(pkt, &ms);
	} while (verdict == sf_routed);
	if (verdict == sf_held) {
		if (pkt->dqpn == 1 || pkt->rc)
			sf_capture(pkt, "held");
		sf_send_done(pkt);
		pkt->sqp = NULL;
		pkt->delayed = true;
		pkt->due = jiffies + msecs_to_jiffies(ms);
		spin_lock_irqsave(&sf_lock, flags);
		/* Only ever bring the timer forward: pushing it back on every
		 * new packet would hold earlier ones past their time for as
		 * long as packets keep coming (a requester's retries).
		 */
		sooner = list_empty(&sf_held_list) ||
			 time_before(pkt->due, sf_held_next);
		if (sooner)
			sf_held_next = pkt->due;
		list_add_tail(&pkt->list, &sf_held_list);
		spin_unlock_irqrestore(&sf_lock, flags);
		if (sooner)
			mod_delayed_work(sf_wq, &sf_dwork, msecs_to_jiffies(ms));
		return true;
	}
	if (verdict && (pkt->dqpn == 1 || pkt->rc))
		sf_capture(pkt, verdict);
	return false;
}

/* Put delayed packets whose time has come back on the wire. */
static void sf_held_worker(struct work_struct *work)
{
	struct sf_pkt *pkt, *n;
	unsigned long flags, next = 0;
	bool any = false;

	spin_lock_irqsave(&sf_lock, flags);
	list_for_each_entry_safe(pkt, n, &sf_held_list, list) {
		if (time_after_eq(jiffies, pkt->due) || sf_stopping) {
			list_move_tail(&pkt->list, &sf_wire);
			any = true;
		} else if (!next || time_before(pkt->due, next)) {
			next = pkt->due;
		}
	}
	if (next)
		sf_held_next = next;
	spin_unlock_irqrestore(&sf_lock, flags);
	if (any)
		queue_work(sf_wq, &sf_work);
	if (next)
		mod_delayed_work(sf_wq, &sf_dwork,
				 max_t(long, 1, (long)(next - jiffies)));
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
		/* UD sent by a QP (not QP1), counted once (a held packet
		 * comes back without its QP).
		 */
		if (pkt->sqp && !pkt->rc && pkt->dqpn != 1) {
			pkt->src->ud_tx++;
			if (pkt->dlid >= SF_MC_LID_BASE && pkt->dlid != 0xffff)
				pkt->src->mc_tx++;
		}
		if (sf_deliver(pkt))
			continue;
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
	int subnet;
	const struct sf_port *at;
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
	bool rc;			/* an RC packet: BTH fields, no MAD */
	u8 opcode;
	bool mig;
	u32 psn;
	u8 syndrome;
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
	c->subnet = pkt->subnet;
	c->at = pkt->at;
	c->slid = pkt->slid;
	c->dlid = pkt->dlid;
	c->sl = pkt->sl;
	c->sqpn = pkt->sqpn;
	c->dqpn = pkt->dqpn;
	c->qkey = pkt->qkey;
	c->pkey = pkt->pkey;
	c->len = pkt->len;
	c->verdict = verdict;
	c->rc = pkt->rc;
	c->opcode = pkt->opcode;
	c->mig = pkt->mig;
	c->psn = pkt->psn;
	c->syndrome = pkt->syndrome;
	if (pkt->has_grh) {
		const struct ib_grh *g = (const struct ib_grh *)pkt->grh;

		c->has_grh = 1;
		c->hop_limit = g->hop_limit;
		c->sgid = g->sgid;
		c->dgid = g->dgid;
	}
	if (!pkt->rc)
		memcpy(c->mad, pkt->data,
		       min_t(u32, pkt->len, sizeof(c->mad)));
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
		seq_printf(m, "seq=%llu ns=%llu sn=%s", c->seq, c->ns,
			   sf_fab.subnets[c->subnet].name);
		if (c->at)
			seq_printf(m, " at=%s/%u", sf_port_owner(c->at),
				   c->at->hnum);
		else
			seq_puts(m, " at=-");
		seq_printf(m, " slid=%u dlid=%u sl=%u sqp=%u dqp=%u qkey=0x%08x pkey=0x%04x len=%u",
			   c->slid, c->dlid, c->sl, c->sqpn,
			   c->dqpn, c->qkey, c->pkey, c->len);
		if (c->has_grh)
			seq_printf(m, " grh=1 hop=%u sgid=%pI6 dgid=%pI6",
				   c->hop_limit, c->sgid.raw, c->dgid.raw);
		else
			seq_puts(m, " grh=0");
		if (c->rc) {
			/* Data packets: BTH OpCode, PSN, MigReq; AETH. */
			seq_printf(m, " rc op=0x%02x psn=%u mig=%u aeth=0x%02x verdict=%s\n",
				   c->opcode, c->psn, c->mig, c->syndrome,
				   c->verdict);
			continue;
		}
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

static void sf_counters_port(struct seq_file *m, struct sf_port *port)
{
	int i;

	for (i = 0; i < SF_NCOUNTERS; i++) {
		struct sf_counter c;
		unsigned long flags;

		spin_lock_irqsave(&sf_lock, flags);
		c = port->ctr[i];
		spin_unlock_irqrestore(&sf_lock, flags);
		if (!c.count)
			break;
		seq_printf(m, "port=%s/%d dir=%s class=0x%02x method=0x%02x attr=0x%04x count=%llu\n",
			   sf_port_owner(port), port->hnum, c.dir ? "rx" : "tx",
			   c.mgmt_class, c.method, c.attr_id, c.count);
	}
	if (port->rc_tx || port->rc_rx)
		seq_printf(m, "port=%s/%d rc tx=%llu rx=%llu\n",
			   sf_port_owner(port), port->hnum, port->rc_tx,
			   port->rc_rx);
	if (port->mtu_drops)
		seq_printf(m, "port=%s/%d drop-mtu=%llu\n",
			   sf_port_owner(port), port->hnum, port->mtu_drops);
	if (port->vl_drops)
		seq_printf(m, "port=%s/%d drop-vl=%llu\n",
			   sf_port_owner(port), port->hnum, port->vl_drops);
	if (port->down_drops)
		seq_printf(m, "port=%s/%d drop-port-down=%llu\n",
			   sf_port_owner(port), port->hnum, port->down_drops);
	if (port->ud_tx || port->ud_rx || port->mc_rx)
		seq_printf(m, "port=%s/%d ud tx=%llu rx=%llu mc_tx=%llu mc_rx=%llu\n",
			   sf_port_owner(port), port->hnum, port->ud_tx,
			   port->ud_rx, port->mc_tx, port->mc_rx);
}

static int sf_counters_show(struct seq_file *m, void *v)
{
	int s, i;

	for (s = 0; s < sf_fab.nsubnets; s++)
		for (i = 0; i < sf_fab.subnets[s].nports; i++)
			sf_counters_port(m, sf_fab.subnets[s].ports[i]);
	seq_printf(m, "sa requests=%llu answered=%llu dropped=%llu rmpp_acks=%llu\n",
		   sf_sa_count(0), sf_sa_count(1), sf_sa_count(2),
		   sf_sa_count(3));
	for (i = 0; i < sf_fab.nrouters; i++)
		seq_printf(m, "router %s forwarded=%llu dropped=%llu\n",
			   sf_fab.routers[i].name, sf_fab.routers[i].forwarded,
			   sf_fab.routers[i].dropped);
	for (i = 0; i < SF_MAX_FAULTS; i++) {
		struct sf_fault *f = &sf_faults[i];

		if (!f->hits && !f->used)
			continue;
		seq_printf(m, "fault %d %s hits=%llu active=%d\n", i,
			   f->mangle ? "mangle" : f->delay ? "delay" : "drop",
			   f->hits, f->used);
	}
	sf_link_counters(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_counters);

static void sf_topology_port(struct seq_file *m, const struct sf_port *port)
{
	const struct sf_subnet *sn = subnet_of(port);
	const struct sf_vlcfg *vl;
	u8 sl;

	seq_printf(m, "port %s/%u guid=0x%016llx lid=%u lmc=%u gid=%016llx:%016llx pkeys=0x%04x,0x%04x subnet=%s side=%u",
		   sf_port_owner(port), port->hnum, port->guid, port->lid,
		   sn->lmc, sn->prefix, port->guid, port->pkeys[0],
		   port->pkeys[1], sn->name, port->side);
	/* A host's port: its ib_device, the port number there, NodeGUID. */
	if (port->dev)
		seq_printf(m, " dev=%s devport=%u node_guid=0x%016llx",
			   port->dev->registered ?
			   dev_name(&port->dev->ibdev.dev) : "-", port->num,
			   be64_to_cpu(port->dev->ibdev.node_guid));
	seq_printf(m, " router_lid=%u state=%s\n", port->router_lid,
		   port->down ? "down" : "active");
	vl = sf_port_vlcfg(port);
	seq_printf(m, "vl port %s/%u vls=%u sl2vl=", sf_port_owner(port),
		   port->hnum, vl->vls);
	for (sl = 0; sl < 16; sl++)
		seq_printf(m, "%s%u", sl ? "," : "", sf_vl_of(vl, vl->vls, sl));
	seq_putc(m, '\n');
	if (sf_gids > 1)
		seq_printf(m, "gid port %s/%u index=1 gid=%016llx:%016llx\n",
			   sf_port_owner(port), port->hnum, sn->prefix,
			   sf_port_iid(port, 1));
}

static int sf_topology_show(struct seq_file *m, void *v)
{
	int h, p, s, i;

	for (s = 0; s < sf_fab.nsubnets; s++) {
		const struct sf_subnet *sn = &sf_fab.subnets[s];

		seq_printf(m, "subnet %s prefix=0x%016llx lmc=%u sm=%s:%u sm_lid=%u sl=%u mtu=%u rate=%u life=%u\n",
			   sn->name, sn->prefix, sn->lmc,
			   sn->sm ? sf_port_owner(sn->sm) : "-",
			   sn->sm ? sn->sm->hnum : 0, sn->sm_lid, sn->def.sl,
			   sn->def.mtu, sn->def.rate, sn->def.life);
		for (i = 0; i < sn->nroutes; i++) {
			const struct sf_route *rt = &sn->routes[i];

			if (rt->prefix)
				seq_printf(m, "route %s prefix=0x%016llx via=",
					   sn->name, rt->prefix);
			else
				seq_printf(m, "route %s prefix=* via=",
					   sn->name);
			if (!rt->nvia)
				seq_putc(m, '*');
			for (p = 0; p < rt->nvia; p++)
				seq_printf(m, "%s%s", p ? "," : "",
					   sf_fab.routers[rt->via[p]].name);
			seq_putc(m, '\n');
		}
	}
	for (h = 0; h < sf_fab.nhosts; h++) {
		struct sf_host *hh = &sf_fab.hosts[h];
		struct sf_dev *d = hh->ndevs ? hh->devs[0] : NULL;

		/* dev= the first device (a one-device host's only one). */
		seq_printf(m, "host %s subnet=%s ports=%d sl=%u mtu=%u rate=%u life=%u pkey2=0x%04x hca=%s devs=%d ack_delay=%u sysimage=0x%016llx guest=%u dev=%s%s\n",
			   hh->name, sf_fab.subnets[hh->subnet].name,
			   hh->nports, hh->props.sl, hh->props.mtu,
			   hh->props.rate, hh->props.life, hh->pkey2,
			   hh->hca == SF_HCA_MLX5 ? "mlx5" : "mlx4", hh->ndevs,
			   hh->ack_delay, sf_host_sysimage(hh), hh->guest,
			   d && d->registered ? dev_name(&d->ibdev.dev) : "-",
			   hh->iprouter ? " iprouter=1" : "");
		for (p = 0; d && p < hh->nports; p++)
			sf_topology_port(m, hh->port[p]);
	}
	for (i = 0; i < sf_fab.nrouters; i++) {
		struct sf_router *r = &sf_fab.routers[i];
		bool any = false;

		seq_printf(m, "router %s ports=%d pkey2=0x%04x slmap=", r->name,
			   r->nports, r->pkey2);
		for (s = 0; s < 16; s++) {
			if (r->slmap[s] == s)
				continue;
			seq_printf(m, "%s%d:%u", any ? "," : "", s, r->slmap[s]);
			any = true;
		}
		/* sa=: the SMs' view (rtr_guid_tbl) as of the last sweep */
		seq_printf(m, "%s dlid=%s state=%s sa=%s\n", any ? "" : "-",
			   r->dlid_gid ? "gid" : "table",
			   r->down ? "down" : "up", r->sa_down ? "down" : "up");
		for (p = 0; p < r->nports; p++)
			sf_topology_port(m, &r->port[p]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_topology);

/*
 * debugfs mcast: each subnet's multicast groups as its SA keeps them (the
 * MCMemberRecord fields and each member port's JoinState), then every QP
 * attached to a group (attach_mcast).
 */
static int sf_mcast_show(struct seq_file *m, void *v)
{
	struct sf_mcg *g;
	struct sf_mcatt *a;
	unsigned long flags;
	int i, p, k;

	g = kmalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	for (i = 0; i < SF_MAX_MCG; i++) {
		struct sf_subnet *sn;
		bool any = false;

		spin_lock_irqsave(&sf_lock, flags);
		*g = sf_fab.mcgs[i];
		spin_unlock_irqrestore(&sf_lock, flags);
		if (!g->used)
			continue;
		sn = &sf_fab.subnets[g->subnet];
		seq_printf(m, "mcg %s mgid=%pI6c mlid=0x%04x qkey=0x%08x pkey=0x%04x mtu=%u rate=%u life=%u sl=%u tclass=%u flow=0x%05x hop=%u scope=%u well_known=%d members=",
			   sn->name, g->mgid.raw, g->mlid, g->qkey, g->pkey,
			   g->mtu, g->rate, g->life, g->sl, g->tclass, g->flow,
			   g->hop, g->scope, g->well_known);
		for (p = 0; p < sn->nports; p++) {
			if (!g->join[p])
				continue;
			seq_printf(m, "%s%s/%u:0x%x", any ? "," : "",
				   sf_port_owner(sn->ports[p]), sn->ports[p]->hnum,
				   g->join[p]);
			any = true;
		}
		seq_printf(m, "%s\n", any ? "" : "-");
	}
	kfree(g);
	/* The attachments: few, printed under the lock. */
	spin_lock_irqsave(&sf_lock, flags);
	k = 0;
	list_for_each_entry(a, &sf_mcatts, list) {
		struct sf_dev *d = to_sdev(a->qp->ibqp.device);

		seq_printf(m, "attach %s/%u qpn=%u mgid=%pI6c mlid=0x%04x\n",
			   sf_fab.hosts[d->host].name,
			   d->port[a->qp->port - 1].hnum,
			   a->qp->ibqp.qp_num, a->mgid.raw, a->mlid);
		if (++k == 256)
			break;
	}
	spin_unlock_irqrestore(&sf_lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_mcast);

/* The port @num of @d as "H/P", or "-" (none) / "bad:N" (not on @d). */
static void sf_qplog_port(struct seq_file *m, const char *key,
			  const struct sf_dev *d, u32 num)
{
	if (!num)
		seq_printf(m, " %s=-", key);
	else if (num > d->nports)
		seq_printf(m, " %s=bad:%u", key, num);
	else
		seq_printf(m, " %s=%s/%u", key, sf_port_owner(&d->port[num - 1]),
			   d->port[num - 1].hnum);
}

static int sf_qplog_show(struct seq_file *m, void *v)
{
	struct sf_qplog l;
	unsigned long flags;
	u64 first, n;

	spin_lock_irqsave(&sf_lock, flags);
	n = sf_qplog_seq;
	spin_unlock_irqrestore(&sf_lock, flags);
	first = n > SF_QPLOG_LEN ? n - SF_QPLOG_LEN : 0;
	for (; first < n; first++) {
		spin_lock_irqsave(&sf_lock, flags);
		l = sf_qplog_ring[first % SF_QPLOG_LEN];
		spin_unlock_irqrestore(&sf_lock, flags);
		if (l.seq != first + 1)
			continue;
		seq_printf(m, "seq=%llu dev=%s qpn=%u mask=0x%x ret=%d state=%u",
			   l.seq, dev_name(&l.dev->ibdev.dev), l.qpn, l.mask,
			   l.ret, l.state);
		sf_qplog_port(m, "port", l.dev, l.port);
		if (l.mask & IB_QP_AV)
			seq_printf(m, " dlid=%u", l.dlid);
		if (l.mask & IB_QP_TIMEOUT)
			seq_printf(m, " timeout=%u", l.timeout);
		if (l.mask & IB_QP_ALT_PATH) {
			sf_qplog_port(m, "alt_port", l.dev, l.alt_port);
			seq_printf(m, " alt_dlid=%u alt_timeout=%u", l.alt_dlid,
				   l.alt_timeout);
		}
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sf_qplog);

/* ---- control: port events, as an SM's actions would cause them ------------ */

static void sf_port_event(struct sf_dev *d, u32 port, enum ib_event_type t);

static struct sf_port *sf_port_by_name(const char *hp)
{
	const char *slash = strchr(hp, '/');
	unsigned int pn;
	int h, len;

	if (!slash || kstrtouint(slash + 1, 0, &pn) || !pn)
		return NULL;
	len = slash - hp;
	for (h = 0; h < sf_fab.nhosts; h++)
		if (strlen(sf_fab.hosts[h].name) == len &&
		    !strncmp(sf_fab.hosts[h].name, hp, len) &&
		    pn <= sf_fab.hosts[h].nports && sf_fab.hosts[h].ndevs)
			return sf_fab.hosts[h].port[pn - 1];
	for (h = 0; h < sf_fab.nrouters; h++)
		if (strlen(sf_fab.routers[h].name) == len &&
		    !strncmp(sf_fab.routers[h].name, hp, len) &&
		    pn <= sf_fab.routers[h].nports)
			return &sf_fab.routers[h].port[pn - 1];
	return NULL;
}

/* Routers have no ib_device here: only hosts' ports raise events. */
static void sf_port_event_of(struct sf_port *port, enum ib_event_type t)
{
	if (port->dev)
		sf_port_event(port->dev, port->num, t);
}

#define SF_ARGS	12

/*
 * "drop|delay|mangle [class=C] [method=M] [attr=A] [to=H/P] [from=H/P]
 * [count=N] [ms=M] [set=OFF:HEX]... [sgid-seq=1]": a fault rule matched
 * against every packet as it arrives at a port (hosts', routers' and the
 * SA's), by the port its DLID names and the port that sent it on that
 * subnet; with a class (a method, an attribute ID), GSI MADs of that
 * management class (method, attribute) only.
 * "count" ends the rule after N packets. "mangle" delivers the packet
 * after writing the bytes HEX (up to 8) at MAD byte OFF for each "set"
 * (up to 4), and with "sgid-seq=1" a new GRH SGID interface ID into each
 * (never one an earlier rule wrote), with "seq-at=OFF" also at MAD byte
 * OFF: an SA or ib_remote_sa answer made malformed, a forged sender (one
 * whose request names its forged GID, with seq-at).
 * "release FILTER" ends the delay rules with exactly that filter and puts
 * the held packets it names back on the wire now: a test holds packets
 * until something it waits for has happened, not for a time a loaded
 * machine may overrun.
 */
static int sf_ctl_fault(int argc, char **argv)
{
	struct sf_fault f = { .used = true, .mgmt_class = -1, .method = -1,
			      .attr_id = -1, .seq_at = -1 };
	bool release = !strcmp(argv[0], "release");
	struct sf_pkt *pkt;
	unsigned long flags;
	unsigned int v;
	int i;

	f.delay = !strcmp(argv[0], "delay");
	f.mangle = !strcmp(argv[0], "mangle");
	for (i = 1; i < argc; i++) {
		char *val = strchr(argv[i], '=');

		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(argv[i], "set")) {
			char *hex = strchr(val, ':');
			size_t n;

			if (!f.mangle || !hex || f.nset == SF_MANGLE_SETS)
				return -EINVAL;
			*hex++ = '\0';
			n = strlen(hex);
			if (kstrtouint(val, 0, &v) || v >= IB_MGMT_MAD_SIZE ||
			    !n || n % 2 || n / 2 > SF_MANGLE_BYTES ||
			    hex2bin(f.set[f.nset].val, hex, n / 2))
				return -EINVAL;
			f.set[f.nset].off = v;
			f.set[f.nset].len = n / 2;
			f.nset++;
			continue;
		}
		if (!strcmp(argv[i], "to") || !strcmp(argv[i], "from")) {
			struct sf_port *p = sf_port_by_name(val);

			if (!p)
				return -ENODEV;
			if (argv[i][0] == 't')
				f.to = p;
			else
				f.from = p;
			continue;
		}
		if (kstrtouint(val, 0, &v))
			return -EINVAL;
		if (!strcmp(argv[i], "class") && v <= 0xff)
			f.mgmt_class = v;
		else if (!strcmp(argv[i], "method") && v <= 0xff)
			f.method = v;
		else if (!strcmp(argv[i], "attr") && v <= 0xffff)
			f.attr_id = v;
		else if (!strcmp(argv[i], "sgid-seq") && f.mangle && v <= 1)
			f.sgid_seq = v;
		else if (!strcmp(argv[i], "seq-at") && f.mangle &&
			 v <= IB_MGMT_MAD_SIZE - 8)
			f.seq_at = v;
		else if (!strcmp(argv[i], "count") && !release)
			f.count = v;
		else if (!strcmp(argv[i], "ms") && f.delay && v <= 60000)
			f.ms = v;
		else
			return -EINVAL;
	}
	if (release) {
		spin_lock_irqsave(&sf_lock, flags);
		for (i = 0; i < SF_MAX_FAULTS; i++) {
			struct sf_fault *r = &sf_faults[i];

			if (r->used && r->delay &&
			    r->mgmt_class == f.mgmt_class &&
			    r->method == f.method && r->attr_id == f.attr_id &&
			    r->to == f.to && r->from == f.from)
				r->used = false;
		}
		list_for_each_entry(pkt, &sf_held_list, list)
			if (sf_fault_names(&f, pkt, pkt->at))
				pkt->due = jiffies;
		spin_unlock_irqrestore(&sf_lock, flags);
		mod_delayed_work(sf_wq, &sf_dwork, 0);
		return 0;
	}
	spin_lock_irqsave(&sf_lock, flags);
	for (i = 0; i < SF_MAX_FAULTS; i++)
		if (!sf_faults[i].used) {
			sf_faults[i] = f;
			break;
		}
	spin_unlock_irqrestore(&sf_lock, flags);
	return i == SF_MAX_FAULTS ? -ENOSPC : 0;
}

/* "partition SUBNET H/P..." cuts the listed ports off from the rest of
 * their subnet (as a failed switch would); "heal SUBNET" joins them.
 */
static int sf_ctl_partition(int argc, char **argv)
{
	struct sf_subnet *sn;
	struct sf_port *cut[SF_ARGS];
	int s, i;

	s = sf_subnet_by_name(argv[1]);
	if (s < 0)
		return -ENODEV;
	sn = &sf_fab.subnets[s];
	if (!strcmp(argv[0], "heal")) {
		if (argc != 2)
			return -EINVAL;
		for (i = 0; i < sn->nports; i++)
			sn->ports[i]->side = 0;
		return 0;
	}
	if (argc < 3)
		return -EINVAL;
	for (i = 2; i < argc; i++) {
		cut[i] = sf_port_by_name(argv[i]);
		if (!cut[i] || cut[i]->subnet != s)
			return -ENODEV;
	}
	for (i = 2; i < argc; i++)
		cut[i]->side = 1;
	return 0;
}

/*
 * An SM sweep (ctl "sweep"): the SAs see the routers as they now are
 * (OpenSM's rtr_guid_tbl), and the routers refill their GID-to-LID tables
 * from their subnets' SAs.
 */
static void sf_sweep(void)
{
	struct sf_subnet *sn;
	unsigned long flags;
	int i, p;

	spin_lock_irqsave(&sf_lock, flags);
	for (i = 0; i < sf_fab.nrouters; i++)
		sf_fab.routers[i].sa_down = sf_fab.routers[i].down;
	for (sn = sf_fab.subnets; sn < sf_fab.subnets + sf_fab.nsubnets; sn++)
		for (p = 0; p < sn->nports; p++)
			sn->ports[p]->router_lid = sn->ports[p]->lid;
	spin_unlock_irqrestore(&sf_lock, flags);
}

/*
 * Commands (one per write):
 *   "down H/P", "linkdown H/P", "up H/P": the port disabled, its link
 *     lost (PortPhysicalState Polling), or back (IBA 14.2.5.6);
 *   "lid H/P LID", "pkey H/P INDEX PKEY", "sm H/P": what the SM sets;
 *   "rereg H/P": the SM asks the port's clients to register again;
 *   "router R down|up": the router and its links go down or come back;
 *   "drop ...", "delay ...", "mangle ...", "release ...", "nofault":
 *     fault rules
 *     (sf_ctl_fault);
 *   "partition SUBNET H/P...", "heal SUBNET";
 *   "clear": the capture ring;
 *   "sweep": an SM sweep (sf_sweep).
 * A host's port raises the event a real HCA raises when the SM changes
 * that PortInfo field or P_Key table (IBA 11.6.3: PORT_ERR/PORT_ACTIVE,
 * LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER). H/P also names
 * router ports.
 */
static int sf_ctl_cmd(char *buf)
{
	char *argv[SF_ARGS] = {}, *p = strim(buf);
	struct sf_port *port = NULL;
	struct sf_router *r;
	struct sf_subnet *sn;
	unsigned long flags;
	unsigned int v = 0, w = 0;
	int argc = 0, i;

	while (p && argc < SF_ARGS) {
		argv[argc] = strsep(&p, " \t");
		if (*argv[argc])
			argc++;
	}
	if (p || !argc)
		return -EINVAL;
	if (argc == 1 && !strcmp(argv[0], "clear")) {
		spin_lock_irqsave(&sf_lock, flags);
		sf_cap_seq = 0;
		memset(sf_ring, 0, sizeof(sf_ring));
		sf_qplog_seq = 0;
		memset(sf_qplog_ring, 0, sizeof(sf_qplog_ring));
		spin_unlock_irqrestore(&sf_lock, flags);
		return 0;
	}
	if (argc == 1 && !strcmp(argv[0], "sweep")) {
		sf_sweep();
		return 0;
	}
	if (argc == 1 && !strcmp(argv[0], "nofault")) {
		spin_lock_irqsave(&sf_lock, flags);
		memset(sf_faults, 0, sizeof(sf_faults));
		spin_unlock_irqrestore(&sf_lock, flags);
		return 0;
	}
	if (!strcmp(argv[0], "drop") || !strcmp(argv[0], "delay") ||
	    !strcmp(argv[0], "mangle") || !strcmp(argv[0], "release"))
		return sf_ctl_fault(argc, argv);
	if (argc < 2)
		return -EINVAL;
	if (!strcmp(argv[0], "partition") || !strcmp(argv[0], "heal"))
		return sf_ctl_partition(argc, argv);
	if (!strcmp(argv[0], "router") && argc == 3) {
		i = sf_router_by_name(argv[1]);
		if (i < 0)
			return -ENODEV;
		if (strcmp(argv[2], "down") && strcmp(argv[2], "up"))
			return -EINVAL;
		/* A router that goes down takes its links with it: the SAs
		 * stop choosing it (sf_port_absent).
		 */
		r = &sf_fab.routers[i];
		r->down = !strcmp(argv[2], "down");
		for (i = 0; i < r->nports; i++) {
			r->port[i].down = r->down;
			r->port[i].phys = IB_PORT_PHYS_STATE_DISABLED;
		}
		return 0;
	}
	port = sf_port_by_name(argv[1]);
	if (!port)
		return -ENODEV;
	sn = subnet_of(port);
	if ((argc > 2 && kstrtouint(argv[2], 0, &v)) ||
	    (argc > 3 && kstrtouint(argv[3], 0, &w)))
		return -EINVAL;
	if ((!strcmp(argv[0], "down") || !strcmp(argv[0], "linkdown")) &&
	    argc == 2) {
		port->phys = argv[0][0] == 'l' ? IB_PORT_PHYS_STATE_POLLING :
						 IB_PORT_PHYS_STATE_DISABLED;
		port->down = true;
		sf_port_event_of(port, IB_EVENT_PORT_ERR);
	} else if (!strcmp(argv[0], "up") && argc == 2) {
		port->down = false;
		sf_port_event_of(port, IB_EVENT_PORT_ACTIVE);
	} else if (!strcmp(argv[0], "lid") && argc == 3) {
		/* Base LIDs stay aligned to 2^LMC (IBA 7.11.1). */
		if (!v || v >= 0xc000 || v & ((1 << sn->lmc) - 1) ||
		    sf_port_by_lid(port->subnet, v, NULL))
			return -EINVAL;
		spin_lock_irqsave(&sf_lock, flags);
		if (port == sn->sm)
			sn->sm_lid = v;
		port->lid = v;
		spin_unlock_irqrestore(&sf_lock, flags);
		sf_port_event_of(port, IB_EVENT_LID_CHANGE);
	} else if (!strcmp(argv[0], "pkey") && argc == 4) {
		if (v >= SF_PKEYS || w > 0xffff || !(w & 0x7fff))
			return -EINVAL;
		port->pkeys[v] = w;
		sf_port_event_of(port, IB_EVENT_PKEY_CHANGE);
	} else if (!strcmp(argv[0], "rereg") && argc == 2 && port->dev) {
		/* The SM asks the port's clients to register again (PortInfo
		 * ClientReregister, IBA 14.4.11), as after an SM restart that
		 * lost its records: nothing else changes.
		 */
		sf_port_event_of(port, IB_EVENT_CLIENT_REREGISTER);
	} else if (!strcmp(argv[0], "sm") && argc == 2 && port->dev) {
		sn->sm = port;
		sn->sm_lid = port->lid;
		for (i = 0; i < sn->nports; i++)
			sf_port_event_of(sn->ports[i], IB_EVENT_SM_CHANGE);
	} else {
		return -EINVAL;
	}
	return 0;
}

/* The ctl commands for in-kernel test drivers (simfab_rc_test). */
int simfab_ctl(const char *cmd)
{
	char *buf = kstrdup(cmd, GFP_KERNEL);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = sf_ctl_cmd(buf);
	kfree(buf);
	return ret;
}
EXPORT_SYMBOL_GPL(simfab_ctl);

static ssize_t sf_ctl_write(struct file *f, const char __user *ubuf,
			    size_t len, loff_t *pos)
{
	char buf[256];
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

	.alloc_mr = sf_mr_alloc,
	.alloc_pd = sf_alloc_pd,
	.create_ah = sf_create_ah,
	.create_cq = sf_create_cq,
	.create_qp = sf_create_qp,
	.dealloc_pd = sf_dealloc_pd,
	.dereg_mr = sf_dereg_mr,
	.destroy_ah = sf_destroy_ah,
	.destroy_cq = sf_destroy_cq,
	.destroy_qp = sf_destroy_qp,
	.attach_mcast = sf_attach_mcast,
	.detach_mcast = sf_detach_mcast,
	.get_dev_fw_str = sf_get_dev_fw_str,
	.get_dma_mr = sf_get_dma_mr,
	.get_port_immutable = sf_get_port_immutable,
	.map_mr_sg = sf_mr_map_sg,
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

	/* Another guest's device is not registered here. */
	if (d->registered)
		ib_dispatch_event(&ev);
}

/*
 * The adapter's SystemImageGUID (IBA 14.2.5.3): "SF", host, port byte 0.
 * An mlx4-style host's one device has it as its NodeGUID too; an
 * mlx5-style host's devices share it (mlx5_query_system_image_guid reads
 * the adapter's from the HCA vport context) but each has its own NodeGUID
 * (mlx5_query_node_guid, per PCI function).
 */
u64 sf_host_sysimage(const struct sf_host *h)
{
	return 0x5346000000000000ULL | (u64)(h - sf_fab.hosts + 1) << 8;
}

/*
 * A host's ib_devices: mlx4 one with every port (mlx4_ib_add:
 * phys_port_cnt = num_ports), mlx5 one per port (mlx5r_probe makes one
 * ib_device per mlx5_core_dev, a PCI function with one IB port; the
 * multiport affiliation in mlx5_ib_init_multiport_master is RoCE-only).
 */
static int sf_add_dev(int h)
{
	struct sf_host *hh = &sf_fab.hosts[h];
	int ndevs = hh->hca == SF_HCA_MLX5 ? hh->nports : 1;
	int per = hh->nports / ndevs;
	struct sf_dev *d;
	int i, p, hp;

	for (i = 0; i < ndevs; i++) {
		d = ib_alloc_device(sf_dev, ibdev);
		if (!d)
			return -ENOMEM;
		d->host = h;
		d->nports = per;
		for (p = 0; p < per; p++) {
			struct sf_port *port = &d->port[p];

			hp = i * per + p;
			port->dev = d;
			port->subnet = hh->psubnet[hp];
			port->num = p + 1;
			port->hnum = hp + 1;
			/* Locally administered GUIDs: "SF", host, port. */
			port->guid = 0x5346000000000000ULL | (u64)(h + 1) << 8 |
				     (hp + 1);
			port->lid = hh->lids[hp];	/* sf_next_lid */
			port->pkeys[0] = hh->pkey1 ?: IB_DEFAULT_PKEY_FULL;
			port->pkeys[1] = hh->pkey2;
			hh->port[hp] = port;
		}
		d->ibdev.node_type = RDMA_NODE_IB_CA;
		d->ibdev.phys_port_cnt = per;
		d->ibdev.num_comp_vectors = 1;
		d->ibdev.node_guid = cpu_to_be64(hh->hca == SF_HCA_MLX5 ?
						 d->port[0].guid :
						 sf_host_sysimage(hh));
		snprintf(d->ibdev.node_desc, sizeof(d->ibdev.node_desc),
			 "%s simfab", hh->name);
		ib_set_device_ops(&d->ibdev, &sf_dev_ops);
		hh->devs[hh->ndevs++] = d;
		sf_fab.devs[sf_fab.ndevs++] = d;
	}
	return 0;
}

static void sf_free_list(struct list_head *list)
{
	struct sf_pkt *pkt;

	while (!list_empty(list)) {
		pkt = list_first_entry(list, struct sf_pkt, list);
		list_del(&pkt->list);
		kfree(pkt);
	}
}

static void sf_remove_all(void)
{
	int i;

	sf_stopping = true;
	/* Delayed packets go now (and are dropped: sf_stopping). */
	mod_delayed_work(sf_wq, &sf_dwork, 0);
	flush_delayed_work(&sf_dwork);
	flush_workqueue(sf_wq);
	for (i = sf_fab.ndevs - 1; i >= 0; i--) {
		struct sf_dev *d = sf_fab.devs[i];

		if (d->registered)
			ib_unregister_device(&d->ibdev);
		flush_workqueue(sf_wq);
		sf_fab.devs[i] = NULL;
		sf_fab.hosts[d->host].ndevs = 0;
		ib_dealloc_device(&d->ibdev);
	}
	sf_fab.ndevs = 0;
}

/*
 * Each subnet's ports in port GUID order (hosts' "SF.." before routers'
 * "SFR.."), the order of OpenSM's port_guid_tbl that the SA walks; and
 * each subnet's SM port.
 */
static void sf_build_subnets(void)
{
	struct sf_subnet *sn;
	struct sf_port *port;
	int h, p;

	for (h = 0; h < sf_fab.nhosts; h++)
		for (p = 0; p < sf_fab.hosts[h].nports; p++) {
			port = sf_fab.hosts[h].port[p];
			sn = subnet_of(port);
			sn->ports[sn->nports++] = port;
			port->router_lid = port->lid;
			if (port->lid == sn->sm_lid)
				sn->sm = port;
		}
	for (h = 0; h < sf_fab.nrouters; h++)
		for (p = 0; p < sf_fab.routers[h].nports; p++) {
			port = &sf_fab.routers[h].port[p];
			sn = subnet_of(port);
			sn->ports[sn->nports++] = port;
		}
}

static int __init sf_init(void)
{
	int h, p, ret;

	if (!sf_guest || sf_guest > SF_MAX_GUESTS)
		return -EINVAL;
	if (!strcmp(router_choice, "opensm"))
		sf_rc_opensm = true;
	else if (strcmp(router_choice, "first-present"))
		return -EINVAL;
	if (!strcmp(alias, "lid"))
		sf_alias_lid = true;
	else if (strcmp(alias, "guid"))
		return -EINVAL;
	ret = sf_parse_topology();
	if (ret)
		return ret;
	/*
	 * Destroying a QP or CQ flushes sf_wq, and storage ULPs destroy them
	 * from their reclaim-safe workqueues (nvmet-rdma's queue release runs
	 * on nvmet-wq): a !WQ_MEM_RECLAIM sf_wq would make the kernel warn
	 * (check_flush_dependency()) and could deadlock under memory pressure.
	 */
	sf_wq = alloc_ordered_workqueue("simfab", WQ_MEM_RECLAIM);
	if (!sf_wq)
		return -ENOMEM;
	INIT_WORK(&sf_work, sf_worker);
	INIT_DELAYED_WORK(&sf_dwork, sf_held_worker);
	/* LIDs first: every port must know the SM LID before ib_sa asks. */
	for (h = 0; h < sf_fab.nhosts; h++) {
		ret = sf_add_dev(h);
		if (ret)
			goto fail;
	}
	sf_build_subnets();
	sf_sa_mcast_init();
	ret = sf_link_init(topology);
	if (ret)
		goto fail;
	for (h = 0; h < sf_fab.ndevs; h++) {
		struct sf_dev *d = sf_fab.devs[h];

		if (!sf_host_local(&sf_fab.hosts[d->host]))
			continue;
		ret = ib_register_device(&d->ibdev, "simfab%d", NULL);
		if (ret)
			goto fail;
		d->registered = true;
		/* What an SM's PortInfo Set causes on a real HCA: ib_sa
		 * rebuilds its SM AH on these (sa_query.c update_sm_ah).
		 */
		for (p = 1; p <= d->nports; p++) {
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
	debugfs_create_file("mcast", 0444, sf_debugfs, NULL, &sf_mcast_fops);
	debugfs_create_file("qplog", 0444, sf_debugfs, NULL, &sf_qplog_fops);
	pr_info("simfab: %d subnets, %d hosts, %d routers\n", sf_fab.nsubnets,
		sf_fab.nhosts, sf_fab.nrouters);
	return 0;
fail:
	sf_link_exit();
	sf_remove_all();
	cancel_delayed_work_sync(&sf_dwork);
	destroy_workqueue(sf_wq);
	sf_free_list(&sf_held_list);
	sf_free_list(&sf_wire);
	return ret;
}

static void __exit sf_exit(void)
{
	debugfs_remove_recursive(sf_debugfs);
	/* No frame from another guest after this (dev_remove_pack waits). */
	sf_link_exit();
	sf_remove_all();
	cancel_delayed_work_sync(&sf_dwork);
	destroy_workqueue(sf_wq);
	sf_sa_cleanup();
	/* Packets queued after the last flush (none expected). */
	sf_free_list(&sf_held_list);
	sf_free_list(&sf_wire);
}

module_init(sf_init);
module_exit(sf_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("simfab: simulated InfiniBand subnet for ib-routed tests");
