/*
 * check_replay.c - `check LAYER --replay`: every recipe replayed first (one
 * cut alone from the state at its start, src/replay/), the whole-module
 * check for those replay cannot prove.
 *
 * For each recipe, on threads: the recipe spliced alone, its state plan,
 * the replay module and the state's cache key.  The states the cache does
 * not hold are taken by one dump: the dump records of all those cuts in
 * one instrumented original (one JIT of the whole module, not one per
 * recipe, and in batches of at most 32 cuts, the batches' JITs side by
 * side), the state split per cut and cached as `replay` caches it.  Then
 * every replayable recipe in one child (one context, the layer opened
 * once): its module, both entries, the proof, the verdict.  Each recipe's
 * outcome goes back to check.c: only a proved IDENTICAL is a verdict;
 * a DIFFERS, a refusal, a failed proof or a failed replay leave the
 * recipe to the whole-module check (check.c), and the lines say which was
 * which.
 *
 * Decisions:
 *  - The replay verdict is the phase's contract (its live-outs and shared
 *    memory bit for bit), stricter than the frame: a difference the next
 *    epilogue rounds away is DIFFERS here and IDENTICAL in the frame.  So
 *    IDENTICAL proves the frame (the rest of the kernel runs as it did on
 *    the same state), DIFFERS does not: those recipes run whole too, the
 *    frame decides their verdict, and a DIFFERS whose frame is IDENTICAL
 *    is named as the case where the contract is stricter than the frame.
 *    check --replay so gives the verdicts check gives, faster.
 */
#include "check_replay.h"

#include "base/file.h"
#include "gpu/driver.h"
#include "gpu/layer.h"
#include "replay/replay.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	const char *path;
	const char *name;
	char *error;   /* could not even plan */
	char *refused; /* the plan's first refusal */
	ReplayPlan plan;
	ProbePlan dp;
	StrBuf mod;
	char key[65];
	char *state_path;
	ReplayState st;
	bool have; /* st holds the state */
	ReplayVerdict v;
} RItem;

typedef struct {
	const Manifest *mf;
	const Module *mo;
	RItem *items;
	size_t n, next;
	const char *cache_dir; /* NULL: no state cache */
	pthread_mutex_t lock;
} Prep;

static void prep_one(Prep *pp, RItem *it)
{
	Err e = ERR_INIT;
	Recipe r;
	memset(&r, 0, sizeof r);
	ReplayCut cut;
	memset(&cut, 0, sizeof cut);
	StrBuf dump = STRBUF_INIT, red = STRBUF_INIT;
	if (rcp_load(it->path, &r, &e) < 0 ||
	    replay_prepare(pp->mf, pp->mo, &r, NULL, &cut, &e) < 0 ||
	    replay_plan(&cut.req, &it->plan, &e) < 0) {
		it->error = xstrdup(err_msg(&e));
		goto out;
	}
	if (it->plan.nrefused) {
		const char *s = it->plan.refused.p, *nl = strchr(s, '\n');
		it->refused = xstrndup(s, nl ? (size_t)(nl - s) : strlen(s));
		goto out;
	}
	if (replay_dump_plan(&it->plan, pp->mo, cut.req.fo, &it->dp, &e) < 0 ||
	    replay_module(&it->plan, &it->dp, &cut.req, &it->mod, &e) < 0 ||
	    replay_dump_module(&it->dp, pp->mo, cut.req.fo, &dump, &e) < 0 ||
	    gpu_reduce_text(pp->mf, "dump", dump.p, dump.n, &red, NULL, NULL, &e) < 0 ||
	    replay_state_key(red.p, red.n, pp->mf, it->key, &e) < 0) {
		it->error = xstrdup(err_msg(&e));
		goto out;
	}
	if (pp->cache_dir) {
		size_t n = strlen(pp->cache_dir) + 96;
		it->state_path = xmalloc(n);
		snprintf(it->state_path, n, "%s/replay/%s.state", pp->cache_dir, it->key);
		char *data;
		size_t len;
		Err ce = ERR_INIT;
		if (access(it->state_path, R_OK) == 0 &&
		    read_file(it->state_path, &data, &len, &ce) == 0) {
			it->have =
			    replay_state_read((unsigned char *)data, len, &it->plan,
			                      pp->mf, &it->dp, &it->st, &ce) == 0;
			free(data);
		}
		err_release(&ce);
	}
out:
	replay_cut_release(&cut);
	rcp_release(&r);
	sb_release(&dump);
	sb_release(&red);
	err_release(&e);
}

static void *prep_worker(void *arg)
{
	Prep *pp = arg;
	for (;;) {
		pthread_mutex_lock(&pp->lock);
		size_t i = pp->next++;
		pthread_mutex_unlock(&pp->lock);
		if (i >= pp->n)
			return NULL;
		prep_one(pp, &pp->items[i]);
	}
}

static void push_once(void *vec, int x)
{
	VEC(int) *v = vec;
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] == x)
			return;
	VEC_PUSH(*v, x);
}

/* The states of items idx[0..nidx), from one dump of all those cuts. */
static int dump_missing(const Manifest *mf, const Module *mo, const Func *fo,
                        size_t launch, RItem *items, const size_t *idx, size_t nidx,
                        const CheckReplayOpts *o, Err *e)
{
	ProbePlan all = {0};
	size_t n = idx[nidx - 1] + 1;
	size_t *rec0 = xcalloc(n + 1, sizeof(size_t));
	uint64_t *area = xcalloc(n + 1, sizeof(uint64_t));
	uint64_t *span_at = xcalloc(n + 1, sizeof(uint64_t));
	ReplayPlan syn;
	memset(&syn, 0, sizeof syn);
	uint64_t at = 0, per_block = 0;
	const ReplayPlan *any = NULL;
	VEC(int) bufs = {0};
	size_t missing = 0;
	for (size_t x = 0; x < nidx; x++) {
		size_t i = idx[x];
		RItem *it = &items[i];
		rec0[i] = all.recs.n;
		area[i] = at;
		replay_dump_records(&it->plan, mo, (unsigned)i, at, &all);
		at += it->plan.blocks * 2 * it->plan.shared_bytes;
		per_block += it->plan.shared_bytes;
		for (size_t b = 0; b < it->plan.buffers_in.n; b++) {
			bool have = false;
			for (size_t k = 0; k < bufs.n; k++)
				have |= bufs.v[k] == it->plan.buffers_in.v[b];
			if (!have)
				VEC_PUSH(bufs, it->plan.buffers_in.v[b]);
		}
		/* the dump's spans: every cut's, one after the other */
		span_at[i] = syn.span_bytes;
		for (size_t k = 0; k < it->plan.spans.n; k++) {
			ReplaySpan sp = it->plan.spans.v[k];
			sp.at += syn.span_bytes;
			VEC_PUSH(syn.spans, sp);
		}
		syn.span_bytes += it->plan.span_bytes;
		for (size_t k = 0; k < it->plan.arrays_in.n; k++)
			push_once(&syn.arrays_in, it->plan.arrays_in.v[k]);
		for (size_t k = 0; k < it->plan.arrays_out.n; k++)
			push_once(&syn.arrays_out, it->plan.arrays_out.v[k]);
		any = &it->plan;
		missing++;
	}
	int rc = 0;
	StrBuf text = STRBUF_INIT, red = STRBUF_INIT;
	ReplayRun run;
	memset(&run, 0, sizeof run);
	if (!missing)
		goto out;
	rc = -1;
	if (probe_plan_layout(&all, e) < 0 ||
	    replay_dump_module(&all, mo, fo, &text, e) < 0 ||
	    gpu_reduce_text(mf, "dump", text.p, text.n, &red, NULL, NULL, e) < 0)
		goto out;
	/* the dump's own plan: the launch's shape, every cut's shared area */
	memcpy(syn.grid, any->grid, sizeof syn.grid);
	memcpy(syn.block, any->block, sizeof syn.block);
	syn.warps = any->warps;
	syn.blocks = any->blocks;
	syn.param_size = any->param_size;
	syn.shared_bytes = per_block;
	for (size_t k = 0; k < bufs.n; k++)
		VEC_PUSH(syn.buffers_in, bufs.v[k]);
	ReplayJob job = {mf,   launch, &syn,       &all,        red.p, red.n, NULL,
	                 NULL, 0,      o->timeout, o->no_cache, NULL,  0};
	fprintf(stderr,
	        "replay:    taking the state of %zu cuts in one dump (%zu records)\n",
	        missing, all.recs.n);
	if (replay_run(&job, &run, e) < 0)
		goto out;
	if (run.status != GPU_OK || !run.dumped) {
		err_set(e, "the dump: %s: %s", gpu_status_name(run.status),
		        run.message ? run.message : "no state came back");
		goto out;
	}
	char *sub = NULL;
	if (o->cache_dir) {
		sub = xmalloc(strlen(o->cache_dir) + 16);
		sprintf(sub, "%s/replay", o->cache_dir);
	}
	for (size_t x = 0; x < nidx; x++) {
		size_t i = idx[x];
		RItem *it = &items[i];
		replay_state_split(&run.state, &all, &syn, rec0[i], area[i], span_at[i],
		                   &it->plan, &it->dp, &it->st);
		it->have = true;
		if (sub && it->state_path) {
			StrBuf sf = STRBUF_INIT;
			Err ce = ERR_INIT;
			replay_state_write(&it->st, &sf);
			if (mkdir_p(sub, &ce) < 0 ||
			    write_file_atomic(it->state_path, sf.p, sf.n, &ce) < 0)
				fprintf(stderr,
				        "d4r-splice: check: a state is not cached: %s\n",
				        err_msg(&ce));
			err_release(&ce);
			sb_release(&sf);
		}
	}
	free(sub);
	rc = 0;
out:
	replay_run_release(&run, &syn);
	VEC_FREE(syn.buffers_in);
	VEC_FREE(syn.spans);
	VEC_FREE(syn.arrays_in);
	VEC_FREE(syn.arrays_out);
	VEC_FREE(bufs);
	probe_plan_release(&all);
	sb_release(&text);
	sb_release(&red);
	free(rec0);
	free(area);
	free(span_at);
	return rc;
}

/* One batch of dump_batches. */
typedef struct {
	const Manifest *mf;
	const Module *mo;
	const Func *fo;
	size_t launch;
	RItem *items;
	const size_t *idx;
	size_t nidx;
	const CheckReplayOpts *o;
	int rc;
	Err e;
} Batch;

static void *batch_run(void *arg)
{
	Batch *b = arg;
	b->rc = dump_missing(b->mf, b->mo, b->fo, b->launch, b->items, b->idx, b->nidx,
	                     b->o, &b->e);
	return NULL;
}

/*
 * The states the cache lacks: the cuts in batches of at most 32, each
 * batch one dump module (one JIT), the batches' children at the same time
 * (their JITs on as many CPUs), so neither one JIT nor one dump grows with
 * the number of recipes.
 */
#define BATCH 32
static int dump_batches(const Manifest *mf, const Module *mo, const Func *fo,
                        size_t launch, RItem *items, size_t n, const CheckReplayOpts *o,
                        Err *e)
{
	size_t *idx = xcalloc(n + 1, sizeof(size_t)), m = 0;
	for (size_t i = 0; i < n; i++)
		if (!items[i].error && !items[i].refused && !items[i].have)
			idx[m++] = i;
	size_t nb = (m + BATCH - 1) / BATCH;
	Batch *bs = xcalloc(nb + 1, sizeof(Batch));
	pthread_t *th = xcalloc(nb + 1, sizeof(pthread_t));
	for (size_t k = 0; k < nb; k++) {
		size_t from = m * k / nb, to = m * (k + 1) / nb;
		bs[k] = (Batch){mf,         mo,        fo, launch, items,
		                idx + from, to - from, o,  0,      ERR_INIT};
		pthread_create(&th[k], NULL, batch_run, &bs[k]);
	}
	int rc = 0;
	for (size_t k = 0; k < nb; k++) {
		pthread_join(th[k], NULL);
		if (bs[k].rc < 0 && rc == 0)
			rc = err_set(e, "%s", err_msg(&bs[k].e));
		err_release(&bs[k].e);
	}
	free(th);
	free(bs);
	free(idx);
	return rc;
}

const char *check_replay_kind_name(CheckReplayKind k)
{
	static const char *const names[] = {"identical", "differs", "refused", "invalid",
	                                    "failed"};
	return names[k];
}

void check_replay_outcome_release(CheckReplayOutcome *o)
{
	free(o->message);
	o->message = NULL;
}

int check_replay(const Manifest *mf, const Module *mo, char **paths, size_t n,
                 const CheckReplayOpts *o, CheckReplayOutcome *out,
                 CheckReplaySummary *sum, Err *e)
{
	double t0 = now_seconds();
	memset(sum, 0, sizeof *sum);
	const Func *fo = mod_func_find(mo, str_c(mf->entry));
	if (!fo)
		return err_set(e, "no function '%s' in the module", mf->entry);
	size_t launch = 0;
	for (size_t i = 0; i < mf->nlaunches; i++)
		if (!strcmp(mf->launches[i].entry, mf->entry))
			launch = i;
	RItem *items = xcalloc(n + 1, sizeof(RItem));
	for (size_t i = 0; i < n; i++) {
		items[i].path = paths[i];
		const char *b = strrchr(paths[i], '/');
		items[i].name = b ? b + 1 : paths[i];
	}
	Prep pp = {mf,
	           mo,
	           items,
	           n,
	           0,
	           o->no_cache ? NULL : o->cache_dir,
	           PTHREAD_MUTEX_INITIALIZER};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nth = cpus > 0 ? (size_t)cpus : 1;
	if (nth > n)
		nth = n ? n : 1;
	pthread_t *th = xcalloc(nth, sizeof(pthread_t));
	for (size_t t = 0; t < nth; t++)
		pthread_create(&th[t], NULL, prep_worker, &pp);
	for (size_t t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	free(th);
	double t_prep = now_seconds() - t0;
	int rc = -1;
	ReplayItem *ri = xcalloc(n + 1, sizeof(ReplayItem));
	size_t *which = xcalloc(n + 1, sizeof(size_t));
	size_t nr = 0;
	char *msg = NULL;
	double t1 = now_seconds();
	if (dump_batches(mf, mo, fo, launch, items, n, o, e) < 0)
		goto out;
	double t_dump = now_seconds() - t1;
	for (size_t i = 0; i < n; i++)
		if (items[i].have) {
			ri[nr] = (ReplayItem){&items[i].plan, &items[i].dp, &items[i].st,
			                      items[i].mod.p, items[i].mod.n};
			which[nr++] = i;
		}
	ReplayVerdict *vs = xcalloc(nr + 1, sizeof(ReplayVerdict));
	GpuStatus gs = GPU_OK;
	double t2 = now_seconds();
	if (nr) {
		ReplayMany job = {mf,         launch,      ri,           nr,
		                  o->timeout, o->no_cache, o->cache_dir, 0};
		if (replay_run_many(&job, vs, &gs, &msg, e) < 0) {
			free(vs);
			goto out;
		}
	}
	for (size_t k = 0; k < nr; k++)
		items[which[k]].v = vs[k];
	free(vs);
	double t_run = now_seconds() - t2;
	StrBuf dt = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		RItem *it = &items[i];
		CheckReplayOutcome *r = &out[i];
		memset(r, 0, sizeof *r);
		sb_reset(&dt);
		const ReplayVerdict *v = &it->v;
		if (it->error || it->refused) {
			r->kind = it->error ? CR_FAILED : CR_REFUSED;
			r->message = xstrdup(it->error ? it->error : it->refused);
		} else if (!v->ran) {
			r->kind = CR_FAILED;
			r->message = xstrdup(v->message[0] ? v->message
			                                   : (msg ? msg : "no result"));
		} else if (v->proof.any) {
			r->kind = CR_INVALID;
			r->diff = v->proof;
			replay_diff_text(&v->proof, &dt);
			r->message = xstrdup(dt.p);
		} else {
			r->kind = v->verdict.any ? CR_DIFFERS : CR_IDENTICAL;
			r->ms[0] = v->ms[0];
			r->ms[1] = v->ms[1];
			if (v->verdict.any) {
				r->diff = v->verdict;
				replay_diff_text(&v->verdict, &dt);
				r->message = xstrdup(dt.p);
			}
		}
		if (r->kind == CR_IDENTICAL)
			sum->identical++;
		else if (r->kind == CR_DIFFERS)
			sum->differ++;
		else
			sum->not_proved++;
		if (o->quiet)
			continue;
		switch (r->kind) {
		case CR_IDENTICAL:
			printf("%-32s %-9s  replay (proved), %.3f ms original, %.3f ms "
			       "spliced\n",
			       it->name, "IDENTICAL", r->ms[0], r->ms[1]);
			break;
		case CR_DIFFERS:
			printf("%-32s %-9s  replay: first difference at %s; the "
			       "whole-module check decides the frame\n",
			       it->name, "DIFFERS", r->message);
			break;
		case CR_INVALID:
			printf("%-32s %-9s  replay INVALID (the original's entry differs "
			       "from the dump at %s); the whole-module check decides\n",
			       it->name, "WHOLE", r->message);
			break;
		default:
			printf("%-32s %-9s  replay %s: %s; the whole-module check "
			       "decides\n",
			       it->name, "WHOLE",
			       r->kind == CR_REFUSED ? "refused" : "failed", r->message);
		}
	}
	sb_release(&dt);
	sum->prepare_s = t_prep;
	sum->dump_s = t_dump;
	sum->replay_s = t_run;
	if (!o->quiet)
		printf("replay: %u identical, %u differ (the phase's contract), %u not "
		       "proved; prepare %.2f s, dump %.2f s, replays %.2f s\n",
		       sum->identical, sum->differ, sum->not_proved, t_prep, t_dump,
		       t_run);
	rc = 0;
out:
	for (size_t i = 0; i < n; i++) {
		RItem *it = &items[i];
		free(it->error);
		free(it->refused);
		free(it->state_path);
		replay_plan_release(&it->plan);
		probe_plan_release(&it->dp);
		sb_release(&it->mod);
		replay_state_release(&it->st);
	}
	free(items);
	free(ri);
	free(which);
	free(msg);
	return rc;
}
