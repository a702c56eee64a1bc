/*
 * test_capture.c - the recording stage without a GPU: parameter layouts
 * from ptxas's own cubins and from PTX, the manifest writer against golden
 * files (tests/golden/capture/; D4R_REGEN=1 rewrites them, then review the
 * diff), the layer folder it writes, and where it finds the PTX.
 *
 * Expected layouts come from the PTX ISA's rule (each parameter at the next
 * multiple of its alignment), worked out by hand for the kernel below, not
 * from the code under test; the manifest is read back by gpu/manifest.c and
 * its parameter block rebuilt with the recorded addresses must be the
 * captured block byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/file.h"
#include "base/sha256.h"
#include "capture/capture.h"
#include "gpu/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef D4R_CUDA_HOME
#define D4R_CUDA_HOME "/usr/local/cuda"
#endif

/* out at 0 (8), k at 8 (4), s at 16 (24, .align 8), h at 40 (2), in at 48 (8): 56 bytes.
 */
static const char kern_ptx[] = ".version 8.0\n"
                               ".target sm_90\n"
                               ".address_size 64\n"
                               "// a comment naming .entry fake( .param .u8 x )\n"
                               ".visible .entry kern(\n"
                               "\t.param .u64 out,\n"
                               "\t.param .u32 k,\n"
                               "\t.param .align 8 .b8 s[24],\n"
                               "\t.param .u16 h,\n"
                               "\t.param .u64 in\n"
                               ")\n"
                               "{\n"
                               "\t.reg .b64 %rd<4>;\n"
                               "\t.reg .b32 %r<4>;\n"
                               "\tld.param.u64 %rd1, [out];\n"
                               "\tld.param.u32 %r1, [k];\n"
                               "\tld.param.u64 %rd2, [in];\n"
                               "\tld.param.u32 %r2, [s+16];\n"
                               "\tadd.u32 %r1, %r1, %r2;\n"
                               "\tcvta.to.global.u64 %rd3, %rd1;\n"
                               "\tst.global.u32 [%rd3], %r1;\n"
                               "\tret;\n"
                               "}\n";

static const CapParam kern_layout[] = {{0, 8}, {8, 4}, {16, 24}, {40, 2}, {48, 8}};

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/d4r-capture-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ptxas kern_ptx into tmpdir/kern.cubin; false (the test skips) without ptxas. */
static bool build_cubin(char **data, size_t *n)
{
	char ptx[128], cubin[128], cmd[512];
	snprintf(ptx, sizeof ptx, "%s/kern.ptx", tmpdir);
	snprintf(cubin, sizeof cubin, "%s/kern.cubin", tmpdir);
	if (access(D4R_CUDA_HOME "/bin/ptxas", X_OK) != 0)
		return false;
	Err e = ERR_INIT;
	assert_int_equal(write_file_atomic(ptx, kern_ptx, strlen(kern_ptx), &e), 0);
	snprintf(cmd, sizeof cmd, "%s/bin/ptxas -arch=sm_90 '%s' -o '%s'", D4R_CUDA_HOME,
	         ptx, cubin);
	assert_int_equal(system(cmd), 0);
	unlink(ptx);
	assert_int_equal(read_file(cubin, data, n, &e), 0);
	return true;
}

static void expect_kern_layout(const CapParams *p)
{
	assert_int_equal(p->n, ARRAY_SIZE(kern_layout));
	for (size_t i = 0; i < p->n; i++) {
		assert_int_equal(p->v[i].offset, kern_layout[i].offset);
		assert_int_equal(p->v[i].size, kern_layout[i].size);
	}
	assert_int_equal(p->block_size, 56);
}

static void test_capture__ptx_params(void **state)
{
	(void)state;
	CapParams p;
	Err e = ERR_INIT;
	assert_int_equal(cap_ptx_params(kern_ptx, strlen(kern_ptx), "kern", &p, &e), 1);
	expect_kern_layout(&p);
	cap_params_release(&p);
	/* the entry named in a comment is not an entry */
	assert_int_equal(cap_ptx_params(kern_ptx, strlen(kern_ptx), "fake", &p, &e), 0);
	assert_int_equal(cap_ptx_params(kern_ptx, strlen(kern_ptx), "ker", &p, &e), 0);
	static const char bad[] =
	    ".version 8.0\n.entry k(.param .u64 a .param .u32 b)\n{ret;}\n";
	assert_int_equal(cap_ptx_params(bad, strlen(bad), "k", &p, &e), -1);
	assert_non_null(
	    strstr(err_msg(&e), "the parameter list of '.entry k' cannot be read"));
	static const char none[] = ".version 8.0\n.entry k()\n{ret;}\n";
	assert_int_equal(cap_ptx_params(none, strlen(none), "k", &p, &e), 1);
	assert_int_equal(p.n, 0);
	cap_params_release(&p);
	err_release(&e);
}

static void test_capture__nvinfo_params_of_ptxas(void **state)
{
	(void)state;
	char *cubin;
	size_t n;
	if (!build_cubin(&cubin, &n))
		skip();
	CapParams p;
	Err e = ERR_INIT;
	assert_int_equal(cap_image_kind(cubin, n), CAP_IMG_CUBIN);
	assert_true(cap_image_has_kernel(cubin, n, "kern"));
	assert_false(cap_image_has_kernel(cubin, n, "ker"));
	assert_int_equal(cap_nvinfo_params(cubin, n, "kern", &p, &e), 1);
	expect_kern_layout(&p);
	cap_params_release(&p);
	const char *source = NULL;
	assert_int_equal(cap_image_params(cubin, n, "kern", &p, &source, &e), 1);
	assert_string_equal(source, "nv.info");
	cap_params_release(&p);
	assert_int_equal(cap_nvinfo_params(cubin, n, "other", &p, &e), 0);
	/* cut off: the section table is past the end */
	assert_int_equal(cap_nvinfo_params(cubin, 100, "kern", &p, &e), -1);
	assert_non_null(strstr(err_msg(&e), "truncated"));
	free(cubin);
	err_release(&e);
}

static void test_capture__nvinfo_damaged_records(void **state)
{
	(void)state;
	char *cubin;
	size_t n;
	if (!build_cubin(&cubin, &n))
		skip();
	/* the first KPARAM_INFO record (04 17 0c 00) claims 0x0fff bytes */
	char *at = NULL;
	for (size_t i = 0; i + 4 <= n && !at; i++)
		if (!memcmp(cubin + i, "\x04\x17\x0c\x00", 4))
			at = cubin + i;
	assert_non_null(at);
	at[2] = (char)0xff, at[3] = 0x0f;
	CapParams p;
	Err e = ERR_INIT;
	assert_int_equal(cap_nvinfo_params(cubin, n, "kern", &p, &e), -1);
	assert_non_null(strstr(err_msg(&e), "truncated: .nv.info.kern attribute 0x17"));
	at[2] = 0x0c, at[3] = 0;
	at[0] = 9; /* no such format */
	assert_int_equal(cap_nvinfo_params(cubin, n, "kern", &p, &e), -1);
	assert_non_null(strstr(err_msg(&e), "unknown attribute format 9"));
	free(cubin);
	err_release(&e);
}

/* ---- records ------------------------------------------------------------------------
 */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static const uint64_t bases[3] = {0x7f0000000000ull, 0x7f0000200000ull,
                                  0x7f0000400000ull};
static const uint64_t sizes[3] = {64, 32, 16};

/* kern over three allocations: a0 read (its last 16 bytes zero), a1 written,
 * a2 untouched; `inner` puts a1's address inside a0. */
static void make_record(CapRecord *r, bool inner)
{
	memset(r, 0, sizeof(*r));
	r->kernel = xstrdup("kern");
	r->launch = 1;
	r->api = xstrdup("cuLaunchKernelEx");
	r->grid[0] = 4, r->grid[1] = 2, r->grid[2] = 1;
	r->block[0] = 128, r->block[1] = r->block[2] = 1;
	r->cluster[0] = r->cluster[1] = r->cluster[2] = 1;
	r->dynamic_shared_bytes = 1024;
	r->param_size = 56;
	r->param_block = xcalloc(1, 56);
	put64(r->param_block + 0, bases[1]);
	r->param_block[8] = 5;
	put64(r->param_block + 16, bases[0] + 8);
	put64(r->param_block + 32, UINT64_MAX);
	r->param_block[40] = 0x34, r->param_block[41] = 0x12;
	put64(r->param_block + 48, bases[0]);
	for (size_t i = 0; i < ARRAY_SIZE(kern_layout); i++)
		VEC_PUSH(r->params, kern_layout[i]);
	r->params.block_size = 56;
	r->param_source = xstrdup("ptx");
	r->nallocs = 3;
	r->allocs = xcalloc(3, sizeof(CapAlloc));
	for (int i = 0; i < 3; i++) {
		r->allocs[i].base = bases[i];
		r->allocs[i].size = sizes[i];
		r->allocs[i].before = xcalloc(1, sizes[i]);
		r->allocs[i].after = xcalloc(1, sizes[i]);
	}
	for (int k = 0; k < 48; k++)
		r->allocs[0].before[k] = r->allocs[0].after[k] =
		    (unsigned char)(3 * k + 1);
	if (inner) {
		put64(r->allocs[0].before, bases[1]);
		put64(r->allocs[0].after, bases[1]);
	}
	memset(r->allocs[1].after, 0xab, 32);
	r->image = (unsigned char *)xstrdup(kern_ptx);
	r->image_size = strlen(kern_ptx);
	r->synchronised = true;
}

static char *golden_path(const char *name)
{
	const char *top = getenv("D4R_TOP");
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/tests/golden/capture/%s", top && *top ? top : ".", name);
	return sb.p;
}

static void expect_golden(const char *name, const StrBuf *text)
{
	char *path = golden_path(name);
	Err e = ERR_INIT;
	if (getenv("D4R_REGEN") && !strcmp(getenv("D4R_REGEN"), "1"))
		assert_int_equal(write_file_atomic(path, text->p, text->n, &e), 0);
	char *want;
	size_t n;
	if (read_file(path, &want, &n, &e) < 0)
		fail_msg("%s", err_msg(&e));
	if (n != text->n || memcmp(want, text->p, n))
		fail_msg("%s differs from what the writer made:\n%.*s", path,
		         (int)text->n, text->p);
	free(want);
	free(path);
}

static void test_capture__manifest_golden(void **state)
{
	(void)state;
	CapRecord r;
	make_record(&r, false);
	StrBuf text = STRBUF_INIT;
	CapLayerInfo info = {0};
	cap_manifest_text(&r, "kern", "kern/module.ptx", true, "00ff", &text, &info);
	expect_golden("basic.layer.json", &text);
	assert_int_equal(info.nbuffers, 3);
	assert_int_equal(info.noutputs, 1);
	assert_int_equal(info.frame_size, 32);
	assert_int_equal(info.pointer_params, 3); /* out, s's pointer, in */
	assert_int_equal(info.inner_pointers, 0);

	/* gpu/ reads it, and rebuilds the captured block with the recorded addresses */
	Manifest m;
	Err e = ERR_INIT;
	char sha[65];
	memset(sha, 'a', 64);
	sha[64] = 0;
	char *fixed = xstrdup(text.p), *at = strstr(fixed, "\"00ff\"");
	assert_non_null(at);
	StrBuf doc = STRBUF_INIT;
	sb_addn(&doc, fixed, (size_t)(at - fixed) + 1);
	sb_adds(&doc, sha);
	sb_adds(&doc, at + 5);
	if (mf_parse("kern/layer.json", doc.p, doc.n, &m, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_int_equal(m.nbuffers, 3);
	assert_int_equal(m.noutputs, 1);
	assert_string_equal(m.outputs[0].name, "a1");
	assert_int_equal(m.frame_size, 32);
	assert_int_equal(m.launches[0].dynamic_shared_bytes, 1024);
	unsigned char block[64] = {0};
	mf_param_block(&m.launches[0], bases, NULL, NULL, block);
	assert_memory_equal(block, r.param_block, 56);
	mf_release(&m);
	free(fixed);
	sb_release(&doc);
	sb_release(&text);
	cap_record_release(&r);
	err_release(&e);
}

static void test_capture__inner_pointers_fix_addresses(void **state)
{
	(void)state;
	CapRecord r;
	make_record(&r, true);
	StrBuf text = STRBUF_INIT;
	CapLayerInfo info = {0};
	cap_manifest_text(&r, "kern", "kern/module.ptx", false, NULL, &text, &info);
	expect_golden("inner.layer.json", &text);
	assert_int_equal(info.inner_pointers, 1);
	Manifest m;
	Err e = ERR_INIT;
	if (mf_parse("kern/layer.json", text.p, text.n, &m, &e) < 0)
		fail_msg("%s", err_msg(&e));
	for (int i = 0; i < 3; i++)
		assert_int_equal(m.buffers[i].address, bases[i]);
	assert_null(m.oracle_path);
	mf_release(&m);
	sb_release(&text);
	cap_record_release(&r);
	err_release(&e);
}

/* Launch attributes: the ones a replay gives go into the launch's
 * "attributes" (a signed priority, a shape, the cooperative API), and gpu/
 * reads them back as the CUlaunchAttributeIDs of cuda.h; one a replay
 * cannot give is refused by name, an unknown one by its number. */
static void test_capture__launch_attributes(void **state)
{
	(void)state;
	CapRecord r;
	make_record(&r, false);
	r.cooperative = true;
	r.nattrs = 3;
	r.attrs = xcalloc(4, sizeof(CapAttr));
	r.attrs[0].id = 8, r.attrs[0].value[0] = (uint32_t)-2; /* priority */
	r.attrs[1].id = 4, r.attrs[1].value[0] = 2;            /* the cluster shape */
	r.attrs[2].id = 11;                                     /* preferred cluster */
	r.attrs[2].value[0] = 4, r.attrs[2].value[1] = r.attrs[2].value[2] = 1;
	StrBuf text = STRBUF_INIT, json = STRBUF_INIT;
	CapLayerInfo info = {0};
	Err e = ERR_INIT;
	assert_int_equal(cap_launch_attrs(&r, &json, &e), 0);
	assert_string_equal(json.p, "\"priority\": -2, \"preferred_cluster_dimension\": [4, 1, "
	                            "1], \"cooperative\": 1");
	cap_manifest_text(&r, "kern", "kern/module.ptx", false, NULL, &text, &info);
	Manifest m;
	if (mf_parse("kern/layer.json", text.p, text.n, &m, &e) < 0)
		fail_msg("%s", err_msg(&e));
	const MfLaunch *l = &m.launches[0];
	assert_int_equal(l->nattrs, 3);
	assert_int_equal(l->attrs[0].id, 8); /* CU_LAUNCH_ATTRIBUTE_PRIORITY */
	assert_int_equal((int32_t)l->attrs[0].v[0], -2);
	assert_int_equal(l->attrs[1].id, 11); /* ..._PREFERRED_CLUSTER_DIMENSION */
	assert_int_equal(l->attrs[1].v[0], 4);
	assert_int_equal(l->attrs[1].v[2], 1);
	assert_int_equal(l->attrs[2].id, 2); /* ..._COOPERATIVE */
	assert_int_equal(l->attrs[2].v[0], 1);
	mf_release(&m);

	/* what asks nothing of the launch is left out: a default value, a
	 * scheduling preference without clusters, a stream's policy */
	CapAttr *more = xcalloc(7, sizeof(CapAttr));
	memcpy(more, r.attrs, 3 * sizeof(CapAttr));
	free(r.attrs);
	r.attrs = more;
	r.attrs[3].id = 6;                        /* programmatic serialization 0 */
	r.attrs[4].id = 5, r.attrs[4].value[0] = 1; /* spread, but no clusters */
	r.attrs[5].id = 3, r.attrs[5].value[0] = 2; /* a synchronization policy */
	r.nattrs = 6;
	assert_int_equal(cap_launch_attrs(&r, &json, &e), 0);
	assert_string_equal(json.p, "\"priority\": -2, \"preferred_cluster_dimension\": [4, 1, "
	                            "1], \"cooperative\": 1");
	r.attrs[6] = r.attrs[0]; /* the priority again: the last one counts */
	r.attrs[6].value[0] = 5;
	r.nattrs = 7;
	assert_int_equal(cap_launch_attrs(&r, &json, &e), 0);
	assert_string_equal(json.p, "\"preferred_cluster_dimension\": [4, 1, 1], \"priority\": 5, "
	                            "\"cooperative\": 1");
	r.nattrs = 6;
	r.cluster[0] = 2; /* with clusters, the preference is the launch's */
	assert_int_equal(cap_launch_attrs(&r, &json, &e), 0);
	assert_non_null(strstr(json.p, "\"cluster_scheduling_policy_preference\": 1"));
	r.cluster[0] = 1;

	r.attrs[1].id = 12; /* a launch completion event */
	assert_int_equal(cap_launch_attrs(&r, &json, &e), -1);
	assert_non_null(strstr(err_msg(&e), "'kern' launch 1: its launch attribute "
	                                    "'launch_completion_event' (id 12) is not replayed"));
	err_release(&e);
	r.attrs[1].id = 99;
	assert_int_equal(cap_launch_attrs(&r, &json, &e), -1);
	assert_non_null(strstr(err_msg(&e), "its launch attribute id 99 is not replayed"));
	/* the manifest refuses a name it cannot replay */
	err_release(&e);
	static const char bad[] = "{\"layer\": \"k\", \"module\": \"k.ptx\", \"entry\": \"k\", "
	                          "\"buffers\": {\"a\": {\"size\": 4, \"init\": {\"kind\": \"zero\"}}}, "
	                          "\"launches\": [{\"entry\": \"k\", \"grid\": [1, 1, 1], \"block\": "
	                          "[1, 1, 1], \"attributes\": {\"launch_completion_event\": 1}, "
	                          "\"params\": {\"size\": 0, \"fields\": []}}], "
	                          "\"frame\": [{\"name\": \"a\", \"buffer\": \"a\"}]}";
	assert_int_equal(mf_parse("k/layer.json", bad, sizeof bad - 1, &m, &e), -1);
	assert_non_null(strstr(err_msg(&e), "launches[0].attributes.launch_completion_event: "
	                                    "'launch_completion_event' is not a launch attribute"));
	err_release(&e);
	sb_release(&text);
	sb_release(&json);
	cap_record_release(&r);
}

/* A texture and a surface object in place of s's pointer and h..in: the
 * surface's array is written (it joins the frame), the texture's is not. */
static void test_capture__arrays_behind_objects(void **state)
{
	(void)state;
	CapRecord r;
	make_record(&r, false);
	cap_params_release(&r.params);
	VEC_PUSH(r.params, ((CapParam){0, 8}));
	VEC_PUSH(r.params, ((CapParam){8, 8}));
	VEC_PUSH(r.params, ((CapParam){16, 8}));
	r.params.block_size = 56;
	put64(r.param_block + 8, 1);  /* texture handle 1 */
	put64(r.param_block + 16, 2); /* surface handle 2 */
	r.param_size = 24;
	r.narrays = 2;
	r.arrays = xcalloc(2, sizeof(CapArray));
	const char *fmts[2] = {"f16", "u8"};
	for (int i = 0; i < 2; i++) {
		CapArray *a = &r.arrays[i];
		a->width = 4, a->height = 2, a->channels = 4;
		snprintf(a->format, sizeof a->format, "%s", fmts[i]);
		a->bytes = 4 * 2 * 4 * (i ? 1 : 2);
		a->before = xcalloc(1, a->bytes);
		a->after = xcalloc(1, a->bytes);
	}
	r.arrays[0].texture = true;
	snprintf(r.arrays[0].filter, 8, "linear");
	snprintf(r.arrays[0].address, 8, "wrap");
	r.arrays[0].before[3] = r.arrays[0].after[3] = 0x3c;
	r.arrays[1].surface = true;
	memset(r.arrays[1].after, 7, r.arrays[1].bytes);
	r.nobjects = 2;
	r.objects = xcalloc(2, sizeof(CapObject));
	r.objects[0] = (CapObject){8, false, 0};
	r.objects[1] = (CapObject){16, true, 1};
	StrBuf text = STRBUF_INIT;
	CapLayerInfo info = {0};
	cap_manifest_text(&r, "kern", "kern/module.ptx", false, NULL, &text, &info);
	expect_golden("arrays.layer.json", &text);
	assert_int_equal(info.noutputs, 2);          /* a1 and the surface's array */
	assert_int_equal(info.frame_size, 32 + 32);
	Manifest m;
	Err e = ERR_INIT;
	if (mf_parse("kern/layer.json", text.p, text.n, &m, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_int_equal(m.narrays, 2);
	assert_true(m.arrays[0].texture && m.arrays[0].tex_linear);
	assert_int_equal(m.arrays[0].tex_address, MF_ADDR_WRAP);
	assert_true(m.arrays[1].surface && !m.arrays[1].texture);
	assert_int_equal(m.launches[0].nfields, 3);
	assert_int_equal(m.launches[0].fields[1].kind, MF_P_TEXTURE);
	assert_int_equal(m.launches[0].fields[2].kind, MF_P_SURFACE);
	assert_string_equal(m.outputs[1].name, "t1");
	mf_release(&m);
	sb_release(&text);
	cap_record_release(&r);
	err_release(&e);
}

static char *in_tmp(const char *rel)
{
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", tmpdir, rel);
	return sb.p;
}

static void expect_file(const char *rel, const void *want, size_t n)
{
	char *path = in_tmp(rel), *data;
	size_t len;
	Err e = ERR_INIT;
	if (read_file(path, &data, &len, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_int_equal(len, n);
	assert_memory_equal(data, want, n);
	free(data);
	free(path);
}

static bool exists(const char *rel)
{
	char *path = in_tmp(rel);
	bool there = access(path, F_OK) == 0;
	free(path);
	return there;
}

static void test_capture__layer_folder(void **state)
{
	(void)state;
	CapRecord r;
	make_record(&r, false);
	CapWriteOpts o = {.no_triton = true, .program = "./prog"};
	CapLayerInfo info;
	Err e = ERR_INIT;
	if (cap_layer_write(&r, tmpdir, &o, true, &info, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_string_equal(info.layer, "kern");
	assert_string_equal(info.ptx_source, "image");
	expect_file("kern/module.ptx", kern_ptx, strlen(kern_ptx));
	expect_file("kern/a0.bin", r.allocs[0].before, 48); /* trailing zeros left out */
	assert_false(exists("kern/a1.bin"));                /* all zero before */
	assert_false(exists("kern/a2.bin"));
	expect_file("kern/oracle.frame", r.allocs[1].after, 32);
	char sha[65];
	sha256_hex(r.allocs[1].after, 32, sha);
	assert_string_equal(info.oracle_sha256, sha);
	char *path = in_tmp("kern/layer.json");
	Manifest m;
	if (mf_load(path, tmpdir, &m, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_string_equal(m.oracle_sha256, sha);
	assert_string_equal(m.module, "kern/module.ptx");
	assert_int_equal(m.buffers[0].init.kind, MF_INIT_FILE);
	assert_int_equal(m.buffers[1].init.kind, MF_INIT_ZERO);
	mf_release(&m);
	cap_layer_info_release(&info);

	/* a replay that did not reproduce: no oracle, and the old one goes */
	o.nondeterministic = "buffer 'a1' differs at byte 3";
	if (cap_layer_write(&r, tmpdir, &o, false, &info, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_false(exists("kern/oracle.frame"));
	char *cj = in_tmp("kern/capture.json"), *text;
	size_t n;
	assert_int_equal(read_file(cj, &text, &n, &e), 0);
	assert_non_null(
	    strstr(text, "\"deterministic\": false, \"differs\": \"buffer 'a1' differs"));
	free(text);
	free(cj);
	if (mf_load(path, tmpdir, &m, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_null(m.oracle_path);
	mf_release(&m);
	free(path);
	cap_layer_info_release(&info);

	/* a launch that wrote nothing is no layer */
	memset(r.allocs[1].after, 0, 32);
	r.launch = 2;
	assert_int_equal(cap_layer_write(&r, tmpdir, &o, true, &info, &e), -1);
	assert_non_null(
	    strstr(err_msg(&e), "'kern' launch 2 wrote none of the 3 buffers"));
	assert_false(exists("kern-2"));
	cap_layer_info_release(&info);
	cap_record_release(&r);
	err_release(&e);
}

static void mkfile(const char *rel, const void *p, size_t n)
{
	char *path = in_tmp(rel), *dir = xstrdup(path);
	*strrchr(dir, '/') = 0;
	Err e = ERR_INIT;
	assert_int_equal(mkdir_p(dir, &e), 0);
	assert_int_equal(write_file_atomic(path, p, n, &e), 0);
	free(dir);
	free(path);
}

static void test_capture__ptx_from_triton_cache(void **state)
{
	(void)state;
	char *cubin;
	size_t n;
	if (!build_cubin(&cubin, &n))
		skip();
	CapRecord r;
	make_record(&r, false);
	free(r.image);
	r.image = (unsigned char *)cubin;
	r.image_size = n;
	CapWriteOpts o = {.no_triton = true, .program = "./prog"};
	char *ptx, *source;
	size_t len;
	Err e = ERR_INIT;
	assert_int_equal(cap_find_ptx(&r, &o, &ptx, &len, &source, &e), 0);

	/* two cached builds of kern: only the one beside an equal cubin counts */
	static const char other[] = "// another build\n";
	StrBuf p2 = STRBUF_INIT;
	sb_adds(&p2, other);
	sb_adds(&p2, kern_ptx);
	mkfile("cache/aaa/kern.ptx", p2.p, p2.n);
	mkfile("cache/aaa/kern.cubin", "not it", 6);
	mkfile("cache/bbb/kern.ptx", kern_ptx, strlen(kern_ptx));
	mkfile("cache/bbb/kern.cubin", cubin, n);
	char *cache = in_tmp("cache");
	o.no_triton = false;
	o.triton_cache = cache;
	assert_int_equal(cap_find_ptx(&r, &o, &ptx, &len, &source, &e), 1);
	assert_non_null(strstr(source, "cache/bbb/kern.ptx"));
	assert_int_equal(len, strlen(kern_ptx));
	free(ptx);
	free(source);
	/* without the matching build the cache has nothing for this image */
	char *bbb = in_tmp("cache/bbb/kern.cubin");
	unlink(bbb);
	assert_int_equal(cap_find_ptx(&r, &o, &ptx, &len, &source, &e), 0);
	/* --ptx-from takes a PTX file with no cubin beside it */
	mkfile("mine/kern.ptx", p2.p, p2.n);
	char *mine = in_tmp("mine");
	o.ptx_from = mine;
	assert_int_equal(cap_find_ptx(&r, &o, &ptx, &len, &source, &e), 1);
	assert_non_null(strstr(source, "mine/kern.ptx"));
	free(ptx);
	free(source);

	/* with no PTX found the layer is replay-only: its module is the cubin */
	o.ptx_from = NULL;
	CapLayerInfo info;
	if (cap_layer_write(&r, tmpdir, &o, true, &info, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_null(info.ptx_source);
	expect_file("kern/module.cubin", cubin, n);
	cap_layer_info_release(&info);
	free(bbb);
	free(mine);
	free(cache);
	sb_release(&p2);
	cap_record_release(&r);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture__ptx_params),
	    cmocka_unit_test_setup_teardown(test_capture__nvinfo_params_of_ptxas, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_capture__nvinfo_damaged_records, setup,
	                                    teardown),
	    cmocka_unit_test(test_capture__manifest_golden),
	    cmocka_unit_test(test_capture__launch_attributes),
	    cmocka_unit_test(test_capture__inner_pointers_fix_addresses),
	    cmocka_unit_test(test_capture__arrays_behind_objects),
	    cmocka_unit_test_setup_teardown(test_capture__layer_folder, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_capture__ptx_from_triton_cache, setup,
	                                    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
