/*
 * layer.c - a layer's modules reduced for the JIT, its oracle frame, its
 * files as inputs of the command, and what can be checked of it before the
 * driver is touched (see layer.h).
 */
#include "gpu/layer.h"

#include "base/file.h"
#include "base/sha256.h"
#include "gpu/gpu.h"
#include "gpu/launch.h"
#include "ptx/parse.h"

#include <stdlib.h>
#include <string.h>

/* -1 with "MANIFEST: launches[i].entry: ..." for the first launch whose
 * entry is not an entry with a body among spans[0..n). */
static int launch_entries_present(const Manifest *m, const Module *mod, const GpuFuncSpan *spans,
                                  size_t n, Err *e)
{
	for (size_t i = 0; i < m->nlaunches; i++) {
		const char *want = m->launches[i].entry;
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = !strcmp(spans[k].name, want);
		if (!found)
			return err_set(e, "%s: launches[%zu].entry: no entry '%s' in the module '%s'",
			               m->path ? m->path : "the manifest", i, want,
			               mod->name ? mod->name : "?");
	}
	return 0;
}

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
	int rc = launch_entries_present(m, mod, spans, n, e);
	if (rc == 0)
		rc = gpu_reduce_for_layer(m, mod->src, mod->len, spans, n, out, removed, e);
	for (size_t i = 0; i < n; i++)
		free((char *)spans[i].name);
	free(spans);
	return rc;
}

int gpu_reduce_text(const Manifest *m, const char *name, const char *ptx, size_t n,
                    StrBuf *out, size_t *entries, size_t *removed, Err *e)
{
	if (n >= 4 && memcmp(ptx, "\177ELF", 4) == 0) { /* a cubin: loaded as it is */
		sb_addn(out, ptx, n);
		if (entries)
			*entries = m->nlaunches;
		if (removed)
			*removed = 0;
		return 0;
	}
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
		return err_set(e, "%s: oracle.path: %s", m->path, err_msg(e));
	char *data;
	size_t n;
	if (read_file(path, &data, &n, e) < 0) {
		if (opt)
			err_set(e, "--oracle: %s: no verdict without its oracle", err_msg(e));
		else
			err_set(e, "%s: oracle.path: %s: no verdict without its oracle", m->path,
			        err_msg(e));
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

/* corpus/rel registered as an input named `what`, when there is a corpus. */
static void corpus_input(const Manifest *m, const char *rel, const char *what)
{
	char *path;
	Err ig = ERR_INIT;
	if (rel && mf_corpus_path(m, rel, &path, &ig) == 0) {
		file_input_add(path, what);
		free(path);
	}
	err_release(&ig);
}

void gpu_layer_inputs(const Manifest *m, const char *oracle_opt)
{
	file_input_add(m->path, "manifest");
	corpus_input(m, m->module, "module");
	if (oracle_opt)
		file_input_add(oracle_opt, "oracle");
	else
		corpus_input(m, m->oracle_path, "oracle");
	for (size_t i = 0; i < m->nbuffers; i++)
		if (m->buffers[i].init.kind == MF_INIT_FILE)
			corpus_input(m, m->buffers[i].init.path, "init file");
	for (size_t i = 0; i < m->narrays; i++)
		if (m->arrays[i].init.kind == MF_INIT_FILE)
			corpus_input(m, m->arrays[i].init.path, "init file");
}

int gpu_layer_precheck(const Manifest *m, Err *e)
{
	char what[300];
	for (size_t i = 0; i < m->nbuffers; i++) {
		const MfBuffer *b = &m->buffers[i];
		if (b->init.kind != MF_INIT_FILE)
			continue;
		unsigned char *img;
		snprintf(what, sizeof what, "buffers.%s", b->name);
		if (gpu_init_image(m, &b->init, b->init.format, b->size, what, &img, e) < 0)
			return -1;
		free(img);
	}
	for (size_t i = 0; i < m->narrays; i++) {
		const MfArray *a = &m->arrays[i];
		if (a->init.kind != MF_INIT_FILE)
			continue;
		unsigned char *img;
		snprintf(what, sizeof what, "arrays.%s", a->name);
		if (gpu_init_image(m, &a->init, a->format, mf_array_bytes(a), what, &img, e) < 0)
			return -1;
		free(img);
	}
	return 0;
}
