// SPDX-License-Identifier: GPL-2.0-only
/* ib_remote_sa MAD codec; layout in rsa_mad.h and docs/remote-sa-protocol.md. */
#include "rsa_mad.h"

#include <string.h>

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

void rsa_request_init(struct rsa_request *rq, uint8_t mgmt_class, uint64_t tid,
		      const uint8_t sgid[16], const uint8_t dgid[16])
{
	memset(rq, 0, sizeof(*rq));
	rq->mgmt_class = mgmt_class;
	rq->class_version = mgmt_class == RSA_SA_CLASS ? RSA_SA_CLASS_VERSION : RSA_CLASS_VERSION;
	rq->method = RSA_METHOD_GET;
	rq->attr_id = RSA_ATTR_PATH_RECORD;
	rq->tid = tid;
	rq->attr_offset = RSA_PR_ATTR_OFFSET;
	rq->comp_mask = RSA_PR_SGID | RSA_PR_DGID;
	memcpy(rq->pr.sgid, sgid, 16);
	memcpy(rq->pr.dgid, dgid, 16);
}

void rsa_pathrec_encode(const struct rsa_pathrec *pr, uint8_t raw[RSA_PATHREC_LEN])
{
	memset(raw, 0, RSA_PATHREC_LEN);
	put64(raw, pr->service_id);
	memcpy(raw + 8, pr->dgid, 16);
	memcpy(raw + 24, pr->sgid, 16);
	put16(raw + 40, pr->dlid);
	put16(raw + 42, pr->slid);
	put32(raw + 44, (uint32_t)(pr->raw_traffic & 1) << 31 |
	      (pr->flow_label & 0xfffff) << 8 | pr->hop_limit);
	raw[48] = pr->tclass;
	raw[49] = (uint8_t)((pr->reversible & 1) << 7 | (pr->numb_path & 0x7f));
	put16(raw + 50, pr->pkey);
	put16(raw + 52, (uint16_t)((pr->qos_class & 0xfff) << 4 | (pr->sl & 0xf)));
	raw[54] = (uint8_t)((pr->mtu_selector & 3) << 6 | (pr->mtu & 0x3f));
	raw[55] = (uint8_t)((pr->rate_selector & 3) << 6 | (pr->rate & 0x3f));
	raw[56] = (uint8_t)((pr->plt_selector & 3) << 6 | (pr->packet_life & 0x3f));
	raw[57] = pr->preference;
}

void rsa_pathrec_decode(const uint8_t raw[RSA_PATHREC_LEN], struct rsa_pathrec *pr)
{
	uint32_t w = get32(raw + 44);

	memset(pr, 0, sizeof(*pr));
	pr->service_id = get64(raw);
	memcpy(pr->dgid, raw + 8, 16);
	memcpy(pr->sgid, raw + 24, 16);
	pr->dlid = get16(raw + 40);
	pr->slid = get16(raw + 42);
	pr->raw_traffic = (uint8_t)(w >> 31);
	pr->flow_label = (w >> 8) & 0xfffff;
	pr->hop_limit = (uint8_t)w;
	pr->tclass = raw[48];
	pr->reversible = raw[49] >> 7;
	pr->numb_path = raw[49] & 0x7f;
	pr->pkey = get16(raw + 50);
	pr->qos_class = get16(raw + 52) >> 4;
	pr->sl = raw[53] & 0xf;
	pr->mtu_selector = raw[54] >> 6;
	pr->mtu = raw[54] & 0x3f;
	pr->rate_selector = raw[55] >> 6;
	pr->rate = raw[55] & 0x3f;
	pr->plt_selector = raw[56] >> 6;
	pr->packet_life = raw[56] & 0x3f;
	pr->preference = raw[57];
}

void rsa_cpi_decode(const uint8_t raw[RSA_CPI_LEN], struct rsa_cpi *cpi)
{
	uint32_t w = get32(raw + 4);

	memset(cpi, 0, sizeof(*cpi));
	cpi->base_version = raw[0];
	cpi->class_version = raw[1];
	cpi->cap_mask = get16(raw + 2);
	cpi->cap_mask2 = w >> 5;
	cpi->resp_time = w & 0x1f;
}

void rsa_encode_request(const struct rsa_request *rq, uint8_t mad[RSA_MAD_LEN])
{
	memset(mad, 0, RSA_MAD_LEN);
	mad[0] = RSA_BASE_VERSION;
	mad[1] = rq->mgmt_class;
	mad[2] = rq->class_version;
	mad[3] = rq->method;
	/* 4: Status 0, 6: ClassSpecific 0 */
	put64(mad + RSA_OFF_TID, rq->tid);
	put16(mad + RSA_OFF_ATTR_ID, rq->attr_id);
	put32(mad + RSA_OFF_ATTR_MOD, rq->attr_mod);
	memset(mad + RSA_OFF_RMPP, rq->rmpp_fill, RSA_RMPP_LEN);
	put64(mad + RSA_OFF_SM_KEY, rq->sm_key);
	put16(mad + RSA_OFF_ATTR_OFFSET, rq->attr_offset);
	put64(mad + RSA_OFF_COMP_MASK, rq->comp_mask);
	if (rsa_attr_is_pathrec(rq->attr_id))
		rsa_pathrec_encode(&rq->pr, mad + RSA_OFF_DATA);
}

uint8_t rsa_resp_method(uint8_t method)
{
	if (method == RSA_METHOD_GET || method == RSA_METHOD_SET)
		return RSA_METHOD_GET_RESP;
	return method | 0x80;
}

enum rsa_dec rsa_decode_answer(const uint8_t *mad, size_t len,
			       const struct rsa_request *rq,
			       struct rsa_answer *ans)
{
	memset(ans, 0, sizeof(*ans));
	if (len < RSA_MAD_LEN)
		return RSA_DEC_SHORT;
	ans->method = mad[3];
	ans->class_version = mad[2];
	ans->status = get16(mad + RSA_OFF_STATUS);
	ans->tid = get64(mad + RSA_OFF_TID);
	ans->attr_id = get16(mad + RSA_OFF_ATTR_ID);
	ans->attr_offset = get16(mad + RSA_OFF_ATTR_OFFSET);
	ans->comp_mask = get64(mad + RSA_OFF_COMP_MASK);
	ans->sm_key = get64(mad + RSA_OFF_SM_KEY);
	if (mad[0] != RSA_BASE_VERSION)
		return RSA_DEC_BASE_VERSION;
	if (mad[1] != rq->mgmt_class)
		return RSA_DEC_CLASS;
	/* Tolerated: Set | R (0x82), as a responder that sets R bits answers. */
	if (mad[3] != rsa_resp_method(rq->method) && mad[3] != (rq->method | 0x80))
		return RSA_DEC_METHOD;
	/*
	 * A "bad class version" answer may carry any version; every other
	 * answer carries the request's.
	 */
	if (mad[2] != rq->class_version && (ans->status & 0x1c) != RSA_ST_BAD_VERSION)
		return RSA_DEC_CLASS_VERSION;
	/* ib_mad sets bits 63-32 of a request's TID to the agent's. */
	if ((uint32_t)ans->tid != (uint32_t)rq->tid)
		return RSA_DEC_TID;
	if (ans->attr_id != rq->attr_id)
		return RSA_DEC_ATTR;
	if (ans->status)
		return RSA_DEC_OK;
	if (rsa_attr_is_pathrec(ans->attr_id)) {
		if (ans->attr_offset != RSA_PR_ATTR_OFFSET)
			return RSA_DEC_ATTR_OFFSET;
		rsa_pathrec_decode(mad + RSA_OFF_DATA, &ans->pr);
		if (memcmp(ans->pr.sgid, rq->pr.sgid, 16) || memcmp(ans->pr.dgid, rq->pr.dgid, 16))
			return RSA_DEC_GID;
		ans->has_record = 1;
	} else if (ans->attr_id == RSA_ATTR_CLASS_PORT_INFO) {
		if (ans->attr_offset != 0)
			return RSA_DEC_ATTR_OFFSET;
		rsa_cpi_decode(mad + RSA_OFF_DATA, &ans->cpi);
		ans->has_cpi = 1;
	}
	return RSA_DEC_OK;
}

const char *rsa_dec_str(enum rsa_dec d)
{
	switch (d) {
	case RSA_DEC_OK: return "ok";
	case RSA_DEC_SHORT: return "shorter than 256 bytes";
	case RSA_DEC_BASE_VERSION: return "BaseVersion is not 1";
	case RSA_DEC_CLASS: return "not the request's management class";
	case RSA_DEC_CLASS_VERSION: return "not the request's class version";
	case RSA_DEC_METHOD: return "not the response method of the request's (GetResp for Get)";
	case RSA_DEC_TID: return "TransactionID is not the request's";
	case RSA_DEC_ATTR: return "not the request's attribute";
	case RSA_DEC_ATTR_OFFSET: return "AttributeOffset does not match the attribute";
	case RSA_DEC_GID: return "the record's SGID/DGID are not the request's";
	}
	return "?";
}

const char *rsa_status_str(uint16_t status)
{
	switch (status) {
	case 0: return "success";
	case RSA_ST_BUSY: return "busy";
	case RSA_ST_REDIRECT: return "redirect";
	case RSA_ST_BAD_VERSION: return "bad class version";
	case RSA_ST_METHOD: return "unsupported method";
	case RSA_ST_METHOD_ATTR: return "unsupported method/attribute";
	case RSA_ST_INVALID_FIELD: return "invalid attribute or attribute modifier value";
	case RSA_ST_NO_RESOURCES: return "no resources (the service's SA query failed)";
	case RSA_ST_REQ_INVALID: return "request invalid";
	case RSA_ST_NO_RECORDS: return "no records";
	case RSA_ST_TOO_MANY_RECORDS: return "too many records";
	case RSA_ST_INVALID_GID: return "invalid GID (not served)";
	case RSA_ST_INSUFFICIENT_COMP: return "insufficient components";
	case RSA_ST_DENIED: return "request denied";
	}
	return NULL;
}

unsigned int rsa_mtu_bytes(unsigned int mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

const char *rsa_rate_str(unsigned int rate)
{
	static const char *const r[] = {
		[2] = "2.5", [3] = "10", [4] = "30", [5] = "5", [6] = "20",
		[7] = "40", [8] = "60", [9] = "80", [10] = "120", [11] = "14",
		[12] = "56", [13] = "112", [14] = "168", [15] = "25",
		[16] = "100", [17] = "200", [18] = "300", [19] = "28",
		[20] = "50", [21] = "400", [22] = "600",
	};

	return rate < sizeof(r) / sizeof(r[0]) && r[rate] ? r[rate] : "?";
}
