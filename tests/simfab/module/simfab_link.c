// SPDX-License-Identifier: GPL-2.0
/*
 * simfab across kernels (tests/simfab/README.md, "Guests"): every guest
 * loads the same topology; guest 1 runs the fabric (switches, routers,
 * SAs, faults, the capture of the whole fabric), each guest registers the
 * CAs of its own hosts. A packet a CA of another guest sends goes to
 * guest 1 as it left the port; a packet the fabric delivers to a port of
 * another guest goes there as it arrives. Both cross a network device
 * (QEMU's dgram netdev between the VMs) in Ethernet frames of the IEEE
 * 802 local experimental EtherType, a small link header and then the IBA
 * packet in wire format (IBA vol. 1, 5.4 and 9.2-9.3): LRH, GRH, BTH,
 * DETH/RETH/AETH, ImmDt/IETH, payload, pad. The ICRC is carried as zero and
 * not checked, the VCRC not at all: the link between the guests does not
 * lose or corrupt frames, and simfab's own faults corrupt what they mean
 * to on the fabric side.
 */
#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/netdevice.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>

#include "simfab.h"

static char *sf_link_name;
module_param_named(link, sf_link_name, charp, 0444);
MODULE_PARM_DESC(link, "network device to the other guests (topology hosts with guest= other than this one): tests/simfab/README.md \"Guests\"");

#define SF_LINK_MAGIC	0x5346	/* "SF" */
#define SF_LINK_VER	1
#define SF_LINK_TO_FABRIC	1	/* sent by a CA port, for guest 1 */
#define SF_LINK_TO_PORT		2	/* the fabric's delivery to a CA port */

/* Precedes the IBA packet in each frame. */
struct sf_link_hdr {
	__be16 magic;
	u8 version;
	u8 kind;		/* SF_LINK_TO_FABRIC or SF_LINK_TO_PORT */
	u8 from_guest;
	u8 to_guest;
	u8 subnet;		/* the subnet the packet is on */
	u8 host;		/* index in the topology's hosts: the sending */
	u8 hnum;		/* port (TO_FABRIC), the taking one (TO_PORT) */
	u8 rsvd[3];
	__be32 topo;		/* crc32 of the topology: the same at both ends */
} __packed;

/* IBA 5.4 LRH LNH, 9.2 BTH OpCode (the transport in bits 7-5). */
#define SF_LNH_IBA_LOCAL	2
#define SF_LNH_IBA_GLOBAL	3
#define SF_OP_UD_SEND_ONLY	0x64
#define SF_OP_UD_SEND_ONLY_IMM	0x65
#define SF_LRH_LEN	8
#define SF_BTH_LEN	12
#define SF_DETH_LEN	8
#define SF_RETH_LEN	16
#define SF_AETH_LEN	4
#define SF_IMM_LEN	4
#define SF_IETH_LEN	4
#define SF_ICRC_LEN	4

static struct net_device *sf_link_dev;
static u32 sf_topo_crc;
static atomic64_t sf_link_tx, sf_link_rx, sf_link_bad;

static bool sf_op_reth(u8 op)
{
	return op == SF_RC_WRITE_FIRST || op == SF_RC_WRITE_ONLY ||
	       op == SF_RC_WRITE_ONLY_IMM || op == SF_RC_READ_REQ;
}

static bool sf_op_aeth(u8 op)
{
	return op == SF_RC_ACK || op == SF_RC_READ_RESP_FIRST ||
	       op == SF_RC_READ_RESP_LAST || op == SF_RC_READ_RESP_ONLY;
}

/* The RC OpCodes simfab sends (IBA 9.2, table 38). */
static bool sf_op_rc(u8 op)
{
	return op <= SF_RC_ACK || sf_op_inv(op);
}

/* The IBA headers' length for @pkt, LRH to the last extended header. */
static u32 sf_iba_hdr_len(const struct sf_pkt *pkt)
{
	u32 n = SF_LRH_LEN + SF_BTH_LEN;

	if (pkt->has_grh)
		n += SF_GRH_LEN;
	if (!pkt->rc)
		return n + SF_DETH_LEN + (pkt->has_imm ? SF_IMM_LEN : 0);
	if (sf_op_reth(pkt->opcode))
		n += SF_RETH_LEN;
	if (sf_op_aeth(pkt->opcode))
		n += SF_AETH_LEN;
	if (sf_op_imm(pkt->opcode))
		n += SF_IMM_LEN;
	if (sf_op_inv(pkt->opcode))
		n += SF_IETH_LEN;
	return n;
}

static void sf_put_iba(u8 *b, const struct sf_pkt *pkt, u32 hlen, u8 pad)
{
	u32 words = (hlen + pkt->len + pad + SF_ICRC_LEN) / 4;
	u8 op = pkt->rc ? pkt->opcode :
		pkt->has_imm ? SF_OP_UD_SEND_ONLY_IMM : SF_OP_UD_SEND_ONLY;

	/* LRH: VL 0 (simfab keeps no VL on a packet), LVer 0. */
	b[0] = 0;
	b[1] = (pkt->sl & 0xf) << 4 |
	       (pkt->has_grh ? SF_LNH_IBA_GLOBAL : SF_LNH_IBA_LOCAL);
	put_unaligned_be16(pkt->dlid, b + 2);
	put_unaligned_be16(words & 0x7ff, b + 4);
	put_unaligned_be16(pkt->slid, b + 6);
	b += SF_LRH_LEN;
	if (pkt->has_grh) {
		memcpy(b, pkt->grh, SF_GRH_LEN);
		b += SF_GRH_LEN;
	}
	/* BTH: OpCode; SE 0, MigReq, PadCnt, TVer 0; P_Key; DestQP; PSN. */
	b[0] = op;
	b[1] = (pkt->mig ? 0x40 : 0) | (pad & 3) << 4;
	put_unaligned_be16(pkt->pkey, b + 2);
	put_unaligned_be32(pkt->dqpn & 0xffffff, b + 4);
	put_unaligned_be32(pkt->psn & 0xffffff, b + 8);
	b += SF_BTH_LEN;
	if (!pkt->rc) {
		put_unaligned_be32(pkt->qkey, b);
		put_unaligned_be32(pkt->sqpn & 0xffffff, b + 4);
		b += SF_DETH_LEN;
	}
	if (pkt->rc && sf_op_reth(op)) {
		put_unaligned_be64(pkt->va, b);
		put_unaligned_be32(pkt->rkey, b + 8);
		put_unaligned_be32(pkt->dma_len, b + 12);
		b += SF_RETH_LEN;
	}
	if (pkt->rc && sf_op_aeth(op)) {
		put_unaligned_be32((u32)pkt->syndrome << 24, b);
		b += SF_AETH_LEN;
	}
	if (pkt->rc ? sf_op_imm(op) : pkt->has_imm) {
		memcpy(b, &pkt->imm, SF_IMM_LEN);
		b += SF_IMM_LEN;
	}
	if (pkt->rc && sf_op_inv(op)) {
		put_unaligned_be32(pkt->ieth, b);
		b += SF_IETH_LEN;
	}
	memcpy(b, pkt->data, pkt->len);
	memset(b + pkt->len, 0, pad + SF_ICRC_LEN);
}

/*
 * Send @pkt to the guest that holds @port (guest 1 for a packet a local
 * CA port sends, the port's guest for a delivery). Returns the capture
 * verdict.
 */
const char *sf_link_send(const struct sf_pkt *pkt, const struct sf_port *port)
{
	const struct sf_host *h = &sf_fab.hosts[port->dev->host];
	u8 to = sf_host_local(h) ? 1 : h->guest;
	u32 hlen = sf_iba_hdr_len(pkt);
	u8 pad = (4 - (pkt->len & 3)) & 3;
	u32 len = sizeof(struct sf_link_hdr) + hlen + pkt->len + pad +
		  SF_ICRC_LEN;
	struct sf_link_hdr *lh;
	struct sk_buff *skb;

	if (!sf_link_dev)
		return "drop-no-link";
	skb = alloc_skb(LL_RESERVED_SPACE(sf_link_dev) + len, GFP_ATOMIC);
	if (!skb)
		return "drop-nomem";
	skb_reserve(skb, LL_RESERVED_SPACE(sf_link_dev));
	skb_reset_network_header(skb);
	lh = skb_put(skb, len);
	*lh = (struct sf_link_hdr){
		.magic = cpu_to_be16(SF_LINK_MAGIC),
		.version = SF_LINK_VER,
		.kind = sf_host_local(h) ? SF_LINK_TO_FABRIC : SF_LINK_TO_PORT,
		.from_guest = sf_guest,
		.to_guest = to,
		.subnet = pkt->subnet,
		.host = port->dev->host,
		.hnum = port->hnum,
		.topo = cpu_to_be32(sf_topo_crc),
	};
	sf_put_iba((u8 *)(lh + 1), pkt, hlen, pad);
	skb->dev = sf_link_dev;
	skb->protocol = htons(ETH_P_802_EX1);
	/* Broadcast: the link joins a handful of guests; to_guest decides. */
	if (dev_hard_header(skb, sf_link_dev, ETH_P_802_EX1,
			    sf_link_dev->broadcast, sf_link_dev->dev_addr,
			    skb->len) < 0) {
		kfree_skb(skb);
		return "drop-link";
	}
	if (dev_queue_xmit(skb))
		return "drop-link";
	atomic64_inc(&sf_link_tx);
	return sf_host_local(h) ? "to-fabric" : "to-guest";
}

/* The port a link header names, or NULL. */
static struct sf_port *sf_link_port(const struct sf_link_hdr *lh)
{
	struct sf_host *h;

	if (lh->host >= sf_fab.nhosts)
		return NULL;
	h = &sf_fab.hosts[lh->host];
	if (!lh->hnum || lh->hnum > h->nports || !h->port[lh->hnum - 1] ||
	    h->port[lh->hnum - 1]->subnet != lh->subnet)
		return NULL;
	return h->port[lh->hnum - 1];
}

/* Parse the IBA packet of a frame into a new sf_pkt; NULL if malformed. */
static struct sf_pkt *sf_get_iba(const u8 *b, u32 n)
{
	u32 words, hlen = SF_LRH_LEN + SF_BTH_LEN, len;
	bool grh, rc;
	struct sf_pkt *pkt;
	u8 op, pad;

	if (n < hlen + SF_ICRC_LEN || (b[0] & 0xf) != 0)
		return NULL;
	switch (b[1] & 3) {
	case SF_LNH_IBA_LOCAL:
		grh = false;
		break;
	case SF_LNH_IBA_GLOBAL:
		grh = true;
		hlen += SF_GRH_LEN;
		break;
	default:
		return NULL;
	}
	words = get_unaligned_be16(b + 4) & 0x7ff;
	if (n < hlen + SF_ICRC_LEN || words * 4 != n)
		return NULL;
	op = b[SF_LRH_LEN + (grh ? SF_GRH_LEN : 0)];
	pad = (b[SF_LRH_LEN + (grh ? SF_GRH_LEN : 0) + 1] >> 4) & 3;
	rc = sf_op_rc(op);
	if (!rc && op != SF_OP_UD_SEND_ONLY && op != SF_OP_UD_SEND_ONLY_IMM)
		return NULL;
	if (!rc)
		hlen += SF_DETH_LEN +
			(op == SF_OP_UD_SEND_ONLY_IMM ? SF_IMM_LEN : 0);
	else
		hlen += (sf_op_reth(op) ? SF_RETH_LEN : 0) +
			(sf_op_aeth(op) ? SF_AETH_LEN : 0) +
			(sf_op_imm(op) ? SF_IMM_LEN : 0) +
			(sf_op_inv(op) ? SF_IETH_LEN : 0);
	if (n < hlen + pad + SF_ICRC_LEN)
		return NULL;
	len = n - hlen - pad - SF_ICRC_LEN;
	if (len > SF_MAX_PAYLOAD)
		return NULL;
	pkt = sf_pkt_alloc(len, GFP_ATOMIC);
	if (!pkt)
		return NULL;
	pkt->sl = b[1] >> 4;
	pkt->dlid = get_unaligned_be16(b + 2);
	pkt->slid = get_unaligned_be16(b + 6);
	b += SF_LRH_LEN;
	pkt->has_grh = grh;
	if (grh) {
		memcpy(pkt->grh, b, SF_GRH_LEN);
		b += SF_GRH_LEN;
	}
	pkt->rc = rc;
	pkt->opcode = rc ? op : 0;
	pkt->mig = b[1] & 0x40;
	pkt->pkey = get_unaligned_be16(b + 2);
	pkt->dqpn = get_unaligned_be32(b + 4) & 0xffffff;
	pkt->psn = get_unaligned_be32(b + 8) & 0xffffff;
	b += SF_BTH_LEN;
	if (!rc) {
		pkt->qkey = get_unaligned_be32(b);
		pkt->sqpn = get_unaligned_be32(b + 4) & 0xffffff;
		b += SF_DETH_LEN;
		if (op == SF_OP_UD_SEND_ONLY_IMM) {
			pkt->has_imm = true;
			memcpy(&pkt->imm, b, SF_IMM_LEN);
			b += SF_IMM_LEN;
		}
	} else {
		if (sf_op_reth(op)) {
			pkt->va = get_unaligned_be64(b);
			pkt->rkey = get_unaligned_be32(b + 8);
			pkt->dma_len = get_unaligned_be32(b + 12);
			b += SF_RETH_LEN;
		}
		if (sf_op_aeth(op)) {
			pkt->syndrome = b[0];
			b += SF_AETH_LEN;
		}
		if (sf_op_imm(op)) {
			pkt->has_imm = true;
			memcpy(&pkt->imm, b, SF_IMM_LEN);
			b += SF_IMM_LEN;
		}
		if (sf_op_inv(op)) {
			pkt->ieth = get_unaligned_be32(b);
			b += SF_IETH_LEN;
		}
	}
	memcpy(pkt->data, b, len);
	return pkt;
}

/*
 * A frame from another guest: checked whole before anything acts on it
 * (the link is test plumbing, but a frame from a guest with another
 * topology or version must not be taken for one of ours).
 */
static int sf_link_rcv(struct sk_buff *skb, struct net_device *dev,
		       struct packet_type *pt, struct net_device *orig_dev)
{
	const struct sf_link_hdr *lh;
	struct sf_port *port;
	struct sf_pkt *pkt = NULL;

	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (skb_linearize(skb) || skb->len < sizeof(*lh))
		goto bad;
	lh = (const struct sf_link_hdr *)skb->data;
	if (be16_to_cpu(lh->magic) != SF_LINK_MAGIC ||
	    lh->version != SF_LINK_VER || be32_to_cpu(lh->topo) != sf_topo_crc)
		goto bad;
	if (lh->to_guest != sf_guest)
		goto out;	/* another guest's, on a shared link */
	if (lh->subnet >= sf_fab.nsubnets)
		goto bad;
	port = sf_link_port(lh);
	if (!port)
		goto bad;
	if (lh->kind == SF_LINK_TO_FABRIC) {
		/* Only guest 1 runs the fabric; the sender holds the port. */
		if (sf_guest != 1 ||
		    sf_fab.hosts[lh->host].guest != lh->from_guest)
			goto bad;
	} else if (lh->kind != SF_LINK_TO_PORT || lh->from_guest != 1 ||
		   !sf_host_local(&sf_fab.hosts[lh->host])) {
		goto bad;
	}
	pkt = sf_get_iba(skb->data + sizeof(*lh), skb->len - sizeof(*lh));
	if (!pkt)
		goto bad;
	pkt->subnet = lh->subnet;
	if (lh->kind == SF_LINK_TO_FABRIC) {
		pkt->src = port;
	} else {
		pkt->link_dst = port;
		pkt->at = port;
	}
	atomic64_inc(&sf_link_rx);
	sf_xmit(pkt);
	goto out;
bad:
	atomic64_inc(&sf_link_bad);
out:
	kfree_skb(skb);
	return NET_RX_SUCCESS;
}

static struct packet_type sf_ptype = {
	.type = cpu_to_be16(ETH_P_802_EX1),
	.func = sf_link_rcv,
};

/* Opens the link when the topology has hosts of other guests. */
int sf_link_init(const char *topology)
{
	bool others = false;
	int h;

	sf_topo_crc = crc32_le(~0, topology, strlen(topology));
	for (h = 0; h < sf_fab.nhosts; h++)
		others |= !sf_host_local(&sf_fab.hosts[h]);
	if (!others)
		return 0;
	if (!sf_link_name || !*sf_link_name) {
		pr_err("simfab: the topology has hosts of other guests: link= must name the network device to them\n");
		return -EINVAL;
	}
	sf_link_dev = dev_get_by_name(&init_net, sf_link_name);
	if (!sf_link_dev) {
		pr_err("simfab: link=%s: no such network device\n",
		       sf_link_name);
		return -ENODEV;
	}
	sf_ptype.dev = sf_link_dev;
	dev_add_pack(&sf_ptype);
	pr_info("simfab: guest %u, link %s\n", sf_guest, sf_link_name);
	return 0;
}

void sf_link_exit(void)
{
	if (!sf_link_dev)
		return;
	dev_remove_pack(&sf_ptype);
	dev_put(sf_link_dev);
	sf_link_dev = NULL;
}

void sf_link_counters(struct seq_file *m)
{
	if (sf_link_dev)
		seq_printf(m, "link guest=%u dev=%s tx=%lld rx=%lld bad=%lld\n",
			   sf_guest, sf_link_dev->name,
			   atomic64_read(&sf_link_tx),
			   atomic64_read(&sf_link_rx),
			   atomic64_read(&sf_link_bad));
}
