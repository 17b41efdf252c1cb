// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: ib_cm's LAP and APR handlers as the 6.1 series patches
 * drivers/infiniband/core/cm.c: cm_lap_handler() with cm_check_lap() and
 * cm_format_path_from_lap(), cm_apr_handler() with its Additional
 * Information Length bound, and cm_lap_probe_handler() (cut out of the
 * patched tree by tests/fuzz/lap-apr/extract, compiled through its shim),
 * fed one received LAP or APR for a connection in any state. The oracle
 * is docs/routed-cm.md ("Path migration, LAP and APR": the table of
 * refused LAPs, the APR rules, the probe) and IBA 12.6.13-14, written out
 * here on its own.
 *
 * The connection: local comm ID 0x11223344, remote 0x55667788, local QPN
 * 0xabc, P_Key 0xffff, MTU 2048, our GIDs fe80::1:0002:c903:0:0a01 and
 * ...0a02.
 *
 * Input: byte 0 the connection (bits 0-1 its state: ESTABLISHED, REP_SENT,
 * ESTABLISHED, DREQ_SENT; bits 2-4 its LAP state: UNINIT, IDLE, LAP_SENT,
 * LAP_RCVD, MRA_LAP_SENT, MRA_LAP_RCVD, UNINIT, IDLE; bit 5 the consumer
 * takes LAPs; bit 6 an accepted alternate is being loaded; bit 7 our LAP
 * is the unanswered probe), byte 1 (bit 0 no connection at all; bit 1 a
 * LAP waits for the probe's answer; bit 3 the MAD is an APR, else a LAP;
 * bit 4 the CM cannot allocate a MAD; bit 5 posting a MAD fails; bit 6
 * the connection's TID is the MAD's; bit 7 the MAD names the connection:
 * its Remote Communication ID is ours and a non-zero Local one the
 * peer's), then the MAD after its 24-byte header (class CM, the LAP's or
 * APR's attribute, a TID; missing bytes 0).
 *
 * Properties, besides no memory error or undefined behaviour:
 * - LAP: for no connection, APR Invalid Communication ID with the LAP's
 *   IDs swapped, counted unless the LAP's Remote Communication ID is 0
 *   (the probe); a connection not established, with our own or another
 *   LAP pending (not a duplicate of it) or an accepted alternate still
 *   loading, APR Rejected, counted; a duplicate of the LAP pending
 *   counted in duplicates, answered only with the MRA sent before; a
 *   consumer that does not take LAPs, APR Unsupported; a LAP whose
 *   Remote QPN is not ours, an alternate LID 0 or 0xffff, a GID not ours,
 *   SubnetLocal 0 with HopLimit <= 1 or an invalid rate, an APR of one of
 *   its faults, counted; any other LAP is IB_CM_LAP_RECEIVED with the
 *   LAP's path (GIDs, LIDs, flow label, traffic class, hop limit, SL,
 *   rate, packet lifetime one less than the ack timeout, the
 *   connection's P_Key and MTU), LAP_RCVD, the LAP's TID, the offered
 *   path's address vector kept apart (lap_av) and no APR;
 * - a LAP never changes the connection's address vectors (6.1 replaced
 *   them before any check), a refused one nothing but that the peer
 *   handles LAPs;
 * - APR: an Additional Information Length above 72 is dropped, counted;
 *   Local Communication ID 0 answers our probe: taken (the stored LAP is
 *   sent, or, when it cannot be, IB_CM_LAP_ERROR) only with status
 *   Invalid Communication ID, our TID, our LAP the unanswered probe,
 *   else dropped and counted; any other APR is IB_CM_APR_RECEIVED (with
 *   its status, info and private data in the MAD) only for an
 *   established connection with our LAP outstanding (LAP_SENT,
 *   MRA_LAP_RCVD, not the probe) and its TID: Success swaps the offered
 *   path in as the alternate and marks it loading, another status drops
 *   the offered path; else dropped and counted, nothing changed;
 * - every reference taken is dropped or handed to the queued event, every
 *   lock released, at most one MAD sent, every MAD allocated freed.
 */
#include "shim.h"
#include "fuzz.h"

int fuzz_locks_held;
unsigned long jiffies;

#define LOCAL_ID	0x11223344U
#define REMOTE_ID	0x55667788U
#define LOCAL_QPN	0x000abcU
#define MAD		256

static struct cm_id_private conn;
static bool have_conn, alloc_fails, post_fails;
static int refs_taken, refs_dropped, events;
static struct ib_cm_event event;
static struct cm_work *event_work;
static int sent, msgs, msg_frees, mras, cancels, recv_frees;
static u8 sent_mad[MAD];
static int av_tags;
/*
 * our_gids[0] and [1] are ports 1 and 2 of the connection's device;
 * our_gids[2] is a port of another device of this host (an mlx5 node's
 * second HCA), which a LAP may not offer as an alternate.
 */
static union ib_gid our_gids[3];
static struct cm_port *gid_ports[3];

static struct {
	int local_id_table;
} cm;

static u32 cm_local_id(__be32 id)
{
	return (u32)id;
}

static void *xa_load(int *table, u32 index)
{
	(void)table;
	return have_conn && index == (u32)conn.id.local_id ? &conn : NULL;
}

static bool refcount_inc_not_zero(refcount_t *r)
{
	if (!r->refs)
		return false;
	r->refs++;
	refs_taken++;
	return true;
}

static struct cm_id_private *cm_acquire_id(__be32 local_id, __be32 remote_id)
{
	if (!have_conn || local_id != conn.id.local_id || remote_id != conn.id.remote_id)
		return NULL;
	conn.refcount.refs++;
	refs_taken++;
	return &conn;
}

static void cm_deref_id(struct cm_id_private *p)
{
	FUZZ_CHECK(p == &conn && p->refcount.refs > 1, "a reference dropped that was not taken");
	p->refcount.refs--;
	refs_dropped++;
}

static struct ib_mad_send_buf *new_msg(void)
{
	struct ib_mad_send_buf *m;

	if (alloc_fails)
		return NULL;
	m = calloc(1, sizeof(*m));
	m->mad = calloc(1, MAD);
	msgs++;
	return m;
}

static void free_msg(struct ib_mad_send_buf *m)
{
	free(m->mad);
	free(m);
	msg_frees++;
}

static int ib_post_send_mad(struct ib_mad_send_buf *m, void *bad)
{
	(void)bad;
	if (post_fails)
		return -EIO;
	FUZZ_CHECK(!sent, "two MADs sent for one");
	sent++;
	memcpy(sent_mad, m->mad, MAD);
	free_msg(m);	/* as if its send completed */
	return 0;
}

static int cm_alloc_response_msg(struct cm_port *port, struct ib_mad_recv_wc *wc,
				 struct ib_mad_send_buf **msg)
{
	(void)port;
	(void)wc;
	*msg = new_msg();
	return *msg ? 0 : -ENOMEM;
}

static struct ib_mad_send_buf *cm_alloc_response_msg_no_ah(struct cm_port *port,
							   struct ib_mad_recv_wc *wc)
{
	struct ib_mad_send_buf *m = new_msg();

	(void)port;
	(void)wc;
	return m ? m : ERR_PTR(-ENOMEM);
}

static int cm_create_response_msg_ah(struct cm_port *port, struct ib_mad_recv_wc *wc,
				     struct ib_mad_send_buf *msg)
{
	(void)port;
	(void)wc;
	(void)msg;
	return 0;
}

static void cm_free_response_msg(struct ib_mad_send_buf *msg)
{
	free_msg(msg);
}

static void cm_format_mra(struct cm_mra_msg *mra, struct cm_id_private *p,
			  enum cm_msg_response r, u8 timeout, const void *pd, u8 len)
{
	(void)mra;
	(void)p;
	(void)r;
	(void)timeout;
	(void)pd;
	(void)len;
	mras++;
}

static struct ib_mad_send_buf *cm_alloc_priv_msg(struct cm_id_private *p)
{
	struct ib_mad_send_buf *m = new_msg();

	FUZZ_CHECK(p->lock.held, "cm_alloc_priv_msg() without the lock");
	return m ? m : ERR_PTR(-ENOMEM);
}

static void cm_free_priv_msg(struct ib_mad_send_buf *m)
{
	free_msg(m);
}

static void ib_cancel_mad(struct ib_mad_send_buf *m)
{
	(void)m;
	cancels++;
}

static void ib_free_recv_mad(struct ib_mad_recv_wc *wc)
{
	(void)wc;
	recv_frees++;
}

static void cm_path_set_rec_type(struct ib_device *dev, u32 port, struct sa_path_rec *path,
				 union ib_gid *gid)
{
	(void)dev;
	(void)port;
	(void)gid;
	path->rec_type = SA_PATH_REC_TYPE_IB;
}

/* An address vector only for a path from one of our GIDs, on its port. */
static int cm_init_av_by_path(struct sa_path_rec *path, const struct ib_gid_attr *attr,
			      struct cm_av *av)
{
	unsigned int i;

	(void)attr;
	for (i = 0; i < ARRAY_SIZE(our_gids); i++) {
		if (!memcmp(path->sgid.raw, our_gids[i].raw, 16)) {
			av->tag = ++av_tags;
			av->port = gid_ports[i];
			return 0;
		}
	}
	return -EINVAL;
}

static void cm_destroy_av(struct cm_av *av)
{
	av->tag = 0;
	av->port = NULL;
}

static void cm_move_av_from_path(struct cm_av *dest, struct cm_av *src)
{
	*dest = *src;
	src->tag = 0;
}

static void cm_queue_work_unlock(struct cm_id_private *p, struct cm_work *work)
{
	FUZZ_CHECK(p == &conn && p->lock.held == 1, "an event queued without the lock");
	FUZZ_CHECK(!events, "two events");
	events++;
	event = work->cm_event;
	event_work = work;
	spin_unlock_irq(&p->lock);
	/* the work holds the reference until its event is delivered */
	cm_deref_id(p);
}

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
#pragma clang diagnostic ignored "-Wsign-compare"
#include "lap_apr.c"
#pragma clang diagnostic pop

/* ---- the oracle ---------------------------------------------------------- */

static unsigned int get16(const u8 *p) { return p[0] << 8 | p[1]; }
static u32 get32(const u8 *p) { return (u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
static void put32(u8 *p, u32 v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

#define H 24	/* the MAD header; CM fields from here (IBA 12.6) */

static void check_apr_sent(const u8 *lap, unsigned int status)
{
	if (alloc_fails || post_fails) {
		FUZZ_CHECK(!sent, "a MAD sent that could not be");
		return;
	}
	FUZZ_CHECK(sent == 1, "no APR sent");
	FUZZ_CHECK(sent_mad[1] == IB_MGMT_CLASS_CM && sent_mad[2] == 2 && sent_mad[3] == 0x03 &&
		   get16(sent_mad + 16) == 0x001a, "the answer is not an APR");
	FUZZ_CHECK(!memcmp(sent_mad + 8, lap + 8, 8), "an APR of another TID");
	FUZZ_CHECK(get32(sent_mad + H) == get32(lap + H + 4) &&
		   get32(sent_mad + H + 4) == get32(lap + H),
		   "an APR whose IDs are not the LAP's swapped");
	FUZZ_CHECK(sent_mad[H + 9] == status, "an APR of another status");
}

/* a LAP's faults (docs/routed-cm.md's table): a bit per APR status */
static unsigned int lap_faults(const u8 *m)
{
	unsigned int f = 0, llid = get16(m + H + 20), rlid = get16(m + H + 22);
	unsigned int rate = m[H + 61] & 0x3f;

	if ((get32(m + H + 12) >> 8) != LOCAL_QPN)
		f |= 1 << IB_CM_APR_INVALID_QPN_EECN;
	if (!llid || !rlid || llid == 0xffff || rlid == 0xffff)
		f |= 1 << IB_CM_APR_INVALID_LID;
	if (memcmp(m + H + 40, our_gids[0].raw, 16) && memcmp(m + H + 40, our_gids[1].raw, 16))
		f |= 1 << IB_CM_APR_INVALID_GID;
	if (!(m[H + 62] & 0x08) && m[H + 60] <= 1)
		f |= 1 << IB_CM_APR_INVALID_HOP_LIMIT;
	if (rate < 2 || rate > 22)
		f |= 1 << IB_CM_APR_INVALID_PACKET_RATE;
	return f;
}

static void check_lap_path(const struct sa_path_rec *p, const u8 *m)
{
	unsigned int ack = m[H + 63] >> 3;

	FUZZ_CHECK(!memcmp(p->dgid.raw, m + H + 24, 16) && !memcmp(p->sgid.raw, m + H + 40, 16),
		   "the offered path's GIDs");
	FUZZ_CHECK(be16_to_cpu(p->ib.dlid) == get16(m + H + 20) &&
		   be16_to_cpu(p->ib.slid) == get16(m + H + 22), "the offered path's LIDs");
	FUZZ_CHECK(be32_to_cpu(p->flow_label) == get32(m + H + 56) >> 12 &&
		   p->traffic_class == m[H + 59] && p->hop_limit == m[H + 60],
		   "the offered path's flow label, traffic class or hop limit");
	FUZZ_CHECK(p->sl == m[H + 62] >> 4 && p->rate == (m[H + 61] & 0x3f),
		   "the offered path's SL or rate");
	FUZZ_CHECK(p->packet_life_time == ack - (ack > 0), "the offered path's packet lifetime");
	FUZZ_CHECK(p->pkey == conn.pkey && p->mtu == conn.path_mtu,
		   "the offered path's P_Key or MTU is not the connection's");
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	static const enum ib_cm_state states[4] = { IB_CM_ESTABLISHED, IB_CM_REP_SENT,
						    IB_CM_ESTABLISHED, IB_CM_DREQ_SENT };
	static const enum ib_cm_lap_state laps[8] = {
		IB_CM_LAP_UNINIT, IB_CM_LAP_IDLE, IB_CM_LAP_SENT, IB_CM_LAP_RCVD,
		IB_CM_MRA_LAP_SENT, IB_CM_MRA_LAP_RCVD, IB_CM_LAP_UNINIT, IB_CM_LAP_IDLE };
	struct ib_device dev = {0}, dev2 = {0};
	struct cm_device cm_dev = { .ib_device = &dev }, cm_dev2 = { .ib_device = &dev2 };
	struct cm_port port = { .cm_dev = &cm_dev, .port_num = 1 };
	struct cm_port port2 = { .cm_dev = &cm_dev, .port_num = 2 };
	struct cm_port other = { .cm_dev = &cm_dev2, .port_num = 1 };
	struct ib_wc wc = {0};
	struct ib_mad_recv_wc rwc = {0};
	struct cm_work *work;
	struct cm_id_private before;
	u8 *m, lap_copy[MAD];
	bool apr, dup, taken;
	unsigned int f, st, info_len;
	long rej, dups;
	int ret, counter;

	if (len < 2)
		return 0;
	our_gids[0].global.subnet_prefix = cpu_to_be64(0xfe80000000000001ULL);
	our_gids[0].global.interface_id = cpu_to_be64(0x0002c90300000a01ULL);
	our_gids[1].global.subnet_prefix = cpu_to_be64(0xfe80000000000001ULL);
	our_gids[1].global.interface_id = cpu_to_be64(0x0002c90300000a02ULL);
	our_gids[2].global.subnet_prefix = cpu_to_be64(0xfe80000000000001ULL);
	our_gids[2].global.interface_id = cpu_to_be64(0x0002c90300000c01ULL);
	gid_ports[0] = &port;
	gid_ports[1] = &port2;
	gid_ports[2] = &other;

	memset(&conn, 0, sizeof(conn));
	conn.id.state = states[in[0] & 3];
	conn.id.lap_state = laps[(in[0] >> 2) & 7];
	conn.id.local_id = cpu_to_be32(LOCAL_ID);
	conn.id.remote_id = cpu_to_be32(REMOTE_ID);
	conn.lap_enabled = !!(in[0] & 0x20);
	conn.lap_loading = !!(in[0] & 0x40);
	conn.lap_unanswered = !!(in[0] & 0x80);
	conn.refcount.refs = 1;
	conn.local_qpn = cpu_to_be32(LOCAL_QPN);
	conn.pkey = cpu_to_be16(0xffff);
	conn.path_mtu = IB_MTU_2048;
	conn.timeout_ms = 1000;
	conn.av.tag = 1001;
	conn.av.port = &port;
	conn.alt_av.tag = 1002;
	conn.alt_av.port = &port2;
	conn.lap_av.tag = conn.id.lap_state == IB_CM_LAP_SENT ||
			  conn.id.lap_state == IB_CM_MRA_LAP_RCVD ? 1003 : 0;
	conn.tid = cpu_to_be64(0x0000000100000041ULL);	/* not the MAD's */
	have_conn = !(in[1] & 1);
	if (in[1] & 2) {
		conn.lap_msg = calloc(1, sizeof(*conn.lap_msg));
		memset(conn.lap_msg, 0x5a, sizeof(*conn.lap_msg));
		memcpy(lap_copy, conn.lap_msg, MAD);
	}
	apr = in[1] & 8;
	alloc_fails = in[1] & 0x10;
	post_fails = in[1] & 0x20;

	m = calloc(1, MAD);
	m[0] = 1;
	m[1] = IB_MGMT_CLASS_CM;
	m[2] = 2;
	m[3] = 0x03;
	put32(m + 8, 1);
	put32(m + 12, 0x42);
	m[17] = apr ? 0x1a : 0x19;
	memcpy(m + H, in + 2, len - 2 < MAD - H ? len - 2 : MAD - H);
	if (in[1] & 0x40)
		memcpy(&conn.tid, m + 8, 8);
	if (in[1] & 0x80) {
		put32(m + H + 4, LOCAL_ID);
		if (get32(m + H))
			put32(m + H, REMOTE_ID);
	}
	before = conn;

	work = calloc(1, sizeof(*work));
	work->port = &port;
	work->mad_recv_wc = &rwc;
	/* as cm_recv_handler() makes the work */
	work->cm_event.event = apr ? IB_CM_APR_RECEIVED : IB_CM_LAP_RECEIVED;
	rwc.wc = &wc;
	rwc.recv_buf.mad = (struct ib_mad *)m;
	rwc.mad_len = MAD;
	refs_taken = refs_dropped = events = 0;
	sent = msgs = msg_frees = mras = cancels = recv_frees = 0;
	event_work = NULL;
	av_tags = 0;
	memset(&event, 0, sizeof(event));

	ret = apr ? cm_apr_handler(work) : cm_lap_handler(work);

	counter = apr ? CM_APR_COUNTER : CM_LAP_COUNTER;
	rej = port.counters[CM_RECV_REJECTED][counter].counter;
	dups = port.counters[CM_RECV_DUPLICATES][counter].counter;
	FUZZ_CHECK(fuzz_locks_held == 0 && !conn.lock.held, "a lock held");
	FUZZ_CHECK(refs_taken == refs_dropped && conn.refcount.refs == 1,
		   "a reference not dropped nor handed to the event");
	FUZZ_CHECK(msgs == msg_frees, "a MAD allocated and not freed");
	FUZZ_CHECK((ret == 0) == (events == 1), "an event queued and an error returned, or neither");
	FUZZ_CHECK(recv_frees == 0 || (events == 1 && !work->mad_recv_wc),
		   "the received MAD freed by the handler and still handed on");
	FUZZ_CHECK(rej <= 1 && dups <= 1 && rej + dups <= 1, "counted twice");
	/* never the connection's address vectors (6.1's bug) but by an APR Success */
	if (!apr) {
		FUZZ_CHECK(conn.av.tag == before.av.tag && conn.alt_av.tag == before.alt_av.tag,
			   "a LAP changed the connection's address vectors");
	}

	if (!apr) {
		u32 rid = get32(m + H + 4);

		FUZZ_CHECK(!mras || mras == 1, "MRA");
		if (!have_conn || rid != LOCAL_ID || get32(m + H) != REMOTE_ID) {
			check_apr_sent(m, IB_CM_APR_INVALID_COMM_ID);
			FUZZ_CHECK(rej == (rid != 0), "a LAP for no connection counted wrong");
			FUZZ_CHECK(!events && !memcmp(&conn, &before, sizeof(conn)),
				   "a LAP for no connection changed a connection");
			goto out;
		}
		FUZZ_CHECK(conn.lap_answered, "a LAP did not tell that the peer handles LAPs");
		dup = conn.id.state == IB_CM_ESTABLISHED && !memcmp(m + 8, &before.tid, 8) &&
		      (before.id.lap_state == IB_CM_LAP_RCVD || before.id.lap_state == IB_CM_MRA_LAP_SENT);
		taken = events == 1;
		if (before.id.state != IB_CM_ESTABLISHED ||
		    (before.id.lap_state != IB_CM_LAP_UNINIT && before.id.lap_state != IB_CM_LAP_IDLE &&
		     !dup) ||
		    (!dup && before.lap_loading)) {
			check_apr_sent(m, IB_CM_APR_REJECT);
			FUZZ_CHECK(rej == 1, "a rejected LAP not counted");
			FUZZ_CHECK(!taken, "a LAP taken in the wrong state");
		} else if (dup) {
			FUZZ_CHECK(dups == 1 && !rej, "a duplicate LAP not counted as one");
			FUZZ_CHECK(!taken, "a duplicate LAP taken");
			FUZZ_CHECK(sent == (before.id.lap_state == IB_CM_MRA_LAP_SENT && !alloc_fails &&
					    !post_fails),
				   "a duplicate LAP answered other than with the MRA sent before");
			FUZZ_CHECK(mras == (before.id.lap_state == IB_CM_MRA_LAP_SENT && !alloc_fails),
				   "no MRA resent");
		} else {
			f = lap_faults(m);
			if (!taken) {
				FUZZ_CHECK(f || !before.lap_enabled, "a good LAP refused");
				if (sent) {
					st = sent_mad[H + 9];
					FUZZ_CHECK((st == IB_CM_APR_UNSUPPORTED && !before.lap_enabled && !rej) ||
						   ((f >> st & 1) && rej == 1),
						   "a refused LAP not answered Unsupported or with one of its faults, and counted so");
					check_apr_sent(m, st);
				} else {
					FUZZ_CHECK(alloc_fails || post_fails, "a refused LAP not answered");
				}
			} else {
				FUZZ_CHECK(!f, "a faulty LAP taken");
				FUZZ_CHECK(before.lap_enabled, "a LAP taken for a consumer that does not take them");
				FUZZ_CHECK(!sent && !rej, "a taken LAP answered or counted");
				FUZZ_CHECK(event.event == IB_CM_LAP_RECEIVED, "not IB_CM_LAP_RECEIVED");
				check_lap_path(event.param.lap_rcvd.alternate_path, m);
				FUZZ_CHECK(event.private_data == m + H + 64, "the LAP's private data");
				FUZZ_CHECK(conn.id.lap_state == IB_CM_LAP_RCVD &&
					   !memcmp(&conn.tid, m + 8, 8) && conn.lap_av.tag > 0,
					   "a taken LAP not LAP_RCVD with its TID and path");
				goto out;
			}
		}
		/* refused: nothing changed but lap_answered */
		before.lap_answered = 1;
		FUZZ_CHECK(!memcmp(&conn, &before, sizeof(conn)), "a refused LAP changed the connection");
		goto out;
	}

	/* APR */
	info_len = m[H + 8];
	st = m[H + 9];
	if (info_len > IB_CM_APR_INFO_LENGTH) {
		FUZZ_CHECK(rej == 1 && !events && !sent && !memcmp(&conn, &before, sizeof(conn)),
			   "an APR with a long Additional Information Length acted on");
		goto out;
	}
	if (!get32(m + H)) {
		/* the answer to our probe */
		taken = have_conn && get32(m + H + 4) == LOCAL_ID &&
			before.id.state == IB_CM_ESTABLISHED && before.id.lap_state == IB_CM_LAP_SENT &&
			before.lap_unanswered && before.lap_msg && !memcmp(m + 8, &before.tid, 8) &&
			st == IB_CM_APR_INVALID_COMM_ID;
		if (!taken) {
			FUZZ_CHECK(rej == 1 && !events && !sent && !cancels, "a probe answer not ours acted on");
			FUZZ_CHECK(!memcmp(&conn, &before, sizeof(conn)), "a probe answer not ours changed the connection");
			goto out;
		}
		FUZZ_CHECK(!rej && cancels == 1 && conn.lap_answered && !conn.lap_unanswered &&
			   !conn.lap_msg, "the probe's answer not taken");
		if (!alloc_fails && !post_fails) {
			FUZZ_CHECK(sent == 1 && !events && !memcmp(sent_mad, lap_copy, MAD),
				   "the LAP not sent after its probe");
			FUZZ_CHECK(conn.id.lap_state == IB_CM_LAP_SENT, "LAP_SENT");
		} else {
			FUZZ_CHECK(!sent && events == 1 && event.event == IB_CM_LAP_ERROR &&
				   conn.id.lap_state == IB_CM_LAP_IDLE && !conn.lap_av.tag,
				   "a LAP that could not be sent not reported as LAP_ERROR");
		}
		FUZZ_CHECK(conn.av.tag == before.av.tag && conn.alt_av.tag == before.alt_av.tag,
			   "the probe's answer changed the address vectors");
		goto out;
	}
	taken = have_conn && get32(m + H + 4) == LOCAL_ID && get32(m + H) == REMOTE_ID &&
		before.id.state == IB_CM_ESTABLISHED &&
		(before.id.lap_state == IB_CM_LAP_SENT || before.id.lap_state == IB_CM_MRA_LAP_RCVD) &&
		!before.lap_unanswered && !memcmp(m + 8, &before.tid, 8);
	if (!taken) {
		FUZZ_CHECK(rej == 1 && !events && !sent && !cancels, "an APR not for our LAP acted on");
		FUZZ_CHECK(!memcmp(&conn, &before, sizeof(conn)), "an APR not for our LAP changed the connection");
		goto out;
	}
	FUZZ_CHECK(!rej && events == 1 && event.event == IB_CM_APR_RECEIVED && cancels == 1,
		   "an APR for our LAP not delivered");
	FUZZ_CHECK(event.param.apr_rcvd.ap_status == st && event.param.apr_rcvd.info_len == info_len &&
		   event.param.apr_rcvd.apr_info == m + H + 12 && event.private_data == m + H + 84,
		   "the APR's status, info or private data");
	FUZZ_CHECK(H + 12 + event.param.apr_rcvd.info_len <= MAD, "the APR's info past the MAD");
	FUZZ_CHECK(conn.id.lap_state == IB_CM_LAP_IDLE && conn.lap_answered, "IDLE after the APR");
	if (st == IB_CM_APR_SUCCESS)
		FUZZ_CHECK(conn.alt_av.tag == before.lap_av.tag && conn.lap_av.tag == before.alt_av.tag &&
			   conn.lap_loading, "an accepted path not the alternate being loaded");
	else
		FUZZ_CHECK(conn.alt_av.tag == before.alt_av.tag && !conn.lap_av.tag && !conn.lap_loading == !before.lap_loading,
			   "a refused path kept, or the alternate changed");
	FUZZ_CHECK(conn.av.tag == before.av.tag, "an APR changed the primary address vector");
out:
	free(conn.lap_msg);
	free(work);
	free(m);
	return 0;
}
