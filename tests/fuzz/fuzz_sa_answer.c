// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: ib_remote_sa's SA answer reader, rsa_sa_recv_handler()
 * of the 6.1 series' drivers/infiniband/core/remote_sa_sa.c (cut out by
 * tests/fuzz/sa-answer/extract, compiled through its shim), fed what
 * ib_mad hands an agent: a received MAD, or the segments of an RMPP
 * transfer and the length ib_mad computed for them (at most 56 + 200 per
 * segment, any less), for a query of either method and record size.
 *
 * Input: byte 0 the query (bit 0: GetTable, else Get; bit 1: a 108-byte
 * NodeRecord, else a 64-byte PathRecord), byte 1 the segments (1-4),
 * bytes 2-3 mad_len (big endian, capped as ib_mad caps it), then the
 * segments' 256 bytes each (missing bytes are 0).
 *
 * Properties, besides no memory error or undefined behaviour (every
 * segment is a buffer of exactly 256 bytes, and the records handed on are
 * read to their last byte):
 * - the callback runs exactly once;
 * - records only with status 0 and MAD status 0, from an answer of the
 *   query's response method and attribute, whose AttributeOffset is at
 *   least the record size, n * AttributeOffset within the payload, one
 *   record for a Get, a table only by RMPP and of whole records;
 * - record i is the payload's bytes at i * AttributeOffset;
 * - a refused answer (-EPROTO) is counted once in sa_bad_answers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "shim.h"

extern void (*fuzz_sa_recv_handler)(struct ib_mad_agent *, struct ib_mad_send_buf *,
				    struct ib_mad_recv_wc *);

/* The head of struct rsa_sa_query (the extracted file's layout). */
struct rsa_sa_query {
	struct rsa_port		*port;
	struct rsa_sm_ah	*sm_ah;
	rsa_sa_callback		callback;
	void			*context;
	u16			attr_id;
	u8			method;
	u8			rec_size;
};

#define MAX_SEGS	4
#define SEG		256

static struct {
	int calls;
	int status;
	u16 mad_status;
	unsigned int n;
	u8 *copy;
} got;

static void callback(int status, u16 mad_status, const u8 *data, unsigned int n, void *context)
{
	size_t size = (size_t)*(const u8 *)context;

	got.calls++;
	got.status = status;
	got.mad_status = mad_status;
	got.n = n;
	free(got.copy);
	got.copy = NULL;
	FUZZ_CHECK(!n || data, "records without data");
	if (n) {
		/* every byte handed on is read: ASan sees a short buffer */
		got.copy = malloc(n * ALIGN(size, 8));
		memcpy(got.copy, data, n * ALIGN(size, 8));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	struct ib_mad_recv_buf segs[MAX_SEGS];
	u8 *bufs[MAX_SEGS] = {0};
	struct ib_device device = {0};
	struct rsa_device rsa_dev = { .device = &device };
	struct rsa_port port = { .rsa_dev = &rsa_dev, .port_num = 1 };
	struct ib_mad_agent agent = { .context = &port };
	struct ib_mad_send_buf send = {0};
	struct ib_mad_recv_wc wc = {0};
	struct rsa_sa_query query = {0};
	const struct ib_sa_mad *mad;
	u8 rec_size, *payload;
	int nsegs, i, mad_len, max;
	size_t plen, stride, size, off;

	if (len < 4)
		return 0;
	query.port = &port;
	query.callback = callback;
	query.method = in[0] & 1 ? IB_SA_METHOD_GET_TABLE : IB_MGMT_METHOD_GET;
	query.attr_id = in[0] & 2 ? 0x0011 : 0x0035;
	rec_size = in[0] & 2 ? 108 : 64;
	query.rec_size = rec_size;
	query.context = &rec_size;
	nsegs = 1 + in[1] % MAX_SEGS;
	max = IB_MGMT_SA_HDR + nsegs * (SEG - IB_MGMT_SA_HDR);
	mad_len = (in[2] << 8 | in[3]) % (max + 1);
	in += 4;
	len -= 4;

	wc.rmpp_list.next = wc.rmpp_list.prev = &wc.rmpp_list;
	for (i = 0; i < nsegs; i++) {
		size_t take = len > SEG ? SEG : len;

		bufs[i] = calloc(1, SEG);
		memcpy(bufs[i], in, take);
		in += take;
		len -= take;
		segs[i].mad = (struct ib_mad *)bufs[i];
		segs[i].list.prev = wc.rmpp_list.prev;
		segs[i].list.next = &wc.rmpp_list;
		wc.rmpp_list.prev->next = &segs[i].list;
		wc.rmpp_list.prev = &segs[i].list;
	}
	wc.recv_buf = segs[0];
	wc.mad_len = mad_len;
	wc.mad_seg_size = SEG;
	send.context[0] = &query;
	memset(&got, 0, sizeof(got));

	fuzz_sa_recv_handler(&agent, &send, &wc);

	mad = (const struct ib_sa_mad *)bufs[0];
	FUZZ_CHECK(got.calls == 1, "the callback did not run exactly once");
	FUZZ_CHECK(send.context[1] == &query, "the query is not marked answered");
	FUZZ_CHECK((got.status == -EPROTO) == (port.counters[RSA_CNT_SA_BAD_ANSWERS] == 1),
		   "a refused answer not counted once, or a counted one not refused");
	FUZZ_CHECK(port.counters[RSA_CNT_SA_BAD_ANSWERS] <= 1, "counted twice");
	if (got.n) {
		FUZZ_CHECK(!got.status && !got.mad_status, "records with an error");
		FUZZ_CHECK(mad->mad_hdr.method == (query.method | IB_MGMT_METHOD_RESP),
			   "records from another method's answer");
		FUZZ_CHECK(be16_to_cpu(mad->mad_hdr.attr_id) == query.attr_id,
			   "records from another attribute's answer");
		stride = (size_t)be16_to_cpu(mad->sa_hdr.attr_offset) * 8;
		size = ALIGN(rec_size, 8);
		plen = mad_len > IB_MGMT_SA_HDR ? (size_t)mad_len - IB_MGMT_SA_HDR : 0;
		FUZZ_CHECK(stride >= rec_size, "AttributeOffset shorter than the record");
		FUZZ_CHECK(got.n * stride <= plen, "records past the payload");
		if (query.method == IB_MGMT_METHOD_GET) {
			FUZZ_CHECK(got.n == 1, "a Get's answer with more than one record");
		} else {
			FUZZ_CHECK(mad->rmpp_hdr.rmpp_rtime_flags & IB_MGMT_RMPP_FLAG_ACTIVE,
				   "a table not sent by RMPP");
			FUZZ_CHECK(plen % stride == 0 && got.n == plen / stride,
				   "a table of other than whole records");
		}
		/* record i is the joined payload at i * stride */
		payload = calloc(1, plen + 1);
		for (i = 0, off = 0; i < nsegs && off < plen; i++) {
			size_t c = plen - off < SEG - IB_MGMT_SA_HDR ? plen - off : SEG - IB_MGMT_SA_HDR;

			memcpy(payload + off, bufs[i] + IB_MGMT_SA_HDR, c);
			off += c;
		}
		for (i = 0; i < (int)got.n; i++)
			FUZZ_CHECK(!memcmp(got.copy + i * size, payload + i * stride, size),
				   "a record is not the payload's bytes at its offset");
		free(payload);
	} else if (!got.status && !got.mad_status) {
		/* no records and no error: an empty table, only */
		FUZZ_CHECK(query.method == IB_SA_METHOD_GET_TABLE, "a Get's answer without a record");
	}
	for (i = 0; i < nsegs; i++)
		free(bufs[i]);
	free(got.copy);
	got.copy = NULL;
	return 0;
}
