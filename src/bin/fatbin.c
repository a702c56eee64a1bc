/*
 * fatbin.c - the fatbin container reader.
 *
 * A host binary holds fatbin containers in sections of its own (.nv_fatbin,
 * __nv_relfatbin, PE's .nv_fatb) and also in ordinary data sections: the
 * CUDA 13 toolkit keeps them in .rodata (cuSPARSE's LZ4 PTX), .ldata (all of
 * cuFFT's), .cask_resource (cuBLASLt, cuDNN).  So the reader scans every
 * region obj_regions gives it.  In a fatbin section, and in a raw fatbin
 * file, containers must follow each other with at most zero padding between
 * them, and anything else there is reported.  Elsewhere the magic number is
 * searched for (memmem), and a hit whose header is not version 1 with a
 * 16-byte header is taken for a coincidence and passed over silently: the
 * toolkit has a few of those in code sections.
 *
 * Once a header is accepted the container is walked entry by entry.  Every
 * error leaves the walk in a state from which the next call continues: the
 * rest of that region is searched for the magic again, so one corrupt
 * container costs only itself.
 *
 * Decompression is libzstd's and liblz4's.  Neither trusts the size the
 * entry header states: zstd output is produced by streaming into a buffer
 * that grows as bytes actually come out, and LZ4 output is bounded by the
 * format's maximum ratio, so a lying size costs an error message, not a
 * huge allocation.
 */
#include "fatbin.h"

#include <limits.h>
#include <lz4.h>
#include <string.h>
#include <zstd.h>

#define FLAG_OLD_COMPRESS 0x1000u
#define FLAG_LZ4 0x2000u
#define FLAG_ZSTD 0x8000u
#define ENTRY_MIN 64u

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

const char *fatbin_codec_name(FatbinCodec c)
{
	switch (c) {
	case FATBIN_ZSTD: return "zstd";
	case FATBIN_LZ4: return "lz4";
	default: return "none";
	}
}

void fatbin_scan_init(FatbinScan *s, const void *p, size_t n, const ObjFile *obj)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->n = n;
	s->obj = obj;
	if (obj->regions.n) {
		s->pos = obj->regions.v[0].off;
		s->strict = obj->regions.v[0].fatbin;
	}
}

static const char *where(const ObjRegion *r)
{
	return r->name[0] ? r->name : "the region";
}

/* After damage at `off`: leave the container and search the rest of the
 * region for the magic, from `off` itself (a container whose size lies
 * may end where the next container starts).  Every caller's `off` is past
 * the last container header accepted, so the scan always moves on. */
static void resync(FatbinScan *s, size_t off)
{
	s->in_container = false;
	s->strict = false;
	s->pos = off;
}

/*
 * One step inside a container.  Returns 1 (entry), 0 (container done) or
 * -1 (error; the walk has resynchronised).
 */
static int entry_step(FatbinScan *s, const ObjRegion *r, FatbinEntry *en, Err *e)
{
	size_t at = s->epos;
	if (at >= s->cont_end) {
		s->in_container = false;
		s->pos = s->cont_end;
		return 0;
	}
	const uint8_t *h = s->p + at;
	size_t left = s->cont_end - at;
	if (left < ENTRY_MIN) {
		resync(s, at);
		return err_set(e, "offset 0x%zx: truncated entry header (%zu bytes left in "
		               "the container at 0x%zx, %u needed)",
		               at, left, s->cont_off, ENTRY_MIN);
	}
	uint32_t hs = rd32(h + 4);
	uint64_t psz = rd64(h + 8);
	if (hs < ENTRY_MIN || hs > left) {
		resync(s, at);
		return err_set(e, "offset 0x%zx: entry header size %u is impossible (%zu bytes "
		               "left in the container at 0x%zx)",
		               at, hs, left, s->cont_off);
	}
	if (psz > left - hs) {
		resync(s, at);
		return err_set(e, "offset 0x%zx: entry payload size 0x%llx runs past the end "
		               "of the container at 0x%zx (0x%zx bytes left)",
		               at, (unsigned long long)psz, s->cont_off, left - hs);
	}
	memset(en, 0, sizeof *en);
	en->container_off = s->cont_off;
	en->entry_off = at;
	en->section = r->name;
	en->kind = rd16(h);
	en->ptx_minor = rd16(h + 24);
	en->ptx_major = rd16(h + 26);
	en->arch = rd32(h + 28);
	en->flags = rd64(h + 40);
	en->raw_size = rd64(h + 56);
	uint32_t csize = rd32(h + 16);
	en->data = h + hs;
	if (en->flags & FLAG_ZSTD && en->flags & FLAG_LZ4) {
		resync(s, at);
		return err_set(e, "offset 0x%zx: entry flags 0x%llx claim both zstd and LZ4 "
		               "compression", at, (unsigned long long)en->flags);
	}
	if (en->flags & (FLAG_ZSTD | FLAG_LZ4)) {
		en->codec = en->flags & FLAG_ZSTD ? FATBIN_ZSTD : FATBIN_LZ4;
		if (csize > psz) {
			resync(s, at);
			return err_set(e, "offset 0x%zx: compressed size 0x%x exceeds the payload "
			               "size 0x%llx", at, csize, (unsigned long long)psz);
		}
		en->data_size = csize;
	} else {
		en->codec = FATBIN_STORED;
		en->data_size = (size_t)psz;
	}
	if (hs >= 72) {
		uint32_t oo = rd32(h + 64), on = rd32(h + 68);
		if (oo >= ENTRY_MIN && oo <= hs && on <= hs - oo) {
			const char *o = (const char *)h + oo;
			while (on && (o[on - 1] == 0 || o[on - 1] == ' '))
				on--;
			en->options = str_of(o, on);
		}
	}
	s->epos = at + hs + (size_t)psz;
	(void)r;
	return 1;
}

int fatbin_scan_next(FatbinScan *s, FatbinEntry *en, Err *e)
{
	const ObjFile *o = s->obj;
	for (;;) {
		if (s->region >= o->regions.n)
			return 0;
		const ObjRegion *r = &o->regions.v[s->region];
		if (s->in_container) {
			int rc = entry_step(s, r, en, e);
			if (rc)
				return rc;
			continue;
		}
		size_t rend = r->off + r->size;
		if (s->pos < r->off)
			s->pos = r->off;
		if (s->pos >= rend) {
			if (++s->region < o->regions.n) {
				s->pos = o->regions.v[s->region].off;
				s->strict = o->regions.v[s->region].fatbin;
			}
			continue;
		}
		size_t hit;
		if (s->strict) {
			const uint8_t *q = s->p + s->pos;
			size_t k = 0, m = rend - s->pos;
			while (k < m && q[k] == 0)
				k++;
			s->pos += k;
			if (s->pos >= rend)
				continue;
			hit = s->pos;
			if (rend - hit < 4 || rd32(s->p + hit) != FATBIN_MAGIC) {
				resync(s, hit + 1);
				if (rend - hit < 4)
					return err_set(e, "offset 0x%zx: %zu stray bytes where a fatbin "
					               "container should start", hit, rend - hit);
				return err_set(e, "offset 0x%zx: expected a fatbin container (magic "
				               "0xba55ed50), found 0x%08x", hit, rd32(s->p + hit));
			}
		} else {
			static const uint8_t magic[4] = {0x50, 0xed, 0x55, 0xba};
			const uint8_t *q = memmem(s->p + s->pos, rend - s->pos, magic, 4);
			if (!q) {
				s->pos = rend;
				continue;
			}
			hit = (size_t)(q - s->p);
		}
		bool strict = s->strict;
		if (rend - hit < 16) {
			resync(s, hit + 1);
			if (!strict)
				continue;
			return err_set(e, "offset 0x%zx: truncated container header (%zu of 16 "
			               "bytes)", hit, rend - hit);
		}
		unsigned ver = rd16(s->p + hit + 4), hs = rd16(s->p + hit + 6);
		if (ver != 1 || hs != 16) {
			resync(s, hit + 1);
			if (!strict)
				continue;
			return err_set(e, "offset 0x%zx: unsupported container header (version %u, "
			               "header size %u; expected 1 and 16)", hit, ver, hs);
		}
		uint64_t size = rd64(s->p + hit + 8);
		size_t body = hit + 16;
		s->containers++;
		s->cont_off = hit;
		s->epos = body;
		s->in_container = true;
		if (size > rend - body) {
			/* Walk what is there; the entry that does not fit says so. */
			s->cont_end = rend;
			s->strict = false;
			return err_set(e, "offset 0x%zx: container size 0x%llx runs past the end "
			               "of %s (0x%zx bytes left)", hit, (unsigned long long)size,
			               s->obj->kind == OBJ_FATBIN || !r->name[0] ? "the file"
			                                                          : where(r),
			               rend - body);
		}
		s->cont_end = body + (size_t)size;
	}
}

static void ensure(uint8_t **buf, size_t *cap, size_t want)
{
	if (*cap < want) {
		size_t c = *cap + *cap / 2;
		if (c < want)
			c = want;
		*buf = xrealloc(*buf, c);
		*cap = c;
	}
}

static int unzstd(const FatbinEntry *en, uint8_t **buf, size_t *cap, size_t *len, Err *e)
{
	size_t n = en->data_size;
	if (n < 4 || rd32(en->data) != 0xFD2FB528u)
		return err_set(e, "offset 0x%zx: entry says zstd but the payload is not a "
		               "zstd frame", en->entry_off);
	/* Without a stated size the output would have no bound but the ratio. */
	if (en->raw_size == 0)
		return err_set(e, "offset 0x%zx: zstd entry states no uncompressed size",
		               en->entry_off);
	unsigned long long fcs = ZSTD_getFrameContentSize(en->data, n);
	if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != ZSTD_CONTENTSIZE_ERROR &&
	    fcs != en->raw_size)
		return err_set(e, "offset 0x%zx: zstd frame holds %llu bytes, the entry header "
		               "says %llu", en->entry_off, fcs,
		               (unsigned long long)en->raw_size);
	/* Start from a plausible size; grow only as output really arrives. */
	size_t guess = en->raw_size < (uint64_t)n * 64 + 65536 ? (size_t)en->raw_size
	                                                       : n * 8 + 65536;
	ensure(buf, cap, guess + 1);
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!dc)
		die_oom(0);
	ZSTD_inBuffer in = {en->data, n, 0};
	ZSTD_outBuffer out = {*buf, *cap - 1, 0};
	int rc = 0;
	for (;;) {
		size_t r = ZSTD_decompressStream(dc, &out, &in);
		if (ZSTD_isError(r)) {
			rc = err_set(e, "offset 0x%zx: corrupt zstd payload: %s", en->entry_off,
			             ZSTD_getErrorName(r));
			break;
		}
		if (r == 0)
			break;   /* frame complete */
		if (out.pos > en->raw_size) {
			rc = err_set(e, "offset 0x%zx: zstd payload holds more than the %llu bytes "
			             "the entry header says", en->entry_off,
			             (unsigned long long)en->raw_size);
			break;
		}
		if (out.pos == out.size) {
			ensure(buf, cap, *cap + *cap / 2 + 1);
			out.dst = *buf;
			out.size = *cap - 1;
		} else if (in.pos == in.size) {
			rc = err_set(e, "offset 0x%zx: zstd payload is truncated (%zu bytes "
			             "decompressed)", en->entry_off, out.pos);
			break;
		}
	}
	ZSTD_freeDCtx(dc);
	if (rc)
		return rc;
	if (out.pos != en->raw_size)
		return err_set(e, "offset 0x%zx: zstd payload holds %zu bytes, the entry header "
		               "says %llu", en->entry_off, out.pos,
		               (unsigned long long)en->raw_size);
	*len = out.pos;
	return 0;
}

static int unlz4(const FatbinEntry *en, uint8_t **buf, size_t *cap, size_t *len, Err *e)
{
	size_t n = en->data_size;
	uint64_t want = en->raw_size;
	/* An LZ4 block expands at most about 255 times. */
	if (want == 0 || n > INT_MAX || want > INT_MAX || want > (uint64_t)n * 255 + 64)
		return err_set(e, "offset 0x%zx: impossible uncompressed size %llu for an LZ4 "
		               "block of %zu bytes", en->entry_off, (unsigned long long)want, n);
	ensure(buf, cap, (size_t)want + 1);
	int r = LZ4_decompress_safe((const char *)en->data, (char *)*buf, (int)n, (int)want);
	if (r < 0)
		return err_set(e, "offset 0x%zx: corrupt LZ4 payload", en->entry_off);
	if ((uint64_t)r != want)
		return err_set(e, "offset 0x%zx: LZ4 payload holds %d bytes, the entry header "
		               "says %llu", en->entry_off, r, (unsigned long long)want);
	*len = (size_t)r;
	return 0;
}

int fatbin_entry_data(const FatbinEntry *en, uint8_t **buf, size_t *cap, size_t *len,
                      Err *e)
{
	int rc;
	if (en->flags & FLAG_OLD_COMPRESS && en->codec == FATBIN_STORED)
		return err_set(e, "offset 0x%zx: entry uses the old NVIDIA compression (flags "
		               "0x%llx), which is not supported", en->entry_off,
		               (unsigned long long)en->flags);
	switch (en->codec) {
	case FATBIN_ZSTD:
		rc = unzstd(en, buf, cap, len, e);
		break;
	case FATBIN_LZ4:
		rc = unlz4(en, buf, cap, len, e);
		break;
	default:
		ensure(buf, cap, en->data_size + 1);
		if (en->data_size)
			memcpy(*buf, en->data, en->data_size);
		*len = en->data_size;
		rc = 0;
		break;
	}
	if (rc)
		return rc;
	if (en->kind == FATBIN_PTX)
		while (*len && (*buf)[*len - 1] == 0)
			(*len)--;
	(*buf)[*len] = 0;
	return 0;
}
