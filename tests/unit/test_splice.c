/*
 * test_splice.c - recipes, templates and the splicer, on small modules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/file.h"
#include "base/sha256.h"
#include "ptx/parse.h"
#include "splice/locate.h"
#include "splice/recipe.h"
#include "splice/splice.h"
#include "splice/template.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAD ".version 8.7\n.target sm_89\n.address_size 64\n"

/* A kernel with two phases, nvcc-style names, a second .reg line for %r, a
 * nested inline-asm scope with names without '%', and names that already
 * use the first fresh prefix. */
static const char K[] =
	HEAD
	".visible .entry k(.param .u64 k_p0)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<30>;\n"
	"\t.reg .b32 %r100, %r101;\n"
	"\t.reg .b64 %rd<4>;\n"
	"\t.reg .b32 %spl0_x;\n"
	"\tld.param.u64 %rd1, [k_p0];\n"
	"\tld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"
	"\tld.global.v2.u32 {%r5, %r6}, [%rd1+16];\n"
	"\tmov.b32 %r7, 0;\n"
	"\tmov.b32 %spl0_x, 1;\n"
	"\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r8, %r9}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r7, %r7};\n"
	"\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r100, %r101}, {%r1, %r2, %r3, %r4}, {%r6, %r5}, {%r8, %r9};\n"
	"\t{\n"
	"\t.reg .b32 lo;\n"
	"\tadd.s32 lo, %r100, %r101;\n"
	"\tmov.b32 %r10, lo;\n"
	"\t}\n"
	"\tst.global.v4.u32 [%rd1], {%r100, %r101, %r10, %spl0_x};\n"
	"\tret;\n"
	"}\n";

typedef struct {
	Module *m;
	Recipe r;
	SpliceResult res;
	Err e;
} Fx;

static char *sha_of(const Module *m, uint32_t first, uint32_t last)
{
	StrBuf sb = STRBUF_INIT;
	const Func *f = mod_func_find(m, str_c("k"));
	splice_cut_text(m, f, first, last, &sb);
	char *hex = xmalloc(65);
	sha256_hex(sb.p ? sb.p : "", sb.n, hex);
	sb_release(&sb);
	return hex;
}

/* recipe_fmt holds one %s, for the sha256 of the cut. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void fx_init_src(Fx *x, const char *src, const char *recipe_fmt, uint32_t first,
                        uint32_t last)
{
	memset(x, 0, sizeof(*x));
	x->m = ptx_parse("k.ptx", src, strlen(src), &x->e);
	assert_non_null(x->m);
	char *hex = sha_of(x->m, first, last);
	char buf[4096];
	snprintf(buf, sizeof buf, recipe_fmt, hex);
	free(hex);
	if (rcp_parse("r.json", buf, strlen(buf), &x->r, &x->e) < 0)
		fail_msg("recipe: %s", err_msg(&x->e));
}
#pragma GCC diagnostic pop

static void fx_init(Fx *x, const char *recipe_fmt, uint32_t first, uint32_t last)
{
	fx_init_src(x, K, recipe_fmt, first, last);
}

static void fx_free(Fx *x)
{
	splice_result_release(&x->res);
	rcp_release(&x->r);
	mod_free(x->m);
	err_release(&x->e);
}

/*
 * Every byte of `in` outside the statements s`first`..s`last` of k is in the
 * output, in place: the output begins with the bytes before the cut's first
 * statement and ends with those after its last one's ';'.  The span comes
 * from a parse of `in` made here, not from the region the splicer reports,
 * so a splicer that also swallows a byte beside the cut fails this check.
 */
static void assert_outside_unchanged(const SpliceResult *res, const char *in, size_t n,
                                     uint32_t first, uint32_t last)
{
	Err e = ERR_INIT;
	Module *m = ptx_parse("orig.ptx", in, n, &e);
	assert_non_null(m);
	const Func *f = mod_func_find(m, str_c("k"));
	assert_non_null(f);
	assert_true(first <= last && last < f->nstmt);
	const Stmt *s0 = func_stmt(m, f, first), *s1 = func_stmt(m, f, last);
	size_t pre = s0->off, suf = n - (s1->off + s1->len);
	mod_free(m);
	err_release(&e);
	assert_true(pre + suf <= res->text.n);
	assert_memory_equal(res->text.p, in, pre);
	assert_memory_equal(res->text.p + res->text.n - suf, in + n - suf, suf);
}

/* ---- templates ------------------------------------------------------------ */

static const char TPL[] =
	"// a template\n"
	"//! in    .b32 a b[2]\n"
	"//! in    .b64 base\n"
	"//! inout .v2.b32 acc\n"
	"//! out   .b32 d\n"
	"//! param OFF K\n"
	"//! reads global shared\n"
	"//! writes none\n"
	"//! barriers 0\n"
	"//! note anything\n"
	"\t.reg .b32 %t<4>;\n"
	"\t.reg .pred %q;\n"
	"\tld.global.u32 %t0, [%{base}+${OFF*2+4}];\t// at ${OFF}\n"
	"\tmov.u32 %t1, %tid.x;\n"
	"\tadd.s32 %{d}, %{b[1]}, %t0;\t/* %{a} untouched in comments */\n"
	"\tsetp.eq.s32 %q, %{a}, ${-K};\n";

static void test_splice__template_header(void **state)
{
	(void)state;
	Template t;
	Err e = ERR_INIT;
	if (tpl_parse("t.ptx", TPL, strlen(TPL), &t, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_int_equal(t.formals.n, 5);
	const Formal *b = tpl_formal(&t, "b", 1);
	assert_non_null(b);
	assert_int_equal(b->count, 2);
	assert_int_equal(b->dir, FM_IN);
	assert_int_equal(b->bits, 32);
	const Formal *acc = tpl_formal(&t, "acc", 3);
	assert_int_equal(acc->vec, 2);
	assert_int_equal(acc->dir, FM_INOUT);
	assert_string_equal(acc->type, ".b32");
	assert_int_equal(tpl_formal(&t, "base", 4)->bits, 64);
	assert_int_equal(t.params.n, 2);
	assert_true(t.reads & (1u << SP_GLOBAL));
	assert_true(t.reads & (1u << SP_SHARED));
	assert_int_equal(t.writes, 0);
	assert_int_equal(t.barriers, 0);
	assert_int_equal(t.locals.n, 2);
	assert_string_equal(t.locals.v[0].name, "%t");
	assert_int_equal(t.locals.v[0].count, 4);
	assert_int_equal(t.nlines, 16);
	tpl_release(&t);
	err_release(&e);
}

static void expect_tpl_error(const char *text, const char *msg)
{
	Template t;
	Err e = ERR_INIT;
	assert_int_equal(tpl_parse("t.ptx", text, strlen(text), &t, &e), -1);
	if (!strstr(err_msg(&e), msg))
		fail_msg("expected '%s' in '%s'", msg, err_msg(&e));
	err_release(&e);
}

static void test_splice__template_bad_header(void **state)
{
	(void)state;
	expect_tpl_error("//! in .b32 a\n//! frobnicate x\n",
	                 "t.ptx:2:5: unknown header directive 'frobnicate'");
	expect_tpl_error("//! in b32 a\n", "t.ptx:1:8: 'b32': expected a register type");
	expect_tpl_error("//! in .b32 a a\n", "formal 'a' declared twice");
	expect_tpl_error("//! out .b32 d[0]\n", "bad list length");
	expect_tpl_error("//! reads texture\n", "'texture': expected a state space");
	expect_tpl_error("//! in .b32 a\n\t.reg .b32 %a;\n",
	                 "t.ptx:2:12: local '%a' has the name of a formal");
	expect_tpl_error("\t.reg .b32 x;\n", "template locals are %names");
}

static void test_splice__render(void **state)
{
	(void)state;
	Template t;
	Err e = ERR_INIT;
	assert_int_equal(tpl_parse("t.ptx", TPL, strlen(TPL), &t, &e), 0);
	const char *rj = "{\"cut\": {\"stmts\": [0, 0]}, \"template\": \"t.ptx\","
	                 " \"params\": {\"OFF\": 10, \"K\": 3},"
	                 " \"bind\": {\"a\": \"%r1\", \"b\": [\"%r2\", \"%r3\"], \"base\": \"%rd1\","
	                 " \"acc\": \"%v1\", \"d\": \"%r4\"},"
	                 " \"guards\": {\"sha256\": \"" "0000000000000000000000000000000000000000000000000000000000000000" "\"}}";
	Recipe r;
	if (rcp_parse("r.json", rj, strlen(rj), &r, &e) < 0)
		fail_msg("%s", err_msg(&e));
	StrBuf out = STRBUF_INIT;
	if (tpl_render(&t, &r, "%spl3_", &out, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_non_null(strstr(out.p, "\t.reg .b32 %spl3_t<4>;\n\t.reg .pred %spl3_q;\n"));
	assert_non_null(strstr(out.p, "ld.global.u32 %spl3_t0, [%rd1+24];\t// at 10\n"));
	assert_non_null(strstr(out.p, "mov.u32 %spl3_t1, %tid.x;"));
	assert_non_null(strstr(out.p, "add.s32 %r4, %r3, %spl3_t0;\t/* %{a} untouched in comments */"));
	assert_non_null(strstr(out.p, "setp.eq.s32 %spl3_q, %r1, -3;"));
	assert_non_null(strstr(out.p, "//! in    .b32 a b[2]\n")); /* header kept as written */
	/* same number of lines: the line map relies on it */
	size_t nl = 0;
	for (size_t i = 0; i < out.n; i++)
		nl += out.p[i] == '\n';
	assert_int_equal(nl, t.nlines);
	sb_release(&out);

	/* a register that is neither local, formal nor special: the template
	 * alone says so, before any recipe */
	Template t2;
	const char *bad = "//! out .b32 d\n\tmov.b32 %{d}, 0;\n\tmov.b32 %{d}, %r9;\n";
	assert_int_equal(tpl_parse("u.ptx", bad, strlen(bad), &t2, &e), -1);
	assert_non_null(strstr(err_msg(&e),
	                       "u.ptx:3:16: register '%r9' is neither a template local"));
	/* an index past the list, an undeclared parameter */
	const char *bad2 = "//! in .b32 b[2]\n\tmov.b32 %{b[2]}, 0;\n";
	assert_int_equal(tpl_parse("v.ptx", bad2, strlen(bad2), &t2, &e), -1);
	assert_non_null(
	    strstr(err_msg(&e), "v.ptx:2:10: '%{b[2]}': formal 'b' is a list of 2"));
	const char *bad3 = "//! in .b32 a\n\tadd.s32 %{a}, %{a}, ${NOPE};\n";
	assert_int_equal(tpl_parse("w.ptx", bad3, strlen(bad3), &t2, &e), -1);
	assert_non_null(
	    strstr(err_msg(&e), "w.ptx:2:24: parameter 'NOPE' is not declared"));
	sb_release(&out);
	rcp_release(&r);
	tpl_release(&t);
	err_release(&e);
}

static void test_splice__type_compatible(void **state)
{
	(void)state;
	assert_true(ptx_type_compatible(str_c(".b32"), str_c(".u32")));
	assert_true(ptx_type_compatible(str_c(".f32"), str_c(".b32")));
	assert_true(ptx_type_compatible(str_c(".u32"), str_c(".s32")));
	assert_false(ptx_type_compatible(str_c(".f32"), str_c(".u32")));
	assert_false(ptx_type_compatible(str_c(".b32"), str_c(".b64")));
	assert_false(ptx_type_compatible(str_c(".pred"), str_c(".b32")));
	assert_true(ptx_type_compatible(str_c(".pred"), str_c(".pred")));
	assert_true(ptx_type_compatible(str_c(".f16x2"), str_c(".b32")));
	assert_int_equal(ptx_type_bits(".b128", 5), 128);
	assert_true(ptx_special_reg("%tid.x", 6));
	assert_true(ptx_special_reg("%clock64", 8));
	assert_false(ptx_special_reg("%tidy", 5));
}

/* ---- recipes ------------------------------------------------------------- */

static void expect_recipe_error(const char *json, const char *msg)
{
	Recipe r;
	Err e = ERR_INIT;
	assert_int_equal(rcp_parse("r.json", json, strlen(json), &r, &e), -1);
	if (!strstr(err_msg(&e), msg))
		fail_msg("expected '%s' in '%s'", msg, err_msg(&e));
	err_release(&e);
}

#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"

static void test_splice__recipe_parse(void **state)
{
	(void)state;
	const char *j = "{\"layer\": \"enc4\", \"module\": \"enc4/enc4.ptx\", \"entry\": \"k\","
	                " \"cut\": {\"phase\": 8, \"with_epilogue\": true},"
	                " \"template\": \"enc4/phase-08.ptx\", \"params\": {\"W\": -16},"
	                " \"bind\": {\"a\": \"%r1\", \"d\": [\"%r2\", \"%r3\"]},"
	                " \"guards\": {\"mma\": 24, \"sha256\": \"" Z64 "\", \"first\": \"^mma\","
	                " \"last\": \"mma\"}, \"interface\": {\"x\": 1}, \"note\": \"hi\"}";
	Recipe r;
	Err e = ERR_INIT;
	if (rcp_parse("r.json", j, strlen(j), &r, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_string_equal(r.layer, "enc4");
	assert_string_equal(r.module, "enc4/enc4.ptx");
	assert_int_equal(r.cut, CUT_PHASE);
	assert_int_equal(r.phase, 8);
	assert_true(r.with_epilogue);
	assert_int_equal(r.tkind, TPL_FILE);
	assert_int_equal(rcp_param_find(&r, "W", 1)->value, -16);
	const RecipeBind *b = rcp_bind_find(&r, "d");
	assert_true(b->list);
	assert_int_equal(b->nregs, 2);
	assert_string_equal(b->regs[1], "%r3");
	assert_true(r.has_mma);
	assert_int_equal(r.mma, 24);
	rcp_release(&r);
	err_release(&e);

	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"identity\", \"guards\": "
	                    "{\"sha256\": \"" Z64 "\"}, \"memory\": 1}",
	                    "r.json: unknown key 'memory' (expected one of 'layer', 'module', "
	                    "'entry', 'cut', 'template', 'params', 'bind', 'guards', 'interface', "
	                    "'note')");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"identity\", \"guards\": "
	                    "{\"sha\": \"x\"}}",
	                    "r.json: guards: unknown key 'sha' (expected one of 'mma', 'sha256', "
	                    "'first', 'last', 'reloads')");
	expect_recipe_error("{\"cut\": {\"stmts\": [5, 2]}, \"template\": \"identity\", \"guards\": "
	                    "{\"sha256\": \"" Z64 "\"}}", "r.json: cut.stmts: first 5 is after last 2");
	expect_recipe_error("{\"cut\": {\"phase\": 0}, \"template\": \"identity\"}",
	                    "r.json: cut.phase: 0 is out of range [1, 1000000000]");
	expect_recipe_error("{\"template\": \"identity\"}", "r.json: missing key 'cut'");
	expect_recipe_error("{\"cut\": {\"phase\": 1}}", "r.json: missing key 'template'");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"t\", \"params\": {\"X\": 1.5},"
	                    " \"guards\": {\"sha256\": \"" Z64 "\"}}",
	                    "r.json: params.X: expected an integer, found 1.5");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"t\", \"bind\": {\"a\": 3},"
	                    " \"guards\": {\"sha256\": \"" Z64 "\"}}", "r.json: bind.a: expected a register name or a non-empty list of them, found a number");
	expect_recipe_error("[1]", "r.json: expected an object, found an array");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"identity\", \"guards\": "
	                    "{\"sha256\": \"" Z64 "\", \"mma\": 1, \"mma\": 2}}",
	                    "r.json: guards: key 'mma' given twice");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"identity\"}",
	                    "r.json: guards: missing key 'sha256' (every recipe pins");
	expect_recipe_error("{\"cut\": {\"stmts\": [1, 2], \"with_epilogue\": true}, "
	                    "\"template\": \"identity\"}",
	                    "r.json: cut.with_epilogue: only goes with 'phase'");
	expect_recipe_error("{\"cut\": {\"stmts\": [1, -2]}, \"template\": \"identity\"}",
	                    "r.json: cut.stmts[1]: -2 is out of range [0, 4000000000]");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"t\", \"bind\": "
	                    "{\"d\": [\"%r1\", 2]}, \"guards\": {\"sha256\": \"" Z64 "\"}}",
	                    "r.json: bind.d[1]: expected a register name, found a number");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"identity\", \"bind\": "
	                    "{\"d\": \"%r1\"}, \"guards\": {\"sha256\": \"" Z64 "\"}}",
	                    "r.json: bind: the built-in 'identity' template takes none");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"\"}",
	                    "r.json: template: empty string");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"t\", \"guards\": "
	                    "{\"sha256\": \"abc\"}}",
	                    "r.json: guards.sha256: expected 64 hex digits");
	expect_recipe_error("{\"cut\": {\"phase\": 1}, \"template\": \"identity\", \"guards\": "
	                    "{\"sha256\": \"" Z64 "\"}}\n{}",
	                    "r.json:2:1: text after the JSON document");
	expect_recipe_error("{\"cut\": {\"phase\": 1},\n \"template\" 1}",
	                    "r.json:2:13: invalid JSON");
}

/* ---- locating the module ------------------------------------------------- */

/* A stand-in for the manifest's reader: layer "t" names t/t.ptx in /corpus
 * and entry "k"; layer "broken" has a mistake.  Counts its calls. */
static int manifest_reads;
static int stub_manifest(const char *layer, const char *corpus_opt, LayoutLayer *out, Err *e)
{
	(void)corpus_opt;
	manifest_reads++;
	memset(out, 0, sizeof(*out));
	if (!strcmp(layer, "broken"))
		return err_set(e, "recipes/broken/layer.json: launches: expected a non-empty array");
	out->manifest = xstrdup("/repo/recipes/t/layer.json");
	out->corpus = xstrdup("/corpus");
	out->module = xstrdup("t/t.ptx");
	out->entry = xstrdup("k");
	return 0;
}

static void test_splice__locate_options_recipe_manifest(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	Located l;
	Recipe r;
	const char *j = "{\"layer\": \"t\", \"module\": \"enc4/enc4.ptx\", \"cut\": {\"phase\": 1},"
	                " \"template\": \"identity\", \"guards\": {\"sha256\": \"" Z64 "\"}}";
	assert_int_equal(rcp_parse("/tmp/r.json", j, strlen(j), &r, &e), 0);
	/* options first: the manifest is not read */
	manifest_reads = 0;
	assert_int_equal(splice_locate("t", NULL, "m.ptx", "e", &r, stub_manifest, &l, &e), 0);
	assert_string_equal(l.module_path, "m.ptx");
	assert_null(l.module_rel);
	assert_string_equal(l.entry, "e");
	assert_int_equal(manifest_reads, 0);
	located_release(&l);
	/* the recipe's module, in the corpus folder; the entry from the manifest */
	assert_int_equal(splice_locate(NULL, "/tmp", NULL, NULL, &r, stub_manifest, &l, &e), 0);
	assert_string_equal(l.layer, "t");
	assert_string_equal(l.module_path, "/tmp/enc4/enc4.ptx");
	assert_string_equal(l.module_rel, "enc4/enc4.ptx");
	assert_string_equal(l.entry, "k");
	assert_int_equal(manifest_reads, 1);
	located_release(&l);
	/* no module anywhere but the manifest: one read gives module and entry */
	manifest_reads = 0;
	assert_int_equal(splice_locate("t", NULL, NULL, NULL, NULL, stub_manifest, &l, &e), 0);
	assert_string_equal(l.module_path, "/corpus/t/t.ptx");
	assert_string_equal(l.module_rel, "t/t.ptx");
	assert_string_equal(l.entry, "k");
	assert_int_equal(manifest_reads, 1);
	located_release(&l);
	/* a manifest with a mistake is refused where it is needed, with its message */
	assert_int_equal(splice_locate("broken", NULL, NULL, NULL, NULL, stub_manifest, &l, &e), -1);
	assert_string_equal(err_msg(&e), "recipes/broken/layer.json: launches: expected a non-empty "
	                                 "array");
	assert_null(l.module_path);
	assert_int_equal(splice_locate("t", NULL, NULL, "e", NULL, NULL, &l, &e), -1);
	assert_string_equal(err_msg(&e), "layer 't': no manifest to read its module and entry from");
	assert_int_equal(splice_locate(NULL, NULL, NULL, NULL, NULL, stub_manifest, &l, &e), -1);
	assert_non_null(strstr(err_msg(&e), "no module: give a layer, --module"));
	rcp_release(&r);
	err_release(&e);
}

/* ---- the splicer ----------------------------------------------------------- */

static void test_splice__identity_fresh_prefix(void **state)
{
	(void)state;
	Fx x;
	/* s5..s6: the two mma; %r8/%r9 are temporaries (used only by s5) */
	fx_init(&x, "{\"entry\": \"k\", \"cut\": {\"stmts\": [5, 6]}, \"template\": \"identity\","
	            " \"guards\": {\"mma\": 2, \"sha256\": \"%s\"}}", 5, 6);
	SpliceRequest req = {x.m, NULL, &x.r, NULL, false};
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	/* %spl0_ occurs in the module: the next prefix is taken */
	assert_string_equal(x.res.prefix, "%spl1_");
	assert_int_equal(x.res.n_renamed, 2);
	assert_int_equal(x.res.mma, 2);
	assert_non_null(strstr(x.res.text.p, "\t.reg .b32 %spl1_r8, %spl1_r9;\n"));
	assert_non_null(strstr(x.res.text.p, "{%spl1_r8, %spl1_r9}, {%r1, %r2, %r3, %r4}, {%r5, %r6}"));
	assert_non_null(strstr(x.res.text.p, "{%r100, %r101}, {%r1, %r2, %r3, %r4}, {%r6, %r5}, {%spl1_r8, %spl1_r9};"));
	assert_outside_unchanged(&x.res, K, strlen(K), 5, 6);
	/* the output parses */
	Err e = ERR_INIT;
	Module *m2 = ptx_parse("out.ptx", x.res.text.p, x.res.text.n, &e);
	assert_non_null(m2);
	mod_free(m2);
	err_release(&e);
	/* the line map: the first line is generated, the mma lines are the module's */
	StrBuf w = STRBUF_INIT;
	splice_where(&x.res, "k.ptx", x.res.region_line, &w);
	assert_non_null(strstr(w.p, "generated"));
	sb_reset(&w);
	splice_where(&x.res, "k.ptx", x.res.region_line + 2, &w);
	assert_string_equal(w.p, "k.ptx:16 (in the cut, identity)");
	sb_reset(&w);
	splice_where(&x.res, "k.ptx", 3, &w);
	assert_string_equal(w.p, "k.ptx:3");
	sb_reset(&w);
	/* after the region: the input's line (the region added 2 lines) */
	splice_where(&x.res, "k.ptx", x.res.region_line + (uint32_t)x.res.line_map.n + 1, &w);
	assert_string_equal(w.p, "k.ptx:19");
	sb_release(&w);
	fx_free(&x);
}

/* A .func whose .reg parameter starts with the first fresh prefix: the cut
 * s0..s1 reads it (live-in) and has one temporary, %r1, which identity
 * renames; under %spl0_ the rename would be the parameter's name, and the
 * new declaration in the splice's scope would hide the parameter from s1. */
static const char FUNC_REG_PARAM[] =
	HEAD ".visible .func (.reg .b32 %out) k(.reg .b32 %spl0_r1)\n{\n"
	"\t.reg .b32 %r<4>;\n"
	"\tadd.s32 %r1, %spl0_r1, 1;\n"
	"\tmul.lo.s32 %r2, %r1, %spl0_r1;\n"
	"\tmov.b32 %out, %r2;\n"
	"\tret;\n}\n";

static void test_splice__fresh_prefix_avoids_reg_parameters(void **state)
{
	(void)state;
	Fx x;
	fx_init_src(&x, FUNC_REG_PARAM,
	            "{\"entry\": \"k\", \"cut\": {\"stmts\": [0, 1]}, \"template\": \"identity\","
	            " \"guards\": {\"sha256\": \"%s\"}}",
	            0, 1);
	SpliceRequest req = {x.m, NULL, &x.r, NULL, false};
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	assert_string_equal(x.res.prefix, "%spl1_");
	assert_int_equal(x.res.n_renamed, 1);
	assert_non_null(strstr(x.res.text.p, "\t.reg .b32 %spl1_r1;\n"));
	assert_non_null(strstr(x.res.text.p, "add.s32 %spl1_r1, %spl0_r1, 1;"));
	assert_non_null(strstr(x.res.text.p, "mul.lo.s32 %r2, %spl1_r1, %spl0_r1;"));
	assert_outside_unchanged(&x.res, FUNC_REG_PARAM, strlen(FUNC_REG_PARAM), 0, 1);
	fx_free(&x);
}

static void test_splice__scope_names_without_percent(void **state)
{
	(void)state;
	Fx x;
	/* s7..s8: the statements of the inline-asm scope (declares 'lo') */
	fx_init(&x, "{\"entry\": \"k\", \"cut\": {\"stmts\": [7, 8]}, \"template\": \"perturb\","
	            " \"guards\": {\"sha256\": \"%s\"}}", 7, 8);
	SpliceRequest req = {x.m, NULL, &x.r, NULL, false};
	assert_int_equal(splice_run(&req, &x.res, &x.e), -1);
	assert_non_null(strstr(err_msg(&x.e), "perturb: the cut s7..s8 holds no mma statement"));
	fx_free(&x);
	fx_init(&x, "{\"entry\": \"k\", \"cut\": {\"stmts\": [7, 8]}, \"template\": \"identity\","
	            " \"guards\": {\"sha256\": \"%s\"}}", 7, 8);
	req.recipe = &x.r;
	req.module = x.m;
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	/* 'lo' is declared in the enclosing scope, outside the cut: a temporary
	 * of the cut like any other, renamed to a %name in the splice's scope */
	assert_non_null(strstr(x.res.text.p, "\t.reg .b32 %spl1_lo;\n\tadd.s32 \t%spl1_lo, %r100, %r101;") ||
	                strstr(x.res.text.p, "\t.reg .b32 %spl1_lo;\n\tadd.s32 %spl1_lo, %r100, %r101;"));
	assert_non_null(strstr(x.res.text.p, "mov.b32 %r10, %spl1_lo;"));
	assert_outside_unchanged(&x.res, K, strlen(K), 7, 8);
	fx_free(&x);
	/* the whole scope inside the cut: 'lo' travels with the text */
	fx_init(&x, "{\"entry\": \"k\", \"cut\": {\"stmts\": [6, 9]}, \"template\": \"identity\","
	            " \"guards\": {\"sha256\": \"%s\"}}", 6, 9);
	req.recipe = &x.r;
	req.module = x.m;
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	assert_non_null(strstr(x.res.text.p, "\t.reg .b32 lo;\n\tadd.s32 lo, %spl1_r100, %spl1_r101;"));
	assert_outside_unchanged(&x.res, K, strlen(K), 6, 9);
	fx_free(&x);
	/* from inside the scope to outside it: refused */
	fx_init(&x, "{\"entry\": \"k\", \"cut\": {\"stmts\": [8, 9]}, \"template\": \"identity\","
	            " \"guards\": {\"sha256\": \"%s\"}}", 8, 9);
	req.recipe = &x.r;
	req.module = x.m;
	assert_int_equal(splice_run(&req, &x.res, &x.e), -1);
	assert_non_null(strstr(err_msg(&x.e), "the cut s8..s9 crosses a '{ }' scope boundary (line 22)"));
	fx_free(&x);
}

static void test_splice__perturb(void **state)
{
	(void)state;
	Fx x;
	fx_init(&x, "{\"entry\": \"k\", \"cut\": {\"stmts\": [5, 6]}, \"template\": \"perturb\","
	            " \"guards\": {\"sha256\": \"%s\"}}", 5, 6);
	SpliceRequest req = {x.m, NULL, &x.r, NULL, false};
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	assert_non_null(strstr(x.res.text.p, "mov.b32 %spl1_one, 0x3C003C00; add.rn.f16x2 %spl1_r8, "
	                                     "%spl1_r8, %spl1_one; }  // d4r-splice: perturb"));
	fx_free(&x);
}

static char *write_tmp(const char *dir, const char *name, const char *text)
{
	char *p = xmalloc(strlen(dir) + strlen(name) + 2);
	sprintf(p, "%s/%s", dir, name);
	Err e = ERR_INIT;
	assert_int_equal(write_file_atomic(p, text, strlen(text), &e), 0);
	err_release(&e);
	return p;
}

static void test_splice__template_checks(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-test-splice-XXXXXX";
	assert_non_null(mkdtemp(dir));
	/* s5..s6: live-in %r1..%r7, live-out %r100 %r101 */
	char *tp = write_tmp(dir, "t.ptx",
	                     "//! in .b32 a[4] b0 b1 c\n"
	                     "//! out .b32 d0 d1\n"
	                     "//! reads none\n//! writes none\n"
	                     "\t.reg .b32 %x<2>;\n"
	                     "\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%x0, %x1}, {%{a[0]}, %{a[1]}, %{a[2]}, %{a[3]}}, {%{b0}, %{b1}}, {%{c}, %{c}};\n"
	                     "\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%{d0}, %{d1}}, {%{a[0]}, %{a[1]}, %{a[2]}, %{a[3]}}, {%{b1}, %{b0}}, {%x0, %x1};\n");
	char fmt[2048];
	snprintf(fmt, sizeof fmt,
	         "{\"entry\": \"k\", \"cut\": {\"stmts\": [5, 6]}, \"template\": \"%s\", \"bind\": "
	         "{\"a\": [\"%%%%r1\", \"%%%%r2\", \"%%%%r3\", \"%%%%r4\"], \"b0\": \"%%%%r5\", \"b1\": "
	         "\"%%%%r6\", \"c\": \"%%%%r7\", \"d0\": \"%%%%r100\", \"d1\": \"%%%%r101\"}, "
	         "\"guards\": {\"sha256\": \"%%s\"}}", "t.ptx");
	Fx x;
	fx_init(&x, fmt, 5, 6);
	SpliceRequest req = {x.m, NULL, &x.r, dir, false}; /* the template in --ptx DIR */
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	assert_non_null(strstr(x.res.text.p, "{%spl1_x0, %spl1_x1}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r7, %r7};"));
	assert_outside_unchanged(&x.res, K, strlen(K), 5, 6);
	StrBuf w = STRBUF_INIT;
	splice_where(&x.res, "k.ptx", x.res.region_line + 6, &w);
	char want[300];
	snprintf(want, sizeof want, "template ptx/t.ptx:6");
	assert_string_equal(w.p, want);
	sb_release(&w);
	fx_free(&x);

	/* unbound live-out: d1 bound to a register that is not the live one */
	char fmt2[2048];
	snprintf(fmt2, sizeof fmt2,
	         "{\"entry\": \"k\", \"cut\": {\"stmts\": [5, 6]}, \"template\": \"%s\", \"bind\": "
	         "{\"a\": [\"%%%%r1\", \"%%%%r2\", \"%%%%r3\", \"%%%%r4\"], \"b0\": \"%%%%r5\", \"b1\": "
	         "\"%%%%r6\", \"c\": \"%%%%r7\", \"d0\": \"%%%%r100\", \"d1\": \"%%%%r11\"}, "
	         "\"guards\": {\"sha256\": \"%%s\"}}", "t.ptx");
	fx_init(&x, fmt2, 5, 6);
	req.module = x.m;
	req.recipe = &x.r;
	assert_int_equal(splice_run(&req, &x.res, &x.e), -1);
	if (!strstr(err_msg(&x.e), "live-out '%r101' (first used at s7, line 20) is not bound to any "
	                           "output of the template"))
		fail_msg("%s", err_msg(&x.e));
	fx_free(&x);

	/* an input with no definition before the cut */
	snprintf(fmt2, sizeof fmt2,
	         "{\"entry\": \"k\", \"cut\": {\"stmts\": [5, 6]}, \"template\": \"%s\", \"bind\": "
	         "{\"a\": [\"%%%%r1\", \"%%%%r2\", \"%%%%r3\", \"%%%%r4\"], \"b0\": \"%%%%r5\", \"b1\": "
	         "\"%%%%r6\", \"c\": \"%%%%r10\", \"d0\": \"%%%%r100\", \"d1\": \"%%%%r101\"}, "
	         "\"guards\": {\"sha256\": \"%%s\"}}", "t.ptx");
	fx_init(&x, fmt2, 5, 6);
	req.module = x.m;
	req.recipe = &x.r;
	assert_int_equal(splice_run(&req, &x.res, &x.e), -1);
	assert_non_null(strstr(err_msg(&x.e), "'bind.c': input '%r10' has no definition before the cut"));
	fx_free(&x);

	/* a list formal bound to a scalar */
	snprintf(fmt2, sizeof fmt2,
	         "{\"entry\": \"k\", \"cut\": {\"stmts\": [5, 6]}, \"template\": \"%s\", \"bind\": "
	         "{\"a\": \"%%%%r1\", \"b0\": \"%%%%r5\", \"b1\": "
	         "\"%%%%r6\", \"c\": \"%%%%r7\", \"d0\": \"%%%%r100\", \"d1\": \"%%%%r101\"}, "
	         "\"guards\": {\"sha256\": \"%%s\"}}", "t.ptx");
	fx_init(&x, fmt2, 5, 6);
	req.module = x.m;
	req.recipe = &x.r;
	assert_int_equal(splice_run(&req, &x.res, &x.e), -1);
	assert_non_null(strstr(err_msg(&x.e), "'bind.a': the formal is a list of 4 registers, the binding gives 1"));
	fx_free(&x);

	unlink(tp);
	free(tp);
	rmdir(dir);
}

/* A loop whose body branches (test_dataflow's LOOP_BRANCH): s6, in the
 * body's last block, defines %r2, which the loop head reads at s2 (line 12)
 * through the back edge and nothing after the loop reads. */
static const char LOOP_BRANCH[] =
	HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	"\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<4>;\n"
	"\tmov.u32 %r1, 0;\n"
	"\tmov.u32 %r2, 0;\n"
	"$L_head:\n"
	"\tadd.s32 %r3, %r2, 1;\n"
	"\tsetp.gt.s32 %p1, %r3, 7;\n"
	"\t@%p1 bra $L_skip;\n"
	"\tadd.s32 %r1, %r1, %r3;\n"
	"$L_skip:\n"
	"\tmov.u32 %r2, %r3;\n"
	"\tsetp.lt.s32 %p2, %r3, 10;\n"
	"\t@%p2 bra $L_head;\n"
	"\tld.param.u64 %rd1, [k_p0];\n"
	"\tst.global.u32 [%rd1], %r1;\n"
	"\tret;\n}\n";

static void test_splice__live_out_around_a_loop_must_be_bound(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-test-loop-XXXXXX";
	assert_non_null(mkdtemp(dir));
	/* a template that reads %r3 and writes nothing the module sees */
	char *t0 = write_tmp(dir, "none.ptx",
	                     "//! in .b32 a\n//! reads none\n//! writes none\n"
	                     "\t.reg .b32 %t;\n\tadd.s32 %t, %{a}, 1;\n");
	/* one that writes %r2 as the cut did */
	char *t1 = write_tmp(dir, "copy.ptx",
	                     "//! in .b32 a\n//! out .b32 d\n//! reads none\n//! writes none\n"
	                     "\tmov.u32 %{d}, %{a};\n");
	Fx x;
	fx_init_src(&x, LOOP_BRANCH,
	            "{\"entry\": \"k\", \"cut\": {\"stmts\": [6, 6]}, \"template\": \"none.ptx\","
	            " \"bind\": {\"a\": \"%%r3\"}, \"guards\": {\"sha256\": \"%s\"}}",
	            6, 6);
	SpliceRequest req = {x.m, NULL, &x.r, dir, false};
	assert_int_equal(splice_run(&req, &x.res, &x.e), -1);
	if (!strstr(err_msg(&x.e), "live-out '%r2' (first used at s2, line 12) is not bound to any "
	                           "output of the template"))
		fail_msg("%s", err_msg(&x.e));
	fx_free(&x);
	fx_init_src(&x, LOOP_BRANCH,
	            "{\"entry\": \"k\", \"cut\": {\"stmts\": [6, 6]}, \"template\": \"copy.ptx\","
	            " \"bind\": {\"a\": \"%%r3\", \"d\": \"%%r2\"}, \"guards\": {\"sha256\": \"%s\"}}",
	            6, 6);
	req.module = x.m;
	req.recipe = &x.r;
	if (splice_run(&req, &x.res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	assert_int_equal(x.res.n_live_out, 1);
	assert_non_null(strstr(x.res.text.p, "\tmov.u32 %r2, %r3;\n"));
	assert_outside_unchanged(&x.res, LOOP_BRANCH, strlen(LOOP_BRANCH), 6, 6);
	fx_free(&x);
	unlink(t0);
	unlink(t1);
	free(t0);
	free(t1);
	rmdir(dir);
}

static void test_splice__scaffold_splices_as_identity(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-test-scaffold-XXXXXX";
	assert_non_null(mkdtemp(dir));
	Err e = ERR_INIT;
	Module *m = ptx_parse("k.ptx", K, strlen(K), &e);
	assert_non_null(m);
	ScaffoldRequest sr = {m, "k", "lay", "lay/k.ptx", "lay/phase-01.ptx", 1, false, 0, 0};
	StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT;
	if (splice_scaffold(&sr, &rj, &tt, NULL, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_non_null(strstr(tt.p, "//! in    .b32 "));
	assert_non_null(strstr(tt.p, "//! out   .b32 "));
	assert_non_null(strstr(rj.p, "\"live_out\""));
	/* the template file where the recipe says, under a ptx root */
	char root[300], sub[320];
	snprintf(root, sizeof root, "%s/ptx", dir);
	snprintf(sub, sizeof sub, "%s/lay", root);
	assert_int_equal(mkdir_p(sub, &e), 0);
	char *tp = write_tmp(sub, "phase-01.ptx", tt.p);
	Recipe r;
	if (rcp_parse("r.json", rj.p, rj.n, &r, &e) < 0)
		fail_msg("%s", err_msg(&e));
	SpliceRequest req = {m, NULL, &r, root, false};
	SpliceResult res;
	memset(&res, 0, sizeof res);
	if (splice_run(&req, &res, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_outside_unchanged(&res, K, strlen(K), 5, 6);
	assert_string_equal(res.template_name, "ptx/lay/phase-01.ptx");
	splice_result_release(&res);
	rcp_release(&r);
	unlink(tp);
	free(tp);
	rmdir(sub);
	rmdir(root);
	rmdir(dir);
	sb_release(&rj);
	sb_release(&tt);
	mod_free(m);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splice__template_header),
		cmocka_unit_test(test_splice__template_bad_header),
		cmocka_unit_test(test_splice__render),
		cmocka_unit_test(test_splice__type_compatible),
		cmocka_unit_test(test_splice__recipe_parse),
		cmocka_unit_test(test_splice__locate_options_recipe_manifest),
		cmocka_unit_test(test_splice__identity_fresh_prefix),
		cmocka_unit_test(test_splice__fresh_prefix_avoids_reg_parameters),
		cmocka_unit_test(test_splice__scope_names_without_percent),
		cmocka_unit_test(test_splice__perturb),
		cmocka_unit_test(test_splice__template_checks),
		cmocka_unit_test(test_splice__live_out_around_a_loop_must_be_bound),
		cmocka_unit_test(test_splice__scaffold_splices_as_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
