/*
 * nvinfo.c - a kernel's parameter layout, read from what the driver was
 * handed: the cubin's .nv.info records, or the PTX entry's .param list.
 *
 * The tap needs each parameter's offset and size to copy a launch's
 * kernelParams into one block.  cuFuncGetParamInfo gives them where it
 * works; called inside a CUPTI launch callback on the H200 (driver 580) it
 * gave none, so the layout also comes from the module image:
 *
 *   ELF cubin: section ".nv.info.KERNEL" is a list of attributes, each
 *     u8 format, u8 attribute, then by format: 1 (none), 2 (byte), 3 (u16)
 *     in the next two bytes; 4: u16 size and that many bytes.
 *     EIATTR_KPARAM_INFO (0x17, 12 bytes): u32 index, u16 ordinal,
 *     u16 offset, u32 flags whose bits 18-31 are the size.
 *     EIATTR_PARAM_CBANK (0x0a, 8 bytes): u32 symbol, u16 offset,
 *     u16 size of the block; EIATTR_CBANK_PARAM_SIZE (0x19, u16): the same.
 *     (Read from ptxas 13.0 output; tests/unit/test_capture.c checks it
 *     against ptxas on a kernel whose layout the PTX ISA fixes.)
 *   PTX: `.entry NAME ( .param .u64 a, .param .align 8 .b8 s[24], ... )`,
 *     each parameter at the next multiple of its alignment.
 *   fatbin: the cubin entries (decompressed), then the PTX entries.
 *
 * Decisions:
 *  - This file runs inside PROGRAM as part of the injection library, which
 *    carries neither the PTX parser nor cJSON; the PTX scan here reads only
 *    the one entry's parameter list, after skipping comments and strings.
 *  - Nothing in an image is trusted: every offset and size is checked
 *    against the bytes that are there before it is used.
 */
#include "capture/capture.h"

#include "bin/fatbin.h"
#include "bin/objfile.h"

#include <stdlib.h>
#include <string.h>

void cap_params_release(CapParams *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static void push_param(CapParams *p, uint32_t off, uint32_t size)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n].offset = off;
	p->v[p->n].size = size;
	p->n++;
}

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const unsigned char *p)
{
	return rd16(p) | (uint32_t)rd16(p + 2) << 16;
}
static uint64_t rd64(const unsigned char *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* ---- 1. ELF sections -------------------------------------------------------- */

typedef struct {
	const unsigned char *p;
	size_t n;
	uint64_t shoff;
	unsigned shnum, shentsize;
	const unsigned char *shstr;
	uint64_t shstr_size;
} Elf;

static int elf_open(Elf *f, const void *p, size_t n, Err *e)
{
	memset(f, 0, sizeof(*f));
	f->p = p;
	f->n = n;
	if (n < 64 || memcmp(p, "\177ELF", 4) != 0 || f->p[4] != 2 || f->p[5] != 1)
		return err_set(e, "offset 0x0: not a 64-bit little-endian ELF file");
	f->shoff = rd64(f->p + 0x28);
	f->shentsize = rd16(f->p + 0x3a);
	f->shnum = rd16(f->p + 0x3c);
	unsigned shstrndx = rd16(f->p + 0x3e);
	if (f->shentsize < 64 || f->shoff > n ||
	    (uint64_t)f->shnum * f->shentsize > n - f->shoff)
		return err_set(
		    e, "offset 0x28: truncated: the section table lies past the end");
	if (shstrndx >= f->shnum)
		return err_set(e, "offset 0x3e: section name table %u of %u sections",
		               shstrndx, f->shnum);
	const unsigned char *sh = f->p + f->shoff + (uint64_t)shstrndx * f->shentsize;
	uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
	if (off > n || size > n - off)
		return err_set(
		    e,
		    "offset 0x%llx: truncated: the section name table lies past the end",
		    (unsigned long long)(f->shoff + (uint64_t)shstrndx * f->shentsize));
	f->shstr = f->p + off;
	f->shstr_size = size;
	return 0;
}

/* Section i's name ("" when it does not lie in the name table). */
static const char *elf_name(const Elf *f, unsigned i, size_t *len)
{
	const unsigned char *sh = f->p + f->shoff + (uint64_t)i * f->shentsize;
	uint32_t at = rd32(sh);
	if (at >= f->shstr_size) {
		*len = 0;
		return "";
	}
	const char *s = (const char *)f->shstr + at;
	const void *z = memchr(s, 0, f->shstr_size - at);
	*len = z ? (size_t)((const char *)z - s) : 0;
	return z ? s : "";
}

/* Section i's bytes; -1 when they lie past the end. */
static int elf_section(const Elf *f, unsigned i, const unsigned char **p, uint64_t *size,
                       Err *e)
{
	const unsigned char *sh = f->p + f->shoff + (uint64_t)i * f->shentsize;
	uint64_t off = rd64(sh + 0x18), sz = rd64(sh + 0x20);
	if (rd32(sh + 4) == 8 /* SHT_NOBITS */)
		sz = 0;
	if (off > f->n || sz > f->n - off)
		return err_set(
		    e, "offset 0x%llx: truncated: section %u lies past the end",
		    (unsigned long long)(f->shoff + (uint64_t)i * f->shentsize), i);
	*p = f->p + off;
	*size = sz;
	return 0;
}

/* The index of the section named `prefix` + `name`, or -1. */
static int elf_find(const Elf *f, const char *prefix, const char *name)
{
	size_t pl = strlen(prefix), nl = strlen(name);
	for (unsigned i = 0; i < f->shnum; i++) {
		size_t len;
		const char *s = elf_name(f, i, &len);
		if (len == pl + nl && memcmp(s, prefix, pl) == 0 &&
		    memcmp(s + pl, name, nl) == 0)
			return (int)i;
	}
	return -1;
}

/* Does the ELF's symbol table (.symtab, with its .strtab) hold `name`? */
static bool elf_has_symbol(const Elf *f, const char *name)
{
	size_t nl = strlen(name);
	for (unsigned i = 0; i < f->shnum; i++) {
		const unsigned char *sh = f->p + f->shoff + (uint64_t)i * f->shentsize;
		if (rd32(sh + 4) != 2 /* SHT_SYMTAB */)
			continue;
		unsigned link = rd32(sh + 0x28);
		uint64_t entsize = rd64(sh + 0x38);
		const unsigned char *sym, *str;
		uint64_t nsym, nstr;
		Err ig = ERR_INIT;
		if (link >= f->shnum || entsize < 24 ||
		    elf_section(f, i, &sym, &nsym, &ig) < 0 ||
		    elf_section(f, link, &str, &nstr, &ig) < 0) {
			err_release(&ig);
			continue;
		}
		for (uint64_t k = 0; k + entsize <= nsym; k += entsize) {
			uint32_t at = rd32(sym + k);
			if (at < nstr && nstr - at > nl &&
			    memcmp(str + at, name, nl) == 0 && str[at + nl] == 0)
				return true;
		}
	}
	return false;
}

/* ---- 2. .nv.info records ------------------------------------------------------ */

enum {
	EIFMT_NVAL = 1,
	EIFMT_BVAL = 2,
	EIFMT_HVAL = 3,
	EIFMT_SVAL = 4,
	EIATTR_PARAM_CBANK = 0x0a,
	EIATTR_KPARAM_INFO = 0x17,
	EIATTR_CBANK_PARAM_SIZE = 0x19,
};

typedef struct {
	uint32_t ordinal, offset, size;
} KParam;

static int by_ordinal(const void *a, const void *b)
{
	const KParam *x = a, *y = b;
	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

int cap_nvinfo_params(const void *elf, size_t n, const char *kernel, CapParams *out,
                      Err *e)
{
	memset(out, 0, sizeof(*out));
	Elf f;
	if (elf_open(&f, elf, n, e) < 0)
		return -1;
	int sec = elf_find(&f, ".nv.info.", kernel);
	if (sec < 0)
		return 0;
	const unsigned char *p;
	uint64_t size;
	if (elf_section(&f, (unsigned)sec, &p, &size, e) < 0)
		return -1;
	uint64_t base = (uint64_t)(p - f.p);
	VEC(KParam) kp = {0};
	uint32_t block = 0;
	for (uint64_t at = 0; at < size;) {
		if (size - at < 2) {
			VEC_FREE(kp);
			return err_set(
			    e, "offset 0x%llx: truncated: .nv.info.%s attribute header",
			    (unsigned long long)(base + at), kernel);
		}
		unsigned fmt = p[at], attr = p[at + 1];
		uint64_t len;
		const unsigned char *val = p + at + 2;
		if (fmt == EIFMT_NVAL || fmt == EIFMT_BVAL || fmt == EIFMT_HVAL) {
			len = 4;
		} else if (fmt == EIFMT_SVAL) {
			if (size - at < 4) {
				VEC_FREE(kp);
				return err_set(e,
				               "offset 0x%llx: truncated: .nv.info.%s "
				               "attribute size",
				               (unsigned long long)(base + at), kernel);
			}
			len = 4 + (uint64_t)rd16(p + at + 2);
			val = p + at + 4;
		} else {
			VEC_FREE(kp);
			return err_set(
			    e, "offset 0x%llx: .nv.info.%s: unknown attribute format %u",
			    (unsigned long long)(base + at), kernel, fmt);
		}
		if (len > size - at) {
			VEC_FREE(kp);
			return err_set(
			    e, "offset 0x%llx: truncated: .nv.info.%s attribute 0x%02x",
			    (unsigned long long)(base + at), kernel, attr);
		}
		uint64_t vlen = fmt == EIFMT_SVAL ? len - 4 : 2;
		if (attr == EIATTR_KPARAM_INFO && fmt == EIFMT_SVAL) {
			if (vlen < 12) {
				VEC_FREE(kp);
				return err_set(e,
				               "offset 0x%llx: .nv.info.%s: a parameter "
				               "record of %llu bytes",
				               (unsigned long long)(base + at), kernel,
				               (unsigned long long)vlen);
			}
			KParam k = {rd16(val + 4), rd16(val + 6), rd32(val + 8) >> 18};
			VEC_PUSH(kp, k);
		} else if (attr == EIATTR_PARAM_CBANK && fmt == EIFMT_SVAL && vlen >= 8) {
			block = rd16(val + 6);
		} else if (attr == EIATTR_CBANK_PARAM_SIZE && fmt == EIFMT_HVAL) {
			block = rd16(val);
		}
		at += len;
	}
	if (!kp.n) {
		VEC_FREE(kp);
		return 0;
	}
	qsort(kp.v, kp.n, sizeof(*kp.v), by_ordinal);
	uint32_t end = 0;
	for (size_t i = 0; i < kp.n; i++) {
		if (i && kp.v[i].ordinal == kp.v[i - 1].ordinal) {
			unsigned o = kp.v[i].ordinal;
			VEC_FREE(kp);
			cap_params_release(out);
			return err_set(
			    e,
			    "offset 0x%llx: .nv.info.%s: parameter %u is described twice",
			    (unsigned long long)base, kernel, o);
		}
		push_param(out, kp.v[i].offset, kp.v[i].size);
		end = MAX(end, kp.v[i].offset + kp.v[i].size);
	}
	VEC_FREE(kp);
	out->block_size = MAX(block, end);
	return 1;
}

/* ---- 3. the PTX parameter list -------------------------------------------------- */

/* Skips blanks and comments. */
static const char *skip(const char *p, const char *end)
{
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
			while (p < end && *p != '\n')
				p++;
		} else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
			const char *q = p + 2;
			while (end - q >= 2 && !(q[0] == '*' && q[1] == '/'))
				q++;
			p = end - q >= 2 ? q + 2 : end;
		} else {
			return p;
		}
	}
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.' || c == '%';
}

/* The next word (identifier or directive) at p, or a single punctuation. */
static const char *word(const char *p, const char *end, const char **w, size_t *wn)
{
	p = skip(p, end);
	*w = p;
	if (p < end && ident_char(*p)) {
		while (p < end && ident_char(*p))
			p++;
	} else if (p < end) {
		p++;
	}
	*wn = (size_t)(p - *w);
	return p;
}

static bool is(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(w, s, n) == 0;
}

/* The size of a PTX fundamental type (.u64 -> 8), 0 when not one. */
static unsigned type_size(const char *w, size_t n)
{
	static const struct {
		const char *name;
		unsigned size;
	} types[] = {
	    {".b8", 1},  {".u8", 1},    {".s8", 1},   {".b16", 2}, {".u16", 2},
	    {".s16", 2}, {".f16", 2},   {".bf16", 2}, {".b32", 4}, {".u32", 4},
	    {".s32", 4}, {".f32", 4},   {".b64", 8},  {".u64", 8}, {".s64", 8},
	    {".f64", 8}, {".f16x2", 4}, {".pred", 1},
	};
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (is(w, n, types[i].name))
			return types[i].size;
	return 0;
}

/* Finds `.entry kernel (` and returns the position after the '(', or NULL. */
static const char *find_entry(const char *ptx, const char *end, const char *kernel)
{
	const char *p = ptx, *w;
	size_t wn;
	bool after_entry = false;
	while (p < end) {
		p = word(p, end, &w, &wn);
		if (!wn)
			break;
		if (*w == '"') { /* a string: skip to its end */
			while (p < end && *p != '"' && *p != '\n')
				p += *p == '\\' && p + 1 < end ? 2 : 1;
			p += p < end;
			continue;
		}
		if (after_entry && is(w, wn, kernel)) {
			p = word(p, end, &w, &wn);
			if (is(w, wn, "("))
				return p;
		}
		after_entry = is(w, wn, ".entry");
	}
	return NULL;
}

int cap_ptx_params(const char *ptx, size_t n, const char *kernel, CapParams *out, Err *e)
{
	memset(out, 0, sizeof(*out));
	const char *end = ptx + n, *p = find_entry(ptx, end, kernel), *w;
	size_t wn;
	if (!p)
		return 0;
	uint32_t at = 0;
	p = word(p, end, &w, &wn);
	if (is(w, wn, ")"))
		return 1;
	for (;;) {
		if (!is(w, wn, ".param"))
			goto bad;
		unsigned align = 0, tsize = 0;
		uint64_t count = 1;
		for (;;) {
			p = word(p, end, &w, &wn);
			if (is(w, wn, ".align")) {
				p = word(p, end, &w, &wn);
				align = (unsigned)strtoul(w, NULL, 10);
			} else if (is(w, wn, ".ptr") || is(w, wn, ".global") ||
			           is(w, wn, ".const") || is(w, wn, ".shared") ||
			           is(w, wn, ".local")) {
				continue;
			} else if ((tsize = type_size(w, wn)) != 0) {
				break;
			} else {
				goto bad;
			}
		}
		p = word(p, end, &w, &wn); /* the name */
		if (!wn || !ident_char(*w))
			goto bad;
		p = word(p, end, &w, &wn);
		if (is(w, wn, "[")) {
			p = word(p, end, &w, &wn);
			count = strtoull(w, NULL, 10);
			p = word(p, end, &w, &wn);
			if (!is(w, wn, "]") || !count)
				goto bad;
			p = word(p, end, &w, &wn);
		}
		if (!align)
			align = tsize;
		if (align & (align - 1) || count > 1u << 20)
			goto bad;
		at = (at + align - 1) & ~(align - 1);
		push_param(out, at, (uint32_t)(count * tsize));
		at += (uint32_t)(count * tsize);
		if (is(w, wn, ")"))
			break;
		if (!is(w, wn, ","))
			goto bad;
		p = word(p, end, &w, &wn);
	}
	out->block_size = at;
	return 1;
bad:
	cap_params_release(out);
	return err_set(e,
	               "offset 0x%zx: the parameter list of '.entry %s' cannot be read",
	               (size_t)(w - ptx), kernel);
}

/* ---- 4. images ------------------------------------------------------------------- */

CapImageKind cap_image_kind(const void *p, size_t n)
{
	const unsigned char *b = p;
	if (n >= 4 && memcmp(b, "\177ELF", 4) == 0)
		return CAP_IMG_CUBIN;
	if (n >= 4 && rd32(b) == FATBIN_MAGIC)
		return CAP_IMG_FATBIN;
	const char *s = p, *end = s + n, *w;
	size_t wn;
	word(s, end, &w, &wn);
	if (is(w, wn, ".version"))
		return CAP_IMG_PTX;
	return CAP_IMG_OTHER;
}

static bool fatbin_has_kernel(const void *p, size_t n, const char *name)
{
	ObjFile obj;
	obj_regions(&obj, p, n);
	FatbinScan s;
	fatbin_scan_init(&s, p, n, &obj);
	FatbinEntry en;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	bool found = false;
	Err e = ERR_INIT;
	int r;
	while (!found && (r = fatbin_scan_next(&s, &en, &e)) != 0) {
		if (r < 0) {
			err_release(&e);
			continue;
		}
		if ((en.kind == FATBIN_PTX || en.kind == FATBIN_CUBIN) &&
		    fatbin_entry_data(&en, &buf, &cap, &len, &e) == 0)
			found = cap_image_has_kernel(buf, len, name);
		err_release(&e);
	}
	free(buf);
	obj_release(&obj);
	return found;
}

bool cap_image_has_kernel(const void *p, size_t n, const char *name)
{
	switch (cap_image_kind(p, n)) {
	case CAP_IMG_CUBIN: {
		Elf f;
		Err e = ERR_INIT;
		bool ok = elf_open(&f, p, n, &e) == 0 && elf_has_symbol(&f, name);
		err_release(&e);
		return ok;
	}
	case CAP_IMG_PTX:
		return find_entry(p, (const char *)p + n, name) != NULL;
	case CAP_IMG_FATBIN:
		return fatbin_has_kernel(p, n, name);
	default:
		return false;
	}
}

/* The layout from one fatbin entry of `kind`; 1 found, 0 none. */
static int fatbin_params(const void *p, size_t n, const char *kernel, unsigned kind,
                         CapParams *out, Err *e)
{
	ObjFile obj;
	obj_regions(&obj, p, n);
	FatbinScan s;
	fatbin_scan_init(&s, p, n, &obj);
	FatbinEntry en;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	int found = 0, r;
	Err ig = ERR_INIT;
	while (!found && (r = fatbin_scan_next(&s, &en, &ig)) != 0) {
		if (r < 0 || en.kind != kind ||
		    fatbin_entry_data(&en, &buf, &cap, &len, &ig) < 0) {
			err_release(&ig);
			continue;
		}
		found = kind == FATBIN_CUBIN
		            ? cap_nvinfo_params(buf, len, kernel, out, e)
		            : cap_ptx_params((const char *)buf, len, kernel, out, e);
		if (found < 0)
			break;
	}
	err_release(&ig);
	free(buf);
	obj_release(&obj);
	return found;
}

int cap_image_params(const void *p, size_t n, const char *kernel, CapParams *out,
                     const char **source, Err *e)
{
	int r = 0;
	switch (cap_image_kind(p, n)) {
	case CAP_IMG_CUBIN:
		r = cap_nvinfo_params(p, n, kernel, out, e);
		*source = "nv.info";
		break;
	case CAP_IMG_PTX:
		r = cap_ptx_params(p, n, kernel, out, e);
		*source = "ptx";
		break;
	case CAP_IMG_FATBIN:
		r = fatbin_params(p, n, kernel, FATBIN_CUBIN, out, e);
		*source = "nv.info";
		if (r == 0) {
			r = fatbin_params(p, n, kernel, FATBIN_PTX, out, e);
			*source = "ptx";
		}
		break;
	default:
		break;
	}
	return r;
}
