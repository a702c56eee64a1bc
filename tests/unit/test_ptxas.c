/*
 * test_ptxas.c - the check by ptxas and the cache of its answers
 * (splice/ptxas.h): what the key depends on, and that an answer comes from
 * the cache exactly when the module, the arguments and the ptxas binary are
 * the same.  A stand-in ptxas (a shell script in CUDA_HOME/bin of a
 * temporary folder) counts its runs and rejects a module holding "BAD"
 * with a message naming line 2 of the file it was given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/file.h"
#include "splice/ptxas.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], exe[256], runs[128], cache[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/d4r-ptxas-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char p[160];
	snprintf(p, sizeof p, "%s/cuda/bin", dir);
	Err e = ERR_INIT;
	if (mkdir_p(p, &e) < 0)
		return -1;
	snprintf(exe, sizeof exe, "%s/ptxas", p);
	snprintf(runs, sizeof runs, "%s/runs", dir);
	snprintf(cache, sizeof cache, "%s/cache/d4r-splice/ptxas", dir);
	FILE *f = fopen(exe, "w");
	if (!f)
		return -1;
	/* ptxas -arch=X [-e E] -o /dev/null FILE: one line per run, with the
	 * arguments; "BAD" in the module is an error on its line 2 */
	fprintf(f,
	        "#!/bin/sh\n"
	        "echo \"$*\" >>'%s'\n"
	        "for a; do f=$a; done\n"
	        "if grep -q BAD \"$f\"; then\n"
	        "  echo \"ptxas $f, line 2; error   : bad thing\"\n"
	        "  exit 1\n"
	        "fi\n"
	        "exit 0\n",
	        runs);
	fclose(f);
	chmod(exe, 0755);
	snprintf(p, sizeof p, "%s/cuda", dir);
	setenv("CUDA_HOME", p, 1);
	snprintf(p, sizeof p, "%s/cache", dir);
	setenv("XDG_CACHE_HOME", p, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* How many times the stand-in ran. */
static int nruns(void)
{
	FILE *f = fopen(runs, "r");
	if (!f)
		return 0;
	int n = 0, c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The entries in the cache folder; every name must be a key (64 hex
 * digits): no temporary file is left there. */
static int nentries(void)
{
	DIR *d = opendir(cache);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		assert_int_equal(strlen(de->d_name), 64);
		assert_int_equal(strspn(de->d_name, "0123456789abcdef"), 64);
		n++;
	}
	closedir(d);
	return n;
}

static int check(const char *text, const char *entry, bool no_cache, PtxasCache *pc,
                 StrBuf *log)
{
	Err e = ERR_INIT;
	*pc = (PtxasCache){.no_cache = no_cache};
	sb_reset(log);
	int rc =
	    splice_ptxas(text, strlen(text), "sm_89", entry, NULL, "m.ptx", pc, log, &e);
	assert_false(e.set);
	return rc;
}

static void test_ptxas__key(void **state)
{
	(void)state;
	char k[65], k2[65];
	const char *id = "/cuda/bin/ptxas size 100 mtime 1.000000000";
	ptxas_cache_key("abc", 3, "-arch=sm_89 -e k", id, k);
	assert_int_equal(strlen(k), 64);
	ptxas_cache_key("abc", 3, "-arch=sm_89 -e k", id, k2);
	assert_string_equal(k, k2);
	ptxas_cache_key("abd", 3, "-arch=sm_89 -e k", id, k2); /* a byte */
	assert_string_not_equal(k, k2);
	ptxas_cache_key("abc", 2, "-arch=sm_89 -e k", id, k2); /* a byte less */
	assert_string_not_equal(k, k2);
	ptxas_cache_key("abc", 3, "-arch=sm_90 -e k", id, k2); /* the target */
	assert_string_not_equal(k, k2);
	ptxas_cache_key("abc", 3, "-arch=sm_89 -e j", id, k2); /* the entry */
	assert_string_not_equal(k, k2);
	ptxas_cache_key("abc", 3, "-arch=sm_89", id, k2); /* no -e */
	assert_string_not_equal(k, k2);
	ptxas_cache_key("abc", 3, "-arch=sm_89 -e k",
	                "/cuda/bin/ptxas size 101 mtime 1.000000000",
	                k2); /* another ptxas */
	assert_string_not_equal(k, k2);
	ptxas_cache_key("abc", 3, "-arch=sm_89 -e k",
	                "/cuda/bin/ptxas size 100 mtime 1.000000001", k2);
	assert_string_not_equal(k, k2);
	/* the strings do not run together: ("ab", "c") is not ("a", "bc") */
	ptxas_cache_key("", 0, "ab", "c", k);
	ptxas_cache_key("", 0, "a", "bc", k2);
	assert_string_not_equal(k, k2);
}

static void test_ptxas__identity(void **state)
{
	(void)state;
	StrBuf id = STRBUF_INIT;
	Err e = ERR_INIT;
	assert_int_equal(ptxas_identity(exe, &id, &e), 0);
	struct stat st;
	assert_int_equal(stat(exe, &st), 0);
	char want[300];
	snprintf(want, sizeof want, "%s size %lld mtime %lld.%09ld", exe,
	         (long long)st.st_size, (long long)st.st_mtim.tv_sec,
	         (long)st.st_mtim.tv_nsec);
	assert_string_equal(id.p, want);
	sb_release(&id);
	char nope[160];
	snprintf(nope, sizeof nope, "%s/none", dir);
	assert_int_equal(ptxas_identity(nope, &id, &e), -1);
	assert_non_null(strstr(err_msg(&e), "none"));
	err_release(&e);
	sb_release(&id);
}

static void test_ptxas__answers_come_from_the_cache(void **state)
{
	(void)state;
	PtxasCache pc;
	StrBuf log = STRBUF_INIT;
	const char good[] = ".version 8.7\n.target sm_89\n// good\n";
	const char bad[] = ".version 8.7\n// BAD\n";

	/* a miss: ptxas runs, its answer is kept */
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_int_equal(strlen(pc.key), 64);
	assert_int_equal(nruns(), 1);
	assert_int_equal(nentries(), 1);
	char key[65];
	memcpy(key, pc.key, sizeof key);

	/* the same bytes and arguments: from the cache, ptxas does not run */
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_true(pc.cached);
	assert_string_equal(pc.key, key);
	assert_int_equal(nruns(), 1);

	/* another entry, no entry, another byte: misses */
	assert_int_equal(check(good, "j", false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_int_equal(nruns(), 2);
	assert_int_equal(check(good, NULL, false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_int_equal(nruns(), 3);
	char other[sizeof good];
	memcpy(other, good, sizeof good);
	other[sizeof good - 3] = 'X';
	assert_int_equal(check(other, "k", false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_int_equal(nruns(), 4);
	assert_int_equal(nentries(), 4);

	/* a rejection is kept too, its messages mapped at every read */
	assert_int_equal(check(bad, "k", false, &pc, &log), 1);
	assert_false(pc.cached);
	assert_non_null(strstr(log.p, "ptxas m.ptx:2; error   : bad thing"));
	assert_int_equal(nruns(), 5);
	assert_int_equal(check(bad, "k", false, &pc, &log), 1);
	assert_true(pc.cached);
	assert_string_equal(log.p, "ptxas m.ptx:2; error   : bad thing\n");
	assert_int_equal(nruns(), 5);

	/* no_cache: ptxas runs, nothing is read or written */
	int before = nentries();
	assert_int_equal(check(good, "k", true, &pc, &log), 0);
	assert_false(pc.cached);
	assert_int_equal(nruns(), 6);
	assert_int_equal(nentries(), before);

	/* another ptxas (the binary's modification time): a miss */
	struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	assert_int_equal(utimensat(AT_FDCWD, exe, ts, 0), 0);
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_string_not_equal(pc.key, key);
	assert_int_equal(nruns(), 7);
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_true(pc.cached);
	assert_int_equal(nruns(), 7);

	/* an entry that does not parse is a miss, and is written again */
	char path[300];
	snprintf(path, sizeof path, "%s/%s", cache, pc.key);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("d4r-splice ptxas cache 1\nexit 7\n", f);
	fclose(f);
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_int_equal(nruns(), 8);
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_true(pc.cached);
	assert_int_equal(nruns(), 8);

	/* no cache folder at all (neither XDG_CACHE_HOME nor HOME): ptxas runs
	 * every time, no key */
	char *xdg = strdup(getenv("XDG_CACHE_HOME")), *home = getenv("HOME");
	home = home ? strdup(home) : NULL;
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(check(good, "k", false, &pc, &log), 0);
	assert_false(pc.cached);
	assert_string_equal(pc.key, "");
	assert_int_equal(nruns(), 9);
	setenv("XDG_CACHE_HOME", xdg, 1);
	if (home)
		setenv("HOME", home, 1);
	free(xdg);
	free(home);
	sb_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ptxas__key),
	    cmocka_unit_test(test_ptxas__identity),
	    cmocka_unit_test(test_ptxas__answers_come_from_the_cache),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
