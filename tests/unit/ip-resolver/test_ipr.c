// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit test of ib-routed-ipresolved's netlink codec
 * (userspace/ip-resolver/ipr_msg.c) and configuration parser (ipr_conf.c).
 * The requests are written out byte by byte as ib_core builds them (addr.c
 * ib_nl_ip_send_msg(), sa_query.c ib_nl_make_request(): nlmsghdr in host
 * order, the family header, then attributes with RDMA_NLA_F_MANDATORY),
 * and the answers compared with the bytes ib_core parses (addr.c
 * ib_nl_process_ip_rsep(): the DGID attribute right after the header;
 * sa_query.c: RDMA_NL_LS_F_ERR), never produced by the codec itself.
 * Prints result lines (tests/lib/result.sh); exit 1 on a failure.
 *
 * Built by `make -C userspace/ip-resolver test O=DIR`; run by tests/unit/run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipr_conf.h"
#include "ipr_msg.h"

/* ipr_decode takes buffers as nl_recv gives them: 4-byte aligned. */
#define IPR_ALIGNED __attribute__((aligned(4)))

static int failed;

static void check(const char *name, int ok, const char *why)
{
	if (ok) {
		printf("ok unit-ipr-%s\n", name);
	} else {
		printf("not ok unit-ipr-%s - %s\n", name, why);
		failed++;
	}
}

/* little-endian host order, as the kernel's nlmsghdr on x86_64 */
#define LE16(v) (uint8_t)((v) & 0xff), (uint8_t)((v) >> 8)
#define LE32(v) LE16((v) & 0xffff), LE16((uint32_t)(v) >> 16)

/* ---- requests as ib_core sends them --------------------------------------- */

/* addr.c: IP_RESOLVE for 10.2.0.1 on ifindex 5, seq 7. */
static const uint8_t req_v4[] IPR_ALIGNED = {
	LE32(28), LE16(0x1002), LE16(0x0001), LE32(7), LE32(0),
	LE32(5),				/* rdma_ls_ip_resolve_header */
	LE16(8), LE16(0x2009), 10, 2, 0, 1,	/* MANDATORY | LS_NLA_TYPE_IPV4 */
};

/* IPv6 fd00::b:1 on ifindex 3, seq 0x01020304. */
static const uint8_t req_v6[] IPR_ALIGNED = {
	LE32(40), LE16(0x1002), LE16(0x0001), LE32(0x01020304), LE32(0),
	LE32(3),
	LE16(20), LE16(0x200a), 0xfd, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0x0b, 0, 1,
};

static void test_decode_requests(void)
{
	struct ipr_req q;
	size_t used;
	enum ipr_kind k;

	k = ipr_decode(req_v4, sizeof(req_v4), &q, &used);
	check("decode-ipv4", k == IPR_IP_RESOLVE && q.family == AF_INET &&
	      !memcmp(q.addr, "\x0a\x02\x00\x01", 4) && q.ifindex == 5 &&
	      q.seq == 7 && q.op == 2 && used == sizeof(req_v4),
	      "IPv4 request misread");
	k = ipr_decode(req_v6, sizeof(req_v6), &q, &used);
	check("decode-ipv6", k == IPR_IP_RESOLVE && q.family == AF_INET6 &&
	      q.addr[0] == 0xfd && q.addr[13] == 0x0b && q.addr[15] == 1 &&
	      q.ifindex == 3 && q.seq == 0x01020304, "IPv6 request misread");
}

/* sa_query.c: a PathRecord query; family header (device name, port,
 * path use: 66 bytes, aligned 68), then SERVICE_ID/DGID/SGID attributes. */
static void test_decode_path_query(void)
{
	uint8_t m[16 + 68 + 12 + 20 + 20] IPR_ALIGNED = { 0 };
	const uint8_t hdr[] = { LE32(sizeof(m)), LE16(0x1000), LE16(0x0001),
				LE32(99), LE32(0) };
	struct ipr_req q;
	size_t used;
	enum ipr_kind k;

	memcpy(m, hdr, sizeof(hdr));
	memcpy(m + 16, "simfab0", 7);
	m[16 + 64] = 1;				/* port_num */
	m[84] = 12, m[86] = 0x03, m[87] = 0x20;	/* SERVICE_ID */
	m[96] = 20, m[98] = 0x04, m[99] = 0x20;	/* DGID */
	m[116] = 20, m[118] = 0x05, m[119] = 0x20;	/* SGID */
	k = ipr_decode(m, sizeof(m), &q, &used);
	check("decode-path-query", k == IPR_PATH_QUERY && q.seq == 99 &&
	      q.op == 0 && q.header_ok, "PathRecord query not recognised");
	/* a RESOLVE without its family header is counted, still answerable */
	m[0] = 16 + 8;
	k = ipr_decode(m, 16 + 8, &q, &used);
	check("path-query-short-answerable", k == IPR_MALFORMED && q.header_ok &&
	      q.op == 0 && q.seq == 99, "short RESOLVE not refusable");
}

static void expect_bad(const char *name, const uint8_t *m, size_t len,
		       const char *why_has)
{
	struct ipr_req q;
	size_t used;
	enum ipr_kind k = ipr_decode(m, len, &q, &used);
	char why[160];

	snprintf(why, sizeof(why), "kind %d, reason '%s' (want malformed: '%s')",
		 k, k == IPR_MALFORMED ? q.why : "", why_has);
	check(name, k == IPR_MALFORMED && strstr(q.why, why_has), why);
}

static void test_malformed(void)
{
	uint8_t m[64] IPR_ALIGNED;

	expect_bad("bad-short-header", req_v4, 10, "shorter than a netlink header");
	memcpy(m, req_v4, sizeof(req_v4));
	m[0] = 40;				/* claims more than there is */
	expect_bad("bad-len-beyond", m, sizeof(req_v4), "length out of bounds");
	m[0] = 8;				/* less than its own header */
	expect_bad("bad-len-below-header", m, sizeof(req_v4), "length out of bounds");
	memcpy(m, req_v4, sizeof(req_v4));
	m[0] = 18;
	expect_bad("bad-no-family-header", m, 18, "family header");
	m[0] = 20;
	expect_bad("bad-no-address", m, 20, "no address attribute");
	memcpy(m, req_v4, sizeof(req_v4));
	m[20] = 2;				/* nla_len below NLA_HDRLEN */
	expect_bad("bad-attr-len-small", m, sizeof(req_v4), "attribute length");
	m[20] = 12;				/* beyond the message */
	expect_bad("bad-attr-len-large", m, sizeof(req_v4), "attribute length");
	memcpy(m, req_v4, sizeof(req_v4));
	m[0] = 22;
	expect_bad("bad-attr-truncated", m, 22, "truncated attribute header");
	{
		uint8_t w[32] IPR_ALIGNED = { LE32(32), LE16(0x1002), LE16(1), LE32(1), LE32(0),
				  LE32(1), LE16(10), LE16(0x2009), 10, 2, 0, 1, 0, 0,
				  0, 0 };
		expect_bad("bad-ipv4-size", w, 32, "wrong size");
	}
	{
		uint8_t two[36] IPR_ALIGNED = { LE32(36), LE16(0x1002), LE16(1), LE32(1), LE32(0),
				    LE32(1), LE16(8), LE16(0x2009), 10, 2, 0, 1,
				    LE16(8), LE16(0x2009), 10, 2, 0, 2 };
		expect_bad("bad-two-addresses", two, 36, "more than one address");
	}
	{
		uint8_t mand[36] IPR_ALIGNED = { LE32(36), LE16(0x1002), LE16(1), LE32(1), LE32(0),
				     LE32(1), LE16(8), LE16(0x2007), 0, 0, 0, 0,
				     LE16(8), LE16(0x2009), 10, 2, 0, 2 };
		struct ipr_req q;
		size_t used;

		expect_bad("bad-unknown-mandatory", mand, 36, "unknown mandatory");
		mand[23] = 0x00;		/* the same attribute, optional */
		check("optional-unknown-ignored",
		      ipr_decode(mand, 36, &q, &used) == IPR_IP_RESOLVE &&
		      q.addr[3] == 2, "an optional unknown attribute was not skipped");
	}
}

static void test_other_messages(void)
{
	const uint8_t set_timeout[] IPR_ALIGNED = { LE32(16), LE16(0x1001), LE16(1), LE32(3), LE32(77) };
	const uint8_t nldev[] IPR_ALIGNED = { LE32(16), LE16(0x1401), LE16(1), LE32(3), LE32(0) };
	const uint8_t answer[] IPR_ALIGNED = { LE32(16), LE16(0x1000), LE16(0x0100), LE32(3), LE32(77) };
	const uint8_t eperm[] IPR_ALIGNED = { LE32(36), LE16(2), LE16(0), LE32(3), LE32(0),
				  LE32((uint32_t)-EPERM), LE32(36), LE16(0x1002), LE16(0),
				  LE32(3), LE32(0) };
	uint8_t two[sizeof(req_v4) + sizeof(req_v6)] IPR_ALIGNED;
	struct ipr_req q;
	size_t used;
	enum ipr_kind k;

	check("other-ls-op", ipr_decode(set_timeout, 16, &q, &used) == IPR_OTHER_LS &&
	      q.op == 1 && q.pid == 77, "SET_TIMEOUT not told apart");
	check("not-ls", ipr_decode(nldev, 16, &q, &used) == IPR_NOT_LS,
	      "an NLDEV message taken for LS");
	check("answer-of-another-listener", ipr_decode(answer, 16, &q, &used) == IPR_ANSWER,
	      "ibacm's answer taken for a request");
	k = ipr_decode(eperm, sizeof(eperm), &q, &used);
	check("kernel-error", k == IPR_KERNEL_ERROR && q.error == EPERM,
	      "NLMSG_ERROR -EPERM not decoded");
	memcpy(two, req_v4, sizeof(req_v4));
	memcpy(two + sizeof(req_v4), req_v6, sizeof(req_v6));
	k = ipr_decode(two, sizeof(two), &q, &used);
	check("two-in-one-datagram", k == IPR_IP_RESOLVE && used == sizeof(req_v4) &&
	      ipr_decode(two + used, sizeof(two) - used, &q, &used) == IPR_IP_RESOLVE &&
	      q.family == AF_INET6, "the second message was not found");
}

/* ---- answers --------------------------------------------------------------- */

static void test_encode(void)
{
	static const uint8_t gid[16] = { 0xfe, 0xc0, 0, 0, 0, 0, 0x0b, 0,
					 0x53, 0x46, 0, 0, 0, 0, 0x04, 0x01 };
	static const uint8_t want_gid[] = {
		LE32(36), LE16(0x1002), LE16(0), LE32(7), LE32(4242),
		LE16(20), LE16(4),		/* LS_NLA_TYPE_DGID, no flags */
		0xfe, 0xc0, 0, 0, 0, 0, 0x0b, 0, 0x53, 0x46, 0, 0, 0, 0, 0x04, 0x01,
	};
	static const uint8_t want_err[] = {
		LE32(16), LE16(0x1000), LE16(0x0100), LE32(99), LE32(4242),
	};
	uint8_t buf[64];
	size_t n;

	memset(buf, 0xee, sizeof(buf));
	n = ipr_encode_gid(buf, sizeof(buf), 7, 4242, gid);
	check("encode-gid", n == sizeof(want_gid) && !memcmp(buf, want_gid, n),
	      "GID answer bytes differ");
	n = ipr_encode_err(buf, sizeof(buf), 99, 4242, 0);
	check("encode-path-refusal", n == sizeof(want_err) && !memcmp(buf, want_err, n),
	      "RDMA_NL_LS_F_ERR answer bytes differ");
	check("encode-too-small", ipr_encode_gid(buf, 35, 7, 0, gid) == 0 &&
	      ipr_encode_err(buf, 15, 7, 0, 0) == 0, "wrote past the buffer");
}

/* ---- configuration --------------------------------------------------------- */

static char dir[] = "/tmp/test_ipr.XXXXXX";
static char made[16][64];
static int n_made;

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	if (n_made < 16)
		snprintf(made[n_made++], sizeof(made[0]), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static int has_gid(const struct ipr_conf *c, int family, const char *ip,
		   const char *want)
{
	uint8_t a[16] = { 0 }, g[16];
	const struct ipr_entry *e;

	if (inet_pton(family, ip, a) != 1 || inet_pton(AF_INET6, want, g) != 1)
		return 0;
	e = ipr_lookup(c, family, a);
	return e && !memcmp(e->gid, g, 16);
}

static int absent(const struct ipr_conf *c, int family, const char *ip)
{
	uint8_t a[16] = { 0 };

	return inet_pton(family, ip, a) == 1 && !ipr_lookup(c, family, a);
}

static const char good_conf[] =
	"# a comment\n"
	"host 10.2.0.9 fec0:0:0:b00:5346::909\n"
	"host 10.2.0.2 fec0:0:0:b00:5346::aaaa   # overrides b.hosts\n"
	"host fd00::b:1 fec0:0:0:b00:5346::401\n"
	"\n"
	"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts b.hosts\n"
	"path-queries refuse\n"
	"log-burst 3\n"
	"log-interval 5\n";

static const char good_hosts[] =
	"10.2.0.1 0x5346000000000401 b1\n"
	"10.2.0.2 0x5346000000000501 b2 b2-ib\n"
	"  10.2.0.7   fec0:0:0:b00:5346::701	# full GID\n"
	"10.2.0.8 0x1\n";

static void test_conf_good(void)
{
	struct ipr_conf c;
	char err[512] = "", path[256];
	int ok;

	put("b.hosts", good_hosts);
	put("good.conf", good_conf);
	snprintf(path, sizeof(path), "%s/good.conf", dir);
	ok = !ipr_conf_load(path, &c, err, sizeof(err));
	check("conf-load", ok, err);
	if (!ok)
		return;
	check("conf-counts", c.n_entries == 6 && c.n_subnets == 1 &&
	      c.subnets[0].entries == 4 && c.subnets[0].plen == 24,
	      "wrong entry or subnet count");
	check("conf-settings", c.path_mode == IPR_PATH_REFUSE && c.log_burst == 3 &&
	      c.log_interval == 5, "settings not taken");
	check("lookup-guid", has_gid(&c, AF_INET, "10.2.0.1", "fec0:0:0:b00:5346::401"),
	      "GUID not put behind the gid-prefix");
	check("lookup-small-guid", has_gid(&c, AF_INET, "10.2.0.8", "fec0:0:0:b00::1"),
	      "0x1 not the GUID 0x0000000000000001");
	check("lookup-full-gid", has_gid(&c, AF_INET, "10.2.0.7", "fec0:0:0:b00:5346::701"),
	      "a host file's full GID misread");
	check("lookup-static", has_gid(&c, AF_INET, "10.2.0.9", "fec0:0:0:b00:5346::909"),
	      "static entry not found");
	check("lookup-static-overrides-list",
	      has_gid(&c, AF_INET, "10.2.0.2", "fec0:0:0:b00:5346::aaaa"),
	      "the host file's entry won over the static one");
	check("lookup-ipv6", has_gid(&c, AF_INET6, "fd00::b:1", "fec0:0:0:b00:5346::401"),
	      "IPv6 entry not found");
	check("lookup-unknown", absent(&c, AF_INET, "10.2.0.3") &&
	      absent(&c, AF_INET, "10.1.0.1") && absent(&c, AF_INET6, "fd00::b:2"),
	      "an address nobody configured was found");
	ipr_conf_free(&c);

	ok = !ipr_conf_parse("", "empty", dir, &c, err, sizeof(err));
	check("conf-empty-defaults", ok && c.n_entries == 0 &&
	      c.path_mode == IPR_PATH_AUTO && c.log_burst == 10 && c.log_interval == 60,
	      "an empty file is not valid with the defaults");
	ipr_conf_free(&c);
}

/* @text must fail with @want (file:line: ...) in the message. */
static void expect_conf_err(const char *name, const char *text, const char *want)
{
	struct ipr_conf c;
	char err[200] = "", why[700];
	int r = ipr_conf_parse(text, "t.conf", dir, &c, err, sizeof(err));

	snprintf(why, sizeof(why), "got '%s', want '%s'", r ? err : "(accepted)", want);
	check(name, r && strstr(err, want) && c.n_entries == 0 && !c.entries,
	      why);
	if (!r)
		ipr_conf_free(&c);
}

static void test_conf_errors(void)
{
	put("outside.hosts", "10.2.0.1 0x1\n10.3.0.1 0x2\n");
	put("longguid.hosts", "10.2.0.1 0x12345678901234567\n");
	put("otherprefix.hosts", "10.2.0.1 fec0:0:0:a00::1\n");
	put("dup.hosts", "10.2.0.1 0x1\n10.2.0.1 0x2\n");
	put("noguid.hosts", "10.2.0.1\n");
	put("ok.hosts", "10.2.0.1 0x1\n");
	put("ok2.hosts", "10.2.0.1 0x2\n");

	expect_conf_err("err-keyword", "host 10.2.0.1 fec0::1\n\nresolve x\n",
			"t.conf:3: unknown keyword 'resolve'");
	expect_conf_err("err-address", "host 10.2.0.300 fec0::1\n", "t.conf:1: '10.2.0.300' is not an IP");
	expect_conf_err("err-gid", "host 10.2.0.1 0x5346\n", "t.conf:1: '0x5346' is not a GID");
	expect_conf_err("err-host-words", "host 10.2.0.1\n", "t.conf:1: want: host ADDRESS GID");
	expect_conf_err("err-subnet-syntax", "subnet 10.2.0.0/24 hosts ok.hosts\n",
			"t.conf:1: want: subnet");
	expect_conf_err("err-subnet-nolen",
			"subnet 10.2.0.0 gid-prefix fec0:0:0:b00:: hosts ok.hosts\n",
			"needs a /LEN");
	expect_conf_err("err-subnet-len",
			"subnet 10.2.0.0/33 gid-prefix fec0:0:0:b00:: hosts ok.hosts\n",
			"a prefix length of 1 to 32");
	expect_conf_err("err-host-bits",
			"subnet 10.2.0.1/24 gid-prefix fec0:0:0:b00:: hosts ok.hosts\n",
			"has host bits set");
	expect_conf_err("err-gid-prefix",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00::1 hosts ok.hosts\n",
			"is not a GID prefix");
	expect_conf_err("err-hosts-missing",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts none.hosts\n",
			"none.hosts: No such file");
	expect_conf_err("err-hosts-outside",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts outside.hosts\n",
			"outside.hosts:2: 10.3.0.1 is not in the subnet's prefix");
	expect_conf_err("err-hosts-long-guid",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts longguid.hosts\n",
			"longguid.hosts:1: '0x12345678901234567' is neither");
	expect_conf_err("err-hosts-other-prefix",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts otherprefix.hosts\n",
			"otherprefix.hosts:1: GID fec0:0:0:a00::1 is not on the subnet's gid-prefix");
	expect_conf_err("err-hosts-no-guid",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts noguid.hosts\n",
			"noguid.hosts:1: want: ADDRESS GUID|GID");
	expect_conf_err("err-dup-in-list",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts dup.hosts\n",
			"address 10.2.0.1 given twice (in ");
	expect_conf_err("err-dup-across-lists",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts ok.hosts\n"
			"subnet 10.2.0.0/25 gid-prefix fec0:0:0:b00:: hosts ok2.hosts\n",
			"address 10.2.0.1 given twice");
	expect_conf_err("err-dup-static",
			"host 10.2.0.1 fec0::1\nhost 10.2.0.1 fec0::2\n",
			"address 10.2.0.1 given twice");
	expect_conf_err("err-subnet-twice",
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts ok.hosts\n"
			"subnet 10.2.0.0/24 gid-prefix fec0:0:0:b00:: hosts ok2.hosts\n",
			"t.conf:2: subnet 10.2.0.0/24 given twice");
	expect_conf_err("err-path-queries", "path-queries sometimes\n",
			"t.conf:1: path-queries: 'sometimes' is not auto, refuse or ignore");
	expect_conf_err("err-log-burst", "log-burst 0\n", "t.conf:1: want: log-burst N");
	expect_conf_err("err-log-interval", "log-interval -5\n", "want: log-interval SECONDS");
	expect_conf_err("err-too-many-words",
			"host 10.2.0.1 fec0::1 a b c d e f\n", "t.conf:1: want: host ADDRESS GID");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_decode_requests();
	test_decode_path_query();
	test_malformed();
	test_other_messages();
	test_encode();
	test_conf_good();
	test_conf_errors();
	for (int i = 0; i < n_made; i++) {
		char path[1100];

		snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
		unlink(path);
	}
	rmdir(dir);
	return failed ? 1 : 0;
}
