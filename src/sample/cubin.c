/*
 * cubin.c - a function's code in a cubin, and whether two cubins hold the
 * same code for it (sample.h, step 2).
 *
 * A cubin is a 64-bit little-endian ELF file in which ptxas and the JIT put
 * each function's instructions in a section ".text.NAME".  Only the
 * section table is read, every offset checked against the file's size
 * first.  (bin/objfile.c lists a host binary's sections for the fatbin
 * search, with names cut at 31 bytes; a kernel's name is often longer, so
 * the section is looked up here by its whole name.)
 */
#include "sample.h"

#include <string.h>

static uint64_t rd(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int sample_cubin_text(const void *cubin, size_t n, const char *func,
                      const unsigned char **text, size_t *len, Err *e)
{
	const unsigned char *b = cubin;
	if (n < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2 || b[5] != 1)
		return err_set(e, "cubin: not a 64-bit little-endian ELF file");
	uint64_t shoff = rd(b + 0x28, 8), shentsize = rd(b + 0x3a, 2), shnum = rd(b + 0x3c, 2),
	         shstrndx = rd(b + 0x3e, 2);
	if (shentsize < 64 || shoff > n || shnum > (n - shoff) / shentsize || shstrndx >= shnum)
		return err_set(e, "cubin: the section table lies outside the file");
	const unsigned char *str = b + shoff + shstrndx * shentsize;
	uint64_t stroff = rd(str + 0x18, 8), strsize = rd(str + 0x20, 8);
	if (stroff > n || strsize > n - stroff)
		return err_set(e, "cubin: the section names lie outside the file");
	size_t want = strlen(func) + 6;
	for (uint64_t i = 0; i < shnum; i++) {
		const unsigned char *sh = b + shoff + i * shentsize;
		uint64_t name = rd(sh, 4), off = rd(sh + 0x18, 8), size = rd(sh + 0x20, 8);
		if (name >= strsize || strsize - name < want + 1)
			continue;
		const char *nm = (const char *)b + stroff + name;
		if (strncmp(nm, ".text.", 6) || strcmp(nm + 6, func))
			continue;
		if (off > n || size > n - off)
			return err_set(e, "cubin: section '%s' lies outside the file", nm);
		if (!size || size % SAMPLE_INSN_BYTES)
			return err_set(e, "cubin: section '%s' holds %llu bytes, not a whole number of "
			                  "%d-byte instructions",
			               nm, (unsigned long long)size, SAMPLE_INSN_BYTES);
		*text = b + off;
		*len = (size_t)size;
		return 0;
	}
	return err_set(e, "cubin: no section '.text.%s'", func);
}

int sample_same_stream(const void *a, size_t an, const void *b, size_t bn, const char *func,
                       bool *same, size_t *first_diff, Err *e)
{
	const unsigned char *ta, *tb;
	size_t la, lb;
	if (sample_cubin_text(a, an, func, &ta, &la, e) < 0 ||
	    sample_cubin_text(b, bn, func, &tb, &lb, e) < 0)
		return -1;
	size_t i = 0, na = la / SAMPLE_INSN_BYTES, nb = lb / SAMPLE_INSN_BYTES;
	while (i < na && i < nb &&
	       !memcmp(ta + i * SAMPLE_INSN_BYTES, tb + i * SAMPLE_INSN_BYTES, SAMPLE_INSN_BYTES))
		i++;
	*same = na == nb && i == na;
	if (first_diff)
		*first_diff = i;
	return 0;
}
