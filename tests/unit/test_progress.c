/*
 * test_progress.c - the progress line: nothing when standard error is not
 * a terminal; on a terminal (a pseudo-terminal here) the count, the time
 * and the item, a wait's own line ("compiling spliced (driver JIT) 8 s"),
 * each drawn in place and erased at the end; durations as people read
 * them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/progress.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_progress__durations(void **state)
{
	(void)state;
	char b[32];
	progress_duration(0.2, b, sizeof b);
	assert_string_equal(b, "0 s");
	progress_duration(41.4, b, sizeof b);
	assert_string_equal(b, "41 s");
	progress_duration(110, b, sizeof b);
	assert_string_equal(b, "1 min 50 s");
	progress_duration(2 * 3600 + 5 * 60 + 10, b, sizeof b);
	assert_string_equal(b, "2 h 05 min");
	progress_duration(-3, b, sizeof b);
	assert_string_equal(b, "0 s");
}

/* Runs with stderr on fd `fd`; returns the old stderr. */
static int swap_stderr(int fd)
{
	fflush(stderr);
	int old = dup(STDERR_FILENO);
	assert_true(old >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	return old;
}

static void restore_stderr(int old)
{
	fflush(stderr);
	dup2(old, STDERR_FILENO);
	close(old);
}

static void test_progress__nothing_without_a_terminal(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	int old = swap_stderr(p[1]);
	Progress *pg = progress_start("check enc4", 3, "recipes");
	progress_step(pg, "a.json");
	progress_wait("compiling spliced (driver JIT)", 8);
	progress_wait(NULL, 0);
	progress_end(pg);
	restore_stderr(old);
	close(p[1]);
	assert_null(pg);
	char buf[64];
	assert_int_equal(read(p[0], buf, sizeof buf), 0); /* nothing was written */
	close(p[0]);
}

/* What the pseudo-terminal's master has to read, NUL-terminated. */
static void drain(int master, char *buf, size_t n)
{
	size_t got = 0;
	struct pollfd pfd = {master, POLLIN, 0};
	while (got + 1 < n && poll(&pfd, 1, 200) > 0) {
		ssize_t k = read(master, buf + got, n - 1 - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = 0;
}

static void test_progress__drawn_on_a_terminal(void **state)
{
	(void)state;
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		skip();
	int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	int old = swap_stderr(slave);
	Progress *pg = progress_start("check enc4", 3, "recipes");
	progress_step(pg, "a.json");
	progress_step(pg, "b.json");
	progress_step(pg, "c.json"); /* the last step is always drawn */
	progress_end(pg);
	/* a wait with no line of its own: a line for it, gone when it ends */
	progress_wait("compiling spliced (driver JIT)", 8.2);
	Progress *cur = progress_current();
	progress_wait(NULL, 0);
	restore_stderr(old);
	char buf[4096];
	drain(master, buf, sizeof buf);
	close(slave);
	close(master);
	assert_non_null(pg);
	assert_null(cur); /* a wait is not a counted line */
	if (!strstr(buf, "\r\033[Kcheck enc4: 0/3 recipes, 0 s"))
		fail_msg("no first drawing in '%s'", buf);
	if (!strstr(buf, "check enc4: 3/3 recipes, 0 s; c.json"))
		fail_msg("no last step in '%s'", buf);
	if (!strstr(buf, "\r\033[Kcompiling spliced (driver JIT) 8 s"))
		fail_msg("no wait line in '%s'", buf);
	/* erased at the end: the output ends with an erase */
	size_t n = strlen(buf);
	assert_true(n >= 4);
	assert_string_equal(buf + n - 4, "\r\033[K");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_progress__durations),
	    cmocka_unit_test(test_progress__nothing_without_a_terminal),
	    cmocka_unit_test(test_progress__drawn_on_a_terminal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
