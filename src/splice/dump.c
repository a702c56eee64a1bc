/*
 * dump.c - reading a probe dump: where a value is, what it says, and how
 * far two values are apart (probe.h has the layout and the definitions).
 *
 * Decisions:
 *  - Distances between floats count the steps between them in the format's
 *    ordered set of values, with -0 and +0 as two neighbouring values: two
 *    values whose bits differ are never 0 apart, and the distance is a
 *    function of the bits alone (expected values can be worked out by
 *    hand).  NaNs have no place in that order: any NaN against different
 *    bits is PROBE_DIST_NAN.
 *  - Comparing two dumps first compares each warp's area of a record as
 *    bytes; only an area that differs is walked value by value.  Before
 *    the first difference (the common case) that is a memcmp per warp.
 */
#include "probe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t probe_block_warps(const unsigned block[3])
{
	uint64_t t = (uint64_t)block[0] * block[1] * block[2];
	return (t + 31) / 32;
}

uint64_t probe_grid_warps(const unsigned grid[3], const unsigned block[3])
{
	return (uint64_t)grid[0] * grid[1] * grid[2] * probe_block_warps(block);
}

uint64_t probe_dump_bytes(const ProbePlan *p, const unsigned grid[3],
                          const unsigned block[3])
{
	return probe_grid_warps(grid, block) * p->warp_bytes;
}

static unsigned slot(ProbeFmt f)
{
	return probe_fmt_bits(f) == 64 ? 8 : 4;
}

uint64_t probe_dump_offset(const ProbePlan *p, size_t rec, size_t val, uint64_t warp,
                           unsigned lane)
{
	const ProbeRecord *r = &p->recs.v[rec];
	const ProbeValue *v = &r->vals.v[val];
	uint64_t off = warp * p->warp_bytes + r->off + v->off;
	if (!r->per_warp)
		off += (uint64_t)lane * slot((ProbeFmt)v->fmt);
	return off;
}

void probe_warp_where(uint64_t warp, const unsigned grid[3], const unsigned block[3],
                      unsigned bxyz[3], unsigned *warp_in_block)
{
	uint64_t bw = probe_block_warps(block);
	uint64_t blk = bw ? warp / bw : 0;
	*warp_in_block = (unsigned)(bw ? warp % bw : 0);
	bxyz[0] = (unsigned)(blk % grid[0]);
	bxyz[1] = (unsigned)(blk / grid[0] % grid[1]);
	bxyz[2] = (unsigned)(blk / ((uint64_t)grid[0] * grid[1]));
}

uint64_t probe_value_bits(ProbeFmt f, const unsigned char *p)
{
	unsigned bits = probe_fmt_bits(f);
	unsigned n = bits == 1 ? 4 : bits / 8;
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* ---- distances ------------------------------------------------------------- */

/* A float format: sign bit, exponent mask, mantissa mask. */
typedef struct {
	uint64_t sign, exp, mant;
} FloatBits;

static const FloatBits F16 = {0x8000, 0x7c00, 0x03ff};
static const FloatBits BF16 = {0x8000, 0x7f80, 0x007f};
static const FloatBits F32 = {0x80000000u, 0x7f800000u, 0x007fffffu};
static const FloatBits F64 = {0x8000000000000000ull, 0x7ff0000000000000ull,
                              0x000fffffffffffffull};

static bool is_nan(const FloatBits *fb, uint64_t x)
{
	return (x & fb->exp) == fb->exp && (x & fb->mant);
}

/* The position of x in the ordered set of the format's values: +0 is 0,
 * -0 is -1, the value after +0 is 1, the one below -0 is -2. */
static int64_t order_key(const FloatBits *fb, uint64_t x)
{
	uint64_t mag = x & (fb->exp | fb->mant);
	return (x & fb->sign) ? -(int64_t)mag - 1 : (int64_t)mag;
}

static uint64_t float_dist(const FloatBits *fb, uint64_t a, uint64_t b)
{
	if (a == b)
		return 0;
	if (is_nan(fb, a) || is_nan(fb, b))
		return PROBE_DIST_NAN;
	int64_t ka = order_key(fb, a), kb = order_key(fb, b);
	return ka > kb ? (uint64_t)ka - (uint64_t)kb : (uint64_t)kb - (uint64_t)ka;
}

static int64_t sext(uint64_t v, unsigned bits)
{
	if (bits >= 64)
		return (int64_t)v;
	uint64_t m = 1ull << (bits - 1);
	v &= (1ull << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

uint64_t probe_distance(ProbeFmt f, uint64_t a, uint64_t b, int *half)
{
	if (half)
		*half = 0;
	unsigned bits = probe_fmt_bits(f);
	switch (f) {
	case PF_F16:
		return float_dist(&F16, a & 0xffff, b & 0xffff);
	case PF_BF16:
		return float_dist(&BF16, a & 0xffff, b & 0xffff);
	case PF_F32:
		return float_dist(&F32, a & 0xffffffffu, b & 0xffffffffu);
	case PF_F64:
		return float_dist(&F64, a, b);
	case PF_F16X2:
	case PF_BF16X2: {
		const FloatBits *fb = f == PF_F16X2 ? &F16 : &BF16;
		uint64_t lo = float_dist(fb, a & 0xffff, b & 0xffff);
		uint64_t hi = float_dist(fb, (a >> 16) & 0xffff, (b >> 16) & 0xffff);
		if (half)
			*half = hi > lo;
		return hi > lo ? hi : lo;
	}
	case PF_S8:
	case PF_S16:
	case PF_S32:
	case PF_S64: {
		int64_t x = sext(a, bits), y = sext(b, bits);
		return x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
	}
	case PF_PRED:
		return (a != 0) != (b != 0);
	default: {
		uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
		a &= m;
		b &= m;
		return a > b ? a - b : b - a;
	}
	}
}

/* ---- values as text ------------------------------------------------------------ */

static double f16_value(uint64_t h)
{
	unsigned s = (h >> 15) & 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;
	if (e == 0)
		v = ldexp((double)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp((double)(m | 0x400), (int)e - 25);
	return s ? -v : v;
}

static double bf16_value(uint64_t h)
{
	uint32_t x = (uint32_t)(h & 0xffff) << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

static void num(StrBuf *out, double v)
{
	if (isnan(v))
		sb_adds(out, "nan");
	else if (isinf(v))
		sb_adds(out, v < 0 ? "-inf" : "inf");
	else if (v == 0 && signbit(v))
		sb_adds(out, "-0");
	else
		sb_addf(out, "%.9g", v);
}

void probe_value_text(ProbeFmt f, uint64_t bits, StrBuf *out)
{
	switch (f) {
	case PF_F16X2:
	case PF_BF16X2:
		sb_addf(out, "0x%08llx (", (unsigned long long)(bits & 0xffffffffu));
		num(out,
		    f == PF_F16X2 ? f16_value(bits & 0xffff) : bf16_value(bits & 0xffff));
		sb_adds(out, ", ");
		num(out, f == PF_F16X2 ? f16_value(bits >> 16 & 0xffff)
		                       : bf16_value(bits >> 16 & 0xffff));
		sb_adds(out, ")");
		return;
	case PF_F16:
	case PF_BF16:
		num(out, f == PF_F16 ? f16_value(bits) : bf16_value(bits));
		sb_addf(out, " (0x%04llx)", (unsigned long long)(bits & 0xffff));
		return;
	case PF_F32: {
		uint32_t x = (uint32_t)bits;
		float v;
		memcpy(&v, &x, 4);
		num(out, v);
		sb_addf(out, " (0x%08x)", x);
		return;
	}
	case PF_F64: {
		double v;
		memcpy(&v, &bits, 8);
		if (isnan(v) || isinf(v) || v == 0)
			num(out, v);
		else
			sb_addf(out, "%.17g", v);
		sb_addf(out, " (0x%016llx)", (unsigned long long)bits);
		return;
	}
	case PF_PRED:
		sb_adds(out, bits ? "true" : "false");
		return;
	case PF_S8:
	case PF_S16:
	case PF_S32:
	case PF_S64:
		sb_addf(out, "%lld", (long long)sext(bits, probe_fmt_bits(f)));
		return;
	case PF_U8:
	case PF_U16:
	case PF_U32:
	case PF_U64:
		sb_addf(out, "%llu", (unsigned long long)bits);
		return;
	default:
		sb_addf(out, "0x%0*llx", (int)(probe_fmt_bits(f) / 4),
		        (unsigned long long)bits);
	}
}

/* ---- comparing two dumps --------------------------------------------------------- */

int64_t probe_compare(const ProbePlan *p, const unsigned grid[3], const unsigned block[3],
                      const unsigned char *a, const unsigned char *b,
                      ProbeRecordDiff *diffs)
{
	uint64_t warps = probe_grid_warps(grid, block);
	int64_t first = -1;
	for (size_t ri = 0; ri < p->recs.n; ri++) {
		const ProbeRecord *r = &p->recs.v[ri];
		ProbeRecordDiff *d = &diffs[ri];
		memset(d, 0, sizeof *d);
		d->values = warps * r->nvals;
		unsigned lanes = r->per_warp ? 1 : 32;
		for (uint64_t w = 0; w < warps; w++) {
			uint64_t base = w * p->warp_bytes + r->off;
			if (!memcmp(a + base, b + base, r->bytes))
				continue;
			for (unsigned l = 0; l < lanes; l++)
				for (size_t k = 0; k < r->vals.n; k++) {
					ProbeFmt f = (ProbeFmt)r->vals.v[k].fmt;
					uint64_t off = probe_dump_offset(p, ri, k, w, l);
					uint64_t x = probe_value_bits(f, a + off),
					         y = probe_value_bits(f, b + off);
					if (x == y)
						continue;
					uint64_t dist = probe_distance(f, x, y, NULL);
					if (!d->differ) {
						d->warp = w;
						d->lane = l;
						d->val = (uint32_t)k;
						d->a = x;
						d->b = y;
						d->dist = dist;
					}
					d->differ++;
					if (dist == PROBE_DIST_NAN)
						d->any_nan = true;
					else if (dist > d->max_dist)
						d->max_dist = dist;
				}
		}
		if (d->differ && first < 0)
			first = (int64_t)ri;
	}
	return first;
}
