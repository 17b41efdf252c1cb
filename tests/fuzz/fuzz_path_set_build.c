// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the patched librdmacm's path record set builder
 * (librdmacm/path_set.c of userspace/librdmacm, issue 12), fed what it
 * reads from outside the library: the kernel's capabilities text and a
 * resolver's answer (ibacm's records tagged by flags, or QUERY_PATH's).
 *
 * Input: byte 0 picks the answer's source (bit 0: PATH_SET_SRC_KERNEL)
 * and the capabilities (bit 1: the kernel's own, written as the library's
 * text from the series' table of forms, ib_path_set_forms[], as
 * RDMA_USER_CM_QUERY_IBR_CAPS reports it; else the text after byte 1 up
 * to the first NUL,
 * fuzzed); byte 1 the room given to the builder (1-20 records); the rest,
 * after the text, is the answer as struct path_set_rec records.
 *
 * Properties, besides no memory error or undefined behaviour:
 * - path_set_build() and path_set_build_alt() return -1 or a count within
 *   the room they were given and the kernel's max_records;
 * - every record they write has flags the capabilities name (or is the
 *   classic GMP|PRIMARY|BIDIRECTIONAL record);
 * - with the kernel's own capabilities, the kernel's parser
 *   (drivers/infiniband/core/path_set.c of the series, what rdma_ucm runs)
 *   takes every set the builder makes, and every LAP set through
 *   ib_path_set_parse_alt(): the library never hands the kernel a blob it
 *   refuses.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/path_set.h"
#include "kernel/path_set.h"

#define ROOM_MAX 20

static char kernel_caps[4096];

/* The kernel's limits and forms (what its capabilities query answers) in
 * the text the library's parser reads. */
static void kernel_caps_text(char *buf, size_t len)
{
	static const char * const role[] = { "gmp", "forward", "return" };
	const struct ib_path_set_form *f;
	unsigned int i, r;
	size_t n;

	n = (size_t)snprintf(buf, len, "max_records %u\nmax_bytes %u\n",
			     IB_PATH_SET_MAX_RECORDS,
			     IB_PATH_SET_MAX_RECORDS * IB_PATH_SET_REC_SIZE);
	for (i = 0; i < ib_path_set_nforms && n < len; i++) {
		f = &ib_path_set_forms[i];
		n += (size_t)snprintf(buf + n, len - n, "form 0x%02x %s", f->flags, f->name);
		for (r = 0; r < 3 && n < len; r++)
			if (f->roles & (1u << r))
				n += (size_t)snprintf(buf + n, len - n, " %s%s", role[r],
						      r == 2 && f->reversed ? "(subnet-local)" : "");
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "\n");
	}
	if (n < len)
		snprintf(buf + n, len - n, "alternate 1\nlap 1\napm_events 1\nremote_sa 1\n");
}

static void check_out(const struct path_set_caps *caps, int n, size_t room,
		      const struct path_set_rec *out)
{
	int i;

	FUZZ_CHECK(n >= -1 && n <= (int)room, "the builder wrote past its room");
	if (caps->present && n > 0)
		FUZZ_CHECK((unsigned int)n <= caps->max_records &&
			   (size_t)n * sizeof(*out) <= caps->max_bytes,
			   "more records or bytes than the kernel takes");
	for (i = 0; i < n; i++)
		FUZZ_CHECK(out[i].flags == PATH_SET_CLASSIC ||
			   path_set_caps_has_form(caps, out[i].flags),
			   "a record of a form the kernel did not name");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct path_set_rec out[ROOM_MAX], *rec;
	struct path_set_answer ans;
	struct path_set_caps caps;
	struct ib_path_set set;
	size_t room, off = 2, num;
	bool kcaps;
	char *text;
	int n, src;

	if (size < 2)
		return 0;
	if (!kernel_caps[0])
		kernel_caps_text(kernel_caps, sizeof(kernel_caps));
	src = data[0] & 1 ? PATH_SET_SRC_KERNEL : PATH_SET_SRC_FLAGS;
	kcaps = data[0] & 2;
	room = 1 + data[1] % ROOM_MAX;
	if (kcaps) {
		text = strdup(kernel_caps);
	} else {
		const uint8_t *nul = memchr(data + 2, 0, size - 2);
		size_t len = nul ? (size_t)(nul - data - 2) : size - 2;

		text = malloc(len + 1);
		memcpy(text, data + 2, len);
		text[len] = '\0';
		off += len + (nul ? 1 : 0);
	}
	memset(&caps, 0, sizeof(caps));
	if (path_set_caps_parse(&caps, text) && kcaps)
		FUZZ_CHECK(0, "the builder refuses the kernel's own capabilities text");
	free(text);

	/* the answer in a buffer of exactly its records, so reads past it show */
	num = (size - off) / sizeof(*rec);
	rec = malloc(num ? num * sizeof(*rec) : 1);
	memcpy(rec, data + off, num * sizeof(*rec));
	if (path_set_answer_parse(&ans, src, rec, num))
		goto done;

	memset(out, 0x5a, sizeof(out));
	n = path_set_build(&caps, &ans, out, room);
	check_out(&caps, n, room, out);
	if (kcaps && n > 0)
		FUZZ_CHECK(!ib_path_set_parse(out, (size_t)n * sizeof(out[0]), &set),
			   "the kernel's parser refuses a set the builder made for it");

	n = path_set_build_alt(&caps, &ans.alt, out, room);
	check_out(&caps, n, room, out);
	if (kcaps && n > 0)
		FUZZ_CHECK(!ib_path_set_parse_alt(out, (size_t)n * sizeof(out[0]), &set),
			   "the kernel's parser refuses a LAP set the builder made for it");
done:
	free(rec);
	return 0;
}
