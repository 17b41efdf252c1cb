/*
 * The RDMA_OPTION_IB_PATH rules of docs/path-records.md, read independently
 * of the kernel's path_set.c: the oracle of the table test
 * (test_path_set.c) and of the fuzz target (tests/fuzz/fuzz_path_set.c).
 */
#include <errno.h>
#include <string.h>

#include "oracle.h"

int rec_routed(const unsigned char *blob, int i)
{
	const unsigned char *pr = blob + i * REC + 8;
	int k;

	if (pr[47] > 1)
		return 1;
	for (k = 0; k < 8; k++)
		if (pr[8 + k] != pr[24 + k])
			return 1;
	return 0;
}

/* The documented forms: the six defined bits only, exactly one of
 * PRIMARY and ALTERNATE, one of six direction forms. */
int understood(unsigned int f)
{
	unsigned int dir = f & (GMP | OUT | IN | IREV);

	if (f & ~0x3fu)
		return 0;
	if ((f & (PRI | ALT)) != PRI && (f & (PRI | ALT)) != ALT)
		return 0;
	return dir == (GMP | OUT | IREV) || dir == GMP || dir == (GMP | OUT) ||
	       dir == OUT || dir == (OUT | IREV) || dir == IN;
}

/* A set: 1 to MAXREC records, each of a documented form, reserved 0. */
int is_set(const unsigned char *blob, int n)
{
	unsigned int f, reserved;
	int i;

	if (n < 1 || n > MAXREC)
		return 0;
	for (i = 0; i < n; i++) {
		memcpy(&f, blob + i * REC, 4);
		memcpy(&reserved, blob + i * REC + 4, 4);
		if (reserved || !understood(f))
			return 0;
	}
	return 1;
}

void oracle(const unsigned char *blob, size_t len, struct want *w)
{
	int n, i, p, r;

	memset(w, 0, sizeof(*w));
	for (p = 0; p < 2; p++)
		for (r = 0; r < 3; r++)
			w->rec[p][r] = -1;
	/* malformed: empty, not whole records */
	if (len == 0 || len % REC) {
		w->rc = -EINVAL;
		w->alt_rc = -EINVAL;
		return;
	}
	n = (int)(len / REC);
	/* not a set (more than MAXREC, reserved not 0, a form not known):
	 * Linux 6.1's reading, the first classic record alone */
	if (!is_set(blob, n)) {
		w->alt_rc = -EINVAL;
		for (i = 0; i < n; i++) {
			unsigned int f;

			memcpy(&f, blob + i * REC, 4);
			if (f == (GMP | PRI | OUT | IREV))
				break;
		}
		if (i == n) {
			w->rc = -EINVAL;
			return;
		}
		w->rec[0][0] = w->rec[0][1] = i;
		w->routed[0] = rec_routed(blob, i);
		if (!w->routed[0]) {
			w->rec[0][2] = i;
			w->reversed[0] = 1;
		}
		return;
	}
	for (i = 0; i < n; i++) {
		unsigned int f;
		unsigned int dir;
		int supplies[3];

		memcpy(&f, blob + i * REC, 4);
		/* only the six defined bits */
		if (f & ~0x3fu)
			continue;
		/* exactly one of PRIMARY and ALTERNATE */
		if ((f & (PRI | ALT)) == PRI)
			p = 0;
		else if ((f & (PRI | ALT)) == ALT)
			p = 1;
		else
			continue;
		dir = f & (GMP | OUT | IN | IREV);
		/* the six understood direction forms */
		if (dir != (GMP | OUT | IREV) && dir != GMP && dir != (GMP | OUT) &&
		    dir != OUT && dir != (OUT | IREV) && dir != IN)
			continue;
		supplies[0] = !!(dir & GMP);
		supplies[1] = !!(dir & OUT);
		/* a reversed return counts only for a subnet-local path */
		supplies[2] = (dir & IN) || ((dir & IREV) && !rec_routed(blob, i));
		for (r = 0; r < 3; r++) {
			if (!supplies[r] || w->rec[p][r] >= 0)
				continue;
			w->rec[p][r] = i;
			if (r == 2)
				w->reversed[p] = !!(dir & IREV);
		}
	}
	for (p = 0; p < 2; p++)
		if (w->rec[p][1] >= 0)
			w->routed[p] = rec_routed(blob, w->rec[p][1]);
	/* alternate: one record for GMP and forward, and a return; else none */
	if (w->rec[1][0] < 0 || w->rec[1][0] != w->rec[1][1] || w->rec[1][2] < 0) {
		for (r = 0; r < 3; r++)
			w->rec[1][r] = -1;
		w->reversed[1] = 0;
		w->routed[1] = 0;
	}
	/* a LAP's blob: only a usable alternate counts */
	w->alt_rc = w->rec[1][0] < 0 ? -EINVAL : 0;
	for (r = 0; r < 3; r++)
		w->alt_rec[r] = w->rec[1][r];
	w->alt_reversed = w->reversed[1];
	w->alt_routed = w->routed[1];
	/* primary: GMP and forward; a return unless routed */
	if (w->rec[0][0] < 0 || w->rec[0][1] < 0 ||
	    (w->rec[0][2] < 0 && !w->routed[0])) {
		memset(w->rec, 0, sizeof(w->rec));
		memset(w->reversed, 0, sizeof(w->reversed));
		memset(w->routed, 0, sizeof(w->routed));
		w->rc = -EINVAL;
	}
}
