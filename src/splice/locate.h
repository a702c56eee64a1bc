/*
 * locate.h - from what the user typed (a layer, a recipe, --module,
 * --entry, --corpus) to the files the splicer needs.
 *
 *   layer folder   recipes/LAYER (layout_layer_dir)
 *   recipe         --recipe FILE, else LAYERDIR/phase-NN.json
 *   module         --module FILE, else the recipe's "module" in the corpus
 *                  folder (--corpus, $D4R_CORPUS, the repository's corpus/),
 *                  else the layer manifest's "module"
 *   entry          --entry, else the recipe's "entry", else the manifest's
 *
 * Where each of these lives is base/layout.h's; this file says which one
 * wins.  The manifest is read only when the options and the recipe leave
 * the module or the entry open, so the splicer works on a layer whose
 * manifest is not written yet, as long as its recipes name their module.
 */
#ifndef D4R_SPLICE_LOCATE_H
#define D4R_SPLICE_LOCATE_H

#include "base/err.h"
#include "base/layout.h"
#include "recipe.h"

typedef struct {
	char *layer;        /* NULL when none is known */
	char *module_path;  /* the file to parse */
	char *module_rel;   /* as written in the recipe or manifest, or NULL */
	char *entry;        /* NULL when none is known */
} Located;

/*
 * Fills `out` (zeroed by the caller); `r` may be NULL.  `read_manifest`
 * reads what the layer's manifest says (the manifest's owner is above this
 * floor: the verbs hand in gpu/manifest.h's mf_layout_layer); NULL when
 * there is none to read, which is then an error only where one is needed.
 */
int splice_locate(const char *layer, const char *corpus_opt, const char *module_opt,
                  const char *entry_opt, const Recipe *r, LayoutLayerFn read_manifest,
                  Located *out, Err *e);
void located_release(Located *l);

#endif
