/*
 * file.h - reading inputs (mapped read-only) and writing outputs atomically.
 *
 * Inputs are mapped, and tokens and statements point into the mapping.
 * Outputs go to a temporary file beside the target and are renamed into
 * place on commit, so a failure never leaves half a file behind.
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

int map_open(MapFile *mf, const char *path, Err *e);
void map_close(MapFile *mf);

typedef struct {
	FILE *f;
	char *path;      /* final path */
	char *tmp;       /* temporary path beside it */
} OutFile;

/* Opens a temporary file beside `path` ("-" means stdout, not atomic). */
int out_open(OutFile *o, const char *path, Err *e);
/* Flushes, closes and renames into place. */
int out_commit(OutFile *o, Err *e);
/* Closes and removes the temporary file. */
void out_abort(OutFile *o);
/* Whole-buffer convenience: writes atomically. */
int write_file_atomic(const char *path, const void *p, size_t n, Err *e);
/* Reads a whole file into a malloc'd buffer (NUL-terminated). */
int read_file(const char *path, char **out, size_t *n, Err *e);
int mkdir_p(const char *path, Err *e);

#endif
