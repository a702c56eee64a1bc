/*
 * run.c - `d4r-splice run LAYER`: run one module's launch sequence on the
 * GPU, write its frame, say whether it matches the oracle.
 *
 * The module is the manifest's (in the corpus folder) unless --module
 * names another PTX file.  Before the JIT it is reduced to the entries the
 * launches use (reduce.h; line numbers kept).  The work runs in a child
 * process (gpu.h), so a fault or a hang is reported, not fatal.
 *
 * Exit: 0 ran and the frame matches the oracle (or the manifest has none),
 * 1 ran and the frame differs from the oracle, 2 error, fault or hang.
 */
#include "cmd/cmd.h"

#include "base/file.h"
#include "base/sha256.h"
#include "gpu/frame.h"
#include "gpu/gpu.h"
#include "gpu/reduce.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"d4r-splice run LAYER [--module FILE] [--frame OUT] [--corpus DIR] [--runs N]\n"
	"                      [--timeout S] [--no-cache] [--no-reduce] [--device N]\n"
	"                      [--diff-image F.png] [--jit-log] [--json]";

static void json_str(StrBuf *sb, const char *s)
{
	sb_addc(sb, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_addf(sb, "\\%c", c);
		else if (c < 0x20)
			sb_addf(sb, "\\u%04x", c);
		else
			sb_addc(sb, (char)c);
	}
	sb_addc(sb, '"');
}

static int parse_uint(const char *opt, const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > max || s[0] == '-') {
		cmd_fail("%s: '%s' is not a whole number in [0, %lu]", opt, s, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (!*s || *end || !(v > 0) || v > 86400) {
		cmd_fail("%s: '%s' is not a number of seconds in (0, 86400]", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	const char *layer = NULL, *module_path = NULL, *frame_out = NULL, *corpus = NULL;
	const char *diff_image = NULL;
	unsigned long runs = GPU_DEFAULT_RUNS, device = 0;
	double timeout = 60;
	bool no_cache = false, json = false, no_reduce = false, jit_log = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL                                                                      \
	do {                                                                              \
		if (!val)                                                                     \
			return cmd_fail("option '%s' needs a value", a), cmd_usage(usage);        \
		i++;                                                                          \
	} while (0)
		if (!strcmp(a, "--module")) {
			NEED_VAL;
			module_path = val;
		} else if (!strcmp(a, "--frame")) {
			NEED_VAL;
			frame_out = val;
		} else if (!strcmp(a, "--corpus")) {
			NEED_VAL;
			corpus = val;
		} else if (!strcmp(a, "--diff-image")) {
			NEED_VAL;
			diff_image = val;
		} else if (!strcmp(a, "--runs")) {
			NEED_VAL;
			if (parse_uint(a, val, 100000, &runs) < 0)
				return EXIT_ERROR;
		} else if (!strcmp(a, "--device")) {
			NEED_VAL;
			if (parse_uint(a, val, 1024, &device) < 0)
				return EXIT_ERROR;
		} else if (!strcmp(a, "--timeout")) {
			NEED_VAL;
			if (parse_seconds(a, val, &timeout) < 0)
				return EXIT_ERROR;
		} else if (!strcmp(a, "--no-cache")) {
			no_cache = true;
		} else if (!strcmp(a, "--no-reduce")) {
			no_reduce = true;
		} else if (!strcmp(a, "--jit-log")) {
			jit_log = true;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("usage: %s\n", usage);
			return EXIT_OK;
		} else if (a[0] == '-' && a[1]) {
			cmd_fail("unknown option '%s'", a);
			return cmd_usage(usage);
		} else if (!layer) {
			layer = a;
		} else {
			cmd_fail("unexpected argument '%s'", a);
			return cmd_usage(usage);
		}
#undef NEED_VAL
	}
	if (!layer)
		return cmd_usage(usage);

	Err e = ERR_INIT;
	Manifest m;
	MapFile ptx = {0};
	char *path = NULL, *mod_file = NULL;
	GpuFuncSpan *spans = NULL;
	size_t nspans = 0;
	StrBuf reduced = STRBUF_INIT;
	GpuResult res = {0};
	int have_manifest = 0, have_ptx = 0, have_res = 0;
	int rc = EXIT_ERROR;
	char *oracle_file = NULL, *oracle = NULL;
	size_t oracle_len = 0;

	path = mf_find_layer(layer, &e);
	if (!path) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	if (corpus) {
		char *c = mf_corpus_dir(corpus, path, &e);
		if (!c) {
			cmd_fail("%s", err_msg(&e));
			goto out;
		}
		free(c);
	}
	if (mf_load(path, corpus, &m, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	have_manifest = 1;
	if (module_path)
		mod_file = xstrdup(module_path);
	else if (mf_corpus_path(&m, m.module, &mod_file, &e) < 0) {
		cmd_fail("%s: module: %s", path, err_msg(&e));
		goto out;
	}
	if (map_open(&ptx, mod_file, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	have_ptx = 1;

	/* Reduce the module to the launched entries. */
	const char *text = ptx.p;
	size_t text_len = ptx.n;
	size_t nentries = 0, removed = 0;
	if (!no_reduce) {
		if (gpu_scan_entries(ptx.p, ptx.n, &spans, &nspans, &e) < 0) {
			cmd_fail("%s: %s", mod_file, err_msg(&e));
			goto out;
		}
		const char **keep = xcalloc(m.nlaunches + 1, sizeof(char *));
		size_t nkeep = 0;
		for (size_t i = 0; i < m.nlaunches; i++) {
			int dup = 0;
			for (size_t k = 0; k < nkeep; k++)
				dup |= !strcmp(keep[k], m.launches[i].entry);
			if (!dup)
				keep[nkeep++] = m.launches[i].entry;
		}
		int r = gpu_reduce_ptx(ptx.p, ptx.n, spans, nspans, keep, nkeep, &reduced, &e);
		free(keep);
		if (r < 0) {
			cmd_fail("%s: %s", mod_file, err_msg(&e));
			goto out;
		}
		nentries = nspans;
		removed = nspans - nkeep;
		text = reduced.p;
		text_len = reduced.n;
	}

	GpuModuleSrc src = {.name = mod_file, .ptx = text, .ptx_len = text_len};
	GpuJob job = {.manifest = &m, .modules = &src, .nmodules = 1, .runs = (unsigned)runs,
	              .warmup = runs ? GPU_DEFAULT_WARMUP : 0, .timeout_s = timeout,
	              .no_cache = no_cache, .device = (int)device};
	if (gpu_job_run(&job, &res, &e) < 0) {
		have_res = 1;
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	have_res = 1;
	GpuModuleResult *mr = &res.mods[0];

	/* The verdict against the oracle. */
	int verdict = -1;     /* -1 none, 0 matches, 1 differs */
	FrameLayout lay = {0};
	FrameDiff fd = {0};
	int have_diff = 0;
	StrBuf notes = STRBUF_INIT;
	if (mr->status == GPU_OK) {
		if (frame_out && write_file_atomic(frame_out, mr->frame, mr->frame_len, &e) < 0) {
			cmd_fail("%s", err_msg(&e));
			goto out;
		}
		if (m.oracle_path) {
			verdict = strcmp(mr->sha256, m.oracle_sha256) != 0;
			Err oe = ERR_INIT;
			if (mf_corpus_path(&m, m.oracle_path, &oracle_file, &oe) == 0 &&
			    read_file(oracle_file, &oracle, &oracle_len, &oe) == 0) {
				char osha[65];
				sha256_hex(oracle, oracle_len, osha);
				if (strcmp(osha, m.oracle_sha256))
					sb_addf(&notes, "note: oracle file '%s' has sha256 %s, not the "
					                "manifest's\n", oracle_file, osha);
				frame_layout_from_manifest(&m, &lay);
				frame_compare(&lay, (unsigned char *)oracle, oracle_len, mr->frame,
				              mr->frame_len, &fd);
				have_diff = 1;
			} else if (verdict) {
				sb_addf(&notes, "note: no oracle file to show where the frames differ: %s\n",
				        err_msg(&oe));
			}
			err_release(&oe);
			if (diff_image && have_diff &&
			    frame_diff_image(diff_image, &lay, (unsigned char *)oracle, mr->frame,
			                     MIN(oracle_len, mr->frame_len), &fd, &e) < 0)
				sb_addf(&notes, "note: %s\n", err_msg(&e));
		}
	}

	StrBuf o = STRBUF_INIT;
	if (json) {
		sb_adds(&o, "{\"layer\": ");
		json_str(&o, m.layer);
		sb_adds(&o, ", \"module\": ");
		json_str(&o, mod_file);
		sb_addf(&o, ", \"status\": \"%s\"", gpu_status_name(mr->status));
		if (mr->status != GPU_OK) {
			sb_adds(&o, ", \"message\": ");
			json_str(&o, mr->message);
		}
		sb_adds(&o, ", \"device\": ");
		json_str(&o, res.device);
		sb_addf(&o, ", \"sm\": %d%d, \"driver_version\": %d", res.cc_major, res.cc_minor,
		        res.driver_version);
		sb_addf(&o, ", \"entries\": %zu, \"entries_removed\": %zu", nentries, removed);
		sb_addf(&o, ", \"jit_seconds\": %.6f, \"jit_cached\": %s", mr->jit_seconds,
		        mr->jit_cached ? "true" : "false");
		if (mr->status == GPU_OK) {
			sb_addf(&o, ", \"frame_bytes\": %zu, \"sha256\": \"%s\"", mr->frame_len,
			        mr->sha256);
			sb_addf(&o, ", \"frame_run_ms\": %.6f", mr->frame_run_ms);
		}
		if (mr->times.n)
			sb_addf(&o, ", \"runs\": %u, \"median_ms\": %.6f, \"min_ms\": %.6f, "
			            "\"max_ms\": %.6f, \"repeatable\": %s",
			        mr->times.n, mr->times.median_ms, mr->times.min_ms, mr->times.max_ms,
			        mr->repeatable ? "true" : "false");
		if (res.timing_status != GPU_OK) {
			sb_addf(&o, ", \"timing_status\": \"%s\", \"timing_message\": ",
			        gpu_status_name(res.timing_status));
			json_str(&o, res.timing_message);
		}
		sb_addf(&o, ", \"setup_seconds\": %.6f, \"host_seconds\": %.6f, "
		            "\"wall_seconds\": %.6f",
		        res.setup_seconds, res.host_seconds, res.wall_seconds);
		sb_addf(&o, ", \"oracle\": %s",
		        verdict < 0 ? "null" : verdict ? "\"differs\"" : "\"matches\"");
		if (have_diff && verdict > 0) {
			sb_adds(&o, ", \"diff\": {");
			frame_diff_json(&lay, &fd, &o);
			sb_adds(&o, "}");
		}
		if (jit_log) {
			sb_adds(&o, ", \"jit_log\": ");
			json_str(&o, mr->jit_log);
		}
		sb_adds(&o, "}\n");
	} else {
		sb_addf(&o, "layer %s: %s", m.layer, mod_file);
		if (!no_reduce)
			sb_addf(&o, " (%zu entr%s, %zu removed before the JIT)", nentries,
			        nentries == 1 ? "y" : "ies", removed);
		sb_addc(&o, '\n');
		if (res.device[0])
			sb_addf(&o, "device: %s (sm_%d%d), driver %d\n", res.device, res.cc_major,
			        res.cc_minor, res.driver_version);
		if (mr->status == GPU_OK) {
			sb_addf(&o, "jit: %.3f s%s\n", mr->jit_seconds,
			        mr->jit_cached ? " (compiled image from the cache)" : "");
			if (jit_log && mr->jit_log[0])
				sb_addf(&o, "jit log:\n%s\n", mr->jit_log);
			if (mr->times.n)
				sb_addf(&o, "kernel: median %.4f ms, min %.4f, max %.4f over %u runs%s\n",
				        mr->times.median_ms, mr->times.min_ms, mr->times.max_ms,
				        mr->times.n,
				        mr->repeat_checked && !mr->repeatable
				            ? " (WARNING: the frame changed between runs)"
				            : "");
			else if (res.timing_status == GPU_OK)
				sb_addf(&o, "kernel: %.4f ms (one run)\n", mr->frame_run_ms);
			if (res.timing_status != GPU_OK)
				sb_addf(&o, "timing: %s: %s\n", gpu_status_name(res.timing_status),
				        res.timing_message);
			sb_addf(&o, "overhead: setup %.3f s, host %.3f s, wall %.3f s\n",
			        res.setup_seconds, res.host_seconds, res.wall_seconds);
			sb_addf(&o, "frame: %zu bytes, sha256 %s%s%s\n", mr->frame_len, mr->sha256,
			        frame_out ? " -> " : "", frame_out ? frame_out : "");
			if (verdict < 0)
				sb_adds(&o, "oracle: none in the manifest\n");
			else if (!verdict)
				sb_adds(&o, "oracle: matches\n");
			else {
				sb_addf(&o, "oracle: DIFFERS (expected sha256 %s)\n", m.oracle_sha256);
				if (have_diff) {
					frame_diff_describe(&lay, &fd, &o);
					sb_addc(&o, '\n');
				}
			}
		}
	}
	fputs(o.p, stdout);
	sb_release(&o);
	if (notes.n)
		fputs(notes.p, stderr);
	sb_release(&notes);
	if (have_diff) {
		frame_diff_release(&fd);
		frame_layout_release(&lay);
	}
	if (mr->status != GPU_OK) {
		cmd_fail("%s: %s", gpu_status_name(mr->status), mr->message);
		rc = EXIT_ERROR;
	} else {
		rc = verdict > 0 ? EXIT_DIFFERS : EXIT_OK;
	}
out:
	if (have_res)
		gpu_result_release(&res);
	if (spans)
		gpu_spans_free(spans, nspans);
	sb_release(&reduced);
	if (have_ptx)
		map_close(&ptx);
	if (have_manifest)
		mf_release(&m);
	free(oracle);
	free(oracle_file);
	free(mod_file);
	free(path);
	err_release(&e);
	return rc;
}
