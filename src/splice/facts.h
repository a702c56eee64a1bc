/*
 * facts.h - the operand facts of a range (ana.h: ana_operands) as authors
 * see them: JSON for `phases --json` and the recipe scaffold, text for
 * `show --live`.  Both forms carry the same fields (d4r-splice(1),
 * "Operand facts"): per mma its tile, k-step, chain and operand registers;
 * per operand read from before the range its source; per load its address
 * operand, what that resolves to, and the reload verdict with the
 * statements behind it.
 */
#ifndef D4R_SPLICE_FACTS_H
#define D4R_SPLICE_FACTS_H

#include "ana/ana.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* The facts as a JSON object (the caller owns it). */
cJSON *facts_json(Dataflow *df, const PhaseOperands *po);
/* The facts of phase p of pl as JSON (ana_operands over its mma range);
 * {"error": "..."} when the range is outside the function. */
cJSON *facts_phase_json(Dataflow *df, const PhaseList *pl, const Phase *p);
/* The facts as text, for show --live. */
void facts_text(Dataflow *df, const PhaseOperands *po, StrBuf *out);
/* "%r12" of register id `reg`, into buf. */
const char *facts_reg(const Dataflow *df, uint32_t reg, char *buf, size_t n);

#endif
