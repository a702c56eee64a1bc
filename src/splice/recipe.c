/*
 * recipe.c - the recipe reader (JSON in, Recipe out).
 *
 * Every key is checked against the format: unknown keys, wrong types and
 * out-of-range numbers are errors naming the key's JSON path (json.h),
 * because a recipe that loads with a misspelt guard would splice without
 * that guard.  The anchors are compiled here and the file names checked
 * against the layout's rule (recipe.h, Decisions).
 */
#include "recipe.h"

#include "base/file.h"
#include "base/json.h"
#include "base/layout.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_cut(JsonDoc *d, const cJSON *c, Recipe *r)
{
	static const char *const keys[] = {"phase", "with_epilogue", "stmts", NULL};
	if (json_object(d, c) < 0 || json_keys(d, c, keys) < 0)
		return -1;
	const cJSON *phase = json_member(d, c, "phase", JSON_OPTIONAL);
	const cJSON *stmts = json_member(d, c, "stmts", JSON_OPTIONAL);
	const cJSON *epi = json_member(d, c, "with_epilogue", JSON_OPTIONAL);
	if (!!phase == !!stmts)
		return json_bad(d, "give exactly one of 'phase' and 'stmts'");
	if (phase) {
		int64_t v;
		if (json_get_int(d, c, "phase", JSON_REQUIRED, 1, 1e9, &v) < 0 ||
		    json_get_bool(d, c, "with_epilogue", JSON_OPTIONAL,
		                  &r->with_epilogue) < 0)
			return -1;
		r->cut = CUT_PHASE;
		r->phase = (uint32_t)v;
		return 0;
	}
	if (epi)
		return json_bad_at(d, "with_epilogue", "only goes with 'phase'");
	size_t mark = json_push(d, "stmts");
	int64_t a, b;
	int rc = -1;
	if (!cJSON_IsArray(stmts) || cJSON_GetArraySize(stmts) != 2) {
		json_bad(d, "expected [first, last]");
		goto out;
	}
	size_t m2 = json_push_index(d, 0);
	if (json_int(d, cJSON_GetArrayItem(stmts, 0), 0, 4e9, &a) < 0)
		goto out;
	json_pop(d, m2);
	json_push_index(d, 1);
	if (json_int(d, cJSON_GetArrayItem(stmts, 1), 0, 4e9, &b) < 0)
		goto out;
	json_pop(d, m2);
	if (a > b) {
		json_bad(d, "first %lld is after last %lld", (long long)a, (long long)b);
		goto out;
	}
	r->cut = CUT_STMTS;
	r->first = (uint32_t)a;
	r->last = (uint32_t)b;
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

static bool is_ident(const char *s)
{
	if (!*s || !(((*s | 32) >= 'a' && (*s | 32) <= 'z') || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(((*s | 32) >= 'a' && (*s | 32) <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int parse_params(JsonDoc *d, const cJSON *c, Recipe *r)
{
	if (!cJSON_IsObject(c))
		return json_bad(d, "expected an object of numbers, found %s",
		                json_type(c));
	for (const cJSON *it = c->child; it; it = it->next) {
		if (!is_ident(it->string))
			return json_bad_at(d, it->string,
			                   "a parameter name is letters, digits and '_'");
		RecipeParam rp = {NULL, 0};
		if (json_get_int(d, c, it->string, JSON_REQUIRED, -JSON_MAX_INT,
		                 JSON_MAX_INT, &rp.value) < 0)
			return -1;
		rp.name = xstrdup(it->string);
		VEC_PUSH(r->params, rp);
	}
	return 0;
}

static int parse_bind(JsonDoc *d, const cJSON *c, Recipe *r)
{
	if (json_object(d, c) < 0)
		return -1;
	for (const cJSON *it = c->child; it; it = it->next) {
		size_t mark = json_push(d, it->string);
		RecipeBind b = {0};
		int rc = 0;
		if (!is_ident(it->string)) {
			rc = json_bad(d, "a formal name is letters, digits and '_'");
		} else if (cJSON_IsString(it)) {
			b.nregs = 1;
			b.regs = xmalloc(sizeof(char *));
			b.regs[0] = xstrdup(it->valuestring);
		} else if (cJSON_IsArray(it) && cJSON_GetArraySize(it) > 0) {
			b.list = true;
			b.regs = xcalloc((size_t)cJSON_GetArraySize(it), sizeof(char *));
			for (const cJSON *x = it->child; x && !rc; x = x->next) {
				if (cJSON_IsString(x)) {
					b.regs[b.nregs++] = xstrdup(x->valuestring);
					continue;
				}
				size_t m2 = json_push_index(d, b.nregs);
				rc = json_bad(d, "expected a register name, found %s",
				              json_type(x));
				json_pop(d, m2);
			}
		} else {
			rc = json_bad(
			    d,
			    "expected a register name or a non-empty list of them, "
			    "found %s",
			    json_type(it));
		}
		json_pop(d, mark);
		if (rc < 0) {
			for (uint32_t j = 0; j < b.nregs; j++)
				free(b.regs[j]);
			free(b.regs);
			return -1;
		}
		b.formal = xstrdup(it->string);
		VEC_PUSH(r->binds, b);
	}
	return 0;
}

static int part(JsonDoc *d, const cJSON *root, const char *key,
                int (*parse)(JsonDoc *, const cJSON *, Recipe *), Recipe *r);

/* 64 hex digits, lower-cased in place; false otherwise */
static bool hex64(char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch >= 'A' && ch <= 'F')
			s[i] = (char)(ch | 32);
		else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
	}
	return n == 64;
}

/* guards.reloads: {"stmts": [N, ...], "sha256": "<hex>"} */
static int parse_reloads(JsonDoc *d, const cJSON *c, Recipe *r)
{
	static const char *const keys[] = {"stmts", "sha256", NULL};
	if (json_object(d, c) < 0 || json_keys(d, c, keys) < 0)
		return -1;
	const cJSON *st = json_member(d, c, "stmts", JSON_REQUIRED);
	if (!st)
		return -1;
	size_t mark = json_push(d, "stmts");
	if (!cJSON_IsArray(st) || !cJSON_GetArraySize(st)) {
		json_bad(d, "expected a non-empty list of statement numbers");
		json_pop(d, mark);
		return -1;
	}
	uint32_t i = 0;
	for (const cJSON *x = st->child; x; x = x->next, i++) {
		int64_t v;
		size_t m2 = json_push_index(d, i);
		int rc = json_int(d, x, 0, 4e9, &v);
		json_pop(d, m2);
		if (rc < 0) {
			json_pop(d, mark);
			return -1;
		}
		VEC_PUSH(r->reloads, (uint32_t)v);
	}
	json_pop(d, mark);
	if (json_get_string(d, c, "sha256", JSON_REQUIRED, &r->reloads_sha256) < 0)
		return -1;
	if (!hex64(r->reloads_sha256))
		return json_bad_at(d, "sha256", "expected 64 hex digits");
	return 0;
}

/* Anchor `re` compiled, or NULL with "invalid recipe: ..." (PCRE2's message
 * and the offset in the expression) in msg. */
static pcre2_code *compile_re(const char *re, char *msg, size_t n)
{
	int ec;
	PCRE2_SIZE eo;
	pcre2_code *code =
	    pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL);
	if (!code) {
		PCRE2_UCHAR why[256];
		pcre2_get_error_message(ec, why, sizeof why);
		snprintf(msg, n,
		         "invalid recipe: the regular expression '%s' does not compile: "
		         "%s (at offset %zu)",
		         re, (char *)why, (size_t)eo);
	}
	return code;
}

/* The anchor guards.KEY compiled into *code, or the message at that key. */
static int compile_anchor(JsonDoc *d, const char *key, const char *re, void **code)
{
	char msg[1024];
	*code = compile_re(re, msg, sizeof msg);
	return *code ? 0 : json_bad_at(d, key, "%s", msg);
}

static int parse_guards(JsonDoc *d, const cJSON *c, Recipe *r)
{
	static const char *const keys[] = {"mma", "sha256", "first", "last", "reloads", NULL};
	if (json_object(d, c) < 0 || json_keys(d, c, keys) < 0)
		return -1;
	int64_t v;
	if (json_member(d, c, "mma", JSON_OPTIONAL)) {
		if (json_get_int(d, c, "mma", JSON_REQUIRED, 0, 4e9, &v) < 0)
			return -1;
		r->has_mma = true;
		r->mma = (uint32_t)v;
	}
	if (json_get_string(d, c, "sha256", JSON_OPTIONAL, &r->sha256) < 0 ||
	    json_get_string(d, c, "first", JSON_OPTIONAL, &r->first_re) < 0 ||
	    json_get_string(d, c, "last", JSON_OPTIONAL, &r->last_re) < 0 ||
	    part(d, c, "reloads", parse_reloads, r) < 0)
		return -1;
	if (r->sha256 && !hex64(r->sha256))
		return json_bad_at(d, "sha256", "expected 64 hex digits");
	if (r->first_re && compile_anchor(d, "first", r->first_re, &r->first_code) < 0)
		return -1;
	if (r->last_re && compile_anchor(d, "last", r->last_re, &r->last_code) < 0)
		return -1;
	return 0;
}

int rcp_guard_match(const Recipe *r, bool last, const char *subject, size_t n, Err *e)
{
	const char *re = last ? r->last_re : r->first_re;
	const char *key = last ? "last" : "first";
	if (!re)
		return 0;
	pcre2_code *code = last ? r->last_code : r->first_code, *own = NULL;
	if (!code) {
		char msg[1024];
		code = own = compile_re(re, msg, sizeof msg);
		if (!code)
			return err_set(e, "%s: guards.%s: %s", r->path, key, msg);
	}
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
	int rc = pcre2_match(code, (PCRE2_SPTR)subject, n, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(own);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(rc, msg, sizeof msg);
	return err_set(
	    e, "%s: guards.%s: the regular expression '%s' could not be matched: %s",
	    r->path, key, re, (char *)msg);
}

/* Member `key` of the recipe, read by `parse` with the path inside it. */
static int part(JsonDoc *d, const cJSON *root, const char *key,
                int (*parse)(JsonDoc *, const cJSON *, Recipe *), Recipe *r)
{
	const cJSON *j = json_member(d, root, key, JSON_OPTIONAL);
	if (!j)
		return 0;
	size_t mark = json_push(d, key);
	int rc = parse(d, j, r);
	json_pop(d, mark);
	return rc;
}

static int parse_recipe(JsonDoc *d, const cJSON *root, Recipe *r)
{
	static const char *const keys[] = {"layer",     "module", "entry", "cut",
	                                   "template",  "params", "bind",  "guards",
	                                   "interface", "note",   NULL};
	if (json_object(d, root) < 0 || json_keys(d, root, keys) < 0)
		return -1;
	if (json_get_string(d, root, "layer", JSON_OPTIONAL, &r->layer) < 0 ||
	    json_get_string(d, root, "module", JSON_OPTIONAL, &r->module) < 0 ||
	    json_get_string(d, root, "entry", JSON_OPTIONAL, &r->entry) < 0 ||
	    part(d, root, "params", parse_params, r) < 0 ||
	    part(d, root, "bind", parse_bind, r) < 0 ||
	    part(d, root, "guards", parse_guards, r) < 0)
		return -1;
	const cJSON *j = json_member(d, root, "interface", JSON_OPTIONAL);
	if (j && !cJSON_IsObject(j))
		return json_bad_at(d, "interface", "expected an object, found %s",
		                   json_type(j));
	j = json_member(d, root, "note", JSON_OPTIONAL);
	if (j && !cJSON_IsString(j) && !cJSON_IsArray(j))
		return json_bad_at(d, "note",
		                   "expected a string or a list of strings, found %s",
		                   json_type(j));
	if (r->module && !layout_inside(r->module))
		return json_bad_at(
		    d, "module",
		    "'%s' is not inside the corpus folder (a relative path with no "
		    "'..'; give --module FILE for a module elsewhere)",
		    r->module);
	const cJSON *cut = json_member(d, root, "cut", JSON_REQUIRED);
	if (!cut || part(d, root, "cut", parse_cut, r) < 0)
		return -1;
	if (json_get_string(d, root, "template", JSON_REQUIRED | JSON_NONEMPTY,
	                    &r->template_name) < 0)
		return -1;
	if (!strcmp(r->template_name, "identity"))
		r->tkind = TPL_IDENTITY;
	else if (!strcmp(r->template_name, "perturb"))
		r->tkind = TPL_PERTURB;
	else
		r->tkind = TPL_FILE;
	if (r->tkind == TPL_FILE && !layout_inside(r->template_name))
		return json_bad_at(
		    d, "template",
		    "'%s' is not inside the ptx/ folder or the recipe's folder (a "
		    "relative path with no '..')",
		    r->template_name);
	if (r->tkind != TPL_FILE && (r->binds.n || r->params.n))
		return json_bad_at(d, r->binds.n ? "bind" : "params",
		                   "the built-in '%s' template takes none",
		                   r->template_name);
	if (!r->sha256)
		return json_bad_at(
		    d, "guards",
		    "missing key 'sha256' (every recipe pins the text of its cut; "
		    "'d4r-splice recipe new' computes it)");
	/* A recipe may name neither "layer" nor "module": the caller names the
	 * module then (splice --module). */
	return 0;
}

int rcp_parse(const char *path, const char *text, size_t len, Recipe *r, Err *e)
{
	memset(r, 0, sizeof(*r));
	r->path = xstrdup(path);
	JsonDoc d;
	int rc = json_parse(&d, path, text, len, e);
	if (rc == 0)
		rc = parse_recipe(&d, d.root, r);
	json_release(&d);
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
	VEC_FREE(r->reloads);
	free(r->reloads_sha256);
	pcre2_code_free(r->first_code);
	pcre2_code_free(r->last_code);
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
		if (strlen(r->params.v[i].name) == n &&
		    !memcmp(r->params.v[i].name, name, n))
			return &r->params.v[i];
	return NULL;
}
