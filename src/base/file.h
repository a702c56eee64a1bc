/*
 * file.h - reading inputs (mapped read-only) and writing outputs: the one
 * owner of "write an output file", used by every output of every verb.
 *
 * Inputs are mapped, and tokens and statements point into the mapping.
 *
 * An output never replaces what is not its own:
 *
 *   - a regular file or a new path is written to a temporary file beside
 *     it (NAME.tmpXXXXXX, registered in temp.h so that no exit path leaves
 *     it behind) and renamed onto it when complete, so a failure never
 *     leaves half a file; the file it replaces keeps its permissions;
 *   - a symbolic link is followed: the file it names is written (created
 *     when the link dangles), and the link stays;
 *   - a device node, a FIFO or a socket is written through, never
 *     replaced: `-o /dev/null` discards, `-o /dev/stdout` writes to
 *     standard output (whatever that is: a terminal, a pipe, a file);
 *   - a directory is an error;
 *   - an input of the command (registered with file_input_add: the
 *     module, recipe, template, oracle, manifest, init files) is refused,
 *     by device and inode, so another spelling of the path or a hard link
 *     is refused too.  Verbs call out_check on each output before any work,
 *     so the refusal comes first; out_open checks again.
 *
 * Decisions:
 *   - "-" is standard output; a file written through
 *     cannot be undone, so a failure may leave part of it (as `cmd >dev`
 *     would).
 *   - Standard output or error given by a path (/dev/stdout,
 *     /proc/self/fd/1, or the very file stdout is redirected to) is
 *     written through its descriptor: replacing that file would leave the
 *     shell's redirection pointing at a deleted one.
 *   - Only regular files count as inputs that outputs must not replace:
 *     reading /dev/stdin and writing /dev/stdout is fine.
 */
#ifndef D4R_FILE_H
#define D4R_FILE_H

#include "base.h"
#include "err.h"
#include <stdio.h>

typedef struct {
	const char *p;   /* the bytes; never NULL (an empty file maps to "") */
	size_t n;
	char *path;
	int mapped;      /* 1: munmap on close; 0: free */
} MapFile;

/* Maps `path` read-only (reads it when it cannot be mapped: a pipe).  "-"
 * is standard input, read once and named MAP_STDIN_NAME (mf->path and
 * messages); opened again it gives the same bytes. */
int map_open(MapFile *mf, const char *path, Err *e);
void map_close(MapFile *mf);
#define MAP_STDIN_NAME "<stdin>"
/* The name of input `path` in messages: MAP_STDIN_NAME for "-". */
const char *map_name(const char *path);

/* Registers `path` as an input of this command, named `what` ("module",
 * "recipe", "oracle"...) in messages.  Only an existing regular file is
 * recorded (its device and inode, taken now).  Not thread-safe: verbs
 * register their inputs before they start threads. */
void file_input_add(const char *path, const char *what);
/* Forgets every input (for tests). */
void file_inputs_clear(void);
/* Is `path` (following links) one of the inputs? */
bool file_is_input(const char *path);
/*
 * The check out_open makes, for a verb to make on each output before any
 * work (the one check of an output path, used by every verb): -1 with a
 * message when `path` is an input of the command ("refusing to write
 * 'm.ptx': it is the module this command reads"), a directory ("it is a
 * directory"), a new file in a folder that does not exist ("there is no
 * folder 'x' (create it first)") or under a file, or cannot be looked at;
 * 0 for "-", a new path in a folder that exists, and anything out_open may
 * write.
 */
int out_check(const char *path, Err *e);
/* The same for an output whose folder the verb creates (mkdir_p) before it
 * writes: a missing folder passes, one under a file does not. */
int out_check_mkdir(const char *path, Err *e);

typedef struct {
	FILE *f;
	char *path;      /* as given (messages); NULL for standard output */
	char *target;    /* the file renamed onto: path, or what its links name */
	char *tmp;       /* temporary file beside target; NULL when written through */
	int slot;        /* tmp's entry in the temp registry (temp.h), or -1 */
} OutFile;

/* Opens output `path` by the rules above ("-" is standard output).  -1
 * with a message when it may not or cannot be written. */
int out_open(OutFile *o, const char *path, Err *e);
/* Flushes and closes; renames the temporary file into place. */
int out_commit(OutFile *o, Err *e);
/* Closes and removes the temporary file (a file written through keeps
 * what was written). */
void out_abort(OutFile *o);
/* Whole-buffer convenience: out_open, one write, out_commit. */
int write_file_atomic(const char *path, const void *p, size_t n, Err *e);
/* Reads a whole file into a malloc'd buffer (NUL-terminated). */
int read_file(const char *path, char **out, size_t *n, Err *e);
int mkdir_p(const char *path, Err *e);
/* The user's cache folder: $XDG_CACHE_HOME/d4r-splice (an absolute
 * XDG_CACHE_HOME), else ~/.cache/d4r-splice, malloc'd; NULL when neither is
 * known.  The JIT's images and ptxas's answers are kept there. */
char *user_cache_dir(void);

#endif
