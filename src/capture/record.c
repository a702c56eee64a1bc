/*
 * record.c - a recorded launch becomes a layer: the manifest writer.
 *
 * Input: one spool record (capture.h), the facts the tap took inside
 * PROGRAM: the module image, the launch's geometry, its parameter block
 * with each parameter's offset and size, and every allocation a parameter
 * pointed into, copied before and after the launch.  Output: DIR/LAYER/
 * in the manifest format gpu/manifest.c reads (doc/layer-manifest.md), so
 * `run`, `phases`, `recipe new` and the main job take a captured layer as
 * they take a written one.
 *
 *   1. each allocation is a buffer "aI", its initial contents the
 *      before-copy (a file, trailing zeros left out; "zero" when all zero)
 *   2. each parameter is cut into naturally aligned pieces; an 8-byte piece
 *      whose value lies inside an allocation is a "buffer" field (with
 *      "add" for an interior pointer), every other piece a literal
 *   3. the frame is every buffer whose after-copy differs from its
 *      before-copy, in buffer order; the oracle is their after-bytes
 *   4. 8-byte values inside the before-copies that point into captured
 *      allocations are pointers a manifest field cannot rebase: the layer
 *      then asks for each buffer at its recorded address ("address")
 *   5. the PTX: from the image, --ptx-from, or Triton's cache (the .ptx
 *      beside a cubin equal to the image); without it the module is the
 *      image itself and the layer is replay-only
 *   6. the launch attributes: each one a replay gives is the launch's
 *      "attributes" (gpu/mfattr.h), one that asks nothing of the launch is
 *      left out, and one a replay cannot give (the program's events, an L2
 *      window over its addresses) refuses the layer, naming it
 *
 * Decisions:
 *  - Buffers are named by allocation order, not by parameter name: one
 *    allocation may stand behind several parameters (a weight matrix and
 *    its bias in one pool), and a parameter name is not in a cubin.
 *    capture.json says which address each buffer was.
 *  - A literal wider than 2^53 (the largest integer a manifest's JSON
 *    number holds exactly) is written as two u32 halves.
 *  - Zero pieces of a parameter wider than 8 bytes are left out: the block
 *    starts zeroed (mf_param_block), and a 256-byte struct of mostly zeros
 *    would bury the fields that matter.
 */
#include "capture/capture.h"

#include "base/file.h"
#include "base/json.h"
#include "base/sha256.h"
#include "bin/extract.h"
#include "bin/fatbin.h"
#include "gpu/mfattr.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- 1. reading a spool record ------------------------------------------------ */

static void free_allocs(CapRecord *r)
{
	for (size_t i = 0; i < r->nallocs; i++) {
		free(r->allocs[i].before);
		free(r->allocs[i].after);
	}
	free(r->allocs);
	r->allocs = NULL;
	r->nallocs = 0;
	for (size_t i = 0; i < r->narrays; i++) {
		free(r->arrays[i].before);
		free(r->arrays[i].after);
	}
	free(r->arrays);
	free(r->objects);
	r->arrays = NULL;
	r->objects = NULL;
	r->narrays = r->nobjects = 0;
}

void cap_record_release(CapRecord *r)
{
	free(r->kernel);
	free(r->api);
	free(r->param_block);
	cap_params_release(&r->params);
	free(r->param_source);
	free_allocs(r);
	free(r->image);
	free(r->attrs);
	memset(r, 0, sizeof(*r));
}

/* Reads spool/dir/name whole, of exactly `want` bytes when want != SIZE_MAX. */
static int read_part(const char *dir, const char *name, size_t want, unsigned char **out,
                     size_t *n, Err *e)
{
	StrBuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", dir, name);
	char *data;
	size_t len;
	int rc = read_file(path.p, &data, &len, e);
	if (rc == 0 && want != SIZE_MAX && len != want) {
		rc = err_set(e, "%s: %zu bytes, the record says %zu", path.p, len, want);
		free(data);
	}
	if (rc == 0) {
		*out = (unsigned char *)data;
		if (n)
			*n = len;
	}
	sb_release(&path);
	return rc;
}

static int get_dims(JsonDoc *d, const cJSON *o, const char *key, unsigned dims[3])
{
	const cJSON *a = json_member(d, o, key, JSON_REQUIRED);
	if (!a)
		return -1;
	size_t mark = json_push(d, key);
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3)
		return json_bad(d, "expected an array of three integers");
	for (int i = 0; i < 3; i++) {
		int64_t v;
		size_t m2 = json_push_index(d, (size_t)i);
		if (json_int(d, cJSON_GetArrayItem(a, i), 1, 4294967295.0, &v) < 0)
			return -1;
		json_pop(d, m2);
		dims[i] = (unsigned)v;
	}
	json_pop(d, mark);
	return 0;
}

static int get_hex(JsonDoc *d, const cJSON *o, const char *key, uint64_t *out)
{
	char *s = NULL;
	if (json_get_string(d, o, key, JSON_REQUIRED | JSON_NONEMPTY, &s) < 0)
		return -1;
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 16);
	int rc = 0;
	if (errno || *end || strncmp(s, "0x", 2) != 0)
		rc = json_bad_at(d, key, "'%s' is not a hexadecimal address", s);
	free(s);
	return rc;
}

static const char *const record_keys[] = {"kernel",       "launch",
                                          "api",          "module",
                                          "grid",         "block",
                                          "cluster",      "dynamic_shared_bytes",
                                          "param_size",   "param_source",
                                          "params",       "allocations",
                                          "synchronised", "arrays",
                                          "objects",      "cooperative",
                                          "attributes",   NULL};

static const char *const format_names[] = {"u8", "u16", "u32", "s8", "s16", "s32", "f16", "f32",
                                           NULL};
static const unsigned format_sizes[] = {1, 2, 4, 1, 2, 4, 2, 4};
static const char *const filter_names[] = {"point", "linear", NULL};
static const char *const address_names[] = {"clamp", "wrap", "border", "mirror", NULL};

/* The "arrays" and "objects" of a record (CUDA arrays behind texture and
 * surface parameters) and their rI.before / rI.after copies. */
static int load_arrays(JsonDoc *d, const cJSON *o, const char *dir, CapRecord *r, Err *e)
{
	const cJSON *as = json_member(d, o, "arrays", 0), *os = json_member(d, o, "objects", 0);
	if (!as && !os)
		return 0;
	if (!as || !os || !cJSON_IsArray(as) || !cJSON_IsArray(os))
		return json_bad(d, "'arrays' and 'objects' are arrays, given together");
	size_t mark = json_push(d, "arrays");
	r->arrays = xcalloc((size_t)cJSON_GetArraySize(as) + 1, sizeof(*r->arrays));
	for (int i = 0; i < cJSON_GetArraySize(as); i++) {
		const cJSON *a = cJSON_GetArrayItem(as, i);
		size_t m2 = json_push_index(d, (size_t)i);
		CapArray *ar = &r->arrays[r->narrays++];
		int64_t w, h, ch;
		int fmt = 0, filter = 0, address = 0;
		if (json_object(d, a) < 0 ||
		    json_get_int(d, a, "width", JSON_REQUIRED, 1, 65536, &w) < 0 ||
		    json_get_int(d, a, "height", JSON_REQUIRED, 1, 65536, &h) < 0 ||
		    json_get_int(d, a, "channels", JSON_REQUIRED, 1, 4, &ch) < 0 ||
		    json_get_enum(d, a, "format", JSON_REQUIRED, format_names, &fmt) < 0 ||
		    json_get_bool(d, a, "texture", 0, &ar->texture) < 0 ||
		    json_get_bool(d, a, "surface", 0, &ar->surface) < 0 ||
		    json_get_enum(d, a, "filter", 0, filter_names, &filter) < 0 ||
		    json_get_enum(d, a, "address", 0, address_names, &address) < 0 ||
		    json_get_bool(d, a, "normalized", 0, &ar->normalized) < 0 ||
		    json_get_bool(d, a, "read_float", 0, &ar->read_float) < 0)
			return -1;
		ar->width = (unsigned)w, ar->height = (unsigned)h, ar->channels = (unsigned)ch;
		snprintf(ar->format, sizeof ar->format, "%s", format_names[fmt]);
		snprintf(ar->filter, sizeof ar->filter, "%s", filter_names[filter]);
		snprintf(ar->address, sizeof ar->address, "%s", address_names[address]);
		ar->bytes = (uint64_t)w * (uint64_t)h * (uint64_t)ch * format_sizes[fmt];
		char part[32];
		snprintf(part, sizeof part, "r%d.before", i);
		if (read_part(dir, part, ar->bytes, &ar->before, NULL, e) < 0)
			return -1;
		snprintf(part, sizeof part, "r%d.after", i);
		if (read_part(dir, part, ar->bytes, &ar->after, NULL, e) < 0)
			return -1;
		json_pop(d, m2);
	}
	json_pop(d, mark);
	mark = json_push(d, "objects");
	r->objects = xcalloc((size_t)cJSON_GetArraySize(os) + 1, sizeof(*r->objects));
	for (int i = 0; i < cJSON_GetArraySize(os); i++) {
		const cJSON *b = cJSON_GetArrayItem(os, i);
		size_t m2 = json_push_index(d, (size_t)i);
		CapObject *ob = &r->objects[r->nobjects++];
		int64_t off, arr;
		if (json_object(d, b) < 0 ||
		    json_get_int(d, b, "offset", JSON_REQUIRED, 0, 65528, &off) < 0 ||
		    json_get_bool(d, b, "surface", JSON_REQUIRED, &ob->surface) < 0 ||
		    json_get_int(d, b, "array", JSON_REQUIRED, 0, (double)r->narrays - 1, &arr) < 0)
			return -1;
		ob->offset = (uint32_t)off;
		ob->array = (unsigned)arr;
		json_pop(d, m2);
	}
	json_pop(d, mark);
	return 0;
}

/* The "attributes" of a record: [{"id": N, "value": [eight u32]}]. */
static int load_attrs(JsonDoc *d, const cJSON *o, CapRecord *r)
{
	const cJSON *as = json_member(d, o, "attributes", 0);
	if (!as)
		return 0;
	size_t mark = json_push(d, "attributes");
	if (!cJSON_IsArray(as))
		return json_bad(d, "expected an array");
	r->attrs = xcalloc((size_t)cJSON_GetArraySize(as) + 1, sizeof(*r->attrs));
	for (int i = 0; i < cJSON_GetArraySize(as); i++) {
		const cJSON *a = cJSON_GetArrayItem(as, i), *v;
		size_t m2 = json_push_index(d, (size_t)i);
		CapAttr *at = &r->attrs[r->nattrs++];
		int64_t id;
		static const char *const keys[] = {"id", "value", NULL};
		if (json_object(d, a) < 0 || json_keys(d, a, keys) < 0 ||
		    json_get_int(d, a, "id", JSON_REQUIRED, 0, 4294967295.0, &id) < 0 ||
		    !(v = json_member(d, a, "value", JSON_REQUIRED)))
			return -1;
		at->id = (unsigned)id;
		size_t m3 = json_push(d, "value");
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 8)
			return json_bad(d, "expected an array of eight 32-bit words");
		for (int k = 0; k < 8; k++) {
			int64_t w;
			size_t m4 = json_push_index(d, (size_t)k);
			if (json_int(d, cJSON_GetArrayItem(v, k), 0, 4294967295.0, &w) < 0)
				return -1;
			json_pop(d, m4);
			at->value[k] = (uint32_t)w;
		}
		json_pop(d, m3);
		json_pop(d, m2);
	}
	json_pop(d, mark);
	return 0;
}

int cap_record_load(const char *spool, const char *name, CapRecord *r, Err *e)
{
	memset(r, 0, sizeof(*r));
	StrBuf dir = STRBUF_INIT, file = STRBUF_INIT;
	sb_addf(&dir, "%s/%s", spool, name);
	sb_addf(&file, "%s/record.json", dir.p);
	char *text = NULL, *module = NULL;
	size_t len;
	int rc = -1;
	JsonDoc d = {0};
	if (read_file(file.p, &text, &len, e) < 0 ||
	    json_parse(&d, file.p, text, len, e) < 0)
		goto out;
	const cJSON *o = d.root;
	int64_t v;
	if (json_object(&d, o) < 0 || json_keys(&d, o, record_keys) < 0 ||
	    json_get_string(&d, o, "kernel", JSON_REQUIRED | JSON_NONEMPTY, &r->kernel) <
	        0 ||
	    json_get_int(&d, o, "launch", JSON_REQUIRED, 1, 4294967295.0, &v) < 0)
		goto out;
	r->launch = (unsigned)v;
	r->cluster[0] = r->cluster[1] = r->cluster[2] = 1;
	if (json_get_string(&d, o, "api", JSON_REQUIRED | JSON_NONEMPTY, &r->api) < 0 ||
	    json_get_string(&d, o, "module", JSON_REQUIRED | JSON_NONEMPTY, &module) <
	        0 ||
	    get_dims(&d, o, "grid", r->grid) < 0 ||
	    get_dims(&d, o, "block", r->block) < 0 ||
	    (json_member(&d, o, "cluster", 0) &&
	     get_dims(&d, o, "cluster", r->cluster) < 0))
		goto out;
	v = 0;
	if (json_get_int(&d, o, "dynamic_shared_bytes", 0, 0, 4294967295.0, &v) < 0)
		goto out;
	r->dynamic_shared_bytes = (uint32_t)v;
	if (json_get_int(&d, o, "param_size", JSON_REQUIRED, 0, 65536, &v) < 0)
		goto out;
	r->param_size = (uint32_t)v;
	if (json_get_string(&d, o, "param_source", JSON_REQUIRED | JSON_NONEMPTY,
	                    &r->param_source) < 0 ||
	    json_get_bool(&d, o, "synchronised", 0, &r->synchronised) < 0 ||
	    json_get_bool(&d, o, "cooperative", 0, &r->cooperative) < 0 ||
	    load_attrs(&d, o, r) < 0)
		goto out;
	const cJSON *ps = json_member(&d, o, "params", JSON_REQUIRED);
	if (!ps)
		goto out;
	size_t mark = json_push(&d, "params");
	if (!cJSON_IsArray(ps)) {
		json_bad(&d, "expected an array");
		goto out;
	}
	for (int i = 0; i < cJSON_GetArraySize(ps); i++) {
		const cJSON *p = cJSON_GetArrayItem(ps, i);
		size_t m2 = json_push_index(&d, (size_t)i);
		int64_t off, size;
		if (json_object(&d, p) < 0 ||
		    json_get_int(&d, p, "offset", JSON_REQUIRED, 0, 65535, &off) < 0 ||
		    json_get_int(&d, p, "size", JSON_REQUIRED, 1, 65536, &size) < 0)
			goto out;
		if (off + size > r->param_size) {
			json_bad(&d,
			         "offset %" PRId64 " + %" PRId64
			         " exceeds the %u-byte block",
			         off, size, r->param_size);
			goto out;
		}
		VEC_PUSH(r->params, ((CapParam){(uint32_t)off, (uint32_t)size}));
		json_pop(&d, m2);
	}
	json_pop(&d, mark);
	r->params.block_size = r->param_size;
	const cJSON *as = json_member(&d, o, "allocations", JSON_REQUIRED);
	if (!as)
		goto out;
	mark = json_push(&d, "allocations");
	if (!cJSON_IsArray(as)) {
		json_bad(&d, "expected an array");
		goto out;
	}
	int na = cJSON_GetArraySize(as);
	r->allocs = xcalloc((size_t)na + 1, sizeof(*r->allocs));
	for (int i = 0; i < na; i++) {
		const cJSON *a = cJSON_GetArrayItem(as, i);
		size_t m2 = json_push_index(&d, (size_t)i);
		CapAlloc *al = &r->allocs[r->nallocs];
		int64_t size;
		if (json_object(&d, a) < 0 || get_hex(&d, a, "base", &al->base) < 0 ||
		    json_get_int(&d, a, "size", JSON_REQUIRED, 1, JSON_MAX_INT, &size) <
		        0)
			goto out;
		al->size = (uint64_t)size;
		r->nallocs++;
		char part[32];
		snprintf(part, sizeof part, "a%d.before", i);
		if (read_part(dir.p, part, al->size, &al->before, NULL, e) < 0)
			goto out;
		snprintf(part, sizeof part, "a%d.after", i);
		if (read_part(dir.p, part, al->size, &al->after, NULL, e) < 0)
			goto out;
		json_pop(&d, m2);
	}
	json_pop(&d, mark);
	if (load_arrays(&d, o, dir.p, r, e) < 0 ||
	    read_part(dir.p, "params.bin", r->param_size, &r->param_block, NULL, e) < 0)
		goto out;
	if (strchr(module, '/') || module[0] == '.') {
		err_set(e, "%s: module: '%s' is not a file of the spool's modules folder",
		        file.p, module);
		goto out;
	}
	sb_reset(&dir);
	sb_addf(&dir, "%s/modules", spool);
	if (read_part(dir.p, module, SIZE_MAX, &r->image, &r->image_size, e) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !e->set)
		err_set(e, "%s", err_msg(d.e ? d.e : e));
	json_release(&d);
	free(text);
	free(module);
	sb_release(&dir);
	sb_release(&file);
	if (rc < 0)
		cap_record_release(r);
	return rc;
}

/* ---- 2. the manifest ------------------------------------------------------------ */

/* The launch attributes a replay cannot give, and why (cuda.h's numbers);
 * the ones it gives are gpu/mfattr.h's mf_attr_kinds. */
static const struct {
	unsigned id;
	const char *name, *why;
} unreplayed[] = {
    {1, "access_policy_window", "an L2 persistence window over the program's own addresses"},
    {7, "programmatic_event", "it triggers an event of the program's, which a replay has not"},
    {9, "mem_sync_domain_map", "a replay launches with the default domain map"},
    {12, "launch_completion_event", "it records an event of the program's, which a replay has not"},
    {13, "device_updatable_kernel_node", "it belongs to a graph's kernel node"},
};

/*
 * Does attribute a ask nothing of a launch of r: an ignored entry, the
 * cluster shape ("cluster" says it), a stream's synchronization policy
 * (valid for streams only), a value that is the default (not cooperative,
 * no programmatic serialization, priority 0, the default memory sync
 * domain, no NVLink-centric scheduling), or a cluster scheduling
 * preference for a launch without clusters?  Those are left out of the
 * manifest: a replay without them is the same launch.
 */
static bool asks_nothing(const CapRecord *r, const CapAttr *a)
{
	switch (a->id) {
	case 0: /* CU_LAUNCH_ATTRIBUTE_IGNORE */
	case 3: /* ..._SYNCHRONIZATION_POLICY */
	case 4: /* ..._CLUSTER_DIMENSION */
		return true;
	case 2:  /* ..._COOPERATIVE */
	case 6:  /* ..._PROGRAMMATIC_STREAM_SERIALIZATION */
	case 8:  /* ..._PRIORITY */
	case 10: /* ..._MEM_SYNC_DOMAIN */
	case 16: /* ..._NVLINK_UTIL_CENTRIC_SCHEDULING */
		return a->value[0] == 0;
	case 5: /* ..._CLUSTER_SCHEDULING_POLICY_PREFERENCE */
		return a->value[0] == 0 || r->cluster[0] * r->cluster[1] * r->cluster[2] <= 1;
	default:
		return false;
	}
}

int cap_launch_attrs(const CapRecord *r, StrBuf *json, Err *e)
{
	sb_reset(json);
	bool coop = r->cooperative;
	for (size_t i = 0; i < r->nattrs; i++) {
		const CapAttr *a = &r->attrs[i];
		if (a->id == 2 && a->value[0])
			coop = false; /* given as an attribute: written below */
		bool later = false; /* given again: the driver takes the last */
		for (size_t j = i + 1; j < r->nattrs; j++)
			later |= r->attrs[j].id == a->id;
		if (later || asks_nothing(r, a))
			continue;
		const MfAttrKind *k = mf_attr_kind_of(a->id);
		if (k) {
			sb_adds(json, json->n ? ", \"" : "\"");
			sb_adds(json, k->name);
			if (k->shape)
				sb_addf(json, "\": [%" PRIu32 ", %" PRIu32 ", %" PRIu32 "]",
				        a->value[0], a->value[1], a->value[2]);
			else if (k->lo < 0) /* a signed value */
				sb_addf(json, "\": %" PRId32, (int32_t)a->value[0]);
			else
				sb_addf(json, "\": %" PRIu32, a->value[0]);
			continue;
		}
		const char *name = NULL, *why = "this version of d4r-splice does not know it";
		for (size_t u = 0; u < ARRAY_SIZE(unreplayed); u++)
			if (unreplayed[u].id == a->id)
				name = unreplayed[u].name, why = unreplayed[u].why;
		if (name)
			return err_set(e,
			               "'%s' launch %u: its launch attribute '%s' (id %u) is "
			               "not replayed: %s",
			               r->kernel, r->launch, name, a->id, why);
		return err_set(e, "'%s' launch %u: its launch attribute id %u is not replayed: %s",
		               r->kernel, r->launch, a->id, why);
	}
	if (coop)
		sb_adds(json, json->n ? ", \"cooperative\": 1" : "\"cooperative\": 1");
	return 0;
}

char *cap_layer_name(const CapRecord *r)
{
	char safe[96];
	extract_sanitize(r->kernel, safe, 80);
	StrBuf sb = STRBUF_INIT;
	sb_adds(&sb, safe);
	if (r->launch > 1)
		sb_addf(&sb, "-%u", r->launch);
	return sb.p;
}

/* The allocation holding device address v, or -1. */
static int alloc_of(const CapRecord *r, uint64_t v)
{
	for (size_t i = 0; i < r->nallocs; i++)
		if (v >= r->allocs[i].base && v - r->allocs[i].base < r->allocs[i].size)
			return (int)i;
	return -1;
}

static bool written(const CapAlloc *a)
{
	return memcmp(a->before, a->after, a->size) != 0;
}

static bool array_written(const CapArray *a)
{
	return memcmp(a->before, a->after, a->bytes) != 0;
}

/* The texture or surface object parameter at offset `at`, or NULL. */
static const CapObject *object_at(const CapRecord *r, uint32_t at)
{
	for (size_t i = 0; i < r->nobjects; i++)
		if (r->objects[i].offset == at)
			return &r->objects[i];
	return NULL;
}

static uint64_t rdle(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Pointers into captured allocations stored inside the before-copies. */
static unsigned inner_pointers(const CapRecord *r)
{
	unsigned n = 0;
	for (size_t i = 0; i < r->nallocs; i++) {
		const CapAlloc *a = &r->allocs[i];
		for (uint64_t k = 0; k + 8 <= a->size; k += 8) {
			uint64_t v = rdle(a->before + k, 8);
			if (v && alloc_of(r, v) >= 0)
				n++;
		}
	}
	return n;
}

static void add_literal(StrBuf *o, bool *first, uint32_t off, unsigned size, uint64_t v)
{
	static const char *const kinds[] = {NULL, "u8", "u16", NULL, "u32",
	                                    NULL, NULL, NULL,  "u64"};
	if (size == 8 && v > (uint64_t)JSON_MAX_INT) {
		add_literal(o, first, off, 4, v & 0xffffffffu);
		add_literal(o, first, off + 4, 4, v >> 32);
		return;
	}
	sb_adds(o, *first ? "\n" : ",\n");
	*first = false;
	sb_addf(o,
	        "       {\"offset\": %" PRIu32 ", \"kind\": \"%s\", \"value\": %" PRIu64
	        "}",
	        off, kinds[size], v);
}

/* The fields of one parameter (step 2 of the essay). */
static void param_fields(const CapRecord *r, const CapParam *p, StrBuf *o, bool *first,
                         CapLayerInfo *info)
{
	uint32_t at = p->offset, end = p->offset + p->size;
	while (at < end) {
		unsigned size = 1;
		if (at % 8 == 0 && end - at >= 8)
			size = 8;
		else if (at % 4 == 0 && end - at >= 4)
			size = 4;
		else if (at % 2 == 0 && end - at >= 2)
			size = 2;
		uint64_t v = rdle(r->param_block + at, size);
		int a = size == 8 && v ? alloc_of(r, v) : -1;
		const CapObject *ob = size == 8 ? object_at(r, at) : NULL;
		if (ob) {
			sb_adds(o, *first ? "\n" : ",\n");
			*first = false;
			sb_addf(o, "       {\"offset\": %" PRIu32 ", \"kind\": \"%s\", \"array\": \"t%u\"}",
			        at, ob->surface ? "surface" : "texture", ob->array);
			info->nfields++;
		} else if (a >= 0) {
			sb_adds(o, *first ? "\n" : ",\n");
			*first = false;
			sb_addf(o,
			        "       {\"offset\": %" PRIu32
			        ", \"kind\": \"buffer\", \"buffer\": \"a%d\"",
			        at, a);
			if (v != r->allocs[a].base)
				sb_addf(o, ", \"add\": %" PRIu64, v - r->allocs[a].base);
			sb_adds(o, "}");
			info->pointer_params++;
			info->nfields++;
		} else if (v || p->size <= 8) {
			add_literal(o, first, at, size, v);
			info->nfields++;
		}
		at += size;
	}
}

/* Bytes of a's before-copy up to its last non-zero byte. */
static uint64_t init_length(const CapAlloc *a)
{
	uint64_t n = a->size;
	while (n && !a->before[n - 1])
		n--;
	return n;
}

void cap_manifest_text(const CapRecord *r, const char *layer, const char *module_file,
                       bool with_oracle, const char *oracle_sha256, StrBuf *o,
                       CapLayerInfo *info)
{
	bool fixed = (info->inner_pointers = inner_pointers(r)) != 0 || r->at_recorded_addresses;
	sb_adds(o, "{\n  \"layer\": ");
	sb_add_json(o, layer);
	sb_adds(o, ", \"module\": ");
	sb_add_json(o, module_file);
	sb_adds(o, ",\n  \"entry\": ");
	sb_add_json(o, r->kernel);
	sb_adds(o, ",\n  \"buffers\": {");
	for (size_t i = 0; i < r->nallocs; i++) {
		const CapAlloc *a = &r->allocs[i];
		sb_addf(o, "%s\n    \"a%zu\": {\"size\": %" PRIu64, i ? "," : "", i,
		        a->size);
		if (fixed)
			sb_addf(o, ", \"address\": \"0x%" PRIx64 "\"", a->base);
		if (init_length(a))
			sb_addf(o,
			        ", \"init\": {\"kind\": \"file\", \"path\": "
			        "\"%s/a%zu.bin\"}}",
			        layer, i);
		else
			sb_adds(o, ", \"init\": {\"kind\": \"zero\"}}");
	}
	info->nbuffers = r->nallocs;
	sb_adds(o, r->nallocs ? "\n  },\n" : "},\n");
	if (r->narrays) {
		sb_adds(o, "  \"arrays\": {");
		for (size_t i = 0; i < r->narrays; i++) {
			const CapArray *a = &r->arrays[i];
			sb_addf(o,
			        "%s\n    \"t%zu\": {\"width\": %u, \"height\": %u, \"format\": \"%s\", "
			        "\"channels\": %u,\n           ",
			        i ? "," : "", i, a->width, a->height, a->format, a->channels);
			uint64_t n = a->bytes;
			while (n && !a->before[n - 1])
				n--;
			if (n)
				sb_addf(o, "\"init\": {\"kind\": \"file\", \"path\": \"%s/t%zu.bin\"}", layer,
				        i);
			else
				sb_adds(o, "\"init\": {\"kind\": \"zero\"}");
			if (a->texture)
				sb_addf(o,
				        ",\n           \"texture\": {\"filter\": \"%s\", \"address\": \"%s\", "
				        "\"normalized\": %s, \"read\": \"%s\"}",
				        a->filter, a->address, a->normalized ? "true" : "false",
				        a->read_float ? "normalized_float" : "element");
			if (a->surface)
				sb_adds(o, ", \"surface\": true");
			sb_adds(o, "}");
		}
		sb_adds(o, "\n  },\n");
	}
	sb_adds(o, "  \"launches\": [\n    {\"entry\": ");
	sb_add_json(o, r->kernel);
	sb_addf(o, ", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u]", r->grid[0],
	        r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2]);
	if (r->cluster[0] * r->cluster[1] * r->cluster[2] > 1)
		sb_addf(o, ", \"cluster\": [%u, %u, %u]", r->cluster[0], r->cluster[1],
		        r->cluster[2]);
	StrBuf attrs = STRBUF_INIT;
	Err ig = ERR_INIT;
	if (cap_launch_attrs(r, &attrs, &ig) == 0 && attrs.n)
		sb_addf(o, ",\n     \"attributes\": {%s}", attrs.p);
	err_release(&ig);
	sb_release(&attrs);
	sb_addf(o, ",\n     \"dynamic_shared_bytes\": %" PRIu32 ",\n",
	        r->dynamic_shared_bytes);
	sb_addf(o, "     \"params\": {\"size\": %" PRIu32 ", \"fields\": [",
	        r->param_size);
	bool first = true;
	if (r->params.n) {
		for (size_t i = 0; i < r->params.n; i++)
			param_fields(r, &r->params.v[i], o, &first, info);
	} else if (r->param_size) { /* a block with no layout: one parameter */
		CapParam whole = {0, r->param_size};
		param_fields(r, &whole, o, &first, info);
	}
	sb_adds(o,
	        first ? "]}}\n  ],\n  \"frame\": [" : "\n     ]}}\n  ],\n  \"frame\": [");
	info->noutputs = 0;
	info->frame_size = 0;
	for (size_t i = 0; i < r->nallocs; i++) {
		if (!written(&r->allocs[i]))
			continue;
		sb_addf(o, "%s{\"name\": \"a%zu\", \"buffer\": \"a%zu\"}",
		        info->noutputs ? ", " : "", i, i);
		info->noutputs++;
		info->frame_size += r->allocs[i].size;
	}
	for (size_t i = 0; i < r->narrays; i++) {
		if (!array_written(&r->arrays[i]))
			continue;
		sb_addf(o, "%s{\"name\": \"t%zu\", \"array\": \"t%zu\"}", info->noutputs ? ", " : "",
		        i, i);
		info->noutputs++;
		info->frame_size += r->arrays[i].bytes;
	}
	sb_adds(o, "]");
	if (with_oracle)
		sb_addf(o,
		        ",\n  \"oracle\": {\"path\": \"%s/oracle.frame\", \"sha256\": "
		        "\"%s\"}",
		        layer, oracle_sha256);
	sb_adds(o, "\n}\n");
}

/* ---- 3. where the PTX is ---------------------------------------------------------- */

static bool has_entry(const char *t, size_t n, const char *kernel)
{
	CapParams p;
	Err ig = ERR_INIT;
	int r = cap_ptx_params(t, n, kernel, &p, &ig);
	cap_params_release(&p);
	err_release(&ig);
	return r != 0;
}

/* Does the file `path` hold exactly image[0..n)? */
static bool same_file(const char *path, const unsigned char *image, size_t n)
{
	char *data;
	size_t len;
	Err ig = ERR_INIT;
	bool same =
	    read_file(path, &data, &len, &ig) == 0 && len == n && !memcmp(data, image, n);
	if (!ig.set)
		free(data);
	err_release(&ig);
	return same;
}

typedef struct {
	const CapRecord *r;
	bool need_cubin; /* a NAME.cubin beside must equal the image */
	char *best;      /* the file found */
	bool best_exact; /* its cubin equals the image */
} PtxSearch;

/* Looks at dir/NAME.ptx files (and one level of sub-folders below). */
static void search_dir(PtxSearch *s, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	StrBuf path = STRBUF_INIT;
	while ((de = readdir(d)) && !(s->best && s->best_exact)) {
		if (de->d_name[0] == '.')
			continue;
		sb_reset(&path);
		sb_addf(&path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(path.p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth > 0)
				search_dir(s, path.p, depth - 1);
			continue;
		}
		size_t nl = strlen(de->d_name);
		if (nl < 5 || strcmp(de->d_name + nl - 4, ".ptx") != 0)
			continue;
		char *text;
		size_t len;
		Err ig = ERR_INIT;
		if (read_file(path.p, &text, &len, &ig) < 0) {
			err_release(&ig);
			continue;
		}
		if (has_entry(text, len, s->r->kernel)) {
			StrBuf cubin = STRBUF_INIT;
			sb_addn(&cubin, path.p, path.n - 4);
			sb_adds(&cubin, ".cubin");
			bool there = access(cubin.p, F_OK) == 0;
			bool exact =
			    there && same_file(cubin.p, s->r->image, s->r->image_size);
			if ((exact || (!there && !s->need_cubin)) &&
			    (!s->best || exact)) {
				free(s->best);
				s->best = xstrdup(path.p);
				s->best_exact = exact;
			}
			sb_release(&cubin);
		}
		free(text);
	}
	sb_release(&path);
	closedir(d);
}

/* The PTX entry of a fatbin image that holds the kernel. */
static int fatbin_ptx(const CapRecord *r, char **ptx, size_t *n)
{
	ObjFile obj;
	obj_regions(&obj, r->image, r->image_size);
	FatbinScan s;
	fatbin_scan_init(&s, r->image, r->image_size, &obj);
	FatbinEntry en;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	int found = 0, rc;
	Err ig = ERR_INIT;
	while (!found && (rc = fatbin_scan_next(&s, &en, &ig)) != 0) {
		if (rc > 0 && en.kind == FATBIN_PTX &&
		    fatbin_entry_data(&en, &buf, &cap, &len, &ig) == 0 &&
		    has_entry((const char *)buf, len, r->kernel)) {
			*ptx = xstrndup((const char *)buf, len);
			*n = len;
			found = 1;
		}
		err_release(&ig);
	}
	free(buf);
	obj_release(&obj);
	return found;
}

int cap_find_ptx(const CapRecord *r, const CapWriteOpts *o, char **ptx, size_t *n,
                 char **source, Err *e)
{
	*ptx = NULL;
	*source = NULL;
	CapImageKind k = cap_image_kind(r->image, r->image_size);
	if (k == CAP_IMG_PTX &&
	    has_entry((const char *)r->image, r->image_size, r->kernel)) {
		*ptx = xstrndup((const char *)r->image, r->image_size);
		*n = r->image_size;
		*source = xstrdup("image");
		return 1;
	}
	if (k == CAP_IMG_FATBIN && fatbin_ptx(r, ptx, n)) {
		*source = xstrdup("fatbin");
		return 1;
	}
	PtxSearch s = {.r = r};
	if (o->ptx_from)
		search_dir(&s, o->ptx_from, 2);
	if (!s.best && !o->no_triton) {
		StrBuf dir = STRBUF_INIT;
		const char *env = getenv("TRITON_CACHE_DIR"), *home = getenv("HOME");
		if (o->triton_cache)
			sb_adds(&dir, o->triton_cache);
		else if (env && *env)
			sb_adds(&dir, env);
		else if (home && *home)
			sb_addf(&dir, "%s/.triton/cache", home);
		s.need_cubin = true;
		if (dir.n)
			search_dir(&s, dir.p, 1);
		sb_release(&dir);
	}
	if (!s.best)
		return 0;
	if (read_file(s.best, ptx, n, e) < 0) {
		free(s.best);
		return -1;
	}
	*source = s.best;
	return 1;
}

/* ---- 4. the layer folder ------------------------------------------------------------
 */

void cap_layer_info_release(CapLayerInfo *info)
{
	free(info->layer);
	free(info->ptx_source);
	memset(info, 0, sizeof(*info));
}

static int put(const char *dir, const char *name, const void *p, size_t n, Err *e)
{
	StrBuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", dir, name);
	int rc = write_file_atomic(path.p, p, n, e);
	sb_release(&path);
	return rc;
}

static void capture_json(const CapRecord *r, const CapWriteOpts *o,
                         const CapLayerInfo *info, bool with_oracle, StrBuf *j)
{
	sb_adds(j, "{\n  \"kernel\": ");
	sb_add_json(j, r->kernel);
	sb_addf(j, ", \"launch\": %u, \"api\": ", r->launch);
	sb_add_json(j, r->api);
	sb_adds(j, ",\n  \"program\": ");
	sb_add_json(j, o->program);
	if (o->randomisation) {
		sb_adds(j, ", \"address_randomisation\": ");
		sb_add_json(j, o->randomisation);
	}
	sb_adds(j, ",\n  \"ptx\": ");
	if (info->ptx_source)
		sb_add_json(j, info->ptx_source);
	else
		sb_adds(j, "null");
	sb_addf(j, ", \"replay_only\": %s,\n  \"param_source\": ",
	        info->ptx_source ? "false" : "true");
	sb_add_json(j, r->param_source);
	sb_addf(j, ", \"synchronised\": %s, \"cluster\": [%u, %u, %u],\n",
	        r->synchronised ? "true" : "false", r->cluster[0], r->cluster[1],
	        r->cluster[2]);
	StrBuf attrs = STRBUF_INIT;
	Err ig = ERR_INIT;
	cap_launch_attrs(r, &attrs, &ig);
	sb_addf(j, "  \"attributes\": {%s},\n", attrs.p ? attrs.p : "");
	err_release(&ig);
	sb_release(&attrs);
	sb_adds(j, "  \"deterministic\": ");
	if (o->nondeterministic) {
		sb_adds(j, "false, \"differs\": ");
		sb_add_json(j, o->nondeterministic);
	} else {
		sb_adds(j, o->reproduced ? "true" : "null");
	}
	sb_addf(j, ", \"oracle\": %s,\n  \"inner_pointers\": %u, \"buffers\": [",
	        with_oracle ? "true" : "false", info->inner_pointers);
	for (size_t i = 0; i < r->nallocs; i++)
		sb_addf(j,
		        "%s\n    {\"buffer\": \"a%zu\", \"address\": \"0x%" PRIx64
		        "\", \"size\": %" PRIu64 ", \"written\": %s}",
		        i ? "," : "", i, r->allocs[i].base, r->allocs[i].size,
		        written(&r->allocs[i]) ? "true" : "false");
	sb_adds(j, "\n  ],\n  \"arrays\": [");
	for (size_t i = 0; i < r->narrays; i++)
		sb_addf(j, "%s\n    {\"array\": \"t%zu\", \"texture\": %s, \"surface\": %s, \"written\": %s}",
		        i ? "," : "", i, r->arrays[i].texture ? "true" : "false",
		        r->arrays[i].surface ? "true" : "false",
		        array_written(&r->arrays[i]) ? "true" : "false");
	sb_adds(j, r->narrays ? "\n  ]\n}\n" : "]\n}\n");
}

int cap_layer_write(const CapRecord *r, const char *dir, const CapWriteOpts *o,
                    bool with_oracle, CapLayerInfo *info, Err *e)
{
	memset(info, 0, sizeof(*info));
	info->layer = cap_layer_name(r);
	StrBuf ldir = STRBUF_INIT, text = STRBUF_INIT, frame = STRBUF_INIT,
	       mod = STRBUF_INIT;
	char *ptx = NULL;
	size_t ptx_n = 0;
	int rc = -1;
	sb_addf(&ldir, "%s/%s", dir, info->layer);
	if (cap_launch_attrs(r, &text, e) < 0)
		goto out;
	sb_reset(&text);
	bool any = false;
	for (size_t i = 0; i < r->nallocs; i++)
		any |= written(&r->allocs[i]);
	for (size_t i = 0; i < r->narrays; i++)
		any |= array_written(&r->arrays[i]);
	if (!any) {
		err_set(e,
		        "'%s' launch %u wrote none of the %zu buffer%s its parameters "
		        "point to",
		        r->kernel, r->launch, r->nallocs, r->nallocs == 1 ? "" : "s");
		goto out;
	}
	if (mkdir_p(ldir.p, e) < 0)
		goto out;
	int found = cap_find_ptx(r, o, &ptx, &ptx_n, &info->ptx_source, e);
	if (found < 0)
		goto out;
	sb_addf(&mod, "%s/%s", info->layer, found ? "module.ptx" : "module.cubin");
	if (found ? put(ldir.p, "module.ptx", ptx, ptx_n, e)
	          : put(ldir.p, "module.cubin", r->image, r->image_size, e))
		goto out;
	for (size_t i = 0; i < r->nallocs; i++) {
		uint64_t n = init_length(&r->allocs[i]);
		char name[32];
		snprintf(name, sizeof name, "a%zu.bin", i);
		if (n && put(ldir.p, name, r->allocs[i].before, n, e) < 0)
			goto out;
	}
	for (size_t i = 0; i < r->narrays; i++) {
		uint64_t n = r->arrays[i].bytes;
		while (n && !r->arrays[i].before[n - 1])
			n--;
		char name[32];
		snprintf(name, sizeof name, "t%zu.bin", i);
		if (n && put(ldir.p, name, r->arrays[i].before, n, e) < 0)
			goto out;
	}
	for (size_t i = 0; i < r->nallocs; i++)
		if (written(&r->allocs[i]))
			sb_addn(&frame, r->allocs[i].after, r->allocs[i].size);
	for (size_t i = 0; i < r->narrays; i++)
		if (array_written(&r->arrays[i]))
			sb_addn(&frame, r->arrays[i].after, r->arrays[i].bytes);
	sha256_hex(frame.p, frame.n, info->oracle_sha256);
	if (with_oracle) {
		if (put(ldir.p, "oracle.frame", frame.p, frame.n, e) < 0)
			goto out;
	} else {
		StrBuf stale = STRBUF_INIT;
		sb_addf(&stale, "%s/oracle.frame", ldir.p);
		unlink(stale.p);
		sb_release(&stale);
	}
	cap_manifest_text(r, info->layer, mod.p, with_oracle, info->oracle_sha256, &text,
	                  info);
	StrBuf j = STRBUF_INIT;
	capture_json(r, o, info, with_oracle, &j);
	rc = put(ldir.p, "capture.json", j.p, j.n, e);
	sb_release(&j);
	/* The manifest last: a folder with a layer.json is a complete layer. */
	if (rc == 0)
		rc = put(ldir.p, "layer.json", text.p, text.n, e);
out:
	free(ptx);
	sb_release(&ldir);
	sb_release(&text);
	sb_release(&frame);
	sb_release(&mod);
	return rc;
}
