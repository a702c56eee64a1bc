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

/*
 * The recipes of a layer's phases, as the layer verbs (the main job,
 * splice, check, bisect, profile) take them: `--phase N` (and `--variant
 * NAME`), `--recipe FILE`, `--phases LIST`.  One owner for what each of
 * them means and for what is said when it is wrong:
 *
 *   --phase 63 on a 62-phase layer   "phase 63 does not exist: enc4 has 62
 *                                    phases" (ana_phase_missing), never a
 *                                    missing file or a recipe new to run
 *   --phase 9 with no phase-09.json  "layer 'enc4' has no recipe for phase 9:
 *                                    'recipes/enc4/phase-09.json' does not
 *                                    exist" and the recipe new that writes it
 *   --phase 8 --recipe FILE          FILE must cut phase 8: "FILE: the recipe
 *                                    cuts phase 30, --phase says 8"
 *   --phases 1-62,8                  a phase named twice is an error
 *                                    (numlist.h), one past the layer's last
 *                                    as --phase 63
 *
 * The layer's module is read (its manifest, then the module's phases) only
 * to word an error: a run that finds its recipes never reads it here.
 */
typedef struct {
	const char *layer;          /* as typed (or the manifest's name) */
	const char *dir;            /* its recipes folder, recipes/LAYER */
	const char *corpus_opt;     /* --corpus, or NULL */
	LayoutLayerFn read_manifest; /* gpu/manifest.h's mf_layout_layer */
} LayerRecipes;

/* How many phases the entry of the layer's module has (its manifest's
 * module and entry): 0 with *n, or -1 with a message. */
int splice_layer_phases(const LayerRecipes *l, size_t *n, Err *e);
/* The file of phase N's recipe (variant: NULL or "f16"), malloc'd into
 * *path, when it exists; else -1 with one of the first two messages above. */
int splice_phase_recipe(const LayerRecipes *l, unsigned phase, const char *variant, char **path,
                        Err *e);
/* Recipe r against --phase N: -1 with "PATH: the recipe cuts phase R,
 * --phase says N" when it cuts another phase (phase 0, or a recipe that
 * cuts statements, pass). */
int splice_recipe_phase_check(const Recipe *r, unsigned phase, Err *e);
/* The recipe of --recipe FILE (recipe_opt), else of --phase N, loaded into
 * *r and checked against N (both given: splice_recipe_phase_check). */
int splice_layer_recipe(const LayerRecipes *l, unsigned phase, const char *variant,
                        const char *recipe_opt, Recipe *r, Err *e);

#endif
