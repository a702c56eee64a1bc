/*
 * objfile.c - section tables of ELF and PE/COFF files, read defensively.
 *
 * Every field of a header is a claim to check, not a fact: offsets and
 * counts are compared with the file size before anything is read, and a
 * table that does not fit makes the whole file one region (the magic scan
 * then finds the containers anyway).  Only little-endian layouts are read;
 * CUDA binaries are all little-endian.  Sections that occupy no file bytes
 * (SHT_NOBITS, PE sections with no raw data) are left out.
 *
 * Each claim that fails is recorded as a problem at the offset where the
 * bytes should be (or of the field that is impossible).  A file cut short
 * loses its ELF section table first (it is written last), so the program
 * headers, at the front, are checked too: a PT_LOAD segment that runs past
 * the end is the sign of truncation that survives.
 */
#include "objfile.h"

#include "base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

const char *obj_kind_name(ObjKind k)
{
	switch (k) {
	case OBJ_FATBIN: return "fatbin";
	case OBJ_ELF: return "elf";
	case OBJ_PE: return "pe";
	default: return "unknown";
	}
}

static bool is_fatbin_section(const char *name)
{
	return !strcmp(name, ".nv_fatbin") || !strcmp(name, "__nv_relfatbin") ||
	       !strcmp(name, ".nv_fatb") || !strcmp(name, "__nv_fatbin");
}

static void problem(ObjFile *o, uint64_t off, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void problem(ObjFile *o, uint64_t off, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "offset 0x%llx: %s", (unsigned long long)off, buf);
	VEC_PUSH(o->problems, sb.p);
}

/* A section name from name[0..name_n), printable, at most 31 bytes. */
static void sec_name(char out[32], const char *name, size_t name_n)
{
	size_t k = 0;
	for (; k < name_n && k < 31 && name[k]; k++)
		out[k] = name[k] >= 0x20 && name[k] < 0x7f ? name[k] : '?';
	out[k] = 0;
}

static void add(ObjFile *o, size_t n, uint64_t off, uint64_t size, const char *name)
{
	if (off >= n || size == 0)
		return;
	if (size > n - off)
		size = n - off;
	ObjRegion r = {(size_t)off, (size_t)size, "", false};
	memcpy(r.name, name, sizeof r.name);
	r.fatbin = is_fatbin_section(r.name);
	VEC_PUSH(o->regions, r);
}

/* Does [off, off + size) lie inside the n bytes of the file? */
static bool fits(uint64_t off, uint64_t size, size_t n)
{
	return off <= n && size <= n - off;
}

static int by_offset(const void *a, const void *b)
{
	const ObjRegion *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Sorts the regions and trims overlaps, so no byte is scanned twice. */
static void tidy(ObjFile *o)
{
	qsort(o->regions.v, o->regions.n, sizeof *o->regions.v, by_offset);
	size_t w = 0, end = 0;
	for (size_t i = 0; i < o->regions.n; i++) {
		ObjRegion r = o->regions.v[i];
		if (w && r.off < end) {
			size_t r_end = r.off + r.size;
			if (r_end <= end)
				continue;
			r.size = r_end - end;
			r.off = end;
		}
		end = r.off + r.size;
		o->regions.v[w++] = r;
	}
	o->regions.n = w;
}

/* The program headers of an ELF: each PT_LOAD segment's file bytes must be
 * in the file (they are the front of it, so they survive a cut that took
 * the section table). */
static void elf_segments(ObjFile *o, const uint8_t *p, size_t n, bool is64)
{
	uint64_t phoff = is64 ? rd64(p + 0x20) : rd32(p + 0x1c);
	unsigned phentsize = rd16(p + (is64 ? 0x36 : 0x2a));
	unsigned phnum = rd16(p + (is64 ? 0x38 : 0x2c));
	unsigned need = is64 ? 56 : 32;
	if (!phnum)
		return;
	if (phentsize < need) {
		problem(o, is64 ? 0x36 : 0x2a,
		        "program header size %u is too small (%u needed)", phentsize,
		        need);
		return;
	}
	if (!fits(phoff, (uint64_t)phnum * phentsize, n)) {
		problem(o, phoff,
		        "truncated: the program header table (%u entries of %u bytes) "
		        "runs past "
		        "the end of the file (0x%zx bytes)",
		        phnum, phentsize, n);
		return;
	}
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *h = p + phoff + (size_t)i * phentsize;
		if (rd32(h) != 1 /* PT_LOAD */)
			continue;
		uint64_t off = is64 ? rd64(h + 8) : rd32(h + 4);
		uint64_t filesz = is64 ? rd64(h + 0x20) : rd32(h + 0x10);
		if (filesz && !fits(off, filesz, n))
			problem(o, off < n ? n : off,
			        "truncated: segment %u (PT_LOAD, 0x%llx bytes at 0x%llx) "
			        "runs past the "
			        "end of the file (0x%zx bytes)",
			        i, (unsigned long long)filesz, (unsigned long long)off,
			        n);
	}
}

/* ELF32/ELF64 little-endian section headers.  Returns false when unusable. */
static bool elf_sections(ObjFile *o, const uint8_t *p, size_t n)
{
	if (n < 6) {
		problem(o, n, "truncated ELF header (%zu bytes)", n);
		return false;
	}
	bool is64 = p[4] == 2;
	if (!is64 && p[4] != 1) {
		problem(o, 4, "ELF class %u is neither 32-bit (1) nor 64-bit (2)", p[4]);
		return false;
	}
	size_t ehsize = is64 ? 64 : 52;
	if (n < ehsize) {
		problem(o, n, "truncated ELF header (%zu of %zu bytes)", n, ehsize);
		return false;
	}
	if (p[5] != 1 /* ELFDATA2LSB */) {
		problem(
		    o, 5,
		    "ELF data encoding %u is not little-endian (1): not a CUDA binary",
		    p[5]);
		return false;
	}
	elf_segments(o, p, n, is64);
	uint64_t shoff;
	unsigned shentsize, need;
	uint64_t shnum;
	unsigned shstrndx;
	if (is64) {
		shoff = rd64(p + 0x28);
		shentsize = rd16(p + 0x3a);
		shnum = rd16(p + 0x3c);
		shstrndx = rd16(p + 0x3e);
		need = 64;
	} else {
		shoff = rd32(p + 0x20);
		shentsize = rd16(p + 0x2e);
		shnum = rd16(p + 0x30);
		shstrndx = rd16(p + 0x32);
		need = 40;
	}
	if (shoff == 0)
		return false; /* no section table: nothing claimed, the file is scanned */
	if (shentsize < need) {
		problem(o, is64 ? 0x3a : 0x2e,
		        "section header size %u is too small (%u needed)", shentsize,
		        need);
		return false;
	}
	if (!fits(shoff, shentsize, n)) {
		problem(o, shoff,
		        "truncated: the section header table starts past the end of the "
		        "file (0x%zx "
		        "bytes)",
		        n);
		return false;
	}
	const uint8_t *tab = p + shoff;
	/* Over 65279 sections, the count and the name table's index live in
	 * section 0 (sh_size and sh_link). */
	if (shnum == 0)
		shnum = is64 ? rd64(tab + 0x20) : rd32(tab + 0x14);
	if (shstrndx == 0xffff)
		shstrndx = rd32(tab + (is64 ? 0x28 : 0x18));
	if (shnum == 0) {
		problem(o, shoff, "the section header table holds no section");
		return false;
	}
	if (shnum > (n - shoff) / shentsize) {
		problem(o, shoff,
		        "truncated: the section header table (%llu entries of %u bytes) "
		        "runs past "
		        "the end of the file (0x%zx bytes)",
		        (unsigned long long)shnum, shentsize, n);
		return false;
	}
	/* The section-name string table, if it is where it says. */
	const char *strs = NULL;
	uint64_t strs_n = 0;
	if (shstrndx >= shnum) {
		problem(o, is64 ? 0x3e : 0x32,
		        "section name table index %u is past the %llu sections", shstrndx,
		        (unsigned long long)shnum);
	} else if (shstrndx) {
		const uint8_t *s = tab + (size_t)shstrndx * shentsize;
		uint64_t off = is64 ? rd64(s + 0x18) : rd32(s + 0x10);
		uint64_t sz = is64 ? rd64(s + 0x20) : rd32(s + 0x14);
		if (fits(off, sz, n)) {
			strs = (const char *)p + off;
			strs_n = sz;
		} else
			problem(o, off < n ? n : off,
			        "truncated: the section name table (0x%llx bytes at "
			        "0x%llx) runs past "
			        "the end of the file (0x%zx bytes)",
			        (unsigned long long)sz, (unsigned long long)off, n);
	}
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *s = tab + (size_t)i * shentsize;
		uint32_t name = rd32(s), type = rd32(s + 4);
		uint64_t off = is64 ? rd64(s + 0x18) : rd32(s + 0x10);
		uint64_t sz = is64 ? rd64(s + 0x20) : rd32(s + 0x14);
		char nm[32] = "";
		if (strs && name < strs_n)
			sec_name(nm, strs + name, strs_n - name);
		else if (strs && name)
			problem(o, shoff + (size_t)i * shentsize,
			        "section %llu names itself at 0x%x, outside the name "
			        "table (0x%llx bytes)",
			        (unsigned long long)i, name, (unsigned long long)strs_n);
		if (type == 0 /* SHT_NULL */ || type == 8 /* SHT_NOBITS */)
			continue;
		if (sz && !fits(off, sz, n))
			problem(o, off < n ? n : off,
			        "truncated: section %llu '%s' (0x%llx bytes at 0x%llx) "
			        "runs past the end "
			        "of the file (0x%zx bytes)",
			        (unsigned long long)i, nm, (unsigned long long)sz,
			        (unsigned long long)off, n);
		add(o, n, off, sz, nm);
	}
	return o->regions.n > 0;
}

/* PE/COFF: the DOS stub points at "PE\0\0", the COFF header gives the
 * section count and the optional header's size; 40-byte section records
 * follow.  Returns false when unusable. */
static bool pe_sections(ObjFile *o, const uint8_t *p, size_t n)
{
	if (n < 0x40) {
		problem(o, n, "truncated DOS header (%zu of 64 bytes)", n);
		return false;
	}
	uint32_t pe = rd32(p + 0x3c);
	if (!fits(pe, 24, n)) {
		problem(o, pe < n ? n : pe,
		        "truncated: the PE header (24 bytes at 0x%x, named at 0x3c) runs "
		        "past the end "
		        "of the file (0x%zx bytes)",
		        pe, n);
		return false;
	}
	if (memcmp(p + pe, "PE\0\0", 4) != 0) {
		problem(o, pe,
		        "no PE signature where the DOS header points (at 0x3c): not a "
		        "PE/COFF "
		        "file");
		return false;
	}
	const uint8_t *coff = p + pe + 4;
	unsigned nsec = rd16(coff + 2), optsz = rd16(coff + 16);
	uint64_t tab = (uint64_t)pe + 24 + optsz;
	if (nsec == 0) {
		problem(o, pe + 6, "the COFF header declares no section");
		return false;
	}
	if (!fits(tab, (uint64_t)nsec * 40, n)) {
		problem(o, tab < n ? n : tab,
		        "truncated: the section table (%u entries of 40 bytes at 0x%llx) "
		        "runs past the "
		        "end of the file (0x%zx bytes)",
		        nsec, (unsigned long long)tab, n);
		return false;
	}
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *s = p + tab + (size_t)i * 40;
		uint32_t raw_size = rd32(s + 16), raw_off = rd32(s + 20);
		char nm[32];
		sec_name(nm, (const char *)s, 8);
		if (raw_size && !fits(raw_off, raw_size, n))
			problem(o, raw_off < n ? n : raw_off,
			        "truncated: section %u '%s' (0x%x bytes at 0x%x) runs "
			        "past the end of the "
			        "file (0x%zx bytes)",
			        i + 1, nm, raw_size, raw_off, n);
		add(o, n, raw_off, raw_size, nm);
	}
	return o->regions.n > 0;
}

void obj_regions(ObjFile *o, const void *vp, size_t n)
{
	const uint8_t *p = vp;
	memset(o, 0, sizeof *o);
	if (n >= 4 && rd32(p) == FATBIN_MAGIC) {
		o->kind = OBJ_FATBIN;
	} else if (n >= 4 && memcmp(p, "\177ELF", 4) == 0) {
		o->kind = OBJ_ELF;
		o->table_ok = elf_sections(o, p, n);
	} else if (n >= 2 && p[0] == 'M' && p[1] == 'Z') {
		o->kind = OBJ_PE;
		o->table_ok = pe_sections(o, p, n);
	}
	if (o->table_ok) {
		tidy(o);
		return;
	}
	/* No table: one region, walked strictly when the file is a fatbin. */
	o->regions.n = 0;
	if (n) {
		ObjRegion r = {0, n, "", o->kind == OBJ_FATBIN};
		VEC_PUSH(o->regions, r);
	}
}

void obj_release(ObjFile *o)
{
	VEC_FREE(o->regions);
	for (size_t i = 0; i < o->problems.n; i++)
		free(o->problems.v[i]);
	VEC_FREE(o->problems);
}

const ObjRegion *obj_region_at(const ObjFile *o, size_t off)
{
	size_t lo = 0, hi = o->regions.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const ObjRegion *r = &o->regions.v[mid];
		if (off < r->off)
			hi = mid;
		else if (off - r->off >= r->size)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}
