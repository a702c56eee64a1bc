/*
 * json.h - reading a JSON document that has a format: recipes and layer
 * manifests.
 *
 * cJSON parses the text; this is the layer above it that every reader of a
 * format uses, so both formats refuse the same mistakes with messages of
 * one shape:
 *
 *     FILE: PATH: what is wrong
 *     recipes/enc4/layer.json: launches[1].params.size: expected an integer, found a
 * string recipes/enc4/phase-08.json: cut.phase: 0 is out of range [1, 1000000000]
 *     recipes/enc4/phase-08.json: unknown key 'gaurds' (expected one of 'layer', ...)
 *
 * PATH is where the value sits in the document, keys joined by '.' and
 * array indexes in brackets; it is left out for the document itself.  A
 * document that is not JSON at all is located by line and column instead
 * (err_at: "FILE:3:12: invalid JSON", the line and a caret).
 *
 * The reader walks the tree the way the format nests: json_push/json_pop
 * move the path into a member or an element and back, and every getter
 * names the member it reads.  A getter returns 0, or -1 with the message
 * set in the document's Err; a reader stops at the first message.
 *
 * Decisions:
 *  - json_parse refuses, for every format, what cJSON lets through: text
 *    after the document (a second object pasted below the first, a stray
 *    brace) and an object that gives one key twice (cJSON keeps both, and
 *    which one a lookup finds is an accident).  Both are checked over the
 *    whole document, also in parts a format ignores, so no reader has to
 *    remember to ask.
 *  - A NUL is refused wherever it stands, as a byte (cJSON stops reading
 *    there, so what follows would go unchecked) or as a \u0000 escape
 *    (valid JSON, but the C string cJSON gives would end there: a guard
 *    "^mma\u0000junk" would read as "^mma").  The message gives the
 *    offset.
 *  - Unknown keys are the format's list to give (json_keys), because a typo
 *    in an optional key must be an error, never a silently missing guard.
 *  - Integers are JSON numbers with no fraction, and at most 2^53 in size:
 *    beyond that a double no longer holds every integer, so the value read
 *    might not be the one written.
 *  - Optional members: an absent one leaves *out as the caller set it, so
 *    the default is written where the value is used.
 */
#ifndef D4R_JSON_H
#define D4R_JSON_H

#include "base.h"
#include "err.h"

#include <cjson/cJSON.h>

/* The largest integer a JSON number holds exactly: 2^53. */
#define JSON_MAX_INT 9007199254740992.0

typedef struct {
	const char *file; /* names the document in messages */
	Err *e;
	cJSON *root;    /* the document, after json_parse */
	char path[512]; /* where the reader is; "" at the top */
} JsonDoc;

/* Flags of the member getters. */
enum {
	JSON_OPTIONAL = 0,
	JSON_REQUIRED = 1, /* absent: "PATH: missing key 'k'" */
	JSON_NONEMPTY = 2, /* strings: "" is refused ("empty string") */
};

/*
 * Parses text[0..len) into d->root.  Returns 0, or -1 with
 * "file:line:col: invalid JSON" (the place cJSON stopped), "file:line:col:
 * text after the JSON document", "file:line:col: NUL byte at offset N ...",
 * or "file: PATH: key 'k' given twice".
 * Release d with json_release either way.
 */
int json_parse(JsonDoc *d, const char *file, const char *text, size_t len, Err *e);
void json_release(JsonDoc *d);

/* Records "file: PATH: what" (or "file: what" at the top); returns -1. */
int json_bad(JsonDoc *d, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* The same about member `key` of where the reader is. */
int json_bad_at(JsonDoc *d, const char *key, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Moves the path into member `key` or element `i`; returns what to hand
 * json_pop to move back. */
size_t json_push(JsonDoc *d, const char *key);
size_t json_push_index(JsonDoc *d, size_t i);
void json_pop(JsonDoc *d, size_t mark);

/* "a string", "a number", "a boolean", "null", "an array", "an object". */
const char *json_type(const cJSON *j);

/*
 * Checks of the value `j` at the current path.  json_int takes an integer
 * in [lo, hi] (within 2^53); json_number any finite number.
 */
int json_object(JsonDoc *d, const cJSON *j);
int json_int(JsonDoc *d, const cJSON *j, double lo, double hi, int64_t *out);
int json_number(JsonDoc *d, const cJSON *j, double *out);

/*
 * Every key of object `o` must be one of the NULL-terminated `keys`, else
 * "PATH: unknown key 'k' (expected one of 'a', 'b')".
 */
int json_keys(JsonDoc *d, const cJSON *o, const char *const *keys);

/* Member `key` of object `o`, or NULL when absent ("missing key" when
 * flags has JSON_REQUIRED). */
const cJSON *json_member(JsonDoc *d, const cJSON *o, const char *key, unsigned flags);

/*
 * Typed members of object `o`.  Each names the member in its message
 * ("PATH.key: expected a string, found a number"); an absent optional
 * member leaves *out alone and returns 0.
 *   json_get_string  a malloc'd copy
 *   json_get_int     an integer in [lo, hi]
 *   json_get_number  a finite number
 *   json_get_bool    true or false
 *   json_get_enum    a string among the NULL-terminated `names`: its index
 */
int json_get_string(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                    char **out);
int json_get_int(JsonDoc *d, const cJSON *o, const char *key, unsigned flags, double lo,
                 double hi, int64_t *out);
int json_get_number(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                    double *out);
int json_get_bool(JsonDoc *d, const cJSON *o, const char *key, unsigned flags, bool *out);
int json_get_enum(JsonDoc *d, const cJSON *o, const char *key, unsigned flags,
                  const char *const *names, int *out);

#endif
