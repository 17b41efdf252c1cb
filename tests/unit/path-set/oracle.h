/* The documented path-set rules (oracle.c), for the table test and the fuzzer. */
#ifndef PATH_SET_ORACLE_H
#define PATH_SET_ORACLE_H

#include <stddef.h>

#define REC 72
#define MAXREC 16

/* flag bits, written out here (docs/path-records.md, ib_user_sa.h) */
enum { GMP = 1, PRI = 2, ALT = 4, OUT = 8, IN = 16, IREV = 32 };

/* What the rules say of a blob: the return code, and for rc 0 the record
 * supplying each role (gmp, forward, return) of the primary and the
 * alternate path (-1: none), as struct ib_path_set has them. */
struct want {
	int rc;
	int rec[2][3];
	int reversed[2];
	int routed[2];
	/* ib_path_set_parse_alt() (a LAP on a connected id): the alternate */
	int alt_rc;
	int alt_rec[3];
	int alt_reversed;
	int alt_routed;
};

/* Record @i's path crosses a router: HopLimit > 1 or two subnet prefixes. */
int rec_routed(const unsigned char *blob, int i);
/* @f is one of the documented record forms. */
int understood(unsigned int f);
/* The @n records of @blob are a path set (else read as Linux 6.1 reads them). */
int is_set(const unsigned char *blob, int n);
void oracle(const unsigned char *blob, size_t len, struct want *w);

#endif
