/*
 * test_gpu_manifest.c - the launch manifest: a good one read right, every
 * kind of mistake caught with a message naming the JSON path, the
 * parameter block laid out byte for byte, the seeded generator and the f16
 * conversion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/file.h"
#include "gpu/launch.h"
#include "gpu/manifest.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The example of doc/layer-manifest.md, with a real sha256. */
static const char good[] =
	"{\n"
	"  \"layer\": \"enc4\",\n"
	"  \"module\": \"enc4/enc4.ptx\",\n"
	"  \"entry\": \"cuda_dldn_engine_swin_enc4_kernel\",\n"
	"  \"buffers\": {\n"
	"    \"plane\":   {\"size\": 65945600, \"init\": {\"kind\": \"zero\"}},\n"
	"    \"weights\": {\"size\": 533856,   \"init\": {\"kind\": \"file\", \"path\": \"enc4/weights.bin\"}},\n"
	"    \"noise\":   {\"size\": 4096,     \"init\": {\"kind\": \"random\", \"seed\": 7, \"format\": \"f16\", \"min\": -1.0, \"max\": 1.0}},\n"
	"    \"frame\":   {\"size\": 1048576,  \"init\": {\"kind\": \"fill\", \"byte\": 0}}\n"
	"  },\n"
	"  \"arrays\": {\n"
	"    \"tex0\":  {\"width\": 80, \"height\": 46, \"format\": \"f16\", \"channels\": 4,\n"
	"              \"init\": {\"kind\": \"random\", \"seed\": 3, \"min\": 0.0, \"max\": 1.0},\n"
	"              \"texture\": {\"filter\": \"point\", \"address\": \"clamp\", \"normalized\": false}},\n"
	"    \"surf0\": {\"width\": 80, \"height\": 46, \"format\": \"f16\", \"channels\": 4,\n"
	"              \"init\": {\"kind\": \"zero\"}, \"surface\": true}\n"
	"  },\n"
	"  \"launches\": [\n"
	"    {\"entry\": \"enc4_prepass_kernel\", \"grid\": [11, 7, 1], \"block\": [32, 1, 4],\n"
	"     \"dynamic_shared_bytes\": 0,\n"
	"     \"params\": {\"size\": 144, \"fields\": [\n"
	"        {\"offset\": 0,   \"kind\": \"u32\", \"value\": 80},\n"
	"        {\"offset\": 8,   \"kind\": \"buffer\", \"buffer\": \"plane\"},\n"
	"        {\"offset\": 48,  \"kind\": \"buffer\", \"buffer\": \"plane\", \"add\": 39567360},\n"
	"        {\"offset\": 80,  \"kind\": \"u16\", \"value\": 0},\n"
	"        {\"offset\": 88,  \"kind\": \"texture\", \"array\": \"tex0\"},\n"
	"        {\"offset\": 112, \"kind\": \"surface\", \"array\": \"surf0\"}\n"
	"     ]}}\n"
	"  ],\n"
	"  \"frame\": [\n"
	"    {\"name\": \"rgba\", \"buffer\": \"frame\", \"size\": 1048576, \"format\": \"u8\",\n"
	"     \"width\": 512, \"height\": 512, \"channels\": 4},\n"
	"    {\"name\": \"surf0\", \"array\": \"surf0\"}\n"
	"  ],\n"
	"  \"oracle\": {\"path\": \"enc4/oracle.frame\", \"sha256\": "
	"\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"}\n"
	"}\n";

static void test_gpu_manifest__reads_the_documented_example(void **state)
{
	(void)state;
	Manifest m;
	Err e = ERR_INIT;
	int rc = mf_parse("recipes/enc4/layer.json", good, strlen(good), &m, &e);
	if (rc)
		fprintf(stderr, "%s\n", err_msg(&e));
	assert_int_equal(rc, 0);
	assert_string_equal(m.layer, "enc4");
	assert_string_equal(m.module, "enc4/enc4.ptx");
	assert_int_equal(m.nbuffers, 4);
	assert_string_equal(m.buffers[1].name, "weights");
	assert_int_equal(m.buffers[1].init.kind, MF_INIT_FILE);
	assert_string_equal(m.buffers[1].init.path, "enc4/weights.bin");
	assert_int_equal(m.buffers[2].init.kind, MF_INIT_RANDOM);
	assert_int_equal(m.buffers[2].init.format, MF_F16);
	assert_int_equal(m.narrays, 2);
	assert_true(m.arrays[0].texture);
	assert_false(m.arrays[0].surface);
	assert_int_equal(m.arrays[0].init.format, MF_F16);   /* from the array */
	assert_true(m.arrays[1].surface);
	assert_int_equal(m.nlaunches, 1);
	assert_int_equal(m.launches[0].grid[0], 11);
	assert_int_equal(m.launches[0].block[2], 4);
	assert_int_equal(m.launches[0].repeat, 1);
	assert_int_equal(m.launches[0].param_size, 144);
	assert_int_equal(m.launches[0].nfields, 6);
	assert_int_equal(m.launches[0].fields[2].add, 39567360);
	assert_int_equal(m.noutputs, 2);
	assert_int_equal(m.outputs[0].frame_off, 0);
	assert_int_equal(m.outputs[1].frame_off, 1048576);
	assert_int_equal(m.outputs[1].size, 80 * 46 * 4 * 2);
	assert_int_equal(m.outputs[1].width, 80);
	assert_int_equal(m.frame_size, 1048576 + 80 * 46 * 4 * 2);
	assert_string_equal(m.oracle_path, "enc4/oracle.frame");
	mf_release(&m);
	err_release(&e);
}

/* ---- mistakes: the good manifest with one change ------------------------- */

/* The item at a dotted path ("launches.0.params.fields.3"); the parent and
 * the last step in *parent / *last. */
static cJSON *walk(cJSON *root, const char *path, cJSON **parent, char *last)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	cJSON *cur = root, *par = NULL;
	char *save = NULL;
	for (char *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save)) {
		par = cur;
		strcpy(last, t);
		if (cJSON_IsArray(cur))
			cur = cJSON_GetArrayItem(cur, atoi(t));
		else
			cur = cJSON_GetObjectItemCaseSensitive(cur, t);
	}
	*parent = par;
	return cur;
}

/* Sets path to the JSON value `json` (NULL: deletes it), parses, and
 * expects failure with `want` in the message. */
static void expect_error(const char *file, const char *path, const char *json,
                         const char *want)
{
	cJSON *root = cJSON_Parse(good);
	assert_non_null(root);
	cJSON *parent;
	char last[64];
	walk(root, path, &parent, last);
	assert_non_null(parent);
	if (cJSON_IsArray(parent)) {
		if (json)
			cJSON_ReplaceItemInArray(parent, atoi(last), cJSON_Parse(json));
		else
			cJSON_DeleteItemFromArray(parent, atoi(last));
	} else if (json) {
		cJSON *v = cJSON_Parse(json);
		assert_non_null(v);
		if (cJSON_GetObjectItemCaseSensitive(parent, last))
			cJSON_ReplaceItemInObjectCaseSensitive(parent, last, v);
		else
			cJSON_AddItemToObject(parent, last, v);
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, last);
	}
	char *text = cJSON_Print(root);
	Manifest m;
	Err e = ERR_INIT;
	int rc = mf_parse(file, text, strlen(text), &m, &e);
	if (rc == 0 || !strstr(err_msg(&e), want))
		fprintf(stderr, "change %s = %s\nwanted: %s\ngot (rc %d): %s\n", path,
		        json ? json : "(deleted)", want, rc, rc ? err_msg(&e) : "");
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err_msg(&e), want));
	free(text);
	cJSON_Delete(root);
	err_release(&e);
}

#define F "recipes/enc4/layer.json"

static void test_gpu_manifest__field_outside_block(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.3", "{\"offset\": 140, \"kind\": \"u64\", \"value\": 1}",
	             F ": launches[0].params.fields[3]: offset 140 + 8 exceeds the 144-byte block");
}

static void test_gpu_manifest__field_misaligned(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.3", "{\"offset\": 82, \"kind\": \"u32\", \"value\": 1}",
	             "launches[0].params.fields[3]: offset 82 of a 4-byte 'u32' is not a multiple of 4");
}

static void test_gpu_manifest__fields_overlap(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.3", "{\"offset\": 12, \"kind\": \"u32\", \"value\": 1}",
	             "launches[0].params.fields[3]: bytes [12, 16) overlap fields[1] at [8, 16)");
}

/* Fields in any order: a later field that starts before an earlier one and
 * runs into it overlaps too (fields[0] moved to [12, 16), then the 8-byte
 * buffer pointer of fields[1] at [8, 16)). */
static void test_gpu_manifest__fields_out_of_order_overlap(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.0", "{\"offset\": 12, \"kind\": \"u32\", \"value\": 1}",
	             "launches[0].params.fields[1]: bytes [8, 16) overlap fields[0] at [12, 16)");
}

static void test_gpu_manifest__unknown_key(void **state)
{
	(void)state;
	expect_error(F, "launches.0.dynamic_shared", "0",
	             "launches[0]: unknown key 'dynamic_shared' (expected one of 'entry'");
	expect_error(F, "oracel", "{}", F ": unknown key 'oracel'");
	expect_error(F, "buffers.noise.init.sead", "1",
	             "buffers.noise.init: unknown key 'sead'");
}

static void test_gpu_manifest__wrong_type(void **state)
{
	(void)state;
	expect_error(F, "buffers.plane.size", "\"big\"",
	             "buffers.plane.size: expected an integer, found a string");
	expect_error(F, "launches.0.grid", "[11, 7]",
	             "launches[0].grid: expected an array of three integers");
	expect_error(F, "launches.0.params.fields.0.value", "1.5",
	             "launches[0].params.fields[0].value: expected an integer, found 1.5");
	expect_error(F, "arrays.surf0.surface", "1",
	             "arrays.surf0.surface: expected true or false, found a number");
}

static void test_gpu_manifest__missing_key(void **state)
{
	(void)state;
	expect_error(F, "module", NULL, F ": missing key 'module'");
	expect_error(F, "launches.0.params.size", NULL, "launches[0].params: missing key 'size'");
}

static void test_gpu_manifest__out_of_range(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.3.value", "70000",
	             "fields[3].value: 70000 is out of range [0, 65535]");
	expect_error(F, "launches.0.block", "[64, 32, 1]",
	             "launches[0].block: 64 x 32 x 1 threads exceed the 1024");
	expect_error(F, "arrays.tex0.channels", "3", "arrays.tex0.channels: CUDA arrays have 1, 2 or 4");
	expect_error(F, "launches.0.params.size", "40000", "launches[0].params.size: 40000 is out of range");
}

static void test_gpu_manifest__unknown_references(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.1.buffer", "\"plain\"",
	             "launches[0].params.fields[1].buffer: no buffer named 'plain' in \"buffers\"");
	expect_error(F, "launches.0.params.fields.4.array", "\"tex1\"",
	             "launches[0].params.fields[4].array: no array named 'tex1'");
	expect_error(F, "launches.0.params.fields.4.array", "\"surf0\"",
	             "fields[4].array: array 'surf0' has no \"texture\"");
	expect_error(F, "launches.0.params.fields.5.array", "\"tex0\"",
	             "fields[5].array: array 'tex0' is not a surface");
	expect_error(F, "frame.1.array", "\"surf1\"", "frame[1].array: no array named 'surf1'");
	expect_error(F, "frame.0.buffer", "\"frames\"", "frame[0].buffer: no buffer named 'frames'");
}

static void test_gpu_manifest__buffer_bounds(void **state)
{
	(void)state;
	expect_error(F, "launches.0.params.fields.2.add", "65945601",
	             "fields[2].add: 65945601 is beyond the end of the 65945600-byte buffer 'plane'");
	expect_error(F, "frame.0.size", "1048577",
	             "frame[0]: offset 0 + size 1048577 exceeds the 1048576-byte buffer 'frame'");
	expect_error(F, "frame.0.width", "256",
	             "frame[0]: 256 x 512 x 4 elements of 1 bytes make 524288 bytes, not the output's 1048576");
	expect_error(F, "buffers.noise.size", "4095",
	             "buffers.noise: size 4095 is not a multiple of the 2-byte 'f16' element");
}

static void test_gpu_manifest__random_ranges(void **state)
{
	(void)state;
	expect_error(F, "buffers.noise.init.min", "2.0",
	             "buffers.noise.init: min 2 is greater than max 1");
	expect_error(F, "buffers.noise.init.format", "\"u8\"",
	             "buffers.noise.init: [-1, 1] does not fit format 'u8'");
	expect_error(F, "buffers.noise.init.format", "\"s16\"",
	             "buffers.noise.init.format: 's16' is not one of 'u8', 'u16', 'u32', 'f16', 'f32'");
	expect_error(F, "arrays.tex0.init.format", "\"f32\"",
	             "arrays.tex0.init.format: 'f32' differs from the array's format 'f16'");
}

static void test_gpu_manifest__layer_and_paths(void **state)
{
	(void)state;
	expect_error(F, "layer", "\"enc5\"", F ": layer: 'enc5' differs from the folder name 'enc4'");
	expect_error(F, "module", "\"/abs/enc4.ptx\"", "module: '/abs/enc4.ptx' must be relative");
	expect_error(F, "buffers.weights.init.path", "\"../x.bin\"",
	             "buffers.weights.init.path: '../x.bin' must be relative");
	expect_error(F, "oracle.sha256", "\"E3B0\"", "oracle.sha256: expected 64 lower-case hex digits");
}

static void test_gpu_manifest__outputs(void **state)
{
	(void)state;
	expect_error(F, "frame.1.name", "\"rgba\"", "frame[1]: output name 'rgba' used twice");
	expect_error(F, "frame.1.buffer", "\"plane\"",
	             "frame[1]: an output names either a \"buffer\" or an \"array\"");
	expect_error(F, "frame", "[]", "frame: expected a non-empty array of outputs");
	expect_error(F, "arrays.surf0.surface", "false",
	             "arrays.surf0: an array needs \"texture\" or \"surface\": true");
}

static void test_gpu_manifest__invalid_json_located(void **state)
{
	(void)state;
	const char text[] = "{\n  \"layer\": \"x\",\n  \"module\" \"m\"\n}\n";
	Manifest m;
	Err e = ERR_INIT;
	assert_int_equal(mf_parse("l.json", text, strlen(text), &m, &e), -1);
	assert_non_null(strstr(err_msg(&e), "l.json:3:"));
	assert_non_null(strstr(err_msg(&e), "invalid JSON"));
	err_release(&e);
}

static void test_gpu_manifest__duplicate_key(void **state)
{
	(void)state;
	const char text[] = "{\"layer\": \"x\", \"layer\": \"y\"}";
	Manifest m;
	Err e = ERR_INIT;
	assert_int_equal(mf_parse("l.json", text, strlen(text), &m, &e), -1);
	assert_non_null(strstr(err_msg(&e), "key 'layer' given twice"));
	err_release(&e);
}

/* ---- the parameter block ------------------------------------------------------ */

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void test_gpu_manifest__param_block_layout(void **state)
{
	(void)state;
	Manifest m;
	Err e = ERR_INIT;
	assert_int_equal(mf_parse(F, good, strlen(good), &m, &e), 0);
	uint64_t addr[4] = {0x7f0000000000ull, 0x7f0010000000ull, 0x7f0020000000ull,
	                    0x7f0030000000ull};
	uint64_t tex[2] = {0x1111, 0}, surf[2] = {0, 0x2222};
	unsigned char block[144];
	memset(block, 0xee, sizeof block);
	mf_param_block(&m.launches[0], addr, tex, surf, block);
	assert_int_equal(le(block + 0, 4), 80);
	assert_int_equal(le(block + 4, 4), 0);          /* gaps are zero */
	assert_int_equal(le(block + 8, 8), 0x7f0000000000ull);
	assert_int_equal(le(block + 48, 8), 0x7f0000000000ull + 39567360);
	assert_int_equal(le(block + 80, 2), 0);
	assert_int_equal(le(block + 88, 8), 0x1111);
	assert_int_equal(le(block + 112, 8), 0x2222);
	for (int i = 120; i < 144; i++)
		assert_int_equal(block[i], 0);
	mf_release(&m);

	/* f32, s32 and u8 fields. */
	const char small[] =
		"{\"layer\": \"t\", \"module\": \"t.ptx\", \"entry\": \"k\","
		" \"buffers\": {\"o\": {\"size\": 16, \"init\": {\"kind\": \"zero\"}}},"
		" \"launches\": [{\"entry\": \"k\", \"grid\": [1,1,1], \"block\": [1,1,1],"
		"  \"params\": {\"size\": 16, \"fields\": ["
		"   {\"offset\": 0, \"kind\": \"f32\", \"value\": 1.5},"
		"   {\"offset\": 4, \"kind\": \"s32\", \"value\": -2},"
		"   {\"offset\": 8, \"kind\": \"u8\", \"value\": 255},"
		"   {\"offset\": 12, \"kind\": \"u32\", \"value\": 4294967295}]}}],"
		" \"frame\": [{\"name\": \"o\", \"buffer\": \"o\"}]}";
	assert_int_equal(mf_parse("t.json", small, strlen(small), &m, &e), 0);
	unsigned char b2[16];
	mf_param_block(&m.launches[0], addr, NULL, NULL, b2);
	assert_int_equal(le(b2, 4), 0x3fc00000);
	assert_int_equal(le(b2 + 4, 4), 0xfffffffe);
	assert_int_equal(b2[8], 255);
	assert_int_equal(b2[9], 0);
	assert_int_equal(le(b2 + 12, 4), 0xffffffffu);
	assert_null(m.oracle_path);
	assert_int_equal(m.frame_size, 16);
	mf_release(&m);
	err_release(&e);
}

/* ---- generator and f16 ---------------------------------------------------------- */

static void test_gpu_manifest__splitmix64_known_values(void **state)
{
	(void)state;
	/* Vigna's reference splitmix64.c, seeded 0 and 1234567. */
	uint64_t s = 0;
	assert_true(mf_splitmix64(&s) == 0xe220a8397b1dcdafull);
	assert_true(mf_splitmix64(&s) == 0x6e789e6aa1b965f4ull);
	s = 1234567;
	assert_true(mf_splitmix64(&s) == 6457827717110365317ull);
	assert_true(mf_splitmix64(&s) == 3203168211198807973ull);
	assert_true(mf_splitmix64(&s) == 9817491932198370423ull);
}

static void test_gpu_manifest__random_fill(void **state)
{
	(void)state;
	MfInit in = {.kind = MF_INIT_RANDOM, .seed = 1234567, .min = 0, .max = 256};
	unsigned char u8[3];
	mf_fill_random(&in, MF_U8, u8, 3);
	/* u = (x >> 11) * 2^-53; value = trunc(256 u) = the top 8 bits of x. */
	assert_int_equal(u8[0], (unsigned)(6457827717110365317ull >> 56));
	assert_int_equal(u8[1], (unsigned)(3203168211198807973ull >> 56));
	assert_int_equal(u8[2], (unsigned)(9817491932198370423ull >> 56));

	MfInit f = {.kind = MF_INIT_RANDOM, .seed = 1234567, .min = -1, .max = 1};
	float f32[2];
	mf_fill_random(&f, MF_F32, f32, sizeof f32);
	double u0 = (double)(6457827717110365317ull >> 11) * 0x1p-53;
	assert_true(f32[0] == (float)(-1 + u0 * 2));
	uint16_t h[2];
	mf_fill_random(&f, MF_F16, h, sizeof h);
	assert_int_equal(h[0], mf_f16_from_double(-1 + u0 * 2));
	for (int i = 0; i < 2; i++) {
		double v = mf_f16_to_double(h[i]);
		assert_true(v >= -1 && v <= 1);
	}
	/* Signed integers truncate toward zero. */
	MfInit s = {.kind = MF_INIT_RANDOM, .seed = 9, .min = -3, .max = 3};
	int8_t s8[64];
	mf_fill_random(&s, MF_S8, s8, sizeof s8);
	int neg = 0;
	for (int i = 0; i < 64; i++) {
		assert_true(s8[i] >= -3 && s8[i] <= 2);
		neg |= s8[i] < 0;
	}
	assert_true(neg);
}

static void test_gpu_manifest__f16_rounding(void **state)
{
	(void)state;
	assert_int_equal(mf_f16_from_double(1.0), 0x3c00);
	assert_int_equal(mf_f16_from_double(-2.0), 0xc000);
	assert_int_equal(mf_f16_from_double(0.1), 0x2e66);
	assert_int_equal(mf_f16_from_double(65504), 0x7bff);
	assert_int_equal(mf_f16_from_double(65519.99), 0x7bff);
	assert_int_equal(mf_f16_from_double(65520), 0x7c00);         /* ties to even: inf */
	assert_int_equal(mf_f16_from_double(1e10), 0x7c00);
	assert_int_equal(mf_f16_from_double(-INFINITY), 0xfc00);
	assert_true((mf_f16_from_double(NAN) & 0x7c00) == 0x7c00 &&
	            (mf_f16_from_double(NAN) & 0x3ff));
	assert_int_equal(mf_f16_from_double(1 + 0x1p-11), 0x3c00);    /* tie: even */
	assert_int_equal(mf_f16_from_double(1 + 3 * 0x1p-11), 0x3c02); /* tie: even (up) */
	assert_int_equal(mf_f16_from_double(1 + 0x1p-11 + 0x1p-30), 0x3c01);
	assert_int_equal(mf_f16_from_double(0x1p-14), 0x0400);        /* smallest normal */
	assert_int_equal(mf_f16_from_double(1023 * 0x1p-24), 0x03ff);
	assert_int_equal(mf_f16_from_double(1023.5 * 0x1p-24), 0x0400); /* tie: even, normal */
	assert_int_equal(mf_f16_from_double(0x1p-24), 0x0001);
	assert_int_equal(mf_f16_from_double(0x1p-25), 0x0000);        /* tie: even (zero) */
	assert_int_equal(mf_f16_from_double(0x1p-25 + 0x1p-40), 0x0001);
	assert_int_equal(mf_f16_from_double(-0.0), 0x8000);
	assert_int_equal(mf_f16_from_double(1e-300), 0x0000);
	/* Every half round-trips through double. */
	for (unsigned h = 0; h < 0x10000; h++) {
		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
			continue;   /* NaN */
		assert_int_equal(mf_f16_from_double(mf_f16_to_double((uint16_t)h)), h);
	}
#ifdef __FLT16_MAX__
	/* Against the compiler's own conversion, on many doubles. */
	uint64_t st = 42;
	for (int i = 0; i < 200000; i++) {
		uint64_t x = mf_splitmix64(&st);
		double d = ldexp((double)(x >> 11) * 0x1p-53, (int)(x % 48) - 30);
		if (x & 1)
			d = -d;
		_Float16 c = (_Float16)d;
		uint16_t bits;
		memcpy(&bits, &c, 2);
		if (mf_f16_from_double(d) != bits)
			fprintf(stderr, "%a: ours %04x, compiler %04x\n", d, mf_f16_from_double(d), bits);
		assert_int_equal(mf_f16_from_double(d), bits);
	}
#endif
}

/* ---- initial contents and folders ------------------------------------------------ */

static void test_gpu_manifest__init_images(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-mf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/w.bin", dir);
	Err e = ERR_INIT;
	assert_int_equal(write_file_atomic(path, "\x01\x02\x03", 3, &e), 0);
	Manifest m = {0};
	m.path = (char *)"x/layer.json";
	m.corpus = dir;
	MfInit in = {.kind = MF_INIT_FILE, .path = (char *)"w.bin"};
	unsigned char *img;
	assert_int_equal(gpu_init_image(&m, &in, MF_NOFMT, 6, "buffers.w", &img, &e), 0);
	assert_memory_equal(img, "\x01\x02\x03\0\0\0", 6);
	free(img);
	assert_int_equal(gpu_init_image(&m, &in, MF_NOFMT, 2, "buffers.w", &img, &e), -1);
	assert_non_null(strstr(err_msg(&e), "x/layer.json: buffers.w.init.path:"));
	assert_non_null(strstr(err_msg(&e), "holds 3 bytes, more than the 2 it fills"));
	in.path = (char *)"missing.bin";
	assert_int_equal(gpu_init_image(&m, &in, MF_NOFMT, 6, "buffers.w", &img, &e), -1);
	assert_non_null(strstr(err_msg(&e), "missing.bin"));
	MfInit z = {.kind = MF_INIT_ZERO};
	assert_int_equal(gpu_init_image(&m, &z, MF_NOFMT, 6, "buffers.z", &img, &e), 0);
	assert_null(img);
	unlink(path);
	rmdir(dir);
	err_release(&e);
}

/* What the splicer asks of a layer's manifest: its module, entry and
 * corpus, through the layout's LayoutLayerFn; a manifest with a mistake is
 * refused there too. */
static void test_gpu_manifest__layout_layer(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-mf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[512], layer[512];
	Err e = ERR_INIT;
	snprintf(p, sizeof p, "%s/corpus", dir);
	assert_int_equal(mkdir_p(p, &e), 0);
	snprintf(p, sizeof p, "%s/recipes/enc4", dir);
	assert_int_equal(mkdir_p(p, &e), 0);
	snprintf(layer, sizeof layer, "%s/recipes/enc4/layer.json", dir);
	assert_int_equal(write_file_atomic(layer, good, strlen(good), &e), 0);
	unsetenv("D4R_CORPUS");
	LayoutLayer l;
	LayoutLayerFn fn = mf_layout_layer;
	if (fn(layer, NULL, &l, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_string_equal(l.manifest, layer);
	assert_string_equal(l.module, "enc4/enc4.ptx");
	assert_string_equal(l.entry, "cuda_dldn_engine_swin_enc4_kernel");
	snprintf(p, sizeof p, "%s/corpus", dir);
	assert_non_null(l.corpus);
	assert_int_equal(strcmp(l.corpus + strlen(l.corpus) - 7, "/corpus"), 0);
	layout_layer_release(&l);

	assert_int_equal(write_file_atomic(layer, "{\"layer\": \"enc4\"} x", 19, &e), 0);
	assert_int_equal(fn(layer, NULL, &l, &e), -1);
	assert_non_null(strstr(err_msg(&e), "layer.json:1:19: text after the JSON document"));
	assert_null(l.module);
	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_manifest__reads_the_documented_example),
		cmocka_unit_test(test_gpu_manifest__field_outside_block),
		cmocka_unit_test(test_gpu_manifest__field_misaligned),
		cmocka_unit_test(test_gpu_manifest__fields_overlap),
		cmocka_unit_test(test_gpu_manifest__fields_out_of_order_overlap),
		cmocka_unit_test(test_gpu_manifest__unknown_key),
		cmocka_unit_test(test_gpu_manifest__wrong_type),
		cmocka_unit_test(test_gpu_manifest__missing_key),
		cmocka_unit_test(test_gpu_manifest__out_of_range),
		cmocka_unit_test(test_gpu_manifest__unknown_references),
		cmocka_unit_test(test_gpu_manifest__buffer_bounds),
		cmocka_unit_test(test_gpu_manifest__random_ranges),
		cmocka_unit_test(test_gpu_manifest__layer_and_paths),
		cmocka_unit_test(test_gpu_manifest__outputs),
		cmocka_unit_test(test_gpu_manifest__invalid_json_located),
		cmocka_unit_test(test_gpu_manifest__duplicate_key),
		cmocka_unit_test(test_gpu_manifest__param_block_layout),
		cmocka_unit_test(test_gpu_manifest__splitmix64_known_values),
		cmocka_unit_test(test_gpu_manifest__random_fill),
		cmocka_unit_test(test_gpu_manifest__f16_rounding),
		cmocka_unit_test(test_gpu_manifest__init_images),
		cmocka_unit_test(test_gpu_manifest__layout_layer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
