/*
 * pending.c - verbs whose implementation has not landed yet.
 *
 * Each is a weak symbol: the verb's own file in src/cmd/ replaces it.  A
 * pending verb says so and exits 2, so nothing pretends to work.
 */
#include "cmd.h"

#define PENDING(name)                                                         \
	__attribute__((weak)) int cmd_##name(int argc, char **argv)               \
	{                                                                         \
		(void)argc;                                                           \
		(void)argv;                                                           \
		return cmd_fail("'%s' is not available in this build", #name);       \
	}

PENDING(roundtrip)
PENDING(extract)
PENDING(phases)
PENDING(show)
PENDING(grep)
PENDING(report)
PENDING(splice)
PENDING(recipe)
PENDING(run)
PENDING(diff)
PENDING(check)
PENDING(job)
