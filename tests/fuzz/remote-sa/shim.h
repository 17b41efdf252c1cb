/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough of the kernel for ib_remote_sa's request and answer
 * decoders (the responder's rsa_resp_recv_handler() of remote_sa.c and
 * the client's rsa_client_recv_handler() of remote_sa_client.c, as the
 * 6.1 series leaves them, cut out by tests/fuzz/remote-sa/extract) and the
 * series' own remote_sa_priv.h to compile on the host for the fuzz
 * targets fuzz_rsa_request.c and fuzz_rsa_answer.c, on top of
 * tests/fuzz/lib/kshim.h. What the kernel would do (allocate, create an
 * address handle, send, ask the SA, look up a GID) is a hook the harness
 * defines (fuzz_*), so that it sees every such call.
 */
#ifndef IBR_REMOTE_SA_SHIM_H
#define IBR_REMOTE_SA_SHIM_H

#include "../lib/kshim.h"

/* trace points: nothing */
#define trace_rsa_resp_answer(...)	do { } while (0)
#define trace_rsa_resp_request(...)	do { } while (0)
#define trace_rsa_client_done(...)	do { } while (0)
#define trace_rsa_client_send(...)	do { } while (0)

/* ---- what the kernel does, as the harness sees it ------------------------ */
void *fuzz_kzalloc(size_t n);
void fuzz_kfree(const void *p);
struct ib_ah *fuzz_create_ah(const struct ib_wc *wc, const struct ib_grh *grh);
void fuzz_destroy_ah(struct ib_ah *ah);
struct ib_mad_send_buf *fuzz_create_send_mad(struct ib_mad_agent *agent, u32 qpn,
					     u16 pkey_index, int hdr_len,
					     int data_len);
int fuzz_post_send_mad(struct ib_mad_send_buf *msg);
void fuzz_free_send_mad(struct ib_mad_send_buf *msg);
void fuzz_free_recv_mad(struct ib_mad_recv_wc *wc);
int fuzz_query_gid(u32 port, int index, union ib_gid *gid);
int fuzz_find_gid(u32 port, const union ib_gid *gid);
int fuzz_cached_pkey(u32 port, u16 index, u16 *pkey);
extern u32 fuzz_nports;

#define kzalloc(n, f)			fuzz_kzalloc(n)
#define kfree(p)			fuzz_kfree(p)
#define ib_create_ah_from_wc(pd, wc, grh, port)	fuzz_create_ah(wc, grh)
#define rdma_destroy_ah(ah, f)		fuzz_destroy_ah(ah)
#define RDMA_DESTROY_AH_SLEEPABLE	1
#define ib_create_send_mad(a, qpn, pki, rmpp, hl, dl, gfp, bv)		\
	fuzz_create_send_mad(a, qpn, pki, hl, dl)
#define ib_post_send_mad(m, bad)	fuzz_post_send_mad(m)
#define ib_free_send_mad(m)		fuzz_free_send_mad(m)
#define ib_free_recv_mad(wc)		fuzz_free_recv_mad(wc)
#define rdma_query_gid(dev, port, index, gid)	((void)(dev), fuzz_query_gid(port, index, gid))
#define ib_get_cached_pkey(dev, port, index, pkey)	((void)(dev), fuzz_cached_pkey(port, index, pkey))
#define rdma_for_each_port(dev, p)	for (p = 1; p <= fuzz_nports; p++)
#define rdma_cap_ib_sa(dev, p)		((void)(dev), (void)(p), 1)

static inline const struct ib_gid_attr *
rdma_find_gid_by_port(struct ib_device *dev, const union ib_gid *gid,
		      enum ib_gid_type type, u32 port, void *ndev)
{
	static struct ib_gid_attr found;

	(void)dev;
	(void)type;
	(void)ndev;
	if (!fuzz_find_gid(port, gid))
		return ERR_PTR(-ENOENT);
	found.gid = *gid;
	return &found;
}

#define rdma_put_gid_attr(a)		((void)(a))

/*
 * The requester keys (remote_sa.c rsa_requester_key()): SipHash-2-4 of
 * two words, as lib/siphash.c computes siphash_2u64(), so that the
 * harness's oracle gets the key the responder wants from the same secret.
 */
typedef struct { u64 key[2]; } siphash_key_t;

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = v1 << 13 | v1 >> 51; v1 ^= v0; v0 = v0 << 32 | v0 >> 32; \
	v2 += v3; v3 = v3 << 16 | v3 >> 48; v3 ^= v2;			\
	v0 += v3; v3 = v3 << 21 | v3 >> 43; v3 ^= v0;			\
	v2 += v1; v1 = v1 << 17 | v1 >> 47; v1 ^= v2; v2 = v2 << 32 | v2 >> 32; \
} while (0)

static inline u64 siphash_2u64(u64 first, u64 second, const siphash_key_t *key)
{
	u64 v0 = 0x736f6d6570736575ULL ^ key->key[0];
	u64 v1 = 0x646f72616e646f6dULL ^ key->key[1];
	u64 v2 = 0x6c7967656e657261ULL ^ key->key[0];
	u64 v3 = 0x7465646279746573ULL ^ key->key[1];
	u64 m[3] = { first, second, 16ULL << 56 };
	int i;

	for (i = 0; i < 3; i++) {
		v3 ^= m[i];
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

#define get_random_bytes(p, n)		memset(p, 0x5a, n)

#endif
