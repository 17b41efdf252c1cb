// SPDX-License-Identifier: GPL-2.0-only
/*
 * umad-send: send one hand-made MAD through ib_umad, as it is, and print
 * what comes back (test-only: the robustness tests, simfab-robust). The
 * MAD's class and class version are its bytes 1 and 2; a sender agent is
 * registered for them (no methods, so nothing unsolicited is taken). ib_umad
 * puts the agent's bits in TransactionID 63-32 of a request, so an answer
 * to it comes back here.
 *
 *   umad-send [-C CA] [-P PORT] --dlid LID [--sl N] [--qpn N] [--qkey K]
 *             [--dgid GID [--hop N]] [--wait MS] HEX
 *
 * HEX: the MAD, at most 256 bytes as hex digits (ib_mad pads it to 256).
 * Prints "sent=1", then with --wait either "answer.status=0x.. answer.method=
 * 0x.. answer.attr=0x.. answer.mad=HEX" or "answer=none". Exit status: 0
 * sent (and answered, with --wait), 1 no answer, 2 usage, 4 local error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "pathrec.h"

#define MAD_LEN 256

static void usage(FILE *f)
{
	fputs("usage: umad-send [-C CA] [-P PORT] --dlid LID [--sl N] [--qpn N] [--qkey K]\n"
	      "                 [--dgid GID [--hop N]] [--wait MS] HEX\n", f);
}

static unsigned long num(const char *what, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || v > max) {
		fprintf(stderr, "umad-send: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "Ca", required_argument, NULL, 'C' },
		{ "Port", required_argument, NULL, 'P' },
		{ "dlid", required_argument, NULL, 'd' },
		{ "sl", required_argument, NULL, 's' },
		{ "qpn", required_argument, NULL, 'q' },
		{ "qkey", required_argument, NULL, 'k' },
		{ "dgid", required_argument, NULL, 'g' },
		{ "hop", required_argument, NULL, 'H' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ca = NULL, *dgid = NULL;
	unsigned long dlid = 0, sl = 0, qpn = 1, qkey = 0x80010000ul, hop = 255, wait_ms = 0;
	int port = 0, c, portid, agent, len, i;
	uint8_t mad[MAD_LEN], *r;
	void *snd, *rcv;
	size_t hexlen;

	while ((c = getopt_long(argc, argv, "C:P:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C': ca = optarg; break;
		case 'P': port = (int)num("port", optarg, 254); break;
		case 'd': dlid = num("--dlid", optarg, 0xffff); break;
		case 's': sl = num("--sl", optarg, 15); break;
		case 'q': qpn = num("--qpn", optarg, 0xffffff); break;
		case 'k': qkey = num("--qkey", optarg, 0xffffffffu); break;
		case 'g': dgid = optarg; break;
		case 'H': hop = num("--hop", optarg, 255); break;
		case 'w': wait_ms = num("--wait", optarg, 600000); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || !dlid) {
		usage(stderr);
		return 2;
	}
	hexlen = strlen(argv[optind]);
	memset(mad, 0, sizeof(mad));
	if (hexlen % 2 || hexlen > 2 * MAD_LEN || hexlen < 48 ||
	    sf_hex_to_bytes(argv[optind], mad, hexlen / 2)) {
		fprintf(stderr, "umad-send: HEX must be 24 to 256 bytes of hex digits\n");
		return 2;
	}
	if (umad_init() < 0)
		return fprintf(stderr, "umad-send: umad_init failed\n"), 4;
	portid = umad_open_port(ca, port);
	if (portid < 0)
		return fprintf(stderr, "umad-send: cannot open umad port\n"), 4;
	agent = umad_register(portid, mad[1], mad[2], 0, NULL);
	if (agent < 0)
		return fprintf(stderr, "umad-send: cannot register class 0x%02x version %u\n",
			       mad[1], mad[2]), 4;
	snd = calloc(1, umad_size() + MAD_LEN);
	rcv = calloc(1, umad_size() + MAD_LEN);
	if (!snd || !rcv)
		return 4;
	memcpy(umad_get_mad(snd), mad, MAD_LEN);
	umad_set_addr(snd, (int)dlid, (int)qpn, (int)sl, (int)qkey);
	if (dgid) {
		struct ib_mad_addr *a = umad_get_mad_addr(snd);

		if (inet_pton(AF_INET6, dgid, a->gid) != 1) {
			fprintf(stderr, "umad-send: bad --dgid '%s'\n", dgid);
			return 2;
		}
		a->grh_present = 1;
		a->hop_limit = (uint8_t)hop;
	}
	if (umad_send(portid, agent, snd, MAD_LEN, wait_ms ? (int)wait_ms : 0, 0) < 0) {
		fprintf(stderr, "umad-send: umad_send: %s\n", strerror(errno));
		return 4;
	}
	printf("sent=1\n");
	if (!wait_ms)
		return 0;
	for (;;) {
		len = MAD_LEN;
		if (umad_recv(portid, rcv, &len, (int)wait_ms) < 0) {
			printf("answer=none\n");
			return 1;
		}
		/* the send's own completion (a timeout) comes back as a status */
		if (umad_status(rcv)) {
			printf("answer=none\n");
			return 1;
		}
		break;
	}
	r = umad_get_mad(rcv);
	printf("answer.method=0x%02x\nanswer.status=0x%04x\nanswer.attr=0x%04x\nanswer.mad=",
	       r[3], r[4] << 8 | r[5], r[16] << 8 | r[17]);
	for (i = 0; i < MAD_LEN; i++)
		printf("%02x", r[i]);
	printf("\n");
	return 0;
}
