/*
 * diff.c - `d4r-splice diff A B`: compare two frames on disk.
 *
 * The frames' layout (which outputs, formats and shapes) comes from a
 * layer's manifest (--layer) or a compact spec (--layout, frame.h); with
 * neither, the frames are compared as bytes.  Exit 0 identical, 1 differ,
 * 2 error (like cmp).  Either frame may be "-", standard input.
 */
#include "cmd/cmd.h"

#include "base/file.h"
#include "gpu/frame.h"
#include "gpu/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {"diff A B [options]", NULL};

/* After the options in --help: the layout spec. */
static void layout_help(FILE *f)
{
	fputs("\nSPEC: NAME:FORMAT:WxHxC[,...] or NAME:FORMAT:BYTES[,...],\n"
	      "      e.g. rgba:u8:512x512x4,surf0:f16:80x46x4\n", f);
}

int cmd_diff(int argc, char **argv)
{
	const char *layer = NULL, *layout = NULL, *image = NULL;
	bool json = false;
	const Opt opts[] = {
		OPT_STRING(0, "layer", &layer, "LAYER",
		           "the frames' layout from a layer's manifest"),
		OPT_STRING(0, "layout", &layout, "SPEC",
		           "the frames' layout, spelt out (below)"),
		OPT_STRING(0, "diff-image", &image, "FILE.png",
		           "draw where the frames differ (needs a layout)"),
		OPT_FLAG(0, "json", &json, "one JSON object"),
		OPT_END(),
	};
	OptParse op = {.verb = "diff", .usage = usage, .opts = opts,
	               .more_help = layout_help};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 2, 2, "give two frames, A and B") ||
	    opt_conflict(&op, "layer", "layout"))
		return EXIT_ERROR;
	if (image && !layer && !layout)
		return opt_fail(&op, "option '%s' needs '--layer' or '--layout' (the "
		                     "frame's width and height)",
		                opt_given(&op, "diff-image"));
	const char *files[2] = {argv[0], argv[1]};

	Err e = ERR_INIT;
	FrameLayout lay = {0};
	int have_lay = 0, rc = EXIT_ERROR;
	MapFile fa = {0}, fb = {0};
	int have_a = 0, have_b = 0;
	FrameDiff d = {0};
	int have_d = 0;
	file_input_add(files[0], "frame");
	file_input_add(files[1], "frame");
	if (layer) {
		Manifest m;
		if (mf_load_layer(layer, NULL, &m, &e) < 0) {
			cmd_fail("%s", err_msg(&e));
			goto out;
		}
		file_input_add(m.path, "manifest");
		frame_layout_from_manifest(&m, &lay);
		mf_release(&m);
		have_lay = 1;
	} else if (layout) {
		if (frame_layout_parse(layout, &lay, &e) < 0) {
			cmd_fail("%s", err_msg(&e));
			goto out;
		}
		have_lay = 1;
	}
	if (image && out_check(image, &e) < 0) {   /* never over a frame it reads */
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	if (map_open(&fa, files[0], &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	have_a = 1;
	if (map_open(&fb, files[1], &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	have_b = 1;
	if (have_lay) {
		for (int k = 0; k < 2; k++) {
			size_t n = k ? fb.n : fa.n;
			if (n != lay.size) {
				cmd_fail("'%s' is %zu bytes; the %s describes %llu", files[k], n,
				         layer ? "layer's frame" : "layout", (unsigned long long)lay.size);
				goto out;
			}
		}
	}
	int differ = frame_compare(have_lay ? &lay : NULL, (const unsigned char *)fa.p, fa.n,
	                           (const unsigned char *)fb.p, fb.n, &d);
	have_d = 1;
	StrBuf o = STRBUF_INIT;
	if (json) {
		sb_adds(&o, "{\"a\": ");
		sb_add_json(&o, files[0]);
		sb_adds(&o, ", \"b\": ");
		sb_add_json(&o, files[1]);
		sb_addf(&o, ", \"a_bytes\": %zu, \"b_bytes\": %zu, ", fa.n, fb.n);
		FrameOutput flat = {.name = (char *)"frame", .size = MIN(fa.n, fb.n), .format = MF_U8};
		FrameLayout one = {.v = &flat, .n = 1, .size = flat.size};
		frame_diff_json(have_lay ? &lay : &one, &d, &o);
		sb_adds(&o, "}\n");
	} else {
		FrameOutput flat = {.name = (char *)"frame", .size = MIN(fa.n, fb.n), .format = MF_U8};
		FrameLayout one = {.v = &flat, .n = 1, .size = flat.size};
		frame_diff_describe(have_lay ? &lay : &one, &d, &o);
		sb_addc(&o, '\n');
	}
	if (!json)
		fputs(o.p, stdout);
	if (image) {
		if (frame_diff_image(image, &lay, (const unsigned char *)fa.p,
		                     (const unsigned char *)fb.p, MIN(fa.n, fb.n), &d, &e) < 0) {
			cmd_fail("%s", err_msg(&e));
			sb_release(&o);
			goto out;
		}
	}
	rc = differ ? EXIT_DIFFERS : EXIT_OK;
	if (json) /* after the image: the document carries the exit status */
		cmd_json_print_text(o.p, rc);
	sb_release(&o);
out:
	if (have_d)
		frame_diff_release(&d);
	if (have_a)
		map_close(&fa);
	if (have_b)
		map_close(&fb);
	if (have_lay)
		frame_layout_release(&lay);
	err_release(&e);
	return rc;
}
