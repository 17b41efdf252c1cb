// SPDX-License-Identifier: GPL-2.0-only
/*
 * simfab-cm: a raw /dev/infiniband/rdma_cm client. It speaks the rdma_ucm
 * write() ABI (<rdma/rdma_user_cm.h>) directly, so it needs no verbs
 * provider and works on devices without one (simfab) as well as on rxe.
 * Each command-line argument is one step of a script; see README.md.
 */
#include "pathrec.h"
/* the patched librdmacm's path record set builder, extracted by the Makefile */
#include "path_set.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#ifndef AF_IB
#define AF_IB 27
#endif

/* The kernel's struct sockaddr_ib (include/rdma/ib.h, not in the uapi). */
struct sf_sockaddr_ib {
	unsigned short sib_family;
	uint16_t sib_pkey;		/* big-endian */
	uint32_t sib_flowinfo;		/* big-endian */
	uint8_t sib_addr[16] __attribute__((aligned(8)));
	uint64_t sib_sid;		/* big-endian */
	uint64_t sib_sid_mask;		/* big-endian */
	uint64_t sib_scope_id;
};
_Static_assert(sizeof(struct sf_sockaddr_ib) == 48, "sockaddr_ib is 48 bytes");

/*
 * Event numbers of enum rdma_cm_event_type (include/rdma/rdma_cm.h): 0-15
 * as in 6.1, 16-19 the ones Linux 7.x added (which 6.1 never sends);
 * ib-routed's APM events are 0x1000-0x1002 (docs/uapi.md), sent only to
 * ids that asked (set-option apm-events=1).
 */
static const char *const event_names[] = {
	"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
	"CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE",
	"REJECTED", "ESTABLISHED", "DISCONNECTED", "DEVICE_REMOVAL",
	"MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT",
	"ADDRINFO_RESOLVED", "ADDRINFO_ERROR", "USER", "INTERNAL",
};

#define SF_IBR_BASE 0x1000
static const char *const ibr_event_names[] = {
	"ALT_PATH_LOADED", "ALT_PATH_ERROR", "PATH_MIGRATED",
};
#define N_IBR_EVENTS (int)(sizeof(ibr_event_names) / sizeof(ibr_event_names[0]))

/* ib-routed's numbers, not in the distribution's uapi (docs/uapi.md) */
#define SF_OPTION_IB_APM_EVENTS 0x1000
#define SF_OPTION_IB_ALT_PATH 0x1001
#define SF_QUERY_IBR_CAPS 0x1000
/*
 * 7.x's RDMA_USER_CM_CMD_WRITE_CM_EVENT (24): a program queues an event
 * (USER or INTERNAL, 7.x refuses any other) on its own id. Not in 6.1's
 * uapi, so its number and layout are here.
 */
#define SF_CMD_WRITE_CM_EVENT 24
struct sf_write_cm_event {
	uint32_t id;
	uint32_t reserved;
	uint32_t event;
	uint32_t status;
	union {
		struct rdma_ucm_conn_param conn;
		struct rdma_ucm_ud_param ud;
		uint64_t arg;
	} param;
};
/* enum ib_event_type / ibv_event_type: IB_EVENT_PATH_MIG */
#define SF_EVENT_PATH_MIG 6
#define SF_SIMFAB_CTL "/sys/kernel/debug/simfab/ctl"
#define N_EVENTS (int)(sizeof(event_names) / sizeof(event_names[0]))

static const char *const qp_states[] = {
	"reset", "init", "rtr", "rts", "sqd", "sqe", "err",
};

#define MAX_IDS 32
#define MAX_PATHS 8
/* more than the kernel takes in RDMA_OPTION_IB_PATH (16), for its limit */
#define MAX_SET_PATHS 20
#define MAX_PENDING 64

struct cm_id {
	char name[32];
	uint32_t kid;		/* kernel id */
	bool live;
};

static int cm_fd = -1;
static struct cm_id ids[MAX_IDS];
static int cur = -1;			/* current id index */
static int default_timeout = 5000;	/* ms, for wait */
static char tag[64];			/* output prefix */
static const char *step;		/* the step being run, for errors */
static bool expect_fail;		/* step prefixed with '!' */

static struct ib_path_rec_data pending_paths[MAX_SET_PATHS];
static int n_pending_paths;

static struct rdma_ucm_event_resp pending_ev[MAX_PENDING];
static int n_pending_ev;

static void die(int code, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));
static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "simfab-cm: %s: ", step ? step : "setup");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stdout);
	exit(code);
}

/* ---- output ------------------------------------------------------------ */

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	if (tag[0])
		printf("%s.", tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- ucma write() ABI ---------------------------------------------------- */

/*
 * One command: header + struct. Returns 0 or -errno. When the step is
 * expected to fail ('!'), the caller handles the error return itself.
 */
static int ucma_cmd(uint32_t cmd, void *in, size_t in_len, size_t out_len)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		uint8_t body[512];
	} buf;
	ssize_t n;

	if (in_len > sizeof(buf.body))
		die(2, "internal: command too large");
	buf.hdr.cmd = cmd;
	buf.hdr.in = (uint16_t)in_len;
	buf.hdr.out = (uint16_t)out_len;
	memcpy(buf.body, in, in_len);
	n = write(cm_fd, &buf, sizeof(buf.hdr) + in_len);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(buf.hdr) + in_len)
		return -EIO;
	return 0;
}

/* Fail the step on error unless it was expected to fail; true if it failed. */
static bool cmd_result(int ret, const char *what)
{
	if (ret == 0) {
		if (expect_fail)
			die(1, "%s succeeded but was expected to fail", what);
		return false;
	}
	if (!expect_fail)
		die(1, "%s: %s (errno %d)", what, strerror(-ret), -ret);
	out("expected-failure %s errno=%d (%s)", what, -ret, strerror(-ret));
	return true;
}

/* ---- argument parsing ---------------------------------------------------- */

#define MAX_ARGS 48
struct args {
	int n;
	char *key[MAX_ARGS];
	char *val[MAX_ARGS];	/* NULL for a bare word */
	bool used[MAX_ARGS];
};

static void split(char *s, struct args *a)
{
	char *tok, *save = NULL;

	memset(a, 0, sizeof(*a));
	for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');

		if (a->n == MAX_ARGS)
			die(2, "too many words");
		a->key[a->n] = tok;
		a->val[a->n] = NULL;
		if (eq) {
			*eq = '\0';
			a->val[a->n] = eq + 1;
		}
		a->n++;
	}
}

static const char *get(struct args *a, const char *key)
{
	const char *v = NULL;
	int i;

	for (i = 1; i < a->n; i++) {
		if (a->val[i] && !strcmp(a->key[i], key)) {
			a->used[i] = true;
			v = a->val[i];
		}
	}
	return v;
}

/* The first unused bare word after the command name. */
static const char *bare(struct args *a)
{
	int i;

	for (i = 1; i < a->n; i++) {
		if (!a->val[i] && !a->used[i]) {
			a->used[i] = true;
			return a->key[i];
		}
	}
	return NULL;
}

static void check_all_used(struct args *a)
{
	int i;

	for (i = 1; i < a->n; i++)
		if (!a->used[i])
			die(2, "unknown argument '%s%s%s'", a->key[i],
			    a->val[i] ? "=" : "", a->val[i] ? a->val[i] : "");
}

static uint64_t num(const char *key, const char *v, uint64_t max)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || x > max)
		die(2, "bad value for %s: '%s'", key, v);
	return x;
}

static uint64_t get_num(struct args *a, const char *key, uint64_t def, uint64_t max)
{
	const char *v = get(a, key);

	return v ? num(key, v, max) : def;
}

static void parse_gid(const char *key, const char *v, uint8_t gid[16])
{
	if (inet_pton(AF_INET6, v, gid) != 1)
		die(2, "bad GID for %s: '%s'", key, v);
}

static int find_id(const char *name)
{
	int i;

	for (i = 0; i < MAX_IDS; i++)
		if (ids[i].live && !strcmp(ids[i].name, name))
			return i;
	return -1;
}

static int find_kid(uint32_t kid)
{
	int i;

	for (i = 0; i < MAX_IDS; i++)
		if (ids[i].live && ids[i].kid == kid)
			return i;
	return -1;
}

static int new_slot(const char *name)
{
	int i;

	if (find_id(name) >= 0)
		die(2, "id name '%s' already in use", name);
	for (i = 0; i < MAX_IDS; i++) {
		if (!ids[i].live) {
			memset(&ids[i], 0, sizeof(ids[i]));
			snprintf(ids[i].name, sizeof(ids[i].name), "%s", name);
			return i;
		}
	}
	die(2, "too many ids");
}

/* The id a step works on: id=NAME, else the current one. */
static int target(struct args *a)
{
	const char *n = get(a, "id");
	int i;

	if (n) {
		i = find_id(n);
		if (i < 0)
			die(2, "no id named '%s'", n);
		return i;
	}
	if (cur < 0 || !ids[cur].live)
		die(2, "no current id (create one with 'id')");
	return cur;
}

static uint64_t uid_of(int slot)
{
	return (uint64_t)slot + 1;
}

/*
 * An address from ip=/gid= keys with the given key prefix ("" or "src-"/
 * "dst-") into a sockaddr_storage; returns its size, 0 if none was given.
 */
static uint16_t get_addr(struct args *a, const char *pfx,
			 struct __kernel_sockaddr_storage *ss)
{
	char k_ip[32], k_gid[32], k_port[32], k_sid[32], k_pkey[32], k_mask[32];
	const char *ip, *gid;
	uint64_t port;

	snprintf(k_ip, sizeof(k_ip), "%sip", pfx);
	snprintf(k_gid, sizeof(k_gid), "%sgid", pfx);
	snprintf(k_port, sizeof(k_port), "%sport", pfx);
	snprintf(k_sid, sizeof(k_sid), "%ssid", pfx);
	snprintf(k_pkey, sizeof(k_pkey), "%spkey", pfx);
	snprintf(k_mask, sizeof(k_mask), "%ssid-mask", pfx);
	memset(ss, 0, sizeof(*ss));
	ip = get(a, k_ip);
	gid = get(a, k_gid);
	if (ip && gid)
		die(2, "give %s or %s, not both", k_ip, k_gid);
	if (ip) {
		port = get_num(a, k_port, 0, 0xffff);
		if (strchr(ip, ':')) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons((uint16_t)port);
			if (inet_pton(AF_INET6, ip, &s6->sin6_addr) != 1)
				die(2, "bad IPv6 address '%s'", ip);
			return sizeof(*s6);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

			s4->sin_family = AF_INET;
			s4->sin_port = htons((uint16_t)port);
			if (inet_pton(AF_INET, ip, &s4->sin_addr) != 1)
				die(2, "bad IPv4 address '%s'", ip);
			return sizeof(*s4);
		}
	}
	if (gid) {
		struct sf_sockaddr_ib *sib = (struct sf_sockaddr_ib *)ss;
		uint64_t sid = get_num(a, k_sid, 0, UINT64_MAX);

		/* port=N is shorthand for sid=RDMA_IB_IP_PS_IB|N */
		if (get(a, k_port))
			sid = 0x00000000013f0000ULL | get_num(a, k_port, 0, 0xffff);
		sib->sib_family = AF_IB;
		parse_gid(k_gid, gid, sib->sib_addr);
		sib->sib_pkey = htons((uint16_t)get_num(a, k_pkey, 0xffff, 0xffff));
		sib->sib_sid = htobe64(sid);
		sib->sib_sid_mask = htobe64(get_num(a, k_mask, sid ? UINT64_MAX : 0,
						    UINT64_MAX));
		return sizeof(*sib);
	}
	return 0;
}

static void print_addr(const char *name, const struct __kernel_sockaddr_storage *ss)
{
	char b[INET6_ADDRSTRLEN];

	switch (ss->ss_family) {
	case AF_INET: {
		const struct sockaddr_in *s = (const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, b, sizeof(b));
		out("%s.family=inet", name);
		out("%s.ip=%s", name, b);
		out("%s.port=%u", name, ntohs(s->sin_port));
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *s = (const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, b, sizeof(b));
		out("%s.family=inet6", name);
		out("%s.ip=%s", name, b);
		out("%s.port=%u", name, ntohs(s->sin6_port));
		break;
	}
	case AF_IB: {
		const struct sf_sockaddr_ib *s = (const void *)ss;

		sf_gid_str(s->sib_addr, b, sizeof(b));
		out("%s.family=ib", name);
		out("%s.gid=%s", name, b);
		out("%s.pkey=0x%04x", name, ntohs(s->sib_pkey));
		out("%s.sid=0x%016llx", name, (unsigned long long)be64toh(s->sib_sid));
		out("%s.sid_mask=0x%016llx", name,
		    (unsigned long long)be64toh(s->sib_sid_mask));
		out("%s.flowinfo=0x%08x", name, ntohl(s->sib_flowinfo));
		break;
	}
	default:
		out("%s.family=%u", name, ss->ss_family);
	}
}

/* ---- events ------------------------------------------------------------- */

static const char *event_name(uint32_t e)
{
	if (e < (uint32_t)N_EVENTS)
		return event_names[e];
	if (e >= SF_IBR_BASE && e < SF_IBR_BASE + (uint32_t)N_IBR_EVENTS)
		return ibr_event_names[e - SF_IBR_BASE];
	return "UNKNOWN";
}

static int event_num(const char *s)
{
	int i;

	for (i = 0; i < N_EVENTS; i++)
		if (!strcasecmp(s, event_names[i]))
			return i;
	for (i = 0; i < N_IBR_EVENTS; i++)
		if (!strcasecmp(s, ibr_event_names[i]))
			return SF_IBR_BASE + i;
	return -1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Read one event, waiting at most timeout_ms. 1 = got one, 0 = timeout. */
static int read_event(struct rdma_ucm_event_resp *ev, int timeout_ms)
{
	struct rdma_ucm_get_event cmd;
	struct pollfd pfd = { .fd = cm_fd, .events = POLLIN };
	int r;

	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		die(1, "poll: %s (errno %d)", strerror(errno), errno);
	if (r == 0)
		return 0;
	memset(ev, 0, sizeof(*ev));
	memset(&cmd, 0, sizeof(cmd));
	cmd.response = (uintptr_t)ev;
	r = ucma_cmd(RDMA_USER_CM_CMD_GET_EVENT, &cmd, sizeof(cmd), sizeof(*ev));
	if (r)
		die(1, "GET_EVENT: %s (errno %d)", strerror(-r), -r);
	return 1;
}

static const char *kid_name(uint32_t kid)
{
	int i = find_kid(kid);

	return i >= 0 ? ids[i].name : "?";
}

static void print_event(const struct rdma_ucm_event_resp *ev, const char *idname)
{
	const struct rdma_ucm_conn_param *c = &ev->param.conn;
	int i;

	out("event %s id=%s status=%d", event_name(ev->event), idname,
	    (int)ev->status);
	/* the number on the wire of every event 6.1 does not have */
	if (ev->event >= 16)
		out("event.num=0x%04x", ev->event);
	switch (ev->event) {
	case 4: /* CONNECT_REQUEST */
	case 5: /* CONNECT_RESPONSE */
	case 8: /* REJECTED */
	case 9: /* ESTABLISHED */
		out("event.qp_num=0x%06x", c->qp_num);
		out("event.responder_resources=%u", c->responder_resources);
		out("event.initiator_depth=%u", c->initiator_depth);
		out("event.flow_control=%u", c->flow_control);
		out("event.retry_count=%u", c->retry_count);
		out("event.rnr_retry_count=%u", c->rnr_retry_count);
		out("event.srq=%u", c->srq);
		out("event.private_data_len=%u", c->private_data_len);
		if (c->private_data_len) {
			char hex[2 * RDMA_MAX_PRIVATE_DATA + 1];

			for (i = 0; i < c->private_data_len; i++)
				snprintf(hex + 2 * i, 3, "%02x", c->private_data[i]);
			out("event.private_data=%s", hex);
		}
		break;
	default:
		break;
	}
}

/*
 * wait EVENT [id=NAME] [status=N|any] [timeout=MS] [as=NAME]
 * Events for other ids or of other types are kept for later waits.
 */
static void do_wait(struct args *a)
{
	const char *ename = bare(a), *idn = get(a, "id"), *st = get(a, "status");
	const char *as = get(a, "as");
	int want = ename ? event_num(ename) : -1;
	int timeout = (int)get_num(a, "timeout", (uint64_t)default_timeout, INT32_MAX);
	long deadline = now_ms() + timeout;
	struct rdma_ucm_event_resp ev;
	int want_slot = -1, i, slot;
	char name[32];

	if (want < 0)
		die(2, "wait needs an event name (e.g. ESTABLISHED)");
	check_all_used(a);
	if (idn) {
		want_slot = find_id(idn);
		if (want_slot < 0)
			die(2, "no id named '%s'", idn);
	}
	for (;;) {
		bool found = false;

		for (i = 0; i < n_pending_ev; i++) {
			const struct rdma_ucm_event_resp *e = &pending_ev[i];

			/* A CONNECT_REQUEST carries the new connection's id
			 * and the listener's uid; other events carry their
			 * own id. */
			if ((int)e->event == want &&
			    (want_slot < 0 ||
			     (want == 4 ? e->uid == uid_of(want_slot)
					: e->id == ids[want_slot].kid))) {
				ev = pending_ev[i];
				memmove(&pending_ev[i], &pending_ev[i + 1],
					(size_t)(n_pending_ev - i - 1) * sizeof(ev));
				n_pending_ev--;
				found = true;
				break;
			}
		}
		if (found)
			break;
		{
			long left = deadline - now_ms();

			if (left < 0)
				left = 0;
			if (!read_event(&ev, (int)left)) {
				for (i = 0; i < n_pending_ev; i++)
					fprintf(stderr, "simfab-cm: unclaimed event %s id=%s status=%d\n",
						event_name(pending_ev[i].event),
						kid_name(pending_ev[i].id),
						(int)pending_ev[i].status);
				die(3, "timeout after %d ms waiting for %s", timeout,
				    event_name((uint32_t)want));
			}
		}
		if (n_pending_ev == MAX_PENDING)
			die(1, "too many unclaimed events");
		pending_ev[n_pending_ev++] = ev;
	}

	if (ev.event == 4) {
		/* A new id for the incoming connection; it becomes current. */
		if (as)
			snprintf(name, sizeof(name), "%s", as);
		else
			for (i = 0;; i++) {
				snprintf(name, sizeof(name), "req%d", i);
				if (find_id(name) < 0)
					break;
			}
		slot = new_slot(name);
		ids[slot].kid = ev.id;
		ids[slot].live = true;
		cur = slot;
		print_event(&ev, name);
		out("id %s kid=%u", name, ev.id);
	} else {
		/* wait ... id=NAME makes NAME current, like 'use NAME' */
		if (want_slot >= 0)
			cur = want_slot;
		print_event(&ev, kid_name(ev.id));
	}
	if (!st || strcmp(st, "any")) {
		long want_st = st ? strtol(st, NULL, 0) : 0;

		if ((int)ev.status != want_st)
			die(1, "event %s status %d (%s), expected %ld",
			    event_name(ev.event), (int)ev.status,
			    (int)ev.status < 0 ? strerror(-(int)ev.status) : "-",
			    want_st);
	}
}

/*
 * none EVENT [id=NAME] [timeout=MS]: no such event comes within MS
 * (default 1000); other events are kept for later waits.
 */
static void do_none(struct args *a)
{
	const char *ename = bare(a), *idn = get(a, "id");
	int want = ename ? event_num(ename) : -1;
	int timeout = (int)get_num(a, "timeout", 1000, INT32_MAX);
	long deadline = now_ms() + timeout, left;
	struct rdma_ucm_event_resp ev;
	int want_slot = -1, i;

	if (want < 0)
		die(2, "none needs an event name (e.g. PATH_MIGRATED)");
	check_all_used(a);
	if (idn) {
		want_slot = find_id(idn);
		if (want_slot < 0)
			die(2, "no id named '%s'", idn);
	}
	for (;;) {
		for (i = 0; i < n_pending_ev; i++)
			if ((int)pending_ev[i].event == want &&
			    (want_slot < 0 || pending_ev[i].id == ids[want_slot].kid))
				die(1, "unexpected event %s id=%s status=%d", event_name(want),
				    kid_name(pending_ev[i].id), (int)pending_ev[i].status);
		left = deadline - now_ms();
		if (left <= 0 || !read_event(&ev, (int)left))
			break;
		if (n_pending_ev == MAX_PENDING)
			die(1, "too many unclaimed events");
		pending_ev[n_pending_ev++] = ev;
	}
	out("none %s id=%s", event_name(want), idn ? idn : "any");
}

/* ---- commands ----------------------------------------------------------- */

static void do_id(struct args *a)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	const char *ps = get(a, "ps"), *qp = get(a, "qp"), *name = get(a, "name");
	const char *b = bare(a);
	char defname[32];
	int slot, i;

	if (!name)
		name = b;
	if (!name) {
		for (i = 0;; i++) {
			snprintf(defname, sizeof(defname), "id%d", i);
			if (find_id(defname) < 0)
				break;
		}
		name = defname;
	}
	memset(&cmd, 0, sizeof(cmd));
	if (!ps || !strcmp(ps, "tcp"))
		cmd.ps = RDMA_PS_TCP;
	else if (!strcmp(ps, "ib"))
		cmd.ps = RDMA_PS_IB;
	else if (!strcmp(ps, "udp"))
		cmd.ps = RDMA_PS_UDP;
	else if (!strcmp(ps, "ipoib"))
		cmd.ps = RDMA_PS_IPOIB;
	else
		cmd.ps = (uint16_t)num("ps", ps, 0xffff);
	/* enum ib_qp_type: RC 2, UC 3, UD 4 */
	if (!qp || !strcmp(qp, "rc"))
		cmd.qp_type = 2;
	else if (!strcmp(qp, "uc"))
		cmd.qp_type = 3;
	else if (!strcmp(qp, "ud"))
		cmd.qp_type = 4;
	else
		cmd.qp_type = (uint8_t)num("qp", qp, 0xff);
	check_all_used(a);
	slot = new_slot(name);
	cmd.uid = uid_of(slot);
	memset(&resp, 0, sizeof(resp));
	cmd.response = (uintptr_t)&resp;
	if (cmd_result(ucma_cmd(RDMA_USER_CM_CMD_CREATE_ID, &cmd, sizeof(cmd),
				sizeof(resp)), "CREATE_ID"))
		return;
	ids[slot].kid = resp.id;
	ids[slot].live = true;
	cur = slot;
	out("id %s kid=%u", name, resp.id);
}

static void do_use(struct args *a)
{
	const char *n = bare(a);
	int i;

	check_all_used(a);
	if (!n || (i = find_id(n)) < 0)
		die(2, "use: no id named '%s'", n ? n : "");
	cur = i;
}

static void do_bind(struct args *a)
{
	struct rdma_ucm_bind cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	cmd.addr_size = get_addr(a, "", &cmd.addr);
	if (!cmd.addr_size)
		die(2, "bind needs ip=ADDR or gid=GID");
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_BIND, &cmd, sizeof(cmd), 0), "BIND");
}

static void do_resolve_addr(struct args *a)
{
	struct rdma_ucm_resolve_addr cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	cmd.src_size = get_addr(a, "src-", &cmd.src_addr);
	cmd.dst_size = get_addr(a, "dst-", &cmd.dst_addr);
	if (!cmd.dst_size)
		die(2, "resolve-addr needs dst-ip=ADDR or dst-gid=GID");
	cmd.timeout_ms = (uint32_t)get_num(a, "timeout", 2000, UINT32_MAX);
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_RESOLVE_ADDR, &cmd, sizeof(cmd), 0),
		   "RESOLVE_ADDR");
}

/* The old RESOLVE_IP command (sockaddr_in6-sized fields, no AF_IB). */
static void do_resolve_ip(struct args *a)
{
	struct rdma_ucm_resolve_ip cmd;
	struct __kernel_sockaddr_storage ss;
	uint16_t n;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	n = get_addr(a, "src-", &ss);
	if (n > sizeof(cmd.src_addr))
		die(2, "resolve-ip takes IP addresses only");
	memcpy(&cmd.src_addr, &ss, n);
	n = get_addr(a, "dst-", &ss);
	if (!n || n > sizeof(cmd.dst_addr))
		die(2, "resolve-ip needs dst-ip=ADDR");
	memcpy(&cmd.dst_addr, &ss, n);
	cmd.timeout_ms = (uint32_t)get_num(a, "timeout", 2000, UINT32_MAX);
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_RESOLVE_IP, &cmd, sizeof(cmd), 0),
		   "RESOLVE_IP");
}

static void do_resolve_route(struct args *a)
{
	struct rdma_ucm_resolve_route cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	cmd.timeout_ms = (uint32_t)get_num(a, "timeout", 2000, UINT32_MAX);
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_RESOLVE_ROUTE, &cmd, sizeof(cmd), 0),
		   "RESOLVE_ROUTE");
}

static void set_option(int s, uint32_t level, uint32_t name, void *val,
		       uint32_t len, const char *what)
{
	struct rdma_ucm_set_option cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.id = ids[s].kid;
	cmd.level = level;
	cmd.optname = name;
	cmd.optlen = len;
	cmd.optval = (uintptr_t)val;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_SET_OPTION, &cmd, sizeof(cmd), 0), what);
}

/* set-option tos=N | reuseaddr=0|1 | afonly=0|1 | ack-timeout=N */
static void do_set_option(struct args *a)
{
	int s = target(a);
	const char *v;
	uint8_t u8;
	int iv;

	if ((v = get(a, "tos"))) {
		u8 = (uint8_t)num("tos", v, 0xff);
		check_all_used(a);
		set_option(s, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &u8, sizeof(u8),
			   "SET_OPTION tos");
	} else if ((v = get(a, "reuseaddr"))) {
		iv = (int)num("reuseaddr", v, 1);
		check_all_used(a);
		set_option(s, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &iv,
			   sizeof(iv), "SET_OPTION reuseaddr");
	} else if ((v = get(a, "afonly"))) {
		iv = (int)num("afonly", v, 1);
		check_all_used(a);
		set_option(s, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &iv,
			   sizeof(iv), "SET_OPTION afonly");
	} else if ((v = get(a, "ack-timeout"))) {
		u8 = (uint8_t)num("ack-timeout", v, 31);
		check_all_used(a);
		set_option(s, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &u8,
			   sizeof(u8), "SET_OPTION ack-timeout");
	} else if ((v = get(a, "apm-events"))) {
		/* any int, so that the kernel's refusal of others is testable */
		iv = (int)strtol(v, NULL, 0);
		check_all_used(a);
		set_option(s, RDMA_OPTION_IB, SF_OPTION_IB_APM_EVENTS, &iv,
			   sizeof(iv), "SET_OPTION apm-events");
	} else {
		die(2, "set-option needs tos=, reuseaddr=, afonly=, ack-timeout= or apm-events=");
	}
}

/* notify: RDMA_USER_CM_CMD_NOTIFY IB_EVENT_PATH_MIG, as librdmacm forwards it */
static void do_notify(struct args *a)
{
	struct rdma_ucm_notify cmd;
	int s = target(a);

	check_all_used(a);
	memset(&cmd, 0, sizeof(cmd));
	cmd.id = ids[s].kid;
	cmd.event = SF_EVENT_PATH_MIG;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_NOTIFY, &cmd, sizeof(cmd), 0),
		   "NOTIFY PATH_MIG");
}

/* ctl cmd=WORDS: one simfab debugfs ctl command, '+' for blanks */
static void do_ctl(struct args *a)
{
	const char *v = get(a, "cmd");
	char buf[256];
	size_t i;
	FILE *f;

	check_all_used(a);
	if (!v || strlen(v) >= sizeof(buf))
		die(2, "ctl needs cmd=WORDS");
	for (i = 0; v[i]; i++)
		buf[i] = v[i] == '+' ? ' ' : v[i];
	buf[i] = '\0';
	f = fopen(SF_SIMFAB_CTL, "w");
	if (!f || fprintf(f, "%s\n", buf) < 0 || fclose(f))
		die(1, "ctl %s: %s", buf, strerror(errno));
	out("ctl %s", buf);
}

/*
 * path [flags=F] [raw=HEX128] [field=value ...]: append one
 * ib_path_rec_data to the pending list (fields override raw=).
 */
static void do_path(struct args *a)
{
	struct sf_pathrec pr;
	uint8_t raw[SF_PATHREC_LEN];
	const char *v;
	char pfx[96];
	struct ib_path_rec_data *d;

	if (n_pending_paths == MAX_SET_PATHS)
		die(2, "at most %d pending path records", MAX_SET_PATHS);
	memset(raw, 0, sizeof(raw));
	if ((v = get(a, "raw")) && sf_hex_to_bytes(v, raw, sizeof(raw)))
		die(2, "raw= needs exactly 128 hex digits");
	sf_pathrec_decode(raw, &pr);
	if ((v = get(a, "dgid")))
		parse_gid("dgid", v, pr.dgid);
	if ((v = get(a, "sgid")))
		parse_gid("sgid", v, pr.sgid);
	pr.service_id = get_num(a, "service_id", pr.service_id, UINT64_MAX);
	pr.dlid = (uint16_t)get_num(a, "dlid", pr.dlid, 0xffff);
	pr.slid = (uint16_t)get_num(a, "slid", pr.slid, 0xffff);
	pr.raw_traffic = (uint8_t)get_num(a, "raw_traffic", pr.raw_traffic, 1);
	pr.flow_label = (uint32_t)get_num(a, "flow_label", pr.flow_label, 0xfffff);
	pr.hop_limit = (uint8_t)get_num(a, "hop_limit", pr.hop_limit, 0xff);
	pr.tclass = (uint8_t)get_num(a, "tclass", pr.tclass, 0xff);
	pr.reversible = (uint8_t)get_num(a, "reversible", pr.reversible, 1);
	pr.numb_path = (uint8_t)get_num(a, "numb_path", pr.numb_path, 0x7f);
	pr.pkey = (uint16_t)get_num(a, "pkey", pr.pkey, 0xffff);
	pr.qos_class = (uint16_t)get_num(a, "qos_class", pr.qos_class, 0xfff);
	pr.sl = (uint8_t)get_num(a, "sl", pr.sl, 0xf);
	pr.mtu_selector = (uint8_t)get_num(a, "mtu_selector", pr.mtu_selector, 3);
	pr.mtu = (uint8_t)get_num(a, "mtu", pr.mtu, 0x3f);
	pr.rate_selector = (uint8_t)get_num(a, "rate_selector", pr.rate_selector, 3);
	pr.rate = (uint8_t)get_num(a, "rate", pr.rate, 0x3f);
	pr.plt_selector = (uint8_t)get_num(a, "packet_life_selector", pr.plt_selector, 3);
	pr.packet_life = (uint8_t)get_num(a, "packet_life", pr.packet_life, 0x3f);
	pr.preference = (uint8_t)get_num(a, "preference", pr.preference, 0xff);
	d = &pending_paths[n_pending_paths];
	memset(d, 0, sizeof(*d));
	/* default: what the kernel's QUERY_PATH reports for its own record */
	d->flags = (uint32_t)get_num(a, "flags", IB_PATH_GMP | IB_PATH_PRIMARY |
				     IB_PATH_BIDIRECTIONAL, UINT32_MAX);
	check_all_used(a);
	sf_pathrec_encode(&pr, (uint8_t *)d->path_rec);
	snprintf(pfx, sizeof(pfx), "%s%spending_path[%d]", tag, tag[0] ? "." : "",
		 n_pending_paths);
	n_pending_paths++;
	sf_pathrec_print(stdout, pfx, d->flags, &pr);
}

/*
 * set-path [len=N]: RDMA_OPTION_IB_PATH with the pending records (then
 * cleared); len= passes N bytes of them instead (zeros after the last
 * record), so that tests can hand the kernel blobs of any length.
 * set-alt-path [len=N]: the same with RDMA_OPTION_IB_ALT_PATH (a LAP on a
 * connected id).
 */
static void set_paths(struct args *a, uint32_t optname, const char *what)
{
	int s = target(a);
	uint32_t len = (uint32_t)(n_pending_paths * sizeof(pending_paths[0]));
	const char *v;

	if ((v = get(a, "len")))
		len = (uint32_t)num("len", v, sizeof(pending_paths));
	check_all_used(a);
	if (!n_pending_paths && !v)
		die(2, "%s: no pending records (add them with 'path')", what);
	set_option(s, RDMA_OPTION_IB, optname, pending_paths, len, what);
	memset(pending_paths, 0, sizeof(pending_paths));
	n_pending_paths = 0;
}

static void do_set_path(struct args *a)
{
	set_paths(a, RDMA_OPTION_IB_PATH, "SET_OPTION IB_PATH");
}

static void do_set_alt_path(struct args *a)
{
	set_paths(a, SF_OPTION_IB_ALT_PATH, "SET_OPTION IB_ALT_PATH");
}

/*
 * RDMA_USER_CM_QUERY_IBR_CAPS on id s into r (len bytes of room); 0 or the
 * negative errno.
 */
static int query_caps(int s, struct path_set_query_resp *r, size_t len)
{
	struct rdma_ucm_query cmd;

	memset(&cmd, 0, sizeof(cmd));
	memset(r, 0, sizeof(*r));
	cmd.id = ids[s].kid;
	cmd.option = SF_QUERY_IBR_CAPS;
	cmd.response = (uintptr_t)r;
	return ucma_cmd(RDMA_USER_CM_CMD_QUERY, &cmd, sizeof(cmd), len);
}

/*
 * write-event EVENT|NUM [status=N] [arg=N]: WRITE_CM_EVENT on the id (7.x):
 * the kernel queues EVENT for it, to be read back with wait.
 */
static void do_write_event(struct args *a)
{
	const char *ename = bare(a);
	struct sf_write_cm_event cmd;
	int s = target(a), ev;
	char *end;

	if (!ename)
		die(2, "write-event needs an event (a name or a number)");
	ev = event_num(ename);
	if (ev < 0) {
		errno = 0;
		ev = (int)strtol(ename, &end, 0);
		if (errno || *end || ev < 0)
			die(2, "write-event: no event '%s'", ename);
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.id = ids[s].kid;
	cmd.event = (uint32_t)ev;
	cmd.status = (uint32_t)get_num(a, "status", 0, UINT32_MAX);
	cmd.param.arg = get_num(a, "arg", 0, UINT64_MAX);
	check_all_used(a);
	cmd_result(ucma_cmd(SF_CMD_WRITE_CM_EVENT, &cmd, sizeof(cmd), 0),
		   "WRITE_CM_EVENT");
}

/*
 * query-caps [len=N]: RDMA_USER_CM_QUERY_IBR_CAPS on the id with N bytes of
 * room (default the whole structure), printed field by field, then as
 * librdmacm's path_set.c reads it (caps.lib.*).
 */
static void do_query_caps(struct args *a)
{
	struct path_set_query_resp r;
	struct path_set_caps caps;
	int s = target(a);
	size_t len = (size_t)get_num(a, "len", sizeof(r), sizeof(r));
	unsigned int i;

	check_all_used(a);
	if (cmd_result(query_caps(s, &r, len), "QUERY IBR_CAPS"))
		return;
	out("caps.version=%u", r.version);
	out("caps.length=%u", r.length);
	out("caps.caps=0x%x", r.caps);
	out("caps.max_records=%u", r.max_records);
	out("caps.max_bytes=%u", r.max_bytes);
	out("caps.num_forms=%u", r.num_forms);
	for (i = 0; i < r.num_forms && i < PATH_SET_QUERY_FORMS; i++)
		out("caps.form[%u]=0x%02x roles=0x%x", i, r.forms[i].flags, r.forms[i].roles);
	path_set_caps_from_query(&caps, &r, len);
	out("caps.lib.present=%d", caps.present);
	out("caps.lib.flags=0x%x", caps.flags);
	out("caps.lib.num_forms=%u", caps.num_forms);
}

/*
 * build-set [from=pending|query] [caps=query|none]: the pending records
 * become the path record set the patched librdmacm builds (its own
 * path_set.c) for the kernel's capabilities, as librdmacm asks for them
 * (RDMA_USER_CM_QUERY_IBR_CAPS on the target id; ENOSYS, a stock kernel:
 * none) or for a kernel without sets (caps=none), from the pending records
 * as a resolver (ibacm) answer tagged by flags, or from the target id's
 * QUERY_PATH answer (the kernel's route).
 */
static void do_build_set(struct args *a)
{
	struct path_set_rec answer[MAX_PATHS];
	struct path_set_query_resp r;
	struct path_set_answer ans;
	struct path_set_caps caps;
	const char *from = get(a, "from"), *cv = get(a, "caps");
	int s = target(a), n, i, ret;
	size_t num = 0;

	_Static_assert(sizeof(struct path_set_rec) == sizeof(struct ib_path_rec_data),
		       "path_set_rec is ib_path_rec_data");
	if (!from)
		from = "pending";
	if (strcmp(from, "pending") && strcmp(from, "query"))
		die(2, "build-set: from=pending or from=query");
	if (cv && strcmp(cv, "query") && strcmp(cv, "none"))
		die(2, "build-set: caps=query or caps=none");
	check_all_used(a);
	path_set_caps_none(&caps);
	if (!cv || !strcmp(cv, "query")) {
		ret = query_caps(s, &r, sizeof(r));
		if (!ret)
			path_set_caps_from_query(&caps, &r, sizeof(r));
		else if (ret != -ENOSYS)
			die(1, "build-set: QUERY IBR_CAPS: %s", strerror(-ret));
	}
	if (!strcmp(from, "query")) {
		struct rdma_ucm_query cmd;
		struct {
			struct rdma_ucm_query_path_resp h;
			struct ib_path_rec_data d[MAX_PATHS];
		} r;

		memset(&cmd, 0, sizeof(cmd));
		memset(&r, 0, sizeof(r));
		cmd.id = ids[s].kid;
		cmd.option = RDMA_USER_CM_QUERY_PATH;
		cmd.response = (uintptr_t)&r;
		if (cmd_result(ucma_cmd(RDMA_USER_CM_CMD_QUERY, &cmd, sizeof(cmd),
					sizeof(r)), "QUERY_PATH"))
			return;
		num = r.h.num_paths < MAX_PATHS ? r.h.num_paths : MAX_PATHS;
		memcpy(answer, r.d, num * sizeof(r.d[0]));
	} else {
		num = (size_t)n_pending_paths;
		memcpy(answer, pending_paths, num * sizeof(pending_paths[0]));
	}
	if (path_set_answer_parse(&ans, !strcmp(from, "query") ? PATH_SET_SRC_KERNEL :
				  PATH_SET_SRC_FLAGS, answer, num))
		die(1, "build-set: no primary path in the %s answer", from);
	n = path_set_build(&caps, &ans, (struct path_set_rec *)pending_paths, MAX_PATHS);
	if (n < 0)
		die(1, "build-set: no set for this kernel");
	n_pending_paths = n;
	out("build_set.caps=%s", caps.present ? "query" : "none");
	out("build_set.num=%d", n);
	for (i = 0; i < n; i++) {
		struct sf_pathrec pr;
		char pfx[96];

		sf_pathrec_decode((const uint8_t *)pending_paths[i].path_rec, &pr);
		snprintf(pfx, sizeof(pfx), "%s%sbuild_set[%d]", tag, tag[0] ? "." : "", i);
		sf_pathrec_print(stdout, pfx, pending_paths[i].flags, &pr);
	}
}

static void do_listen(struct args *a)
{
	struct rdma_ucm_listen cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	cmd.backlog = (uint32_t)get_num(a, "backlog", 8, INT32_MAX);
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_LISTEN, &cmd, sizeof(cmd), 0), "LISTEN");
}

/* Fill conn_param from qpn= etc.; returns true if any was given. */
static bool get_conn_param(struct args *a, struct rdma_ucm_conn_param *c)
{
	const char *pd = get(a, "pdata");
	const char *qpn = get(a, "qpn");

	memset(c, 0, sizeof(*c));
	c->qp_num = (uint32_t)get_num(a, "qpn", 0, 0xffffff);
	c->qkey = (uint32_t)get_num(a, "qkey", 0, UINT32_MAX);
	c->responder_resources = (uint8_t)get_num(a, "rr", 1, 0xff);
	c->initiator_depth = (uint8_t)get_num(a, "id-depth", 1, 0xff);
	c->flow_control = (uint8_t)get_num(a, "flow", 1, 1);
	c->retry_count = (uint8_t)get_num(a, "retry", 7, 7);
	c->rnr_retry_count = (uint8_t)get_num(a, "rnr-retry", 7, 7);
	c->srq = (uint8_t)get_num(a, "srq", 0, 1);
	if (pd) {
		size_t n = strlen(pd) / 2;

		if (n > RDMA_MAX_PRIVATE_DATA || strlen(pd) % 2 ||
		    sf_hex_to_bytes(pd, c->private_data, n))
			die(2, "pdata= needs an even number of hex digits (<= 512)");
		c->private_data_len = (uint8_t)n;
	}
	c->valid = 1;
	return qpn != NULL;
}

static void do_connect(struct args *a)
{
	struct rdma_ucm_connect cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	if (!get_conn_param(a, &cmd.conn_param))
		die(2, "connect needs qpn=N (there is no QP: the number goes in the REQ)");
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_CONNECT, &cmd, sizeof(cmd), 0), "CONNECT");
}

/*
 * accept qpn=N [...]: passive side, rdma_accept(id, &param) sends the REP.
 * accept (no qpn): rdma_accept(id, NULL); on the active side after
 * CONNECT_RESPONSE this sends the RTU.
 */
static void do_accept(struct args *a)
{
	struct rdma_ucm_accept cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	if (!get_conn_param(a, &cmd.conn_param))
		cmd.conn_param.valid = 0;
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd.uid = uid_of(s);
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_ACCEPT, &cmd, sizeof(cmd), 0), "ACCEPT");
}

static void do_reject(struct args *a)
{
	struct rdma_ucm_reject cmd;
	int s = target(a);

	memset(&cmd, 0, sizeof(cmd));
	cmd.reason = (uint8_t)get_num(a, "reason", 0, 0xff);
	check_all_used(a);
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_REJECT, &cmd, sizeof(cmd), 0), "REJECT");
}

static void do_disconnect(struct args *a)
{
	struct rdma_ucm_disconnect cmd;
	int s = target(a);

	check_all_used(a);
	memset(&cmd, 0, sizeof(cmd));
	cmd.id = ids[s].kid;
	cmd_result(ucma_cmd(RDMA_USER_CM_CMD_DISCONNECT, &cmd, sizeof(cmd), 0),
		   "DISCONNECT");
}

static void do_destroy(struct args *a)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	int s = target(a), i;

	check_all_used(a);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.id = ids[s].kid;
	cmd.response = (uintptr_t)&resp;
	if (cmd_result(ucma_cmd(RDMA_USER_CM_CMD_DESTROY_ID, &cmd, sizeof(cmd),
				sizeof(resp)), "DESTROY_ID"))
		return;
	out("destroyed %s events_reported=%u", ids[s].name, resp.events_reported);
	/* the kernel drops queued events of a destroyed id; so do we */
	for (i = 0; i < n_pending_ev;) {
		if (pending_ev[i].id == ids[s].kid) {
			memmove(&pending_ev[i], &pending_ev[i + 1],
				(size_t)(n_pending_ev - i - 1) * sizeof(pending_ev[0]));
			n_pending_ev--;
		} else {
			i++;
		}
	}
	ids[s].live = false;
	if (cur == s)
		cur = -1;
}

static void print_ah(const char *p, const struct ib_uverbs_ah_attr *ah)
{
	char g[INET6_ADDRSTRLEN];

	out("%s.dlid=0x%04x", p, ah->dlid);
	out("%s.sl=%u", p, ah->sl);
	out("%s.src_path_bits=%u", p, ah->src_path_bits);
	out("%s.static_rate=%u", p, ah->static_rate);
	out("%s.is_global=%u", p, ah->is_global);
	out("%s.port_num=%u", p, ah->port_num);
	sf_gid_str(ah->grh.dgid, g, sizeof(g));
	out("%s.grh.dgid=%s", p, g);
	out("%s.grh.sgid_index=%u", p, ah->grh.sgid_index);
	out("%s.grh.hop_limit=%u", p, ah->grh.hop_limit);
	out("%s.grh.traffic_class=%u", p, ah->grh.traffic_class);
	out("%s.grh.flow_label=0x%05x", p, ah->grh.flow_label);
}

/* qp-attr init|rtr|rts: INIT_QP_ATTR, every field of ib_uverbs_qp_attr. */
static void do_qp_attr(struct args *a)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr r;
	const char *st = bare(a);
	int s = target(a), i, state = -1;

	check_all_used(a);
	for (i = 0; st && i < (int)(sizeof(qp_states) / sizeof(qp_states[0])); i++)
		if (!strcasecmp(st, qp_states[i]))
			state = i;
	if (state < 0)
		die(2, "qp-attr needs a state: init, rtr or rts");
	memset(&cmd, 0, sizeof(cmd));
	memset(&r, 0, sizeof(r));
	cmd.id = ids[s].kid;
	cmd.qp_state = (uint32_t)state;
	cmd.response = (uintptr_t)&r;
	if (cmd_result(ucma_cmd(RDMA_USER_CM_CMD_INIT_QP_ATTR, &cmd, sizeof(cmd),
				sizeof(r)), "INIT_QP_ATTR"))
		return;
	out("qp_attr.for=%s", qp_states[state]);
	out("qp_attr.mask=0x%x", r.qp_attr_mask);
	out("qp_attr.qp_state=%u", r.qp_state);
	out("qp_attr.qkey=0x%08x", r.qkey);
	out("qp_attr.qp_access_flags=0x%x", r.qp_access_flags);
	out("qp_attr.path_mtu=%u", r.path_mtu);
	out("qp_attr.path_mtu_bytes=%u", sf_mtu_bytes(r.path_mtu));
	out("qp_attr.path_mig_state=%u", r.path_mig_state);
	out("qp_attr.dest_qp_num=0x%06x", r.dest_qp_num);
	out("qp_attr.rq_psn=0x%06x", r.rq_psn);
	out("qp_attr.sq_psn=0x%06x", r.sq_psn);
	print_ah("qp_attr.ah", &r.ah_attr);
	print_ah("qp_attr.alt_ah", &r.alt_ah_attr);
	out("qp_attr.pkey_index=%u", r.pkey_index);
	out("qp_attr.alt_pkey_index=%u", r.alt_pkey_index);
	out("qp_attr.port_num=%u", r.port_num);
	out("qp_attr.alt_port_num=%u", r.alt_port_num);
	out("qp_attr.timeout=%u", r.timeout);
	out("qp_attr.alt_timeout=%u", r.alt_timeout);
	out("qp_attr.retry_cnt=%u", r.retry_cnt);
	out("qp_attr.rnr_retry=%u", r.rnr_retry);
	out("qp_attr.min_rnr_timer=%u", r.min_rnr_timer);
	out("qp_attr.max_rd_atomic=%u", r.max_rd_atomic);
	out("qp_attr.max_dest_rd_atomic=%u", r.max_dest_rd_atomic);
}

static void do_query_addr(struct args *a, uint32_t option)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_addr_resp r;
	int s = target(a);
	const char *what = option == RDMA_USER_CM_QUERY_GID ? "QUERY_GID" : "QUERY_ADDR";
	const char *p = option == RDMA_USER_CM_QUERY_GID ? "gid" : "addr";
	char k[32];

	check_all_used(a);
	memset(&cmd, 0, sizeof(cmd));
	memset(&r, 0, sizeof(r));
	cmd.id = ids[s].kid;
	cmd.option = option;
	cmd.response = (uintptr_t)&r;
	if (cmd_result(ucma_cmd(RDMA_USER_CM_CMD_QUERY, &cmd, sizeof(cmd), sizeof(r)),
		       what))
		return;
	out("%s.node_guid=0x%016llx", p, (unsigned long long)be64toh(r.node_guid));
	out("%s.port_num=%u", p, r.port_num);
	out("%s.pkey=0x%04x", p, ntohs(r.pkey));
	out("%s.ibdev_index=%u", p, r.ibdev_index);
	snprintf(k, sizeof(k), "%s.src", p);
	print_addr(k, &r.src_addr);
	snprintf(k, sizeof(k), "%s.dst", p);
	print_addr(k, &r.dst_addr);
}

static void do_query_path(struct args *a)
{
	struct rdma_ucm_query cmd;
	struct {
		struct rdma_ucm_query_path_resp h;
		struct ib_path_rec_data d[MAX_PATHS];
	} r;
	int s = target(a);
	/* max=N: a buffer for N records only (the response's out_len) */
	uint32_t max = (uint32_t)get_num(a, "max", MAX_PATHS, MAX_PATHS);
	uint32_t i;

	check_all_used(a);
	memset(&cmd, 0, sizeof(cmd));
	memset(&r, 0, sizeof(r));
	cmd.id = ids[s].kid;
	cmd.option = RDMA_USER_CM_QUERY_PATH;
	cmd.response = (uintptr_t)&r;
	if (cmd_result(ucma_cmd(RDMA_USER_CM_CMD_QUERY, &cmd, sizeof(cmd),
				(uint32_t)(sizeof(r.h) + max * sizeof(r.d[0]))),
		       "QUERY_PATH"))
		return;
	out("path.num_paths=%u", r.h.num_paths);
	for (i = 0; i < r.h.num_paths && i < max; i++) {
		struct sf_pathrec pr;
		char p[96];

		sf_pathrec_decode((const uint8_t *)r.d[i].path_rec, &pr);
		snprintf(p, sizeof(p), "%s%spath[%u]", tag, tag[0] ? "." : "", i);
		sf_pathrec_print(stdout, p, r.d[i].flags, &pr);
	}
}

static void do_sleep(struct args *a)
{
	const char *b = bare(a);
	uint64_t ms = b ? num("sleep", b, 600000) : get_num(a, "ms", 100, 600000);
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	check_all_used(a);
	nanosleep(&ts, NULL);
}

static void do_tag(struct args *a)
{
	const char *b = bare(a);

	check_all_used(a);
	snprintf(tag, sizeof(tag), "%s", b ? b : "");
}

static void do_timeout(struct args *a)
{
	const char *b = bare(a);

	check_all_used(a);
	if (!b)
		die(2, "timeout needs milliseconds");
	default_timeout = (int)num("timeout", b, INT32_MAX);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: simfab-cm [-d DEVICE] STEP...\n"
"Each STEP is one quoted argument: a command and its key=value words.\n"
"  id [NAME] [ps=tcp|ib|udp|ipoib] [qp=rc|uc|ud]   CREATE_ID (becomes current)\n"
"  use NAME                                        make NAME current\n"
"  bind ip=A [port=P] | gid=G [sid=S|port=P] [pkey=K]\n"
"  resolve-addr [src-ip=|src-gid=...] dst-ip=A|dst-gid=G [dst-port=|dst-sid=] [timeout=MS]\n"
"  resolve-ip   [src-ip=A] dst-ip=A [dst-port=P] [timeout=MS]\n"
"  resolve-route [timeout=MS]\n"
"  set-option tos=N|reuseaddr=B|afonly=B|ack-timeout=N|apm-events=N\n"
"  path [flags=F] [raw=HEX128] [dgid= sgid= dlid= slid= sl= mtu= rate= ...]\n"
"  set-path [len=N]                                RDMA_OPTION_IB_PATH with the paths (N bytes of them)\n"
"  set-alt-path [len=N]                            RDMA_OPTION_IB_ALT_PATH (LAP) with the paths\n"
"  query-caps [len=N]                              QUERY IBR_CAPS (N bytes of room)\n"
"  write-event EVENT|NUM [status=N] [arg=N]        WRITE_CM_EVENT (7.x: USER, INTERNAL)\n"
"  build-set [from=pending|query] [caps=query|none] the paths become librdmacm's set\n"
"  listen [backlog=N]\n"
"  connect qpn=N [qkey= rr= id-depth= flow= retry= rnr-retry= srq= pdata=HEX]\n"
"  accept [qpn=N ...]          (no qpn: rdma_accept(id, NULL), sends the RTU)\n"
"  reject [reason=N]   disconnect   destroy\n"
"  wait EVENT [id=NAME] [status=N|any] [timeout=MS] [as=NAME]\n"
"  none EVENT [id=NAME] [timeout=MS]              no such event within MS\n"
"  notify                                          NOTIFY IB_EVENT_PATH_MIG\n"
"  ctl cmd=WORDS                                   simfab debugfs ctl ('+': blank)\n"
"  qp-attr init|rtr|rts   query-addr   query-gid   query-path [max=N]\n"
"  sleep MS   tag PREFIX   timeout MS\n"
"Most steps take id=NAME (default: the current id). A leading '!' means the\n"
"step must fail. Exit: 0 ok, 1 failure, 2 usage, 3 timeout.\n");
}

static void run_step(char *s)
{
	struct args a;
	char *c;

	expect_fail = false;
	if (*s == '!') {
		expect_fail = true;
		s++;
	}
	split(s, &a);
	if (!a.n)
		return;
	c = a.key[0];
	if (!strcmp(c, "id"))
		do_id(&a);
	else if (!strcmp(c, "use"))
		do_use(&a);
	else if (!strcmp(c, "bind"))
		do_bind(&a);
	else if (!strcmp(c, "resolve-addr"))
		do_resolve_addr(&a);
	else if (!strcmp(c, "resolve-ip"))
		do_resolve_ip(&a);
	else if (!strcmp(c, "resolve-route"))
		do_resolve_route(&a);
	else if (!strcmp(c, "set-option"))
		do_set_option(&a);
	else if (!strcmp(c, "path"))
		do_path(&a);
	else if (!strcmp(c, "set-alt-path"))
		do_set_alt_path(&a);
	else if (!strcmp(c, "query-caps"))
		do_query_caps(&a);
	else if (!strcmp(c, "write-event"))
		do_write_event(&a);
	else if (!strcmp(c, "set-path"))
		do_set_path(&a);
	else if (!strcmp(c, "build-set"))
		do_build_set(&a);
	else if (!strcmp(c, "listen"))
		do_listen(&a);
	else if (!strcmp(c, "connect"))
		do_connect(&a);
	else if (!strcmp(c, "accept"))
		do_accept(&a);
	else if (!strcmp(c, "reject"))
		do_reject(&a);
	else if (!strcmp(c, "disconnect"))
		do_disconnect(&a);
	else if (!strcmp(c, "destroy"))
		do_destroy(&a);
	else if (!strcmp(c, "none"))
		do_none(&a);
	else if (!strcmp(c, "notify"))
		do_notify(&a);
	else if (!strcmp(c, "ctl"))
		do_ctl(&a);
	else if (!strcmp(c, "wait"))
		do_wait(&a);
	else if (!strcmp(c, "qp-attr"))
		do_qp_attr(&a);
	else if (!strcmp(c, "query-addr"))
		do_query_addr(&a, RDMA_USER_CM_QUERY_ADDR);
	else if (!strcmp(c, "query-gid"))
		do_query_addr(&a, RDMA_USER_CM_QUERY_GID);
	else if (!strcmp(c, "query-path"))
		do_query_path(&a);
	else if (!strcmp(c, "sleep"))
		do_sleep(&a);
	else if (!strcmp(c, "tag"))
		do_tag(&a);
	else if (!strcmp(c, "timeout"))
		do_timeout(&a);
	else
		die(2, "unknown command '%s' (see simfab-cm -h)", c);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/infiniband/rdma_cm";
	char buf[1024];
	int i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "-d")) {
		dev = argv[2];
		i = 3;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	cm_fd = open(dev, O_RDWR | O_CLOEXEC);
	if (cm_fd < 0)
		die(1, "open %s: %s (errno %d)", dev, strerror(errno), errno);
	for (; i < argc; i++) {
		if (strlen(argv[i]) >= sizeof(buf))
			die(2, "step too long");
		snprintf(buf, sizeof(buf), "%s", argv[i]);
		step = argv[i];
		run_step(buf);
	}
	step = NULL;
	/* Closing the fd destroys every id (the kernel sends DREQs as needed). */
	close(cm_fd);
	return 0;
}
