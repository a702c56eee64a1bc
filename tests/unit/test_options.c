/*
 * test_options.c - the option parser (src/cmd/options.c): the forms it
 * accepts, the errors it gives (exit status and message), --help and the
 * --list-options rows, and the mode checks.
 *
 * Messages go to a temporary file, read back and compared with the text a
 * user would be shown; the expected strings are written out here, not taken
 * from the parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The values a test table stores into. */
typedef struct {
	bool json, quiet, list;
	const char *entry, *out, *check, *keep;
	unsigned gap, phase, runs;
	double timeout;
	OptArch arch;
} Vals;

static const char *const usage[] = {"t MODULE [options]", "t --other [options]", NULL};

/* The parser under test, with its output captured. */
typedef struct {
	Vals v;
	Opt opts[16];
	OptParse p;
	FILE *out, *err;
	char outbuf[8192], errbuf[8192];
	int n; /* opt_parse's result */
	char *args[16];
} Run;

static void setup(Run *r)
{
	memset(r, 0, sizeof *r);
	r->v.check = "none";
	Vals *v = &r->v;
	Opt opts[] = {
	    OPT_FLAG(0, "json", &v->json, "JSON"),
	    OPT_FLAG('q', "quiet", &v->quiet, "say less"),
	    OPT_FLAG('l', "list", &v->list, "list"),
	    OPT_STRING(0, "entry", &v->entry, "NAME", "the function"),
	    OPT_STRING('o', "output", &v->out, "FILE", "where it goes"),
	    OPT_UINT(0, "gap", &v->gap, "N", 0, UINT_MAX, "the gap"),
	    OPT_UINT(0, "runs", &v->runs, "N", 0, 100000, "timed runs"),
	    OPT_PHASE(&v->phase, "the phase"),
	    OPT_CHOICE_OPTARG("check", &v->check, "ptxas|none", "ptxas", "run ptxas"),
	    OPT_ALIAS("ptxas", "check=ptxas", NULL),
	    OPT_STRING_OPTARG("keep", &v->keep, "DIR", "", "keep the files"),
	    OPT_CALLBACK(0, "timeout", &v->timeout, "S", opt_seconds, "seconds"),
	    OPT_CALLBACK(0, "arch", &v->arch, "sm_XX", opt_arch, "the target"),
	    OPT_END(),
	};
	memcpy(r->opts, opts, sizeof opts);
	r->p.verb = "t";
	r->p.usage = usage;
	r->p.opts = r->opts;
	r->out = tmpfile();
	r->err = tmpfile();
	r->p.out = r->out;
	r->p.err = r->err;
}

static void slurp(FILE *f, char *buf, size_t n)
{
	fflush(f);
	rewind(f);
	size_t k = fread(buf, 1, n - 1, f);
	buf[k] = 0;
	fclose(f);
}

/* Parses the NULL-terminated words after the verb "t". */
static void parse(Run *r, ...)
{
	va_list ap;
	va_start(ap, r);
	int argc = 0;
	r->args[argc++] = (char *)"t";
	for (char *w; (w = va_arg(ap, char *));)
		r->args[argc++] = w;
	va_end(ap);
	r->args[argc] = NULL;
	r->n = opt_parse(&r->p, argc, r->args);
}

static void finish(Run *r)
{
	slurp(r->out, r->outbuf, sizeof r->outbuf);
	slurp(r->err, r->errbuf, sizeof r->errbuf);
}

static void test_options__long_short_and_attached_values(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "m.ptx", "--entry", "k", "--gap=3", "-o", "a.ptx", "--json", "x", NULL);
	finish(&r);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.args[0], "m.ptx");
	assert_string_equal(r.args[1], "x");
	assert_string_equal(r.v.entry, "k");
	assert_int_equal(r.v.gap, 3);
	assert_string_equal(r.v.out, "a.ptx");
	assert_true(r.v.json);
	assert_false(r.v.quiet);
	assert_string_equal(r.errbuf, "");
	assert_string_equal(r.p.used[3], "--entry");

	setup(&r);
	parse(&r, "-oout.ptx", "--output=b.ptx", "--entry=", NULL);
	finish(&r);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.v.out, "b.ptx"); /* the last one wins */
	assert_string_equal(r.v.entry, "");
	assert_string_equal(opt_given(&r.p, "output"), "--output");
}

static void test_options__short_groups(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "-ql", "-qo", "dir", "m", NULL);
	finish(&r);
	assert_int_equal(r.n, 1);
	assert_true(r.v.quiet);
	assert_true(r.v.list);
	assert_string_equal(r.v.out, "dir");
	assert_string_equal(opt_given(&r.p, "output"), "-o");

	setup(&r);
	parse(&r, "-qx", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 2);
	assert_string_equal(r.errbuf, "d4r-splice: t: unknown option '-x' (in '-qx')\n"
	                              "usage: d4r-splice t MODULE [options]\n"
	                              "   or: d4r-splice t --other [options]\n");
}

static void test_options__double_dash_and_single_dash(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "-", "--", "--json", "-q", NULL);
	finish(&r);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.args[0], "-");
	assert_string_equal(r.args[1], "--json");
	assert_string_equal(r.args[2], "-q");
	assert_false(r.v.json);
	assert_false(r.v.quiet);
}

static void test_options__value_is_the_next_word(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "--entry", "--json", NULL);
	finish(&r);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.v.entry, "--json");
	assert_false(r.v.json);
}

static void test_options__unknown_option(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "m", "--bogus=1", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 2);
	assert_string_equal(r.errbuf, "d4r-splice: t: unknown option '--bogus'\n"
	                              "usage: d4r-splice t MODULE [options]\n"
	                              "   or: d4r-splice t --other [options]\n");
	assert_string_equal(r.outbuf, "");
	/* no abbreviations */
	setup(&r);
	parse(&r, "--ent", "k", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_non_null(strstr(r.errbuf, "unknown option '--ent'"));
}

static void test_options__missing_value(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "m", "--gap", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 2);
	assert_string_equal(r.errbuf, "d4r-splice: t: option '--gap' needs a value\n"
	                              "usage: d4r-splice t MODULE [options]\n"
	                              "   or: d4r-splice t --other [options]\n");
	setup(&r);
	parse(&r, "-o", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_non_null(strstr(r.errbuf, "option '-o' needs a value\n"));
}

static void test_options__flag_takes_no_value(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "--json=yes", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 2);
	assert_non_null(
	    strstr(r.errbuf, "d4r-splice: t: option '--json' takes no value\n"));
	setup(&r);
	parse(&r, "--ptxas=1", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_non_null(strstr(r.errbuf, "option '--ptxas' takes no value\n"));
}

static void test_options__bad_values_name_option_and_value(void **state)
{
	(void)state;
	static const struct {
		const char *opt, *word, *msg;
	} cases[] = {
	    {"--gap", "x", "d4r-splice: t: option '--gap': 'x' is not a whole number\n"},
	    {"--gap", "-1",
	     "d4r-splice: t: option '--gap': '-1' is not a whole number\n"},
	    {"--gap", "4294967296",
	     "d4r-splice: t: option '--gap': '4294967296' is not a whole number\n"},
	    {"--runs", "100001",
	     "d4r-splice: t: option '--runs': '100001' is not a whole number in [0, "
	     "100000]\n"},
	    {"--phase", "0",
	     "d4r-splice: t: option '--phase': '0' is not a phase number (1, 2, ...)\n"},
	    {"--phase", "",
	     "d4r-splice: t: option '--phase': '' is not a phase number (1, 2, ...)\n"},
	    {"--timeout", "0",
	     "d4r-splice: t: option '--timeout': '0' is not a number of seconds in (0, "
	     "86400]\n"},
	    {"--timeout", "5s",
	     "d4r-splice: t: option '--timeout': '5s' is not a number of seconds in (0, "
	     "86400]\n"},
	    {"--arch", "89x",
	     "d4r-splice: t: option '--arch': bad architecture '89x' (expected sm_XX)\n"},
	    {"--arch", "sm_",
	     "d4r-splice: t: option '--arch': bad architecture 'sm_' (expected sm_XX)\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Run r;
		setup(&r);
		parse(&r, cases[i].opt, cases[i].word, NULL);
		finish(&r);
		assert_int_equal(r.n, -1);
		assert_int_equal(r.p.status, 2);
		assert_string_equal(r.errbuf, cases[i].msg);
	}
	Run r;
	setup(&r);
	parse(&r, "--check=bogus", NULL);
	finish(&r);
	assert_string_equal(
	    r.errbuf,
	    "d4r-splice: t: option '--check': 'bogus': expected ptxas or none\n");
}

static void test_options__good_values(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "--runs", "100000", "--phase=12", "--timeout", "1.5", "--arch", "90a",
	      NULL);
	finish(&r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.v.runs, 100000);
	assert_int_equal(r.v.phase, 12);
	assert_true(r.v.timeout == 1.5);
	assert_int_equal(r.v.arch.number, 90);
	assert_string_equal(r.v.arch.name, "sm_90a");
	setup(&r);
	parse(&r, "--arch=compute_89", NULL);
	finish(&r);
	assert_int_equal(r.v.arch.number, 89);
	assert_string_equal(r.v.arch.name, "sm_89");
}

static void test_options__optional_value_next_word_or_after_equals(void **state)
{
	(void)state;
	Run r;
	/* the next word: a choice, or (no choices) a word that is not an option */
	setup(&r);
	parse(&r, "--keep", "dir", "--check", "none", NULL);
	finish(&r);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.v.keep, "dir");
	assert_string_equal(r.v.check, "none");
	/* anything else stays where it was; the option takes its default */
	setup(&r);
	parse(&r, "--check", "x.json", "--keep", "--json", NULL);
	finish(&r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.args[0], "x.json");
	assert_string_equal(r.v.check, "ptxas");
	assert_string_equal(r.v.keep, "");
	assert_true(r.v.json);
	setup(&r);
	parse(&r, "--keep=out", "--check=none", NULL);
	finish(&r);
	assert_string_equal(r.v.keep, "out");
	assert_string_equal(r.v.check, "none");
}

static void test_options__alias_stands_for_its_option(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "--ptxas", NULL);
	finish(&r);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.v.check, "ptxas");
	/* the canonical option reads as given, in the alias's spelling */
	assert_string_equal(opt_given(&r.p, "check"), "--ptxas");
	assert_string_equal(opt_given(&r.p, "ptxas"), "--ptxas");
	assert_null(opt_given(&r.p, "keep"));
}

static void test_options__help_lists_every_option(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "--entry", "k", "--help", "--bogus", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 0);
	assert_string_equal(r.errbuf, "");
	assert_string_equal(r.outbuf,
	                    "usage: d4r-splice t MODULE [options]\n"
	                    "   or: d4r-splice t --other [options]\n"
	                    "\n"
	                    "      --json              JSON\n"
	                    "  -q, --quiet             say less\n"
	                    "  -l, --list              list\n"
	                    "      --entry NAME        the function\n"
	                    "  -o, --output FILE       where it goes\n"
	                    "      --gap N             the gap\n"
	                    "      --runs N            timed runs\n"
	                    "      --phase N           the phase\n"
	                    "      --check [ptxas|none]\n"
	                    "                          run ptxas\n"
	                    "      --ptxas             the same as --check=ptxas\n"
	                    "      --keep [DIR]        keep the files\n"
	                    "      --timeout S         seconds\n"
	                    "      --arch sm_XX        the target\n"
	                    "  -h, --help              print this help\n");
	setup(&r);
	parse(&r, "-qh", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 0);
	assert_non_null(strstr(r.outbuf, "usage: d4r-splice t MODULE"));
}

static void test_options__list_options_rows(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "--list-options", NULL);
	finish(&r);
	assert_int_equal(r.n, -1);
	assert_int_equal(r.p.status, 0);
	assert_string_equal(
	    r.outbuf, "--json\t-\tnone\t-\t-\t-\tJSON\n"
	              "--quiet\t-q\tnone\t-\t-\t-\tsay less\n"
	              "--list\t-l\tnone\t-\t-\t-\tlist\n"
	              "--entry\t-\trequired\tNAME\t-\t-\tthe function\n"
	              "--output\t-o\trequired\tFILE\t-\t-\twhere it goes\n"
	              "--gap\t-\trequired\tN\t-\t-\tthe gap\n"
	              "--runs\t-\trequired\tN\t-\t-\ttimed runs\n"
	              "--phase\t-\trequired\tN\t-\t-\tthe phase\n"
	              "--check\t-\toptional\tptxas|none\tptxas|none\t-\trun ptxas\n"
	              "--ptxas\t-\tnone\t-\t-\t--check=ptxas\tthe same as --check=ptxas\n"
	              "--keep\t-\toptional\tDIR\t-\t-\tkeep the files\n"
	              "--timeout\t-\trequired\tS\t-\t-\tseconds\n"
	              "--arch\t-\trequired\tsm_XX\t-\t-\tthe target\n"
	              "--help\t-h\tnone\t-\t-\t-\tprint this help\n");
}

static void test_options__mode_checks(void **state)
{
	(void)state;
	Run r;
	setup(&r);
	parse(&r, "-o", "x", "--json", "--ptxas", NULL);
	assert_int_equal(opt_conflict(&r.p, "json", "quiet"), 0);
	assert_int_equal(opt_conflict(&r.p, "output", "json"), EXIT_ERROR);
	assert_int_equal(opt_conflicts(&r.p, "json", "quiet", "list", NULL), 0);
	assert_int_equal(opt_conflicts(&r.p, "json", "quiet", "check", NULL), EXIT_ERROR);
	assert_int_equal(opt_needs(&r.p, "output", "json"), 0);
	assert_int_equal(opt_needs(&r.p, "json", "keep"), EXIT_ERROR);
	assert_int_equal(opt_needs(&r.p, "keep", "json"), 0);
	finish(&r);
	assert_string_equal(
	    r.errbuf, "d4r-splice: t: option '-o' cannot be used with '--json'\n"
	              "d4r-splice: t: option '--ptxas' cannot be used with '--json'\n"
	              "d4r-splice: t: option '--json' needs '--keep'\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options__long_short_and_attached_values),
	    cmocka_unit_test(test_options__short_groups),
	    cmocka_unit_test(test_options__double_dash_and_single_dash),
	    cmocka_unit_test(test_options__value_is_the_next_word),
	    cmocka_unit_test(test_options__unknown_option),
	    cmocka_unit_test(test_options__missing_value),
	    cmocka_unit_test(test_options__flag_takes_no_value),
	    cmocka_unit_test(test_options__bad_values_name_option_and_value),
	    cmocka_unit_test(test_options__good_values),
	    cmocka_unit_test(test_options__optional_value_next_word_or_after_equals),
	    cmocka_unit_test(test_options__alias_stands_for_its_option),
	    cmocka_unit_test(test_options__help_lists_every_option),
	    cmocka_unit_test(test_options__list_options_rows),
	    cmocka_unit_test(test_options__mode_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
