/*
 * native_internal.h - what native.c (the mma phases) and native_wgmma.c
 * (the wgmma phases) share (native.h is the interface; nothing outside
 * them includes this): a template's formal as the generators collect it,
 * the formals' header lines, and the part of a recipe that does not depend
 * on the form (layer, module, entry, cut, template, bind).
 */
#ifndef D4R_SPLICE_NATIVE_INTERNAL_H
#define D4R_SPLICE_NATIVE_INTERNAL_H

#include "native.h"

#include "ana/ana.h"

#include <cjson/cJSON.h>

typedef struct {
	char name[16]; /* "a", "d", "a_base0" */
	char type[8];  /* ".b32" */
	uint8_t dir;   /* FM_IN, FM_OUT, FM_INOUT (template.h) */
	bool list;
	VEC(uint32_t) regs;
} NativeFormal;
typedef VEC(NativeFormal) NativeFormals;

/* The formal called name in v, made (with type, dir and list) when there
 * is none yet. */
NativeFormal *native_formal(NativeFormals *v, const char *name, const char *type, uint8_t dir,
                            bool list);

/* The first reason a generator refuses a phase: formatted into *err unless
 * it holds one already; -1. */
int native_refuse(StrBuf *err, const char *f, ...) PRINTF_LIKE(2, 3);

/* The template's "//! in ..." lines: the single formals in their order,
 * then the lists in `order` (names). */
void native_formals_header(const NativeFormal *v, size_t n, const char *const *order,
                           size_t norder, StrBuf *t);

/* A new recipe object: layer and module (when req has them), entry, cut
 * (the phase), template, and bind: each formal its register's name in df,
 * single ones first, lists in `order`. */
cJSON *native_recipe_begin(const NativeRequest *req, Dataflow *df, const NativeFormal *v,
                           size_t n, const char *const *order, size_t norder);

#endif
