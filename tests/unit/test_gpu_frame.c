/*
 * test_gpu_frame.c - frame comparison, statistics, --layout specs and the
 * diff image (written, then read back with libpng).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/frame.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_gpu_frame__identical(void **state)
{
	(void)state;
	unsigned char a[64];
	for (int i = 0; i < 64; i++)
		a[i] = (unsigned char)i;
	FrameDiff d;
	assert_int_equal(frame_compare(NULL, a, 64, a, 64, &d), 0);
	assert_int_equal(d.bytes_differ, 0);
	assert_int_equal(d.first_off, -1);
	StrBuf sb = STRBUF_INIT;
	frame_diff_describe(NULL, &d, &sb);
	assert_string_equal(sb.p, "frames are identical");
	sb_release(&sb);
	frame_diff_release(&d);
}

static void put_f16(unsigned char *p, double v)
{
	uint16_t h = mf_f16_from_double(v);
	p[0] = (unsigned char)h;
	p[1] = (unsigned char)(h >> 8);
}

static void test_gpu_frame__first_difference_mapped_to_pixel(void **state)
{
	(void)state;
	FrameLayout lay;
	Err e = ERR_INIT;
	/* rgba: 4x2 pixels of 4 u8 (32 bytes); surf: 2x2 of 2 f16 (16 bytes). */
	assert_int_equal(frame_layout_parse("rgba:u8:4x2x4,surf:f16:2x2x2", &lay, &e), 0);
	assert_int_equal(lay.n, 2);
	assert_int_equal(lay.size, 48);
	assert_int_equal(lay.v[1].off, 32);
	unsigned char a[48] = {0}, b[48] = {0};
	/* rgba pixel (3, 1) channel 2: element (1*4+3)*4+2 = 30. */
	b[30] = 7;
	b[31] = 9;
	/* surf element 5 = pixel (0, 1) channel 1: 1.0 vs 1.5 and 2.0 vs 2.0009765625. */
	put_f16(a + 32 + 10, 1.0);
	put_f16(b + 32 + 10, 1.5);
	put_f16(a + 32 + 12, 2.0);
	put_f16(b + 32 + 12, 2.0 + 0x1p-9);
	FrameDiff d;
	assert_int_equal(frame_compare(&lay, a, 48, b, 48, &d), 1);
	assert_int_equal(d.first_off, 30);
	assert_int_equal(d.first_output, 0);
	assert_int_equal(d.first_x, 3);
	assert_int_equal(d.first_y, 1);
	assert_int_equal(d.first_c, 2);
	assert_int_equal(d.outs[0].bytes_differ, 2);
	assert_int_equal(d.outs[0].elems_differ, 2);
	assert_true(d.outs[0].max_abs == 9);
	assert_int_equal(d.outs[0].max_elem, 31);
	assert_int_equal(d.outs[1].elems_differ, 2);
	assert_true(d.outs[1].max_abs == 0.5);
	assert_int_equal(d.outs[1].max_elem, 5);
	assert_int_equal(d.bytes_differ, 2 + d.outs[1].bytes_differ);
	StrBuf sb = STRBUF_INIT;
	frame_diff_describe(&lay, &d, &sb);
	assert_non_null(strstr(sb.p, "first difference at byte 30 (output 'rgba' byte 30, pixel (3, 1) channel 2)"));
	assert_non_null(strstr(sb.p, "surf: "));
	assert_non_null(strstr(sb.p, "max |a-b| 0.5 at element 5"));
	sb_reset(&sb);
	frame_diff_json(&lay, &d, &sb);
	assert_non_null(strstr(sb.p, "\"identical\": false"));
	assert_non_null(strstr(sb.p, "\"x\": 3, \"y\": 1, \"channel\": 2"));
	sb_release(&sb);
	frame_diff_release(&d);

	/* Only the second output differs: the offset is placed there. */
	b[30] = b[31] = 0;
	assert_int_equal(frame_compare(&lay, a, 48, b, 48, &d), 1);
	assert_int_equal(d.first_output, 1);
	assert_int_equal(d.first_x, 0);
	assert_int_equal(d.first_y, 1);
	assert_int_equal(d.first_c, 1);
	frame_diff_release(&d);
	frame_layout_release(&lay);
}

static void test_gpu_frame__f32_and_nan(void **state)
{
	(void)state;
	FrameLayout lay;
	Err e = ERR_INIT;
	assert_int_equal(frame_layout_parse("v:f32:16", &lay, &e), 0);
	float a[4] = {1, 2, 3, 4}, b[4] = {1, 2.25f, 3, 0};
	b[3] = __builtin_nanf("");
	FrameDiff d;
	assert_int_equal(frame_compare(&lay, (unsigned char *)a, 16, (unsigned char *)b, 16, &d), 1);
	assert_int_equal(d.outs[0].elems_differ, 2);
	assert_true(d.outs[0].max_abs == 0.25);
	assert_int_equal(d.outs[0].max_elem, 1);
	assert_true(d.outs[0].nan_mismatch);
	frame_diff_release(&d);
	frame_layout_release(&lay);
}

static void test_gpu_frame__sizes_differ(void **state)
{
	(void)state;
	unsigned char a[4] = {1, 2, 3, 4};
	FrameDiff d;
	assert_int_equal(frame_compare(NULL, a, 4, a, 3, &d), 1);
	assert_true(d.size_differs);
	assert_int_equal(d.bytes_differ, 0);
	frame_diff_release(&d);
}

static void test_gpu_frame__layout_errors(void **state)
{
	(void)state;
	FrameLayout lay;
	Err e = ERR_INIT;
	assert_int_equal(frame_layout_parse("rgba:u9:4x4x4", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "unknown format 'u9'"));
	assert_int_equal(frame_layout_parse("rgba", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "is not NAME:FORMAT:WxHxC"));
	assert_int_equal(frame_layout_parse("a:f16:3", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "not a whole number of 'f16' elements"));
	assert_int_equal(frame_layout_parse("a:u8:4xx", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "bad shape '4xx'"));
	assert_int_equal(frame_layout_parse("a:u8:0x5x1", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "bad shape '0x5x1'"));
	assert_int_equal(frame_layout_parse("a:u8:-4x5", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "bad shape '-4x5'"));
	assert_int_equal(frame_layout_parse("a:u8:-4", &lay, &e), -1);
	assert_int_equal(frame_layout_parse(",", &lay, &e), -1);
	assert_non_null(strstr(err_msg(&e), "empty spec"));
	assert_int_equal(frame_layout_parse("a:bytes:10,b:u16:2x3", &lay, &e), 0);
	assert_int_equal(lay.size, 10 + 12);
	assert_int_equal(lay.v[1].channels, 1);
	frame_layout_release(&lay);
	err_release(&e);
}

static void test_gpu_frame__diff_image_read_back(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-frame-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/d.png", dir);
	FrameLayout lay;
	Err e = ERR_INIT;
	assert_int_equal(frame_layout_parse("head:bytes:8,img:u8:5x3x4", &lay, &e), 0);
	unsigned char a[8 + 60], b[8 + 60];
	for (int i = 0; i < 68; i++)
		a[i] = b[i] = 255;
	b[8 + (2 * 5 + 4) * 4 + 3] = 0;    /* pixel (4, 2), alpha */
	FrameDiff d;
	assert_int_equal(frame_compare(&lay, a, 68, b, 68, &d), 1);
	assert_int_equal(frame_diff_image(path, &lay, a, b, 68, &d, &e), 0);

	png_image img;
	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_file(&img, path));
	assert_int_equal(img.width, 5);
	assert_int_equal(img.height, 3);
	img.format = PNG_FORMAT_RGB;
	unsigned char px[5 * 3 * 3];
	assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 5; x++) {
			unsigned char *q = px + (y * 5 + x) * 3;
			if (x == 4 && y == 2) {
				assert_int_equal(q[0], 255);
				assert_int_equal(q[1], 0);
				assert_int_equal(q[2], 0);
			} else {
				/* Dimmed white: grey, well below full brightness. */
				assert_int_equal(q[0], q[1]);
				assert_int_equal(q[1], q[2]);
				assert_true(q[0] > 100 && q[0] < 160);
			}
		}
	/* Atomic: nothing but the image is left in the folder. */
	char cmd[300];
	snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
	assert_int_equal(system(cmd), 0);

	/* No output with a shape: a clear error, no file. */
	FrameLayout flat;
	assert_int_equal(frame_layout_parse("x:bytes:68", &flat, &e), 0);
	snprintf(path, sizeof path, "%s/e.png", dir);
	assert_int_equal(frame_diff_image(path, &flat, a, b, 68, &d, &e), -1);
	assert_non_null(strstr(err_msg(&e), "no output of the frame has a width and height"));
	assert_int_equal(access(path, F_OK), -1);
	frame_layout_release(&flat);
	frame_diff_release(&d);
	frame_layout_release(&lay);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	err_release(&e);
}

static void test_gpu_frame__layout_from_manifest(void **state)
{
	(void)state;
	const char text[] =
		"{\"layer\": \"t\", \"module\": \"t.ptx\", \"entry\": \"k\","
		" \"buffers\": {\"o\": {\"size\": 64, \"init\": {\"kind\": \"zero\"}}},"
		" \"arrays\": {\"s\": {\"width\": 2, \"height\": 2, \"channels\": 1, \"format\": \"f32\","
		"   \"init\": {\"kind\": \"zero\"}, \"surface\": true}},"
		" \"launches\": [{\"entry\": \"k\", \"grid\": [1,1,1], \"block\": [1,1,1],"
		"  \"params\": {\"size\": 0, \"fields\": []}}],"
		" \"frame\": [{\"name\": \"o\", \"buffer\": \"o\", \"offset\": 16, \"size\": 32,"
		"   \"format\": \"u16\", \"width\": 4, \"height\": 2, \"channels\": 2},"
		"  {\"name\": \"s\", \"array\": \"s\"}]}";
	Manifest m;
	Err e = ERR_INIT;
	assert_int_equal(mf_parse("t.json", text, strlen(text), &m, &e), 0);
	FrameLayout lay;
	frame_layout_from_manifest(&m, &lay);
	assert_int_equal(lay.n, 2);
	assert_int_equal(lay.size, 32 + 16);
	assert_int_equal(lay.v[0].format, MF_U16);
	assert_int_equal(lay.v[0].channels, 2);
	assert_int_equal(lay.v[1].off, 32);
	assert_int_equal(lay.v[1].format, MF_F32);
	frame_layout_release(&lay);
	mf_release(&m);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_frame__identical),
		cmocka_unit_test(test_gpu_frame__first_difference_mapped_to_pixel),
		cmocka_unit_test(test_gpu_frame__f32_and_nan),
		cmocka_unit_test(test_gpu_frame__sizes_differ),
		cmocka_unit_test(test_gpu_frame__layout_errors),
		cmocka_unit_test(test_gpu_frame__diff_image_read_back),
		cmocka_unit_test(test_gpu_frame__layout_from_manifest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
