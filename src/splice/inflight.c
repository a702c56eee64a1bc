/*
 * inflight.c - the wgmma groups in flight of a phase or range, for
 * `phases --json` and `show` (inflight.h says what is shown).
 *
 * The facts come from one solve of src/ana/groups.c with the range's
 * wgmma.mma_async as the writers; this file only chooses the statements
 * to show and words the states.
 *
 * Decisions:
 *  - Only wgmma statements are listed (mma_async, fence, commit_group,
 *    wait_group): the state changes at nothing else, so each other
 *    statement has the state of the wgmma statement above it.
 *  - "in_flight" is [fewest, most] committed groups not complete after
 *    the statement over every path (31 stands for 31 or more);
 *    "uncommitted" says whether an mma may have been issued and not yet
 *    committed ("no", "yes" on every path, "maybe"); "groups" where the
 *    range's own groups stand after it, the worst over the paths:
 *    "uncommitted", then "pending", then "complete".
 */
#include "inflight.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	WgGroups *g;
	int64_t wait;                 /* the completing wait_group, or -1 */
	uint32_t cut_first, cut_last; /* the through-wait cut (wait >= 0) */
	uint32_t from, to;            /* the span listed */
} Inflight;

static bool build(Dataflow *df, uint32_t first, uint32_t last, bool phase, Inflight *in)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	VEC(uint32_t) w = {0};
	for (uint32_t i = first; i <= last && i < f->nstmt; i++)
		if (stmt_opcode_is(m, func_stmt(m, f, i), "wgmma.mma_async"))
			VEC_PUSH(w, i);
	if (!w.n)
		return false;
	memset(in, 0, sizeof *in);
	in->g = groups_build(df, w.v, w.n);
	VEC_FREE(w);
	in->wait = groups_through_wait(df, first, last, &in->cut_first, &in->cut_last);
	in->from = first;
	in->to = last;
	if (phase && in->wait >= 0) {
		in->from = in->cut_first;
		in->to = in->cut_last;
	}
	return true;
}

static const char *uncommitted(uint8_t open)
{
	return open == WG_OPEN ? "yes" : open & WG_OPEN ? "maybe" : "no";
}

static const char *standing(uint64_t writer)
{
	if (writer & 1)
		return "uncommitted";
	if (writer & ~WG_DONE)
		return "pending";
	return writer ? "complete" : "unreached";
}

/* The loops the through-wait cut holds that reach the range. */
static void held_loops(Dataflow *df, const Inflight *in, uint32_t first,
                       void (*each)(void *, const DfLoop *), void *ctx)
{
	if (in->wait < 0)
		return;
	const DfLoop *lp;
	uint32_t nl = df_loops(df, &lp);
	for (uint32_t k = 0; k < nl; k++)
		if (lp[k].lo >= in->cut_first && lp[k].hi <= in->cut_last &&
		    lp[k].hi >= first)
			each(ctx, &lp[k]);
}

static void loop_json(void *ctx, const DfLoop *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "header", l->header);
	cJSON_AddNumberToObject(o, "back_edge", l->back);
	cJSON_AddItemToArray(ctx, o);
}

cJSON *inflight_json(Dataflow *df, uint32_t first, uint32_t last, bool phase)
{
	Inflight in;
	if (!build(df, first, last, phase, &in))
		return NULL;
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	cJSON *o = cJSON_CreateObject();
	if (in.wait >= 0) {
		cJSON_AddNumberToObject(o, "completed_at", (double)in.wait);
		cJSON_AddNumberToObject(o, "completed_line",
		                        func_stmt(m, f, (uint32_t)in.wait)->line);
		cJSON *c = cJSON_AddArrayToObject(o, "through_wait_cut");
		cJSON_AddItemToArray(c, cJSON_CreateNumber(in.cut_first));
		cJSON_AddItemToArray(c, cJSON_CreateNumber(in.cut_last));
	} else {
		cJSON_AddNullToObject(o, "completed_at");
		cJSON_AddNullToObject(o, "completed_line");
		cJSON_AddNullToObject(o, "through_wait_cut");
	}
	held_loops(df, &in, first, loop_json, cJSON_AddArrayToObject(o, "loops"));
	cJSON *sts = cJSON_AddArrayToObject(o, "statements");
	for (uint32_t i = in.from; i <= in.to; i++) {
		const char *what;
		if (!groups_is_wgmma(in.g, i, &what))
			continue;
		WgState s = groups_after(in.g, i);
		unsigned lo, hi;
		groups_range(s.pending, &lo, &hi);
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "stmt", i);
		cJSON_AddNumberToObject(j, "line", func_stmt(m, f, i)->line);
		cJSON_AddStringToObject(j, "op", what);
		cJSON *r = cJSON_AddArrayToObject(j, "in_flight");
		cJSON_AddItemToArray(r, cJSON_CreateNumber(lo));
		cJSON_AddItemToArray(r, cJSON_CreateNumber(hi));
		cJSON_AddStringToObject(j, "uncommitted", uncommitted(s.open));
		cJSON_AddStringToObject(j, "groups", standing(s.writer));
		cJSON_AddItemToArray(sts, j);
	}
	groups_free(in.g);
	return o;
}

static void loop_text(void *ctx, const DfLoop *l)
{
	sb_addf(ctx, "; holds the loop s%u..s%u (back edge s%u)", l->lo, l->hi, l->back);
}

void inflight_text(Dataflow *df, uint32_t first, uint32_t last, bool phase, StrBuf *out)
{
	Inflight in;
	if (!build(df, first, last, phase, &in))
		return;
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	sb_addf(out, "wgmma groups in flight (the mma of s%u-s%u): ", first, last);
	if (in.wait >= 0) {
		sb_addf(out, "completed by s%u (line %u); through-wait cut s%u..s%u",
		        (uint32_t)in.wait, func_stmt(m, f, (uint32_t)in.wait)->line,
		        in.cut_first, in.cut_last);
		held_loops(df, &in, first, loop_text, out);
		sb_adds(out, "\n");
	} else
		sb_adds(out, "no wgmma.wait_group completes them on every path\n");
	sb_addf(out, "  %-7s %-6s %-13s %-10s %-12s %s\n", "stmt", "line", "op",
	        "in flight", "uncommitted", "their groups");
	for (uint32_t i = in.from; i <= in.to; i++) {
		const char *what;
		if (!groups_is_wgmma(in.g, i, &what))
			continue;
		WgState s = groups_after(in.g, i);
		unsigned lo, hi;
		groups_range(s.pending, &lo, &hi);
		char fl[24], sn[16];
		snprintf(sn, sizeof sn, "s%u", i);
		if (lo == hi)
			snprintf(fl, sizeof fl, "%u", lo);
		else
			snprintf(fl, sizeof fl, "%u-%u", lo, hi);
		sb_addf(out, "  %-7s %-6u %-13s %-10s %-12s %s\n", sn,
		        func_stmt(m, f, i)->line, what, fl, uncommitted(s.open),
		        standing(s.writer));
	}
	groups_free(in.g);
}
