// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: ib_remote_sa's client-side answer decoder,
 * rsa_client_recv_handler() of the 6.1 series' remote_sa_client.c with
 * rsa_check_node_ports_answer(), rsa_status_errno() and remote_sa.c's
 * rsa_wire_to_path() and rsa_path_check() (cut out by
 * tests/fuzz/remote-sa/extract, compiled through its shim), fed what
 * ib_mad hands the client's agent: an answer matched to a query by TID.
 * The oracle is docs/remote-sa-protocol.md (sections 3, 4, 4.1, 5.3, 5.5,
 * 7, 8 and the kernel API's status table), written out here on its own.
 *
 * Input: byte 0 the query (bits 0-1: 0 and 3 PathRecord, 1
 * PairedPathRecord, 2 NodePorts; bit 2: no send buffer, an answer ib_mad
 * matched to nothing; bit 3: a short MAD, mad_len byte 1), byte 1, then
 * the 256-byte MAD (missing bytes are 0). The query asks about target B
 * from requester A (the seeds' GIDs).
 *
 * Properties, besides no memory error or undefined behaviour:
 * - the MAD is freed once; without a send buffer nothing else happens;
 * - an answer is taken (status 0) only from a GetResp of class version 1
 *   and the query's attribute, 256 bytes, MAD status 0; for a PathRecord
 *   or PairedPathRecord with AttributeOffset 8, SGID the target, DGID the
 *   requester and its values in range (unicast LIDs, MTU 1-5, Rate 2-22,
 *   PacketLifeTime 0-31, P_Key not 0 in its low 15 bits, HopLimit 2 or
 *   more); the record handed on is the wire's, field by field, rec_type
 *   IB, flags 0; for NodePorts with AttributeOffset 0, the PortGID asked
 *   about, NumPorts 1-10, every GID of the target's prefix, the target
 *   among them, and the GIDs handed on are the wire's;
 * - any other status-0 answer is -EPROTO; one with values out of range,
 *   and only such, is counted once in bad_values;
 * - a non-zero MAD status maps to the API table's errno and its record
 *   bytes are never read (the decoded record stays empty); (sections 3
 *   and 8: an answer of another method, class version, attribute or
 *   a short one is discarded whatever its status: -EPROTO with MAD
 *   status 0, the API table's pair).
 */
#include "shim.h"
/* the kernel's code, under the kernel's warnings (no -Wextra) */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
#pragma clang diagnostic ignored "-Wsign-compare"
#include "remote_sa_priv.h"
#pragma clang diagnostic pop
#include "fuzz.h"

unsigned long jiffies;
int fuzz_locks_held;
u32 fuzz_nports = 1;
static int recv_freed;

void fuzz_free_recv_mad(struct ib_mad_recv_wc *wc)
{
	(void)wc;
	recv_freed++;
}

/* The rest of the module: never reached from the decoder. */
void *fuzz_kzalloc(size_t n) { (void)n; FUZZ_CHECK(0, "allocation"); return NULL; }
void fuzz_kfree(const void *p) { (void)p; FUZZ_CHECK(0, "free"); }
struct ib_ah *fuzz_create_ah(const struct ib_wc *wc, const struct ib_grh *grh)
{ (void)wc; (void)grh; FUZZ_CHECK(0, "AH"); return NULL; }
void fuzz_destroy_ah(struct ib_ah *ah) { (void)ah; }
struct ib_mad_send_buf *fuzz_create_send_mad(struct ib_mad_agent *a, u32 qpn, u16 pki,
					     int hl, int dl)
{ (void)a; (void)qpn; (void)pki; (void)hl; (void)dl; FUZZ_CHECK(0, "send"); return NULL; }
int fuzz_post_send_mad(struct ib_mad_send_buf *m) { (void)m; return -1; }
void fuzz_free_send_mad(struct ib_mad_send_buf *m) { (void)m; }
int fuzz_query_gid(u32 port, int index, union ib_gid *gid)
{ (void)port; (void)index; (void)gid; return -1; }
int fuzz_find_gid(u32 port, const union ib_gid *gid) { (void)port; (void)gid; return 0; }
int fuzz_cached_pkey(u32 port, u16 index, u16 *pkey) { (void)port; (void)index; *pkey = 0; return 0; }

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
#pragma clang diagnostic ignored "-Wsign-compare"
#include "rsa_answer.c"
#pragma clang diagnostic pop

#define MAD 256

static const u8 gid_a[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 1, 0x00, 0x02, 0xc9, 0x03, 0, 0, 0x0a, 0x01 };
static const u8 gid_b[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 2, 0x00, 0x02, 0xc9, 0x03, 0, 0, 0x0b, 0x01 };

static unsigned int get16(const u8 *p) { return p[0] << 8 | p[1]; }
static u32 get32(const u8 *p) { return (u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

/* docs/remote-sa-protocol.md, "Kernel API": the errno of a MAD status */
static int errno_of(unsigned int s)
{
	switch (s) {
	case 0x0001: return -EBUSY;
	case 0x0004: case 0x0008: case 0x000c: return -EOPNOTSUPP;
	case 0x0300: return -ENODATA;
	case 0x0500: return -EADDRNOTAVAIL;
	case 0x0700: return -EACCES;
	case 0x001c: case 0x0200: case 0x0600: return -EINVAL;
	case 0x0100: return -EAGAIN;
	default: return 1;	/* not in the table: some other error */
	}
}

/* section 5.5: the values taken from a PathRecord (record offsets, 4.1) */
static bool values_ok(const u8 *r)
{
	unsigned int dlid = get16(r + 40), slid = get16(r + 42);
	unsigned int mtu = r[54] & 0x3f, rate = r[55] & 0x3f, plt = r[56] & 0x3f;

	return dlid >= 1 && dlid <= 0xbfff && slid >= 1 && slid <= 0xbfff &&
	       mtu >= 1 && mtu <= 5 && rate >= 2 && rate <= 22 && plt <= 31 &&
	       (get16(r + 50) & 0x7fff) && r[47] >= 2;
}

/* section 4.1, field by field */
static void check_record(const struct sa_path_rec *p, const u8 *r)
{
	u32 w = get32(r + 44);
	u64 sid;

	memcpy(&sid, r, 8);
	FUZZ_CHECK(p->rec_type == SA_PATH_REC_TYPE_IB && p->flags == 0, "rec_type or flags");
	FUZZ_CHECK(p->service_id == sid, "ServiceID");
	FUZZ_CHECK(!memcmp(p->dgid.raw, r + 8, 16) && !memcmp(p->sgid.raw, r + 24, 16), "GIDs");
	FUZZ_CHECK(be16_to_cpu(p->ib.dlid) == get16(r + 40) &&
		   be16_to_cpu(p->ib.slid) == get16(r + 42), "LIDs");
	FUZZ_CHECK(p->ib.raw_traffic == (w >> 31), "RawTraffic");
	FUZZ_CHECK(be32_to_cpu(p->flow_label) == ((w >> 8) & 0xfffff), "FlowLabel");
	FUZZ_CHECK(p->hop_limit == r[47] && p->traffic_class == r[48], "HopLimit, TClass");
	FUZZ_CHECK(p->reversible == r[49] >> 7 && p->numb_path == (r[49] & 0x7f),
		   "Reversible, NumbPath");
	FUZZ_CHECK(be16_to_cpu(p->pkey) == get16(r + 50), "P_Key");
	FUZZ_CHECK(be16_to_cpu(p->qos_class) == get16(r + 52) >> 4 && p->sl == (r[53] & 0xf),
		   "QoSClass, SL");
	FUZZ_CHECK(p->mtu_selector == r[54] >> 6 && p->mtu == (r[54] & 0x3f), "MTU");
	FUZZ_CHECK(p->rate_selector == r[55] >> 6 && p->rate == (r[55] & 0x3f), "Rate");
	FUZZ_CHECK(p->packet_life_time_selector == r[56] >> 6 &&
		   p->packet_life_time == (r[56] & 0x3f), "PacketLifeTime");
	FUZZ_CHECK(p->preference == r[57], "Preference");
}

/* section 5.3: what a requester checks in a NodePorts answer */
static int node_ports_ok(const u8 *d)
{
	unsigned int n = d[24], i;
	bool target = false;

	if (memcmp(d, gid_b, 16) || n < 1 || n > RSA_NODE_PORTS_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		if (memcmp(d + 32 + 16 * i, gid_b, 8))
			return 0;
		target |= !memcmp(d + 32 + 16 * i, gid_b, 16);
	}
	if (!target)
		return 0;
	/* a NodeGUID of 0 names no node (IBA 4.1.1): refusing it is fine */
	return get32(d + 16) || get32(d + 20) ? 1 : 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	static const u16 attrs[4] = { RSA_ATTR_PATH_REC, RSA_ATTR_PAIRED_PATH_REC,
				      RSA_ATTR_NODE_PORTS, RSA_ATTR_PATH_REC };
	struct ib_device device = {0};
	struct rsa_device rsa_dev = { .device = &device };
	static struct rsa_port port;
	struct ib_remote_sa_query q;
	struct ib_mad_send_buf send = {0};
	struct ib_mad_recv_wc wc = {0};
	struct ib_mad_agent agent = {0};
	struct ib_wc ibwc = {0};
	struct sa_path_rec empty;
	u8 *m;
	const u8 *d;
	unsigned int status, offset;
	bool framed, nosend;
	int mad_len, want;

	if (len < 2)
		return 0;
	memset(&port, 0, sizeof(port));
	port.rsa_dev = &rsa_dev;
	port.port_num = 1;
	memset(&q, 0, sizeof(q));
	q.port = &port;
	q.attr_id = attrs[in[0] & 3];
	memcpy(q.target.raw, gid_b, 16);
	memcpy(q.sgid.raw, gid_a, 16);
	q.tid = cpu_to_be64(0x0000000112345678ULL);
	nosend = in[0] & 4;
	mad_len = in[0] & 8 ? in[1] : MAD;
	in += 2;
	len -= 2;
	m = calloc(1, MAD);
	memcpy(m, in, len < MAD ? len : MAD);
	d = m + IB_MGMT_SA_HDR;

	wc.wc = &ibwc;
	wc.recv_buf.mad = (struct ib_mad *)m;
	wc.mad_len = mad_len;
	wc.mad_seg_size = MAD;
	send.context[0] = &q;
	recv_freed = 0;
	memset(&empty, 0, sizeof(empty));

	rsa_client_recv_handler(&agent, nosend ? NULL : &send, &wc);

	FUZZ_CHECK(recv_freed == 1, "the answer is not freed exactly once");
	FUZZ_CHECK(fuzz_locks_held == 0, "a lock held");
	if (nosend) {
		FUZZ_CHECK(!q.answered && !q.status && !q.mad_status,
			   "an answer matched to no query acted on");
		goto out;
	}
	FUZZ_CHECK(q.answered, "an answer not marked answered");
	status = get16(m + 4);
	offset = get16(m + 44);
	framed = mad_len >= MAD && m[3] == IB_MGMT_METHOD_GET_RESP && m[2] == 1 &&
		 get16(m + 16) == q.attr_id;
	if (!framed) {
		/* sections 3 and 8: discarded whatever its status */
		FUZZ_CHECK(q.status == -EPROTO && q.mad_status == 0,
			   "an answer of another method, version, attribute or length taken");
		FUZZ_CHECK(!memcmp(&q.resp, &empty, sizeof(empty)) && !q.np.num_ports,
			   "the record of a malformed answer read");
		FUZZ_CHECK(!port.counters[RSA_CNT_BAD_VALUES].counter, "bad framing counted as bad values");
		goto out;
	}
	if (status) {
		want = errno_of(status);
		if (want > 0) {
			FUZZ_CHECK(q.status < 0 && q.status != -EPROTO,
				   "an unlisted MAD status taken as success or as malformed");
		} else {
			FUZZ_CHECK(q.status == want, "a MAD status mapped to the wrong errno");
		}
		FUZZ_CHECK(q.mad_status == status, "the MAD status not handed on");
		FUZZ_CHECK(!memcmp(&q.resp, &empty, sizeof(empty)) && !q.np.num_ports,
			   "the record of an error answer read");
		FUZZ_CHECK(!port.counters[RSA_CNT_BAD_VALUES].counter, "an error answer counted");
		goto out;
	}
	FUZZ_CHECK(q.mad_status == 0, "MAD status 0 not handed on");
	if (q.attr_id == RSA_ATTR_NODE_PORTS) {
		int ok = offset == 0 ? node_ports_ok(d) : 0;
		unsigned int i;

		if (ok == 2 && q.status == -EPROTO)
			goto out;
		FUZZ_CHECK(q.status == (ok ? 0 : -EPROTO), "a NodePorts answer misjudged");
		if (!q.status) {
			FUZZ_CHECK(!memcmp(&q.np.node_guid, d + 16, 8) && q.np.num_ports == d[24],
				   "NodeGUID or NumPorts not the wire's");
			for (i = 0; i < q.np.num_ports; i++)
				FUZZ_CHECK(!memcmp(q.np.gid[i].raw, d + 32 + 16 * i, 16),
					   "a port GID not the wire's");
		}
		FUZZ_CHECK(!port.counters[RSA_CNT_BAD_VALUES].counter, "NodePorts counted as bad values");
		goto out;
	}
	if (offset != RSA_PATH_REC_WORDS || memcmp(d + 24, gid_b, 16) || memcmp(d + 8, gid_a, 16)) {
		FUZZ_CHECK(q.status == -EPROTO,
			   "a record of another AttributeOffset, or not target -> requester, taken");
		FUZZ_CHECK(!port.counters[RSA_CNT_BAD_VALUES].counter,
			   "a record not asked for counted as bad values");
		goto out;
	}
	if (!values_ok(d)) {
		FUZZ_CHECK(q.status == -EPROTO, "a record with values out of range taken");
		FUZZ_CHECK(port.counters[RSA_CNT_BAD_VALUES].counter == 1,
			   "values out of range not counted once");
		goto out;
	}
	FUZZ_CHECK(q.status == 0, "a good answer refused");
	FUZZ_CHECK(!port.counters[RSA_CNT_BAD_VALUES].counter, "good values counted");
	check_record(&q.resp, d);
out:
	free(m);
	return 0;
}
