/*
 * arena.h - bump allocator: many small allocations, one release.
 *
 * A module's names, edits and analysis results live in one arena and are
 * freed with it (git's mem_pool).  Memory is never returned piecemeal.
 */
#ifndef D4R_ARENA_H
#define D4R_ARENA_H

#include "base.h"

typedef struct ArenaChunk ArenaChunk;
typedef struct {
	ArenaChunk *head;
	size_t chunk_size;
} Arena;

void arena_init(Arena *a, size_t chunk_size);
void *arena_alloc(Arena *a, size_t n);        /* 16-byte aligned */
void *arena_zalloc(Arena *a, size_t n);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) PRINTF_LIKE(2, 3);
void arena_release(Arena *a);

#endif
