/*
 * parse.h - PTX text -> Module.
 */
#ifndef D4R_PTX_PARSE_H
#define D4R_PTX_PARSE_H

#include "base/err.h"
#include "module.h"

/*
 * Parses src[0..len) (which must outlive the module).  `name` is used in
 * messages.  Returns the module, or NULL with "name:line:col: what is wrong"
 * and the source line with a caret in `e`.
 */
Module *ptx_parse(const char *name, const char *src, size_t len, Err *e);

#endif
