/*
 * layer.h - the steps run, check and the main job take around a GPU job on
 * a layer: the layer's manifest (gpu/manifest.h: mf_load_layer), each
 * module reduced to the entries the launches need, the oracle frame, the
 * layer's files registered as inputs, and the checks made before the
 * driver is touched.
 *
 * The verbs parse the original module once, for the splicer and for the
 * reduction alike; a spliced module is new text and is parsed here.
 */
#ifndef D4R_GPU_LAYER_H
#define D4R_GPU_LAYER_H

#include "base/err.h"
#include "base/strbuf.h"
#include "gpu/manifest.h"
#include "ptx/module.h"

/*
 * Appends to `out` the text of the parsed module `mod` (mod->src) reduced
 * to the entries the manifest's launches name (gpu_reduce_for_layer over
 * the parser's function spans: other .entry bodies blanked, every line
 * kept, so the JIT's line numbers still point into the module).
 * *entries / *removed (either may be NULL) get the module's entries and
 * how many were removed.  -1 when a launched entry is not in the module:
 * "recipes/t/layer.json: launches[0].entry: no entry 'k' in the module
 * 'corpus/t/t.ptx'".
 */
int gpu_reduce_module(const Manifest *m, const Module *mod, StrBuf *out, size_t *entries,
                      size_t *removed, Err *e);

/* The same for PTX text not parsed yet (a spliced module, a file given to
 * run --module): parsed here, as `name` in messages. */
int gpu_reduce_text(const Manifest *m, const char *name, const char *ptx, size_t n,
                    StrBuf *out, size_t *entries, size_t *removed, Err *e);

/*
 * Reads the oracle frame: `opt` (--oracle FILE) as it is, else the
 * manifest's oracle in the corpus folder, whose sha256 must be the one the
 * manifest gives.  *buf (malloc'd, *len bytes) and *path (the file read,
 * malloc'd) are set on success; -1 with a message naming the file when the
 * manifest names no oracle, the file cannot be read, or its sha256 is not
 * the manifest's.  There is no fallback: a verdict needs its oracle.
 */
int gpu_read_oracle(const Manifest *m, const char *opt, unsigned char **buf, size_t *len,
                    char **path, Err *e);

/*
 * Registers the layer's files as inputs of the command (base/file.h), so
 * no output replaces one: the manifest, its module, the oracle (`oracle_opt`
 * when given, else the manifest's) and every init file.  Files that do not
 * exist are left out (the precheck and the loaders report them).
 */
void gpu_layer_inputs(const Manifest *m, const char *oracle_opt);

/*
 * What can be checked of a layer without a GPU, checked before the driver
 * is touched: every init file exists, can be read, and fits the buffer or
 * array it fills ("recipes/t/layer.json: buffers.w.init.path: cannot open
 * ...").  The oracle is gpu_read_oracle's and the launch entries
 * gpu_reduce_module's; verbs call all three before the job.
 */
int gpu_layer_precheck(const Manifest *m, Err *e);

#endif
