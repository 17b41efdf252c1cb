// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmacm-61: every rdma_set_option() option of Linux 6.1 and the rdma_cm
 * events of connection setup and teardown, through the distribution's own
 * librdmacm (linked dynamically against librdmacm1, never the patched
 * library), printed as a transcript that does not depend on timing,
 * addresses or ids. The vm tests run it on the overlay (vm-rxe) and on
 * the distribution's own stack (vm-stock) and compare both with one
 * expected transcript (tests/vm/guest/rdmacm-61.expected): on ib-routed's
 * kernel an unmodified program sees exactly 6.1 (issue 23).
 *
 *   rdmacm-61 IPV4 PORT
 *
 * PORT, PORT+1 and PORT+2 are used; exit status 0 when every step ran
 * (the transcript says how each went), 1 when one could not run at all.
 */
#define _GNU_SOURCE	/* strerrorname_np() */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static struct rdma_event_channel *ch;
static struct sockaddr_in addr;

/* "step NAME rc=0" or "step NAME rc=-1 errno=EINVAL" */
static void step(const char *name, int rc)
{
	if (rc)
		printf("step %s rc=%d errno=%s\n", name, rc, strerrorname_np(errno) ?
		       strerrorname_np(errno) : "?");
	else
		printf("step %s rc=0\n", name);
}

/*
 * The next event, of any id: "event NAME status=S". A status that is a
 * negative errno is printed by name. -1: none within 10 s.
 */
static int next_event(struct rdma_cm_event **ev)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int st;

	if (poll(&p, 1, 10000) != 1 || rdma_get_cm_event(ch, ev)) {
		printf("event none\n");
		return -1;
	}
	st = (*ev)->status;
	if (st < 0)
		printf("event %s status=-%s\n", rdma_event_str((*ev)->event),
		       strerrorname_np(-st) ? strerrorname_np(-st) : "?");
	else
		printf("event %s status=%d\n", rdma_event_str((*ev)->event), st);
	if ((*ev)->event >= 16)
		printf("unknown-event %d\n", (*ev)->event);
	return 0;
}

/* Wait for an event and ack it; its type, or -1. */
static int event(void)
{
	struct rdma_cm_event *ev;
	int e;

	if (next_event(&ev))
		return -1;
	e = ev->event;
	rdma_ack_cm_event(ev);
	return e;
}

static void qp_attr(struct ibv_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->cap.max_send_wr = 4;
	qa->cap.max_recv_wr = 4;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

static struct sockaddr *port_addr(int off)
{
	static struct sockaddr_in a;

	a = addr;
	a.sin_port = htons(ntohs(addr.sin_port) + off);
	return (struct sockaddr *)&a;
}

/*
 * Disconnect @act; @pas answers its DISCONNECTED with its own
 * rdma_disconnect() (the DREP), as rping's server does: then both ids
 * have had DISCONNECTED, in an order that does not depend on timing.
 */
static void disconnect_pair(const char *who, struct rdma_cm_id *act,
			    struct rdma_cm_id *pas)
{
	struct rdma_cm_event *ev;
	int got = 0, i;
	char name[64];

	snprintf(name, sizeof(name), "%s-disconnect", who);
	step(name, rdma_disconnect(act));
	for (i = 0; i < 2; i++) {
		if (next_event(&ev))
			break;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			got |= ev->id == act ? 1 : ev->id == pas ? 2 : 4;
			if (ev->id == pas) {
				snprintf(name, sizeof(name), "%s-passive-disconnect", who);
				step(name, rdma_disconnect(pas));
			}
		}
		rdma_ack_cm_event(ev);
	}
	printf("%s-disconnected-both %s\n", who, got == 3 ? "yes" : "no");
}

/* The options 6.1 has, on an id before it is bound. */
static void options(struct rdma_cm_id *id, const char *who)
{
	uint8_t tos = 0x20, ack = 14;
	int one = 1, bad = 7;
	char name[64];

	snprintf(name, sizeof(name), "%s-tos", who);
	step(name, rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)));
	snprintf(name, sizeof(name), "%s-tos-bad-len", who);
	step(name, rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)));
	snprintf(name, sizeof(name), "%s-reuseaddr", who);
	step(name, rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)));
	snprintf(name, sizeof(name), "%s-afonly", who);
	step(name, rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)));
	snprintf(name, sizeof(name), "%s-ack-timeout", who);
	step(name, rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, sizeof(ack)));
	snprintf(name, sizeof(name), "%s-unknown-id-option", who);
	step(name, rdma_set_option(id, RDMA_OPTION_ID, 99, &bad, sizeof(bad)));
	/* ib-routed's options before issue 23 took 2 at this level */
	snprintf(name, sizeof(name), "%s-ib-option-2", who);
	step(name, rdma_set_option(id, RDMA_OPTION_IB, 2, &one, sizeof(one)));
}

int main(int argc, char **argv)
{
	struct rdma_cm_id *lid, *cid, *conn = NULL, *rid, *nid;
	struct ibv_path_data pd[2];
	struct ibv_qp_init_attr qa;
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 3, .rnr_retry_count = 3,
	};
	struct rdma_cm_event *ev;
	struct ibv_pd *ibpd = NULL;
	int e;

	if (argc != 3 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: rdmacm-61 IPV4 PORT\n");
		return 2;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)atoi(argv[2]));
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_create_id(ch, &cid, NULL, RDMA_PS_TCP)) {
		perror("rdmacm-61: rdma_cm");
		return 1;
	}
	options(lid, "listen");
	options(cid, "active");
	step("listen-bind", rdma_bind_addr(lid, port_addr(0)));
	step("listen", rdma_listen(lid, 4));

	/* address and route */
	step("resolve-addr", rdma_resolve_addr(cid, NULL, port_addr(0), 2000));
	if (event() != RDMA_CM_EVENT_ADDR_RESOLVED)
		return 1;
	/* RDMA_OPTION_IB_PATH: malformed, then no classic record (6.1: EINVAL) */
	memset(pd, 0, sizeof(pd));
	step("ib-path-short", rdma_set_option(cid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, pd, 5));
	pd[0].flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY;
	step("ib-path-no-classic", rdma_set_option(cid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
						   pd, sizeof(pd[0])));
	step("resolve-route", rdma_resolve_route(cid, 2000));
	if (event() != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return 1;

	/* a connection with QPs: CONNECT_REQUEST, ESTABLISHED both sides */
	ibpd = ibv_alloc_pd(cid->verbs);
	qp_attr(&qa);
	step("active-qp", ibpd ? rdma_create_qp(cid, ibpd, &qa) : -1);
	step("connect", rdma_connect(cid, &cp));
	if (next_event(&ev) || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	conn = ev->id;
	rdma_ack_cm_event(ev);
	qp_attr(&qa);
	step("passive-qp", rdma_create_qp(conn, ibpd, &qa));
	step("accept", rdma_accept(conn, &cp));
	e = event();
	e += event();
	printf("established-both %s\n",
	       e == 2 * RDMA_CM_EVENT_ESTABLISHED ? "yes" : "no");
	/* a connected id: RDMA_OPTION_IB_PATH is refused as in 6.1 */
	pd[0].flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
		      IBV_PATH_FLAG_BIDIRECTIONAL;
	step("ib-path-connected", rdma_set_option(cid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
						  pd, sizeof(pd[0])));
	disconnect_pair("qp", cid, conn);
	rdma_destroy_qp(cid);
	rdma_destroy_qp(conn);
	rdma_destroy_id(conn);
	rdma_destroy_id(cid);

	/* a connection without a QP: CONNECT_RESPONSE, then rdma_establish() */
	if (rdma_create_id(ch, &nid, NULL, RDMA_PS_TCP))
		return 1;
	step("noqp-resolve-addr", rdma_resolve_addr(nid, NULL, port_addr(0), 2000));
	event();
	step("noqp-resolve-route", rdma_resolve_route(nid, 2000));
	event();
	/* each side names a QP number of its own (a QP elsewhere) */
	cp.qp_num = 0x4242;
	step("noqp-connect", rdma_connect(nid, &cp));
	if (next_event(&ev) || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	conn = ev->id;
	rdma_ack_cm_event(ev);
	cp.qp_num = 0x4343;
	step("noqp-accept", rdma_accept(conn, &cp));
	if (event() == RDMA_CM_EVENT_CONNECT_RESPONSE)
		step("noqp-establish", rdma_establish(nid));
	event();
	disconnect_pair("noqp", nid, conn);
	cp.qp_num = 0;
	rdma_destroy_id(conn);
	rdma_destroy_id(nid);

	/* rejected by the listener (consumer reject) */
	if (rdma_create_id(ch, &rid, NULL, RDMA_PS_TCP))
		return 1;
	step("reject-resolve-addr", rdma_resolve_addr(rid, NULL, port_addr(0), 2000));
	event();
	step("reject-resolve-route", rdma_resolve_route(rid, 2000));
	event();
	qp_attr(&qa);
	step("reject-qp", rdma_create_qp(rid, ibpd, &qa));
	step("reject-connect", rdma_connect(rid, &cp));
	if (next_event(&ev) || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	conn = ev->id;
	rdma_ack_cm_event(ev);
	step("reject", rdma_reject(conn, "no", 3));
	event();
	rdma_destroy_id(conn);
	rdma_destroy_qp(rid);
	rdma_destroy_id(rid);

	/* no listener on PORT+1: the passive CM rejects (invalid service ID) */
	if (rdma_create_id(ch, &rid, NULL, RDMA_PS_TCP))
		return 1;
	step("nolisten-resolve-addr", rdma_resolve_addr(rid, NULL, port_addr(1), 2000));
	event();
	step("nolisten-resolve-route", rdma_resolve_route(rid, 2000));
	event();
	qp_attr(&qa);
	step("nolisten-qp", rdma_create_qp(rid, ibpd, &qa));
	step("nolisten-connect", rdma_connect(rid, &cp));
	event();
	rdma_destroy_qp(rid);
	rdma_destroy_id(rid);

	/*
	 * An off-subnet address (TEST-NET-3): the rxe netdev is a dummy
	 * (no ARP), so it resolves, as on 6.1.
	 */
	if (rdma_create_id(ch, &rid, NULL, RDMA_PS_TCP))
		return 1;
	{
		struct sockaddr_in none = { .sin_family = AF_INET,
					    .sin_port = htons(1) };

		inet_pton(AF_INET, "203.0.113.1", &none.sin_addr);
		e = rdma_resolve_addr(rid, port_addr(2), (struct sockaddr *)&none, 500);
		step("offnet-resolve-addr", e);
		if (!e)
			event();
	}
	rdma_destroy_id(rid);

	rdma_destroy_id(lid);
	if (ibpd)
		ibv_dealloc_pd(ibpd);
	rdma_destroy_event_channel(ch);
	printf("done\n");
	return 0;
}
