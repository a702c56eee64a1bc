/*
 * recipe.c - the recipe reader (cJSON in, Recipe out).
 *
 * Every key is checked against the format: unknown keys, wrong types and
 * out-of-range numbers are errors naming the key, because a recipe that
 * loads with a misspelt guard would splice without that guard.
 */
#include "recipe.h"

#include "base/file.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int bad(Err *e, const char *path, const char *key, const char *what)
{
	return err_set(e, "%s: '%s': %s", path, key, what);
}

static int get_string(const cJSON *it, const char *path, const char *key, char **out, Err *e)
{
	if (!cJSON_IsString(it) || !it->valuestring)
		return bad(e, path, key, "expected a string");
	*out = xstrdup(it->valuestring);
	return 0;
}

/* A JSON number that is an integer in [lo, hi]. */
static int get_int(const cJSON *it, const char *path, const char *key, double lo, double hi,
                   int64_t *out, Err *e)
{
	if (!cJSON_IsNumber(it))
		return bad(e, path, key, "expected a number");
	double v = it->valuedouble;
	if (v != floor(v) || v < lo || v > hi)
		return err_set(e, "%s: '%s': %g is not an integer in [%.0f, %.0f]", path, key, v, lo, hi);
	*out = (int64_t)v;
	return 0;
}

/* The first key that an object repeats (cJSON keeps both; the second would
 * silently win or lose), or NULL. */
static const char *dup_key(const cJSON *obj)
{
	for (const cJSON *a = obj ? obj->child : NULL; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && !strcmp(a->string, b->string))
				return a->string;
	return NULL;
}

static int parse_cut(const cJSON *c, Recipe *r, Err *e)
{
	const char *p = r->path;
	if (!cJSON_IsObject(c))
		return bad(e, p, "cut", "expected an object");
	const cJSON *phase = NULL, *stmts = NULL, *epi = NULL;
	for (const cJSON *it = c->child; it; it = it->next) {
		if (!strcmp(it->string, "phase"))
			phase = it;
		else if (!strcmp(it->string, "stmts"))
			stmts = it;
		else if (!strcmp(it->string, "with_epilogue"))
			epi = it;
		else
			return err_set(e, "%s: 'cut.%s': unknown key (expected phase, with_epilogue or stmts)",
			               p, it->string);
	}
	if (!!phase == !!stmts)
		return bad(e, p, "cut", "give exactly one of 'phase' and 'stmts'");
	if (phase) {
		int64_t v;
		if (get_int(phase, p, "cut.phase", 1, 1e9, &v, e) < 0)
			return -1;
		r->cut = CUT_PHASE;
		r->phase = (uint32_t)v;
		if (epi) {
			if (!cJSON_IsBool(epi))
				return bad(e, p, "cut.with_epilogue", "expected true or false");
			r->with_epilogue = cJSON_IsTrue(epi);
		}
		return 0;
	}
	if (epi)
		return bad(e, p, "cut.with_epilogue", "only goes with 'phase'");
	if (!cJSON_IsArray(stmts) || cJSON_GetArraySize(stmts) != 2)
		return bad(e, p, "cut.stmts", "expected [first, last]");
	int64_t a, b;
	if (get_int(cJSON_GetArrayItem(stmts, 0), p, "cut.stmts[0]", 0, 4e9, &a, e) < 0 ||
	    get_int(cJSON_GetArrayItem(stmts, 1), p, "cut.stmts[1]", 0, 4e9, &b, e) < 0)
		return -1;
	if (a > b)
		return err_set(e, "%s: 'cut.stmts': first %lld is after last %lld", p, (long long)a,
		               (long long)b);
	r->cut = CUT_STMTS;
	r->first = (uint32_t)a;
	r->last = (uint32_t)b;
	return 0;
}

static bool is_ident(const char *s)
{
	if (!*s || !(((*s | 32) >= 'a' && (*s | 32) <= 'z') || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(((*s | 32) >= 'a' && (*s | 32) <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int parse_params(const cJSON *c, Recipe *r, Err *e)
{
	if (!cJSON_IsObject(c))
		return bad(e, r->path, "params", "expected an object of numbers");
	for (const cJSON *it = c->child; it; it = it->next) {
		char key[300];
		snprintf(key, sizeof key, "params.%s", it->string);
		if (!is_ident(it->string))
			return bad(e, r->path, key, "a parameter name is letters, digits and '_'");
		RecipeParam rp = {xstrdup(it->string), 0};
		if (get_int(it, r->path, key, -9007199254740992.0, 9007199254740992.0, &rp.value, e) < 0) {
			free(rp.name);
			return -1;
		}
		VEC_PUSH(r->params, rp);
	}
	return 0;
}

static int parse_bind(const cJSON *c, Recipe *r, Err *e)
{
	if (!cJSON_IsObject(c))
		return bad(e, r->path, "bind", "expected an object");
	for (const cJSON *it = c->child; it; it = it->next) {
		char key[300];
		snprintf(key, sizeof key, "bind.%s", it->string);
		if (!is_ident(it->string))
			return bad(e, r->path, key, "a formal name is letters, digits and '_'");
		RecipeBind b = {0};
		if (cJSON_IsString(it)) {
			b.nregs = 1;
			b.regs = xmalloc(sizeof(char *));
			b.regs[0] = xstrdup(it->valuestring);
		} else if (cJSON_IsArray(it) && cJSON_GetArraySize(it) > 0) {
			b.list = true;
			b.nregs = (uint32_t)cJSON_GetArraySize(it);
			b.regs = xcalloc(b.nregs, sizeof(char *));
			uint32_t i = 0;
			for (const cJSON *x = it->child; x; x = x->next, i++) {
				if (!cJSON_IsString(x)) {
					for (uint32_t j = 0; j < i; j++)
						free(b.regs[j]);
					free(b.regs);
					return bad(e, r->path, key, "expected register names (strings)");
				}
				b.regs[i] = xstrdup(x->valuestring);
			}
		} else
			return bad(e, r->path, key, "expected a register name or a non-empty list of them");
		b.formal = xstrdup(it->string);
		VEC_PUSH(r->binds, b);
	}
	return 0;
}

static int parse_guards(const cJSON *c, Recipe *r, Err *e)
{
	const char *p = r->path;
	if (!cJSON_IsObject(c))
		return bad(e, p, "guards", "expected an object");
	for (const cJSON *it = c->child; it; it = it->next) {
		if (!strcmp(it->string, "mma")) {
			int64_t v;
			if (get_int(it, p, "guards.mma", 0, 4e9, &v, e) < 0)
				return -1;
			r->has_mma = true;
			r->mma = (uint32_t)v;
		} else if (!strcmp(it->string, "sha256")) {
			if (get_string(it, p, "guards.sha256", &r->sha256, e) < 0)
				return -1;
			size_t n = strlen(r->sha256);
			for (size_t i = 0; i < n; i++) {
				char ch = r->sha256[i];
				if (ch >= 'A' && ch <= 'F')
					r->sha256[i] = (char)(ch | 32);
				else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
					n = 0;
			}
			if (n != 64)
				return bad(e, p, "guards.sha256", "expected 64 hex digits");
		} else if (!strcmp(it->string, "first")) {
			if (get_string(it, p, "guards.first", &r->first_re, e) < 0)
				return -1;
		} else if (!strcmp(it->string, "last")) {
			if (get_string(it, p, "guards.last", &r->last_re, e) < 0)
				return -1;
		} else
			return err_set(e, "%s: 'guards.%s': unknown key (expected mma, sha256, first, last)",
			               p, it->string);
	}
	return 0;
}

int rcp_parse(const char *path, const char *text, size_t len, Recipe *r, Err *e)
{
	memset(r, 0, sizeof(*r));
	r->path = xstrdup(path);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		if (off > len)
			off = len;
		err_at(e, path, text, len, off, "not valid JSON");
		rcp_release(r);
		return -1;
	}
	int rc = -1;
	const cJSON *cut = NULL, *tpl = NULL;
	if (!cJSON_IsObject(root)) {
		err_set(e, "%s: a recipe is a JSON object", path);
		goto out;
	}
	const cJSON *objs[] = {root, cJSON_GetObjectItemCaseSensitive(root, "cut"),
	                       cJSON_GetObjectItemCaseSensitive(root, "params"),
	                       cJSON_GetObjectItemCaseSensitive(root, "bind"),
	                       cJSON_GetObjectItemCaseSensitive(root, "guards")};
	for (size_t i = 0; i < ARRAY_SIZE(objs); i++) {
		const char *k = cJSON_IsObject(objs[i]) ? dup_key(objs[i]) : NULL;
		if (k) {
			err_set(e, "%s: '%s%s%s': the key appears twice", path, i ? objs[i]->string : "",
			        i ? "." : "", k);
			goto out;
		}
	}
	for (const cJSON *it = root->child; it; it = it->next) {
		const char *k = it->string;
		if (!strcmp(k, "layer")) {
			if (get_string(it, path, k, &r->layer, e) < 0)
				goto out;
		} else if (!strcmp(k, "module")) {
			if (get_string(it, path, k, &r->module, e) < 0)
				goto out;
		} else if (!strcmp(k, "entry")) {
			if (get_string(it, path, k, &r->entry, e) < 0)
				goto out;
		} else if (!strcmp(k, "cut")) {
			cut = it;
		} else if (!strcmp(k, "template")) {
			tpl = it;
		} else if (!strcmp(k, "params")) {
			if (parse_params(it, r, e) < 0)
				goto out;
		} else if (!strcmp(k, "bind")) {
			if (parse_bind(it, r, e) < 0)
				goto out;
		} else if (!strcmp(k, "guards")) {
			if (parse_guards(it, r, e) < 0)
				goto out;
		} else if (!strcmp(k, "interface")) {
			if (!cJSON_IsObject(it)) {
				bad(e, path, k, "expected an object");
				goto out;
			}
		} else if (!strcmp(k, "note")) {
			if (!cJSON_IsString(it) && !cJSON_IsArray(it)) {
				bad(e, path, k, "expected a string or a list of strings");
				goto out;
			}
		} else {
			err_set(e, "%s: '%s': unknown key (expected layer, module, entry, cut, template, "
			           "params, bind, guards, interface, note)", path, k);
			goto out;
		}
	}
	if (!cut) {
		err_set(e, "%s: 'cut' is missing", path);
		goto out;
	}
	if (parse_cut(cut, r, e) < 0)
		goto out;
	if (!tpl) {
		err_set(e, "%s: 'template' is missing", path);
		goto out;
	}
	if (get_string(tpl, path, "template", &r->template_name, e) < 0)
		goto out;
	if (!strcmp(r->template_name, "identity"))
		r->tkind = TPL_IDENTITY;
	else if (!strcmp(r->template_name, "perturb"))
		r->tkind = TPL_PERTURB;
	else if (!*r->template_name) {
		bad(e, path, "template", "empty name");
		goto out;
	} else
		r->tkind = TPL_FILE;
	if (r->tkind != TPL_FILE && (r->binds.n || r->params.n)) {
		err_set(e, "%s: 'bind'/'params': the built-in '%s' template takes none", path,
		        r->template_name);
		goto out;
	}
	if (!r->sha256) {
		err_set(e, "%s: 'guards.sha256' is missing (every recipe pins the text of its cut; "
		           "'d4r-splice recipe new' computes it)", path);
		goto out;
	}
	if (!r->layer && !r->module) {
		/* Allowed: the caller names the module (splice --module). */
	}
	rc = 0;
out:
	cJSON_Delete(root);
	if (rc < 0)
		rcp_release(r);
	return rc;
}

int rcp_load(const char *path, Recipe *r, Err *e)
{
	char *text;
	size_t n;
	memset(r, 0, sizeof(*r));
	if (read_file(path, &text, &n, e) < 0)
		return -1;
	int rc = rcp_parse(path, text, n, r, e);
	free(text);
	return rc;
}

void rcp_release(Recipe *r)
{
	free(r->path);
	free(r->layer);
	free(r->module);
	free(r->entry);
	free(r->template_name);
	for (size_t i = 0; i < r->params.n; i++)
		free(r->params.v[i].name);
	VEC_FREE(r->params);
	for (size_t i = 0; i < r->binds.n; i++) {
		for (uint32_t j = 0; j < r->binds.v[i].nregs; j++)
			free(r->binds.v[i].regs[j]);
		free(r->binds.v[i].regs);
		free(r->binds.v[i].formal);
	}
	VEC_FREE(r->binds);
	free(r->sha256);
	free(r->first_re);
	free(r->last_re);
	memset(r, 0, sizeof(*r));
}

const RecipeBind *rcp_bind_find(const Recipe *r, const char *formal)
{
	for (size_t i = 0; i < r->binds.n; i++)
		if (!strcmp(r->binds.v[i].formal, formal))
			return &r->binds.v[i];
	return NULL;
}

const RecipeParam *rcp_param_find(const Recipe *r, const char *name, size_t n)
{
	for (size_t i = 0; i < r->params.n; i++)
		if (strlen(r->params.v[i].name) == n && !memcmp(r->params.v[i].name, name, n))
			return &r->params.v[i];
	return NULL;
}
