/*
 * sass.c - SASS instructions per phase and epilogue, offline: the steps of
 * sample.h on a module ptxas compiles here (no GPU), and the regions of a
 * spliced module carried over from the original's.
 *
 * What it shows is the instruction count of the code the GPU would run,
 * by phase, with the module unchanged (the .loc lines are checked to change
 * no instruction); the driver's JIT is the same compiler as ptxas when the
 * versions agree.  Time is what PC sampling adds on the GPU.
 */
#include "sample.h"
#include "splice/ptxas.h"
#include "splice/splice.h"

#include <stdlib.h>
#include <string.h>

void sample_regions_carried(const SampleRegion *orig, uint32_t no, const uint32_t *match,
                            const SampleCut *cuts, size_t ncuts, uint32_t ns, SampleRegion *out)
{
	const uint32_t none = UINT32_MAX;
	uint32_t *from = xmalloc((size_t)ns * sizeof *from + 1);
	for (uint32_t s = 0; s < ns; s++)
		from[s] = none;
	for (uint32_t i = 0; i < no; i++)
		if (match[i] != none && match[i] < ns)
			from[match[i]] = i;
	SampleRegion prev = {SR_PROLOGUE, 0};
	for (uint32_t s = 0; s < ns; s++) {
		if (from[s] != none)
			prev = out[s] = orig[from[s]];
		else
			out[s] = prev;
	}
	/* the statements of each cut: between the counterparts of its neighbours */
	for (size_t c = 0; c < ncuts; c++) {
		uint32_t lo = 0, hi = ns;
		for (uint32_t i = cuts[c].first; i-- > 0;)
			if (match[i] != none) {
				lo = match[i] + 1;
				break;
			}
		for (uint32_t i = cuts[c].last + 1; i < no; i++)
			if (match[i] != none) {
				hi = match[i];
				break;
			}
		SampleRegion r = orig[cuts[c].first < no ? cuts[c].first : no - 1];
		for (uint32_t s = lo; s < hi; s++)
			if (from[s] == none)
				out[s] = r;
	}
	free(from);
}

int sample_sass(const Module *m, const Func *f, const SampleRegion *regions, size_t nphases,
                const char *arch, SampleSass *out, Err *e)
{
	memset(out, 0, sizeof *out);
	Str nm = mod_str(m, f->name);
	char *entry = xmalloc(nm.n + 1);
	memcpy(entry, nm.p, nm.n);
	entry[nm.n] = 0;
	StrBuf loc = STRBUF_INIT, cl = STRBUF_INIT, cp = STRBUF_INIT, log = STRBUF_INIT;
	SampleMap map = {0};
	int rc = -1;
	sample_loc_text(m, f, &loc);
	int r1 = splice_ptxas_cubin(loc.p, loc.n, arch, entry, "-O3 -lineinfo", &cl, &log, e);
	if (r1 > 0)
		err_set(e, "ptxas -arch=%s rejects the module with .loc lines:\n%s", arch, log.p);
	if (r1)
		goto out;
	sb_reset(&log);
	int r2 = splice_ptxas_cubin(m->src, m->len, arch, entry, "-O3", &cp, &log, e);
	if (r2 > 0)
		err_set(e, "ptxas -arch=%s rejects the module:\n%s", arch, log.p);
	if (r2)
		goto out;
	const unsigned char *t;
	size_t tl;
	if (sample_same_stream(cl.p, cl.n, cp.p, cp.n, entry, &out->same, &out->first_diff, e) < 0 ||
	    sample_cubin_text(cp.p, cp.n, entry, &t, &tl, e) < 0)
		goto out;
	out->n_plain = tl / SAMPLE_INSN_BYTES;
	if (sample_map(cl.p, cl.n, entry, f->nstmt, &map, e) < 0)
		goto out;
	out->n_loc = map.n;
	out->unattributed = map.unattributed;
	out->nphases = nphases;
	out->phase = xcalloc(nphases + 1, sizeof *out->phase);
	out->epilogue = xcalloc(nphases + 1, sizeof *out->epilogue);
	for (size_t i = 0; i < map.n; i++) {
		if (map.stmt[i] == UINT32_MAX)
			continue;
		const SampleRegion *r = &regions[map.stmt[i]];
		if (r->kind == SR_PROLOGUE || !r->phase || r->phase > nphases)
			out->prologue++;
		else if (r->kind == SR_PHASE)
			out->phase[r->phase - 1]++;
		else
			out->epilogue[r->phase - 1]++;
	}
	rc = 0;
out:
	if (rc < 0)
		sample_sass_release(out);
	sample_map_release(&map);
	sb_release(&loc);
	sb_release(&cl);
	sb_release(&cp);
	sb_release(&log);
	free(entry);
	return rc;
}

void sample_sass_release(SampleSass *s)
{
	free(s->phase);
	free(s->epilogue);
	memset(s, 0, sizeof *s);
}
