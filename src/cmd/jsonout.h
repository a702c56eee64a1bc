/*
 * jsonout.h - what --json prints, for every verb: one JSON document on
 * standard output, with one set of conventions (d4r-splice(1), JSON OUTPUT,
 * lists each verb's fields):
 *
 *   - the document is one object, its keys snake_case;
 *   - "status" first: "ok" when the verb did its work, whatever it found
 *     (a difference, no match), "error" when it could not, with "message"
 *     saying why (the main job and run also say "fault" and "hang");
 *   - "exit": the exit status the command ends with (0, 1, 2);
 *   - statement numbers (sN) and 1-based source lines are integers; a
 *     statement range is [first, last]; byte sizes and offsets are
 *     integers; times are seconds unless the key ends in _ms.
 *
 * A verb builds its document with cJSON and hands it to cmd_json_print,
 * which puts "status" and "exit" in front and prints it.  Every exit path
 * prints exactly one document: when a command that was asked for JSON ends
 * without having printed one (an option error, an error before the verb
 * had anything to say), cmd_json_finish prints {"status": "error", "exit":
 * N, "message": ...} with the first error the command reported on stderr
 * (cmd_fail, the option parser and cmd_json_error record it).  --help and
 * --list-options print their text and no JSON.
 *
 * Decisions:
 *  - Whether JSON was asked for is decided from the words before any "--"
 *    before the options are parsed (cmd_json_request), so that an option
 *    error is a JSON document too; the verb's own --json flag says the same
 *    thing once parsed.
 *  - The human messages stay on stderr in JSON mode: a script reads
 *    stdout, a person reading the log sees why.
 *  - One document per command: a verb that would print results of its own
 *    on stdout (splice -o -, recipe new -o -) refuses --json with them.
 *  - One name for one thing: the result of ptxas is the "ptxas" object
 *    (cmd_json_ptxas) wherever ptxas ran; a cut is "stmt_range",
 *    "line_range" and "mma" (cmd_json_cut); a file is named by one rule
 *    (cmd_path_shown): relative to the current folder when it lies inside
 *    it, however the tool found it (a layer's module found from the
 *    repository is "corpus/enc4/enc4.ptx", not an absolute path), else as
 *    it is.  The printers apply the rule to the keys that name files
 *    (module, recipe, template, oracle, output, path, file, junit, ...),
 *    so no verb can print one absolute and another relative.
 */
#ifndef D4R_CMD_JSONOUT_H
#define D4R_CMD_JSONOUT_H

#include "base/base.h"
#include "base/strbuf.h"
#include "splice/ptxas.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* Starts JSON mode when "--json" is one of argv[1..argc) before a "--". */
void cmd_json_request(int argc, char **argv);
/* Starts JSON mode (a verb's parsed --json flag). */
void cmd_json_start(void);
bool cmd_json_on(void);

/* Records `msg` as the command's error for the error document (the first
 * one recorded wins; a leading "d4r-splice: " is dropped).  Prints
 * nothing: the caller has printed it. */
void cmd_json_error(const char *msg);
/* The error recorded, or NULL. */
const char *cmd_json_error_msg(void);

/*
 * Prints `doc` as the command's document and deletes it: "status" (kept
 * when the verb set it, else "ok", or "error" when rc is EXIT_ERROR) and
 * "exit" (rc) come first, and "message" (the recorded error) is added to
 * an error document that has none.  Returns rc.  In JSON mode only one
 * document is printed: a second call deletes its document unprinted.
 */
int cmd_json_print(cJSON *doc, int rc);
/* cmd_json_print of a document given as JSON text (a verb that writes its
 * JSON as text); text that does not parse becomes an error document. */
int cmd_json_print_text(const char *text, int rc);
/* Called by main.c when the verb returns: in JSON mode, with no document
 * printed and rc != 0, prints the error document.  Returns rc. */
int cmd_json_finish(int rc);

/* [a, b]: an inclusive statement range. */
cJSON *cmd_json_range(uint32_t a, uint32_t b);
/* The cut of phase N of `entry` in m (with its epilogue when asked), or of
 * statements [a, b] when phase is 0: {"stmt_range": [a, b], "line_range":
 * [la, lb], "mma": N}; null when there is no such cut. */
typedef struct Module Module;
cJSON *cmd_json_cut(const Module *m, const char *entry, unsigned phase, bool with_epilogue,
                    uint32_t a, uint32_t b);
/* A path as the tool shows it (jsonout.h: relative to the current folder
 * when the file lies inside it, else as it is).  Returns `path` or a
 * pointer into it. */
const char *cmd_path_shown(const char *path);
/* Every string under a file-naming key (module, recipe, ...) of doc, at any
 * depth, through cmd_path_shown; the printers call it. */
void cmd_json_paths(cJSON *doc);
/* o[key] = the n bytes at p as a string. */
void cmd_json_strn(cJSON *o, const char *key, const char *p, size_t n);
/* o[key] = s, or null when s is NULL. */
void cmd_json_str_or_null(cJSON *o, const char *key, const char *s);
/* "ptxas": {"arch": ARCH (when not NULL), "accepted": ..., "messages": LOG,
 * "cached": whether the answer came from the cache, "cache_key": its key or
 * null} into o (pc NULL: not cached, no key), or null when ptxas did not
 * run. */
void cmd_json_ptxas(cJSON *o, bool ran, const char *arch, bool accepted,
                    const StrBuf *log, const PtxasCache *pc);
/* " (cached)" when ptxas's answer came from the cache, else "": the text
 * outputs' note after a ptxas verdict. */
const char *cmd_ptxas_cached(const PtxasCache *pc);

#endif
