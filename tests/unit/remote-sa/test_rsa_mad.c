// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit test of the ib_remote_sa MAD codec (userspace/remote-sa/rsa_mad.c)
 * against hand-computed byte layouts: the expected MADs below are written out
 * literally, by byte offset, from docs/remote-sa-protocol.md (IBA 13.4.2 MAD
 * header, 15.2.1.1 SA header, 15.2.5.16 PathRecord), never produced by the
 * codec itself. Prints result lines (tests/lib/result.sh); exit 1 on failure.
 *
 * Built by `make -C userspace/remote-sa test O=DIR`; run by tests/unit/run.
 */
#include "rsa_mad.h"

#include <stdio.h>
#include <string.h>

static int failed;

static void check(const char *name, int ok, const char *why)
{
	if (ok) {
		printf("ok unit-remote-sa-%s\n", name);
	} else {
		printf("not ok unit-remote-sa-%s - %s\n", name, why);
		failed++;
	}
}

/* Compare @n bytes; on a difference say where (for the failure message). */
static int same(const uint8_t *got, const uint8_t *exp, size_t n, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (got[i] != exp[i]) {
			snprintf(why, len, "byte %zu is 0x%02x, expected 0x%02x", i, got[i], exp[i]);
			return 0;
		}
	}
	snprintf(why, len, "equal");
	return 1;
}

/* Target (subnet B, prefix fe80:0:0:2) and requester (subnet A, prefix fe80:0:0:1). */
static const uint8_t gid_b[16] = {
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b, 0x01,
};
static const uint8_t gid_a[16] = {
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0a, 0x01,
};

/* ---- requests ------------------------------------------------------------ */

/* The protocol's PathRecord Get: class 0x0d, SGID = B (target), DGID = A. */
static const uint8_t req_default[RSA_MAD_LEN] = {
	[0] = 0x01,			/* 0  BaseVersion 1 */
	[1] = 0x0d,			/* 1  MgmtClass 0x0d (vendor range 1) */
	[2] = 0x01,			/* 2  ClassVersion 1 */
	[3] = 0x01,			/* 3  R=0, Method Get */
					/* 4  Status 0, 6 ClassSpecific 0 */
	[8] = 0x11, 0x22, 0x33, 0x44,	/* 8  TransactionID 0x1122334455667788 */
	      0x55, 0x66, 0x77, 0x88,
	[16] = 0x00, 0x35,		/* 16 AttributeID PathRecord */
					/* 18 reserved, 20 AttributeModifier 0 */
					/* 24..35 RMPP position: 0; 36..43 SM_Key 0 */
	[44] = 0x00, 0x08,		/* 44 AttributeOffset 8 (64 bytes / 8) */
					/* 46 reserved */
	[48] = 0x00, 0x00, 0x00, 0x00,	/* 48 ComponentMask: SGID (bit 3) | */
	       0x00, 0x00, 0x00, 0x0c,	/*    DGID (bit 2) = 0x0c */
					/* 56 PathRecord: 56 ServiceID 0 */
	[64] = 0xfe, 0x80, 0x00, 0x00,	/* 64 (record 8) DGID = requester A */
	       0x00, 0x00, 0x00, 0x01,
	       0x00, 0x02, 0xc9, 0x03,
	       0x00, 0x00, 0x0a, 0x01,
	[80] = 0xfe, 0x80, 0x00, 0x00,	/* 80 (record 24) SGID = target B */
	       0x00, 0x00, 0x00, 0x02,
	       0x00, 0x02, 0xc9, 0x03,
	       0x00, 0x00, 0x0b, 0x01,
					/* 96..255: 0 */
};

static void test_request_default(void)
{
	struct rsa_request rq;
	uint8_t mad[RSA_MAD_LEN];
	char why[96];

	rsa_request_init(&rq, RSA_CLASS_DEFAULT, 0x1122334455667788ull, gid_b, gid_a);
	memset(mad, 0xee, sizeof(mad));
	rsa_encode_request(&rq, mad);
	check("encode-request", same(mad, req_default, RSA_MAD_LEN, why, sizeof(why)), why);
	check("request-defaults",
	      rq.class_version == 1 && rq.method == 0x01 && rq.attr_id == 0x0035 &&
	      rq.attr_offset == 8 && rq.comp_mask == 0x0c && rq.sm_key == 0 &&
	      rq.attr_mod == 0 && rq.rmpp_fill == 0,
	      "rsa_request_init does not give the protocol's PathRecord Get");
}

/* The local SA's SubnAdmGet(PathRecord): class 0x03, version 2; A -> B. */
static void test_request_sa(void)
{
	struct rsa_request rq;
	uint8_t mad[RSA_MAD_LEN];
	static const uint8_t exp[24] = {
		0x01, 0x03, 0x02, 0x01,		/* 0  base 1, SubnAdm, version 2, Get */
		0x00, 0x00, 0x00, 0x00,		/* 4  Status, ClassSpecific */
		0x00, 0x00, 0x00, 0x00,		/* 8  TID 7 */
		0x00, 0x00, 0x00, 0x07,
		0x00, 0x35, 0x00, 0x00,		/* 16 PathRecord, reserved */
		0x00, 0x00, 0x00, 0x00,		/* 20 AttributeModifier */
	};
	char why[96];
	int ok;

	rsa_request_init(&rq, RSA_SA_CLASS, 7, gid_a, gid_b);
	rsa_encode_request(&rq, mad);
	ok = same(mad, exp, sizeof(exp), why, sizeof(why));
	/* SGID A at 56+24, DGID B at 56+8. */
	if (ok)
		ok = same(mad + 80, gid_a, 16, why, sizeof(why)) && same(mad + 64, gid_b, 16, why, sizeof(why));
	check("encode-sa-request", ok, why);
}

/* Every crafting field lands at its offset (tests send malformed requests). */
static void test_request_crafted(void)
{
	static const uint8_t exp[56] = {
		[0] = 0x01, 0x0e, 0x03, 0x12,	/* 0  base 1, class 0x0e, version 3, method 0x12 */
		[8] = 0x00, 0x00, 0x00, 0x00,	/* 8  TID 0x00000000cafef00d */
		      0xca, 0xfe, 0xf0, 0x0d,
		[16] = 0x00, 0x01,		/* 16 ClassPortInfo */
		[20] = 0xde, 0xad, 0xbe, 0xef,	/* 20 AttributeModifier */
		[24] = 0x5a, 0x5a, 0x5a, 0x5a,	/* 24..35 filled with 0x5a */
		       0x5a, 0x5a, 0x5a, 0x5a,
		       0x5a, 0x5a, 0x5a, 0x5a,
		[36] = 0x01, 0x02, 0x03, 0x04,	/* 36 SM_Key 0x0102030405060708 */
		       0x05, 0x06, 0x07, 0x08,
		[44] = 0x00, 0x07,		/* 44 AttributeOffset 7 */
		[48] = 0x80, 0x00, 0x00, 0x00,	/* 48 ComponentMask bit 63 | bit 23 */
		       0x00, 0x80, 0x00, 0x00,
	};
	struct rsa_request rq;
	uint8_t mad[RSA_MAD_LEN], zero[RSA_MAD_LEN] = { 0 };
	char why[96];
	int ok;

	rsa_request_init(&rq, 0x0e, 0xcafef00d, gid_b, gid_a);
	rq.class_version = 3;
	rq.method = 0x12;
	rq.attr_id = RSA_ATTR_CLASS_PORT_INFO;
	rq.attr_mod = 0xdeadbeef;
	rq.rmpp_fill = 0x5a;
	rq.sm_key = 0x0102030405060708ull;
	rq.attr_offset = 7;
	rq.comp_mask = 1ull << 63 | 1ull << 23;
	rsa_encode_request(&rq, mad);
	ok = same(mad, exp, sizeof(exp), why, sizeof(why));
	/* No PathRecord behind a ClassPortInfo request. */
	if (ok)
		ok = same(mad + 56, zero, RSA_MAD_LEN - 56, why, sizeof(why));
	check("encode-crafted-fields", ok, why);
}

/* ---- PathRecord fields (IBA 15.2.5.16) ------------------------------------ */

static int pr_equal(const struct rsa_pathrec *a, const struct rsa_pathrec *b, char *why, size_t len)
{
#define F(f) do { if (a->f != b->f) { snprintf(why, len, #f " is 0x%llx, expected 0x%llx", \
	(unsigned long long)a->f, (unsigned long long)b->f); return 0; } } while (0)
	F(service_id); F(dlid); F(slid); F(raw_traffic); F(flow_label); F(hop_limit);
	F(tclass); F(reversible); F(numb_path); F(pkey); F(qos_class); F(sl);
	F(mtu_selector); F(mtu); F(rate_selector); F(rate); F(plt_selector);
	F(packet_life); F(preference);
#undef F
	if (memcmp(a->dgid, b->dgid, 16)) {
		snprintf(why, len, "dgid differs");
		return 0;
	}
	if (memcmp(a->sgid, b->sgid, 16)) {
		snprintf(why, len, "sgid differs");
		return 0;
	}
	return 1;
}

/* A record with every field distinct, and its 64 bytes worked out by hand. */
static const uint8_t pr_all[RSA_PATHREC_LEN] = {
	[0] = 0x01, 0x02, 0x03, 0x04,	/* 0  ServiceID 0x0102030405060708 */
	      0x05, 0x06, 0x07, 0x08,
	[8] = 0x10, 0x11, 0x12, 0x13,	/* 8  DGID 10..1f */
	      0x14, 0x15, 0x16, 0x17,
	      0x18, 0x19, 0x1a, 0x1b,
	      0x1c, 0x1d, 0x1e, 0x1f,
	[24] = 0x20, 0x21, 0x22, 0x23,	/* 24 SGID 20..2f */
	       0x24, 0x25, 0x26, 0x27,
	       0x28, 0x29, 0x2a, 0x2b,
	       0x2c, 0x2d, 0x2e, 0x2f,
	[40] = 0xa1, 0xa2,		/* 40 DLID 0xa1a2 */
	[42] = 0xb1, 0xb2,		/* 42 SLID 0xb1b2 */
	[44] = 0x8a, 0xbc, 0xde, 0x3f,	/* 44 RawTraffic 1 (bit 31), 3 reserved bits,
					 *    FlowLabel 0xabcde (bits 27-8), HopLimit 0x3f */
	[48] = 0xc4,			/* 48 TClass 0xc4 */
	[49] = 0xc5,			/* 49 Reversible 1 (bit 7) | NumbPath 0x45 */
	[50] = 0x80, 0x01,		/* 50 P_Key 0x8001 */
	[52] = 0x9a, 0xbc,		/* 52 QoSClass 0x9ab (12 bits) | SL 0xc (4 bits) */
	[54] = 0x84,			/* 54 MTUSelector 2 (bits 7-6) | MTU 4 (2048) */
	[55] = 0x50,			/* 55 RateSelector 1 | Rate 16 (100 Gb/s) */
	[56] = 0xd2,			/* 56 PacketLifeTimeSelector 3 | PacketLifeTime 0x12 */
	[57] = 0x7e,			/* 57 Preference 0x7e; 58..63 reserved */
};

static const struct rsa_pathrec pr_all_fields = {
	.service_id = 0x0102030405060708ull,
	.dgid = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
		  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f },
	.sgid = { 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
		  0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f },
	.dlid = 0xa1a2, .slid = 0xb1b2, .raw_traffic = 1, .flow_label = 0xabcde,
	.hop_limit = 0x3f, .tclass = 0xc4, .reversible = 1, .numb_path = 0x45,
	.pkey = 0x8001, .qos_class = 0x9ab, .sl = 0xc, .mtu_selector = 2, .mtu = 4,
	.rate_selector = 1, .rate = 16, .plt_selector = 3, .packet_life = 0x12,
	.preference = 0x7e,
};

static void test_pathrec_all(void)
{
	uint8_t raw[RSA_PATHREC_LEN];
	struct rsa_pathrec pr;
	char why[96];

	rsa_pathrec_encode(&pr_all_fields, raw);
	check("pathrec-encode-all-fields", same(raw, pr_all, sizeof(raw), why, sizeof(why)), why);
	memset(&pr, 0x55, sizeof(pr));
	rsa_pathrec_decode(pr_all, &pr);
	check("pathrec-decode-all-fields", pr_equal(&pr, &pr_all_fields, why, sizeof(why)), why);
}

/*
 * One field at a time, set to more than its width holds: the encoder must
 * put exactly the field's bits (and no others) at its position; the decoder,
 * given only those bits, must give that field all ones and every other 0.
 */
struct field_case {
	const char *name;
	struct rsa_pathrec in;		/* the field over-wide */
	struct rsa_pathrec out;		/* the field as decoded: all ones */
	unsigned int off;		/* the bytes it occupies */
	uint8_t bytes[8];
	unsigned int n;
};

static const struct field_case fields[] = {
	{ "service-id", { .service_id = ~0ull }, { .service_id = ~0ull },
	  0, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8 },
	{ "dlid", { .dlid = 0xffff }, { .dlid = 0xffff }, 40, { 0xff, 0xff }, 2 },
	{ "slid", { .slid = 0xffff }, { .slid = 0xffff }, 42, { 0xff, 0xff }, 2 },
	/* Byte 44: RawTraffic bit 7, bits 6-4 reserved, FlowLabel bits 3-0. */
	{ "raw-traffic", { .raw_traffic = 0xff }, { .raw_traffic = 1 }, 44, { 0x80 }, 1 },
	{ "flow-label", { .flow_label = 0xffffffff }, { .flow_label = 0xfffff },
	  44, { 0x0f, 0xff, 0xff, 0x00 }, 4 },
	{ "hop-limit", { .hop_limit = 0xff }, { .hop_limit = 0xff }, 47, { 0xff }, 1 },
	{ "tclass", { .tclass = 0xff }, { .tclass = 0xff }, 48, { 0xff }, 1 },
	{ "reversible", { .reversible = 0xff }, { .reversible = 1 }, 49, { 0x80 }, 1 },
	{ "numb-path", { .numb_path = 0xff }, { .numb_path = 0x7f }, 49, { 0x7f }, 1 },
	{ "pkey", { .pkey = 0xffff }, { .pkey = 0xffff }, 50, { 0xff, 0xff }, 2 },
	{ "qos-class", { .qos_class = 0xffff }, { .qos_class = 0xfff }, 52, { 0xff, 0xf0 }, 2 },
	{ "sl", { .sl = 0xff }, { .sl = 0xf }, 52, { 0x00, 0x0f }, 2 },
	{ "mtu-selector", { .mtu_selector = 0xff }, { .mtu_selector = 3 }, 54, { 0xc0 }, 1 },
	{ "mtu", { .mtu = 0xff }, { .mtu = 0x3f }, 54, { 0x3f }, 1 },
	{ "rate-selector", { .rate_selector = 0xff }, { .rate_selector = 3 }, 55, { 0xc0 }, 1 },
	{ "rate", { .rate = 0xff }, { .rate = 0x3f }, 55, { 0x3f }, 1 },
	{ "plt-selector", { .plt_selector = 0xff }, { .plt_selector = 3 }, 56, { 0xc0 }, 1 },
	{ "packet-life", { .packet_life = 0xff }, { .packet_life = 0x3f }, 56, { 0x3f }, 1 },
	{ "preference", { .preference = 0xff }, { .preference = 0xff }, 57, { 0xff }, 1 },
};

static void test_pathrec_fields(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field_case *fc = &fields[i];
		uint8_t raw[RSA_PATHREC_LEN], exp[RSA_PATHREC_LEN] = { 0 };
		struct rsa_pathrec pr;
		char name[64], why[96];

		memcpy(exp + fc->off, fc->bytes, fc->n);
		rsa_pathrec_encode(&fc->in, raw);
		snprintf(name, sizeof(name), "pathrec-encode-%s", fc->name);
		check(name, same(raw, exp, sizeof(raw), why, sizeof(why)), why);
		rsa_pathrec_decode(exp, &pr);
		snprintf(name, sizeof(name), "pathrec-decode-%s", fc->name);
		check(name, pr_equal(&pr, &fc->out, why, sizeof(why)), why);
	}
	/* GIDs: DGID at 8, SGID at 24. */
	{
		struct rsa_pathrec in = { 0 }, pr;
		uint8_t raw[RSA_PATHREC_LEN];
		char why[96];
		int ok;

		memcpy(in.dgid, gid_a, 16);
		memcpy(in.sgid, gid_b, 16);
		rsa_pathrec_encode(&in, raw);
		ok = same(raw + 8, gid_a, 16, why, sizeof(why)) && same(raw + 24, gid_b, 16, why, sizeof(why));
		check("pathrec-encode-gids", ok, why);
		rsa_pathrec_decode(raw, &pr);
		check("pathrec-decode-gids", !memcmp(pr.dgid, gid_a, 16) && !memcmp(pr.sgid, gid_b, 16),
		      "DGID/SGID not read from bytes 8/24");
	}
}

/* ---- answers --------------------------------------------------------------- */

/*
 * B's service answers A: GetResp, TID with ib_mad's agent bits (0x2a) above
 * the requester's 7, the record from B's SA: SGID = B, DGID = A, DLID 17 (the
 * router's port on B), SLID 5 (B), HopLimit 255, Reversible, P_Key 0xffff,
 * SL 2, MTU = 1024 exactly, Rate = 10 Gb/s exactly, PacketLifeTime 0x12.
 */
static const uint8_t ans_record[RSA_MAD_LEN] = {
	[0] = 0x01, 0x0d, 0x01, 0x81,	/* 0  base 1, class 0x0d, version 1, GetResp */
	[4] = 0x00, 0x00,		/* 4  Status 0 */
	[8] = 0x00, 0x00, 0x00, 0x2a,	/* 8  TID 0x0000002a00000007 */
	      0x00, 0x00, 0x00, 0x07,
	[16] = 0x00, 0x35,		/* 16 PathRecord */
	[44] = 0x00, 0x08,		/* 44 AttributeOffset 8 */
	[48] = 0x00, 0x00, 0x00, 0x00,	/* 48 ComponentMask SGID|DGID */
	       0x00, 0x00, 0x00, 0x0c,
	[64] = 0xfe, 0x80, 0x00, 0x00,	/* 64 DGID = A */
	       0x00, 0x00, 0x00, 0x01,
	       0x00, 0x02, 0xc9, 0x03,
	       0x00, 0x00, 0x0a, 0x01,
	[80] = 0xfe, 0x80, 0x00, 0x00,	/* 80 SGID = B */
	       0x00, 0x00, 0x00, 0x02,
	       0x00, 0x02, 0xc9, 0x03,
	       0x00, 0x00, 0x0b, 0x01,
	[96] = 0x00, 0x11,		/* 96 (record 40) DLID 17 */
	[98] = 0x00, 0x05,		/* 98 (record 42) SLID 5 */
	[100] = 0x00, 0x00, 0x00, 0xff,	/* 100 (record 44) flow 0, HopLimit 255 */
	[105] = 0x80,			/* 105 (record 49) Reversible */
	[106] = 0xff, 0xff,		/* 106 (record 50) P_Key */
	[108] = 0x00, 0x02,		/* 108 (record 52) QoS 0, SL 2 */
	[110] = 0x83,			/* 110 (record 54) MTU exactly (2) 1024 (3) */
	[111] = 0x83,			/* 111 (record 55) Rate exactly 10 Gb/s (3) */
	[112] = 0x92,			/* 112 (record 56) PLT exactly 0x12 */
};

static void request_b_for_a(struct rsa_request *rq, uint64_t tid)
{
	rsa_request_init(rq, RSA_CLASS_DEFAULT, tid, gid_b, gid_a);
}

static void test_answer_record(void)
{
	struct rsa_request rq;
	struct rsa_answer ans;
	enum rsa_dec d;
	char why[96];

	request_b_for_a(&rq, 7);
	d = rsa_decode_answer(ans_record, sizeof(ans_record), &rq, &ans);
	check("decode-answer-ok", d == RSA_DEC_OK, rsa_dec_str(d));
	check("decode-answer-header",
	      ans.status == 0 && ans.tid == 0x0000002a00000007ull && ans.attr_id == 0x0035 &&
	      ans.attr_offset == 8 && ans.comp_mask == 0x0c && ans.class_version == 1,
	      "status, TID, attribute, offset or mask misread");
	check("decode-answer-record",
	      ans.has_record && ans.pr.dlid == 17 && ans.pr.slid == 5 && ans.pr.hop_limit == 255 &&
	      ans.pr.reversible == 1 && ans.pr.pkey == 0xffff && ans.pr.sl == 2 &&
	      ans.pr.mtu_selector == 2 && ans.pr.mtu == 3 && ans.pr.rate_selector == 2 &&
	      ans.pr.rate == 3 && ans.pr.plt_selector == 2 && ans.pr.packet_life == 0x12 &&
	      !memcmp(ans.pr.sgid, gid_b, 16) && !memcmp(ans.pr.dgid, gid_a, 16),
	      "record fields misread");
	snprintf(why, sizeof(why), "mtu %u rate %s", rsa_mtu_bytes(3), rsa_rate_str(3));
	check("mtu-rate-text", rsa_mtu_bytes(3) == 1024 && rsa_mtu_bytes(5) == 4096 &&
	      rsa_mtu_bytes(0) == 0 && !strcmp(rsa_rate_str(3), "10") &&
	      !strcmp(rsa_rate_str(16), "100") && !strcmp(rsa_rate_str(1), "?"), why);
}

/* @base with @n bytes at @off replaced. */
static void patched(uint8_t *mad, const uint8_t *base, unsigned int off, const uint8_t *b, unsigned int n)
{
	memcpy(mad, base, RSA_MAD_LEN);
	memcpy(mad + off, b, n);
}

static void test_answer_status(void)
{
	/* Status answers carry AttributeOffset 0 and no record. */
	static const uint8_t st_hdr[RSA_MAD_LEN] = {
		[0] = 0x01, 0x0d, 0x01, 0x81,	/* 0  GetResp */
		[4] = 0x00, 0x0c,		/* 4  Status 0x000c: method/attribute */
		[8] = 0x00, 0x00, 0x00, 0x2a,	/* 8  TID */
		      0x00, 0x00, 0x00, 0x07,
		[16] = 0x00, 0x35,		/* 16 PathRecord */
						/* 44 AttributeOffset 0 */
	};
	static const uint8_t st_gid[2] = { 0x05, 0x00 };	/* 0x0500 invalid GID */
	static const uint8_t st_busy[2] = { 0x00, 0x01 };
	struct rsa_request rq;
	struct rsa_answer ans;
	uint8_t mad[RSA_MAD_LEN];
	enum rsa_dec d;
	const char *s;

	request_b_for_a(&rq, 7);
	d = rsa_decode_answer(st_hdr, sizeof(st_hdr), &rq, &ans);
	check("decode-status-unsupported", d == RSA_DEC_OK && ans.status == 0x000c && !ans.has_record,
	      "status 0x000c not reported as such");
	patched(mad, st_hdr, 4, st_gid, 2);
	d = rsa_decode_answer(mad, sizeof(mad), &rq, &ans);
	check("decode-status-byte-order", d == RSA_DEC_OK && ans.status == 0x0500,
	      "status bytes 05 00 must read 0x0500");
	patched(mad, st_hdr, 4, st_busy, 2);
	d = rsa_decode_answer(mad, sizeof(mad), &rq, &ans);
	check("decode-status-busy", d == RSA_DEC_OK && ans.status == RSA_ST_BUSY, "busy misread");
	s = rsa_status_str(0x000c);
	check("status-text-unsupported", s && !strcmp(s, "unsupported method/attribute"), s ? s : "NULL");
	s = rsa_status_str(0x0500);
	check("status-text-invalid-gid", s && strstr(s, "invalid GID"), s ? s : "NULL");
	s = rsa_status_str(0x001c);
	check("status-text-invalid-field", s && strstr(s, "invalid attribute"), s ? s : "NULL");
	check("status-text-unknown", rsa_status_str(0x0900) == NULL, "0x0900 is not a defined code");
}

static void expect_reject(const char *name, const uint8_t *mad, size_t len,
			  const struct rsa_request *rq, enum rsa_dec want)
{
	struct rsa_answer ans;
	enum rsa_dec d = rsa_decode_answer(mad, len, rq, &ans);
	char why[128];

	snprintf(why, sizeof(why), "got '%s', expected '%s'", rsa_dec_str(d), rsa_dec_str(want));
	check(name, d == want && !ans.has_record, why);
}

static void test_answer_rejects(void)
{
	static const uint8_t get[1] = { 0x01 };			/* 3: Get, not GetResp */
	static const uint8_t resp82[1] = { 0x82 };		/* 3: not GetResp either */
	static const uint8_t ver2[1] = { 0x02 };			/* 2: ClassVersion 2 */
	static const uint8_t class0e[1] = { 0x0e };		/* 1: another class */
	static const uint8_t base2[1] = { 0x02 };		/* 0: BaseVersion 2 */
	static const uint8_t off0[2] = { 0x00, 0x00 };		/* 44: AttributeOffset 0 */
	static const uint8_t off7[2] = { 0x00, 0x07 };		/* 44: 7 (short) */
	static const uint8_t off9[2] = { 0x00, 0x09 };		/* 44: 9 */
	static const uint8_t attr36[2] = { 0x00, 0x36 };		/* 16: another attribute */
	static const uint8_t attr_cpi[2] = { 0x00, 0x01 };	/* 16: ClassPortInfo */
	static const uint8_t tid_lo[4] = { 0x00, 0x00, 0x00, 0x08 };	/* 12: low TID 8 */
	static const uint8_t tid_hi[4] = { 0x00, 0x00, 0x00, 0x2b };	/* 8: agent bits only */
	static const uint8_t st_ver[2] = { 0x00, 0x04 };		/* 4: bad version */
	static const uint8_t st_meth[2] = { 0x00, 0x08 };	/* 4: method unsupported */
	struct rsa_request rq, rq2;
	struct rsa_answer ans;
	uint8_t mad[RSA_MAD_LEN];
	enum rsa_dec d;

	request_b_for_a(&rq, 7);
	expect_reject("reject-short", ans_record, RSA_MAD_LEN - 1, &rq, RSA_DEC_SHORT);
	patched(mad, ans_record, 3, get, 1);
	expect_reject("reject-method-get", mad, sizeof(mad), &rq, RSA_DEC_METHOD);
	patched(mad, ans_record, 3, resp82, 1);
	expect_reject("reject-method-0x82", mad, sizeof(mad), &rq, RSA_DEC_METHOD);
	patched(mad, ans_record, 2, ver2, 1);
	expect_reject("reject-class-version", mad, sizeof(mad), &rq, RSA_DEC_CLASS_VERSION);
	patched(mad, ans_record, 1, class0e, 1);
	expect_reject("reject-class", mad, sizeof(mad), &rq, RSA_DEC_CLASS);
	patched(mad, ans_record, 0, base2, 1);
	expect_reject("reject-base-version", mad, sizeof(mad), &rq, RSA_DEC_BASE_VERSION);
	patched(mad, ans_record, 44, off0, 2);
	expect_reject("reject-attr-offset-0", mad, sizeof(mad), &rq, RSA_DEC_ATTR_OFFSET);
	patched(mad, ans_record, 44, off7, 2);
	expect_reject("reject-attr-offset-short", mad, sizeof(mad), &rq, RSA_DEC_ATTR_OFFSET);
	patched(mad, ans_record, 44, off9, 2);
	expect_reject("reject-attr-offset-long", mad, sizeof(mad), &rq, RSA_DEC_ATTR_OFFSET);
	patched(mad, ans_record, 16, attr36, 2);
	expect_reject("reject-attr", mad, sizeof(mad), &rq, RSA_DEC_ATTR);
	patched(mad, ans_record, 16, attr_cpi, 2);
	expect_reject("reject-attr-cpi-for-pr", mad, sizeof(mad), &rq, RSA_DEC_ATTR);
	patched(mad, ans_record, 12, tid_lo, 4);
	expect_reject("reject-tid", mad, sizeof(mad), &rq, RSA_DEC_TID);
	/* A reversed record (SGID = A, DGID = B) is not the answer asked for. */
	memcpy(mad, ans_record, RSA_MAD_LEN);
	memcpy(mad + 64, gid_b, 16);
	memcpy(mad + 80, gid_a, 16);
	expect_reject("reject-reversed-record", mad, sizeof(mad), &rq, RSA_DEC_GID);
	/* A record for another requester (DGID's last byte 0x02). */
	memcpy(mad, ans_record, RSA_MAD_LEN);
	mad[79] = 0x02;
	expect_reject("reject-other-requester", mad, sizeof(mad), &rq, RSA_DEC_GID);

	/* A Set is answered with GetResp, other methods with their R bit
	 * set (IBA 13.4.5): the "method unsupported" answers of the tests. */
	rq2 = rq;
	rq2.method = 0x02;			/* Set */
	patched(mad, ans_record, 4, st_meth, 2);
	mad[44] = mad[45] = 0;
	d = rsa_decode_answer(mad, sizeof(mad), &rq2, &ans);
	check("accept-set-getresp", d == RSA_DEC_OK && ans.status == 0x0008 && ans.method == 0x81,
	      rsa_dec_str(d));
	mad[3] = 0x82;				/* Set | R: tolerated */
	d = rsa_decode_answer(mad, sizeof(mad), &rq2, &ans);
	check("accept-set-0x82", d == RSA_DEC_OK && ans.status == 0x0008, rsa_dec_str(d));
	mad[3] = 0x83;
	expect_reject("reject-set-0x83", mad, sizeof(mad), &rq2, RSA_DEC_METHOD);
	rq2.method = 0x12;			/* GetTable */
	mad[3] = 0x92;
	d = rsa_decode_answer(mad, sizeof(mad), &rq2, &ans);
	check("accept-gettable-resp", d == RSA_DEC_OK && ans.status == 0x0008, rsa_dec_str(d));
	mad[3] = 0x81;
	expect_reject("reject-gettable-getresp", mad, sizeof(mad), &rq2, RSA_DEC_METHOD);
	check("resp-method", rsa_resp_method(0x01) == 0x81 && rsa_resp_method(0x02) == 0x81 &&
	      rsa_resp_method(0x12) == 0x92 && rsa_resp_method(0x15) == 0x95,
	      "Get/Set -> 0x81, others | 0x80");

	/* Accepted: other agent bits in the TID (ib_mad's), and a bad-version
	 * status answer in whatever version the responder's catch agent has. */
	patched(mad, ans_record, 8, tid_hi, 4);
	d = rsa_decode_answer(mad, sizeof(mad), &rq, &ans);
	check("accept-tid-agent-bits", d == RSA_DEC_OK && ans.has_record, rsa_dec_str(d));
	rq2 = rq;
	rq2.class_version = 3;
	patched(mad, ans_record, 4, st_ver, 2);
	mad[2] = 0x03;
	mad[44] = mad[45] = 0;
	d = rsa_decode_answer(mad, sizeof(mad), &rq2, &ans);
	check("accept-bad-version-status", d == RSA_DEC_OK && ans.status == 0x0004 && ans.class_version == 3,
	      rsa_dec_str(d));
	mad[2] = 0x01;
	d = rsa_decode_answer(mad, sizeof(mad), &rq2, &ans);
	check("accept-bad-version-status-v1", d == RSA_DEC_OK && ans.status == 0x0004, rsa_dec_str(d));
}

/* ClassPortInfo answer: AttributeOffset 0, the attribute at 56. */
static void test_answer_cpi(void)
{
	static const uint8_t cpi[RSA_MAD_LEN] = {
		[0] = 0x01, 0x0d, 0x01, 0x81,	/* 0  GetResp */
		[8] = 0x00, 0x00, 0x00, 0x2a,	/* 8  TID 0x2a00000009 */
		      0x00, 0x00, 0x00, 0x09,
		[16] = 0x00, 0x01,		/* 16 ClassPortInfo; 44 offset 0 */
		[56] = 0x01, 0x01,		/* 56 BaseVersion 1, ClassVersion 1 */
		       0x00, 0x00,		/* 58 CapabilityMask 0 */
		       0x00, 0x00, 0x00, 0xf2,	/* 60 CapMask2 7 (bits 31-5) | RespTimeValue 0x12 */
	};
	struct rsa_request rq;
	struct rsa_answer ans;
	uint8_t mad[RSA_MAD_LEN];
	enum rsa_dec d;

	rsa_request_init(&rq, RSA_CLASS_DEFAULT, 9, gid_b, gid_a);
	rq.attr_id = RSA_ATTR_CLASS_PORT_INFO;
	rq.attr_offset = 0;
	rq.comp_mask = 0;
	d = rsa_decode_answer(cpi, sizeof(cpi), &rq, &ans);
	check("decode-cpi", d == RSA_DEC_OK && ans.has_cpi && !ans.has_record &&
	      ans.cpi.base_version == 1 && ans.cpi.class_version == 1 && ans.cpi.cap_mask == 0 &&
	      ans.cpi.cap_mask2 == 7 && ans.cpi.resp_time == 0x12, "ClassPortInfo misread");
	memcpy(mad, cpi, sizeof(mad));
	mad[45] = 0x09;
	expect_reject("reject-cpi-attr-offset", mad, sizeof(mad), &rq, RSA_DEC_ATTR_OFFSET);
}

int main(void)
{
	test_request_default();
	test_request_sa();
	test_request_crafted();
	test_pathrec_all();
	test_pathrec_fields();
	test_answer_record();
	test_answer_status();
	test_answer_rejects();
	test_answer_cpi();
	return failed ? 1 : 0;
}
