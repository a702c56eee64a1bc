/*
 * module.c - the replay module, and the probe records that take the state
 * it loads from the original (the dump).
 *
 * The state lives in three buffers the host allocates and names through
 * three module-level .u64 symbols, as the probe layer names its dump (the
 * parameter block stays the launch's):
 *
 *   __d4r_replay_regs    the probe dump of replay_dump_plan's records:
 *                        [warp of the grid][record][value][lane], so a
 *                        replay entry reads the very slots the
 *                        instrumented original wrote (splice/probe.h)
 *   __d4r_replay_shared  [block][start, end][shared state bytes]: every
 *                        shared variable at its offset in the plan
 *   __d4r_replay_params  the parameter block the dump was launched with
 *
 * The dump writes the start record's registers and the blocks' shared
 * memory before the cut's first statement, the end record after its last.
 * A replay entry loads the start (shared memory, a barrier, the registers,
 * rebasing the pointer-valued ones), runs the cut as its module has it,
 * and writes the end record and the shared memory after the cut, where
 * the dump wrote them: the host compares the two.
 *
 * Decisions:
 *  - The shared copies run between two bar.sync, by every thread of the
 *    block, word by word (byte by byte for a variable whose size or
 *    alignment is not a multiple of 4).  In the dump the first barrier
 *    waits for every warp to reach the cut, so the copy sees what the cut
 *    starts from, and the second keeps any warp from writing shared memory
 *    in the cut before the copy is done; at the end likewise.
 *  - A replay entry is the kernel's header under a new name (its
 *    parameters and performance directives), the body's declaration lines
 *    as its module has them (the spliced module's hold the template's
 *    registers when the splice put them there), and the cut's text byte
 *    for byte: the original's statements from the first's first byte to
 *    the last's ';', the region the splice wrote for the spliced entry.
 *  - Module-level items copied: variables (a cut may read a .const table),
 *    .file (a .loc in the cut names it); the kernels and functions are
 *    not (a cut that calls is refused).
 */
#include "replay/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. the dump's records ------------------------------------------------------ */

/* A prefix for the code's own registers that no declaration of m starts with. */
static void fresh_prefix(const Module *m, char out[32])
{
	for (unsigned n = 0;; n++) {
		snprintf(out, 32, "%%d4rpl%u_", n);
		size_t ol = strlen(out);
		bool clash = false;
		for (size_t i = 0; i < m->regs.n && !clash; i++) {
			Str nm = mod_str(m, m->regs.v[i].name);
			clash =
			    nm.n >= ol - 1 && !memcmp(nm.p, out, nm.n < ol ? nm.n : ol);
		}
		if (!clash)
			return;
	}
}

/* The thread's place: T0 thread in the block, T1 threads per block, T2 block
 * in the grid, T3 warp in the grid, T4 lane (the probe layer's numbering). */
static void where_text(StrBuf *t, const char *px)
{
	static const char tpl[] =
	    "\tmov.u32 \t@t0, %tid.x;\n\tmov.u32 \t@t1, %tid.y;\n"
	    "\tmov.u32 \t@t2, %tid.z;\n\tmov.u32 \t@t3, %ntid.x;\n"
	    "\tmov.u32 \t@t4, %ntid.y;\n\tmov.u32 \t@t5, %ntid.z;\n"
	    "\tmad.lo.u32 \t@t2, @t2, @t4, @t1;\n"
	    "\tmad.lo.u32 \t@t0, @t2, @t3, @t0;\t// thread in the block\n"
	    "\tmul.lo.u32 \t@t1, @t3, @t4;\n"
	    "\tmul.lo.u32 \t@t1, @t1, @t5;\t// threads per block\n"
	    "\tmov.u32 \t@t2, %ctaid.z;\n\tmov.u32 \t@t3, %nctaid.y;\n"
	    "\tmov.u32 \t@t4, %ctaid.y;\n\tmad.lo.u32 \t@t2, @t2, @t3, @t4;\n"
	    "\tmov.u32 \t@t3, %nctaid.x;\n\tmov.u32 \t@t4, %ctaid.x;\n"
	    "\tmad.lo.u32 \t@t2, @t2, @t3, @t4;\t// block in the grid\n"
	    "\tadd.u32 \t@t3, @t1, 31;\n\tshr.u32 \t@t3, @t3, 5;\t// warps per block\n"
	    "\tshr.u32 \t@t4, @t0, 5;\n"
	    "\tmad.lo.u32 \t@t3, @t2, @t3, @t4;\t// warp in the grid\n"
	    "\tand.b32 \t@t4, @t0, 31;\t// lane\n";
	for (const char *c = tpl; *c; c++)
		if (*c == '@')
			sb_adds(t, px);
		else
			sb_addc(t, *c);
}

/*
 * Copies every shared variable of the plan between the block's shared
 * memory and its area of the shared state (a0: the state's address): out
 * (shared -> state) at the dump, in (state -> shared) at a replay's start.
 * `half` is 0 for the start, 1 for the end.  Needs where_text's T0-T2.
 */
static void shared_text(StrBuf *t, const ReplayPlan *p, const char *px, const char *tag,
                        bool to_state, int half, uint64_t area)
{
	if (!p->shared_bytes)
		return;
	sb_addf(t, "\tld.global.u64 \t%sa0, [%s];\n\tcvta.to.global.u64 \t%sa0, %sa0;\n",
	        px, REPLAY_SYM_SHARED, px, px);
	sb_addf(t, "\tmul.wide.u32 \t%sa1, %st2, %llu;\n\tadd.s64 \t%sa0, %sa0, %sa1;\n",
	        px, px, (unsigned long long)(2 * p->shared_bytes), px, px, px);
	for (size_t i = 0; i < p->shared.n; i++) {
		const ReplayShared *sh = &p->shared.v[i];
		if (!sh->bytes)
			continue;
		unsigned unit = sh->align >= 4 && sh->bytes % 4 == 0 ? 4 : 1;
		unsigned long long base =
		    area + sh->off + (unsigned long long)half * p->shared_bytes;
		const char *w = unit == 4 ? "u32" : "u8";
		sb_addf(t, "\tmov.u32 \t%st5, %s;\n", px, sh->name);
		sb_addf(t, "\tmul.lo.u32 \t%st6, %st0, %u;\n", px, px, unit);
		sb_addf(t, "$%s_%zu:\n", tag, i);
		sb_addf(
		    t, "\tsetp.ge.u32 \t%sp0, %st6, %llu;\n\t@%sp0 bra \t$%s_%zu_done;\n",
		    px, px, (unsigned long long)sh->bytes, px, tag, i);
		sb_addf(t, "\tadd.u32 \t%st7, %st5, %st6;\n", px, px, px);
		sb_addf(t, "\tcvt.u64.u32 \t%sa1, %st6;\n\tadd.s64 \t%sa1, %sa0, %sa1;\n",
		        px, px, px, px, px);
		if (to_state)
			sb_addf(t,
			        "\tld.shared.%s \t%st8, [%st7];\n\tst.global.%s "
			        "\t[%sa1+%llu], %st8;\n",
			        w, px, px, w, px, base, px);
		else
			sb_addf(t,
			        "\tld.global.%s \t%st8, [%sa1+%llu];\n\tst.shared.%s "
			        "\t[%st7], %st8;\n",
			        w, px, px, base, w, px, px);
		sb_addf(t,
		        "\tmad.lo.u32 \t%st6, %st1, %u, %st6;\n\tbra.uni "
		        "\t$%s_%zu;\n$%s_%zu_done:\n",
		        px, px, unit, px, tag, i, tag, i);
	}
}

/* The code of a dump record: the block's shared memory into the state. */
static char *dump_code(const ReplayPlan *p, const char *px, int half, unsigned cut,
                       uint64_t area)
{
	StrBuf t = STRBUF_INIT;
	char tag[64];
	snprintf(tag, sizeof tag, "__d4r_replay_dump%u_%d", cut, half);
	sb_addf(&t,
	        "\t{\t// d4r-splice replay: the block's shared memory at the cut's %s\n",
	        half ? "end" : "start");
	sb_addf(&t,
	        "\t.reg .b32 \t%st<9>;\n\t.reg .b64 \t%sa<2>;\n\t.reg .pred \t%sp<1>;\n",
	        px, px, px);
	sb_adds(&t, "\tbar.sync \t0;\n");
	where_text(&t, px);
	shared_text(&t, p, px, tag, true, half, area);
	sb_adds(&t, "\tbar.sync \t0;\n\t}\n");
	return t.p;
}

static void push_reg(ProbeRecord *r, const ReplayReg *x, uint32_t def)
{
	ProbeValue v = {.kind = PV_REG, .fmt = x->fmt, .def = def};
	v.name = xstrdup(x->name);
	VEC_PUSH(r->vals, v);
}

/* The symbols whose addresses the dump stores: every shared variable and
 * each other symbol a live-in is rebased on.  *bits64 (if given) gets
 * whether the address is taken as 64 bits. */
static size_t symbols(const ReplayPlan *p, const char **names, bool *bits64, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < p->shared.n && n < max; i++) {
		if (bits64)
			bits64[n] = false;
		names[n++] = p->shared.v[i].name;
	}
	for (size_t i = 0; i < p->live_in.n && n < max; i++) {
		const ReplayReg *r = &p->live_in.v[i];
		if (r->kind != RV_SYMBOL)
			continue;
		bool have = false;
		for (size_t k = 0; k < n && !have; k++)
			have = !strcmp(names[k], r->symbol);
		if (have)
			continue;
		if (bits64)
			bits64[n] = probe_fmt_bits((ProbeFmt)r->fmt) == 64;
		names[n++] = r->symbol;
	}
	return n;
}

#define MAX_SYMS 64

void replay_dump_records(const ReplayPlan *p, const Module *mo, unsigned cut,
                         uint64_t area, ProbePlan *out)
{
	char px[32];
	fresh_prefix(mo, px);
	ProbeRecord start = {.at = p->first, .before = true, .first = p->first};
	for (size_t i = 0; i < p->live_in.n; i++)
		push_reg(&start, &p->live_in.v[i], UINT32_MAX);
	start.code = dump_code(p, px, 0, cut, area);
	VEC_PUSH(out->recs, start);

	ProbeRecord syms = {
	    .at = p->first, .before = true, .per_warp = true, .first = p->first};
	const char *names[MAX_SYMS];
	bool b64[MAX_SYMS];
	size_t ns = symbols(p, names, b64, MAX_SYMS);
	for (size_t i = 0; i < ns; i++) {
		ProbeValue v = {.kind = PV_READ,
		                .fmt = b64[i] ? PF_HEX64 : PF_HEX32,
		                .def = UINT32_MAX,
		                .read_at = p->first,
		                .read_before = true};
		v.name = xstrdup(names[i]);
		VEC_PUSH(syms.vals, v);
	}
	VEC_PUSH(out->recs, syms);

	ProbeRecord end = {.at = p->last, .first = p->first, .what = PR_CUT_END};
	for (size_t i = 0; i < p->live_out.n; i++)
		push_reg(&end, &p->live_out.v[i], p->live_out.v[i].stmt);
	end.code = dump_code(p, px, 1, cut, area);
	VEC_PUSH(out->recs, end);
}

int replay_dump_plan(const ReplayPlan *p, const Module *mo, const Func *fo,
                     ProbePlan *out, Err *e)
{
	memset(out, 0, sizeof *out);
	replay_dump_records(p, mo, 0, 0, out);
	if (probe_plan_layout(out, e) < 0)
		return -1;
	for (size_t i = 0; i < out->recs.n; i++)
		if (probe_record_check(mo, fo, &out->recs.v[i], e) < 0)
			return -1;
	return 0;
}

/* ---- 2. the replay module ---------------------------------------------------------- */

typedef struct {
	const ReplayPlan *p;
	const ProbePlan *dp;
	const ReplayRequest *q;
	char px[32];
	StrBuf *t;
} Gen;

/* "b32", "b16", "b8", "b64" for a slot's load and store. */
static unsigned fmt_bits(uint8_t fmt)
{
	return probe_fmt_bits((ProbeFmt)fmt);
}

/* Registers in and out of the state.  `rec` names the record; its values
 * are the plan's registers in order. */
static void regs_text(Gen *g, size_t rec, bool load)
{
	const ProbeRecord *r = &g->dp->recs.v[rec];
	const char *px = g->px;
	StrBuf *t = g->t;
	for (size_t k = 0; k < r->vals.n; k++) {
		const ProbeValue *v = &r->vals.v[k];
		unsigned bits = fmt_bits(v->fmt);
		unsigned long long off = (unsigned long long)(r->off + v->off);
		const char *a = bits == 64 ? "a3" : "a2";
		if (v->fmt == PF_PRED) {
			if (load)
				sb_addf(t,
				        "\tld.global.u32 \t%st8, "
				        "[%s%s+%llu];\n\tsetp.ne.u32 \t%s, %st8, 0;\n",
				        px, px, a, off, v->name, px);
			else
				sb_addf(t,
				        "\tselp.u32 \t%st8, 1, 0, %s;\n\tst.global.b32 "
				        "\t[%s%s+%llu], %st8;\n",
				        px, v->name, px, a, off, px);
		} else if (load)
			sb_addf(t, "\tld.global.b%u \t%s, [%s%s+%llu];\n", bits, v->name,
			        px, a, off);
		else
			sb_addf(t, "\tst.global.b%u \t[%s%s+%llu], %s;\n", bits, px, a,
			        off, v->name);
	}
}

/* The rebasing of the pointer-valued live-ins. */
static void rebase_text(Gen *g)
{
	const ReplayPlan *p = g->p;
	const ProbeRecord *sr = &g->dp->recs.v[REPLAY_REC_SYMBOLS];
	const char *px = g->px;
	StrBuf *t = g->t;
	bool params = false;
	for (size_t i = 0; i < p->live_in.n; i++)
		params |= p->live_in.v[i].kind == RV_PARAM;
	if (params)
		sb_addf(
		    t,
		    "\tld.global.u64 \t%sa4, [%s];\n\tcvta.to.global.u64 \t%sa4, %sa4;\n",
		    px, REPLAY_SYM_PARAMS, px, px);
	for (size_t i = 0; i < p->live_in.n; i++) {
		const ReplayReg *r = &p->live_in.v[i];
		bool w64 = fmt_bits(r->fmt) == 64;
		if (r->kind == RV_DATA)
			continue;
		if (r->kind == RV_PARAM) {
			sb_addf(t, "\tld.param.u64 \t%sa5, [%s+%lld];\t// now\n", px,
			        r->param, (long long)r->param_in);
			sb_addf(t,
			        "\tld.global.u64 \t%sa6, [%sa4+%lld];\t// at the dump\n",
			        px, px, (long long)r->param_off);
			sb_addf(t, "\tsub.s64 \t%sa5, %sa5, %sa6;\n", px, px, px);
		} else {
			/* the symbol's address now and at the dump (lane 0's slot) */
			size_t k = 0;
			while (k < sr->vals.n && strcmp(sr->vals.v[k].name, r->symbol))
				k++;
			bool s64 = fmt_bits(sr->vals.v[k].fmt) == 64;
			unsigned long long off =
			    (unsigned long long)(sr->off + sr->vals.v[k].off);
			if (s64)
				sb_addf(t,
				        "\tmov.u64 \t%sa5, %s;\n\tld.global.u64 \t%sa6, "
				        "[%sa1+%llu];\n"
				        "\tsub.s64 \t%sa5, %sa5, %sa6;\n",
				        px, r->symbol, px, px, off, px, px, px);
			else
				sb_addf(t,
				        "\tmov.u32 \t%st5, %s;\n\tld.global.u32 \t%st6, "
				        "[%sa1+%llu];\n"
				        "\tsub.s32 \t%st5, %st5, %st6;\n\tcvt.s64.s32 "
				        "\t%sa5, %st5;\n",
				        px, r->symbol, px, px, off, px, px, px, px, px);
		}
		if (w64)
			sb_addf(t, "\tadd.s64 \t%s, %s, %sa5;\t// rebased\n", r->name,
			        r->name, px);
		else {
			sb_addf(t, "\tcvt.u32.u64 \t%st7, %sa5;\n", px, px);
			sb_addf(t, "\tadd.s32 \t%s, %s, %st7;\t// rebased\n", r->name,
			        r->name, px);
		}
	}
}

/* The kernel's header with the entry's new name. */
static void header_text(Gen *g, const Module *m, const Func *f, const char *name)
{
	Str h = mod_str(m, f->header);
	size_t at = f->name.off - f->header.off;
	sb_addn(g->t, h.p, at);
	sb_adds(g->t, name);
	sb_addn(g->t, h.p + at + f->name.len, h.n - at - f->name.len);
	sb_addc(g->t, '\n');
}

static void entry_text(Gen *g, bool spliced)
{
	const ReplayRequest *q = g->q;
	const Module *m = spliced ? q->ms : q->mo;
	const Func *f = spliced ? q->fs : q->fo;
	const char *px = g->px;
	StrBuf *t = g->t;
	header_text(g, q->mo, q->fo,
	            spliced ? REPLAY_ENTRY_SPLICED : REPLAY_ENTRY_ORIGINAL);
	sb_adds(t, "{\n");
	/* the body's declarations, as its module has them */
	size_t d0 = f->body_open + 1;
	size_t d1 = f->nstmt ? func_stmt(m, f, 0)->off : f->body_close;
	sb_addn(t, m->src + d0, d1 - d0);
	sb_addf(t, "\n\t// d4r-splice replay: %s cut s%u-s%u\n",
	        spliced ? "the spliced" : "the original's",
	        spliced ? q->s_first : q->first, spliced ? q->s_last : q->last);
	sb_addf(t,
	        "\t.reg .b32 \t%st<9>;\n\t.reg .b64 \t%sa<7>;\n\t.reg .pred \t%sp<1>;\n",
	        px, px, px);
	where_text(t, px);
	char tag[48];
	snprintf(tag, sizeof tag, "__d4r_replay_in%d", spliced);
	shared_text(t, g->p, px, tag, false, 0, 0);
	sb_adds(t, "\tbar.sync \t0;\n");
	/* the warp's area of the registers: a1, and lane slots a2 (4) a3 (8) */
	sb_addf(t, "\tld.global.u64 \t%sa1, [%s];\n\tcvta.to.global.u64 \t%sa1, %sa1;\n",
	        px, REPLAY_SYM_REGS, px, px);
	sb_addf(t, "\tmul.wide.u32 \t%sa2, %st3, %llu;\n\tadd.s64 \t%sa1, %sa1, %sa2;\n",
	        px, px, (unsigned long long)g->dp->warp_bytes, px, px, px);
	sb_addf(t, "\tmul.wide.u32 \t%sa2, %st4, 4;\n\tadd.s64 \t%sa2, %sa1, %sa2;\n", px,
	        px, px, px, px);
	sb_addf(t, "\tmul.wide.u32 \t%sa3, %st4, 8;\n\tadd.s64 \t%sa3, %sa1, %sa3;\n", px,
	        px, px, px, px);
	regs_text(g, REPLAY_REC_START, true);
	rebase_text(g);
	sb_adds(t, "\t// d4r-splice replay: the cut\n");
	if (spliced && q->s_len)
		sb_addn(t, m->src + q->s_off, q->s_len);
	else {
		const Stmt *a = func_stmt(m, f, spliced ? q->s_first : q->first);
		const Stmt *b = func_stmt(m, f, spliced ? q->s_last : q->last);
		sb_addn(t, m->src + a->off, (size_t)b->off + b->len - a->off);
	}
	sb_adds(t, "\n\t// d4r-splice replay: the state at the cut's end\n");
	regs_text(g, REPLAY_REC_END, false);
	sb_adds(t, "\tbar.sync \t0;\n");
	snprintf(tag, sizeof tag, "__d4r_replay_out%d", spliced);
	shared_text(t, g->p, px, tag, true, 1, 0);
	sb_adds(t, "\tret;\n}\n\n");
}

int replay_module(const ReplayPlan *p, const ProbePlan *dp, const ReplayRequest *q,
                  StrBuf *out, Err *e)
{
	if (p->nrefused)
		return err_set(e, "replay refuses the cut s%u-s%u:\n%s", p->first,
		               p->last, p->refused.p);
	if (dp->recs.n != REPLAY_NREC)
		return err_set(e, "replay: the dump plan has %zu records, not %d",
		               dp->recs.n, REPLAY_NREC);
	const Module *m = q->mo;
	if (!str_eqc(mod_str(m, m->address_size), "64"))
		return err_set(e, "%s: replay needs '.address_size 64'",
		               m->name ? m->name : "module");
	Gen g = {p, dp, q, "", out};
	fresh_prefix(q->mo, g.px);
	char px2[32];
	fresh_prefix(q->ms, px2);
	if (strcmp(g.px, px2))
		snprintf(g.px, sizeof g.px, "%s", strcmp(g.px, px2) < 0 ? px2 : g.px);
	Str ver = mod_str(m, m->version), tgt = mod_str(m, m->target);
	sb_addf(
	    out,
	    "// d4r-splice replay module: cut s%u-s%u of '%.*s' (lines %u-%u) and its "
	    "spliced form\n",
	    p->first, p->last, (int)q->fo->name.len, m->src + q->fo->name.off,
	    p->first_line, p->last_line);
	sb_addf(out, ".version %.*s\n.target %.*s\n.address_size 64\n\n", (int)ver.n,
	        ver.p, (int)tgt.n, tgt.p);
	for (size_t i = 0; i < m->items.n; i++) {
		const Item *it = &m->items.v[i];
		if (it->kind != ITEM_VAR && it->kind != ITEM_FILE)
			continue;
		sb_addn(out, m->src + it->text.off, it->text.len);
		sb_addc(out, '\n');
	}
	sb_addf(
	    out,
	    "// the state: registers [warp][record][value][lane] (%llu bytes per warp), "
	    "shared memory [block][start, end][%llu bytes], the dump's parameter block\n",
	    (unsigned long long)dp->warp_bytes, (unsigned long long)p->shared_bytes);
	sb_addf(out, ".visible .global .align 8 .u64 %s;\n", REPLAY_SYM_REGS);
	sb_addf(out, ".visible .global .align 8 .u64 %s;\n", REPLAY_SYM_SHARED);
	sb_addf(out, ".visible .global .align 8 .u64 %s;\n\n", REPLAY_SYM_PARAMS);
	entry_text(&g, false);
	entry_text(&g, true);
	return 0;
}

/* ---- 3. the dump module ------------------------------------------------------------ */

int replay_dump_module(const ProbePlan *dp, const Module *mo, const Func *fo, StrBuf *out,
                       Err *e)
{
	ProbeRequest req = {mo, fo, dp, REPLAY_SYM_REGS,
	                    ".visible .global .align 8 .u64 " REPLAY_SYM_SHARED ";\n"};
	ProbeResult res = {0};
	int rc = probe_instrument(&req, &res, e);
	if (rc == 0) {
		*out = res.text;
		memset(&res.text, 0, sizeof res.text);
	}
	probe_result_release(&res);
	return rc;
}
