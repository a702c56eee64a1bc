/*
 * grep.c - `d4r-splice grep MODULE PATTERN`: PCRE2 over statement text.
 *
 * The pattern is compiled once and JIT-compiled by PCRE2 when available; it
 * runs over each statement's text (guard through ';', whitespace and comments
 * normalised as `show` prints it), and matches print as
 * `entry:sN:line: text`.  -c prints the count per function instead.
 * --phase N searches phase N's statements (with --epilogue, through its
 * epilogue, where the conversions and stores that follow a phase are);
 * --json prints the matches as one JSON object.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "ana/ana.h"
#include "cmd.h"

#include <pcre2.h>
#include <stdio.h>
#include <string.h>

static const char *const usage[] = {"grep MODULE PATTERN [options]", NULL};

int cmd_grep(int argc, char **argv)
{
	const char *entry = NULL;
	unsigned phase = 0;
	bool count = false, icase = false, with_epi = false, json = false;
	const Opt opts[] = {
		OPT_STRING(0, "entry", &entry, "NAME",
		           "only this function (default: every one)"),
		OPT_FLAG('c', "count", &count,
		         "print the number of matches per function"),
		OPT_FLAG('i', "ignore-case", &icase, "match without regard to case"),
		OPT_PHASE(&phase, "only the statements of mma phase N"),
		OPT_FLAG(0, "epilogue", &with_epi,
		         "with --phase: through the phase's epilogue"),
		OPT_FLAG(0, "json", &json, "one JSON object"),
		OPT_END(),
	};
	OptParse op = {.verb = "grep", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 2, 2,
	             nargs ? "no pattern given" : "no module given") ||
	    opt_needs(&op, "epilogue", "phase"))
		return EXIT_ERROR;
	const char *path = argv[0], *pattern = argv[1];
	int errcode;
	PCRE2_SIZE erroff;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	                               icase ? PCRE2_CASELESS : 0, &errcode, &erroff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(errcode, msg, sizeof msg);
		return cmd_fail("grep: bad pattern '%s' at offset %zu: %s", pattern, (size_t)erroff, msg);
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	LoadedModule lm;
	if (cmd_load_module(path, &lm) < 0) {
		pcre2_match_data_free(md);
		pcre2_code_free(re);
		return EXIT_ERROR;
	}
	const Module *m = lm.m;
	int rc = EXIT_DIFFERS; /* like grep: 1 when nothing matched */
	StrBuf t = STRBUF_INIT;
	const Func *only = NULL;
	cJSON *doc = NULL, *jfns = NULL;
	unsigned total = 0;
	if (json) {
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "module", map_name(path));
		cJSON_AddStringToObject(doc, "pattern", pattern);
		cJSON_AddBoolToObject(doc, "ignore_case", icase);
		if (phase)
			cJSON_AddNumberToObject(doc, "phase", phase);
		else
			cJSON_AddNullToObject(doc, "phase");
		cJSON_AddBoolToObject(doc, "epilogue", with_epi);
		jfns = cJSON_AddArrayToObject(doc, "functions");
	}
	if (entry || phase) {
		only = cmd_pick_func(m, entry);
		if (!only) {
			rc = EXIT_ERROR;
			goto out;
		}
	}
	for (size_t fi = 0; fi < m->funcs.n; fi++) {
		const Func *f = &m->funcs.v[fi];
		if ((f->flags & FNF_DECL) || (only && f != only))
			continue;
		uint32_t a = 0, b = f->nstmt ? f->nstmt - 1 : 0;
		size_t n = 0;
		if (phase && ana_phase_range(m, f, 0, phase, with_epi, &a, &b, &n) < 0) {
			Err pe = ERR_INIT;
			char *who = xstrndup(mod_str(m, f->name).p, mod_str(m, f->name).n);
			ana_phase_missing("grep", phase, who, n, &pe);
			free(who);
			rc = cmd_fail("%s", err_msg(&pe));
			err_release(&pe);
			goto out;
		}
		unsigned hits = 0;
		cJSON *jm = NULL;
		if (json) {
			cJSON *jf = cJSON_CreateObject();
			cmd_json_strn(jf, "name", m->src + f->name.off, f->name.len);
			cJSON_AddItemToArray(jfns, jf);
			jm = cJSON_AddArrayToObject(jf, "matches");
		}
		for (uint32_t i = a; f->nstmt && i <= b; i++) {
			const Stmt *s = func_stmt(m, f, i);
			sb_reset(&t);
			stmt_normalized(m, s, &t);
			if (pcre2_match(re, (PCRE2_SPTR)t.p, t.n, 0, 0, md, NULL) < 0)
				continue;
			hits++;
			if (jm) {
				cJSON *j = cJSON_CreateObject();
				cJSON_AddNumberToObject(j, "stmt", i);
				cJSON_AddNumberToObject(j, "line", s->line);
				cJSON_AddStringToObject(j, "text", t.p);
				cJSON_AddItemToArray(jm, j);
			} else if (!count)
				printf("%.*s:s%u:%u: %s\n", (int)f->name.len, m->src + f->name.off, i, s->line, t.p);
		}
		total += hits;
		if (jm)
			cJSON_AddNumberToObject(cJSON_GetArrayItem(jfns, cJSON_GetArraySize(jfns) - 1),
			                        "count", hits);
		else if (count)
			printf("%.*s: %u\n", (int)f->name.len, m->src + f->name.off, hits);
		if (hits && rc != EXIT_ERROR)
			rc = EXIT_OK;
	}
out:
	if (doc && rc != EXIT_ERROR) {
		cJSON_AddNumberToObject(doc, "count", total);
		cmd_json_print(doc, rc);
	} else
		cJSON_Delete(doc);
	sb_release(&t);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	cmd_unload_module(&lm);
	return rc;
}
