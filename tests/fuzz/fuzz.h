/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the libFuzzer targets (tests/fuzz/README.md): a property that
 * does not hold is a crash, which libFuzzer records with its input.
 */
#ifndef IBR_FUZZ_H
#define IBR_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond, what)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "FUZZ CHECK FAILED: %s (%s:%d: %s)\n", \
				what, __FILE__, __LINE__, #cond);	\
			abort();					\
		}							\
	} while (0)

#endif
