/*
 * multi.c - several recipes into one module (multi.h).
 *
 * Each recipe goes through splice_run on the original module, so every
 * check a single splice makes is made, against the statements the recipe
 * was written for; the region it renders is kept and the regions become
 * the edits of one emission.  What a single splice cannot see is checked
 * here, with one dataflow of the original function:
 *
 *  - overlap: two cuts that share a statement cannot both be replaced;
 *  - inputs: a register a file template reads (an in or inout formal)
 *    whose reaching definition lies inside another cut must be live out of
 *    that cut in the original, because only then is that cut's template
 *    obliged to write it (every live-out is bound to an output).  A base
 *    register a native template reloads through is read by no vendor
 *    statement of its cut, so this is where its definition is checked;
 *  - reload windows: the loads a template issues again (guards.reloads)
 *    were proven safe on the original statements between the load and the
 *    cut; a file template spliced in between that writes memory or runs a
 *    barrier would break that proof.  Built-in templates re-emit their
 *    cut's own statements, which the proof already saw.
 *
 * Decisions:
 *  - Cuts are numbered in the order given for their fresh prefixes (%spl0_,
 *    %spl1_, ...: each the first free one after the one before), and
 *    emitted in statement order.
 *  - A selection that names the same statements twice (phase-08.json and
 *    phase-08-f16.json) is an overlap, not a choice: the caller picks the
 *    variant.
 */
#include "multi.h"

#include "ana/ana.h"
#include "base/layout.h"
#include "base/numlist.h"
#include "ptx/emit.h"
#include "template.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int splice_phase_list(const char *s, uint32_t **out, size_t *n, Err *e)
{
	NumList l = {0};
	*out = NULL;
	*n = 0;
	if (numlist_parse(s, 1, UINT32_MAX, &l, e) < 0) {
		StrBuf m = STRBUF_INIT;
		sb_addf(&m, "phase list %s", err_msg(e));
		err_set(e, "%s", m.p);
		sb_release(&m);
		return -1;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

int splice_select(const LayerRecipes *layer, const char *phases, const char *variant,
                  Recipe **out, size_t *n, Err *e)
{
	uint32_t *ph;
	size_t np;
	*out = NULL;
	*n = 0;
	if (splice_phase_list(phases, &ph, &np, e) < 0)
		return -1;
	Recipe *r = xcalloc(np, sizeof(Recipe));
	for (size_t i = 0; i < np; i++) {
		char *path = NULL;
		int rc = splice_phase_recipe(layer, ph[i], variant, &path, e);
		if (rc == 0)
			rc = rcp_load(path, &r[i], e);
		free(path);
		if (rc < 0) {
			for (size_t k = 0; k < i; k++)
				rcp_release(&r[k]);
			free(r);
			free(ph);
			return -1;
		}
	}
	free(ph);
	*out = r;
	*n = np;
	return 0;
}

static unsigned prefix_number(const char *prefix)
{
	/* "%splN_" */
	return (unsigned)strtoul(prefix + 4, NULL, 10);
}

typedef struct {
	SpliceResult res;
	const Recipe *r;
	Template t;
	bool have_t;
} Cut;

static int by_first(const void *a, const void *b)
{
	const Cut *x = a, *y = b;
	return x->res.first < y->res.first ? -1 : x->res.first > y->res.first;
}

/* The cut (index) holding statement st, other than `self`, or -1. */
static int cut_holding(const Cut *c, size_t n, size_t self, int64_t st)
{
	for (size_t i = 0; i < n; i++)
		if (i != self && st >= c[i].res.first && st <= c[i].res.last)
			return (int)i;
	return -1;
}

static int check_between(const SpliceManyRequest *req, Cut *c, size_t n, Err *e)
{
	const Module *m = req->module;
	for (size_t i = 0; i + 1 < n; i++)
		if (c[i].res.last >= c[i + 1].res.first)
			return err_set(e,
			               "%s and %s cut overlapping statements (s%u..s%u "
			               "and s%u..s%u)",
			               c[i].r->path, c[i + 1].r->path, c[i].res.first,
			               c[i].res.last, c[i + 1].res.first,
			               c[i + 1].res.last);
	const char *entry = req->entry ? req->entry : c[0].r->entry;
	const Func *f = entry ? mod_func_find(m, str_c(entry)) : NULL;
	if (!f)
		return err_set(e, "no function '%s' in module '%s'", entry ? entry : "?",
		               m->name ? m->name : "?");
	for (size_t i = 1; i < n; i++) {
		const char *ei = req->entry ? req->entry : c[i].r->entry;
		if (!ei || strcmp(ei, entry))
			return err_set(e,
			               "%s and %s cut different functions ('%s', '%s')",
			               c[0].r->path, c[i].r->path, entry, ei ? ei : "?");
	}
	/* the templates, as splice_run loaded them */
	for (size_t i = 0; i < n; i++) {
		if (c[i].r->tkind != TPL_FILE)
			continue;
		char *path = NULL, *display = NULL;
		int rc = layout_template(c[i].r->template_name, c[i].r->path,
		                         req->ptx_root, &path, &display, e);
		if (rc == 0)
			rc = tpl_load(path, display, &c[i].t, e);
		free(path);
		free(display);
		if (rc < 0)
			return -1;
		c[i].have_t = true;
	}
	Dataflow *df = df_build(m, f, e);
	if (!df)
		return -1;
	int rc = 0;
	for (size_t q = 0; q < n && !rc; q++) {
		const Cut *cq = &c[q];
		if (!cq->have_t)
			continue;
		/* inputs defined in another cut are written by it */
		for (size_t k = 0; k < cq->t.formals.n && !rc; k++) {
			const Formal *fm = &cq->t.formals.v[k];
			const RecipeBind *b =
			    (fm->dir & FM_IN) ? rcp_bind_find(cq->r, fm->name) : NULL;
			for (uint32_t j = 0; b && j < b->nregs && !rc; j++) {
				int64_t id = df_reg_find(df, str_c(b->regs[j]));
				if (id < 0)
					continue;
				int64_t d =
				    df_reaching_def(df, cq->res.first, (uint32_t)id);
				int p = cut_holding(c, n, q, d);
				if (p >= 0 &&
				    !df_live_after(df, c[p].res.last, (uint32_t)id))
					rc = err_set(e,
					             "%s: input '%s' ('bind.%s') is "
					             "defined at s%lld, inside the "
					             "cut of %s (s%u..s%u), and not live "
					             "after it: that cut's "
					             "template need not write it",
					             cq->r->path, b->regs[j], fm->name,
					             (long long)d, c[p].r->path,
					             c[p].res.first, c[p].res.last);
			}
		}
	}
	for (size_t q = 0; q < n && !rc; q++) {
		const Cut *cq = &c[q];
		if (!cq->r->reloads.n)
			continue;
		uint32_t lo = cq->r->reloads.v[0];
		for (size_t k = 1; k < cq->r->reloads.n; k++)
			lo = MIN(lo, cq->r->reloads.v[k]);
		for (size_t p = 0; p < n && !rc; p++) {
			const Cut *cp = &c[p];
			if (p == q || !cp->have_t || cp->res.first <= lo ||
			    cp->res.first >= cq->res.first)
				continue;
			if (cp->t.writes || cp->t.barriers > 0)
				rc = err_set(
				    e,
				    "%s: its template loads s%u.. again at s%u, and the "
				    "cut of %s "
				    "(s%u..s%u) in between has a template that %s",
				    cq->r->path, lo, cq->res.first, cp->r->path,
				    cp->res.first, cp->res.last,
				    cp->t.writes ? "writes memory" : "runs a barrier");
		}
	}
	df_free(df);
	return rc;
}

int splice_many(const SpliceManyRequest *req, SpliceManyResult *res, Err *e)
{
	size_t n = req->n;
	if (!n)
		return err_set(e, "no recipe to splice");
	Cut *c = xcalloc(n, sizeof(Cut));
	Edit *ed = xcalloc(n, sizeof(Edit));
	int rc = -1;
	unsigned from = 0;
	for (size_t i = 0; i < n; i++) {
		c[i].r = req->recipes[i];
		SpliceRequest sr = {req->module,   req->entry, req->recipes[i],
		                    req->ptx_root, req->force, from};
		if (splice_run(&sr, &c[i].res, e) < 0)
			goto out;
		from = prefix_number(c[i].res.prefix) + 1;
	}
	qsort(c, n, sizeof(Cut), by_first);
	if (check_between(req, c, n, e) < 0)
		goto out;
	const Module *m = req->module;
	const Func *f = mod_func_find(m, str_c(req->entry ? req->entry : c[0].r->entry));
	size_t total = m->len;
	for (size_t i = 0; i < n; i++) {
		const Stmt *s0 = func_stmt(m, f, c[i].res.first),
		           *s1 = func_stmt(m, f, c[i].res.last);
		ed[i].off = s0->off;
		ed[i].len = s1->off + s1->len - s0->off;
		ed[i].text = c[i].res.text.p + c[i].res.region_off;
		ed[i].tlen = c[i].res.region_len;
		total += ed[i].tlen;
	}
	sb_grow(&res->text, total + 1);
	if (ptx_emit(m, ed, n, &res->text, e) < 0)
		goto out;
	/* each cut's coordinates in the output */
	int64_t bytes = 0, lines = 0;
	res->cuts = xcalloc(n, sizeof(SpliceResult));
	res->recipes = xcalloc(n, sizeof(Recipe *));
	res->n = n;
	for (size_t i = 0; i < n; i++) {
		SpliceResult *r = &c[i].res;
		sb_release(&r->text);
		r->region_off = (size_t)((int64_t)ed[i].off + bytes);
		r->region_line = (uint32_t)((int64_t)r->region_line + lines);
		bytes += (int64_t)ed[i].tlen - ed[i].len;
		lines += r->line_delta;
		r->line_delta = lines;
		res->mma += r->mma;
		res->cuts[i] = *r;
		res->recipes[i] = c[i].r;
		memset(r, 0, sizeof *r);
	}
	sb_addf(&res->summary,
	        "cuts:      %zu recipes, %u mma, s%u..s%u of %s, fresh prefixes %s..%s\n",
	        n, res->mma, res->cuts[0].first, res->cuts[n - 1].last,
	        req->entry ? req->entry : c[0].r->entry, res->cuts[0].prefix,
	        res->cuts[n - 1].prefix);
	rc = 0;
out:
	for (size_t i = 0; i < n; i++) {
		splice_result_release(&c[i].res);
		if (c[i].have_t)
			tpl_release(&c[i].t);
	}
	free(c);
	free(ed);
	return rc;
}

void splice_many_release(SpliceManyResult *res)
{
	sb_release(&res->text);
	for (size_t i = 0; i < res->n; i++)
		splice_result_release(&res->cuts[i]);
	free(res->cuts);
	free(res->recipes);
	sb_release(&res->summary);
	memset(res, 0, sizeof *res);
}

void splice_many_where(const SpliceManyResult *res, const char *module_name,
                       uint32_t line, StrBuf *out)
{
	const SpliceResult *at = NULL;
	for (size_t i = 0; i < res->n; i++)
		if (res->cuts[i].region_line <= line)
			at = &res->cuts[i];
	if (!at) {
		sb_addf(out, "%s:%u", module_name, line);
		return;
	}
	if (line < at->region_line + at->line_map.n) {
		splice_where(at, module_name, line, out);
		return;
	}
	sb_addf(out, "%s:%lld", module_name, (long long)line - at->line_delta);
}

int splice_many_ptxas(const SpliceManyResult *res, const char *arch, const char *entry,
                      const char *module_name, PtxasCache *pc, StrBuf *log, Err *e)
{
	/* ptxas runs with no line map; its "MARK:N" are mapped here */
	static const char mark[] = "\x01spliced";
	StrBuf raw = STRBUF_INIT;
	int rc =
	    splice_ptxas(res->text.p, res->text.n, arch, entry, NULL, mark, pc, &raw, e);
	const char *p = raw.p ? raw.p : "";
	for (;;) {
		const char *q = strstr(p, mark);
		if (!q) {
			sb_adds(log, p);
			break;
		}
		sb_addn(log, p, (size_t)(q - p));
		char *end;
		unsigned long line = strtoul(q + sizeof mark, &end, 10);
		if (q[sizeof mark - 1] == ':' && end > q + sizeof mark) {
			splice_many_where(res, module_name, (uint32_t)line, log);
			p = end;
		} else {
			sb_adds(log, module_name);
			p = q + sizeof mark - 1;
		}
	}
	sb_release(&raw);
	return rc;
}
