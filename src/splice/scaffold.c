/*
 * scaffold.c - `recipe new`: a recipe and a template skeleton from the facts
 * of the cut.
 *
 * The skeleton is the cut itself written as a template: every live-in and
 * live-out register becomes a formal (in, out, or inout when both) bound to
 * itself, every temporary of the cut becomes a local, and the statements are
 * copied with the formals written %{name}.  So the fresh scaffold splices as
 * it stands (it is an identity), passes ptxas, and the author rewrites the
 * body from there, keeping the interface.  The recipe carries the guards
 * computed from the cut and, under "interface", what the author needs to
 * know: each live register's type, where it is first used or last defined,
 * the cut's memory effects, and the operand facts of its mma (ana_operands:
 * tiles, k-steps, where every A, B and C register comes from, each load with
 * its base register, resolved address and reload verdict).
 *
 * Decisions:
 *  - The live registers that are mma operands are grouped by role into list
 *    formals, in mma order: a, b, c (read from before the cut) and d
 *    (written for after it), each register once, under the role of its
 *    first appearance (A, B, C, D within an mma); a list whose registers
 *    are read and written is named with its direction (c_inout).  The
 *    author writes a native phase against a[k], b[k], c[k], d[k], not
 *    against 200 formals named after registers; interface.formals gives
 *    each entry's register, mma and source.  A register whose type differs
 *    from its list's, and every live register that is no mma operand (an
 *    epilogue's), keeps a formal of its own named after it.
 */
#include "splice.h"

#include "ana/ana.h"
#include "base/sha256.h"
#include "facts.h"
#include "template.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
	uint32_t reg;
	char *formal;    /* NULL for temporaries; "a[3]" for a list member */
	uint8_t dir;     /* FM_* for formals */
	int list;        /* index in the role lists, or -1 */
	uint32_t word;   /* list members: the word of its first appearance */
} Named;

/* A list formal of live mma operands of one role, direction and type. */
typedef struct {
	char name[16];   /* "a", "d", "c_inout" */
	uint8_t dir;
	uint32_t type_reg;          /* a member, for the type */
	VEC(size_t) members;        /* indices into the Named list */
} RoleList;

static int find_named(const Named *v, size_t n, uint32_t reg)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].reg == reg)
			return (int)i;
	return -1;
}

static char *formal_name(Str reg, const Named *v, size_t n)
{
	StrBuf sb = STRBUF_INIT;
	const char *p = reg.p;
	size_t k = reg.n;
	if (k && *p == '%')
		p++, k--;
	if (!k || isdigit((unsigned char)*p))
		sb_addc(&sb, 'r');
	for (size_t i = 0; i < k; i++)
		sb_addc(&sb, isalnum((unsigned char)p[i]) ? p[i] : '_');
	/* unique */
	for (unsigned suffix = 2;; suffix++) {
		bool clash = false;
		for (size_t i = 0; i < n; i++)
			if (v[i].formal && !strcmp(v[i].formal, sb.p))
				clash = true;
		if (!clash)
			break;
		char *base = xstrdup(sb.p);
		sb_reset(&sb);
		sb_addf(&sb, "%s_%u", base, suffix);
		free(base);
	}
	return sb.p;
}

typedef VEC(Named) NamedVec;
typedef VEC(RoleList) RoleLists;

/* Is `name` a formal of its own (not a list member) in nm? */
static bool own_formal(const NamedVec *nm, const char *name)
{
	for (size_t i = 0; i < nm->n; i++)
		if (nm->v[i].formal && nm->v[i].list < 0 && !strcmp(nm->v[i].formal, name))
			return true;
	return false;
}

/* The live registers of nm (formals) that are operands of the mma of po go
 * into role lists: under the role of their first appearance, in mma order
 * (A, B, C, D within an mma); their formal becomes "a[k]". */
static void group_roles(const Dataflow *df, const PhaseOperands *po, NamedVec *nm,
                        RoleLists *lists)
{
	static const int order[] = {ROLE_A, ROLE_B, ROLE_C, ROLE_D};
	bool *seen = xcalloc(nm->n + 1, 1);
	for (size_t i = 0; i < po->mma.n; i++)
		for (int o = 0; o < 4; o++) {
			int r = order[o];
			const OpdMma *x = &po->mma.v[i];
			for (uint32_t k = 0; k < x->nword[r]; k++) {
				uint32_t wi = x->word[r] + k;
				int ni = find_named(nm->v, nm->n, po->words.v[wi].reg);
				if (ni < 0 || (size_t)ni >= nm->n || !nm->v[ni].formal || seen[ni])
					continue;
				seen[ni] = true;
				Named *y = &nm->v[ni];
				uint8_t natural = r == ROLE_D ? FM_OUT : FM_IN;
				char name[16];
				snprintf(name, sizeof name, "%s%s", opd_role_name((OpdRole)r),
				         y->dir == natural      ? ""
				         : y->dir == FM_INOUT ? "_inout"
				         : y->dir == FM_OUT   ? "_out"
				                              : "_in");
				size_t li = 0;
				while (li < lists->n && strcmp(lists->v[li].name, name))
					li++;
				if (li == lists->n) {
					RoleList l;
					memset(&l, 0, sizeof l);
					snprintf(l.name, sizeof l.name, "%s", name);
					l.dir = y->dir;
					l.type_reg = y->reg;
					VEC_PUSH(*lists, l);
				}
				const RegInfo *a = df_reg(df, lists->v[li].type_reg), *b = df_reg(df, y->reg);
				if (a->vec != b->vec || !str_eq(a->type, b->type))
					continue; /* a formal of its own */
				y->list = (int)li;
				y->word = wi;
				VEC_PUSH(lists->v[li].members, (size_t)ni);
			}
		}
	free(seen);
	for (size_t li = 0; li < lists->n; li++) {
		RoleList *l = &lists->v[li];
		while (own_formal(nm, l->name) && strlen(l->name) + 2 < sizeof l->name)
			strcat(l->name, "_");
		for (size_t k = 0; k < l->members.n; k++) {
			Named *y = &nm->v[l->members.v[k]];
			free(y->formal);
			char buf[48];
			snprintf(buf, sizeof buf, "%s[%zu]", l->name, k);
			y->formal = xstrdup(buf);
		}
	}
}

int splice_scaffold(const ScaffoldRequest *req, StrBuf *recipe_json, StrBuf *template_text,
                    StrBuf *summary, Err *e)
{
	const Module *m = req->module;
	const Func *f = mod_func_find(m, str_c(req->entry));
	if (!f || (f->flags & FNF_DECL))
		return err_set(e, "no function '%s' with a body in module '%s'", req->entry,
		               m->name ? m->name : "?");
	Dataflow *df = df_build(m, f, e);
	if (!df)
		return -1;
	int rc = -1;
	uint32_t first = req->first, last = req->last;
	CutInterface cut = {0};
	bool have_cut = false;
	NamedVec nm = {0};
	RoleLists lists = {0};
	PhaseList pl = {0};
	PhaseOperands po;
	memset(&po, 0, sizeof po);
	cJSON *root = NULL;
	size_t nph = 0;
	if (req->phase) {
		if (ana_phase_range(m, f, 0, req->phase, req->with_epilogue, &first,
		                    &last, &nph) < 0) {
			ana_phase_missing(NULL, req->phase, req->layer ? req->layer : req->entry,
			                  nph, e);
			goto out;
		}
	} else if (last >= f->nstmt || first > last) {
		err_set(e, "statements s%u..s%u: '%s' has %u statements", first, last, req->entry,
		        f->nstmt);
		goto out;
	}
	if (df_cut(df, first, last, &cut, e) < 0)
		goto out;
	have_cut = true;

	/* formals */
	for (size_t i = 0; i < cut.live_in.n; i++) {
		Named x = {cut.live_in.v[i].reg, NULL, FM_IN, -1, 0};
		x.formal = formal_name(df_reg(df, x.reg)->name, nm.v, nm.n);
		VEC_PUSH(nm, x);
	}
	for (size_t i = 0; i < cut.live_out.n; i++) {
		int k = find_named(nm.v, nm.n, cut.live_out.v[i].reg);
		if (k >= 0) {
			nm.v[k].dir = FM_INOUT;
			continue;
		}
		Named x = {cut.live_out.v[i].reg, NULL, FM_OUT, -1, 0};
		x.formal = formal_name(df_reg(df, x.reg)->name, nm.v, nm.n);
		VEC_PUSH(nm, x);
	}
	size_t nformals = nm.n;
	/* the operand facts, and the live mma operands grouped by role */
	ana_phase_find(m, f, 0, &pl);
	if (ana_operands(df, &pl, first, last, &po, e) < 0)
		goto out;
	group_roles(df, &po, &nm, &lists);
	const Stmt *s0 = func_stmt(m, f, first), *s1 = func_stmt(m, f, last);
	size_t lo = s0->off, hi = (size_t)s1->off + s1->len;
	/* temporaries: every other register the cut names (not declared inside it) */
	for (uint32_t i = first; i <= last; i++) {
		const Stmt *s = func_stmt(m, f, i);
		uint32_t a = s->opd, b = a;
		unsigned cnt = s->nopd + ((s->flags & STMT_GUARD) ? 1 : 0);
		for (unsigned k = 0; k < cnt; k++)
			b = opd_next(m, b);
		for (uint32_t k = a; k < b; k++) {
			const Operand *o = &m->opds.v[k];
			if (o->kind != OPD_REG && o->kind != OPD_IDENT)
				continue;
			int64_t id = df_opd_reg(df, k);
			if (id < 0 || find_named(nm.v, nm.n, (uint32_t)id) >= 0)
				continue;
			const RegInfo *ri = df_reg(df, (uint32_t)id);
			if (ri->special || !ri->type.n)
				continue;
			bool inside = false; /* declared in a scope inside the cut: travels as text */
			for (uint32_t d = 0; d < f->nreg && !inside; d++) {
				const RegDecl *rd = &m->regs.v[f->reg0 + d];
				Str dn = mod_str(m, rd->name);
				if (rd->decl.off >= lo && rd->decl.off < hi)
					inside = rd->range ? (ri->name.n > dn.n && !memcmp(ri->name.p, dn.p, dn.n))
					                   : str_eq(dn, ri->name);
			}
			if (inside)
				continue;
			Named x = {(uint32_t)id, NULL, 0, -1, 0};
			VEC_PUSH(nm, x);
		}
	}

	/* ---- the template skeleton ---- */
	StrBuf *t = template_text;
	sb_addf(t, "// ptx/%s - native replacement of s%u..s%u (lines %u..%u) of %s\n",
	        req->template_name, first, last, s0->line, s1->line, req->entry);
	if (req->phase)
		sb_addf(t, "// (phase %u%s)\n", req->phase, req->with_epilogue ? " and its epilogue" : "");
	sb_adds(t, "//\n// Scaffold written by `d4r-splice recipe new`.  As it stands it re-emits the\n"
	           "// cut's own statements (an identity splice).  Rewrite the body; keep every\n"
	           "// output formal written, since the code after the cut reads them.\n");
	bool *printed = xcalloc(nm.n + 1, 1);
	for (size_t li = 0; li < lists.n; li++) {
		const RoleList *l = &lists.v[li];
		if (!l->members.n)
			continue;
		const RegInfo *ri = df_reg(df, l->type_reg);
		sb_addf(t, "//! %-5s ", l->dir == FM_IN ? "in" : l->dir == FM_OUT ? "out" : "inout");
		if (ri->vec)
			sb_addf(t, ".v%u", ri->vec);
		sb_addf(t, "%.*s %s[%zu]\n", (int)(ri->type.n ? ri->type.n : 4),
		        ri->type.n ? ri->type.p : ".b32", l->name, l->members.n);
		for (size_t k = 0; k < l->members.n; k++)
			printed[l->members.v[k]] = true;
	}
	for (int dir = FM_IN; dir <= FM_INOUT; dir++)
		for (size_t i = 0; i < nformals; i++) {
			if (printed[i] || nm.v[i].dir != dir)
				continue;
			const RegInfo *ri = df_reg(df, nm.v[i].reg);
			/* a line per direction and type, 8 names a line */
			unsigned k = 0;
			for (size_t j = i; j < nformals; j++) {
				const RegInfo *rj = df_reg(df, nm.v[j].reg);
				if (printed[j] || nm.v[j].dir != dir || rj->vec != ri->vec ||
				    !str_eq(rj->type, ri->type))
					continue;
				printed[j] = true;
				if (k % 8 == 0) {
					if (k)
						sb_addc(t, '\n');
					sb_addf(t, "//! %-5s ", dir == FM_IN ? "in" : dir == FM_OUT ? "out" : "inout");
					if (ri->vec)
						sb_addf(t, ".v%u", ri->vec);
					sb_addf(t, "%.*s", (int)(ri->type.n ? ri->type.n : 4),
					        ri->type.n ? ri->type.p : ".b32");
				}
				sb_addf(t, " %s", nm.v[j].formal);
				k++;
			}
			sb_addc(t, '\n');
		}
	StrBuf eff = STRBUF_INIT;
	for (int s = 0; s < SP__COUNT; s++)
		if (cut.loads[s])
			sb_addf(&eff, " %s", space_name((Space)s));
	sb_addf(t, "//! reads %s\n", eff.n ? eff.p + 1 : "none");
	sb_reset(&eff);
	for (int s = 0; s < SP__COUNT; s++)
		if (cut.stores[s])
			sb_addf(&eff, " %s", space_name((Space)s));
	sb_addf(t, "//! writes %s\n", eff.n ? eff.p + 1 : "none");
	sb_release(&eff);
	sb_addf(t, "//! barriers %u\n", cut.barriers);
	/* locals */
	for (size_t i = nformals; i < nm.n; i++) {
		if (printed[i])
			continue;
		const RegInfo *ri = df_reg(df, nm.v[i].reg);
		unsigned k = 0;
		for (size_t j = i; j < nm.n; j++) {
			const RegInfo *rj = df_reg(df, nm.v[j].reg);
			if (printed[j] || rj->vec != ri->vec || !str_eq(rj->type, ri->type))
				continue;
			printed[j] = true;
			sb_adds(t, k % 8 == 0 ? (k ? ";\n\t.reg " : "\t.reg ") : ", ");
			if (k % 8 == 0) {
				if (ri->vec)
					sb_addf(t, ".v%u ", ri->vec);
				sb_addf(t, "%.*s ", (int)ri->type.n, ri->type.p);
			}
			if (!(rj->name.n && rj->name.p[0] == '%'))
				sb_addc(t, '%');
			sb_addn(t, rj->name.p, rj->name.n);
			k++;
		}
		sb_adds(t, ";\n");
	}
	free(printed);
	/* the statements */
	sb_addc(t, '\t');
	size_t pos = lo;
	for (uint32_t i = first; i <= last; i++) {
		const Stmt *s = func_stmt(m, f, i);
		uint32_t a = s->opd, b = a;
		unsigned cnt = s->nopd + ((s->flags & STMT_GUARD) ? 1 : 0);
		for (unsigned k = 0; k < cnt; k++)
			b = opd_next(m, b);
		for (uint32_t k = a; k < b; k++) {
			const Operand *o = &m->opds.v[k];
			if (o->kind != OPD_REG && o->kind != OPD_IDENT)
				continue;
			int64_t id = df_opd_reg(df, k);
			int x = id < 0 ? -1 : find_named(nm.v, nm.n, (uint32_t)id);
			if (x < 0)
				continue;
			const RegInfo *ri = df_reg(df, (uint32_t)id);
			if (o->len < ri->name.n || memcmp(m->src + o->off, ri->name.p, ri->name.n))
				continue;
			if (!nm.v[x].formal && ri->name.n && ri->name.p[0] == '%')
				continue; /* a local keeps its name */
			sb_addn(t, m->src + pos, o->off - pos);
			if (nm.v[x].formal)
				sb_addf(t, "%%{%s}", nm.v[x].formal);
			else
				sb_addf(t, "%%%.*s", (int)ri->name.n, ri->name.p);
			pos = o->off + ri->name.n;
		}
	}
	sb_addn(t, m->src + pos, hi - pos);
	sb_addc(t, '\n');

	/* ---- the recipe ---- */
	root = cJSON_CreateObject();
	if (req->layer)
		cJSON_AddStringToObject(root, "layer", req->layer);
	if (req->module_rel)
		cJSON_AddStringToObject(root, "module", req->module_rel);
	cJSON_AddStringToObject(root, "entry", req->entry);
	cJSON *c = cJSON_AddObjectToObject(root, "cut");
	if (req->phase) {
		cJSON_AddNumberToObject(c, "phase", req->phase);
		if (req->with_epilogue)
			cJSON_AddTrueToObject(c, "with_epilogue");
	} else {
		cJSON *a = cJSON_AddArrayToObject(c, "stmts");
		cJSON_AddItemToArray(a, cJSON_CreateNumber(first));
		cJSON_AddItemToArray(a, cJSON_CreateNumber(last));
	}
	cJSON_AddStringToObject(root, "template", req->template_name);
	bool builtin = !strcmp(req->template_name, "identity") || !strcmp(req->template_name, "perturb");
	cJSON *b = NULL;
	if (!builtin) {
		cJSON_AddObjectToObject(root, "params");
		b = cJSON_AddObjectToObject(root, "bind");
	}
	for (size_t li = 0; b && li < lists.n; li++) {
		if (!lists.v[li].members.n)
			continue;
		cJSON *a = cJSON_AddArrayToObject(b, lists.v[li].name);
		for (size_t k = 0; k < lists.v[li].members.n; k++) {
			Str n = df_reg(df, nm.v[lists.v[li].members.v[k]].reg)->name;
			char *s = xstrndup(n.p, n.n);
			cJSON_AddItemToArray(a, cJSON_CreateString(s));
			free(s);
		}
	}
	for (size_t i = 0; b && i < nformals; i++) {
		if (nm.v[i].list >= 0)
			continue;
		Str n = df_reg(df, nm.v[i].reg)->name;
		char *s = xstrndup(n.p, n.n);
		cJSON_AddStringToObject(b, nm.v[i].formal, s);
		free(s);
	}
	splice_guards_json(m, f, first, last, cJSON_AddObjectToObject(root, "guards"));

	cJSON *itf = cJSON_AddObjectToObject(root, "interface");
	cJSON *rng = cJSON_AddArrayToObject(itf, "stmts");
	cJSON_AddItemToArray(rng, cJSON_CreateNumber(first));
	cJSON_AddItemToArray(rng, cJSON_CreateNumber(last));
	cJSON *lns = cJSON_AddArrayToObject(itf, "lines");
	cJSON_AddItemToArray(lns, cJSON_CreateNumber(s0->line));
	cJSON_AddItemToArray(lns, cJSON_CreateNumber(s1->line));
	cJSON *li = cJSON_AddArrayToObject(itf, "live_in");
	for (size_t i = 0; i < cut.live_in.n; i++) {
		const RegInfo *ri = df_reg(df, cut.live_in.v[i].reg);
		cJSON *o = cJSON_CreateObject();
		char buf[160];
		snprintf(buf, sizeof buf, "%.*s", (int)ri->name.n, ri->name.p);
		cJSON_AddStringToObject(o, "reg", buf);
		snprintf(buf, sizeof buf, "%s%.*s", ri->vec ? (ri->vec == 2 ? ".v2" : ".v4") : "",
		         (int)ri->type.n, ri->type.p);
		cJSON_AddStringToObject(o, "type", buf);
		snprintf(buf, sizeof buf, "s%u", cut.live_in.v[i].stmt);
		cJSON_AddStringToObject(o, "first_use", buf);
		cJSON_AddNumberToObject(o, "line", func_stmt(m, f, cut.live_in.v[i].stmt)->line);
		cJSON_AddItemToArray(li, o);
	}
	cJSON *lo_ = cJSON_AddArrayToObject(itf, "live_out");
	for (size_t i = 0; i < cut.live_out.n; i++) {
		const CutReg *cr = &cut.live_out.v[i];
		const RegInfo *ri = df_reg(df, cr->reg);
		cJSON *o = cJSON_CreateObject();
		char buf[160];
		snprintf(buf, sizeof buf, "%.*s", (int)ri->name.n, ri->name.p);
		cJSON_AddStringToObject(o, "reg", buf);
		snprintf(buf, sizeof buf, "%s%.*s", ri->vec ? (ri->vec == 2 ? ".v2" : ".v4") : "",
		         (int)ri->type.n, ri->type.p);
		cJSON_AddStringToObject(o, "type", buf);
		snprintf(buf, sizeof buf, "s%u", cr->stmt);
		cJSON_AddStringToObject(o, "last_def", buf);
		snprintf(buf, sizeof buf, "s%u", cr->use);
		cJSON_AddStringToObject(o, "first_use_after", buf);
		cJSON_AddNumberToObject(o, "line", func_stmt(m, f, cr->use)->line);
		cJSON_AddItemToArray(lo_, o);
	}
	/* each list entry: its register, the mma it first appears in, its source */
	cJSON *fj = cJSON_AddObjectToObject(itf, "formals");
	for (size_t q = 0; q < lists.n; q++) {
		if (!lists.v[q].members.n)
			continue;
		cJSON *a = cJSON_AddArrayToObject(fj, lists.v[q].name);
		for (size_t k = 0; k < lists.v[q].members.n; k++) {
			const Named *y = &nm.v[lists.v[q].members.v[k]];
			const OpdWord *w = &po.words.v[y->word];
			cJSON *o = cJSON_CreateObject();
			char buf[160];
			cJSON_AddStringToObject(o, "reg", facts_reg(df, y->reg, buf, sizeof buf));
			uint32_t at = 0;
			for (size_t i = 0; i < po.mma.n; i++)
				for (int r = 0; r < ROLE__N; r++)
					if (y->word >= po.mma.v[i].word[r] &&
					    y->word < po.mma.v[i].word[r] + po.mma.v[i].nword[r])
						at = po.mma.v[i].stmt;
			cJSON_AddNumberToObject(o, "mma", at);
			if (y->dir & FM_IN) {
				cJSON_AddStringToObject(o, "value", opd_value_name((OpdValue)w->value));
				if (w->def >= 0)
					cJSON_AddNumberToObject(o, "def", (double)w->def);
				if (w->value == OV_LOAD) {
					const OpdLoad *l = &po.loads.v[w->src];
					cJSON *lj = cJSON_AddObjectToObject(o, "load");
					cJSON_AddNumberToObject(lj, "stmt", l->stmt);
					cJSON_AddNumberToObject(lj, "elem", w->elem);
					if (l->base_reg >= 0)
						cJSON_AddStringToObject(lj, "base_reg",
						                        facts_reg(df, (uint32_t)l->base_reg, buf, sizeof buf));
					cJSON_AddNumberToObject(lj, "disp", (double)l->disp);
					if (l->resolved) {
						cJSON_AddStringToObject(lj, "base", addr_base_name(l->addr.base));
						if (l->addr.base_name.n) {
							snprintf(buf, sizeof buf, "%.*s", (int)l->addr.base_name.n,
							         l->addr.base_name.p);
							cJSON_AddStringToObject(lj, "name", buf);
						}
						cJSON_AddNumberToObject(lj, "offset", (double)l->addr.offset);
					} else
						cJSON_AddStringToObject(lj, "base", "unresolved");
					cJSON_AddBoolToObject(lj, "reload_safe", l->reload_safe);
				} else if (w->value == OV_PHASE)
					cJSON_AddNumberToObject(o, "from_phase", w->src);
			}
			cJSON_AddItemToArray(a, o);
		}
	}
	cJSON_AddItemToObject(itf, "operands", facts_json(df, &po));
	cJSON *mem = cJSON_AddObjectToObject(itf, "memory");
	cJSON *ld = cJSON_AddObjectToObject(mem, "loads");
	cJSON *stx = cJSON_AddObjectToObject(mem, "stores");
	for (int s = 0; s < SP__COUNT; s++) {
		if (cut.loads[s])
			cJSON_AddNumberToObject(ld, space_name((Space)s), cut.loads[s]);
		if (cut.stores[s])
			cJSON_AddNumberToObject(stx, space_name((Space)s), cut.stores[s]);
	}
	cJSON_AddNumberToObject(mem, "atomics", cut.atomics);
	cJSON_AddNumberToObject(mem, "barriers", cut.barriers);
	cJSON_AddBoolToObject(mem, "rw_dependency", cut.rw_dependency);
	if (cut.rw_reason.n)
		cJSON_AddStringToObject(mem, "rw_reason", cut.rw_reason.p);
	char *js = cJSON_Print(root);
	sb_adds(recipe_json, js);
	sb_addc(recipe_json, '\n');
	free(js);

	if (summary)
		sb_addf(summary,
		        "cut:       s%u..s%u (lines %u..%u) of %s, %u statements, %u mma\n"
		        "interface: %zu live-in, %zu live-out registers, %zu temporaries%s\n",
		        first, last, s0->line, s1->line, req->entry, last - first + 1, ana_mma_count(m, f, first, last),
		        cut.live_in.n, cut.live_out.n, nm.n - nformals,
		        cut.rw_dependency ? "; READ/WRITE DEPENDENCY" : "");
	rc = 0;
out:
	if (root)
		cJSON_Delete(root);
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i].formal);
	VEC_FREE(nm);
	for (size_t i = 0; i < lists.n; i++)
		VEC_FREE(lists.v[i].members);
	VEC_FREE(lists);
	phase_operands_release(&po);
	phases_release(&pl);
	if (have_cut)
		cut_release(&cut);
	df_free(df);
	return rc;
}
