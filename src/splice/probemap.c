/*
 * probemap.c - a probe plan carried onto a spliced module: the statements
 * of the original and the spliced function aligned by their normalised
 * text (probe.h says how), and each record placed at its counterpart.
 *
 * Decisions:
 *  - Statements are compared by a 64-bit hash of their normalised text
 *    (FNV-1a and a finaliser), not by the text: two whose hashes agree are
 *    taken as equal.  A collision (about 2^-64 for a pair) could place a
 *    record of the spliced module at the wrong statement; it cannot change
 *    where the original's records are.
 */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A 64-bit hash of each statement's normalised text. */
static uint64_t *stmt_hashes(const Module *m, const Func *f)
{
	uint64_t *h = xcalloc(f->nstmt + 1, sizeof(uint64_t));
	StrBuf sb = STRBUF_INIT;
	for (uint32_t i = 0; i < f->nstmt; i++) {
		sb_reset(&sb);
		stmt_normalized(m, func_stmt(m, f, i), &sb);
		uint64_t x = 0xcbf29ce484222325ULL;
		for (size_t k = 0; k < sb.n; k++)
			x = (x ^ (unsigned char)sb.p[k]) * 0x100000001b3ULL;
		h[i] = mix64(x ^ sb.n);
	}
	sb_release(&sb);
	return h;
}

typedef struct {
	uint64_t key;
	uint32_t co, cs; /* occurrences in the original range, the spliced range */
	uint32_t po, ps; /* the position of the last occurrence */
	bool used;
} Slot;

typedef struct {
	uint32_t oa, ob, sa, sb;
} Gap;

/* Anchors of the gap: statements whose text occurs once in each range, as
 * (original, spliced) pairs, then the longest run of them in increasing
 * order on both sides.  Returns how many; their pairs in io/is. */
static size_t anchors(const uint64_t *ho, const uint64_t *hs, const Gap *g, uint32_t **io,
                      uint32_t **is)
{
	size_t n = (size_t)(g->ob - g->oa) + (g->sb - g->sa);
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	Slot *t = xcalloc(cap, sizeof(Slot));
	for (int side = 0; side < 2; side++) {
		const uint64_t *h = side ? hs : ho;
		uint32_t a = side ? g->sa : g->oa, b = side ? g->sb : g->ob;
		for (uint32_t i = a; i < b; i++) {
			size_t k = h[i] & (cap - 1);
			while (t[k].used && t[k].key != h[i])
				k = (k + 1) & (cap - 1);
			t[k].used = true;
			t[k].key = h[i];
			if (side) {
				t[k].cs++;
				t[k].ps = i;
			} else {
				t[k].co++;
				t[k].po = i;
			}
		}
	}
	/* candidates in original order */
	uint32_t *co = xcalloc(g->ob - g->oa + 1, sizeof(uint32_t));
	uint32_t *cs = xcalloc(g->ob - g->oa + 1, sizeof(uint32_t));
	size_t nc = 0;
	for (uint32_t i = g->oa; i < g->ob; i++) {
		size_t k = ho[i] & (cap - 1);
		while (t[k].key != ho[i])
			k = (k + 1) & (cap - 1);
		if (t[k].co == 1 && t[k].cs == 1) {
			co[nc] = i;
			cs[nc++] = t[k].ps;
		}
	}
	free(t);
	/* longest increasing run of cs (patience sorting) */
	uint32_t *tail = xcalloc(nc + 1, sizeof(uint32_t)),
	         *prev = xcalloc(nc + 1, sizeof(uint32_t));
	size_t len = 0;
	for (size_t i = 0; i < nc; i++) {
		size_t lo = 0, hi = len;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cs[tail[mid]] < cs[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		prev[i] = lo ? tail[lo - 1] : UINT32_MAX;
		tail[lo] = (uint32_t)i;
		if (lo == len)
			len++;
	}
	*io = xcalloc(len + 1, sizeof(uint32_t));
	*is = xcalloc(len + 1, sizeof(uint32_t));
	for (size_t k = len, i = len ? tail[len - 1] : 0; k > 0; k--) {
		(*io)[k - 1] = co[i];
		(*is)[k - 1] = cs[i];
		i = prev[i];
	}
	free(tail);
	free(prev);
	free(co);
	free(cs);
	return len;
}

void probe_align(const Module *mo, const Func *fo, const Module *ms, const Func *fs,
                 uint32_t **match_out, uint32_t *nmatched)
{
	uint64_t *ho = stmt_hashes(mo, fo), *hs = stmt_hashes(ms, fs);
	uint32_t *match = xmalloc((fo->nstmt + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i <= fo->nstmt; i++)
		match[i] = PROBE_NONE;
	VEC(Gap) stack = {0};
	Gap g0 = {0, fo->nstmt, 0, fs->nstmt};
	VEC_PUSH(stack, g0);
	while (stack.n) {
		Gap g = stack.v[--stack.n];
		while (g.oa < g.ob && g.sa < g.sb && ho[g.oa] == hs[g.sa])
			match[g.oa++] = g.sa++;
		while (g.oa < g.ob && g.sa < g.sb && ho[g.ob - 1] == hs[g.sb - 1])
			match[--g.ob] = --g.sb;
		if (g.oa == g.ob || g.sa == g.sb)
			continue;
		uint32_t *io, *is;
		size_t n = anchors(ho, hs, &g, &io, &is);
		uint32_t po = g.oa, ps = g.sa;
		for (size_t k = 0; k <= n; k++) {
			uint32_t eo = k < n ? io[k] : g.ob, es = k < n ? is[k] : g.sb;
			if (n && eo > po && es > ps) {
				Gap sub = {po, eo, ps, es};
				VEC_PUSH(stack, sub);
			}
			if (k < n) {
				match[io[k]] = is[k];
				po = io[k] + 1;
				ps = is[k] + 1;
			}
		}
		free(io);
		free(is);
	}
	VEC_FREE(stack);
	uint32_t cnt = 0;
	for (uint32_t i = 0; i < fo->nstmt; i++)
		cnt += match[i] != PROBE_NONE;
	*nmatched = cnt;
	*match_out = match;
	free(ho);
	free(hs);
}

static bool inside_cut(const ProbeCut *cuts, size_t n, uint32_t i, bool before)
{
	for (size_t k = 0; k < n; k++)
		if (before ? (i > cuts[k].first && i <= cuts[k].last)
		           : (i >= cuts[k].first && i < cuts[k].last))
			return true;
	return false;
}

/* The spliced position of "after (before) original statement i". */
static uint32_t map_pos(const uint32_t *match, uint32_t no, uint32_t ns,
                        const ProbeCut *cuts, size_t ncuts, uint32_t i, bool before)
{
	if (i >= no || inside_cut(cuts, ncuts, i, before))
		return PROBE_NONE;
	if (before) {
		if (i == 0)
			return match[0] != PROBE_NONE || ns ? 0 : PROBE_NONE;
		if (match[i - 1] != PROBE_NONE)
			return match[i - 1] + 1 < ns ? match[i - 1] + 1 : PROBE_NONE;
		return match[i];
	}
	uint32_t next = i + 1 < no ? match[i + 1] : ns;
	if (next != PROBE_NONE)
		return next ? next - 1 : PROBE_NONE;
	return match[i];
}

void probe_plan_map(const ProbePlan *orig, const uint32_t *match, uint32_t nstmt_o,
                    uint32_t nstmt_s, const ProbeCut *cuts, size_t ncuts, ProbePlan *kept,
                    ProbePlan *mapped, ProbeIndexVec *dropped)
{
	memset(kept, 0, sizeof *kept);
	memset(mapped, 0, sizeof *mapped);
	kept->skipped = mapped->skipped = orig->skipped;
	for (size_t i = 0; i < orig->recs.n; i++) {
		const ProbeRecord *r = &orig->recs.v[i];
		uint32_t at =
		    map_pos(match, nstmt_o, nstmt_s, cuts, ncuts, r->at, r->before);
		bool ok = at != PROBE_NONE;
		for (size_t k = 0; k < r->vals.n && ok; k++)
			if (r->vals.v[k].kind == PV_READ)
				ok = map_pos(match, nstmt_o, nstmt_s, cuts, ncuts,
				             r->vals.v[k].read_at,
				             r->vals.v[k].read_before) != PROBE_NONE;
		if (!ok) {
			VEC_PUSH(*dropped, (uint32_t)i);
			continue;
		}
		ProbeRecord a, b;
		probe_record_copy(r, &a);
		probe_record_copy(r, &b);
		b.at = at;
		for (size_t k = 0; k < b.vals.n; k++) {
			ProbeValue *v = &b.vals.v[k];
			v->def = UINT32_MAX;
			if (v->kind == PV_READ)
				v->read_at = map_pos(match, nstmt_o, nstmt_s, cuts, ncuts,
				                     v->read_at, v->read_before);
		}
		VEC_PUSH(kept->recs, a);
		VEC_PUSH(mapped->recs, b);
	}
}
