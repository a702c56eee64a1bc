/*
 * run.c - `d4r-splice run LAYER`: run one module's launch sequence on the
 * GPU, write its frame, say whether it matches the oracle.
 *
 * The module is the manifest's (in the corpus folder) unless --module
 * names another PTX file.  Before the JIT it is reduced to the entries the
 * launches use (reduce.h; line numbers kept).  The work runs in a child
 * process (gpu.h), so a fault or a hang is reported, not fatal.
 *
 * Several --module options run several modules in one job, in order, in
 * one child and one context (gpu.h): their timings alternate, so the ratio
 * to the first module is measured in the same run, and a module that
 * faults or hangs leaves the results of those before it standing.  The
 * i-th --frame goes with the i-th module.
 *
 * Exit: 0 every module ran and its frame matches the oracle (or the
 * manifest has none: then no verdict is printed), 1 every module ran and
 * some frame differs from the oracle, 2 error, fault or hang of any module.
 * An oracle the manifest names must be there with the manifest's sha256
 * (exit 2 otherwise, before any GPU work), and no --frame or --diff-image
 * may be one of the inputs (base/file.h).  With --json every exit path
 * after the options prints one JSON object, errors included.
 */
#include "cmd/cmd.h"

#include "base/file.h"
#include "base/layout.h"
#include "base/sha256.h"
#include "gpu/frame.h"
#include "gpu/gpu.h"
#include "gpu/layer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {
	"run LAYER [--module FILE [--frame FILE]]... [options]",
	NULL,
};

/* Appends text with every line after the first indented by `indent`. */
static void add_indented(StrBuf *sb, const char *text, const char *indent)
{
	for (const char *p = text; *p; p++) {
		sb_addc(sb, *p);
		if (*p == '\n' && p[1])
			sb_adds(sb, indent);
	}
}

#define MAX_MODULES 8

/* The paths of a repeated option (--module, --frame), in order. */
typedef struct {
	const char *v[MAX_MODULES];
	size_t n;
} PathList;

static int add_path(const Opt *o, const char *word, Err *e)
{
	PathList *l = o->value;
	if (l->n == MAX_MODULES)
		return err_set(e, "'%s': at most %d may be given", word, MAX_MODULES);
	l->v[l->n++] = word;
	return 0;
}

typedef struct {
	const char *path;       /* as given, or the corpus path */
	char *owned;            /* malloc'd path when it came from the manifest */
	const char *frame_out;
	MapFile ptx;
	int mapped;
	StrBuf reduced;
	size_t nentries, removed;
	int verdict;            /* -1 no oracle, 0 matches, 1 differs */
	FrameDiff fd;
	int have_diff;
} RunModule;

/* Reads a module and reduces it to the launched entries (which must all be
 * there, --no-reduce or not). */
static int load_module(const Manifest *m, RunModule *rm, Err *e)
{
	if (map_open(&rm->ptx, rm->path, e) < 0)
		return -1;
	rm->mapped = 1;
	return gpu_reduce_text(m, rm->path, rm->ptx.p, rm->ptx.n, &rm->reduced, &rm->nentries,
	                       &rm->removed, e);
}

/* An error: on stderr, and with --json as the one JSON object on stdout
 * (CI reads stdout). */
static int run_fail(bool json, const char *layer, const char *msg)
{
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "layer", layer ? layer : "");
		cJSON_AddStringToObject(o, "status", "error");
		cJSON_AddStringToObject(o, "message", msg);
		cmd_json_print(o, EXIT_ERROR);
	}
	return cmd_fail("%s", msg);
}

int cmd_run(int argc, char **argv)
{
	const char *corpus = NULL, *diff_image = NULL;
	RunModule mods[MAX_MODULES];
	memset(mods, 0, sizeof mods);
	PathList modules = {0}, frames = {0};
	unsigned runs = GPU_DEFAULT_RUNS, device = 0;
	double timeout = 60;
	bool no_cache = false, json = false, no_reduce = false, jit_log = false;
	const Opt opts[] = {
		OPT_CALLBACK(0, "module", &modules, "FILE", add_path,
		             "a PTX file to run (default the manifest's); repeats"),
		OPT_CALLBACK(0, "frame", &frames, "FILE", add_path,
		             "write the frame of the module of the same rank"),
		OPT_STRING(0, "corpus", &corpus, "DIR", "the corpus folder"),
		OPT_UINT(0, "runs", &runs, "N", 0, 100000,
		         "timed runs after the warm-up (default 20)"),
		OPT_CALLBACK(0, "timeout", &timeout, "S", opt_seconds,
		             "kill the launches after S seconds (default 60)"),
		OPT_FLAG(0, "no-cache", &no_cache,
		         "neither read nor write the compiled-image cache"),
		OPT_FLAG(0, "no-reduce", &no_reduce, "hand the whole module to the JIT"),
		OPT_UINT(0, "device", &device, "N", 0, 1024,
		         "the CUDA device (default 0)"),
		OPT_STRING(0, "diff-image", &diff_image, "FILE.png",
		           "draw where a frame differs from the oracle"),
		OPT_FLAG(0, "jit-log", &jit_log, "print the JIT's info log"),
		OPT_FLAG(0, "json", &json, "one JSON object"),
		OPT_END(),
	};
	OptParse op = {.verb = "run", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, 1, "no layer given"))
		return EXIT_ERROR;
	const char *layer = argv[0];
	size_t nmods = modules.n, nframes = frames.n;
	for (size_t k = 0; k < nmods; k++)
		mods[k].path = modules.v[k];
	if (nframes > MAX(nmods, 1))
		return opt_usage_error(&op, "%zu --frame for %zu module%s", nframes,
		                       MAX(nmods, 1), MAX(nmods, 1) == 1 ? "" : "s");
	Err e = ERR_INIT;
	Manifest m;
	char *path = NULL;
	GpuResult res = {0};
	GpuModuleSrc srcs[MAX_MODULES];
	int have_manifest = 0, have_res = 0, have_lay = 0;
	int rc = EXIT_ERROR;
	char *oracle_file = NULL, *oracle = NULL;
	size_t oracle_len = 0;
	FrameLayout lay = {0};
	StrBuf notes = STRBUF_INIT, o = STRBUF_INIT;

	path = layout_find_layer(layer, &e);
	if (!path) {
		run_fail(json, layer, err_msg(&e));
		goto out;
	}
	if (corpus) {
		char *c = layout_corpus_dir(corpus, path, &e);
		if (!c) {
			run_fail(json, layer, err_msg(&e));
			goto out;
		}
		free(c);
	}
	if (mf_load(path, corpus, &m, &e) < 0) {
		run_fail(json, layer, err_msg(&e));
		goto out;
	}
	have_manifest = 1;
	if (!nmods) {
		if (mf_corpus_path(&m, m.module, &mods[0].owned, &e) < 0) {
			err_set(&e, "%s: module: %s", path, err_msg(&e));
			run_fail(json, m.layer, err_msg(&e));
			goto out;
		}
		mods[0].path = mods[0].owned;
		nmods = 1;
	}
	/* The outputs: none may be an input (checked before any work). */
	gpu_layer_inputs(&m, NULL);
	for (size_t k = 0; k < nmods; k++)
		file_input_add(mods[k].path, "module");
	for (size_t k = 0; k < nframes; k++)
		if (out_check(frames.v[k], &e) < 0) {
			run_fail(json, m.layer, err_msg(&e));
			goto out;
		}
	if (diff_image && out_check(diff_image, &e) < 0) {
		run_fail(json, m.layer, err_msg(&e));
		goto out;
	}
	/* What needs no GPU: init files, the oracle the manifest names (its
	 * file must be there, with the manifest's sha256), the launch entries. */
	if (gpu_layer_precheck(&m, &e) < 0) {
		run_fail(json, m.layer, err_msg(&e));
		goto out;
	}
	if (m.oracle_path) {
		unsigned char *buf;
		if (gpu_read_oracle(&m, NULL, &buf, &oracle_len, &oracle_file, &e) < 0) {
			run_fail(json, m.layer, err_msg(&e));
			goto out;
		}
		oracle = (char *)buf;
		frame_layout_from_manifest(&m, &lay);
		have_lay = 1;
	}
	for (size_t k = 0; k < nmods; k++) {
		mods[k].frame_out = k < nframes ? frames.v[k] : NULL;
		if (load_module(&m, &mods[k], &e) < 0) {
			run_fail(json, m.layer, err_msg(&e));
			goto out;
		}
		if (no_reduce)
			mods[k].removed = 0;   /* the whole module goes to the JIT */
		srcs[k] = (GpuModuleSrc){.name = mods[k].path,
		                         .ptx = no_reduce ? mods[k].ptx.p : mods[k].reduced.p,
		                         .ptx_len = no_reduce ? mods[k].ptx.n : mods[k].reduced.n};
	}

	GpuJob job = {.manifest = &m, .modules = srcs, .nmodules = nmods,
	              .runs = (unsigned)runs, .warmup = runs ? GPU_DEFAULT_WARMUP : 0,
	              .timeout_s = timeout, .no_cache = no_cache, .device = (int)device};
	have_res = 1;
	if (gpu_job_run(&job, &res, &e) < 0) {
		run_fail(json, m.layer, err_msg(&e));
		goto out;
	}
	int any_bad = 0, any_differs = 0, image_done = 0;
	for (size_t k = 0; k < nmods; k++) {
		GpuModuleResult *mr = &res.mods[k];
		RunModule *rm = &mods[k];
		rm->verdict = -1;
		if (mr->status != GPU_OK) {
			any_bad = 1;
			continue;
		}
		if (rm->frame_out && write_file_atomic(rm->frame_out, mr->frame, mr->frame_len, &e) < 0) {
			run_fail(json, m.layer, err_msg(&e));
			goto out;
		}
		if (!oracle)
			continue;
		rm->verdict = strcmp(mr->sha256, m.oracle_sha256) != 0;
		any_differs |= rm->verdict;
		if (rm->verdict) {
			frame_compare(&lay, (unsigned char *)oracle, oracle_len, mr->frame, mr->frame_len,
			              &rm->fd);
			rm->have_diff = 1;
			if (diff_image && !image_done) {
				image_done = 1;
				if (frame_diff_image(diff_image, &lay, (unsigned char *)oracle, mr->frame,
				                     MIN(oracle_len, mr->frame_len), &rm->fd, &e) < 0)
					sb_addf(&notes, "d4r-splice: %s\n", err_msg(&e));
			}
		}
	}

	const GpuModuleResult *first = &res.mods[0];
	if (json) {
		sb_adds(&o, "{\"layer\": ");
		sb_add_json(&o, m.layer);
		sb_adds(&o, ", \"device\": ");
		sb_add_json(&o, res.device);
		sb_addf(&o, ", \"sm\": \"%d%d\", \"driver_version\": %d", res.cc_major, res.cc_minor,
		        res.driver_version);
		sb_addf(&o, ", \"status\": \"%s\"", gpu_status_name(res.status));
		if (res.message) {
			sb_adds(&o, ", \"message\": ");
			sb_add_json(&o, res.message);
		}
		if (res.timing_status != GPU_OK) {
			sb_addf(&o, ", \"timing_status\": \"%s\", \"timing_message\": ",
			        gpu_status_name(res.timing_status));
			sb_add_json(&o, res.timing_message);
		}
		sb_addf(&o, ", \"setup_seconds\": %.6f, \"host_seconds\": %.6f, "
		            "\"wall_seconds\": %.6f, \"modules\": [",
		        res.setup_seconds, res.host_seconds, res.wall_seconds);
		for (size_t k = 0; k < nmods; k++) {
			const GpuModuleResult *mr = &res.mods[k];
			const RunModule *rm = &mods[k];
			sb_adds(&o, k ? ", {\"module\": " : "{\"module\": ");
			sb_add_json(&o, rm->path);
			sb_addf(&o, ", \"status\": \"%s\"", gpu_status_name(mr->status));
			if (mr->status != GPU_OK) {
				sb_adds(&o, ", \"message\": ");
				sb_add_json(&o, mr->message);
			}
			sb_addf(&o, ", \"entries\": %zu, \"entries_removed\": %zu", rm->nentries,
			        rm->removed);
			sb_addf(&o, ", \"jit_seconds\": %.6f, \"jit_cached\": %s", mr->jit_seconds,
			        mr->jit_cached ? "true" : "false");
			if (mr->status == GPU_OK)
				sb_addf(&o, ", \"frame_bytes\": %zu, \"sha256\": \"%s\", \"frame_run_ms\": %.6f",
				        mr->frame_len, mr->sha256, mr->frame_run_ms);
			if (mr->times.n) {
				sb_addf(&o, ", \"runs\": %u, \"median_ms\": %.6f, \"min_ms\": %.6f, "
				            "\"max_ms\": %.6f, \"repeatable\": %s",
				        mr->times.n, mr->times.median_ms, mr->times.min_ms, mr->times.max_ms,
				        mr->repeatable ? "true" : "false");
				if (k && first->times.n && first->times.median_ms > 0)
					sb_addf(&o, ", \"ratio_to_first\": %.6f",
					        mr->times.median_ms / first->times.median_ms);
			}
			sb_addf(&o, ", \"oracle\": %s",
			        rm->verdict < 0 ? "null" : rm->verdict ? "\"differs\"" : "\"matches\"");
			if (rm->have_diff) {
				sb_adds(&o, ", \"diff\": {");
				frame_diff_json(&lay, &rm->fd, &o);
				sb_adds(&o, "}");
			}
			if (jit_log) {
				sb_adds(&o, ", \"jit_log\": ");
				sb_add_json(&o, mr->jit_log);
			}
			sb_adds(&o, "}");
		}
		sb_adds(&o, "]}\n");
	} else {
		sb_addf(&o, "layer %s", m.layer);
		if (res.device[0])
			sb_addf(&o, " on %s (sm_%d%d), driver %d", res.device, res.cc_major, res.cc_minor,
			        res.driver_version);
		sb_addc(&o, '\n');
		for (size_t k = 0; k < nmods; k++) {
			const GpuModuleResult *mr = &res.mods[k];
			const RunModule *rm = &mods[k];
			sb_addf(&o, "module %s", rm->path);
			if (!no_reduce)
				sb_addf(&o, " (%zu entr%s, %zu removed before the JIT)", rm->nentries,
				        rm->nentries == 1 ? "y" : "ies", rm->removed);
			sb_addc(&o, '\n');
			if (mr->status != GPU_OK) {
				sb_addf(&o, "  %s: ", gpu_status_name(mr->status));
				add_indented(&o, mr->message, "    ");
				sb_addc(&o, '\n');
				continue;
			}
			sb_addf(&o, "  jit: %.3f s%s\n", mr->jit_seconds,
			        mr->jit_cached ? " (compiled image from the cache)" : "");
			if (jit_log && mr->jit_log[0])
				sb_addf(&o, "  jit log:\n%s\n", mr->jit_log);
			if (mr->times.n) {
				sb_addf(&o, "  kernel: median %.4f ms, min %.4f, max %.4f over %u runs",
				        mr->times.median_ms, mr->times.min_ms, mr->times.max_ms,
				        mr->times.n);
				if (k && first->times.n && first->times.median_ms > 0)
					sb_addf(&o, "; %.3fx the first module",
					        mr->times.median_ms / first->times.median_ms);
				sb_addc(&o, '\n');
				if (mr->repeat_checked && !mr->repeatable)
					sb_adds(&o, "  WARNING: the frame changed between runs (not "
					            "deterministic)\n");
			} else {
				sb_addf(&o, "  kernel: %.4f ms (one run)\n", mr->frame_run_ms);
			}
			sb_addf(&o, "  frame: %zu bytes, sha256 %s%s%s\n", mr->frame_len, mr->sha256,
			        rm->frame_out ? " -> " : "", rm->frame_out ? rm->frame_out : "");
			if (rm->verdict < 0)
				sb_adds(&o, "  oracle: none in the manifest\n");
			else if (!rm->verdict)
				sb_adds(&o, "  oracle: matches\n");
			else {
				sb_addf(&o, "  oracle: DIFFERS (expected sha256 %s)\n", m.oracle_sha256);
				if (rm->have_diff) {
					StrBuf d = STRBUF_INIT;
					frame_diff_describe(&lay, &rm->fd, &d);
					for (char *line = strtok(d.p, "\n"); line; line = strtok(NULL, "\n"))
						sb_addf(&o, "  %s\n", line);
					sb_release(&d);
				}
			}
		}
		if (res.timing_status != GPU_OK)
			sb_addf(&o, "timing: %s: %s\n", gpu_status_name(res.timing_status),
			        res.timing_message);
		sb_addf(&o, "overhead: setup %.3f s, host %.3f s; wall %.3f s\n", res.setup_seconds,
		        res.host_seconds, res.wall_seconds);
	}
	if (any_bad || res.timing_status != GPU_OK)
		rc = EXIT_ERROR;
	else
		rc = any_differs ? EXIT_DIFFERS : EXIT_OK;
	if (json)
		cmd_json_print_text(o.p, rc);
	else
		fputs(o.p, stdout);
	if (notes.n)
		fputs(notes.p, stderr);
	if (rc == EXIT_ERROR)
		cmd_fail("%s: %s", gpu_status_name(res.status), res.message ? res.message : "");
out:
	for (size_t k = 0; k < nmods; k++) {
		if (mods[k].mapped)
			map_close(&mods[k].ptx);
		sb_release(&mods[k].reduced);
		if (mods[k].have_diff)
			frame_diff_release(&mods[k].fd);
		free(mods[k].owned);
	}
	if (have_res)
		gpu_result_release(&res);
	if (have_lay)
		frame_layout_release(&lay);
	if (have_manifest)
		mf_release(&m);
	sb_release(&notes);
	sb_release(&o);
	free(oracle);
	free(oracle_file);
	free(path);
	err_release(&e);
	return rc;
}
