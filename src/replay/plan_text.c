/*
 * plan_text.c - the state plan as `replay --plan` prints it, and as JSON:
 * the cut, the launch, each register with how it survives another process,
 * the shared variables, the global accesses and buffers, the refusals.
 */
#include "replay/replay.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan as text and JSON ------------------------------------------------ */

static void reg_text(const ReplayReg *r, bool in, StrBuf *o)
{
	sb_addf(o, "  %-10s %-7s", r->name, probe_fmt_name((ProbeFmt)r->fmt));
	if (in)
		sb_addf(o, " %-18s",
		        r->original && r->spliced ? "original, spliced"
		        : r->original             ? "original"
		                                  : "spliced");
	if (r->kind == RV_PARAM)
		sb_addf(o, " rebased: parameter +%lld (s%u)", (long long)r->param_off,
		        r->evidence);
	else if (r->kind == RV_SYMBOL)
		sb_addf(o, " rebased: symbol %s (s%u)", r->symbol, r->evidence);
	sb_addc(o, '\n');
}

void replay_plan_text(const ReplayPlan *p, const Manifest *mf, StrBuf *o)
{
	uint32_t nreb = 0;
	for (size_t i = 0; i < p->live_in.n; i++)
		nreb += p->live_in.v[i].kind != RV_DATA;
	sb_addf(o, "cut:       s%u-s%u (lines %u-%u); spliced s%u-s%u\n", p->first,
	        p->last, p->first_line, p->last_line, p->s_first, p->s_last);
	sb_addf(o, "launch:    grid %ux%ux%u, block %ux%ux%u: %llu blocks, %llu warps\n",
	        p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2],
	        (unsigned long long)p->blocks, (unsigned long long)p->warps);
	sb_addf(o, "live-in:   %zu registers per thread, %u rebased\n", p->live_in.n,
	        nreb);
	for (size_t i = 0; i < p->live_in.n; i++)
		reg_text(&p->live_in.v[i], true, o);
	sb_addf(o, "live-out:  %zu registers per thread\n", p->live_out.n);
	for (size_t i = 0; i < p->live_out.n; i++)
		reg_text(&p->live_out.v[i], false, o);
	sb_addf(o, "shared:    %llu bytes per block, at the start and the end\n",
	        (unsigned long long)p->shared_bytes);
	for (size_t i = 0; i < p->shared.n; i++)
		sb_addf(o, "  %s: %llu bytes%s, at +%llu\n", p->shared.v[i].name,
		        (unsigned long long)p->shared.v[i].bytes,
		        p->shared.v[i].dynamic ? " (dynamic)" : "",
		        (unsigned long long)p->shared.v[i].off);
	sb_addf(o, "global:    %zu accesses", p->access.n);
	if (p->buffers_in.n) {
		sb_adds(o, "; taken whole at the launch's start:");
		for (size_t i = 0; i < p->buffers_in.n; i++)
			sb_addf(o, " %s", mf->buffers[p->buffers_in.v[i]].name);
	}
	if (p->buffers_out.n) {
		sb_adds(o, "; compared whole at the end:");
		for (size_t i = 0; i < p->buffers_out.n; i++)
			sb_addf(o, " %s", mf->buffers[p->buffers_out.v[i]].name);
	}
	sb_addc(o, '\n');
	for (size_t i = 0; i < p->access.n; i++) {
		const ReplayAccess *a = &p->access.v[i];
		sb_addf(o, "  %ss%u %s %s\n", a->spliced ? "spliced " : "", a->stmt,
		        a->store ? "writes" : "reads", a->what);
	}
	for (size_t i = 0; i < p->spans.n; i++) {
		const ReplaySpan *sp = &p->spans.v[i];
		sb_addf(
		    o,
		    "written:   buffer '%s' bytes %llu-%llu (%llu bytes, %s; %ss%u): at "
		    "the launch's start and the end\n",
		    mf->buffers[sp->buf].name, (unsigned long long)sp->lo,
		    (unsigned long long)sp->hi - 1, (unsigned long long)(sp->hi - sp->lo),
		    sp->bounded ? "bounded by the address facts" : "the whole buffer",
		    sp->spliced ? "spliced " : "", sp->stmt);
	}
	for (size_t i = 0; i < p->arrays_in.n; i++) {
		int a = p->arrays_in.v[i];
		bool out = false;
		for (size_t k = 0; k < p->arrays_out.n; k++)
			out |= p->arrays_out.v[k] == a;
		sb_addf(o, "array:     %s (%llu bytes): taken at the launch's start%s\n",
		        mf->arrays[a].name,
		        (unsigned long long)mf_array_bytes(&mf->arrays[a]),
		        out ? ", written by the cut: compared at the end" : ", read");
	}
	if (p->textures.n) {
		sb_adds(o, "textures: ");
		for (size_t i = 0; i < p->textures.n; i++)
			sb_addf(o, " %s", mf->arrays[p->textures.v[i]].name);
		sb_adds(o, " (no surface is bound to it: the layer's contents at every "
		           "cut)\n");
	}
	if (p->barriers)
		sb_addf(o, "barriers:  %u in the cuts (whole blocks replay)\n",
		        p->barriers);
	if (p->nrefused)
		sb_addf(o, "refused:   %u reasons\n%s", p->nrefused, p->refused.p);
	else
		sb_adds(o, "replay:    possible\n");
}

static cJSON *regs_json(const ReplayReg *v, size_t n, bool in)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		const ReplayReg *r = &v[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "register", r->name);
		cJSON_AddStringToObject(x, "type", probe_fmt_name((ProbeFmt)r->fmt));
		if (in) {
			cJSON_AddBoolToObject(x, "original", r->original);
			cJSON_AddBoolToObject(x, "spliced", r->spliced);
			cJSON_AddStringToObject(
			    x, "value", replay_value_kind_name((ReplayValueKind)r->kind));
			if (r->kind == RV_PARAM)
				cJSON_AddNumberToObject(x, "param_offset",
				                        (double)r->param_off);
			if (r->kind == RV_SYMBOL)
				cJSON_AddStringToObject(x, "symbol", r->symbol);
			if (r->kind != RV_DATA)
				cJSON_AddNumberToObject(x, "evidence", r->evidence);
		}
		cJSON_AddItemToArray(a, x);
	}
	return a;
}

cJSON *replay_plan_json(const ReplayPlan *p, const Manifest *mf)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *c = cJSON_AddObjectToObject(o, "cut");
	cJSON_AddNumberToObject(c, "first", p->first);
	cJSON_AddNumberToObject(c, "last", p->last);
	cJSON_AddNumberToObject(c, "spliced_first", p->s_first);
	cJSON_AddNumberToObject(c, "spliced_last", p->s_last);
	cJSON_AddNumberToObject(o, "blocks", (double)p->blocks);
	cJSON_AddNumberToObject(o, "warps", (double)p->warps);
	cJSON_AddItemToObject(o, "live_in", regs_json(p->live_in.v, p->live_in.n, true));
	cJSON_AddItemToObject(o, "live_out",
	                      regs_json(p->live_out.v, p->live_out.n, false));
	cJSON *sh = cJSON_AddArrayToObject(o, "shared");
	for (size_t i = 0; i < p->shared.n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", p->shared.v[i].name);
		cJSON_AddNumberToObject(x, "bytes", (double)p->shared.v[i].bytes);
		cJSON_AddBoolToObject(x, "dynamic", p->shared.v[i].dynamic);
		cJSON_AddItemToArray(sh, x);
	}
	cJSON_AddNumberToObject(o, "shared_bytes", (double)p->shared_bytes);
	cJSON *ac = cJSON_AddArrayToObject(o, "global");
	for (size_t i = 0; i < p->access.n; i++) {
		const ReplayAccess *a = &p->access.v[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "stmt", a->stmt);
		cJSON_AddBoolToObject(x, "spliced", a->spliced);
		cJSON_AddStringToObject(x, "access", a->store ? "write" : "read");
		cJSON_AddStringToObject(x, "of", a->what);
		cJSON_AddItemToArray(ac, x);
	}
	cJSON *bi = cJSON_AddArrayToObject(o, "buffers_in");
	for (size_t i = 0; i < p->buffers_in.n; i++)
		cJSON_AddItemToArray(
		    bi, cJSON_CreateString(mf->buffers[p->buffers_in.v[i]].name));
	cJSON *bo = cJSON_AddArrayToObject(o, "buffers_out");
	for (size_t i = 0; i < p->buffers_out.n; i++)
		cJSON_AddItemToArray(
		    bo, cJSON_CreateString(mf->buffers[p->buffers_out.v[i]].name));
	cJSON *wr = cJSON_AddArrayToObject(o, "written");
	for (size_t i = 0; i < p->spans.n; i++) {
		const ReplaySpan *sp = &p->spans.v[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "buffer", mf->buffers[sp->buf].name);
		cJSON_AddNumberToObject(x, "offset", (double)sp->lo);
		cJSON_AddNumberToObject(x, "bytes", (double)(sp->hi - sp->lo));
		cJSON_AddBoolToObject(x, "bounded", sp->bounded);
		cJSON_AddNumberToObject(x, "stmt", sp->stmt);
		cJSON_AddBoolToObject(x, "spliced", sp->spliced);
		cJSON_AddItemToArray(wr, x);
	}
	cJSON *ai = cJSON_AddArrayToObject(o, "arrays_in");
	for (size_t i = 0; i < p->arrays_in.n; i++)
		cJSON_AddItemToArray(
		    ai, cJSON_CreateString(mf->arrays[p->arrays_in.v[i]].name));
	cJSON *ao = cJSON_AddArrayToObject(o, "arrays_out");
	for (size_t i = 0; i < p->arrays_out.n; i++)
		cJSON_AddItemToArray(
		    ao, cJSON_CreateString(mf->arrays[p->arrays_out.v[i]].name));
	cJSON *tx = cJSON_AddArrayToObject(o, "textures");
	for (size_t i = 0; i < p->textures.n; i++)
		cJSON_AddItemToArray(
		    tx, cJSON_CreateString(mf->arrays[p->textures.v[i]].name));
	cJSON_AddNumberToObject(o, "barriers", p->barriers);
	cJSON *rf = cJSON_AddArrayToObject(o, "refused");
	const char *s = p->refused.p ? p->refused.p : "";
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char *line = xstrndup(s, n);
		cJSON_AddItemToArray(rf, cJSON_CreateString(line));
		free(line);
		s += n + (nl != NULL);
	}
	cJSON_AddBoolToObject(o, "replayable", p->nrefused == 0);
	return o;
}
