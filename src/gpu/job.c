/*
 * job.c - a GPU job: modules of a layer run in a child, frames and timings
 * back (see gpu.h for the contract).
 *
 * The child speaks in records (child.h) whose payload starts with a tag:
 *
 *   'D'  the device: name, compute capability, driver version, setup time
 *   'M'  one module's result: index, JIT figures and log, frame run time,
 *        the frame; its record status is the module's status
 *   'T'  the timing: per module n/median/min/max and whether the frame was
 *        the same after the last run; status ok, or the fault
 *   'X'  the end: the child's own wall, JIT and GPU seconds
 *   'E'  the job failed before any module (context, layer): status error
 *        or fault, applies to every module
 *   'J'  (parallel_jit) per module, whether the cache lacks its image; sent
 *        instead of everything else when two or more do
 *
 * A JIT child (parallel_jit) sends 'M' with its module's JIT figures and
 * no frame, or the module's failure.
 *
 * Decisions:
 *  - The JITs run side by side and the launches do not: each JIT child
 *    only compiles and stores its image in the cache, and the one child of
 *    the launches loads them all from there, times the modules alternating
 *    as always, in one context.  Launches of two processes on one GPU
 *    would skew each other's medians; compiles only share the CPUs.
 *  - The child of the launches is asked first which images the cache
 *    lacks (it has the context the cache key needs; this process never
 *    initialises CUDA).  A warm job, or one where a single module changed,
 *    runs as before in that one child; only when two or more images are
 *    missing does it stop, and the JIT children run, then that child again.
 *  - With no_cache or no cache folder, a temporary file per module
 *    (d4r-splice-jit-XXXXXX.cubin under $TMPDIR, base/temp.h: removed on
 *    every exit path) stands in for its image in the cache.  Only the
 *    main job sets parallel_jit, from the main thread, as temp.h needs.
 */
#include "gpu/gpu.h"

#include "base/file.h"
#include "base/sha256.h"
#include "base/temp.h"
#include "gpu/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- payload encoding ------------------------------------------------------ */

static void put_u64(StrBuf *sb, uint64_t v)
{
	sb_addn(sb, &v, 8);
}

static void put_f64(StrBuf *sb, double v)
{
	sb_addn(sb, &v, 8);
}

static void put_bytes(StrBuf *sb, const void *p, size_t n)
{
	put_u64(sb, n);
	sb_addn(sb, p, n);
}

static void put_str(StrBuf *sb, const char *s)
{
	put_bytes(sb, s ? s : "", s ? strlen(s) : 0);
}

/* A malloc'd copy (NUL-terminated) of the next byte string. */
static unsigned char *get_bytes(GpuRd *r, size_t *len)
{
	uint64_t n = gpu_rd_u64(r);
	const unsigned char *s = gpu_rd_span(r, n);
	if (!s) {
		*len = 0;
		return (unsigned char *)xstrdup("");
	}
	unsigned char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	*len = (size_t)n;
	return p;
}

/* ---- the module for a layer --------------------------------------------------- */

int gpu_reduce_for_layer(const Manifest *m, const char *ptx, size_t n,
                         const GpuFuncSpan *spans, size_t nspans, StrBuf *out,
                         size_t *removed, Err *e)
{
	const char **keep = xcalloc(m->nlaunches + 1, sizeof(char *));
	size_t nkeep = 0;
	for (size_t i = 0; i < m->nlaunches; i++) {
		int dup = 0;
		for (size_t k = 0; k < nkeep; k++)
			dup |= !strcmp(keep[k], m->launches[i].entry);
		if (!dup)
			keep[nkeep++] = m->launches[i].entry;
	}
	size_t entries = 0;
	for (size_t i = 0; i < nspans; i++)
		entries += spans[i].is_entry != 0;
	int rc = gpu_reduce_ptx(ptx, n, spans, nspans, keep, nkeep, out, e);
	free(keep);
	if (rc == 0 && removed)
		*removed = entries - nkeep;
	return rc;
}

/* ---- records ------------------------------------------------------------------ */

void gpu_job_send_failure(GpuChan *ch, char tag, int idx, GpuStatus st, const char *msg)
{
	StrBuf sb = STRBUF_INIT;
	sb_addc(&sb, tag);
	put_u64(&sb, (uint64_t)(int64_t)idx);
	gpu_chan_result(ch, st, msg, sb.p, sb.n);
	sb_release(&sb);
}

void gpu_job_send_device(GpuChan *ch, const char *name, int cc_major, int cc_minor,
                         int driver_version, double setup_s)
{
	StrBuf sb = STRBUF_INIT;
	sb_addc(&sb, 'D');
	put_str(&sb, name);
	put_u64(&sb, (uint64_t)cc_major);
	put_u64(&sb, (uint64_t)cc_minor);
	put_u64(&sb, (uint64_t)driver_version);
	put_f64(&sb, setup_s);
	gpu_chan_result(ch, GPU_OK, NULL, sb.p, sb.n);
	sb_release(&sb);
}

void gpu_job_send_module(GpuChan *ch, size_t k, double jit_s, double jit_driver_ms,
                         bool cached, const char *info_log, double frame_run_ms,
                         const void *frame, size_t n)
{
	StrBuf sb = STRBUF_INIT;
	sb_addc(&sb, 'M');
	put_u64(&sb, k);
	put_f64(&sb, jit_s);
	put_f64(&sb, jit_driver_ms);
	put_u64(&sb, cached);
	put_str(&sb, info_log);
	put_f64(&sb, frame_run_ms);
	put_bytes(&sb, frame, n);
	gpu_chan_result(ch, GPU_OK, NULL, sb.p, sb.n);
	sb_release(&sb);
}

void gpu_job_send_timing(GpuChan *ch, size_t n, const GpuTimes *t, const int *same)
{
	StrBuf sb = STRBUF_INIT;
	sb_addc(&sb, 'T');
	put_u64(&sb, n);
	for (size_t k = 0; k < n; k++) {
		put_u64(&sb, t[k].n);
		put_f64(&sb, t[k].median_ms);
		put_f64(&sb, t[k].min_ms);
		put_f64(&sb, t[k].max_ms);
		put_u64(&sb, (uint64_t)(int64_t)same[k]);
	}
	gpu_chan_result(ch, GPU_OK, NULL, sb.p, sb.n);
	sb_release(&sb);
}

void gpu_job_send_end(GpuChan *ch, double wall_s, double jit_s, double gpu_s)
{
	StrBuf sb = STRBUF_INIT;
	sb_addc(&sb, 'X');
	put_f64(&sb, wall_s);
	put_f64(&sb, jit_s);
	put_f64(&sb, gpu_s);
	gpu_chan_result(ch, GPU_OK, NULL, sb.p, sb.n);
	sb_release(&sb);
}

/* ---- the child --------------------------------------------------------------- */

typedef struct {
	const GpuJob *job;
	GpuChan *ch;
	GpuLayer *L;
	CUstream s;
	CUevent ev0, ev1;
	double jit_s, gpu_ms;
} Child;

/* The driver's own compute cache is set aside (driver.c says why). */
static void set_aside_driver_cache(void)
{
	if (!getenv("CUDA_CACHE_DISABLE") && !getenv("CUDA_CACHE_PATH"))
		setenv("CUDA_CACHE_DISABLE", "1", 1);
}

/* Module k's JIT options: the same in every child, so the same cache key. */
static GpuJitOptions jit_options(const GpuJob *job, size_t k)
{
	const GpuModuleSrc *src = &job->modules[k];
	return (GpuJitOptions){.name = src->name, .no_cache = job->no_cache,
	                       .cache_dir = job->cache_dir, .verbose = job->verbose_jit,
	                       .opt_level = -1,
	                       .image_file = job->no_cache ? NULL : src->image_file,
	                       .line_note = src->line_note, .line_ctx = src->line_ctx};
}

/* parallel_jit: sends 'J' and returns 1 when two or more images are not in
 * the cache; 0 when the job goes on here. */
static int ask_for_jits(const GpuJob *job, GpuChan *ch)
{
	StrBuf sb = STRBUF_INIT;
	size_t missing = 0;
	sb_addc(&sb, 'J');
	put_u64(&sb, job->nmodules);
	for (size_t k = 0; k < job->nmodules; k++) {
		GpuJitOptions jo = jit_options(job, k);
		int miss = !gpu_jit_cached(job->modules[k].ptx, job->modules[k].ptx_len, &jo);
		missing += (size_t)miss;
		put_u64(&sb, (uint64_t)miss);
	}
	if (missing >= 2)
		gpu_chan_result(ch, GPU_OK, NULL, sb.p, sb.n);
	sb_release(&sb);
	return missing >= 2;
}

static GpuStatus status_of_last_error(void)
{
	return gpu_cu_is_fault(gpu_cu_last_error) ? GPU_FAULT : GPU_ERROR;
}

/* One run: inputs, events, launches; the elapsed ms in *ms. */
static int run_once(Child *c, const GpuBound *b, double *ms, Err *e)
{
	gpu_cu_last_error = CUDA_SUCCESS;
	if (gpu_layer_reset(c->L, c->s, e) < 0)
		return err_set(e, "uploading the inputs: %s", err_msg(e));
	if (gpu_cu_check(gpu_cu.cuEventRecord(c->ev0, c->s), "cuEventRecord", e) < 0 ||
	    gpu_layer_launch(c->L, b, c->s, e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventRecord(c->ev1, c->s), "cuEventRecord", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamSynchronize(c->s), "cuStreamSynchronize", e) < 0)
		return err_set(e, "running the launch sequence: %s", err_msg(e));
	float f = 0;
	if (gpu_cu_check(gpu_cu.cuEventElapsedTime(&f, c->ev0, c->ev1), "cuEventElapsedTime",
	                 e) < 0)
		return -1;
	*ms = f;
	c->gpu_ms += f;
	return 0;
}

int gpu_job_child(void *arg, GpuChan *ch)
{
	const GpuJob *job = arg;
	const Manifest *m = job->manifest;
	Child c = {.job = job, .ch = ch};
	Err e = ERR_INIT;
	double t0 = now_seconds();
	GpuContext ctx = {0};
	CUmodule *mods = xcalloc(job->nmodules + 1, sizeof(CUmodule));
	GpuBound *bound = xcalloc(job->nmodules + 1, sizeof(GpuBound));
	int *ok = xcalloc(job->nmodules + 1, sizeof(int));
	unsigned char **frames = xcalloc(job->nmodules + 1, sizeof(unsigned char *));
	unsigned char *again = NULL;
	double **ms = xcalloc(job->nmodules + 1, sizeof(double *));
	int rc = 1, lost = 0;

	set_aside_driver_cache();
	gpu_chan_stage(ch, "context");
	if (gpu_driver_load(&e) < 0 || gpu_context_open(job->device, &ctx, &e) < 0) {
		gpu_job_send_failure(ch, 'E', -1, GPU_ERROR, err_msg(&e));
		goto out;
	}
	if (job->parallel_jit && ask_for_jits(job, ch)) {
		rc = 0;
		goto out;
	}
	if (gpu_layer_open(m, &c.L, &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamCreate(&c.s, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
	                 &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventCreate(&c.ev0, CU_EVENT_DEFAULT), "cuEventCreate", &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventCreate(&c.ev1, CU_EVENT_DEFAULT), "cuEventCreate", &e) < 0) {
		gpu_job_send_failure(ch, 'E', -1, GPU_ERROR, err_msg(&e));
		goto out;
	}
	gpu_job_send_device(ch, ctx.name, ctx.cc_major, ctx.cc_minor, gpu_cu.driver_version,
	                    now_seconds() - t0);

	char stage[300];
	for (size_t k = 0; k < job->nmodules; k++) {
		const GpuModuleSrc *src = &job->modules[k];
		snprintf(stage, sizeof stage, "jit %s", src->name);
		gpu_chan_stage(ch, stage);
		GpuJitOptions jo = jit_options(job, k);
		GpuJitResult jr;
		err_clear(&e);
		if (gpu_jit(src->ptx, src->ptx_len, &jo, &jr, &e) < 0) {
			gpu_job_send_failure(ch, 'M', (int)k, GPU_ERROR, err_msg(&e));
			gpu_jit_result_release(&jr);
			continue;
		}
		c.jit_s += jr.seconds;
		mods[k] = jr.module;
		jr.module = NULL;
		if (gpu_layer_bind(c.L, mods[k], &bound[k], &e) < 0) {
			gpu_job_send_failure(ch, 'M', (int)k, GPU_ERROR, err_msg(&e));
			gpu_jit_result_release(&jr);
			continue;
		}
		snprintf(stage, sizeof stage, "launch %s", src->name);
		gpu_chan_stage(ch, stage);
		double run_ms = 0;
		frames[k] = xmalloc(m->frame_size + 1);
		if (run_once(&c, &bound[k], &run_ms, &e) < 0 ||
		    gpu_layer_read_frame(c.L, frames[k], &e) < 0) {
			GpuStatus st = status_of_last_error();
			gpu_job_send_failure(ch, 'M', (int)k, st, err_msg(&e));
			gpu_jit_result_release(&jr);
			if (st == GPU_FAULT) {
				lost = 1;
				goto out;   /* the context is lost: nothing more runs in it */
			}
			continue;
		}
		ok[k] = 1;
		gpu_job_send_module(ch, k, jr.seconds, jr.driver_ms, jr.cached, jr.info_log, run_ms,
		                    frames[k], m->frame_size);
		gpu_jit_result_release(&jr);
	}

	if (job->runs) {
		gpu_chan_stage(ch, "launch timing");
		for (size_t k = 0; k < job->nmodules; k++)
			ms[k] = xcalloc(job->runs + 1, sizeof(double));
		double dummy;
		int failed = -1;
		for (unsigned w = 0; w < job->warmup && failed < 0; w++)
			for (size_t k = 0; k < job->nmodules && failed < 0; k++)
				if (ok[k] && run_once(&c, &bound[k], &dummy, &e) < 0)
					failed = (int)k;
		for (unsigned r = 0; r < job->runs && failed < 0; r++)
			for (size_t k = 0; k < job->nmodules && failed < 0; k++)
				if (ok[k] && run_once(&c, &bound[k], &ms[k][r], &e) < 0)
					failed = (int)k;
		if (failed >= 0) {
			char msg[2400];
			snprintf(msg, sizeof msg, "timing run of '%s': %s", job->modules[failed].name,
			         err_msg(&e));
			lost = status_of_last_error() == GPU_FAULT;
			gpu_job_send_failure(ch, 'T', failed, lost ? GPU_FAULT : GPU_ERROR, msg);
			goto out;
		}
		GpuTimes *t = xcalloc(job->nmodules + 1, sizeof(GpuTimes));
		int *same = xcalloc(job->nmodules + 1, sizeof(int));
		again = xmalloc(m->frame_size + 1);
		for (size_t k = 0; k < job->nmodules; k++) {
			same[k] = -1;
			if (!ok[k])
				continue;
			gpu_times_from(ms[k], job->runs, &t[k]);
			/* The frame once more, after the timed runs. */
			if (run_once(&c, &bound[k], &dummy, &e) == 0 &&
			    gpu_layer_read_frame(c.L, again, &e) == 0)
				same[k] = !memcmp(again, frames[k], m->frame_size);
		}
		gpu_job_send_timing(ch, job->nmodules, t, same);
		free(t);
		free(same);
	}
	gpu_job_send_end(ch, now_seconds() - t0, c.jit_s, c.gpu_ms / 1000.0);
	rc = 0;
out:
	/* Device state is freed while the context is good; after a fault the
	 * process exit takes the lost context and everything in it. */
	for (size_t k = 0; k < job->nmodules; k++) {
		free(frames[k]);
		free(ms[k]);
		if (c.L)
			gpu_bound_release(c.L, &bound[k]);
		if (mods[k] && !lost)
			gpu_cu.cuModuleUnload(mods[k]);
	}
	if (!lost) {
		if (c.ev0)
			gpu_cu.cuEventDestroy(c.ev0);
		if (c.ev1)
			gpu_cu.cuEventDestroy(c.ev1);
		if (c.s)
			gpu_cu.cuStreamDestroy(c.s);
		gpu_layer_close(c.L);
		gpu_context_close(&ctx);
	}
	free(again);
	free(frames);
	free(ms);
	free(bound);
	free(mods);
	free(ok);
	err_release(&e);
	return rc;
}

typedef struct {
	const GpuJob *job;
	size_t k;
} JitArg;

/* A JIT child: context, module k's JIT (the image stored in the cache),
 * its figures or its failure sent up. */
static int jit_child(void *arg, GpuChan *ch)
{
	const JitArg *a = arg;
	const GpuJob *job = a->job;
	const GpuModuleSrc *src = &job->modules[a->k];
	Err e = ERR_INIT;
	GpuContext ctx = {0};
	GpuJitResult jr;
	memset(&jr, 0, sizeof jr);
	int rc = 1;
	set_aside_driver_cache();
	gpu_chan_stage(ch, "context");
	if (gpu_driver_load(&e) < 0 || gpu_context_open(job->device, &ctx, &e) < 0) {
		gpu_job_send_failure(ch, 'E', -1, GPU_ERROR, err_msg(&e));
		goto out;
	}
	char stage[300];
	snprintf(stage, sizeof stage, "jit %s", src->name);
	gpu_chan_stage(ch, stage);
	GpuJitOptions jo = jit_options(job, a->k);
	if (gpu_jit(src->ptx, src->ptx_len, &jo, &jr, &e) < 0) {
		gpu_job_send_failure(ch, 'M', (int)a->k, GPU_ERROR, err_msg(&e));
		goto out;
	}
	gpu_job_send_module(ch, a->k, jr.seconds, jr.driver_ms, jr.cached, jr.info_log, 0, NULL,
	                    0);
	rc = 0;
out:
	gpu_jit_result_release(&jr);
	gpu_context_close(&ctx);
	err_release(&e);
	return rc;
}

/* ---- the parent ------------------------------------------------------------- */

GpuChildBody gpu_job_body = gpu_job_child;

static void set_mod(GpuModuleResult *mr, GpuStatus st, const char *msg)
{
	mr->status = st;
	free(mr->message);
	mr->message = xstrdup(msg ? msg : "");
}

/* One child of the launches.  Returns 0, or 1 when it asked for the JITs
 * first ('J': missing[k] set for the images the cache lacks; res holds
 * only the child's wall), or -1 when it could not start. */
static int job_once(const GpuJob *job, GpuResult *res, int *missing, Err *e)
{
	memset(res, 0, sizeof(*res));
	res->nmods = job->nmodules;
	res->mods = xcalloc(job->nmodules + 1, sizeof(GpuModuleResult));
	for (size_t k = 0; k < job->nmodules; k++) {
		res->mods[k].name = xstrdup(job->modules[k].name);
		res->mods[k].jit_log = xstrdup("");
	}
	if (!job->nmodules)
		return err_set(e, "no module to run");
	/* The real body needs the driver; a stand-in (tests) does not. */
	if (gpu_job_body == gpu_job_child && gpu_driver_load(e) < 0)
		return -1;
	GpuChildResult cr;
	double jit_limit = job->jit_limit_s > 0 ? job->jit_limit_s : 900;
	if (gpu_child_run(gpu_job_body, (void *)job, job->timeout_s, jit_limit, &cr, e) < 0)
		return -1;
	res->wall_seconds = cr.seconds;
	for (size_t i = 0; missing && i < cr.nrecs; i++) {
		GpuChildRecord *rec = &cr.recs[i];
		GpuRd r = {rec->payload, rec->npayload, 1, 0};
		if (!rec->npayload || rec->payload[0] != 'J' || gpu_rd_u64(&r) != job->nmodules)
			continue;
		for (size_t k = 0; k < job->nmodules; k++)
			missing[k] = gpu_rd_u64(&r) != 0;
		gpu_child_result_release(&cr);
		return 1;
	}
	const Manifest *m = job->manifest;
	int *seen = xcalloc(job->nmodules + 1, sizeof(int));
	int timing_seen = 0, end_seen = 0;
	double child_wall = 0, child_jit = 0, child_gpu = 0;
	for (size_t i = 0; i < cr.nrecs; i++) {
		GpuChildRecord *rec = &cr.recs[i];
		GpuRd r = {rec->payload, rec->npayload, 1, 0};
		char tag = rec->npayload ? (char)rec->payload[0] : 0;
		if (tag == 'E') {
			for (size_t k = 0; k < job->nmodules; k++) {
				set_mod(&res->mods[k], rec->status, rec->message);
				seen[k] = 1;
			}
		} else if (tag == 'D') {
			size_t n;
			unsigned char *name = get_bytes(&r, &n);
			snprintf(res->device, sizeof res->device, "%s", (char *)name);
			free(name);
			res->cc_major = (int)gpu_rd_u64(&r);
			res->cc_minor = (int)gpu_rd_u64(&r);
			res->driver_version = (int)gpu_rd_u64(&r);
			res->setup_seconds = gpu_rd_f64(&r);
		} else if (tag == 'M') {
			uint64_t k = gpu_rd_u64(&r);
			if (k >= job->nmodules)
				continue;
			GpuModuleResult *mr = &res->mods[k];
			seen[k] = 1;
			if (rec->status != GPU_OK) {
				set_mod(mr, rec->status, rec->message);
				continue;
			}
			mr->status = GPU_OK;
			mr->jit_seconds = gpu_rd_f64(&r);
			mr->jit_driver_ms = (float)gpu_rd_f64(&r);
			mr->jit_cached = gpu_rd_u64(&r) != 0;
			size_t n;
			free(mr->jit_log);
			mr->jit_log = (char *)get_bytes(&r, &n);
			mr->frame_run_ms = gpu_rd_f64(&r);
			mr->frame = get_bytes(&r, &mr->frame_len);
			if (r.bad || mr->frame_len != m->frame_size) {
				set_mod(mr, GPU_ERROR, "the child sent a damaged result");
				continue;
			}
			sha256_hex(mr->frame, mr->frame_len, mr->sha256);
		} else if (tag == 'T') {
			timing_seen = 1;
			if (rec->status != GPU_OK) {
				res->timing_status = rec->status;
				res->timing_message = xstrdup(rec->message ? rec->message : "");
				continue;
			}
			uint64_t n = gpu_rd_u64(&r);
			for (uint64_t k = 0; k < n && k < job->nmodules; k++) {
				GpuModuleResult *mr = &res->mods[k];
				mr->times.n = (unsigned)gpu_rd_u64(&r);
				mr->times.median_ms = gpu_rd_f64(&r);
				mr->times.min_ms = gpu_rd_f64(&r);
				mr->times.max_ms = gpu_rd_f64(&r);
				int64_t same = (int64_t)gpu_rd_u64(&r);
				mr->repeat_checked = same >= 0;
				mr->repeatable = same == 1;
			}
		} else if (tag == 'X') {
			end_seen = 1;
			child_wall = gpu_rd_f64(&r);
			child_jit = gpu_rd_f64(&r);
			child_gpu = gpu_rd_f64(&r);
		}
	}
	/* Modules without a result: the one the child was busy with when it
	 * died or hung takes the blame; those after it did not run. */
	const char *busy = NULL;
	if (!strncmp(cr.stage, "jit ", 4) || !strncmp(cr.stage, "launch ", 7))
		busy = strchr(cr.stage, ' ') + 1;
	int blamed = 0;
	for (size_t k = 0; k < job->nmodules; k++) {
		if (seen[k])
			continue;
		GpuModuleResult *mr = &res->mods[k];
		if (cr.status != GPU_OK && !blamed && busy && !strcmp(busy, mr->name)) {
			set_mod(mr, cr.status, cr.message);
			blamed = 1;
		} else if (cr.status != GPU_OK && !blamed && !busy) {
			set_mod(mr, cr.status, cr.message);
			blamed = 1;
		} else {
			char msg[400];
			snprintf(msg, sizeof msg, "not run: %s",
			         cr.status == GPU_OK ? "the child ended early"
			                             : "an earlier module ended the child process");
			set_mod(mr, GPU_ERROR, msg);
			mr->not_run = cr.status != GPU_OK;
		}
	}
	if (job->runs && !timing_seen && cr.status != GPU_OK && !strcmp(cr.stage, "launch timing")) {
		res->timing_status = cr.status;
		res->timing_message = xstrdup(cr.message ? cr.message : "");
	} else if (job->runs && !timing_seen && !res->timing_message) {
		res->timing_status = GPU_ERROR;
		res->timing_message = xstrdup("no timing: the child ended before it");
	}
	if (end_seen)   /* event times can round past the wall clock on tiny jobs */
		res->host_seconds = MAX(0.0, child_wall - child_jit - child_gpu);
	free(seen);
	gpu_child_result_release(&cr);
	return 0;
}

/* The job's status: the worst of its modules' and its timing's, with the
 * first message that is not ok. */
static void overall_status(GpuResult *res)
{
	res->status = GPU_OK;
	free(res->message);
	res->message = NULL;
	for (size_t k = 0; k <= res->nmods; k++) {
		GpuStatus st = k < res->nmods ? res->mods[k].status : res->timing_status;
		const char *msg = k < res->nmods ? res->mods[k].message : res->timing_message;
		if (st == GPU_OK)
			continue;
		if (st > res->status)
			res->status = st;
		if (!res->message) {
			StrBuf sb = STRBUF_INIT;
			sb_addf(&sb, "%s: %s", k < res->nmods ? res->mods[k].name : "timing",
			        msg ? msg : "");
			res->message = sb.p;
		}
	}
}

/* dst takes src's result (src is left empty). */
static void take_module(GpuModuleResult *dst, GpuModuleResult *src)
{
	free(dst->name);
	free(dst->message);
	free(dst->frame);
	free(dst->jit_log);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/*
 * A module that faulted or hung ended the child: the modules after it did
 * not run, and there were no timed runs.  The job runs again without the
 * modules that faulted or hung: the ones not run get their results, and
 * every module with a frame its timing, measured together in the new
 * child (compiled images come from the cache).  A frame made again that
 * differs from the first marks the module as not repeatable.  Repeated
 * while a rerun brings new faults (each round drops at least one module).
 */
static void rerun_without_failures(const GpuJob *job, GpuResult *res)
{
	size_t *map = xcalloc(job->nmodules + 1, sizeof(size_t));
	GpuModuleSrc *srcs = xcalloc(job->nmodules + 1, sizeof(GpuModuleSrc));
	for (size_t round = 0; round < job->nmodules; round++) {
		size_t n = 0;
		int failed_hard = 0, not_run = 0;
		for (size_t k = 0; k < job->nmodules; k++) {
			const GpuModuleResult *mr = &res->mods[k];
			failed_hard |= !mr->not_run && (mr->status == GPU_FAULT || mr->status == GPU_HANG);
			not_run |= mr->not_run;
			if (mr->status == GPU_OK || mr->not_run) {
				map[n] = k;
				srcs[n++] = job->modules[k];
			}
		}
		int need = not_run || (job->runs && res->timing_status != GPU_OK);
		if (!failed_hard || !need || !n)
			break;
		GpuJob sub = *job;
		sub.modules = srcs;
		sub.nmodules = n;
		GpuResult r2;
		Err e = ERR_INIT;
		if (job_once(&sub, &r2, NULL, &e) < 0) {
			err_release(&e);
			break;
		}
		for (size_t i = 0; i < n; i++) {
			GpuModuleResult *dst = &res->mods[map[i]], *src = &r2.mods[i];
			if (dst->not_run) {
				take_module(dst, src);
			} else if (src->status == GPU_OK) {
				dst->times = src->times;
				dst->repeat_checked = src->repeat_checked;
				dst->repeatable = src->repeatable && !strcmp(src->sha256, dst->sha256);
			}
		}
		res->timing_status = r2.timing_status;
		free(res->timing_message);
		res->timing_message = r2.timing_message;
		r2.timing_message = NULL;
		res->wall_seconds += r2.wall_seconds;
		gpu_result_release(&r2);
		err_release(&e);
	}
	free(map);
	free(srcs);
}

/* ---- the JITs side by side ---------------------------------------------------- */

typedef struct {
	bool ran;          /* its child got to the JIT: what it sent stands */
	GpuStatus status;
	char *message;     /* when not ok */
	double jit_s;
	float driver_ms;
	bool cached;
	char *log;
} Jit;

/* What module k's JIT child sent. */
static void take_jit(GpuChildTask *t, Jit *j)
{
	if (t->rc < 0)
		return;
	GpuChildResult *cr = &t->cr;
	for (size_t i = 0; i < cr->nrecs; i++) {
		GpuChildRecord *rec = &cr->recs[i];
		GpuRd r = {rec->payload, rec->npayload, 1, 0};
		if (!rec->npayload || rec->payload[0] != 'M')
			continue;
		gpu_rd_u64(&r);
		j->ran = true;
		j->status = rec->status;
		if (rec->status != GPU_OK) {
			j->message = xstrdup(rec->message ? rec->message : "");
			return;
		}
		j->jit_s = gpu_rd_f64(&r);
		j->driver_ms = (float)gpu_rd_f64(&r);
		j->cached = gpu_rd_u64(&r) != 0;
		size_t n;
		j->log = (char *)get_bytes(&r, &n);
		if (r.bad) {
			j->status = GPU_ERROR;
			j->message = xstrdup("the JIT child sent a damaged result");
		}
		return;
	}
	/* Killed or dead in the JIT: that is the module's result. */
	if (cr->status != GPU_OK && !strncmp(cr->stage, "jit ", 4)) {
		j->ran = true;
		j->status = cr->status;
		j->message = xstrdup(cr->message ? cr->message : "");
	}
}

/* The JITs of the modules with want[k], side by side; the seconds from the
 * first start to the last end in *wall. */
static void run_jits(const GpuJob *job, const int *want, Jit *jits, double *wall)
{
	JitArg *args = xcalloc(job->nmodules + 1, sizeof(JitArg));
	GpuChildTask *tasks = xcalloc(job->nmodules + 1, sizeof(GpuChildTask));
	size_t *of = xcalloc(job->nmodules + 1, sizeof(size_t));
	size_t n = 0;
	for (size_t k = 0; k < job->nmodules; k++) {
		if (!want[k])
			continue;
		args[n] = (JitArg){job, k};
		tasks[n].arg = &args[n];
		of[n++] = k;
	}
	gpu_child_run_all(jit_child, tasks, n, job->timeout_s,
	                  job->jit_limit_s > 0 ? job->jit_limit_s : 900, false, wall);
	for (size_t i = 0; i < n; i++) {
		take_jit(&tasks[i], &jits[of[i]]);
		if (tasks[i].rc == 0)
			gpu_child_result_release(&tasks[i].cr);
		err_release(&tasks[i].e);
	}
	free(args);
	free(tasks);
	free(of);
}

/* A temporary file per module (empty), registered with base/temp.h, named
 * in srcs[k].image_file; paths[k] and slots[k] to remove them.  -1 when
 * one cannot be made (none is left then). */
static int image_files(const GpuJob *job, GpuModuleSrc *srcs, char **paths, int *slots)
{
	const char *t = getenv("TMPDIR");
	for (size_t k = 0; k < job->nmodules; k++) {
		StrBuf sb = STRBUF_INIT;
		sb_addf(&sb, "%s/d4r-splice-jit-XXXXXX.cubin", t && *t ? t : "/tmp");
		int fd = temp_mkstemps(sb.p, 6, &slots[k]);
		if (fd < 0) {
			sb_release(&sb);
			for (size_t i = 0; i < k; i++) {
				temp_remove(slots[i]);
				free(paths[i]);
				paths[i] = NULL;
			}
			return -1;
		}
		close(fd);
		paths[k] = sb.p;
		srcs[k] = job->modules[k];
		srcs[k].image_file = paths[k];
	}
	return 0;
}

/*
 * The job's launches after the JITs: in one child, without the modules
 * whose JIT failed (their failure is their result); res gets a result for
 * every module of `job`, in its order, and each module whose image its
 * JIT child made gets that child's figures.  -1 when the child could not
 * start.
 */
static int run_after_jits(const GpuJob *job, Jit *jits, GpuResult *res, Err *e)
{
	size_t *map = xcalloc(job->nmodules + 1, sizeof(size_t));
	GpuModuleSrc *srcs = xcalloc(job->nmodules + 1, sizeof(GpuModuleSrc));
	size_t n = 0;
	for (size_t k = 0; k < job->nmodules; k++)
		if (!jits[k].ran || jits[k].status == GPU_OK) {
			map[n] = k;
			srcs[n++] = job->modules[k];
		}
	GpuJob sub = *job;
	sub.modules = srcs;
	sub.nmodules = n;
	GpuResult r2;
	memset(&r2, 0, sizeof r2);
	int rc = n ? job_once(&sub, &r2, NULL, e) : 0;
	*res = r2;
	res->nmods = job->nmodules;
	res->mods = xcalloc(job->nmodules + 1, sizeof(GpuModuleResult));
	for (size_t i = 0; i < n && r2.mods; i++)
		res->mods[map[i]] = r2.mods[i];
	free(r2.mods);
	size_t from_jits = 0;
	for (size_t k = 0; k < job->nmodules; k++) {
		GpuModuleResult *mr = &res->mods[k];
		Jit *j = &jits[k];
		if (!mr->name) {
			mr->name = xstrdup(job->modules[k].name);
			mr->jit_log = xstrdup("");
			set_mod(mr, j->status, j->message);
			continue;
		}
		/* The image was the JIT child's: its compile is the JIT time. */
		if (j->ran && j->status == GPU_OK && !j->cached && mr->status == GPU_OK &&
		    mr->jit_cached) {
			mr->jit_seconds = j->jit_s;
			mr->jit_driver_ms = j->driver_ms;
			mr->jit_cached = false;
			free(mr->jit_log);
			mr->jit_log = xstrdup(j->log ? j->log : "");
			from_jits++;
		}
	}
	res->jit_parallel = from_jits >= 2;
	free(map);
	free(srcs);
	return rc;
}

int gpu_job_run(const GpuJob *job, GpuResult *res, Err *e)
{
	GpuJob j = *job;
	j.parallel_jit = false;
	int *want = NULL, rc;
	Jit *jits = NULL;
	GpuModuleSrc *srcs = NULL;
	char **paths = NULL;
	int *slots = NULL;
	double before = 0, jit_wall = 0;
	/* A stand-in body (tests) has no JIT to run beside it. */
	if (job->parallel_jit && job->nmodules >= 2 && gpu_job_body == gpu_job_child) {
		want = xcalloc(job->nmodules + 1, sizeof(int));
		char *dir = job->cache_dir ? NULL : user_cache_dir();
		bool cache = !job->no_cache && (job->cache_dir || dir);
		free(dir);
		if (cache) {
			/* The child asks for the JITs, or does the whole job. */
			rc = job_once(job, res, want, e);
			if (rc == 1) {
				before = res->wall_seconds;
				gpu_result_release(res);
			}
		} else {
			srcs = xcalloc(job->nmodules + 1, sizeof(GpuModuleSrc));
			paths = xcalloc(job->nmodules + 1, sizeof(char *));
			slots = xcalloc(job->nmodules + 1, sizeof(int));
			if (image_files(job, srcs, paths, slots) == 0) {
				j.modules = srcs;
				j.no_cache = false;
				for (size_t k = 0; k < job->nmodules; k++)
					want[k] = 1;
				rc = 1;
			} else {
				rc = job_once(&j, res, NULL, e);   /* one after the other */
			}
		}
	} else {
		rc = job_once(&j, res, NULL, e);
	}
	if (rc == 1) {
		jits = xcalloc(job->nmodules + 1, sizeof(Jit));
		run_jits(&j, want, jits, &jit_wall);
		rc = run_after_jits(&j, jits, res, e);
		res->wall_seconds += before + jit_wall;
		res->jit_wall_seconds = jit_wall;
	}
	if (rc == 0) {
		rerun_without_failures(&j, res);
		overall_status(res);
	}
	for (size_t k = 0; jits && k < job->nmodules; k++) {
		free(jits[k].message);
		free(jits[k].log);
	}
	free(jits);
	free(want);
	for (size_t k = 0; paths && k < job->nmodules; k++)
		if (paths[k]) {
			temp_remove(slots[k]);
			free(paths[k]);
		}
	free(paths);
	free(slots);
	free(srcs);
	return rc < 0 ? -1 : 0;
}

void gpu_result_release(GpuResult *res)
{
	for (size_t k = 0; k < res->nmods; k++) {
		GpuModuleResult *mr = &res->mods[k];
		free(mr->name);
		free(mr->message);
		free(mr->frame);
		free(mr->jit_log);
	}
	free(res->mods);
	free(res->message);
	free(res->timing_message);
	memset(res, 0, sizeof(*res));
}
