/*
 * locate.c - choosing the module and the entry a splice works on.
 *
 * The layer manifest (recipes/LAYER/layer.json) is consulted only for what
 * a recipe does not say itself: its module and entry, and the corpus folder
 * when the recipe is kept outside the repository.
 */
#include "locate.h"

#include "ana/ana.h"
#include "base/file.h"
#include "ptx/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_layer(LayoutLayerFn read_manifest, const char *layer,
                      const char *corpus_opt, LayoutLayer *man, Err *e)
{
	if (!read_manifest)
		return err_set(
		    e, "layer '%s': no manifest to read its module and entry from",
		    layer);
	return read_manifest(layer, corpus_opt, man, e);
}

int splice_locate(const char *layer, const char *corpus_opt, const char *module_opt,
                  const char *entry_opt, const Recipe *r, LayoutLayerFn read_manifest,
                  Located *out, Err *e)
{
	memset(out, 0, sizeof(*out));
	if (!layer && r && r->layer)
		layer = r->layer;
	if (layer)
		out->layer = xstrdup(layer);
	LayoutLayer man = {0};
	bool have_man = false;
	if (module_opt) {
		out->module_path = xstrdup(module_opt);
	} else if (r && r->module) {
		char *corpus = layout_corpus_dir(corpus_opt, r->path, e);
		if (!corpus && layer) {
			/* A recipe kept outside the repository: the layer's manifest
			 * knows the corpus. */
			err_clear(e);
			if (read_layer(read_manifest, layer, corpus_opt, &man, e) < 0)
				goto fail;
			have_man = true;
			if (!man.corpus) {
				err_set(e,
				        "no corpus folder for layer '%s': give --corpus "
				        "DIR or set "
				        "$D4R_CORPUS",
				        layer);
				goto fail;
			}
			corpus = xstrdup(man.corpus);
		}
		if (!corpus)
			goto fail;
		out->module_path = layout_join(corpus, r->module);
		out->module_rel = xstrdup(r->module);
		free(corpus);
	} else if (layer) {
		if (read_layer(read_manifest, layer, corpus_opt, &man, e) < 0)
			goto fail;
		have_man = true;
		if (!man.module) {
			err_set(e, "%s: the manifest names no module", man.manifest);
			goto fail;
		}
		char *corpus = man.corpus ? xstrdup(man.corpus)
		                          : layout_corpus_dir(NULL, man.manifest, e);
		if (!corpus)
			goto fail;
		out->module_path = layout_join(corpus, man.module);
		out->module_rel = xstrdup(man.module);
		free(corpus);
	} else {
		err_set(e,
		        "no module: give a layer, --module, or a recipe with \"module\"");
		goto fail;
	}
	if (entry_opt)
		out->entry = xstrdup(entry_opt);
	else if (r && r->entry)
		out->entry = xstrdup(r->entry);
	else if (have_man && man.entry)
		out->entry = xstrdup(man.entry);
	else if (layer && !have_man) {
		if (read_layer(read_manifest, layer, corpus_opt, &man, e) < 0)
			goto fail;
		have_man = true;
		if (man.entry)
			out->entry = xstrdup(man.entry);
	}
	layout_layer_release(&man);
	return 0;
fail:
	layout_layer_release(&man);
	located_release(out);
	return -1;
}

void located_release(Located *l)
{
	free(l->layer);
	free(l->module_path);
	free(l->module_rel);
	free(l->entry);
	memset(l, 0, sizeof(*l));
}

int splice_layer_phases(const LayerRecipes *l, size_t *n, Err *e)
{
	Located loc = {0};
	if (splice_locate(l->layer, l->corpus_opt, NULL, NULL, NULL, l->read_manifest, &loc,
	                  e) < 0)
		return -1;
	MapFile mf = {0};
	int rc = -1;
	Module *m = NULL;
	if (map_open(&mf, loc.module_path, e) < 0)
		goto out;
	m = ptx_parse(loc.module_path, mf.p, mf.n, e);
	if (!m)
		goto out;
	const Func *f = loc.entry ? mod_func_find(m, str_c(loc.entry)) : NULL;
	if (!f) {
		err_set(e, "%s: no entry '%s'", loc.module_path, loc.entry ? loc.entry : "");
		goto out;
	}
	uint32_t a, b;
	*n = 0;
	ana_phase_range(m, f, 0, 0, false, &a, &b, n); /* phase 0: count them all */
	rc = 0;
out:
	mod_free(m);
	map_close(&mf);
	located_release(&loc);
	return rc;
}

int splice_phase_recipe(const LayerRecipes *l, unsigned phase, const char *variant, char **path,
                        Err *e)
{
	*path = layout_recipe_variant(l->dir, phase, variant);
	if (access(*path, F_OK) == 0)
		return 0;
	size_t n = 0;
	Err ig = ERR_INIT;
	int have_n = splice_layer_phases(l, &n, &ig);
	err_release(&ig);
	if (have_n == 0 && phase > n)
		ana_phase_missing(NULL, phase, l->layer, n, e);
	else if (variant && *variant)
		err_set(e, "layer '%s' has no recipe for phase %u in the variant '%s': '%s' does not exist",
		        l->layer, phase, variant, *path);
	else
		err_set(e,
		        "layer '%s' has no recipe for phase %u: '%s' does not exist\n"
		        "  (write one with 'd4r-splice recipe new %s --phase %u')",
		        l->layer, phase, *path, l->layer, phase);
	free(*path);
	*path = NULL;
	return -1;
}

int splice_recipe_phase_check(const Recipe *r, unsigned phase, Err *e)
{
	if (phase && r->cut == CUT_PHASE && r->phase != phase)
		return err_set(e, "%s: the recipe cuts phase %u, --phase says %u", r->path, r->phase,
		               phase);
	return 0;
}

int splice_layer_recipe(const LayerRecipes *l, unsigned phase, const char *variant,
                        const char *recipe_opt, Recipe *r, Err *e)
{
	char *path = NULL;
	if (recipe_opt)
		path = xstrdup(recipe_opt);
	else if (splice_phase_recipe(l, phase, variant, &path, e) < 0)
		return -1;
	int rc = rcp_load(path, r, e);
	free(path);
	if (rc < 0)
		return -1;
	if (splice_recipe_phase_check(r, phase, e) < 0) {
		rcp_release(r);
		return -1;
	}
	return 0;
}
