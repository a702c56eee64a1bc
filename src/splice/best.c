/*
 * best.c - which variant of each phase a best-of layer takes (best.h).
 *
 * Two readers (the ranking, the proof) and one choice: per phase, the
 * first proven variant in the rule's order (best.h: per phase by ratio, or
 * by the whole layers' kernel times when the probes changed the code).  The readers take only the members
 * they need: both documents are other verbs' outputs, whose other keys
 * grow with those verbs.
 */
#include "best.h"
#include "base/json.h"
#include "base/layout.h"

#include <stdlib.h>
#include <string.h>

/* ---- the ranking ------------------------------------------------------------- */

static int by_kernel_ms(const void *a, const void *b)
{
	const BestWhole *x = a, *y = b;
	return x->kernel_ms < y->kernel_ms ? -1 : x->kernel_ms > y->kernel_ms;
}

static int by_ratio(const void *a, const void *b)
{
	const BestCand *x = a, *y = b;
	if ((x->ratio < 0) != (y->ratio < 0))
		return x->ratio < 0 ? 1 : -1;
	return x->ratio < y->ratio ? -1 : x->ratio > y->ratio;
}

/* "changed" of probes_changed_code.WHICH, false when not said */
static int changed_of(JsonDoc *d, const cJSON *pc, const char *which, bool *out)
{
	const cJSON *o = json_member(d, pc, which, JSON_OPTIONAL);
	if (!o || cJSON_IsNull(o))
		return 0;
	size_t m = json_push(d, which);
	bool ch = false;
	int rc = json_object(d, o) < 0 || json_get_bool(d, o, "changed", JSON_OPTIONAL, &ch) < 0
	                 ? -1
	                 : 0;
	*out = *out || ch;
	json_pop(d, m);
	return rc;
}

/* The ranking's "variants" (optional): each whole layer's kernel time and
 * whether the probes changed its code. */
static int read_whole(JsonDoc *d, BestRanking *r)
{
	const cJSON *vs = json_member(d, d->root, "variants", JSON_OPTIONAL);
	if (!vs || cJSON_IsNull(vs))
		return 0;
	size_t m = json_push(d, "variants");
	if (!cJSON_IsArray(vs))
		return json_bad(d, "expected an array, found %s", json_type(vs));
	r->whole = xcalloc((size_t)cJSON_GetArraySize(vs) + 1, sizeof *r->whole);
	size_t i = 0;
	for (const cJSON *v = vs->child; v; v = v->next, i++) {
		size_t mi = json_push_index(d, i);
		BestWhole *w = &r->whole[r->nwhole++];
		w->kernel_ms = -1;
		if (json_object(d, v) < 0 ||
		    json_get_string(d, v, "variant", JSON_REQUIRED | JSON_NONEMPTY, &w->variant) < 0)
			return -1;
		const cJSON *km = json_member(d, v, "kernel_ms", JSON_OPTIONAL);
		if (km && !cJSON_IsNull(km)) {
			size_t mk = json_push(d, "kernel_ms");
			if (json_object(d, km) < 0)
				return -1;
			const cJSON *sp = json_member(d, km, "spliced", JSON_OPTIONAL);
			if (sp && !cJSON_IsNull(sp)) {
				if (json_get_number(d, km, "spliced", JSON_REQUIRED, &w->kernel_ms) < 0)
					return -1;
				if (!(w->kernel_ms > 0))
					return json_bad_at(d, "spliced", "%g is not a kernel time",
					                   w->kernel_ms);
			}
			json_pop(d, mk);
		}
		const cJSON *pc = json_member(d, v, "probes_changed_code", JSON_OPTIONAL);
		if (pc && !cJSON_IsNull(pc)) {
			size_t mp = json_push(d, "probes_changed_code");
			if (json_object(d, pc) < 0 || changed_of(d, pc, "original", &w->changed) < 0 ||
			    changed_of(d, pc, "spliced", &w->changed) < 0)
				return -1;
			json_pop(d, mp);
		}
		json_pop(d, mi);
	}
	json_pop(d, m);
	return 0;
}

int best_read_ranking(const char *file, const char *text, size_t len, BestRanking *r, Err *e)
{
	memset(r, 0, sizeof *r);
	JsonDoc d;
	int rc = -1;
	if (json_parse(&d, file, text, len, e) < 0 || json_object(&d, d.root) < 0 ||
	    json_get_string(&d, d.root, "layer", JSON_REQUIRED | JSON_NONEMPTY, &r->layer) < 0)
		goto out;
	const cJSON *rk = json_member(&d, d.root, "ranking", JSON_REQUIRED);
	if (!rk)
		goto out;
	size_t m = json_push(&d, "ranking");
	if (!cJSON_IsArray(rk)) {
		json_bad(&d, "expected an array, found %s", json_type(rk));
		goto out;
	}
	r->n = (size_t)cJSON_GetArraySize(rk);
	r->v = xcalloc(r->n + 1, sizeof *r->v);
	size_t i = 0;
	for (const cJSON *ph = rk->child; ph; ph = ph->next, i++) {
		size_t mi = json_push_index(&d, i);
		int64_t phase;
		if (json_object(&d, ph) < 0 ||
		    json_get_int(&d, ph, "phase", JSON_REQUIRED, 1, 1e9, &phase) < 0)
			goto out;
		BestPhase *bp = &r->v[i];
		bp->phase = (uint32_t)phase;
		for (size_t k = 0; k < i; k++)
			if (r->v[k].phase == bp->phase) {
				json_bad(&d, "phase %u ranked twice", bp->phase);
				goto out;
			}
		const cJSON *vs = json_member(&d, ph, "variants", JSON_REQUIRED);
		if (!vs)
			goto out;
		size_t mv = json_push(&d, "variants");
		if (!cJSON_IsArray(vs) || !cJSON_GetArraySize(vs)) {
			json_bad(&d, "expected an array of variants, found %s",
			         cJSON_IsArray(vs) ? "an empty one" : json_type(vs));
			goto out;
		}
		bp->n = (size_t)cJSON_GetArraySize(vs);
		bp->c = xcalloc(bp->n, sizeof *bp->c);
		size_t k = 0;
		for (const cJSON *c = vs->child; c; c = c->next, k++) {
			size_t mc = json_push_index(&d, k);
			BestCand *bc = &bp->c[k];
			bc->ratio = bc->cycles = -1;
			if (json_object(&d, c) < 0 ||
			    json_get_string(&d, c, "variant", JSON_REQUIRED | JSON_NONEMPTY,
			                    &bc->variant) < 0 ||
			    json_get_number(&d, c, "cycles", JSON_OPTIONAL, &bc->cycles) < 0)
				goto out;
			const cJSON *ra = json_member(&d, c, "ratio", JSON_REQUIRED);
			if (!ra || (!cJSON_IsNull(ra) &&
			            json_get_number(&d, c, "ratio", JSON_REQUIRED, &bc->ratio) < 0))
				goto out;
			if (!cJSON_IsNull(ra) && bc->ratio <= 0) {
				json_bad_at(&d, "ratio", "%g is not a ratio of cycles", bc->ratio);
				goto out;
			}
			json_pop(&d, mc);
		}
		qsort(bp->c, bp->n, sizeof *bp->c, by_ratio);
		json_pop(&d, mv);
		json_pop(&d, mi);
	}
	json_pop(&d, m);
	if (read_whole(&d, r) < 0)
		goto out;
	rc = 0;
out:
	json_release(&d);
	if (rc < 0)
		best_ranking_release(r);
	return rc;
}

void best_ranking_release(BestRanking *r)
{
	for (size_t i = 0; i < r->n; i++) {
		for (size_t k = 0; k < r->v[i].n; k++)
			free(r->v[i].c[k].variant);
		free(r->v[i].c);
	}
	free(r->v);
	for (size_t i = 0; i < r->nwhole; i++)
		free(r->whole[i].variant);
	free(r->whole);
	free(r->layer);
	memset(r, 0, sizeof *r);
}

/* ---- the proof ----------------------------------------------------------------- */

int best_read_proof(const char *file, const char *text, size_t len, BestProof *p, Err *e)
{
	memset(p, 0, sizeof *p);
	JsonDoc d;
	int rc = -1;
	if (json_parse(&d, file, text, len, e) < 0 || json_object(&d, d.root) < 0)
		goto out;
	const cJSON *items = json_member(&d, d.root, "items", JSON_REQUIRED);
	if (!items)
		goto out;
	size_t m = json_push(&d, "items");
	if (!cJSON_IsArray(items)) {
		json_bad(&d, "expected an array, found %s", json_type(items));
		goto out;
	}
	size_t n = (size_t)cJSON_GetArraySize(items), i = 0;
	p->name = xcalloc(n + 1, sizeof *p->name);
	p->verdict = xcalloc(n + 1, sizeof *p->verdict);
	for (const cJSON *it = items->child; it; it = it->next, i++) {
		size_t mi = json_push_index(&d, i);
		char *path = NULL, *verdict = NULL;
		bool original = false;
		if (json_object(&d, it) < 0 ||
		    json_get_string(&d, it, "path", JSON_REQUIRED | JSON_NONEMPTY, &path) < 0 ||
		    json_get_string(&d, it, "verdict", JSON_REQUIRED | JSON_NONEMPTY, &verdict) < 0 ||
		    json_get_bool(&d, it, "original", JSON_OPTIONAL, &original) < 0) {
			free(path);
			free(verdict);
			goto out;
		}
		if (original) { /* the unspliced module: no recipe */
			free(path);
			free(verdict);
			json_pop(&d, mi);
			continue;
		}
		const char *slash = strrchr(path, '/');
		p->name[p->n] = xstrdup(slash ? slash + 1 : path);
		p->verdict[p->n++] = verdict;
		free(path);
		json_pop(&d, mi);
	}
	json_pop(&d, m);
	rc = 0;
out:
	json_release(&d);
	if (rc < 0)
		best_proof_release(p);
	return rc;
}

void best_proof_release(BestProof *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->name[i]);
		free(p->verdict[i]);
	}
	free(p->name);
	free(p->verdict);
	memset(p, 0, sizeof *p);
}

/* ---- the choice ------------------------------------------------------------------ */

/* The proof's verdict of the recipe at path; NULL when it has none. */
static const char *verdict_of(const BestProof *pf, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	const char *v = NULL;
	for (size_t i = 0; i < pf->n; i++)
		if (!strcmp(pf->name[i], name))
			v = pf->verdict[i]; /* the last one given */
	return v;
}

BestRule best_rule(const BestRanking *r, StrBuf *why)
{
	StrBuf ch = STRBUF_INIT;
	bool timed = r->nwhole > 0;
	for (size_t i = 0; i < r->nwhole; i++) {
		if (r->whole[i].changed)
			sb_addf(&ch, "%s%s", ch.n ? ", " : "", r->whole[i].variant);
		if (r->whole[i].kernel_ms < 0)
			timed = false;
	}
	BestRule rule = ch.n && timed ? BEST_WHOLE_LAYER : BEST_PER_PHASE;
	if (why && rule == BEST_WHOLE_LAYER) {
		sb_addf(why, "the probes changed the compiled kernels of %s: their per-phase "
		             "cycles are not of the code that runs; variants taken in the order of "
		             "their whole layers' kernel times:", ch.p);
		BestWhole *w = xcalloc(r->nwhole, sizeof *w);
		memcpy(w, r->whole, r->nwhole * sizeof *w);
		qsort(w, r->nwhole, sizeof *w, by_kernel_ms);
		for (size_t i = 0; i < r->nwhole; i++)
			sb_addf(why, "%s %s %.4f ms", i ? "," : "", w[i].variant, w[i].kernel_ms);
		free(w);
	} else if (why && ch.n)
		sb_addf(why, "the probes changed the compiled kernels of %s, and the ranking has "
		             "no kernel time of every whole layer: per phase, by the probed "
		             "cycles",
		        ch.p);
	else if (why)
		sb_adds(why, "per phase, by the cycles (the probes left the compiled code as it was)");
	sb_release(&ch);
	return rule;
}

/* The kernel time of variant v's whole layer; a large number when none. */
static double whole_ms(const BestRanking *r, const char *v)
{
	for (size_t i = 0; i < r->nwhole; i++)
		if (!strcmp(r->whole[i].variant, v) && r->whole[i].kernel_ms >= 0)
			return r->whole[i].kernel_ms;
	return 1e300;
}

void best_choose(const BestRanking *r, const BestProof *pf, const char *layer_dir,
                 BestRule rule, BestPick **out)
{
	BestPick *p = xcalloc(r->n + 1, sizeof *p);
	for (size_t i = 0; i < r->n; i++) {
		const BestPhase *bp = &r->v[i];
		BestPick *pk = &p[i];
		pk->phase = bp->phase;
		pk->ratio = -1;
		/* the order the rule takes: the ranking's (by ratio), or by the
		 * whole layers' kernel times (a stable insertion sort: ties keep
		 * the ratio order) */
		const BestCand **ord = xcalloc(bp->n + 1, sizeof *ord);
		for (size_t k = 0; k < bp->n; k++) {
			size_t j = k;
			if (rule == BEST_WHOLE_LAYER)
				while (j > 0 && whole_ms(r, ord[j - 1]->variant) >
				                        whole_ms(r, bp->c[k].variant)) {
					ord[j] = ord[j - 1];
					j--;
				}
			ord[j] = &bp->c[k];
		}
		for (size_t k = 0; k < bp->n && !pk->variant; k++) {
			const BestCand *c = ord[k];
			char *path = layout_recipe_variant(layer_dir, bp->phase, c->variant);
			const char *v = verdict_of(pf, path);
			if (c->ratio >= 0 && v && !strcmp(v, "identical")) {
				pk->variant = c->variant;
				pk->ratio = c->ratio;
				pk->recipe = path;
				continue;
			}
			if (pk->passed.n)
				sb_adds(&pk->passed, ", ");
			sb_adds(&pk->passed, c->variant);
			if (c->ratio >= 0)
				sb_addf(&pk->passed, " %.2fx", c->ratio);
			sb_addf(&pk->passed, " %s",
			        c->ratio < 0 ? "not measured" : v ? v : "not checked");
			free(path);
		}
		free(ord);
	}
	*out = p;
}

void best_picks_free(BestPick *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].recipe);
		sb_release(&p[i].passed);
	}
	free(p);
}
