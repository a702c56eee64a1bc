/*
 * fit.c - stage 5 of the splice: does the template fit the cut?
 *
 * splice.c has found the cut, checked its guards and its shape, and
 * df_cut has given its interface (live-in and live-out registers, the
 * memory it loads and stores, its barriers and atomics).  This file holds
 * the template against that interface, before anything is rendered, so a
 * template that would compute the wrong thing is refused with the reason
 * rather than spliced:
 *
 *   - bindings (splice_check_bindings): every parameter the template
 *     declares has a value in the recipe and the recipe gives no other;
 *     every binding names a formal and every formal is bound, with the
 *     right shape (one register or a list of the formal's length); a
 *     bound register exists, has the formal's type and vector width, is
 *     not a special register when it is written, and, when it is read, has
 *     a definition before the cut; an `in` formal the body writes is an
 *     error only when its register is read after the cut; every live-out
 *     register of the cut is bound to an output, or the module would read
 *     a value the template never writes;
 *   - memory (splice_effect_problems): the cut's own read/write dependency
 *     (a store of the cut read after it), and every difference between the
 *     cut's effects and what the template's body does (Template.body, from
 *     the parsed body, whatever its header claims).
 *
 * Decisions:
 *  - Bindings fail on the first problem (one message, naming the recipe
 *    key); memory problems are all collected, one line each, because
 *    --force may override them and the spliced text then lists every one.
 *  - "Read after the cut" for a body's store is any load of a space that
 *    may alias it, on any path from the cut's end (loops included), found
 *    breadth first over the blocks; it is conservative, not a proof of a
 *    conflict.
 *  - The built-in templates never come here for memory: they re-emit the
 *    cut's own statements, so its effects are theirs by construction.
 */
#include "splice_internal.h"

#include <stdlib.h>
#include <string.h>

bool splice_cut_has(const CutReg *v, size_t n, uint32_t reg)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].reg == reg)
			return true;
	return false;
}

int splice_check_bindings(Dataflow *df, const Template *t, const Recipe *r,
                          const CutInterface *cut, const char *entry, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	/* parameters */
	for (size_t i = 0; i < t->params.n; i++)
		if (!rcp_param_find(r, t->params.v[i], strlen(t->params.v[i])))
			return err_set(e, "%s: 'params.%s': the template %s needs a value for it", r->path,
			               t->params.v[i], t->path);
	for (size_t i = 0; i < r->params.n; i++) {
		bool found = false;
		for (size_t j = 0; j < t->params.n; j++)
			found |= !strcmp(t->params.v[j], r->params.v[i].name);
		if (!found)
			return err_set(e, "%s: 'params.%s': the template %s declares no such parameter",
			               r->path, r->params.v[i].name, t->path);
	}
	/* every binding names a formal, every formal is bound, shapes and types */
	for (size_t i = 0; i < r->binds.n; i++)
		if (!tpl_formal(t, r->binds.v[i].formal, strlen(r->binds.v[i].formal)))
			return err_set(e, "%s: 'bind.%s': the template %s has no formal of that name",
			               r->path, r->binds.v[i].formal, t->path);
	for (size_t i = 0; i < t->formals.n; i++) {
		const Formal *fm = &t->formals.v[i];
		const RecipeBind *b = rcp_bind_find(r, fm->name);
		if (!b)
			return err_set(e, "%s: formal '%s' (%s:%u) is not bound ('bind.%s')", r->path,
			               fm->name, t->path, fm->line, fm->name);
		if (fm->count && (!b->list || b->nregs != fm->count))
			return err_set(e, "%s: 'bind.%s': the formal is a list of %u registers, the binding "
			               "gives %u", r->path, fm->name, fm->count, b->list ? b->nregs : 1);
		if (!fm->count && b->list)
			return err_set(e, "%s: 'bind.%s': the formal is one register, the binding is a list",
			               r->path, fm->name);
		for (uint32_t k = 0; k < b->nregs; k++) {
			const char *rn = b->regs[k];
			int64_t id = df_reg_find(df, str_c(rn));
			if (id < 0)
				return err_set(e, "%s: 'bind.%s': '%s' is not a register of '%s'", r->path,
				               fm->name, rn, entry);
			const RegInfo *ri = df_reg(df, (uint32_t)id);
			if (ri->special && (fm->dir & FM_OUT))
				return err_set(e, "%s: 'bind.%s': special register '%s' cannot be an output",
				               r->path, fm->name, rn);
			if (!ri->special && !ptx_type_compatible(str_c(fm->type), ri->type))
				return err_set(e, "%s: 'bind.%s': '%s' is declared %.*s, the formal is %s (%s:%u)",
				               r->path, fm->name, rn, (int)ri->type.n, ri->type.p, fm->type,
				               t->path, fm->line);
			if (!ri->special && ri->vec != fm->vec)
				return err_set(e, "%s: 'bind.%s': '%s' is %s%u-wide, the formal is %s%u-wide",
				               r->path, fm->name, rn, ri->vec ? ".v" : "", ri->vec ? ri->vec : 1,
				               fm->vec ? ".v" : "", fm->vec ? fm->vec : 1);
			if ((fm->dir & FM_IN) && !ri->special &&
			    !splice_cut_has(cut->live_in.v, cut->live_in.n, (uint32_t)id) &&
			    df_reaching_def(df, cut->first, (uint32_t)id) == DF_DEF_NONE)
				return err_set(e, "%s: 'bind.%s': input '%s' has no definition before the cut "
				               "(s%u, line %u)", r->path, fm->name, rn, cut->first,
				               func_stmt(m, f, cut->first)->line);
			/* the body writes an input: harmless unless it is read after the
			 * cut */
			if (fm->dir == FM_IN && fm->written && fm->written[k] &&
			    !ri->special && df_live_after(df, cut->last, (uint32_t)id))
				return err_set(e,
				               "%s: 'bind.%s': the template %s writes "
				               "in formal '%s' (line %u), and '%s' is "
				               "read after the cut: declare the formal "
				               "inout",
				               r->path, fm->name, t->path, fm->name,
				               fm->write_line, rn);
		}
	}
	/* every live-out register is bound to an output */
	for (size_t i = 0; i < cut->live_out.n; i++) {
		const CutReg *cr = &cut->live_out.v[i];
		const RegInfo *ri = df_reg(df, cr->reg);
		bool bound = false;
		for (size_t j = 0; j < t->formals.n && !bound; j++) {
			const Formal *fm = &t->formals.v[j];
			if (!(fm->dir & FM_OUT))
				continue;
			const RecipeBind *b = rcp_bind_find(r, fm->name);
			for (uint32_t k = 0; b && k < b->nregs; k++)
				if (str_eqc(ri->name, b->regs[k]))
					bound = true;
		}
		if (!bound) {
			err_set(e, "%s: live-out '%.*s' (first used at s%u, line %u) is not bound to any "
			        "output of the template %s", r->path, (int)ri->name.n, ri->name.p, cr->use,
			        func_stmt(m, f, cr->use)->line, t->path);
			err_note(e, "  it is defined in the cut at s%u (line %u); the cut has %zu live-out "
			         "registers", cr->stmt, func_stmt(m, f, cr->stmt)->line, cut->live_out.n);
			return -1;
		}
	}
	return 0;
}

/* For each state space, the first statement after the cut that loads from
 * it, on any path from the cut's end (around loops too) and outside the
 * cut, or -1: the rest of the cut's block, then blocks breadth first. */
static void loads_after(Dataflow *df, const CutInterface *cut, int64_t first[SP__COUNT])
{
	for (int s = 0; s < SP__COUNT; s++)
		first[s] = -1;
	uint32_t nb = df_nblocks(df), b0 = df_block_of(df, cut->last);
	bool *seen = xcalloc(nb ? nb : 1, 1);
	VEC(uint32_t) wl = {0};
	VEC_PUSH(wl, b0);
	for (size_t h = 0; h < wl.n; h++) {
		uint32_t x = wl.v[h], lo, end, n;
		df_block_range(df, x, &lo, &end);
		if (h == 0)
			lo = cut->last + 1; /* the rest of the cut's own block */
		for (uint32_t i = lo; i < end; i++) {
			if (i >= cut->first && i <= cut->last)
				continue;
			MemEffect me = df_mem_effect(df, i);
			if ((me.flags & ME_LOAD) && first[me.load] < 0)
				first[me.load] = i;
		}
		const uint32_t *succ = df_block_succs(df, x, &n);
		for (uint32_t k = 0; k < n; k++)
			if (!seen[succ[k]]) {
				seen[succ[k]] = true;
				VEC_PUSH(wl, succ[k]);
			}
	}
	VEC_FREE(wl);
	free(seen);
}

/*
 * What the splice would change in memory: the cut's read/write dependency
 * (its stores read after it), and every difference between the cut's
 * memory effects and what the template's body does (t->body, from the
 * parsed body, whatever its header claims): stores to a space the body
 * does not store to, body stores to a space that is read after the cut,
 * atomics dropped, a different number of barriers.  One line each into
 * `why`, naming the statements.
 */
void splice_effect_problems(Dataflow *df, const CutInterface *cut, const Template *t,
                            StrBuf *why)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	if (cut->rw_dependency) {
		for (size_t i = 0; i + 1 < cut->rw_pairs.n; i += 2) {
			sb_adds(why, "\n  ");
			splice_stmt_desc(m, f, cut->rw_pairs.v[i], why);
			sb_adds(why, "\n    may conflict with ");
			splice_stmt_desc(m, f, cut->rw_pairs.v[i + 1], why);
		}
		if (!cut->rw_pairs.n && cut->rw_reason.n) {
			/* the analysis' own lines, indented, without a trailing newline */
			const char *p = cut->rw_reason.p, *end = p + cut->rw_reason.n;
			while (p < end) {
				const char *nl = memchr(p, '\n', (size_t)(end - p));
				size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
				if (n)
					sb_addf(why, "\n  %.*s", (int)n, p);
				p += n + (nl != NULL);
			}
		}
		if (!cut->rw_reason.n && !cut->rw_pairs.n)
			sb_adds(why, "\n  the cut stores to memory that is read after it");
	}
	if (!t)
		return;
	const TplBody *b = &t->body;
	size_t before = why->n;
	for (int s = 0; s < SP__COUNT; s++)
		if (cut->stores[s] && !b->stores[s])
			sb_addf(why,
			        "\n  the cut stores to %s (%u store%s) and the body of "
			        "%s stores "
			        "nothing there",
			        space_name((Space)s), cut->stores[s],
			        cut->stores[s] == 1 ? "" : "s", t->path);
	bool any_store = false;
	for (int s = 0; s < SP__COUNT; s++)
		any_store |= b->stores[s] != 0;
	if (any_store) {
		int64_t after[SP__COUNT];
		loads_after(df, cut, after);
		for (int s = 0; s < SP__COUNT; s++) {
			if (!b->stores[s])
				continue;
			int64_t rd = -1;
			for (int l = 0; l < SP__COUNT; l++)
				if (after[l] >= 0 &&
				    space_may_alias((Space)s, (Space)l) &&
				    (rd < 0 || after[l] < rd))
					rd = after[l];
			if (rd < 0)
				continue;
			sb_addf(why,
			        "\n  %s:%u stores to %s memory, which may be read after "
			        "the cut by ",
			        t->path, b->store_line[s], space_name((Space)s));
			splice_stmt_desc(m, f, (uint32_t)rd, why);
		}
	}
	if (cut->atomics && !b->atomics)
		sb_addf(why, "\n  the cut performs %u atomic%s and the body of %s none",
		        cut->atomics, cut->atomics == 1 ? "" : "s", t->path);
	if (cut->barriers != b->barriers) {
		sb_addf(why, "\n  the cut executes %u barrier%s and the body of %s %u",
		        cut->barriers, cut->barriers == 1 ? "" : "s", t->path,
		        b->barriers);
		if (b->barriers)
			sb_addf(why, " (the first at line %u)", b->barrier_line);
	}
	if (why->n > before) {
		/* name the cut's memory statements so the author can look */
		unsigned shown = 0;
		for (uint32_t i = cut->first; i <= cut->last && shown < 8; i++) {
			const Stmt *s = func_stmt(m, f, i);
			Op op = (Op)s->op;
			if (op == OP_ST || op == OP_ATOM || op == OP_RED || op == OP_BAR || op == OP_BARRIER) {
				sb_adds(why, "\n    ");
				splice_stmt_desc(m, f, i, why);
				shown++;
			}
		}
	}
}
