// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ls-inject: sends hand-made RDMA netlink local-service (RDMA_NL_LS)
 * messages to the local-service multicast group, as the kernel would
 * send requests there, for the guest test of ib-routed-ipresolved
 * (tests/vm/guest/simfab-ipoib.sh, "ipr:malformed"). Each KIND is one
 * message; the daemon must refuse and count every malformed one and
 * ignore a well-formed one that is not the kernel's.
 *
 *   ls-inject KIND...    (needs CAP_NET_ADMIN to send to the group)
 *
 * KINDs: short-header, len-beyond, len-below-header, no-family-header,
 * no-address, attr-len-small, attr-len-large, ipv4-size, two-addresses,
 * unknown-mandatory, resolve-short (malformed), good-ip (well formed,
 * from a process: "foreign"). The kernel gets a copy of each too and
 * refuses it (NLM_F_REQUEST in an answer: EPERM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#define IPR (RDMA_NL_LS << 10 | RDMA_NL_LS_OP_IP_RESOLVE)

struct msg {
	const char *kind;
	size_t len;		/* bytes sent */
	uint32_t nl_len;	/* what the header claims */
	uint16_t type;
	uint8_t body[40];	/* after the 16-byte header */
	size_t body_len;
};

/* family header (ifindex 1), then attributes, host order */
static const struct msg msgs[] = {
	{ "short-header", 10, 28, IPR, { 0 }, 0 },
	{ "len-beyond", 28, 60, IPR,
	  { 1, 0, 0, 0, 8, 0, 0x09, 0x20, 10, 2, 0, 4 }, 12 },
	{ "len-below-header", 28, 8, IPR,
	  { 1, 0, 0, 0, 8, 0, 0x09, 0x20, 10, 2, 0, 4 }, 12 },
	{ "no-family-header", 18, 18, IPR, { 1, 0 }, 2 },
	{ "no-address", 20, 20, IPR, { 1, 0, 0, 0 }, 4 },
	{ "attr-len-small", 28, 28, IPR,
	  { 1, 0, 0, 0, 2, 0, 0x09, 0x20, 10, 2, 0, 4 }, 12 },
	{ "attr-len-large", 28, 28, IPR,
	  { 1, 0, 0, 0, 40, 0, 0x09, 0x20, 10, 2, 0, 4 }, 12 },
	{ "ipv4-size", 32, 32, IPR,
	  { 1, 0, 0, 0, 10, 0, 0x09, 0x20, 10, 2, 0, 4, 0, 0, 0, 0 }, 16 },
	{ "two-addresses", 36, 36, IPR,
	  { 1, 0, 0, 0, 8, 0, 0x09, 0x20, 10, 2, 0, 4,
	    8, 0, 0x09, 0x20, 10, 2, 0, 5 }, 20 },
	{ "unknown-mandatory", 36, 36, IPR,
	  { 1, 0, 0, 0, 8, 0, 0x07, 0x20, 0, 0, 0, 0,
	    8, 0, 0x09, 0x20, 10, 2, 0, 4 }, 20 },
	{ "resolve-short", 24, 24, RDMA_NL_LS << 10 | RDMA_NL_LS_OP_RESOLVE,
	  { 0 }, 8 },
	{ "good-ip", 28, 28, IPR,
	  { 1, 0, 0, 0, 8, 0, 0x09, 0x20, 10, 2, 0, 4 }, 12 },
};

int main(int argc, char **argv)
{
	struct sockaddr_nl dst = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1u << (RDMA_NL_GROUP_LS - 1),
	};
	int fd, i, bad = 0;
	uint32_t seq = 0x1000;

	if (argc < 2) {
		fprintf(stderr, "usage: ls-inject KIND...\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_RDMA);
	if (fd < 0) {
		perror("socket(NETLINK_RDMA)");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		const struct msg *m = NULL;
		uint8_t buf[64] = { 0 };
		uint16_t flags = NLM_F_REQUEST;
		size_t k;

		for (k = 0; k < sizeof(msgs) / sizeof(msgs[0]); k++)
			if (!strcmp(argv[i], msgs[k].kind))
				m = &msgs[k];
		if (!m) {
			fprintf(stderr, "ls-inject: unknown kind %s\n", argv[i]);
			return 2;
		}
		seq++;
		memcpy(buf, &m->nl_len, 4);
		memcpy(buf + 4, &m->type, 2);
		memcpy(buf + 6, &flags, 2);
		memcpy(buf + 8, &seq, 4);
		memcpy(buf + 16, m->body, m->body_len);
		if (sendto(fd, buf, m->len, 0, (struct sockaddr *)&dst,
			   sizeof(dst)) != (ssize_t)m->len) {
			fprintf(stderr, "ls-inject: %s: %s\n", m->kind, strerror(errno));
			bad++;
			continue;
		}
		printf("sent %s seq=%u len=%zu\n", m->kind, seq, m->len);
	}
	close(fd);
	return bad ? 1 : 0;
}
