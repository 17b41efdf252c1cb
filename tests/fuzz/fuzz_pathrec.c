// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the PathRecord codec of the raw rdma_cm client
 * (tests/simfab/client/pathrec.c), which decodes what the kernel returns
 * for RDMA_OPTION_IB_PATH and QUERY_PATH, and its text helpers.
 *
 * Properties, besides no memory error or undefined behaviour:
 * - a decoded PathRecord encodes back to its bytes, reserved bits cleared,
 *   and decodes the same again;
 * - it decodes field for field as ib_remote_sa's codec
 *   (userspace/remote-sa/rsa_mad.c) decodes the same 64 bytes: two
 *   readings of IBA 15.2.5.16 that must agree;
 * - sf_hex_to_bytes takes exactly 2*len hex digits (after an optional
 *   0x) and gives back their bytes;
 * - sf_pathflags_str stays in its buffer and, given room, names exactly
 *   the bits that are set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#include "fuzz.h"
#include "pathrec.h"
#include "rsa_mad.h"

static FILE *devnull;

static void check_codec(const uint8_t *raw)
{
	uint8_t want[SF_PATHREC_LEN], got[SF_PATHREC_LEN];
	struct sf_pathrec pr, again;
	struct rsa_pathrec rp;

	sf_pathrec_decode(raw, &pr);
	memcpy(want, raw, sizeof(want));
	want[44] &= 0x8f;	/* bits 6-4 reserved */
	memset(want + 58, 0, sizeof(want) - 58);
	sf_pathrec_encode(&pr, got);
	FUZZ_CHECK(!memcmp(got, want, sizeof(got)),
		   "decode+encode changed bytes other than reserved ones");
	sf_pathrec_decode(got, &again);
	FUZZ_CHECK(!memcmp(&again, &pr, sizeof(pr)), "decode is not stable over an encode");

	rsa_pathrec_decode(raw, &rp);
	FUZZ_CHECK(pr.service_id == rp.service_id && !memcmp(pr.dgid, rp.dgid, 16) &&
		   !memcmp(pr.sgid, rp.sgid, 16) && pr.dlid == rp.dlid && pr.slid == rp.slid &&
		   pr.raw_traffic == rp.raw_traffic && pr.flow_label == rp.flow_label &&
		   pr.hop_limit == rp.hop_limit && pr.tclass == rp.tclass &&
		   pr.reversible == rp.reversible && pr.numb_path == rp.numb_path &&
		   pr.pkey == rp.pkey && pr.qos_class == rp.qos_class && pr.sl == rp.sl &&
		   pr.mtu_selector == rp.mtu_selector && pr.mtu == rp.mtu &&
		   pr.rate_selector == rp.rate_selector && pr.rate == rp.rate &&
		   pr.plt_selector == rp.plt_selector && pr.packet_life == rp.packet_life &&
		   pr.preference == rp.preference,
		   "simfab-cm's and ib_remote_sa's PathRecord decoders disagree");
	rsa_pathrec_encode(&rp, want);
	FUZZ_CHECK(!memcmp(got, want, sizeof(got)),
		   "simfab-cm's and ib_remote_sa's PathRecord encoders disagree");
	FUZZ_CHECK(sf_mtu_bytes(pr.mtu) == rsa_mtu_bytes(pr.mtu), "the two MTU tables disagree");
}

static int hexval(int c)
{
	c = tolower(c);
	return isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* @s (NUL-terminated) into a buffer of exactly @n bytes. */
static void check_hex(const char *s, size_t n)
{
	const char *h = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? s + 2 : s;
	uint8_t *out = malloc(n ? n : 1);
	int ok = strlen(h) == 2 * n, rc;
	size_t i;

	for (i = 0; ok && i < 2 * n; i++)
		ok = hexval((unsigned char)h[i]) >= 0;
	rc = sf_hex_to_bytes(s, out, n);
	FUZZ_CHECK(rc == (ok ? 0 : -1), "sf_hex_to_bytes misjudged its input");
	for (i = 0; !rc && i < n; i++)
		FUZZ_CHECK(out[i] == (hexval((unsigned char)h[2 * i]) << 4 |
				      hexval((unsigned char)h[2 * i + 1])),
			   "sf_hex_to_bytes gave other bytes than the digits say");
	free(out);
}

static void check_flags(uint32_t flags, size_t n)
{
	static const char *const names[] = {
		"GMP", "PRIMARY", "ALTERNATE", "OUTBOUND", "INBOUND", "INBOUND_REVERSE",
	};
	char *buf = malloc(n), *tok, *save;
	char big[512];
	uint32_t seen = 0;
	unsigned int b;

	FUZZ_CHECK(sf_pathflags_str(flags, buf, n) == buf, "sf_pathflags_str returned another buffer");
	FUZZ_CHECK(memchr(buf, 0, n) != NULL, "sf_pathflags_str left no NUL in its buffer");
	free(buf);

	sf_pathflags_str(flags, big, sizeof(big));
	if (!flags) {
		FUZZ_CHECK(!strcmp(big, "none"), "no flags are not \"none\"");
		return;
	}
	for (tok = strtok_r(big, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
		for (b = 0; b < 6 && strcmp(tok, names[b]); b++)
			;
		if (b == 6) {
			char *end;
			unsigned long v;

			FUZZ_CHECK(!strncmp(tok, "bit", 3), "an unknown name in the flags text");
			v = strtoul(tok + 3, &end, 10);
			FUZZ_CHECK(!*end && v >= 6 && v < 32, "a bad bitN in the flags text");
			b = (unsigned int)v;
		}
		FUZZ_CHECK(!(seen & (1u << b)), "a flag named twice");
		seen |= 1u << b;
	}
	FUZZ_CHECK(seen == flags, "the flags text does not name the bits that are set");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sf_pathrec pr;
	uint32_t flags;
	char *s, gid[48];

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (size >= SF_PATHREC_LEN) {
		check_codec(data);
		sf_pathrec_decode(data, &pr);
		memcpy(&flags, data + 58, sizeof(flags));
		sf_pathrec_print(devnull, "p", flags, &pr);
		check_flags(flags, 1 + data[62] % 128);
		sf_gid_str(data + 8, gid, 1 + data[63] % sizeof(gid));
		FUZZ_CHECK(memchr(gid, 0, sizeof(gid)) != NULL, "sf_gid_str left no NUL");
	}
	/* the rest as text: hex into a buffer of byte 0 % 80 bytes */
	if (size >= 1) {
		s = malloc(size);
		memcpy(s, data + 1, size - 1);
		s[size - 1] = '\0';
		check_hex(s, data[0] % 80);
		free(s);
	}
	return 0;
}
