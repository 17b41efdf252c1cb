// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib-remote-sa-query: send the ib_remote_sa PathRecord Get (the "return
 * path query", docs/remote-sa-protocol.md) to the ib_remote_sa service on a
 * remote IB subnet and print its answer like `saquery PR`.
 *
 *   1. open the umad port (-C, -P) and register a SubnAdm and a vendor-class
 *      agent;
 *   2. ask the local SA for the path to the service GID (SGID = our port GID
 *      index 0): DLID = our subnet's router port, SL, P_Key, HopLimit;
 *   3. send the vendor-class Get on QP1 with a GRH to that DLID: SGID = the
 *      target, DGID = us; print the record or the status.
 *
 * Exit status (ib-remote-sa-query(8)): 0 record, 1 MAD status, 2 timeout,
 * 3 usage, 4 local error, 5 malformed answer.
 */
#include "rsa_mad.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>

#ifndef IBR_VERSION
#define IBR_VERSION "unknown"
#endif

enum {
	EX_RECORD = 0,
	EX_STATUS = 1,
	EX_TIMEOUT = 2,
	EX_USAGE = 3,
	EX_LOCAL = 4,
	EX_MALFORMED = 5,
};

static const char *prog = "ib-remote-sa-query";

/* Options. */
static const char *opt_ca;
static int opt_port;
static int opt_kv;
static int opt_verbose;
static unsigned int opt_timeout = 2000;
static unsigned int opt_retries = 2;
static unsigned int opt_class = RSA_CLASS_DEFAULT;
static int opt_no_grh;
static long opt_dlid = -1;
/* Crafting (-1: the protocol's value). */
static long long opt_class_version = -1, opt_method = -1, opt_attr = -1,
	opt_attr_offset = -1, opt_attr_mod = -1, opt_rmpp = -1;
static int have_comp_mask, have_sm_key;
static uint64_t opt_comp_mask, opt_sm_key;
static int have_service, have_dgid;
static uint8_t target_gid[16], service_gid[16], req_dgid[16];

/* State. */
static int portid = -1;
static uint8_t local_gid[16];
static uint32_t next_tid = 1;
static struct timespec t_start;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-C CA] [-P PORT] [--service GID] [--timeout MS] [--retries N]\n"
		"       [--class CLASS] [--kv] [-v] TARGET_GID\n"
		"Ask the ib_remote_sa service on TARGET_GID's subnet for the path from\n"
		"TARGET_GID back to this port (see ib-remote-sa-query(8)).\n"
		"Exit status: 0 record, 1 MAD status, 2 timeout, 3 usage, 4 local error,\n"
		"5 malformed answer.\n", prog);
}

/* The options that craft requests the protocol forbids, for the project's
 * own tests of the service: not in --help, which is for administrators. */
static void usage_test(FILE *f)
{
	fprintf(f,
		"%s: options for protocol tests (malformed requests on purpose):\n"
		"  [--class-version N] [--method M] [--attr ID] [--comp-mask MASK]\n"
		"  [--attr-offset N] [--attr-mod N] [--sm-key K] [--rmpp-byte VALUE]\n"
		"  [--no-grh] [--dlid LID] [--dgid GID]\n", prog);
}

static long elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t_start.tv_sec) * 1000 + (now.tv_nsec - t_start.tv_nsec) / 1000000;
}

static void gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* Print "result=error" (with --kv) and the message; return EX_LOCAL. */
static int local_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (opt_kv)
		printf("result=error\nstatus=none\nerror=%s\n", msg);
	fprintf(stderr, "%s: %s\n", prog, msg);
	return EX_LOCAL;
}

static int parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static void bad_value(const char *opt, const char *val)
{
	fprintf(stderr, "%s: invalid value '%s' for %s\n", prog, val, opt);
	usage(stderr);
	exit(EX_USAGE);
}

static unsigned long long num_arg(const char *opt, const char *val, unsigned long long max)
{
	unsigned long long v;

	if (parse_u64(val, max, &v))
		bad_value(opt, val);
	return v;
}

static void gid_arg(const char *opt, const char *val, uint8_t gid[16])
{
	if (inet_pton(AF_INET6, val, gid) != 1)
		bad_value(opt, val);
}

/* ---- MAD transactions ------------------------------------------------- */

struct dest {
	uint16_t dlid;
	uint8_t sl;
	uint16_t pkey_index;
	int grh;
	uint8_t dgid[16];
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
};

enum xact { X_ANSWER, X_TIMEOUT, X_ERROR };

/*
 * Send @req (256 bytes) from @agent to @d on QP1 and wait for the answer;
 * ib_mad retries @retries times after @timeout_ms each. The answer's MAD
 * goes to @ans (256 bytes, *anslen its length).
 */
static enum xact transact(int agent, const uint8_t *req, uint32_t tid, const struct dest *d,
			  unsigned int timeout_ms, unsigned int retries,
			  uint8_t *ans, int *anslen, char *err, size_t errlen)
{
	size_t sz = umad_size() + RSA_MAD_LEN;
	void *snd = calloc(1, sz), *rcv = calloc(1, sz);
	ib_mad_addr_t *a;
	enum xact ret = X_ERROR;
	long deadline;
	int r;

	if (!snd || !rcv) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	memcpy(umad_get_mad(snd), req, RSA_MAD_LEN);
	umad_set_addr(snd, d->dlid, 1, d->sl, (int)RSA_QP1_QKEY);
	umad_set_pkey(snd, d->pkey_index);
	a = umad_get_mad_addr(snd);
	if (d->grh) {
		a->grh_present = 1;
		a->gid_index = 0;
		memcpy(a->gid, d->dgid, 16);
		a->hop_limit = d->hop_limit;
		a->traffic_class = d->tclass;
		a->flow_label = htonl(d->flow_label);
	}
	if (umad_send(portid, agent, snd, RSA_MAD_LEN, (int)timeout_ms, (int)retries) < 0) {
		snprintf(err, errlen, "umad_send: %s", strerror(errno));
		goto out;
	}
	/* ib_mad reports the timeout itself; the deadline is a safety net. */
	deadline = elapsed_ms() + (long)timeout_ms * (retries + 1) + 5000;
	for (;;) {
		long left = deadline - elapsed_ms();
		int len = RSA_MAD_LEN;
		uint8_t *m;

		if (left <= 0) {
			ret = X_TIMEOUT;
			break;
		}
		r = umad_recv(portid, rcv, &len, left > INT_MAX ? INT_MAX : (int)left);
		if (r == -ETIMEDOUT) {
			ret = X_TIMEOUT;
			break;
		}
		if (r < 0) {
			snprintf(err, errlen, "umad_recv: %s", strerror(-r));
			break;
		}
		m = umad_get_mad(rcv);
		if (r != agent || len < 16 ||
		    (uint32_t)((uint32_t)m[12] << 24 | (uint32_t)m[13] << 16 |
			       (uint32_t)m[14] << 8 | m[15]) != tid)
			continue;	/* not ours (an older try's late answer) */
		if (umad_status(rcv) == ETIMEDOUT) {
			ret = X_TIMEOUT;
			break;
		}
		if (umad_status(rcv)) {
			snprintf(err, errlen, "send failed: %s", strerror(umad_status(rcv)));
			break;
		}
		memcpy(ans, m, (size_t)len < RSA_MAD_LEN ? (size_t)len : RSA_MAD_LEN);
		*anslen = len;
		ret = X_ANSWER;
		break;
	}
out:
	free(snd);
	free(rcv);
	return ret;
}

/* The P_Key table index of @pkey (a full member's entry first), or -1. */
static int pkey_index(const umad_port_t *p, uint16_t pkey)
{
	unsigned int i;
	int part = -1;

	for (i = 0; i < p->pkeys_size; i++) {
		if (p->pkeys[i] == pkey)
			return (int)i;
		if (part < 0 && (p->pkeys[i] & 0x7fff) == (pkey & 0x7fff) && (pkey & 0x7fff))
			part = (int)i;
	}
	return part;
}

/* ---- output ------------------------------------------------------------ */

static void print_record(const struct rsa_pathrec *pr)
{
	char d[INET6_ADDRSTRLEN], s[INET6_ADDRSTRLEN];

	gid_str(pr->dgid, d, sizeof(d));
	gid_str(pr->sgid, s, sizeof(s));
	printf("PathRecord dump:\n");
	printf("\t\tservice_id..............0x%016" PRIx64 "\n", pr->service_id);
	printf("\t\tdgid....................%s\n", d);
	printf("\t\tsgid....................%s\n", s);
	printf("\t\tdlid....................%u\n", pr->dlid);
	printf("\t\tslid....................%u\n", pr->slid);
	printf("\t\thop_flow_raw............0x%X\n",
	       (unsigned int)pr->raw_traffic << 31 | pr->flow_label << 8 | pr->hop_limit);
	printf("\t\ttclass..................0x%X\n", pr->tclass);
	printf("\t\tnum_path_revers.........0x%X\n",
	       (unsigned int)pr->reversible << 7 | pr->numb_path);
	printf("\t\tpkey....................0x%X\n", pr->pkey);
	printf("\t\tqos_class...............0x%X\n", pr->qos_class);
	printf("\t\tsl......................0x%X\n", pr->sl);
	printf("\t\tmtu.....................0x%X\n", (unsigned int)pr->mtu_selector << 6 | pr->mtu);
	printf("\t\trate....................0x%X\n", (unsigned int)pr->rate_selector << 6 | pr->rate);
	printf("\t\tpkt_life................0x%X\n",
	       (unsigned int)pr->plt_selector << 6 | pr->packet_life);
	printf("\t\tpreference..............0x%X\n", pr->preference);
}

static void kv_record(const struct rsa_pathrec *pr)
{
	char g[INET6_ADDRSTRLEN];

	printf("service_id=0x%016" PRIx64 "\n", pr->service_id);
	gid_str(pr->dgid, g, sizeof(g));
	printf("dgid=%s\n", g);
	gid_str(pr->sgid, g, sizeof(g));
	printf("sgid=%s\n", g);
	printf("dlid=%u\nslid=%u\nraw_traffic=%u\nflow_label=0x%05x\nhop_limit=%u\n",
	       pr->dlid, pr->slid, pr->raw_traffic, pr->flow_label, pr->hop_limit);
	printf("tclass=%u\nreversible=%u\nnumb_path=%u\npkey=0x%04x\nqos_class=%u\nsl=%u\n",
	       pr->tclass, pr->reversible, pr->numb_path, pr->pkey, pr->qos_class, pr->sl);
	printf("mtu_selector=%u\nmtu=%u\nmtu_bytes=%u\n", pr->mtu_selector, pr->mtu,
	       rsa_mtu_bytes(pr->mtu));
	printf("rate_selector=%u\nrate=%u\nrate_gbps=%s\n", pr->rate_selector, pr->rate,
	       rsa_rate_str(pr->rate));
	printf("pkt_life_selector=%u\npkt_life=%u\npreference=%u\n", pr->plt_selector,
	       pr->packet_life, pr->preference);
}

static void print_cpi(const struct rsa_cpi *c)
{
	if (opt_kv) {
		printf("cpi_base_version=%u\ncpi_class_version=%u\ncpi_cap_mask=0x%04x\n"
		       "cpi_resp_time=%u\n", c->base_version, c->class_version, c->cap_mask,
		       c->resp_time);
		return;
	}
	printf("ClassPortInfo dump:\n");
	printf("\t\tbase_version............0x%X\n", c->base_version);
	printf("\t\tclass_version...........0x%X\n", c->class_version);
	printf("\t\tcap_mask................0x%X\n", c->cap_mask);
	printf("\t\tresp_time_val...........0x%X\n", c->resp_time);
}

/* ---- the query ----------------------------------------------------------- */

int main(int argc, char **argv)
{
	enum {
		O_SERVICE = 256, O_TIMEOUT, O_RETRIES, O_CLASS, O_KV, O_CLASS_VERSION,
		O_METHOD, O_ATTR, O_COMP_MASK, O_ATTR_OFFSET, O_ATTR_MOD, O_SM_KEY,
		O_RMPP, O_NO_GRH, O_DLID, O_DGID, O_VERSION, O_HELP_TEST,
	};
	static const struct option longopts[] = {
		{ "Ca", required_argument, NULL, 'C' },
		{ "Port", required_argument, NULL, 'P' },
		{ "service", required_argument, NULL, O_SERVICE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "retries", required_argument, NULL, O_RETRIES },
		{ "class", required_argument, NULL, O_CLASS },
		{ "kv", no_argument, NULL, O_KV },
		{ "verbose", no_argument, NULL, 'v' },
		{ "class-version", required_argument, NULL, O_CLASS_VERSION },
		{ "method", required_argument, NULL, O_METHOD },
		{ "attr", required_argument, NULL, O_ATTR },
		{ "comp-mask", required_argument, NULL, O_COMP_MASK },
		{ "attr-offset", required_argument, NULL, O_ATTR_OFFSET },
		{ "attr-mod", required_argument, NULL, O_ATTR_MOD },
		{ "sm-key", required_argument, NULL, O_SM_KEY },
		{ "rmpp-byte", required_argument, NULL, O_RMPP },
		{ "no-grh", no_argument, NULL, O_NO_GRH },
		{ "dlid", required_argument, NULL, O_DLID },
		{ "dgid", required_argument, NULL, O_DGID },
		{ "version", no_argument, NULL, O_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ "help-test", no_argument, NULL, O_HELP_TEST },
		{ NULL, 0, NULL, 0 },
	};
	char tg[INET6_ADDRSTRLEN], sg[INET6_ADDRSTRLEN], lg[INET6_ADDRSTRLEN], err[160];
	uint8_t mad[RSA_MAD_LEN], ans[RSA_MAD_LEN];
	struct rsa_request sq, rq;
	struct rsa_answer sa, ra;
	struct dest d;
	umad_port_t port;
	int sa_agent, vs_agent, anslen, c, idx, tries;
	enum rsa_dec dec;
	enum xact x;
	uint16_t fwd_pkey = 0xffff;
	unsigned long long v;

	clock_gettime(CLOCK_MONOTONIC, &t_start);
	while ((c = getopt_long(argc, argv, "C:P:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': opt_ca = optarg; break;
		case 'P': opt_port = (int)num_arg("-P", optarg, 254); break;
		case 'v': opt_verbose = 1; break;
		case 'h': usage(stdout); return 0;
		case O_HELP_TEST: usage_test(stdout); return 0;
		case 'V':
		case O_VERSION: printf("%s %s\n", prog, IBR_VERSION); return 0;
		case O_SERVICE: gid_arg("--service", optarg, service_gid); have_service = 1; break;
		case O_TIMEOUT: opt_timeout = (unsigned int)num_arg("--timeout", optarg, 600000); break;
		case O_RETRIES: opt_retries = (unsigned int)num_arg("--retries", optarg, 100); break;
		case O_CLASS:
			opt_class = (unsigned int)num_arg("--class", optarg, 0xff);
			if (opt_class < 0x09 || opt_class > 0x0f)
				bad_value("--class (vendor range 1: 0x09-0x0f)", optarg);
			break;
		case O_KV: opt_kv = 1; break;
		case O_CLASS_VERSION: opt_class_version = (long long)num_arg("--class-version", optarg, 0xff); break;
		case O_METHOD: opt_method = (long long)num_arg("--method", optarg, 0xff); break;
		case O_ATTR: opt_attr = (long long)num_arg("--attr", optarg, 0xffff); break;
		case O_COMP_MASK: opt_comp_mask = num_arg("--comp-mask", optarg, UINT64_MAX); have_comp_mask = 1; break;
		case O_ATTR_OFFSET: opt_attr_offset = (long long)num_arg("--attr-offset", optarg, 0xffff); break;
		case O_ATTR_MOD: opt_attr_mod = (long long)num_arg("--attr-mod", optarg, 0xffffffffu); break;
		case O_SM_KEY: opt_sm_key = num_arg("--sm-key", optarg, UINT64_MAX); have_sm_key = 1; break;
		case O_RMPP: opt_rmpp = (long long)num_arg("--rmpp-byte", optarg, 0xff); break;
		case O_NO_GRH: opt_no_grh = 1; break;
		case O_DLID:
			opt_dlid = (long)num_arg("--dlid", optarg, 0xffff);
			if (opt_dlid == 0)
				bad_value("--dlid", optarg);
			break;
		case O_DGID: gid_arg("--dgid", optarg, req_dgid); have_dgid = 1; break;
		default: usage(stderr); return EX_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s: exactly one TARGET_GID expected\n", prog);
		usage(stderr);
		return EX_USAGE;
	}
	gid_arg("TARGET_GID", argv[optind], target_gid);
	if (!have_service)
		memcpy(service_gid, target_gid, 16);
	gid_str(target_gid, tg, sizeof(tg));
	gid_str(service_gid, sg, sizeof(sg));

	/* 1. The port and the agents. */
	if (umad_init() < 0)
		return local_error("umad_init failed (is ib_umad loaded?)");
	if (umad_get_port(opt_ca, opt_port, &port) < 0)
		return local_error("no umad port %s/%d (no InfiniBand device, or ib_umad not loaded)",
				   opt_ca ? opt_ca : "(default CA)", opt_port);
	memcpy(local_gid, &port.gid_prefix, 8);
	memcpy(local_gid + 8, &port.port_guid, 8);
	gid_str(local_gid, lg, sizeof(lg));
	portid = umad_open_port(port.ca_name, port.portnum);
	if (portid < 0)
		return local_error("cannot open umad port %s/%d", port.ca_name, port.portnum);
	sa_agent = umad_register(portid, RSA_SA_CLASS, RSA_SA_CLASS_VERSION, 1, NULL);
	vs_agent = umad_register(portid, (int)opt_class, RSA_CLASS_VERSION, 0, NULL);
	if (sa_agent < 0 || vs_agent < 0)
		return local_error("cannot register MAD agents on %s/%d (class 0x%02x)",
				   port.ca_name, port.portnum, opt_class);
	if (opt_kv)
		printf("ca=%s\nport=%d\nrequester=%s\ntarget=%s\nservice=%s\nclass=0x%02x\n",
		       port.ca_name, port.portnum, lg, tg, sg, opt_class);

	/* 2. The local half: our SA's path to the service. */
	memset(&d, 0, sizeof(d));
	if (opt_dlid > 0) {
		d.dlid = (uint16_t)opt_dlid;
		d.hop_limit = 0xff;
	} else {
		rsa_request_init(&sq, RSA_SA_CLASS, next_tid, local_gid, service_gid);
		rsa_encode_request(&sq, mad);
		d.dlid = (uint16_t)port.sm_lid;
		d.sl = (uint8_t)port.sm_sl;
		idx = pkey_index(&port, 0xffff);
		d.pkey_index = (uint16_t)(idx < 0 ? 0 : idx);
		x = transact(sa_agent, mad, next_tid++, &d, opt_timeout, opt_retries, ans, &anslen,
			     err, sizeof(err));
		if (x == X_TIMEOUT)
			return local_error("local SA (LID %u) did not answer the PathRecord query for %s",
					   port.sm_lid, sg);
		if (x == X_ERROR)
			return local_error("local SA query: %s", err);
		dec = rsa_decode_answer(ans, (size_t)anslen, &sq, &sa);
		if (dec != RSA_DEC_OK)
			return local_error("local SA answer malformed: %s", rsa_dec_str(dec));
		if (sa.status)
			return local_error("local SA has no path to %s: status 0x%04x: %s", sg,
					   sa.status, rsa_status_str(sa.status) ? rsa_status_str(sa.status) : "unknown");
		memset(&d, 0, sizeof(d));
		d.dlid = sa.pr.dlid;
		d.sl = sa.pr.sl;
		d.hop_limit = sa.pr.hop_limit ? sa.pr.hop_limit : 0xff;
		d.tclass = sa.pr.tclass;
		d.flow_label = sa.pr.flow_label;
		/*
		 * The Get travels in the default partition, which every port
		 * shares: the path's own P_Key is only known to be shared with
		 * the router (docs/remote-sa-protocol.md, section 6).
		 */
		fwd_pkey = 0xffff;
		idx = pkey_index(&port, fwd_pkey);
		if (idx < 0) {
			fwd_pkey = 0x7fff;
			idx = pkey_index(&port, fwd_pkey);
		}
		if (idx < 0)
			return local_error("port %s/%d is not a member of the default partition",
					   port.ca_name, port.portnum);
		d.pkey_index = (uint16_t)idx;
	}
	d.grh = !opt_no_grh;
	memcpy(d.dgid, service_gid, 16);
	if (opt_kv)
		printf("local_dlid=%u\nlocal_sl=%u\nlocal_pkey=0x%04x\nlocal_pkey_index=%u\n"
		       "local_hop_limit=%u\ngrh=%d\n", d.dlid, d.sl, fwd_pkey, d.pkey_index,
		       d.hop_limit, d.grh);
	if (opt_verbose)
		fprintf(stderr, "%s: to service %s via DLID %u SL %u P_Key 0x%04x (index %u)"
			" hop limit %u%s\n", prog, sg, d.dlid, d.sl, fwd_pkey, d.pkey_index,
			d.hop_limit, d.grh ? "" : ", no GRH");

	/* 3. The remote half: the vendor-class Get, again while BUSY. */
	rsa_request_init(&rq, (uint8_t)opt_class, 0, target_gid, have_dgid ? req_dgid : local_gid);
	if (opt_attr >= 0)
		rq.attr_id = (uint16_t)opt_attr;
	if (!rsa_attr_is_pathrec(rq.attr_id)) {
		rq.attr_offset = 0;
		rq.comp_mask = 0;
	}
	if (opt_class_version >= 0)
		rq.class_version = (uint8_t)opt_class_version;
	if (opt_method >= 0)
		rq.method = (uint8_t)opt_method;
	if (have_comp_mask)
		rq.comp_mask = opt_comp_mask;
	if (opt_attr_offset >= 0)
		rq.attr_offset = (uint16_t)opt_attr_offset;
	if (opt_attr_mod >= 0)
		rq.attr_mod = (uint32_t)opt_attr_mod;
	if (have_sm_key)
		rq.sm_key = opt_sm_key;
	if (opt_rmpp >= 0)
		rq.rmpp_fill = (uint8_t)opt_rmpp;
	for (tries = 1;; tries++) {
		rq.tid = next_tid++;
		rsa_encode_request(&rq, mad);
		x = transact(vs_agent, mad, (uint32_t)rq.tid, &d, opt_timeout, opt_retries, ans,
			     &anslen, err, sizeof(err));
		if (x != X_ANSWER)
			break;
		dec = rsa_decode_answer(ans, (size_t)anslen, &rq, &ra);
		/*
		 * A keyed Get sent without a key is answered BUSY with the
		 * requester's key: again at once with it, once, not a try.
		 */
		if (dec == RSA_DEC_OK && ra.status == RSA_ST_BUSY && rsa_attr_is_keyed(rq.attr_id) &&
		    ra.sm_key && !rq.sm_key) {
			if (opt_verbose)
				fprintf(stderr, "%s: service handed out our key, again with it\n", prog);
			if (opt_kv)
				printf("key=0x%016llx\n", (unsigned long long)ra.sm_key);
			rq.sm_key = ra.sm_key;
			tries--;
			continue;
		}
		if (dec != RSA_DEC_OK || ra.status != RSA_ST_BUSY || tries > (int)opt_retries)
			break;
		if (opt_verbose)
			fprintf(stderr, "%s: service busy, again in %u ms\n", prog, opt_timeout);
		nanosleep(&(struct timespec){ opt_timeout / 1000, (long)(opt_timeout % 1000) * 1000000 }, NULL);
	}
	if (opt_kv)
		printf("tries=%d\n", tries);
	if (x == X_ERROR)
		return local_error("sending to %s: %s", sg, err);
	if (x == X_TIMEOUT) {
		if (opt_kv)
			printf("result=timeout\nstatus=none\nelapsed_ms=%ld\n", elapsed_ms());
		fprintf(stderr, "%s: timeout: no answer from the service at %s (%u ms x %u tries)\n",
			prog, sg, opt_timeout, opt_retries + 1);
		return EX_TIMEOUT;
	}
	if (dec != RSA_DEC_OK) {
		if (opt_kv)
			printf("result=malformed\nstatus=none\nerror=%s\nanswer_method=0x%02x\n"
			       "answer_status=0x%04x\nelapsed_ms=%ld\n", rsa_dec_str(dec), ra.method,
			       ra.status, elapsed_ms());
		fprintf(stderr, "%s: malformed answer from %s: %s (method 0x%02x, status 0x%04x)\n",
			prog, sg, rsa_dec_str(dec), ra.method, ra.status);
		return EX_MALFORMED;
	}
	if (opt_kv) {
		v = ra.tid;
		printf("tid=0x%016llx\nelapsed_ms=%ld\n", v, elapsed_ms());
	}
	if (ra.status) {
		const char *t = rsa_status_str(ra.status);

		if (opt_kv)
			printf("result=status\nstatus=0x%04x\nstatus_text=%s\n", ra.status,
			       t ? t : "unknown");
		fprintf(stderr, "%s: status 0x%04x: %s%s%s%s\n", prog, ra.status, t ? t : "unknown",
			ra.status == RSA_ST_METHOD_ATTR ? " (no ib_remote_sa service at " : "",
			ra.status == RSA_ST_METHOD_ATTR ? sg : "",
			ra.status == RSA_ST_METHOD_ATTR ? ")" : "");
		return EX_STATUS;
	}
	if (!ra.has_record && !ra.has_cpi) {
		if (opt_kv)
			printf("result=malformed\nstatus=0x0000\nerror=status 0 without a record\n");
		fprintf(stderr, "%s: malformed answer from %s: status 0 without a record (attribute 0x%04x)\n",
			prog, sg, ra.attr_id);
		return EX_MALFORMED;
	}
	if (opt_kv)
		printf("result=ok\nstatus=0x0000\n");
	if (ra.has_cpi) {
		print_cpi(&ra.cpi);
		return EX_RECORD;
	}
	if (opt_kv)
		kv_record(&ra.pr);
	else
		print_record(&ra.pr);
	return EX_RECORD;
}
