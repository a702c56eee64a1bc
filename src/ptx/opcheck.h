/*
 * opcheck.h - is an opcode one of the PTX ISA's instructions?
 *
 * The parser keeps any opcode (an unknown one round-trips as OP_UNKNOWN,
 * so newer PTX still parses); a hand-written template, though, should not
 * wait for ptxas to hear that `mma.snyc` is not an instruction.  This check
 * holds an opcode's base to the parser's table (ops.def) and each of its
 * dotted components to the words of the ISA's modifiers (mods.def, and the
 * patterns of types, vectors and shapes), and says what the nearest known
 * spelling is.
 */
#ifndef D4R_PTX_OPCHECK_H
#define D4R_PTX_OPCHECK_H

#include "base/base.h"

typedef struct {
	size_t off, len; /* the unknown part of the opcode text */
	char msg[320];   /* "unknown modifier '.snyc' of 'mma' (did you mean
	                    'mma.sync'?)" */
} OpProblem;

/*
 * Checks opcode text op[0..n) ("mma.sync.aligned.m16n8k32.row.col.f16...").
 * Returns 0 when its base is an instruction of ops.def and every word of
 * every component is a modifier word of the ISA; 1 with *p filled for the
 * first part that is not, with the nearest known spelling when one is
 * close (edit distance, a transposition counting one).
 */
int ptx_opcode_check(const char *op, size_t n, OpProblem *p);

#endif
