/*
 * Host table test of rdma_ucm's RDMA_OPTION_IB_PATH parser: the kernel's
 * own drivers/infiniband/core/path_set.c, taken from the patch series by
 * tests/unit/path-set/run, against an independent reading of the rules in
 * docs/path-records.md (the oracle below).
 *
 * Generated cases: each of the 64 combinations of the six defined flag
 * bits at each position of blobs of 1 to 8 records, its path routed or
 * subnet-local by turns, the other positions holding fixed filler records
 * (64 x 36 = 2304 cases), each also as the blob of a LAP on a connected
 * id (ib_path_set_parse_alt(): only a usable alternate counts); then
 * unknown flag bits, reserved not 0 and more than 16 records (not a set:
 * read as Linux 6.1 reads it), odd lengths, and the parser's table of
 * forms against the documented ones.
 * Prints one result line per group and "N passed, M failed".
 *
 *   test_path_set [-v]      -v: one line per failing case
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_set.h"
#include "oracle.h"

static int verbose;
static int passed, failed;

/* ---- records -------------------------------------------------------------- */

/* A record: flags, and a path that is routed (HopLimit 255, DGID on
 * another subnet) or subnet-local (HopLimit 0, one prefix). */
static void mkrec(unsigned char *blob, int i, unsigned int flags, int routed)
{
	unsigned char *r = blob + i * REC;
	unsigned char *pr = r + 8;

	memset(r, 0, REC);
	memcpy(r, &flags, 4);
	/* DGID at 8, SGID at 24: prefixes fec0:0:0:a00 / b00 or both a00 */
	pr[8] = 0xfe; pr[9] = 0xc0; pr[14] = routed ? 0x0b : 0x0a;
	pr[24] = 0xfe; pr[25] = 0xc0; pr[30] = 0x0a;
	pr[23] = 0x01 + i; pr[39] = 0x02;
	pr[47] = routed ? 255 : 0;
	pr[40] = 0; pr[41] = 2 + i;	/* DLID, so records differ */
}

/* ---- one case ------------------------------------------------------------- */

static int check(const char *what, const unsigned char *blob, size_t len)
{
	struct ib_path_set got, before;
	struct want w;
	int rc, p, r, bad = 0;

	oracle(blob, len, &w);
	memset(&got, 0x5a, sizeof(got));
	before = got;
	rc = ib_path_set_parse(blob, len, &got);
	if (rc != w.rc) {
		bad = 1;
	} else if (rc) {
		/* nothing changes on -EINVAL */
		bad = memcmp(&got, &before, sizeof(got)) != 0;
	} else {
		for (p = 0; p < 2; p++) {
			for (r = 0; r < 3; r++)
				bad |= got.rec[p][r] != w.rec[p][r];
			bad |= got.reversed[p] != !!w.reversed[p];
			bad |= got.routed[p] != !!w.routed[p];
		}
	}
	/* the same blob as a LAP's (ib_path_set_parse_alt()) */
	memset(&got, 0x5a, sizeof(got));
	rc = ib_path_set_parse_alt(blob, len, &got);
	if (rc != w.alt_rc) {
		bad |= 2;
	} else if (rc) {
		bad |= (memcmp(&got, &before, sizeof(got)) != 0) << 1;
	} else {
		for (r = 0; r < 3; r++)
			bad |= (got.rec[1][r] != w.alt_rec[r]) << 1;
		bad |= (got.reversed[1] != !!w.alt_reversed) << 1;
		bad |= (got.routed[1] != !!w.alt_routed) << 1;
	}
	if (bad & 2 && verbose)
		printf("# %s: parse_alt rc %d want %d\n", what, rc, w.alt_rc);
	bad &= 1 | 2;
	if (bad & 1 && verbose) {
		rc = ib_path_set_parse(blob, len, &got);
		printf("# %s: rc %d want %d;", what, rc, w.rc);
		if (!rc)
			for (p = 0; p < 2; p++)
				printf(" %s got %d/%d/%d rev %d want %d/%d/%d rev %d;",
				       p ? "alt" : "pri", got.rec[p][0], got.rec[p][1],
				       got.rec[p][2], got.reversed[p], w.rec[p][0],
				       w.rec[p][1], w.rec[p][2], w.reversed[p]);
		printf("\n");
	}
	return !!bad;
}

static void result(const char *name, int cases, int bad)
{
	if (bad) {
		failed++;
		printf("not ok path-set:%s - %d of %d cases differ from the rules\n",
		       name, bad, cases);
	} else {
		passed++;
		printf("ok path-set:%s (%d cases)\n", name, cases);
	}
}

/* filler records: (flags, routed) */
static const struct { unsigned int flags; int routed; } filler[] = {
	{ 0x40 | GMP | PRI | OUT | IREV, 0 },	/* an unknown bit: skipped */
	{ PRI | IN, 1 },			/* a routed return */
	{ ALT | GMP | OUT | IREV, 0 },		/* a local alternate */
	{ PRI | OUT, 1 },			/* a routed forward */
	{ GMP | PRI | OUT | IREV, 0 },		/* the classic record */
	{ ALT | IN, 1 },			/* an alternate's return */
};
#define NFILL (sizeof(filler) / sizeof(filler[0]))

int main(int argc, char **argv)
{
	unsigned char blob[(MAXREC + 2) * REC];
	int n, pos, f, j, bad, cases, total = 0, ok_cases = 0, alt_cases = 0;
	char what[96];

	verbose = argc > 1 && !strcmp(argv[1], "-v");

	/* the generated table */
	for (n = 1; n <= 8; n++) {
		bad = cases = 0;
		for (pos = 0; pos < n; pos++) {
			for (f = 0; f < 64; f++) {
				for (j = 0; j < n; j++)
					if (j != pos)
						mkrec(blob, j, filler[(j + n) % NFILL].flags,
						      filler[(j + n) % NFILL].routed);
				mkrec(blob, pos, (unsigned int)f, (f + pos + n) % 2);
				snprintf(what, sizeof(what), "n=%d pos=%d flags=0x%02x%s",
					 n, pos, f, (f + pos + n) % 2 ? " routed" : "");
				bad += check(what, blob, (size_t)n * REC);
				cases++;
				if (!ib_path_set_parse(blob, (size_t)n * REC,
						       &(struct ib_path_set){ 0 }))
					ok_cases++;
				if (!ib_path_set_parse_alt(blob, (size_t)n * REC,
							   &(struct ib_path_set){ 0 }))
					alt_cases++;
			}
		}
		snprintf(what, sizeof(what), "table-%d-records", n);
		result(what, cases, bad);
		total += cases;
	}
	printf("# %d generated cases, %d accepted as a set, %d as a LAP's alternate\n",
	       total, ok_cases, alt_cases);

	/* the single classic record, local and routed, alone: accepted as today */
	bad = 0;
	mkrec(blob, 0, GMP | PRI | OUT | IREV, 0);
	bad += check("classic local", blob, REC);
	bad += ib_path_set_parse(blob, REC, &(struct ib_path_set){ 0 }) != 0;
	mkrec(blob, 0, GMP | PRI | OUT | IREV, 1);
	bad += check("classic routed", blob, REC);
	bad += ib_path_set_parse(blob, REC, &(struct ib_path_set){ 0 }) != 0;
	result("classic-record", 4, bad);

	/* unknown bits (each of 6..31) on the classic record, before a good
	 * one: not a set, read as 6.1 reads it (the good one alone) */
	bad = cases = 0;
	for (f = 6; f < 32; f++) {
		struct ib_path_set s;

		mkrec(blob, 0, (1u << f) | GMP | PRI | OUT | IREV, 0);
		mkrec(blob, 1, GMP | PRI | OUT | IREV, 0);
		snprintf(what, sizeof(what), "unknown bit %d", f);
		bad += check(what, blob, 2 * REC);
		bad += ib_path_set_parse(blob, 2 * REC, &s) != 0 || s.rec[0][0] != 1;
		bad += check(what, blob, REC);	/* alone: nothing usable */
		cases += 2;
	}
	result("unknown-bits-read-as-6.1", cases, bad);

	/* reserved not 0 in any one record of a set that has an alternate:
	 * read as 6.1 (the classic record alone, no alternate, no LAP) */
	bad = cases = 0;
	for (pos = 0; pos < 4; pos++) {
		unsigned int rv[] = { 1, 0x80000000u, 0xffffffffu };
		unsigned int k;

		for (k = 0; k < 3; k++) {
			struct ib_path_set s;

			mkrec(blob, 0, GMP | PRI | OUT, 1);
			mkrec(blob, 1, PRI | IN, 1);
			mkrec(blob, 2, GMP | ALT | OUT | IREV, 0);
			mkrec(blob, 3, GMP | PRI | OUT | IREV, 1);
			memcpy(blob + pos * REC + 4, &rv[k], 4);
			snprintf(what, sizeof(what), "reserved 0x%x in record %d", rv[k], pos);
			bad += check(what, blob, 4 * REC);
			memset(&s, 0, sizeof(s));
			/* record 3 alone (6.1 never read reserved) */
			bad += ib_path_set_parse(blob, 4 * REC, &s) ||
			       s.rec[0][0] != 3 || s.rec[0][2] != -1 ||
			       s.rec[1][0] != -1;
			bad += ib_path_set_parse_alt(blob, 4 * REC, &s) != -EINVAL;
			cases++;
		}
	}
	/* the same set with reserved 0 is a set: its alternate counts */
	mkrec(blob, 0, GMP | PRI | OUT, 1);
	mkrec(blob, 1, PRI | IN, 1);
	mkrec(blob, 2, GMP | ALT | OUT | IREV, 0);
	mkrec(blob, 3, GMP | PRI | OUT | IREV, 1);
	{
		struct ib_path_set s;

		bad += check("reserved 0", blob, 4 * REC);
		bad += ib_path_set_parse(blob, 4 * REC, &s) || s.rec[0][0] != 0 ||
		       s.rec[0][2] != 1 || s.rec[1][0] != 2;
		cases++;
	}
	result("reserved-not-zero-read-as-6.1", cases, bad);

	/* more than 16 records: 6.1 took the first classic record wherever it
	 * was; so does this parser, and -EINVAL without one */
	bad = cases = 0;
	for (n = MAXREC + 1; n <= MAXREC + 2; n++) {
		for (pos = 0; pos <= n; pos++) {
			struct ib_path_set s;

			for (j = 0; j < n; j++)
				mkrec(blob, j, j % 2 ? (PRI | IN) : (GMP | PRI | OUT), 1);
			if (pos < n)
				mkrec(blob, pos, GMP | PRI | OUT | IREV, pos % 2);
			snprintf(what, sizeof(what), "%d records, classic at %d", n, pos);
			bad += check(what, blob, (size_t)n * REC);
			if (pos < n)
				bad += ib_path_set_parse(blob, (size_t)n * REC, &s) ||
				       s.rec[0][0] != pos || s.rec[0][1] != pos;
			else
				bad += ib_path_set_parse(blob, (size_t)n * REC, &s) != -EINVAL;
			cases++;
		}
	}
	result("more-than-16-records-read-as-6.1", cases, bad);

	/* odd lengths, empty, too long */
	bad = cases = 0;
	for (j = 0; j < MAXREC + 2; j++)
		mkrec(blob, j, GMP | PRI | OUT | IREV, 0);
	for (n = 0; n <= (MAXREC + 2) * REC; n++) {
		if (n % REC && n % 7)
			continue;	/* a sample of the odd ones */
		snprintf(what, sizeof(what), "len %d", n);
		bad += check(what, blob, (size_t)n);
		cases++;
	}
	result("lengths", cases, bad);

	/* the parser's table (what RDMA_USER_CM_QUERY_IBR_CAPS reports) holds
	 * every documented form, and only those */
	{
		unsigned int fl, k;

		bad = cases = 0;
		for (fl = 0; fl < 64; fl++) {
			int listed = 0;

			for (k = 0; k < ib_path_set_nforms; k++)
				listed += ib_path_set_forms[k].flags == fl;
			if (listed != understood(fl)) {
				bad++;
				if (verbose)
					printf("# forms: 0x%02x listed %d times\n", fl, listed);
			}
			cases++;
		}
		bad += ib_path_set_nforms > 16;	/* RDMA_USER_CM_IBR_MAX_FORMS */
		cases++;
		result("forms-table", cases, bad);
	}

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
