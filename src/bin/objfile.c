/*
 * objfile.c - section tables of ELF and PE/COFF files, read defensively.
 *
 * Every field of a header is a claim to check, not a fact: offsets and
 * counts are compared with the file size before anything is read, and a
 * table that does not fit makes the whole file one region (the magic scan
 * then finds the containers anyway).  Only little-endian layouts are read;
 * CUDA binaries are all little-endian.  Sections that occupy no file bytes
 * (SHT_NOBITS, PE sections with no raw data) are left out.
 */
#include "objfile.h"

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

static void add(ObjFile *o, size_t n, uint64_t off, uint64_t size, const char *name,
                size_t name_n)
{
	if (off >= n || size == 0)
		return;
	if (size > n - off)
		size = n - off;
	ObjRegion r = {(size_t)off, (size_t)size, "", false};
	size_t k = 0;
	for (; k < name_n && k < sizeof r.name - 1 && name[k]; k++)
		r.name[k] = name[k] >= 0x20 && name[k] < 0x7f ? name[k] : '?';
	r.name[k] = 0;
	r.fatbin = is_fatbin_section(r.name);
	VEC_PUSH(o->regions, r);
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

/* ELF32/ELF64 little-endian section headers.  Returns false when unusable. */
static bool elf_sections(ObjFile *o, const uint8_t *p, size_t n)
{
	if (n < 52 || p[5] != 1 /* ELFDATA2LSB */)
		return false;
	bool is64 = p[4] == 2;
	if (!is64 && p[4] != 1)
		return false;
	uint64_t shoff;
	unsigned shentsize, shnum, shstrndx, need;
	if (is64) {
		if (n < 64)
			return false;
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
	/* shnum 0 with shoff set means the count lives in section 0's size;
	 * such files (over 65279 sections) are not CUDA libraries: scan. */
	if (shnum == 0 || shentsize < need || shoff > n ||
	    (uint64_t)shnum * shentsize > n - shoff)
		return false;
	const uint8_t *tab = p + shoff;
	/* The section-name string table, if it is where it says. */
	const char *strs = NULL;
	uint64_t strs_n = 0;
	if (shstrndx < shnum) {
		const uint8_t *s = tab + (size_t)shstrndx * shentsize;
		uint64_t off = is64 ? rd64(s + 0x18) : rd32(s + 0x10);
		uint64_t sz = is64 ? rd64(s + 0x20) : rd32(s + 0x14);
		if (off <= n && sz <= n - off) {
			strs = (const char *)p + off;
			strs_n = sz;
		}
	}
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *s = tab + (size_t)i * shentsize;
		uint32_t name = rd32(s), type = rd32(s + 4);
		uint64_t off = is64 ? rd64(s + 0x18) : rd32(s + 0x10);
		uint64_t sz = is64 ? rd64(s + 0x20) : rd32(s + 0x14);
		if (type == 0 /* SHT_NULL */ || type == 8 /* SHT_NOBITS */)
			continue;
		const char *nm = "";
		size_t nm_n = 0;
		if (strs && name < strs_n) {
			nm = strs + name;
			nm_n = strs_n - name;
		}
		add(o, n, off, sz, nm, nm_n);
	}
	return o->regions.n > 0;
}

/* PE/COFF: the DOS stub points at "PE\0\0", the COFF header gives the
 * section count and the optional header's size; 40-byte section records
 * follow.  Returns false when unusable. */
static bool pe_sections(ObjFile *o, const uint8_t *p, size_t n)
{
	if (n < 0x40)
		return false;
	uint32_t pe = rd32(p + 0x3c);
	if (pe > n || n - pe < 24 || memcmp(p + pe, "PE\0\0", 4) != 0)
		return false;
	const uint8_t *coff = p + pe + 4;
	unsigned nsec = rd16(coff + 2), optsz = rd16(coff + 16);
	uint64_t tab = (uint64_t)pe + 24 + optsz;
	if (nsec == 0 || tab > n || (uint64_t)nsec * 40 > n - tab)
		return false;
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *s = p + tab + (size_t)i * 40;
		uint32_t raw_size = rd32(s + 16), raw_off = rd32(s + 20);
		add(o, n, raw_off, raw_size, (const char *)s, 8);
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
