/*
 * run.c (sample) - the children of a sampling job (run.h): JIT, and for a
 * sampled module the layer's launches under CUPTI PC sampling.
 *
 * A child sends one record: 'S' and, in order, the JIT's seconds and
 * whether it was cached, the device (name, compute capability), the image,
 * the frame, and with samples their figures, the reasons' names and the
 * counts (SamplePcs); or 'F' with the failure in the record's message.
 */
#include "sample/run.h"

#include "gpu/driver.h"
#include "gpu/launch.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	const SampleJob *job;
	size_t k;
} RunArg;

static void put_u64(StrBuf *b, uint64_t v)
{
	sb_addn(b, (const char *)&v, 8);
}
static void put_f64(StrBuf *b, double v)
{
	sb_addn(b, (const char *)&v, 8);
}
static void put_bytes(StrBuf *b, const void *p, size_t n)
{
	put_u64(b, n);
	if (n)
		sb_addn(b, p, n);
}

static int sample_child(void *argp, GpuChan *ch)
{
	const RunArg *a = argp;
	const SampleJob *job = a->job;
	const SampleModule *src = &job->modules[a->k];
	const Manifest *m = job->manifest;
	Err e = ERR_INIT;
	GpuContext ctx = {0};
	GpuLayer *L = NULL;
	CUstream s = NULL;
	GpuJitResult jr;
	memset(&jr, 0, sizeof jr);
	GpuBound b = {0};
	SampleSession *ss = NULL;
	SamplePcs pcs;
	memset(&pcs, 0, sizeof pcs);
	unsigned char *frame = NULL;
	uint64_t crc = 0;
	int rc = 1, lost = 0;
	char stage[300];
	StrBuf out = STRBUF_INIT;

	if (!getenv("CUDA_CACHE_DISABLE") && !getenv("CUDA_CACHE_PATH"))
		setenv("CUDA_CACHE_DISABLE", "1", 1);
	gpu_chan_stage(ch, "context");
	if (gpu_driver_load(&e) < 0 || gpu_context_open(job->device, &ctx, &e) < 0)
		goto fail;
	/* the session before the module: CUPTI sees it loaded */
	if (src->sample &&
	    (sample_session_open(ctx.ctx, job->period, &ss, &e) < 0 ||
	     gpu_layer_open(m, &L, &e) < 0 ||
	     gpu_cu_check(gpu_cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING),
	                  "cuStreamCreate", &e) < 0))
		goto fail;
	snprintf(stage, sizeof stage, "jit %s", src->name);
	gpu_chan_stage(ch, stage);
	GpuJitOptions jo = {.name = src->name,
	                    .verbose = src->verbose,
	                    .no_cache = job->no_cache,
	                    .cache_dir = job->cache_dir,
	                    .opt_level = -1,
	                    .line_info = src->line_info,
	                    .keep_image = true};
	if (gpu_jit(src->ptx, src->ptx_len, &jo, &jr, &e) < 0)
		goto fail;
	if (src->sample) {
		const unsigned char *text;
		size_t tl;
		if (sample_cubin_text(jr.image, jr.image_len, m->entry, &text, &tl, &e) <
		        0 ||
		    sample_cubin_crc(jr.image, jr.image_len, &crc, &e) < 0 ||
		    gpu_layer_bind(L, jr.module, &b, &e) < 0)
			goto fail;
		pcs.ninsn = tl / SAMPLE_INSN_BYTES;
		pcs.period = job->period;
		snprintf(stage, sizeof stage, "launch %s", src->name);
		gpu_chan_stage(ch, stage);
		gpu_cu_last_error = CUDA_SUCCESS;
		/* once untimed and unsampled (the caches warm, as profile's
		 * warm-up runs), then the sampled runs */
		for (unsigned i = 0; i <= job->runs; i++) {
			if (gpu_layer_reset(L, s, &e) < 0 ||
			    gpu_cu_check(gpu_cu.cuStreamSynchronize(s),
			                 "cuStreamSynchronize", &e) < 0 ||
			    (i && sample_session_start(ss, &e) < 0) ||
			    gpu_layer_launch(L, &b, s, &e) < 0 ||
			    gpu_cu_check(gpu_cu.cuStreamSynchronize(s),
			                 "cuStreamSynchronize", &e) < 0 ||
			    (i && sample_session_stop(ss, m->entry, crc, &pcs, &e) < 0)) {
				err_set(&e, "the sampled runs: %s", err_msg(&e));
				goto fail;
			}
			pcs.runs = i;
		}
		frame = xmalloc(m->frame_size + 1);
		if (gpu_layer_read_frame(L, frame, &e) < 0)
			goto fail;
		sample_session_close(ss, m->entry, crc, &pcs);
		ss = NULL;
	}
	sb_addn(&out, "S", 1);
	put_f64(&out, jr.seconds);
	put_u64(&out, jr.cached);
	put_bytes(&out, ctx.name, strlen(ctx.name));
	put_u64(&out, (uint64_t)ctx.cc_major);
	put_u64(&out, (uint64_t)ctx.cc_minor);
	put_bytes(&out, jr.image, jr.image_len);
	put_bytes(&out, frame, frame ? m->frame_size : 0);
	put_u64(&out, src->sample);
	if (src->sample) {
		uint64_t fig[] = {pcs.period,  pcs.runs,     pcs.nreasons,   pcs.noffered,
		                  pcs.ninsn,   pcs.outside,  pcs.other,      pcs.total,
		                  pcs.dropped, pcs.non_user, pcs.buffer_full};
		for (size_t i = 0; i < sizeof fig / sizeof *fig; i++)
			put_u64(&out, fig[i]);
		for (size_t i = 0; i < pcs.nreasons; i++)
			put_bytes(&out, pcs.reason[i], strlen(pcs.reason[i]));
		sb_addn(&out, (const char *)pcs.count, pcs.ninsn * pcs.nreasons * 8);
	}
	gpu_chan_result(ch, GPU_OK, NULL, out.p, out.n);
	rc = 0;
	goto done;
fail:
	lost = gpu_cu_is_fault(gpu_cu_last_error);
	gpu_chan_result(ch, lost ? GPU_FAULT : GPU_ERROR, err_msg(&e), "F", 1);
done:
	if (!lost) {
		sample_session_close(ss, NULL, 0, NULL);
		if (L)
			gpu_bound_release(L, &b);
		gpu_jit_result_release(&jr);
		if (s)
			gpu_cu.cuStreamDestroy(s);
		gpu_layer_close(L);
		gpu_context_close(&ctx);
	}
	sample_pcs_release(&pcs);
	free(frame);
	sb_release(&out);
	err_release(&e);
	return rc;
}

/* The module's result from its child's record. */
static void take(SampleModuleResult *mr, const GpuChildResult *cr, const Manifest *m)
{
	for (size_t i = 0; i < cr->nrecs; i++) {
		const GpuChildRecord *rec = &cr->recs[i];
		if (!rec->npayload)
			continue;
		if (rec->payload[0] == 'F') {
			mr->status = rec->status == GPU_OK ? GPU_ERROR : rec->status;
			mr->message = xstrdup(rec->message ? rec->message : "");
			return;
		}
		if (rec->payload[0] != 'S')
			continue;
		GpuRd rd = {rec->payload, rec->npayload, 1, 0};
		mr->jit_seconds = gpu_rd_f64(&rd);
		mr->jit_cached = gpu_rd_u64(&rd) != 0;
		uint64_t n = gpu_rd_u64(&rd);
		const unsigned char *p = gpu_rd_span(&rd, n);
		if (p)
			snprintf(mr->device, sizeof mr->device, "%.*s", (int)n,
			         (const char *)p);
		mr->cc_major = (int)gpu_rd_u64(&rd);
		mr->cc_minor = (int)gpu_rd_u64(&rd);
		n = gpu_rd_u64(&rd);
		p = gpu_rd_span(&rd, n);
		if (p) {
			mr->image = xmalloc(n + 1);
			memcpy(mr->image, p, n);
			mr->image_len = n;
		}
		n = gpu_rd_u64(&rd);
		p = gpu_rd_span(&rd, n);
		if (p && n) {
			mr->frame = xmalloc(n);
			memcpy(mr->frame, p, n);
			mr->frame_len = n;
		}
		mr->sampled = gpu_rd_u64(&rd) != 0;
		if (mr->sampled) {
			SamplePcs *s = &mr->pcs;
			s->period = (uint32_t)gpu_rd_u64(&rd);
			s->runs = (unsigned)gpu_rd_u64(&rd);
			s->nreasons = gpu_rd_u64(&rd);
			s->noffered = gpu_rd_u64(&rd);
			s->ninsn = gpu_rd_u64(&rd);
			s->outside = gpu_rd_u64(&rd);
			s->other = gpu_rd_u64(&rd);
			s->total = gpu_rd_u64(&rd);
			s->dropped = gpu_rd_u64(&rd);
			s->non_user = gpu_rd_u64(&rd);
			s->buffer_full = gpu_rd_u64(&rd) != 0;
			if (s->nreasons > 4096 || s->ninsn > ((uint64_t)1 << 28))
				rd.bad = 1;
			else {
				s->reason = xcalloc(s->nreasons + 1, sizeof *s->reason);
				for (size_t k = 0; k < s->nreasons; k++) {
					n = gpu_rd_u64(&rd);
					p = gpu_rd_span(&rd, n);
					s->reason[k] = p ? xstrndup((const char *)p, n)
					                 : xstrdup("?");
				}
				p = gpu_rd_span(&rd, s->ninsn * s->nreasons * 8);
				s->count = xcalloc(s->ninsn * s->nreasons + 1, 8);
				if (p)
					memcpy(s->count, p, s->ninsn * s->nreasons * 8);
			}
		}
		if (rd.bad || (mr->sampled && mr->frame_len != m->frame_size)) {
			mr->status = GPU_ERROR;
			mr->message = xstrdup("the child sent a damaged result");
			return;
		}
		mr->status = GPU_OK;
		return;
	}
	mr->status = cr->status != GPU_OK ? cr->status : GPU_ERROR;
	mr->message = xstrdup(cr->status != GPU_OK && cr->message
	                          ? cr->message
	                          : "the child ended without a result");
}

int sample_run(const SampleJob *job, SampleRunResult *res, Err *e)
{
	memset(res, 0, sizeof *res);
	res->nmods = job->nmodules;
	res->mods = xcalloc(job->nmodules + 1, sizeof *res->mods);
	for (size_t k = 0; k < job->nmodules; k++)
		res->mods[k].name = xstrdup(job->modules[k].name);
	if (!job->nmodules)
		return err_set(e, "no module to run");
	if (gpu_driver_load(e) < 0)
		return -1;
	RunArg *args = xcalloc(job->nmodules, sizeof *args);
	GpuChildTask *tasks = xcalloc(job->nmodules, sizeof *tasks);
	for (size_t k = 0; k < job->nmodules; k++) {
		args[k] = (RunArg){job, k};
		tasks[k].arg = &args[k];
	}
	gpu_child_run_all(sample_child, tasks, job->nmodules,
	                  job->timeout_s > 0 ? job->timeout_s : 60, 900, job->serial,
	                  &res->wall_seconds);
	int rc = 0, any = 0;
	for (size_t k = 0; k < job->nmodules; k++) {
		SampleModuleResult *mr = &res->mods[k];
		if (tasks[k].rc < 0) {
			mr->status = GPU_ERROR;
			mr->message = xstrdup(err_msg(&tasks[k].e));
		} else {
			any = 1;
			take(mr, &tasks[k].cr, job->manifest);
			gpu_child_result_release(&tasks[k].cr);
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

void sample_run_release(SampleRunResult *res)
{
	for (size_t k = 0; k < res->nmods; k++) {
		SampleModuleResult *mr = &res->mods[k];
		free(mr->name);
		free(mr->message);
		free(mr->image);
		free(mr->frame);
		sample_pcs_release(&mr->pcs);
	}
	free(res->mods);
	free(res->message);
	memset(res, 0, sizeof *res);
}
