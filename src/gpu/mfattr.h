/*
 * mfattr.h - the launch attributes a manifest's launch may ask for
 * ("attributes": {"priority": 3, "cooperative": 1}), by cuda.h's names:
 * CU_LAUNCH_ATTRIBUTE_PRIORITY is "priority".  The manifest reader parses
 * them (manifest.c), gpu/place.c passes them to cuLaunchKernelEx, and the
 * capture stage writes the ones a program launched with (capture/record.c).
 */
#ifndef D4R_GPU_MFATTR_H
#define D4R_GPU_MFATTR_H

#include "base/json.h"
#include "gpu/manifest.h"

typedef struct {
	const char *name; /* "priority", cuda.h's name in lower case, no prefix */
	unsigned id;      /* its CUlaunchAttributeID: CU_LAUNCH_ATTRIBUTE_PRIORITY */
	bool shape;       /* three integers (else one) */
	double lo, hi;    /* the range of the value (of each of a shape's three) */
} MfAttrKind;

/* Every attribute a manifest may name; ends with a NULL name. */
extern const MfAttrKind mf_attr_kinds[];
/* The kind named `name` / of CUlaunchAttributeID `id`, or NULL. */
const MfAttrKind *mf_attr_kind(const char *name);
const MfAttrKind *mf_attr_kind_of(unsigned id);

/* The "attributes" object of launch object `o` into l->attrs (none: 0);
 * -1 with the JSON path of a name or value it does not take. */
int mf_parse_attributes(JsonDoc *d, const cJSON *o, MfLaunch *l);

#endif
