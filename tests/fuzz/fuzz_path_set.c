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
 *   a blob that is not a set (more than 16 records, reserved not 0, a
 *   form not in the table) is read as Linux 6.1 reads it;
 * - ib_path_set_parse_alt (RDMA_OPTION_IB_ALT_PATH) likewise;
 * - ib_path_set_rec_routed agrees with the rules for every record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "oracle.h"
#include "path_set.h"

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

static void check_parse_alt(const uint8_t *blob, size_t len)
{
	struct ib_path_set got, before;
	struct want w;
	int rc, r;

	oracle(blob, len, &w);
	memset(&got, 0x5a, sizeof(got));
	before = got;
	rc = ib_path_set_parse_alt(blob, len, &got);
	FUZZ_CHECK(rc == w.alt_rc, "ib_path_set_parse_alt accepts or refuses against the rules");
	if (rc) {
		FUZZ_CHECK(!memcmp(&got, &before, sizeof(got)), "a refused alternate changed the set");
		return;
	}
	for (r = 0; r < 3; r++)
		FUZZ_CHECK(got.rec[1][r] == w.alt_rec[r], "an alternate's role from another record");
	FUZZ_CHECK(got.reversed[1] == !!w.alt_reversed, "alternate reversed differs");
	FUZZ_CHECK(got.routed[1] == !!w.alt_routed, "alternate routed differs");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *blob;

	/* malloc(0) may give NULL; the parser must refuse len 0 unread */
	blob = malloc(size ? size : 1);
	memcpy(blob, data, size);
	check_parse(blob, size);
	check_parse_alt(blob, size);
	free(blob);
	return 0;
}
