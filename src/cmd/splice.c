/*
 * splice.c - `d4r-splice splice`: apply one recipe and write the module.
 *
 *   d4r-splice splice LAYER --phase N [--recipe FILE] [options]
 *   d4r-splice splice LAYER --phases LIST [--variant NAME] [options]
 *   d4r-splice splice --module FILE --recipe FILE [options]
 *   d4r-splice splice --module FILE --every-phase [--together] [options]
 *
 * The work is splice_run (splice/splice.h); this file finds the files,
 * writes the output (base/file.h: never over one of the inputs, checked
 * before the work) and prints the summary on stderr.  An option
 * of one form is refused in the other: --every-phase writes nothing and
 * takes no recipe, and --together and --template belong to it alone.
 */
#include "base/err.h"
#include "base/file.h"
#include "base/layout.h"
#include "base/progress.h"
#include "cmd.h"
#include "gpu/manifest.h"
#include "ptx/parse.h"
#include "splice/locate.h"
#include "splice/multi.h"
#include "splice/ptxas.h"
#include "splice/splice.h"

#include "ana/ana.h"
#include "base/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {
	"splice LAYER --phase N [--recipe FILE] [options]",
	"splice LAYER --phases LIST [--variant NAME] [options]",
	"splice --module FILE --recipe FILE [options]",
	"splice --module FILE --every-phase [--together] [options]",
	NULL,
};

/*
 * --every-phase: the built-in template spliced into every mma phase of every
 * function with a body, .entry and .func alike (or --entry), of one module,
 * in memory, one line per phase: "ok", "FAIL" with the error, or "skip"
 * with the reason when the template cannot apply to the cut (perturb and a
 * wgmma whose wait is outside it).  Each splice is checked to keep every
 * byte outside the cut's statements (outside_kept), and with --check=ptxas
 * the spliced module must pass ptxas -e ENTRY (the whole module for a
 * .func); what ptxas says about a module it accepts is shown, not
 * summarised as "ptxas ok".  A run that splices nothing proves nothing and
 * exits 2, as one with a failure does.
 * This is the mechanism's proof on real vendor code (tests/corpus/t0300)
 * and the splice-time benchmark (times against the parse of the same run).
 */

/* The function kinds --every-phase splices into: every one with a body. */
static bool every_phase_func(const Module *m, const Func *f, const char *entry_opt)
{
	if ((f->flags & FNF_DECL) || !f->nstmt)
		return false;
	return !entry_opt || str_eqc(mod_str(m, f->name), entry_opt);
}

/* ptxas's -e for function f: its name for an entry; none (the whole
 * module) for a .func, which ptxas compiles with the entries. */
static const char *ptxas_entry(const Func *f, const char *name)
{
	return f->kind == FN_ENTRY ? name : NULL;
}

/* Prints what ptxas said about a module it accepted, indented, after the
 * verdict "ptxas accepts it with N messages"; nothing when it said
 * nothing. */
static void ptxas_messages(const StrBuf *log)
{
	for (const char *q = log->p; q && *q;) {
		const char *nl = strchr(q, '\n');
		size_t n = nl ? (size_t)(nl - q) : strlen(q);
		if (n)
			printf("      %.*s\n", (int)n, q);
		q = nl ? nl + 1 : NULL;
	}
}

static unsigned log_lines(const StrBuf *log)
{
	unsigned n = 0;
	for (const char *q = log->p; q && *q; q++)
		n += *q == '\n';
	if (log->n && log->p[log->n - 1] != '\n')
		n++;
	return n;
}
/* Where each phase's spliced region lies in a module spliced many times:
 * its output lines [line, line + nlines), from the splices' own line maps. */
typedef struct {
	const char *func;            /* the function */
	uint32_t phase, first, last; /* the phase and its cut */
	int64_t line;                /* output line of the region's first line */
	uint32_t nlines;
} Region;
typedef VEC(Region) RegionVec;

/* Records the region of a splice made into text whose earlier splices all
 * lie after it (functions and their phases are spliced from the last to the
 * first): those regions move by the lines this splice added. */
static void region_add(RegionVec *rv, const SpliceResult *res, const char *func,
                       uint32_t phase, uint32_t first, uint32_t last)
{
	for (size_t i = 0; i < rv->n; i++)
		rv->v[i].line += res->line_delta;
	Region r = {func, phase, first, last, res->region_line, (uint32_t)res->line_map.n};
	VEC_PUSH(*rv, r);
}

/* Names the spliced region that holds output line `line` (with its
 * function when the module has spliced regions of several). */
static void region_of_line(const RegionVec *rv, bool several, unsigned line, StrBuf *out)
{
	for (size_t i = 0; i < rv->n; i++) {
		const Region *r = &rv->v[i];
		if (line >= r->line && line < r->line + r->nlines) {
			if (several)
				sb_addf(out, " [in the region of phase %u of %s, s%u..s%u]", r->phase,
				        r->func, r->first, r->last);
			else
				sb_addf(out, " [in the region of phase %u, s%u..s%u]", r->phase, r->first,
				        r->last);
			return;
		}
	}
	sb_adds(out, " [outside every spliced region]");
}

/*
 * --every-phase --together: every phase of every function spliced into one
 * module, one after the other, from the module's last function and phase to
 * its first (a splice renames registers and adds declarations and braces,
 * never statements, so the statement numbers of the next phase stay the
 * same, and the regions already made lie after the next one; each step
 * re-parses the text it produced), then one ptxas run for the module, with
 * -e naming every spliced entry (ptxas compiles each entry alone, as it
 * would one module per entry; a .func spliced: the whole module).  The
 * same proof as one module per phase, for a fraction of the ptxas time on
 * big kernels: ptxas reads the module once, not once per entry.
 */
/* The recipe --every-phase splices: built-in template `tname` over
 * [first, last] of f, its guard the sha256 of that text (into hex, which the
 * recipe points at; nothing to release). */
static void builtin_recipe(const Module *m, const Func *f, uint32_t first, uint32_t last,
                           const char *tname, char hex[65], Recipe *r)
{
	memset(r, 0, sizeof *r);
	r->path = (char *)"(every-phase)";
	r->cut = CUT_STMTS;
	r->first = first;
	r->last = last;
	r->tkind = !strcmp(tname, "perturb") ? TPL_PERTURB : TPL_IDENTITY;
	r->template_name = (char *)tname;
	StrBuf txt = STRBUF_INIT;
	splice_cut_text(m, f, first, last, &txt);
	sha256_hex(txt.p ? txt.p : "", txt.n, hex);
	sb_release(&txt);
	r->sha256 = hex;
}

/* The target to check with: --arch, else the module's own. */
static void check_arch(const Module *m, const char *arch_opt, char arch[64])
{
	arch[0] = 0;
	if (arch_opt)
		snprintf(arch, 64, "%s", arch_opt);
	else
		splice_module_arch(m, arch, 64);
}

/*
 * Are the bytes of orig[0..n) outside the cut s`first`..s`last` of f kept in
 * the output, in place?  The output must begin with the bytes before the
 * cut's first statement and end with those after its last statement's ';'.
 * The span is the statements' own, from m (the parse of orig), not the
 * region the splicer reports, so the check does not take the splicer's word
 * for where its edit lies: a splice that also changed a byte beside the cut
 * fails it.
 */
static bool outside_kept(const SpliceResult *res, const Module *m, const Func *f, uint32_t first,
                         uint32_t last, const char *orig, size_t n)
{
	const Stmt *s0 = func_stmt(m, f, first), *s1 = func_stmt(m, f, last);
	size_t pre = s0->off, suf = n - ((size_t)s1->off + s1->len);
	return pre + suf <= res->text.n && !memcmp(res->text.p, orig, pre) &&
	       !memcmp(res->text.p + res->text.n - suf, orig + n - suf, suf);
}

/* A cut of --every-phase --together --json, in the function's "cuts". */
static void cut_row(cJSON *cuts, unsigned phase, uint32_t first, uint32_t last,
                    const char *result, const char *message)
{
	if (!cuts)
		return;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "phase", phase);
	cJSON_AddItemToObject(o, "stmt_range", cmd_json_range(first, last));
	cJSON_AddStringToObject(o, "result", result);
	cmd_json_str_or_null(o, "message", message);
	cJSON_AddItemToArray(cuts, o);
}

/* One function of --every-phase --together. */
typedef struct {
	const Func *f0;      /* in the module as read */
	char *name;
	PhaseList pl;
	unsigned ok, skip;
	const char *why;     /* why the function fails, or NULL */
	StrBuf lines;        /* its lines of text output, printed in module order */
	cJSON *row, *cuts;   /* --json */
} TogetherFunc;

/* Splices every phase of t->f0, last to first, into cur (a splice that
 * fails leaves cur as it was).  Returns the splices attempted. */
static unsigned together_func(TogetherFunc *t, const char *module_path, const char *tname,
                              StrBuf *cur, RegionVec *regions, Err *e)
{
	unsigned n = 0;
	for (size_t p = t->pl.n; p-- > 0 && !t->why;) {
		Module *m = ptx_parse(map_name(module_path), cur->p, cur->n, e);
		if (!m) {
			t->why = "the spliced text does not parse";
			break;
		}
		const Func *f = mod_func_find(m, str_c(t->name));
		const Phase *ph = &t->pl.v[p];
		Recipe r;
		char hex[65];
		builtin_recipe(m, f, ph->first, ph->last, tname, hex, &r);
		SpliceResult res;
		memset(&res, 0, sizeof res);
		SpliceRequest req = {m, t->name, &r, NULL, false};
		n++;
		int src = splice_run(&req, &res, e);
		if (src < 0 && res.refused) {
			sb_addf(&t->lines, "skip  %s phase %u s%u..s%u: %s\n", t->name, ph->number,
			        r.first, r.last, err_msg(e));
			cut_row(t->cuts, ph->number, r.first, r.last, "skip", err_msg(e));
			t->skip++;
		} else if (src < 0) {
			sb_addf(&t->lines, "FAIL  %s phase %u s%u..s%u: %s\n", t->name, ph->number,
			        r.first, r.last, err_msg(e));
			cut_row(t->cuts, ph->number, r.first, r.last, "fail", err_msg(e));
			t->why = "a splice failed";
		} else if (!outside_kept(&res, m, f, r.first, r.last, cur->p, cur->n)) {
			sb_addf(&t->lines, "FAIL  %s phase %u: bytes outside the cut changed\n", t->name,
			        ph->number);
			cut_row(t->cuts, ph->number, r.first, r.last, "fail",
			        "bytes outside the cut changed");
			t->why = "bytes outside a cut changed";
		} else {
			t->ok++;
			cut_row(t->cuts, ph->number, r.first, r.last, "ok", NULL);
			region_add(regions, &res, t->name, ph->number, r.first, r.last);
			sb_reset(cur);
			sb_addn(cur, res.text.p, res.text.n);
		}
		err_release(e);
		splice_result_release(&res);
		mod_free(m);
	}
	return n;
}

static int every_phase_together(const char *module_path, const char *entry_opt, const char *tname,
                                const char *check, const char *arch_opt, bool no_cache, bool json)
{
	Err e = ERR_INIT;
	LoadedModule lm;
	if (cmd_load_module(module_path, &lm) < 0)
		return EXIT_ERROR;
	const Module *m0 = lm.m;
	char arch[64];
	check_arch(m0, arch_opt, arch);
	unsigned n = 0, failed = 0, skipped = 0, spliced = 0;
	double t0 = now_seconds();
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *rows = doc ? cJSON_AddArrayToObject(doc, "functions") : NULL;
	TogetherFunc *fs = xcalloc(m0->funcs.n ? m0->funcs.n : 1, sizeof *fs);
	size_t nf = 0;
	for (size_t fi = 0; fi < m0->funcs.n; fi++) {
		const Func *f0 = &m0->funcs.v[fi];
		if (!every_phase_func(m0, f0, entry_opt))
			continue;
		TogetherFunc *t = &fs[nf];
		ana_phase_find(m0, f0, 0, &t->pl);
		if (!t->pl.n) {
			phases_release(&t->pl);
			continue;
		}
		Str fname = mod_str(m0, f0->name);
		t->f0 = f0;
		t->name = xstrndup(fname.p, fname.n);
		if (rows) {
			t->row = cJSON_CreateObject();
			cJSON_AddStringToObject(t->row, "function", t->name);
			cJSON_AddNumberToObject(t->row, "phases", (double)t->pl.n);
			t->cuts = cJSON_AddArrayToObject(t->row, "cuts");
			cJSON_AddItemToArray(rows, t->row);
		}
		nf++;
	}
	/* the current text: starts as the module's bytes; the last function
	 * first, so that every region made lies after the next splice */
	StrBuf cur = STRBUF_INIT;
	sb_addn(&cur, lm.mf.p, lm.mf.n);
	RegionVec regions = {0};
	for (size_t i = nf; i-- > 0;)
		n += together_func(&fs[i], module_path, tname, &cur, &regions, &e);

	/* one ptxas run: -e every entry spliced whole, or the module when a
	 * .func is among them */
	StrBuf entries = STRBUF_INIT, log = STRBUF_INIT;
	bool whole = false;
	unsigned checked = 0;
	size_t nphases = 0;
	for (size_t i = 0; i < nf; i++) {
		if (fs[i].why || !fs[i].ok)
			continue;
		if (!ptxas_entry(fs[i].f0, fs[i].name))
			whole = true;
		sb_addf(&entries, "%s%s", checked ? "," : "", fs[i].name);
		checked++;
		nphases += fs[i].pl.n;
	}
	const char *pwhy = NULL; /* why the module fails ptxas */
	char verdict[96] = "";
	bool show_log = false, ran = false;
	PtxasCache pc = {.no_cache = no_cache};
	if (checked && !strcmp(check, "ptxas")) {
		int pr = splice_ptxas(cur.p, cur.n, arch, whole ? NULL : entries.p, NULL, "spliced",
		                      &pc, &log, &e);
		ran = pr >= 0;
		if (pr < 0) {
			sb_reset(&log);
			sb_adds(&log, err_msg(&e));
			pwhy = "ptxas did not run";
		} else if (pr) {
			pwhy = "ptxas rejects the module";
			/* name the region of each message's line */
			StrBuf named = STRBUF_INIT;
			for (char *q = log.p, *nl; q && *q; q = nl ? nl + 1 : NULL) {
				nl = strchr(q, '\n');
				StrBuf l = STRBUF_INIT;
				sb_addn(&l, q, nl ? (size_t)(nl - q) : strlen(q));
				char *at = strstr(l.p, "spliced:");
				if (at)
					region_of_line(&regions, checked > 1,
					               (unsigned)strtoul(at + 8, NULL, 10), &l);
				sb_addf(&named, "%s\n", l.p);
				sb_release(&l);
				if (!nl)
					break;
			}
			sb_release(&log);
			log = named;
		} else if (log.n) {
			snprintf(verdict, sizeof verdict, ", ptxas accepts it with %u messages%s:",
			         log_lines(&log), cmd_ptxas_cached(&pc));
			show_log = true;
		} else
			snprintf(verdict, sizeof verdict, ", ptxas ok%s", cmd_ptxas_cached(&pc));
	}

	for (size_t i = 0; i < nf; i++) {
		TogetherFunc *t = &fs[i];
		bool in_ptxas = !t->why && t->ok;
		const char *why = t->why ? t->why : in_ptxas ? pwhy : NULL;
		failed += why != NULL;
		spliced += t->ok;
		skipped += t->skip;
		if (t->row) {
			cJSON_AddNumberToObject(t->row, "spliced", t->ok);
			cJSON_AddNumberToObject(t->row, "skipped", t->skip);
			cJSON_AddStringToObject(t->row, "result", why ? "fail" : t->ok ? "ok" : "none");
			cmd_json_ptxas(t->row, in_ptxas && ran, NULL, !pwhy, &log, &pc);
			cmd_json_str_or_null(t->row, "message", why);
			continue;
		}
		fputs(t->lines.p ? t->lines.p : "", stdout);
		if (why || !t->ok)
			continue;
		if (t->skip)
			printf("ok    %s: %u of %zu phases spliced together (%s), %u skipped%s\n", t->name,
			       t->ok, t->pl.n, tname, t->skip, verdict);
		else
			printf("ok    %s: %u of %zu phases spliced together (%s)%s\n", t->name, t->ok,
			       t->pl.n, tname, verdict);
	}
	if (!rows && pwhy) {
		if (ran)
			printf("FAIL  %s: ptxas rejects the module with %zu phases spliced%s:\n",
			       entries.p, nphases, cmd_ptxas_cached(&pc));
		else
			printf("FAIL  %s: %s\n", entries.p, log.p);
		if (ran)
			ptxas_messages(&log);
	} else if (!rows && show_log)
		ptxas_messages(&log);
	fflush(stdout);
	for (size_t i = 0; i < nf; i++) {
		free(fs[i].name);
		phases_release(&fs[i].pl);
		sb_release(&fs[i].lines);
	}
	free(fs);
	sb_release(&entries);
	sb_release(&log);
	sb_release(&cur);
	VEC_FREE(regions);

	char skips[48] = "";
	if (skipped)
		snprintf(skips, sizeof skips, ", %u skipped", skipped);
	if (doc) {
		int rc = failed || !spliced ? EXIT_ERROR : EXIT_OK;
		cJSON_AddStringToObject(doc, "module", map_name(module_path));
		cJSON_AddStringToObject(doc, "template", tname);
		cJSON_AddBoolToObject(doc, "together", true);
		cJSON_AddNumberToObject(doc, "splices", n - skipped);
		cJSON_AddNumberToObject(doc, "failed", failed);
		cJSON_AddNumberToObject(doc, "skipped", skipped);
		cJSON_AddNumberToObject(doc, "seconds", now_seconds() - t0);
		if (rc)
			cJSON_AddStringToObject(doc, "message",
			                        failed ? "some phases failed"
			                               : "nothing was spliced: nothing is proven");
		cmd_json_print(doc, rc);
		cmd_unload_module(&lm);
		err_release(&e);
		return rc;
	}
	printf("%s: %zu function%s, %u splices (%s, together)%s, %u failed, %.1f s\n",
	       module_path, nf, nf == 1 ? "" : "s", n - skipped, tname, skips, failed,
	       now_seconds() - t0);
	if (!failed && !spliced)
		printf("%s: nothing was spliced (%u phases skipped): nothing is proven\n",
		       module_path, skipped);
	cmd_unload_module(&lm);
	err_release(&e);
	return failed || !spliced ? EXIT_ERROR : EXIT_OK;
}

/* The progress line of --every-phase, over the phases of the functions it
 * splices (NULL when stderr is not a terminal). */
static Progress *every_phase_progress(const Module *m, const char *entry_opt)
{
	if (!isatty(STDERR_FILENO))
		return NULL;
	size_t total = 0;
	for (size_t fi = 0; fi < m->funcs.n; fi++) {
		const Func *f = &m->funcs.v[fi];
		if (!every_phase_func(m, f, entry_opt))
			continue;
		PhaseList pl;
		ana_phase_find(m, f, 0, &pl);
		total += pl.n;
		phases_release(&pl);
	}
	return progress_start("splice --every-phase", total, "phases");
}

/* A row of --every-phase --json: one phase's splice. */
static cJSON *phase_row(cJSON *rows, const char *ename, unsigned phase, uint32_t first,
                        uint32_t last, const char *result)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "function", ename);
	cJSON_AddNumberToObject(o, "phase", phase);
	cJSON_AddItemToObject(o, "stmt_range", cmd_json_range(first, last));
	cJSON_AddStringToObject(o, "result", result);
	cJSON_AddItemToArray(rows, o);
	return o;
}

static int every_phase(const char *module_path, const char *entry_opt, const char *tname,
                       const char *check, const char *arch_opt, bool no_cache, bool json)
{
	Err e = ERR_INIT;
	LoadedModule lm;
	if (cmd_load_module(module_path, &lm) < 0)
		return EXIT_ERROR;
	double t_parse = lm.parse_s;
	const Module *m = lm.m;
	const MapFile mf = lm.mf;
	char arch[64];
	check_arch(m, arch_opt, arch);
	unsigned n = 0, failed = 0, skipped = 0;
	double t_splice = 0, t_max = 0;
	Progress *pg = every_phase_progress(m, entry_opt);
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *rows = doc ? cJSON_AddArrayToObject(doc, "phases") : NULL;
	for (size_t fi = 0; fi < m->funcs.n; fi++) {
		const Func *f = &m->funcs.v[fi];
		if (!every_phase_func(m, f, entry_opt))
			continue;
		Str fname = mod_str(m, f->name);
		char *ename = xstrndup(fname.p, fname.n);
		PhaseList pl;
		ana_phase_find(m, f, 0, &pl);
		for (size_t p = 0; p < pl.n; p++) {
			progress_detail(pg, "%s phase %u", ename, pl.v[p].number);
			Recipe r;
			char hex[65];
			builtin_recipe(m, f, pl.v[p].first, pl.v[p].last, tname, hex, &r);
			SpliceResult res;
			memset(&res, 0, sizeof res);
			SpliceRequest req = {m, ename, &r, NULL, false};
			n++;
			double s0 = now_seconds();
			int rc = splice_run(&req, &res, &e);
			double dt = now_seconds() - s0;
			t_splice += dt;
			if (dt > t_max)
				t_max = dt;
			const char *why = NULL;
			StrBuf log = STRBUF_INIT;
			bool ptxas = !strcmp(check, "ptxas");
			PtxasCache pc = {.no_cache = no_cache};
			if (rc < 0 && res.refused) {
				skipped++;
				n--;
				progress_hide(pg);
				if (rows)
					cJSON_AddStringToObject(phase_row(rows, ename, pl.v[p].number,
					                                  r.first, r.last, "skip"),
					                        "message", err_msg(&e));
				else
					printf("skip  %s phase %u s%u..s%u: %s\n", ename,
					       pl.v[p].number, r.first, r.last, err_msg(&e));
				fflush(stdout);
				progress_step(pg, NULL);
				sb_release(&log);
				splice_result_release(&res);
				continue;
			}
			if (rc < 0)
				why = err_msg(&e);
			else {
				/* bytes outside the cut are the input's */
				if (!outside_kept(&res, m, f, r.first, r.last, mf.p, mf.n))
					why = "bytes outside the cut changed";
				else if (ptxas) {
					int pr =
					    splice_ptxas(res.text.p, res.text.n, arch,
					                 ptxas_entry(f, ename), &res,
					                 map_name(module_path), &pc, &log, &e);
					if (pr < 0)
						why = err_msg(&e);
					else if (pr)
						why = log.p ? log.p : "ptxas rejects it";
				}
			}
			char verdict[80] = "";
			if (ptxas && log.n)
				snprintf(verdict, sizeof verdict,
				         ", ptxas accepts it with %u messages%s:",
				         log_lines(&log), cmd_ptxas_cached(&pc));
			else if (ptxas)
				snprintf(verdict, sizeof verdict, ", ptxas ok%s", cmd_ptxas_cached(&pc));
			progress_hide(pg);
			if (rows) {
				cJSON *o = phase_row(rows, ename, pl.v[p].number, r.first, r.last,
				                     why ? "fail" : "ok");
				failed += why != NULL;
				cJSON_AddNumberToObject(o, "mma", res.mma);
				cJSON_AddNumberToObject(o, "live_in", res.n_live_in);
				cJSON_AddNumberToObject(o, "live_out", res.n_live_out);
				cJSON_AddNumberToObject(o, "renamed", res.n_renamed);
				cJSON_AddNumberToObject(o, "splice_ms", dt * 1e3);
				cmd_json_ptxas(o, ptxas && rc == 0 && (!why || log.n), NULL, !why, &log, &pc);
				cmd_json_str_or_null(o, "message", why);
			} else if (why) {
				failed++;
				printf("FAIL  %s phase %u s%u..s%u: %s\n", ename, pl.v[p].number, r.first, r.last,
				       why);
			} else {
				printf("ok    %s phase %u s%u..s%u: %u mma, %u live-in, "
				       "%u live-out, %u renamed, "
				       "%.2f ms%s\n",
				       ename, pl.v[p].number, r.first, r.last, res.mma,
				       res.n_live_in, res.n_live_out, res.n_renamed,
				       dt * 1e3, verdict);
				ptxas_messages(&log);
			}
			fflush(stdout);
			progress_step(pg, NULL);
			sb_release(&log);
			splice_result_release(&res);
		}
		phases_release(&pl);
		free(ename);
	}
	progress_end(pg);
	char skips[48] = "";
	if (skipped)
		snprintf(skips, sizeof skips, ", %u skipped", skipped);
	unsigned ok = n - failed;
	if (doc) {
		int rc = failed || !ok ? EXIT_ERROR : EXIT_OK;
		cJSON_AddStringToObject(doc, "module", map_name(module_path));
		cJSON_AddNumberToObject(doc, "bytes", (double)mf.n);
		cJSON_AddNumberToObject(doc, "parse_ms", t_parse * 1e3);
		cJSON_AddStringToObject(doc, "template", tname);
		cJSON_AddNumberToObject(doc, "splices", n);
		cJSON_AddNumberToObject(doc, "failed", failed);
		cJSON_AddNumberToObject(doc, "skipped", skipped);
		cJSON_AddNumberToObject(doc, "splice_mean_ms", n ? t_splice / n * 1e3 : 0.0);
		cJSON_AddNumberToObject(doc, "splice_max_ms", t_max * 1e3);
		if (rc)
			cJSON_AddStringToObject(doc, "message",
			                        failed ? "some phases failed"
			                               : "nothing was spliced: nothing is proven");
		cmd_json_print(doc, rc);
		cmd_unload_module(&lm);
		err_release(&e);
		return rc;
	}
	printf("%s: %zu bytes, parse %.2f ms; %u splices (%s), %u failed%s; splice mean "
	       "%.2f ms, max "
	       "%.2f ms (%.2fx the parse)\n",
	       module_path, mf.n, t_parse * 1e3, n, tname, failed, skips,
	       n ? t_splice / n * 1e3 : 0.0, t_max * 1e3,
	       t_parse > 0 ? t_max / t_parse : 0.0);
	if (!ok)
		printf("%s: nothing was spliced (%u phases%s): nothing is proven\n",
		       module_path, n + skipped, skipped ? ", all skipped" : "");
	cmd_unload_module(&lm);
	err_release(&e);
	return failed || !ok ? EXIT_ERROR : EXIT_OK;
}

/* --phases LIST: the recipes of those phases (in --variant) spliced into
 * one module (splice_many), checked with ptxas when asked, written. */
static int splice_phases(const char *layer, const char *phases, const char *variant,
                         const char *corpus, const char *module_opt, const char *entry_opt,
                         const char *out_opt, const char *check, const char *arch_opt,
                         const char *ptx_root, bool force, bool keep_rejected, bool quiet,
                         bool no_cache, bool json)
{
	Err e = ERR_INIT;
	int rc = EXIT_ERROR;
	char arch[64] = "";
	Recipe *rs = NULL;
	size_t nr = 0;
	const Recipe **rp = NULL;
	Located loc = {0};
	LoadedModule lm = {0};
	SpliceManyResult res = {0};
	StrBuf log = STRBUF_INIT, name = STRBUF_INIT;
	char *written = NULL;
	char *dir = layout_layer_dir(layer, &e);
	LayerRecipes lr = {layer, dir, corpus, mf_layout_layer};
	if (!dir || splice_select(&lr, phases, variant, &rs, &nr, &e) < 0 ||
	    splice_locate(layer, corpus, module_opt, entry_opt, &rs[0], mf_layout_layer, &loc, &e) < 0)
		goto fail;
	if (!loc.entry) {
		err_set(&e, "%s: no entry: give --entry, or \"entry\" in the recipe", rs[0].path);
		goto fail;
	}
	/* the output, checked before any work: never one of the inputs */
	if (out_opt)
		sb_adds(&name, out_opt);
	else
		sb_addf(&name, "%s-phases-%s%s%s.spliced.ptx", loc.layer ? loc.layer : layer, phases,
		        variant ? "-" : "", variant ? variant : "");
	for (size_t i = 0; i < nr; i++)
		cmd_recipe_inputs(&rs[i], ptx_root);
	file_input_add(loc.module_path, "module");
	if (out_check(name.p, &e) < 0)
		goto fail;
	if (cmd_load_module(loc.module_path, &lm) < 0)
		goto done;
	rp = xcalloc(nr, sizeof(Recipe *));
	for (size_t i = 0; i < nr; i++)
		rp[i] = &rs[i];
	SpliceManyRequest req = {lm.m, loc.entry, rp, nr, ptx_root, force};
	if (splice_many(&req, &res, &e) < 0)
		goto fail;
	if (!quiet)
		fprintf(stderr, "%s", res.summary.p);
	int ptxas_rc = 0;
	PtxasCache pc = {.no_cache = no_cache};
	if (!strcmp(check, "ptxas")) {
		check_arch(lm.m, arch_opt, arch);
		if (!arch[0]) {
			err_set(&e, "%s: no .target to take the architecture from: give --arch",
			        loc.module_path);
			goto fail;
		}
		ptxas_rc = splice_many_ptxas(&res, arch, loc.entry, loc.module_path, &pc, &log, &e);
		if (ptxas_rc < 0)
			goto fail;
		if (!quiet || ptxas_rc)
			fprintf(stderr, "ptxas:     -arch=%s -e %s: %s%s\n", arch, loc.entry,
			        ptxas_rc ? "REJECTED" : "ok", cmd_ptxas_cached(&pc));
		if (log.n)
			fprintf(stderr, "%s", log.p);
	}
	if (cmd_write_module(name.p, res.text.p, res.text.n, ptxas_rc != 0, keep_rejected, quiet,
	                     &written, &e) < 0)
		goto fail;
	rc = ptxas_rc ? cmd_fail_rejected("splice", "spliced", name.p, written, keep_rejected)
	              : EXIT_OK;
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "layer", loc.layer ? loc.layer : layer);
		cJSON_AddStringToObject(o, "phases", phases);
		cmd_json_str_or_null(o, "variant", variant);
		cJSON_AddStringToObject(o, "module", map_name(loc.module_path));
		cJSON_AddStringToObject(o, "entry", loc.entry);
		cJSON *cuts = cJSON_AddArrayToObject(o, "cuts");
		for (size_t i = 0; i < res.n; i++) {
			const SpliceResult *c = &res.cuts[i];
			cJSON *cj = cJSON_CreateObject();
			cJSON_AddStringToObject(cj, "recipe", res.recipes[i]->path);
			cJSON_AddItemToObject(cj, "stmt_range", cmd_json_range(c->first, c->last));
			cJSON_AddNumberToObject(cj, "mma", c->mma);
			cmd_json_str_or_null(cj, "template", c->template_name);
			cJSON_AddItemToArray(cuts, cj);
		}
		cJSON_AddNumberToObject(o, "mma", res.mma);
		cJSON_AddStringToObject(o, "output", name.p);
		cmd_json_str_or_null(o, "rejected", ptxas_rc ? written : NULL);
		cJSON_AddNumberToObject(o, "bytes", (double)res.text.n);
		cmd_json_ptxas(o, arch[0] != 0, arch, ptxas_rc == 0, &log, &pc);
		cmd_json_print(o, rc);
	}
	goto done;
fail:
	cmd_fail("%s", err_msg(&e));
done:
	splice_many_release(&res);
	for (size_t i = 0; i < nr; i++)
		rcp_release(&rs[i]);
	free(rs);
	free(rp);
	free(dir);
	if (lm.m)
		cmd_unload_module(&lm);
	located_release(&loc);
	sb_release(&log);
	sb_release(&name);
	free(written);
	err_release(&e);
	return rc;
}

/* splice --json: what the one splice did, and ptxas's answer ("ptxas":
 * null when it did not run). */
static int splice_json(const char *recipe, const Located *loc, const SpliceResult *res,
                       const char *out, const char *rejected, const char *arch, int ptxas_rc,
                       const StrBuf *log, const PtxasCache *pc, int rc)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "recipe", recipe);
	cJSON_AddStringToObject(o, "module", map_name(loc->module_path));
	cJSON_AddStringToObject(o, "entry", loc->entry);
	cJSON_AddItemToObject(o, "stmt_range", cmd_json_range(res->first, res->last));
	cJSON_AddItemToObject(o, "line_range", cmd_json_range(res->first_line, res->last_line));
	cJSON_AddNumberToObject(o, "mma", res->mma);
	cJSON_AddNumberToObject(o, "live_in", res->n_live_in);
	cJSON_AddNumberToObject(o, "live_out", res->n_live_out);
	cJSON_AddNumberToObject(o, "renamed", res->n_renamed);
	cJSON_AddStringToObject(o, "cut_sha256", res->sha256);
	cmd_json_str_or_null(o, "template", res->template_name);
	cJSON_AddBoolToObject(o, "forced", res->forced);
	cJSON_AddStringToObject(o, "output", out);
	cmd_json_str_or_null(o, "rejected", rejected);
	cJSON_AddNumberToObject(o, "bytes", (double)res->text.n);
	cmd_json_ptxas(o, arch != NULL, arch, ptxas_rc == 0, log, pc);
	return cmd_json_print(o, rc);
}

int cmd_splice(int argc, char **argv)
{
	const char *recipe_opt = NULL, *out_opt = NULL, *check = "none";
	const char *corpus = NULL, *module_opt = NULL, *entry_opt = NULL;
	const char *ptx_root = NULL, *tname = "identity", *phases = NULL, *variant = NULL;
	unsigned phase_n = 0;
	OptArch arch_o = {0};
	bool force = false, quiet = false, every = false, together = false, json = false;
	bool keep_rejected = false, no_cache = false;
	const Opt opts[] = {
		OPT_PHASE(&phase_n, "the phase; its recipe: recipes/LAYER/phase-NN.json"),
		OPT_STRING(0, "phases", &phases, "LIST",
		           "those phases' recipes into one module (1-10,13,21-60)"),
		OPT_STRING(0, "variant", &variant, "NAME",
		           "the recipes phase-NN-NAME.json (phase-08-f16.json)"),
		OPT_STRING(0, "recipe", &recipe_opt, "FILE",
		           "the recipe (instead of the layer's)"),
		OPT_STRING(0, "module", &module_opt, "FILE",
		           "the module (default: the recipe's, the layer's)"),
		OPT_STRING(0, "entry", &entry_opt, "NAME",
		           "the function (default: the recipe's, the layer's)"),
		OPT_STRING('o', "output", &out_opt, "FILE|-",
		           "the output (default LAYER-phase-NN.spliced.ptx)"),
		OPT_CHOICE_OPTARG("check", &check, "ptxas|none", "ptxas",
		                  "ptxas: run ptxas on the result (default none)"),
		OPT_CALLBACK(0, "arch", &arch_o, "sm_XX", opt_arch,
		             "with --check=ptxas: the target (default .target)"),
		OPT_FLAG(0, "no-cache", &no_cache,
		         "with --check=ptxas: run ptxas, not its cached answer"),
		OPT_FLAG(0, "force", &force, "splice a cut the splicer would refuse"),
		OPT_FLAG(0, "keep-rejected", &keep_rejected,
		         "with --check=ptxas: write a module ptxas rejects to -o all the same "
		         "(default: beside it, as NAME.rejected.ptx)"),
		OPT_STRING(0, "corpus", &corpus, "DIR", "the corpus folder"),
		OPT_STRING(0, "ptx", &ptx_root, "DIR",
		           "the templates' folder (default: ptx/)"),
		OPT_FLAG('q', "quiet", &quiet, "no summary on standard error"),
		OPT_FLAG(0, "every-phase", &every,
		         "a built-in template into every mma phase, in memory"),
		OPT_FLAG(0, "together", &together,
		         "with --every-phase: all phases into one module"),
		OPT_CHOICE(0, "template", &tname, "identity|perturb",
		           "with --every-phase: the template (default identity)"),
		OPT_FLAG(0, "json", &json, "one JSON object (not with -o -)"),
		OPT_END(),
	};
	OptParse op = {.verb = "splice", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 0, 1, ""))
		return EXIT_ERROR;
	const char *layer = nargs ? argv[0] : NULL;
	const char *arch_opt = opt_given(&op, "arch") ? arch_o.name : NULL;
	long phase = phase_n ? (long)phase_n : -1;
	if (arch_opt && strcmp(check, "ptxas"))
		return opt_fail(&op, "option '%s' needs '--check=ptxas'",
		                opt_given(&op, "arch"));
	if (keep_rejected && strcmp(check, "ptxas"))
		return opt_fail(&op, "option '%s' needs '--check=ptxas'",
		                opt_given(&op, "keep-rejected"));
	if (no_cache && strcmp(check, "ptxas"))
		return opt_fail(&op, "option '%s' needs '--check=ptxas'",
		                opt_given(&op, "no-cache"));
	if (json && out_opt && !strcmp(out_opt, "-"))
		return opt_fail(&op, "option '--json' cannot be used with '%s -': one "
		                     "document on standard output",
		                opt_given(&op, "output"));
	if (every) {
		/* the built-in template over every phase, nothing written */
		if (layer)
			return opt_usage_error(&op, "unexpected argument '%s': "
			                            "--every-phase takes --module FILE, "
			                            "not a layer", layer);
		if (opt_conflicts(&op, "every-phase", "recipe", "output", "phase", "phases",
		                  "variant", "force", "keep-rejected", "quiet", "corpus", "ptx",
		                  NULL) ||
		    opt_needs(&op, "every-phase", "module"))
			return EXIT_ERROR;
		return together ? every_phase_together(module_opt, entry_opt, tname, check, arch_opt,
		                                       no_cache, json)
		                : every_phase(module_opt, entry_opt, tname, check, arch_opt, no_cache,
		                              json);
	}
	if (opt_needs(&op, "together", "every-phase") ||
	    opt_needs(&op, "template", "every-phase") ||
	    opt_conflicts(&op, "phases", "phase", "recipe", NULL) ||
	    opt_conflict(&op, "variant", "recipe") ||
	    cmd_check_variant(variant))
		return EXIT_ERROR;
	if (phases) {
		if (!layer)
			return opt_usage_error(&op, "option '--phases' needs LAYER");
		return splice_phases(layer, phases, variant, corpus, module_opt, entry_opt, out_opt,
		                     check, arch_opt, ptx_root, force, keep_rejected, quiet, no_cache,
		                     json);
	}
	if (!recipe_opt && (!layer || phase < 0))
		return opt_usage_error(&op, "give LAYER --phase N, or --recipe FILE");

	int rc = EXIT_ERROR;
	Err e = ERR_INIT;
	Recipe r;
	bool have_r = false;
	Located loc = {0};
	MapFile mf = {0};
	bool have_mf = false;
	Module *m = NULL;
	SpliceResult res = {0};
	StrBuf log = STRBUF_INIT;
	char *recipe_path = NULL, *out_path = NULL, *written = NULL;

	{
		char *dir = recipe_opt && !layer ? NULL : layout_layer_dir(layer, &e);
		if (!dir && !recipe_opt)
			goto fail;
		err_clear(&e);
		LayerRecipes lr = {layer, dir, corpus, mf_layout_layer};
		int lrc = splice_layer_recipe(&lr, phase > 0 ? (unsigned)phase : 0, variant,
		                              recipe_opt, &r, &e);
		free(dir);
		if (lrc < 0)
			goto fail;
		have_r = true;
		recipe_path = xstrdup(r.path);
	}
	if (splice_locate(layer, corpus, module_opt, entry_opt, &r, mf_layout_layer, &loc, &e) < 0)
		goto fail;
	if (!loc.entry) {
		err_set(&e, "%s: no entry: give --entry, or \"entry\" in the recipe", recipe_path);
		goto fail;
	}
	/* the output name, checked before any work: never one of the inputs */
	if (out_opt)
		out_path = xstrdup(out_opt);
	else {
		StrBuf sb = STRBUF_INIT;
		if (loc.layer && r.cut == CUT_PHASE)
			sb_addf(&sb, "%s-phase-%02u%s%s%s.spliced.ptx", loc.layer, r.phase,
			        r.with_epilogue ? "-epi" : "", variant ? "-" : "", variant ? variant : "");
		else {
			const char *b = strrchr(recipe_path, '/');
			b = b ? b + 1 : recipe_path;
			size_t n = strlen(b);
			if (n > 5 && !strcmp(b + n - 5, ".json"))
				n -= 5;
			sb_addf(&sb, "%.*s.spliced.ptx", (int)n, b);
		}
		out_path = sb.p;
	}
	cmd_recipe_inputs(&r, ptx_root);
	file_input_add(loc.module_path, "module");
	if (layer) {
		Err ig = ERR_INIT;
		char *manifest = layout_find_layer(layer, &ig);
		file_input_add(manifest, "manifest");
		free(manifest);
		err_release(&ig);
	}
	if (out_check(out_path, &e) < 0)
		goto fail;
	if (map_open(&mf, loc.module_path, &e) < 0)
		goto fail;
	have_mf = true;
	m = ptx_parse(map_name(loc.module_path), mf.p, mf.n, &e);
	if (!m)
		goto fail;
	SpliceRequest req = {m, loc.entry, &r, ptx_root, force != 0};
	if (splice_run(&req, &res, &e) < 0)
		goto fail;
	if (!quiet) {
		fprintf(stderr, "%s", res.summary.p);
	}
	int ptxas_rc = 0;
	char arch[64] = "";
	PtxasCache pc = {.no_cache = no_cache};
	if (!strcmp(check, "ptxas")) {
		if (arch_opt)
			snprintf(arch, sizeof arch, "%s", arch_opt);
		else if (splice_module_arch(m, arch, sizeof arch) < 0) {
			err_set(&e, "%s: no .target to take the architecture from: give --arch",
			        loc.module_path);
			goto fail;
		}
		ptxas_rc = splice_ptxas(res.text.p, res.text.n, arch, loc.entry, &res, map_name(loc.module_path),
		                        &pc, &log, &e);
		if (ptxas_rc < 0)
			goto fail;
		/* what ptxas says of a module it accepts is shown too: a warning
		 * (an injected wait, a serialised wgmma) is a finding */
		if (!quiet || ptxas_rc || log.n)
			fprintf(stderr, "ptxas:     -arch=%s -e %s: %s%s%s\n", arch,
			        loc.entry,
			        ptxas_rc ? "REJECTED"
			        : log.n  ? "accepted, with these messages"
			                 : "ok",
			        cmd_ptxas_cached(&pc), !ptxas_rc && log.n ? ":" : "");
		if (log.n)
			fprintf(stderr, "%s", log.p);
	}
	if (cmd_write_module(out_path, res.text.p, res.text.n, ptxas_rc != 0, keep_rejected, quiet,
	                     &written, &e) < 0)
		goto fail;
	rc = ptxas_rc ? cmd_fail_rejected("splice", "spliced", out_path, written, keep_rejected)
	              : EXIT_OK;
	if (json)
		splice_json(recipe_path, &loc, &res, out_path, ptxas_rc ? written : NULL,
		            arch[0] ? arch : NULL, ptxas_rc, &log, &pc, rc);
	goto done;
fail:
	cmd_fail("%s", err_msg(&e));
	rc = EXIT_ERROR;
done:
	splice_result_release(&res);
	sb_release(&log);
	if (m)
		mod_free(m);
	if (have_mf)
		map_close(&mf);
	located_release(&loc);
	if (have_r)
		rcp_release(&r);
	free(recipe_path);
	free(out_path);
	free(written);
	err_release(&e);
	return rc;
}
