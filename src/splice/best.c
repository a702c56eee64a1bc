/*
 * best.c - which variant of each phase a best-of layer takes (best.h).
 *
 * Two readers (the ranking, the proof) and one rule: per phase, the lowest
 * ratio among the proven variants.  The readers take only the members
 * they need: both documents are other verbs' outputs, whose other keys
 * grow with those verbs.
 */
#include "best.h"
#include "base/json.h"
#include "base/layout.h"

#include <stdlib.h>
#include <string.h>

/* ---- the ranking ------------------------------------------------------------- */

static int by_ratio(const void *a, const void *b)
{
	const BestCand *x = a, *y = b;
	if ((x->ratio < 0) != (y->ratio < 0))
		return x->ratio < 0 ? 1 : -1;
	return x->ratio < y->ratio ? -1 : x->ratio > y->ratio;
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

void best_choose(const BestRanking *r, const BestProof *pf, const char *layer_dir,
                 BestPick **out)
{
	BestPick *p = xcalloc(r->n + 1, sizeof *p);
	for (size_t i = 0; i < r->n; i++) {
		const BestPhase *bp = &r->v[i];
		BestPick *pk = &p[i];
		pk->phase = bp->phase;
		pk->ratio = -1;
		for (size_t k = 0; k < bp->n && !pk->variant; k++) {
			const BestCand *c = &bp->c[k];
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
