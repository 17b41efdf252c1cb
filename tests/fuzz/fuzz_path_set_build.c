// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the patched librdmacm's path record set builder
 * (librdmacm/path_set.c of userspace/librdmacm, issue 12), fed what it
 * reads from outside the library: the kernel's answer to
 * RDMA_USER_CM_QUERY_IBR_CAPS and a resolver's answer (ibacm's records
 * tagged by flags, or QUERY_PATH's).
 *
 * Input: byte 0 picks the answer's source (bit 0: PATH_SET_SRC_KERNEL)
 * and the capabilities (bit 1: the kernel's own answer, built as ucma.c
 * builds it from the series' table of forms, ib_path_set_forms[]; else
 * the fuzzed bytes after byte 2, as many as byte 2 says, up to the
 * answer's 152: what the kernel wrote into the library's buffer); byte 1
 * the room given to the builder (1-20 records); the rest is the resolver's
 * answer as struct path_set_rec records.
 *
 * Properties, besides no memory error or undefined behaviour:
 * - path_set_build() and path_set_build_alt() return -1 or a count within
 *   the room they were given and the kernel's max_records;
 * - path_set_caps_from_query() takes the kernel's own answer, and from any
 *   answer keeps only limits within range (1 to PATH_SET_MAX_RECORDS
 *   records, room for one) and at most PATH_SET_QUERY_FORMS forms of known
 *   bits including the classic one, or describes a kernel without sets;
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

static struct path_set_query_resp kernel_caps;

/* The kernel's answer for an IB id, as ucma_query_ibr_caps() builds it */
static void kernel_caps_resp(struct path_set_query_resp *r)
{
	const struct ib_path_set_form *f;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->version = 1;
	r->length = sizeof(*r);
	r->max_records = IB_PATH_SET_MAX_RECORDS;
	r->max_bytes = IB_PATH_SET_MAX_RECORDS * IB_PATH_SET_REC_SIZE;
	for (i = 0; i < ib_path_set_nforms && i < PATH_SET_QUERY_FORMS; i++) {
		f = &ib_path_set_forms[i];
		r->forms[i].flags = f->flags;
		r->forms[i].roles = f->roles;
		if (f->reversed && (f->roles & (1u << IB_PATH_SET_RETURN)))
			r->forms[i].roles ^= PATH_SET_ROLE_RETURN | PATH_SET_ROLE_RETURN_LOCAL;
	}
	r->num_forms = i;
	r->caps = PATH_SET_CAP_SETS | PATH_SET_CAP_ALT_CONNECT | PATH_SET_CAP_LAP |
		  PATH_SET_CAP_APM_EVENTS | PATH_SET_CAP_REMOTE_SA;
}

static void check_caps(const struct path_set_caps *caps)
{
	unsigned int i;

	if (!caps->present) {
		FUZZ_CHECK(!caps->num_forms && !caps->flags && !caps->max_records,
			   "a refused answer left capabilities behind");
		return;
	}
	FUZZ_CHECK(caps->max_records >= 1 && caps->max_records <= PATH_SET_MAX_RECORDS &&
		   caps->max_bytes >= sizeof(struct path_set_rec) &&
		   caps->max_bytes / sizeof(struct path_set_rec) <= PATH_SET_MAX_RECORDS,
		   "limits out of range taken");
	FUZZ_CHECK(caps->num_forms <= PATH_SET_QUERY_FORMS &&
		   path_set_caps_has_form(caps, PATH_SET_CLASSIC) &&
		   (caps->flags & PATH_SET_CAP_SETS) && !(caps->flags & ~PATH_SET_CAPS_KNOWN),
		   "forms or flags out of range taken");
	for (i = 0; i < caps->num_forms; i++)
		FUZZ_CHECK(!(caps->forms[i].flags & ~0x3fu) && caps->forms[i].roles &&
			   !(caps->forms[i].roles & ~(unsigned int)PATH_SET_ROLES_KNOWN),
			   "a form of unknown bits taken");
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
	int n, src;

	if (size < 2)
		return 0;
	if (!kernel_caps.version)
		kernel_caps_resp(&kernel_caps);
	src = data[0] & 1 ? PATH_SET_SRC_KERNEL : PATH_SET_SRC_FLAGS;
	kcaps = data[0] & 2;
	room = 1 + data[1] % ROOM_MAX;
	memset(&caps, 0x5a, sizeof(caps));
	if (kcaps) {
		FUZZ_CHECK(!path_set_caps_from_query(&caps, &kernel_caps, sizeof(kernel_caps)),
			   "the library refuses the kernel's own answer");
	} else if (size > 2) {
		size_t len = data[2] <= sizeof(kernel_caps) ? data[2] : sizeof(kernel_caps);
		uint8_t *resp;

		if (len > size - 3)
			len = size - 3;
		/* exactly what the kernel wrote, so that reads past it show */
		resp = malloc(len ? len : 1);
		memcpy(resp, data + 3, len);
		path_set_caps_from_query(&caps, resp, len);
		free(resp);
		off = 3 + len;
	} else {
		path_set_caps_from_query(&caps, NULL, 0);
	}
	check_caps(&caps);

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
