/*
 * test_file.c - the one writer of outputs (base/file.h) and the registry of
 * temporary files (base/temp.h): what is renamed onto, what is written
 * through, what is refused, and that no exit path leaves a temporary file.
 * Each test works in a temporary folder; the exit and signal paths run in
 * forked children.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/temp.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/d4r-file-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	char *p;
	size_t n;
	Err e = ERR_INIT;
	if (read_file(path, &p, &n, &e) < 0) {
		err_release(&e);
		return NULL;
	}
	return p;
}

/* How many names in the folder contain `part`. */
static int names_with(const char *part)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strstr(de->d_name, part) != NULL;
	closedir(d);
	return n;
}

static void test_file__regular_files_and_links(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	/* a new path, then a regular file replaced, keeping its mode */
	assert_int_equal(write_file_atomic(at("new"), "one", 3, &e), 0);
	char *t = get(at("new"));
	assert_string_equal(t, "one");
	free(t);
	assert_int_equal(chmod(at("new"), 0600), 0);
	struct stat before, after;
	assert_int_equal(stat(at("new"), &before), 0);
	assert_int_equal(write_file_atomic(at("new"), "two", 3, &e), 0);
	assert_int_equal(stat(at("new"), &after), 0);
	assert_int_equal(after.st_mode & 0777, 0600);
	assert_true(after.st_ino != before.st_ino);   /* renamed onto, not rewritten */
	/* a symbolic link: the file it names is written, the link stays */
	put(at("target"), "old");
	assert_int_equal(symlink("target", at("link")), 0);
	assert_int_equal(write_file_atomic(at("link"), "via", 3, &e), 0);
	struct stat ls;
	assert_int_equal(lstat(at("link"), &ls), 0);
	assert_true(S_ISLNK(ls.st_mode));
	t = get(at("target"));
	assert_string_equal(t, "via");
	free(t);
	/* a dangling link creates what it names */
	assert_int_equal(symlink("made", at("dangling")), 0);
	assert_int_equal(write_file_atomic(at("dangling"), "new", 3, &e), 0);
	t = get(at("made"));
	assert_string_equal(t, "new");
	free(t);
	/* a directory is an error, by out_check and by out_open */
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	assert_int_equal(out_check(at("sub"), &e), -1);
	assert_non_null(strstr(err_msg(&e), "it is a directory"));
	assert_int_equal(write_file_atomic(at("sub"), "x", 1, &e), -1);
	assert_non_null(strstr(err_msg(&e), "it is a directory"));
	/* an aborted output leaves nothing, and the file it would replace as it was */
	OutFile o;
	assert_int_equal(out_open(&o, at("new"), &e), 0);
	fputs("half", o.f);
	assert_int_equal(names_with(".tmp"), 1);
	out_abort(&o);
	assert_int_equal(names_with(".tmp"), 0);
	t = get(at("new"));
	assert_string_equal(t, "two");
	free(t);
	assert_int_equal(temp_count(), 0);
	err_release(&e);
}

static void test_file__fifo_and_devices_written_through(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	/* a character device of our own (the null device: mknod needs root;
	 * never the real /dev/null, which a broken writer would replace):
	 * written through, and still a device */
	struct stat st;
	if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
		assert_int_equal(write_file_atomic(at("null"), "gone", 4, &e), 0);
		assert_int_equal(lstat(at("null"), &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	/* a FIFO with a reader: the bytes come through, the FIFO stays */
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *in = fopen(at("fifo"), "r");
		char buf[16] = {0};
		size_t n = in ? fread(buf, 1, sizeof buf - 1, in) : 0;
		_exit(n == 7 && !strcmp(buf, "through") ? 0 : 1);
	}
	assert_int_equal(write_file_atomic(at("fifo"), "through", 7, &e), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(names_with(".tmp"), 0);
	err_release(&e);
}

static void test_file__inputs_are_refused(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	put(at("module.ptx"), "module");
	assert_int_equal(link(at("module.ptx"), at("hard.ptx")), 0);
	assert_int_equal(symlink("module.ptx", at("sym.ptx")), 0);
	file_input_add(at("module.ptx"), "module");
	file_input_add(at("absent.ptx"), "recipe");   /* not there: nothing to protect */
	assert_false(file_is_input(at("absent.ptx")));
	assert_true(file_is_input(at("hard.ptx")));
	assert_int_equal(out_check(at("module.ptx"), &e), -1);
	char want[512];
	snprintf(want, sizeof want, "refusing to write '%s': it is the module this command reads",
	         at("module.ptx"));
	assert_string_equal(err_msg(&e), want);
	/* another name for the same file: a hard link, a symbolic link, a path
	 * spelt otherwise */
	char other[300];
	snprintf(other, sizeof other, "%s/./module.ptx", dir);
	const char *others[] = {at("hard.ptx"), at("sym.ptx"), other, NULL};
	for (int i = 0; others[i]; i++) {
		assert_int_equal(out_check(others[i], &e), -1);
		assert_non_null(strstr(err_msg(&e), "it is the same file as the module"));
		assert_int_equal(write_file_atomic(others[i], "x", 1, &e), -1);
	}
	char *t = get(at("module.ptx"));
	assert_string_equal(t, "module");
	free(t);
	/* a new path and "-" are fine */
	assert_int_equal(out_check(at("other.ptx"), &e), 0);
	assert_int_equal(out_check("-", &e), 0);
	file_inputs_clear();
	assert_int_equal(out_check(at("module.ptx"), &e), 0);
	err_release(&e);
}

/* A child makes a temporary file and ends by `how`; the parent checks the
 * file is gone and the child ended as it would have. */
static void child_ends(int how)
{
	char path[256];
	snprintf(path, sizeof path, "%s/t-XXXXXX.ptx", dir);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		int slot, fd = temp_mkstemps(path, 4, &slot);
		if (fd < 0)
			_exit(3);
		if (write(pfd[1], path, strlen(path) + 1) < 0)
			_exit(6);
		close(pfd[1]);
		if (how == 0)
			exit(5);   /* exit(): the atexit handler */
		raise(how);
		_exit(4);      /* not reached: the signal ends the process */
	}
	close(pfd[1]);
	char got[256] = {0};
	ssize_t n = read(pfd[0], got, sizeof got - 1);
	close(pfd[0]);
	assert_true(n > 0);
	assert_int_equal(strncmp(got, dir, strlen(dir)), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (how == 0)
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 5);
	else
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == how);
	assert_int_equal(access(got, F_OK), -1);
}

/* A new output in a folder that does not exist, or under a file, is refused
 * by out_check before any work, saying which folder; out_check_mkdir (the
 * verb makes the folder) takes the missing folder but not the file. */
static void test_file__outputs_need_their_folder(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	char want[512];
	assert_int_equal(out_check(at("new.ptx"), &e), 0);
	assert_int_equal(out_check("new-here.ptx", &e), 0);
	assert_int_equal(out_check(at("nodir/x.ptx"), &e), -1);
	snprintf(want, sizeof want, "cannot write '%s': there is no folder '%s' (create it first)",
	         at("nodir/x.ptx"), at("nodir"));
	assert_string_equal(err_msg(&e), want);
	assert_int_equal(out_check(at("no/dir/x.ptx"), &e), -1);
	assert_non_null(strstr(err_msg(&e), "there is no folder"));
	assert_int_equal(out_check_mkdir(at("no/dir/x.ptx"), &e), 0);
	put(at("afile"), "x");
	assert_int_equal(out_check(at("afile/x.ptx"), &e), -1);
	snprintf(want, sizeof want, "cannot write '%s': '%s' is not a folder", at("afile/x.ptx"),
	         at("afile"));
	assert_string_equal(err_msg(&e), want);
	assert_int_equal(out_check_mkdir(at("afile/sub/x.ptx"), &e), -1);
	assert_non_null(strstr(err_msg(&e), "is not a folder"));
	assert_int_equal(out_check("/x.ptx-d4r-never-written", &e), 0);
	err_release(&e);
}

static void test_file__temporary_files_on_every_exit_path(void **state)
{
	(void)state;
	child_ends(0);
	child_ends(SIGINT);
	child_ends(SIGTERM);
	child_ends(SIGHUP);
	child_ends(SIGPIPE);
	/* the registry itself: registered while it exists, removed or kept */
	char path[256];
	snprintf(path, sizeof path, "%s/r-XXXXXX", dir);
	int slot, fd = temp_mkstemps(path, 0, &slot);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(temp_count(), 1);
	temp_remove(slot);
	assert_int_equal(temp_count(), 0);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof path, "%s/k-XXXXXX", dir);
	fd = temp_mkstemps(path, 0, &slot);
	close(fd);
	temp_keep(slot);
	assert_int_equal(temp_count(), 0);
	assert_int_equal(access(path, F_OK), 0);   /* kept: renamed into place, say */
	/* a bad template */
	char bad[] = "/tmp/no-xs";
	assert_int_equal(temp_mkstemps(bad, 0, &slot), -1);
}

static void test_file__user_cache_dir(void **state)
{
	(void)state;
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	char *d = user_cache_dir();
	assert_string_equal(d, "/x/cache/d4r-splice");
	free(d);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	d = user_cache_dir();
	assert_string_equal(d, "/home/u/.cache/d4r-splice");
	free(d);
	setenv("XDG_CACHE_HOME", "relative/cache", 1); /* not absolute: ignored */
	d = user_cache_dir();
	assert_string_equal(d, "/home/u/.cache/d4r-splice");
	free(d);
}

int main(void)
{
	/* The signals the registry catches, at their default: one ignored when
	 * the suite started (nohup, a background job) stays ignored, and the
	 * registry rightly leaves it so, but the cases send them. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file__regular_files_and_links),
	    cmocka_unit_test(test_file__fifo_and_devices_written_through),
	    cmocka_unit_test(test_file__inputs_are_refused),
	    cmocka_unit_test(test_file__outputs_need_their_folder),
	    cmocka_unit_test(test_file__temporary_files_on_every_exit_path),
	    cmocka_unit_test(test_file__user_cache_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
