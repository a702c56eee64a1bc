/*
 * profile.c - the clock reads of a profile, carried over to a spliced
 * module, and the statistics of their dump (profile.h has the model).
 *
 * Decisions:
 *  - One record, stored before the one exit, with every read in it: the
 *    stores run once per warp after everything timed, and the dump is one
 *    slot per point per warp.  A kernel with several exits is refused
 *    rather than given one record per exit: each record would make its own
 *    reads, and every read is a register held to the end.
 *  - Two points at one place in the text (an epilogue's end and the next
 *    phase's start, "after s" and "before s+1" with no label between) are
 *    one read: the reads are the probes, and fewer probes perturb less.
 *  - Percentiles by nearest rank: each figure printed is a cycle count some
 *    warp measured, not an interpolation between two.
 */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

void prof_plan_release(ProfilePlan *pp)
{
	probe_plan_release(&pp->plan);
	VEC_FREE(pp->phases);
	sb_release(&pp->why);
	memset(pp, 0, sizeof *pp);
}

static bool labelled(const Module *m, const Func *f, uint32_t at)
{
	for (uint32_t i = 0; i < f->nlabel; i++)
		if (m->labels.v[f->label0 + i].stmt == at)
			return true;
	return false;
}

static bool is_exit(const Stmt *s)
{
	return s->op == OP_RET || s->op == OP_EXIT;
}

/* "before s" as "after s-1" where that is the same point of the text. */
static void normalise(const Module *m, const Func *f, uint32_t *at, bool *before)
{
	if (*before && *at > 0 && !labelled(m, f, *at)) {
		const Stmt *p = func_stmt(m, f, *at - 1);
		Op op = (Op)p->op;
		if (op != OP_BRA && op != OP_BRX && !is_exit(p) && op != OP_TRAP) {
			(*at)--;
			*before = false;
		}
	}
}

/*
 * The value index of a read of `name` (as fmt) at (at, before) in pp's
 * record, added when there is none; -1 when a read cannot go there (the
 * reason in e).  pp->plan holds the record, pp->exit its position.
 */
static int32_t add_read(ProfilePlan *pp, const Module *m, const Func *f, uint32_t at,
                        bool before, const char *name, ProbeFmt fmt, Err *e)
{
	ProbeRecord *r = &pp->plan.recs.v[0];
	uint32_t nat = at;
	bool nbefore = before;
	normalise(m, f, &nat, &nbefore);
	for (size_t k = 0; k < r->vals.n; k++) {
		const ProbeValue *v = &r->vals.v[k];
		if (v->read_at == nat && v->read_before == nbefore && v->fmt == fmt &&
		    !strcmp(v->name, name))
			return (int32_t)k;
	}
	ProbeValue v = {.kind = PV_READ, .fmt = (uint8_t)fmt, .def = UINT32_MAX};
	v.read_at = nat;
	v.read_before = nbefore;
	v.name = (char *)name;
	ProbeRecord t = *r;
	t.vals.v = &v;
	t.vals.n = 1;
	if (probe_record_check(m, f, &t, e) < 0) {
		/* the same point as written, before normalising */
		v.read_at = at;
		v.read_before = before;
		err_release(e);
		*e = (Err)ERR_INIT;
		if (probe_record_check(m, f, &t, e) < 0)
			return -1;
	}
	v.name = xstrdup(name);
	VEC_PUSH(r->vals, v);
	return (int32_t)(r->vals.n - 1);
}

/* The read at a point that may be left out: -1 counted, with the reason. */
static int32_t point(ProfilePlan *pp, const Module *m, const Func *f, uint32_t at,
                     bool before)
{
	Err ce = ERR_INIT;
	int32_t k = add_read(pp, m, f, at, before, "%clock64", PF_U32, &ce);
	if (k < 0 && !pp->unread++)
		sb_adds(&pp->why, err_msg(&ce));
	err_release(&ce);
	return k;
}

/* The one exit of f, or -1 naming why there is none. */
static int find_exit(const Module *m, const Func *f, uint32_t *exit_at, Err *e)
{
	uint32_t n = 0, at = 0;
	Str fn = mod_str(m, f->name);
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = func_stmt(m, f, i);
		if (!is_exit(s))
			continue;
		if (s->flags & STMT_GUARD)
			return err_set(
			    e,
			    "profile: '%.*s': s%u (line %u) is a guarded exit: the "
			    "record before it would be stored by warps that go on",
			    (int)fn.n, fn.p, i, s->line);
		n++;
		at = i;
	}
	if (n != 1)
		return err_set(
		    e,
		    "profile: '%.*s' has %u exits (ret or exit): a profile needs "
		    "exactly one, where its record is stored",
		    (int)fn.n, fn.p, n);
	*exit_at = at;
	return 0;
}

static int start_record(ProfilePlan *pp, const Module *m, const Func *f, Err *e)
{
	memset(pp, 0, sizeof *pp);
	if (find_exit(m, f, &pp->exit, e) < 0)
		return -1;
	ProbeRecord r = {.at = pp->exit, .before = true, .per_warp = true};
	VEC_PUSH(pp->plan.recs, r);
	return 0;
}

/* The kernel's start reads after s0 and its end read before the exit. */
static int kernel_reads(ProfilePlan *pp, const Module *m, const Func *f, uint32_t s0,
                        uint32_t end, Err *e)
{
	if ((pp->v_gt = add_read(pp, m, f, s0, false, "%globaltimer", PF_U64, e)) < 0 ||
	    (pp->v_k0 = add_read(pp, m, f, s0, false, "%clock64", PF_U32, e)) < 0)
		return err_set(e, "profile: the kernel's start: %s", err_msg(e));
	/* the second read of the pair: a value of its own at the same point */
	ProbeRecord *r = &pp->plan.recs.v[0];
	ProbeValue v = r->vals.v[pp->v_k0];
	v.name = xstrdup("%clock64");
	VEC_PUSH(r->vals, v);
	pp->v_k1 = (int32_t)(r->vals.n - 1);
	if ((pp->v_end = add_read(pp, m, f, end, true, "%clock64", PF_U32, e)) < 0)
		return err_set(e, "profile: the kernel's end: %s", err_msg(e));
	return 0;
}

int prof_plan(const Module *m, const Func *f, const NumList *window, ProfilePlan *pp,
              Err *e)
{
	if (start_record(pp, m, f, e) < 0)
		return -1;
	PhaseList pl = {0};
	ana_phase_find(m, f, 0, &pl);
	int rc = -1;
	if (!pl.n) {
		Str fn = mod_str(m, f->name);
		err_set(e, "profile: '%.*s' has no mma phase", (int)fn.n, fn.p);
		goto out;
	}
	for (size_t i = 0; window && i < window->n; i++)
		if (window->v[i] > pl.n) {
			char *who = xstrndup(mod_str(m, f->name).p, mod_str(m, f->name).n);
			ana_phase_missing("--window", window->v[i], who, pl.n, e);
			free(who);
			goto out;
		}
	if (kernel_reads(pp, m, f, 0, pp->exit, e) < 0)
		goto out;
	for (size_t i = 0; i < pl.n; i++) {
		const Phase *ph = &pl.v[i];
		if (window && !numlist_has(window, ph->number))
			continue;
		ProfilePhase q = {.phase = ph->number, .v_epi_end = -1};
		q.epilogue = ph->epi_last >= ph->epi_first;
		q.v_start = point(pp, m, f, ph->first, true);
		q.v_end = point(pp, m, f, ph->last, false);
		if (q.epilogue)
			q.v_epi_end = point(pp, m, f, ph->epi_last, false);
		VEC_PUSH(pp->phases, q);
	}
	rc = probe_plan_layout(&pp->plan, e);
out:
	phases_release(&pl);
	return rc;
}

int prof_plan_map(const ProfilePlan *po, const Module *mo, const Func *fo,
                  const Module *ms, const Func *fs, const uint32_t *match,
                  const ProbeCut *cuts, size_t ncuts, ProfilePlan *ps, Err *e)
{
	(void)mo;
	if (start_record(ps, ms, fs, e) < 0)
		return err_set(e, "the spliced module: %s", err_msg(e));
	ps->v_gt = ps->v_k0 = ps->v_k1 = ps->v_end = -1;
	/* each read of the original as a record of its own at its point */
	const ProbeRecord *ro = &po->plan.recs.v[0];
	ProbePlan one = {0}, kept = {0}, mapped = {0};
	ProbeIndexVec dropped = {0};
	for (size_t k = 0; k < ro->vals.n; k++) {
		ProbeRecord r = {.at = ro->vals.v[k].read_at,
		                 .before = ro->vals.v[k].read_before};
		ProbeValue v = ro->vals.v[k];
		v.name = xstrdup(v.name);
		VEC_PUSH(r.vals, v);
		VEC_PUSH(one.recs, r);
	}
	probe_plan_map(&one, match, fo->nstmt, fs->nstmt, cuts, ncuts, &kept, &mapped,
	               &dropped);
	int32_t *to = xmalloc((ro->vals.n + 1) * sizeof(int32_t));
	int rc = -1;
	for (size_t k = 0, d = 0, q = 0; k < ro->vals.n; k++) {
		if (d < dropped.n && dropped.v[d] == k) {
			to[k] = -1;
			d++;
			continue;
		}
		const ProbeRecord *mr = &mapped.recs.v[q++];
		const ProbeValue *v = &ro->vals.v[k];
		Err ce = ERR_INIT;
		if ((int32_t)k == po->v_k1) {
			/* the second of the back-to-back pair: beside the first */
			ProbeRecord *r = &ps->plan.recs.v[0];
			if (ps->v_k0 < 0) {
				to[k] = -1;
				continue;
			}
			ProbeValue w = r->vals.v[ps->v_k0];
			w.name = xstrdup(w.name);
			VEC_PUSH(r->vals, w);
			to[k] = (int32_t)(r->vals.n - 1);
			continue;
		}
		to[k] =
		    add_read(ps, ms, fs, mr->vals.v[0].read_at, mr->vals.v[0].read_before,
		             v->name, (ProbeFmt)v->fmt, &ce);
		if (to[k] < 0 && !ps->unread++)
			sb_adds(&ps->why, err_msg(&ce));
		err_release(&ce);
		if ((int32_t)k == po->v_k0)
			ps->v_k0 = to[k];
	}
	ps->v_gt = po->v_gt >= 0 ? to[po->v_gt] : -1;
	ps->v_k0 = po->v_k0 >= 0 ? to[po->v_k0] : -1;
	ps->v_k1 = po->v_k1 >= 0 ? to[po->v_k1] : -1;
	ps->v_end = po->v_end >= 0 ? to[po->v_end] : -1;
	if (ps->v_k0 < 0 || ps->v_end < 0) {
		err_set(e,
		        "the spliced module: the kernel's start or end has no "
		        "counterpart%s%s",
		        ps->unread ? ": " : "", ps->unread ? ps->why.p : "");
		goto out;
	}
	for (size_t i = 0; i < po->phases.n; i++) {
		ProfilePhase q = po->phases.v[i];
		q.v_start = q.v_start >= 0 ? to[q.v_start] : -1;
		q.v_end = q.v_end >= 0 ? to[q.v_end] : -1;
		q.v_epi_end = q.v_epi_end >= 0 ? to[q.v_epi_end] : -1;
		VEC_PUSH(ps->phases, q);
	}
	rc = probe_plan_layout(&ps->plan, e);
out:
	free(to);
	probe_plan_release(&one);
	probe_plan_release(&kept);
	probe_plan_release(&mapped);
	VEC_FREE(dropped);
	return rc;
}

/* ---- the dump ---------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The value at nearest rank ceil(p/100 x n) of sorted v[0..n). */
static double rank(const double *v, size_t n, unsigned p)
{
	size_t r = (p * n + 99) / 100;
	if (r < 1)
		r = 1;
	return v[r - 1];
}

void prof_stat(double *v, size_t n, ProfStat *s)
{
	memset(s, 0, sizeof *s);
	if (!n)
		return;
	qsort(v, n, sizeof(double), cmp_double);
	s->n = n;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->mean = sum / (double)n;
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s->p10 = rank(v, n, 10);
	s->p90 = rank(v, n, 90);
	s->min = v[0];
	s->max = v[n - 1];
}

static uint64_t val(const ProfilePlan *pp, const unsigned char *dump, uint64_t w,
                    int32_t k)
{
	const ProbeValue *v = &pp->plan.recs.v[0].vals.v[k];
	return probe_value_bits((ProbeFmt)v->fmt,
	                        dump + probe_dump_offset(&pp->plan, 0, (size_t)k, w, 0));
}

int prof_analyse(const ProfilePlan *pp, const unsigned grid[3], const unsigned block[3],
                 const unsigned char *dump, uint64_t len, ProfResult *r, Err *e)
{
	memset(r, 0, sizeof *r);
	uint64_t warps = probe_grid_warps(grid, block);
	uint64_t bw = probe_block_warps(block);
	if (len != probe_dump_bytes(&pp->plan, grid, block))
		return err_set(
		    e, "profile: the dump has %llu bytes, the plan's takes %llu",
		    (unsigned long long)len,
		    (unsigned long long)probe_dump_bytes(&pp->plan, grid, block));
	size_t np = pp->phases.n;
	r->nphases = np;
	r->phases = xcalloc(np + 1, sizeof(ProfPhaseStat));
	double *kern = xcalloc(warps + 1, sizeof(double));
	double *ph = xcalloc((warps + 1) * (np + 1), sizeof(double));
	double *ep = xcalloc((warps + 1) * (np + 1), sizeof(double));
	size_t *nph = xcalloc(np + 1, sizeof(size_t)),
	       *nep = xcalloc(np + 1, sizeof(size_t));
	uint64_t nblocks = bw ? warps / bw : 0;
	uint64_t *bstart = xcalloc(nblocks + 1, sizeof(uint64_t));
	bool *bseen = xcalloc(nblocks + 1, sizeof(bool));
	size_t nk = 0;
	const ProbeRecord *rec = &pp->plan.recs.v[0];
	for (uint64_t w = 0; w < warps; w++) {
		const unsigned char *area = dump + w * pp->plan.warp_bytes + rec->off;
		bool any = false;
		for (uint64_t b = 0; b < rec->bytes && !any; b++)
			any = area[b] != 0;
		if (!any) {
			r->missing++;
			continue;
		}
		r->warps++;
		uint32_t k0 = (uint32_t)val(pp, dump, w, pp->v_k0);
		uint32_t k1 = pp->v_k1 >= 0 ? (uint32_t)val(pp, dump, w, pp->v_k1) : k0;
		uint32_t end = (uint32_t)val(pp, dump, w, pp->v_end);
		kern[nk++] = (double)(uint32_t)(end - k0);
		uint32_t d = k1 - k0;
		if (d && (!r->resolution || d < r->resolution))
			r->resolution = d;
		if (pp->v_gt >= 0 && bw) {
			uint64_t b = w / bw, gt = val(pp, dump, w, pp->v_gt);
			if (!bseen[b] || gt < bstart[b])
				bstart[b] = gt;
			bseen[b] = true;
		}
		for (size_t i = 0; i < np; i++) {
			const ProfilePhase *q = &pp->phases.v[i];
			uint32_t s = 0, t = 0;
			if (q->v_start >= 0 && q->v_end >= 0) {
				s = (uint32_t)val(pp, dump, w, q->v_start);
				t = (uint32_t)val(pp, dump, w, q->v_end);
				ph[i * (warps + 1) + nph[i]++] =
				    (double)(uint32_t)(t - s);
			}
			if (q->v_end >= 0 && q->v_epi_end >= 0) {
				t = (uint32_t)val(pp, dump, w, q->v_end);
				uint32_t u = (uint32_t)val(pp, dump, w, q->v_epi_end);
				ep[i * (warps + 1) + nep[i]++] =
				    (double)(uint32_t)(u - t);
			}
		}
	}
	prof_stat(kern, nk, &r->kernel);
	for (size_t i = 0; i < np; i++) {
		prof_stat(ph + i * (warps + 1), nph[i], &r->phases[i].phase);
		prof_stat(ep + i * (warps + 1), nep[i], &r->phases[i].epilogue);
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t b = 0; b < nblocks; b++) {
		if (!bseen[b])
			continue;
		r->blocks++;
		lo = bstart[b] < lo ? bstart[b] : lo;
		hi = bstart[b] > hi ? bstart[b] : hi;
	}
	r->block_spread_ns = r->blocks ? (double)(hi - lo) : 0;
	free(kern);
	free(ph);
	free(ep);
	free(nph);
	free(nep);
	free(bstart);
	free(bseen);
	return 0;
}

void prof_result_release(ProfResult *r)
{
	free(r->phases);
	memset(r, 0, sizeof *r);
}
