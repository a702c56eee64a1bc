/*
 * arena.c - chunked bump allocator.
 */
#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaChunk {
	ArenaChunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

void arena_init(Arena *a, size_t chunk_size)
{
	a->head = NULL;
	a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
}

void *arena_alloc(Arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	ArenaChunk *c = a->head;
	if (!c || c->size - c->used < n) {
		size_t size = n > a->chunk_size ? n : a->chunk_size;
		c = xmalloc(sizeof(*c) + size);
		c->used = 0;
		c->size = size;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += n;
	return p;
}

void *arena_zalloc(Arena *a, size_t n)
{
	void *p = arena_alloc(a, n);
	memset(p, 0, n);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void arena_release(Arena *a)
{
	ArenaChunk *c = a->head;
	while (c) {
		ArenaChunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}
