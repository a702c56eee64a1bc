/*
 * plan_internal.h - what plan.c (the state plan: registers, control flow,
 * shared memory) and plan_mem.c (its global memory, arrays and the bytes a
 * cut writes) share: the walk that says what a register's value is made
 * of, and the plan's refusals.  Not for callers of the replay room.
 */
#ifndef D4R_REPLAY_PLAN_INTERNAL_H
#define D4R_REPLAY_PLAN_INTERNAL_H

#include "replay/replay.h"

/* A value's class: data, or one base (a parameter field, a symbol) plus data;
 * or refused, with the statement and the reason. */
typedef struct {
	int kind; /* ReplayValueKind, or -1: cannot be rebased */
	int64_t param_off;
	Str sym;
	uint32_t evidence;
	uint32_t why_stmt;
	const char *why;
} Val;

typedef struct {
	Dataflow *df;
	const Module *m;
	const Func *f;
	Val *memo;      /* per statement, for statements that define one register */
	uint8_t *state; /* 0 not yet, 1 on the stack, 2 done */
	unsigned depth;
} Walk;

/* The class of register operand oi (index in m->opds) at statement s. */
Val plan_val_of_opd(Walk *w, uint32_t s, uint32_t oi);
/* The offset in the parameter block of kernel parameter `name` of f, or -1. */
int64_t plan_param_start(const Module *m, const Func *f, Str name);
/* One refusal: "[spliced ]sN (line L): ...", counted. */
void plan_refuse(ReplayPlan *p, const Module *m, const Func *f, uint32_t stmt,
                 bool spliced, const char *fmt, ...) PRINTF_LIKE(6, 7);

/* plan_mem.c: the global accesses, textures and surfaces of one cut (df over
 * its module, [first, last] in its numbering); then, after both cuts, the
 * spans joined and the writes outside the original's cut checked. */
void plan_check_memory(ReplayPlan *p, const ReplayRequest *q, Dataflow *df,
                       uint32_t first, uint32_t last, bool spliced);
void plan_join_spans(ReplayPlan *p);
void plan_check_outside_writes(ReplayPlan *p, const ReplayRequest *q);

#endif
