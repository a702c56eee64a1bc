/*
 * run.c - the GPU side of a replay, in one child process (gpu/child.h: a
 * fault or a hang costs the replay, not the tool).
 *
 * The child opens the layer (gpu/launch.h: the manifest's buffers, arrays
 * and objects) and, unless the state is given (cached), takes it: the dump
 * module JIT-compiled and bound to the layer's launches, its two symbols
 * set to zeroed buffers, the launches before the entry's run, the buffers
 * the cut reads copied back (their bytes at the launch's start) with the
 * launch's parameter block, the rest of the sequence run, the registers'
 * dump and the shared state copied back: record 'S'.  Then the replay
 * module (small: one JIT of a few hundred statements) and, for each of its
 * two entries, from fresh inputs: the buffers the cut reads put back, the
 * registers' and the shared state uploaded with their end halves cleared,
 * the dump's parameter block in its symbol, one launch with the entry's
 * grid, block, dynamic shared memory and parameter block, and back: the
 * registers, the shared state and the buffers the cut writes (records 'E').
 *
 *   'D'  the device's name
 *   'S'  the state: regs, shared, params, then each buffer read
 *   'E'  an entry's end: which (0 original, 1 spliced), ms, regs, shared,
 *        each buffer written
 *   'J'  the JIT seconds and whether cached: dump, replay; the dump's ms
 *   'F'  the failure (status and message)
 *
 * Decisions:
 *  - One child for the dump and both entries: the state crosses no pipe
 *    twice and the layer is opened once; the dump's JIT is the long part
 *    and a cached state skips it.
 *  - The end halves are cleared before each entry, so an entry that fails
 *    to store a value shows as a difference, never as the dump's value.
 */
#include "replay/replay.h"

#include "base/file.h"
#include "base/sha256.h"
#include "gpu/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. the state ----------------------------------------------------------------- */

void replay_state_release(ReplayState *st)
{
	free(st->regs);
	free(st->shared);
	free(st->params);
	for (size_t i = 0; i < st->nbufs; i++)
		free(st->bufs[i]);
	free(st->bufs);
	free(st->buf_len);
	free(st->span_start);
	free(st->span_end);
	for (size_t i = 0; i < st->narr_in; i++)
		free(st->arr_start[i]);
	for (size_t i = 0; i < st->narr_out; i++)
		free(st->arr_end[i]);
	free(st->arr_start);
	free(st->arr_end);
	free(st->arr_len);
	memset(st, 0, sizeof *st);
}

static void put64(StrBuf *o, uint64_t v)
{
	sb_addn(o, &v, 8);
}

#define STATE_MAGIC "d4r-replay-state 2\n"

void replay_state_write(const ReplayState *st, StrBuf *o)
{
	sb_adds(o, STATE_MAGIC);
	put64(o, st->regs_len);
	sb_addn(o, st->regs, st->regs_len);
	put64(o, st->shared_len);
	sb_addn(o, st->shared, st->shared_len);
	put64(o, st->params_len);
	sb_addn(o, st->params, st->params_len);
	put64(o, st->nbufs);
	for (size_t i = 0; i < st->nbufs; i++) {
		put64(o, st->buf_len[i]);
		sb_addn(o, st->bufs[i], st->buf_len[i]);
	}
	put64(o, st->span_len);
	sb_addn(o, st->span_start, st->span_len);
	sb_addn(o, st->span_end, st->span_len);
	put64(o, st->narr_in);
	put64(o, st->narr_out);
	for (size_t i = 0; i < st->narr_in + st->narr_out; i++) {
		unsigned char *a =
		    i < st->narr_in ? st->arr_start[i] : st->arr_end[i - st->narr_in];
		uint64_t n = a ? st->arr_len[i] : 0;
		put64(o, n);
		sb_addn(o, a, n);
	}
}

static unsigned char *take_span(GpuRd *r, uint64_t *len)
{
	*len = gpu_rd_u64(r);
	const unsigned char *p = gpu_rd_span(r, *len);
	if (!p)
		return NULL;
	unsigned char *c = xmalloc(*len ? *len : 1);
	memcpy(c, p, *len);
	return c;
}

/* The state's parts from r (after any magic). */
static int read_state(GpuRd *r, ReplayState *st)
{
	uint64_t pl;
	st->regs = take_span(r, &st->regs_len);
	st->shared = take_span(r, &st->shared_len);
	st->params = take_span(r, &pl);
	st->params_len = (uint32_t)pl;
	st->nbufs = (size_t)gpu_rd_u64(r);
	if (r->bad || st->nbufs > 4096)
		return -1;
	st->bufs = xcalloc(st->nbufs + 1, sizeof *st->bufs);
	st->buf_len = xcalloc(st->nbufs + 1, sizeof *st->buf_len);
	for (size_t i = 0; i < st->nbufs; i++)
		st->bufs[i] = take_span(r, &st->buf_len[i]);
	st->span_len = gpu_rd_u64(r);
	if (r->bad || st->span_len > r->n)
		return -1;
	const unsigned char *a = gpu_rd_span(r, st->span_len);
	const unsigned char *b = gpu_rd_span(r, st->span_len);
	if (!a || !b)
		return -1;
	st->span_start = xmalloc(st->span_len + 1);
	st->span_end = xmalloc(st->span_len + 1);
	memcpy(st->span_start, a, st->span_len);
	memcpy(st->span_end, b, st->span_len);
	st->narr_in = (size_t)gpu_rd_u64(r);
	st->narr_out = (size_t)gpu_rd_u64(r);
	if (r->bad || st->narr_in > 4096 || st->narr_out > 4096)
		return -1;
	st->arr_start = xcalloc(st->narr_in + 1, sizeof *st->arr_start);
	st->arr_end = xcalloc(st->narr_out + 1, sizeof *st->arr_end);
	st->arr_len = xcalloc(st->narr_in + st->narr_out + 1, sizeof *st->arr_len);
	for (size_t i = 0; i < st->narr_in + st->narr_out && !r->bad; i++) {
		unsigned char *c = take_span(r, &st->arr_len[i]);
		if (i < st->narr_in)
			st->arr_start[i] = c;
		else
			st->arr_end[i - st->narr_in] = c;
	}
	return r->bad ? -1 : 0;
}

static uint64_t regs_bytes(const ReplayPlan *p, const ProbePlan *dp)
{
	return probe_dump_bytes(dp, p->grid, p->block);
}

static uint64_t shared_bytes(const ReplayPlan *p)
{
	return p->blocks * 2 * p->shared_bytes;
}

/* Does st hold each array of the plan, of its size? */
static bool arrays_fit(const ReplayPlan *p, const Manifest *mf, const ReplayState *st)
{
	if (st->narr_in != p->arrays_in.n || st->narr_out != p->arrays_out.n)
		return false;
	for (size_t i = 0; i < st->narr_in + st->narr_out; i++) {
		int a = i < st->narr_in ? p->arrays_in.v[i]
		                        : p->arrays_out.v[i - st->narr_in];
		if (st->arr_len[i] != mf_array_bytes(&mf->arrays[a]))
			return false;
	}
	return true;
}

int replay_state_read(const unsigned char *p, size_t n, const ReplayPlan *plan,
                      const Manifest *mf, const ProbePlan *dp, ReplayState *st, Err *e)
{
	memset(st, 0, sizeof *st);
	size_t ml = strlen(STATE_MAGIC);
	if (n < ml || memcmp(p, STATE_MAGIC, ml))
		return err_set(e, "not a replay state");
	GpuRd r = {p, n, ml, 0};
	if (read_state(&r, st) < 0 || r.at != n || st->regs_len != regs_bytes(plan, dp) ||
	    st->shared_len != shared_bytes(plan) || st->params_len != plan->param_size ||
	    st->nbufs != plan->buffers_in.n || !arrays_fit(plan, mf, st) ||
	    st->span_len != plan->span_bytes) {
		replay_state_release(st);
		return err_set(e, "a replay state of other sizes");
	}
	return 0;
}

int replay_state_key(const char *dump_ptx, size_t n, const Manifest *mf, char key[65],
                     Err *e)
{
	Sha256 h;
	sha256_init(&h);
	sha256_update(&h, STATE_MAGIC, strlen(STATE_MAGIC));
	sha256_update(&h, dump_ptx, n);
	char *text;
	size_t tn;
	if (read_file(mf->path, &text, &tn, e) < 0)
		return -1;
	sha256_update(&h, text, tn);
	free(text);
	for (size_t i = 0; i < mf->nbuffers; i++) {
		const MfInit *in = &mf->buffers[i].init;
		if (in->kind != MF_INIT_FILE)
			continue;
		char *path;
		if (mf_corpus_path(mf, in->path, &path, e) < 0)
			return -1;
		int rc = read_file(path, &text, &tn, e);
		free(path);
		if (rc < 0)
			return -1;
		sha256_update(&h, text, tn);
		free(text);
	}
	unsigned char d[32];
	sha256_final(&h, d);
	sha256_tohex(d, key);
	return 0;
}

/* ---- 2. the child ------------------------------------------------------------------ */

typedef struct {
	GpuChan *ch;
	StrBuf out;
} Rec;

static void rec_u64(Rec *r, uint64_t v)
{
	sb_addn(&r->out, &v, 8);
}

static void rec_f64(Rec *r, double v)
{
	sb_addn(&r->out, &v, 8);
}

static void rec_send(Rec *r)
{
	gpu_chan_result(r->ch, GPU_OK, NULL, r->out.p, r->out.n);
	sb_reset(&r->out);
}

static int symbol_set(CUmodule mod, const char *name, CUdeviceptr v, Err *e)
{
	CUdeviceptr sym = 0;
	size_t n = 0;
	char call[160];
	snprintf(call, sizeof call, "cuModuleGetGlobal '%s'", name);
	if (gpu_cu_check(gpu_cu.cuModuleGetGlobal(&sym, &n, mod, name), call, e) < 0)
		return -1;
	if (n != 8)
		return err_set(e, "the symbol '%s' has %zu bytes, not 8", name, n);
	return gpu_cu_check(gpu_cu.cuMemcpyHtoD(sym, &v, 8), call, e);
}

static int dev_alloc(CUdeviceptr *p, uint64_t n, const char *what, Err *e)
{
	char call[160];
	snprintf(call, sizeof call, "cuMemAlloc of %s (%llu bytes)", what,
	         (unsigned long long)n);
	if (gpu_cu_check(gpu_cu.cuMemAlloc(p, n ? n : 8), call, e) < 0)
		return -1;
	return gpu_cu_check(gpu_cu.cuMemsetD8(*p, 0, n ? n : 8), call, e);
}

static int dtoh(void *dst, CUdeviceptr src, uint64_t n, const char *what, Err *e)
{
	return n ? gpu_cu_check(gpu_cu.cuMemcpyDtoH(dst, src, n), what, e) : 0;
}

static int htod(CUdeviceptr dst, const void *src, uint64_t n, const char *what, Err *e)
{
	return n ? gpu_cu_check(gpu_cu.cuMemcpyHtoD(dst, src, n), what, e) : 0;
}

typedef struct {
	GpuContext ctx;
	GpuLayer *L;
	CUstream s;
	CUevent ev0, ev1;
	GpuJitResult jd, jr;
	GpuBound b;
	CUdeviceptr regs, shared, params;
	bool lost;
} Dev;

/* A child's device for replays: the driver, a context on `device` (the
 * driver's own JIT cache off unless the user set it: the image cache is
 * ours), the layer's buffers, a stream and two events.  0, or -1 with the
 * message; what was opened is in *d either way, for the caller's release. */
static int dev_open(GpuChan *ch, const Manifest *mf, int device, Dev *d, Err *e)
{
	if (!getenv("CUDA_CACHE_DISABLE") && !getenv("CUDA_CACHE_PATH"))
		setenv("CUDA_CACHE_DISABLE", "1", 1);
	gpu_chan_stage(ch, "context");
	if (gpu_driver_load(e) < 0 || gpu_context_open(device, &d->ctx, e) < 0 ||
	    gpu_layer_open(mf, &d->L, e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING),
	                 "cuStreamCreate", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventCreate(&d->ev0, CU_EVENT_DEFAULT), "cuEventCreate",
	                 e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventCreate(&d->ev1, CU_EVENT_DEFAULT), "cuEventCreate",
	                 e) < 0)
		return -1;
	return 0;
}

/* The bytes of every span of p, off the buffers, into out (the spans'
 * concatenation), or onto them from in. */
static int spans_read(const ReplayPlan *p, Dev *d, unsigned char *out, const char *what,
                      Err *e)
{
	for (size_t k = 0; k < p->spans.n; k++) {
		const ReplaySpan *s = &p->spans.v[k];
		if (dtoh(out + s->at, gpu_layer_buffer(d->L, (size_t)s->buf) + s->lo,
		         s->hi - s->lo, what, e) < 0)
			return -1;
	}
	return 0;
}

static int spans_write(const ReplayPlan *p, Dev *d, const unsigned char *in, Err *e)
{
	for (size_t k = 0; k < p->spans.n; k++) {
		const ReplaySpan *s = &p->spans.v[k];
		if (htod(gpu_layer_buffer(d->L, (size_t)s->buf) + s->lo, in + s->at,
		         s->hi - s->lo, "putting back the bytes the cut writes", e) < 0)
			return -1;
	}
	return 0;
}

/* Each array of `which` (manifest indices) off the device into out[i]
 * (malloc'd), its size into len[i]. */
static int arrays_read(const Manifest *mf, Dev *d, const void *which, unsigned char **out,
                       uint64_t *len, Err *e)
{
	const VEC(int) *w = which;
	for (size_t i = 0; i < w->n; i++) {
		len[i] = mf_array_bytes(&mf->arrays[w->v[i]]);
		out[i] = xmalloc(len[i] + 1);
		if (gpu_layer_array_read(d->L, (size_t)w->v[i], out[i], e) < 0)
			return -1;
	}
	return 0;
}

/* The dump: the state into st, sent as 'S'. */
static int take_state(const ReplayJob *j, Dev *d, Rec *r, ReplayState *st, Err *e)
{
	const Manifest *mf = j->mf;
	const ReplayPlan *p = j->plan;
	gpu_chan_stage(r->ch, "jit dump");
	GpuJitOptions jo = {.name = "dump",
	                    .no_cache = j->no_cache,
	                    .cache_dir = j->cache_dir,
	                    .opt_level = -1};
	if (gpu_jit(j->dump_ptx, j->dump_len, &jo, &d->jd, e) < 0 ||
	    gpu_layer_bind(d->L, d->jd.module, &d->b, e) < 0)
		return -1;
	st->regs_len = regs_bytes(p, j->dp);
	st->shared_len = shared_bytes(p);
	if (dev_alloc(&d->regs, st->regs_len, "the registers' dump", e) < 0 ||
	    dev_alloc(&d->shared, st->shared_len, "the shared state", e) < 0 ||
	    symbol_set(d->jd.module, REPLAY_SYM_REGS, d->regs, e) < 0 ||
	    symbol_set(d->jd.module, REPLAY_SYM_SHARED, d->shared, e) < 0)
		return -1;
	gpu_chan_stage(r->ch, "launch dump");
	float ms = 0;
	if (gpu_layer_reset(d->L, d->s, e) < 0 ||
	    gpu_layer_launch_range(d->L, &d->b, 0, j->launch, d->s, e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamSynchronize(d->s), "cuStreamSynchronize", e) < 0)
		return -1;
	st->nbufs = p->buffers_in.n;
	st->bufs = xcalloc(st->nbufs + 1, sizeof *st->bufs);
	st->buf_len = xcalloc(st->nbufs + 1, sizeof *st->buf_len);
	for (size_t i = 0; i < st->nbufs; i++) {
		int bi = p->buffers_in.v[i];
		st->buf_len[i] = mf->buffers[bi].size;
		st->bufs[i] = xmalloc(st->buf_len[i] + 1);
		if (dtoh(st->bufs[i], gpu_layer_buffer(d->L, (size_t)bi), st->buf_len[i],
		         "reading a buffer at the launch's start", e) < 0)
			return -1;
	}
	st->params_len = mf->launches[j->launch].param_size;
	st->params = xcalloc(1, st->params_len + 8);
	gpu_layer_params(d->L, j->launch, st->params);
	st->span_len = p->span_bytes;
	st->span_start = xmalloc(st->span_len + 1);
	st->span_end = xmalloc(st->span_len + 1);
	st->narr_in = p->arrays_in.n;
	st->narr_out = p->arrays_out.n;
	st->arr_start = xcalloc(st->narr_in + 1, sizeof *st->arr_start);
	st->arr_end = xcalloc(st->narr_out + 1, sizeof *st->arr_end);
	st->arr_len = xcalloc(st->narr_in + st->narr_out + 1, sizeof *st->arr_len);
	if (spans_read(p, d, st->span_start,
	               "reading the bytes the cut writes at the "
	               "launch's start",
	               e) < 0 ||
	    arrays_read(mf, d, &p->arrays_in, st->arr_start, st->arr_len, e) < 0)
		return -1;
	/* the entry's launch alone: the bytes and arrays the cut writes as it
	 * ends (nothing else of the kernel writes them: the plan's rule) */
	if (gpu_cu_check(gpu_cu.cuEventRecord(d->ev0, d->s), "cuEventRecord", e) < 0 ||
	    gpu_layer_launch_range(d->L, &d->b, j->launch, j->launch + 1, d->s, e) < 0 ||
	    gpu_cu_check(gpu_cu.cuEventRecord(d->ev1, d->s), "cuEventRecord", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuStreamSynchronize(d->s), "cuStreamSynchronize", e) <
	        0 ||
	    gpu_cu_check(gpu_cu.cuEventElapsedTime(&ms, d->ev0, d->ev1),
	                 "cuEventElapsedTime", e) < 0 ||
	    spans_read(p, d, st->span_end, "reading the bytes the cut writes at its end",
	               e) < 0 ||
	    arrays_read(mf, d, &p->arrays_out, st->arr_end, st->arr_len + st->narr_in,
	                e) < 0 ||
	    gpu_layer_launch_range(d->L, &d->b, j->launch + 1, mf->nlaunches, d->s, e) <
	        0 ||
	    gpu_cu_check(gpu_cu.cuStreamSynchronize(d->s), "cuStreamSynchronize", e) < 0)
		return -1;
	st->regs = xmalloc(st->regs_len + 1);
	st->shared = xmalloc(st->shared_len + 1);
	if (dtoh(st->regs, d->regs, st->regs_len, "reading the registers' dump", e) < 0 ||
	    dtoh(st->shared, d->shared, st->shared_len, "reading the shared state", e) <
	        0)
		return -1;
	sb_addc(&r->out, 'S');
	StrBuf sb = STRBUF_INIT;
	replay_state_write(st, &sb);
	sb_addn(&r->out, sb.p + strlen(STATE_MAGIC), sb.n - strlen(STATE_MAGIC));
	sb_release(&sb);
	rec_f64(r, ms);
	rec_send(r);
	gpu_cu.cuMemFree(d->regs);
	gpu_cu.cuMemFree(d->shared);
	d->regs = d->shared = 0;
	return 0;
}

/* The state as an entry starts from: the end halves cleared. */
static void start_copy(const ReplayJob *j, const ReplayState *st, unsigned char **regs,
                       unsigned char **shared)
{
	const ReplayPlan *p = j->plan;
	const ProbeRecord *end = &j->dp->recs.v[REPLAY_REC_END];
	*regs = xmalloc(st->regs_len + 1);
	memcpy(*regs, st->regs, st->regs_len);
	for (uint64_t w = 0; w < p->warps; w++)
		memset(*regs + w * j->dp->warp_bytes + end->off, 0, end->bytes);
	*shared = xmalloc(st->shared_len + 1);
	memcpy(*shared, st->shared, st->shared_len);
	for (uint64_t b = 0; b < p->blocks; b++)
		memset(*shared + (2 * b + 1) * p->shared_bytes, 0, p->shared_bytes);
}

/* One replay item: its module JIT-compiled, both entries run from its
 * state, their end states into out[0..2) (malloc'd). */
typedef struct {
	const Manifest *mf;
	size_t launch;
	const ReplayPlan *plan;
	const ProbePlan *dp;
	const ReplayState *st;
	const char *ptx;
	size_t len;
	bool no_cache;
	const char *cache_dir;
} RunItem;

static int entries(const RunItem *it, Dev *d, GpuChan *ch, ReplayEnd out[2], Err *e)
{
	const Manifest *mf = it->mf;
	const ReplayPlan *p = it->plan;
	const ReplayState *st = it->st;
	const MfLaunch *l = &mf->launches[it->launch];
	gpu_chan_stage(ch, "jit replay");
	GpuJitOptions jo = {.name = "replay",
	                    .no_cache = it->no_cache,
	                    .cache_dir = it->cache_dir,
	                    .opt_level = -1};
	gpu_jit_result_release(&d->jr);
	memset(&d->jr, 0, sizeof d->jr);
	if (gpu_jit(it->ptx, it->len, &jo, &d->jr, e) < 0)
		return -1;
	CUfunction fn[2];
	const char *names[2] = {REPLAY_ENTRY_ORIGINAL, REPLAY_ENTRY_SPLICED};
	for (int k = 0; k < 2; k++) {
		char call[160];
		snprintf(call, sizeof call, "cuModuleGetFunction '%s'", names[k]);
		if (gpu_cu_check(
		        gpu_cu.cuModuleGetFunction(&fn[k], d->jr.module, names[k]), call,
		        e) < 0)
			return -1;
		if (l->dynamic_shared_bytes > 48 * 1024 &&
		    gpu_cu_check(gpu_cu.cuFuncSetAttribute(
		                     fn[k],
		                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		                     (int)l->dynamic_shared_bytes),
		                 "allowing the launch's dynamic shared memory", e) < 0)
			return -1;
	}
	if (dev_alloc(&d->regs, st->regs_len, "the registers' state", e) < 0 ||
	    dev_alloc(&d->shared, st->shared_len, "the shared state", e) < 0 ||
	    dev_alloc(&d->params, st->params_len, "the dump's parameter block", e) < 0 ||
	    symbol_set(d->jr.module, REPLAY_SYM_REGS, d->regs, e) < 0 ||
	    symbol_set(d->jr.module, REPLAY_SYM_SHARED, d->shared, e) < 0 ||
	    symbol_set(d->jr.module, REPLAY_SYM_PARAMS, d->params, e) < 0)
		return -1;
	unsigned char *regs0, *shared0;
	ReplayJob jj = {.mf = mf, .launch = it->launch, .plan = p, .dp = it->dp};

	start_copy(&jj, st, &regs0, &shared0);
	unsigned char *pb = xcalloc(1, l->param_size + 8);
	gpu_layer_params(d->L, it->launch, pb);
	int rc = -1;
	for (int k = 0; k < 2; k++) {
		char stage[64];
		snprintf(stage, sizeof stage, "launch replay %s",
		         k ? "spliced" : "original");
		gpu_chan_stage(ch, stage);
		if (gpu_layer_reset(d->L, d->s, e) < 0 ||
		    gpu_cu_check(gpu_cu.cuStreamSynchronize(d->s), "cuStreamSynchronize",
		                 e) < 0)
			goto out;
		for (size_t i = 0; i < st->nbufs; i++)
			if (htod(gpu_layer_buffer(d->L, (size_t)p->buffers_in.v[i]),
			         st->bufs[i], st->buf_len[i], "putting a buffer back",
			         e) < 0)
				goto out;
		if (spans_write(p, d, st->span_start, e) < 0)
			goto out;
		for (size_t i = 0; i < st->narr_in; i++)
			if (gpu_layer_array_write(d->L, (size_t)p->arrays_in.v[i],
			                          st->arr_start[i], e) < 0)
				goto out;
		if (htod(d->regs, regs0, st->regs_len, "uploading the registers", e) <
		        0 ||
		    htod(d->shared, shared0, st->shared_len, "uploading the shared state",
		         e) < 0 ||
		    htod(d->params, st->params, st->params_len,
		         "uploading the parameter block", e) < 0)
			goto out;
		size_t size = l->param_size;
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, pb,
		                 CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
		float ms = 0;
		if (gpu_cu_check(gpu_cu.cuEventRecord(d->ev0, d->s), "cuEventRecord", e) <
		        0 ||
		    gpu_cu_check(gpu_cu.cuLaunchKernel(fn[k], l->grid[0], l->grid[1],
		                                       l->grid[2], l->block[0],
		                                       l->block[1], l->block[2],
		                                       l->dynamic_shared_bytes, d->s,
		                                       NULL, size ? extra : NULL),
		                 names[k], e) < 0 ||
		    gpu_cu_check(gpu_cu.cuEventRecord(d->ev1, d->s), "cuEventRecord", e) <
		        0 ||
		    gpu_cu_check(gpu_cu.cuStreamSynchronize(d->s), "cuStreamSynchronize",
		                 e) < 0 ||
		    gpu_cu_check(gpu_cu.cuEventElapsedTime(&ms, d->ev0, d->ev1),
		                 "cuEventElapsedTime", e) < 0)
			goto out;
		ReplayEnd *en = &out[k];
		en->ms = ms;
		en->regs = xmalloc(st->regs_len + 1);
		en->shared = xmalloc(st->shared_len + 1);
		en->bufs = xcalloc(p->buffers_out.n + 1, sizeof *en->bufs);
		en->arrs = xcalloc(p->arrays_out.n + 1, sizeof *en->arrs);
		uint64_t *alen = xcalloc(p->arrays_out.n + 1, sizeof *alen);
		int ar = arrays_read(mf, d, &p->arrays_out, en->arrs, alen, e);
		free(alen);
		if (ar < 0)
			goto out;
		if (dtoh(en->regs, d->regs, st->regs_len, "reading the registers", e) <
		        0 ||
		    dtoh(en->shared, d->shared, st->shared_len,
		         "reading the shared state", e) < 0)
			goto out;
		for (size_t i = 0; i < p->buffers_out.n; i++) {
			int bi = p->buffers_out.v[i];
			uint64_t n = mf->buffers[bi].size;
			en->bufs[i] = xmalloc(n + 1);
			if (dtoh(en->bufs[i], gpu_layer_buffer(d->L, (size_t)bi), n,
			         "reading a buffer the cut writes", e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	gpu_cu.cuMemFree(d->regs);
	gpu_cu.cuMemFree(d->shared);
	gpu_cu.cuMemFree(d->params);
	d->regs = d->shared = d->params = 0;
	free(regs0);
	free(shared0);
	free(pb);
	return rc;
}

static void end_release(ReplayEnd *en, const ReplayPlan *p)
{
	free(en->regs);
	free(en->shared);
	if (en->bufs)
		for (size_t b = 0; b < p->buffers_out.n; b++)
			free(en->bufs[b]);
	free(en->bufs);
	if (en->arrs)
		for (size_t a = 0; a < p->arrays_out.n; a++)
			free(en->arrs[a]);
	free(en->arrs);
	memset(en, 0, sizeof *en);
}

static int run_entries(const ReplayJob *j, Dev *d, Rec *r, const ReplayState *st, Err *e)
{
	RunItem it = {j->mf,         j->launch,     j->plan,     j->dp,       st,
	              j->replay_ptx, j->replay_len, j->no_cache, j->cache_dir};
	ReplayEnd out[2];
	memset(out, 0, sizeof out);
	int rc = entries(&it, d, r->ch, out, e);
	for (int k = 0; k < 2 && rc == 0; k++) {
		sb_addc(&r->out, 'E');
		rec_u64(r, (uint64_t)k);
		rec_f64(r, out[k].ms);
		sb_addn(&r->out, out[k].regs, st->regs_len);
		sb_addn(&r->out, out[k].shared, st->shared_len);
		for (size_t i = 0; i < j->plan->buffers_out.n; i++)
			sb_addn(&r->out, out[k].bufs[i],
			        j->mf->buffers[j->plan->buffers_out.v[i]].size);
		for (size_t i = 0; i < j->plan->arrays_out.n; i++)
			sb_addn(&r->out, out[k].arrs[i],
			        mf_array_bytes(&j->mf->arrays[j->plan->arrays_out.v[i]]));
		rec_send(r);
	}
	for (int k = 0; k < 2; k++)
		end_release(&out[k], j->plan);
	return rc;
}

static int child(void *argp, GpuChan *ch)
{
	const ReplayJob *j = argp;
	Err e = ERR_INIT;
	Dev d;
	memset(&d, 0, sizeof d);
	Rec r = {ch, STRBUF_INIT};
	ReplayState st;
	memset(&st, 0, sizeof st);
	int rc = 1;
	if (dev_open(ch, j->mf, j->device, &d, &e) < 0)
		goto fail;
	sb_addc(&r.out, 'D');
	rec_u64(&r, strlen(d.ctx.name));
	sb_adds(&r.out, d.ctx.name);
	rec_send(&r);
	const ReplayState *use = j->state;
	if (!use) {
		if (take_state(j, &d, &r, &st, &e) < 0)
			goto fail;
		use = &st;
	}
	if (j->replay_ptx && run_entries(j, &d, &r, use, &e) < 0)
		goto fail;
	sb_addc(&r.out, 'J');
	rec_f64(&r, d.jd.seconds);
	rec_u64(&r, d.jd.cached);
	rec_f64(&r, d.jr.seconds);
	rec_u64(&r, d.jr.cached);
	rec_send(&r);
	rc = 0;
	goto out;
fail:
	d.lost = gpu_cu_is_fault(gpu_cu_last_error);
	gpu_chan_result(ch, d.lost ? GPU_FAULT : GPU_ERROR, err_msg(&e), "F", 1);
out:
	if (!d.lost) {
		if (d.regs)
			gpu_cu.cuMemFree(d.regs);
		if (d.shared)
			gpu_cu.cuMemFree(d.shared);
		if (d.params)
			gpu_cu.cuMemFree(d.params);
		if (d.L)
			gpu_bound_release(d.L, &d.b);
		gpu_jit_result_release(&d.jd);
		gpu_jit_result_release(&d.jr);
		gpu_layer_close(d.L);
		gpu_context_close(&d.ctx);
	}
	replay_state_release(&st);
	sb_release(&r.out);
	err_release(&e);
	return rc;
}

/* ---- 3. the parent ---------------------------------------------------------------- */

static unsigned char *copy_span(GpuRd *r, uint64_t n)
{
	const unsigned char *p = gpu_rd_span(r, n);
	unsigned char *c = xmalloc(n + 1);
	if (p)
		memcpy(c, p, n);
	return c;
}

int replay_run(const ReplayJob *j, ReplayRun *res, Err *e)
{
	memset(res, 0, sizeof *res);
	GpuChildResult cr;
	memset(&cr, 0, sizeof cr);
	double t0 = now_seconds();
	if (gpu_child_run(child, (void *)j, j->timeout_s, 900, &cr, e) < 0)
		return -1;
	res->child_s = now_seconds() - t0;
	res->status = cr.status;
	if (cr.message)
		res->message = xstrdup(cr.message);
	const ReplayPlan *p = j->plan;
	uint64_t rl = regs_bytes(p, j->dp), sl = shared_bytes(p);
	int ends = 0;
	for (size_t i = 0; i < cr.nrecs; i++) {
		GpuChildRecord *rec = &cr.recs[i];
		GpuRd r = {rec->payload, rec->npayload, 1, 0};
		char tag = rec->npayload ? (char)rec->payload[0] : 0;
		if (tag == 'F' || rec->status != GPU_OK) {
			res->status = rec->status == GPU_OK ? GPU_ERROR : rec->status;
			free(res->message);
			res->message =
			    xstrdup(rec->message ? rec->message : "the replay failed");
		} else if (tag == 'D') {
			uint64_t n = gpu_rd_u64(&r);
			const unsigned char *s = gpu_rd_span(&r, n);
			if (s)
				snprintf(res->device, sizeof res->device, "%.*s", (int)n,
				         (const char *)s);
		} else if (tag == 'S') {
			if (read_state(&r, &res->state) == 0) {
				res->dump_run_ms = gpu_rd_f64(&r);
				res->dumped = !r.bad;
			}
		} else if (tag == 'E') {
			uint64_t k = gpu_rd_u64(&r);
			if (k > 1)
				continue;
			ReplayEnd *en = &res->end[k];
			en->ms = gpu_rd_f64(&r);
			en->regs = copy_span(&r, rl);
			en->shared = copy_span(&r, sl);
			en->bufs = xcalloc(p->buffers_out.n + 1, sizeof *en->bufs);
			for (size_t b = 0; b < p->buffers_out.n; b++)
				en->bufs[b] = copy_span(
				    &r, j->mf->buffers[p->buffers_out.v[b]].size);
			en->arrs = xcalloc(p->arrays_out.n + 1, sizeof *en->arrs);
			for (size_t a = 0; a < p->arrays_out.n; a++)
				en->arrs[a] = copy_span(
				    &r,
				    mf_array_bytes(&j->mf->arrays[p->arrays_out.v[a]]));
			if (!r.bad)
				ends |= 1 << k;
		} else if (tag == 'J') {
			res->dump_jit_s = gpu_rd_f64(&r);
			res->dump_jit_cached = gpu_rd_u64(&r) != 0;
			res->replay_jit_s = gpu_rd_f64(&r);
			res->replay_jit_cached = gpu_rd_u64(&r) != 0;
		}
	}
	if (res->status == GPU_OK && j->replay_ptx && ends != 3) {
		res->status = GPU_ERROR;
		free(res->message);
		res->message =
		    xstrdup("the replay child sent no end state of both entries");
	}
	gpu_child_result_release(&cr);
	return 0;
}

void replay_run_release(ReplayRun *res, const ReplayPlan *plan)
{
	free(res->message);
	replay_state_release(&res->state);
	for (int k = 0; k < 2; k++)
		end_release(&res->end[k], plan);
	memset(res, 0, sizeof *res);
}

/* ---- 4. several cuts ------------------------------------------------------------- */

/* Copies of the arrays of `want` (manifest indices) out of `have`'s
 * images have_img[0..) into out[0..), their sizes into len. */
static void arrays_pick(const void *want, const void *have,
                        unsigned char *const *have_img, const uint64_t *have_len,
                        unsigned char **out, uint64_t *len)
{
	const VEC(int) *w = want, *h = have;
	for (size_t i = 0; i < w->n; i++)
		for (size_t k = 0; k < h->n; k++)
			if (h->v[k] == w->v[i]) {
				len[i] = have_len[k];
				out[i] = xmalloc(len[i] + 1);
				memcpy(out[i], have_img[k], len[i]);
			}
}

void replay_state_split(const ReplayState *all_state, const ProbePlan *all,
                        const ReplayPlan *all_plan, size_t rec0, uint64_t area,
                        uint64_t span_at, const ReplayPlan *p, const ProbePlan *dp,
                        ReplayState *out)
{
	const int *all_bufs = all_plan->buffers_in.v;
	memset(out, 0, sizeof *out);
	out->regs_len = regs_bytes(p, dp);
	out->regs = xcalloc(1, out->regs_len + 1);
	for (uint64_t w = 0; w < p->warps; w++)
		for (size_t r = 0; r < dp->recs.n; r++) {
			const ProbeRecord *rec = &dp->recs.v[r];
			unsigned lanes = rec->per_warp ? 1 : 32;
			for (size_t v = 0; v < rec->vals.n; v++) {
				unsigned slot =
				    probe_fmt_bits((ProbeFmt)rec->vals.v[v].fmt) == 64
				        ? 8
				        : 4;
				for (unsigned l = 0; l < lanes; l++)
					memcpy(
					    out->regs + probe_dump_offset(dp, r, v, w, l),
					    all_state->regs +
					        probe_dump_offset(all, rec0 + r, v, w, l),
					    slot);
			}
		}
	out->shared_len = shared_bytes(p);
	out->shared = xmalloc(out->shared_len + 1);
	memcpy(out->shared, all_state->shared + area, out->shared_len);
	out->params_len = all_state->params_len;
	out->params = xmalloc(out->params_len + 1);
	memcpy(out->params, all_state->params, out->params_len);
	out->nbufs = p->buffers_in.n;
	out->bufs = xcalloc(out->nbufs + 1, sizeof *out->bufs);
	out->buf_len = xcalloc(out->nbufs + 1, sizeof *out->buf_len);
	for (size_t i = 0; i < out->nbufs; i++)
		for (size_t k = 0; k < all_state->nbufs; k++)
			if (all_bufs[k] == p->buffers_in.v[i]) {
				out->buf_len[i] = all_state->buf_len[k];
				out->bufs[i] = xmalloc(out->buf_len[i] + 1);
				memcpy(out->bufs[i], all_state->bufs[k], out->buf_len[i]);
			}
	out->span_len = p->span_bytes;
	out->span_start = xmalloc(out->span_len + 1);
	out->span_end = xmalloc(out->span_len + 1);
	memcpy(out->span_start, all_state->span_start + span_at, out->span_len);
	memcpy(out->span_end, all_state->span_end + span_at, out->span_len);
	out->narr_in = p->arrays_in.n;
	out->narr_out = p->arrays_out.n;
	out->arr_start = xcalloc(out->narr_in + 1, sizeof *out->arr_start);
	out->arr_end = xcalloc(out->narr_out + 1, sizeof *out->arr_end);
	out->arr_len = xcalloc(out->narr_in + out->narr_out + 1, sizeof *out->arr_len);
	arrays_pick(&p->arrays_in, &all_plan->arrays_in, all_state->arr_start,
	            all_state->arr_len, out->arr_start, out->arr_len);
	arrays_pick(&p->arrays_out, &all_plan->arrays_out, all_state->arr_end,
	            all_state->arr_len + all_state->narr_in, out->arr_end,
	            out->arr_len + out->narr_in);
}

static const char *const wheres[] = {"", "register", "shared", "buffer", "array"};

static void put_diff(Rec *r, const ReplayDiff *d)
{
	ReplayDiff c = *d;
	uint64_t w = 0;
	for (uint64_t i = 1; i < 5; i++)
		if (d->where && !strcmp(d->where, wheres[i]))
			w = i;
	c.where = NULL;
	rec_u64(r, w);
	sb_addn(&r->out, &c, sizeof c);
}

static void get_diff(GpuRd *r, ReplayDiff *d)
{
	uint64_t w = gpu_rd_u64(r);
	const unsigned char *p = gpu_rd_span(r, sizeof *d);
	if (p)
		memcpy(d, p, sizeof *d);
	d->where = w < 5 ? wheres[w] : "";
}

static int many_child(void *argp, GpuChan *ch)
{
	const ReplayMany *j = argp;
	Err e = ERR_INIT;
	Dev d;
	memset(&d, 0, sizeof d);
	Rec r = {ch, STRBUF_INIT};
	int rc = 1;
	if (dev_open(ch, j->mf, j->device, &d, &e) < 0)
		goto fail;
	for (size_t i = 0; i < j->n; i++) {
		const ReplayItem *x = &j->items[i];
		RunItem it = {j->mf,  j->launch, x->plan,     x->dp,       x->state,
		              x->ptx, x->len,    j->no_cache, j->cache_dir};
		ReplayEnd out[2];
		memset(out, 0, sizeof out);
		ReplayDiff proof, verdict;
		memset(&proof, 0, sizeof proof);
		memset(&verdict, 0, sizeof verdict);
		err_clear(&e);
		int er = entries(&it, &d, ch, out, &e);
		if (er == 0) {
			replay_prove(x->plan, x->dp, j->mf, x->state, &out[0], &proof);
			if (!proof.any)
				replay_compare(x->plan, x->dp, j->mf, &out[0], &out[1],
				               &verdict);
		}
		sb_addc(&r.out, 'V');
		rec_u64(&r, i);
		rec_u64(&r, er == 0);
		const char *msg = er == 0 ? "" : err_msg(&e);
		rec_u64(&r, strlen(msg));
		sb_adds(&r.out, msg);
		put_diff(&r, &proof);
		put_diff(&r, &verdict);
		rec_f64(&r, out[0].ms);
		rec_f64(&r, out[1].ms);
		rec_send(&r);
		for (int k = 0; k < 2; k++)
			end_release(&out[k], x->plan);
		if (er < 0 && gpu_cu_is_fault(gpu_cu_last_error)) {
			d.lost = true;
			goto fail;
		}
	}
	rc = 0;
	goto out;
fail:
	d.lost = d.lost || gpu_cu_is_fault(gpu_cu_last_error);
	gpu_chan_result(ch, d.lost ? GPU_FAULT : GPU_ERROR, err_msg(&e), "F", 1);
out:
	if (!d.lost) {
		gpu_jit_result_release(&d.jr);
		gpu_layer_close(d.L);
		gpu_context_close(&d.ctx);
	}
	sb_release(&r.out);
	err_release(&e);
	return rc;
}

int replay_run_many(const ReplayMany *j, ReplayVerdict *out, GpuStatus *status,
                    char **message, Err *e)
{
	GpuChildResult cr;
	memset(&cr, 0, sizeof cr);
	*message = NULL;
	if (gpu_child_run(many_child, (void *)j, j->timeout_s, 900, &cr, e) < 0)
		return -1;
	*status = cr.status;
	if (cr.message)
		*message = xstrdup(cr.message);
	for (size_t i = 0; i < cr.nrecs; i++) {
		GpuChildRecord *rec = &cr.recs[i];
		GpuRd r = {rec->payload, rec->npayload, 1, 0};
		char tag = rec->npayload ? (char)rec->payload[0] : 0;
		if (tag == 'F' || rec->status != GPU_OK) {
			*status = rec->status == GPU_OK ? GPU_ERROR : rec->status;
			free(*message);
			*message =
			    xstrdup(rec->message ? rec->message : "the replays failed");
			continue;
		}
		if (tag != 'V')
			continue;
		uint64_t k = gpu_rd_u64(&r);
		if (k >= j->n)
			continue;
		ReplayVerdict *v = &out[k];
		v->ran = gpu_rd_u64(&r) != 0;
		uint64_t ml = gpu_rd_u64(&r);
		const unsigned char *m = gpu_rd_span(&r, ml);
		snprintf(v->message, sizeof v->message, "%.*s", m ? (int)ml : 0,
		         m ? (const char *)m : "");
		get_diff(&r, &v->proof);
		get_diff(&r, &v->verdict);
		v->ms[0] = gpu_rd_f64(&r);
		v->ms[1] = gpu_rd_f64(&r);
		if (r.bad) {
			v->ran = false;
			snprintf(v->message, sizeof v->message,
			         "a short record from the replay child");
		}
	}
	gpu_child_result_release(&cr);
	return 0;
}
