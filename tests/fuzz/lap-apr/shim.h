/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough of the kernel for ib_cm's LAP and APR handlers
 * (cm_lap_handler(), cm_apr_handler(), cm_lap_probe_handler() of
 * drivers/infiniband/core/cm.c as the series patches it, cut out by
 * tests/fuzz/lap-apr/extract) to compile on the host for the fuzz target
 * fuzz_lap_apr.c, on top of tests/fuzz/lib/kshim.h. The CM messages'
 * layout is the kernel's own (include/rdma/iba.h, ibta_vol1_c12.h, taken
 * from the patched tree); the CM's states, events and APR statuses are
 * ib_cm.h's (ib_cm_defs.h). The CM's own structures (struct
 * cm_id_private, cm_work, cm_port, cm_av) have only the members the
 * handlers use, and what the CM does around them (look an ID up, send a
 * MAD, build an address vector, queue an event) is the harness's
 * (fuzz_lap_apr.c), which sees every such call.
 */
#ifndef IBR_LAP_APR_SHIM_H
#define IBR_LAP_APR_SHIM_H

#include "../lib/kshim.h"

/* linux/bitfield.h, linux/bits.h, asm/unaligned.h, for iba.h */
#define BITS_PER_LONG		64
#define GENMASK(h, l)		(((~0UL) << (l)) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define GENMASK_ULL(h, l)	(((~0ULL) << (l)) & (~0ULL >> (63 - (h))))
#define FIELD_GET(m, v)		((__typeof__(m))(((v) & (m)) >> __builtin_ctzll(m)))
#define FIELD_PREP(m, v)	((((__typeof__(m))(v)) << __builtin_ctzll(m)) & (m))
#define BUILD_BUG_ON_ZERO(e)	((int)(sizeof(struct { int : (-!!(e)); })))
#define WARN_ON(c)		(c)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define get_unaligned(p)						\
	({ __typeof__(*(p) + 0) _v; memcpy(&_v, (p), sizeof(_v)); _v; })
#define put_unaligned(v, p)						\
	do { __typeof__(*(p)) _v = (v); memcpy((p), &_v, sizeof(_v)); } while (0)
#define swap(a, b)							\
	do { __typeof__(a) _t = (a); (a) = (b); (b) = _t; } while (0)

#define IB_MGMT_CLASS_CM		0x07
#define IB_CM_CLASS_VERSION		2
#define IB_MGMT_METHOD_SEND		0x03
#define IB_CM_APR_INFO_LENGTH		72	/* ib_cm.h */
#define IB_LID_PERMISSIVE		cpu_to_be16(0xFFFF)

enum ib_wc_status { IB_WC_SUCCESS, IB_WC_GENERAL_ERR = 21 };

/* opa_addr.h: never an OPA path here (cm_path_set_rec_type() says IB) */
static inline u32 opa_get_lid_from_gid(const union ib_gid *gid)
{
	(void)gid;
	abort();
}

#include "iba.h"
#include "ibta_vol1_c12.h"
#include "ib_cm_defs.h"

struct ib_cm_event {
	enum ib_cm_event_type	event;
	union {
		struct ib_cm_lap_event_param	lap_rcvd;
		struct ib_cm_apr_event_param	apr_rcvd;
		enum ib_wc_status		send_status;
	} param;
	void			*private_data;
};

struct ib_cm_id {
	enum ib_cm_state	state;
	enum ib_cm_lap_state	lap_state;
	__be32			local_id;
	__be32			remote_id;
};

/* cm.c's counters */
enum { CM_REQ_COUNTER, CM_LAP_COUNTER, CM_APR_COUNTER, CM_ATTR_COUNT };
enum { CM_RECV, CM_RECV_DUPLICATES, CM_RECV_REJECTED, CM_COUNTER_GROUPS };
enum cm_msg_response { CM_MSG_RESPONSE_REQ, CM_MSG_RESPONSE_REP, CM_MSG_RESPONSE_OTHER };

typedef struct { long counter; } atomic_long_t;
typedef struct { int refs; } refcount_t;

static inline void atomic_long_inc(atomic_long_t *a)
{
	a->counter++;
}

struct cm_device {
	struct ib_device	*ib_device;
};

struct cm_port {
	struct cm_device	*cm_dev;
	u32			port_num;
	atomic_long_t		counters[CM_COUNTER_GROUPS][CM_ATTR_COUNT];
};

/* rdma/ib_verbs.h: what the handlers read of an address vector */
enum { IB_AH_GRH = 1 };
struct ib_global_route {
	union ib_gid	dgid;
};
struct rdma_ah_attr {
	u32			dlid;
	u8			ah_flags;
	struct ib_global_route	grh;
};
static inline u32 rdma_ah_get_dlid(const struct rdma_ah_attr *attr)
{
	return attr->dlid;
}
static inline u8 rdma_ah_get_ah_flags(const struct rdma_ah_attr *attr)
{
	return attr->ah_flags;
}
static inline const struct ib_global_route *
rdma_ah_read_grh(const struct rdma_ah_attr *attr)
{
	return &attr->grh;
}
#define lockdep_assert_held(l)	((void)(l))

/* an address vector: which one it is, and whether it holds an AH */
struct cm_av {
	int			tag;
	struct cm_port		*port;
	struct rdma_ah_attr	ah_attr;
};

struct cm_mra_msg;

struct cm_id_private {
	struct ib_cm_id		id;
	spinlock_t		lock;
	refcount_t		refcount;
	struct ib_mad_send_buf	*msg;
	struct cm_av		av;
	struct cm_av		alt_av;
	void			*private_data;
	__be64			tid;
	__be32			local_qpn;
	int			timeout_ms;
	enum ib_mtu		path_mtu;
	__be16			pkey;
	u8			private_data_len;
	u8			service_timeout;
	u8			lap_enabled:1;
	u8			lap_loading:1;
	struct cm_lap_msg	*lap_msg;
	u8			lap_answered:1;
	u8			lap_unanswered:1;
	u8			mig_followed:1;
	struct cm_av		lap_av;
};

struct cm_work {
	struct cm_port		*port;
	struct ib_mad_recv_wc	*mad_recv_wc;
	struct ib_cm_event	cm_event;
	struct sa_path_rec	path[2];
};

#define spin_lock_irq(l)	do { (l)->held++; fuzz_locks_held++; } while (0)
#define spin_unlock_irq(l)	do { (l)->held--; fuzz_locks_held--; } while (0)
#define rcu_read_lock()		do { } while (0)
#define rcu_read_unlock()	do { } while (0)
#define rdma_protocol_roce(dev, port)	((void)(dev), (void)(port), 0)
#define kfree(p)		free(p)

#endif
