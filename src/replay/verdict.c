/*
 * verdict.c - the proof and the verdict of a replay.
 *
 * The proof: the original's entry, run from the dumped start state, must
 * leave the end state the dump recorded, bit for bit: every live-out of
 * every lane (the end record), every block's shared memory at the cut's
 * end, the bytes of the launch buffers the cut writes (the plan's spans,
 * as the buffer held them when the entry's launch ended) and the arrays
 * it writes through a surface.  When it does not, the state the dump took is not all the
 * cut depends on (or the cut is not deterministic), and no verdict is given. The verdict:
 * the spliced entry's end state against the original entry's, registers first (in the
 * probe layer's (warp, lane, value) order, as bisect reports a first difference), then
 * shared memory, then the buffers the cut writes.
 *
 * Decisions:
 *  - Differences are reported in bisect's terms: block coordinates, warp
 *    in the block, lane, the register, both values as the probe layer
 *    prints them and their distance in ulps (probe_distance), and how many
 *    values differ.  Shared memory, buffers and arrays have no lanes: the
 *    block (shared memory), the variable, buffer or array and the byte
 *    offset (an array's rows packed).
 */
#include "replay/replay.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static void regs_diff(const ReplayPlan *p, const ProbePlan *dp, const unsigned char *a,
                      const unsigned char *b, ReplayDiff *d)
{
	ProbeRecordDiff diffs[REPLAY_NREC];
	memset(diffs, 0, sizeof diffs);
	probe_compare(dp, p->grid, p->block, a, b, diffs);
	const ProbeRecordDiff *x = &diffs[REPLAY_REC_END];
	if (!x->differ)
		return;
	const ProbeValue *v = &dp->recs.v[REPLAY_REC_END].vals.v[x->val];
	d->any = true;
	d->count = x->differ;
	d->where = "register";
	probe_warp_where(x->warp, p->grid, p->block, d->block, &d->warp);
	d->lane = x->lane;
	snprintf(d->what, sizeof d->what, "%s", v->name);
	StrBuf sa = STRBUF_INIT, sb = STRBUF_INIT;
	probe_value_text((ProbeFmt)v->fmt, x->a, &sa);
	probe_value_text((ProbeFmt)v->fmt, x->b, &sb);
	snprintf(d->a, sizeof d->a, "%s", sa.p ? sa.p : "");
	snprintf(d->b, sizeof d->b, "%s", sb.p ? sb.p : "");
	sb_release(&sa);
	sb_release(&sb);
	d->ulps = x->dist;
	d->has_ulps = true;
}

/* The blocks' shared memory at the end: a against b. */
static void shared_diff(const ReplayPlan *p, const unsigned char *a,
                        const unsigned char *b, ReplayDiff *d)
{
	uint64_t sb = p->shared_bytes, count = 0, first_blk = 0, first_off = 0;
	for (uint64_t k = 0; k < p->blocks; k++) {
		const unsigned char *x = a + (2 * k + 1) * sb, *y = b + (2 * k + 1) * sb;
		if (!memcmp(x, y, sb))
			continue;
		for (uint64_t i = 0; i < sb; i++)
			if (x[i] != y[i]) {
				if (!count) {
					first_blk = k;
					first_off = i;
				}
				count++;
			}
	}
	if (!count)
		return;
	d->any = true;
	d->count = count;
	d->where = "shared";
	uint64_t bx = p->grid[0], by = p->grid[1];
	d->block[0] = (unsigned)(first_blk % bx);
	d->block[1] = (unsigned)(first_blk / bx % by);
	d->block[2] = (unsigned)(first_blk / bx / by);
	const char *name = "shared";
	uint64_t rel = first_off;
	for (size_t i = 0; i < p->shared.n; i++)
		if (first_off >= p->shared.v[i].off &&
		    first_off < p->shared.v[i].off + p->shared.v[i].bytes) {
			name = p->shared.v[i].name;
			rel = first_off - p->shared.v[i].off;
		}
	snprintf(d->what, sizeof d->what, "%s+%llu", name, (unsigned long long)rel);
	const unsigned char *x = a + (2 * first_blk + 1) * sb,
	                    *y = b + (2 * first_blk + 1) * sb;
	snprintf(d->a, sizeof d->a, "0x%02x", x[first_off]);
	snprintf(d->b, sizeof d->b, "0x%02x", y[first_off]);
}

/* Bytes a[0..n) against b[0..n): how many differ, the first at *first. */
static uint64_t bytes_diff(const unsigned char *a, const unsigned char *b, uint64_t n,
                           uint64_t *first)
{
	uint64_t count = 0;
	if (!memcmp(a, b, n))
		return 0;
	for (uint64_t k = 0; k < n; k++)
		if (a[k] != b[k] && !count++)
			*first = k;
	return count;
}

static void byte_diff(ReplayDiff *d, const char *where, const char *kind,
                      const char *name, uint64_t off, uint64_t count, unsigned char x,
                      unsigned char y)
{
	d->any = true;
	d->count = count;
	d->where = where;
	snprintf(d->what, sizeof d->what, "%s '%s'+%llu", kind, name,
	         (unsigned long long)off);
	snprintf(d->a, sizeof d->a, "0x%02x", x);
	snprintf(d->b, sizeof d->b, "0x%02x", y);
}

/* The arrays the cuts write: a[i] against b[i], each rows packed. */
static void arrays_diff(const ReplayPlan *p, const Manifest *mf, unsigned char *const *a,
                        unsigned char *const *b, ReplayDiff *d)
{
	for (size_t i = 0; i < p->arrays_out.n && !d->any; i++) {
		const MfArray *ar = &mf->arrays[p->arrays_out.v[i]];
		uint64_t first = 0,
		         count = bytes_diff(a[i], b[i], mf_array_bytes(ar), &first);
		if (count)
			byte_diff(d, "array", "array", ar->name, first, count,
			          a[i][first], b[i][first]);
	}
}

void replay_prove(const ReplayPlan *p, const ProbePlan *dp, const Manifest *mf,
                  const ReplayState *st, const ReplayEnd *end, ReplayDiff *d)
{
	memset(d, 0, sizeof *d);
	regs_diff(p, dp, st->regs, end->regs, d);
	if (!d->any)
		shared_diff(p, st->shared, end->shared, d);
	/* the bytes the cuts write: the entry's buffer at each span against
	 * the dump's bytes at the end of the entry's launch */
	uint64_t count = 0, first = 0;
	const ReplaySpan *at = NULL;
	const unsigned char *buf_at = NULL;
	for (size_t k = 0; k < p->spans.n && !d->any; k++) {
		const ReplaySpan *s = &p->spans.v[k];
		size_t bi = 0;
		while (bi < p->buffers_out.n && p->buffers_out.v[bi] != s->buf)
			bi++;
		if (bi == p->buffers_out.n)
			continue;
		uint64_t f = 0;
		uint64_t c = bytes_diff(st->span_end + s->at, end->bufs[bi] + s->lo,
		                        s->hi - s->lo, &f);
		if (c && !at) {
			at = s;
			first = f;
			buf_at = end->bufs[bi];
		}
		count += c;
	}
	if (at)
		byte_diff(d, "buffer", "buffer", mf->buffers[at->buf].name,
		          at->lo + first, count, st->span_end[at->at + first],
		          buf_at[at->lo + first]);
	if (!d->any)
		arrays_diff(p, mf, st->arr_end, end->arrs, d);
}

void replay_compare(const ReplayPlan *p, const ProbePlan *dp, const Manifest *mf,
                    const ReplayEnd *o, const ReplayEnd *s, ReplayDiff *d)
{
	memset(d, 0, sizeof *d);
	regs_diff(p, dp, o->regs, s->regs, d);
	if (d->any)
		return;
	shared_diff(p, o->shared, s->shared, d);
	if (d->any)
		return;
	for (size_t i = 0; i < p->buffers_out.n; i++) {
		const MfBuffer *b = &mf->buffers[p->buffers_out.v[i]];
		uint64_t first = 0,
		         count = bytes_diff(o->bufs[i], s->bufs[i], b->size, &first);
		if (count) {
			byte_diff(d, "buffer", "buffer", b->name, first, count,
			          o->bufs[i][first], s->bufs[i][first]);
			return;
		}
	}
	arrays_diff(p, mf, o->arrs, s->arrs, d);
}

void replay_diff_text(const ReplayDiff *d, StrBuf *o)
{
	if (!strcmp(d->where, "register")) {
		sb_addf(o, "block (%u,%u,%u) warp %u lane %u register %s: %s vs %s",
		        d->block[0], d->block[1], d->block[2], d->warp, d->lane, d->what,
		        d->a, d->b);
		if (d->ulps == PROBE_DIST_NAN)
			sb_adds(o, " (NaN)");
		else
			sb_addf(o, ", %llu ulp%s", (unsigned long long)d->ulps,
			        d->ulps == 1 ? "" : "s");
	} else if (!strcmp(d->where, "shared"))
		sb_addf(o, "block (%u,%u,%u) shared %s: %s vs %s", d->block[0],
		        d->block[1], d->block[2], d->what, d->a, d->b);
	else
		sb_addf(o, "%s: %s vs %s", d->what, d->a, d->b);
	sb_addf(o, "; %llu %s differ", (unsigned long long)d->count,
	        !strcmp(d->where, "register") ? "values" : "bytes");
}

cJSON *replay_diff_json(const ReplayDiff *d)
{
	cJSON *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "in", d->where);
	cJSON *b = cJSON_AddArrayToObject(x, "block");
	for (int i = 0; i < 3; i++)
		cJSON_AddItemToArray(b, cJSON_CreateNumber(d->block[i]));
	if (!strcmp(d->where, "register")) {
		cJSON_AddNumberToObject(x, "warp", d->warp);
		cJSON_AddNumberToObject(x, "lane", d->lane);
		if (d->ulps != PROBE_DIST_NAN)
			cJSON_AddNumberToObject(x, "ulps", (double)d->ulps);
	}
	cJSON_AddStringToObject(x, "what", d->what);
	cJSON_AddStringToObject(x, "original", d->a);
	cJSON_AddStringToObject(x, "other", d->b);
	cJSON_AddNumberToObject(x, "count", (double)d->count);
	return x;
}
