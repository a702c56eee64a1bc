/*
 * test_layout.c - where a repository's files are found: the corpus folder,
 * a layer's manifest and recipes, templates under ptx/, and the rule that
 * a corpus path stays inside the corpus.  Each test builds a small
 * repository in a temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char repo[64];

/* repo/{corpus,ptx/t,recipes/t/{layer,phase-02,phase-01-epi,notes.txt}} */
static int setup(void **state)
{
	(void)state;
	snprintf(repo, sizeof repo, "/tmp/d4r-layout-XXXXXX");
	if (!mkdtemp(repo))
		return -1;
	Err e = ERR_INIT;
	char p[256];
	const char *dirs[] = {"corpus", "ptx/t", "recipes/t", "recipes/bare", "deep/er"};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(p, sizeof p, "%s/%s", repo, dirs[i]);
		if (mkdir_p(p, &e) < 0)
			return -1;
	}
	const char *files[] = {"recipes/t/layer.json", "recipes/t/phase-02.json",
	                       "recipes/t/phase-01-epi.json", "recipes/t/notes.txt"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(p, sizeof p, "%s/%s", repo, files[i]);
		if (write_file_atomic(p, "{}", 2, &e) < 0)
			return -1;
	}
	err_release(&e);
	unsetenv("D4R_CORPUS");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", repo);
	return system(cmd) == 0 ? 0 : -1;
}

static char *at(const char *rel)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", repo, rel);
	return p[k];
}

static void test_layout__corpus_folder(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	/* the corpus of the repository the manifest lives in */
	char *c = layout_corpus_dir(NULL, at("recipes/t/layer.json"), &e);
	assert_non_null(c);
	assert_int_equal(strcmp(c + strlen(c) - 7, "/corpus"), 0);
	free(c);
	/* $D4R_CORPUS before it, --corpus before both */
	setenv("D4R_CORPUS", at("ptx"), 1);
	c = layout_corpus_dir(NULL, at("recipes/t/layer.json"), &e);
	assert_string_equal(c, at("ptx"));
	free(c);
	c = layout_corpus_dir(at("recipes"), at("recipes/t/layer.json"), &e);
	assert_string_equal(c, at("recipes"));
	free(c);
	setenv("D4R_CORPUS", at("nowhere"), 1);
	assert_null(layout_corpus_dir(NULL, at("recipes/t/layer.json"), &e));
	assert_non_null(strstr(err_msg(&e), "nowhere' ($D4R_CORPUS) is not a folder"));
	unsetenv("D4R_CORPUS");
	assert_null(
	    layout_corpus_dir("/nonexistent-d4r", at("recipes/t/layer.json"), &e));
	assert_string_equal(
	    err_msg(&e), "corpus folder '/nonexistent-d4r' (--corpus) is not a folder");
	/* nothing above the root */
	assert_null(layout_corpus_dir(NULL, "/", &e));
	assert_non_null(strstr(err_msg(&e),
	                       "no corpus folder: give --corpus DIR or set $D4R_CORPUS"));
	err_release(&e);
}

static void test_layout__layers(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	/* a path is taken as it is, a folder holding layer.json too */
	char *m = layout_find_layer(at("recipes/t/layer.json"), &e);
	assert_string_equal(m, at("recipes/t/layer.json"));
	free(m);
	m = layout_find_layer(at("recipes/t"), &e);
	assert_string_equal(m, at("recipes/t/layer.json"));
	free(m);
	assert_null(layout_find_layer(at("recipes/bare"), &e));
	assert_non_null(strstr(err_msg(&e), "no manifest at '"));
	/* a name is searched from the current folder upward */
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(at("deep/er")), 0);
	m = layout_find_layer("t", &e);
	assert_non_null(m);
	assert_int_equal(strcmp(m + strlen(m) - 21, "/recipes/t/layer.json"), 0);
	free(m);
	assert_null(layout_find_layer("no-such-layer-d4r", &e));
	assert_non_null(strstr(err_msg(&e), "no layer 'no-such-layer-d4r': no "
	                                    "recipes/no-such-layer-d4r/layer.json here"));
	/* the recipes folder: beside the manifest, or without one */
	char *dir = layout_layer_dir("t", &e);
	assert_int_equal(strcmp(dir + strlen(dir) - 10, "/recipes/t"), 0);
	free(dir);
	dir = layout_layer_dir("bare", &e);
	assert_non_null(dir);
	assert_int_equal(strcmp(dir + strlen(dir) - 13, "/recipes/bare"), 0);
	free(dir);
	assert_null(layout_layer_dir("no-such-layer-d4r", &e));
	assert_non_null(strstr(err_msg(&e), "no recipes/no-such-layer-d4r folder"));
	assert_int_equal(chdir(cwd), 0);
	err_release(&e);
}

static void test_layout__names(void **state)
{
	(void)state;
	char *s = layout_layer_of("x/recipes/enc4/layer.json");
	assert_string_equal(s, "enc4");
	free(s);
	s = layout_layer_of("recipes/enc4/layer.json");
	assert_string_equal(s, "enc4");
	free(s);
	assert_null(layout_layer_of("x/recipe/enc4/layer.json"));
	assert_null(layout_layer_of("recipes/enc4/other.json"));
	assert_null(layout_layer_of("layer.json"));
	s = layout_recipe_file("recipes/enc4", 8, false);
	assert_string_equal(s, "recipes/enc4/phase-08.json");
	free(s);
	s = layout_recipe_file(".", 12, true);
	assert_string_equal(s, "./phase-12-epi.json");
	free(s);
	s = layout_template_name("enc4", 3, true);
	assert_string_equal(s, "enc4/phase-03-epi.ptx");
	free(s);
	s = layout_dir_of("a/b/c.json");
	assert_string_equal(s, "a/b");
	free(s);
	s = layout_dir_of("c.json");
	assert_string_equal(s, ".");
	free(s);
	assert_true(layout_inside("enc4/enc4.ptx"));
	assert_true(layout_inside("a.bin"));
	assert_false(layout_inside("/abs/enc4.ptx"));
	assert_false(layout_inside("../x.bin"));
	assert_false(layout_inside("enc4/../../x.bin"));
	assert_false(layout_inside("enc4/.."));
	assert_false(layout_inside(".."));
	assert_false(layout_inside(""));
	/* ".." as part of a name is a name */
	assert_true(layout_inside("enc4/a..b.ptx"));
	assert_true(layout_inside("./local.ptx"));
	assert_true(layout_inside("..hidden/x"));
}

static void test_layout__recipes_of_a_layer(void **state)
{
	(void)state;
	char **paths;
	size_t n = layout_recipes(at("recipes/t"), &paths);
	assert_int_equal(n, 2);
	assert_string_equal(paths[0], at("recipes/t/phase-01-epi.json"));
	assert_string_equal(paths[1], at("recipes/t/phase-02.json"));
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	assert_int_equal(layout_recipes(at("nowhere"), &paths), 0);
	free(paths);
}

static void test_layout__templates(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	char *path, *display;
	/* a plain name: under the ptx/ above the recipe */
	assert_int_equal(layout_template("t/phase-02.ptx", at("recipes/t/phase-02.json"),
	                                 NULL, &path, &display, &e),
	                 0);
	assert_int_equal(strcmp(path + strlen(path) - 19, "/ptx/t/phase-02.ptx"), 0);
	assert_string_equal(display, "ptx/t/phase-02.ptx");
	free(path);
	free(display);
	/* --ptx wins */
	assert_int_equal(layout_template("t/x.ptx", at("recipes/t/phase-02.json"),
	                                 "/opt/ptx", &path, &display, &e),
	                 0);
	assert_string_equal(path, "/opt/ptx/t/x.ptx");
	assert_string_equal(display, "ptx/t/x.ptx");
	free(path);
	free(display);
	/* ./ from the recipe's folder */
	assert_int_equal(
	    layout_template("./local.ptx", "g/r.json", NULL, &path, &display, &e), 0);
	assert_string_equal(path, "g/./local.ptx");
	assert_string_equal(display, "g/./local.ptx");
	free(path);
	free(display);
	/* nothing outside the folders: no "..", no absolute path */
	path = display = NULL;
	assert_int_equal(
	    layout_template("../up.ptx", "r.json", NULL, &path, &display, &e), -1);
	assert_string_equal(
	    err_msg(&e),
	    "template '../up.ptx': not inside the ptx/ folder or the recipe's "
	    "folder (a relative path with no '..')");
	assert_int_equal(
	    layout_template("./../up.ptx", "g/r.json", NULL, &path, &display, &e), -1);
	assert_int_equal(
	    layout_template("t/../../x.ptx", "g/r.json", "/opt/ptx", &path, &display, &e),
	    -1);
	assert_int_equal(
	    layout_template("/abs/t.ptx", "g/r.json", NULL, &path, &display, &e), -1);
	assert_null(path);
	assert_null(display);
	err_clear(&e);
	/* no ptx/ above the recipe nor the current folder */
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(layout_template("t/x.ptx", "/tmp", NULL, &path, &display, &e),
	                 -1);
	assert_string_equal(
	    err_msg(&e),
	    "template 't/x.ptx': no ptx/ folder above '/tmp' or the current folder");
	/* the ptx root from a folder, then from the current folder */
	assert_int_equal(chdir(at("deep/er")), 0);
	char *root = layout_ptx_root("/");
	assert_non_null(root);
	assert_int_equal(strcmp(root + strlen(root) - 4, "/ptx"), 0);
	free(root);
	assert_int_equal(chdir(cwd), 0);
	err_release(&e);
}

/* A template path as typed (recipe new --template): from the repository
 * root, under ptx/, absolute inside ptx/, or beside the recipe; the ptx
 * folder is never named twice, and where both readings name a folder the
 * name is refused. */
static void test_layout__templates_typed(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	char *name = NULL, *path = NULL, *display = NULL;
	char root[128];
	snprintf(root, sizeof root, "%s", at("ptx"));
	const char *same[][2] = {{"ptx/t/x30.ptx", "t/x30.ptx"},
	                         {"t/x30.ptx", "t/x30.ptx"},
	                         {"./here.ptx", "./here.ptx"},
	                         {"ptx/top.ptx", "top.ptx"}};
	for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
		assert_int_equal(layout_template_typed(same[i][0], root, &name, &e), 0);
		assert_string_equal(name, same[i][1]);
		free(name);
	}
	char abs[256];
	snprintf(abs, sizeof abs, "%s/t/x30.ptx", root);
	assert_int_equal(layout_template_typed(abs, root, &name, &e), 0);
	assert_string_equal(name, "t/x30.ptx");
	free(name);
	/* in a folder under ptx/ that is not made yet */
	char *rr = realpath(root, NULL);
	assert_non_null(rr);
	snprintf(abs, sizeof abs, "%s/new/x30.ptx", rr);
	free(rr);
	assert_int_equal(layout_template_typed(abs, root, &name, &e), 0);
	assert_string_equal(name, "new/x30.ptx");
	free(name);
	snprintf(abs, sizeof abs, "%s/x.ptx", at("deep/er"));
	assert_int_equal(layout_template_typed(abs, root, &name, &e), -1);
	assert_null(name);
	assert_non_null(strstr(err_msg(&e), "not inside the ptx folder"));
	assert_int_equal(layout_template_typed("ptx/../x.ptx", root, &name, &e), -1);
	assert_int_equal(layout_template_typed("t/x.ptx", NULL, &name, &e), -1);
	assert_non_null(strstr(err_msg(&e), "give --ptx DIR"));
	/* the recipe's own name resolves the same way: ptx/t/x30.ptx is not
	 * ptx/ptx/t/x30.ptx */
	assert_int_equal(layout_template("ptx/t/x30.ptx", at("recipes/t/phase-02.json"),
	                                 NULL, &path, &display, &e),
	                 0);
	assert_int_equal(strcmp(path + strlen(path) - 14, "/ptx/t/x30.ptx"), 0);
	assert_null(strstr(path, "ptx/ptx"));
	assert_string_equal(display, "ptx/t/x30.ptx");
	free(path);
	free(display);
	/* ptx/ptx exists: both readings name a folder */
	char pp[256];
	snprintf(pp, sizeof pp, "%s/ptx", root);
	assert_int_equal(mkdir_p(pp, &e), 0);
	assert_int_equal(layout_template_typed("ptx/t/x30.ptx", root, &name, &e), -1);
	assert_non_null(strstr(err_msg(&e), "could be meant"));
	assert_int_equal(
	    layout_template("ptx/t/x30.ptx", NULL, root, &path, &display, &e), -1);
	assert_int_equal(rmdir(pp), 0);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout__corpus_folder),
	    cmocka_unit_test(test_layout__layers),
	    cmocka_unit_test(test_layout__names),
	    cmocka_unit_test(test_layout__recipes_of_a_layer),
	    cmocka_unit_test(test_layout__templates),
	    cmocka_unit_test(test_layout__templates_typed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
