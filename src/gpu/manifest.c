/*
 * manifest.c - reading and validating recipes/LAYER/layer.json.
 *
 * cJSON parses the text; this file walks the tree once, checking every key
 * against the keys the format allows (a typo is an error, never silently
 * ignored), every value's type and range, and the relations between
 * objects: fields inside their parameter block, naturally aligned and
 * non-overlapping; `buffer` and `array` references naming objects that
 * exist; frame outputs inside their buffers.  Each message carries the JSON
 * path of the value it is about, built up in a small fixed buffer as the
 * walk descends (`launches[1].params.fields[3]`).
 */
#include "gpu/manifest.h"

#include "base/file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most a CUDA kernel takes as parameters (Volta and later, CUDA 12.1+). */
#define MAX_PARAM_BYTES 32764u

static const char *const format_names[] = {
	[MF_NOFMT] = "none", [MF_U8] = "u8",   [MF_U16] = "u16", [MF_U32] = "u32",
	[MF_S8] = "s8",      [MF_S16] = "s16", [MF_S32] = "s32", [MF_F16] = "f16",
	[MF_F32] = "f32",
};
static const unsigned char format_sizes[] = {
	[MF_NOFMT] = 0, [MF_U8] = 1,  [MF_U16] = 2, [MF_U32] = 4, [MF_S8] = 1,
	[MF_S16] = 2,   [MF_S32] = 4, [MF_F16] = 2, [MF_F32] = 4,
};

const char *mf_format_name(MfFormat f)
{
	return (unsigned)f < ARRAY_SIZE(format_names) ? format_names[f] : "?";
}

size_t mf_format_size(MfFormat f)
{
	return (unsigned)f < ARRAY_SIZE(format_sizes) ? format_sizes[f] : 0;
}

MfFormat mf_format_parse(const char *s)
{
	for (unsigned i = 1; i < ARRAY_SIZE(format_names); i++)
		if (!strcmp(s, format_names[i]))
			return (MfFormat)i;
	return MF_NOFMT;
}

/* ---- the walk --------------------------------------------------------- */

typedef struct {
	const char *file;
	Err *e;
	char path[512];
	Manifest *m;
} Walk;

static int bad(Walk *w, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int bad(Walk *w, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (w->path[0])
		return err_set(w->e, "%s: %s: %s", w->file, w->path, msg);
	return err_set(w->e, "%s: %s", w->file, msg);
}

/* Descends into key `k` (or index `i` when k is NULL); returns the old
 * length so the caller can pop back with `w->path[len] = 0`. */
static size_t push(Walk *w, const char *k, int i)
{
	size_t len = strlen(w->path);
	if (k)
		snprintf(w->path + len, sizeof w->path - len, "%s%s", len ? "." : "", k);
	else
		snprintf(w->path + len, sizeof w->path - len, "[%d]", i);
	return len;
}

static const char *type_name(const cJSON *j)
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

/* Every key of object `o` must be one of the NULL-terminated `keys`. */
static int known_keys(Walk *w, const cJSON *o, const char *const *keys)
{
	for (const cJSON *c = o->child; c; c = c->next) {
		int ok = 0;
		for (const char *const *k = keys; *k; k++)
			if (!strcmp(*k, c->string))
				ok = 1;
		if (!ok) {
			StrBuf sb = STRBUF_INIT;
			for (const char *const *k = keys; *k; k++)
				sb_addf(&sb, "%s'%s'", k == keys ? "" : ", ", *k);
			int rc = bad(w, "unknown key '%s' (expected one of %s)", c->string, sb.p);
			sb_release(&sb);
			return rc;
		}
	}
	/* cJSON keeps duplicate keys; the format does not allow them. */
	for (const cJSON *c = o->child; c; c = c->next)
		for (const cJSON *d = c->next; d; d = d->next)
			if (!strcmp(c->string, d->string))
				return bad(w, "key '%s' given twice", c->string);
	return 0;
}

static int need_object(Walk *w, const cJSON *j)
{
	return cJSON_IsObject(j) ? 0 : bad(w, "expected an object, found %s", type_name(j));
}

/* Member `k` of object `o`: required (error when absent) or optional. */
static const cJSON *member(Walk *w, const cJSON *o, const char *k, int required)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!j && required)
		bad(w, "missing key '%s'", k);
	return j;
}

static int get_string(Walk *w, const cJSON *o, const char *k, char **out)
{
	const cJSON *j = member(w, o, k, 1);
	if (!j)
		return -1;
	size_t len = push(w, k, 0);
	int rc = 0;
	if (!cJSON_IsString(j))
		rc = bad(w, "expected a string, found %s", type_name(j));
	else if (!j->valuestring[0])
		rc = bad(w, "empty string");
	else
		*out = xstrdup(j->valuestring);
	w->path[len] = 0;
	return rc;
}

/* An integer in [lo, hi] (exactly representable: at most 2^53). */
static int int_value(Walk *w, const cJSON *j, double lo, double hi, uint64_t *out)
{
	if (!cJSON_IsNumber(j))
		return bad(w, "expected an integer, found %s", type_name(j));
	double v = j->valuedouble;
	if (v != floor(v) || !isfinite(v))
		return bad(w, "expected an integer, found %g", v);
	if (fabs(v) > 9007199254740992.0)
		return bad(w, "%.0f is too large to be exact in JSON (at most 2^53)", v);
	if (v < lo || v > hi)
		return bad(w, "%.0f is out of range [%.0f, %.0f]", v, lo, hi);
	*out = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
	return 0;
}

/* Member `k` as an integer in [lo, hi]; `def` when optional and absent. */
static int get_int(Walk *w, const cJSON *o, const char *k, int required, double lo,
                   double hi, uint64_t def, uint64_t *out)
{
	const cJSON *j = member(w, o, k, required);
	if (!j) {
		*out = def;
		return required ? -1 : 0;
	}
	size_t len = push(w, k, 0);
	int rc = int_value(w, j, lo, hi, out);
	w->path[len] = 0;
	return rc;
}

static int get_number(Walk *w, const cJSON *o, const char *k, double *out)
{
	const cJSON *j = member(w, o, k, 1);
	if (!j)
		return -1;
	size_t len = push(w, k, 0);
	int rc = 0;
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
		rc = bad(w, "expected a number, found %s", type_name(j));
	else
		*out = j->valuedouble;
	w->path[len] = 0;
	return rc;
}

static int get_bool(Walk *w, const cJSON *o, const char *k, bool def, bool *out)
{
	const cJSON *j = member(w, o, k, 0);
	if (!j) {
		*out = def;
		return 0;
	}
	size_t len = push(w, k, 0);
	int rc = 0;
	if (!cJSON_IsBool(j))
		rc = bad(w, "expected true or false, found %s", type_name(j));
	else
		*out = cJSON_IsTrue(j);
	w->path[len] = 0;
	return rc;
}

/* Member `k`, a string that must be one of `names`; its index in *out. */
static int get_enum(Walk *w, const cJSON *o, const char *k, int required,
                    const char *const *names, int def, int *out)
{
	const cJSON *j = member(w, o, k, required);
	if (!j) {
		*out = def;
		return required ? -1 : 0;
	}
	size_t len = push(w, k, 0);
	int rc = -1;
	if (!cJSON_IsString(j)) {
		bad(w, "expected a string, found %s", type_name(j));
	} else {
		for (int i = 0; names[i]; i++)
			if (!strcmp(names[i], j->valuestring)) {
				*out = i;
				rc = 0;
			}
		if (rc) {
			StrBuf sb = STRBUF_INIT;
			for (int i = 0; names[i]; i++)
				sb_addf(&sb, "%s'%s'", i ? ", " : "", names[i]);
			bad(w, "'%s' is not one of %s", j->valuestring, sb.p);
			sb_release(&sb);
		}
	}
	w->path[len] = 0;
	return rc;
}

static int get_format(Walk *w, const cJSON *o, const char *k, int required,
                      const MfFormat *allowed, size_t nallowed, MfFormat *out)
{
	const char *names[16];
	size_t i;
	for (i = 0; i < nallowed; i++)
		names[i] = mf_format_name(allowed[i]);
	names[i] = NULL;
	int idx;
	if (get_enum(w, o, k, required, names, -1, &idx) < 0)
		return -1;
	*out = idx < 0 ? MF_NOFMT : allowed[idx];
	return 0;
}

static const MfFormat buffer_formats[] = {MF_U8, MF_U16, MF_U32, MF_F16, MF_F32};
static const MfFormat array_formats[] = {MF_U8, MF_U16, MF_U32, MF_S8,
                                         MF_S16, MF_S32, MF_F16, MF_F32};

/* The range of values an element of format f holds. */
static void format_range(MfFormat f, double *lo, double *hi)
{
	switch (f) {
	case MF_U8: *lo = 0, *hi = 255; break;
	case MF_U16: *lo = 0, *hi = 65535; break;
	case MF_U32: *lo = 0, *hi = 4294967295.0; break;
	case MF_S8: *lo = -128, *hi = 127; break;
	case MF_S16: *lo = -32768, *hi = 32767; break;
	case MF_S32: *lo = -2147483648.0, *hi = 2147483647.0; break;
	case MF_F16: *lo = -65504, *hi = 65504; break;
	default: *lo = -3.4028234663852886e38, *hi = 3.4028234663852886e38; break;
	}
}

/*
 * "init": {"kind": ...}.  `array_fmt` is the array's format for an array's
 * init (random elements take it; a "format" key, if any, must agree), or
 * MF_NOFMT for a buffer (random needs "format").
 */
static int parse_init(Walk *w, const cJSON *o, MfFormat array_fmt, MfInit *in)
{
	const cJSON *j = member(w, o, "init", 1);
	if (!j)
		return -1;
	size_t len = push(w, "init", 0);
	int rc = -1;
	static const char *const kinds[] = {"zero", "fill", "file", "random", NULL};
	int kind;
	if (need_object(w, j) < 0 || get_enum(w, j, "kind", 1, kinds, 0, &kind) < 0)
		goto out;
	in->kind = (MfInitKind)kind;
	uint64_t v;
	switch (in->kind) {
	case MF_INIT_ZERO: {
		static const char *const keys[] = {"kind", NULL};
		if (known_keys(w, j, keys) < 0)
			goto out;
		break;
	}
	case MF_INIT_FILL: {
		static const char *const keys[] = {"kind", "byte", NULL};
		if (known_keys(w, j, keys) < 0 || get_int(w, j, "byte", 1, 0, 255, 0, &v) < 0)
			goto out;
		in->byte = (unsigned)v;
		break;
	}
	case MF_INIT_FILE: {
		static const char *const keys[] = {"kind", "path", NULL};
		if (known_keys(w, j, keys) < 0 || get_string(w, j, "path", &in->path) < 0)
			goto out;
		if (in->path[0] == '/' || strstr(in->path, "..")) {
			size_t l2 = push(w, "path", 0);
			bad(w, "'%s' must be relative to the corpus folder and stay inside it",
			    in->path);
			w->path[l2] = 0;
			goto out;
		}
		break;
	}
	case MF_INIT_RANDOM: {
		static const char *const keys[] = {"kind", "seed", "format", "min", "max", NULL};
		if (known_keys(w, j, keys) < 0 ||
		    get_int(w, j, "seed", 1, 0, 9007199254740992.0, 0, &in->seed) < 0)
			goto out;
		if (array_fmt == MF_NOFMT) {
			if (get_format(w, j, "format", 1, buffer_formats,
			               ARRAY_SIZE(buffer_formats), &in->format) < 0)
				goto out;
		} else {
			MfFormat f;
			if (get_format(w, j, "format", 0, array_formats,
			               ARRAY_SIZE(array_formats), &f) < 0)
				goto out;
			if (f != MF_NOFMT && f != array_fmt) {
				size_t l2 = push(w, "format", 0);
				bad(w, "'%s' differs from the array's format '%s'", mf_format_name(f),
				    mf_format_name(array_fmt));
				w->path[l2] = 0;
				goto out;
			}
			in->format = array_fmt;
		}
		if (get_number(w, j, "min", &in->min) < 0 || get_number(w, j, "max", &in->max) < 0)
			goto out;
		double lo, hi;
		format_range(in->format, &lo, &hi);
		if (in->min > in->max) {
			bad(w, "min %g is greater than max %g", in->min, in->max);
			goto out;
		}
		if (in->min < lo || in->max > hi) {
			bad(w, "[%g, %g] does not fit format '%s' ([%g, %g])", in->min, in->max,
			    mf_format_name(in->format), lo, hi);
			goto out;
		}
		break;
	}
	}
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static int parse_buffers(Walk *w, const cJSON *root)
{
	const cJSON *bs = member(w, root, "buffers", 0);
	if (!bs)
		return 0;
	size_t len = push(w, "buffers", 0);
	int rc = -1;
	if (need_object(w, bs) < 0)
		goto out;
	Manifest *m = w->m;
	m->buffers = xcalloc((size_t)cJSON_GetArraySize(bs) + 1, sizeof(MfBuffer));
	for (const cJSON *b = bs->child; b; b = b->next) {
		size_t l2 = push(w, b->string, 0);
		MfBuffer *buf = &m->buffers[m->nbuffers++];
		buf->name = xstrdup(b->string);
		static const char *const keys[] = {"size", "init", NULL};
		if (need_object(w, b) < 0 || known_keys(w, b, keys) < 0 ||
		    get_int(w, b, "size", 1, 1, 9007199254740992.0, 0, &buf->size) < 0 ||
		    parse_init(w, b, MF_NOFMT, &buf->init) < 0)
			goto out;
		if (buf->init.kind == MF_INIT_RANDOM &&
		    buf->size % mf_format_size(buf->init.format)) {
			bad(w, "size %llu is not a multiple of the %zu-byte '%s' element",
			    (unsigned long long)buf->size, mf_format_size(buf->init.format),
			    mf_format_name(buf->init.format));
			goto out;
		}
		w->path[l2] = 0;
	}
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static int parse_arrays(Walk *w, const cJSON *root)
{
	const cJSON *as = member(w, root, "arrays", 0);
	if (!as)
		return 0;
	size_t len = push(w, "arrays", 0);
	int rc = -1;
	if (need_object(w, as) < 0)
		goto out;
	Manifest *m = w->m;
	m->arrays = xcalloc((size_t)cJSON_GetArraySize(as) + 1, sizeof(MfArray));
	for (const cJSON *a = as->child; a; a = a->next) {
		size_t l2 = push(w, a->string, 0);
		MfArray *ar = &m->arrays[m->narrays++];
		ar->name = xstrdup(a->string);
		static const char *const keys[] = {"width", "height", "channels", "format",
		                                   "init", "texture", "surface", NULL};
		uint64_t v;
		if (need_object(w, a) < 0 || known_keys(w, a, keys) < 0)
			goto out;
		if (get_int(w, a, "width", 1, 1, 65536, 0, &v) < 0)
			goto out;
		ar->width = (unsigned)v;
		if (get_int(w, a, "height", 1, 1, 65536, 0, &v) < 0)
			goto out;
		ar->height = (unsigned)v;
		if (get_int(w, a, "channels", 1, 1, 4, 0, &v) < 0)
			goto out;
		if (v == 3) {
			size_t l3 = push(w, "channels", 0);
			bad(w, "CUDA arrays have 1, 2 or 4 channels, not 3");
			w->path[l3] = 0;
			goto out;
		}
		ar->channels = (unsigned)v;
		if (get_format(w, a, "format", 1, array_formats, ARRAY_SIZE(array_formats),
		               &ar->format) < 0 ||
		    parse_init(w, a, ar->format, &ar->init) < 0 ||
		    get_bool(w, a, "surface", false, &ar->surface) < 0)
			goto out;
		const cJSON *t = member(w, a, "texture", 0);
		if (t) {
			size_t l3 = push(w, "texture", 0);
			static const char *const tkeys[] = {"filter", "address", "normalized",
			                                    "read", NULL};
			static const char *const filters[] = {"point", "linear", NULL};
			static const char *const addrs[] = {"clamp", "wrap", "border", "mirror", NULL};
			static const char *const reads[] = {"element", "normalized_float", NULL};
			int f, ad, rd;
			if (need_object(w, t) < 0 || known_keys(w, t, tkeys) < 0 ||
			    get_enum(w, t, "filter", 0, filters, 0, &f) < 0 ||
			    get_enum(w, t, "address", 0, addrs, 0, &ad) < 0 ||
			    get_bool(w, t, "normalized", false, &ar->tex_normalized) < 0 ||
			    get_enum(w, t, "read", 0, reads, 0, &rd) < 0)
				goto out;
			ar->texture = true;
			ar->tex_linear = f == 1;
			ar->tex_address = ad;
			ar->tex_read_float = rd == 1;
			if (ar->tex_linear && !ar->tex_read_float &&
			    ar->format != MF_F16 && ar->format != MF_F32) {
				bad(w, "linear filtering of '%s' elements needs \"read\": "
				       "\"normalized_float\"", mf_format_name(ar->format));
				goto out;
			}
			w->path[l3] = 0;
		}
		if (!ar->texture && !ar->surface) {
			bad(w, "an array needs \"texture\" or \"surface\": true (or both)");
			goto out;
		}
		w->path[l2] = 0;
	}
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static int parse_dim3(Walk *w, const cJSON *o, const char *k, double hi, unsigned out[3])
{
	const cJSON *j = member(w, o, k, 1);
	if (!j)
		return -1;
	size_t len = push(w, k, 0);
	int rc = -1;
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != 3) {
		bad(w, "expected an array of three integers");
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		size_t l2 = push(w, NULL, i);
		uint64_t v;
		if (int_value(w, cJSON_GetArrayItem(j, i), 1, i == 0 ? hi : 65535, &v) < 0)
			goto out;
		out[i] = (unsigned)v;
		w->path[l2] = 0;
	}
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static size_t field_bytes(MfFieldKind k)
{
	switch (k) {
	case MF_P_U8: return 1;
	case MF_P_U16: return 2;
	case MF_P_U32:
	case MF_P_S32:
	case MF_P_F32: return 4;
	default: return 8;
	}
}

static int parse_field(Walk *w, const cJSON *f, MfLaunch *l, MfField *fd)
{
	static const char *const kinds[] = {"u8",     "u16",     "u32",     "u64", "s32",
	                                    "f32",    "buffer",  "texture", "surface", NULL};
	int kind;
	if (need_object(w, f) < 0 || get_enum(w, f, "kind", 1, kinds, 0, &kind) < 0)
		return -1;
	fd->kind = (MfFieldKind)kind;
	fd->ref = -1;
	uint64_t off;
	if (get_int(w, f, "offset", 1, 0, 4294967295.0, 0, &off) < 0)
		return -1;
	fd->offset = (uint32_t)off;
	Manifest *m = w->m;
	switch (fd->kind) {
	case MF_P_BUFFER: {
		static const char *const keys[] = {"offset", "kind", "buffer", "add", NULL};
		char *name = NULL;
		if (known_keys(w, f, keys) < 0 || get_string(w, f, "buffer", &name) < 0)
			return -1;
		fd->ref = mf_buffer_index(m, name);
		if (fd->ref < 0) {
			size_t len = push(w, "buffer", 0);
			bad(w, "no buffer named '%s' in \"buffers\"", name);
			w->path[len] = 0;
			free(name);
			return -1;
		}
		free(name);
		uint64_t size = m->buffers[fd->ref].size;
		if (get_int(w, f, "add", 0, 0, 9007199254740992.0, 0, &fd->add) < 0)
			return -1;
		if (fd->add > size) {
			size_t len = push(w, "add", 0);
			bad(w, "%llu is beyond the end of the %llu-byte buffer '%s'",
			    (unsigned long long)fd->add, (unsigned long long)size,
			    m->buffers[fd->ref].name);
			w->path[len] = 0;
			return -1;
		}
		break;
	}
	case MF_P_TEXTURE:
	case MF_P_SURFACE: {
		static const char *const keys[] = {"offset", "kind", "array", NULL};
		char *name = NULL;
		if (known_keys(w, f, keys) < 0 || get_string(w, f, "array", &name) < 0)
			return -1;
		fd->ref = mf_array_index(m, name);
		size_t len = push(w, "array", 0);
		int rc = 0;
		if (fd->ref < 0)
			rc = bad(w, "no array named '%s' in \"arrays\"", name);
		else if (fd->kind == MF_P_TEXTURE && !m->arrays[fd->ref].texture)
			rc = bad(w, "array '%s' has no \"texture\"", name);
		else if (fd->kind == MF_P_SURFACE && !m->arrays[fd->ref].surface)
			rc = bad(w, "array '%s' is not a surface (\"surface\": true)", name);
		w->path[len] = 0;
		free(name);
		if (rc < 0)
			return -1;
		break;
	}
	default: {
		static const char *const keys[] = {"offset", "kind", "value", NULL};
		if (known_keys(w, f, keys) < 0)
			return -1;
		const cJSON *v = member(w, f, "value", 1);
		if (!v)
			return -1;
		size_t len = push(w, "value", 0);
		int rc;
		switch (fd->kind) {
		case MF_P_U8: rc = int_value(w, v, 0, 255, &fd->value); break;
		case MF_P_U16: rc = int_value(w, v, 0, 65535, &fd->value); break;
		case MF_P_U32: rc = int_value(w, v, 0, 4294967295.0, &fd->value); break;
		case MF_P_S32:
			rc = int_value(w, v, -2147483648.0, 2147483647.0, &fd->value);
			fd->value &= 0xffffffffu;
			break;
		case MF_P_U64: rc = int_value(w, v, 0, 9007199254740992.0, &fd->value); break;
		default:
			if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
				rc = bad(w, "expected a number, found %s", type_name(v));
			} else if (fabs(v->valuedouble) > 3.4028234663852886e38) {
				rc = bad(w, "%g does not fit an f32", v->valuedouble);
			} else {
				fd->fvalue = (float)v->valuedouble;
				rc = 0;
			}
			break;
		}
		w->path[len] = 0;
		if (rc < 0)
			return -1;
	}
	}
	size_t n = field_bytes(fd->kind);
	if ((uint64_t)fd->offset + n > l->param_size)
		return bad(w, "offset %u + %zu exceeds the %u-byte block", fd->offset, n,
		           l->param_size);
	if (fd->offset % n)
		return bad(w, "offset %u of a %zu-byte '%s' is not a multiple of %zu", fd->offset,
		           n, kinds[kind], n);
	return 0;
}

static int parse_params(Walk *w, const cJSON *o, MfLaunch *l)
{
	const cJSON *p = member(w, o, "params", 1);
	if (!p)
		return -1;
	size_t len = push(w, "params", 0);
	int rc = -1;
	static const char *const keys[] = {"size", "fields", NULL};
	uint64_t v;
	if (need_object(w, p) < 0 || known_keys(w, p, keys) < 0 ||
	    get_int(w, p, "size", 1, 0, MAX_PARAM_BYTES, 0, &v) < 0)
		goto out;
	l->param_size = (uint32_t)v;
	const cJSON *fs = member(w, p, "fields", 1);
	if (!fs)
		goto out;
	size_t l2 = push(w, "fields", 0);
	if (!cJSON_IsArray(fs)) {
		bad(w, "expected an array, found %s", type_name(fs));
		goto out;
	}
	l->fields = xcalloc((size_t)cJSON_GetArraySize(fs) + 1, sizeof(MfField));
	int i = 0;
	for (const cJSON *f = fs->child; f; f = f->next, i++) {
		size_t l3 = push(w, NULL, i);
		MfField *fd = &l->fields[l->nfields++];
		if (parse_field(w, f, l, fd) < 0)
			goto out;
		size_t n = field_bytes(fd->kind);
		for (size_t k = 0; k + 1 < l->nfields; k++) {
			const MfField *g = &l->fields[k];
			size_t gn = field_bytes(g->kind);
			if (fd->offset < g->offset + gn && g->offset < fd->offset + n) {
				bad(w, "bytes [%u, %zu) overlap fields[%zu] at [%u, %zu)", fd->offset,
				    fd->offset + n, k, g->offset, g->offset + gn);
				goto out;
			}
		}
		w->path[l3] = 0;
	}
	w->path[l2] = 0;
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static int parse_launches(Walk *w, const cJSON *root)
{
	const cJSON *ls = member(w, root, "launches", 1);
	if (!ls)
		return -1;
	size_t len = push(w, "launches", 0);
	int rc = -1;
	if (!cJSON_IsArray(ls) || cJSON_GetArraySize(ls) == 0) {
		bad(w, "expected a non-empty array of launches");
		goto out;
	}
	Manifest *m = w->m;
	m->launches = xcalloc((size_t)cJSON_GetArraySize(ls), sizeof(MfLaunch));
	int i = 0;
	for (const cJSON *o = ls->child; o; o = o->next, i++) {
		size_t l2 = push(w, NULL, i);
		MfLaunch *l = &m->launches[m->nlaunches++];
		static const char *const keys[] = {"entry", "grid", "block",
		                                   "dynamic_shared_bytes", "params", "repeat",
		                                   NULL};
		uint64_t v;
		if (need_object(w, o) < 0 || known_keys(w, o, keys) < 0 ||
		    get_string(w, o, "entry", &l->entry) < 0 ||
		    parse_dim3(w, o, "grid", 2147483647.0, l->grid) < 0 ||
		    parse_dim3(w, o, "block", 1024, l->block) < 0)
			goto out;
		if ((uint64_t)l->block[0] * l->block[1] * l->block[2] > 1024) {
			size_t l3 = push(w, "block", 0);
			bad(w, "%u x %u x %u threads exceed the 1024 a block may have", l->block[0],
			    l->block[1], l->block[2]);
			w->path[l3] = 0;
			goto out;
		}
		if (l->block[2] > 64) {
			size_t l3 = push(w, "block", 0);
			bad(w, "block z %u exceeds 64", l->block[2]);
			w->path[l3] = 0;
			goto out;
		}
		if (get_int(w, o, "dynamic_shared_bytes", 0, 0, 4294967295.0, 0, &v) < 0)
			goto out;
		l->dynamic_shared_bytes = (uint32_t)v;
		if (get_int(w, o, "repeat", 0, 1, 1000000, 1, &v) < 0)
			goto out;
		l->repeat = (unsigned)v;
		if (parse_params(w, o, l) < 0)
			goto out;
		w->path[l2] = 0;
	}
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static int parse_frame(Walk *w, const cJSON *root)
{
	const cJSON *fs = member(w, root, "frame", 1);
	if (!fs)
		return -1;
	size_t len = push(w, "frame", 0);
	int rc = -1;
	if (!cJSON_IsArray(fs) || cJSON_GetArraySize(fs) == 0) {
		bad(w, "expected a non-empty array of outputs");
		goto out;
	}
	Manifest *m = w->m;
	m->outputs = xcalloc((size_t)cJSON_GetArraySize(fs), sizeof(MfOutput));
	int i = 0;
	for (const cJSON *o = fs->child; o; o = o->next, i++) {
		size_t l2 = push(w, NULL, i);
		MfOutput *out = &m->outputs[m->noutputs++];
		out->buffer = out->array = -1;
		if (need_object(w, o) < 0 || get_string(w, o, "name", &out->name) < 0)
			goto out;
		for (size_t k = 0; k + 1 < m->noutputs; k++)
			if (!strcmp(m->outputs[k].name, out->name)) {
				bad(w, "output name '%s' used twice", out->name);
				goto out;
			}
		const cJSON *b = member(w, o, "buffer", 0), *a = member(w, o, "array", 0);
		if (!!b == !!a) {
			bad(w, "an output names either a \"buffer\" or an \"array\"");
			goto out;
		}
		char *ref = NULL;
		if (a) {
			static const char *const keys[] = {"name", "array", NULL};
			if (known_keys(w, o, keys) < 0 || get_string(w, o, "array", &ref) < 0)
				goto out;
			out->array = mf_array_index(m, ref);
			if (out->array < 0) {
				size_t l3 = push(w, "array", 0);
				bad(w, "no array named '%s' in \"arrays\"", ref);
				w->path[l3] = 0;
				free(ref);
				goto out;
			}
			free(ref);
			const MfArray *ar = &m->arrays[out->array];
			out->size = mf_array_bytes(ar);
			out->format = ar->format;
			out->width = ar->width;
			out->height = ar->height;
			out->channels = ar->channels;
		} else {
			static const char *const keys[] = {"name",  "buffer", "offset", "size",
			                                   "format", "width", "height", "channels",
			                                   NULL};
			if (known_keys(w, o, keys) < 0 || get_string(w, o, "buffer", &ref) < 0)
				goto out;
			out->buffer = mf_buffer_index(m, ref);
			if (out->buffer < 0) {
				size_t l3 = push(w, "buffer", 0);
				bad(w, "no buffer named '%s' in \"buffers\"", ref);
				w->path[l3] = 0;
				free(ref);
				goto out;
			}
			free(ref);
			const MfBuffer *buf = &m->buffers[out->buffer];
			uint64_t v;
			if (get_int(w, o, "offset", 0, 0, 9007199254740992.0, 0, &out->offset) < 0)
				goto out;
			if (out->offset >= buf->size) {
				size_t l3 = push(w, "offset", 0);
				bad(w, "%llu is beyond the end of the %llu-byte buffer '%s'",
				    (unsigned long long)out->offset, (unsigned long long)buf->size,
				    buf->name);
				w->path[l3] = 0;
				goto out;
			}
			if (get_int(w, o, "size", 0, 1, 9007199254740992.0, buf->size - out->offset,
			            &out->size) < 0)
				goto out;
			if (out->offset + out->size > buf->size) {
				bad(w, "offset %llu + size %llu exceeds the %llu-byte buffer '%s'",
				    (unsigned long long)out->offset, (unsigned long long)out->size,
				    (unsigned long long)buf->size, buf->name);
				goto out;
			}
			static const MfFormat out_formats[] = {MF_U8, MF_U16, MF_U32, MF_F16, MF_F32};
			if (get_format(w, o, "format", 0, out_formats, ARRAY_SIZE(out_formats),
			               &out->format) < 0)
				goto out;
			if (get_int(w, o, "width", 0, 1, 1e9, 0, &v) < 0)
				goto out;
			out->width = (unsigned)v;
			if (get_int(w, o, "height", 0, 1, 1e9, 0, &v) < 0)
				goto out;
			out->height = (unsigned)v;
			if (get_int(w, o, "channels", 0, 1, 64, 0, &v) < 0)
				goto out;
			out->channels = (unsigned)v;
			size_t es = out->format ? mf_format_size(out->format) : 1;
			if (out->size % es) {
				bad(w, "size %llu is not a multiple of the %zu-byte '%s' element",
				    (unsigned long long)out->size, es, mf_format_name(out->format));
				goto out;
			}
			if (out->width || out->height || out->channels) {
				if (!out->width || !out->height) {
					bad(w, "\"width\" and \"height\" go together");
					goto out;
				}
				if (!out->channels)
					out->channels = 1;
				uint64_t want = (uint64_t)out->width * out->height * out->channels * es;
				if (want != out->size) {
					bad(w, "%u x %u x %u elements of %zu bytes make %llu bytes, "
					       "not the output's %llu",
					    out->width, out->height, out->channels, es,
					    (unsigned long long)want, (unsigned long long)out->size);
					goto out;
				}
			}
		}
		out->frame_off = m->frame_size;
		m->frame_size += out->size;
		w->path[l2] = 0;
	}
	rc = 0;
out:
	w->path[len] = 0;
	return rc;
}

static int parse_oracle(Walk *w, const cJSON *root)
{
	const cJSON *o = member(w, root, "oracle", 0);
	if (!o)
		return 0;
	size_t len = push(w, "oracle", 0);
	int rc = -1;
	static const char *const keys[] = {"path", "sha256", NULL};
	char *sha = NULL;
	if (need_object(w, o) < 0 || known_keys(w, o, keys) < 0 ||
	    get_string(w, o, "path", &w->m->oracle_path) < 0 ||
	    get_string(w, o, "sha256", &sha) < 0)
		goto out;
	size_t n = strlen(sha);
	int hex = n == 64;
	for (size_t i = 0; hex && i < n; i++)
		hex = (sha[i] >= '0' && sha[i] <= '9') || (sha[i] >= 'a' && sha[i] <= 'f');
	if (!hex) {
		size_t l2 = push(w, "sha256", 0);
		bad(w, "expected 64 lower-case hex digits, found '%s'", sha);
		w->path[l2] = 0;
		goto out;
	}
	memcpy(w->m->oracle_sha256, sha, 65);
	rc = 0;
out:
	free(sha);
	w->path[len] = 0;
	return rc;
}

/* The layer's folder name when the manifest sits at recipes/LAYER/layer.json. */
static char *folder_layer(const char *path)
{
	const char *base = strrchr(path, '/');
	if (!base || strcmp(base + 1, "layer.json"))
		return NULL;
	const char *p = base;
	while (p > path && p[-1] != '/')
		p--;
	if (p == base)
		return NULL;
	const char *q = p > path ? p - 1 : p;
	const char *r = q;
	while (r > path && r[-1] != '/')
		r--;
	if ((size_t)(q - r) != 7 || strncmp(r, "recipes", 7))
		return NULL;
	return xstrndup(p, (size_t)(base - p));
}

int mf_parse(const char *path, const char *text, size_t len, Manifest *m, Err *e)
{
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(path);
	Walk w = {.file = path, .e = e, .m = m};
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		err_at(e, path, text, len, off, "invalid JSON");
		mf_release(m);
		return -1;
	}
	static const char *const keys[] = {"layer",  "module", "entry", "buffers", "arrays",
	                                   "launches", "frame", "oracle", NULL};
	int rc = -1;
	if (need_object(&w, root) < 0 || known_keys(&w, root, keys) < 0 ||
	    get_string(&w, root, "layer", &m->layer) < 0 ||
	    get_string(&w, root, "module", &m->module) < 0 ||
	    get_string(&w, root, "entry", &m->entry) < 0 || parse_buffers(&w, root) < 0 ||
	    parse_arrays(&w, root) < 0 || parse_launches(&w, root) < 0 ||
	    parse_frame(&w, root) < 0 || parse_oracle(&w, root) < 0)
		goto out;
	char *folder = folder_layer(path);
	if (folder && strcmp(folder, m->layer)) {
		push(&w, "layer", 0);
		bad(&w, "'%s' differs from the folder name '%s'", m->layer, folder);
		free(folder);
		goto out;
	}
	free(folder);
	if (m->module[0] == '/' || strstr(m->module, "..")) {
		push(&w, "module", 0);
		bad(&w, "'%s' must be relative to the corpus folder and stay inside it",
		    m->module);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	if (rc < 0)
		mf_release(m);
	return rc;
}

int mf_load(const char *path, const char *corpus_dir, Manifest *m, Err *e)
{
	char *text;
	size_t n;
	memset(m, 0, sizeof(*m));
	if (read_file(path, &text, &n, e) < 0)
		return -1;
	int rc = mf_parse(path, text, n, m, e);
	free(text);
	if (rc < 0)
		return -1;
	Err ce = ERR_INIT;
	m->corpus = mf_corpus_dir(corpus_dir, path, &ce);
	err_release(&ce);
	return 0;
}

static void init_release(MfInit *in)
{
	free(in->path);
}

void mf_release(Manifest *m)
{
	free(m->path);
	free(m->corpus);
	free(m->layer);
	free(m->module);
	free(m->entry);
	for (size_t i = 0; i < m->nbuffers; i++) {
		free(m->buffers[i].name);
		init_release(&m->buffers[i].init);
	}
	free(m->buffers);
	for (size_t i = 0; i < m->narrays; i++) {
		free(m->arrays[i].name);
		init_release(&m->arrays[i].init);
	}
	free(m->arrays);
	for (size_t i = 0; i < m->nlaunches; i++) {
		free(m->launches[i].entry);
		free(m->launches[i].fields);
	}
	free(m->launches);
	for (size_t i = 0; i < m->noutputs; i++)
		free(m->outputs[i].name);
	free(m->outputs);
	free(m->oracle_path);
	memset(m, 0, sizeof(*m));
}

/* ---- folders ------------------------------------------------------------ */

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", a, b);
	return p;
}

char *mf_corpus_dir(const char *opt, const char *manifest_path, Err *e)
{
	if (opt && *opt) {
		if (!is_dir(opt)) {
			err_set(e, "corpus folder '%s' (--corpus) is not a folder", opt);
			return NULL;
		}
		return xstrdup(opt);
	}
	const char *env = getenv("D4R_CORPUS");
	if (env && *env) {
		if (!is_dir(env)) {
			err_set(e, "corpus folder '%s' ($D4R_CORPUS) is not a folder", env);
			return NULL;
		}
		return xstrdup(env);
	}
	char *abs = manifest_path ? realpath(manifest_path, NULL) : NULL;
	if (abs) {
		char *slash;
		while ((slash = strrchr(abs, '/')) != NULL) {
			*slash = 0;
			char *c = join(*abs ? abs : "", "corpus");
			if (is_dir(c)) {
				free(abs);
				return c;
			}
			free(c);
		}
		free(abs);
	}
	err_set(e, "no corpus folder: give --corpus DIR or set $D4R_CORPUS "
	           "(no 'corpus' folder above '%s')",
	        manifest_path ? manifest_path : "?");
	return NULL;
}

int mf_corpus_path(const Manifest *m, const char *rel, char **out, Err *e)
{
	if (!m->corpus) {
		Err ce = ERR_INIT;
		char *c = mf_corpus_dir(NULL, m->path, &ce);
		if (!c) {
			err_set(e, "%s", err_msg(&ce));
			err_release(&ce);
			return -1;
		}
		*out = join(c, rel);
		free(c);
		return 0;
	}
	*out = join(m->corpus, rel);
	return 0;
}

char *mf_find_layer(const char *layer, Err *e)
{
	if (strchr(layer, '/') || strstr(layer, ".json")) {
		if (is_file(layer))
			return xstrdup(layer);
		if (is_dir(layer)) {
			char *p = join(layer, "layer.json");
			if (is_file(p))
				return p;
			free(p);
		}
		err_set(e, "no manifest at '%s'", layer);
		return NULL;
	}
	size_t n = strlen(layer) + 32;
	char *rel = xmalloc(n);
	snprintf(rel, n, "recipes/%s/layer.json", layer);
	if (is_file(rel))
		return rel;
	char *cwd = getcwd(NULL, 0);
	if (cwd) {
		char *slash;
		while ((slash = strrchr(cwd, '/')) != NULL && slash != cwd) {
			*slash = 0;
			char *p = join(cwd, rel);
			if (is_file(p)) {
				free(cwd);
				free(rel);
				return p;
			}
			free(p);
		}
		free(cwd);
	}
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = 0;
		for (int up = 0; up < 3; up++) {
			char *slash = strrchr(exe, '/');
			if (!slash || slash == exe)
				break;
			*slash = 0;
			char *p = join(exe, rel);
			if (is_file(p)) {
				free(rel);
				return p;
			}
			free(p);
		}
	}
	err_set(e, "no layer '%s': no %s here, above the current folder, or beside "
	           "the program",
	        layer, rel);
	free(rel);
	return NULL;
}

int mf_buffer_index(const Manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nbuffers; i++)
		if (!strcmp(m->buffers[i].name, name))
			return (int)i;
	return -1;
}

int mf_array_index(const Manifest *m, const char *name)
{
	for (size_t i = 0; i < m->narrays; i++)
		if (!strcmp(m->arrays[i].name, name))
			return (int)i;
	return -1;
}

int mf_output_index(const Manifest *m, const char *name)
{
	for (size_t i = 0; i < m->noutputs; i++)
		if (!strcmp(m->outputs[i].name, name))
			return (int)i;
	return -1;
}

uint64_t mf_array_bytes(const MfArray *a)
{
	return (uint64_t)a->width * a->height * a->channels * mf_format_size(a->format);
}

/* ---- parameter block ---------------------------------------------------- */

static void put(unsigned char *out, uint32_t off, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)   /* little-endian, like the device */
		out[off + i] = (unsigned char)(v >> (8 * i));
}

void mf_param_block(const MfLaunch *l, const uint64_t *buf_addr, const uint64_t *tex,
                    const uint64_t *surf, unsigned char *out)
{
	memset(out, 0, l->param_size);
	for (size_t i = 0; i < l->nfields; i++) {
		const MfField *f = &l->fields[i];
		uint64_t v = f->value;
		switch (f->kind) {
		case MF_P_BUFFER: v = buf_addr[f->ref] + f->add; break;
		case MF_P_TEXTURE: v = tex[f->ref]; break;
		case MF_P_SURFACE: v = surf[f->ref]; break;
		case MF_P_F32: {
			uint32_t bits;
			memcpy(&bits, &f->fvalue, 4);
			v = bits;
			break;
		}
		default: break;
		}
		put(out, f->offset, v, field_bytes(f->kind));
	}
}

/* ---- the seeded generator ------------------------------------------------ */

uint64_t mf_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint16_t mf_f16_from_double(double x)
{
	uint64_t b;
	memcpy(&b, &x, 8);
	uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
	uint64_t exp = (b >> 52) & 0x7ff;
	uint64_t man = b & 0xfffffffffffffull;
	if (exp == 0x7ff)                       /* inf, nan */
		return sign | 0x7c00 | (man ? 0x200 : 0);
	int e = (int)exp - 1023;                /* unbiased */
	if (e > 15)
		return sign | 0x7c00;              /* overflow: inf */
	/* The significand with its hidden bit: 53 bits. */
	uint64_t sig = exp ? man | (1ull << 52) : man;
	int shift;                              /* bits of sig dropped */
	uint16_t hexp;
	if (e >= -14) {                         /* normal half */
		shift = 52 - 10;
		hexp = (uint16_t)(e + 15);
	} else {                                /* subnormal half (or zero) */
		shift = 52 - 10 + (-14 - e);
		hexp = 0;
		if (shift > 63)
			return sign;                   /* far below the smallest subnormal */
	}
	uint64_t keep = sig >> shift;
	uint64_t rest = sig & ((1ull << shift) - 1);
	uint64_t half = 1ull << (shift - 1);
	if (rest > half || (rest == half && (keep & 1)))
		keep++;
	/* Normal: keep holds 11 bits with the hidden one; a carry into bit 11
	 * bumps the exponent.  Subnormal: a carry into bit 10 makes it normal.
	 * Both fall out of adding the exponent field. */
	uint32_t h = hexp ? ((uint32_t)hexp << 10) + (uint32_t)(keep - (1u << 10))
	                  : (uint32_t)keep;
	if (h >= 0x7c00)
		return sign | 0x7c00;
	return sign | (uint16_t)h;
}

double mf_f16_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	int man = h & 0x3ff;
	double v;
	if (e == 0)
		v = ldexp(man, -24);
	else if (e == 31)
		v = man ? NAN : INFINITY;
	else
		v = ldexp(man | 0x400, e - 25);
	return (h & 0x8000) ? -v : v;
}

void mf_fill_random(const MfInit *init, MfFormat f, void *dst, size_t n)
{
	uint64_t state = init->seed;
	size_t es = mf_format_size(f);
	unsigned char *p = dst;
	double span = init->max - init->min;
	for (size_t i = 0; i + es <= n; i += es) {
		uint64_t x = mf_splitmix64(&state);
		double u = (double)(x >> 11) * 0x1p-53;
		double v = init->min + u * span;
		uint64_t bits;
		switch (f) {
		case MF_F16: bits = mf_f16_from_double(v); break;
		case MF_F32: {
			float fl = (float)v;    /* round to nearest even */
			uint32_t b32;
			memcpy(&b32, &fl, 4);
			bits = b32;
			break;
		}
		case MF_S8:
		case MF_S16:
		case MF_S32: bits = (uint64_t)(int64_t)trunc(v); break;
		default: bits = (uint64_t)trunc(v); break;
		}
		put(p, (uint32_t)0, bits, es);
		p += es;
	}
}
