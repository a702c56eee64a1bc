/*
 * extract.c - the extraction engine: inputs in, NNNN-NAME.ptx and
 * index.json out.
 *
 * Inputs are mapped; each PTX entry is decompressed into a reused buffer,
 * hashed, and written from it, so the cost is decompression, one sha256 and
 * one write per distinct module (the first two spread over threads, see
 * run_batch).  Identical modules are common (the same
 * PTX is shipped once per target architecture), and are recorded in the
 * index as skipped, with the file of the module they duplicate.
 *
 * Module files are numbered in the order they are written, from 0001.  The
 * name part is the first `.entry` of the module (the first `.func` when it
 * has no entry), sanitised for any file system and cut to 80 bytes; the
 * full names are in the index.  Every file goes through write_file_atomic
 * (temporary file + rename), and index.json is removed when a run starts
 * and written when it ends, so a folder with an index is complete.  The
 * folder may hold other files: a rerun removes only the module files the
 * earlier run's index lists and this run did not write again.
 *
 * Errors are reported as they are found, but a damaged input can hold a
 * million of one kind (a file of container headers whose sizes all lie):
 * each kind, per input, is passed on (on_error, the index) at most
 * ERRORS_SHOWN times, and when the input is done one line says how many
 * more there were.  A kind is the message with its numbers blanked, so
 * "offset 0x10: entry header size 8 is impossible" and the same at another
 * offset with another size are one kind.  The counts stay exact.
 */
#include "extract.h"

#include "base/file.h"
#include "base/sha256.h"
#include "ptx/lex.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_BYTES 80
#define MAX_THREADS 16
#define ERRORS_SHOWN 20

/* One kind of error of the input being read (the essay above). */
typedef struct {
	char *kind; /* the message, numbers blanked */
	uint64_t count;
	char *first_held; /* the first message not passed on */
} ErrKind;

typedef struct {
	unsigned char d[32];
	char *file;
} Seen;

struct Job;

struct Extractor {
	ExtractOpts o;
	ExtractStats st;
	VEC(Seen) seen;
	size_t *slots;      /* open addressing: index+1 into seen, 0 empty */
	size_t nslots;
	VEC(struct Job) jobs;   /* the batch; buffers are reused */
	size_t njobs;
	uint64_t batch_bytes;
	unsigned threads;
	cJSON *inputs, *modules, *skipped, *errors;
	char **earlier;     /* the files an earlier run's index lists, sorted */
	size_t nearlier;
	VEC(ErrKind) kinds; /* of the input being read */
};

/* ---- names ---------------------------------------------------------- */

/* Finds the directive `dir` (".entry" or ".func") from *pos on, as the
 * lexer reads the text (so never inside a comment or a string), and returns
 * the name after it (skipping a `.func` return list), or an empty Str at the
 * end of the text. */
static Str next_name(const char *t, size_t n, size_t *pos, const char *dir)
{
	size_t dl = strlen(dir);
	Lexer lx = ptx_lex_init(t + *pos, n - *pos);
	for (;;) {
		Token tk = ptx_lex_next(&lx);
		if (tk.kind == TK_END)
			break;
		if (tk.kind != TK_DIRECTIVE || tk.n != dl || memcmp(tk.p, dir, dl))
			continue;
		do
			tk = ptx_lex_next(&lx);
		while (tk.kind == TK_SPACE || tk.kind == TK_COMMENT);
		if (tk.kind == TK_PUNCT && *tk.p == '(') { /* .func (.param .b32 r) name */
			for (int depth = 1; depth > 0 && tk.kind != TK_END;) {
				tk = ptx_lex_next(&lx);
				if (tk.kind == TK_PUNCT)
					depth += (*tk.p == '(') - (*tk.p == ')');
			}
			do
				tk = ptx_lex_next(&lx);
			while (tk.kind == TK_SPACE || tk.kind == TK_COMMENT);
		}
		if (tk.kind == TK_NAME) {
			*pos = (size_t)(lx.p - t);
			return str_of(tk.p, tk.n);
		}
	}
	*pos = n;
	return str_of(t + n, 0);
}

size_t extract_entry_names(const char *t, size_t n, void (*fn)(void *, Str), void *ctx)
{
	size_t pos = 0, count = 0;
	for (;;) {
		Str s = next_name(t, n, &pos, ".entry");
		if (!s.n)
			return count;
		count++;
		if (fn)
			fn(ctx, s);
	}
}

void extract_first_name(const char *t, size_t n, char *out, size_t cap)
{
	size_t pos = 0;
	Str s = next_name(t, n, &pos, ".entry");
	if (!s.n) {
		pos = 0;
		s = next_name(t, n, &pos, ".func");
	}
	size_t k = MIN(s.n, cap - 1);
	memcpy(out, s.p, k);
	out[k] = 0;
}

void extract_sanitize(const char *name, char *out, size_t max)
{
	size_t k = 0;
	for (const char *p = name; *p && k < max; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || c == '_' || c == '-' || (c == '.' && k > 0);
		out[k++] = ok ? c : '_';
	}
	if (!k)
		memcpy(out, "ptx", k = 3);
	out[k] = 0;
}

/* ---- the engine ------------------------------------------------------ */

static bool ours(const char *name);
static int cmp_str(const void *a, const void *b);

/* The module files an earlier run's index, text[0..n), lists: names of
 * ours, in DIR itself (no '/'), sorted; how many.  A damaged index lists
 * nothing. */
static size_t earlier_files(const char *text, size_t n, char ***out)
{
	*out = NULL;
	cJSON *root = cJSON_ParseWithLength(text, n);
	const cJSON *mods = cJSON_GetObjectItemCaseSensitive(root, "modules");
	size_t k = 0, cap = (size_t)cJSON_GetArraySize(mods);
	char **v = xcalloc(cap + 1, sizeof *v);
	const cJSON *m;
	cJSON_ArrayForEach(m, mods) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(m, "file");
		if (k < cap && cJSON_IsString(f) && ours(f->valuestring) && !strchr(f->valuestring, '/'))
			v[k++] = xstrdup(f->valuestring);
	}
	cJSON_Delete(root);
	qsort(v, k, sizeof *v, cmp_str);
	*out = v;
	return k;
}

Extractor *extract_new(const ExtractOpts *o, Err *e)
{
	char **earlier = NULL;
	size_t nearlier = 0;
	if (o->outdir) {
		if (mkdir_p(o->outdir, e) < 0)
			return NULL;
		char *ix = xmalloc(strlen(o->outdir) + 16);
		sprintf(ix, "%s/index.json", o->outdir);
		/* What an earlier run wrote, before its index goes. */
		char *text;
		size_t n;
		Err ig = ERR_INIT;
		if (read_file(ix, &text, &n, &ig) == 0) {
			nearlier = earlier_files(text, n, &earlier);
			free(text);
		}
		err_release(&ig);
		if (unlink(ix) < 0 && errno != ENOENT) {
			err_set(e, "cannot remove '%s': %s", ix, strerror(errno));
			free(ix);
			for (size_t i = 0; i < nearlier; i++)
				free(earlier[i]);
			free(earlier);
			return NULL;
		}
		free(ix);
	}
	Extractor *x = xcalloc(1, sizeof *x);
	x->o = *o;
	x->earlier = earlier;
	x->nearlier = nearlier;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("D4R_THREADS");
	if (env && atoi(env) > 0)
		cpus = atoi(env);
	x->threads = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (unsigned)cpus;
	x->nslots = 1024;
	x->slots = xcalloc(x->nslots, sizeof *x->slots);
	x->inputs = cJSON_CreateArray();
	x->modules = cJSON_CreateArray();
	x->skipped = cJSON_CreateArray();
	x->errors = cJSON_CreateArray();
	return x;
}

static uint64_t slot_hash(const unsigned char d[32])
{
	uint64_t h;
	memcpy(&h, d, 8);
	return h;
}

/* The Seen record with digest d, or NULL. */
static Seen *seen_find(Extractor *x, const unsigned char d[32])
{
	size_t m = x->nslots - 1;
	for (size_t i = slot_hash(d) & m;; i = (i + 1) & m) {
		if (!x->slots[i])
			return NULL;
		Seen *s = &x->seen.v[x->slots[i] - 1];
		if (!memcmp(s->d, d, 32))
			return s;
	}
}

static void seen_add(Extractor *x, const unsigned char d[32], const char *file)
{
	Seen s;
	memcpy(s.d, d, 32);
	s.file = xstrdup(file ? file : "");
	VEC_PUSH(x->seen, s);
	if (x->seen.n * 2 > x->nslots) {
		free(x->slots);
		x->nslots *= 2;
		x->slots = xcalloc(x->nslots, sizeof *x->slots);
		for (size_t k = 0; k < x->seen.n; k++) {
			size_t m = x->nslots - 1, i = slot_hash(x->seen.v[k].d) & m;
			while (x->slots[i])
				i = (i + 1) & m;
			x->slots[i] = k + 1;
		}
		return;
	}
	size_t m = x->nslots - 1, i = slot_hash(d) & m;
	while (x->slots[i])
		i = (i + 1) & m;
	x->slots[i] = x->seen.n;
}

/* msg with each number ("0x1f0", "64") made '#': what it says, not where. */
static char *error_kind(const char *msg)
{
	StrBuf sb = STRBUF_INIT;
	for (const char *p = msg; *p;) {
		if (p[0] == '0' && p[1] == 'x') {
			p += 2;
			while ((*p >= '0' && *p <= '9') ||
			       ((*p | 32) >= 'a' && (*p | 32) <= 'f'))
				p++;
			sb_addc(&sb, '#');
		} else if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
			sb_addc(&sb, '#');
		} else
			sb_addc(&sb, *p++);
	}
	return sb.p ? sb.p : xstrdup("");
}

/* Passes "path: msg" on, to on_error and the index. */
static void pass_on(Extractor *x, const char *line)
{
	cJSON_AddItemToArray(x->errors, cJSON_CreateString(line));
	if (x->o.on_error)
		x->o.on_error(x->o.ctx, line);
}

static void report(Extractor *x, cJSON *input, const char *path, const char *msg)
{
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s: %s", path, msg);
	x->st.errors++;
	cJSON *n = cJSON_GetObjectItem(input, "errors");
	cJSON_SetNumberValue(n, n->valuedouble + 1);
	char *kind = error_kind(msg);
	ErrKind *k = NULL;
	for (size_t i = 0; i < x->kinds.n && !k; i++)
		if (!strcmp(x->kinds.v[i].kind, kind))
			k = &x->kinds.v[i];
	if (!k) {
		ErrKind nk = {kind, 0, NULL};
		VEC_PUSH(x->kinds, nk);
		k = &x->kinds.v[x->kinds.n - 1];
	} else
		free(kind);
	if (++k->count <= ERRORS_SHOWN)
		pass_on(x, sb.p);
	else if (!k->first_held)
		k->first_held = xstrdup(msg);
	sb_release(&sb);
}

/* 1234567 -> "1,234,567" */
static void thousands(char out[32], uint64_t v)
{
	char d[24];
	int n = snprintf(d, sizeof d, "%llu", (unsigned long long)v), k = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = d[i];
	}
	out[k] = 0;
}

/* The end of an input: one line for each kind that came more often than it
 * was passed on. */
static void report_held(Extractor *x, const char *path)
{
	for (size_t i = 0; i < x->kinds.n; i++) {
		ErrKind *k = &x->kinds.v[i];
		if (k->count > ERRORS_SHOWN) {
			char num[32];
			thousands(num, k->count - ERRORS_SHOWN);
			StrBuf sb = STRBUF_INIT;
			sb_addf(&sb,
			        "%s: ... and %s more like it (the first of them: %s)",
			        path, num, k->first_held);
			pass_on(x, sb.p);
			sb_release(&sb);
		}
		free(k->kind);
		free(k->first_held);
	}
	x->kinds.n = 0;
}

static void add_names(void *ctx, Str s)
{
	char *tmp = xstrndup(s.p, s.n);
	cJSON_AddItemToArray((cJSON *)ctx, cJSON_CreateString(tmp));
	free(tmp);
}

static void bump(cJSON *input, const char *key)
{
	cJSON *n = cJSON_GetObjectItem(input, key);
	cJSON_SetNumberValue(n, n->valuedouble + 1);
}

static cJSON *describe(const char *file, const char *path, const FatbinEntry *en,
                       size_t size, const char *hex)
{
	char v[32];
	cJSON *j = cJSON_CreateObject();
	if (file)
		cJSON_AddStringToObject(j, "file", file);
	cJSON_AddStringToObject(j, "source", path);
	cJSON_AddStringToObject(j, "section", en->section);
	cJSON_AddNumberToObject(j, "container_offset", (double)en->container_off);
	cJSON_AddNumberToObject(j, "entry_offset", (double)en->entry_off);
	snprintf(v, sizeof v, "sm_%u", en->arch);
	cJSON_AddStringToObject(j, "arch", v);
	snprintf(v, sizeof v, "%u.%u", en->ptx_major, en->ptx_minor);
	cJSON_AddStringToObject(j, "ptx_version", v);
	cJSON_AddStringToObject(j, "compression", fatbin_codec_name(en->codec));
	cJSON_AddNumberToObject(j, "size", (double)size);
	cJSON_AddStringToObject(j, "sha256", hex);
	return j;
}

/*
 * Decompressing and hashing dominate the run (the reference sha256 runs at
 * ~150 MB/s), and entries are independent, so they are done in batches by
 * a few threads; everything with an order (numbering, deduplication,
 * writing, the index) then happens in the calling thread, job by job, in
 * file order.  The output does not depend on the number of threads.
 */
enum { JOB_ENTRY, JOB_ERROR };
#define BATCH_JOBS 64
#define BATCH_BYTES ((uint64_t)256 << 20)

typedef struct Job {
	int kind;
	FatbinEntry en;
	char *msg;           /* JOB_ERROR: the scan error; JOB_ENTRY: decompression */
	bool work;           /* decompress and hash (not filtered out) */
	uint8_t *buf;        /* kept across batches */
	size_t cap, len;
	unsigned char d[32];
	char name[512];
} Job;

typedef struct {
	Job *jobs;
	size_t n;
	atomic_size_t next;
} Batch;

static void run_job(Job *j)
{
	if (j->kind != JOB_ENTRY || !j->work)
		return;
	Err e = ERR_INIT;
	if (fatbin_entry_data(&j->en, &j->buf, &j->cap, &j->len, &e) < 0) {
		j->msg = xstrdup(err_msg(&e));
	} else {
		Sha256 h;
		sha256_init(&h);
		sha256_update(&h, j->buf, j->len);
		sha256_final(&h, j->d);
		extract_first_name((const char *)j->buf, j->len, j->name, sizeof j->name);
	}
	err_release(&e);
}

static void *worker(void *arg)
{
	Batch *b = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&b->next, 1);
		if (i >= b->n)
			return NULL;
		run_job(&b->jobs[i]);
	}
}

static void run_batch(Extractor *x)
{
	Batch b = {x->jobs.v, x->njobs, 0};
	pthread_t tid[MAX_THREADS];
	unsigned started = 0;
	unsigned want = x->threads < x->njobs ? x->threads : (unsigned)x->njobs;
	for (unsigned t = 1; t < want; t++)
		if (pthread_create(&tid[started], NULL, worker, &b) == 0)
			started++;
	worker(&b);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}

/* Commits one decompressed entry: skip it as a duplicate, or write it. */
static int commit_entry(Extractor *x, cJSON *input, const char *path, Job *j, Err *e)
{
	const FatbinEntry *en = &j->en;
	x->st.ptx_entries++;
	bump(input, "ptx_entries");
	ExtractModule m = {path, en, NULL, 0, NULL, NULL, NULL, NULL, false};
	if (!j->work) {
		x->st.filtered++;
		bump(input, "filtered");
		m.filtered = true;
		if (x->o.on_module)
			x->o.on_module(x->o.ctx, &m);
		return 0;
	}
	if (j->msg) {
		report(x, input, path, j->msg);
		return 0;
	}
	char hex[65];
	sha256_tohex(j->d, hex);
	m.text = (const char *)j->buf;
	m.size = j->len;
	m.sha256 = hex;
	m.name = j->name;

	Seen *dup = seen_find(x, j->d);
	if (dup) {
		x->st.skipped++;
		bump(input, "skipped");
		m.duplicate_of = dup->file;
		cJSON *jj = describe(NULL, path, en, j->len, hex);
		cJSON_AddStringToObject(jj, "duplicate_of", dup->file);
		cJSON_AddItemToArray(x->skipped, jj);
		if (x->o.on_module)
			x->o.on_module(x->o.ctx, &m);
		return 0;
	}
	char file[NAME_MAX_BYTES + 32], safe[NAME_MAX_BYTES + 1];
	extract_sanitize(j->name, safe, NAME_MAX_BYTES);
	snprintf(file, sizeof file, "%04u-%s.ptx", x->st.written + 1, safe);
	if (x->o.outdir) {
		StrBuf full = STRBUF_INIT;
		sb_addf(&full, "%s/%s", x->o.outdir, file);
		int rc = write_file_atomic(full.p, j->buf, j->len, e);
		sb_release(&full);
		if (rc < 0)
			return -1;
		x->st.bytes_written += j->len;
		m.file = file;
	}
	x->st.written++;
	bump(input, "written");
	seen_add(x, j->d, file);
	cJSON *jj = describe(file, path, en, j->len, hex);
	cJSON *names = cJSON_AddArrayToObject(jj, "entries");
	extract_entry_names((const char *)j->buf, j->len, add_names, names);
	cJSON_AddItemToArray(x->modules, jj);
	if (x->o.on_module)
		x->o.on_module(x->o.ctx, &m);
	return 0;
}

/* Runs the pending jobs and commits them in order.  Returns 0 or -1. */
static int flush(Extractor *x, cJSON *input, const char *path, Err *e)
{
	run_batch(x);
	int rc = 0;
	for (size_t i = 0; i < x->njobs; i++) {
		Job *j = &x->jobs.v[i];
		if (rc == 0) {
			if (j->kind == JOB_ERROR)
				report(x, input, path, j->msg);
			else
				rc = commit_entry(x, input, path, j, e);
		}
		free(j->msg);
		j->msg = NULL;
		if (j->cap > (16u << 20)) {   /* keep small buffers only */
			free(j->buf);
			j->buf = NULL;
			j->cap = 0;
		}
	}
	x->njobs = 0;
	x->batch_bytes = 0;
	return rc;
}

static Job *new_job(Extractor *x, int kind)
{
	if (x->njobs == x->jobs.n) {
		Job z;
		memset(&z, 0, sizeof z);
		VEC_PUSH(x->jobs, z);
	}
	Job *j = &x->jobs.v[x->njobs++];
	j->kind = kind;
	j->msg = NULL;
	j->work = false;
	j->len = 0;
	j->name[0] = 0;
	return j;
}

int extract_file(Extractor *x, const char *path, Err *e)
{
	x->st.files++;
	cJSON *input = cJSON_CreateObject();
	cJSON_AddStringToObject(input, "path", path);
	cJSON *fmt = cJSON_AddStringToObject(input, "format", "unreadable");
	static const char *const keys[] = {"containers", "ptx_entries", "written",
	                                   "skipped",    "filtered",    "errors"};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		cJSON_AddNumberToObject(input, keys[i], 0);
	cJSON_AddItemToArray(x->inputs, input);

	MapFile mf;
	Err me = ERR_INIT;
	if (map_open(&mf, path, &me) < 0) {
		/* map_open's message names the file already. */
		x->st.errors++;
		bump(input, "errors");
		cJSON_AddItemToArray(x->errors, cJSON_CreateString(err_msg(&me)));
		if (x->o.on_error)
			x->o.on_error(x->o.ctx, err_msg(&me));
		err_release(&me);
		return 0;
	}
	err_release(&me);
	if (mf.n == 0) {
		report(x, input, path, "offset 0x0: empty file");
		report_held(x, path);
		map_close(&mf);
		return 0;
	}
	ObjFile obj;
	obj_regions(&obj, mf.p, mf.n);
	cJSON_SetValuestring(fmt, obj_kind_name(obj.kind));
	for (size_t i = 0; i < obj.problems.n; i++)
		report(x, input, path, obj.problems.v[i]);
	FatbinScan s;
	fatbin_scan_init(&s, mf.p, mf.n, &obj);
	int rc = 0;
	for (;;) {
		FatbinEntry en;
		Err se = ERR_INIT;
		int r = fatbin_scan_next(&s, &en, &se);
		if (r < 0)
			new_job(x, JOB_ERROR)->msg = xstrdup(err_msg(&se));
		err_release(&se);
		if (r > 0 && en.kind == FATBIN_PTX) {
			Job *j = new_job(x, JOB_ENTRY);
			j->en = en;
			j->work = !x->o.arch || en.arch == x->o.arch;
			x->batch_bytes += en.raw_size > en.data_size ? en.raw_size : en.data_size;
		}
		if (r == 0 || x->njobs >= BATCH_JOBS || x->batch_bytes >= BATCH_BYTES)
			if (x->njobs && (rc = flush(x, input, path, e)) < 0)
				break;
		if (r == 0)
			break;
	}
	x->st.containers += s.containers;
	cJSON_SetNumberValue(cJSON_GetObjectItem(input, "containers"), s.containers);
	if (rc == 0 && s.containers == 0 && obj.kind == OBJ_UNKNOWN)
		report(x, input, path,
		       "offset 0x0: not an ELF, PE/COFF or fatbin file, and no fatbin "
		       "container in it");
	report_held(x, path);
	obj_release(&obj);
	map_close(&mf);
	return rc;
}

/* Is `name` one of ours: NNNN-*.ptx with at least four digits? */
static bool ours(const char *name)
{
	size_t d = 0, n = strlen(name);
	while (name[d] >= '0' && name[d] <= '9')
		d++;
	return d >= 4 && name[d] == '-' && n > 4 && !strcmp(name + n - 4, ".ptx");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Removes the module files an earlier run wrote (its index lists them) that
 * this run did not write again, and says so through on_note; counts the
 * NNNN-*.ptx files no index accounts for (an interrupted run's, or not
 * ours at all) and says that they were kept.  An input of the command is
 * never removed.
 */
static int remove_stale(Extractor *x, Err *e)
{
	char **mine = xmalloc((x->seen.n + 1) * sizeof *mine);
	for (size_t i = 0; i < x->seen.n; i++)
		mine[i] = x->seen.v[i].file;
	qsort(mine, x->seen.n, sizeof *mine, cmp_str);
	int rc = 0;
	StrBuf p = STRBUF_INIT, note = STRBUF_INIT;
	for (size_t i = 0; i < x->nearlier; i++) {
		const char *nm = x->earlier[i];
		if (bsearch(&nm, mine, x->seen.n, sizeof *mine, cmp_str))
			continue;
		sb_reset(&p);
		sb_addf(&p, "%s/%s", x->o.outdir, nm);
		if (file_is_input(p.p))
			continue;
		if (unlink(p.p) < 0) {
			if (errno != ENOENT)
				rc = err_set(e, "cannot remove stale '%s': %s", p.p, strerror(errno));
			continue;
		}
		if (x->o.on_note) {
			sb_reset(&note);
			sb_addf(&note, "removed '%s' (an earlier extract wrote it; this one did not)", p.p);
			x->o.on_note(x->o.ctx, note.p);
		}
	}
	DIR *dir = opendir(x->o.outdir);
	if (!dir) {
		rc = err_set(e, "cannot read directory '%s': %s", x->o.outdir, strerror(errno));
	} else {
		unsigned kept = 0;
		struct dirent *de;
		while ((de = readdir(dir))) {
			const char *nm = de->d_name;
			if (ours(nm) && !bsearch(&nm, mine, x->seen.n, sizeof *mine, cmp_str) &&
			    !(x->nearlier &&
			      bsearch(&nm, x->earlier, x->nearlier, sizeof *x->earlier, cmp_str)))
				kept++;
		}
		closedir(dir);
		if (kept && x->o.on_note) {
			sb_reset(&note);
			sb_addf(&note, "kept %u NNNN-*.ptx file%s in '%s' that no index.json lists "
			               "(remove them by hand if they are stale)",
			        kept, kept == 1 ? "" : "s", x->o.outdir);
			x->o.on_note(x->o.ctx, note.p);
		}
	}
	sb_release(&p);
	sb_release(&note);
	free(mine);
	return rc;
}

int extract_finish(Extractor *x, Err *e)
{
	if (!x->o.outdir)
		return 0;
	if (remove_stale(x, e) < 0)
		return -1;
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "generator", "d4r-splice extract");
	cJSON_AddNumberToObject(root, "format", 1);
	if (x->o.arch) {
		char a[16];
		snprintf(a, sizeof a, "sm_%u", x->o.arch);
		cJSON_AddStringToObject(root, "arch_filter", a);
	} else {
		cJSON_AddNullToObject(root, "arch_filter");
	}
	cJSON *tot = cJSON_AddObjectToObject(root, "totals");
	cJSON_AddNumberToObject(tot, "files", x->st.files);
	cJSON_AddNumberToObject(tot, "containers", x->st.containers);
	cJSON_AddNumberToObject(tot, "ptx_entries", x->st.ptx_entries);
	cJSON_AddNumberToObject(tot, "written", x->st.written);
	cJSON_AddNumberToObject(tot, "skipped", x->st.skipped);
	cJSON_AddNumberToObject(tot, "filtered", x->st.filtered);
	cJSON_AddNumberToObject(tot, "errors", x->st.errors);
	cJSON_AddNumberToObject(tot, "bytes_written", (double)x->st.bytes_written);
	/* Move the arrays into the root; the extractor no longer owns them. */
	cJSON_AddItemToObject(root, "inputs", x->inputs);
	cJSON_AddItemToObject(root, "modules", x->modules);
	cJSON_AddItemToObject(root, "skipped", x->skipped);
	cJSON_AddItemToObject(root, "errors", x->errors);
	x->inputs = x->modules = x->skipped = x->errors = NULL;
	char *txt = cJSON_Print(root);
	cJSON_Delete(root);
	if (!txt)
		die_oom(0);
	StrBuf p = STRBUF_INIT;
	sb_addf(&p, "%s/index.json", x->o.outdir);
	size_t n = strlen(txt);
	txt[n] = '\n';   /* cJSON_Print's NUL becomes the final newline */
	int rc = write_file_atomic(p.p, txt, n + 1, e);
	sb_release(&p);
	cJSON_free(txt);
	return rc;
}

const ExtractStats *extract_stats(const Extractor *x)
{
	return &x->st;
}

void extract_free(Extractor *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->seen.n; i++)
		free(x->seen.v[i].file);
	VEC_FREE(x->seen);
	free(x->slots);
	for (size_t i = 0; i < x->jobs.n; i++)
		free(x->jobs.v[i].buf);
	VEC_FREE(x->jobs);
	for (size_t i = 0; i < x->nearlier; i++)
		free(x->earlier[i]);
	free(x->earlier);
	VEC_FREE(x->kinds); /* emptied by report_held after every input */
	cJSON_Delete(x->inputs);
	cJSON_Delete(x->modules);
	cJSON_Delete(x->skipped);
	cJSON_Delete(x->errors);
	free(x);
}
