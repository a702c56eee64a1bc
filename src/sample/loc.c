/*
 * loc.c - the sampled module's line information and the regions its
 * statements fall in (sample.h, steps 1 and 4).
 *
 * The module is copied byte for byte; the only additions are one `.file`
 * line and one `.loc` line before each statement of the entry.  A `.loc`
 * is a directive of its own line, so it goes on a new line at the
 * statement's first byte (a guard's '@'), even where a label or another
 * statement shares the source line: the text before it on that line stays
 * where it is, the statement moves to the next line.
 */
#include "sample.h"
#include "ana/ana.h"

#include <string.h>

void sample_loc_text(const Module *m, const Func *f, StrBuf *out)
{
	/* where the .file line goes: after the .address_size item, else .target */
	size_t file_at = 0;
	bool filed = false; /* a .file line is there (the module's, or ours) */
	for (size_t i = 0; i < m->items.n; i++) {
		const Item *it = &m->items.v[i];
		if (it->kind == ITEM_ADDRESS_SIZE ||
		    (it->kind == ITEM_TARGET && !file_at))
			file_at = it->text.off + it->text.len;
		filed |= it->kind == ITEM_FILE;
	}
	char fl[64];
	snprintf(fl, sizeof fl, "\n.file %d \"%s\"\n", SAMPLE_FILE, SAMPLE_FILE_NAME);
	size_t at = 0;
	for (uint32_t k = 0; k <= f->nstmt; k++) {
		size_t next = k < f->nstmt ? func_stmt(m, f, k)->off : m->len;
		if (!filed && file_at <= next) {
			sb_addn(out, m->src + at, file_at - at);
			sb_adds(out, fl);
			at = file_at;
			filed = true;
		}
		sb_addn(out, m->src + at, next - at);
		at = next;
		if (k < f->nstmt)
			sb_addf(out, "\n\t.loc %d %u 0\n", SAMPLE_FILE, k + 1);
	}
}

size_t sample_regions(const Module *m, const Func *f, SampleRegion *out)
{
	PhaseList pl;
	ana_phase_find(m, f, 0, &pl);
	for (uint32_t s = 0; s < f->nstmt; s++)
		out[s] = (SampleRegion){SR_PROLOGUE, 0};
	for (size_t i = 0; i < pl.n; i++) {
		const Phase *p = &pl.v[i];
		uint32_t end = i + 1 < pl.n ? pl.v[i + 1].first : f->nstmt;
		for (uint32_t s = p->first; s <= p->last && s < f->nstmt; s++)
			out[s] = (SampleRegion){SR_PHASE, p->number};
		for (uint32_t s = p->last + 1; s < end; s++)
			out[s] = (SampleRegion){SR_EPILOGUE, p->number};
	}
	size_t n = pl.n;
	phases_release(&pl);
	return n;
}
