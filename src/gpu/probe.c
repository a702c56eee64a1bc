/*
 * probe.c (gpu) - instrumented modules run side by side, each in a child
 * process, their frames and dumps back (see gpu/probe.h).
 *
 * A child speaks in records (child.h) whose payload starts with a tag:
 *
 *   'D'  the device: name, compute capability, driver version, seconds of
 *        setup (context and layer)
 *   'R'  the result: JIT seconds and whether cached, launch ms, read-back
 *        seconds, device memory free and total, the frame, the dump
 *   'F'  the failure: the record's status and message say what
 *   'G'  the device's free and total memory and its name (the memory query)
 *
 * Decisions:
 *  - One child per module, all at once (gpu_child_run_all, child.h): the
 *    JIT is the long part of a check, the driver runs one per process, and
 *    a fault in one module must not take the other's result (child.c
 *    serialises the forks so that no child inherits another's pipe).
 *  - The 'R' payload is built in one allocation whose frame and dump parts
 *    the read-backs write into directly, and the parent keeps the payload
 *    the pipe delivered: a dump of hundreds of MB is copied as few times as
 *    the pipe makes it.
 */
#include "gpu/probe.h"

#include "base/sha256.h"
#include "gpu/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- payloads ----------------------------------------------------------------- */

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static unsigned char *put_f64(unsigned char *p, double v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

/* ---- the child ----------------------------------------------------------------- */

typedef struct {
	const GpuProbeJob *job;
	size_t k;
} ProbeArg;

static void send_device(GpuChan *ch, const GpuContext *ctx, double setup_s)
{
	size_t dl = strlen(ctx->name);
	unsigned char *b = xmalloc(1 + 8 * 5 + dl), *p = b;
	*p++ = 'D';
	p = put_u64(p, (uint64_t)ctx->cc_major);
	p = put_u64(p, (uint64_t)ctx->cc_minor);
	p = put_u64(p, (uint64_t)gpu_cu.driver_version);
	p = put_f64(p, setup_s);
	p = put_u64(p, dl);
	memcpy(p, ctx->name, dl);
	gpu_chan_result(ch, GPU_OK, NULL, b, 1 + 8 * 5 + dl);
	free(b);
}

static void send_failure(GpuChan *ch, GpuStatus st, const char *msg)
{
	gpu_chan_result(ch, st, msg, "F", 1);
}

#define R_HEAD (1 + 8 * 6)

static int probe_child(void *argp, GpuChan *ch)
{
	const ProbeArg *a = argp;
	const GpuProbeJob *job = a->job;
	const GpuProbeModule *src = &job->modules[a->k];
	const Manifest *m = job->manifest;
	Err e = ERR_INIT;
	double t0 = now_seconds();
	GpuContext ctx = {0};
	GpuLayer *L = NULL;
	CUstream s = NULL;
	CUevent ev0 = NULL, ev1 = NULL;
	GpuJitResult jr;
	memset(&jr, 0, sizeof jr);
	GpuBound b = {0};
	CUdeviceptr dump = 0;
	unsigned char *blob = NULL;
	int rc = 1, lost = 0;
	char call[400], stage[300];

	/* The driver's own compute cache is set aside (driver.c says why). */
	if (!getenv("CUDA_CACHE_DISABLE") && !getenv("CUDA_CACHE_PATH"))
		setenv("CUDA_CACHE_DISABLE", "1", 1);
	gpu_chan_stage(ch, "context");
	if (gpu_driver_load(&e) < 0 || gpu_context_open(job->device, &ctx, &e) < 0 ||
	    gpu_layer_open(m, &L, &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING),
	                 "cuStreamCreate", &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventCreate(&ev0, CU_EVENT_DEFAULT), "cuEventCreate",
	                 &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventCreate(&ev1, CU_EVENT_DEFAULT), "cuEventCreate",
	                 &e) < 0)
		goto fail;
	send_device(ch, &ctx, now_seconds() - t0);

	snprintf(stage, sizeof stage, "jit %s", src->name);
	gpu_chan_stage(ch, stage);
	GpuJitOptions jo = {.name = src->name,
	                    .verbose = job->attrs,
	                    .no_cache = job->no_cache,
	                    .cache_dir = job->cache_dir,
	                    .opt_level = -1,
	                    .line_note = src->line_note,
	                    .line_ctx = src->line_ctx};
	if (gpu_jit(src->ptx, src->ptx_len, &jo, &jr, &e) < 0 ||
	    gpu_layer_bind(L, jr.module, &b, &e) < 0)
		goto fail;
	GpuFuncAttrs fa;
	memset(&fa, 0, sizeof fa);
	for (size_t i = 0; job->attrs && i < m->nlaunches; i++)
		if (!strcmp(m->launches[i].entry, m->entry)) {
			if (gpu_func_attrs(b.funcs[i], &fa, &e) < 0)
				goto fail;
			break;
		}
	CUdeviceptr sym = 0;
	size_t symsize = 8, fr = 0, tot = 0;
	snprintf(call, sizeof call, "cuModuleGetGlobal '%s' (the probe's symbol)",
	         src->symbol ? src->symbol : "");
	if (src->symbol &&
	    gpu_cu_check(gpu_cu.cuModuleGetGlobal(&sym, &symsize, jr.module, src->symbol),
	                 call, &e) < 0)
		goto fail;
	if (symsize != 8) {
		err_set(&e, "the probe's symbol '%s' has %zu bytes, not 8", src->symbol,
		        symsize);
		goto fail;
	}
	if (gpu_cu_check(gpu_cu.cuMemGetInfo(&fr, &tot), "cuMemGetInfo", &e) < 0)
		goto fail;
	/* 64 MB are left for the driver and the launches */
	if (src->dump_bytes + ((uint64_t)64 << 20) > fr) {
		err_set(
		    &e,
		    "the dump of '%s' (%.1f MB) does not fit in the device's free memory "
		    "(%.1f MB of %.1f MB): probe fewer phases",
		    src->name, src->dump_bytes / 1048576.0, fr / 1048576.0,
		    tot / 1048576.0);
		goto fail;
	}
	uint64_t dn = src->dump_bytes ? src->dump_bytes : 8;
	snprintf(call, sizeof call, "cuMemAlloc of the dump (%llu bytes)",
	         (unsigned long long)dn);
	if (gpu_cu_check(gpu_cu.cuMemAlloc(&dump, dn), call, &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuMemsetD8(dump, 0, dn), "clearing the dump", &e) < 0 ||
	    (src->symbol && gpu_cu_check(gpu_cu.cuMemcpyHtoD(sym, &dump, 8),
	                                 "setting the probe's symbol", &e) < 0))
		goto fail;

	snprintf(stage, sizeof stage, "launch %s", src->name);
	gpu_chan_stage(ch, stage);
	gpu_cu_last_error = CUDA_SUCCESS;
	float ms = 0;
	if (gpu_layer_reset(L, s, &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventRecord(ev0, s), "cuEventRecord", &e) < 0 ||
	    gpu_layer_launch(L, &b, s, &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventRecord(ev1, s), "cuEventRecord", &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamSynchronize(s), "cuStreamSynchronize", &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventElapsedTime(&ms, ev0, ev1), "cuEventElapsedTime",
	                 &e) < 0) {
		err_set(&e, "running the launch sequence: %s", err_msg(&e));
		goto fail;
	}
	/* the timed runs: inputs uploaded again outside the events */
	double *tms = xcalloc(job->runs + 1, sizeof(double));
	GpuTimes times;
	memset(&times, 0, sizeof times);
	for (unsigned i = 0; i < job->warmup + job->runs && job->runs; i++) {
		float t = 0;
		if (gpu_layer_reset(L, s, &e) < 0 ||
		    gpu_cu_check(gpu_cu.cuEventRecord(ev0, s), "cuEventRecord", &e) < 0 ||
		    gpu_layer_launch(L, &b, s, &e) < 0 ||
		    gpu_cu_check(gpu_cu.cuEventRecord(ev1, s), "cuEventRecord", &e) < 0 ||
		    gpu_cu_check(gpu_cu.cuStreamSynchronize(s), "cuStreamSynchronize",
		                 &e) < 0 ||
		    gpu_cu_check(gpu_cu.cuEventElapsedTime(&t, ev0, ev1),
		                 "cuEventElapsedTime", &e) < 0) {
			free(tms);
			err_set(&e, "the timed runs: %s", err_msg(&e));
			goto fail;
		}
		if (i >= job->warmup)
			tms[i - job->warmup] = t;
	}
	if (job->runs)
		gpu_times_from(tms, job->runs, &times);
	free(tms);
	const char *log = job->attrs && jr.info_log ? jr.info_log : "";
	size_t loglen = strlen(log);
	double tr = now_seconds();
	size_t n =
	    R_HEAD + 8 + m->frame_size + 8 + src->dump_bytes + 8 * 4 + 8 * 5 + 8 + loglen;
	blob = xmalloc(n);
	unsigned char *p = blob;
	*p++ = 'R';
	p = put_f64(p, jr.seconds);
	p = put_u64(p, jr.cached);
	p = put_f64(p, ms);
	unsigned char *read_at = p;
	p = put_f64(p, 0);
	p = put_u64(p, fr);
	p = put_u64(p, tot);
	p = put_u64(p, m->frame_size);
	unsigned char *frame = p;
	p += m->frame_size;
	p = put_u64(p, src->dump_bytes);
	if (gpu_layer_read_frame(L, frame, &e) < 0 ||
	    (src->dump_bytes &&
	     gpu_cu_check(gpu_cu.cuMemcpyDtoH(p, dump, src->dump_bytes),
	                  "reading the dump", &e) < 0))
		goto fail;
	p += src->dump_bytes;
	p = put_u64(p, times.n);
	p = put_f64(p, times.median_ms);
	p = put_f64(p, times.min_ms);
	p = put_f64(p, times.max_ms);
	p = put_u64(p, fa.known);
	p = put_u64(p, (uint64_t)(int64_t)fa.regs);
	p = put_u64(p, (uint64_t)(int64_t)fa.local_bytes);
	p = put_u64(p, (uint64_t)(int64_t)fa.shared_bytes);
	p = put_u64(p, (uint64_t)(int64_t)fa.max_threads);
	p = put_u64(p, loglen);
	memcpy(p, log, loglen);
	put_f64(read_at, now_seconds() - tr);
	gpu_chan_result(ch, GPU_OK, NULL, blob, n);
	rc = 0;
	goto out;
fail:
	lost = gpu_cu_is_fault(gpu_cu_last_error);
	send_failure(ch, lost ? GPU_FAULT : GPU_ERROR, err_msg(&e));
out:
	/* Device state is freed while the context is good; after a fault the
	 * process exit takes the lost context and everything in it. */
	free(blob);
	if (!lost) {
		if (dump)
			gpu_cu.cuMemFree(dump);
		if (L)
			gpu_bound_release(L, &b);
		gpu_jit_result_release(&jr);
		if (ev0)
			gpu_cu.cuEventDestroy(ev0);
		if (ev1)
			gpu_cu.cuEventDestroy(ev1);
		if (s)
			gpu_cu.cuStreamDestroy(s);
		gpu_layer_close(L);
		gpu_context_close(&ctx);
	}
	err_release(&e);
	return rc;
}

/* ---- the parent ------------------------------------------------------------------- */

static void set_status(GpuProbeModuleResult *mr, GpuStatus st, const char *msg)
{
	mr->status = st;
	free(mr->message);
	mr->message = xstrdup(msg ? msg : "");
}

/* The module's result from what its child sent. */
static void take(GpuProbeModuleResult *mr, GpuChildTask *t, const Manifest *m)
{
	GpuChildResult *cr = &t->cr;
	mr->child_seconds = cr->seconds;
	int done = 0;
	for (size_t i = 0; i < cr->nrecs; i++) {
		GpuChildRecord *rec = &cr->recs[i];
		GpuRd rd = {rec->payload, rec->npayload, 1, 0};
		char tag = rec->npayload ? (char)rec->payload[0] : 0;
		if (tag == 'D') {
			mr->cc_major = (int)gpu_rd_u64(&rd);
			mr->cc_minor = (int)gpu_rd_u64(&rd);
			mr->driver_version = (int)gpu_rd_u64(&rd);
			mr->setup_seconds = gpu_rd_f64(&rd);
			uint64_t dl = gpu_rd_u64(&rd);
			const unsigned char *d = gpu_rd_span(&rd, dl);
			if (d)
				snprintf(mr->device, sizeof mr->device, "%.*s", (int)dl,
				         (const char *)d);
		} else if (tag == 'F') {
			set_status(mr, rec->status == GPU_OK ? GPU_ERROR : rec->status,
			           rec->message);
			done = 1;
		} else if (tag == 'R') {
			mr->jit_seconds = gpu_rd_f64(&rd);
			mr->jit_cached = gpu_rd_u64(&rd) != 0;
			mr->run_ms = gpu_rd_f64(&rd);
			mr->read_seconds = gpu_rd_f64(&rd);
			mr->free_bytes = gpu_rd_u64(&rd);
			mr->total_bytes = gpu_rd_u64(&rd);
			uint64_t fl = gpu_rd_u64(&rd);
			const unsigned char *fp = gpu_rd_span(&rd, fl);
			uint64_t dl = gpu_rd_u64(&rd);
			const unsigned char *dp = gpu_rd_span(&rd, dl);
			mr->times.n = (unsigned)gpu_rd_u64(&rd);
			mr->times.median_ms = gpu_rd_f64(&rd);
			mr->times.min_ms = gpu_rd_f64(&rd);
			mr->times.max_ms = gpu_rd_f64(&rd);
			mr->attrs.known = gpu_rd_u64(&rd) != 0;
			mr->attrs.regs = (int)(int64_t)gpu_rd_u64(&rd);
			mr->attrs.local_bytes = (int)(int64_t)gpu_rd_u64(&rd);
			mr->attrs.shared_bytes = (int)(int64_t)gpu_rd_u64(&rd);
			mr->attrs.max_threads = (int)(int64_t)gpu_rd_u64(&rd);
			uint64_t ll = gpu_rd_u64(&rd);
			const unsigned char *lp = gpu_rd_span(&rd, ll);
			free(mr->jit_log);
			mr->jit_log =
			    lp ? xstrndup((const char *)lp, (size_t)ll) : xstrdup("");
			done = 1;
			if (rd.bad || fl != m->frame_size) {
				set_status(mr, GPU_ERROR,
				           "the child sent a damaged result");
				continue;
			}
			mr->status = GPU_OK;
			mr->blob = rec->payload;
			rec->payload = NULL;
			mr->frame = (unsigned char *)fp;
			mr->frame_len = (size_t)fl;
			mr->dump = (unsigned char *)dp;
			mr->dump_len = dl;
			sha256_hex(mr->frame, mr->frame_len, mr->sha256);
		}
	}
	if (!done) {
		const char *why = cr->status != GPU_OK && cr->message
		                      ? cr->message
		                      : "the child ended without a result";
		set_status(mr, cr->status != GPU_OK ? cr->status : GPU_ERROR, why);
	}
}

int gpu_probe_run(const GpuProbeJob *job, GpuProbeResult *res, Err *e)
{
	memset(res, 0, sizeof *res);
	res->nmods = job->nmodules;
	res->mods = xcalloc(job->nmodules + 1, sizeof(GpuProbeModuleResult));
	for (size_t k = 0; k < job->nmodules; k++)
		res->mods[k].name = xstrdup(job->modules[k].name);
	if (!job->nmodules)
		return err_set(e, "no module to run");
	if (gpu_driver_load(e) < 0)
		return -1;
	ProbeArg *args = xcalloc(job->nmodules, sizeof(ProbeArg));
	GpuChildTask *tasks = xcalloc(job->nmodules, sizeof(GpuChildTask));
	for (size_t k = 0; k < job->nmodules; k++) {
		args[k] = (ProbeArg){job, k};
		tasks[k].arg = &args[k];
	}
	gpu_child_run_all(probe_child, tasks, job->nmodules,
	                  job->timeout_s > 0 ? job->timeout_s : 60,
	                  job->jit_limit_s > 0 ? job->jit_limit_s : 900, job->serial,
	                  &res->wall_seconds);
	int rc = 0, any = 0;
	for (size_t k = 0; k < job->nmodules; k++) {
		GpuChildTask *t = &tasks[k];
		GpuProbeModuleResult *mr = &res->mods[k];
		if (t->rc < 0) {
			set_status(mr, GPU_ERROR, err_msg(&t->e));
		} else {
			any = 1;
			take(mr, t, job->manifest);
			gpu_child_result_release(&t->cr);
		}
		if (mr->status != GPU_OK && !res->message) {
			StrBuf sb = STRBUF_INIT;
			sb_addf(&sb, "%s: %s", mr->name, mr->message ? mr->message : "");
			res->message = sb.p;
		}
		if (mr->status > res->status)
			res->status = mr->status;
	}
	if (!any) {
		err_set(e, "%s", err_msg(&tasks[0].e));
		rc = -1;
	}
	for (size_t k = 0; k < job->nmodules; k++)
		err_release(&tasks[k].e);
	free(tasks);
	free(args);
	return rc;
}

void gpu_probe_result_release(GpuProbeResult *res)
{
	for (size_t k = 0; k < res->nmods; k++) {
		GpuProbeModuleResult *mr = &res->mods[k];
		free(mr->name);
		free(mr->message);
		free(mr->jit_log);
		free(mr->blob);
	}
	free(res->mods);
	free(res->message);
	memset(res, 0, sizeof *res);
}

/* ---- the device's memory --------------------------------------------------------- */

typedef struct {
	int device;
} MemArg;

static int memory_child(void *argp, GpuChan *ch)
{
	const MemArg *a = argp;
	Err e = ERR_INIT;
	GpuContext ctx = {0};
	size_t fr = 0, tot = 0;
	gpu_chan_stage(ch, "context");
	if (gpu_driver_load(&e) < 0 || gpu_context_open(a->device, &ctx, &e) < 0 ||
	    gpu_cu_check(gpu_cu.cuMemGetInfo(&fr, &tot), "cuMemGetInfo", &e) < 0) {
		send_failure(ch, GPU_ERROR, err_msg(&e));
		err_release(&e);
		return 1;
	}
	size_t dl = strlen(ctx.name);
	unsigned char *b = xmalloc(1 + 8 * 3 + dl), *p = b;
	*p++ = 'G';
	p = put_u64(p, fr);
	p = put_u64(p, tot);
	p = put_u64(p, dl);
	memcpy(p, ctx.name, dl);
	gpu_chan_result(ch, GPU_OK, NULL, b, 1 + 8 * 3 + dl);
	free(b);
	gpu_context_close(&ctx);
	err_release(&e);
	return 0;
}

int gpu_probe_device_memory(int device, uint64_t *free_b, uint64_t *total_b,
                            char name[128], Err *e)
{
	*free_b = *total_b = 0;
	name[0] = 0;
	if (gpu_driver_load(e) < 0)
		return -1;
	MemArg a = {device};
	GpuChildResult cr;
	if (gpu_child_run(memory_child, &a, 60, 60, &cr, e) < 0)
		return -1;
	int rc = -1;
	for (size_t i = 0; i < cr.nrecs; i++) {
		GpuChildRecord *rec = &cr.recs[i];
		GpuRd rd = {rec->payload, rec->npayload, 1, 0};
		if (rec->npayload && rec->payload[0] == 'G') {
			*free_b = gpu_rd_u64(&rd);
			*total_b = gpu_rd_u64(&rd);
			uint64_t dl = gpu_rd_u64(&rd);
			const unsigned char *d = gpu_rd_span(&rd, dl);
			if (d)
				snprintf(name, 128, "%.*s", (int)dl, (const char *)d);
			rc = rd.bad ? -1 : 0;
		}
	}
	if (rc < 0)
		err_set(e, "%s",
		        cr.message ? cr.message
		                   : "the device's memory could not be read");
	gpu_child_result_release(&cr);
	return rc;
}
