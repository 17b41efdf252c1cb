/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ib_remote_sa wire format (docs/remote-sa-protocol.md): an SA-formatted
 * 256-byte MAD (IBA 13.4.2 common header, 15.2.1.1 SA header) in a
 * vendor-defined range-1 management class, carrying one PathRecord
 * (IBA 15.2.5.16) or ClassPortInfo (IBA 13.4.8.1). The same layout is the
 * local SA's SubnAdmGet(PathRecord) with class 0x03, version 2.
 *
 * Pure functions, no I/O: encode a request, decode and check an answer.
 */
#ifndef RSA_MAD_H
#define RSA_MAD_H

#include <stddef.h>
#include <stdint.h>

#define RSA_MAD_LEN		256
#define RSA_PATHREC_LEN		64
#define RSA_CPI_LEN		72

/* Byte offsets in the MAD. */
#define RSA_OFF_STATUS		4
#define RSA_OFF_TID		8
#define RSA_OFF_ATTR_ID		16
#define RSA_OFF_ATTR_MOD	20
#define RSA_OFF_RMPP		24	/* 12 bytes, reserved (0) in range 1 */
#define RSA_RMPP_LEN		12
#define RSA_OFF_SM_KEY		36
#define RSA_OFF_ATTR_OFFSET	44
#define RSA_OFF_COMP_MASK	48
#define RSA_OFF_DATA		56

#define RSA_BASE_VERSION	1
#define RSA_CLASS_DEFAULT	0x0d	/* vendor range 1: 0x09-0x0f */
#define RSA_CLASS_MIN		0x0b
#define RSA_CLASS_MAX		0x0f
#define RSA_CLASS_VERSION	1
#define RSA_SA_CLASS		0x03	/* SubnAdm, for the local query */
#define RSA_SA_CLASS_VERSION	2

#define RSA_METHOD_GET		0x01
#define RSA_METHOD_SET		0x02	/* not part of the protocol: tests */
#define RSA_METHOD_GET_RESP	0x81

#define RSA_ATTR_CLASS_PORT_INFO 0x0001
#define RSA_ATTR_PATH_RECORD	0x0035
/* A PathRecord Get answered through the router it came through. */
#define RSA_ATTR_PAIRED_PATH_RECORD 0xff02
/* NodePorts: the ports of a remote node (answered only with the key). */
#define RSA_ATTR_NODE_PORTS	0xff01

/* Attributes whose request and answer carry one PathRecord at byte 56. */
static inline int rsa_attr_is_pathrec(uint16_t attr_id)
{
	return attr_id == RSA_ATTR_PATH_RECORD ||
	       attr_id == RSA_ATTR_PAIRED_PATH_RECORD;
}

/*
 * Keyed Gets (NodePorts 0xff01, PairedPathRecord): answered only with the
 * requester's key in the SM_Key; without it, BUSY with the key in the
 * answer's SM_Key (docs/remote-sa-protocol.md, section 5.6).
 */
static inline int rsa_attr_is_keyed(uint16_t attr_id)
{
	return attr_id == RSA_ATTR_NODE_PORTS || attr_id == RSA_ATTR_PAIRED_PATH_RECORD;
}

#define RSA_QP1_QKEY		0x80010000u
#define RSA_PR_ATTR_OFFSET	(RSA_PATHREC_LEN / 8)

/* PathRecord ComponentMask bits (IBA table 206; ib_sa.h IB_SA_PATH_REC_*). */
#define RSA_PR_SERVICE_ID	(3ull << 0)	/* bits 0 and 1 */
#define RSA_PR_DGID		(1ull << 2)
#define RSA_PR_SGID		(1ull << 3)
#define RSA_PR_DLID		(1ull << 4)
#define RSA_PR_SLID		(1ull << 5)
#define RSA_PR_RAW_TRAFFIC	(1ull << 6)
#define RSA_PR_RESERVED7	(1ull << 7)
#define RSA_PR_FLOW_LABEL	(1ull << 8)
#define RSA_PR_HOP_LIMIT	(1ull << 9)
#define RSA_PR_TCLASS		(1ull << 10)
#define RSA_PR_REVERSIBLE	(1ull << 11)
#define RSA_PR_NUMB_PATH	(1ull << 12)
#define RSA_PR_PKEY		(1ull << 13)
#define RSA_PR_QOS_CLASS	(1ull << 14)
#define RSA_PR_SL		(1ull << 15)
#define RSA_PR_MTU_SELECTOR	(1ull << 16)
#define RSA_PR_MTU		(1ull << 17)
#define RSA_PR_RATE_SELECTOR	(1ull << 18)
#define RSA_PR_RATE		(1ull << 19)
#define RSA_PR_PLT_SELECTOR	(1ull << 20)
#define RSA_PR_PLT		(1ull << 21)
#define RSA_PR_PREFERENCE	(1ull << 22)

/* MAD status (IBA 13.4.7 table 118; SA class-specific codes 15.2.1.1). */
#define RSA_ST_BUSY		0x0001
#define RSA_ST_REDIRECT		0x0002
#define RSA_ST_BAD_VERSION	0x0004
#define RSA_ST_METHOD		0x0008
#define RSA_ST_METHOD_ATTR	0x000c
#define RSA_ST_INVALID_FIELD	0x001c
#define RSA_ST_NO_RESOURCES	0x0100
#define RSA_ST_REQ_INVALID	0x0200
#define RSA_ST_NO_RECORDS	0x0300
#define RSA_ST_TOO_MANY_RECORDS	0x0400
#define RSA_ST_INVALID_GID	0x0500
#define RSA_ST_INSUFFICIENT_COMP 0x0600
#define RSA_ST_DENIED		0x0700

struct rsa_pathrec {
	uint64_t service_id;	/* bytes 0-7 */
	uint8_t dgid[16];	/* bytes 8-23 */
	uint8_t sgid[16];	/* bytes 24-39 */
	uint16_t dlid;		/* bytes 40-41 */
	uint16_t slid;		/* bytes 42-43 */
	uint8_t raw_traffic;	/* byte 44 bit 7; bits 6-4 reserved */
	uint32_t flow_label;	/* 20 bits: byte 44 bits 3-0, bytes 45-46 */
	uint8_t hop_limit;	/* byte 47 */
	uint8_t tclass;		/* byte 48 */
	uint8_t reversible;	/* byte 49 bit 7 */
	uint8_t numb_path;	/* byte 49 bits 6-0 */
	uint16_t pkey;		/* bytes 50-51 */
	uint16_t qos_class;	/* 12 bits: byte 52, byte 53 bits 7-4 */
	uint8_t sl;		/* byte 53 bits 3-0 */
	uint8_t mtu_selector;	/* byte 54 bits 7-6 */
	uint8_t mtu;		/* byte 54 bits 5-0 */
	uint8_t rate_selector;	/* byte 55 bits 7-6 */
	uint8_t rate;		/* byte 55 bits 5-0 */
	uint8_t plt_selector;	/* byte 56 bits 7-6 */
	uint8_t packet_life;	/* byte 56 bits 5-0 */
	uint8_t preference;	/* byte 57; bytes 58-63 reserved */
};

/* The ClassPortInfo fields a requester reads (IBA 13.4.8.1). */
struct rsa_cpi {
	uint8_t base_version;	/* byte 0 */
	uint8_t class_version;	/* byte 1 */
	uint16_t cap_mask;	/* bytes 2-3 */
	uint32_t cap_mask2;	/* bytes 4-7 bits 31-5 (27 bits) */
	uint8_t resp_time;	/* byte 7 bits 4-0 */
};

/*
 * A request. rsa_request_init gives the protocol's PathRecord Get; the
 * other fields exist so that tests can send malformed requests.
 */
struct rsa_request {
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t tid;		/* the requester's; ib_mad rewrites bits 63-32 */
	uint8_t rmpp_fill;	/* written to bytes 24-35 (0 in a valid request) */
	uint64_t sm_key;
	uint16_t attr_offset;
	uint64_t comp_mask;
	struct rsa_pathrec pr;	/* when attr_id is PathRecord */
};

/* What an answer carried. */
struct rsa_answer {
	uint8_t method;
	uint8_t class_version;
	uint16_t status;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t attr_offset;
	uint64_t comp_mask;
	uint64_t sm_key;	/* the requester's key, in answers to keyed Gets */
	int has_record;		/* status 0 and a PathRecord */
	struct rsa_pathrec pr;
	int has_cpi;		/* status 0 and a ClassPortInfo */
	struct rsa_cpi cpi;
};

enum rsa_dec {
	RSA_DEC_OK = 0,
	RSA_DEC_SHORT,		/* fewer than 256 bytes */
	RSA_DEC_BASE_VERSION,
	RSA_DEC_CLASS,		/* not the request's management class */
	RSA_DEC_CLASS_VERSION,	/* not the request's class version */
	RSA_DEC_METHOD,		/* not the request's response method */
	RSA_DEC_TID,		/* low 32 bits differ from the request's */
	RSA_DEC_ATTR,		/* not the request's attribute */
	RSA_DEC_ATTR_OFFSET,	/* status 0 but AttributeOffset wrong */
	RSA_DEC_GID,		/* record's SGID/DGID are not the request's */
};

/* The protocol's request: PathRecord Get, ComponentMask SGID|DGID. */
void rsa_request_init(struct rsa_request *rq, uint8_t mgmt_class, uint64_t tid,
		      const uint8_t sgid[16], const uint8_t dgid[16]);

void rsa_pathrec_encode(const struct rsa_pathrec *pr, uint8_t raw[RSA_PATHREC_LEN]);
void rsa_pathrec_decode(const uint8_t raw[RSA_PATHREC_LEN], struct rsa_pathrec *pr);
void rsa_cpi_decode(const uint8_t raw[RSA_CPI_LEN], struct rsa_cpi *cpi);

/* Write the 256-byte MAD of @rq to @mad. */
void rsa_encode_request(const struct rsa_request *rq, uint8_t mad[RSA_MAD_LEN]);

/*
 * The method of the answer to a request of @method: GetResp (0x81) for Get
 * and Set, else @method with the R bit (IBA 13.4.5; ib_mad does the same).
 * rsa_decode_answer also accepts @method | 0x80 for a Set (0x82).
 */
uint8_t rsa_resp_method(uint8_t method);

/*
 * Decode @len bytes at @mad as the answer to @rq into @ans. A non-zero MAD
 * status is a valid answer (has_record 0, the rest not checked beyond the
 * header); RSA_DEC_OK otherwise means a well-formed record (or CPI). The
 * header fields of @ans are filled whenever @len is 256 bytes, also for a
 * malformed answer.
 */
enum rsa_dec rsa_decode_answer(const uint8_t *mad, size_t len,
			       const struct rsa_request *rq,
			       struct rsa_answer *ans);

const char *rsa_dec_str(enum rsa_dec d);

/* "unsupported method/attribute" etc.; NULL for an unknown code. */
const char *rsa_status_str(uint16_t status);

/* IB enums: MTU code -> bytes, rate code -> "Gb/s" text; 0/"?" unknown. */
unsigned int rsa_mtu_bytes(unsigned int mtu);
const char *rsa_rate_str(unsigned int rate);

#endif
