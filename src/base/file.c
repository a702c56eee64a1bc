/*
 * file.c - mapped inputs, atomic outputs.
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int map_open(MapFile *mf, const char *path, Err *e)
{
	memset(mf, 0, sizeof(*mf));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int er = errno;
		close(fd);
		return err_set(e, "cannot stat '%s': %s", path, strerror(er));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return err_set(e, "'%s' is a directory", path);
	}
	mf->path = xstrdup(path);
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			mf->p = p;
			mf->n = (size_t)st.st_size;
			mf->mapped = 1;
			return 0;
		}
	}
	/* Empty files, pipes and anything mmap refuses: read it. */
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		int er = errno;
		close(fd);
		free(mf->path);
		return err_set(e, "cannot read '%s': %s", path, strerror(er));
	}
	StrBuf sb = STRBUF_INIT;
	int rc = sb_read_stream(&sb, f);
	int er = errno;
	fclose(f);
	if (rc < 0) {
		sb_release(&sb);
		free(mf->path);
		return err_set(e, "cannot read '%s': %s", path, strerror(er));
	}
	if (!sb.p)
		sb_grow(&sb, 0), sb.p[0] = 0;
	mf->p = sb.p;
	mf->n = sb.n;
	mf->mapped = 0;
	return 0;
}

void map_close(MapFile *mf)
{
	if (mf->mapped)
		munmap((void *)mf->p, mf->n);
	else
		free((void *)mf->p);
	free(mf->path);
	memset(mf, 0, sizeof(*mf));
}

int out_open(OutFile *o, const char *path, Err *e)
{
	memset(o, 0, sizeof(*o));
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	o->path = xstrdup(path);
	size_t n = strlen(path) + 32;
	o->tmp = xmalloc(n);
	snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int er = errno;
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return err_set(e, "cannot create '%s': %s", path, strerror(er));
	}
	fchmod(fd, 0644);
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		int er = errno;
		close(fd);
		unlink(o->tmp);
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return err_set(e, "cannot write '%s': %s", path, strerror(er));
	}
	return 0;
}

int out_commit(OutFile *o, Err *e)
{
	if (!o->path) {
		if (fflush(o->f) != 0 || ferror(o->f))
			return err_set(e, "cannot write to standard output: %s",
			               strerror(errno));
		return 0;
	}
	int bad = fflush(o->f) != 0 || ferror(o->f);
	int er = errno;
	if (fclose(o->f) != 0 && !bad) {
		bad = 1;
		er = errno;
	}
	o->f = NULL;
	if (!bad && rename(o->tmp, o->path) != 0) {
		bad = 1;
		er = errno;
	}
	int rc = 0;
	if (bad) {
		unlink(o->tmp);
		rc = err_set(e, "cannot write '%s': %s", o->path, strerror(er));
	}
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	return rc;
}

void out_abort(OutFile *o)
{
	if (o->path) {
		if (o->f)
			fclose(o->f);
		unlink(o->tmp);
		free(o->path);
		free(o->tmp);
	}
	memset(o, 0, sizeof(*o));
}

int write_file_atomic(const char *path, const void *p, size_t n, Err *e)
{
	OutFile o;
	if (out_open(&o, path, e) < 0)
		return -1;
	if (n && fwrite(p, 1, n, o.f) != n) {
		int er = errno;
		out_abort(&o);
		return err_set(e, "cannot write '%s': %s", path, strerror(er));
	}
	return out_commit(&o, e);
}

int read_file(const char *path, char **out, size_t *n, Err *e)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return err_set(e, "cannot open '%s': %s", path, strerror(errno));
	StrBuf sb = STRBUF_INIT;
	int rc = sb_read_stream(&sb, f);
	int er = errno;
	fclose(f);
	if (rc < 0) {
		sb_release(&sb);
		return err_set(e, "cannot read '%s': %s", path, strerror(er));
	}
	if (!sb.p)
		sb_grow(&sb, 0), sb.p[0] = 0;
	*out = sb.p;
	*n = sb.n;
	return 0;
}

int mkdir_p(const char *path, Err *e)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			int er = errno;
			free(p);
			return err_set(e, "cannot create directory '%s': %s", path,
			               strerror(er));
		}
		*s = '/';
	}
	int rc = 0;
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		rc = err_set(e, "cannot create directory '%s': %s", path,
		             strerror(errno));
	free(p);
	return rc;
}
