/*
 * test_ptx.c - the PTX parser, model and emitter on the constructs that break
 * other parsers (the checklist in peers.md), and on bad input.
 *
 * Every accepted snippet must re-emit byte for byte and pass ptx_verify
 * (parse_ok does both); the model assertions then check what was recorded:
 * statement numbering, opcodes, guards, operand trees, declarations, labels,
 * parameters and line numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "ptx/emit.h"
#include "ptx/lex.h"
#include "ptx/parse.h"

#define HDR ".version 8.7\n.target sm_90a\n.address_size 64\n"
/* One entry `k` around a body. */
#define ENTRY(body) HDR ".visible .entry k()\n{\n" body "}\n"

/* ---- helpers ------------------------------------------------------------- */

static Module *parse_ok(const char *src)
{
	Err e = ERR_INIT;
	size_t n = strlen(src);
	Module *m = ptx_parse("t.ptx", src, n, &e);
	if (!m)
		fail_msg("parse failed: %s", err_msg(&e));
	StrBuf out = STRBUF_INIT;
	assert_int_equal(ptx_emit(m, NULL, 0, &out, &e), 0);
	assert_int_equal(out.n, n);
	assert_memory_equal(out.p, src, n);
	if (ptx_verify(m, &e) < 0)
		fail_msg("verify failed: %s", err_msg(&e));
	sb_release(&out);
	err_release(&e);
	return m;
}

/* Parses bad input; returns the message (static buffer). */
static const char *parse_bad(const char *src, size_t n)
{
	static char msg[4096];
	Err e = ERR_INIT;
	Module *m = ptx_parse("t.ptx", src, n, &e);
	if (m)
		fail_msg("bad input parsed");
	assert_true(e.set);
	snprintf(msg, sizeof msg, "%s", err_msg(&e));
	err_release(&e);
	return msg;
}

/* The message starts with "t.ptx:LINE:COL: " and holds `what`; when a
 * located message, the second line is the source line, the third a caret
 * under the column. */
static void assert_located(const char *msg, unsigned line, unsigned col, const char *what)
{
	char want[64];
	snprintf(want, sizeof want, "t.ptx:%u:%u: ", line, col);
	if (strncmp(msg, want, strlen(want)) != 0)
		fail_msg("message '%s' does not start with '%s'", msg, want);
	if (!strstr(msg, what))
		fail_msg("message '%s' does not say '%s'", msg, what);
	const char *l2 = strchr(msg, '\n');
	assert_non_null(l2);
	const char *l3 = strchr(l2 + 1, '\n');
	assert_non_null(l3);
	/* caret: 4 spaces of indent then col-1 blanks then '^' */
	const char *c = l3 + 1;
	assert_int_equal(strlen(c), 4 + col);
	assert_int_equal(c[4 + col - 1], '^');
}

static int str_is(Str s, const char *w)
{
	return s.n == strlen(w) && memcmp(s.p, w, s.n) == 0;
}
#define assert_str(s, w)                                                                  \
	do {                                                                              \
		Str s_ = (s);                                                             \
		if (!str_is(s_, (w)))                                                     \
			fail_msg("got '%.*s', expected '%s'", (int)s_.n, s_.p, (w));    \
	} while (0)

static const Func *func(const Module *m, const char *name)
{
	const Func *f = mod_func_find(m, str_of(name, strlen(name)));
	if (!f)
		fail_msg("no function '%s'", name);
	return f;
}

static const Stmt *st(const Module *m, const Func *f, uint32_t i)
{
	assert_true(i < f->nstmt);
	return func_stmt(m, f, i);
}

/* Operand i of statement s as text / kind. */
static Str opd_text(const Module *m, const Stmt *s, unsigned i)
{
	return opd_str(m, stmt_opd(m, s, i));
}
static int opd_kind(const Module *m, const Stmt *s, unsigned i)
{
	return stmt_opd(m, s, i)->kind;
}
/* Child c of operand index k. */
static uint32_t child(const Module *m, uint32_t k, unsigned c)
{
	uint32_t j = k + 1;
	while (c--)
		j = opd_next(m, j);
	assert_true(j < k + 1 + m->opds.v[k].sub);
	return j;
}
static unsigned nchildren(const Module *m, uint32_t k)
{
	unsigned n = 0;
	for (uint32_t j = k + 1; j < k + 1 + m->opds.v[k].sub; j = opd_next(m, j))
		n++;
	return n;
}

/* ---- debug info ------------------------------------------------------------ */

static void test_ptx__loc_function_name_inlined_at(void **state)
{
	Module *m = parse_ok(ENTRY("\t.loc\t1 12 3\n"
	                           "\tmov.u32 %r1, 1;\n"
	                           "\t.loc\t1 13 5, function_name $L__info_string0, inlined_at 1 12 3\n"
	                           "\tmov.u32 %r2, 2;\n"
	                           "\t.loc 2 7 0, function_name $L__s1, inlined_at 1 13 5 // c\n"
	                           "\tret;\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 3);
	assert_int_equal(st(m, f, 0)->line, 7);
	assert_int_equal(st(m, f, 1)->line, 9);
	assert_int_equal(st(m, f, 2)->line, 11);
	assert_int_equal(st(m, f, 2)->op, OP_RET);
	mod_free(m);
}

static void test_ptx__file_with_timestamps(void **state)
{
	Module *m = parse_ok(HDR ".file\t1 \"/src/kern.cu\", 1732000000, 8123\n"
	                         ".file 2 \"/a b/c.h\"\n"
	                         ".file\t3 \"q\\\"x.cu\", 0, 0 // trailing\n");
	assert_int_equal(m->items.n, 6);
	assert_int_equal(m->items.v[3].kind, ITEM_FILE);
	assert_str(mod_str(m, m->items.v[3].text), ".file\t1 \"/src/kern.cu\", 1732000000, 8123");
	assert_str(mod_str(m, m->items.v[5].text), ".file\t3 \"q\\\"x.cu\", 0, 0");
	assert_str(mod_str(m, m->version), "8.7");
	assert_str(mod_str(m, m->target), "sm_90a");
	assert_str(mod_str(m, m->address_size), "64");
	mod_free(m);
}

static void test_ptx__debug_sections(void **state)
{
	Module *m = parse_ok(ENTRY("\tret;\n") ".section .debug_abbrev\n{\n.b8 1\n.b8 17 // x\n}\n"
	                                       ".section\t.debug_str\n{\n$L__info_string0:\n"
	                                       ".b8 95,90,0 /* } */\n.b8 \"}\"\n}\n"
	                                       ".section .debug_loc { }\n");
	size_t nsec = 0;
	for (size_t i = 0; i < m->items.n; i++)
		nsec += m->items.v[i].kind == ITEM_SECTION;
	assert_int_equal(nsec, 3);
	assert_int_equal(m->items.v[m->items.n - 1].kind, ITEM_SECTION);
	assert_str(mod_str(m, m->items.v[m->items.n - 1].text), ".section .debug_loc { }");
	mod_free(m);
}

/* ---- operands -------------------------------------------------------------- */

static void test_ptx__vector_operands(void **state)
{
	Module *m = parse_ok(ENTRY("\tmov.b64 {%r7, _}, %rd1;\n"
	                           "\tmov.b64 %rd2, {%r1, 0};\n"
	                           "\tld.b64 {%r5, %r6}, [%rd1];\n"
	                           "\tld.global.v4.u32 { %r1 , %r2,%r3,\n\t\t%r4 }, [%rd1+16];\n"
	                           "\tmov.b32 {%rs1, %rs2}, 0f3F800000;\n"
	                           "\tst.global.v2.f32 [%rd1], {0f00000000, -1};\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 6);
	const Stmt *s = st(m, f, 0);
	assert_int_equal(s->nopd, 2);
	uint32_t v = stmt_opd_index(m, s, 0);
	assert_int_equal(m->opds.v[v].kind, OPD_VEC);
	assert_int_equal(m->opds.v[v].sub, 2);
	assert_int_equal(m->opds.v[child(m, v, 0)].kind, OPD_REG);
	assert_int_equal(m->opds.v[child(m, v, 1)].kind, OPD_SINK);
	assert_str(opd_str(m, &m->opds.v[child(m, v, 1)]), "_");
	assert_int_equal(opd_kind(m, s, 1), OPD_REG);

	s = st(m, f, 1);
	v = stmt_opd_index(m, s, 1);
	assert_int_equal(m->opds.v[v].kind, OPD_VEC);
	assert_int_equal(m->opds.v[child(m, v, 1)].kind, OPD_INT);
	assert_str(opd_str(m, &m->opds.v[child(m, v, 1)]), "0");

	s = st(m, f, 2);
	assert_int_equal(s->op, OP_LD);
	assert_int_equal(opd_kind(m, s, 0), OPD_VEC);
	assert_int_equal(nchildren(m, stmt_opd_index(m, s, 0)), 2);

	s = st(m, f, 3);
	v = stmt_opd_index(m, s, 0);
	assert_int_equal(nchildren(m, v), 4);
	assert_str(opd_str(m, &m->opds.v[child(m, v, 3)]), "%r4");
	assert_str(opd_text(m, s, 0), "{ %r1 , %r2,%r3,\n\t\t%r4 }");

	s = st(m, f, 5);
	v = stmt_opd_index(m, s, 1);
	assert_int_equal(m->opds.v[child(m, v, 0)].kind, OPD_FLOAT);
	assert_int_equal(m->opds.v[child(m, v, 1)].kind, OPD_INT);
	assert_str(opd_str(m, &m->opds.v[child(m, v, 1)]), "-1");
	mod_free(m);
}

static void test_ptx__immediates(void **state)
{
	Module *m = parse_ok(ENTRY("\tmov.f32 %f1, 0f3F800000;\n"
	                           "\tmov.f64 %fd1, 0d3FF0000000000000;\n"
	                           "\tmov.u32 %r1, -1;\n"
	                           "\tmov.u32 %r2, 0xFFFFFFFFU;\n"
	                           "\tmov.s32 %r3, 7U;\n"
	                           "\tmov.s64 %rd1, -0x8000000000000000;\n"
	                           "\tmov.b32 %r4, 0b1011;\n"
	                           "\tmov.f32 %f2, 0F7F800000;\n"
	                           "\tmov.f32 %f3, 1.5;\n"));
	const Func *f = func(m, "k");
	static const struct {
		int kind;
		const char *text;
	} want[] = {{OPD_FLOAT, "0f3F800000"}, {OPD_FLOAT, "0d3FF0000000000000"}, {OPD_INT, "-1"},
	            {OPD_INT, "0xFFFFFFFFU"},  {OPD_INT, "7U"},  {OPD_INT, "-0x8000000000000000"},
	            {OPD_INT, "0b1011"},       {OPD_FLOAT, "0F7F800000"}, {OPD_FLOAT, "1.5"}};
	assert_int_equal(f->nstmt, ARRAY_SIZE(want));
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = st(m, f, i);
		assert_int_equal(s->op, OP_MOV);
		assert_int_equal(s->nopd, 2);
		assert_int_equal(opd_kind(m, s, 0), OPD_REG);
		assert_int_equal(opd_kind(m, s, 1), want[i].kind);
		assert_str(opd_text(m, s, 1), want[i].text);
	}
	mod_free(m);
}

static void test_ptx__addresses(void **state)
{
	Module *m = parse_ok(ENTRY("\tld.param.u64 %rd1, [k_param_0];\n"
	                           "\tld.global.u32 %r1, [%rd1+16];\n"
	                           "\tldu.global.u32 %r2, [%rd1+-8];\n"
	                           "\tld.global.u32 %r3, [%rd1-4];\n"
	                           "\tld.shared.u32 %r4, [smem+4];\n"
	                           "\tld.global.u32 %r5, [%rd1];\n"
	                           "\tld.global.u32 %r6, [256];\n"
	                           "\tst.param.b32 [func_retval0+0], %r1;\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 8);
	/* [name] */
	uint32_t a = stmt_opd_index(m, st(m, f, 0), 1);
	assert_int_equal(m->opds.v[a].kind, OPD_ADDR);
	assert_int_equal(nchildren(m, a), 1);
	assert_int_equal(m->opds.v[child(m, a, 0)].kind, OPD_IDENT);
	assert_str(opd_str(m, &m->opds.v[child(m, a, 0)]), "k_param_0");
	/* [reg+int]: EXPR(REG, INT "16" with PLUS) */
	static const char *const off[] = {NULL, "16", "-8", "-4", "4"};
	for (int i = 1; i <= 4; i++) {
		a = stmt_opd_index(m, st(m, f, (uint32_t)i), 1);
		assert_int_equal(m->opds.v[a].kind, OPD_ADDR);
		uint32_t ex = child(m, a, 0);
		assert_int_equal(m->opds.v[ex].kind, OPD_EXPR);
		assert_int_equal(nchildren(m, ex), 2);
		const Operand *base = &m->opds.v[child(m, ex, 0)];
		const Operand *imm = &m->opds.v[child(m, ex, 1)];
		assert_int_equal(base->kind, i == 4 ? OPD_IDENT : OPD_REG);
		assert_str(opd_str(m, base), i == 4 ? "smem" : "%rd1");
		assert_int_equal(imm->kind, OPD_INT);
		assert_str(opd_str(m, imm), off[i]);
		assert_int_equal(!!(imm->flags & OPDF_PLUS), i != 3);
		assert_int_equal(m->opds.v[a].addr_terms, 2);
	}
	a = stmt_opd_index(m, st(m, f, 5), 1);
	assert_int_equal(m->opds.v[child(m, a, 0)].kind, OPD_REG);
	assert_int_equal(m->opds.v[a].addr_terms, 1);
	a = stmt_opd_index(m, st(m, f, 6), 1);
	assert_int_equal(m->opds.v[child(m, a, 0)].kind, OPD_INT);
	a = stmt_opd_index(m, st(m, f, 7), 0);
	assert_int_equal(m->opds.v[child(m, a, 0)].kind, OPD_EXPR);
	mod_free(m);
}

static void test_ptx__symbol_offsets_pairs_lists_strings(void **state)
{
	Module *m = parse_ok(ENTRY("\tmov.u64 %rd10, gtab+8;\n"
	                           "\tsetp.lt.u32 %p2|%p3, %r1, %r2;\n"
	                           "\tcall.uni (retval0), vprintf, (param0, param1);\n"
	                           "\tcall.uni fn, ();\n"
	                           "\tand.pred %p1, !%p2, %p3;\n"));
	const Func *f = func(m, "k");
	uint32_t k = stmt_opd_index(m, st(m, f, 0), 1);
	assert_int_equal(m->opds.v[k].kind, OPD_EXPR);
	assert_str(opd_str(m, &m->opds.v[k]), "gtab+8");
	assert_int_equal(m->opds.v[child(m, k, 0)].kind, OPD_IDENT);
	assert_int_equal(m->opds.v[child(m, k, 1)].kind, OPD_INT);
	k = stmt_opd_index(m, st(m, f, 1), 0);
	assert_int_equal(m->opds.v[k].kind, OPD_PAIR);
	assert_str(opd_str(m, &m->opds.v[child(m, k, 1)]), "%p3");
	const Stmt *s = st(m, f, 2);
	assert_int_equal(s->op, OP_CALL);
	assert_int_equal(s->nopd, 3);
	assert_int_equal(opd_kind(m, s, 0), OPD_LIST);
	assert_int_equal(opd_kind(m, s, 1), OPD_IDENT);
	assert_int_equal(nchildren(m, stmt_opd_index(m, s, 2)), 2);
	s = st(m, f, 3);
	assert_int_equal(opd_kind(m, s, 1), OPD_LIST);
	assert_int_equal(nchildren(m, stmt_opd_index(m, s, 1)), 0);
	s = st(m, f, 4);
	assert_true(stmt_opd(m, s, 1)->flags & OPDF_NOT);
	assert_str(opd_text(m, s, 1), "%p2");
	mod_free(m);
}

/* ---- statements --------------------------------------------------------- */

static void test_ptx__guards(void **state)
{
	Module *m = parse_ok(ENTRY("\t@%p1 bra \t$L__BB0_2;\n"
	                           "\t@!%p1 bra.uni $L__BB0_3;\n"
	                           "\t@ %p2 ret;\n"
	                           "$L__BB0_2:\n$L__BB0_3:\n"
	                           "\tmov.u32 %r1, 0;\n"));
	const Func *f = func(m, "k");
	const Stmt *s = st(m, f, 0);
	assert_int_equal(s->flags & (STMT_GUARD | STMT_GUARD_NOT), STMT_GUARD);
	assert_str(opd_str(m, stmt_guard(m, s)), "%p1");
	assert_int_equal(s->op, OP_BRA);
	assert_int_equal(s->nopd, 1);
	assert_str(opd_text(m, s, 0), "$L__BB0_2");
	assert_int_equal(opd_kind(m, s, 0), OPD_IDENT);
	assert_str(stmt_str(m, s), "@%p1 bra \t$L__BB0_2;");
	s = st(m, f, 1);
	assert_int_equal(s->flags & (STMT_GUARD | STMT_GUARD_NOT), STMT_GUARD | STMT_GUARD_NOT);
	assert_str(stmt_opcode(m, s), "bra.uni");
	assert_null(stmt_guard(m, st(m, f, 3)));
	mod_free(m);
}

static void test_ptx__labels(void **state)
{
	Module *m = parse_ok(ENTRY("$L__BB0_1:\n\tmov.u32 %r1, 0;\n"
	                           "$L__BB0_2:  // loop\n$L__BB0_3:\n\tadd.s32 %r1, %r1, 1;\n"
	                           "\tbra $L__BB0_2;\n"
	                           "$L__end: ret;\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nlabel, 4);
	const Label *l = &m->labels.v[f->label0];
	assert_str(mod_str(m, l[0].name), "$L__BB0_1");
	assert_int_equal(l[0].stmt, 0);
	assert_int_equal(l[0].line, 6);
	assert_int_equal(l[1].stmt, 1);
	assert_int_equal(l[2].stmt, 1);
	assert_int_equal(l[2].line, 9);
	assert_int_equal(l[3].stmt, 3);
	assert_int_equal(st(m, f, 3)->op, OP_RET);
	assert_int_equal(st(m, f, 3)->line, 12);
	mod_free(m);
}

static void test_ptx__statement_numbering_spans_and_lines(void **state)
{
	const char *src = ENTRY("\tmov.u32 %r1, 0;  mov.u32 %r2, 1;\n"
	                        "\t// mov.u32 %r3, 2;\n"
	                        "\t/* ret; */ add.s32\n\t\t%r1,\n\t\t%r1, 1;\n"
	                        "\tret;\n");
	Module *m = parse_ok(src);
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 4);
	assert_int_equal(m->stmts.n, 4);
	assert_int_equal(st(m, f, 0)->line, 6);
	assert_int_equal(st(m, f, 1)->line, 6);
	assert_int_equal(st(m, f, 2)->line, 8);
	assert_int_equal(st(m, f, 3)->line, 11);
	assert_str(stmt_str(m, st(m, f, 2)), "add.s32\n\t\t%r1,\n\t\t%r1, 1;");
	assert_int_equal(st(m, f, 2)->off, (uint32_t)(strstr(src, "add.s32") - src));
	assert_int_equal(st(m, f, 1)->opdelta, 0);
	StrBuf sb = STRBUF_INIT;
	stmt_normalized(m, st(m, f, 2), &sb);
	assert_int_equal(sb.n, strlen("add.s32 %r1, %r1, 1;"));
	assert_memory_equal(sb.p, "add.s32 %r1, %r1, 1;", sb.n);
	sb_release(&sb);
	assert_int_equal(f->body_open, (uint32_t)(strchr(src, '{') - src));
	assert_int_equal(f->body_close, (uint32_t)(strrchr(src, '}') - src));
	mod_free(m);
}

static void test_ptx__dotted_opcodes(void **state)
{
	Module *m = parse_ok(ENTRY("\tbarrier.sync.aligned 0;\n"
	                           "\tdiv.rp.f32 %f2, %f1, %f1;\n"
	                           "\tldu.global.u32 %r11, [%rd1];\n"
	                           "\tld.global.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1];\n"
	                           "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r47], [%rd8, {%r1, %r2}], [%r48];\n"
	                           "\tfuturistic.op.x9 %r1;\n"
	                           "\tbar.sync 0, 128;\n"
	                           "\twgmma.fence.sync.aligned;\n"));
	const Func *f = func(m, "k");
	static const struct {
		int op;
		const char *opcode;
		int nopd;
	} want[] = {
		{OP_BARRIER, "barrier.sync.aligned", 1},
		{OP_DIV, "div.rp.f32", 3},
		{OP_LDU, "ldu.global.u32", 2},
		{OP_LD, "ld.global.v8.f32", 2},
		{OP_CP, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", 3},
		{OP_UNKNOWN, "futuristic.op.x9", 1},
		{OP_BAR, "bar.sync", 2},
		{OP_WGMMA, "wgmma.fence.sync.aligned", 0},
	};
	assert_int_equal(f->nstmt, ARRAY_SIZE(want));
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = st(m, f, i);
		assert_int_equal(s->op, want[i].op);
		assert_str(stmt_opcode(m, s), want[i].opcode);
		assert_int_equal(s->nopd, want[i].nopd);
		assert_false(s->flags & STMT_MMA);
	}
	const Stmt *s = st(m, f, 4);
	assert_true(stmt_has_mod(m, s, ".shared::cluster"));
	assert_true(stmt_has_mod(m, s, ".2d"));
	assert_false(stmt_has_mod(m, s, ".shared"));
	static const char *const any[] = {".shared", ".3d", ".2d", ".shared::cluster"};
	assert_int_equal(stmt_mod_any(m, s, any, 4), 2); /* .2d comes first in the opcode */
	assert_int_equal(stmt_mod_any(m, s, any, 2), -1);
	assert_true(stmt_opcode_is(m, s, "cp.async.bulk"));
	assert_false(stmt_opcode_is(m, s, "cp.async.bul"));
	uint32_t a = stmt_opd_index(m, s, 1);
	assert_int_equal(nchildren(m, a), 2);
	assert_int_equal(m->opds.v[child(m, a, 1)].kind, OPD_VEC);
	assert_int_equal(m->opds.v[a].addr_terms, 1);
	assert_int_equal(m->opds.v[stmt_opd_index(m, s, 0)].addr_terms, 1);
	assert_int_equal(nchildren(m, stmt_opd_index(m, st(m, f, 3), 0)), 8);
	mod_free(m);
}

static void test_ptx__mma_family(void **state)
{
	Module *m = parse_ok(ENTRY(
		"\tmma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, {%r1, %r2}, {%r3, %r4}, {%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8};\n"
		"\tmma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r20, %r21, %r22, %r23}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r20, %r21, %r22, %r23};\n"
		"\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r24, %r25}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r24, %r25};\n"
		"\tmma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};\n"
		"\tmma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%f1, %f2, %f3, %f4}, %r9, 0x0;\n"
		"\twmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, [%rd1], %r1;\n"
		"\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};\n"
		"\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd4, %rd5, %p1, 1, 1, 0, 0;\n"
		"\twgmma.commit_group.sync.aligned;\n"
		"\ttcgen05.mma.cta.kind::f16 [%r40], %rd6, %rd7, %r41, %p2;\n"
		"\ttcgen05.ld.sync.aligned.16x64b.x2.b32 {%r42, %r43}, [%r44];\n"
		"\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];\n"));
	const Func *f = func(m, "k");
	static const int mma[] = {1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0};
	static const int op[] = {OP_MMA, OP_MMA, OP_MMA, OP_MMA, OP_MMA, OP_WMMA,
	                         OP_WMMA, OP_WGMMA, OP_WGMMA, OP_TCGEN05, OP_TCGEN05, OP_LDMATRIX};
	assert_int_equal(f->nstmt, ARRAY_SIZE(mma));
	for (uint32_t i = 0; i < f->nstmt; i++) {
		assert_int_equal(!!(st(m, f, i)->flags & STMT_MMA), mma[i]);
		assert_int_equal(st(m, f, i)->op, op[i]);
	}
	assert_int_equal(m->nmma, 7);
	const Stmt *s = st(m, f, 2);
	assert_int_equal(s->nopd, 4);
	assert_true(stmt_has_mod(m, s, ".e4m3"));
	assert_true(stmt_has_mod(m, s, ".m16n8k32"));
	assert_int_equal(nchildren(m, stmt_opd_index(m, s, 1)), 4);
	assert_int_equal(nchildren(m, stmt_opd_index(m, s, 2)), 2);
	assert_true(stmt_has_mod(m, st(m, f, 9), ".kind::f16"));
	assert_int_equal(st(m, f, 7)->nopd, 8);
	mod_free(m);
}

static void test_ptx__texture_and_surface(void **state)
{
	Module *m = parse_ok(HDR ".global .texref tex0;\n.global .surfref surf0;\n"
	                         ".visible .entry k()\n{\n"
	                         "\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f5, %f6}];\n"
	                         "\tsuld.b.2d.v2.b32.trap {%r45, %r46}, [surf0, {%r1, %r2}];\n"
	                         "\tsust.b.2d.v2.b32.trap [surf0, {%r1, %r2}], {%r45, %r46};\n"
	                         "\ttex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5}];\n"
	                         "}\n");
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 4);
	assert_int_equal(st(m, f, 0)->op, OP_TEX);
	assert_int_equal(st(m, f, 1)->op, OP_SULD);
	assert_int_equal(st(m, f, 2)->op, OP_SUST);
	uint32_t a = stmt_opd_index(m, st(m, f, 0), 1);
	assert_int_equal(m->opds.v[a].kind, OPD_ADDR);
	assert_int_equal(nchildren(m, a), 2);
	assert_int_equal(m->opds.v[child(m, a, 0)].kind, OPD_IDENT);
	assert_int_equal(m->opds.v[child(m, a, 1)].kind, OPD_VEC);
	assert_int_equal(opd_kind(m, st(m, f, 2), 0), OPD_ADDR);
	assert_int_equal(opd_kind(m, st(m, f, 2), 1), OPD_VEC);
	assert_int_equal(m->items.n, 6);
	assert_int_equal(m->items.v[3].kind, ITEM_VAR);
	assert_str(mod_str(m, m->items.v[3].name), "tex0");
	mod_free(m);
}

/* ---- declarations ------------------------------------------------------- */

static void test_ptx__reg_declarations(void **state)
{
	Module *m = parse_ok(ENTRY("\t.reg .pred \t%p<5>;\n"
	                           "\t.reg .f32 %f1, %f2;\n"
	                           "\t.reg .b32 \t%r<500>;\n"
	                           "\t.reg .v4 .b32 %v4;\n"
	                           "\t.reg .b64 %rd<40>, %x;\n"
	                           "\tmov.u32 %r1, 0;\n"
	                           "\t{\n\t.reg .b32 %inner<2>;\n\tmov.u32 %inner1, %tid.x;\n\t}\n"
	                           "\t.reg .b32 %late;\n"
	                           "\tret;\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nreg, 9);
	const RegDecl *r = &m->regs.v[f->reg0];
	assert_str(mod_str(m, r[0].name), "%p");
	assert_str(mod_str(m, r[0].type), ".pred");
	assert_int_equal(r[0].count, 5);
	assert_int_equal(r[0].range, 1);
	assert_str(mod_str(m, r[0].decl), ".reg .pred \t%p<5>;");
	assert_str(mod_str(m, r[1].name), "%f1");
	assert_str(mod_str(m, r[2].name), "%f2");
	assert_int_equal(r[2].count, 1);
	assert_int_equal(r[2].range, 0);
	assert_str(mod_str(m, r[2].decl), ".reg .f32 %f1, %f2;");
	assert_int_equal(r[3].count, 500);
	assert_str(mod_str(m, r[3].type), ".b32");
	assert_int_equal(r[4].vec, 4);
	assert_str(mod_str(m, r[4].type), ".b32");
	assert_int_equal(r[5].count, 40);
	assert_str(mod_str(m, r[6].name), "%x");
	assert_int_equal(r[6].count, 1);
	for (int i = 0; i < 7; i++) {
		assert_int_equal(r[i].depth, 1);
		assert_int_equal(r[i].stmt, 0);
	}
	assert_str(mod_str(m, r[7].name), "%inner");
	assert_int_equal(r[7].depth, 2);
	assert_int_equal(r[7].stmt, 1);
	assert_int_equal(r[8].depth, 1);
	assert_int_equal(r[8].stmt, 2);
	assert_int_equal(f->nstmt, 3);
	assert_str(opd_text(m, st(m, f, 1), 1), "%tid.x");
	mod_free(m);
}

static void test_ptx__inline_asm_scopes(void **state)
{
	Module *m = parse_ok(ENTRY("\tmov.u32 %r1, 1;\n"
	                           "\t{ // inline asm\n"
	                           "\t.reg .pred p;\n"
	                           "\t.reg .b32 t1, t2;\n"
	                           "\tsetp.ne.b32 p, %r1, 0;\n"
	                           "\t@p mov.b32 t1, 1;\n"
	                           "\t@!p selp.u32 %r12, t1, t2, p;\n"
	                           "\t{ .reg .b32 deep; mov.b32 deep, t1; }\n"
	                           "\t}\n"
	                           "\t// end inline asm\n"
	                           "\tret;\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 6);
	const Stmt *s = st(m, f, 1);
	assert_int_equal(s->op, OP_SETP);
	assert_int_equal(opd_kind(m, s, 0), OPD_IDENT);
	assert_str(opd_text(m, s, 0), "p");
	s = st(m, f, 2);
	assert_true(s->flags & STMT_GUARD);
	assert_int_equal(stmt_guard(m, s)->kind, OPD_IDENT);
	assert_str(opd_str(m, stmt_guard(m, s)), "p");
	s = st(m, f, 3);
	assert_true(s->flags & STMT_GUARD_NOT);
	assert_int_equal(s->nopd, 4);
	assert_int_equal(f->nreg, 4);
	const RegDecl *r = &m->regs.v[f->reg0];
	assert_str(mod_str(m, r[0].name), "p");
	assert_int_equal(r[0].depth, 2);
	assert_str(mod_str(m, r[3].name), "deep");
	assert_int_equal(r[3].depth, 3);
	assert_int_equal(r[3].stmt, 4);
	mod_free(m);
}

/* ---- the lexer ----------------------------------------------------------- */

static void test_ptx__lex_tokens(void **state)
{
	const char *src = "@%p1 bra.uni\t$L__BB0_2; // c {\n/* b\n} */\"s\\\"q\" 0f3F800000 1.5e3 7U"
	                  " .shared::cta{%tid.x}-1 %{x}";
	static const struct {
		int kind;
		const char *text;
		uint32_t line; /* of the token's first byte */
	} want[] = {
		{TK_PUNCT, "@", 1},         {TK_NAME, "%p1", 1},       {TK_SPACE, " ", 1},
		{TK_NAME, "bra", 1},        {TK_DIRECTIVE, ".uni", 1}, {TK_SPACE, "\t", 1},
		{TK_NAME, "$L__BB0_2", 1},  {TK_PUNCT, ";", 1},        {TK_SPACE, " ", 1},
		{TK_COMMENT, "// c {", 1},  {TK_SPACE, "\n", 1},       {TK_COMMENT, "/* b\n} */", 2},
		{TK_STRING, "\"s\\\"q\"", 3}, {TK_SPACE, " ", 3},      {TK_NUMBER, "0f3F800000", 3},
		{TK_SPACE, " ", 3},         {TK_NUMBER, "1.5e3", 3},   {TK_SPACE, " ", 3},
		{TK_NUMBER, "7U", 3},       {TK_SPACE, " ", 3},        {TK_DIRECTIVE, ".shared::cta", 3},
		{TK_PUNCT, "{", 3},         {TK_NAME, "%tid.x", 3},    {TK_PUNCT, "}", 3},
		{TK_PUNCT, "-", 3},         {TK_NUMBER, "1", 3},       {TK_SPACE, " ", 3},
		{TK_PUNCT, "%", 3},         {TK_PUNCT, "{", 3},        {TK_NAME, "x", 3},
		{TK_PUNCT, "}", 3},
	};
	Lexer lx = ptx_lex_init(src, strlen(src));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		uint32_t line = lx.line;
		Token t = ptx_lex_next(&lx);
		if (t.kind != want[i].kind || t.n != strlen(want[i].text) ||
		    memcmp(t.p, want[i].text, t.n) != 0 || line != want[i].line)
			fail_msg("token %zu: got kind %d '%.*s' on line %u, expected kind %d '%s' on line %u",
			         i, t.kind, (int)t.n, t.p, line, want[i].kind, want[i].text, want[i].line);
	}
	assert_int_equal(ptx_lex_next(&lx).kind, TK_END);
	assert_int_equal(ptx_lex_next(&lx).kind, TK_END);
	/* unterminated: a block comment to the end, a string to its newline */
	const char *bad = "\"abc\n/* x\n";
	lx = ptx_lex_init(bad, strlen(bad));
	Token t = ptx_lex_next(&lx);
	assert_int_equal(t.kind, TK_BAD);
	assert_int_equal(t.n, 4);
	assert_int_equal(ptx_lex_next(&lx).kind, TK_SPACE);
	t = ptx_lex_next(&lx);
	assert_int_equal(t.kind, TK_BAD);
	assert_int_equal(t.n, 5);
	assert_int_equal(lx.line, 3);
}

static void test_ptx__lex_scanners(void **state)
{
	/* trivia: whitespace and whole comments, lines counted; an open block
	 * comment is not trivia */
	const char *s = " \t\n// x\n/* y\n */\r\nmov";
	uint32_t lines = 0;
	const char *q = ptx_lex_trivia(s, s + strlen(s), &lines);
	assert_ptr_equal(q, strstr(s, "mov"));
	assert_int_equal(lines, 4);
	s = "  /* open\n";
	lines = 0;
	q = ptx_lex_trivia(s, s + strlen(s), &lines);
	assert_ptr_equal(q, s + 2);
	assert_true(ptx_lex_open_comment(q, s + strlen(s)));
	assert_int_equal(lines, 0);
	/* strings: escapes, an escaped newline inside, a newline ends one */
	bool closed;
	s = "\"a\\\"b\" rest";
	assert_ptr_equal(ptx_lex_string(s, s + strlen(s), &closed), s + 6);
	assert_true(closed);
	s = "\"a\\\nb\"";
	assert_ptr_equal(ptx_lex_string(s, s + strlen(s), &closed), s + 6);
	assert_true(closed);
	s = "\"ab\ncd\"";
	assert_ptr_equal(ptx_lex_string(s, s + strlen(s), &closed), s + 3);
	assert_false(closed);
	s = "\"ab";
	assert_ptr_equal(ptx_lex_string(s, s + strlen(s), &closed), s + 3);
	assert_false(closed);
	/* solid runs: up to whitespace or a comment; strings whole; a lone '/' */
	s = "a,b/c\"x  y\"/*z*/ d";
	assert_ptr_equal(ptx_lex_solid(s, s + strlen(s)), strstr(s, "/*"));
	/* a line directive's text: comment and trailing blanks excluded */
	s = "1 \"a//b.cu\", 12 \t// comment\n.next";
	assert_ptr_equal(ptx_lex_line_end(s, s + strlen(s)), strstr(s, ", 12") + 4);
	s = "1 \"open // x\n.next";
	assert_ptr_equal(ptx_lex_line_end(s, s + strlen(s)), strchr(s, '\n'));
	/* numbers */
	bool fl;
	s = "0d3FF0000000000000,";
	assert_ptr_equal(ptx_lex_number(s, s + strlen(s), &fl), strchr(s, ','));
	assert_true(fl);
	s = "0x1fU;";
	assert_ptr_equal(ptx_lex_number(s, s + strlen(s), &fl), strchr(s, ';'));
	assert_false(fl);
	s = "12.5e-3]";
	assert_ptr_equal(ptx_lex_number(s, s + strlen(s), &fl), strchr(s, ']'));
	assert_true(fl);
	s = "12.x";
	assert_ptr_equal(ptx_lex_number(s, s + strlen(s), &fl), s + 2);
	assert_false(fl);
	/* names and directives */
	s = "%r12, x";
	assert_ptr_equal(ptx_lex_name(s, s + strlen(s)), s + 4);
	s = "%ctaid.y;";
	assert_ptr_equal(ptx_lex_name(s, s + strlen(s)), s + 8);
	s = "_Z10kernel_with_a_rather_long_mangled_name_param_0]";
	assert_ptr_equal(ptx_lex_name(s, s + strlen(s)), strchr(s, ']'));
	s = ".shared::cluster.b32";
	assert_ptr_equal(ptx_lex_directive(s, s + strlen(s)), strstr(s, ".b32"));
	assert_true(ptx_lex_is('$', LX_IDSTART | LX_IDCONT));
	assert_false(ptx_lex_is('%', LX_IDCONT));
	assert_true(ptx_lex_is('\v', LX_SPACE));
}

/* Normalised statement text: comments go, whitespace runs become one space,
 * a string keeps its bytes. */
static void test_ptx__normalized_text(void **state)
{
	Module *m = parse_ok(ENTRY("\tadd.s32 /* x */ %r1,\n\t\t%r1, // y\n\t\t1;\n"
	                           "\tcall.uni f, (\"a  /* b */ c\");\n"));
	const Func *f = func(m, "k");
	StrBuf sb = STRBUF_INIT;
	stmt_normalized(m, st(m, f, 0), &sb);
	sb_addc(&sb, 0);
	assert_string_equal(sb.p, "add.s32 %r1, %r1, 1;");
	sb_reset(&sb);
	stmt_normalized(m, st(m, f, 1), &sb);
	sb_addc(&sb, 0);
	assert_string_equal(sb.p, "call.uni f, (\"a  /* b */ c\");");
	sb_release(&sb);
	mod_free(m);
}

/* ---- scopes ------------------------------------------------------------- */

/* Offset in src of the k-th (from 0) occurrence of `needle`, plus `plus`. */
static uint32_t nth(const char *src, const char *needle, unsigned k, unsigned plus)
{
	const char *p = src;
	for (;; p++) {
		p = strstr(p, needle);
		assert_non_null(p);
		if (k-- == 0)
			return (uint32_t)(p - src) + plus;
	}
}

static void assert_scope(const Module *m, const Func *f, uint32_t k, uint32_t open,
                         uint32_t close, uint16_t depth, uint32_t parent, uint32_t stmt0,
                         uint32_t nstmt)
{
	assert_true(k < f->nscope);
	const Scope *sc = func_scope(m, f, k);
	assert_int_equal(sc->open, open);
	assert_int_equal(sc->close, close);
	assert_int_equal(m->src[sc->open], '{');
	assert_int_equal(m->src[sc->close], '}');
	assert_int_equal(sc->depth, depth);
	assert_int_equal(sc->parent, parent);
	assert_int_equal(sc->stmt0, stmt0);
	assert_int_equal(sc->nstmt, nstmt);
}

static void test_ptx__scopes_nested(void **state)
{
	const char *src = ENTRY("\tmov.u32 %r1, 1;\n"                    /* s0 */
	                        "\t{\n"                                  /* scope 1 */
	                        "\t.reg .b32 a;\n"
	                        "\tmov.b32 a, %r1;\n"                    /* s1 */
	                        "\t{ .reg .b32 b; mov.b32 b, a; }\n"     /* scope 2, s2 */
	                        "$Linner:\n"
	                        "\tadd.u32 %r1, %r1, 1;\n"               /* s3 */
	                        "\t}\n"
	                        "\t{ }\n"                                /* scope 3: empty */
	                        "L1:\n"
	                        "\t{ .reg .b32 c; }\n"                   /* scope 4: a .reg only */
	                        "\tret;\n");                             /* s4 */
	Module *m = parse_ok(src);
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 5);
	assert_int_equal(f->nscope, 5);
	assert_int_equal(f->scope0, 0);
	assert_int_equal(m->scopes.n, 5);
	assert_scope(m, f, 0, f->body_open, f->body_close, 1, 0, 0, 5);
	assert_int_equal(f->body_open, nth(src, "{", 0, 0));
	assert_int_equal(f->body_close, (uint32_t)(strrchr(src, '}') - src));
	assert_scope(m, f, 1, nth(src, "\t{\n", 0, 1), nth(src, "\t}\n", 0, 1), 2, 0, 1, 3);
	assert_scope(m, f, 2, nth(src, "{ .reg .b32 b", 0, 0), nth(src, "a; }", 0, 3), 3, 1, 2, 1);
	assert_scope(m, f, 3, nth(src, "{ }", 0, 0), nth(src, "{ }", 0, 2), 2, 0, 4, 0);
	assert_scope(m, f, 4, nth(src, "{ .reg .b32 c", 0, 0), nth(src, "c; }", 0, 3), 2, 0, 4, 0);
	/* declarations and labels name their innermost scope */
	assert_int_equal(f->nreg, 3);
	const RegDecl *r = &m->regs.v[f->reg0];
	assert_str(mod_str(m, r[0].name), "a");
	assert_int_equal(r[0].scope, 1);
	assert_str(mod_str(m, r[1].name), "b");
	assert_int_equal(r[1].scope, 2);
	assert_int_equal(r[1].depth, 3);
	assert_str(mod_str(m, r[2].name), "c");
	assert_int_equal(r[2].scope, 4);
	assert_int_equal(f->nlabel, 2);
	assert_str(mod_str(m, m->labels.v[f->label0].name), "$Linner");
	assert_int_equal(m->labels.v[f->label0].scope, 1);
	assert_int_equal(m->labels.v[f->label0 + 1].scope, 0);
	uint32_t sc[5];
	func_stmt_scopes(m, f, sc);
	assert_int_equal(sc[0], 0);
	assert_int_equal(sc[1], 1);
	assert_int_equal(sc[2], 2);
	assert_int_equal(sc[3], 1);
	assert_int_equal(sc[4], 0);
	mod_free(m);
}

/* nvcc's inline asm: each asm statement in its own scope, declaring the
 * same names again; the scopes of a second function are numbered from 0
 * again. */
static void test_ptx__scopes_inline_asm(void **state)
{
	const char *src = HDR ".visible .entry k()\n{\n"
	                      "\t.reg .b32 %r<4>;\n"
	                      "\t// begin inline asm\n"
	                      "\t{\n"
	                      "\t.reg .pred p;\n"
	                      "\tsetp.ne.b32 p, %r1, 0;\n"
	                      "\tselp.u32 %r2, 1, 0, p;\n"
	                      "\t}\n"
	                      "\t// end inline asm\n"
	                      "\t// begin inline asm\n"
	                      "\t{\n"
	                      "\t.reg .pred p;\n"
	                      "\tsetp.eq.b32 p, %r2, 0;\n"
	                      "\t@p mov.b32 %r3, 7;\n"
	                      "\t}\n"
	                      "\t// end inline asm\n"
	                      "\tret;\n"
	                      "}\n"
	                      ".func g()\n{\n\t{ ret; }\n}\n";
	Module *m = parse_ok(src);
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 5);
	assert_int_equal(f->nscope, 3);
	assert_scope(m, f, 1, nth(src, "\t{\n", 0, 1), nth(src, "\t}\n", 0, 1), 2, 0, 0, 2);
	assert_scope(m, f, 2, nth(src, "\t{\n", 1, 1), nth(src, "\t}\n", 1, 1), 2, 0, 2, 2);
	const RegDecl *r = &m->regs.v[f->reg0];
	assert_int_equal(f->nreg, 3);
	assert_int_equal(r[0].scope, 0);
	assert_str(mod_str(m, r[1].name), "p");
	assert_int_equal(r[1].scope, 1);
	assert_str(mod_str(m, r[2].name), "p");
	assert_int_equal(r[2].scope, 2);
	const Func *g = func(m, "g");
	assert_int_equal(g->scope0, f->scope0 + f->nscope);
	assert_int_equal(g->nscope, 2);
	assert_scope(m, g, 1, nth(src, "{ ret; }", 0, 0), nth(src, "{ ret; }", 0, 7), 2, 0, 0, 1);
	mod_free(m);
}

/* Braces in comments, strings, vector operands and initialisers open no
 * scope; a prototype has none. */
static void test_ptx__scopes_ignore_other_braces(void **state)
{
	const char *src = HDR ".func proto(.param .b32 a);\n"
	                      ".visible .entry k()\n{\n"
	                      "\t// { not a scope\n"
	                      "\t/* } nor this { */\n"
	                      "\t.pragma \"{\";\n"
	                      "\t.local .align 4 .b8 x[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
	                      "\tmov.b64 {%r1, %r2}, %rd1;\n"
	                      "\t{\n"
	                      "\tmov.b64 %rd1, {%r1, %r2}; // }\n"
	                      "\t}\n"
	                      "\tret;\n"
	                      "}\n";
	Module *m = parse_ok(src);
	const Func *p = &m->funcs.v[0];
	assert_true(p->flags & FNF_DECL);
	assert_int_equal(p->nscope, 0);
	const Func *f = func(m, "k");
	assert_int_equal(f->nscope, 2);
	assert_scope(m, f, 0, nth(src, "k()\n{", 0, 4), (uint32_t)(strrchr(src, '}') - src), 1, 0,
	             0, 3);
	assert_scope(m, f, 1, nth(src, "\t{\n", 0, 1), nth(src, "\t}\n", 0, 1), 2, 0, 1, 1);
	mod_free(m);
}

static void test_ptx__param_attributes(void **state)
{
	Module *m = parse_ok(HDR ".visible .entry kern(\n"
	                         "\t.param .u64 .ptr .align 16 kern_param_0,\n"
	                         "\t.param .u64 .ptr .global .align 8 kern_param_1,\n"
	                         "\t.param .align 8 .b8 kern_param_2[24],\n"
	                         "\t.param .u32 kern_param_3\n"
	                         ")\n{\n\tret;\n}\n"
	                         ".func empty_params()\n{\n\tret;\n}\n"
	                         ".func noparams\n{\n\tret;\n}\n"
	                         ".func  (.param .b64 func_retval0) helper(\n"
	                         "\t.param .b64 helper_param_0\n)\n.noreturn\n{\n\ttrap;\n}\n"
	                         ".func (.reg .b32 r) regret(.reg .b32 a, .reg .b32 b) { ret; }\n");
	const Func *f = func(m, "kern");
	assert_int_equal(f->kind, FN_ENTRY);
	assert_true(f->flags & FNF_VISIBLE);
	assert_int_equal(f->nparam, 4);
	const Param *p = &m->params.v[f->param0];
	assert_str(mod_str(m, p[0].name), "kern_param_0");
	assert_str(mod_str(m, p[0].type), ".u64");
	assert_int_equal(p[0].align, 16);
	assert_int_equal(p[0].space, 'p');
	assert_str(mod_str(m, p[0].text), ".param .u64 .ptr .align 16 kern_param_0");
	assert_int_equal(p[1].align, 8);
	assert_str(mod_str(m, p[1].name), "kern_param_1");
	assert_int_equal(p[2].array, 24);
	assert_int_equal(p[2].align, 8);
	assert_str(mod_str(m, p[2].type), ".b8");
	assert_int_equal(p[3].align, 0);
	assert_int_equal(p[3].array, 0);
	assert_int_equal(p[3].is_ret, 0);

	f = func(m, "empty_params");
	assert_int_equal(f->kind, FN_FUNC);
	assert_int_equal(f->nparam, 0);
	assert_int_equal(f->nstmt, 1);
	f = func(m, "noparams");
	assert_int_equal(f->nparam, 0);
	f = func(m, "helper");
	assert_true(f->flags & FNF_NORETURN);
	assert_int_equal(f->nparam, 2);
	p = &m->params.v[f->param0];
	assert_int_equal(p[0].is_ret, 1);
	assert_str(mod_str(m, p[0].name), "func_retval0");
	assert_int_equal(p[1].is_ret, 0);
	assert_int_equal(st(m, f, 0)->op, OP_TRAP);
	f = func(m, "regret");
	assert_int_equal(f->nparam, 3);
	p = &m->params.v[f->param0];
	assert_int_equal(p[0].space, 'r');
	assert_int_equal(p[0].is_ret, 1);
	assert_str(mod_str(m, p[2].name), "b");
	mod_free(m);
}

static void test_ptx__perf_directives_and_pragmas(void **state)
{
	Module *m = parse_ok(HDR ".visible .entry a()\n.maxntid 128, 1, 1\n.minnctapersm 2\n.maxnreg 128\n{\n"
	                         "\t.pragma \"nounroll\";\n$L:\n\tbra $L;\n}\n"
	                         ".entry b() .reqntid 32, 1, 1 .pragma \"nounroll\"; { ret; }\n"
	                         ".pragma \"nounroll\";\n");
	const Func *f = func(m, "a");
	assert_int_equal(f->nstmt, 1);
	assert_int_equal(f->nlabel, 1);
	assert_int_equal(m->labels.v[f->label0].stmt, 0);
	assert_str(mod_str(m, f->header), ".visible .entry a()\n.maxntid 128, 1, 1\n.minnctapersm 2\n.maxnreg 128\n");
	f = func(m, "b");
	assert_false(f->flags & FNF_VISIBLE);
	assert_int_equal(f->nstmt, 1);
	assert_int_equal(m->items.v[m->items.n - 1].kind, ITEM_PRAGMA);
	mod_free(m);
}

static void test_ptx__callprototype_calltargets_branchtargets(void **state)
{
	Module *m = parse_ok(ENTRY("$Ltgt:\n"
	                           "\t.branchtargets $L_a, $L_b;\n"
	                           "\tbrx.idx %r1, $Ltgt;\n"
	                           "$L_a:\n\tmov.u32 %r1, 1;\n"
	                           "$L_b:\n"
	                           "\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);\n"
	                           "\tcalltgt : .calltargets helper, other;\n"
	                           "\tcall (%r2), %rd1, (%rd2), prototype_0;\n"
	                           "\tcall %rd1, (), calltgt;\n"
	                           "\texit;\n"));
	const Func *f = func(m, "k");
	assert_int_equal(f->nstmt, 5);
	assert_int_equal(st(m, f, 0)->op, OP_BRX);
	assert_int_equal(st(m, f, 2)->op, OP_CALL);
	assert_int_equal(st(m, f, 2)->nopd, 4);
	assert_str(opd_text(m, st(m, f, 2), 3), "prototype_0");
	assert_int_equal(st(m, f, 4)->op, OP_EXIT);
	assert_int_equal(f->nlabel, 5);
	const Label *l = &m->labels.v[f->label0];
	assert_str(mod_str(m, l[3].name), "prototype_0");
	assert_int_equal(l[3].stmt, 2);
	assert_str(mod_str(m, l[4].name), "calltgt");
	mod_free(m);
}

static void test_ptx__linkage_and_variables(void **state)
{
	Module *m = parse_ok(HDR ".extern .func  (.param .b32 func_retval0) vprintf\n(\n"
	                         "\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n"
	                         ".weak .func  (.param .b32 func_retval0) cudaMalloc(\n"
	                         "\t.param .b64 a\n)\n{\n\tret;\n}\n"
	                         ".global .align 4 .b8 $str[6] = {104, 101, 108, 108, 111, 0};\n"
	                         ".global .align 8 .u64 gtab[2] = {0, 1};\n"
	                         ".const .align 4 .f32 cst = 0f3F800000;\n"
	                         ".const .align 4 .b32 nest[2][2] = {{1, 2}, {3, 4}};\n"
	                         ".shared .align 16 .b8 smem[1024];\n"
	                         ".common .global .align 4 .u32 common_var;\n"
	                         ".extern .shared .align 16 .b8 dyn_smem[];\n"
	                         ".visible .global .align 8 .u64 ptrs[2] = {generic(gtab), gtab+8};\n"
	                         ".global .align 1 .b8 msg[3] = \"hi\";\n");
	assert_int_equal(m->funcs.n, 2);
	const Func *f = &m->funcs.v[0];
	assert_true(f->flags & FNF_EXTERN);
	assert_true(f->flags & FNF_DECL);
	assert_str(mod_str(m, f->name), "vprintf");
	assert_int_equal(f->nparam, 3);
	assert_null(mod_func_find(m, str_of("vprintf", 7)));
	f = func(m, "cudaMalloc");
	assert_true(f->flags & FNF_WEAK);
	assert_false(f->flags & FNF_DECL);
	static const char *const names[] = {"$str", "gtab", "cst", "nest", "smem", "common_var",
	                                    "dyn_smem", "ptrs", "msg"};
	size_t k = 0;
	for (size_t i = 0; i < m->items.n; i++) {
		if (m->items.v[i].kind != ITEM_VAR)
			continue;
		assert_true(k < ARRAY_SIZE(names));
		assert_str(mod_str(m, m->items.v[i].name), names[k]);
		k++;
	}
	assert_int_equal(k, ARRAY_SIZE(names));
	mod_free(m);
}

static void test_ptx__multiple_entries(void **state)
{
	Module *m = parse_ok(HDR ".visible .entry a()\n{\n\tmov.u32 %r1, 0;\n\tret;\n}\n"
	                         ".visible .entry b(.param .u32 p)\n{\n\tld.param.u32 %r1, [p];\n"
	                         "\tadd.s32 %r1, %r1, 1;\n\tret;\n}\n"
	                         ".entry c()\n{\n}\n");
	assert_int_equal(m->funcs.n, 3);
	const Func *a = func(m, "a"), *b = func(m, "b"), *c = func(m, "c");
	assert_int_equal(a->stmt0, 0);
	assert_int_equal(a->nstmt, 2);
	assert_int_equal(b->stmt0, 2);
	assert_int_equal(b->nstmt, 3);
	assert_int_equal(c->nstmt, 0);
	/* numbering restarts per function: s0 of b is ld.param */
	assert_int_equal(st(m, b, 0)->op, OP_LD);
	assert_int_equal(st(m, b, 0)->line, 11);
	assert_int_equal(mod_func_index(m, b), 1);
	assert_int_equal(m->items.v[m->items.n - 1].func, 2);
	mod_free(m);
}

static void test_ptx__golden_constructs_file(void **state)
{
	/* The golden file holds every construct above in one module. */
	const char *top = getenv("D4R_TOP");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/roundtrip/constructs.ptx", top ? top : ".");
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		snprintf(path, sizeof path, "tests/golden/roundtrip/constructs.ptx");
		fp = fopen(path, "rb");
	}
	if (!fp)
		skip();
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = 0;
	Module *m = parse_ok(buf);
	const Func *f = func(m, "kern");
	assert_int_equal(m->nmma, 6);
	assert_true(f->nstmt > 40);
	mod_free(m);
}

/* ---- bad input ------------------------------------------------------------- */

static void test_ptx__error_not_ptx(void **state)
{
	const char *msg = parse_bad("hello world\n", 12);
	assert_located(msg, 1, 1, "does not look like PTX");
	assert_non_null(strstr(msg, "\n    hello world\n    ^"));
	msg = parse_bad("// only a comment\n", 18);
	assert_located(msg, 1, 1, "no '.version'");
}

static void test_ptx__error_empty_file(void **state)
{
	const char *msg = parse_bad("", 0);
	assert_non_null(strstr(msg, "t.ptx: empty file"));
	msg = parse_bad("\n\n  \n", 5);
	assert_non_null(strstr(msg, "t.ptx:1:1: no '.version'"));
}

static void test_ptx__error_cut_off_mid_statement(void **state)
{
	const char *src = ENTRY("\tmov.u32 %r1, 0;\n\tadd.s32 %r1, %r1");
	/* cut just before the closing brace and the statement's end */
	size_t n = strlen(src) - 2;
	const char *msg = parse_bad(src, n);
	assert_located(msg, 7, 18, "unexpected end of file");
	const char *src2 = ENTRY("\tld.global.u32 %r1, [%rd1+");
	msg = parse_bad(src2, strlen(src2) - 2);
	assert_located(msg, 6, 26, "expected a number after '+'");
}

static void test_ptx__error_unbalanced_braces(void **state)
{
	const char *src = HDR ".visible .entry k()\n{\n\t{\n\tret;\n}\n";
	const char *msg = parse_bad(src, strlen(src));
	assert_located(msg, 4, 1, "unterminated function body");
	src = HDR ".visible .entry k()\n{\n\tret;\n}\n}\n";
	msg = parse_bad(src, strlen(src));
	assert_located(msg, 8, 1, "expected a directive");
	src = ENTRY("\tmov.b64 {%r1, %r2, %rd1;\n");
	msg = parse_bad(src, strlen(src));
	assert_located(msg, 6, 25, "expected ',' or '}'");
	src = ENTRY("\tld.u32 %r1, [%rd1;\n");
	msg = parse_bad(src, strlen(src));
	assert_located(msg, 6, 19, "expected ',' or ']'");
}

static void test_ptx__error_binary_garbage(void **state)
{
	unsigned char bin[512];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof bin; i++) {
		x = x * 1103515245u + 12345u;
		bin[i] = (unsigned char)(x >> 16);
	}
	bin[0] = 0x7f, bin[1] = 'E', bin[2] = 'L', bin[3] = 'F', bin[4] = 0;
	const char *msg = parse_bad((const char *)bin, sizeof bin);
	assert_located(msg, 1, 1, "does not look like PTX");
	/* garbage inside a function body, with a NUL byte */
	static const char src[] = ENTRY("\tmov.u32 %r1, 0;\n\t\x01\x00\xff;\n");
	msg = parse_bad(src, sizeof src - 1);
	assert_located(msg, 7, 2, "unexpected character in a function body");
	assert_non_null(strstr(msg, "\n    \t???;\n"));
}

static void test_ptx__error_unterminated_comment_and_string(void **state)
{
	const char *src = ENTRY("\tmov.u32 %r1, 0; /* never closed\n\tret;\n");
	const char *msg = parse_bad(src, strlen(src));
	assert_located(msg, 6, 18, "unterminated comment");
	src = HDR ".file 1 \"abc\n.visible .entry k() { ret; }\n";
	{
		/* a .file line is kept verbatim up to its newline, so this one is
		 * accepted and must round-trip */
		Module *m = parse_ok(src);
		assert_int_equal(m->items.v[3].kind, ITEM_FILE);
		mod_free(m);
	}
	src = ENTRY("\t.pragma \"nounroll;\n\tret;\n");
	msg = parse_bad(src, strlen(src));
	assert_located(msg, 6, 10, "unterminated string");
	src = ENTRY("\tcall.uni f, (\"abc);\n");
	msg = parse_bad(src, strlen(src));
	assert_located(msg, 6, 15, "unterminated string");
}

static void test_ptx__error_misc(void **state)
{
	const char *src = ENTRY("\t;\n");
	assert_located(parse_bad(src, strlen(src)), 6, 2, "empty statement");
	src = ENTRY("\tmov.u32 %r1, 0x12zz;\n");
	assert_located(parse_bad(src, strlen(src)), 6, 15, "malformed number");
	src = ENTRY("\t@ ;\n");
	assert_located(parse_bad(src, strlen(src)), 6, 4, "expected a predicate");
	src = ENTRY("\t@%p1 ;\n");
	assert_located(parse_bad(src, strlen(src)), 6, 7, "expected an instruction");
	src = ENTRY("\tand.pred %p1, %p2, !!%p3;\n"); /* found by fuzz_ptx */
	assert_located(parse_bad(src, strlen(src)), 6, 22, "repeated '!'");
	{
		/* found by fuzz_ptx: a name and '+' at the very end of the file */
		static const char cut[] = HDR ".entry k() { mov.u32 %r1, sym+";
		assert_located(parse_bad(cut, sizeof cut - 1), 4, 31, "expected a number");
	}
	src = ENTRY("\t.reg .b32 %r<;\n");
	assert_located(parse_bad(src, strlen(src)), 6, 15, "expected a register count");
	src = ENTRY("\tmov.u32 %r1 %r2;\n");
	assert_located(parse_bad(src, strlen(src)), 6, 14, "expected ',' or ';'");
	src = HDR ".global .u32 x\n";
	assert_located(parse_bad(src, strlen(src)), 4, 1, "unterminated declaration");
	/* every prefix of a valid module either parses or fails cleanly */
	const char *good = ENTRY("\t@%p1 ld.global.v2.u32 {%r1, _}, [%rd1+-8]; // x\n\tret;\n");
	for (size_t n = 0; n < strlen(good); n++) {
		Err e = ERR_INIT;
		char *copy = malloc(n ? n : 1);
		memcpy(copy, good, n);
		Module *m = ptx_parse("t.ptx", copy, n, &e);
		if (m) {
			StrBuf out = STRBUF_INIT;
			assert_int_equal(ptx_emit(m, NULL, 0, &out, &e), 0);
			assert_int_equal(out.n, n);
			assert_int_equal(ptx_verify(m, &e), 0);
			sb_release(&out);
			mod_free(m);
		} else
			assert_true(e.set && err_msg(&e)[0] == 't');
		err_release(&e);
		free(copy);
	}
}

/*
 * With no edits the emitter copies the file, so a round trip's byte
 * comparison holds whatever the parser recorded; ptx_verify is what checks
 * the model.  Here the model of a parsed statement is corrupted as a
 * misreading parser would leave it, the copy is still byte for byte, and
 * verify must name the statement.  The statement is line 7 (3 header
 * lines, the .entry, '{', the .reg), column 2 (after the tab); its compact
 * rendering is the opcode and the operands with whitespace removed.
 */
static void test_ptx__verify_catches_a_misread_operand(void **state)
{
	(void)state;
	const char *src = ENTRY("\t.reg .b32 %r<20>;\n\tadd.s32 %r12, %r1, %r10;\n\tret;\n");
	Module *m = parse_ok(src);
	const Stmt *s = func_stmt(m, &m->funcs.v[0], 0);
	Operand *d = &m->opds.v[stmt_opd_index(m, s, 0)];
	Operand *c = &m->opds.v[stmt_opd_index(m, s, 2)];
	const Operand *b = &m->opds.v[stmt_opd_index(m, s, 1)];
	assert_int_equal(d->len, 4); /* %r12 */
	assert_int_equal(c->len, 4); /* %r10 */
	Err e = ERR_INIT;
	StrBuf out = STRBUF_INIT;
	/* 1. the destination read one byte short: %r12 as %r1 */
	d->len = 3;
	assert_int_equal(ptx_emit(m, NULL, 0, &out, &e), 0);
	assert_int_equal(out.n, strlen(src));
	assert_memory_equal(out.p, src, out.n); /* the round trip cannot tell */
	assert_int_equal(ptx_verify(m, &e), -1);
	assert_non_null(strstr(err_msg(&e), "t.ptx:7:2: "));
	assert_non_null(strstr(err_msg(&e), "statement s0 re-renders as 'add.s32%r1,%r1,%r10;'"));
	err_release(&e);
	d->len = 4;
	assert_int_equal(ptx_verify(m, &e), 0);
	/* 2. the third operand taken from the second's text: %r10 read as %r1 */
	uint32_t off = c->off;
	c->off = b->off;
	c->len = b->len;
	sb_reset(&out);
	assert_int_equal(ptx_emit(m, NULL, 0, &out, &e), 0);
	assert_memory_equal(out.p, src, strlen(src));
	assert_int_equal(ptx_verify(m, &e), -1);
	assert_non_null(strstr(err_msg(&e), "statement s0 re-renders as 'add.s32%r12,%r1,%r1;'"));
	err_release(&e);
	c->off = off;
	c->len = 4;
	assert_int_equal(ptx_verify(m, &e), 0);
	sb_release(&out);
	err_release(&e);
	mod_free(m);
}

/* ptx_emit_to hands out exactly the bytes ptx_emit builds, edits included,
 * in pieces that concatenate to them. */
static int collect_sink(void *ctx, const char *p, size_t n)
{
	sb_addn(ctx, p, n);
	return 0;
}

static void test_ptx__emit_to_streams_what_emit_builds(void **state)
{
	(void)state;
	static const char src[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
	                          ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n"
	                          "\tmov.u32 %r1, 1;\n\tadd.s32 %r2, %r1, 2;\n\tret;\n}\n";
	Err e = ERR_INIT;
	Module *m = ptx_parse("s.ptx", src, sizeof src - 1, &e);
	assert_non_null(m);
	const Stmt *s1 = &m->stmts.v[1];
	Edit ed[2] = {{s1->off, s1->len, "sub.s32 %r2, %r1, 2;", 20}, {0, 0, "// head\n", 8}};
	StrBuf a = STRBUF_INIT, b = STRBUF_INIT;
	assert_int_equal(ptx_emit(m, ed, 2, &a, &e), 0);
	assert_int_equal(ptx_emit_to(m, ed, 2, collect_sink, &b, &e), 0);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.p, b.p, a.n);
	assert_non_null(strstr(a.p, "// head\n.version 8.0"));
	assert_non_null(strstr(a.p, "\tsub.s32 %r2, %r1, 2;\n\tret;"));
	assert_null(strstr(a.p, "add.s32"));
	sb_release(&a);
	sb_release(&b);
	mod_free(m);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptx__loc_function_name_inlined_at),
		cmocka_unit_test(test_ptx__file_with_timestamps),
		cmocka_unit_test(test_ptx__debug_sections),
		cmocka_unit_test(test_ptx__vector_operands),
		cmocka_unit_test(test_ptx__immediates),
		cmocka_unit_test(test_ptx__addresses),
		cmocka_unit_test(test_ptx__symbol_offsets_pairs_lists_strings),
		cmocka_unit_test(test_ptx__guards),
		cmocka_unit_test(test_ptx__labels),
		cmocka_unit_test(test_ptx__statement_numbering_spans_and_lines),
		cmocka_unit_test(test_ptx__dotted_opcodes),
		cmocka_unit_test(test_ptx__mma_family),
		cmocka_unit_test(test_ptx__texture_and_surface),
		cmocka_unit_test(test_ptx__reg_declarations),
		cmocka_unit_test(test_ptx__inline_asm_scopes),
		cmocka_unit_test(test_ptx__lex_tokens),
		cmocka_unit_test(test_ptx__lex_scanners),
		cmocka_unit_test(test_ptx__normalized_text),
		cmocka_unit_test(test_ptx__scopes_nested),
		cmocka_unit_test(test_ptx__scopes_inline_asm),
		cmocka_unit_test(test_ptx__scopes_ignore_other_braces),
		cmocka_unit_test(test_ptx__param_attributes),
		cmocka_unit_test(test_ptx__perf_directives_and_pragmas),
		cmocka_unit_test(test_ptx__callprototype_calltargets_branchtargets),
		cmocka_unit_test(test_ptx__linkage_and_variables),
		cmocka_unit_test(test_ptx__multiple_entries),
		cmocka_unit_test(test_ptx__golden_constructs_file),
		cmocka_unit_test(test_ptx__error_not_ptx),
		cmocka_unit_test(test_ptx__error_empty_file),
		cmocka_unit_test(test_ptx__error_cut_off_mid_statement),
		cmocka_unit_test(test_ptx__error_unbalanced_braces),
		cmocka_unit_test(test_ptx__error_binary_garbage),
		cmocka_unit_test(test_ptx__error_unterminated_comment_and_string),
		cmocka_unit_test(test_ptx__error_misc),
		cmocka_unit_test(test_ptx__emit_to_streams_what_emit_builds),
		cmocka_unit_test(test_ptx__verify_catches_a_misread_operand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
