/*
 * test_fatbin.c - the fatbin reader, the section finder and the extract
 * helpers, on containers built here: stored, zstd and LZ4 entries, ELF and
 * PE wrappers, and every kind of lie a header can tell.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "bin/extract.h"
#include "bin/fatbin.h"
#include "bin/objfile.h"

#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static const char PTX_A[] =
	".version 8.7\n.target sm_80\n.address_size 64\n\n"
	".func  (.param .b32 func_retval0) helper(.param .b32 x)\n{\n\tret;\n}\n"
	".visible .entry first_kernel(.param .u64 p)\n{\n\tret;\n}\n"
	".visible .entry second_kernel()\n{\n\tret;\n}\n";

/* ---- fixture builders ----------------------------------------------- */

static void put(StrBuf *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		sb_addc(b, i < 8 ? (char)(v >> (8 * i)) : 0);
}

static void set32(StrBuf *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->p[at + i] = (char)(v >> (8 * i));
}

static void set64(StrBuf *b, size_t at, uint64_t v)
{
	set32(b, at, (uint32_t)v);
	set32(b, at + 4, (uint32_t)(v >> 32));
}

/*
 * Appends an entry of `kind` holding text (plus `nuls` NUL bytes) for
 * sm_arch, stored or compressed with codec; an 80-byte header carrying an
 * options string.  Returns the entry's offset in b.
 */
static size_t entry(StrBuf *b, unsigned kind, unsigned arch, FatbinCodec codec,
                    const char *text, size_t nuls)
{
	size_t raw_n = strlen(text) + nuls;
	char *raw = xcalloc(1, raw_n + 1);
	memcpy(raw, text, strlen(text));
	char *data = raw;
	size_t n = raw_n;
	uint64_t flags = 0x11;
	if (codec == FATBIN_ZSTD) {
		data = xmalloc(ZSTD_compressBound(raw_n));
		n = ZSTD_compress(data, ZSTD_compressBound(raw_n), raw, raw_n, 3);
		assert_false(ZSTD_isError(n));
		flags |= 0x8000;
	} else if (codec == FATBIN_LZ4) {
		data = xmalloc((size_t)LZ4_compressBound((int)raw_n));
		n = (size_t)LZ4_compress_default(raw, data, (int)raw_n,
		                                 LZ4_compressBound((int)raw_n));
		assert_true(n > 0);
		flags |= 0x2000;
	}
	size_t pad = (8 - n % 8) % 8, at = b->n;
	put(b, kind, 2);
	put(b, 0x0101, 2);
	put(b, 80, 4);
	put(b, n + pad, 8);
	put(b, codec == FATBIN_STORED ? 0 : n, 4);
	put(b, 64, 4);
	put(b, 7, 2);   /* PTX 8.7 */
	put(b, 8, 2);
	put(b, arch, 4);
	put(b, 0, 8);
	put(b, flags, 8);
	put(b, 0, 8);
	put(b, codec == FATBIN_STORED ? 0 : raw_n, 8);
	put(b, 72, 4);   /* options at +72, 8 bytes */
	put(b, 8, 4);
	sb_addn(b, "-O3     ", 8);
	sb_addn(b, data, n);
	for (size_t i = 0; i < pad; i++)
		sb_addc(b, 0);
	if (data != raw)
		free(data);
	free(raw);
	return at;
}

/* Container header; fix its size with end_container once entries are in. */
static size_t begin_container(StrBuf *b)
{
	size_t at = b->n;
	put(b, FATBIN_MAGIC, 4);
	put(b, 1, 2);
	put(b, 16, 2);
	put(b, 0, 8);
	return at;
}

static void end_container(StrBuf *b, size_t at)
{
	set64(b, at + 8, b->n - at - 16);
}

/* Three containers: stored PTX + cubin, zstd PTX, LZ4 PTX (with NULs). */
static void sample(StrBuf *b)
{
	size_t c = begin_container(b);
	entry(b, FATBIN_PTX, 80, FATBIN_STORED, PTX_A, 3);
	entry(b, FATBIN_CUBIN, 80, FATBIN_STORED, "\177ELF-not-really", 0);
	end_container(b, c);
	c = begin_container(b);
	entry(b, FATBIN_PTX, 90, FATBIN_ZSTD, PTX_A, 0);
	end_container(b, c);
	c = begin_container(b);
	entry(b, FATBIN_PTX, 120, FATBIN_LZ4, PTX_A, 5);
	end_container(b, c);
}

/* ---- scanning -------------------------------------------------------- */

typedef struct {
	int entries, ptx, errors, good_text;
	char msg[8][256];
	FatbinEntry en[8];   /* en[i].section is gone after the scan: */
	char section[8][32];
} Seen;

/* Scans p[0..n) to the end, decompressing every PTX entry. */
static void scan_all(const void *p, size_t n, Seen *s)
{
	memset(s, 0, sizeof *s);
	ObjFile o;
	obj_regions(&o, p, n);
	FatbinScan sc;
	fatbin_scan_init(&sc, p, n, &o);
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	for (int guard = 0; guard < 100000; guard++) {
		FatbinEntry en;
		Err e = ERR_INIT;
		int r = fatbin_scan_next(&sc, &en, &e);
		if (r < 0) {
			assert_non_null(strstr(err_msg(&e), "offset 0x"));
			if (s->errors < 8)
				snprintf(s->msg[s->errors], sizeof s->msg[0], "%s", err_msg(&e));
			s->errors++;
		}
		if (r > 0) {
			if (s->entries < 8) {
				s->en[s->entries] = en;
				snprintf(s->section[s->entries], 32, "%s", en.section);
			}
			s->entries++;
			if (en.kind == FATBIN_PTX) {
				s->ptx++;
				if (fatbin_entry_data(&en, &buf, &cap, &len, &e) == 0) {
					if (len == strlen(PTX_A) && !memcmp(buf, PTX_A, len))
						s->good_text++;
				} else {
					assert_non_null(strstr(err_msg(&e), "offset 0x"));
					if (s->errors < 8)
						snprintf(s->msg[s->errors], sizeof s->msg[0], "%s", err_msg(&e));
					s->errors++;
				}
			}
		}
		err_release(&e);
		if (r == 0)
			break;
		assert_true(guard < 99999);
	}
	free(buf);
	obj_release(&o);
}

static void test_fatbin__reads_stored_zstd_and_lz4_entries(void **state)
{
	StrBuf b = STRBUF_INIT;
	sample(&b);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.entries, 4);
	assert_int_equal(s.ptx, 3);
	assert_int_equal(s.good_text, 3);   /* trailing NULs stripped */
	assert_int_equal(s.en[0].container_off, 0);
	assert_int_equal(s.en[0].entry_off, 16);
	assert_int_equal(s.en[0].arch, 80);
	assert_int_equal(s.en[0].ptx_major, 8);
	assert_int_equal(s.en[0].ptx_minor, 7);
	assert_int_equal(s.en[0].codec, FATBIN_STORED);
	assert_int_equal(s.en[0].options.n, 3);
	assert_memory_equal(s.en[0].options.p, "-O3", 3);
	assert_int_equal(s.en[1].kind, FATBIN_CUBIN);
	assert_int_equal(s.en[2].codec, FATBIN_ZSTD);
	assert_int_equal(s.en[2].arch, 90);
	assert_int_equal(s.en[3].codec, FATBIN_LZ4);
	assert_int_equal(s.en[3].arch, 120);
	sb_release(&b);
}

static void test_fatbin__zero_padding_between_containers(void **state)
{
	StrBuf b = STRBUF_INIT;
	size_t c = begin_container(&b);
	entry(&b, FATBIN_PTX, 80, FATBIN_STORED, PTX_A, 0);
	end_container(&b, c);
	put(&b, 0, 8);
	c = begin_container(&b);
	entry(&b, FATBIN_PTX, 80, FATBIN_ZSTD, PTX_A, 0);
	end_container(&b, c);
	put(&b, 0, 5);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.good_text, 2);
	sb_release(&b);
}

/* Every prefix of a valid file: no crash, no over-read (ASan), the entries
 * wholly inside the prefix still come out, and cutting anywhere but a
 * container boundary is an error. */
static void test_fatbin__truncated_at_every_length(void **state)
{
	StrBuf b = STRBUF_INIT;
	sample(&b);
	size_t ends[4], nends = 0;   /* container boundaries */
	for (size_t at = 0; at < b.n; nends++) {
		uint64_t size;
		memcpy(&size, b.p + at + 8, 8);
		at += 16 + (size_t)size;
		ends[nends] = at;
	}
	assert_int_equal(nends, 3);
	for (size_t n = 1; n < b.n; n++) {
		char *cut = xmalloc(n);   /* exact size, so ASan sees an over-read */
		memcpy(cut, b.p, n);
		Seen s;
		scan_all(cut, n, &s);
		bool boundary = n == ends[0] || n == ends[1];
		/* Under 4 bytes there is no magic: not a fatbin, nothing found. */
		if (n >= 4 && !boundary)
			assert_true(s.errors >= 1);
		int whole = n >= ends[2] ? 3 : n >= ends[1] ? 2 : n >= ends[0] ? 1 : 0;
		assert_true(s.good_text >= whole);
		if (boundary)
			assert_int_equal(s.errors, 0);
		free(cut);
	}
	sb_release(&b);
}

static void test_fatbin__lying_container_size_is_reported_and_survived(void **state)
{
	StrBuf b = STRBUF_INIT;
	sample(&b);
	set64(&b, 8, 0x7fffffffffffffffull);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_non_null(strstr(s.msg[0], "offset 0x0: container size 0x7fffffffffffffff runs "
	                                 "past the end of the file"));
	assert_int_equal(s.good_text, 3);   /* the walk finds the other containers */
	sb_release(&b);
}

static void test_fatbin__lying_entry_sizes_are_reported(void **state)
{
	StrBuf b = STRBUF_INIT;
	sample(&b);
	set64(&b, 16 + 8, 1ull << 62);   /* payload size */
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 1);
	assert_non_null(strstr(s.msg[0], "offset 0x10: entry payload size 0x4000000000000000 "
	                                 "runs past the end of the container at 0x0"));
	assert_int_equal(s.good_text, 2);

	sb_reset(&b);
	sample(&b);
	set32(&b, 16 + 4, 12);   /* header size */
	scan_all(b.p, b.n, &s);
	assert_non_null(strstr(s.msg[0], "offset 0x10: entry header size 12 is impossible"));
	assert_int_equal(s.good_text, 2);
	sb_release(&b);
}

static void test_fatbin__lying_uncompressed_size_is_reported(void **state)
{
	StrBuf b = STRBUF_INIT;
	size_t c = begin_container(&b);
	size_t z = entry(&b, FATBIN_PTX, 80, FATBIN_ZSTD, PTX_A, 0);
	size_t l = entry(&b, FATBIN_PTX, 80, FATBIN_LZ4, PTX_A, 0);
	end_container(&b, c);
	set64(&b, z + 56, strlen(PTX_A) + 100);
	set64(&b, l + 56, strlen(PTX_A) - 10);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 2);
	assert_non_null(strstr(s.msg[0], "offset 0x10: zstd frame holds"));
	assert_non_null(strstr(s.msg[1], "LZ4 payload"));
	/* A huge stated size must not be believed (or allocated). */
	set64(&b, l + 56, 1ull << 40);
	scan_all(b.p, b.n, &s);
	assert_non_null(strstr(s.msg[1], "impossible uncompressed size 1099511627776"));
	/* No stated size: zstd output would have no bound. */
	set64(&b, z + 56, 0);
	scan_all(b.p, b.n, &s);
	assert_non_null(strstr(s.msg[0], "offset 0x10: zstd entry states no uncompressed size"));
	sb_release(&b);
}

static void test_fatbin__corrupt_compressed_payloads_are_reported(void **state)
{
	for (int codec = FATBIN_ZSTD; codec <= FATBIN_LZ4; codec++) {
		StrBuf b = STRBUF_INIT;
		size_t c = begin_container(&b);
		size_t at = entry(&b, FATBIN_PTX, 80, (FatbinCodec)codec, PTX_A, 0);
		end_container(&b, c);
		size_t data = at + 80;
		for (size_t i = data + 6; i < b.n; i += 3)
			b.p[i] ^= 0x5a;
		Seen s;
		scan_all(b.p, b.n, &s);
		assert_int_equal(s.errors, 1);
		assert_int_equal(s.good_text, 0);
		sb_release(&b);
	}
}

static void test_fatbin__junk_where_a_container_should_start(void **state)
{
	StrBuf b = STRBUF_INIT;
	sample(&b);
	sb_addn(&b, "JUNKJUNKJUNK", 12);
	size_t c = begin_container(&b);
	entry(&b, FATBIN_PTX, 80, FATBIN_STORED, PTX_A, 0);
	end_container(&b, c);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 1);
	assert_non_null(strstr(s.msg[0], "expected a fatbin container (magic 0xba55ed50), "
	                                 "found 0x4b4e554a"));
	assert_int_equal(s.good_text, 4);   /* the one after the junk too */
	sb_release(&b);
}

static void test_fatbin__stray_magic_outside_fatbin_sections_is_ignored(void **state)
{
	StrBuf b = STRBUF_INIT;
	sb_adds(&b, "some data ");
	put(&b, FATBIN_MAGIC, 4);
	put(&b, 2, 2);   /* version 2: not a container */
	put(&b, 16, 2);
	sb_adds(&b, "more data");
	put(&b, FATBIN_MAGIC, 4);   /* magic at the very end */
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.entries, 0);
	sb_release(&b);
}

/* ---- ELF and PE ------------------------------------------------------ */

/* An ELF64 with sections: [1] .nv_fatbin = fatbin, [2] .rodata = data,
 * [3] .bss (NOBITS), [4] .shstrtab. */
static void elf(StrBuf *b, const StrBuf *fatbin, const StrBuf *data)
{
	static const char names[] = "\0.nv_fatbin\0.rodata\0.bss\0.shstrtab";
	sb_reset(b);
	for (int i = 0; i < 64; i++)
		sb_addc(b, 0);
	memcpy(b->p, "\177ELF\2\1\1", 7);
	size_t fat = b->n;
	sb_addn(b, fatbin->p, fatbin->n);
	size_t dat = b->n;
	sb_addn(b, data->p, data->n);
	size_t str = b->n;
	sb_addn(b, names, sizeof names);
	while (b->n % 8)
		sb_addc(b, 0);
	size_t shoff = b->n;
	struct { uint32_t name, type; uint64_t off, size; } sec[5] = {
		{0, 0, 0, 0}, {1, 1, fat, fatbin->n}, {12, 1, dat, data->n},
		{20, 8, dat, 4096}, {25, 3, str, sizeof names}};
	for (int i = 0; i < 5; i++) {
		put(b, sec[i].name, 4);
		put(b, sec[i].type, 4);
		put(b, 0, 16);
		put(b, sec[i].off, 8);
		put(b, sec[i].size, 8);
		put(b, 0, 24);
	}
	set64(b, 0x28, shoff);
	b->p[0x3a] = 64;
	b->p[0x3c] = 5;
	b->p[0x3e] = 4;
}

static void test_fatbin__elf_sections_found_and_named(void **state)
{
	StrBuf f = STRBUF_INIT, d = STRBUF_INIT, b = STRBUF_INIT;
	sample(&f);
	sb_adds(&d, "prefix");
	size_t c = begin_container(&d);
	entry(&d, FATBIN_PTX, 75, FATBIN_LZ4, PTX_A, 0);
	end_container(&d, c);
	elf(&b, &f, &d);
	ObjFile o;
	obj_regions(&o, b.p, b.n);
	assert_int_equal(o.kind, OBJ_ELF);
	assert_true(o.table_ok);
	assert_int_equal(o.regions.n, 3);   /* .bss has no file bytes */
	assert_string_equal(o.regions.v[0].name, ".nv_fatbin");
	assert_true(o.regions.v[0].fatbin);
	assert_string_equal(o.regions.v[1].name, ".rodata");
	assert_false(o.regions.v[1].fatbin);
	assert_ptr_equal(obj_region_at(&o, 70), &o.regions.v[0]);
	obj_release(&o);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.good_text, 4);
	assert_string_equal(s.section[0], ".nv_fatbin");

	/* A section table pointing outside the file: the whole file is scanned. */
	set64(&b, 0x28, b.n + 100);
	obj_regions(&o, b.p, b.n);
	assert_false(o.table_ok);
	assert_int_equal(o.regions.n, 1);
	obj_release(&o);
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.good_text, 4);
	sb_release(&f);
	sb_release(&d);
	sb_release(&b);
}

/* o's problems joined by '\n' (for messages). */
static const char *problems(const ObjFile *o, StrBuf *sb)
{
	sb_reset(sb);
	for (size_t i = 0; i < o->problems.n; i++)
		sb_addf(sb, "%s%s", i ? "\n" : "", o->problems.v[i]);
	return sb->p ? sb->p : "";
}

static void expect_problem(const void *p, size_t n, const char *want)
{
	ObjFile o;
	StrBuf sb = STRBUF_INIT;
	obj_regions(&o, p, n);
	if (!strstr(problems(&o, &sb), want))
		fail_msg("expected '%s' among\n%s", want, sb.p ? sb.p : "(none)");
	obj_release(&o);
	sb_release(&sb);
}

static void test_fatbin__elf_damage_is_reported_at_its_offset(void **state)
{
	StrBuf f = STRBUF_INIT, d = STRBUF_INIT, b = STRBUF_INIT, sb = STRBUF_INIT;
	sample(&f);
	sb_adds(&d, "data");
	elf(&b, &f, &d);
	ObjFile o;
	obj_regions(&o, b.p, b.n);
	assert_int_equal(o.problems.n, 0); /* a sound file: nothing to say */
	obj_release(&o);
	/* cut anywhere from the section table on: the table is gone, and
	 * said so where it starts; the whole file is still scanned */
	uint64_t shoff;
	memcpy(&shoff, b.p + 0x28, 8);
	for (size_t n = 64; n < b.n; n++) {
		char *cut = xmalloc(n);
		memcpy(cut, b.p, n);
		obj_regions(&o, cut, n);
		char want[200];
		if (n < shoff + 64)
			snprintf(want, sizeof want,
			         "offset 0x%llx: truncated: the section header table "
			         "starts past the "
			         "end of the file (0x%zx bytes)",
			         (unsigned long long)shoff, n);
		else
			snprintf(want, sizeof want,
			         "offset 0x%llx: truncated: the section header table (5 "
			         "entries of 64 "
			         "bytes) runs past the end of the file (0x%zx bytes)",
			         (unsigned long long)shoff, n);
		if (!strstr(problems(&o, &sb), want))
			fail_msg("cut at %zu: '%s' not in '%s'", n, want,
			         sb.p ? sb.p : "");
		assert_false(o.table_ok);
		assert_int_equal(o.regions.n, 1);
		obj_release(&o);
		free(cut);
	}
	/* inside the header */
	expect_problem(b.p, 40, "offset 0x28: truncated ELF header (40 of 64 bytes)");
	expect_problem(b.p, 5, "offset 0x5: truncated ELF header (5 bytes)");
	/* impossible fields, at the field */
	StrBuf c = STRBUF_INIT;
	sb_addn(&c, b.p, b.n);
	c.p[5] = 2;
	expect_problem(c.p, c.n, "offset 0x5: ELF data encoding 2 is not little-endian");
	c.p[5] = 1;
	c.p[4] = 7;
	expect_problem(c.p, c.n,
	               "offset 0x4: ELF class 7 is neither 32-bit (1) nor 64-bit (2)");
	c.p[4] = 2;
	c.p[0x3a] = 40;
	expect_problem(c.p, c.n,
	               "offset 0x3a: section header size 40 is too small (64 needed)");
	c.p[0x3a] = 64;
	c.p[0x3e] = 9;
	expect_problem(c.p, c.n,
	               "offset 0x3e: section name table index 9 is past the 5 sections");
	c.p[0x3e] = 4;
	/* a section whose bytes are not all there (section 2, .rodata) */
	size_t sec2 = (size_t)shoff + 2 * 64;
	set64(&c, sec2 + 0x20, 0x100000);
	uint64_t off2;
	memcpy(&off2, c.p + sec2 + 0x18, 8);
	char want[200];
	snprintf(want, sizeof want,
	         "offset 0x%zx: truncated: section 2 '.rodata' (0x100000 bytes at "
	         "0x%llx) runs "
	         "past the end of the file (0x%zx bytes)",
	         c.n, (unsigned long long)off2, c.n);
	expect_problem(c.p, c.n, want);
	set64(&c, sec2 + 0x20, d.n);
	/* program headers, at the front: a PT_LOAD past the end survives a
	 * cut that took the section table */
	StrBuf ph = STRBUF_INIT;
	sb_addn(&ph, c.p, 64);
	put(&ph, 1, 4); /* PT_LOAD */
	put(&ph, 5, 4);
	put(&ph, 0, 8); /* p_offset */
	put(&ph, 0, 16);
	put(&ph, 0x9000, 8); /* p_filesz */
	put(&ph, 0x9000, 8);
	put(&ph, 0x1000, 8);
	set64(&ph, 0x20, 64); /* e_phoff */
	ph.p[0x36] = 56;
	ph.p[0x38] = 1;
	set64(&ph, 0x28, 0x8000);
	expect_problem(
	    ph.p, ph.n,
	    "offset 0x78: truncated: segment 0 (PT_LOAD, 0x9000 bytes at 0x0) runs past "
	    "the end of the file (0x78 bytes)");
	expect_problem(
	    ph.p, ph.n,
	    "offset 0x8000: truncated: the section header table starts past the end of "
	    "the file (0x78 bytes)");
	ph.p[0x38] = 100;
	expect_problem(
	    ph.p, ph.n,
	    "offset 0x40: truncated: the program header table (100 entries of 56 bytes) "
	    "runs past the end of the file (0x78 bytes)");
	sb_release(&ph);
	sb_release(&c);
	sb_release(&f);
	sb_release(&d);
	sb_release(&b);
	sb_release(&sb);
}

static void test_fatbin__pe_sections_found(void **state)
{
	StrBuf f = STRBUF_INIT, b = STRBUF_INIT;
	sample(&f);
	for (int i = 0; i < 0x80; i++)
		sb_addc(&b, 0);
	b.p[0] = 'M';
	b.p[1] = 'Z';
	set32(&b, 0x3c, 0x80);
	sb_addn(&b, "PE\0\0", 4);
	put(&b, 0x8664, 2);   /* machine */
	put(&b, 2, 2);        /* sections */
	put(&b, 0, 12);
	put(&b, 0, 2);        /* no optional header */
	put(&b, 0, 2);
	size_t tab = b.n;
	for (int i = 0; i < 80; i++)
		sb_addc(&b, 0);
	size_t raw = b.n;
	sb_addn(&b, f.p, f.n);
	memcpy(b.p + tab, ".text", 5);
	set32(&b, tab + 16, 0);   /* no raw data */
	memcpy(b.p + tab + 40, ".nv_fatb", 8);
	set32(&b, tab + 40 + 16, (uint32_t)f.n);
	set32(&b, tab + 40 + 20, (uint32_t)raw);
	ObjFile o;
	obj_regions(&o, b.p, b.n);
	assert_int_equal(o.kind, OBJ_PE);
	assert_int_equal(o.regions.n, 1);
	assert_string_equal(o.regions.v[0].name, ".nv_fatb");
	assert_true(o.regions.v[0].fatbin);
	obj_release(&o);
	Seen s;
	scan_all(b.p, b.n, &s);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.good_text, 3);
	assert_int_equal(s.en[0].container_off, raw);
	sb_release(&f);
	sb_release(&b);
}

static void test_fatbin__pe_damage_is_reported_at_its_offset(void **state)
{
	StrBuf f = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT;
	sample(&f);
	for (int i = 0; i < 0x80; i++)
		sb_addc(&b, 0);
	b.p[0] = 'M';
	b.p[1] = 'Z';
	set32(&b, 0x3c, 0x80);
	sb_addn(&b, "PE\0\0", 4);
	put(&b, 0x8664, 2);
	put(&b, 2, 2); /* sections */
	put(&b, 0, 12);
	put(&b, 0, 2); /* no optional header: the table at 0x98 */
	put(&b, 0, 2);
	size_t tab = b.n;
	for (int i = 0; i < 80; i++)
		sb_addc(&b, 0);
	size_t raw = b.n;
	sb_addn(&b, f.p, f.n);
	memcpy(b.p + tab, ".text", 5);
	memcpy(b.p + tab + 40, ".nv_fatb", 8);
	set32(&b, tab + 40 + 16, (uint32_t)f.n);
	set32(&b, tab + 40 + 20, (uint32_t)raw);
	ObjFile o;
	obj_regions(&o, b.p, b.n);
	assert_int_equal(o.problems.n, 0);
	obj_release(&o);
	assert_int_equal(tab, 0x98);
	expect_problem(b.p, 0x20, "offset 0x20: truncated DOS header (32 of 64 bytes)");
	expect_problem(
	    b.p, 0x90,
	    "offset 0x90: truncated: the PE header (24 bytes at 0x80, named at 0x3c) "
	    "runs past the end of the file (0x90 bytes)");
	expect_problem(
	    b.p, tab + 50,
	    "offset 0xca: truncated: the section table (2 entries of 40 bytes at 0x98) "
	    "runs past the end of the file (0xca bytes)");
	char want[200];
	snprintf(want, sizeof want,
	         "offset 0x%zx: truncated: section 2 '.nv_fatb' (0x%zx bytes at 0x%zx) "
	         "runs past "
	         "the end of the file (0x%zx bytes)",
	         b.n - 8, f.n, raw, b.n - 8);
	expect_problem(b.p, b.n - 8, want);
	sb_addn(&c, b.p, b.n);
	set32(&c, 0x3c, 0x10000);
	expect_problem(c.p, c.n,
	               "offset 0x10000: truncated: the PE header (24 bytes at 0x10000");
	set32(&c, 0x3c, 0x80);
	c.p[0x81] = 'X';
	expect_problem(c.p, c.n,
	               "offset 0x80: no PE signature where the DOS header points");
	c.p[0x81] = 'E';
	c.p[0x86] = 0;
	expect_problem(c.p, c.n, "offset 0x86: the COFF header declares no section");
	c.p[0x86] = 2;
	set32(&c, tab + 40 + 20, 0x70000000);
	snprintf(want, sizeof want,
	         "offset 0x70000000: truncated: section 2 '.nv_fatb' (0x%zx bytes at "
	         "0x70000000)",
	         f.n);
	expect_problem(c.p, c.n, want);
	sb_release(&c);
	sb_release(&f);
	sb_release(&b);
}

/* ---- names ----------------------------------------------------------- */

static void count_name(void *ctx, Str s)
{
	StrBuf *b = ctx;
	sb_addn(b, s.p, s.n);
	sb_addc(b, ';');
}

static void test_fatbin__entry_names_and_file_names(void **state)
{
	StrBuf b = STRBUF_INIT;
	assert_int_equal(extract_entry_names(PTX_A, strlen(PTX_A), count_name, &b), 2);
	assert_string_equal(b.p, "first_kernel;second_kernel;");
	char name[64];
	extract_first_name(PTX_A, strlen(PTX_A), name, sizeof name);
	assert_string_equal(name, "first_kernel");
	static const char only_func[] = ".func  (.param .b32 r) $helper_1(.param .b32 x)\n{ret;}";
	extract_first_name(only_func, strlen(only_func), name, sizeof name);
	assert_string_equal(name, "$helper_1");
	static const char none[] = ".version 8.0\n// .entry in a comment is not at a word start? x.entry";
	extract_first_name(none, strlen(none), name, sizeof name);
	assert_string_equal(name, "");

	char safe[16];
	extract_sanitize("a$b%c/d", safe, 15);
	assert_string_equal(safe, "a_b_c_d");
	extract_sanitize(".hidden", safe, 15);
	assert_string_equal(safe, "_hidden");
	extract_sanitize("", safe, 15);
	assert_string_equal(safe, "ptx");
	extract_sanitize("abcdefghijklmnopqrstuvwxyz", safe, 10);
	assert_string_equal(safe, "abcdefghij");
	sb_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fatbin__reads_stored_zstd_and_lz4_entries),
	    cmocka_unit_test(test_fatbin__zero_padding_between_containers),
	    cmocka_unit_test(test_fatbin__truncated_at_every_length),
	    cmocka_unit_test(test_fatbin__lying_container_size_is_reported_and_survived),
	    cmocka_unit_test(test_fatbin__lying_entry_sizes_are_reported),
	    cmocka_unit_test(test_fatbin__lying_uncompressed_size_is_reported),
	    cmocka_unit_test(test_fatbin__corrupt_compressed_payloads_are_reported),
	    cmocka_unit_test(test_fatbin__junk_where_a_container_should_start),
	    cmocka_unit_test(test_fatbin__stray_magic_outside_fatbin_sections_is_ignored),
	    cmocka_unit_test(test_fatbin__elf_sections_found_and_named),
	    cmocka_unit_test(test_fatbin__elf_damage_is_reported_at_its_offset),
	    cmocka_unit_test(test_fatbin__pe_sections_found),
	    cmocka_unit_test(test_fatbin__pe_damage_is_reported_at_its_offset),
	    cmocka_unit_test(test_fatbin__entry_names_and_file_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
