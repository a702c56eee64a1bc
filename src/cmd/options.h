/*
 * options.h - one option table per verb, one parser for all of them.
 *
 * In the manner of git's parse-options, each verb declares its options as a
 * table: long name, short name, whether a value follows, the value's name,
 * one help line, and where the value goes (a flag, a string, an unsigned
 * with its range, a callback for special syntax).  opt_parse reads argv
 * against the table; the usage, -h/--help and the listing behind the man
 * page's test and shell completion (--list-options) come from the same
 * table, so they cannot drift from what the parser accepts.
 *
 * What the parser accepts:
 *
 *     --name value   --name=value    an option with a value
 *     --name  --name value  --name=value
 *                                    an optional value (OPTF_OPTARG): the next
 *                                    word is its value when it is one of the
 *                                    option's choices (--check ptxas), or, for
 *                                    one without choices (--keep DIR), when it
 *                                    does not begin with '-'
 *     -o value   -ovalue             a short option with a value
 *     -qc   -qo DIR                  short options combined; a value ends the group
 *     --                             the end of options: every word after it is an
 * argument
 *     -                              an argument (standard input or output)
 *     -h, --help                     the usage and every option, on standard output, exit
 * 0
 *
 * Options and arguments come in any order; the arguments are moved to the
 * front of argv, in their order.  A verb then checks its modes (which options
 * go together) with opt_conflict and opt_needs, which name the option as the
 * user spelt it.
 *
 * Decisions:
 *  - Every option has a long name; the short name is extra.  The long name is
 *    the key the verb uses to ask what was given.
 *  - No abbreviated long names (--ent for --entry): an option added later
 *    would change what a script's abbreviation means.
 *  - A required value is the next word whatever it looks like (--entry -x
 *    names the entry "-x"), as getopt does.
 *  - Every value is given the same two ways, `--name VALUE` and
 *    `--name=VALUE`, whether it is required or optional, so no verb spells
 *    an option differently from another.  An optional value takes the next
 *    word only when that word can be nothing else: one of its choices
 *    (`--check ptxas`; `--check x.json` leaves x.json an argument), or,
 *    without choices, a word that is not an option (`--keep DIR`; `--keep
 *    --json` is the default folder).  `--name=VALUE` is never ambiguous.
 *    When a verb then lacks an argument, the error says which word the
 *    option took (`bisect --keep enc4 --phase 8`).
 *  - Errors exit 2, as every usage error of the tool does, with
 *    "d4r-splice: VERB: what is wrong".  An unknown option, a missing value or
 *    a misplaced argument is followed by the usage synopsis; a bad value
 *    names the option and the value and nothing more.
 *  - An option the chosen mode would ignore is refused, never dropped
 *    silently: a user who typed it meant something by it.
 *  - A second spelling of one idea is an alias (OT_ALIAS): it stands for
 *    the canonical option with a fixed value, says so in --help and is
 *    left out of synopses.
 *  - --list-options (not shown in --help) prints the table one option a
 *    line, tab-separated: long name, short name, value (none, required,
 *    optional), value name, choices (a|b), alias target, help; '-' marks an
 *    empty field.  The test compares it with the man page; a completion
 *    script can be generated from it.
 *  - --list-parsed (not shown in --help either), anywhere among the words,
 *    parses all of them as usual and then, instead of running the verb,
 *    prints what they parsed into, one a line: "option\t--NAME\tVALUE"
 *    ('-' for a flag) per option given, in table order, then
 *    "argument\tWORD" per argument; exit 0.  The test of the two spellings
 *    of every value (t1801) runs it over every verb's table.
 */
#ifndef D4R_CMD_OPTIONS_H
#define D4R_CMD_OPTIONS_H

#include "base/err.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

/* What an option's value is, and where it goes. */
typedef enum {
	OT_END = 0,  /* the end of a table */
	OT_FLAG,     /* no value; sets *(bool *)value */
	OT_STRING,   /* *(const char **)value = the word (one of `choices` when set) */
	OT_UINT,     /* *(unsigned *)value = a decimal number in [min, max] */
	OT_CALLBACK, /* cb(o, word, e) stores what it parsed through o->value */
	OT_ALIAS,    /* another spelling: `alias` names "NAME" or "NAME=VALUE" */
} OptType;

enum {
	/* the value is optional (only after '='); without one, `def` */
	OPTF_OPTARG = 1 << 0,
	/* accepted, but in neither --help nor --list-options */
	OPTF_HIDDEN = 1 << 1,
};

typedef struct Opt Opt;
/* Parses `word` (NULL for an option without a value) into o->value; -1 with
 * e set to what is wrong with the word (the parser names the option). */
typedef int OptCallback(const Opt *o, const char *word, Err *e);

struct Opt {
	OptType type;
	char short_name;       /* 0: none */
	const char *long_name; /* without "--"; every option has one */
	void *value;
	/* the value's name in usage (FILE, N); NULL: the choices, or no value */
	const char *arg;
	const char *help;    /* one line */
	unsigned flags;      /* OPTF_* */
	const char *choices; /* OT_STRING: the words accepted, "ptxas|none"; NULL: any */
	const char *def;     /* OPTF_OPTARG: the word when none is given */
	unsigned min, max;   /* OT_UINT: the range, inclusive */
	/* OT_UINT: what the number is, for errors ("a phase number (1, 2, ...)") */
	const char *what;
	OptCallback *cb;   /* OT_CALLBACK */
	const char *alias; /* OT_ALIAS: the option it stands for, "check=ptxas" */
};

/* Table entries; s is the short name (0 for none), l the long name. */
// clang-format off
#define OPT_FLAG(s, l, v, h) \
	{.type = OT_FLAG, .short_name = (s), .long_name = (l), .value = (v), .help = (h)}
#define OPT_STRING(s, l, v, a, h) \
	{.type = OT_STRING, .short_name = (s), .long_name = (l), .value = (v), .arg = (a), \
	 .help = (h)}
#define OPT_CHOICE(s, l, v, ch, h) \
	{.type = OT_STRING, .short_name = (s), .long_name = (l), .value = (v), .help = (h), \
	 .choices = (ch)}
/* --l or --l=VALUE; without a value *v = d. */
#define OPT_STRING_OPTARG(l, v, a, d, h) \
	{.type = OT_STRING, .long_name = (l), .value = (v), .arg = (a), .help = (h), \
	 .flags = OPTF_OPTARG, .def = (d)}
#define OPT_CHOICE_OPTARG(l, v, ch, d, h) \
	{.type = OT_STRING, .long_name = (l), .value = (v), .help = (h), \
	 .flags = OPTF_OPTARG, .choices = (ch), .def = (d)}
#define OPT_UINT(s, l, v, a, lo, hi, h) \
	{.type = OT_UINT, .short_name = (s), .long_name = (l), .value = (v), .arg = (a), \
	 .help = (h), .min = (lo), .max = (hi)}
/* --phase N: a phase number, 1 and up. */
#define OPT_PHASE(v, h) \
	{.type = OT_UINT, .long_name = "phase", .value = (v), .arg = "N", .help = (h), \
	 .min = 1, .max = UINT_MAX, .what = "a phase number (1, 2, ...)"}
#define OPT_CALLBACK(s, l, v, a, f, h) \
	{.type = OT_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .arg = (a), \
	 .help = (h), .cb = (f)}
/* h may be NULL: the help then says which option it stands for. */
#define OPT_ALIAS(l, target, h) \
	{.type = OT_ALIAS, .long_name = (l), .help = (h), .alias = (target)}
#define OPT_END() {.type = OT_END}
// clang-format on

/* The most options one table may hold. */
#define OPT_MAX 48

typedef struct {
	/* "splice", "recipe new"; "" for the main job and the global options */
	const char *verb;
	/* synopsis lines, each after "d4r-splice "; NULL-terminated */
	const char *const *usage;
	const Opt *opts;
	/* printed by --help after the options (a list of verbs), or NULL */
	void (*more_help)(FILE *f);
	FILE *out, *err; /* NULL: stdout and stderr */
	/* set by opt_parse: when it returned -1, the exit status (0 after help,
	 * 2 after an error); per option, the spelling given last ("-o",
	 * "--ptxas" for an alias of it), or "" */
	int status;
	char used[OPT_MAX][32];
	/* set by opt_parse: the last word an optional value took from the word
	 * after its option, and that option's spelling ("" when none) */
	char took[2][64];
	/* set by opt_parse: per option, the value word stored last (NULL for a
	 * flag, the default for an optional value given without one) */
	const char *word[OPT_MAX];
} OptParse;

/* Reads the options in argv[1..argc) (argv[0] is the verb) against p->opts,
 * storing each value where its entry says.  Returns the number of
 * arguments, moved to argv[0..n) in order; or -1 when the command is over:
 * p->status is then 0 after --help or --list-options (printed on p->out)
 * and 2 after an error (printed on p->err). */
int opt_parse(OptParse *p, int argc, char **argv);

/* The spelling the user gave option `long_name` in ("-o", "--output",
 * "--ptxas" for an alias of it), or NULL when it was not given. */
const char *opt_given(const OptParse *p, const char *long_name);

/* "option 'A' cannot be used with 'B'" when both were given: printed, and
 * EXIT_ERROR returned; 0 otherwise. */
int opt_conflict(const OptParse *p, const char *a, const char *b);
/* opt_conflict of `a` with each name that follows, up to a NULL. */
int opt_conflicts(const OptParse *p, const char *a, ...);
/* "option 'A' needs 'B'" when a was given and b was not; as opt_conflict. */
int opt_needs(const OptParse *p, const char *a, const char *b);

/* "d4r-splice: VERB: message" on p->err; returns EXIT_ERROR. */
int opt_fail(const OptParse *p, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* opt_fail, then the usage synopsis. */
int opt_usage_error(const OptParse *p, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* Checks the n arguments opt_parse left in argv: fewer than `min` is
 * opt_usage_error(`missing`), more than `max` (-1: no limit) names the first
 * one too many.  Returns 0, or EXIT_ERROR after printing. */
int opt_args(const OptParse *p, int n, char **argv, int min, int max,
             const char *missing);

/* The synopsis ("usage: ..." lines); with `full`, every option too. */
void opt_usage(const OptParse *p, FILE *f, bool full);

/* An architecture as --arch gives it: sm_XX, compute_XX or XX, with an
 * optional a or f suffix (sm_90a). */
typedef struct {
	unsigned number; /* 90 */
	char name[24];   /* "sm_90a": what ptxas -arch takes */
} OptArch;
/* OptCallback for --arch: o->value is an OptArch. */
int opt_arch(const Opt *o, const char *word, Err *e);
/* OptCallback for a number of seconds in (0, 86400]: o->value is a double. */
int opt_seconds(const Opt *o, const char *word, Err *e);
/* OptCallback for a size: N, NK, NM, NG (powers of 1024); o->value is a
 * uint64_t. */
int opt_size(const Opt *o, const char *word, Err *e);
/* OptCallback for a phase list (1-10,13,21-60; base/numlist.h): o->value is
 * a NumList, replaced by each occurrence. */
int opt_phase_list(const Opt *o, const char *word, Err *e);

#endif
