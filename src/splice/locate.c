/*
 * locate.c - choosing the module and the entry a splice works on.
 *
 * The layer manifest (recipes/LAYER/layer.json) is consulted only for what
 * a recipe does not say itself: its module and entry, and the corpus folder
 * when the recipe is kept outside the repository.
 */
#include "locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
