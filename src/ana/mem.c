/*
 * mem.c - the state spaces a statement names and what it does to memory.
 *
 * Both come from the opcode and its modifiers alone (no operand, no
 * dataflow), so the address tracking (addr.c) and the cut interface
 * (cut.c) above it share them.  A wgmma.mma_async is a load of shared
 * memory (its matrix descriptors name shared bytes, whatever its
 * modifiers say); which bytes is a question of its descriptors' values,
 * answered by wgmma_reads (wgmma.c), not here.
 */
#include "ana.h"

#include <string.h>

/* ---- spaces -------------------------------------------------------------- */

static const char *const space_names[SP__COUNT] = {
	"generic", "global", "shared", "local", "const", "param", "tex", "surf",
};

const char *space_name(Space s)
{
	return (unsigned)s < SP__COUNT ? space_names[s] : "?";
}

/* Space of one opcode component (".shared::cta" -> SP_SHARED), or -1.
 * Every load of a phase's operands asks, so the name is matched by its
 * second byte and length before any compare. */
static int comp_space(const char *p, size_t n)
{
	size_t k = 0;
	while (k < n && !(p[k] == ':' && k + 1 < n && p[k + 1] == ':'))
		k++;
	static const struct {
		const char *name;
		size_t len;
		int space;
	} spaces[] = {
		{".global", 7, SP_GLOBAL}, {".shared", 7, SP_SHARED}, {".local", 6, SP_LOCAL},
		{".const", 6, SP_CONST},   {".param", 6, SP_PARAM},
	};
	if (k < 6 || k > 7)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(spaces); i++) {
		const char *nm = spaces[i].name;
		if (p[1] == nm[1] && spaces[i].len == k && !memcmp(p, nm, k))
			return spaces[i].space;
	}
	return -1;
}

int stmt_spaces(const Module *m, const Stmt *s, Space out[2])
{
	Str op = stmt_opcode(m, s);
	int n = 0;
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p + 1;
		while (q < end && *q != '.')
			q++;
		if (*p == '.') {
			int sp = comp_space(p, (size_t)(q - p));
			if (sp >= 0 && n < 2)
				out[n++] = (Space)sp;
		}
		p = q;
	}
	return n;
}

Space stmt_space(const Module *m, const Stmt *s)
{
	switch ((Op)s->op) {
	case OP_TEX:
	case OP_TLD4:
	case OP_TXQ:
		return SP_TEX;
	case OP_SULD:
	case OP_SUST:
	case OP_SURED:
	case OP_SUQ:
		return SP_SURF;
	default:
		break;
	}
	Space sp[2];
	return stmt_spaces(m, s, sp) ? sp[0] : SP_GENERIC;
}

/* ---- memory effects of one statement ------------------------------------- */

MemEffect df_mem_effect(const Dataflow *df, uint32_t stmt)
{
	const Module *m = df_module(df);
	const Stmt *s = func_stmt(m, df_func(df), stmt);
	MemEffect me = {0, SP_GENERIC, SP_GENERIC};
	Space sp[2];
	int ns;
	switch ((Op)s->op) {
	case OP_LD:
	case OP_LDU:
	case OP_LDMATRIX:
		me.flags = ME_LOAD;
		me.load = stmt_space(m, s);
		break;
	case OP_ST:
	case OP_STMATRIX:
		me.flags = ME_STORE;
		me.store = stmt_space(m, s);
		break;
	case OP_ATOM:
	case OP_RED:
		me.flags = ME_LOAD | ME_STORE | ME_ATOMIC;
		me.load = me.store = stmt_space(m, s);
		break;
	case OP_TEX:
	case OP_TLD4:
	case OP_SULD:
		me.flags = ME_LOAD;
		me.load = stmt_space(m, s);
		break;
	case OP_SUST:
		me.flags = ME_STORE;
		me.store = SP_SURF;
		break;
	case OP_SURED:
		me.flags = ME_LOAD | ME_STORE | ME_ATOMIC;
		me.load = me.store = SP_SURF;
		break;
	case OP_CP:
		/* cp.async[.bulk...].dst.src: writes dst, reads src */
		ns = stmt_spaces(m, s, sp);
		if (!stmt_opcode_is(m, s, "cp.async") && !stmt_opcode_is(m, s, "cp.reduce"))
			break; /* unknown cp.*: no memory effect recorded */
		if (ns == 0 && (stmt_opcode_is(m, s, "cp.async.wait_group") ||
		                stmt_opcode_is(m, s, "cp.async.wait_all") ||
		                stmt_opcode_is(m, s, "cp.async.commit_group") ||
		                stmt_opcode_is(m, s, "cp.async.bulk.commit_group") ||
		                stmt_opcode_is(m, s, "cp.async.bulk.wait_group")))
			break;
		if (stmt_opcode_is(m, s, "cp.async.mbarrier")) {
			me.flags = ME_BARRIER;
			break;
		}
		if (stmt_has_mod(m, s, ".prefetch"))
			break; /* cp.async.bulk.prefetch: a hint, no data moves */
		me.flags = ME_LOAD | ME_STORE;
		me.store = ns >= 1 ? sp[0] : SP_GENERIC;
		me.load = ns >= 2 ? sp[1] : (ns == 1 ? sp[0] : SP_GENERIC);
		if (ns == 1 && stmt_opcode_is(m, s, "cp.async") && !stmt_has_mod(m, s, ".bulk"))
			me.load = SP_GLOBAL;
		if (stmt_opcode_is(m, s, "cp.reduce"))
			me.flags |= ME_ATOMIC;
		break;
	case OP_WGMMA:
		/* wgmma.mma_async reads B (and A when it is not in registers)
		 * from shared memory through its matrix descriptors; the bytes are
		 * wgmma_reads' (wgmma.c).  fence, commit_group and wait_group
		 * move no data. */
		if (stmt_opcode_is(m, s, "wgmma.mma_async")) {
			me.flags = ME_LOAD;
			me.load = SP_SHARED;
		}
		break;
	case OP_WMMA:
		if (stmt_opcode_is(m, s, "wmma.load")) {
			me.flags = ME_LOAD;
			me.load = stmt_space(m, s);
		} else if (stmt_opcode_is(m, s, "wmma.store")) {
			me.flags = ME_STORE;
			me.store = stmt_space(m, s);
		}
		break;
	case OP_MULTIMEM:
		if (stmt_opcode_is(m, s, "multimem.ld_reduce")) {
			me.flags = ME_LOAD;
			me.load = SP_GLOBAL;
		} else if (stmt_opcode_is(m, s, "multimem.st")) {
			me.flags = ME_STORE;
			me.store = SP_GLOBAL;
		} else if (stmt_opcode_is(m, s, "multimem.red")) {
			me.flags = ME_LOAD | ME_STORE | ME_ATOMIC;
			me.load = me.store = SP_GLOBAL;
		}
		break;
	case OP_TENSORMAP:
		if (stmt_opcode_is(m, s, "tensormap.replace")) {
			me.flags = ME_STORE;
			me.store = stmt_space(m, s);
		}
		break;
	case OP_BAR:
	case OP_BARRIER:
	case OP_MEMBAR:
	case OP_FENCE:
	case OP_MBARRIER:
		me.flags = ME_BARRIER;
		break;
	case OP_CALL:
		/* a callee may read and write any memory */
		me.flags = ME_LOAD | ME_STORE | ME_CALL;
		me.load = me.store = SP_GENERIC;
		break;
	default:
		break;
	}
	return me;
}
