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

/* Skips a comment or string starting at p[i]; returns the index after it,
 * or i when there is none there. */
static size_t skip_noise(const char *p, size_t n, size_t i)
{
	if (p[i] == '/' && i + 1 < n && p[i + 1] == '/') {
		while (i < n && p[i] != '\n')
			i++;
		return i;
	}
	if (p[i] == '/' && i + 1 < n && p[i + 1] == '*') {
		i += 2;
		while (i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'))
			i++;
		return i + 2 <= n ? i + 2 : n;
	}
	if (p[i] == '"') {
		i++;
		while (i < n && p[i] != '"' && p[i] != '\n')
			i += p[i] == '\\' ? 2 : 1;
		return i < n ? i + 1 : n;
	}
	return i;
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '.' || c == '%';
}

int gpu_scan_entries(const char *p, size_t n, GpuFuncSpan **out, size_t *nout, Err *e)
{
	VEC(GpuFuncSpan) v = {0};
	size_t i = 0;
	int depth = 0;
	while (i < n) {
		size_t j = skip_noise(p, n, i);
		if (j != i) {
			i = j;
			continue;
		}
		char c = p[i];
		if (c == '{') {
			depth++;
			i++;
			continue;
		}
		if (c == '}') {
			depth--;
			i++;
			continue;
		}
		if (depth == 0 && c == '.' && n - i >= 6 && !memcmp(p + i, ".entry", 6) &&
		    (i == 0 || !ident_char(p[i - 1])) && (i + 6 == n || !ident_char(p[i + 6]))) {
			size_t bol = i;
			while (bol > 0 && p[bol - 1] != '\n')
				bol--;
			size_t k = i + 6;
			while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\n' || p[k] == '\r'))
				k++;
			size_t name0 = k;
			while (k < n && ident_char(p[k]))
				k++;
			char *name = xstrndup(p + name0, k - name0);
			/* The body: the first '{' at depth 0 before a ';' (a prototype). */
			size_t b = k;
			int in_parens = 0;
			while (b < n) {
				size_t s = skip_noise(p, n, b);
				if (s != b) {
					b = s;
					continue;
				}
				if (p[b] == '(')
					in_parens++;
				else if (p[b] == ')')
					in_parens--;
				else if (!in_parens && (p[b] == '{' || p[b] == ';'))
					break;
				b++;
			}
			if (b >= n || p[b] == ';') {
				free(name);
				i = b < n ? b + 1 : n;
				continue;
			}
			int d = 0;
			size_t end = b;
			while (end < n) {
				size_t s = skip_noise(p, n, end);
				if (s != end) {
					end = s;
					continue;
				}
				if (p[end] == '{')
					d++;
				else if (p[end] == '}' && --d == 0)
					break;
				end++;
			}
			if (end >= n) {
				err_set(e, "entry '%s': no closing brace", name);
				free(name);
				gpu_spans_free(v.v, v.n);
				return -1;
			}
			GpuFuncSpan s = {bol, end + 1 - bol, name, 1};
			VEC_PUSH(v, s);
			i = end + 1;
			continue;
		}
		i++;
	}
	*out = v.v;
	*nout = v.n;
	return 0;
}

void gpu_spans_free(GpuFuncSpan *spans, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)spans[i].name);
	free(spans);
}
