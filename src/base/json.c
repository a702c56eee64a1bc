/*
 * json.c - the reader of formatted JSON documents (see json.h).
 *
 * The path lives in a fixed buffer of the document: a push appends ".key"
 * or "[i]" and returns the old length, a pop cuts back to it.  A path too
 * long for the buffer is cut short in messages, never overrun.
 */
#include "json.h"

#include "strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages and the path ------------------------------------------------ */

static int vbad(JsonDoc *d, const char *fmt, va_list ap)
{
	char msg[1536];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (d->path[0])
		return err_set(d->e, "%s: %s: %s", d->file, d->path, msg);
	return err_set(d->e, "%s: %s", d->file, msg);
}

int json_bad(JsonDoc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vbad(d, fmt, ap);
	va_end(ap);
	return -1;
}

int json_bad_at(JsonDoc *d, const char *key, const char *fmt, ...)
{
	size_t mark = json_push(d, key);
	va_list ap;
	va_start(ap, fmt);
	vbad(d, fmt, ap);
	va_end(ap);
	json_pop(d, mark);
	return -1;
}

size_t json_push(JsonDoc *d, const char *key)
{
	size_t len = strlen(d->path);
	snprintf(d->path + len, sizeof d->path - len, "%s%s", len ? "." : "", key);
	return len;
}

size_t json_push_index(JsonDoc *d, size_t i)
{
	size_t len = strlen(d->path);
	snprintf(d->path + len, sizeof d->path - len, "[%zu]", i);
	return len;
}

void json_pop(JsonDoc *d, size_t mark)
{
	d->path[mark] = 0;
}

const char *json_type(const cJSON *j)
{
	if (cJSON_IsString(j))
		return "a string";
	if (cJSON_IsNumber(j))
		return "a number";
	if (cJSON_IsBool(j))
		return "a boolean";
	if (cJSON_IsNull(j))
		return "null";
	if (cJSON_IsArray(j))
		return "an array";
	if (cJSON_IsObject(j))
		return "an object";
	return "invalid";
}

/* ---- the document --------------------------------------------------------- */

/* The first object in `j` (depth first, document order) that gives a key
 * twice: the path moves to that object and the key is returned.  NULL, the
 * path as it was, when there is none. */
static const char *twice(JsonDoc *d, const cJSON *j)
{
	if (cJSON_IsObject(j))
		for (const cJSON *a = j->child; a; a = a->next)
			for (const cJSON *b = a->next; b; b = b->next)
				if (!strcmp(a->string, b->string))
					return a->string;
	size_t i = 0;
	for (const cJSON *c = j->child; c; c = c->next, i++) {
		if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
			continue;
		size_t mark =
		    cJSON_IsObject(j) ? json_push(d, c->string) : json_push_index(d, i);
		const char *k = twice(d, c);
		if (k)
			return k;
		json_pop(d, mark);
	}
	return NULL;
}

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first NUL in text[0..len): a NUL byte (never valid JSON, and cJSON
 * would stop reading there) or a \u0000 escape (valid JSON, but the value
 * a C string holds would end there).  Escapes are read in pairs, so an
 * escaped backslash followed by "u0000" is text.  Returns 0, or -1 with the
 * offset located. */
static int refuse_nul(const char *file, const char *text, size_t len, Err *e)
{
	const char *z = len ? memchr(text, 0, len) : NULL;
	if (z)
		return err_at(e, file, text, len, (size_t)(z - text),
		              "NUL byte at offset %zu (JSON text holds none)",
		              (size_t)(z - text));
	for (size_t i = 0; i + 1 < len; i++) {
		if (text[i] != '\\')
			continue;
		if (len - i >= 6 && !memcmp(text + i + 1, "u0000", 5))
			return err_at(
			    e, file, text, len, i,
			    "'\\u0000' at offset %zu: a NUL cannot be held in a value",
			    i);
		i++;
	}
	return 0;
}

/*
 * When cJSON stops at `off`, whether the text simply ends too early: read
 * with a stack of the objects, arrays and the string still open, the
 * brackets all match and something is still open at the end, and cJSON
 * read up to the end (or, for a string, stopped at its quote).  Then the
 * message says so and where the innermost open value began (its '{', '['
 * or '"'), and the object around it; returns -1.  0: some other fault.
 */
static int ended_early(const char *file, const char *text, size_t len, size_t off, Err *e)
{
	enum { DEPTH = 256 };
	size_t open[DEPTH];
	size_t n = 0, str = (size_t)-1; /* the open string's quote, if any */
	size_t last = 0;                /* the last byte that is not space */
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (!json_space(c))
			last = i;
		if (str != (size_t)-1) {
			if (c == '\\')
				i++;
			else if (c == '"')
				str = (size_t)-1;
			continue;
		}
		if (c == '"')
			str = i;
		else if (c == '{' || c == '[') {
			if (n == DEPTH)
				return 0;
			open[n++] = i;
		} else if (c == '}' || c == ']') {
			if (!n || text[open[n - 1]] != (c == '}' ? '{' : '['))
				return 0;
			n--;
		}
	}
	bool in_str = str != (size_t)-1;
	if (!n && !in_str)
		return 0;
	if (off < last && !(in_str && off >= str))
		return 0;
	size_t inner = in_str ? str : open[n - 1];
	unsigned l, c;
	err_line_col(text, len, inner, &l, &c);
	char where[512];
	snprintf(where, sizeof where, "the %s opened at %s:%u:%u ('%c') is not closed",
	         text[inner] == '{' ? "object" : text[inner] == '[' ? "array" : "string", file, l,
	         c, text[inner]);
	size_t obj = (size_t)-1; /* the object around a string or an array */
	for (size_t k = n; k-- > 0;)
		if (text[open[k]] == '{' && open[k] != inner) {
			obj = open[k];
			break;
		}
	if (obj == (size_t)-1)
		return err_at(e, file, text, len, len, "the document ends early: %s", where);
	unsigned ol, oc;
	err_line_col(text, len, obj, &ol, &oc);
	return err_at(e, file, text, len, len,
	              "the document ends early: %s, in the object opened at %s:%u:%u ('{')",
	              where, file, ol, oc);
}

int json_parse(JsonDoc *d, const char *file, const char *text, size_t len, Err *e)
{
	memset(d, 0, sizeof(*d));
	d->file = file;
	d->e = e;
	if (refuse_nul(file, text, len, e) < 0)
		return -1;
	const char *end = NULL;
	d->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!d->root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		if (ended_early(file, text, len, off, e) < 0)
			return -1;
		size_t k = 0;
		while (k < len && json_space(text[k]))
			k++;
		if (k == len)
			return err_at(e, file, text, len, 0, "no JSON document (the file is %s)",
			              len ? "only white space" : "empty");
		return err_at(e, file, text, len, off, "invalid JSON");
	}
	size_t off = end && end >= text ? (size_t)(end - text) : len;
	while (off < len && json_space(text[off]))
		off++;
	if (off < len)
		return err_at(e, file, text, len, off, "text after the JSON document");
	const char *k = twice(d, d->root);
	if (k) {
		json_bad(d, "key '%s' given twice", k);
		json_pop(d, 0);
		return -1;
	}
	return 0;
}

void json_release(JsonDoc *d)
{
	cJSON_Delete(d->root);
	d->root = NULL;
}

/* ---- values --------------------------------------------------------------- */

int json_object(JsonDoc *d, const cJSON *j)
{
	return cJSON_IsObject(j)
	           ? 0
	           : json_bad(d, "expected an object, found %s", json_type(j));
}

int json_int(JsonDoc *d, const cJSON *j, double lo, double hi, int64_t *out)
{
	if (!cJSON_IsNumber(j))
		return json_bad(d, "expected an integer, found %s", json_type(j));
	double v = j->valuedouble;
	if (!isfinite(v) || v != floor(v))
		return json_bad(d, "expected an integer, found %g", v);
	if (fabs(v) > JSON_MAX_INT)
		return json_bad(d, "%.0f is too large to be exact in JSON (at most 2^53)",
		                v);
	if (v < lo || v > hi)
		return json_bad(d, "%.0f is out of range [%.0f, %.0f]", v, lo, hi);
	*out = (int64_t)v;
	return 0;
}

int json_number(JsonDoc *d, const cJSON *j, double *out)
{
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
		return json_bad(d, "expected a number, found %s", json_type(j));
	*out = j->valuedouble;
	return 0;
}

static void quoted_list(StrBuf *sb, const char *const *names)
{
	for (const char *const *k = names; *k; k++)
		sb_addf(sb, "%s'%s'", k == names ? "" : ", ", *k);
}

int json_keys(JsonDoc *d, const cJSON *o, const char *const *keys)
{
	for (const cJSON *c = o->child; c; c = c->next) {
		const char *const *k = keys;
		while (*k && strcmp(*k, c->string))
			k++;
		if (*k)
			continue;
		StrBuf sb = STRBUF_INIT;
		quoted_list(&sb, keys);
		json_bad(d, "unknown key '%s' (expected one of %s)", c->string,
		         sb.p ? sb.p : "");
		sb_release(&sb);
		return -1;
	}
	return 0;
}

/* ---- members -------------------------------------------------------------- */

const cJSON *json_member(JsonDoc *d, const cJSON *o, const char *key, unsigned flags)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!j && (flags & JSON_REQUIRED))
		json_bad(d, "missing key '%s'", key);
	return j;
}

/* Member `key` for a getter: 1 present (the path moved into it, *mark to
 * pop), 0 absent and optional, -1 absent and required. */
static int enter(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                 const cJSON **j, size_t *mark)
{
	*j = json_member(d, o, key, flags);
	if (!*j)
		return (flags & JSON_REQUIRED) ? -1 : 0;
	*mark = json_push(d, key);
	return 1;
}

int json_get_string(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                    char **out)
{
	const cJSON *j;
	size_t mark;
	int in = enter(d, o, key, flags, &j, &mark);
	if (in <= 0)
		return in;
	int rc = 0;
	if (!cJSON_IsString(j))
		rc = json_bad(d, "expected a string, found %s", json_type(j));
	else if ((flags & JSON_NONEMPTY) && !j->valuestring[0])
		rc = json_bad(d, "empty string");
	else
		*out = xstrdup(j->valuestring);
	json_pop(d, mark);
	return rc;
}

int json_get_int(JsonDoc *d, const cJSON *o, const char *key, unsigned flags, double lo,
                 double hi, int64_t *out)
{
	const cJSON *j;
	size_t mark;
	int in = enter(d, o, key, flags, &j, &mark);
	if (in <= 0)
		return in;
	int rc = json_int(d, j, lo, hi, out);
	json_pop(d, mark);
	return rc;
}

int json_get_number(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                    double *out)
{
	const cJSON *j;
	size_t mark;
	int in = enter(d, o, key, flags, &j, &mark);
	if (in <= 0)
		return in;
	int rc = json_number(d, j, out);
	json_pop(d, mark);
	return rc;
}

int json_get_bool(JsonDoc *d, const cJSON *o, const char *key, unsigned flags, bool *out)
{
	const cJSON *j;
	size_t mark;
	int in = enter(d, o, key, flags, &j, &mark);
	if (in <= 0)
		return in;
	int rc = 0;
	if (!cJSON_IsBool(j))
		rc = json_bad(d, "expected true or false, found %s", json_type(j));
	else
		*out = cJSON_IsTrue(j);
	json_pop(d, mark);
	return rc;
}

int json_get_enum(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                  const char *const *names, int *out)
{
	const cJSON *j;
	size_t mark;
	int in = enter(d, o, key, flags, &j, &mark);
	if (in <= 0)
		return in;
	int rc = -1;
	if (!cJSON_IsString(j)) {
		json_bad(d, "expected a string, found %s", json_type(j));
	} else {
		for (int i = 0; names[i] && rc; i++)
			if (!strcmp(names[i], j->valuestring)) {
				*out = i;
				rc = 0;
			}
		if (rc) {
			StrBuf sb = STRBUF_INIT;
			quoted_list(&sb, names);
			json_bad(d, "'%s' is not one of %s", j->valuestring,
			         sb.p ? sb.p : "");
			sb_release(&sb);
		}
	}
	json_pop(d, mark);
	return rc;
}
