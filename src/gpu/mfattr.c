/*
 * mfattr.c - a manifest launch's "attributes" (mfattr.h).
 *
 * Decisions:
 *  - The names are cuda.h's, in lower case without the
 *    CU_LAUNCH_ATTRIBUTE_ prefix, and the numbers are cuda.h's too, so the
 *    table needs no CUDA header and a manifest reads as the driver's API.
 *  - Only attributes a replay can give are here: values (a priority, a
 *    carveout, cooperative) and a shape.  Events of the program's and
 *    windows over its addresses are not, and a manifest naming one is
 *    refused, listing the names it takes.
 */
#include "gpu/mfattr.h"

#include <string.h>

const MfAttrKind mf_attr_kinds[] = {
    {"cooperative", 2, false, 0, 1},
    {"cluster_scheduling_policy_preference", 5, false, 0, 2},
    {"programmatic_stream_serialization", 6, false, 0, 1},
    {"priority", 8, false, -2147483648.0, 2147483647.0},
    {"mem_sync_domain", 10, false, 0, 1},
    {"preferred_cluster_dimension", 11, true, 1, 16},
    {"preferred_shared_memory_carveout", 14, false, 0, 4294967295.0},
    {"nvlink_util_centric_scheduling", 16, false, 0, 1},
    {NULL, 0, false, 0, 0},
};

const MfAttrKind *mf_attr_kind(const char *name)
{
	for (const MfAttrKind *k = mf_attr_kinds; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

const MfAttrKind *mf_attr_kind_of(unsigned id)
{
	for (const MfAttrKind *k = mf_attr_kinds; k->name; k++)
		if (k->id == id)
			return k;
	return NULL;
}

/* A shape: three integers, the first in [lo, hi], the others up to 65535. */
static int shape(JsonDoc *d, const cJSON *j, const MfAttrKind *k, uint32_t v[3])
{
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != 3)
		return json_bad(d, "expected an array of three integers");
	for (int i = 0; i < 3; i++) {
		size_t mark = json_push_index(d, (size_t)i);
		int64_t x;
		if (json_int(d, cJSON_GetArrayItem(j, i), k->lo, i ? 65535 : k->hi, &x) <
		    0)
			return -1;
		json_pop(d, mark);
		v[i] = (uint32_t)x;
	}
	return 0;
}

int mf_parse_attributes(JsonDoc *d, const cJSON *o, MfLaunch *l)
{
	const cJSON *as = json_member(d, o, "attributes", JSON_OPTIONAL);
	if (!as)
		return 0;
	size_t mark = json_push(d, "attributes");
	if (!cJSON_IsObject(as))
		return json_bad(d, "expected an object of launch attributes");
	for (const cJSON *a = as->child; a; a = a->next) {
		const MfAttrKind *k = mf_attr_kind(a->string);
		if (!k || l->nattrs == MF_MAX_ATTRS) {
			StrBuf names = STRBUF_INIT;
			for (const MfAttrKind *q = mf_attr_kinds; q->name; q++)
				sb_addf(&names, "%s%s", q == mf_attr_kinds ? "" : ", ",
				        q->name);
			json_bad_at(
			    d, a->string,
			    "'%s' is not a launch attribute a replay can set (%s)",
			    a->string, names.p);
			sb_release(&names);
			return -1;
		}
		MfAttr *at = &l->attrs[l->nattrs++];
		at->id = k->id;
		size_t m2 = json_push(d, a->string);
		int64_t v;
		if (k->shape ? shape(d, a, k, at->v) < 0
		             : json_int(d, a, k->lo, k->hi, &v) < 0)
			return -1;
		json_pop(d, m2);
		if (!k->shape)
			at->v[0] = (uint32_t)v;
	}
	json_pop(d, mark);
	return 0;
}
