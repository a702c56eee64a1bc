/*
 * layer.c - a layer's modules reduced for the JIT, and its oracle frame
 * (see layer.h).
 */
#include "gpu/layer.h"

#include "base/file.h"
#include "base/sha256.h"
#include "gpu/gpu.h"
#include "ptx/parse.h"

#include <stdlib.h>
#include <string.h>

int gpu_reduce_module(const Manifest *m, const Module *mod, StrBuf *out, size_t *entries,
                      size_t *removed, Err *e)
{
	GpuFuncSpan *spans = xcalloc(mod->funcs.n + 1, sizeof(GpuFuncSpan));
	size_t n = 0;
	for (size_t i = 0; i < mod->funcs.n; i++) {
		const Func *f = &mod->funcs.v[i];
		if (f->kind != FN_ENTRY || (f->flags & FNF_DECL))
			continue;
		spans[n].off = f->text.off;
		spans[n].len = f->text.len;
		spans[n].name = xstrndup(mod->src + f->name.off, f->name.len);
		spans[n].is_entry = 1;
		n++;
	}
	if (entries)
		*entries = n;
	int rc = gpu_reduce_for_layer(m, mod->src, mod->len, spans, n, out, removed, e);
	for (size_t i = 0; i < n; i++)
		free((char *)spans[i].name);
	free(spans);
	return rc;
}

int gpu_reduce_text(const Manifest *m, const char *name, const char *ptx, size_t n,
                    StrBuf *out, size_t *entries, size_t *removed, Err *e)
{
	Module *mod = ptx_parse(name, ptx, n, e);
	if (!mod)
		return -1;
	int rc = gpu_reduce_module(m, mod, out, entries, removed, e);
	mod_free(mod);
	return rc;
}

int gpu_read_oracle(const Manifest *m, const char *opt, unsigned char **buf, size_t *len,
                    char **path_out, Err *e)
{
	char *path = NULL;
	if (opt)
		path = xstrdup(opt);
	else if (!m->oracle_path)
		return err_set(
		    e, "%s: the manifest names no oracle frame (give --oracle FILE)",
		    m->path);
	else if (mf_corpus_path(m, m->oracle_path, &path, e) < 0)
		return -1;
	char *data;
	size_t n;
	if (read_file(path, &data, &n, e) < 0) {
		free(path);
		return -1;
	}
	if (!opt && m->oracle_sha256[0]) {
		char sha[65];
		sha256_hex(data, n, sha);
		if (strcmp(sha, m->oracle_sha256) != 0) {
			err_set(e,
			        "oracle '%s' has sha256 %s, but %s says %s: the oracle "
			        "file and the "
			        "manifest disagree",
			        path, sha, m->path, m->oracle_sha256);
			free(data);
			free(path);
			return -1;
		}
	}
	*buf = (unsigned char *)data;
	*len = n;
	*path_out = path;
	return 0;
}
