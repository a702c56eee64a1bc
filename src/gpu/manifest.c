/*
 * manifest.c - reading and validating recipes/LAYER/layer.json.
 *
 * The JSON reader (base/json.h) parses the text and names every value by
 * its path; this file walks the tree once, giving the keys the format
 * allows at each level (a typo is an error, never silently ignored), every
 * value's type and range, and the relations between objects: fields inside
 * their parameter block, naturally aligned and non-overlapping; `buffer`
 * and `array` references naming objects that exist; frame outputs inside
 * their buffers.  Where the files it names are is base/layout.h's.
 */
#include "gpu/manifest.h"

#include "base/file.h"
#include "base/json.h"
#include "gpu/mfattr.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Member `k` as an integer in [lo, hi] (json_get_int) into a uint64_t, s32
 * values as their two's complement; *out keeps its value when `k` is an
 * absent optional member. */
static int get_u64(JsonDoc *d, const cJSON *o, const char *k, unsigned flags, double lo,
                   double hi, uint64_t *out)
{
	int64_t v = (int64_t)*out;
	if (json_get_int(d, o, k, flags, lo, hi, &v) < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* The value at the current path, as int_value's [lo, hi] integer. */
static int u64_value(JsonDoc *d, const cJSON *j, double lo, double hi, uint64_t *out)
{
	int64_t v;
	if (json_int(d, j, lo, hi, &v) < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Member `k`, one of the `nallowed` formats by name; MF_NOFMT when it is an
 * absent optional member. */
static int get_format(JsonDoc *d, const cJSON *o, const char *k, unsigned flags,
                      const MfFormat *allowed, size_t nallowed, MfFormat *out)
{
	const char *names[16];
	size_t i;
	for (i = 0; i < nallowed; i++)
		names[i] = mf_format_name(allowed[i]);
	names[i] = NULL;
	int idx = -1;
	if (json_get_enum(d, o, k, flags, names, &idx) < 0)
		return -1;
	*out = idx < 0 ? MF_NOFMT : allowed[idx];
	return 0;
}

static const MfFormat buffer_formats[] = {MF_U8, MF_U16, MF_U32, MF_F16, MF_F32};
static const MfFormat array_formats[] = {MF_U8,  MF_U16, MF_U32, MF_S8,
                                         MF_S16, MF_S32, MF_F16, MF_F32};

/* The range of values an element of format f holds. */
static void format_range(MfFormat f, double *lo, double *hi)
{
	switch (f) {
	case MF_U8:
		*lo = 0, *hi = 255;
		break;
	case MF_U16:
		*lo = 0, *hi = 65535;
		break;
	case MF_U32:
		*lo = 0, *hi = 4294967295.0;
		break;
	case MF_S8:
		*lo = -128, *hi = 127;
		break;
	case MF_S16:
		*lo = -32768, *hi = 32767;
		break;
	case MF_S32:
		*lo = -2147483648.0, *hi = 2147483647.0;
		break;
	case MF_F16:
		*lo = -65504, *hi = 65504;
		break;
	default:
		*lo = -3.4028234663852886e38, *hi = 3.4028234663852886e38;
		break;
	}
}

/* A path into the corpus folder: relative, staying inside it. */
static int corpus_rel(JsonDoc *d, const char *k, const char *rel)
{
	if (layout_inside(rel))
		return 0;
	return json_bad_at(
	    d, k, "'%s' must be relative to the corpus folder and stay inside it", rel);
}

/*
 * "init": {"kind": ...}.  `array_fmt` is the array's format for an array's
 * init (random elements take it; a "format" key, if any, must agree), or
 * MF_NOFMT for a buffer (random needs "format").
 */
static int parse_init(JsonDoc *d, const cJSON *o, MfFormat array_fmt, MfInit *in)
{
	const cJSON *j = json_member(d, o, "init", JSON_REQUIRED);
	if (!j)
		return -1;
	size_t mark = json_push(d, "init");
	int rc = -1;
	static const char *const kinds[] = {"zero", "fill", "file", "random", NULL};
	int kind = 0;
	if (json_object(d, j) < 0 ||
	    json_get_enum(d, j, "kind", JSON_REQUIRED, kinds, &kind) < 0)
		goto out;
	in->kind = (MfInitKind)kind;
	switch (in->kind) {
	case MF_INIT_ZERO: {
		static const char *const keys[] = {"kind", NULL};
		if (json_keys(d, j, keys) < 0)
			goto out;
		break;
	}
	case MF_INIT_FILL: {
		static const char *const keys[] = {"kind", "byte", NULL};
		uint64_t v = 0;
		if (json_keys(d, j, keys) < 0 ||
		    get_u64(d, j, "byte", JSON_REQUIRED, 0, 255, &v) < 0)
			goto out;
		in->byte = (unsigned)v;
		break;
	}
	case MF_INIT_FILE: {
		static const char *const keys[] = {"kind", "path", NULL};
		if (json_keys(d, j, keys) < 0 ||
		    json_get_string(d, j, "path", JSON_REQUIRED | JSON_NONEMPTY,
		                    &in->path) < 0 ||
		    corpus_rel(d, "path", in->path) < 0)
			goto out;
		break;
	}
	case MF_INIT_RANDOM: {
		static const char *const keys[] = {"kind", "seed", "format",
		                                   "min",  "max",  NULL};
		if (json_keys(d, j, keys) < 0 ||
		    get_u64(d, j, "seed", JSON_REQUIRED, 0, JSON_MAX_INT, &in->seed) < 0)
			goto out;
		if (array_fmt == MF_NOFMT) {
			if (get_format(d, j, "format", JSON_REQUIRED, buffer_formats,
			               ARRAY_SIZE(buffer_formats), &in->format) < 0)
				goto out;
		} else {
			MfFormat f;
			if (get_format(d, j, "format", JSON_OPTIONAL, array_formats,
			               ARRAY_SIZE(array_formats), &f) < 0)
				goto out;
			if (f != MF_NOFMT && f != array_fmt) {
				json_bad_at(d, "format",
				            "'%s' differs from the array's format '%s'",
				            mf_format_name(f), mf_format_name(array_fmt));
				goto out;
			}
			in->format = array_fmt;
		}
		if (json_get_number(d, j, "min", JSON_REQUIRED, &in->min) < 0 ||
		    json_get_number(d, j, "max", JSON_REQUIRED, &in->max) < 0)
			goto out;
		double lo, hi;
		format_range(in->format, &lo, &hi);
		if (in->min > in->max) {
			json_bad(d, "min %g is greater than max %g", in->min, in->max);
			goto out;
		}
		if (in->min < lo || in->max > hi) {
			json_bad(d, "[%g, %g] does not fit format '%s' ([%g, %g])",
			         in->min, in->max, mf_format_name(in->format), lo, hi);
			goto out;
		}
		break;
	}
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

/* "address": "0x..." - a buffer that must sit at this device address (a
 * captured layer whose buffers hold pointers into each other). */
static int parse_address(JsonDoc *d, const cJSON *o, uint64_t *out)
{
	char *s = NULL;
	if (json_get_string(d, o, "address", JSON_OPTIONAL | JSON_NONEMPTY, &s) < 0)
		return -1;
	if (!s)
		return 0;
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 16);
	int rc = 0;
	if (strncmp(s, "0x", 2) != 0 || end == s + 2 || *end || errno || !*out)
		rc = json_bad_at(d, "address", "'%s' is not a non-zero hexadecimal address", s);
	free(s);
	return rc;
}

static int parse_buffers(JsonDoc *d, const cJSON *root, Manifest *m)
{
	const cJSON *bs = json_member(d, root, "buffers", JSON_OPTIONAL);
	if (!bs)
		return 0;
	size_t mark = json_push(d, "buffers");
	int rc = -1;
	if (json_object(d, bs) < 0)
		goto out;
	m->buffers = xcalloc((size_t)cJSON_GetArraySize(bs) + 1, sizeof(MfBuffer));
	for (const cJSON *b = bs->child; b; b = b->next) {
		size_t m2 = json_push(d, b->string);
		MfBuffer *buf = &m->buffers[m->nbuffers++];
		buf->name = xstrdup(b->string);
		static const char *const keys[] = {"size", "init", "address", NULL};
		if (json_object(d, b) < 0 || json_keys(d, b, keys) < 0 ||
		    get_u64(d, b, "size", JSON_REQUIRED, 1, JSON_MAX_INT, &buf->size) <
		        0 ||
		    parse_init(d, b, MF_NOFMT, &buf->init) < 0 ||
		    parse_address(d, b, &buf->address) < 0)
			goto out;
		if (buf->init.kind == MF_INIT_RANDOM &&
		    buf->size % mf_format_size(buf->init.format)) {
			json_bad(
			    d, "size %llu is not a multiple of the %zu-byte '%s' element",
			    (unsigned long long)buf->size,
			    mf_format_size(buf->init.format),
			    mf_format_name(buf->init.format));
			goto out;
		}
		json_pop(d, m2);
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

static int parse_texture(JsonDoc *d, const cJSON *t, MfArray *ar)
{
	static const char *const keys[] = {"filter", "address", "normalized", "read",
	                                   NULL};
	static const char *const filters[] = {"point", "linear", NULL};
	static const char *const addrs[] = {"clamp", "wrap", "border", "mirror", NULL};
	static const char *const reads[] = {"element", "normalized_float", NULL};
	int f = 0, ad = 0, rd = 0;
	if (json_object(d, t) < 0 || json_keys(d, t, keys) < 0 ||
	    json_get_enum(d, t, "filter", JSON_OPTIONAL, filters, &f) < 0 ||
	    json_get_enum(d, t, "address", JSON_OPTIONAL, addrs, &ad) < 0 ||
	    json_get_bool(d, t, "normalized", JSON_OPTIONAL, &ar->tex_normalized) < 0 ||
	    json_get_enum(d, t, "read", JSON_OPTIONAL, reads, &rd) < 0)
		return -1;
	ar->texture = true;
	ar->tex_linear = f == 1;
	ar->tex_address = ad;
	ar->tex_read_float = rd == 1;
	if (ar->tex_linear && !ar->tex_read_float && ar->format != MF_F16 &&
	    ar->format != MF_F32)
		return json_bad(d,
		                "linear filtering of '%s' elements needs \"read\": "
		                "\"normalized_float\"",
		                mf_format_name(ar->format));
	return 0;
}

static int parse_arrays(JsonDoc *d, const cJSON *root, Manifest *m)
{
	const cJSON *as = json_member(d, root, "arrays", JSON_OPTIONAL);
	if (!as)
		return 0;
	size_t mark = json_push(d, "arrays");
	int rc = -1;
	if (json_object(d, as) < 0)
		goto out;
	m->arrays = xcalloc((size_t)cJSON_GetArraySize(as) + 1, sizeof(MfArray));
	for (const cJSON *a = as->child; a; a = a->next) {
		size_t m2 = json_push(d, a->string);
		MfArray *ar = &m->arrays[m->narrays++];
		ar->name = xstrdup(a->string);
		static const char *const keys[] = {"width",   "height", "channels",
		                                   "format",  "init",   "texture",
		                                   "surface", NULL};
		uint64_t v = 0;
		if (json_object(d, a) < 0 || json_keys(d, a, keys) < 0)
			goto out;
		if (get_u64(d, a, "width", JSON_REQUIRED, 1, 65536, &v) < 0)
			goto out;
		ar->width = (unsigned)v;
		if (get_u64(d, a, "height", JSON_REQUIRED, 1, 65536, &v) < 0)
			goto out;
		ar->height = (unsigned)v;
		if (get_u64(d, a, "channels", JSON_REQUIRED, 1, 4, &v) < 0)
			goto out;
		if (v == 3) {
			json_bad_at(d, "channels",
			            "CUDA arrays have 1, 2 or 4 channels, not 3");
			goto out;
		}
		ar->channels = (unsigned)v;
		if (get_format(d, a, "format", JSON_REQUIRED, array_formats,
		               ARRAY_SIZE(array_formats), &ar->format) < 0 ||
		    parse_init(d, a, ar->format, &ar->init) < 0 ||
		    json_get_bool(d, a, "surface", JSON_OPTIONAL, &ar->surface) < 0)
			goto out;
		const cJSON *t = json_member(d, a, "texture", JSON_OPTIONAL);
		if (t) {
			size_t m3 = json_push(d, "texture");
			if (parse_texture(d, t, ar) < 0)
				goto out;
			json_pop(d, m3);
		}
		if (!ar->texture && !ar->surface) {
			json_bad(
			    d,
			    "an array needs \"texture\" or \"surface\": true (or both)");
			goto out;
		}
		json_pop(d, m2);
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

static int parse_dim3(JsonDoc *d, const cJSON *o, const char *k, double hi,
                      unsigned out[3])
{
	const cJSON *j = json_member(d, o, k, JSON_REQUIRED);
	if (!j)
		return -1;
	size_t mark = json_push(d, k);
	int rc = -1;
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != 3) {
		json_bad(d, "expected an array of three integers");
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		size_t m2 = json_push_index(d, (size_t)i);
		uint64_t v;
		if (u64_value(d, cJSON_GetArrayItem(j, i), 1, i == 0 ? hi : 65535, &v) <
		    0)
			goto out;
		out[i] = (unsigned)v;
		json_pop(d, m2);
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

static size_t field_bytes(MfFieldKind k)
{
	switch (k) {
	case MF_P_U8:
		return 1;
	case MF_P_U16:
		return 2;
	case MF_P_U32:
	case MF_P_S32:
	case MF_P_F32:
		return 4;
	default:
		return 8;
	}
}

/* Member `k` of `o`, a name of one of `m`'s buffers (arrays when `array`);
 * its index in *ref. */
static int get_ref(JsonDoc *d, const cJSON *o, const char *k, const Manifest *m,
                   bool array, int *ref)
{
	char *name = NULL;
	if (json_get_string(d, o, k, JSON_REQUIRED | JSON_NONEMPTY, &name) < 0)
		return -1;
	*ref = array ? mf_array_index(m, name) : mf_buffer_index(m, name);
	int rc = 0;
	if (*ref < 0)
		rc = json_bad_at(d, k, "no %s named '%s' in \"%s\"",
		                 array ? "array" : "buffer", name,
		                 array ? "arrays" : "buffers");
	free(name);
	return rc;
}

/* The "value" of a literal field of kind fd->kind. */
static int field_value(JsonDoc *d, const cJSON *v, MfField *fd)
{
	int rc;
	switch (fd->kind) {
	case MF_P_U8:
		return u64_value(d, v, 0, 255, &fd->value);
	case MF_P_U16:
		return u64_value(d, v, 0, 65535, &fd->value);
	case MF_P_U32:
		return u64_value(d, v, 0, 4294967295.0, &fd->value);
	case MF_P_S32:
		rc = u64_value(d, v, -2147483648.0, 2147483647.0, &fd->value);
		fd->value &= 0xffffffffu;
		return rc;
	case MF_P_U64:
		return u64_value(d, v, 0, JSON_MAX_INT, &fd->value);
	default: {
		double x;
		if (json_number(d, v, &x) < 0)
			return -1;
		if (fabs(x) > 3.4028234663852886e38)
			return json_bad(d, "%g does not fit an f32", x);
		fd->fvalue = (float)x;
		return 0;
	}
	}
}

static int parse_field(JsonDoc *d, const cJSON *f, const Manifest *m, MfLaunch *l,
                       MfField *fd)
{
	static const char *const kinds[] = {"u8",  "u16",    "u32",     "u64",     "s32",
	                                    "f32", "buffer", "texture", "surface", NULL};
	int kind = 0;
	if (json_object(d, f) < 0 ||
	    json_get_enum(d, f, "kind", JSON_REQUIRED, kinds, &kind) < 0)
		return -1;
	fd->kind = (MfFieldKind)kind;
	fd->ref = -1;
	uint64_t off = 0;
	if (get_u64(d, f, "offset", JSON_REQUIRED, 0, 4294967295.0, &off) < 0)
		return -1;
	fd->offset = (uint32_t)off;
	switch (fd->kind) {
	case MF_P_BUFFER: {
		static const char *const keys[] = {"offset", "kind", "buffer", "add",
		                                   NULL};
		if (json_keys(d, f, keys) < 0 ||
		    get_ref(d, f, "buffer", m, false, &fd->ref) < 0)
			return -1;
		const MfBuffer *buf = &m->buffers[fd->ref];
		if (get_u64(d, f, "add", JSON_OPTIONAL, 0, JSON_MAX_INT, &fd->add) < 0)
			return -1;
		if (fd->add > buf->size)
			return json_bad_at(
			    d, "add",
			    "%llu is beyond the end of the %llu-byte buffer '%s'",
			    (unsigned long long)fd->add, (unsigned long long)buf->size,
			    buf->name);
		break;
	}
	case MF_P_TEXTURE:
	case MF_P_SURFACE: {
		static const char *const keys[] = {"offset", "kind", "array", NULL};
		if (json_keys(d, f, keys) < 0 ||
		    get_ref(d, f, "array", m, true, &fd->ref) < 0)
			return -1;
		const MfArray *ar = &m->arrays[fd->ref];
		if (fd->kind == MF_P_TEXTURE && !ar->texture)
			return json_bad_at(d, "array", "array '%s' has no \"texture\"",
			                   ar->name);
		if (fd->kind == MF_P_SURFACE && !ar->surface)
			return json_bad_at(
			    d, "array", "array '%s' is not a surface (\"surface\": true)",
			    ar->name);
		break;
	}
	default: {
		static const char *const keys[] = {"offset", "kind", "value", NULL};
		if (json_keys(d, f, keys) < 0)
			return -1;
		const cJSON *v = json_member(d, f, "value", JSON_REQUIRED);
		if (!v)
			return -1;
		size_t mark = json_push(d, "value");
		int rc = field_value(d, v, fd);
		json_pop(d, mark);
		if (rc < 0)
			return -1;
	}
	}
	size_t n = field_bytes(fd->kind);
	if ((uint64_t)fd->offset + n > l->param_size)
		return json_bad(d, "offset %u + %zu exceeds the %u-byte block",
		                fd->offset, n, l->param_size);
	if (fd->offset % n)
		return json_bad(d,
		                "offset %u of a %zu-byte '%s' is not a multiple of %zu",
		                fd->offset, n, kinds[kind], n);
	return 0;
}

static int parse_params(JsonDoc *d, const cJSON *o, const Manifest *m, MfLaunch *l)
{
	const cJSON *p = json_member(d, o, "params", JSON_REQUIRED);
	if (!p)
		return -1;
	size_t mark = json_push(d, "params");
	int rc = -1;
	static const char *const keys[] = {"size", "fields", NULL};
	uint64_t v = 0;
	if (json_object(d, p) < 0 || json_keys(d, p, keys) < 0 ||
	    get_u64(d, p, "size", JSON_REQUIRED, 0, MAX_PARAM_BYTES, &v) < 0)
		goto out;
	l->param_size = (uint32_t)v;
	const cJSON *fs = json_member(d, p, "fields", JSON_REQUIRED);
	if (!fs)
		goto out;
	json_push(d, "fields");
	if (!cJSON_IsArray(fs)) {
		json_bad(d, "expected an array, found %s", json_type(fs));
		goto out;
	}
	l->fields = xcalloc((size_t)cJSON_GetArraySize(fs) + 1, sizeof(MfField));
	size_t i = 0;
	for (const cJSON *f = fs->child; f; f = f->next, i++) {
		size_t m3 = json_push_index(d, i);
		MfField *fd = &l->fields[l->nfields++];
		if (parse_field(d, f, m, l, fd) < 0)
			goto out;
		size_t n = field_bytes(fd->kind);
		for (size_t k = 0; k + 1 < l->nfields; k++) {
			const MfField *g = &l->fields[k];
			size_t gn = field_bytes(g->kind);
			if (fd->offset < g->offset + gn && g->offset < fd->offset + n) {
				json_bad(
				    d, "bytes [%u, %zu) overlap fields[%zu] at [%u, %zu)",
				    fd->offset, fd->offset + n, k, g->offset,
				    g->offset + gn);
				goto out;
			}
		}
		json_pop(d, m3);
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

static int parse_launches(JsonDoc *d, const cJSON *root, Manifest *m)
{
	const cJSON *ls = json_member(d, root, "launches", JSON_REQUIRED);
	if (!ls)
		return -1;
	size_t mark = json_push(d, "launches");
	int rc = -1;
	if (!cJSON_IsArray(ls) || cJSON_GetArraySize(ls) == 0) {
		json_bad(d, "expected a non-empty array of launches");
		goto out;
	}
	m->launches = xcalloc((size_t)cJSON_GetArraySize(ls), sizeof(MfLaunch));
	size_t i = 0;
	for (const cJSON *o = ls->child; o; o = o->next, i++) {
		size_t m2 = json_push_index(d, i);
		MfLaunch *l = &m->launches[m->nlaunches++];
		static const char *const keys[] = {
		    "entry",  "grid",   "block", "dynamic_shared_bytes",
		    "params", "repeat", "cluster", "attributes", NULL};
		if (json_object(d, o) < 0 || json_keys(d, o, keys) < 0 ||
		    json_get_string(d, o, "entry", JSON_REQUIRED | JSON_NONEMPTY,
		                    &l->entry) < 0 ||
		    parse_dim3(d, o, "grid", 2147483647.0, l->grid) < 0 ||
		    parse_dim3(d, o, "block", 1024, l->block) < 0)
			goto out;
		l->cluster[0] = l->cluster[1] = l->cluster[2] = 1;
		if (json_member(d, o, "cluster", JSON_OPTIONAL) &&
		    parse_dim3(d, o, "cluster", 8, l->cluster) < 0)
			goto out;
		if (mf_parse_attributes(d, o, l) < 0)
			goto out;
		if ((uint64_t)l->block[0] * l->block[1] * l->block[2] > 1024) {
			json_bad_at(
			    d, "block",
			    "%u x %u x %u threads exceed the 1024 a block may have",
			    l->block[0], l->block[1], l->block[2]);
			goto out;
		}
		if (l->block[2] > 64) {
			json_bad_at(d, "block", "block z %u exceeds 64", l->block[2]);
			goto out;
		}
		uint64_t v = 0;
		if (get_u64(d, o, "dynamic_shared_bytes", JSON_OPTIONAL, 0, 4294967295.0,
		            &v) < 0)
			goto out;
		l->dynamic_shared_bytes = (uint32_t)v;
		v = 1;
		if (get_u64(d, o, "repeat", JSON_OPTIONAL, 1, 1000000, &v) < 0)
			goto out;
		l->repeat = (unsigned)v;
		if (parse_params(d, o, m, l) < 0)
			goto out;
		json_pop(d, m2);
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

/* A frame output of array `out->array`: its size and shape are the array's. */
static void array_output(const Manifest *m, MfOutput *out)
{
	const MfArray *ar = &m->arrays[out->array];
	out->size = mf_array_bytes(ar);
	out->format = ar->format;
	out->width = ar->width;
	out->height = ar->height;
	out->channels = ar->channels;
}

/* A frame output from a buffer: "offset" and "size" inside it, an optional
 * element format and shape that must account for every byte. */
static int buffer_output(JsonDoc *d, const cJSON *o, const Manifest *m, MfOutput *out)
{
	const MfBuffer *buf = &m->buffers[out->buffer];
	if (get_u64(d, o, "offset", JSON_OPTIONAL, 0, JSON_MAX_INT, &out->offset) < 0)
		return -1;
	if (out->offset >= buf->size)
		return json_bad_at(d, "offset",
		                   "%llu is beyond the end of the %llu-byte buffer '%s'",
		                   (unsigned long long)out->offset,
		                   (unsigned long long)buf->size, buf->name);
	out->size = buf->size - out->offset;
	if (get_u64(d, o, "size", JSON_OPTIONAL, 1, JSON_MAX_INT, &out->size) < 0)
		return -1;
	if (out->offset + out->size > buf->size)
		return json_bad(
		    d, "offset %llu + size %llu exceeds the %llu-byte buffer '%s'",
		    (unsigned long long)out->offset, (unsigned long long)out->size,
		    (unsigned long long)buf->size, buf->name);
	static const MfFormat out_formats[] = {MF_U8, MF_U16, MF_U32, MF_F16, MF_F32};
	if (get_format(d, o, "format", JSON_OPTIONAL, out_formats,
	               ARRAY_SIZE(out_formats), &out->format) < 0)
		return -1;
	uint64_t v = 0;
	if (get_u64(d, o, "width", JSON_OPTIONAL, 1, 1e9, &v) < 0)
		return -1;
	out->width = (unsigned)v;
	v = 0;
	if (get_u64(d, o, "height", JSON_OPTIONAL, 1, 1e9, &v) < 0)
		return -1;
	out->height = (unsigned)v;
	v = 0;
	if (get_u64(d, o, "channels", JSON_OPTIONAL, 1, 64, &v) < 0)
		return -1;
	out->channels = (unsigned)v;
	size_t es = out->format ? mf_format_size(out->format) : 1;
	if (out->size % es)
		return json_bad(
		    d, "size %llu is not a multiple of the %zu-byte '%s' element",
		    (unsigned long long)out->size, es, mf_format_name(out->format));
	if (!out->width && !out->height && !out->channels)
		return 0;
	if (!out->width || !out->height)
		return json_bad(d, "\"width\" and \"height\" go together");
	if (!out->channels)
		out->channels = 1;
	uint64_t want = (uint64_t)out->width * out->height * out->channels * es;
	if (want != out->size)
		return json_bad(d,
		                "%u x %u x %u elements of %zu bytes make %llu bytes, "
		                "not the output's %llu",
		                out->width, out->height, out->channels, es,
		                (unsigned long long)want, (unsigned long long)out->size);
	return 0;
}

static int parse_output(JsonDoc *d, const cJSON *o, Manifest *m, MfOutput *out)
{
	out->buffer = out->array = -1;
	if (json_object(d, o) < 0 ||
	    json_get_string(d, o, "name", JSON_REQUIRED | JSON_NONEMPTY, &out->name) < 0)
		return -1;
	for (size_t k = 0; k + 1 < m->noutputs; k++)
		if (!strcmp(m->outputs[k].name, out->name))
			return json_bad(d, "output name '%s' used twice", out->name);
	const cJSON *b = json_member(d, o, "buffer", JSON_OPTIONAL);
	const cJSON *a = json_member(d, o, "array", JSON_OPTIONAL);
	if (!!b == !!a)
		return json_bad(d, "an output names either a \"buffer\" or an \"array\"");
	if (a) {
		static const char *const keys[] = {"name", "array", NULL};
		if (json_keys(d, o, keys) < 0 ||
		    get_ref(d, o, "array", m, true, &out->array) < 0)
			return -1;
		array_output(m, out);
		return 0;
	}
	static const char *const keys[] = {"name",   "buffer",   "offset",
	                                   "size",   "format",   "width",
	                                   "height", "channels", NULL};
	if (json_keys(d, o, keys) < 0 ||
	    get_ref(d, o, "buffer", m, false, &out->buffer) < 0)
		return -1;
	return buffer_output(d, o, m, out);
}

static int parse_frame(JsonDoc *d, const cJSON *root, Manifest *m)
{
	const cJSON *fs = json_member(d, root, "frame", JSON_REQUIRED);
	if (!fs)
		return -1;
	size_t mark = json_push(d, "frame");
	int rc = -1;
	if (!cJSON_IsArray(fs) || cJSON_GetArraySize(fs) == 0) {
		json_bad(d, "expected a non-empty array of outputs");
		goto out;
	}
	m->outputs = xcalloc((size_t)cJSON_GetArraySize(fs), sizeof(MfOutput));
	size_t i = 0;
	for (const cJSON *o = fs->child; o; o = o->next, i++) {
		size_t m2 = json_push_index(d, i);
		MfOutput *out = &m->outputs[m->noutputs++];
		if (parse_output(d, o, m, out) < 0)
			goto out;
		out->frame_off = m->frame_size;
		m->frame_size += out->size;
		json_pop(d, m2);
	}
	rc = 0;
out:
	json_pop(d, mark);
	return rc;
}

static int parse_oracle(JsonDoc *d, const cJSON *root, Manifest *m)
{
	const cJSON *o = json_member(d, root, "oracle", JSON_OPTIONAL);
	if (!o)
		return 0;
	size_t mark = json_push(d, "oracle");
	int rc = -1;
	static const char *const keys[] = {"path", "sha256", NULL};
	char *sha = NULL;
	if (json_object(d, o) < 0 || json_keys(d, o, keys) < 0 ||
	    json_get_string(d, o, "path", JSON_REQUIRED | JSON_NONEMPTY,
	                    &m->oracle_path) < 0 ||
	    json_get_string(d, o, "sha256", JSON_REQUIRED | JSON_NONEMPTY, &sha) < 0)
		goto out;
	size_t n = strlen(sha);
	int hex = n == 64;
	for (size_t i = 0; hex && i < n; i++)
		hex =
		    (sha[i] >= '0' && sha[i] <= '9') || (sha[i] >= 'a' && sha[i] <= 'f');
	if (!hex) {
		json_bad_at(d, "sha256", "expected 64 lower-case hex digits, found '%s'",
		            sha);
		goto out;
	}
	memcpy(m->oracle_sha256, sha, 65);
	rc = 0;
out:
	free(sha);
	json_pop(d, mark);
	return rc;
}

static int parse_manifest(JsonDoc *d, const char *path, const cJSON *root, Manifest *m)
{
	static const char *const keys[] = {"layer",   "module", "entry",
	                                   "buffers", "arrays", "launches",
	                                   "frame",   "oracle", NULL};
	const unsigned str = JSON_REQUIRED | JSON_NONEMPTY;
	if (json_object(d, root) < 0 || json_keys(d, root, keys) < 0 ||
	    json_get_string(d, root, "layer", str, &m->layer) < 0 ||
	    json_get_string(d, root, "module", str, &m->module) < 0 ||
	    json_get_string(d, root, "entry", str, &m->entry) < 0 ||
	    parse_buffers(d, root, m) < 0 || parse_arrays(d, root, m) < 0 ||
	    parse_launches(d, root, m) < 0 || parse_frame(d, root, m) < 0 ||
	    parse_oracle(d, root, m) < 0)
		return -1;
	char *folder = layout_layer_of(path);
	int rc = 0;
	if (folder && strcmp(folder, m->layer))
		rc = json_bad_at(d, "layer", "'%s' differs from the folder name '%s'",
		                 m->layer, folder);
	free(folder);
	if (rc < 0)
		return -1;
	return corpus_rel(d, "module", m->module);
}

int mf_parse(const char *path, const char *text, size_t len, Manifest *m, Err *e)
{
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(path);
	JsonDoc d;
	int rc = json_parse(&d, path, text, len, e);
	if (rc == 0)
		rc = parse_manifest(&d, path, d.root, m);
	json_release(&d);
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
	m->corpus = layout_corpus_dir(corpus_dir, path, &ce);
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

/* ---- where the files are ------------------------------------------------- */

int mf_corpus_path(const Manifest *m, const char *rel, char **out, Err *e)
{
	if (!m->corpus) {
		Err ce = ERR_INIT;
		char *c = layout_corpus_dir(NULL, m->path, &ce);
		if (!c) {
			err_set(e, "%s", err_msg(&ce));
			err_release(&ce);
			return -1;
		}
		*out = layout_join(c, rel);
		free(c);
		return 0;
	}
	*out = layout_join(m->corpus, rel);
	return 0;
}

int mf_load_layer(const char *layer, const char *corpus_opt, Manifest *m, Err *e)
{
	memset(m, 0, sizeof(*m));
	char *path = layout_find_layer(layer, e);
	if (!path)
		return -1;
	int rc = mf_load(path, corpus_opt, m, e);
	free(path);
	return rc;
}

int mf_layout_layer(const char *layer, const char *corpus_opt, LayoutLayer *out, Err *e)
{
	Manifest m;
	memset(out, 0, sizeof(*out));
	if (mf_load_layer(layer, corpus_opt, &m, e) < 0)
		return -1;
	out->manifest = xstrdup(m.path);
	out->corpus = m.corpus ? xstrdup(m.corpus) : NULL;
	out->module = xstrdup(m.module);
	out->entry = xstrdup(m.entry);
	mf_release(&m);
	return 0;
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
