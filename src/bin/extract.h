/*
 * extract.h - PTX modules out of host binaries, deduplicated, with an index.
 *
 * The engine behind `d4r-splice extract`.  For each input it finds the
 * fatbin containers (objfile + fatbin), decompresses every PTX entry, drops
 * the ones whose text is byte-identical to a module already seen (sha256),
 * and writes the others as DIR/NNNN-NAME.ptx, each atomically.  The index,
 * DIR/index.json, is written last by extract_finish: a folder with an index
 * is a complete extraction.
 */
#ifndef D4R_EXTRACT_H
#define D4R_EXTRACT_H

#include "base/base.h"
#include "base/err.h"
#include "bin/fatbin.h"

/* One PTX entry as the engine saw it (passed to the on_module hook). */
typedef struct {
	const char *source;      /* input path */
	const FatbinEntry *en;
	const char *text;        /* the PTX, NUL-terminated */
	size_t size;
	const char *sha256;      /* 64 hex digits */
	const char *name;        /* first .entry (or .func) name, raw; "" if none */
	const char *file;        /* file written, or NULL */
	const char *duplicate_of;  /* file of the identical module, or NULL */
	bool filtered;           /* left out by the arch filter */
} ExtractModule;

typedef struct {
	const char *outdir;    /* NULL: look only (--list) */
	unsigned arch;         /* keep only this sm_XX; 0: all */
	/* Each error as "FILE: offset 0xOFF: what is wrong" (or "FILE: ..."). */
	void (*on_error)(void *ctx, const char *msg);
	void (*on_module)(void *ctx, const ExtractModule *m);
	/* What extract_finish did to files it did not write (may be NULL). */
	void (*on_note)(void *ctx, const char *msg);
	void *ctx;
} ExtractOpts;

typedef struct {
	unsigned files, containers, ptx_entries, written, skipped, filtered, errors;
	uint64_t bytes_written;
} ExtractStats;

typedef struct Extractor Extractor;

/* Creates the output folder if needed, reads the module files a stale
 * index.json lists, and removes it. */
Extractor *extract_new(const ExtractOpts *o, Err *e);
/*
 * Extracts from one input.  Problems with the input (unreadable, corrupt
 * containers, bad entries) go to on_error and count in stats.errors; the
 * rest of the input is still extracted and 0 is returned.  -1 (with e set)
 * only when an output cannot be written: the run cannot go on.
 */
int extract_file(Extractor *x, const char *path, Err *e);
/* Removes the files the earlier index listed that this run did not write
 * (each said through on_note) and writes index.json. */
int extract_finish(Extractor *x, Err *e);
const ExtractStats *extract_stats(const Extractor *x);
void extract_free(Extractor *x);

/*
 * Entry names of a PTX text: calls fn for each `.entry NAME` in order.
 * Returns the count.  extract_first_name gives the first .entry name, else
 * the first .func name, into out (cap bytes), raw (not sanitised).
 */
size_t extract_entry_names(const char *t, size_t n, void (*fn)(void *, Str), void *ctx);
void extract_first_name(const char *t, size_t n, char *out, size_t cap);
/* A file-system-safe, length-limited form of a name: [A-Za-z0-9_.-], no
 * leading dot, at most `max` bytes, "ptx" if nothing is left. */
void extract_sanitize(const char *name, char *out, size_t max);

#endif
