/*
 * facts.c - operand facts as JSON and as text (facts.h).
 *
 * The inputs of a range are its A, B and C registers whose value comes from
 * before it (every word that is not the D of an mma of the range), each
 * listed once, in mma order and role by role: the registers a native phase
 * binds, when it does not load them itself.
 */
#include "facts.h"

#include <stdlib.h>
#include <string.h>

const char *facts_reg(const Dataflow *df, uint32_t reg, char *buf, size_t n)
{
	Str s = df_reg(df, reg)->name;
	snprintf(buf, n, "%.*s", (int)s.n, s.p);
	return buf;
}

static cJSON *reg_array(const Dataflow *df, const PhaseOperands *po, const OpdMma *x,
                        int role)
{
	cJSON *a = cJSON_CreateArray();
	char buf[128];
	for (uint32_t k = 0; k < x->nword[role]; k++)
		cJSON_AddItemToArray(
		    a, cJSON_CreateString(facts_reg(
		           df, po->words.v[x->word[role] + k].reg, buf, sizeof buf)));
	return a;
}

static cJSON *stmt_or_null(int64_t s)
{
	return s >= 0 ? cJSON_CreateNumber((double)s) : cJSON_CreateNull();
}

static void add_address(cJSON *o, const OpdLoad *l)
{
	cJSON *a = cJSON_AddObjectToObject(o, "address");
	if (!l->resolved) {
		cJSON_AddStringToObject(a, "base", "unresolved");
		if (l->addr.why)
			cJSON_AddStringToObject(a, "why", l->addr.why);
		return;
	}
	char buf[256];
	cJSON_AddStringToObject(a, "base", addr_base_name(l->addr.base));
	if (l->addr.base_name.n) {
		snprintf(buf, sizeof buf, "%.*s", (int)l->addr.base_name.n,
		         l->addr.base_name.p);
		cJSON_AddStringToObject(a, "name", buf);
	}
	if (l->addr.base == AB_PARAM && l->addr.param_ptr)
		cJSON_AddNumberToObject(a, "param_offset", (double)l->addr.param_off);
	cJSON_AddNumberToObject(a, "offset", (double)l->addr.offset);
	cJSON_AddBoolToObject(a, "variable", l->addr.variable);
}

/* The statement text, normalised. */
static char *stmt_text(Dataflow *df, uint32_t st)
{
	StrBuf t = STRBUF_INIT;
	stmt_normalized(df_module(df), func_stmt(df_module(df), df_func(df), st), &t);
	return t.p ? t.p : xstrdup("");
}

/* Is word w the first in role order to name its register among the inputs? */
static bool first_input(const PhaseOperands *po, size_t w, int role)
{
	const OpdWord *x = &po->words.v[w];
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *mm = &po->mma.v[i];
		for (uint32_t k = 0; k < mm->nword[role]; k++) {
			size_t j = mm->word[role] + k;
			if (j == w)
				return true;
			if (po->words.v[j].reg == x->reg &&
			    po->words.v[j].value != OV_MMA)
				return false;
		}
	}
	return true;
}

cJSON *facts_json(Dataflow *df, const PhaseOperands *po)
{
	cJSON *o = cJSON_CreateObject();
	char buf[128];
	if (po->unsupported) {
		cJSON_AddStringToObject(o, "unsupported", po->unsupported);
		cJSON_AddNumberToObject(o, "unsupported_stmt", po->unsupported_stmt);
		return o;
	}
	cJSON_AddNumberToObject(o, "m_tiles", po->m_tiles);
	cJSON_AddNumberToObject(o, "n_tiles", po->n_tiles);
	cJSON_AddNumberToObject(o, "k_steps", po->k_steps);
	cJSON_AddNumberToObject(o, "chains", po->chains);
	cJSON *mm = cJSON_AddArrayToObject(o, "mma");
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "stmt", x->stmt);
		cJSON_AddNumberToObject(j, "m_tile", x->m_tile);
		cJSON_AddNumberToObject(j, "n_tile", x->n_tile);
		cJSON_AddNumberToObject(j, "k_step", x->k_step);
		cJSON_AddNumberToObject(j, "chain", x->chain);
		cJSON_AddItemToObject(j, "c_chain",
		                      x->prev >= 0
		                          ? cJSON_CreateNumber(po->mma.v[x->prev].stmt)
		                          : cJSON_CreateNull());
		cJSON_AddBoolToObject(j, "c_duplicated", x->c_dup);
		for (int r = 0; r < ROLE__N; r++)
			cJSON_AddItemToObject(j, opd_role_name((OpdRole)r),
			                      reg_array(df, po, x, r));
		cJSON_AddItemToArray(mm, j);
	}
	cJSON *in = cJSON_AddObjectToObject(o, "inputs");
	for (int r = ROLE_A; r < ROLE__N; r++) {
		cJSON *list = cJSON_AddArrayToObject(in, opd_role_name((OpdRole)r));
		for (size_t i = 0; i < po->mma.n; i++) {
			const OpdMma *x = &po->mma.v[i];
			for (uint32_t k = 0; k < x->nword[r]; k++) {
				size_t wi = x->word[r] + k;
				const OpdWord *w = &po->words.v[wi];
				if (w->value == OV_MMA || !first_input(po, wi, r))
					continue;
				cJSON *e = cJSON_CreateObject();
				cJSON_AddStringToObject(
				    e, "reg", facts_reg(df, w->reg, buf, sizeof buf));
				cJSON_AddStringToObject(
				    e, "value", opd_value_name((OpdValue)w->value));
				cJSON_AddItemToObject(e, "def", stmt_or_null(w->def));
				if (w->value == OV_LOAD) {
					cJSON_AddNumberToObject(e, "load", w->src);
					cJSON_AddNumberToObject(e, "elem", w->elem);
				} else if (w->value == OV_PHASE)
					cJSON_AddNumberToObject(e, "from_phase", w->src);
				cJSON_AddItemToArray(list, e);
			}
		}
	}
	cJSON *ls = cJSON_AddArrayToObject(o, "loads");
	for (size_t i = 0; i < po->loads.n; i++) {
		const OpdLoad *l = &po->loads.v[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "stmt", l->stmt);
		char *t = stmt_text(df, l->stmt);
		cJSON_AddStringToObject(e, "text", t);
		free(t);
		cJSON *roles = cJSON_AddArrayToObject(e, "roles");
		for (int r = 0; r < ROLE__N; r++)
			if (l->roles & (1u << r))
				cJSON_AddItemToArray(
				    roles, cJSON_CreateString(opd_role_name((OpdRole)r)));
		cJSON_AddStringToObject(e, "space", space_name(l->space));
		if (l->base_reg >= 0)
			cJSON_AddStringToObject(
			    e, "base_reg",
			    facts_reg(df, (uint32_t)l->base_reg, buf, sizeof buf));
		else
			cJSON_AddNullToObject(e, "base_reg");
		cJSON_AddNumberToObject(e, "disp", (double)l->disp);
		add_address(e, l);
		cJSON_AddBoolToObject(e, "reload_safe", l->reload_safe);
		if (l->reload_safe) {
			cJSON *p = cJSON_AddObjectToObject(e, "proof");
			cJSON *w = cJSON_AddArrayToObject(p, "window");
			cJSON_AddItemToArray(w, cJSON_CreateNumber(l->stmt + 1));
			cJSON_AddItemToArray(
			    w, cJSON_CreateNumber(po->first ? po->first - 1 : 0));
			cJSON_AddItemToObject(p, "base_def", stmt_or_null(l->base_def));
			cJSON *sd = cJSON_AddArrayToObject(p, "stores_disjoint");
			for (size_t k = 0; k < l->checked.n; k++)
				cJSON_AddItemToArray(sd,
				                     cJSON_CreateNumber(l->checked.v[k]));
		} else {
			cJSON_AddStringToObject(e, "why", l->why ? l->why : "?");
			cJSON_AddItemToObject(e, "blocker", stmt_or_null(l->blocker));
		}
		cJSON_AddItemToArray(ls, e);
	}
	return o;
}

static void tuple_text(const Dataflow *df, const PhaseOperands *po, const OpdMma *x,
                       int r, StrBuf *out)
{
	char buf[128];
	sb_addc(out, '{');
	for (uint32_t k = 0; k < x->nword[r]; k++)
		sb_addf(out, "%s%s", k ? ", " : "",
		        facts_reg(df, po->words.v[x->word[r] + k].reg, buf, sizeof buf));
	sb_addc(out, '}');
}

void facts_text(Dataflow *df, const PhaseOperands *po, StrBuf *out)
{
	char buf[128];
	if (po->unsupported) {
		sb_addf(out, "operands: no facts: s%u is %s\n", po->unsupported_stmt,
		        po->unsupported);
		return;
	}
	if (!po->mma.n)
		return;
	sb_addf(
	    out,
	    "operands (%zu mma: %u m-tile%s x %u n-tile%s x %u k-step%s, %u chain%s):\n",
	    po->mma.n, po->m_tiles, po->m_tiles == 1 ? "" : "s", po->n_tiles,
	    po->n_tiles == 1 ? "" : "s", po->k_steps, po->k_steps == 1 ? "" : "s",
	    po->chains, po->chains == 1 ? "" : "s");
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		sb_addf(out, "  s%-6u m%-2u n%-2u k%-2u d ", x->stmt, x->m_tile,
		        x->n_tile, x->k_step);
		tuple_text(df, po, x, ROLE_D, out);
		sb_adds(out, " a ");
		tuple_text(df, po, x, ROLE_A, out);
		sb_adds(out, " b ");
		tuple_text(df, po, x, ROLE_B, out);
		sb_adds(out, " c ");
		tuple_text(df, po, x, ROLE_C, out);
		if (x->prev >= 0)
			sb_addf(out, " = D of s%u", po->mma.v[x->prev].stmt);
		if (x->c_dup)
			sb_adds(out, " (one word twice)");
		sb_addc(out, '\n');
	}
	sb_adds(out,
	        "inputs (A, B, C registers whose value comes from before the range):\n");
	for (int r = ROLE_A; r < ROLE__N; r++)
		for (size_t i = 0; i < po->mma.n; i++) {
			const OpdMma *x = &po->mma.v[i];
			for (uint32_t k = 0; k < x->nword[r]; k++) {
				size_t wi = x->word[r] + k;
				const OpdWord *w = &po->words.v[wi];
				if (w->value == OV_MMA || !first_input(po, wi, r))
					continue;
				sb_addf(out, "  %s %-12s %s", opd_role_name((OpdRole)r),
				        facts_reg(df, w->reg, buf, sizeof buf),
				        opd_value_name((OpdValue)w->value));
				if (w->def >= 0)
					sb_addf(out, " s%lld", (long long)w->def);
				if (w->value == OV_LOAD)
					sb_addf(out, "[%u]", w->elem);
				else if (w->value == OV_PHASE && w->src > 0)
					sb_addf(out, " (phase %d)", w->src);
				sb_addc(out, '\n');
			}
		}
	if (po->loads.n)
		sb_adds(out, "loads:\n");
	for (size_t i = 0; i < po->loads.n; i++) {
		const OpdLoad *l = &po->loads.v[i];
		char *t = stmt_text(df, l->stmt);
		sb_addf(out, "  s%-6u %s  (", l->stmt, t);
		free(t);
		bool first = true;
		for (int r = 0; r < ROLE__N; r++)
			if (l->roles & (1u << r)) {
				sb_addf(out, "%s%s", first ? "" : ", ",
				        opd_role_name((OpdRole)r));
				first = false;
			}
		sb_adds(out, ")\n          address ");
		if (l->base_reg >= 0)
			sb_addf(out, "%s%+lld",
			        facts_reg(df, (uint32_t)l->base_reg, buf, sizeof buf),
			        (long long)l->disp);
		else
			sb_adds(out, "not [register+offset]");
		if (l->resolved) {
			sb_addf(out, " = %s %s", space_name(l->addr.space),
			        addr_base_name(l->addr.base));
			if (l->addr.base_name.n)
				sb_addf(out, " '%.*s'", (int)l->addr.base_name.n,
				        l->addr.base_name.p);
			if (l->addr.base == AB_PARAM && l->addr.param_ptr)
				sb_addf(out, " (pointer at +%lld)",
				        (long long)l->addr.param_off);
			sb_addf(out, " + %lld%s", (long long)l->addr.offset,
			        l->addr.variable ? " + a per-thread part" : "");
		} else
			sb_addf(out, " (unresolved: %s)",
			        l->addr.why ? l->addr.why : "?");
		sb_addc(out, '\n');
		if (l->reload_safe && l->stmt + 1 >= po->first) {
			sb_adds(out, "          reload safe: no statement between the "
			             "load and the range");
		} else if (l->reload_safe) {
			sb_addf(out,
			        "          reload safe: s%u..s%u hold no label, barrier, "
			        "call or store "
			        "that may reach it",
			        l->stmt + 1, po->first - 1);
			if (l->checked.n)
				sb_addf(out, " (%zu stores proved disjoint, first s%u)",
				        l->checked.n, l->checked.v[0]);
			if (l->base_def >= 0)
				sb_addf(
				    out, "; %s defined at s%lld, the same at s%u",
				    facts_reg(df, (uint32_t)l->base_reg, buf, sizeof buf),
				    (long long)l->base_def, po->first);
			sb_addc(out, '\n');
		} else {
			sb_addf(out, "          reload NOT safe: %s",
			        l->why ? l->why : "?");
			if (l->blocker >= 0)
				sb_addf(out, " (s%lld)", (long long)l->blocker);
			sb_addc(out, '\n');
		}
	}
}

cJSON *facts_phase_json(Dataflow *df, const PhaseList *pl, const Phase *p)
{
	PhaseOperands po;
	Err e = ERR_INIT;
	cJSON *o;
	if (ana_operands(df, pl, p->first, p->last, &po, &e) == 0)
		o = facts_json(df, &po);
	else {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "error", err_msg(&e));
	}
	phase_operands_release(&po);
	err_release(&e);
	return o;
}
