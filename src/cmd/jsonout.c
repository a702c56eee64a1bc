/*
 * jsonout.c - the one document --json prints (jsonout.h says the rules).
 *
 * The state is the command's: whether JSON was asked for, whether the
 * document was printed, and the first error reported on stderr.  A command
 * is one process, so file-scope state is the command's state; threads of a
 * verb never print documents.
 */
#include "jsonout.h"

#include "cmd.h"
#include "ana/ana.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool json_on, printed;
static char *first_error;

void cmd_json_request(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			json_on = true;
}

void cmd_json_start(void)
{
	json_on = true;
}

bool cmd_json_on(void)
{
	return json_on;
}

void cmd_json_error(const char *msg)
{
	if (first_error || !msg || !*msg)
		return;
	if (!strncmp(msg, "d4r-splice: ", 12))
		msg += 12;
	size_t n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		n--;
	first_error = xstrndup(msg, n);
}

const char *cmd_json_error_msg(void)
{
	return first_error;
}

/* Puts item `key` at the front of object o. */
static void put_first(cJSON *o, const char *key, cJSON *item)
{
	cJSON *tmp = cJSON_CreateObject();
	cJSON_AddItemToObject(tmp, key, item);
	cJSON *named = cJSON_DetachItemFromObject(tmp, key);
	cJSON_Delete(tmp);
	cJSON_InsertItemInArray(o, 0, named);
}

int cmd_json_print(cJSON *doc, int rc)
{
	if (!doc)
		return rc;
	if (printed) {
		cJSON_Delete(doc);
		return rc;
	}
	cJSON *st = cJSON_DetachItemFromObject(doc, "status");
	cJSON *ex = cJSON_DetachItemFromObject(doc, "exit");
	cJSON_Delete(ex);
	bool error = rc == EXIT_ERROR && !st;
	if (error && !cJSON_HasObjectItem(doc, "message"))
		cJSON_AddStringToObject(doc, "message",
		                        first_error ? first_error : "the command failed");
	put_first(doc, "exit", cJSON_CreateNumber(rc));
	put_first(doc, "status", st ? st : cJSON_CreateString(error ? "error" : "ok"));
	cmd_json_paths(doc);
	char *txt = cJSON_Print(doc);
	fputs(txt, stdout);
	fputc('\n', stdout);
	free(txt);
	cJSON_Delete(doc);
	printed = true;
	return rc;
}

int cmd_json_print_text(const char *text, int rc)
{
	cJSON *doc = cJSON_Parse(text ? text : "");
	if (!doc || !cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "status", "error");
		cJSON_AddStringToObject(doc, "message",
		                        "internal error: a JSON document "
		                        "that does not parse");
		rc = EXIT_ERROR;
	}
	return cmd_json_print(doc, rc);
}

int cmd_json_finish(int rc)
{
	if (json_on && !printed && rc != EXIT_OK)
		cmd_json_print(cJSON_CreateObject(), rc);
	return rc;
}

cJSON *cmd_json_range(uint32_t a, uint32_t b)
{
	cJSON *r = cJSON_CreateArray();
	cJSON_AddItemToArray(r, cJSON_CreateNumber(a));
	cJSON_AddItemToArray(r, cJSON_CreateNumber(b));
	return r;
}

void cmd_json_strn(cJSON *o, const char *key, const char *p, size_t n)
{
	char *s = xstrndup(p ? p : "", p ? n : 0);
	cJSON_AddStringToObject(o, key, s);
	free(s);
}

void cmd_json_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

void cmd_json_ptxas(cJSON *o, bool ran, const char *arch, bool accepted,
                    const StrBuf *log, const PtxasCache *pc)
{
	if (!ran) {
		cJSON_AddNullToObject(o, "ptxas");
		return;
	}
	cJSON *pj = cJSON_AddObjectToObject(o, "ptxas");
	if (arch)
		cJSON_AddStringToObject(pj, "arch", arch);
	cJSON_AddBoolToObject(pj, "accepted", accepted);
	cJSON_AddStringToObject(pj, "messages", log->p ? log->p : "");
	cJSON_AddBoolToObject(pj, "cached", pc && pc->cached);
	cmd_json_str_or_null(pj, "cache_key", pc && pc->key[0] ? pc->key : NULL);
}

const char *cmd_ptxas_cached(const PtxasCache *pc)
{
	return pc && pc->cached ? " (cached)" : "";
}

const char *cmd_path_shown(const char *path)
{
	static char cwd[4096];
	static size_t ncwd;
	if (!path || path[0] != '/')
		return path;
	if (!ncwd) {
		if (!getcwd(cwd, sizeof cwd - 1))
			return path;
		ncwd = strlen(cwd);
	}
	if (ncwd > 1 && !strncmp(path, cwd, ncwd) && path[ncwd] == '/' && path[ncwd + 1])
		return path + ncwd + 1;
	return path;
}

/* The keys whose strings name files. */
static bool names_a_file(const char *key)
{
	static const char *const keys[] = {"module", "recipe", "template", "oracle", "output",
	                                   "path", "file", "junit", "frame", "manifest",
	                                   "layout", "kept", "chart", "source_file"};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (key && !strcmp(key, keys[i]))
			return true;
	return false;
}

void cmd_json_paths(cJSON *doc)
{
	for (cJSON *c = doc ? doc->child : NULL; c; c = c->next) {
		if (cJSON_IsString(c) && names_a_file(c->string)) {
			const char *s = cmd_path_shown(c->valuestring);
			if (s != c->valuestring) {
				char *t = xstrdup(s);
				cJSON_SetValuestring(c, t);
				free(t);
			}
		} else if (cJSON_IsObject(c) || cJSON_IsArray(c))
			cmd_json_paths(c);
	}
}

cJSON *cmd_json_cut(const Module *m, const char *entry, unsigned phase, bool with_epilogue,
                    uint32_t a, uint32_t b)
{
	const Func *f = m && entry ? mod_func_find(m, str_c(entry)) : NULL;
	if (!f || (phase && ana_phase_range(m, f, 0, phase, with_epilogue, &a, &b, NULL) < 0) ||
	    a > b || b >= f->nstmt)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "stmt_range", cmd_json_range(a, b));
	cJSON_AddItemToObject(o, "line_range",
	                      cmd_json_range(func_stmt(m, f, a)->line, func_stmt(m, f, b)->line));
	cJSON_AddNumberToObject(o, "mma", ana_mma_count(m, f, a, b));
	return o;
}
