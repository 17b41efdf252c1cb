// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: rdma_ucm's RDMA_OPTION_IB_PATH parser, the series' own
 * drivers/infiniband/core/path_set.c compiled on the host through the
 * shim of tests/unit/path-set (as its table test is), fed the blob a user
 * passes to rdma_set_option().
 *
 * Properties, besides no memory error or undefined behaviour (the blob is
 * in a buffer of exactly its length, so a read past it is caught):
 * - the parser's answer is the documented rules' (the table test's oracle,
 *   tests/unit/path-set/oracle.c): return code, the record supplying each
 *   role, reversed and routed flags; on -EINVAL the set is left untouched;
 * - ib_path_set_rec_routed agrees with the rules for every record;
 * - the capabilities text stays in a buffer of any size, NUL-terminated,
 *   a prefix of the full text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "oracle.h"
#include "path_set.h"

static char full_caps[4096];
static size_t full_caps_len;

static void check_parse(const uint8_t *blob, size_t len)
{
	struct ib_path_set got, before;
	struct want w;
	int rc, p, r;
	size_t i;

	oracle(blob, len, &w);
	memset(&got, 0x5a, sizeof(got));
	before = got;
	rc = ib_path_set_parse(blob, len, &got);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL, "ib_path_set_parse returned neither 0 nor -EINVAL");
	FUZZ_CHECK(rc == w.rc, "ib_path_set_parse accepts or refuses against the rules");
	if (rc) {
		FUZZ_CHECK(!memcmp(&got, &before, sizeof(got)), "a refused blob changed the set");
		return;
	}
	for (p = 0; p < 2; p++) {
		for (r = 0; r < 3; r++)
			FUZZ_CHECK(got.rec[p][r] == w.rec[p][r],
				   "a role taken from another record than the rules say");
		FUZZ_CHECK(got.reversed[p] == !!w.reversed[p], "reversed differs from the rules");
		FUZZ_CHECK(got.routed[p] == !!w.routed[p], "routed differs from the rules");
	}
	for (i = 0; i < len / REC; i++)
		FUZZ_CHECK(ib_path_set_rec_routed(blob, (unsigned int)i) == !!rec_routed(blob, (int)i),
			   "ib_path_set_rec_routed differs from the rules");
}

static void check_caps(size_t n)
{
	char *buf = malloc(n ? n : 1);
	int got;

	got = ib_path_set_caps(buf, n);
	FUZZ_CHECK(got >= 0 && (n ? (size_t)got < n : got == 0),
		   "ib_path_set_caps says it wrote more than its buffer holds");
	if (n) {
		FUZZ_CHECK(buf[got] == '\0', "the capabilities text is not NUL-terminated");
		FUZZ_CHECK(!memcmp(buf, full_caps, (size_t)got), "a short buffer got another text");
		FUZZ_CHECK((size_t)got == (n > full_caps_len ? full_caps_len : n - 1),
			   "a short buffer was not filled");
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *blob;

	if (!full_caps_len)
		full_caps_len = (size_t)ib_path_set_caps(full_caps, sizeof(full_caps));
	/* malloc(0) may give NULL; the parser must refuse len 0 unread */
	blob = malloc(size ? size : 1);
	memcpy(blob, data, size);
	check_parse(blob, size);
	free(blob);
	check_caps(size % (full_caps_len + 8));
	return 0;
}
