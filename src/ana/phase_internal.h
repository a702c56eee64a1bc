/*
 * phase_internal.h - what phases.c and sources.c share (ana.h is the
 * interface; nothing outside src/ana includes this).
 *
 *   phases.c   what a phase is, its shape, tiles and chains, epilogues,
 *              the locator that puts it together
 *   sources.c  the sources of its A, B and C operands
 */
#ifndef D4R_ANA_PHASE_INTERNAL_H
#define D4R_ANA_PHASE_INTERNAL_H

#include "ana.h"

/* The most registers one mma operand holds (wgmma m64n256 f32: 128). */
#define MAX_TUPLE 256

/* The operands of an mma statement. */
typedef struct {
	uint32_t idx[4]; /* operand indices of D, A, B, C */
	bool has_c;      /* false: a wgmma whose scale-d is the immediate 0 reads
	                    no accumulator (D = A * B) */
	bool a_desc;     /* a wgmma whose A is a shared-memory matrix descriptor */
} MmaOps;

/* The operands of the mma forms; false if the form is unknown.  A wgmma
 * accumulates in place: its C is its D, read unless scale-d is 0. */
bool ph_mma_ops(const Module *m, const Stmt *s, MmaOps *o);

/* The operand's text without whitespace into out (tuples compare
 * textually). */
void ph_compact(const Module *m, const Operand *o, StrBuf *out);

/* Registers of a leaf or vector operand into regs[max] (sinks and
 * immediates skipped); their number. */
unsigned ph_tuple_regs(Dataflow *df, uint32_t oi, uint32_t *regs, unsigned max);

/* A backward slicer over df's function; phase_of maps a statement to its
 * phase number (0 if none) and must outlive it. */
typedef struct PhSlice PhSlice;
PhSlice *ph_slice_new(Dataflow *df, const int32_t *phase_of);
void ph_slice_free(PhSlice *sl);

/* The A, C and B sources of phase ph, whose mma statements are
 * mmas[0..nm) (phases: all the function's phases, in order; chained[i]:
 * mma i continues a chain). */
void ph_classify_a(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm,
                   const int32_t *phase_of, PhSlice *sl, const Phase *phases);
void ph_classify_c(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm,
                   const uint8_t *chained, const int32_t *phase_of);
void ph_classify_b(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm);

#endif
