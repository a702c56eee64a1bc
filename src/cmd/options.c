/*
 * options.c - the option parser every verb uses (options.h says what it
 * accepts and why).
 *
 * One pass over argv: a word is an argument, the end of options, a long
 * option or a group of short ones.  Each option found is looked up in the
 * table, its value taken (attached, or the next word), checked and stored,
 * and the spelling the user typed is kept for the verb's mode checks.
 * -h, --help and --list-options belong to every table without being in it.
 */
#include "options.h"

#include "cmd.h"
#include "base/numlist.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The column option help starts at, and the width it wraps to. */
#define HELP_COL 26
#define HELP_WIDTH 79

static FILE *out_of(const OptParse *p)
{
	return p->out ? p->out : stdout;
}

static FILE *err_of(const OptParse *p)
{
	return p->err ? p->err : stderr;
}

static void vfail(const OptParse *p, const char *fmt, va_list ap)
{
	FILE *f = err_of(p);
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	fputs("d4r-splice: ", f);
	if (p->verb && p->verb[0])
		fprintf(f, "%s: ", p->verb);
	fprintf(f, "%s\n", msg);
	cmd_json_error(msg); /* the error document's message (jsonout.h) */
}

int opt_fail(const OptParse *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(p, fmt, ap);
	va_end(ap);
	return EXIT_ERROR;
}

int opt_usage_error(const OptParse *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(p, fmt, ap);
	va_end(ap);
	opt_usage(p, err_of(p), false);
	return EXIT_ERROR;
}

static size_t count(const Opt *opts)
{
	size_t n = 0;
	while (opts[n].type != OT_END)
		n++;
	return n;
}

static const Opt *find_long(const Opt *opts, const char *name, size_t len)
{
	for (const Opt *o = opts; o->type != OT_END; o++)
		if (strlen(o->long_name) == len && !memcmp(o->long_name, name, len))
			return o;
	return NULL;
}

static const Opt *find_short(const Opt *opts, char c)
{
	for (const Opt *o = opts; o->type != OT_END; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

/* Does the option take a value (a required one, or with OPTF_OPTARG an
 * optional one)? */
static bool takes_value(const Opt *o)
{
	return o->type == OT_STRING || o->type == OT_UINT ||
	       (o->type == OT_CALLBACK && o->arg);
}

/* "ptxas|none" -> "ptxas or none"; "a|b|c" -> "a, b or c". */
static void choices_text(const char *choices, char *buf, size_t n)
{
	size_t k = 0, bars = 0;
	for (const char *c = choices; *c; c++)
		bars += *c == '|';
	buf[0] = 0;
	for (const char *c = choices; *c && k + 5 < n; c++) {
		if (*c != '|') {
			buf[k++] = *c;
			continue;
		}
		const char *sep = --bars ? ", " : " or ";
		size_t l = strlen(sep);
		if (k + l + 1 >= n)
			break;
		memcpy(buf + k, sep, l);
		k += l;
	}
	buf[k] = 0;
}

static bool is_choice(const char *choices, const char *w)
{
	size_t wl = strlen(w);
	for (const char *c = choices; *c;) {
		const char *bar = strchr(c, '|');
		size_t l = bar ? (size_t)(bar - c) : strlen(c);
		if (l == wl && !memcmp(c, w, l))
			return true;
		c += l + (bar != NULL);
	}
	return false;
}

static int parse_uint(const OptParse *p, const Opt *o, const char *spell, const char *w)
{
	bool ok = *w != 0;
	unsigned long long v = 0;
	for (const char *c = w; *c && ok; c++) {
		ok = *c >= '0' && *c <= '9';
		if (ok)
			v = v * 10 + (unsigned)(*c - '0');
		ok = ok && v <= UINT_MAX;
	}
	if (ok && v >= o->min && v <= o->max) {
		*(unsigned *)o->value = (unsigned)v;
		return 0;
	}
	if (o->what)
		return opt_fail(p, "option '%s': '%s' is not %s", spell, w, o->what);
	if (o->max == UINT_MAX && o->min <= 1)
		return opt_fail(p, "option '%s': '%s' is not a %swhole number", spell, w,
		                o->min ? "positive " : "");
	return opt_fail(p, "option '%s': '%s' is not a whole number in [%u, %u]", spell,
	                w, o->min, o->max);
}

/* The long name nearest a mistyped one (cmd_nearest), or NULL. */
static const char *nearest_long(const Opt *opts, const char *name)
{
	const char *names[OPT_MAX];
	size_t n = 0;
	for (const Opt *o = opts; o->type != OT_END && n < OPT_MAX; o++)
		if (!(o->flags & OPTF_HIDDEN))
			names[n++] = o->long_name;
	return cmd_nearest(name, names, n);
}

/* Does an optional value take the next word `w` (options.h): one of its
 * choices, or, without choices, a word that is not an option? */
static bool optional_takes(const Opt *o, const char *w)
{
	if (o->choices)
		return is_choice(o->choices, w);
	return w[0] && w[0] != '-';
}

/* Stores word `w` (NULL: no value given) for option o spelt `spell`. */
static int store1(OptParse *p, const Opt *o, const char *spell, const char *w);

static int store(OptParse *p, const Opt *o, const char *spell, const char *w)
{
	int rc = store1(p, o, spell, w);
	if (!rc)
		p->word[o - p->opts] = w;
	return rc;
}

static int store1(OptParse *p, const Opt *o, const char *spell, const char *w)
{
	switch (o->type) {
	case OT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case OT_STRING:
		if (o->choices && !is_choice(o->choices, w)) {
			char ch[160];
			choices_text(o->choices, ch, sizeof ch);
			return opt_fail(p, "option '%s': '%s': expected %s", spell, w,
			                ch);
		}
		*(const char **)o->value = w;
		return 0;
	case OT_UINT:
		return parse_uint(p, o, spell, w);
	case OT_CALLBACK: {
		Err e = ERR_INIT;
		int rc = 0;
		if (o->cb(o, w, &e) < 0)
			rc = opt_fail(p, "option '%s': %s", spell, err_msg(&e));
		err_release(&e);
		return rc;
	}
	default:
		return opt_fail(p, "option '%s' cannot be stored", spell);
	}
}

static void mark(OptParse *p, const Opt *o, const char *spell)
{
	size_t i = (size_t)(o - p->opts);
	snprintf(p->used[i], sizeof p->used[i], "%s", spell);
}

/*
 * Applies option o, spelt `spell`.  `attached` is the value given in the same
 * word (after '=' or after a short name), or NULL; a required value missing
 * there is the next word, argv[*i + 1].  Returns 0, or EXIT_ERROR after
 * printing why.
 */
static int apply(OptParse *p, const Opt *o, const char *spell, const char *attached,
                 int argc, char **argv, int *i)
{
	if (o->type == OT_ALIAS) {
		if (attached)
			return opt_usage_error(p, "option '%s' takes no value", spell);
		const char *eq = strchr(o->alias, '=');
		size_t len = eq ? (size_t)(eq - o->alias) : strlen(o->alias);
		const Opt *t = find_long(p->opts, o->alias, len);
		if (!t)
			return opt_fail(p, "option '%s' stands for an unknown option",
			                spell);
		mark(p, o, spell);
		mark(p, t, spell);
		return store(p, t, spell, eq ? eq + 1 : t->def);
	}
	mark(p, o, spell);
	if (!takes_value(o)) {
		if (attached)
			return opt_usage_error(p, "option '%s' takes no value", spell);
		return store(p, o, spell, NULL);
	}
	if (o->flags & OPTF_OPTARG) {
		if (!attached && *i + 1 < argc && optional_takes(o, argv[*i + 1])) {
			attached = argv[++*i];
			snprintf(p->took[0], sizeof p->took[0], "%s", attached);
			snprintf(p->took[1], sizeof p->took[1], "%s", spell);
		}
		return store(p, o, spell, attached ? attached : o->def);
	}
	if (!attached) {
		if (*i + 1 >= argc)
			return opt_usage_error(p, "option '%s' needs a value", spell);
		attached = argv[++*i];
	}
	return store(p, o, spell, attached);
}

/* The help line; an alias without one says what it stands for. */
static void help_text(const Opt *o, char *buf, size_t n)
{
	if (o->type == OT_ALIAS && !o->help)
		snprintf(buf, n, "the same as --%s", o->alias);
	else
		snprintf(buf, n, "%s", o->help ? o->help : "");
}

static void list_options(const OptParse *p)
{
	FILE *f = out_of(p);
	for (const Opt *o = p->opts; o->type != OT_END; o++) {
		if (o->flags & OPTF_HIDDEN)
			continue;
		const char *value = o->type == OT_ALIAS      ? "none"
		                    : !takes_value(o)        ? "none"
		                    : o->flags & OPTF_OPTARG ? "optional"
		                                             : "required";
		const char *arg = takes_value(o) ? (o->arg       ? o->arg
		                                    : o->choices ? o->choices
		                                                 : "-")
		                                 : "-";
		fprintf(f, "--%s\t", o->long_name);
		if (o->short_name)
			fprintf(f, "-%c\t", o->short_name);
		else
			fputs("-\t", f);
		char help[256];
		help_text(o, help, sizeof help);
		fprintf(f, "%s\t%s\t%s\t%s%s\t%s\n", value, arg,
		        o->type == OT_STRING && o->choices ? o->choices : "-",
		        o->alias ? "--" : "", o->alias ? o->alias : "-",
		        help[0] ? help : "-");
	}
	fputs("--help\t-h\tnone\t-\t-\t-\tprint this help\n", f);
}

/* --list-parsed: what the words parsed into (options.h). */
static void list_parsed(const OptParse *p, int nargs, char **argv)
{
	FILE *f = out_of(p);
	for (const Opt *o = p->opts; o->type != OT_END; o++) {
		size_t i = (size_t)(o - p->opts);
		if (p->used[i][0] && o->type != OT_ALIAS)
			fprintf(f, "option\t--%s\t%s\n", o->long_name,
			        p->word[i] ? p->word[i] : "-");
	}
	for (int i = 0; i < nargs; i++)
		fprintf(f, "argument\t%s\n", argv[i]);
}

/* Prints `text` from column `col`, wrapped at HELP_WIDTH. */
static void wrapped(FILE *f, const char *text, size_t col)
{
	size_t at = col;
	const char *s = text;
	while (*s) {
		const char *sp = strchr(s, ' ');
		size_t wl = sp ? (size_t)(sp - s) : strlen(s);
		if (at > col && at + 1 + wl > HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', f);
			at++;
		}
		fwrite(s, 1, wl, f);
		at += wl;
		s += wl;
		while (*s == ' ')
			s++;
	}
	fputc('\n', f);
}

static void option_line(FILE *f, const Opt *o)
{
	char left[128];
	int n = snprintf(left, sizeof left, "  %c%c%s--%s", o->short_name ? '-' : ' ',
	                 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ",
	                 o->long_name);
	if (takes_value(o)) {
		const char *a = o->arg ? o->arg : o->choices ? o->choices : "VALUE";
		if (o->flags & OPTF_OPTARG)
			snprintf(left + n, sizeof left - (size_t)n, " [%s]", a);
		else
			snprintf(left + n, sizeof left - (size_t)n, " %s", a);
	}
	char help[256];
	help_text(o, help, sizeof help);
	size_t l = strlen(left);
	if (l + 2 > HELP_COL)
		fprintf(f, "%s\n%*s", left, HELP_COL, "");
	else
		fprintf(f, "%-*s", HELP_COL, left);
	wrapped(f, help, HELP_COL);
}

void opt_usage(const OptParse *p, FILE *f, bool full)
{
	for (size_t i = 0; p->usage && p->usage[i]; i++)
		fprintf(f, "%s d4r-splice %s\n", i ? "   or:" : "usage:", p->usage[i]);
	if (!full)
		return;
	fputc('\n', f);
	for (const Opt *o = p->opts; o->type != OT_END; o++)
		if (!(o->flags & OPTF_HIDDEN))
			option_line(f, o);
	static const Opt help = OPT_FLAG('h', "help", NULL, "print this help");
	option_line(f, &help);
	if (p->more_help)
		p->more_help(f);
}

int opt_parse(OptParse *p, int argc, char **argv)
{
	memset(p->used, 0, sizeof p->used);
	memset(p->took, 0, sizeof p->took);
	memset(p->word, 0, sizeof p->word);
	p->status = EXIT_ERROR;
	if (count(p->opts) > OPT_MAX) {
		opt_fail(p, "more than %d options in one table", OPT_MAX);
		return -1;
	}
	int nargs = 0;
	bool only_args = false, parsed = false;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_args || a[0] != '-' || !a[1]) {
			argv[nargs++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_args = true;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			char spell[40];
			snprintf(spell, sizeof spell, "--%.*s", (int)len, name);
			if (!strcmp(a, "--list-parsed")) {
				parsed = true;
				continue;
			}
			bool help = !strcmp(spell, "--help"),
			     list = !strcmp(spell, "--list-options");
			if ((help || list) && eq) {
				opt_usage_error(p, "option '%s' takes no value", spell);
				return -1;
			}
			if (help || list) {
				if (help)
					opt_usage(p, out_of(p), true);
				else
					list_options(p);
				p->status = EXIT_OK;
				return -1;
			}
			const Opt *o = find_long(p->opts, name, len);
			if (!o) {
				const char *near = nearest_long(p->opts, spell + 2);
				if (near)
					opt_usage_error(p, "unknown option '%s' (did you mean '--%s'?)",
					                spell, near);
				else
					opt_usage_error(p, "unknown option '%s'", spell);
				return -1;
			}
			if (apply(p, o, spell, eq ? eq + 1 : NULL, argc, argv, &i))
				return -1;
			continue;
		}
		for (const char *s = a + 1; *s; s++) {
			char spell[3] = {'-', *s, 0};
			if (*s == 'h') {
				opt_usage(p, out_of(p), true);
				p->status = EXIT_OK;
				return -1;
			}
			const Opt *o = find_short(p->opts, *s);
			if (!o) {
				if (a[2])
					opt_usage_error(
					    p, "unknown option '%s' (in '%s')", spell, a);
				else
					opt_usage_error(p, "unknown option '%s'", spell);
				return -1;
			}
			if (takes_value(o)) {
				/* the rest of the word is the value, else the next word
				 */
				if (apply(p, o, spell, s[1] ? s + 1 : NULL, argc, argv,
				          &i))
					return -1;
				break;
			}
			if (apply(p, o, spell, NULL, argc, argv, &i))
				return -1;
		}
	}
	p->status = EXIT_OK;
	if (parsed) {
		list_parsed(p, nargs, argv);
		return -1;
	}
	return nargs;
}

static const Opt *by_name(const OptParse *p, const char *long_name)
{
	return find_long(p->opts, long_name, strlen(long_name));
}

const char *opt_given(const OptParse *p, const char *long_name)
{
	const Opt *o = by_name(p, long_name);
	if (!o)
		return NULL;
	const char *u = p->used[o - p->opts];
	return u[0] ? u : NULL;
}

int opt_conflict(const OptParse *p, const char *a, const char *b)
{
	const char *sa = opt_given(p, a), *sb = opt_given(p, b);
	if (sa && sb)
		return opt_fail(p, "option '%s' cannot be used with '%s'", sa, sb);
	return 0;
}

int opt_conflicts(const OptParse *p, const char *a, ...)
{
	va_list ap;
	va_start(ap, a);
	int rc = 0;
	for (const char *b; !rc && (b = va_arg(ap, const char *));)
		rc = opt_conflict(p, b, a);
	va_end(ap);
	return rc;
}

int opt_needs(const OptParse *p, const char *a, const char *b)
{
	const char *sa = opt_given(p, a);
	if (sa && !opt_given(p, b))
		return opt_fail(p, "option '%s' needs '--%s'", sa, b);
	return 0;
}

int opt_args(const OptParse *p, int n, char **argv, int min, int max, const char *missing)
{
	if (n < min && p->took[0][0])
		return opt_usage_error(
		    p,
		    "%s\n  ('%s' was taken as the value of '%s': write "
		    "'%s=VALUE', or put the option last)",
		    missing, p->took[0], p->took[1], p->took[1]);
	if (n < min)
		return opt_usage_error(p, "%s", missing);
	if (max >= 0 && n > max)
		return opt_usage_error(p, "unexpected argument '%s'", argv[max]);
	return 0;
}

int opt_arch(const Opt *o, const char *word, Err *e)
{
	const char *s = word;
	if (!strncmp(s, "sm_", 3))
		s += 3;
	else if (!strncmp(s, "compute_", 8))
		s += 8;
	char *end = (char *)s;
	unsigned long v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (!v || v > 10000 || (end[0] && ((end[0] != 'a' && end[0] != 'f') || end[1])))
		return err_set(e, "bad architecture '%s' (expected sm_XX)", word);
	OptArch *a = o->value;
	a->number = (unsigned)v;
	snprintf(a->name, sizeof a->name, "sm_%lu%s", v, end);
	return 0;
}

int opt_seconds(const Opt *o, const char *word, Err *e)
{
	char *end;
	double v = strtod(word, &end);
	if (!*word || *end || !(v > 0) || v > 86400)
		return err_set(e, "'%s' is not a number of seconds in (0, 86400]", word);
	*(double *)o->value = v;
	return 0;
}

int opt_phase_list(const Opt *o, const char *word, Err *e)
{
	NumList *l = o->value;
	numlist_release(l);
	return numlist_parse(word, 1, UINT32_MAX, l, e);
}

int opt_size(const Opt *o, const char *word, Err *e)
{
	char *end;
	unsigned long long v = strtoull(word, &end, 10);
	uint64_t mul = 1;
	if (end == word)
		return err_set(e, "'%s' is not a size (N, NK, NM or NG)", word);
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30, end++;
	if (*end || !v || v > (1ull << 50) / mul)
		return err_set(e, "'%s' is not a size (N, NK, NM or NG)", word);
	*(uint64_t *)o->value = v * mul;
	return 0;
}
