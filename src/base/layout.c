/*
 * layout.c - finding a layer's manifest, recipes, corpus and templates
 * (see layout.h).
 *
 * Every search goes upward: from the current folder, from the file that
 * names another, or from the program's own folder (where each folder's
 * share/d4r-splice/ is looked in too: `make install` puts recipes/, ptx/
 * and corpus/ in PREFIX/share/d4r-splice, beside PREFIX/bin).  A candidate counts only
 * as the kind it must be (a manifest is a file, a corpus or ptx/ a folder),
 * so a stray file named `corpus` does not stop the search.
 */
#include "layout.h"

#include "strbuf.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

char *layout_join(const char *dir, const char *rel)
{
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

char *layout_dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');
	return sl ? xstrndup(path, (size_t)(sl - path)) : xstrdup(".");
}

bool layout_inside(const char *rel)
{
	if (!rel[0] || rel[0] == '/')
		return false;
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		p += *p == '/';
	}
	return true;
}

/* ---- layers ---------------------------------------------------------------- */

char *layout_find_layer(const char *layer, Err *e)
{
	if (strchr(layer, '/') || strstr(layer, ".json")) {
		if (is_file(layer))
			return xstrdup(layer);
		if (is_dir(layer)) {
			char *p = layout_join(layer, "layer.json");
			if (is_file(p))
				return p;
			free(p);
		}
		err_set(e, "no manifest at '%s'", layer);
		return NULL;
	}
	size_t n = strlen(layer) + 32;
	char *rel = xmalloc(n);
	snprintf(rel, n, "recipes/%s/layer.json", layer);
	if (is_file(rel))
		return rel;
	char *cwd = getcwd(NULL, 0);
	if (cwd) {
		char *slash;
		while ((slash = strrchr(cwd, '/')) != NULL && slash != cwd) {
			*slash = 0;
			char *p = layout_join(cwd, rel);
			if (is_file(p)) {
				free(cwd);
				free(rel);
				return p;
			}
			free(p);
		}
		free(cwd);
	}
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = 0;
		for (int up = 0; up < 3; up++) {
			char *slash = strrchr(exe, '/');
			if (!slash || slash == exe)
				break;
			*slash = 0;
			char *p = layout_join(exe, rel);
			if (is_file(p)) {
				free(rel);
				return p;
			}
			free(p);
			/* installed: PREFIX/share/d4r-splice/recipes */
			char *share = layout_join(exe, "share/d4r-splice");
			p = layout_join(share, rel);
			free(share);
			if (is_file(p)) {
				free(rel);
				return p;
			}
			free(p);
		}
	}
	err_set(e,
	        "no layer '%s': no %s here, above the current folder, or beside "
	        "the program",
	        layer, rel);
	free(rel);
	return NULL;
}

char *layout_layer_dir(const char *layer, Err *e)
{
	Err ig = ERR_INIT;
	char *mf = layout_find_layer(layer, &ig);
	err_release(&ig);
	if (mf) {
		char *dir = layout_dir_of(mf);
		free(mf);
		return dir;
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
	err_set(
	    e,
	    "layer '%s': no recipes/%s folder in the current folder, its ancestors or "
	    "beside the executable",
	    layer, layer);
	return NULL;
}

char *layout_layer_of(const char *path)
{
	const char *base = strrchr(path, '/');
	if (!base || strcmp(base + 1, "layer.json"))
		return NULL;
	const char *p = base;
	while (p > path && p[-1] != '/')
		p--;
	if (p == base)
		return NULL;
	const char *q = p > path ? p - 1 : p;
	const char *r = q;
	while (r > path && r[-1] != '/')
		r--;
	if ((size_t)(q - r) != 7 || strncmp(r, "recipes", 7))
		return NULL;
	return xstrndup(p, (size_t)(base - p));
}

char *layout_recipe_file(const char *layer_dir, unsigned phase, bool epilogue)
{
	size_t n = strlen(layer_dir) + 32;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/phase-%02u%s.json", layer_dir, phase, epilogue ? "-epi" : "");
	return p;
}

char *layout_template_name(const char *layer, unsigned phase, bool epilogue)
{
	size_t n = strlen(layer) + 40;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/phase-%02u%s.ptx", layer, phase, epilogue ? "-epi" : "");
	return p;
}

char *layout_recipe_variant(const char *layer_dir, unsigned phase, const char *variant)
{
	if (!variant || !*variant)
		return layout_recipe_file(layer_dir, phase, false);
	size_t n = strlen(layer_dir) + strlen(variant) + 32;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/phase-%02u-%s.json", layer_dir, phase, variant);
	if (!strcmp(variant, "mma") && access(p, F_OK) != 0) {
		free(p);
		return layout_recipe_file(layer_dir, phase, false);
	}
	return p;
}

char *layout_template_variant(const char *layer, unsigned phase, const char *variant)
{
	if (!variant || !*variant)
		return layout_template_name(layer, phase, false);
	size_t n = strlen(layer) + strlen(variant) + 40;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/phase-%02u-%s.ptx", layer, phase, variant);
	return p;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t layout_recipes(const char *layer_dir, char ***out)
{
	VEC(char *) paths = {0};
	DIR *d = opendir(layer_dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l > 5 && !strcmp(de->d_name + l - 5, ".json") &&
		    strcmp(de->d_name, "layer.json"))
			VEC_PUSH(paths, layout_join(layer_dir, de->d_name));
	}
	if (d)
		closedir(d);
	if (paths.n)
		qsort(paths.v, paths.n, sizeof(char *), by_name);
	*out = paths.v;
	return paths.n;
}

/* ---- the corpus -------------------------------------------------------------- */

char *layout_corpus_dir(const char *opt, const char *near, Err *e)
{
	if (opt && *opt) {
		if (!is_dir(opt)) {
			err_set(e, "corpus folder '%s' (--corpus) is not a folder", opt);
			return NULL;
		}
		return xstrdup(opt);
	}
	const char *env = getenv("D4R_CORPUS");
	if (env && *env) {
		if (!is_dir(env)) {
			err_set(e, "corpus folder '%s' ($D4R_CORPUS) is not a folder",
			        env);
			return NULL;
		}
		return xstrdup(env);
	}
	char *abs = near ? realpath(near, NULL) : NULL;
	if (abs) {
		char *slash;
		while ((slash = strrchr(abs, '/')) != NULL) {
			*slash = 0;
			char *c = layout_join(*abs ? abs : "", "corpus");
			if (is_dir(c)) {
				free(abs);
				return c;
			}
			free(c);
		}
		free(abs);
	}
	err_set(e,
	        "no corpus folder: give --corpus DIR or set $D4R_CORPUS "
	        "(no 'corpus' folder above '%s')",
	        near ? near : "?");
	return NULL;
}

/* ---- templates --------------------------------------------------------------- */

/* The nearest ancestor of `start` (itself included) holding a `sub` folder,
 * as that folder. */
static char *find_up(const char *start, const char *sub)
{
	char buf[PATH_MAX];
	if (!realpath(start, buf))
		return NULL;
	for (;;) {
		char cand[PATH_MAX + 64];
		snprintf(cand, sizeof cand, "%s/%s", buf, sub);
		if (is_dir(cand))
			return xstrdup(cand);
		char *sl = strrchr(buf, '/');
		if (!sl || sl == buf)
			return NULL;
		*sl = 0;
	}
}

char *layout_ptx_root(const char *start)
{
	char *root = start ? find_up(start, "ptx") : NULL;
	if (!root && start) {
		/* a file not written yet: from its folder */
		char *d = layout_dir_of(start);
		root = find_up(d, "ptx");
		free(d);
	}
	if (!root) {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof cwd))
			root = find_up(cwd, "ptx");
	}
	return root;
}

int layout_template_check(const char *name, Err *e)
{
	if (layout_inside(name))
		return 0;
	return err_set(
	    e,
	    "template '%s': not inside the ptx/ folder or the recipe's folder (a "
	    "relative path with no '..')",
	    name);
}

/* The last component of folder `root` ("ptx" for /repo/ptx/), and its
 * length, trailing slashes left out. */
static const char *base_of(const char *root, size_t *n)
{
	size_t l = strlen(root);
	while (l > 1 && root[l - 1] == '/')
		l--;
	size_t b = l;
	while (b > 0 && root[b - 1] != '/')
		b--;
	*n = l - b;
	return root + b;
}

/*
 * `name` with the repository root's spelling taken off: "ptx/enc4/x.ptx"
 * is "enc4/x.ptx" when the ptx folder `root` is named "ptx" (its own name,
 * for --ptx DIR) and holds no folder of that name itself, which would make
 * both readings possible: that is refused.  Other names are returned as
 * they are.  NULL with a message on the refusal.
 */
static const char *strip_root_name(const char *name, const char *root, Err *e)
{
	size_t bn;
	const char *b = base_of(root, &bn);
	if (!bn || strncmp(name, b, bn) || name[bn] != '/')
		return name;
	char *twice = xstrndup(name, bn);
	char *inner = layout_join(root, twice);
	bool both = is_dir(inner);
	free(inner);
	free(twice);
	if (both) {
		err_set(
		    e,
		    "template '%s': both %s (from the repository root) and %.*s/%s "
		    "(under "
		    "the ptx folder) could be meant: name it from inside the ptx folder",
		    name, name, (int)bn, b, name);
		return NULL;
	}
	return name + bn + 1;
}

int layout_template_typed(const char *typed, const char *ptx_root, char **name, Err *e)
{
	*name = NULL;
	if (!strncmp(typed, "./", 2)) {
		if (layout_template_check(typed, e) < 0)
			return -1;
		*name = xstrdup(typed);
		return 0;
	}
	if (!ptx_root)
		return err_set(
		    e,
		    "template '%s': no ptx/ folder above the recipe or the current "
		    "folder (give --ptx DIR)",
		    typed);
	if (typed[0] == '/') {
		/* a path inside the ptx folder, by its real location */
		char *rr = realpath(ptx_root, NULL);
		char *d = layout_dir_of(typed);
		char *rd = realpath(d, NULL);
		size_t rn = rr ? strlen(rr) : 0;
		const char *leaf = strrchr(typed, '/') + 1;
		int rc = -1;
		if (rr && rd && !strncmp(rd, rr, rn) && (rd[rn] == '/' || !rd[rn]) &&
		    *leaf) {
			StrBuf sb = STRBUF_INIT;
			if (rd[rn])
				sb_addf(&sb, "%s/", rd + rn + 1);
			sb_adds(&sb, leaf);
			*name = sb.p;
			rc = 0;
		} else if (!rd && rr && !strncmp(typed, rr, rn) && typed[rn] == '/' &&
		           layout_inside(typed + rn + 1)) {
			/* in a folder under ptx/ that is not made yet */
			*name = xstrdup(typed + rn + 1);
			rc = 0;
		} else
			err_set(e,
			        "template '%s': not inside the ptx folder '%s' (name it "
			        "under the ptx "
			        "folder, from the repository root, or as ./NAME beside "
			        "the recipe)",
			        typed, ptx_root);
		free(rr);
		free(d);
		free(rd);
		return rc;
	}
	const char *rel = strip_root_name(typed, ptx_root, e);
	if (!rel || layout_template_check(rel, e) < 0)
		return -1;
	*name = xstrdup(rel);
	return 0;
}

int layout_template(const char *name, const char *recipe_path, const char *ptx_root,
                    char **path, char **display, Err *e)
{
	if (layout_template_check(name, e) < 0)
		return -1;
	if (!strncmp(name, "./", 2)) {
		const char *sl = recipe_path ? strrchr(recipe_path, '/') : NULL;
		StrBuf sb = STRBUF_INIT;
		if (sl)
			sb_addn(&sb, recipe_path, (size_t)(sl - recipe_path + 1));
		sb_adds(&sb, name);
		*path = sb.p;
		*display = xstrdup(sb.p);
		return 0;
	}
	char *root = ptx_root ? xstrdup(ptx_root) : layout_ptx_root(recipe_path);
	if (!root)
		return err_set(
		    e, "template '%s': no ptx/ folder above '%s' or the current folder",
		    name, recipe_path ? recipe_path : "(no recipe file)");
	const char *rel = strip_root_name(name, root, e);
	if (!rel) {
		free(root);
		return -1;
	}
	name = rel;
	*path = layout_join(root, name);
	StrBuf d = STRBUF_INIT;
	sb_addf(&d, "ptx/%s", name);
	*display = d.p;
	free(root);
	return 0;
}

void layout_layer_release(LayoutLayer *l)
{
	free(l->manifest);
	free(l->corpus);
	free(l->module);
	free(l->entry);
	memset(l, 0, sizeof(*l));
}
