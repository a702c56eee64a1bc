/*
 * ptxas.c - the offline check of a spliced module: run ptxas on it and map
 * its "line N" back to where the line came from (the template, the cut, or
 * the module outside the cut), so an error in a native phase points at the
 * template line the author wrote; and the cache of ptxas's answers
 * (ptxas.h says what is kept, under which key, and why).
 */
#include "ptxas.h"

#include "base/file.h"
#include "base/sha256.h"
#include "base/temp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef D4R_CUDA_HOME
#define D4R_CUDA_HOME "/usr/local/cuda"
#endif

static void shell_quote(StrBuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_adds(sb, "'\\''");
		else
			sb_addc(sb, *s);
	}
	sb_addc(sb, '\'');
}

/* Rewrites "<tmpfile>, line N;" in one ptxas message line. */
static void map_line(const char *l, size_t n, const char *tmp, const SpliceResult *res,
                     const char *module_name, StrBuf *out)
{
	size_t tl = strlen(tmp);
	const char *hit = NULL;
	for (size_t i = 0; i + tl <= n; i++)
		if (!memcmp(l + i, tmp, tl)) {
			hit = l + i;
			break;
		}
	const char *ln = hit ? strstr(hit, ", line ") : NULL;
	if (!hit || !ln || ln >= l + n) {
		sb_addn(out, l, n);
		sb_addc(out, '\n');
		return;
	}
	char *q;
	unsigned long v = strtoul(ln + 7, &q, 10);
	sb_addn(out, l, (size_t)(hit - l));
	splice_where(res, module_name, (uint32_t)v, out);
	sb_addn(out, q, (size_t)(l + n - q));
	sb_addc(out, '\n');
}

/* ---- the cache ------------------------------------------------------------ */

/* The first line of the key and of every entry: a change of either's
 * format changes it, and old entries are misses. */
#define CACHE_VERSION "d4r-splice ptxas cache 1"

void ptxas_cache_key(const char *text, size_t len, const char *args, const char *identity,
                     char out[65])
{
	Sha256 s;
	unsigned char d[32];
	sha256_init(&s);
	sha256_update(&s, CACHE_VERSION "\n", sizeof CACHE_VERSION);
	/* each string with its length, so no two (identity, args) pairs run
	 * together into the same bytes */
	char n[48];
	int k = snprintf(n, sizeof n, "%zu %zu\n", strlen(identity), strlen(args));
	sha256_update(&s, n, (size_t)k);
	sha256_update(&s, identity, strlen(identity));
	sha256_update(&s, args, strlen(args));
	sha256_update(&s, text, len);
	sha256_final(&s, d);
	sha256_tohex(d, out);
}

int ptxas_identity(const char *exe, StrBuf *out, Err *e)
{
	struct stat st;
	if (stat(exe, &st) < 0)
		return err_set(e, "cannot look at '%s': %s", exe, strerror(errno));
	sb_addf(out, "%s size %lld mtime %lld.%09ld", exe, (long long)st.st_size,
	        (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return 0;
}

char *ptxas_cache_dir(void)
{
	char *d = user_cache_dir();
	if (!d)
		return NULL;
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/ptxas", d);
	free(d);
	return sb.p;
}

/*
 * An entry: the version line, "exit N", "file PATH" (the temporary file
 * ptxas read, as its messages name it), an empty line, then ptxas's output
 * as it printed it.  cache_read returns 0 and fills *status, *file and
 * *raw, or -1 for a missing or malformed entry (a miss).
 */
static int cache_read(const char *path, int *status, StrBuf *file, StrBuf *raw)
{
	char *b;
	size_t n;
	Err ig = ERR_INIT;
	if (read_file(path, &b, &n, &ig) < 0) {
		err_release(&ig);
		return -1;
	}
	int rc = -1;
	const char *p = b, *end = b + n;
	const char head[] = CACHE_VERSION "\nexit ";
	if (n < sizeof head - 1 || memcmp(p, head, sizeof head - 1))
		goto out;
	p += sizeof head - 1;
	char *q;
	long st = strtol(p, &q, 10);
	if (q == p || (st != 0 && st != 1) || strncmp(q, "\nfile ", 6))
		goto out;
	p = q + 6;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || nl == p || nl + 1 >= end || nl[1] != '\n')
		goto out;
	sb_addn(file, p, (size_t)(nl - p));
	sb_addn(raw, nl + 2, (size_t)(end - nl - 2));
	*status = (int)st;
	rc = 0;
out:
	free(b);
	return rc;
}

static void cache_write(const char *dir, const char *path, int status, const char *file,
                        const StrBuf *raw)
{
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s\nexit %d\nfile %s\n\n", CACHE_VERSION, status, file);
	sb_addn(&sb, raw->p ? raw->p : "", raw->n);
	Err ig = ERR_INIT;
	if (mkdir_p(dir, &ig) == 0)
		write_file_atomic(path, sb.p, sb.n, &ig);
	err_release(&ig);
	sb_release(&sb);
}

/* ---- the run ----------------------------------------------------------------- */

/* ptxas's output, each line's "<tmp>, line N" mapped (map_line). */
static void map_log(const StrBuf *raw, const char *tmp, const SpliceResult *res,
                    const char *module_name, StrBuf *log)
{
	for (const char *p = raw->p, *end = raw->p + raw->n; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		map_line(p, n, tmp, res, module_name, log);
		p = nl ? nl + 1 : end;
	}
}

/* splice_ptxas with more ptxas flags (`flags`, NULL for none) and the
 * cubin appended to *cubin when given and ptxas accepts the module (else
 * -o /dev/null).  Only a plain run (no flags, no cubin) is cached. */
static int run_ptxas(const char *text, size_t len, const char *arch, const char *entry,
                     const char *flags, StrBuf *cubin, const SpliceResult *res,
                     const char *module_name, PtxasCache *pc, StrBuf *log, Err *e)
{
	if (pc) {
		pc->cached = false;
		pc->key[0] = 0;
	}
	const char *home = getenv("CUDA_HOME");
	if (!home || !*home)
		home = D4R_CUDA_HOME;
	StrBuf exe = STRBUF_INIT;
	sb_addf(&exe, "%s/bin/ptxas", home);
	if (access(exe.p, X_OK) != 0) {
		if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) {
			sb_reset(&exe);
			sb_adds(&exe, "/usr/local/cuda/bin/ptxas");
		} else {
			err_set(e, "ptxas not found at '%s' (set CUDA_HOME)", exe.p);
			sb_release(&exe);
			return -1;
		}
	}
	/* what ptxas is given, but the file names: the key's arguments */
	StrBuf args = STRBUF_INIT;
	sb_addf(&args, "-arch=%s", arch);
	if (entry)
		sb_addf(&args, " -e %s", entry);
	int rc = -1;
	StrBuf cmd = STRBUF_INIT, raw = STRBUF_INIT, id = STRBUF_INIT, file = STRBUF_INIT;
	char key[65] = "", *dir = NULL, *entry_path = NULL;
	char out[4096];
	int slot = -1, oslot = -1;
	Err ig = ERR_INIT;
	if (!(pc && pc->no_cache) && !flags && !cubin && ptxas_identity(exe.p, &id, &ig) == 0 &&
	    (dir = ptxas_cache_dir())) {
		ptxas_cache_key(text, len, args.p, id.p, key);
		StrBuf ep = STRBUF_INIT;
		sb_addf(&ep, "%s/%s", dir, key);
		entry_path = ep.p;
		if (pc)
			memcpy(pc->key, key, sizeof key);
		int status;
		if (cache_read(entry_path, &status, &file, &raw) == 0) {
			map_log(&raw, file.p, res, module_name, log);
			if (pc)
				pc->cached = true;
			rc = status;
			goto out;
		}
	}
	err_release(&ig);

	const char *tdir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/d4r-splice-XXXXXX.ptx",
	         tdir && *tdir ? tdir : "/tmp");
	/* registered: removed on every exit path (base/temp.h) */
	int fd = temp_mkstemps(tmp, 4, &slot);
	if (fd < 0) {
		err_set(e, "cannot create a temporary file: %s", strerror(errno));
		goto out;
	}
	FILE *fp = fdopen(fd, "w");
	if (!fp || fwrite(text, 1, len, fp) != len || fclose(fp) != 0) {
		err_set(e, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (cubin) {
		snprintf(out, sizeof out, "%s/d4r-splice-XXXXXX.cubin", tdir && *tdir ? tdir : "/tmp");
		int ofd = temp_mkstemps(out, 6, &oslot);
		if (ofd < 0) {
			err_set(e, "cannot create a temporary file: %s", strerror(errno));
			goto out;
		}
		close(ofd);
	}
	shell_quote(&cmd, exe.p);
	if (flags) {
		sb_addc(&cmd, ' ');
		sb_adds(&cmd, flags);
	}
	sb_adds(&cmd, " -arch=");
	shell_quote(&cmd, arch);
	if (entry) {
		sb_adds(&cmd, " -e ");
		shell_quote(&cmd, entry);
	}
	sb_adds(&cmd, " -o ");
	shell_quote(&cmd, cubin ? out : "/dev/null");
	sb_addc(&cmd, ' ');
	shell_quote(&cmd, tmp);
	sb_adds(&cmd, " 2>&1");
	FILE *pp = popen(cmd.p, "r");
	if (!pp) {
		err_set(e, "cannot run '%s': %s", exe.p, strerror(errno));
		goto out;
	}
	sb_read_stream(&raw, pp);
	int status = pclose(pp);
	map_log(&raw, tmp, res, module_name, log);
	if (status == -1 || !WIFEXITED(status)) {
		err_set(e, "ptxas did not finish");
		goto out;
	}
	if (WEXITSTATUS(status) == 127) {
		err_set(e, "cannot run '%s'", exe.p);
		goto out;
	}
	rc = WEXITSTATUS(status) == 0 ? 0 : 1;
	if (rc == 0 && cubin) {
		char *data;
		size_t n;
		if (read_file(out, &data, &n, e) < 0) {
			rc = -1;
			goto out;
		}
		sb_addn(cubin, data, n);
		free(data);
	}
	if (entry_path)
		cache_write(dir, entry_path, rc, tmp, &raw);
out:
	if (oslot >= 0)
		temp_remove(oslot);
	if (slot >= 0)
		temp_remove(slot);
	err_release(&ig);
	free(dir);
	free(entry_path);
	sb_release(&file);
	sb_release(&id);
	sb_release(&raw);
	sb_release(&args);
	sb_release(&cmd);
	sb_release(&exe);
	return rc;
}

int splice_ptxas(const char *text, size_t len, const char *arch, const char *entry,
                 const SpliceResult *res, const char *module_name, PtxasCache *pc,
                 StrBuf *log, Err *e)
{
	return run_ptxas(text, len, arch, entry, NULL, NULL, res, module_name, pc, log, e);
}

int splice_ptxas_cubin(const char *text, size_t len, const char *arch, const char *entry,
                       const char *flags, StrBuf *cubin, StrBuf *log, Err *e)
{
	return run_ptxas(text, len, arch, entry, flags, cubin, NULL, "module", NULL, log, e);
}
