// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit test of the PathRecord decoder/encoder against hand-built bytes
 * (IBA 15.2.5.16 layout). Prints ok/not ok lines and "N passed, M failed".
 */
#include "pathrec.h"

#include <string.h>

static int passed, failed;

static void check(int cond, const char *name)
{
	if (cond) {
		passed++;
		printf("ok pathrec:%s\n", name);
	} else {
		failed++;
		printf("not ok pathrec:%s - mismatch\n", name);
	}
}

/* A record as OpenSM would answer for a host pair, written out by hand. */
static const uint8_t rec1[SF_PATHREC_LEN] = {
	/* 0: ServiceID */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x1c, 0xaf,
	/* 8: DGID fe80::2:c9:300:1:2 */
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0x00, 0xc9, 0x03, 0x00, 0x01, 0x02,
	/* 24: SGID fe80::1 */
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	/* 40: DLID 0x0003, SLID 0x0001 */
	0x00, 0x03, 0x00, 0x01,
	/* 44: RawTraffic 0, rsvd, FlowLabel 0x12345, HopLimit 0x40 */
	0x01, 0x23, 0x45, 0x40,
	/* 48: TClass 0x20, Reversible 1 NumbPath 1, P_Key 0xffff */
	0x20, 0x81, 0xff, 0xff,
	/* 52: QoSClass 0, SL 5; MTU sel 2 (exactly) MTU 4 (2048);
	 * Rate sel 2 Rate 7 (40 Gb/s) */
	0x00, 0x05, 0x84, 0x87,
	/* 56: PacketLifeTime sel 2 value 18; Preference 0; reserved */
	0x92, 0x00, 0, 0, 0, 0, 0, 0,
};

/* Every field at its extreme, to catch shifts bleeding into neighbours. */
static const uint8_t rec2[SF_PATHREC_LEN] = {
	0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b,
	0xbf, 0xff, 0xc0, 0x00,
	/* RawTraffic 1, rsvd 000, FlowLabel 0xfffff, HopLimit 0xff */
	0x8f, 0xff, 0xff, 0xff,
	/* TClass 0xff, Reversible 0 NumbPath 0x7f, P_Key 0x8001 */
	0xff, 0x7f, 0x80, 0x01,
	/* QoSClass 0xabc SL 0xf; MTU sel 3 MTU 0x3f; Rate sel 1 rate 0x3f */
	0xab, 0xcf, 0xff, 0x7f,
	/* PLT sel 0 value 0x3f; preference 0xff */
	0x3f, 0xff, 0, 0, 0, 0, 0, 0,
};

int main(void)
{
	struct sf_pathrec pr;
	uint8_t back[SF_PATHREC_LEN], hexed[SF_PATHREC_LEN];
	char buf[128], hex[2 * SF_PATHREC_LEN + 3];
	int i;

	sf_pathrec_decode(rec1, &pr);
	check(pr.service_id == 0x0000000001061cafULL, "rec1-service_id");
	sf_gid_str(pr.dgid, buf, sizeof(buf));
	check(!strcmp(buf, "fe80::2:c9:300:102"), "rec1-dgid");
	sf_gid_str(pr.sgid, buf, sizeof(buf));
	check(!strcmp(buf, "fe80::1"), "rec1-sgid");
	check(pr.dlid == 3 && pr.slid == 1, "rec1-lids");
	check(pr.raw_traffic == 0, "rec1-raw_traffic");
	check(pr.flow_label == 0x12345, "rec1-flow_label");
	check(pr.hop_limit == 0x40, "rec1-hop_limit");
	check(pr.tclass == 0x20, "rec1-tclass");
	check(pr.reversible == 1 && pr.numb_path == 1, "rec1-reversible-numb_path");
	check(pr.pkey == 0xffff, "rec1-pkey");
	check(pr.qos_class == 0 && pr.sl == 5, "rec1-sl");
	check(pr.mtu_selector == 2 && pr.mtu == 4 && sf_mtu_bytes(pr.mtu) == 2048,
	      "rec1-mtu");
	check(pr.rate_selector == 2 && pr.rate == 7, "rec1-rate");
	check(pr.plt_selector == 2 && pr.packet_life == 18, "rec1-packet_life");
	check(pr.preference == 0, "rec1-preference");
	sf_pathrec_encode(&pr, back);
	check(!memcmp(back, rec1, SF_PATHREC_LEN), "rec1-roundtrip");

	sf_pathrec_decode(rec2, &pr);
	check(pr.service_id == 0xffeeddccbbaa9988ULL, "rec2-service_id");
	check(pr.dlid == 0xbfff && pr.slid == 0xc000, "rec2-lids");
	check(pr.raw_traffic == 1, "rec2-raw_traffic");
	check(pr.flow_label == 0xfffff, "rec2-flow_label");
	check(pr.hop_limit == 0xff, "rec2-hop_limit");
	check(pr.tclass == 0xff, "rec2-tclass");
	check(pr.reversible == 0 && pr.numb_path == 0x7f, "rec2-reversible-numb_path");
	check(pr.pkey == 0x8001, "rec2-pkey");
	check(pr.qos_class == 0xabc && pr.sl == 0xf, "rec2-qos-sl");
	check(pr.mtu_selector == 3 && pr.mtu == 0x3f && sf_mtu_bytes(pr.mtu) == 0,
	      "rec2-mtu");
	check(pr.rate_selector == 1 && pr.rate == 0x3f, "rec2-rate");
	check(pr.plt_selector == 0 && pr.packet_life == 0x3f, "rec2-packet_life");
	check(pr.preference == 0xff, "rec2-preference");
	sf_pathrec_encode(&pr, back);
	check(!memcmp(back, rec2, SF_PATHREC_LEN), "rec2-roundtrip");

	/* Reserved bits are dropped on the way through (the 3 after RawTraffic). */
	memcpy(back, rec1, SF_PATHREC_LEN);
	back[44] |= 0x70;
	back[60] = 0xaa;
	sf_pathrec_decode(back, &pr);
	check(pr.raw_traffic == 0 && pr.flow_label == 0x12345, "reserved-ignored");

	for (i = 0; i < SF_PATHREC_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", rec1[i]);
	check(sf_hex_to_bytes(hex, hexed, SF_PATHREC_LEN) == 0 &&
	      !memcmp(hexed, rec1, SF_PATHREC_LEN), "hex-parse");
	check(sf_hex_to_bytes("abc", hexed, SF_PATHREC_LEN) < 0, "hex-short-rejected");
	hex[5] = 'g';
	check(sf_hex_to_bytes(hex, hexed, SF_PATHREC_LEN) < 0, "hex-bad-digit-rejected");

	check(!strcmp(sf_pathflags_str(0x23, buf, sizeof(buf)),
		      "GMP|PRIMARY|INBOUND_REVERSE"), "flags-str");
	check(!strcmp(sf_pathflags_str(0x14, buf, sizeof(buf)),
		      "ALTERNATE|INBOUND"), "flags-str-2");
	check(!strcmp(sf_pathflags_str(0, buf, sizeof(buf)), "none"), "flags-str-none");

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
