// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the ib_remote_sa MAD codec (userspace/remote-sa/rsa_mad.c)
 * that ib-remote-sa-query decodes untrusted answers with.
 *
 * Input: byte 0 chooses the request (below), the rest is the answer MAD as
 * it came off ib_umad, of any length. Properties, besides no memory error
 * or undefined behaviour:
 * - a short answer is RSA_DEC_SHORT with nothing filled in; otherwise the
 *   header fields are the answer's bytes;
 * - an accepted answer matches the request (class, TID, attribute) and
 *   carries a record only with status 0;
 * - a decoded PathRecord encodes back to its bytes, reserved bits cleared;
 * - the answer built from a request's own MAD (R bit set, status 0) is
 *   accepted with the request's record, for any request fields.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "rsa_mad.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* The PathRecord bytes with the reserved bits (IBA 15.2.5.16) cleared. */
static void pathrec_mask(const uint8_t *in, uint8_t out[RSA_PATHREC_LEN])
{
	memcpy(out, in, RSA_PATHREC_LEN);
	out[44] &= 0x8f;
	memset(out + 58, 0, RSA_PATHREC_LEN - 58);
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return 0;
	return 1;
}

/* Every decoded field fits its width in IBA 15.2.5.16. */
static void pathrec_widths(const struct rsa_pathrec *pr)
{
	FUZZ_CHECK(pr->raw_traffic < 2 && pr->flow_label < (1u << 20) && pr->reversible < 2 &&
		   pr->numb_path < 128 && pr->qos_class < (1u << 12) && pr->sl < 16 &&
		   pr->mtu_selector < 4 && pr->mtu < 64 && pr->rate_selector < 4 &&
		   pr->rate < 64 && pr->plt_selector < 4 && pr->packet_life < 64,
		   "a decoded PathRecord field is wider than its bits");
}

/* A decoded record encodes back to its bytes; decoding that is stable. */
static void pathrec_round_trip(const uint8_t *raw, const struct rsa_pathrec *pr)
{
	uint8_t want[RSA_PATHREC_LEN], got[RSA_PATHREC_LEN];
	struct rsa_pathrec again;

	pathrec_widths(pr);
	pathrec_mask(raw, want);
	rsa_pathrec_encode(pr, got);
	FUZZ_CHECK(!memcmp(got, want, sizeof(got)),
		   "PathRecord decode+encode changed bytes other than reserved ones");
	rsa_pathrec_decode(got, &again);
	FUZZ_CHECK(!memcmp(&again, pr, sizeof(again)),
		   "PathRecord decode is not stable over an encode");
}

/*
 * The request the answer is decoded against. Byte 0 of the input: bit 0
 * takes the answer's class (else the default vendor class), bit 1 the
 * SA class, bit 2 a Set, bit 3 ClassPortInfo, bit 4 the answer's TID,
 * bit 5 the answer's record GIDs (else zero GIDs). Taking values from the
 * answer lets inputs reach the checks behind the header ones.
 */
static void make_request(uint8_t sel, const uint8_t *mad, size_t len,
			 struct rsa_request *rq)
{
	static const uint8_t zero[16];
	int full = len >= RSA_MAD_LEN;
	uint8_t class = RSA_CLASS_DEFAULT;

	if (sel & 2)
		class = RSA_SA_CLASS;
	else if ((sel & 1) && full)
		class = mad[1];
	rsa_request_init(rq, class, (sel & 16) && full ? get64(mad + RSA_OFF_TID) : 0x1234,
			 (sel & 32) && full ? mad + RSA_OFF_DATA + 24 : zero,
			 (sel & 32) && full ? mad + RSA_OFF_DATA + 8 : zero);
	if (sel & 4)
		rq->method = RSA_METHOD_SET;
	if (sel & 8) {
		rq->attr_id = RSA_ATTR_CLASS_PORT_INFO;
		rq->attr_offset = 0;
		rq->comp_mask = 0;
	}
}

static void check_answer(const uint8_t *mad, size_t len, const struct rsa_request *rq)
{
	struct rsa_answer ans;
	enum rsa_dec d;
	const char *s;

	d = rsa_decode_answer(mad, len, rq, &ans);
	s = rsa_dec_str(d);
	FUZZ_CHECK(s && strcmp(s, "?"), "rsa_decode_answer returned a code rsa_dec_str does not name");
	if (len < RSA_MAD_LEN) {
		FUZZ_CHECK(d == RSA_DEC_SHORT, "a short answer is not RSA_DEC_SHORT");
		FUZZ_CHECK(all_zero(&ans, sizeof(ans)), "a short answer filled in fields");
		return;
	}
	FUZZ_CHECK(d != RSA_DEC_SHORT, "a 256-byte answer is RSA_DEC_SHORT");
	FUZZ_CHECK(ans.method == mad[3] && ans.class_version == mad[2] &&
		   ans.status == get16(mad + RSA_OFF_STATUS) &&
		   ans.tid == get64(mad + RSA_OFF_TID) &&
		   ans.attr_id == get16(mad + RSA_OFF_ATTR_ID) &&
		   ans.attr_offset == get16(mad + RSA_OFF_ATTR_OFFSET) &&
		   ans.comp_mask == get64(mad + RSA_OFF_COMP_MASK),
		   "the answer's header fields are not its bytes");
	(void)rsa_status_str(ans.status);
	FUZZ_CHECK(!(ans.has_record && ans.has_cpi), "an answer with both a record and a ClassPortInfo");
	if (d != RSA_DEC_OK) {
		FUZZ_CHECK(!ans.has_record && !ans.has_cpi, "a refused answer carries a record");
		return;
	}
	FUZZ_CHECK(mad[0] == RSA_BASE_VERSION && mad[1] == rq->mgmt_class &&
		   (uint32_t)ans.tid == (uint32_t)rq->tid && ans.attr_id == rq->attr_id,
		   "an accepted answer is not the answer to the request");
	FUZZ_CHECK(mad[3] == rsa_resp_method(rq->method) || mad[3] == (rq->method | 0x80),
		   "an accepted answer is not a response to the request's method");
	FUZZ_CHECK(mad[3] & 0x80, "an accepted answer is not a response");
	FUZZ_CHECK(mad[2] == rq->class_version || (ans.status & 0x1c) == RSA_ST_BAD_VERSION,
		   "an accepted answer of another class version that is no \"bad version\"");
	if (ans.status) {
		FUZZ_CHECK(!ans.has_record && !ans.has_cpi, "a record with a non-zero status");
		return;
	}
	if (ans.has_record) {
		FUZZ_CHECK(rsa_attr_is_pathrec(ans.attr_id) && ans.attr_offset == RSA_PR_ATTR_OFFSET,
			   "a record from an answer that is no PathRecord");
		FUZZ_CHECK(!memcmp(ans.pr.sgid, rq->pr.sgid, 16) && !memcmp(ans.pr.dgid, rq->pr.dgid, 16),
			   "a record for other GIDs than the request's");
		pathrec_round_trip(mad + RSA_OFF_DATA, &ans.pr);
	}
	if (ans.has_cpi)
		FUZZ_CHECK(ans.cpi.cap_mask2 < (1u << 27) && ans.cpi.resp_time < 32,
			   "ClassPortInfo fields wider than their bits");
}

/* Any request, its MAD, and the answer made of that MAD. */
static void check_request(const uint8_t *p, size_t len)
{
	uint8_t mad[RSA_MAD_LEN];
	struct rsa_request rq;
	struct rsa_answer ans;
	struct rsa_pathrec pr, want;
	enum rsa_dec d;
	size_t i;

	/* class, version, method, choices, attribute, modifier, TID, RMPP
	 * filler, SM_Key, AttributeOffset, ComponentMask, the record's fields */
	if (len < 102)
		return;
	memset(&rq, 0, sizeof(rq));
	rq.mgmt_class = p[0];
	rq.class_version = p[1];
	rq.method = p[2];
	rq.attr_id = !(p[3] & 1) ? get16(p + 4) :
		     p[3] & 4 ? RSA_ATTR_PAIRED_PATH_RECORD : RSA_ATTR_PATH_RECORD;
	rq.attr_mod = (uint32_t)get16(p + 6) << 16 | get16(p + 8);
	rq.tid = get64(p + 10);
	rq.rmpp_fill = p[18];
	rq.sm_key = get64(p + 19);
	rq.attr_offset = p[3] & 2 ? RSA_PR_ATTR_OFFSET : get16(p + 27);
	rq.comp_mask = get64(p + 29);
	/* the record's fields straight from the input, wider than their bits */
	memcpy(rq.pr.dgid, p + 37, 16);
	memcpy(rq.pr.sgid, p + 53, 16);
	rq.pr.service_id = get64(p + 69);
	rq.pr.dlid = get16(p + 77);
	rq.pr.slid = get16(p + 79);
	rq.pr.raw_traffic = p[81];
	rq.pr.flow_label = (uint32_t)get16(p + 82) << 16 | get16(p + 84);
	rq.pr.hop_limit = p[86];
	rq.pr.tclass = p[87];
	rq.pr.reversible = p[88];
	rq.pr.numb_path = p[89];
	rq.pr.pkey = get16(p + 90);
	rq.pr.qos_class = get16(p + 92);
	rq.pr.sl = p[94];
	rq.pr.mtu_selector = p[95];
	rq.pr.mtu = p[96];
	rq.pr.rate_selector = p[97];
	rq.pr.rate = p[98];
	rq.pr.plt_selector = p[99];
	rq.pr.packet_life = p[100];
	rq.pr.preference = p[101];
	/* what a record holding them has: each field cut to its bits */
	want = rq.pr;
	want.raw_traffic &= 1;
	want.flow_label &= 0xfffff;
	want.reversible &= 1;
	want.numb_path &= 0x7f;
	want.qos_class &= 0xfff;
	want.sl &= 0xf;
	want.mtu_selector &= 3;
	want.mtu &= 0x3f;
	want.rate_selector &= 3;
	want.rate &= 0x3f;
	want.plt_selector &= 3;
	want.packet_life &= 0x3f;

	rsa_encode_request(&rq, mad);
	FUZZ_CHECK(mad[0] == RSA_BASE_VERSION && mad[1] == rq.mgmt_class &&
		   mad[2] == rq.class_version && mad[3] == rq.method &&
		   all_zero(mad + RSA_OFF_STATUS, 4) && get64(mad + RSA_OFF_TID) == rq.tid &&
		   get16(mad + RSA_OFF_ATTR_ID) == rq.attr_id && all_zero(mad + 18, 2) &&
		   (uint32_t)get16(mad + RSA_OFF_ATTR_MOD) << 16 == (rq.attr_mod & 0xffff0000u) &&
		   get16(mad + RSA_OFF_ATTR_MOD + 2) == (rq.attr_mod & 0xffff) &&
		   get64(mad + RSA_OFF_SM_KEY) == rq.sm_key &&
		   get16(mad + RSA_OFF_ATTR_OFFSET) == rq.attr_offset &&
		   get64(mad + RSA_OFF_COMP_MASK) == rq.comp_mask,
		   "the request MAD's header is not the request's fields");
	for (i = 0; i < RSA_RMPP_LEN; i++)
		FUZZ_CHECK(mad[RSA_OFF_RMPP + i] == rq.rmpp_fill, "the RMPP bytes are not the filler");
	if (rsa_attr_is_pathrec(rq.attr_id)) {
		rsa_pathrec_decode(mad + RSA_OFF_DATA, &pr);
		FUZZ_CHECK(!memcmp(&pr, &want, sizeof(pr)),
			   "the request's record does not decode back, each field cut to its bits");
	} else {
		FUZZ_CHECK(all_zero(mad + RSA_OFF_DATA, RSA_MAD_LEN - RSA_OFF_DATA),
			   "data in a request that is no PathRecord");
	}

	/*
	 * The request's own MAD as the answer: R bit, the response method,
	 * and other TID bits 63-32 (ib_mad puts its own there).
	 */
	mad[3] = rsa_resp_method(rq.method);
	mad[RSA_OFF_TID] ^= p[3];
	d = rsa_decode_answer(mad, sizeof(mad), &rq, &ans);
	if (rsa_attr_is_pathrec(rq.attr_id)) {
		FUZZ_CHECK(d == (rq.attr_offset == RSA_PR_ATTR_OFFSET ? RSA_DEC_OK : RSA_DEC_ATTR_OFFSET),
			   "the answer echoing a PathRecord request: AttributeOffset misjudged");
		FUZZ_CHECK(ans.has_record == (d == RSA_DEC_OK), "an echoed PathRecord without a record");
		if (ans.has_record)
			FUZZ_CHECK(!memcmp(&ans.pr, &want, sizeof(pr)),
				   "the echoed record is not the request's");
	} else if (rq.attr_id == RSA_ATTR_CLASS_PORT_INFO) {
		FUZZ_CHECK(d == (rq.attr_offset == 0 ? RSA_DEC_OK : RSA_DEC_ATTR_OFFSET),
			   "the answer echoing a ClassPortInfo request: AttributeOffset misjudged");
		FUZZ_CHECK(ans.has_cpi == (d == RSA_DEC_OK), "an echoed ClassPortInfo not decoded");
	} else {
		FUZZ_CHECK(d == RSA_DEC_OK && !ans.has_record && !ans.has_cpi,
			   "the answer echoing a request of another attribute is refused");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsa_request rq;

	if (!size)
		return 0;
	make_request(data[0], data + 1, size - 1, &rq);
	check_answer(data + 1, size - 1, &rq);
	check_request(data + 1, size - 1);
	if (size > 2) {
		FUZZ_CHECK(rsa_rate_str(data[1]) != NULL, "rsa_rate_str gave NULL");
		FUZZ_CHECK(rsa_mtu_bytes(data[2]) == 0 ||
			   (data[2] >= 1 && data[2] <= 5 && rsa_mtu_bytes(data[2]) == 128u << data[2]),
			   "rsa_mtu_bytes out of the IB MTU enum");
	}
	return 0;
}
