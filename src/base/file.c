/*
 * file.c - mapped inputs, and the one way outputs are written (see file.h
 * for the rules).
 */
#include "file.h"

#include "temp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Standard input, read once: "-" may be opened again (recipe check reads
 * its --module once per recipe) and gets the same bytes. */
static StrBuf stdin_bytes;
static bool stdin_read;

static int map_stdin(MapFile *mf, Err *e)
{
	if (!stdin_read) {
		if (sb_read_stream(&stdin_bytes, stdin) < 0)
			return err_set(e, "cannot read '%s': %s", MAP_STDIN_NAME, strerror(errno));
		stdin_read = true;
	}
	char *p = xmalloc(stdin_bytes.n + 1);
	memcpy(p, stdin_bytes.p ? stdin_bytes.p : "", stdin_bytes.n);
	p[stdin_bytes.n] = 0;
	mf->p = p;
	mf->n = stdin_bytes.n;
	mf->path = xstrdup(MAP_STDIN_NAME);
	mf->mapped = 0;
	return 0;
}

int map_open(MapFile *mf, const char *path, Err *e)
{
	memset(mf, 0, sizeof(*mf));
	if (!strcmp(path, "-"))
		return map_stdin(mf, e);
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

const char *map_name(const char *path)
{
	return path && !strcmp(path, "-") ? MAP_STDIN_NAME : path;
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

/* ---- inputs: the files no output may replace -------------------------- */

typedef struct {
	dev_t dev;
	ino_t ino;
	char *path;
	char *what;
} Input;

static VEC(Input) inputs;

void file_input_add(const char *path, const char *what)
{
	struct stat st;
	if (!path || strcmp(path, "-") == 0 || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	for (size_t i = 0; i < inputs.n; i++)
		if (inputs.v[i].dev == st.st_dev && inputs.v[i].ino == st.st_ino)
			return;
	Input in = {st.st_dev, st.st_ino, xstrdup(path), xstrdup(what)};
	VEC_PUSH(inputs, in);
}

void file_inputs_clear(void)
{
	for (size_t i = 0; i < inputs.n; i++) {
		free(inputs.v[i].path);
		free(inputs.v[i].what);
	}
	VEC_FREE(inputs);
	memset(&inputs, 0, sizeof inputs);
}

static const Input *input_of(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return NULL;
	for (size_t i = 0; i < inputs.n; i++)
		if (inputs.v[i].dev == st->st_dev && inputs.v[i].ino == st->st_ino)
			return &inputs.v[i];
	return NULL;
}

bool file_is_input(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && input_of(&st) != NULL;
}

static int refuse(const char *path, const Input *in, Err *e)
{
	if (!strcmp(path, in->path))
		return err_set(e, "refusing to write '%s': it is the %s this command reads", path,
		               in->what);
	return err_set(e, "refusing to write '%s': it is the same file as the %s '%s', which "
	                  "this command reads", path, in->what, in->path);
}

/* A new output `path` (it does not exist): its folder must be one that
 * exists, or with `makes` (the verb creates it) the nearest folder above it
 * that exists must be a folder, not a file. */
static int check_folder(const char *path, bool makes, Err *e)
{
	char *dir = xstrdup(path);
	int rc = 0;
	for (bool first = true;; first = false) {
		char *sl = strrchr(dir, '/');
		if (!sl)
			break; /* the current folder */
		if (sl == dir)
			sl[1] = 0; /* "/" */
		else
			*sl = 0;
		struct stat st;
		if (stat(dir, &st) == 0) {
			if (!S_ISDIR(st.st_mode))
				rc = err_set(e, "cannot write '%s': '%s' is not a folder", path, dir);
			break;
		}
		if (errno != ENOENT && errno != ENOTDIR) {
			rc = err_set(e, "cannot write '%s': '%s': %s", path, dir, strerror(errno));
			break;
		}
		if (first && !makes) {
			rc = err_set(e, "cannot write '%s': there is no folder '%s' (create it first)",
			             path, dir);
			break;
		}
		if (sl == dir)
			break;
	}
	free(dir);
	return rc;
}

static int check_out(const char *path, bool makes, Err *e)
{
	if (!path || strcmp(path, "-") == 0)
		return 0;
	struct stat st;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return check_folder(path, makes, e);
		return err_set(e, "cannot write '%s': %s", path, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return err_set(e, "cannot write '%s': it is a directory", path);
	const Input *in = input_of(&st);
	return in ? refuse(path, in, e) : 0;
}

int out_check(const char *path, Err *e)
{
	return check_out(path, false, e);
}

int out_check_mkdir(const char *path, Err *e)
{
	return check_out(path, true, e);
}

/* ---- outputs ----------------------------------------------------------- */

/* The file that `path` names once the symbolic links of its last
 * component are followed, as far as they lead (a dangling link names the
 * file to create); malloc'd. */
static char *link_target(const char *path)
{
	char *cur = xstrdup(path);
	for (int hops = 0; hops < 40; hops++) {
		struct stat ls;
		if (lstat(cur, &ls) < 0 || !S_ISLNK(ls.st_mode))
			break;
		char buf[4096];
		ssize_t n = readlink(cur, buf, sizeof buf - 1);
		if (n < 0)
			break;
		buf[n] = 0;
		const char *slash = strrchr(cur, '/');
		char *next;
		if (buf[0] == '/' || !slash) {
			next = xstrdup(buf);
		} else {
			size_t d = (size_t)(slash - cur) + 1;
			next = xmalloc(d + (size_t)n + 1);
			memcpy(next, cur, d);
			memcpy(next + d, buf, (size_t)n + 1);
		}
		free(cur);
		cur = next;
	}
	return cur;
}

/* Standard output or error, when `st` is the file it writes to: its
 * descriptor, else -1. */
static int std_fd_of(const struct stat *st)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat s;
		if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

/* A descriptor that writes through to what `path` is (stat in *st): our
 * own standard output or error, a socket (connected), a device or a FIFO
 * (opened for writing).  -1 with errno set. */
static int open_through(const char *path, const struct stat *st)
{
	int sfd = std_fd_of(st);
	if (sfd >= 0) {
		fflush(sfd == 1 ? stdout : stderr);
		return fcntl(sfd, F_DUPFD_CLOEXEC, 3);
	}
	if (S_ISSOCK(st->st_mode)) {
		struct sockaddr_un a;
		memset(&a, 0, sizeof a);
		a.sun_family = AF_UNIX;
		if (strlen(path) >= sizeof a.sun_path) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(a.sun_path, path, strlen(path) + 1);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
			int er = errno;
			close(fd);
			errno = er;
			return -1;
		}
		return fd;
	}
	return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

int out_open(OutFile *o, const char *path, Err *e)
{
	memset(o, 0, sizeof(*o));
	o->slot = -1;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return err_set(e, "cannot write '%s': %s", path, strerror(errno));
	if (exists && S_ISDIR(st.st_mode))
		return err_set(e, "cannot write '%s': it is a directory", path);
	const Input *in = exists ? input_of(&st) : NULL;
	if (in)
		return refuse(path, in, e);
	int fd;
	if (exists && (!S_ISREG(st.st_mode) || std_fd_of(&st) >= 0)) {
		/* written through: nothing is replaced */
		fd = open_through(path, &st);
		if (fd < 0)
			return err_set(e, "cannot write '%s': %s", path, strerror(errno));
		o->path = xstrdup(path);
	} else {
		/* a regular file or a new path: a temporary file beside the file
		 * (a symbolic link's target), renamed onto it on commit */
		char *target = link_target(path);
		size_t n = strlen(target) + 16;
		char *tmp = xmalloc(n);
		snprintf(tmp, n, "%s.tmpXXXXXX", target);
		fd = temp_mkstemps(tmp, 0, &o->slot);
		if (fd < 0) {
			int er = errno;
			free(target);
			free(tmp);
			o->slot = -1;
			return err_set(e, "cannot create '%s': %s", path, strerror(er));
		}
		/* the file it replaces keeps its permissions and, where we may
		 * (root), its owner */
		fchmod(fd, exists ? (st.st_mode & 0777) : 0644);
		if (exists && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
		    fchown(fd, st.st_uid, st.st_gid) < 0) {
			/* not ours to give away: the new file is ours */
		}
		o->path = xstrdup(path);
		o->target = target;
		o->tmp = tmp;
	}
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		int er = errno;
		close(fd);
		out_abort(o);
		return err_set(e, "cannot write '%s': %s", path, strerror(er));
	}
	return 0;
}

/* Removes the temporary file and frees what o holds. */
static void out_release(OutFile *o, bool remove_tmp)
{
	if (o->tmp) {
		if (o->slot >= 0)
			remove_tmp ? temp_remove(o->slot) : temp_keep(o->slot);
		else if (remove_tmp)
			unlink(o->tmp);
	}
	free(o->path);
	free(o->target);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	o->slot = -1;
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
	if (!bad && o->tmp && rename(o->tmp, o->target) != 0) {
		bad = 1;
		er = errno;
	}
	int rc = bad ? err_set(e, "cannot write '%s': %s", o->path, strerror(er)) : 0;
	out_release(o, bad);
	return rc;
}

void out_abort(OutFile *o)
{
	if (o->path && o->f)
		fclose(o->f);
	o->f = NULL;
	out_release(o, true);
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

char *user_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	StrBuf sb = STRBUF_INIT;
	if (x && *x == '/') {
		sb_addf(&sb, "%s/d4r-splice", x);
		return sb.p;
	}
	const char *home = getenv("HOME");
	if (home && *home) {
		sb_addf(&sb, "%s/.cache/d4r-splice", home);
		return sb.p;
	}
	return NULL;
}
