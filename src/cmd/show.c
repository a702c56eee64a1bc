/*
 * show.c - `d4r-splice show MODULE (--phase N | --stmts A:B)`: statements of
 * a phase or range with their numbers and source lines; --live adds the cut
 * interface (live-in / live-out registers with types and first use or last
 * definition; a register the range writes under a guard without reading it
 * is live-in as well, and says so), the range's memory effects, and for
 * wgmma the groups in flight at each wgmma statement (splice/inflight.h).
 */
#include "ana/ana.h"
#include "ana/wgmma.h"
#include "cmd.h"
#include "splice/facts.h"
#include "splice/inflight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {"show MODULE --phase N [options]",
                                    "show MODULE --stmts A:B [options]", NULL};

/* Prints the interface and memory effects of [a, b]; 0 or -1 with e set. */
int show_cut(Dataflow *df, uint32_t a, uint32_t b, Err *e);

int show_cut(Dataflow *df, uint32_t a, uint32_t b, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	CutInterface cut;
	if (df_cut(df, a, b, &cut, e) < 0)
		return -1;
	printf("\nlive-in (%zu): registers read in s%u-s%u whose value comes from before\n",
	       cut.live_in.n, a, b);
	for (size_t i = 0; i < cut.live_in.n; i++) {
		const RegInfo *r = df_reg(df, cut.live_in.v[i].reg);
		const Stmt *s = func_stmt(m, f, cut.live_in.v[i].stmt);
		if (cut.live_in.v[i].through)
			printf("  %-12.*s %-6.*s not read; %s write s%u (line %u) %s\n",
			       (int)r->name.n, r->name.p, (int)r->type.n, r->type.p,
			       (s->flags & STMT_GUARD) ? "guarded" : "partial",
			       cut.live_in.v[i].stmt, s->line,
			       (s->flags & STMT_GUARD)
			           ? "keeps the old value when its guard is false"
			           : "keeps the other elements");
		else
			printf("  %-12.*s %-6.*s first use s%u (line %u)\n",
			       (int)r->name.n, r->name.p, (int)r->type.n, r->type.p,
			       cut.live_in.v[i].stmt, s->line);
	}
	printf("live-out (%zu): registers defined in s%u-s%u and read after s%u\n", cut.live_out.n,
	       a, b, b);
	for (size_t i = 0; i < cut.live_out.n; i++) {
		const RegInfo *r = df_reg(df, cut.live_out.v[i].reg);
		const Stmt *s = func_stmt(m, f, cut.live_out.v[i].stmt);
		bool through = false;
		for (size_t k = 0; k < cut.live_in.n && !through; k++)
			through = cut.live_in.v[k].through &&
			          cut.live_in.v[k].reg == cut.live_out.v[i].reg;
		printf("  %-12.*s %-6.*s last def s%u (line %u), first use after s%u%s\n",
		       (int)r->name.n, r->name.p, (int)r->type.n, r->type.p,
		       cut.live_out.v[i].stmt, s->line, cut.live_out.v[i].use,
		       through ? "; live-in too (guarded or partial write)" : "");
	}
	printf("bytes per warp across the cut: %u in, %u out\n",
	       cut_warp_bytes(df, cut.live_in.v, cut.live_in.n),
	       cut_warp_bytes(df, cut.live_out.v, cut.live_out.n));
	printf("memory effects:");
	int any = 0;
	for (int sp = 0; sp < SP__COUNT; sp++) {
		if (cut.loads[sp])
			printf(" %s loads %u,", space_name((Space)sp), cut.loads[sp]), any = 1;
		if (cut.stores[sp])
			printf(" %s stores %u,", space_name((Space)sp), cut.stores[sp]), any = 1;
	}
	if (cut.atomics)
		printf(" atomics %u,", cut.atomics), any = 1;
	if (cut.barriers)
		printf(" barriers %u,", cut.barriers), any = 1;
	printf("%s\n", any ? "" : " none");
	if (cut.rw_dependency)
		printf("READ/WRITE DEPENDENCIES: cut invalid\n%s", cut.rw_reason.p ? cut.rw_reason.p : "");
	else
		printf("read/write dependencies: none\n");
	cut_release(&cut);
	return 0;
}

/* A register of the cut for --json: name, type and the statement (with its
 * line) that the key names. */
static cJSON *reg_json(Dataflow *df, const CutReg *c, const char *stmt_key,
                       const char *line_key)
{
	const RegInfo *r = df_reg(df, c->reg);
	cJSON *o = cJSON_CreateObject();
	cmd_json_strn(o, "reg", r->name.p, r->name.n);
	cmd_json_strn(o, "type", r->type.p, r->type.n);
	cJSON_AddNumberToObject(o, stmt_key, c->stmt);
	cJSON_AddNumberToObject(o, line_key, func_stmt(df_module(df), df_func(df), c->stmt)->line);
	return o;
}

/* The cut interface of [a, b] as show --live --json gives it, or NULL with
 * e set. */
static cJSON *cut_json(Dataflow *df, uint32_t a, uint32_t b, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	CutInterface cut;
	if (df_cut(df, a, b, &cut, e) < 0)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON *in = cJSON_AddArrayToObject(o, "live_in");
	for (size_t i = 0; i < cut.live_in.n; i++) {
		const CutReg *c = &cut.live_in.v[i];
		cJSON *r = reg_json(df, c, "stmt", "line");
		/* read: the statement is the first use; else the write that
		 * does not kill (guarded or partial) */
		const Stmt *st = func_stmt(m, f, c->stmt);
		if (c->through)
			cJSON_AddStringToObject(r, "through",
			                        (st->flags & STMT_GUARD) ? "guarded" : "partial");
		else
			cJSON_AddNullToObject(r, "through");
		cJSON_AddItemToArray(in, r);
	}
	cJSON *out = cJSON_AddArrayToObject(o, "live_out");
	for (size_t i = 0; i < cut.live_out.n; i++) {
		const CutReg *c = &cut.live_out.v[i];
		cJSON *r = reg_json(df, c, "last_def_stmt", "last_def_line");
		cJSON_AddNumberToObject(r, "first_use_after_stmt", c->use);
		cJSON_AddNumberToObject(r, "first_use_after_line", func_stmt(m, f, c->use)->line);
		bool through = false;
		for (size_t k = 0; k < cut.live_in.n && !through; k++)
			through = cut.live_in.v[k].through && cut.live_in.v[k].reg == c->reg;
		cJSON_AddBoolToObject(r, "live_in_too", through);
		cJSON_AddItemToArray(out, r);
	}
	cJSON_AddNumberToObject(o, "bytes_per_warp_in",
	                        cut_warp_bytes(df, cut.live_in.v, cut.live_in.n));
	cJSON_AddNumberToObject(o, "bytes_per_warp_out",
	                        cut_warp_bytes(df, cut.live_out.v, cut.live_out.n));
	cJSON *mem = cJSON_AddObjectToObject(o, "memory");
	cJSON *ld = cJSON_AddObjectToObject(mem, "loads");
	cJSON *stj = cJSON_AddObjectToObject(mem, "stores");
	for (int sp = 0; sp < SP__COUNT; sp++) {
		if (cut.loads[sp])
			cJSON_AddNumberToObject(ld, space_name((Space)sp), cut.loads[sp]);
		if (cut.stores[sp])
			cJSON_AddNumberToObject(stj, space_name((Space)sp), cut.stores[sp]);
	}
	cJSON_AddNumberToObject(mem, "atomics", cut.atomics);
	cJSON_AddNumberToObject(mem, "barriers", cut.barriers);
	cJSON_AddBoolToObject(o, "rw_dependency", cut.rw_dependency);
	cJSON *pairs = cJSON_AddArrayToObject(o, "rw_pairs");
	for (size_t k = 0; k + 1 < cut.rw_pairs.n; k += 2)
		cJSON_AddItemToArray(pairs, cmd_json_range(cut.rw_pairs.v[k], cut.rw_pairs.v[k + 1]));
	cut_release(&cut);
	return o;
}

/* show --json: the statements [from, to] around the range [a, b], and
 * its cut interface with --live. */
static int show_json(const char *path, const Module *m, const Func *f, unsigned phase,
                     bool epilogue, uint32_t a, uint32_t b, uint32_t from, uint32_t to,
                     bool live, uint32_t pa, uint32_t pb)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "module", map_name(path));
	cmd_json_strn(o, "entry", m->src + f->name.off, f->name.len);
	if (phase)
		cJSON_AddNumberToObject(o, "phase", phase);
	else
		cJSON_AddNullToObject(o, "phase");
	cJSON_AddBoolToObject(o, "epilogue", epilogue);
	cJSON_AddItemToObject(o, "stmt_range", cmd_json_range(a, b));
	cJSON *sts = cJSON_AddArrayToObject(o, "statements");
	StrBuf t = STRBUF_INIT;
	for (uint32_t i = from; i <= to; i++) {
		const Stmt *s = func_stmt(m, f, i);
		sb_reset(&t);
		stmt_normalized(m, s, &t);
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "stmt", i);
		cJSON_AddNumberToObject(j, "line", s->line);
		cJSON_AddStringToObject(j, "text", t.p ? t.p : "");
		cJSON_AddBoolToObject(j, "in_range", i >= a && i <= b);
		cJSON_AddItemToArray(sts, j);
	}
	sb_release(&t);
	if (!live)
		return cmd_json_print(o, EXIT_OK);
	Err e = ERR_INIT;
	Dataflow *df = df_build(m, f, &e);
	cJSON *cut = df ? cut_json(df, a, b, &e) : NULL;
	if (cut) {
		cJSON *g = inflight_json(df, pa, pb, phase != 0);
		if (g)
			cJSON_AddItemToObject(cut, "groups_in_flight", g);
		else
			cJSON_AddNullToObject(cut, "groups_in_flight");
	}
	int rc = EXIT_OK;
	WgmmaFacts wf;
	if (cut && ana_wgmma(df, a, b, &wf, &e) == 0) {
		cJSON_AddItemToObject(cut, "wgmma", wgmma_facts_json(df, &wf));
		wgmma_facts_release(&wf);
	}
	df_free(df);
	if (cut)
		cJSON_AddItemToObject(o, "live", cut);
	else {
		rc = cmd_fail("%s", err_msg(&e));
		cJSON_Delete(o);
		o = cJSON_CreateObject();
	}
	err_release(&e);
	return cmd_json_print(o, rc);
}

/* The operand facts of the mma in [a, b] (nothing when there are none). */
static int show_operands(Dataflow *df, uint32_t a, uint32_t b, Err *e)
{
	PhaseList pl;
	ana_phase_find(df_module(df), df_func(df), 0, &pl);
	PhaseOperands po;
	int rc = ana_operands(df, &pl, a, b, &po, e);
	if (rc == 0 && (po.mma.n || po.unsupported)) {
		StrBuf t = STRBUF_INIT;
		facts_text(df, &po, &t);
		printf("\n%s", t.p ? t.p : "");
		sb_release(&t);
	}
	WgmmaFacts wf;
	if (rc == 0 && (rc = ana_wgmma(df, a, b, &wf, e)) == 0) {
		StrBuf t = STRBUF_INIT;
		wgmma_facts_text(df, &wf, &t);
		if (t.n)
			printf("\n%s", t.p);
		sb_release(&t);
		wgmma_facts_release(&wf);
	}
	phase_operands_release(&po);
	phases_release(&pl);
	return rc;
}

int cmd_show(int argc, char **argv)
{
	const char *entry = NULL, *stmts = NULL;
	unsigned phase = 0, context = 0, gap = 0;
	bool live = false, with_epi = false, json = false;
	const Opt opts[] = {
		OPT_STRING(0, "entry", &entry, "NAME",
		           "the function (default: the only one with mma)"),
		OPT_PHASE(&phase, "the statements of mma phase N"),
		OPT_STRING(0, "stmts", &stmts, "A:B", "the statements sA to sB"),
		OPT_FLAG(0, "epilogue", &with_epi,
		         "with --phase: through the phase's epilogue"),
		OPT_FLAG(0, "live", &live,
		         "add the cut interface and the memory effects"),
		OPT_UINT(0, "context", &context, "K", 0, UINT_MAX,
		         "K statements of context on each side"),
		OPT_UINT(0, "gap", &gap, "N", 0, UINT_MAX,
		         "with --phase: N other statements allowed in a phase"),
		OPT_FLAG(0, "json", &json, "one JSON object"),
		OPT_END(),
	};
	OptParse op = {.verb = "show", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, 1, "no module given") ||
	    opt_conflict(&op, "phase", "stmts") ||
	    opt_conflicts(&op, "stmts", "epilogue", "gap", NULL))
		return EXIT_ERROR;
	if (!phase && !stmts)
		return opt_usage_error(&op, "give --phase N or --stmts A:B");
	const char *path = argv[0];
	LoadedModule lm;
	if (cmd_load_module(path, &lm) < 0)
		return EXIT_ERROR;
	const Module *m = lm.m;
	const Func *f = cmd_pick_func(m, entry);
	if (!f) {
		cmd_unload_module(&lm);
		return EXIT_ERROR;
	}
	Err e = ERR_INIT;
	Dataflow *df = NULL;
	int rc = EXIT_OK;
	uint32_t a = 0, b = 0, pa = 0, pb = 0; /* [pa, pb]: the phase's mma */
	if (phase) {
		size_t n = 0;
		if (ana_phase_range(m, f, gap, phase, false, &pa, &pb, &n) < 0 ||
		    ana_phase_range(m, f, gap, phase, with_epi, &a, &b, &n) < 0) {
			char *who = xstrndup(mod_str(m, f->name).p, mod_str(m, f->name).n);
			ana_phase_missing("show", phase, who, n, &e);
			free(who);
			rc = cmd_fail("%s", err_msg(&e));
			goto out;
		}
	} else if (cmd_parse_range(stmts, &a, &b) < 0) {
		rc = cmd_fail("show: --stmts wants A:B (statement numbers, A <= B), not '%s'", stmts);
		goto out;
	}
	if (!phase)
		pa = a, pb = b;
	if (b >= f->nstmt) {
		rc = cmd_fail("show: statement s%u does not exist: '%.*s' has %u statements (s0-s%u)", b,
		              (int)f->name.len, m->src + f->name.off, f->nstmt, f->nstmt ? f->nstmt - 1 : 0);
		goto out;
	}
	uint32_t from = a > context ? a - context : 0;
	uint32_t to = b + context < f->nstmt ? b + context : f->nstmt - 1;
	if (json) {
		rc = show_json(path, m, f, phase, with_epi, a, b, from, to, live, pa, pb);
		goto out;
	}
	printf("%.*s: s%u-s%u (%u statements)\n", (int)f->name.len, m->src + f->name.off, a, b,
	       b - a + 1);
	StrBuf t = STRBUF_INIT;
	for (uint32_t i = from; i <= to; i++) {
		const Stmt *s = func_stmt(m, f, i);
		sb_reset(&t);
		stmt_normalized(m, s, &t);
		printf("%c s%-6u L%-7u %s\n", (i < a || i > b) ? ' ' : '>', i, s->line, t.p);
	}
	sb_release(&t);
	if (live && (!(df = df_build(m, f, &e)) || show_cut(df, a, b, &e) < 0))
		rc = cmd_fail("%s", err_msg(&e));
	if (live && rc == EXIT_OK && show_operands(df, a, b, &e) < 0)
		rc = cmd_fail("%s", err_msg(&e));
	if (live && rc == EXIT_OK) {
		StrBuf g = STRBUF_INIT;
		inflight_text(df, pa, pb, phase != 0, &g);
		if (g.n)
			printf("\n%s", g.p);
		sb_release(&g);
	}
out:
	df_free(df);
	err_release(&e);
	cmd_unload_module(&lm);
	return rc;
}
