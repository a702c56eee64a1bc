/*
 * shares.c - PC samples to phases: the samples of each instruction of the
 * entry, by the region of the statement it came from (sample.h, step 5).
 *
 * The child that sampled counted per instruction and stall reason
 * (SamplePcs); the map (sample_map) says each instruction's statement and
 * the regions (sample_regions, or sample_regions_carried for a spliced
 * module) each statement's prologue, phase or epilogue.  Every sample goes
 * to exactly one row, so the rows add up to the entry's samples: those at
 * an instruction no statement claims (code ptxas made, line 0) and those
 * CUPTI gave for a PC beyond the entry's code are the "other" row, shown,
 * never dropped.  The share of a row is its samples over the entry's.
 */
#include "sample.h"

#include <stdlib.h>
#include <string.h>

int sample_profile(const SamplePcs *pcs, const SampleMap *map,
                   const SampleRegion *regions, size_t nphases, SampleProfile *out,
                   Err *e)
{
	memset(out, 0, sizeof *out);
	if (map->n != pcs->ninsn)
		return err_set(
		    e,
		    "the samples are of %zu instructions, the map of %zu: not the "
		    "same code",
		    pcs->ninsn, map->n);
	size_t nr = SAMPLE_ROWS(nphases);
	out->nphases = nphases;
	out->nreasons = pcs->nreasons;
	out->insns = map->n;
	out->row = xcalloc(nr, sizeof *out->row);
	for (size_t r = 0; r < nr; r++)
		out->row[r].reason =
		    xcalloc(pcs->nreasons + 1, sizeof *out->row[r].reason);
	for (size_t i = 0; i < map->n; i++) {
		size_t r = SAMPLE_ROW_OTHER(nphases);
		if (map->stmt[i] != UINT32_MAX) {
			const SampleRegion *g = &regions[map->stmt[i]];
			if (g->kind == SR_PHASE && g->phase >= 1 && g->phase <= nphases)
				r = SAMPLE_ROW_PHASE(g->phase);
			else if (g->kind == SR_EPILOGUE && g->phase >= 1 &&
			         g->phase <= nphases)
				r = SAMPLE_ROW_EPILOGUE(g->phase);
			else if (g->kind == SR_PROLOGUE)
				r = 0;
		}
		SampleRow *row = &out->row[r];
		row->insns++;
		for (size_t k = 0; k < pcs->nreasons; k++) {
			uint64_t c = pcs->count[i * pcs->nreasons + k];
			row->reason[k] += c;
			row->samples += c;
		}
	}
	out->row[SAMPLE_ROW_OTHER(nphases)].samples += pcs->outside;
	for (size_t r = 0; r < nr; r++)
		out->kernel += out->row[r].samples;
	return 0;
}

void sample_profile_release(SampleProfile *p)
{
	for (size_t r = 0; p->row && r < SAMPLE_ROWS(p->nphases); r++)
		free(p->row[r].reason);
	free(p->row);
	memset(p, 0, sizeof *p);
}

size_t sample_top_reasons(const SampleProfile *p, size_t r, size_t *out, size_t k)
{
	const SampleRow *row = &p->row[r];
	size_t n = 0;
	for (size_t i = 0; i < p->nreasons; i++) {
		if (!row->reason[i])
			continue;
		/* insertion into out[0..n), largest first, at most k */
		size_t at = n < k ? n : k;
		while (at > 0 && row->reason[out[at - 1]] < row->reason[i])
			at--;
		if (at >= k)
			continue;
		size_t last = n < k ? n : k - 1;
		memmove(out + at + 1, out + at, (last - at) * sizeof *out);
		out[at] = i;
		if (n < k)
			n++;
	}
	return n;
}

const char *sample_reason_short(const char *name)
{
	static const char *const prefix[] = {"smsp__pcsamp_warps_issue_stalled_",
	                                     "smsp__pcsamp_"};
	for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++) {
		size_t n = strlen(prefix[i]);
		if (!strncmp(name, prefix[i], n) && name[n])
			return name + n;
	}
	return name;
}
