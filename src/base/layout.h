/*
 * layout.h - where the files of a repository of layers are.
 *
 *     recipes/LAYER/layer.json     the layer's launch manifest
 *     recipes/LAYER/NAME.json      its recipes; phase-NN.json and
 *                                  phase-NN-epi.json by phase number, and
 *                                  phase-NN-VARIANT.json for a variant
 *                                  of the phase (phase-08-f16.json)
 *     corpus/                      the vendor modules and oracle frames that
 *                                  manifests and recipes name, relative to it
 *     ptx/                         the templates recipes name ("enc4/phase-08.ptx")
 *
 * A layer is found from the current folder (or one of its ancestors), then
 * beside the program (<repo>/build/d4r-splice -> <repo>/recipes), so the
 * tool works from anywhere inside a repository and from its own build.  The
 * corpus folder is --corpus, else $D4R_CORPUS, else the `corpus` folder of
 * the repository the file that names it lives in, so a user's own vendor
 * corpus plugs in without moving the recipes.  The ptx/ folder is --ptx,
 * else the nearest one above the recipe, else above the current folder.
 *
 * Which of these a verb takes (an option, then the recipe, then the
 * manifest) is splice_locate's business (splice/locate.h); this file only
 * says where each one is.
 *
 * Decisions:
 *  - It sits in base, below every stage: the splicer resolves recipes and
 *    templates, the GPU side manifests, corpus files and oracles, and both
 *    must agree on one layout.  It knows folder names and file names, never
 *    a format: the manifest's reader (gpu/manifest.h) is above the splicer,
 *    so what a manifest says about its module comes in through
 *    LayoutLayerFn, handed down by the verb.
 *  - A path a file writes for a folder must stay inside it: relative, with
 *    no ".." component (layout_inside).  That holds for what a manifest
 *    names in the corpus folder, a recipe's module in the corpus folder and
 *    a recipe's template in ptx/, so a layer or a recipe handed around
 *    cannot reach files outside the folders it is run against.  Paths typed
 *    on the command line (--module, --corpus, --ptx, --recipe) are the
 *    user's own and are taken as they are.
 *  - A template name starting with "./" is relative to its recipe's folder
 *    (a recipe kept with its own template), and must stay inside it too.
 */
#ifndef D4R_LAYOUT_H
#define D4R_LAYOUT_H

#include "base.h"
#include "err.h"

/*
 * The manifest of LAYER: a path to an existing file (or a folder holding
 * layer.json) is taken as it is when LAYER has a '/' or ".json"; otherwise
 * recipes/LAYER/layer.json in the current folder or one of its ancestors,
 * then beside the executable.  Returns a malloc'd path or NULL with a
 * message.
 */
char *layout_find_layer(const char *layer, Err *e);

/*
 * The folder of LAYER's recipes: the manifest's folder when there is a
 * manifest, else a recipes/LAYER folder searched as layout_find_layer
 * searches (a layer whose manifest is not written yet).  Malloc'd, or NULL
 * with a message.
 */
char *layout_layer_dir(const char *layer, Err *e);

/* LAYER when `manifest_path` ends in recipes/LAYER/layer.json (malloc'd),
 * else NULL. */
char *layout_layer_of(const char *manifest_path);

/*
 * The corpus folder: `opt` (--corpus DIR), else $D4R_CORPUS, else the
 * `corpus` folder of the nearest ancestor of `near` (a manifest or recipe
 * file) that has one.  Returns a malloc'd path, or NULL with a message
 * saying what was tried.
 */
char *layout_corpus_dir(const char *opt, const char *near, Err *e);

/* True when `rel`, written relative to a folder, stays inside it: not
 * empty, not absolute, and no component is ".." ("a..b.ptx" is a name). */
bool layout_inside(const char *rel);

/* "dir/rel", malloc'd. */
char *layout_join(const char *dir, const char *rel);
/* The folder part of `path` ("." when it has none), malloc'd. */
char *layout_dir_of(const char *path);

/* The recipe of phase N in a layer folder: DIR/phase-NN.json, or
 * DIR/phase-NN-epi.json for the cut with its epilogue.  Malloc'd. */
char *layout_recipe_file(const char *layer_dir, unsigned phase, bool epilogue);
/* The template a recipe of phase N is written with: LAYER/phase-NN.ptx
 * (-epi as above), a name under ptx/.  Malloc'd. */
char *layout_template_name(const char *layer, unsigned phase, bool epilogue);

/* The recipe of phase N in the variant VARIANT ("f16"): DIR/phase-NN-f16.json;
 * with no variant (NULL or ""), layout_recipe_file's.  The variant "mma" is
 * DIR/phase-NN-mma.json where that exists, else layout_recipe_file's, which
 * is what `recipe new --native mma` writes, so that a list of variants
 * ("mma,f16") can name both native forms.  Malloc'd. */
char *layout_recipe_variant(const char *layer_dir, unsigned phase, const char *variant);
/* Its template: LAYER/phase-NN-f16.ptx (no variant: LAYER/phase-NN.ptx). */
char *layout_template_variant(const char *layer, unsigned phase, const char *variant);

/*
 * Every recipe in a layer folder: its .json files but layer.json, as
 * DIR/NAME paths sorted by name.  Sets *out to a malloc'd array of malloc'd
 * paths and returns how many (0 also when the folder cannot be read).
 */
size_t layout_recipes(const char *layer_dir, char ***out);

/* The nearest ptx/ folder at or above `start` (a file or folder; a file
 * that does not exist yet: its folder), else at or above the current
 * folder; malloc'd, or NULL when there is none. */
char *layout_ptx_root(const char *start);

/* 0 when template `name` stays inside its folder (layout_inside), else -1
 * with "template 'NAME': not inside the ptx/ folder ...". */
int layout_template_check(const char *name, Err *e);

/*
 * The name a recipe stores for template `typed`, a path the user typed
 * (recipe new --template), into *name (malloc'd), for the ptx folder
 * `ptx_root` (may be NULL when there is none):
 *   - "./NAME": beside the recipe, as it is;
 *   - a name under the ptx folder ("enc4/x30.ptx"), as it is;
 *   - a name from the repository root, whose first component is the ptx
 *     folder's own ("ptx/enc4/x30.ptx"): the part under it ("enc4/x30.ptx"),
 *     refused when the ptx folder holds a folder of its own name too (both
 *     readings would name a file);
 *   - an absolute path inside ptx_root: the part under it.
 * Never a name that doubles the folder.  -1 with the reason otherwise: a
 * ".." or an absolute path outside the folder, no ptx folder.
 */
int layout_template_typed(const char *typed, const char *ptx_root, char **name, Err *e);

/*
 * The file of template `name` named by the recipe at `recipe_path` (may be
 * NULL): "./" from the recipe's folder, else under `ptx_root` (--ptx; NULL:
 * layout_ptx_root from the recipe), where a name from the repository root
 * ("ptx/enc4/x.ptx") reads as layout_template_typed reads it.  *path and *display (the
 * name shown in messages: "ptx/enc4/phase-08.ptx") are malloc'd.  -1 with a message when
 * the name does not stay inside its folder (layout_inside) or no ptx/
 * folder is found.
 */
int layout_template(const char *name, const char *recipe_path, const char *ptx_root,
                    char **path, char **display, Err *e);

/*
 * What a layer's manifest says about where its module is.  Read by the
 * manifest's owner (gpu/manifest.h: mf_layout_layer), for the callers below
 * it that need it only when nothing else names the module.
 */
typedef struct {
	char *manifest; /* recipes/LAYER/layer.json */
	char *corpus;   /* its corpus folder, or NULL when none was found */
	char *module;   /* as written: relative to the corpus folder */
	char *entry;
} LayoutLayer;

/* Fills *out (malloc'd strings) from LAYER's manifest, or -1 with the
 * manifest's message. */
typedef int (*LayoutLayerFn)(const char *layer, const char *corpus_opt, LayoutLayer *out,
                             Err *e);
void layout_layer_release(LayoutLayer *l);

#endif
