/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Encode/decode the 64-byte IBA PathRecord (IBA 1.4 vol 1, 15.2.5.16) as it
 * travels in struct ib_path_rec_data.path_rec: big-endian, wire layout.
 */
#ifndef SIMFAB_PATHREC_H
#define SIMFAB_PATHREC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SF_PATHREC_LEN 64

struct sf_pathrec {
	uint64_t service_id;	/* bytes 0-7 (was reserved before IBA 1.2) */
	uint8_t dgid[16];	/* bytes 8-23 */
	uint8_t sgid[16];	/* bytes 24-39 */
	uint16_t dlid;		/* bytes 40-41 */
	uint16_t slid;		/* bytes 42-43 */
	uint8_t raw_traffic;	/* byte 44 bit 7 */
	uint32_t flow_label;	/* 20 bits after 3 reserved bits */
	uint8_t hop_limit;	/* byte 47 */
	uint8_t tclass;		/* byte 48 */
	uint8_t reversible;	/* byte 49 bit 7 */
	uint8_t numb_path;	/* byte 49 bits 6-0 */
	uint16_t pkey;		/* bytes 50-51 */
	uint16_t qos_class;	/* bytes 52-53, upper 12 bits */
	uint8_t sl;		/* byte 53 low 4 bits */
	uint8_t mtu_selector;	/* byte 54 bits 7-6 */
	uint8_t mtu;		/* byte 54 bits 5-0 */
	uint8_t rate_selector;	/* byte 55 bits 7-6 */
	uint8_t rate;		/* byte 55 bits 5-0 */
	uint8_t plt_selector;	/* byte 56 bits 7-6 */
	uint8_t packet_life;	/* byte 56 bits 5-0 */
	uint8_t preference;	/* byte 57; bytes 58-63 reserved */
};

void sf_pathrec_decode(const uint8_t raw[SF_PATHREC_LEN], struct sf_pathrec *pr);
void sf_pathrec_encode(const struct sf_pathrec *pr, uint8_t raw[SF_PATHREC_LEN]);

/* Print one "PREFIX.field=value" line per field (and the ib_path_rec_data flags). */
void sf_pathrec_print(FILE *out, const char *prefix, uint32_t flags,
		      const struct sf_pathrec *pr);

/* "GMP|PRIMARY|..." for ib_path_rec_data flags; buf gets at most len bytes. */
const char *sf_pathflags_str(uint32_t flags, char *buf, size_t len);

/* IB MTU enum (1..5) -> bytes, 0 if unknown. */
unsigned int sf_mtu_bytes(unsigned int mtu);

/* Parse 128 hex digits into 64 bytes; 0 on success, -1 on bad input. */
int sf_hex_to_bytes(const char *hex, uint8_t *out, size_t len);

void sf_gid_str(const uint8_t gid[16], char *buf, size_t len);

#endif
