/*
 * locate.h - from what the user typed (a layer, a recipe, --module,
 * --entry, --corpus) to the files the splicer needs.
 *
 *   layer folder   recipes/LAYER (beside layer.json, found as mf_find_layer
 *                  finds it: the current folder or an ancestor, then beside
 *                  the executable)
 *   recipe         --recipe FILE, else LAYERDIR/phase-NN.json
 *   module         --module FILE, else the recipe's "module" in the corpus
 *                  folder (--corpus, $D4R_CORPUS, the repository's corpus/),
 *                  else the layer manifest's "module"
 *   entry          --entry, else the recipe's "entry", else the manifest's
 */
#ifndef D4R_SPLICE_LOCATE_H
#define D4R_SPLICE_LOCATE_H

#include "base/err.h"
#include "recipe.h"

typedef struct {
	char *layer;        /* NULL when none is known */
	char *module_path;  /* the file to parse */
	char *module_rel;   /* as written in the recipe or manifest, or NULL */
	char *entry;        /* NULL when none is known */
} Located;

/* The folder of layer LAYER's recipes (malloc'd), or NULL with a message. */
char *splice_layer_dir(const char *layer, Err *e);
/* Fills `out` (zeroed by the caller); `r` may be NULL. */
int splice_locate(const char *layer, const char *corpus_opt, const char *module_opt,
                  const char *entry_opt, const Recipe *r, Located *out, Err *e);
void located_release(Located *l);

#endif
