// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: ib_remote_sa's responder, rsa_resp_recv_handler() of
 * the 6.1 series' remote_sa.c with every check it makes before it asks
 * its SA (the form, rate, request checks, the duplicate and BUSY checks
 * of rsa_start_sa_query()), the answer it sends (rsa_answer()) and its
 * completion (rsa_resp_send_handler()), cut out by
 * tests/fuzz/remote-sa/extract and compiled through its shim, fed a
 * sequence of requests on one port, as ib_mad hands them to the agent.
 * The oracle is docs/remote-sa-protocol.md sections 3, 4, 5, 5.1, 5.3,
 * 5.4 and 13 ("Limits"), written out here on its own.
 *
 * The port: device GIDs fe80::2:... (subnet B) 0002:c903:0:0b01 and
 * ...0b11 on port 1, ...0b02 on port 2; P_Keys 0xffff, 0x8001, 0x7fff,
 * 0x0002; an allow-list of ...0c01.
 *
 * Input: byte 0 the configuration (bits 0-1 serve: own, list, subnet,
 * own; bit 2 paired; bit 3 rate limits on: rate_limit 100, rate_burst 3,
 * new_rate_limit 2, else none; bits 4-5 max_outstanding 1, 2, 3 or 64;
 * bit 6 the SA queries' budget on: sa_query_rate 3, 4 at once),
 * then requests, each a control byte (bit 0 a GRH; bit 1 the previous
 * request again, nothing follows; bits 2-3 the P_Key index; bits 4-5 the
 * time since the last request: 0, 12 ms, 1.5 s, 61 s; bit 6 a short MAD,
 * 255 bytes; bit 7 the local SA answers the pending queries first), the
 * GRH SGID (16 bytes) and the 256-byte MAD (missing bytes are 0). An
 * SM_Key of 1 stands for the requester's key (the harness writes the key
 * the oracle computes there), so that keyed Gets get past their key.
 *
 * Properties, besides no memory error, leak or undefined behaviour:
 * - a request failing a check of the first stage (length, GRH, the form
 *   of a Get of class version 1 with AttributeOffset as in section 4, the
 *   mask, the rate and the unknown senders' budget, which the target
 *   models) is dropped: nothing allocated, no address handle, no answer,
 *   no SA query, the reason's counter counted once;
 * - any other request is answered once, with a status of one of its
 *   faults (class version 0x0004, method 0x0008, attribute 0x000c, DGID
 *   not the requester or on this subnet 0x0200, target not served 0x0500,
 *   P_Key 0x0700, a keyed Get (NodePorts, PairedPathRecord) without the
 *   requester's key BUSY 0x0001 (rej_no_key), BUSY 0x0001; without
 *   another, BUSY 0x0001 and
 *   rej_sa_budget past the SA queries' budget, which the target models
 *   with the established requesters' reserve, which a keyed Get with its
 *   key may use) and that fault's counter,
 *   or as a duplicate of a pending request dropped (counted), or, without a
 *   fault, ClassPortInfo answered or the local SA asked (a PathRecord Get
 *   with the request's GIDs and allowed components, NumbPath dropped, no
 *   LIDs; NodePorts: a NodeRecord GetTable by the PortGID's GUID);
 * - an answer is the request's header with GetResp for a Get or Set, else
 *   the method with the R bit, status, ComponentMask copied, no
 *   AttributeModifier, the requester's key as SM_Key in an answer to a
 *   keyed Get, else SM_Key 0, no record with a status, sent on the request's
 *   address handle, QP and P_Key index; every allocation and address
 *   handle is freed once the answer is sent or the SA query ends;
 * - every request is counted in requests, every answer in replies, and
 *   no other counter moves.
 */
#include "shim.h"
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
#pragma clang diagnostic ignored "-Wsign-compare"
#include "remote_sa_priv.h"
#pragma clang diagnostic pop
#include "fuzz.h"

unsigned long jiffies;
int fuzz_locks_held;
u32 fuzz_nports = 2;

/* the module parameters the cut code reads (remote_sa.c's) */
static unsigned int rsa_sa_timeout_ms = 1000;
static unsigned int rsa_max_outstanding = 64;
static unsigned int rsa_rate_limit;
static unsigned int rsa_new_rate_limit;
static unsigned int rsa_rate_burst = 20;
static unsigned int rsa_sa_query_rate;
static bool rsa_paired = true;

/* the SA's answer handlers: the SA stub never fails, so never called */
static void rsa_sa_done(int status, u16 mad_status, const u8 *data,
			unsigned int n, void *context);
static void rsa_np_done(int status, u16 mad_status, const u8 *data,
			unsigned int n, void *context);

/* What the kernel did for the current request. */
static struct {
	int allocs, frees, ahs, ah_frees;
	int sends, posted, send_frees;
	struct ib_mad_send_buf *msg;
	struct ib_ah *ah;		/* the request's */
	int sa_queries;
	u8 sa_method;
	u16 sa_attr;
	ib_sa_comp_mask sa_mask;
	u8 sa_rec[128];
	size_t sa_len;
	void *sa_ctx;
} k;

void *fuzz_kzalloc(size_t n)
{
	k.allocs++;
	return calloc(1, n);
}

void fuzz_kfree(const void *p)
{
	if (p)
		k.frees++;
	free((void *)p);
}

struct ib_ah *fuzz_create_ah(const struct ib_wc *wc, const struct ib_grh *grh)
{
	(void)wc;
	FUZZ_CHECK(grh, "an address handle without the GRH");
	k.ahs++;
	k.ah = malloc(sizeof(*k.ah));
	return k.ah;
}

void fuzz_destroy_ah(struct ib_ah *ah)
{
	k.ah_frees++;
	free(ah);
}

static u32 want_qpn;
static u16 want_pkey_index;

struct ib_mad_send_buf *fuzz_create_send_mad(struct ib_mad_agent *agent, u32 qpn,
					     u16 pkey_index, int hdr_len, int data_len)
{
	struct ib_mad_send_buf *m = calloc(1, sizeof(*m));

	(void)agent;
	FUZZ_CHECK(hdr_len + data_len == 256, "an answer of another size");
	FUZZ_CHECK(qpn == want_qpn && pkey_index == want_pkey_index,
		   "an answer to another QP or P_Key index");
	m->mad = calloc(1, 256);
	k.sends++;
	return m;
}

int fuzz_post_send_mad(struct ib_mad_send_buf *m)
{
	FUZZ_CHECK(!k.msg, "two answers to one request");
	k.msg = m;
	k.posted++;
	return 0;
}

void fuzz_free_send_mad(struct ib_mad_send_buf *m)
{
	k.send_frees++;
	free(m->mad);
	free(m);
}

static int recv_freed;

void fuzz_free_recv_mad(struct ib_mad_recv_wc *wc)
{
	(void)wc;
	recv_freed++;
}

#define PREFIX_B	0xfe80000000000002ULL
static union ib_gid port_gids[3][2];	/* [port][index] */
static const u16 pkeys[4] = { 0xffff, 0x8001, 0x7fff, 0x0002 };
static union ib_gid allow_gid;

static void make_gid(union ib_gid *g, u64 prefix, u64 guid)
{
	g->global.subnet_prefix = cpu_to_be64(prefix);
	g->global.interface_id = cpu_to_be64(guid);
}

int fuzz_query_gid(u32 port, int index, union ib_gid *gid)
{
	if (port < 1 || port > 2 || index < 0 || index > 1)
		return -EINVAL;
	*gid = port_gids[port][index];
	return 0;
}

int fuzz_find_gid(u32 port, const union ib_gid *gid)
{
	int i;

	for (i = 0; i < 2; i++)
		if (port >= 1 && port <= 2 && port_gids[port][i].global.interface_id &&
		    !memcmp(port_gids[port][i].raw, gid->raw, 16))
			return 1;
	return 0;
}

int fuzz_cached_pkey(u32 port, u16 index, u16 *pkey)
{
	FUZZ_CHECK(port == 1, "a P_Key of another port");
	if (index >= 4)
		return -EINVAL;
	*pkey = pkeys[index];
	return 0;
}

int rsa_sa_query(struct rsa_port *port, u8 method, u16 attr_id,
		 ib_sa_comp_mask comp_mask, const void *rec, size_t rec_len,
		 unsigned long timeout_ms, rsa_sa_callback callback,
		 void *context, struct ib_mad_send_buf **msgp)
{
	static struct ib_mad_send_buf sa_msg;

	(void)port;
	(void)timeout_ms;
	(void)callback;
	FUZZ_CHECK(rec_len <= sizeof(k.sa_rec), "an SA query record too long");
	k.sa_queries++;
	k.sa_method = method;
	k.sa_attr = attr_id;
	k.sa_mask = comp_mask;
	memset(k.sa_rec, 0, sizeof(k.sa_rec));
	memcpy(k.sa_rec, rec, rec_len);
	k.sa_len = rec_len;
	k.sa_ctx = context;
	*msgp = &sa_msg;
	return 0;
}

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
#pragma clang diagnostic ignored "-Wsign-compare"
#include "rsa_request.c"
#pragma clang diagnostic pop

static void rsa_sa_done(int status, u16 mad_status, const u8 *data,
			unsigned int n, void *context)
{
	(void)status;
	(void)mad_status;
	(void)data;
	(void)n;
	(void)context;
	FUZZ_CHECK(0, "rsa_sa_done() without an SA answer");
}

static void rsa_np_done(int status, u16 mad_status, const u8 *data,
			unsigned int n, void *context)
{
	(void)status;
	(void)mad_status;
	(void)data;
	(void)n;
	(void)context;
	FUZZ_CHECK(0, "rsa_np_done() without an SA answer");
}

/* ---- the oracle: docs/remote-sa-protocol.md ----------------------------- */

static unsigned int get16(const u8 *p) { return p[0] << 8 | p[1]; }
static u32 get32(const u8 *p) { return (u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
static u64 get64(const u8 *p) { return (u64)get32(p) << 32 | get32(p + 4); }

static bool zero(const u8 *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* section 5's components: bit -> allowed in a request (required: 2, 3) */
static bool comp_allowed(unsigned int bit)
{
	return bit <= 3 || (bit >= 8 && bit <= 21);
}

/* the rate model of section 13, in thousandths of a request */
#define RATE		100
#define BURST		3
#define NEW_RATE	2
#define MAX_GIDS	64

static struct {
	bool on;
	int n;
	u8 gid[MAX_GIDS][16];
	u64 tokens[MAX_GIDS];
	unsigned long stamp[MAX_GIDS];
	unsigned long first[MAX_GIDS];
	bool est[MAX_GIDS];
	u64 new_tokens;
	unsigned long new_stamp;
	/* the current request's requester came back a second or more later */
	bool cur_est;
} rate;

/* the SA queries' budget of section 13: SA_RATE a second, at once max(SA_RATE, 4) */
#define SA_RATE		3
static struct {
	bool on;
	u64 tokens;
	unsigned long stamp;
} sab;

static u64 refill(u64 t, unsigned long *stamp, unsigned int per_s, u64 cap)
{
	t += (u64)(jiffies - *stamp) * (1000 / HZ) * per_s;
	*stamp = jiffies;
	return t < cap ? t : cap;
}

/* 0: within the rate; else the counter of the drop */
static int rate_step(const u8 *gid)
{
	int i;

	/* without the limit every requester counts as established */
	rate.cur_est = !rate.on;
	if (!rate.on)
		return 0;
	for (i = 0; i < rate.n; i++)
		if (!memcmp(rate.gid[i], gid, 16))
			break;
	if (i < rate.n) {
		if (jiffies - rate.first[i] >= HZ)
			rate.est[i] = true;
		rate.cur_est = rate.est[i];
		rate.tokens[i] = refill(rate.tokens[i], &rate.stamp[i], RATE, BURST * 1000);
		if (rate.tokens[i] < 1000)
			return RSA_CNT_REJ_RATE_LIMITED;
		rate.tokens[i] -= 1000;
		return 0;
	}
	rate.new_tokens = refill(rate.new_tokens, &rate.new_stamp, NEW_RATE, NEW_RATE * 1000);
	if (rate.new_tokens < 1000)
		return RSA_CNT_REJ_NEW_RATE_LIMITED;
	rate.new_tokens -= 1000;
	/* the table (256 slots) never fills here: every newcomer gets one */
	FUZZ_CHECK(rate.n < MAX_GIDS, "harness: too many requesters");
	memcpy(rate.gid[rate.n], gid, 16);
	rate.tokens[rate.n] = BURST * 1000 - 1000;
	rate.stamp[rate.n] = jiffies;
	rate.first[rate.n] = jiffies;
	rate.est[rate.n] = false;
	rate.n++;
	return 0;
}

/* requests sent to the SA and not answered yet */
#define MAX_PENDING	512
static struct { u8 gid[16]; u64 tid; } pend[MAX_PENDING];
static int npend;

/* section 13, "Requester keys": the Gets answered only with the key */
static bool keyed(unsigned int attr)
{
	return attr == RSA_ATTR_NODE_PORTS || attr == RSA_ATTR_PAIRED_PATH_REC;
}

/* the key of requester @gid: SipHash-2-4 of its two words, never 0 */
static siphash_key_t key_secret;

static u64 key_of(const u8 *gid)
{
	u64 h = siphash_2u64(get64(gid), get64(gid + 8), &key_secret);

	return h ? h : 1;
}

/* section 5.1 c-d: the form of a Get of class version 1; -1 if well formed */
static int form_fault(const u8 *m)
{
	unsigned int attr = get16(m + 16), off = get16(m + 44), i;
	u64 mask = get64(m + 48);

	if (m[2] != 1 || m[3] != IB_MGMT_METHOD_GET)
		return -1;
	if (get32(m + 20) || !zero(m + 24, 12) || (get64(m + 36) && !keyed(attr)) ||
	    get16(m + 46))
		return RSA_CNT_REJ_MALFORMED;
	switch (attr) {
	case RSA_ATTR_CLASS_PORT_INFO:
		return off ? RSA_CNT_REJ_MALFORMED : -1;
	case RSA_ATTR_PATH_REC:
	case RSA_ATTR_PAIRED_PATH_REC:
		if (off != 8)
			return RSA_CNT_REJ_MALFORMED;
		if (!(mask & 4) || !(mask & 8))
			return RSA_CNT_REJ_BAD_MASK;
		for (i = 0; i < 64; i++)
			if ((mask >> i & 1) && !comp_allowed(i))
				return RSA_CNT_REJ_BAD_MASK;
		return -1;
	case RSA_ATTR_NODE_PORTS:
		if (off)
			return RSA_CNT_REJ_MALFORMED;
		return mask ? RSA_CNT_REJ_BAD_MASK : -1;
	}
	return -1;
}

/* section 13: the targets a responder answers for */
static int serve_mode;

static bool served(const u8 *gid)
{
	union ib_gid g;

	memcpy(g.raw, gid, 16);
	if (be64_to_cpu(g.global.subnet_prefix) != PREFIX_B)
		return false;
	return serve_mode == 2 || (serve_mode == 1 && !memcmp(gid, allow_gid.raw, 16)) ||
	       fuzz_find_gid(1, &g) || fuzz_find_gid(2, &g);
}

/* the outcomes a request may have in the second stage */
enum { O_ANSWER, O_DUP, O_SA };
#define MAX_OUT 12
static struct { int kind; unsigned int status; int counter; } outs[MAX_OUT];
static int nouts;

static void may(int kind, unsigned int status, int counter)
{
	outs[nouts].kind = kind;
	outs[nouts].status = status;
	outs[nouts].counter = counter;
	nouts++;
}

static bool is_pending(const u8 *gid, u64 tid)
{
	int i;

	for (i = 0; i < npend; i++)
		if (!memcmp(pend[i].gid, gid, 16) && pend[i].tid == tid)
			return true;
	return false;
}

static void second_stage(const u8 *m, const u8 *sgid, u16 arrival_pkey)
{
	unsigned int attr = get16(m + 16);
	const u8 *d = m + IB_MGMT_SA_HDR;
	u64 mask = get64(m + 48);
	bool known = attr == RSA_ATTR_CLASS_PORT_INFO || attr == RSA_ATTR_PATH_REC ||
		     attr == RSA_ATTR_NODE_PORTS ||
		     (attr == RSA_ATTR_PAIRED_PATH_REC && rsa_paired);
	bool fault = false;

	nouts = 0;
	if (m[2] != 1)
		may(O_ANSWER, 0x0004, RSA_CNT_REJ_BAD_VERSION), fault = true;
	if (m[3] != IB_MGMT_METHOD_GET)
		may(O_ANSWER, 0x0008, RSA_CNT_REJ_BAD_METHOD), fault = true;
	if (!known)
		may(O_ANSWER, 0x000c, RSA_CNT_REJ_BAD_ATTR), fault = true;
	if (attr == RSA_ATTR_CLASS_PORT_INFO || !known) {
		if (!fault)
			may(O_ANSWER, 0, -1);
		return;
	}
	if (attr == RSA_ATTR_NODE_PORTS) {
		if (get64(sgid) == PREFIX_B)
			may(O_ANSWER, 0x0200, RSA_CNT_REJ_NOT_REMOTE), fault = true;
		if (!served(d))
			may(O_ANSWER, 0x0500, RSA_CNT_REJ_NOT_SERVED), fault = true;
	} else {
		if (memcmp(d + 8, sgid, 16))
			may(O_ANSWER, 0x0200, RSA_CNT_REJ_NOT_REQUESTER), fault = true;
		if (get64(d + 8) == PREFIX_B)
			may(O_ANSWER, 0x0200, RSA_CNT_REJ_NOT_REMOTE), fault = true;
		if (!served(d + 24))
			may(O_ANSWER, 0x0500, RSA_CNT_REJ_NOT_SERVED), fault = true;
		if ((mask & (1ULL << 13)) && ((get16(d + 50) ^ arrival_pkey) & 0x7fff))
			may(O_ANSWER, 0x0700, RSA_CNT_REJ_PKEY), fault = true;
	}
	if (fault)
		return;
	/* a keyed Get without its requester's key: BUSY with the key, no SA query */
	if (keyed(attr) && get64(m + 36) != key_of(sgid)) {
		may(O_ANSWER, 0x0001, RSA_CNT_REJ_NO_KEY);
		return;
	}
	if (is_pending(sgid, get64(m + 8)))
		may(O_DUP, 0, RSA_CNT_DUPLICATES), fault = true;
	if (npend >= (int)rsa_max_outstanding)
		may(O_ANSWER, 0x0001, RSA_CNT_REJ_BUSY), fault = true;
	if (fault)
		return;
	/*
	 * Section 13's budget, the last check: charged what the request may
	 * take (NodePorts, PairedPathRecord: 2); a requester not established
	 * may only take what is above half of it.
	 */
	if (sab.on) {
		u64 cost = (attr == RSA_ATTR_PATH_REC ? 1 : 2) * 1000;
		u64 burst = (SA_RATE > 4 ? SA_RATE : 4) * 1000;

		sab.tokens = refill(sab.tokens, &sab.stamp, SA_RATE, burst);
		if (sab.tokens < cost + (rate.cur_est || keyed(attr) ? 0 : burst / 2)) {
			may(O_ANSWER, 0x0001, RSA_CNT_REJ_SA_BUDGET);
			return;
		}
		sab.tokens -= cost;
	}
	may(O_SA, 0, RSA_CNT_SA_QUERIES);
}

/* the local SA's query for a request that passed (section 5.1, 5.3) */
static void check_sa_query(const u8 *m)
{
	const u8 *d = m + IB_MGMT_SA_HDR, *q = k.sa_rec;
	u64 mask = get64(m + 48), want = 0;
	unsigned int i;

	if (get16(m + 16) == RSA_ATTR_NODE_PORTS) {
		FUZZ_CHECK(k.sa_method == IB_SA_METHOD_GET_TABLE && k.sa_attr == 0x0011 &&
			   be64_to_cpu(k.sa_mask) == 1ULL << 8,
			   "NodePorts: not a NodeRecord GetTable by PortGUID");
		FUZZ_CHECK(k.sa_len == 108 && !memcmp(q + 24, d + 8, 8) &&
			   zero(q, 24) && zero(q + 32, 108 - 32),
			   "NodePorts: the NodeRecord query is not the PortGID's GUID");
		return;
	}
	for (i = 0; i < 64; i++)
		if ((mask >> i & 1) && comp_allowed(i) && i != 12)
			want |= 1ULL << i;
	FUZZ_CHECK(k.sa_method == IB_MGMT_METHOD_GET && k.sa_attr == IB_SA_ATTR_PATH_REC &&
		   be64_to_cpu(k.sa_mask) == want,
		   "the SA query is not a PathRecord Get of the request's allowed components");
	FUZZ_CHECK(k.sa_len == 64, "the SA query's record is not a PathRecord");
	FUZZ_CHECK(!memcmp(q + 8, d + 8, 32), "the SA query's GIDs are not the request's");
	FUZZ_CHECK(!get16(q + 40) && !get16(q + 42), "the SA query has LIDs");
	if (want & 3)
		FUZZ_CHECK(!memcmp(q, d, 8), "ServiceID");
	if (want & 1ULL << 8)
		FUZZ_CHECK((get32(q + 44) & 0x0fffff00) == (get32(d + 44) & 0x0fffff00), "FlowLabel");
	if (want & 1ULL << 9)
		FUZZ_CHECK(q[47] == d[47], "HopLimit");
	if (want & 1ULL << 10)
		FUZZ_CHECK(q[48] == d[48], "TClass");
	if (want & 1ULL << 11)
		FUZZ_CHECK((q[49] & 0x80) == (d[49] & 0x80), "Reversible");
	if (want & 1ULL << 13)
		FUZZ_CHECK(get16(q + 50) == get16(d + 50), "P_Key");
	if (want & 1ULL << 14)
		FUZZ_CHECK(get16(q + 52) >> 4 == get16(d + 52) >> 4, "QoSClass");
	if (want & 1ULL << 15)
		FUZZ_CHECK((q[53] & 0xf) == (d[53] & 0xf), "SL");
	if (want & 1ULL << 16)
		FUZZ_CHECK(q[54] >> 6 == d[54] >> 6, "MTUSelector");
	if (want & 1ULL << 17)
		FUZZ_CHECK((q[54] & 0x3f) == (d[54] & 0x3f), "MTU");
	if (want & 1ULL << 18)
		FUZZ_CHECK(q[55] >> 6 == d[55] >> 6, "RateSelector");
	if (want & 1ULL << 19)
		FUZZ_CHECK((q[55] & 0x3f) == (d[55] & 0x3f), "Rate");
	if (want & 1ULL << 20)
		FUZZ_CHECK(q[56] >> 6 == d[56] >> 6, "PacketLifeTimeSelector");
	if (want & 1ULL << 21)
		FUZZ_CHECK((q[56] & 0x3f) == (d[56] & 0x3f), "PacketLifeTime");
}

/* sections 3, 4, 9, 13: the answer to request @m from @sgid with @status */
static void check_answer(const u8 *m, const u8 *sgid, unsigned int status)
{
	const u8 *a = k.msg->mad;
	u8 method = m[3] == IB_MGMT_METHOD_SET ? IB_MGMT_METHOD_GET_RESP : m[3] | 0x80;

	FUZZ_CHECK(k.msg->ah == k.ah, "an answer not on the request's address handle");
	FUZZ_CHECK(a[0] == m[0] && a[1] == m[1] && a[2] == m[2], "an answer of another class");
	FUZZ_CHECK(a[3] == method, "an answer of the wrong method (IBA 13.4.5)");
	FUZZ_CHECK(get16(a + 4) == status, "an answer of another status");
	FUZZ_CHECK(!get16(a + 6) && !get32(a + 20), "ClassSpecific or AttributeModifier set");
	FUZZ_CHECK(!memcmp(a + 8, m + 8, 8) && get16(a + 16) == get16(m + 16),
		   "an answer of another TID or attribute");
	FUZZ_CHECK(!memcmp(a + 48, m + 48, 8), "ComponentMask not copied");
	FUZZ_CHECK(!get16(a + 44), "an AttributeOffset without a record");
	FUZZ_CHECK(get64(a + 36) == (keyed(get16(m + 16)) ? key_of(sgid) : 0),
		   "SM_Key: not the requester's key in an answer to a keyed Get, or not 0");
	if (status) {
		/* no record; a NodePorts refusal may name the PortGID asked */
		if (get16(m + 16) == RSA_ATTR_NODE_PORTS)
			FUZZ_CHECK((!memcmp(a + 56, m + 56, 16) || zero(a + 56, 16)) &&
				   zero(a + 72, 256 - 72),
				   "a NodePorts refusal with more than its PortGID");
		else
			FUZZ_CHECK(zero(a + 56, 200), "a refusal with data");
		return;
	}
	/* ClassPortInfo: BaseVersion 1, ClassVersion 1, RespTimeValue covers sa_timeout_ms */
	FUZZ_CHECK(a[56] == 1 && a[57] == 1, "ClassPortInfo versions");
	{
		unsigned int v = get32(a + 60) & 0x1f;

		FUZZ_CHECK((4096ULL << v) >= rsa_sa_timeout_ms * 1000000ULL &&
			   (!v || (4096ULL << (v - 1)) < rsa_sa_timeout_ms * 1000000ULL),
			   "ClassPortInfo's RespTimeValue");
	}
}

static void sa_answers_all(struct rsa_port *port)
{
	struct rsa_request *req;

	/* as rsa_sa_done() ends a request: off the list, freed */
	while (port->pending.next != &port->pending) {
		req = container_of(port->pending.next, struct rsa_request, list);
		list_del(&req->list);
		port->npending--;
		rsa_free_request(req);
	}
	npend = 0;
}

#define MAD 256
#define REQ (1 + 16 + MAD)

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	static const unsigned int outstanding[4] = { 1, 2, 3, 64 };
	static const unsigned long ticks[4] = { 0, 3, 375, 61 * HZ };
	struct ib_device device = {0};
	struct rsa_device rsa_dev = { .device = &device };
	static struct rsa_port port;
	struct ib_pd pd;
	struct ib_qp qp = { .pd = &pd };
	struct ib_mad_agent agent = { .qp = &qp, .context = &port };
	struct ib_wc wc = {0};
	struct ib_grh grh;
	struct ib_mad_recv_wc rwc;
	u8 mad[MAD] = {0};
	long long before[RSA_CNT_MAX];
	int i, n, form, o;
	bool have = false;

	if (len < 1)
		return 0;
	make_gid(&port_gids[1][0], PREFIX_B, 0x0002c90300000b01ULL);
	make_gid(&port_gids[1][1], PREFIX_B, 0x0002c90300000b11ULL);
	make_gid(&port_gids[2][0], PREFIX_B, 0x0002c90300000b02ULL);
	make_gid(&allow_gid, PREFIX_B, 0x0002c90300000c01ULL);
	memset(&port, 0, sizeof(port));
	key_secret.key[0] = 0x0123456789abcdefULL;
	key_secret.key[1] = 0xfedcba9876543210ULL;
	port.req_key = key_secret;
	port.rsa_dev = &rsa_dev;
	port.port_num = 1;
	INIT_LIST_HEAD(&port.pending);
	port.rate_slot = calloc(RSA_RATE_SLOTS, sizeof(*port.rate_slot));
	port.allow = &allow_gid;
	port.nallow = 1;
	serve_mode = in[0] & 3;
	port.serve = serve_mode == 1 ? RSA_SERVE_LIST : serve_mode == 2 ? RSA_SERVE_SUBNET : RSA_SERVE_OWN;
	if (serve_mode == 3)
		serve_mode = 0;
	rsa_paired = in[0] & 4;
	memset(&rate, 0, sizeof(rate));
	memset(&sab, 0, sizeof(sab));
	sab.on = in[0] & 0x40;
	rsa_sa_query_rate = sab.on ? SA_RATE : 0;
	rate.on = in[0] & 8;
	rsa_rate_limit = rate.on ? RATE : 0;
	rsa_rate_burst = BURST;
	rsa_new_rate_limit = rate.on ? NEW_RATE : 0;
	rsa_max_outstanding = outstanding[(in[0] >> 4) & 3];
	jiffies = 1000000;
	npend = 0;
	memset(&grh, 0, sizeof(grh));
	in++;
	len--;

	while (len > 0) {
		u8 c = *in++;

		len--;
		if (!(c & 2) || !have) {
			n = len < 16 ? len : 16;
			memset(grh.sgid.raw, 0, 16);
			memcpy(grh.sgid.raw, in, n);
			in += n;
			len -= n;
			n = len < MAD ? len : MAD;
			memset(mad, 0, MAD);
			memcpy(mad, in, n);
			in += n;
			len -= n;
			have = true;
			if (get64(mad + 36) == 1) {
				u64 key = cpu_to_be64(key_of(grh.sgid.raw));

				memcpy(mad + 36, &key, 8);
			}
		}
		jiffies += ticks[(c >> 4) & 3];
		if (c & 0x80)
			sa_answers_all(&port);

		memset(&k, 0, sizeof(k));
		wc.wc_flags = c & 1 ? IB_WC_GRH : 0;
		wc.pkey_index = (c >> 2) & 3;
		wc.src_qp = 1;
		wc.slid = 0x0021;
		want_qpn = wc.src_qp;
		want_pkey_index = wc.pkey_index;
		memset(&rwc, 0, sizeof(rwc));
		rwc.wc = &wc;
		rwc.recv_buf.grh = &grh;
		rwc.recv_buf.mad = (struct ib_mad *)mad;
		rwc.mad_len = c & 0x40 ? MAD - 1 : MAD;
		rwc.mad_seg_size = MAD;
		for (i = 0; i < RSA_CNT_MAX; i++)
			before[i] = port.counters[i].counter;
		recv_freed = 0;

		rsa_resp_recv_handler(&agent, NULL, &rwc);

		FUZZ_CHECK(recv_freed == 1, "a request not freed exactly once");
		FUZZ_CHECK(fuzz_locks_held == 0, "a lock held");
		for (i = 0; i < RSA_CNT_MAX; i++)
			before[i] = port.counters[i].counter - before[i];
		FUZZ_CHECK(before[RSA_CNT_REQUESTS] == 1, "a request not counted once");
		before[RSA_CNT_REQUESTS] = 0;

		/* the first stage: dropped, nothing allocated */
		form = -1;
		if (rwc.mad_len < MAD)
			form = RSA_CNT_REJ_MALFORMED;
		else if (!(c & 1))
			form = RSA_CNT_REJ_NO_GRH;
		else
			form = form_fault(mad);
		/* PairedPathRecord off: as a responder that predates it, 0x000c */
		if (form >= 0 && rwc.mad_len == MAD && (c & 1) && !rsa_paired &&
		    get16(mad + 16) == RSA_ATTR_PAIRED_PATH_REC && k.posted)
			form = -1;
		if (form < 0)
			form = rate_step(grh.sgid.raw);
		if (form > 0) {
			FUZZ_CHECK(!k.allocs && !k.ahs && !k.sends && !k.sa_queries,
				   "a dropped request cost an allocation, an address handle, an answer or an SA query");
			FUZZ_CHECK(before[form] == 1, "a dropped request not counted for its reason");
			before[form] = 0;
			for (i = 0; i < RSA_CNT_MAX; i++)
				FUZZ_CHECK(!before[i], "a dropped request counted for another reason");
			continue;
		}

		/* the second stage */
		second_stage(mad, grh.sgid.raw, pkeys[wc.pkey_index]);
		FUZZ_CHECK(k.allocs == 1 && k.ahs == 1, "a request taken without its allocation and AH");
		for (o = 0; o < nouts; o++) {
			if (outs[o].kind == O_ANSWER && k.posted && get16((u8 *)k.msg->mad + 4) == outs[o].status &&
			    (outs[o].counter < 0 || before[outs[o].counter] == 1))
				break;
			if (outs[o].kind == O_DUP && !k.sends && !k.sa_queries && before[RSA_CNT_DUPLICATES] == 1)
				break;
			if (outs[o].kind == O_SA && !k.sends && k.sa_queries == 1)
				break;
		}
		if (o == nouts) {
			fprintf(stderr, "outcome: posted %d status 0x%04x, SA queries %d; allowed:",
				k.posted, k.posted ? get16((u8 *)k.msg->mad + 4) : 0, k.sa_queries);
			for (i = 0; i < nouts; i++)
				fprintf(stderr, " %d/0x%04x", outs[i].kind, outs[i].status);
			fprintf(stderr, "\n");
			FUZZ_CHECK(0, "a request's outcome is none the rules allow");
		}
		if (outs[o].counter >= 0) {
			FUZZ_CHECK(before[outs[o].counter] == 1, "the outcome not counted once");
			before[outs[o].counter] = 0;
		}
		switch (outs[o].kind) {
		case O_ANSWER:
			check_answer(mad, grh.sgid.raw, outs[o].status);
			FUZZ_CHECK(before[RSA_CNT_REPLIES] == 1, "an answer not counted in replies");
			before[RSA_CNT_REPLIES] = 0;
			/* the send completes: the request and its AH go */
			{
				struct ib_mad_send_wc swc = { .send_buf = k.msg };

				rsa_resp_send_handler(&agent, &swc);
			}
			FUZZ_CHECK(k.frees == 1 && k.ah_frees == 1 && k.send_frees == 1,
				   "an answered request not freed with its AH and answer");
			break;
		case O_DUP:
			FUZZ_CHECK(k.frees == 1 && k.ah_frees == 1, "a duplicate not freed with its AH");
			break;
		case O_SA:
			check_sa_query(mad);
			FUZZ_CHECK(!k.frees && !k.ah_frees, "a request waiting on the SA freed");
			FUZZ_CHECK(port.npending == (unsigned int)npend + 1, "npending");
			FUZZ_CHECK(npend < MAX_PENDING, "harness: too many pending");
			memcpy(pend[npend].gid, grh.sgid.raw, 16);
			pend[npend].tid = get64(mad + 8);
			npend++;
			break;
		}
		for (i = 0; i < RSA_CNT_MAX; i++)
			FUZZ_CHECK(!before[i], "another counter moved");
	}
	sa_answers_all(&port);
	free(port.rate_slot);
	return 0;
}
