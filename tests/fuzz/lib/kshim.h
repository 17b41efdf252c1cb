/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's types and helpers that the fuzz targets of kernel code
 * (tests/fuzz/remote-sa/shim.h, tests/fuzz/lap-apr/shim.h) share: the
 * structures read from the wire with the kernel's layout
 * (include/rdma/ib_mad.h, ib_sa.h, ib_verbs.h), lists, a hash table and
 * locks for one thread (the harness checks that every lock is released).
 */
#ifndef IBR_FUZZ_KSHIM_H
#define IBR_FUZZ_KSHIM_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;	/* as the kernel's */
typedef int64_t s64;
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef __be64 ib_sa_comp_mask;
typedef unsigned int gfp_t;

#define __packed		__attribute__((packed))
#define IS_ENABLED(x)		0
#define BIT_ULL(n)		(1ULL << (n))
#define cpu_to_be16(x)		htons(x)
#define cpu_to_be32(x)		htonl(x)
#define cpu_to_be64(x)		htobe64(x)
#define be16_to_cpu(x)		ntohs(x)
#define be32_to_cpu(x)		ntohl(x)
#define be64_to_cpu(x)		((u64)be64toh(x))
#define READ_ONCE(x)		(x)
#define min(a, b)		((a) < (b) ? (a) : (b))
#define max(a, b)		((a) > (b) ? (a) : (b))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define container_of(p, t, m)	((t *)((char *)(p) - offsetof(t, m)))
#define fallthrough		__attribute__((fallthrough))
#define GFP_KERNEL		0
#define NSEC_PER_MSEC		1000000ULL
#define IS_ERR(p)		((unsigned long)(p) >= (unsigned long)-4095)
#define PTR_ERR(p)		((long)(p))
#define ERR_PTR(e)		((void *)(long)(e))

static inline const void *memchr_inv(const void *p, int c, size_t n)
{
	const u8 *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (u8)c)
			return b + i;
	return NULL;
}

/* ---- time: Debian's HZ, jiffies set by the harness ---------------------- */
#define HZ			250
extern unsigned long jiffies;
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)
static inline unsigned int jiffies_to_msecs(unsigned long j)
{
	return j * (1000 / HZ);
}

/* ---- lists, hash tables, locks (one thread) ---------------------------- */
struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h->prev = h;
}

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = NULL;
}

#define list_for_each_entry(pos, head, member)				\
	for (pos = container_of((head)->next, __typeof__(*pos), member); \
	     &pos->member != (head);					\
	     pos = container_of(pos->member.next, __typeof__(*pos), member))

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

#define DECLARE_HASHTABLE(name, bits)	struct hlist_head name[1 << (bits)]
#define HASH_SIZE(name)			(sizeof(name) / sizeof((name)[0]))
#define hash_init(t)			memset(t, 0, sizeof(t))

static inline void hash_add_head(struct hlist_node *n, struct hlist_head *h)
{
	n->next = h->first;
	if (h->first)
		h->first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}

#define hash_add(t, node, key)	hash_add_head(node, &(t)[(key) % HASH_SIZE(t)])

static inline void hash_del(struct hlist_node *n)
{
	if (!n->pprev)
		return;
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
}

#define hash_for_each_possible(t, obj, member, key)			\
	for (struct hlist_node *_n = (t)[(key) % HASH_SIZE(t)].first;	\
	     _n && ((obj = container_of(_n, __typeof__(*obj), member)), 1); \
	     _n = _n->next)

static inline u32 jhash(const void *key, u32 len, u32 seed)
{
	const u8 *k = key;
	u32 h = seed ^ 2166136261u, i;

	for (i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

typedef struct { int held; } spinlock_t;
struct mutex { int unused; };
typedef struct { long long counter; } atomic64_t;
typedef struct { int counter; } atomic_t;
typedef struct { int unused; } wait_queue_head_t;
struct kobject { int unused; };
struct kref { int refcount; };
struct work_struct { int unused; };
struct delayed_work { struct work_struct work; };
struct workqueue_struct;

/* The harness checks that every lock taken is released. */
extern int fuzz_locks_held;
#define spin_lock_irqsave(l, f)						\
	do { (void)(f); (l)->held++; fuzz_locks_held++; } while (0)
#define spin_unlock_irqrestore(l, f)					\
	do { (void)(f); (l)->held--; fuzz_locks_held--; } while (0)
#define wake_up(w)		((void)(w))

static inline void atomic64_inc(atomic64_t *a)
{
	a->counter++;
}

/* ---- ib_verbs.h, ib_mad.h, ib_sa.h -------------------------------------- */
union ib_gid {
	u8	raw[16];
	struct {
		__be64	subnet_prefix;
		__be64	interface_id;
	} global;
};

enum ib_gid_type { IB_GID_TYPE_IB };

struct ib_gid_attr {
	union ib_gid	gid;
};

struct device { int unused; };

struct ib_device {
	struct device	dev;
};

struct ib_event_handler { int unused; };
struct ib_sa_client { int unused; };
struct ib_pd { int unused; };
struct ib_ah { int unused; };

struct ib_qp {
	struct ib_pd	*pd;
};

enum { IB_WC_GRH = 1 };

struct ib_wc {
	u32	src_qp;
	int	wc_flags;
	u16	pkey_index;
	u32	slid;
};

struct ib_grh {
	__be32		version_tclass_flow;
	__be16		paylen;
	u8		next_hdr;
	u8		hop_limit;
	union ib_gid	sgid;
	union ib_gid	dgid;
};

enum ib_mtu { IB_MTU_256 = 1, IB_MTU_512, IB_MTU_1024, IB_MTU_2048, IB_MTU_4096 };

/* include/rdma/ib_verbs.h's enum ib_rate */
enum ib_rate {
	IB_RATE_PORT_CURRENT = 0,
	IB_RATE_2_5_GBPS = 2, IB_RATE_5_GBPS = 5, IB_RATE_10_GBPS = 3,
	IB_RATE_20_GBPS = 6, IB_RATE_30_GBPS = 4, IB_RATE_40_GBPS = 7,
	IB_RATE_60_GBPS = 8, IB_RATE_80_GBPS = 9, IB_RATE_120_GBPS = 10,
	IB_RATE_14_GBPS = 11, IB_RATE_56_GBPS = 12, IB_RATE_112_GBPS = 13,
	IB_RATE_168_GBPS = 14, IB_RATE_25_GBPS = 15, IB_RATE_100_GBPS = 16,
	IB_RATE_200_GBPS = 17, IB_RATE_300_GBPS = 18, IB_RATE_28_GBPS = 19,
	IB_RATE_50_GBPS = 20, IB_RATE_400_GBPS = 21, IB_RATE_600_GBPS = 22,
};

/* drivers/infiniband/core/verbs.c's ib_rate_to_mbps(), by its enum */
static inline int ib_rate_to_mbps(enum ib_rate rate)
{
	switch (rate) {
	case IB_RATE_2_5_GBPS: return 2500;
	case IB_RATE_5_GBPS:   return 5000;
	case IB_RATE_10_GBPS:  return 10000;
	case IB_RATE_20_GBPS:  return 20000;
	case IB_RATE_30_GBPS:  return 30000;
	case IB_RATE_40_GBPS:  return 40000;
	case IB_RATE_60_GBPS:  return 60000;
	case IB_RATE_80_GBPS:  return 80000;
	case IB_RATE_120_GBPS: return 120000;
	case IB_RATE_14_GBPS:  return 14062;
	case IB_RATE_56_GBPS:  return 56250;
	case IB_RATE_112_GBPS: return 112500;
	case IB_RATE_168_GBPS: return 168750;
	case IB_RATE_25_GBPS:  return 25781;
	case IB_RATE_100_GBPS: return 103125;
	case IB_RATE_200_GBPS: return 206250;
	case IB_RATE_300_GBPS: return 309375;
	case IB_RATE_28_GBPS:  return 28125;
	case IB_RATE_50_GBPS:  return 53125;
	case IB_RATE_400_GBPS: return 425000;
	case IB_RATE_600_GBPS: return 637500;
	default:	       return -1;
	}
}

static inline u16 ib_lid_cpu16(u32 lid)
{
	return (u16)lid;
}

#define IB_MGMT_BASE_VERSION			1
#define IB_MGMT_SA_HDR				56
#define IB_MGMT_SA_DATA				200
#define IB_MGMT_METHOD_GET			0x01
#define IB_MGMT_METHOD_SET			0x02
#define IB_MGMT_METHOD_GET_RESP			0x81
#define IB_MGMT_METHOD_RESP			0x80
#define IB_SA_METHOD_GET_TABLE			0x12
#define IB_MGMT_MAD_STATUS_SUCCESS			0x0000
#define IB_MGMT_MAD_STATUS_BUSY				0x0001
#define IB_MGMT_MAD_STATUS_REDIRECT_REQD		0x0002
#define IB_MGMT_MAD_STATUS_BAD_VERSION			0x0004
#define IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD		0x0008
#define IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB	0x000c
#define IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE		0x001c
#define IB_SA_ATTR_CLASS_PORTINFO		0x01
#define IB_SA_ATTR_PATH_REC			0x35

#define IB_SA_COMP_MASK(n)	((__be64)cpu_to_be64(1ull << (n)))
#define IB_SA_PATH_REC_SERVICE_ID		(IB_SA_COMP_MASK(0) | IB_SA_COMP_MASK(1))
#define IB_SA_PATH_REC_DGID			IB_SA_COMP_MASK(2)
#define IB_SA_PATH_REC_SGID			IB_SA_COMP_MASK(3)
#define IB_SA_PATH_REC_DLID			IB_SA_COMP_MASK(4)
#define IB_SA_PATH_REC_SLID			IB_SA_COMP_MASK(5)
#define IB_SA_PATH_REC_RAW_TRAFFIC		IB_SA_COMP_MASK(6)
#define IB_SA_PATH_REC_FLOW_LABEL		IB_SA_COMP_MASK(8)
#define IB_SA_PATH_REC_HOP_LIMIT		IB_SA_COMP_MASK(9)
#define IB_SA_PATH_REC_TRAFFIC_CLASS		IB_SA_COMP_MASK(10)
#define IB_SA_PATH_REC_REVERSIBLE		IB_SA_COMP_MASK(11)
#define IB_SA_PATH_REC_NUMB_PATH		IB_SA_COMP_MASK(12)
#define IB_SA_PATH_REC_PKEY			IB_SA_COMP_MASK(13)
#define IB_SA_PATH_REC_QOS_CLASS		IB_SA_COMP_MASK(14)
#define IB_SA_PATH_REC_SL			IB_SA_COMP_MASK(15)
#define IB_SA_PATH_REC_MTU_SELECTOR		IB_SA_COMP_MASK(16)
#define IB_SA_PATH_REC_MTU			IB_SA_COMP_MASK(17)
#define IB_SA_PATH_REC_RATE_SELECTOR		IB_SA_COMP_MASK(18)
#define IB_SA_PATH_REC_RATE			IB_SA_COMP_MASK(19)
#define IB_SA_PATH_REC_PACKET_LIFE_TIME_SELECTOR IB_SA_COMP_MASK(20)
#define IB_SA_PATH_REC_PACKET_LIFE_TIME		IB_SA_COMP_MASK(21)
#define IB_SA_PATH_REC_PREFERENCE		IB_SA_COMP_MASK(22)

struct ib_mad_hdr {
	u8	base_version;
	u8	mgmt_class;
	u8	class_version;
	u8	method;
	__be16	status;
	__be16	class_specific;
	__be64	tid;
	__be16	attr_id;
	__be16	resv;
	__be32	attr_mod;
} __packed;

struct ib_rmpp_hdr {
	u8	rmpp_version;
	u8	rmpp_type;
	u8	rmpp_rtime_flags;
	u8	rmpp_status;
	__be32	seg_num;
	__be32	paylen_newwin;
} __packed;

struct ib_sa_hdr {
	__be64			sm_key;
	__be16			attr_offset;
	__be16			reserved;
	ib_sa_comp_mask		comp_mask;
} __packed;

struct ib_sa_mad {
	struct ib_mad_hdr	mad_hdr;
	struct ib_rmpp_hdr	rmpp_hdr;
	struct ib_sa_hdr	sa_hdr;
	u8			data[IB_MGMT_SA_DATA];
} __packed;

struct ib_mad {
	u8	bytes[256];
};

struct ib_class_port_info {
	u8			base_version;
	u8			class_version;
	__be16			capability_mask;
	__be32			cap_mask2_resp_time;
	u8			redirect_gid[16];
	__be32			redirect_tcslfl;
	__be16			redirect_lid;
	__be16			redirect_pkey;
	__be32			redirect_qp;
	__be32			redirect_qkey;
	u8			trap_gid[16];
	__be32			trap_tcslfl;
	__be16			trap_lid;
	__be16			trap_pkey;
	__be32			trap_hlqp;
	__be32			trap_qkey;
};

static inline void ib_set_cpi_resp_time(struct ib_class_port_info *cpi, u8 rtime)
{
	cpi->cap_mask2_resp_time = (cpi->cap_mask2_resp_time & cpu_to_be32(~0x1fU)) |
				   cpu_to_be32(rtime & 0x1f);
}

struct ib_mad_recv_buf {
	struct list_head	list;
	struct ib_grh		*grh;
	struct ib_mad		*mad;
};

struct ib_mad_recv_wc {
	struct ib_wc		*wc;
	struct ib_mad_recv_buf	recv_buf;
	struct list_head	rmpp_list;
	int			mad_len;
	size_t			mad_seg_size;
};

struct ib_mad_send_buf {
	struct ib_mad_send_buf	*next;
	void			*mad;
	struct ib_ah		*ah;
	void			*context[2];
	int			timeout_ms;
};

struct ib_mad_send_wc {
	struct ib_mad_send_buf	*send_buf;
	int			status;
};

struct ib_mad_agent {
	struct ib_qp	*qp;
	void		*context;
};

enum { IB_SA_GT, IB_SA_LT, IB_SA_EQ, IB_SA_BEST };	/* selectors */

enum sa_path_rec_type { SA_PATH_REC_TYPE_IB, SA_PATH_REC_TYPE_ROCE_V1,
			SA_PATH_REC_TYPE_ROCE_V2, SA_PATH_REC_TYPE_OPA };

struct sa_path_rec_ib {
	__be16	dlid;
	__be16	slid;
	u8	raw_traffic;
};

struct sa_path_rec {
	union ib_gid dgid;
	union ib_gid sgid;
	__be64	service_id;
	__be32	flow_label;
	u8	hop_limit;
	u8	traffic_class;
	u8	reversible;
	u8	numb_path;
	__be16	pkey;
	__be16	qos_class;
	u8	sl;
	u8	mtu_selector;
	u8	mtu;
	u8	rate_selector;
	u8	rate;
	u8	packet_life_time_selector;
	u8	packet_life_time;
	u8	preference;
	struct sa_path_rec_ib ib;
	enum sa_path_rec_type rec_type;
	u32	flags;
};

/* IB records only (rsa_wire_to_path() makes nothing else) */
static inline void sa_path_set_slid(struct sa_path_rec *rec, u32 slid)
{
	if (rec->rec_type == SA_PATH_REC_TYPE_IB)
		rec->ib.slid = cpu_to_be16(slid);
}

static inline void sa_path_set_dlid(struct sa_path_rec *rec, u32 dlid)
{
	if (rec->rec_type == SA_PATH_REC_TYPE_IB)
		rec->ib.dlid = cpu_to_be16(dlid);
}

static inline __be32 sa_path_get_slid(struct sa_path_rec *rec)
{
	return rec->rec_type == SA_PATH_REC_TYPE_IB ? htonl(ntohs(rec->ib.slid)) : 0;
}

static inline __be32 sa_path_get_dlid(struct sa_path_rec *rec)
{
	return rec->rec_type == SA_PATH_REC_TYPE_IB ? htonl(ntohs(rec->ib.dlid)) : 0;
}

/* Not printed; sizeof() keeps the format checked and the arguments used. */
#define dev_warn_ratelimited(dev, fmt, ...)				\
	((void)(dev), (void)sizeof(printf(fmt, __VA_ARGS__)))

#endif
