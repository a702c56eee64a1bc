/*
 * plan_mem.c - the memory a cut touches outside its registers and shared
 * memory, for its state plan (plan.c holds the rest).
 *
 * Global memory.  The buffers the cuts read are taken whole at the
 * launch's start: that is the state at the cut only when the kernel itself
 * never writes such a buffer (another block may have run past the cut
 * before this one reached it), which is checked against every store of
 * the kernel; a read of a buffer the kernel may write, or a read whose
 * address the facts cannot resolve to one launch buffer, is refused,
 * naming the statements.
 *
 * The bytes the cuts write.  Each store's bytes in its buffer come from
 * the address facts: the constant offset, and the thread-dependent part
 * when it is a sum of special registers times strides (bounded over the
 * launch's grid and block); a store the facts do not bound stands for its
 * whole buffer.  Those spans are taken at the launch's start (put back
 * before each entry) and at the end of the entry's launch (the dump runs
 * that launch alone, then reads them): that is the cut's end state of
 * those bytes only when nothing else of the kernel writes them, so every
 * store, atomic and call of the original outside its cut is checked
 * against the spans, and one that may write them is refused, naming it.
 * The proof then requires the original's entry to leave the spans as the
 * dump's launch did, bit for bit; the verdict compares the written
 * buffers whole between the two entries.
 *
 * Arrays.  A surface write replays when its object is a surface field of
 * the launch: the array is taken whole at the launch's start, put back
 * before each entry, and compared whole at the end (with the dump's array
 * at the end of the entry's launch for the proof, between the entries for
 * the verdict), the driver's array copies doing the moving; a surface
 * write of it outside the cut (a surface picked by `selp` counts for both
 * sides) is refused.  A surface read or a texture fetch replays when
 * nothing of the kernel may write its array: one no surface is bound to
 * holds the layer's contents at every cut; one an earlier launch may write
 * is taken at the launch's start.
 *
 * Decisions:
 *  - Whole arrays, not bounded texels: surface coordinates are not byte
 *    addresses, and a frame-sized array is a few kilobytes to megabytes.
 *  - Outside writes are refused per buffer, the first statement named with
 *    the count of the others, so a plan stays readable when an epilogue's
 *    scatter meets a hundred other stores of the same buffer.
 */
#include "replay/plan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. buffers -------------------------------------------------------------------- */

/* Where in the parameter block the pointer an address is based on lies:
 * its parameter's offset (df's function) plus the field inside it. */
static int64_t field_offset(Dataflow *df, const Addr *a)
{
	int64_t p0 = plan_param_start(df_module(df), df_func(df), a->base_name);
	return p0 < 0 ? -1 : p0 + a->param_off;
}

/* The manifest buffer of parameter field `off` of the launch, or -1. */
static int field_buffer(const ReplayRequest *q, int64_t off)
{
	for (size_t i = 0; i < q->launch->nfields; i++) {
		const MfField *fl = &q->launch->fields[i];
		if (fl->kind == MF_P_BUFFER && fl->offset == off)
			return fl->ref;
	}
	return -1;
}

static void push_int(void *vec, int x)
{
	VEC(int) *v = vec;
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] == x)
			return;
	VEC_PUSH(*v, x);
}

/*
 * Which launch buffer a global access at statement s (of df's function)
 * is of: *buf the buffer, or -1 with *sym a module symbol; returns false
 * (with *why) when the facts cannot name one.
 */
static bool access_of(const ReplayRequest *q, Dataflow *df, uint32_t s, int *buf,
                      Str *sym, const char **why)
{
	Addr a;
	*buf = -1;
	*sym = str_of(NULL, 0);
	int r = addr_resolve(df, s, &a);
	if (r != 1) {
		*why = r == 0 && a.why ? a.why : "no address operand";
		return false;
	}
	if (a.base == AB_PARAM && a.param_ptr) {
		*buf = field_buffer(q, field_offset(df, &a));
		if (*buf < 0) {
			*why = "the parameter field it is based on is no buffer of the "
			       "manifest";
			return false;
		}
		return true;
	}
	if (a.base == AB_SYMBOL) {
		*sym = a.base_name;
		return true;
	}
	*why = a.base == AB_SPECIAL || a.base == AB_ABSOLUTE ? "a constant address"
	                                                     : "unresolved";
	return false;
}

/* Every global/generic store of the original kernel that may write buffer
 * `buf` (or symbol `sym`): the first one, or -1. */
static int64_t kernel_writes(const ReplayRequest *q, int buf, Str sym)
{
	for (uint32_t i = 0; i < q->fo->nstmt; i++) {
		MemEffect me = df_mem_effect(q->dfo, i);
		if (!(me.flags & (ME_STORE | ME_ATOMIC | ME_CALL)))
			continue;
		if (me.flags & ME_CALL)
			return i;
		Space sp = me.store;
		if (sp != SP_GLOBAL && sp != SP_GENERIC)
			continue;
		int b;
		Str s;
		const char *why;
		if (!access_of(q, q->dfo, i, &b, &s, &why))
			return i; /* may write anything */
		if (buf >= 0 ? b == buf : (b < 0 && str_eq(s, sym)))
			return i;
	}
	return -1;
}

/*
 * The array a texture or surface access at statement i of w's function
 * is of: its object (operand `opd`, the address's first register) a
 * parameter field of the launch of `kind` (MF_P_TEXTURE, MF_P_SURFACE),
 * the object itself a field (rebased, or loaded in the cut from the
 * replay's parameter block).  Returns the array's index, or -1 for
 * anything else: a .texref, a handle the walk cannot place.
 */
static int object_array(const ReplayRequest *q, Walk *w, uint32_t i, unsigned opd,
                        MfFieldKind kind)
{
	const Module *m = w->m;
	const Stmt *s = func_stmt(m, w->f, i);
	if (s->nopd <= opd)
		return -1;
	uint32_t ai = stmt_opd_index(m, s, opd);
	const Operand *a = &m->opds.v[ai];
	if (a->kind != OPD_ADDR || !a->sub || m->opds.v[ai + 1].kind != OPD_REG)
		return -1;
	Val v = plan_val_of_opd(w, i, ai + 1);
	if (v.kind != RV_PARAM || v.param_off < 0)
		return -1;
	int64_t off = plan_param_start(m, w->f, v.sym);
	if (off < 0)
		return -1;
	off += v.param_off;
	for (size_t k = 0; k < q->launch->nfields; k++) {
		const MfField *fl = &q->launch->fields[k];
		if (fl->kind == kind && fl->offset == off && fl->ref >= 0 &&
		    (size_t)fl->ref < q->mf->narrays)
			return fl->ref;
	}
	return -1;
}

/* The array a parameter-field value v is a surface object over, or -1. */
static int surface_of(const ReplayRequest *q, Walk *w, Val v)
{
	if (v.kind != RV_PARAM || v.param_off < 0)
		return -1;
	int64_t off = plan_param_start(w->m, w->f, v.sym);
	if (off < 0)
		return -1;
	off += v.param_off;
	for (size_t k = 0; k < q->launch->nfields; k++) {
		const MfField *fl = &q->launch->fields[k];
		if (fl->kind == MF_P_SURFACE && fl->offset == off && fl->ref >= 0 &&
		    (size_t)fl->ref < q->mf->narrays)
			return fl->ref;
	}
	return -1;
}

/* May surface store s of the original (w a walk over it) write array
 * `arr`?  Its object one surface field, or a selp of two (a kernel that
 * picks its output surface per thread); anything else may write any. */
static bool sust_may_write(const ReplayRequest *q, Walk *w, uint32_t s, int arr)
{
	int a = object_array(q, w, s, 0, MF_P_SURFACE);
	if (a >= 0)
		return a == arr;
	const Stmt *st = func_stmt(w->m, w->f, s);
	uint32_t ai = stmt_opd_index(w->m, st, 0);
	if (w->m->opds.v[ai].kind != OPD_ADDR || !w->m->opds.v[ai].sub)
		return true;
	int64_t r = df_opd_reg(w->df, ai + 1);
	int64_t d = r < 0 ? -1 : df_reaching_def(w->df, s, (uint32_t)r);
	const Stmt *ds = d >= 0 ? func_stmt(w->m, w->f, (uint32_t)d) : NULL;
	if (!ds || ds->op != OP_SELP || ds->nopd < 3)
		return true;
	int x = surface_of(q, w,
	                   plan_val_of_opd(w, (uint32_t)d, stmt_opd_index(w->m, ds, 1)));
	int y = surface_of(q, w,
	                   plan_val_of_opd(w, (uint32_t)d, stmt_opd_index(w->m, ds, 2)));
	return x < 0 || y < 0 || x == arr || y == arr;
}

/* The first statement of the original kernel (outside the original's cut
 * when `outside`) that may write array `arr` through a surface, or -1. */
static int64_t kernel_writes_array(const ReplayRequest *q, int arr, bool outside)
{
	Walk ow = {q->dfo, q->mo, q->fo, NULL, NULL, 0};
	Walk *w = &ow;
	ow.memo = xcalloc(q->fo->nstmt + 1, sizeof(Val));
	ow.state = xcalloc(q->fo->nstmt + 1, 1);
	int64_t found = -1;
	for (uint32_t i = 0; i < q->fo->nstmt && found < 0; i++) {
		if (outside && i >= q->first && i <= q->last)
			continue;
		const Stmt *s = func_stmt(q->mo, q->fo, i);
		if (s->op == OP_SUST || s->op == OP_SURED) {
			if (sust_may_write(q, w, i, arr))
				found = i;
		} else if (df_mem_effect(q->dfo, i).flags & ME_CALL)
			found = i;
	}
	free(ow.memo);
	free(ow.state);
	return found;
}

/* ---- 2. the bytes the cuts write --------------------------------------------------- */

/* The values special register `name` takes in the launch, [*lo, *hi];
 * false for one replay does not bound (%warpid, %smid, a clock). */
static bool special_range(const ReplayPlan *p, Str name, int64_t *lo, int64_t *hi)
{
	static const char *const dims[] = {".x", ".y", ".z"};
	for (int d = 0; d < 3; d++) {
		char t[32];
		snprintf(t, sizeof t, "%%tid%s", dims[d]);
		if (str_eqc(name, t))
			return *lo = 0, *hi = (int64_t)p->block[d] - 1, true;
		snprintf(t, sizeof t, "%%ctaid%s", dims[d]);
		if (str_eqc(name, t))
			return *lo = 0, *hi = (int64_t)p->grid[d] - 1, true;
		snprintf(t, sizeof t, "%%ntid%s", dims[d]);
		if (str_eqc(name, t))
			return *lo = *hi = (int64_t)p->block[d], true;
		snprintf(t, sizeof t, "%%nctaid%s", dims[d]);
		if (str_eqc(name, t))
			return *lo = *hi = (int64_t)p->grid[d], true;
	}
	if (str_eqc(name, "%laneid"))
		return *lo = 0, *hi = 31, true;
	return false;
}

/*
 * The bytes a global store at statement s (of df's function) writes in
 * its launch buffer: [*lo, *hi) of *buf, bounded (true) when the address
 * facts give its constant offset and its thread-dependent part as a sum
 * of special registers times strides (over every thread of the launch);
 * else the whole buffer (false).  -1 in *buf when the store is of no
 * launch buffer (access_of says so).
 */
static bool store_bytes(const ReplayPlan *p, const ReplayRequest *q, Dataflow *df,
                        uint32_t s, int *buf, uint64_t *lo, uint64_t *hi)
{
	Addr a;
	*buf = -1;
	if (addr_resolve(df, s, &a) != 1 || a.base != AB_PARAM || !a.param_ptr)
		return false;
	const MfField *fl = NULL;
	int64_t at = field_offset(df, &a);
	for (size_t i = 0; i < q->launch->nfields; i++)
		if (q->launch->fields[i].kind == MF_P_BUFFER &&
		    q->launch->fields[i].offset == at)
			fl = &q->launch->fields[i];
	if (!fl || fl->ref < 0)
		return false;
	*buf = fl->ref;
	uint64_t size = q->mf->buffers[fl->ref].size;
	*lo = 0;
	*hi = size;
	uint64_t n = (uint64_t)a.elem_bytes * (a.nelem ? a.nelem : 1);
	if (!n || (a.variable && !a.stride_known))
		return false;
	int64_t l = (int64_t)fl->add + a.offset, h = l;
	for (unsigned k = 0; a.variable && k < a.nstride; k++) {
		int64_t rl, rh;
		if (!special_range(p, df_reg(df, a.stride[k].reg)->name, &rl, &rh))
			return false;
		int64_t x = a.stride[k].bytes * rl, y = a.stride[k].bytes * rh;
		l += x < y ? x : y;
		h += x < y ? y : x;
	}
	if (l < 0 || (uint64_t)h + n > size)
		return false; /* outside the buffer by the facts: take it whole */
	*lo = (uint64_t)l;
	*hi = (uint64_t)h + n;
	return true;
}

static void add_span(ReplayPlan *p, int buf, uint64_t lo, uint64_t hi, uint32_t stmt,
                     bool spliced, bool bounded)
{
	ReplaySpan sp = {buf, lo, hi, stmt, spliced, bounded, 0};
	VEC_PUSH(p->spans, sp);
}

static int span_order(const void *x, const void *y)
{
	const ReplaySpan *a = x, *b = y;
	if (a->buf != b->buf)
		return a->buf < b->buf ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The spans sorted by buffer and offset, overlapping and touching ones
 * joined (the first store kept), laid out one after the other. */
void plan_join_spans(ReplayPlan *p)
{
	if (!p->spans.n)
		return;
	qsort(p->spans.v, p->spans.n, sizeof *p->spans.v, span_order);
	size_t o = 0;
	for (size_t i = 1; i < p->spans.n; i++) {
		ReplaySpan *a = &p->spans.v[o], *b = &p->spans.v[i];
		if (b->buf == a->buf && b->lo <= a->hi) {
			if (b->hi > a->hi)
				a->hi = b->hi;
			a->bounded = a->bounded && b->bounded;
			if (b->stmt < a->stmt && b->spliced == a->spliced)
				a->stmt = b->stmt;
		} else
			p->spans.v[++o] = *b;
	}
	p->spans.n = o + 1;
	uint64_t at = 0;
	for (size_t i = 0; i < p->spans.n; i++) {
		p->spans.v[i].at = at;
		at += p->spans.v[i].hi - p->spans.v[i].lo;
	}
	p->span_bytes = at;
}

/*
 * The end state of the bytes a cut writes is what its buffer holds when
 * the entry's launch ends only if nothing else of the kernel writes them:
 * every store, atomic and call of the original outside its cut is checked
 * against the spans (its own bytes bounded as the cut's are); one that
 * may write them is refused, naming it (the first of each buffer, and how
 * many more).  So are surface writes outside the cut to an array the cut
 * writes.
 */
void plan_check_outside_writes(ReplayPlan *p, const ReplayRequest *q)
{
	if (!p->spans.n && !p->arrays_out.n)
		return;
	size_t nb = q->mf->nbuffers;
	int64_t *first = xcalloc(nb + 1, sizeof *first);
	uint64_t *more = xcalloc(nb + 1, sizeof *more);
	for (size_t b = 0; b <= nb; b++)
		first[b] = -1;
	for (uint32_t i = 0; i < q->fo->nstmt; i++) {
		if (i >= q->first && i <= q->last)
			continue;
		MemEffect me = df_mem_effect(q->dfo, i);
		if (!(me.flags & (ME_STORE | ME_ATOMIC | ME_CALL)))
			continue;
		const Stmt *st = func_stmt(q->mo, q->fo, i);
		if (st->op == OP_SUST || st->op == OP_SURED)
			continue; /* below */
		int buf = -1;
		uint64_t lo = 0, hi = 0;
		bool any = (me.flags & ME_CALL) != 0;
		if (!any) {
			Space sp = me.store ? me.store : me.load;
			if (sp != SP_GLOBAL && sp != SP_GENERIC)
				continue;
			store_bytes(p, q, q->dfo, i, &buf, &lo, &hi);
			any = buf < 0;
		}
		for (size_t k = 0; k < p->spans.n; k++) {
			const ReplaySpan *s = &p->spans.v[k];
			if (!any && (s->buf != buf || hi <= s->lo || lo >= s->hi))
				continue;
			size_t slot = any ? nb : (size_t)s->buf;
			if (first[slot] < 0)
				first[slot] = i;
			else if (first[slot] != (int64_t)i)
				more[slot]++;
			break;
		}
	}
	for (size_t b = 0; b <= nb; b++) {
		if (first[b] < 0)
			continue;
		StrBuf and = STRBUF_INIT;
		if (more[b])
			sb_addf(&and, " (and %llu more)", (unsigned long long)more[b]);
		if (b == nb)
			plan_refuse(
			    p, q->mo, q->fo, (uint32_t)first[b], false,
			    "a write outside the cut that the facts cannot place may "
			    "write the bytes the cut writes%s: their end state is no "
			    "state the launch's end holds",
			    and.p ? and.p : "");
		else
			plan_refuse(
			    p, q->mo, q->fo, (uint32_t)first[b], false,
			    "writes bytes of buffer '%s' the cut writes too, outside "
			    "the cut%s: their end state is no state the launch's end "
			    "holds",
			    q->mf->buffers[b].name, and.p ? and.p : "");
		sb_release(&and);
	}
	free(first);
	free(more);
	for (size_t k = 0; k < p->arrays_out.n; k++) {
		int64_t wr = kernel_writes_array(q, p->arrays_out.v[k], true);
		if (wr >= 0)
			plan_refuse(
			    p, q->mo, q->fo, (uint32_t)wr, false,
			    "may write array '%s', which the cut writes, outside the "
			    "cut: its end state is no state the launch's end holds",
			    q->mf->arrays[p->arrays_out.v[k]].name);
	}
}

/*
 * A texture or surface access at statement i of a cut (df's function, w
 * a walk over it).  A surface write replays when its object is a surface
 * field of the launch: the array is taken at the launch's start, put back
 * before each entry and compared at the end (check_outside_writes then
 * refuses a write of it outside the cut).  A surface read or texture fetch
 * replays when nothing of the kernel may write its array: an array no
 * surface is bound to holds the layer's contents at every cut (as the
 * replay's layer has them); one an earlier launch may write is taken at
 * the launch's start.  Anything else is refused.
 */
static void array_access(ReplayPlan *p, const ReplayRequest *q, Walk *w, uint32_t i,
                         Space sp, bool store, bool spliced)
{
	const Module *m = w->m;
	const Func *f = w->f;
	const Stmt *s = func_stmt(m, f, i);
	bool sust = s->op == OP_SUST || s->op == OP_SURED;
	int a = sp == SP_SURF ? object_array(q, w, i, sust ? 0 : 1, MF_P_SURFACE)
	        : (s->op == OP_TEX || s->op == OP_TLD4)
	            ? object_array(q, w, i, 1, MF_P_TEXTURE)
	            : -1;
	if (a < 0) {
		plan_refuse(p, m, f, i, spliced,
		            sp == SP_TEX
		                ? "a texture fetch replay cannot place: its object "
		                  "is no texture field of the launch"
		                : "a surface access replay cannot place: its object "
		                  "is no surface field of the launch");
		return;
	}
	const char *name = q->mf->arrays[a].name;
	if (store) {
		if (s->op == OP_SURED) {
			plan_refuse(
			    p, m, f, i, spliced,
			    "a surface reduction inside the cut: its result depends "
			    "on the order of other threads");
			return;
		}
		push_int(&p->arrays_out, a);
		push_int(&p->arrays_in, a);
		return;
	}
	if (!q->mf->arrays[a].surface) {
		push_int(&p->textures, a);
		return;
	}
	int64_t wr = kernel_writes_array(q, a, false);
	if (wr >= 0) {
		plan_refuse(
		    p, m, f, i, spliced,
		    "reads array '%s', which the kernel may write (s%lld, line %u): "
		    "its contents at the cut are no state taken at the launch's "
		    "start",
		    name, (long long)wr, func_stmt(q->mo, q->fo, (uint32_t)wr)->line);
		return;
	}
	push_int(&p->arrays_in, a);
}

void plan_check_memory(ReplayPlan *p, const ReplayRequest *q, Dataflow *df,
                       uint32_t first, uint32_t last, bool spliced)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	Walk tw = {df, m, f, NULL, NULL, 0}; /* the texture objects' */
	tw.memo = xcalloc(f->nstmt + 1, sizeof(Val));
	tw.state = xcalloc(f->nstmt + 1, 1);
	for (uint32_t i = first; i <= last; i++) {
		const Stmt *s = func_stmt(m, f, i);
		MemEffect me = df_mem_effect(df, i);
		if (!me.flags)
			continue;
		if (me.flags & ME_BARRIER) {
			if (s->op == OP_MBARRIER ||
			    (s->op == OP_CP && stmt_has_mod(m, s, ".async")))
				plan_refuse(
				    p, m, f, i, spliced,
				    "'%.*s': asynchronous state replay does not take",
				    (int)s->oplen, m->src + s->off + s->opdelta);
			else if (s->op == OP_BAR || s->op == OP_BARRIER)
				p->barriers++;
			continue;
		}
		if (me.flags & ME_CALL) {
			plan_refuse(p, m, f, i, spliced, "a call inside the cut");
			continue;
		}
		if (me.flags & ME_ATOMIC) {
			plan_refuse(p, m, f, i, spliced,
			            "an atomic inside the cut: its result depends on the "
			            "order of "
			            "other threads");
			continue;
		}
		if (s->op == OP_CP) {
			plan_refuse(p, m, f, i, spliced,
			            "an asynchronous copy inside the cut");
			continue;
		}
		for (int st = 0; st < 2; st++) {
			bool store = st == 1;
			if (!(me.flags & (store ? ME_STORE : ME_LOAD)))
				continue;
			Space sp = store ? me.store : me.load;
			if (sp == SP_SHARED || sp == SP_CONST || sp == SP_PARAM)
				continue; /* the shared state; the module's and the
				             launch's */
			if (sp == SP_LOCAL) {
				plan_refuse(
				    p, m, f, i, spliced,
				    "%s local memory (a spill: per-thread state the "
				    "dump does "
				    "not take)",
				    store ? "writes" : "reads");
				continue;
			}
			if (sp == SP_TEX || sp == SP_SURF) {
				array_access(p, q, &tw, i, sp, store, spliced);
				continue;
			}
			int buf;
			Str sym;
			const char *why;
			if (!access_of(q, df, i, &buf, &sym, &why)) {
				plan_refuse(
				    p, m, f, i, spliced,
				    "a global %s whose address the facts cannot place "
				    "in one "
				    "launch buffer (%s)",
				    store ? "store" : "read", why);
				continue;
			}
			ReplayAccess ac = {i, spliced, store, buf, NULL};
			StrBuf w = STRBUF_INIT;
			if (buf >= 0)
				sb_addf(&w, "buffer '%s'", q->mf->buffers[buf].name);
			else
				sb_addf(&w, "symbol '%.*s'", (int)sym.n, sym.p);
			ac.what = w.p;
			VEC_PUSH(p->access, ac);
			if (store) {
				if (buf >= 0) {
					uint64_t lo, hi;
					int sb;
					bool bd = store_bytes(p, q, df, i, &sb, &lo, &hi);
					push_int(&p->buffers_out, buf);
					add_span(p, buf, lo, hi, i, spliced, bd);
				} else
					plan_refuse(
					    p, m, f, i, spliced,
					    "a store to module symbol '%.*s': replay "
					    "compares "
					    "launch buffers",
					    (int)sym.n, sym.p);
				continue;
			}
			int64_t wr = kernel_writes(q, buf, sym);
			if (wr >= 0)
				plan_refuse(
				    p, m, f, i, spliced,
				    "reads %s, which the kernel may write (s%lld, "
				    "line %u): "
				    "its bytes at the cut are no state taken at the "
				    "launch's "
				    "start",
				    ac.what, (long long)wr,
				    func_stmt(q->mo, q->fo, (uint32_t)wr)->line);
			else if (buf >= 0)
				push_int(&p->buffers_in, buf);
		}
	}
	free(tw.memo);
	free(tw.state);
}
