/*
 * reduce.c - removing the entries a launch does not need (see reduce.h).
 */
#include "gpu/reduce.h"

#include <stdlib.h>
#include <string.h>

int gpu_reduce_ptx(const char *ptx, size_t n, const GpuFuncSpan *spans, size_t nspans,
                   const char *const *keep, size_t nkeep, StrBuf *out, Err *e)
{
	for (size_t k = 0; k < nkeep; k++) {
		int found = 0;
		for (size_t i = 0; i < nspans && !found; i++)
			found = spans[i].is_entry && !strcmp(spans[i].name, keep[k]);
		if (!found)
			return err_set(e, "no entry '%s' in the module", keep[k]);
	}
	size_t at = 0;
	for (size_t i = 0; i < nspans; i++) {
		const GpuFuncSpan *s = &spans[i];
		if (s->off < at || s->off > n || s->len > n - s->off)
			return err_set(e, "function span %zu ('%s') is outside the text or "
			                  "overlaps the one before", i, s->name);
		int kept = !s->is_entry;
		for (size_t k = 0; k < nkeep && !kept; k++)
			kept = !strcmp(s->name, keep[k]);
		if (kept)
			continue;
		sb_addn(out, ptx + at, s->off - at);
		for (size_t b = s->off; b < s->off + s->len; b++)
			if (ptx[b] == '\n')
				sb_addc(out, '\n');
		at = s->off + s->len;
	}
	sb_addn(out, ptx + at, n - at);
	return 0;
}
