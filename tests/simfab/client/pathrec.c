// SPDX-License-Identifier: GPL-2.0-only
/* IBA PathRecord encode/decode; layout in pathrec.h. */
#include "pathrec.h"

#include <arpa/inet.h>
#include <string.h>

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void sf_pathrec_decode(const uint8_t raw[SF_PATHREC_LEN], struct sf_pathrec *pr)
{
	uint32_t w11;
	int i;

	memset(pr, 0, sizeof(*pr));
	for (i = 0; i < 8; i++)
		pr->service_id = pr->service_id << 8 | raw[i];
	memcpy(pr->dgid, raw + 8, 16);
	memcpy(pr->sgid, raw + 24, 16);
	pr->dlid = get16(raw + 40);
	pr->slid = get16(raw + 42);
	w11 = (uint32_t)raw[44] << 24 | (uint32_t)raw[45] << 16 |
	      (uint32_t)raw[46] << 8 | raw[47];
	pr->raw_traffic = (uint8_t)(w11 >> 31);
	pr->flow_label = (w11 >> 8) & 0xfffff;
	pr->hop_limit = raw[47];
	pr->tclass = raw[48];
	pr->reversible = raw[49] >> 7;
	pr->numb_path = raw[49] & 0x7f;
	pr->pkey = get16(raw + 50);
	pr->qos_class = get16(raw + 52) >> 4;
	pr->sl = raw[53] & 0x0f;
	pr->mtu_selector = raw[54] >> 6;
	pr->mtu = raw[54] & 0x3f;
	pr->rate_selector = raw[55] >> 6;
	pr->rate = raw[55] & 0x3f;
	pr->plt_selector = raw[56] >> 6;
	pr->packet_life = raw[56] & 0x3f;
	pr->preference = raw[57];
}

void sf_pathrec_encode(const struct sf_pathrec *pr, uint8_t raw[SF_PATHREC_LEN])
{
	uint32_t w11;
	int i;

	memset(raw, 0, SF_PATHREC_LEN);
	for (i = 0; i < 8; i++)
		raw[i] = (uint8_t)(pr->service_id >> (56 - 8 * i));
	memcpy(raw + 8, pr->dgid, 16);
	memcpy(raw + 24, pr->sgid, 16);
	put16(raw + 40, pr->dlid);
	put16(raw + 42, pr->slid);
	w11 = (uint32_t)(pr->raw_traffic & 1) << 31 |
	      (pr->flow_label & 0xfffff) << 8 | pr->hop_limit;
	raw[44] = (uint8_t)(w11 >> 24);
	raw[45] = (uint8_t)(w11 >> 16);
	raw[46] = (uint8_t)(w11 >> 8);
	raw[47] = (uint8_t)w11;
	raw[48] = pr->tclass;
	raw[49] = (uint8_t)((pr->reversible & 1) << 7 | (pr->numb_path & 0x7f));
	put16(raw + 50, pr->pkey);
	put16(raw + 52, (uint16_t)((pr->qos_class & 0xfff) << 4 | (pr->sl & 0xf)));
	raw[54] = (uint8_t)((pr->mtu_selector & 3) << 6 | (pr->mtu & 0x3f));
	raw[55] = (uint8_t)((pr->rate_selector & 3) << 6 | (pr->rate & 0x3f));
	raw[56] = (uint8_t)((pr->plt_selector & 3) << 6 | (pr->packet_life & 0x3f));
	raw[57] = pr->preference;
}

unsigned int sf_mtu_bytes(unsigned int mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

void sf_gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

const char *sf_pathflags_str(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"GMP", "PRIMARY", "ALTERNATE", "OUTBOUND", "INBOUND",
		"INBOUND_REVERSE",
	};
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < 32; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (i < sizeof(names) / sizeof(names[0]))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0,
					      "%s%s", n ? "|" : "", names[i]);
		else
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0,
					      "%sbit%u", n ? "|" : "", i);
	}
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

void sf_pathrec_print(FILE *out, const char *p, uint32_t flags,
		      const struct sf_pathrec *pr)
{
	char g[INET6_ADDRSTRLEN], fl[96];

	fprintf(out, "%s.flags=0x%x\n", p, flags);
	fprintf(out, "%s.flags_str=%s\n", p, sf_pathflags_str(flags, fl, sizeof(fl)));
	fprintf(out, "%s.service_id=0x%016llx\n", p,
		(unsigned long long)pr->service_id);
	sf_gid_str(pr->dgid, g, sizeof(g));
	fprintf(out, "%s.dgid=%s\n", p, g);
	sf_gid_str(pr->sgid, g, sizeof(g));
	fprintf(out, "%s.sgid=%s\n", p, g);
	fprintf(out, "%s.dlid=0x%04x\n", p, pr->dlid);
	fprintf(out, "%s.slid=0x%04x\n", p, pr->slid);
	fprintf(out, "%s.raw_traffic=%u\n", p, pr->raw_traffic);
	fprintf(out, "%s.flow_label=0x%05x\n", p, pr->flow_label);
	fprintf(out, "%s.hop_limit=%u\n", p, pr->hop_limit);
	fprintf(out, "%s.tclass=%u\n", p, pr->tclass);
	fprintf(out, "%s.reversible=%u\n", p, pr->reversible);
	fprintf(out, "%s.numb_path=%u\n", p, pr->numb_path);
	fprintf(out, "%s.pkey=0x%04x\n", p, pr->pkey);
	fprintf(out, "%s.qos_class=0x%03x\n", p, pr->qos_class);
	fprintf(out, "%s.sl=%u\n", p, pr->sl);
	fprintf(out, "%s.mtu_selector=%u\n", p, pr->mtu_selector);
	fprintf(out, "%s.mtu=%u\n", p, pr->mtu);
	fprintf(out, "%s.mtu_bytes=%u\n", p, sf_mtu_bytes(pr->mtu));
	fprintf(out, "%s.rate_selector=%u\n", p, pr->rate_selector);
	fprintf(out, "%s.rate=%u\n", p, pr->rate);
	fprintf(out, "%s.packet_life_selector=%u\n", p, pr->plt_selector);
	fprintf(out, "%s.packet_life=%u\n", p, pr->packet_life);
	fprintf(out, "%s.preference=%u\n", p, pr->preference);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sf_hex_to_bytes(const char *hex, uint8_t *out, size_t len)
{
	size_t i;

	if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
		hex += 2;
	if (strlen(hex) != 2 * len)
		return -1;
	for (i = 0; i < len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
