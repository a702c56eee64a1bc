/*
 * locate.c - finding the layer folder, the module and the entry.
 *
 * The layer manifest (recipes/LAYER/layer.json, read by the GPU side's
 * mf_load) is consulted only for what a recipe does not say itself: its
 * module and entry.  So the splicer works on a layer whose manifest is not
 * written yet, as long as its recipes name their module.
 */
#include "locate.h"

#include "gpu/manifest.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

char *splice_layer_dir(const char *layer, Err *e)
{
	Err ig = ERR_INIT;
	char *mf = mf_find_layer(layer, &ig);
	err_release(&ig);
	if (mf) {
		char *sl = strrchr(mf, '/');
		if (sl)
			*sl = 0;
		else
			strcpy(mf, ".");
		return mf;
	}
	char buf[PATH_MAX], cand[PATH_MAX + 300];
	if (getcwd(buf, sizeof buf)) {
		for (;;) {
			snprintf(cand, sizeof cand, "%s/recipes/%s", buf, layer);
			if (is_dir(cand))
				return xstrdup(cand);
			char *sl = strrchr(buf, '/');
			if (!sl || sl == buf)
				break;
			*sl = 0;
		}
	}
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = 0;
		for (int up = 0; up < 3; up++) {
			char *sl = strrchr(buf, '/');
			if (!sl)
				break;
			*sl = 0;
			snprintf(cand, sizeof cand, "%s/recipes/%s", buf, layer);
			if (is_dir(cand))
				return xstrdup(cand);
		}
	}
	err_set(e, "layer '%s': no recipes/%s folder in the current folder, its ancestors or beside "
	        "the executable", layer, layer);
	return NULL;
}

static int load_manifest(const char *layer, const char *corpus_opt, Manifest *man, Err *e)
{
	char *mp = mf_find_layer(layer, e);
	if (!mp)
		return -1;
	int rc = mf_load(mp, corpus_opt, man, e);
	free(mp);
	return rc;
}

int splice_locate(const char *layer, const char *corpus_opt, const char *module_opt,
                  const char *entry_opt, const Recipe *r, Located *out, Err *e)
{
	memset(out, 0, sizeof(*out));
	if (!layer && r && r->layer)
		layer = r->layer;
	if (layer)
		out->layer = xstrdup(layer);
	Manifest man;
	bool have_man = false;
	if (module_opt) {
		out->module_path = xstrdup(module_opt);
	} else if (r && r->module) {
		char *corpus = mf_corpus_dir(corpus_opt, r->path, e);
		if (!corpus && layer) {
			/* A recipe kept outside the repository: the layer's manifest
			 * knows the corpus. */
			err_clear(e);
			if (load_manifest(layer, corpus_opt, &man, e) < 0)
				goto fail;
			have_man = true;
			if (!man.corpus) {
				err_set(e, "no corpus folder for layer '%s': give --corpus DIR or set "
				        "$D4R_CORPUS", layer);
				goto fail;
			}
			corpus = xstrdup(man.corpus);
		}
		if (!corpus)
			goto fail;
		size_t n = strlen(corpus) + strlen(r->module) + 2;
		out->module_path = xmalloc(n);
		snprintf(out->module_path, n, "%s/%s", corpus, r->module);
		out->module_rel = xstrdup(r->module);
		free(corpus);
	} else if (layer) {
		if (load_manifest(layer, corpus_opt, &man, e) < 0)
			goto fail;
		have_man = true;
		if (!man.module) {
			err_set(e, "%s: the manifest names no module", man.path);
			goto fail;
		}
		if (mf_corpus_path(&man, man.module, &out->module_path, e) < 0)
			goto fail;
		out->module_rel = xstrdup(man.module);
	} else {
		err_set(e, "no module: give a layer, --module, or a recipe with \"module\"");
		goto fail;
	}
	if (entry_opt)
		out->entry = xstrdup(entry_opt);
	else if (r && r->entry)
		out->entry = xstrdup(r->entry);
	else if (have_man && man.entry)
		out->entry = xstrdup(man.entry);
	else if (layer && !have_man) {
		if (load_manifest(layer, corpus_opt, &man, e) < 0)
			goto fail;
		have_man = true;
		if (man.entry)
			out->entry = xstrdup(man.entry);
	}
	if (have_man)
		mf_release(&man);
	return 0;
fail:
	if (have_man)
		mf_release(&man);
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
