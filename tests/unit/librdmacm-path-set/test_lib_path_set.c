/*
 * Host test of the patched librdmacm's path record set builder
 * (librdmacm/path_set.c from userspace/librdmacm, extracted by ./run).
 *
 * For every capability combination (the kernel's own limits and forms,
 * ib_path_set_forms[] of kernel-patches/6.1 in the answer to
 * RDMA_USER_CM_QUERY_IBR_CAPS as ucma.c builds it, with each subset of the
 * nine forms the builder may use, alternates on and off, record limits 1 to
 * 5 and 16, and a kernel without the query) and every resolver answer below (ibacm
 * answers tagged by flags, the kernel's QUERY_PATH answer), the set built
 * must be the one the rules give (an oracle written from the rules in
 * docs/librdmacm.md), and the kernel's parser (drivers/infiniband/core/
 * path_set.c, what rdma_ucm runs) must read it back with the intended
 * records in each role, while a 6.1 kernel (first GMP|PRIMARY|BIDIRECTIONAL
 * record only) still finds the primary path.  Then the check of the query's
 * answer (path_set_caps_from_query) on out-of-range, short and future
 * answers.
 * Prints one result line per group and "N passed, M failed".
 *
 *   test_lib_path_set [-v]      -v: one line per failing case
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/path_set.h"
#include "kernel/path_set.h"

/* flag bits, written out here (ib_user_sa.h) */
enum { GMP = 1, PRI = 2, ALT = 4, OUT = 8, IN = 16, IREV = 32 };

static int verbose;
static int passed, failed;

/* ---- paths ---------------------------------------------------------------- */

/* HOPS: one prefix but HopLimit 255, which is not subnet-local either */
enum { LOCAL = 0, ROUTED = 1, NOREV = 2, HOPS = 4 };

/* A PathRecord: subnet-local (one prefix) or routed (DGID on another
 * subnet), reversible unless NOREV; id in DLID. */
static void mkpath(uint8_t *pr, int kind, int id)
{
	memset(pr, 0, 64);
	pr[8] = 0xfe; pr[9] = 0x80; pr[15] = (kind & ROUTED) ? 0x0b : 0x0a;
	pr[24] = 0xfe; pr[25] = 0x80; pr[31] = 0x0a;
	pr[23] = 0x20 + id; pr[39] = 0x10;
	pr[40] = 0; pr[41] = id;		/* DLID */
	pr[42] = 0; pr[43] = 1;			/* SLID */
	/* HopLimit 0 or 1 within the subnet; across it 255, or 1 on some
	 * records, the prefix alone telling them routed */
	pr[47] = (kind & ROUTED) ? ((id & 1) ? 255 : 1) : (kind & HOPS) ? 255 : (id & 1);
	pr[49] = (kind & NOREV) ? 0x01 : 0x81;	/* Reversible | NumbPath 1 */
	pr[50] = 0xff; pr[51] = 0xff;
}

/* ---- resolver answers ------------------------------------------------------ */

struct rec_spec { uint32_t flags; int kind; int id; };

/* An answer and, written by hand, which record plays which role */
struct answer {
	const char *name;
	enum path_set_source src;
	int num;
	struct rec_spec rec[8];
	int g, f, r;		/* primary: record index per role, -1 none */
	int ag, af, ar;		/* alternate */
};

static const struct answer answers[] = {
	/* ibacm: the classic single record */
	{ "local-classic", PATH_SET_SRC_FLAGS, 1, { { 0x2b, LOCAL, 1 } },
	  0, 0, -1, -1, -1, -1 },
	{ "local-not-reversible", PATH_SET_SRC_FLAGS, 1, { { 0x2b, LOCAL | NOREV, 1 } },
	  0, 0, -1, -1, -1, -1 },
	{ "routed-classic", PATH_SET_SRC_FLAGS, 1, { { 0x2b, ROUTED, 1 } },
	  0, 0, -1, -1, -1, -1 },
	{ "one-prefix-many-hops", PATH_SET_SRC_FLAGS, 2,
	  { { 0x0b, HOPS, 1 }, { 0x12, HOPS, 3 } }, 0, 0, 1, -1, -1, -1 },
	/* ibacm's three-record form: GMP, forward, return */
	{ "routed-3", PATH_SET_SRC_FLAGS, 3,
	  { { 0x03, ROUTED, 1 }, { 0x0a, ROUTED, 2 }, { 0x12, ROUTED, 3 } },
	  0, 1, 2, -1, -1, -1 },
	{ "routed-3-reordered", PATH_SET_SRC_FLAGS, 3,
	  { { 0x12, ROUTED, 3 }, { 0x0a, ROUTED, 2 }, { 0x03, ROUTED, 1 } },
	  2, 1, 0, -1, -1, -1 },
	{ "routed-gmp-forward-one", PATH_SET_SRC_FLAGS, 2,
	  { { 0x0b, ROUTED, 1 }, { 0x12, ROUTED, 3 } }, 0, 0, 1, -1, -1, -1 },
	{ "routed-classic-and-return", PATH_SET_SRC_FLAGS, 2,
	  { { 0x2b, ROUTED, 1 }, { 0x12, ROUTED, 3 } }, 0, 0, 1, -1, -1, -1 },
	{ "routed-gmp-not-reversible", PATH_SET_SRC_FLAGS, 3,
	  { { 0x03, ROUTED | NOREV, 1 }, { 0x0a, ROUTED, 2 }, { 0x12, ROUTED, 3 } },
	  0, 1, 2, -1, -1, -1 },
	{ "local-gmp-and-forward", PATH_SET_SRC_FLAGS, 2,
	  { { 0x03, LOCAL, 1 }, { 0x0a, LOCAL, 2 } }, 0, 1, -1, -1, -1, -1 },
	/* unknown bits and both/neither of PRIMARY/ALTERNATE are skipped */
	{ "skips-unknown", PATH_SET_SRC_FLAGS, 4,
	  { { 0x40 | 0x2b, LOCAL, 7 }, { 0x2f, LOCAL, 8 }, { 0x29, LOCAL, 9 },
	    { 0x2b, LOCAL, 1 } }, 3, 3, -1, -1, -1, -1 },
	{ "first-wins", PATH_SET_SRC_FLAGS, 4,
	  { { 0x0b, ROUTED, 1 }, { 0x12, ROUTED, 3 }, { 0x0b, ROUTED, 5 },
	    { 0x12, ROUTED, 6 } }, 0, 0, 1, -1, -1, -1 },
	/* alternates */
	{ "local-with-alt", PATH_SET_SRC_FLAGS, 2,
	  { { 0x2b, LOCAL, 1 }, { 0x2d, LOCAL, 4 } }, 0, 0, -1, 1, 1, -1 },
	{ "routed-with-alt", PATH_SET_SRC_FLAGS, 5,
	  { { 0x03, ROUTED, 1 }, { 0x0a, ROUTED, 2 }, { 0x12, ROUTED, 3 },
	    { 0x0d, ROUTED, 4 }, { 0x14, ROUTED, 5 } }, 0, 1, 2, 3, 3, 4 },
	{ "routed-alt-separate-gmp", PATH_SET_SRC_FLAGS, 6,
	  { { 0x0b, ROUTED, 1 }, { 0x12, ROUTED, 3 }, { 0x05, ROUTED, 9 },
	    { 0x0c, ROUTED, 4 }, { 0x14, ROUTED, 5 } }, 0, 0, 1, 2, 3, 4 },
	{ "routed-alt-no-return", PATH_SET_SRC_FLAGS, 3,
	  { { 0x0b, ROUTED, 1 }, { 0x12, ROUTED, 3 }, { 0x2d, ROUTED, 4 } },
	  0, 0, 1, 2, 2, -1 },
	{ "routed-primary-local-alt", PATH_SET_SRC_FLAGS, 3,
	  { { 0x0b, ROUTED, 1 }, { 0x12, ROUTED, 3 }, { 0x2d, LOCAL, 4 } },
	  0, 0, 1, 2, 2, -1 },
	{ "local-primary-routed-alt", PATH_SET_SRC_FLAGS, 3,
	  { { 0x2b, LOCAL, 1 }, { 0x0d, ROUTED, 4 }, { 0x14, ROUTED, 5 } },
	  0, 0, -1, 1, 1, 2 },
	/* the kernel's route as QUERY_PATH reports it */
	{ "kernel-local", PATH_SET_SRC_KERNEL, 2,
	  { { 0x2b, LOCAL, 1 }, { 0x2b, LOCAL, 4 } }, 0, 0, -1, 1, 1, -1 },
	{ "kernel-routed", PATH_SET_SRC_KERNEL, 2,
	  { { 0x2b, ROUTED, 1 }, { 0x2b, ROUTED, 4 } }, 0, 0, -1, 1, 1, -1 },
	{ "kernel-primary-only", PATH_SET_SRC_KERNEL, 1,
	  { { 0x2b, ROUTED, 1 } }, 0, 0, -1, -1, -1, -1 },
};
#define NANSWERS (sizeof(answers) / sizeof(answers[0]))

static void mkanswer(const struct answer *a, struct path_set_rec *rec)
{
	int i;

	for (i = 0; i < a->num; i++) {
		rec[i].flags = a->rec[i].flags;
		rec[i].reserved = 0;
		mkpath(rec[i].path, a->rec[i].kind, a->rec[i].id);
	}
}

/* ---- capabilities ---------------------------------------------------------- */

/* the forms the builder may use, each one bit of a capability mask */
static const uint32_t used_forms[] = {
	0x2b, 0x03, 0x2a, 0x0a, 0x12, 0x0b, 0x2d, 0x0d, 0x14
};
#define NFORMS (sizeof(used_forms) / sizeof(used_forms[0]))

/* The kernel's answer to RDMA_USER_CM_QUERY_IBR_CAPS for an IB id, built
 * as ucma_query_ibr_caps() builds it: its limits and its parser's forms (a
 * reversed return role is RETURN_LOCAL). */
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

/* The kernel's own answer with the forms outside mask removed, alternate
 * (ALT_CONNECT) and max_records set, LAP off.  The kernel's forms not in
 * used_forms stay. */
static void mkcaps(struct path_set_query_resp *r, unsigned int mask, int alternate,
		   unsigned int max_records)
{
	struct path_set_query_resp k;
	unsigned int i, j, n = 0;

	kernel_caps_resp(&k);
	*r = k;
	r->max_records = max_records;
	r->max_bytes = max_records * 72;
	for (j = 0; j < k.num_forms; j++) {
		for (i = 0; i < NFORMS; i++)
			if (used_forms[i] == k.forms[j].flags && !(mask & (1u << i)))
				break;
		if (i < NFORMS)
			continue;
		r->forms[n++] = k.forms[j];
	}
	memset(&r->forms[n], 0, (PATH_SET_QUERY_FORMS - n) * sizeof(r->forms[0]));
	r->num_forms = n;
	r->caps = PATH_SET_CAP_SETS | PATH_SET_CAP_APM_EVENTS | PATH_SET_CAP_REMOTE_SA |
		  (alternate ? PATH_SET_CAP_ALT_CONNECT : 0);
}

/* mkcaps() read by the library */
static int caps_of(struct path_set_caps *caps, unsigned int mask, int alternate,
		   unsigned int max_records)
{
	struct path_set_query_resp r;

	mkcaps(&r, mask, alternate, max_records);
	return path_set_caps_from_query(caps, &r, sizeof(r));
}

static bool has(unsigned int mask, uint32_t flags)
{
	unsigned int i;

	for (i = 0; i < NFORMS; i++)
		if (used_forms[i] == flags)
			return mask & (1u << i);
	return true;		/* a form the test does not take away */
}

/* ---- the oracle ------------------------------------------------------------ */

struct out_rec { uint32_t flags; int rec; };

struct expect {
	int num;		/* -1: no set */
	struct out_rec r[8];
	int lead;		/* records the primary's own forms take */
	int alt;		/* records of the alternate */
};

static bool rec_local_rev(const struct answer *a, int i)
{
	return !(a->rec[i].kind & (ROUTED | NOREV | HOPS));
}

static bool rec_rev(const struct answer *a, int i)
{
	return !(a->rec[i].kind & NOREV);
}

static bool same_rec(const struct answer *a, int i, int j)
{
	return i == j || (a->rec[i].kind == a->rec[j].kind && a->rec[i].id == a->rec[j].id);
}

/*
 * docs/librdmacm.md, "The path record set":
 *  primary, subnet-local and reversible: one GMP|PRIMARY|BIDIRECTIONAL
 *    record (GMP and forward one path) or GMP|PRIMARY + PRIMARY|
 *    BIDIRECTIONAL (two);
 *  primary otherwise, with a return record and a reversible GMP path:
 *    GMP|PRIMARY, PRIMARY|OUTBOUND, PRIMARY|INBOUND, else (GMP and forward
 *    one path) GMP|PRIMARY|OUTBOUND + PRIMARY|INBOUND; else nothing;
 *  alternate (when the kernel sends them): subnet-local reversible:
 *    GMP|ALTERNATE|BIDIRECTIONAL; with a return record and reversible:
 *    GMP|ALTERNATE|OUTBOUND + ALTERNATE|INBOUND; else dropped;
 *  each choice only when the kernel lists all its forms; the classic record
 *  of the primary's GMP path last unless the set starts with it; over the
 *  limit the alternate goes, then the primary's forms; no file: classic.
 */
static void oracle(const struct answer *a, bool present, unsigned int mask,
		   int alternate, unsigned int limit, struct expect *e)
{
	struct out_rec p[3], al[2];
	int np = 0, na = 0, i;

	memset(e, 0, sizeof(*e));
	if (present) {
		if (rec_local_rev(a, a->f)) {
			if (same_rec(a, a->g, a->f) && has(mask, 0x2b)) {
				p[np++] = (struct out_rec){ 0x2b, a->f };
			} else if (!same_rec(a, a->g, a->f) && has(mask, 0x03) &&
				   has(mask, 0x2a)) {
				p[np++] = (struct out_rec){ 0x03, a->g };
				p[np++] = (struct out_rec){ 0x2a, a->f };
			}
		} else if (a->r >= 0 && rec_rev(a, a->g)) {
			if (has(mask, 0x03) && has(mask, 0x0a) && has(mask, 0x12)) {
				p[np++] = (struct out_rec){ 0x03, a->g };
				p[np++] = (struct out_rec){ 0x0a, a->f };
				p[np++] = (struct out_rec){ 0x12, a->r };
			} else if (same_rec(a, a->g, a->f) && has(mask, 0x0b) &&
				   has(mask, 0x12)) {
				p[np++] = (struct out_rec){ 0x0b, a->f };
				p[np++] = (struct out_rec){ 0x12, a->r };
			}
		}
		if (alternate && a->af >= 0) {
			if (rec_local_rev(a, a->af) && has(mask, 0x2d)) {
				al[na++] = (struct out_rec){ 0x2d, a->af };
			} else if (!rec_local_rev(a, a->af) && a->ar >= 0 &&
				   rec_rev(a, a->af) && has(mask, 0x0d) &&
				   has(mask, 0x14)) {
				al[na++] = (struct out_rec){ 0x0d, a->af };
				al[na++] = (struct out_rec){ 0x14, a->ar };
			}
		}
	}
	for (;;) {
		e->num = 0;
		for (i = 0; i < np; i++)
			e->r[e->num++] = p[i];
		for (i = 0; i < na; i++)
			e->r[e->num++] = al[i];
		if (!np || p[0].flags != 0x2b)
			e->r[e->num++] = (struct out_rec){ 0x2b, a->g };
		e->lead = np;
		e->alt = na;
		if ((unsigned int)e->num <= limit)
			return;
		if (na)
			na = 0;
		else if (np)
			np = 0;
		else
			break;
	}
	e->num = -1;
}

/* ---- checks ---------------------------------------------------------------- */

static const uint8_t *rec_path(const struct path_set_rec *rec, int i)
{
	return i < 0 ? NULL : rec[i].path;
}

/* The kernel's parser reads the set back: the intended record in each role */
static const char *kernel_reads(const struct answer *a, const struct path_set_rec *in,
				const struct path_set_rec *out, int n,
				const struct expect *e)
{
	struct ib_path_set set;
	int i, k;
	const uint8_t *g = in[a->g].path, *f = in[a->f].path;

	if (ib_path_set_parse(out, n * sizeof(out[0]), &set))
		return "the kernel's parser refuses the set";
	k = set.rec[IB_PATH_SET_PRIMARY][IB_PATH_SET_GMP];
	if (k < 0 || memcmp(out[k].path, e->lead && e->r[0].flags != 0x2b &&
			    e->r[0].flags != 0x0b ? g : (e->lead ? f : g), 64))
		return "kernel: primary GMP role from the wrong record";
	k = set.rec[IB_PATH_SET_PRIMARY][IB_PATH_SET_FORWARD];
	if (k < 0 || memcmp(out[k].path, e->lead ? f : g, 64))
		return "kernel: primary forward role from the wrong record";
	k = set.rec[IB_PATH_SET_PRIMARY][IB_PATH_SET_RETURN];
	if (e->lead && a->r >= 0 && !rec_local_rev(a, a->f)) {
		if (k < 0 || set.reversed[IB_PATH_SET_PRIMARY] ||
		    memcmp(out[k].path, in[a->r].path, 64))
			return "kernel: primary return role not the answer's return record";
	} else if (k >= 0 && !set.reversed[IB_PATH_SET_PRIMARY]) {
		return "kernel: a return record nobody intended";
	}
	k = set.rec[IB_PATH_SET_ALTERNATE][IB_PATH_SET_GMP];
	if (e->alt) {
		if (k < 0 || memcmp(out[k].path, in[a->af].path, 64))
			return "kernel: alternate GMP role from the wrong record";
		k = set.rec[IB_PATH_SET_ALTERNATE][IB_PATH_SET_RETURN];
		if (k < 0)
			return "kernel: the alternate has no return role";
		if (a->ar >= 0 && !rec_local_rev(a, a->af) &&
		    memcmp(out[k].path, in[a->ar].path, 64))
			return "kernel: alternate return role from the wrong record";
	} else if (k >= 0) {
		return "kernel: an alternate nobody intended";
	}
	/* a 6.1 kernel: the first GMP|PRIMARY|BIDIRECTIONAL record only */
	for (i = 0; i < n && out[i].flags != 0x2b; i++)
		;
	if (i == n || memcmp(out[i].path, g, 64))
		return "6.1: the first classic record is not the primary's GMP path";
	return NULL;
}

static int group_fail;
static long group_cases;

static void fail_case(const char *what, const struct answer *a, unsigned int mask,
		      int alternate, unsigned int limit, const char *why)
{
	group_fail++;
	if (verbose || group_fail <= 5)
		fprintf(stderr, "  %s %s caps 0x%03x alternate %d limit %u: %s\n",
			what, a->name, mask, alternate, limit, why);
}

static void one_case(const struct answer *a, bool present, unsigned int mask,
		     int alternate, unsigned int limit, size_t room)
{
	struct path_set_rec in[8], out[10];
	struct path_set_answer ans;
	struct path_set_caps caps;
	struct expect e;
	int n, i;

	group_cases++;
	mkanswer(a, in);
	if (present) {
		if (caps_of(&caps, mask, alternate, limit) || !caps.present) {
			fail_case("caps", a, mask, alternate, limit, "the kernel's answer is not taken");
			return;
		}
	} else {
		path_set_caps_none(&caps);
	}
	if (path_set_answer_parse(&ans, a->src, in, a->num)) {
		fail_case("answer", a, mask, alternate, limit, "no primary found");
		return;
	}
	if (ans.primary.gmp != rec_path(in, a->g) || ans.primary.fwd != rec_path(in, a->f) ||
	    ans.primary.ret != rec_path(in, a->r) ||
	    (a->af >= 0 && (ans.alt.gmp != rec_path(in, a->ag) || ans.alt.fwd != rec_path(in, a->af) ||
			    ans.alt.ret != rec_path(in, a->ar))) ||
	    (a->af < 0 && ans.alt.gmp)) {
		fail_case("answer", a, mask, alternate, limit, "roles sorted to the wrong records");
		return;
	}
	oracle(a, present, mask, alternate, present ? limit : room, &e);
	if (room < (size_t)limit && e.num > (int)room)
		oracle(a, present, mask, alternate, room, &e);
	memset(out, 0xa5, sizeof(out));
	n = path_set_build(&caps, &ans, out, room);
	for (i = room; i < 10; i++)
		if (out[i].flags != 0xa5a5a5a5)
			fail_case("build", a, mask, alternate, limit, "wrote past the room given");
	if (n != e.num) {
		char why[64];

		snprintf(why, sizeof(why), "%d records, want %d", n, e.num);
		fail_case("build", a, mask, alternate, limit, why);
		return;
	}
	for (i = 0; i < n; i++) {
		if (out[i].flags != e.r[i].flags || out[i].reserved ||
		    memcmp(out[i].path, in[e.r[i].rec].path, 64)) {
			char why[80];

			snprintf(why, sizeof(why), "record %d: flags 0x%02x, want 0x%02x from record %d",
				 i, out[i].flags, e.r[i].flags, e.r[i].rec);
			fail_case("build", a, mask, alternate, limit, why);
			return;
		}
	}
	if (n > 0) {
		const char *why = kernel_reads(a, in, out, n, &e);

		if (why)
			fail_case("kernel", a, mask, alternate, limit, why);
	}
}

static void result(const char *name)
{
	if (group_fail) {
		printf("not ok %s - %d of %ld cases wrong\n", name, group_fail, group_cases);
		failed++;
	} else {
		printf("ok %s (%ld cases)\n", name, group_cases);
		passed++;
	}
	group_fail = 0;
	group_cases = 0;
}

static void all_caps(const char *name, bool (*pick)(const struct answer *))
{
	static const unsigned int limits[] = { 1, 2, 3, 4, 5, 16 };
	unsigned int mask, l, i;
	int alt;

	for (i = 0; i < NANSWERS; i++) {
		if (!pick(&answers[i]))
			continue;
		one_case(&answers[i], false, 0, 0, 16, 8);
		/* the classic form is always there (caps-query: else no sets) */
		for (mask = 1; mask < (1u << NFORMS); mask += 2)
			for (alt = 0; alt <= 1; alt++)
				for (l = 0; l < sizeof(limits) / sizeof(limits[0]); l++)
					one_case(&answers[i], true, mask, alt, limits[l], 8);
	}
	result(name);
}

static bool is_ibacm_primary(const struct answer *a)
{
	return a->src == PATH_SET_SRC_FLAGS && a->af < 0;
}

static bool is_ibacm_alt(const struct answer *a)
{
	return a->src == PATH_SET_SRC_FLAGS && a->af >= 0;
}

static bool is_kernel(const struct answer *a)
{
	return a->src == PATH_SET_SRC_KERNEL;
}

/* the full kernel text: the sets a routed and a local answer get */
static void shapes(void)
{
	static const struct { const char *answer; int alt; uint32_t flags[6]; } want[] = {
		{ "local-classic", 1, { 0x2b } },
		{ "routed-classic", 1, { 0x2b } },
		{ "routed-3", 1, { 0x03, 0x0a, 0x12, 0x2b } },
		{ "routed-with-alt", 1, { 0x03, 0x0a, 0x12, 0x0d, 0x14, 0x2b } },
		{ "routed-with-alt", 0, { 0x03, 0x0a, 0x12, 0x2b } },
		{ "local-with-alt", 1, { 0x2b, 0x2d } },
		{ "kernel-local", 1, { 0x2b, 0x2d } },
		{ "kernel-routed", 1, { 0x2b } },
	};
	struct path_set_rec in[8], out[8];
	struct path_set_answer ans;
	struct path_set_caps caps;
	unsigned int w, i, j;
	int n;

	for (w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		for (i = 0; strcmp(answers[i].name, want[w].answer); i++)
			;
		caps_of(&caps, ~0u, want[w].alt, 16);
		mkanswer(&answers[i], in);
		path_set_answer_parse(&ans, answers[i].src, in, answers[i].num);
		n = path_set_build(&caps, &ans, out, 8);
		group_cases++;
		for (j = 0; j < 6 && want[w].flags[j]; j++)
			if ((int)j >= n || out[j].flags != want[w].flags[j])
				break;
		if (j < 6 && want[w].flags[j]) {
			fail_case("shape", &answers[i], ~0u, want[w].alt, 16, "not the documented set");
		} else if (n != (int)j) {
			fail_case("shape", &answers[i], ~0u, want[w].alt, 16, "extra records");
		}
	}
	result("lib-path-set:documented-shapes");
}

/* path_set_build_alt: what rdma_load_alt_path() hands to a LAP */
static void build_alt(void)
{
	struct path_set_rec in[8], out[4];
	struct path_set_answer ans;
	struct path_set_caps caps, none;
	struct ib_path_set set;
	unsigned int i;
	int n, want;

	caps_of(&caps, ~0u, 1, 16);
	path_set_caps_none(&none);
	for (i = 0; i < NANSWERS; i++) {
		const struct answer *a = &answers[i];
		const struct path_set_path *p;
		int pf, pr;

		if (a->src != PATH_SET_SRC_FLAGS)
			continue;
		mkanswer(a, in);
		path_set_answer_parse(&ans, a->src, in, a->num);
		/* the alternate of the answer, else its primary */
		p = ans.alt.gmp ? &ans.alt : &ans.primary;
		pf = a->af >= 0 ? a->af : a->f;
		pr = a->af >= 0 ? a->ar : a->r;
		/* one record is sent for an alternate: its forward one */
		want = rec_local_rev(a, pf) ? 1 : (pr >= 0 && rec_rev(a, pf)) ? 2 : -1;
		n = path_set_build_alt(&caps, p, out, 4);
		group_cases++;
		if (n != want) {
			char why[64];

			snprintf(why, sizeof(why), "%d records, want %d", n, want);
			fail_case("alt", a, ~0u, 1, 16, why);
			continue;
		}
		if (n > 0) {
			/* the kernel reads an alternate and no primary */
			if (!ib_path_set_parse(out, n * sizeof(out[0]), &set))
				fail_case("alt", a, ~0u, 1, 16, "the kernel finds a primary in a LAP set");
			if (out[0].flags != (n == 1 ? 0x2d : 0x0d) ||
			    memcmp(out[0].path, in[pf].path, 64) ||
			    (n == 2 && (out[1].flags != 0x14 || memcmp(out[1].path, in[pr].path, 64))))
				fail_case("alt", a, ~0u, 1, 16, "wrong records");
		}
		group_cases++;
		if (path_set_build_alt(&none, p, out, 4) != -1)
			fail_case("alt", a, 0, 0, 0, "built for a kernel without sets");
	}
	result("lib-path-set:build-alt");
}

/* path_set_caps_from_query: every value of the kernel's answer checked */
enum { V_VERSION, V_LENGTH, V_CAPS, V_MAXREC, V_MAXBYTES, V_NFORMS };

static void set_word(struct path_set_query_resp *r, unsigned int w, uint32_t v)
{
	memcpy((uint8_t *)r + 4 * w, &v, 4);
}

static void caps_query(void)
{
	static const struct {
		const char *what;
		int word;		/* -1: none */
		uint32_t value;
		size_t len;		/* the buffer given to the kernel; 0: all */
		int present;
	} t[] = {
		{ "the kernel's answer", -1, 0, 0, 1 },
		{ "version 0", V_VERSION, 0, 0, 0 },
		{ "a later version", V_VERSION, 2, 0, 1 },
		{ "length 0", V_LENGTH, 0, 0, 0 },
		{ "length below the head", V_LENGTH, 23, 0, 0 },
		{ "a later, longer answer", V_LENGTH, 4096, 0, 1 },
		{ "length short of num_forms", V_LENGTH, 24 + 8 * 11, 0, 0 },
		{ "a buffer short of num_forms", -1, 0, 24 + 8 * 11, 0 },
		{ "a buffer of the head only", -1, 0, 24, 0 },
		{ "a buffer short of the head", -1, 0, 23, 0 },
		{ "no PATH_SETS", V_CAPS, PATH_SET_CAP_LAP, 0, 0 },
		{ "unknown capability bits", V_CAPS, 0xffffffffu, 0, 1 },
		{ "max_records 0", V_MAXREC, 0, 0, 0 },
		{ "max_records -16", V_MAXREC, 0xfffffff0u, 0, 0 },
		{ "max_records 4097", V_MAXREC, 4097, 0, 0 },
		{ "max_records 4096", V_MAXREC, 4096, 0, 1 },
		{ "max_bytes below a record", V_MAXBYTES, 71, 0, 0 },
		{ "max_bytes -1", V_MAXBYTES, 0xffffffffu, 0, 0 },
		{ "num_forms 17", V_NFORMS, 17, 0, 0 },
		{ "num_forms -1", V_NFORMS, 0xffffffffu, 0, 0 },
		{ "num_forms 0 (no classic form)", V_NFORMS, 0, 0, 0 },
	};
	struct path_set_query_resp k, r;
	struct path_set_caps caps;
	unsigned int i, j;
	int rc;

	kernel_caps_resp(&k);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		r = k;
		if (t[i].word >= 0)
			set_word(&r, (unsigned int)t[i].word, t[i].value);
		memset(&caps, 0x5a, sizeof(caps));
		rc = path_set_caps_from_query(&caps, &r, t[i].len ? t[i].len : sizeof(r));
		group_cases++;
		if ((rc == 0) != t[i].present || caps.present != t[i].present ||
		    (!t[i].present && (caps.num_forms || caps.flags || caps.max_records))) {
			group_fail++;
			fprintf(stderr, "  caps query, %s: rc %d present %d forms %u\n",
				t[i].what, rc, caps.present, caps.num_forms);
		}
	}
	/* the kernel's answer: every form with its roles, limits, flags */
	path_set_caps_from_query(&caps, &k, sizeof(k));
	group_cases++;
	if (!caps.present || caps.num_forms != ib_path_set_nforms || caps.max_records != 16 ||
	    caps.max_bytes != 1152 || caps.flags != PATH_SET_CAPS_KNOWN) {
		group_fail++;
		fprintf(stderr, "  the kernel's answer: %u forms of %u, flags 0x%x\n",
			caps.num_forms, ib_path_set_nforms, caps.flags);
	}
	for (i = 0; i < ib_path_set_nforms && i < caps.num_forms; i++) {
		const struct ib_path_set_form *f = &ib_path_set_forms[i];
		unsigned int roles = 0;

		if (f->roles & (1u << IB_PATH_SET_GMP))
			roles |= PATH_SET_ROLE_GMP;
		if (f->roles & (1u << IB_PATH_SET_FORWARD))
			roles |= PATH_SET_ROLE_FORWARD;
		if (f->roles & (1u << IB_PATH_SET_RETURN))
			roles |= f->reversed ? PATH_SET_ROLE_RETURN_LOCAL : PATH_SET_ROLE_RETURN;
		group_cases++;
		if (caps.forms[i].flags != f->flags || caps.forms[i].roles != roles) {
			group_fail++;
			fprintf(stderr, "  form %u: 0x%02x roles %x, kernel 0x%02x roles %x\n",
				i, caps.forms[i].flags, caps.forms[i].roles, f->flags, roles);
		}
	}
	/* a newer kernel's form (unknown flag bits), role and capability bits */
	r = k;
	r.forms[1].flags |= 0x40;
	r.forms[0].roles |= 0x30;
	r.caps = 0xffffffffu;
	path_set_caps_from_query(&caps, &r, sizeof(r));
	group_cases++;
	if (!caps.present || caps.num_forms != k.num_forms - 1 ||
	    path_set_caps_has_form(&caps, k.forms[1].flags | 0x40) ||
	    caps.forms[0].roles != k.forms[0].roles || caps.flags != PATH_SET_CAPS_KNOWN) {
		group_fail++;
		fprintf(stderr, "  a newer kernel's bits were not left out\n");
	}
	/* a form twice is listed once; a form without known roles is left out */
	r = k;
	r.forms[2] = r.forms[0];
	r.forms[3].roles = 0x10;
	path_set_caps_from_query(&caps, &r, sizeof(r));
	group_cases++;
	if (!caps.present || caps.num_forms != k.num_forms - 2)
		group_fail++;
	/* NULL, and a short answer with the classic form only */
	group_cases += 2;
	if (path_set_caps_from_query(&caps, NULL, sizeof(r)) != -1 || caps.present)
		group_fail++;
	r = k;
	r.length = 24 + 8;
	r.num_forms = 1;
	for (j = 1; j < PATH_SET_QUERY_FORMS; j++)
		r.forms[j].flags = 0x2b;	/* beyond length: not read */
	if (path_set_caps_from_query(&caps, &r, sizeof(r)) || caps.num_forms != 1 ||
	    caps.forms[0].flags != 0x2b)
		group_fail++;
	result("lib-path-set:caps-query");
}

/* answers without a primary, and no room at all */
static void no_set(void)
{
	struct path_set_rec in[2], out[2];
	struct path_set_answer ans;
	struct path_set_caps caps;

	caps_of(&caps, ~0u, 1, 16);
	group_cases += 4;
	if (path_set_answer_parse(&ans, PATH_SET_SRC_FLAGS, in, 0) != -1 ||
	    path_set_build(&caps, &ans, out, 2) != -1)
		fail_case("none", &answers[0], ~0u, 1, 16, "an empty answer gave a set");
	in[0].flags = 0x12;
	mkpath(in[0].path, ROUTED, 3);
	in[1].flags = 0x2d;
	mkpath(in[1].path, LOCAL, 4);
	if (path_set_answer_parse(&ans, PATH_SET_SRC_FLAGS, in, 2) != -1)
		fail_case("none", &answers[0], ~0u, 1, 16, "return and alternate only: a primary found");
	in[0].flags = 0x2b;
	path_set_answer_parse(&ans, PATH_SET_SRC_FLAGS, in, 1);
	if (path_set_build(&caps, &ans, out, 0) != -1)
		fail_case("none", &answers[0], ~0u, 1, 16, "a set in no room");
	result("lib-path-set:no-primary-no-room");
}

int main(int argc, char **argv)
{
	verbose = argc > 1 && !strcmp(argv[1], "-v");
	all_caps("lib-path-set:ibacm-primary", is_ibacm_primary);
	all_caps("lib-path-set:ibacm-alternate", is_ibacm_alt);
	all_caps("lib-path-set:kernel-answer", is_kernel);
	shapes();
	build_alt();
	caps_query();
	no_set();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
