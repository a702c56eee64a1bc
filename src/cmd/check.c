/*
 * check.c - `d4r-splice check LAYER [RECIPE...]`: the CI form of the main job.
 *
 * Every recipe of the layer (recipes/LAYER/NAME.json except layer.json), or the
 * ones named, is spliced (with --phases LIST [--variant NAME], the recipes of
 * those phases into one module, checked as one item); the spliced modules run
 * on the GPU against the
 * oracle, the JIT work spread over --jobs child processes; one line per
 * recipe; --junit FILE writes a JUnit XML report.  A module that faults or
 * hangs costs only itself: the modules queued behind it in the same child
 * are run again in a fresh one.
 *
 * --shard I/N keeps the I-th of N slices of the recipes, so a CI matrix
 * spreads a layer over machines; --json prints one JSON document instead
 * of the lines; a progress line on a terminal's stderr counts the modules.
 * --replay replays every recipe first (check_replay.c): the ones it proves
 * IDENTICAL keep that verdict and are not run; the rest run whole here, and
 * the lines, the JSON items and the JUnit test cases say how each recipe
 * was decided.
 *
 * Exit status: 0 every recipe identical, 1 some recipe differs, 2 an error
 * (a recipe that does not splice, a fault, a hang, no driver, no oracle).
 * Before the driver is touched: the recipes named exist, the report is not
 * one of the inputs, the init files fit, the oracle is there with the
 * manifest's sha256, the launch entries are in the module.
 *
 * Decisions:
 *  - A shard is a contiguous slice of the recipes sorted by file name
 *    (recipes [floor((I-1)n/N), floor(In/N)) of n): every machine computes
 *    the same slices from the same folder with no coordination, the N
 *    slices cover every recipe exactly once, and adding one recipe moves
 *    at most one recipe per slice boundary.  The original runs in every
 *    shard: each shard's verdicts rest on its own check of the oracle.
 *  - A shard's JUnit suite is named "d4r-splice check LAYER shard I/N", and
 *    its original's test case "(original) shard I/N", so the N files merge
 *    into one report without two test cases of the same name.
 */
#include "base/file.h"
#include "base/layout.h"
#include "base/progress.h"
#include "check_replay.h"
#include "cmd.h"
#include "gpu/frame.h"
#include "gpu/gpu.h"
#include "gpu/layer.h"
#include "splice/multi.h"
#include "splice/splice.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {"check LAYER [RECIPE...] [options]",
                                    "check LAYER --phases LIST [--variant NAME] [options]",
                                    NULL};

typedef struct {
	char *path;
	char *name;          /* file name for the report */
	StrBuf ptx;          /* reduced spliced module */
	SpliceResult sr;
	char *error;         /* splice or GPU error */
	GpuStatus status;
	int verdict;         /* -1 unknown, 0 identical, 1 differs */
	double jit_s, median_ms;
	unsigned runs;
	char sha256[65];
	StrBuf diff;
	int done;                     /* has a GPU result */
	GpuLogAttrs attrs;            /* the entry, from the verbose JIT log */
	const CheckReplayOutcome *rp; /* --replay: how replay decided it, or NULL */
	bool by_replay;               /* replay proved it identical: not run here */
} CheckItem;

typedef struct {
	const Manifest *mf;
	CheckItem *items;
	size_t n;
	size_t next;         /* next item to hand out (under lock) */
	unsigned per_job, runs;
	double timeout;
	bool no_cache;
	const unsigned char *oracle;
	size_t oracle_len;
	const FrameLayout *lay;
	pthread_mutex_t lock;
	char *fatal;         /* a job that could not start at all */
} Queue;

static void finish(Queue *q, CheckItem *it, const GpuModuleResult *r)
{
	it->done = 1;
	it->status = r->status;
	it->jit_s = r->jit_seconds;
	it->median_ms = r->times.median_ms;
	it->runs = r->times.n;
	memcpy(it->sha256, r->sha256, sizeof it->sha256);
	gpu_log_func_attrs(r->jit_log, q->mf->entry, &it->attrs);
	if (r->status != GPU_OK) {
		it->error = xstrdup(r->message ? r->message : gpu_status_name(r->status));
		return;
	}
	FrameDiff d = {0};
	it->verdict = frame_compare(q->lay, r->frame, r->frame_len, q->oracle, q->oracle_len, &d);
	if (it->verdict == 1)
		frame_diff_describe(q->lay, &d, &it->diff);
	frame_diff_release(&d);
}

/* Runs items [from, to) in one child; items after a fault or hang are left
 * not done, to be run again. */
static void run_batch(Queue *q, size_t *idx, size_t n)
{
	GpuModuleSrc *mods = xcalloc(n, sizeof *mods);
	for (size_t i = 0; i < n; i++) {
		CheckItem *it = &q->items[idx[i]];
		mods[i].name = it->name;
		mods[i].ptx = it->ptx.p;
		mods[i].ptx_len = it->ptx.n;
	}
	GpuJob job = {0};
	job.manifest = q->mf;
	job.modules = mods;
	job.nmodules = n;
	job.runs = q->runs;
	job.warmup = q->runs ? 2 : 0;
	job.timeout_s = q->timeout;
	job.no_cache = q->no_cache;
	job.verbose_jit = true; /* registers, stack, shared memory and spills in the log */
	GpuResult gr;
	memset(&gr, 0, sizeof gr);
	Err e = ERR_INIT;
	if (gpu_job_run(&job, &gr, &e) < 0) {
		pthread_mutex_lock(&q->lock);
		if (!q->fatal)
			q->fatal = xstrdup(err_msg(&e));
		pthread_mutex_unlock(&q->lock);
	} else {
		int broken = 0;
		for (size_t i = 0; i < n && i < gr.nmods; i++) {
			const GpuModuleResult *r = &gr.mods[i];
			if (broken)
				break; /* queued behind a fault or hang: run again */
			finish(q, &q->items[idx[i]], r);
			if (r->status == GPU_FAULT || r->status == GPU_HANG)
				broken = 1;
		}
	}
	gpu_result_release(&gr);
	err_release(&e);
	free(mods);
	Progress *pg = progress_current();
	for (size_t i = 0; i < n; i++)
		if (q->items[idx[i]].done)
			progress_step(pg, q->items[idx[i]].name);
}

static void *worker(void *arg)
{
	Queue *q = arg;
	size_t *idx = xcalloc(q->per_job + 1, sizeof(size_t));
	for (;;) {
		size_t n = 0;
		pthread_mutex_lock(&q->lock);
		while (n < q->per_job && q->next < q->n) {
			CheckItem *it = &q->items[q->next++];
			if (!it->error && !it->done)
				idx[n++] = (size_t)(it - q->items);
		}
		int stop = q->fatal != NULL;
		pthread_mutex_unlock(&q->lock);
		if (!n || stop)
			break;
		/* a batch ends early at a fault: re-run what stayed undone */
		while (n) {
			run_batch(q, idx, n);
			size_t k = 0;
			for (size_t i = 0; i < n; i++)
				if (!q->items[idx[i]].done)
					idx[k++] = idx[i];
			if (k == n || q->fatal)
				break;
			n = k;
		}
	}
	free(idx);
	return NULL;
}

static void xml_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 32 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

/* --phases: the recipes of the selection spliced into one module, reduced
 * into it->ptx; it->error says why not. */
static void phases_item(const Manifest *mf, const Module *m, const LayerRecipes *lr,
                        const char *phases, const char *variant, bool force, CheckItem *it)
{
	Err e = ERR_INIT;
	Recipe *rs = NULL;
	size_t n = 0;
	SpliceManyResult sm = {0};
	StrBuf name = STRBUF_INIT;
	sb_addf(&name, "phases %s%s%s", phases, variant ? " " : "", variant ? variant : "");
	it->name = xstrdup(name.p);
	it->path = xstrdup(name.p);
	it->verdict = -1;
	if (splice_select(lr, phases, variant, &rs, &n, &e) == 0) {
		const Recipe **rp = xcalloc(n, sizeof(Recipe *));
		for (size_t i = 0; i < n; i++)
			rp[i] = &rs[i];
		SpliceManyRequest req = {m, mf->entry, rp, n, NULL, force};
		if (splice_many(&req, &sm, &e) < 0 ||
		    gpu_reduce_text(mf, it->name, sm.text.p, sm.text.n, &it->ptx, NULL, NULL, &e) < 0)
			it->error = xstrdup(err_msg(&e));
		free(rp);
	} else
		it->error = xstrdup(err_msg(&e));
	for (size_t i = 0; i < n; i++)
		rcp_release(&rs[i]);
	free(rs);
	splice_many_release(&sm);
	sb_release(&name);
	err_release(&e);
}

/* --shard I/N: 1 <= I <= N. */
typedef struct {
	unsigned i, n;
} Shard;

static int opt_shard(const Opt *o, const char *word, Err *e)
{
	Shard *sh = o->value;
	unsigned i, n;
	int end = 0;
	if (!(word[0] >= '0' && word[0] <= '9') || sscanf(word, "%u/%u%n", &i, &n, &end) != 2 ||
	    word[end] || !strchr("0123456789", word[strcspn(word, "/") + 1]) || n < 1 || i < 1 ||
	    i > n)
		return err_set(e, "'%s' is not a shard I/N with 1 <= I <= N", word);
	sh->i = i;
	sh->n = n;
	return 0;
}

static int by_base(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	const char *bx = strrchr(x, '/'), *by = strrchr(y, '/');
	int c = strcmp(bx ? bx + 1 : x, by ? by + 1 : y);
	return c ? c : strcmp(x, y);
}

/* An item's verdict as the lines and --json name it. */
static const char *verdict_of(const CheckItem *it)
{
	if (it->error || !it->done || it->status != GPU_OK)
		return it->error ? (it->status == GPU_FAULT  ? "FAULT"
		                    : it->status == GPU_HANG ? "HANG"
		                                             : "ERROR")
		                 : "ERROR";
	return it->verdict == 1 ? "DIFFERS" : "IDENTICAL";
}

static void lower_into(char *buf, size_t n, const char *s)
{
	size_t k = 0;
	for (; s[k] && k + 1 < n; k++)
		buf[k] = (char)(s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k]);
	buf[k] = 0;
}

/* The first line of s, as a JSON string (null for NULL). */
static void first_line(cJSON *o, const char *key, const char *s, size_t n)
{
	if (!s) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	const char *nl = memchr(s, '\n', n);
	cmd_json_strn(o, key, s, nl ? (size_t)(nl - s) : n);
}

/* --replay: how replay decided an item, as JSON (decided_by, replay). */
static void replay_json(cJSON *j, const CheckItem *it)
{
	cJSON_AddStringToObject(j, "decided_by",
	                        it->by_replay ? "replay" : "whole-module");
	const CheckReplayOutcome *r = it->rp;
	if (!r) { /* the original */
		cJSON_AddNullToObject(j, "replay");
		return;
	}
	cJSON *x = cJSON_AddObjectToObject(j, "replay");
	cJSON_AddStringToObject(x, "verdict", check_replay_kind_name(r->kind));
	cmd_json_str_or_null(x, "message", r->message);
	if (r->kind == CR_DIFFERS || r->kind == CR_INVALID)
		cJSON_AddItemToObject(x, "first_difference", replay_diff_json(&r->diff));
	bool ran = r->kind == CR_IDENTICAL || r->kind == CR_DIFFERS;
	if (ran) {
		cJSON_AddNumberToObject(x, "original_ms", r->ms[0]);
		cJSON_AddNumberToObject(x, "spliced_ms", r->ms[1]);
	} else {
		cJSON_AddNullToObject(x, "original_ms");
		cJSON_AddNullToObject(x, "spliced_ms");
	}
}

/*
 * --replay: what replay said of an item the whole module decided, when it
 * says more than the verdict does: a DIFFERS of the phase's contract with
 * an IDENTICAL frame is the case the contract is stricter than the frame
 * (a difference the epilogue rounds away, or one the frame never reads).
 * NULL when there is nothing to add.
 */
static const char *replay_note(const CheckItem *it, const char *verdict, StrBuf *sb)
{
	const CheckReplayOutcome *r = it->rp;
	sb_reset(sb);
	if (!r || it->by_replay)
		return NULL;
	if (r->kind == CR_DIFFERS && !strcmp(verdict, "IDENTICAL"))
		sb_addf(
		    sb,
		    "replay DIFFERS, the frame IDENTICAL: the phase contract is stricter "
		    "than the frame (%s)",
		    r->message);
	else if (r->kind == CR_DIFFERS && !strcmp(verdict, "DIFFERS"))
		sb_adds(sb, "replay DIFFERS too");
	else if (r->kind == CR_DIFFERS)
		sb_addf(sb, "replay DIFFERS (%s)", r->message);
	else
		sb_addf(sb, "replay %s: %s", check_replay_kind_name(r->kind), r->message);
	return sb->p;
}

int cmd_check(int argc, char **argv)
{
	const char *junit = NULL, *corpus = NULL, *phases = NULL, *variant = NULL;
	unsigned jobs = 1, runs = 0;
	double timeout = 120;
	bool no_cache = false, force = false, json = false, replay = false;
	CheckReplayOutcome *rps = NULL;
	CheckReplaySummary rsum = {0};
	size_t nrps = 0;
	Shard shard = {1, 1};
	size_t recipes_total = 0;
	VEC(char *) paths = {0};
	const Opt opts[] = {
		OPT_UINT(0, "jobs", &jobs, "N", 1, UINT_MAX,
		         "spread the JIT work over N children (default 1)"),
		OPT_STRING(0, "junit", &junit, "FILE", "write a JUnit XML report"),
		OPT_STRING(0, "phases", &phases, "LIST",
		           "those phases' recipes in one module, one item (1-10,13)"),
		OPT_STRING(0, "variant", &variant, "NAME",
		           "with --phases: the recipes phase-NN-NAME.json"),
		OPT_UINT(0, "runs", &runs, "N", 0, 100000,
		         "timed runs of each module (default 0: frames only)"),
		OPT_CALLBACK(0, "timeout", &timeout, "S", opt_seconds,
		             "kill a child's launches after S seconds (default 120)"),
		OPT_STRING(0, "corpus", &corpus, "DIR", "the corpus folder"),
		OPT_FLAG(0, "no-cache", &no_cache,
		         "neither read nor write the compiled-image cache"),
		OPT_FLAG(0, "force", &force, "splice cuts the splicer would refuse"),
		OPT_CALLBACK(0, "shard", &shard, "I/N", opt_shard,
		             "only the I-th of N slices of the recipes, by sorted name"),
		OPT_FLAG(0, "json", &json, "one JSON object, for CI"),
		OPT_FLAG(0, "replay", &replay,
		         "replay each recipe first; the whole module for the rest"),
		OPT_END(),
	};
	OptParse op = {.verb = "check", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, -1, "no layer given"))
		return EXIT_ERROR;
	const char *layer = argv[0];
	if (opt_needs(&op, "variant", "phases") || cmd_check_variant(variant))
		return EXIT_ERROR;
	if (replay && opt_conflicts(&op, "replay", "phases", "runs", NULL))
		return EXIT_ERROR;
	if (opt_conflict(&op, "shard", "phases"))
		return EXIT_ERROR;
	if (phases && nargs > 1)
		return opt_usage_error(&op, "option '--phases' selects the recipes: no RECIPE "
		                            "arguments with it ('%s')", argv[1]);
	for (int i = 1; i < nargs; i++)
		VEC_PUSH(paths, xstrdup(argv[i]));
	Err e = ERR_INIT;
	Manifest mf;
	memset(&mf, 0, sizeof mf);
	int rc = EXIT_ERROR;
	LoadedModule lm = {0};
	char *module_path = NULL, *oracle_path = NULL;
	unsigned char *oracle = NULL;
	size_t oracle_len = 0;
	CheckItem *items = NULL;
	size_t nitems = 0;
	FrameLayout lay = {0};
	if (mf_load_layer(layer, corpus, &mf, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	if (!paths.n && !phases) { /* every recipe beside the manifest */
		char *dir = layout_dir_of(mf.path);
		paths.n = paths.cap = layout_recipes(dir, &paths.v);
		free(dir);
	}
	if (!paths.n && !phases) {
		cmd_fail("check: layer '%s' has no recipes", layer);
		goto out;
	}
	recipes_total = paths.n;
	bool sharded = opt_given(&op, "shard") != NULL;
	if (sharded) { /* the slice [lo, hi) of the sorted recipes */
		qsort(paths.v, paths.n, sizeof(char *), by_base);
		size_t lo = paths.n * (shard.i - 1) / shard.n, hi = paths.n * shard.i / shard.n;
		for (size_t i = 0; i < paths.n; i++)
			if (i < lo || i >= hi) {
				free(paths.v[i]);
				paths.v[i] = NULL;
			}
		memmove(paths.v, paths.v + lo, (hi - lo) * sizeof(char *));
		paths.n = hi - lo;
	}
	/* Recipes named on the command line must exist: a typo is not a
	 * recipe that failed. */
	for (int i = 1; i < nargs; i++)
		if (access(argv[i], F_OK) != 0) {
			cmd_fail("check: recipe '%s' does not exist", argv[i]);
			goto out;
		}
	/* The report must not replace an input (checked before any work). */
	gpu_layer_inputs(&mf, NULL);
	for (size_t i = 0; i < paths.n; i++) {
		Recipe r;
		memset(&r, 0, sizeof r);
		Err ig = ERR_INIT;
		file_input_add(paths.v[i], "recipe");
		if (rcp_load(paths.v[i], &r, &ig) == 0)
			cmd_recipe_inputs(&r, NULL);
		rcp_release(&r);
		err_release(&ig);
	}
	if (junit && out_check(junit, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	/* What needs no GPU: init files, the oracle, the launch entries. */
	if (gpu_layer_precheck(&mf, &e) < 0 ||
	    gpu_read_oracle(&mf, NULL, &oracle, &oracle_len, &oracle_path, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	if (mf_corpus_path(&mf, mf.module, &module_path, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	file_input_add(module_path, "module");
	if (cmd_load_module(module_path, &lm) < 0)
		goto out;
	if (replay) { /* how replay decides each recipe; the proved ones are not run */
		rps = xcalloc(paths.n + 1, sizeof(CheckReplayOutcome));
		nrps = paths.n;
		char *cdir = user_cache_dir();
		CheckReplayOpts ro = {timeout, no_cache, cdir, json};
		int crc = check_replay(&mf, lm.m, paths.v, paths.n, &ro, rps, &rsum, &e);
		free(cdir);
		if (crc < 0) {
			cmd_fail("%s", err_msg(&e));
			goto out;
		}
		if (rsum.differ + rsum.not_proved && !json)
			printf(
			    "whole-module check of the %u recipes replay did not prove "
			    "identical:\n",
			    rsum.differ + rsum.not_proved);
	}
	/* item 0 is the original itself: it must reproduce the oracle */
	nitems = paths.n + 1 + (phases != NULL);
	items = xcalloc(nitems, sizeof(CheckItem));
	if (sharded) {
		char nm[64];
		snprintf(nm, sizeof nm, "(original) shard %u/%u", shard.i, shard.n);
		items[0].name = xstrdup(nm);
	} else
		items[0].name = xstrdup("(original)");
	items[0].path = xstrdup(module_path);
	items[0].verdict = -1;
	/* --replay with every recipe proved: no whole-module check, no original */
	size_t first = rps && !(rsum.differ + rsum.not_proved) ? 1 : 0;
	if (first)
		items[0].done = 1;
	else if (gpu_reduce_module(&mf, lm.m, &items[0].ptx, NULL, NULL, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		goto out;
	}
	for (size_t i = 0; i < paths.n; i++) {
		CheckItem *it = &items[i + 1];
		it->path = paths.v[i];
		paths.v[i] = NULL;
		const char *b = strrchr(it->path, '/');
		it->name = xstrdup(b ? b + 1 : it->path);
		it->verdict = -1;
		if (rps) {
			it->rp = &rps[i];
			/* replay proved it: its verdict, nothing to run */
			if (rps[i].kind == CR_IDENTICAL) {
				it->by_replay = true;
				it->done = 1;
				it->status = GPU_OK;
				it->verdict = 0;
				continue;
			}
		}
		Recipe r;
		memset(&r, 0, sizeof r);
		err_clear(&e);
		SpliceRequest req = {lm.m, mf.entry, &r, NULL, force};
		if (rcp_load(it->path, &r, &e) < 0 || splice_run(&req, &it->sr, &e) < 0 ||
		    gpu_reduce_text(&mf, it->name, it->sr.text.p, it->sr.text.n, &it->ptx, NULL, NULL,
		                    &e) < 0)
			it->error = xstrdup(err_msg(&e));
		rcp_release(&r);
		sb_release(&it->sr.text); /* the reduced copy is what runs */
	}
	if (phases) {
		char *dir = layout_dir_of(mf.path);
		LayerRecipes lr = {mf.layer ? mf.layer : layer, dir, corpus, mf_layout_layer};
		phases_item(&mf, lm.m, &lr, phases, variant, force, &items[nitems - 1]);
		free(dir);
	}
	frame_layout_from_manifest(&mf, &lay);
	Queue q = {&mf, items, nitems, 0, 0, runs, timeout, no_cache, oracle, oracle_len, &lay,
	           PTHREAD_MUTEX_INITIALIZER, NULL};
	size_t torun = 0;
	for (size_t i = 0; i < nitems; i++)
		torun += !items[i].error && !items[i].done;
	q.per_job = (unsigned)((torun + jobs - 1) / jobs);
	if (q.per_job > 16)
		q.per_job = 16; /* smaller batches: a fault costs less */
	if (!q.per_job)
		q.per_job = 1;
	char what[160];
	snprintf(what, sizeof what, "check %s", layer);
	Progress *pg = progress_start(what, torun, "modules");
	pthread_t *th = xcalloc(jobs, sizeof(pthread_t));
	for (unsigned j = 0; j < jobs; j++)
		pthread_create(&th[j], NULL, worker, &q);
	for (unsigned j = 0; j < jobs; j++)
		pthread_join(th[j], NULL);
	free(th);
	progress_end(pg);
	if (q.fatal) {
		/* The recipes that failed before the GPU are reported as they are,
		 * not hidden behind why the GPU work could not run. */
		for (size_t i = 1; i < nitems && !json; i++)
			if (items[i].error)
				printf("%-32s %-9s  %s\n", items[i].name, "ERROR", items[i].error);
		cmd_fail("check: %s", q.fatal);
		free(q.fatal);
		goto out;
	}
	unsigned n_ok = 0, n_diff = 0, n_err = 0;
	cJSON *doc = NULL, *jitems = NULL;
	if (json) {
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "layer", layer);
		cJSON_AddStringToObject(doc, "oracle", oracle_path);
		if (sharded) {
			cJSON *sj = cJSON_AddObjectToObject(doc, "shard");
			cJSON_AddNumberToObject(sj, "index", shard.i);
			cJSON_AddNumberToObject(sj, "count", shard.n);
		} else
			cJSON_AddNullToObject(doc, "shard");
		cJSON_AddNumberToObject(doc, "recipes_in_layer", (double)recipes_total);
		jitems = cJSON_AddArrayToObject(doc, "items");
	}
	StrBuf note = STRBUF_INIT;
	unsigned n_replay = 0;
	for (size_t i = first; i < nitems; i++) {
		CheckItem *it = &items[i];
		const char *v = verdict_of(it);
		n_replay += it->by_replay;
		if (v[0] == 'D') {
			if (i == 0)
				n_err++; /* the original must reproduce the oracle */
			else
				n_diff++;
		} else if (v[0] == 'I')
			n_ok++;
		else
			n_err++;
		if (json) {
			char lv[16];
			lower_into(lv, sizeof lv, v);
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "name", it->name);
			cJSON_AddStringToObject(j, "path", it->path);
			cJSON_AddBoolToObject(j, "original", i == 0);
			cJSON_AddStringToObject(j, "verdict", lv);
			bool ran = it->done && it->status == GPU_OK && !it->by_replay;
			if (ran) {
				cJSON_AddNumberToObject(j, "jit_seconds", it->jit_s);
				cJSON_AddStringToObject(j, "frame_sha256", it->sha256);
			} else {
				cJSON_AddNullToObject(j, "jit_seconds");
				cJSON_AddNullToObject(j, "frame_sha256");
			}
			cJSON_AddNumberToObject(j, "runs", ran ? it->runs : 0);
			if (ran && it->runs)
				cJSON_AddNumberToObject(j, "median_ms", it->median_ms);
			else
				cJSON_AddNullToObject(j, "median_ms");
			if (it->error)
				first_line(j, "message", it->error, strlen(it->error));
			else if (it->verdict == 1 && it->diff.p)
				first_line(j, "message", it->diff.p, it->diff.n);
			else
				cJSON_AddNullToObject(j, "message");
			if (rps)
				replay_json(j, it);
			cJSON_AddItemToArray(jitems, j);
			continue;
		}
		if (it->by_replay)
			continue; /* its line is replay's, above */
		printf("%-32s %-9s", it->name, v);
		if (it->done && it->status == GPU_OK) {
			printf(" jit %.2fs", it->jit_s);
			if (it->runs)
				printf("  %.3f ms median (%u runs)", it->median_ms, it->runs);
			if (it->attrs.known)
				printf("  %d regs, %d B stack%s", it->attrs.regs, it->attrs.stack_bytes,
				       i && gpu_log_attrs_spill_more(&items[0].attrs, &it->attrs)
				           ? ", SPILLS where the original does not"
				           : "");
		}
		if (it->error) {
			const char *nl = strchr(it->error, '\n');
			printf("  %.*s", nl ? (int)(nl - it->error) : (int)strlen(it->error), it->error);
		} else if (it->verdict == 1 && it->diff.p) {
			const char *nl = strchr(it->diff.p, '\n');
			printf("  %.*s", nl ? (int)(nl - it->diff.p) : (int)it->diff.n, it->diff.p);
		}
		if (replay_note(it, v, &note))
			printf("  %s", note.p);
		putchar('\n');
	}
	bool stale = items[0].done && items[0].status == GPU_OK && items[0].verdict == 1;
	if (!json && rps)
		printf("%u identical (%u by replay), %u differ, %u errors (%s%s)\n", n_ok,
		       n_replay, n_diff, n_err,
		       first ? "no whole-module check; oracle " : "oracle ", oracle_path);
	else if (!json)
		printf("%u identical, %u differ, %u errors (oracle %s)\n", n_ok, n_diff,
		       n_err, oracle_path);
	if (stale && !json)
		printf("the original's frame differs from the oracle: a stale oracle or changed "
		       "inputs; no recipe's verdict can be trusted\n");
	if (junit) {
		OutFile o;
		if (out_open(&o, junit, &e) == 0) {
			fprintf(o.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
			fprintf(o.f, "<testsuite name=\"d4r-splice check ");
			xml_escape(o.f, layer);
			if (sharded)
				fprintf(o.f, " shard %u/%u", shard.i, shard.n);
			fprintf(o.f, "\" tests=\"%zu\" failures=\"%u\" errors=\"%u\">\n",
			        nitems - first, n_diff, n_err);
			for (size_t i = first; i < nitems; i++) {
				CheckItem *it = &items[i];
				double secs = it->by_replay
				                  ? (it->rp->ms[0] + it->rp->ms[1]) / 1000
				                  : it->jit_s;
				fprintf(o.f, "  <testcase classname=\"");
				xml_escape(o.f, layer);
				fprintf(o.f, "\" name=\"");
				xml_escape(o.f, it->name);
				fprintf(o.f, "\" time=\"%.3f\">", secs);
				if (it->error || !it->done || it->status != GPU_OK) {
					fprintf(o.f, "<error message=\"%s\">", gpu_status_name(it->status));
					xml_escape(o.f, it->error ? it->error : "not run");
					fprintf(o.f, "</error>");
				} else if (it->verdict == 1) {
					fprintf(o.f, "<failure message=\"frame differs from the oracle\">");
					xml_escape(o.f, it->diff.p);
					fprintf(o.f, "</failure>");
				}
				if (it->by_replay)
					fprintf(o.f, "<system-out>decided by replay: "
					             "IDENTICAL (proved: "
					             "the phase's end state bit for "
					             "bit)</system-out>");
				else if (replay_note(it, verdict_of(it), &note)) {
					fprintf(o.f, "<system-out>decided by the "
					             "whole-module check; ");
					xml_escape(o.f, note.p);
					fprintf(o.f, "</system-out>");
				}
				fprintf(o.f, "</testcase>\n");
			}
			fprintf(o.f, "</testsuite>\n");
			if (out_commit(&o, &e) < 0)
				cmd_fail("%s", err_msg(&e));
		} else
			cmd_fail("%s", err_msg(&e));
	}
	sb_release(&note);
	rc = n_err ? EXIT_ERROR : n_diff ? EXIT_DIFFERS : EXIT_OK;
	if (doc) {
		cJSON_AddNumberToObject(doc, "identical", n_ok);
		cJSON_AddNumberToObject(doc, "differ", n_diff);
		cJSON_AddNumberToObject(doc, "errors", n_err);
		cJSON_AddBoolToObject(doc, "stale_oracle", stale);
		cmd_json_str_or_null(doc, "junit", junit);
		if (rps) {
			cJSON *r = cJSON_AddObjectToObject(doc, "replay");
			cJSON_AddNumberToObject(r, "identical", rsum.identical);
			cJSON_AddNumberToObject(r, "differ", rsum.differ);
			cJSON_AddNumberToObject(r, "not_proved", rsum.not_proved);
			cJSON_AddNumberToObject(r, "prepare_seconds", rsum.prepare_s);
			cJSON_AddNumberToObject(r, "dump_seconds", rsum.dump_s);
			cJSON_AddNumberToObject(r, "replay_seconds", rsum.replay_s);
		}
		cJSON_AddStringToObject(doc, "status", n_err ? "error" : "ok");
		if (n_err)
			cJSON_AddStringToObject(doc, "message",
			                        stale ? "the original's frame differs from the oracle"
			                              : "some items could not be checked");
		cmd_json_print(doc, rc);
	}
out:
	for (size_t i = 0; i < nitems; i++) {
		free(items[i].path);
		free(items[i].name);
		free(items[i].error);
		sb_release(&items[i].ptx);
		sb_release(&items[i].diff);
		splice_result_release(&items[i].sr);
	}
	free(items);
	for (size_t i = 0; i < nrps; i++)
		check_replay_outcome_release(&rps[i]);
	free(rps);
	for (size_t i = 0; i < paths.n; i++)
		free(paths.v[i]);
	VEC_FREE(paths);
	frame_layout_release(&lay);
	free(oracle);
	free(oracle_path);
	free(module_path);
	if (lm.m)
		cmd_unload_module(&lm);
	mf_release(&mf);
	err_release(&e);
	return rc;
}
