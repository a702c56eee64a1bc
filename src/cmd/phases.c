/*
 * phases.c - `d4r-splice phases MODULE`: the mma phase table.
 *
 * Human table by default; --json gives one object per phase with the fields
 * of a phase descriptor (gemm, a_source, c_operand, epilogue) and, for each
 * derived value, the statement numbers it was derived from; --md a markdown
 * table.  Every function with mma statements is listed unless --entry names
 * one.  The functions are analysed on --jobs threads (default: one per
 * CPU); the output is the same, in module order, whatever the count.
 */
#include "ana/ana.h"
#include "ana/wgmma.h"
#include "cmd.h"
#include "splice/facts.h"
#include "splice/inflight.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {"phases MODULE [options]", NULL};

static cJSON *stmt_range(uint32_t a, uint32_t b)
{
	cJSON *r = cJSON_CreateArray();
	cJSON_AddItemToArray(r, cJSON_CreateNumber(a));
	cJSON_AddItemToArray(r, cJSON_CreateNumber(b));
	return r;
}

static char *strz(Str s)
{
	return xstrndup(s.p, s.n);
}

/* "name sN sM..." lines -> {"ops": [...], "evidence": {"name": [N, M]}} */
static void epilogue_json(const Phase *p, cJSON *epi)
{
	cJSON *ops = cJSON_AddArrayToObject(epi, "ops");
	cJSON *ev = cJSON_AddObjectToObject(epi, "evidence");
	const char *s = p->epilogue_ops.p ? p->epilogue_ops.p : "";
	while (*s) {
		const char *nl = strchr(s, '\n');
		if (!nl)
			nl = s + strlen(s);
		const char *sp = memchr(s, ' ', (size_t)(nl - s));
		if (!sp)
			sp = nl;
		char *name = xstrndup(s, (size_t)(sp - s));
		cJSON_AddItemToArray(ops, cJSON_CreateString(name));
		cJSON *at = cJSON_AddArrayToObject(ev, name);
		const char *q = sp;
		while (q < nl) {
			char *end;
			unsigned long v = strtoul(q, &end, 10);
			if (end == q)
				break;
			cJSON_AddItemToArray(at, cJSON_CreateNumber((double)v));
			q = end;
		}
		free(name);
		s = *nl ? nl + 1 : nl;
	}
}

/* The wgmma facts of phase p (ana/wgmma.h): an array, null when the phase
 * holds no wgmma.mma_async. */
static cJSON *wgmma_phase_json(Dataflow *df, const Phase *p)
{
	WgmmaFacts wf;
	Err e = ERR_INIT;
	cJSON *j = NULL;
	if (ana_wgmma(df, p->first, p->last, &wf, &e) == 0 && wf.v.n)
		j = wgmma_facts_json(df, &wf);
	wgmma_facts_release(&wf);
	err_release(&e);
	return j ? j : cJSON_CreateNull();
}

static cJSON *phase_json(const Module *m, const Phase *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "phase", p->number);
	cJSON *g = cJSON_AddObjectToObject(o, "gemm");
	cJSON_AddNumberToObject(g, "m_tiles", p->m_tiles);
	cJSON_AddNumberToObject(g, "n_tiles", p->n_tiles);
	cJSON_AddNumberToObject(g, "k", p->k);
	cJSON_AddNumberToObject(g, "k_chain_len", p->k_chain_len);
	cJSON_AddNumberToObject(g, "mma", p->mma);
	cJSON_AddNumberToObject(g, "chains", p->chains);
	cJSON_AddBoolToObject(g, "banded", p->banded);
	char *shape = strz(p->shape), *types = strz(p->types);
	cJSON_AddStringToObject(g, "shape", shape);
	cJSON_AddStringToObject(g, "types", types[0] == '.' ? types + 1 : types);
	free(shape);
	free(types);
	if (p->b_loaded) {
		cJSON_AddItemToObject(g, "weight_bytes", stmt_range((uint32_t)p->b_lo, (uint32_t)p->b_hi));
		char *base = strz(p->b_base);
		cJSON_AddStringToObject(g, "weight_base", base);
		free(base);
		cJSON_AddNumberToObject(g, "weight_base_param_offset", (double)p->b_param_off);
		/* the thread-dependent part of the B addresses: bytes per unit of
		 * each special register, or null when it is not such a sum */
		if (p->b_stride_known) {
			cJSON *st = cJSON_AddObjectToObject(g, "weight_stride");
			for (unsigned i = 0; i < p->b_nstride; i++) {
				char *r = strz(p->b_stride[i].reg);
				cJSON_AddNumberToObject(st, r,
				                        (double)p->b_stride[i].bytes);
				free(r);
			}
		} else
			cJSON_AddNullToObject(g, "weight_stride");
	} else
		cJSON_AddNullToObject(g, "weight_bytes");
	if (p->c_kind == CK_LOADED && !p->c_bytes_known)
		cJSON_AddNullToObject(g, "c_source_bytes");
	else {
		cJSON *cb = cJSON_AddArrayToObject(g, "c_source_bytes");
		for (size_t i = 0; i < p->c_bytes.n; i++)
			cJSON_AddItemToArray(cb,
			                     cJSON_CreateNumber((double)p->c_bytes.v[i]));
	}
	cJSON_AddItemToObject(g, "mma_stmt_range", stmt_range(p->first, p->last));
	uint32_t ne = p->epi_last >= p->epi_first ? p->epi_last - p->epi_first + 1 : 0;
	cJSON_AddNumberToObject(g, "epilogue_statements", ne);
	cJSON_AddItemToObject(g, "epilogue_stmt_range", stmt_range(p->epi_first, p->epi_first + ne - (ne ? 1 : 0)));
	const Stmt *s0 = &m->stmts.v[0]; /* lines come from the caller's function */
	(void)s0;
	cJSON *a = cJSON_AddObjectToObject(o, "a_source");
	cJSON_AddStringToObject(a, "kind", asrc_kind_name(p->a_kind));
	if (p->a_from_phase >= 0)
		cJSON_AddNumberToObject(a, "from_phase", p->a_from_phase);
	if (p->a_kind == AK_LOADED)
		cJSON_AddStringToObject(a, "space", space_name(p->a_space));
	if (p->a_kind == AK_SHARED) {
		cJSON *off = cJSON_AddArrayToObject(a, "arena_byte_offsets");
		for (size_t i = 0; i < p->a_offsets.n; i++)
			cJSON_AddItemToArray(off, cJSON_CreateNumber((double)p->a_offsets.v[i]));
	}
	if (p->a_descriptor)
		cJSON_AddBoolToObject(a, "descriptor", true);
	if (p->a_nthrough) {
		cJSON *th = cJSON_AddArrayToObject(a, "through");
		for (unsigned i = 0; i < p->a_nthrough; i++) {
			char *op = strz(p->a_through[i]);
			cJSON_AddItemToArray(th, cJSON_CreateString(op));
			free(op);
		}
		cJSON_AddNumberToObject(a, "through_evidence_stmt",
		                        p->a_through_evidence);
	}
	cJSON_AddNumberToObject(a, "evidence_stmt", p->a_evidence);
	cJSON *c = cJSON_AddObjectToObject(o, "c_operand");
	cJSON_AddStringToObject(c, "kind", ckind_name(p->c_kind));
	if (p->c_from_phase >= 0)
		cJSON_AddNumberToObject(c, "from_phase", p->c_from_phase);
	if (p->c_kind == CK_LOADED)
		cJSON_AddStringToObject(c, "space", space_name(p->c_space));
	if (p->c_kind == CK_LOOP_CARRIED) {
		cJSON_AddStringToObject(c, "entry", ckind_name(p->c_entry_kind));
		if (p->c_entry_from_phase >= 0)
			cJSON_AddNumberToObject(c, "entry_from_phase",
			                        p->c_entry_from_phase);
		if (p->c_entry_kind == CK_LOADED)
			cJSON_AddStringToObject(c, "entry_space",
			                        space_name(p->c_entry_space));
	}
	cJSON_AddNumberToObject(c, "evidence_stmt", p->c_evidence);
	if (p->b_loaded)
		cJSON_AddNumberToObject(g, "weight_evidence_stmt", p->b_evidence);
	cJSON *e = cJSON_AddObjectToObject(o, "epilogue");
	epilogue_json(p, e);
	cJSON_AddNumberToObject(e, "statements", ne);
	cJSON_AddItemToObject(e, "stmt_range", stmt_range(p->epi_first, p->epi_first + ne - (ne ? 1 : 0)));
	return o;
}

static void ops_line(const Phase *p, StrBuf *out)
{
	const char *s = p->epilogue_ops.p ? p->epilogue_ops.p : "";
	int first = 1;
	while (*s) {
		const char *sp = strpbrk(s, " \n");
		if (!sp)
			sp = s + strlen(s);
		sb_addf(out, "%s%.*s", first ? "" : ",", (int)(sp - s), s);
		first = 0;
		const char *nl = strchr(s, '\n');
		s = nl ? nl + 1 : s + strlen(s);
	}
	if (first)
		sb_adds(out, "-");
}

/* The first component of an opcode ("prmt" of "prmt.b32"). */
static int op_stem(Str op)
{
	const char *d = memchr(op.p, '.', op.n);
	return d ? (int)(d - op.p) : (int)op.n;
}

static void kind_text(const Phase *p, int which, char *buf, size_t n)
{
	if (which == 0) {
		if (p->a_from_phase >= 0)
			snprintf(buf, n, "%s(p%d)", asrc_kind_name(p->a_kind), p->a_from_phase);
		else if (p->a_kind == AK_LOADED)
			snprintf(buf, n, "loaded:%s", space_name(p->a_space));
		else
			snprintf(buf, n, "%s", asrc_kind_name(p->a_kind));
		/* "shared~prmt": loaded, then moved by the opcodes named in --json */
		if (p->a_nthrough) {
			size_t k = strlen(buf);
			snprintf(buf + k, n - k, "~%.*s", op_stem(p->a_through[0]),
			         p->a_through[0].p);
		}
	} else if (p->c_kind == CK_LOOP_CARRIED) {
		/* "loop_carried(p3,zero)": phase 3's D comes round, zero on entry */
		char entry[32];
		if (p->c_entry_from_phase >= 0)
			snprintf(entry, sizeof entry, "%s(p%d)",
			         ckind_name(p->c_entry_kind), p->c_entry_from_phase);
		else if (p->c_entry_kind == CK_LOADED)
			snprintf(entry, sizeof entry, "loaded:%s",
			         space_name(p->c_entry_space));
		else
			snprintf(entry, sizeof entry, "%s", ckind_name(p->c_entry_kind));
		snprintf(buf, n, "%s(p%d,%s)", ckind_name(p->c_kind), p->c_from_phase,
		         entry);
	} else {
		if (p->c_from_phase >= 0)
			snprintf(buf, n, "%s(p%d)", ckind_name(p->c_kind), p->c_from_phase);
		else if (p->c_kind == CK_LOADED)
			snprintf(buf, n, "loaded:%s", space_name(p->c_space));
		else
			snprintf(buf, n, "%s", ckind_name(p->c_kind));
	}
}

int cmd_phases(int argc, char **argv)
{
	const char *entry = NULL;
	unsigned gap = 0, jobs = 0;
	bool json = false, md = false;
	const Opt opts[] = {
		OPT_STRING(0, "entry", &entry, "NAME",
		           "only this function (default: all with mma)"),
		OPT_UINT(0, "gap", &gap, "N", 0, UINT_MAX,
		         "N other statements allowed inside a phase (default 0)"),
		OPT_UINT(0, "jobs", &jobs, "N", 1, UINT_MAX,
		         "analyse on N threads (default: one per CPU)"),
		OPT_FLAG(0, "json", &json,
		         "an object per phase, with its evidence statements"),
		OPT_FLAG(0, "md", &md, "a markdown table"),
		OPT_END(),
	};
	OptParse op = {.verb = "phases", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, 1, "no module given") ||
	    opt_conflict(&op, "json", "md"))
		return EXIT_ERROR;
	const char *path = argv[0];
	LoadedModule lm;
	if (cmd_load_module(path, &lm) < 0)
		return EXIT_ERROR;
	const Module *m = lm.m;
	/* Functions to report: the named one, or every one with mma. */
	VEC(const Func *) fns = {0};
	if (entry) {
		const Func *f = cmd_pick_func(m, entry);
		if (!f) {
			cmd_unload_module(&lm);
			return EXIT_ERROR;
		}
		VEC_PUSH(fns, f);
	} else {
		for (size_t i = 0; i < m->funcs.n; i++) {
			const Func *f = &m->funcs.v[i];
			if (!(f->flags & FNF_DECL) && ana_func_has_mma(m, f))
				VEC_PUSH(fns, f);
		}
	}
	int rc = EXIT_OK;
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *jfns = NULL;
	if (root) {
		cJSON_AddStringToObject(root, "module", map_name(path));
		cJSON_AddNumberToObject(root, "gap", gap);
		jfns = cJSON_AddArrayToObject(root, "functions");
	}
	StrBuf line = STRBUF_INIT;
	FuncPhases *res = xcalloc(fns.n + 1, sizeof(FuncPhases));
	ana_phases_funcs(m, fns.v, fns.n, gap, jobs, res);
	for (size_t fi = 0; fi < fns.n; fi++) {
		const Func *f = fns.v[fi];
		const PhaseList pl = res[fi].pl;
		if (res[fi].rc < 0) {
			cmd_fail("%s", err_msg(&res[fi].err));
			rc = EXIT_ERROR;
			break;
		}
		uint32_t nmma = 0;
		for (size_t i = 0; i < pl.n; i++)
			nmma += pl.v[i].mma;
		char *fname = xstrndup(m->src + f->name.off, f->name.len);
		if (root) {
			cJSON *jf = cJSON_CreateObject();
			cJSON_AddStringToObject(jf, "name", fname);
			cJSON_AddStringToObject(jf, "kind", f->kind == FN_ENTRY ? "entry" : "func");
			cJSON_AddNumberToObject(jf, "statements", f->nstmt);
			cJSON_AddNumberToObject(jf, "mma", nmma);
			cJSON *jp = cJSON_AddArrayToObject(jf, "phases");
			Err oe = ERR_INIT;
			Dataflow *odf = pl.n ? df_build(m, f, &oe) : NULL; /* the operand facts */
			for (size_t i = 0; i < pl.n; i++) {
				cJSON *pj = phase_json(m, &pl.v[i]);
				if (odf) {
					cJSON_AddItemToObject(pj, "operands", facts_phase_json(odf, &pl, &pl.v[i]));
					cJSON_AddItemToObject(pj, "wgmma", wgmma_phase_json(odf, &pl.v[i]));
				}
				cJSON *gj = odf ? inflight_json(odf, pl.v[i].first,
				                                pl.v[i].last, true)
				                : NULL;
				if (gj)
					cJSON_AddItemToObject(pj, "groups_in_flight", gj);
				else
					cJSON_AddNullToObject(pj, "groups_in_flight");
				cJSON_AddItemToArray(jp, pj);
			}
			df_free(odf);
			err_release(&oe);
			cJSON_AddItemToArray(jfns, jf);
		} else {
			printf("%s%s: %zu phases, %u mma statements, %u statements (gap %u)\n",
			       fi ? "\n" : "", fname, pl.n, nmma, f->nstmt, gap);
			if (md)
				printf("\n| phase | mma stmts | mma | m | n | k | chain | chains | banded | A | C | B bytes | epilogue | ops |\n"
				       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
			else if (pl.n)
				printf("%5s %-15s %4s %3s %3s %4s %5s %6s %-6s %-16s %-16s %-17s %-19s %s\n",
				       "phase", "mma-stmts", "mma", "m", "n", "k", "chain", "chains", "banded",
				       "A", "C", "B-bytes", "epilogue", "ops");
			for (size_t i = 0; i < pl.n; i++) {
				const Phase *p = &pl.v[i];
				char ak[48], ck[48], bb[48], rng[48], epi[48];
				kind_text(p, 0, ak, sizeof ak);
				kind_text(p, 1, ck, sizeof ck);
				if (p->b_loaded)
					snprintf(bb, sizeof bb, "[%lld,%lld]", (long long)p->b_lo, (long long)p->b_hi);
				else
					snprintf(bb, sizeof bb, "-");
				snprintf(rng, sizeof rng, "s%u-s%u", p->first, p->last);
				uint32_t ne = p->epi_last >= p->epi_first ? p->epi_last - p->epi_first + 1 : 0;
				if (ne)
					snprintf(epi, sizeof epi, "s%u-s%u(%u)", p->epi_first, p->epi_last, ne);
				else
					snprintf(epi, sizeof epi, "-");
				sb_reset(&line);
				ops_line(p, &line);
				if (md)
					printf("| %u | %s | %u | %u | %u | %u | %u | %u | %s | %s | %s | %s | %s | %s |\n",
					       p->number, rng, p->mma, p->m_tiles, p->n_tiles, p->k, p->k_chain_len,
					       p->chains, p->banded ? "yes" : "no", ak, ck, bb, epi, line.p);
				else
					printf("%5u %-15s %4u %3u %3u %4u %5u %6u %-6s %-16s %-16s %-17s %-19s %s\n",
					       p->number, rng, p->mma, p->m_tiles, p->n_tiles, p->k, p->k_chain_len,
					       p->chains, p->banded ? "yes" : "no", ak, ck, bb, epi, line.p);
			}
		}
		free(fname);
	}
	func_phases_release(res, fns.n);
	free(res);
	sb_release(&line);
	if (root && rc == EXIT_OK)
		cmd_json_print(root, rc); /* an error: main.c prints the error document */
	else
		cJSON_Delete(root);
	VEC_FREE(fns);
	cmd_unload_module(&lm);
	return rc;
}
