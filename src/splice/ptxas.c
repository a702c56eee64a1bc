/*
 * ptxas.c - the offline check of a spliced module: run ptxas on it and map
 * its "line N" back to where the line came from (the template, the cut, or
 * the module outside the cut), so an error in a native phase points at the
 * template line the author wrote.
 */
#include "splice.h"

#include "base/file.h"
#include "base/temp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* splice_ptxas with `flags` (may be NULL) and the cubin kept in *cubin
 * when given (else -o /dev/null). */
static int run_ptxas(const char *text, size_t len, const char *arch, const char *entry,
                     const char *flags, const SpliceResult *res, const char *module_name,
                     StrBuf *log, StrBuf *cubin, Err *e)
{
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
	const char *tdir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/d4r-splice-XXXXXX.ptx", tdir && *tdir ? tdir : "/tmp");
	int slot;   /* registered: removed on every exit path (base/temp.h) */
	int fd = temp_mkstemps(tmp, 4, &slot);
	if (fd < 0) {
		sb_release(&exe);
		return err_set(e, "cannot create a temporary file: %s", strerror(errno));
	}
	FILE *fp = fdopen(fd, "w");
	if (!fp || fwrite(text, 1, len, fp) != len || fclose(fp) != 0) {
		temp_remove(slot);
		sb_release(&exe);
		return err_set(e, "cannot write '%s': %s", tmp, strerror(errno));
	}
	char out[4096];
	int oslot = -1;
	if (cubin) {
		snprintf(out, sizeof out, "%s/d4r-splice-XXXXXX.cubin", tdir && *tdir ? tdir : "/tmp");
		int ofd = temp_mkstemps(out, 6, &oslot);
		if (ofd < 0) {
			temp_remove(slot);
			sb_release(&exe);
			return err_set(e, "cannot create a temporary file: %s", strerror(errno));
		}
		close(ofd);
	}
	StrBuf cmd = STRBUF_INIT;
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
	int rc = -1;
	if (!pp) {
		err_set(e, "cannot run '%s': %s", exe.p, strerror(errno));
		goto out;
	}
	StrBuf raw = STRBUF_INIT;
	sb_read_stream(&raw, pp);
	int status = pclose(pp);
	for (const char *p = raw.p, *end = raw.p + raw.n; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		map_line(p, n, tmp, res, module_name, log);
		p = nl ? nl + 1 : end;
	}
	sb_release(&raw);
	if (status == -1 || !WIFEXITED(status)) {
		err_set(e, "ptxas did not finish");
		goto out;
	}
	rc = WEXITSTATUS(status) == 0 ? 0 : 1;
	if (WEXITSTATUS(status) == 127) {
		err_set(e, "cannot run '%s'", exe.p);
		rc = -1;
	}
	if (rc == 0 && cubin) {
		char *data;
		size_t n;
		if (read_file(out, &data, &n, e) < 0)
			rc = -1;
		else {
			sb_addn(cubin, data, n);
			free(data);
		}
	}
out:
	if (oslot >= 0)
		temp_remove(oslot);
	temp_remove(slot);
	sb_release(&cmd);
	sb_release(&exe);
	return rc;
}

int splice_ptxas(const char *text, size_t len, const char *arch, const char *entry,
                 const SpliceResult *res, const char *module_name, StrBuf *log, Err *e)
{
	return run_ptxas(text, len, arch, entry, NULL, res, module_name, log, NULL, e);
}

int splice_ptxas_cubin(const char *text, size_t len, const char *arch, const char *entry,
                       const char *flags, StrBuf *cubin, StrBuf *log, Err *e)
{
	return run_ptxas(text, len, arch, entry, flags, NULL, "module", log, cubin, e);
}
