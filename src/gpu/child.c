/*
 * child.c - fork, a pipe of records, a time limit, and a verdict on how the
 * child ended.  See child.h for the contract.
 *
 * Record on the pipe: 1 byte type ('S' stage, 'R' result), u32 status,
 * u32 message length, u64 payload length (host byte order: both ends are
 * the same program), then the message and the payload.  The parent reads
 * while it waits, so a large frame never blocks the child on a full pipe.
 *
 * Children may be started from several threads at once (gpu/probe.c runs
 * two modules side by side).  From the pipe's creation to the parent
 * closing its write end no other thread forks (fork_lock): a child forked
 * in between would inherit that write end and hold the other child's pipe
 * open, so its end would not be seen until both had exited.
 */
#include "gpu/child.h"

#include "base/temp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *gpu_status_name(GpuStatus s)
{
	switch (s) {
	case GPU_OK: return "ok";
	case GPU_ERROR: return "error";
	case GPU_FAULT: return "fault";
	case GPU_HANG: return "hang";
	}
	return "?";
}

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;     /* the parent has gone: nothing to report to */
		}
		c += w;
		n -= (size_t)w;
	}
}

static void send_rec(GpuChan *ch, char type, uint32_t st, const char *msg,
                     const void *payload, uint64_t n)
{
	uint32_t ml = msg ? (uint32_t)strlen(msg) : 0;
	unsigned char hdr[17];
	hdr[0] = (unsigned char)type;
	memcpy(hdr + 1, &st, 4);
	memcpy(hdr + 5, &ml, 4);
	memcpy(hdr + 9, &n, 8);
	write_all(ch->fd, hdr, sizeof hdr);
	if (ml)
		write_all(ch->fd, msg, ml);
	if (n)
		write_all(ch->fd, payload, n);
}

void gpu_chan_stage(GpuChan *ch, const char *stage)
{
	send_rec(ch, 'S', 0, stage, NULL, 0);
}

void gpu_chan_result(GpuChan *ch, GpuStatus st, const char *msg, const void *payload,
                     size_t n)
{
	send_rec(ch, 'R', (uint32_t)st, msg, payload, n);
}

/* Takes the complete records at the front of buf; returns bytes used. */
static size_t parse_records(const unsigned char *buf, size_t n, GpuChildResult *r,
                            double *deadline, double timeout_s, double jit_limit_s)
{
	size_t used = 0;
	while (n - used >= 17) {
		const unsigned char *h = buf + used;
		uint32_t st, ml;
		uint64_t pl;
		memcpy(&st, h + 1, 4);
		memcpy(&ml, h + 5, 4);
		memcpy(&pl, h + 9, 8);
		if (n - used - 17 < ml || n - used - 17 - ml < pl)
			break;
		const char *msg = (const char *)h + 17;
		if (h[0] == 'S') {
			free(r->stage);
			r->stage = xstrndup(msg, ml);
			if (!strncmp(r->stage, "launch", 6))
				*deadline = now_seconds() + timeout_s;
			else if (!strncmp(r->stage, "jit", 3))
				*deadline = now_seconds() + jit_limit_s;
		} else {
			r->recs = xrealloc(r->recs, (r->nrecs + 1) * sizeof(*r->recs));
			GpuChildRecord *rec = &r->recs[r->nrecs++];
			rec->status = st <= GPU_HANG ? (GpuStatus)st : GPU_ERROR;
			rec->message = ml ? xstrndup(msg, ml) : NULL;
			rec->npayload = (size_t)pl;
			rec->payload = xmalloc(pl + 1);
			memcpy(rec->payload, msg + ml, pl);
		}
		used += 17 + ml + pl;
	}
	return used;
}

static GpuChildWatch watch_fn;
static void *watch_ctx;

void gpu_child_watch(GpuChildWatch fn, void *ctx)
{
	watch_fn = fn;
	watch_ctx = ctx;
}

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

/* A child that has been forked and not yet waited for. */
typedef struct {
	pid_t pid;
	int fd;    /* the read end of its pipe */
	double t0; /* when it was forked */
} Started;

static int child_start(GpuChildBody body, void *arg, Started *c, Err *e)
{
	int fds[2];
	pthread_mutex_lock(&fork_lock);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		pthread_mutex_unlock(&fork_lock);
		return err_set(e, "cannot create a pipe: %s", strerror(errno));
	}
	fflush(stdout);
	fflush(stderr);
	/* The child inherits the handlers that remove its temporary files (the
	 * compiled-image cache's) when a signal ends it; the parent passes a
	 * terminating signal on to it (base/temp.h). */
	temp_install();
	c->t0 = now_seconds();
	pid_t pid = fork();
	if (pid < 0) {
		int er = errno;
		close(fds[0]);
		close(fds[1]);
		pthread_mutex_unlock(&fork_lock);
		return err_set(e, "cannot fork: %s", strerror(er));
	}
	if (pid == 0) {
		close(fds[0]);
		signal(SIGPIPE, SIG_IGN);
		/* A crash must end the child, whatever handlers the parent has
		 * (test frameworks catch SIGSEGV and jump back into themselves). */
		static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
		for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
			signal(fatal[i], SIG_DFL);
		GpuChan ch = {fds[1]};
		int rc = body(arg, &ch);
		close(fds[1]);
		_exit(rc & 0xff);
	}
	close(fds[1]);
	pthread_mutex_unlock(&fork_lock);
	temp_child_add(pid);
	c->pid = pid;
	c->fd = fds[0];
	return 0;
}

/* Reads what the started child sends until it ends, within the limits;
 * its verdict into r (set up by the caller).  Always 0. */
static int child_wait(Started *c, double timeout_s, double jit_limit_s, GpuChildResult *r)
{
	pid_t pid = c->pid;
	double t0 = c->t0;
	int fds[1] = {c->fd};
	double deadline = t0 + jit_limit_s;
	char *stage_seen = xstrdup("");
	double stage_t0 = t0;
	StrBuf in = STRBUF_INIT;
	size_t done = 0;
	int killed = 0, eof = 0;
	while (!eof) {
		double left = deadline - now_seconds();
		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		struct pollfd pfd = {fds[0], POLLIN, 0};
		int ms = left > 1000 ? 1000000 : (int)(left * 1000) + 1;
		if (watch_fn) {
			/* the stage's clock restarts when the child marks a new one */
			if (strcmp(stage_seen, r->stage)) {
				free(stage_seen);
				stage_seen = xstrdup(r->stage);
				stage_t0 = now_seconds();
			}
			watch_fn(watch_ctx, r->stage, now_seconds() - stage_t0);
			ms = MIN(ms, 250);
		}
		int pr = poll(&pfd, 1, ms);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		sb_grow(&in, 65536);
		ssize_t got = read(fds[0], in.p + in.n, 65536);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			break;
		}
		if (got == 0) {
			eof = 1;
			break;
		}
		in.n += (size_t)got;
		done += parse_records((unsigned char *)in.p + done, in.n - done, r, &deadline,
		                      timeout_s, jit_limit_s);
	}
	close(fds[0]);
	free(stage_seen);
	if (watch_fn)
		watch_fn(watch_ctx, NULL, 0);
	/* The pipe closed (or broke): the child is exiting; a child that
	 * closed its end and kept running still gets the rest of its time. */
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, killed ? 0 : WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (w == 0) {
			if (now_seconds() >= deadline) {
				kill(pid, SIGKILL);
				killed = 1;
				continue;
			}
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
		}
	}
	temp_child_done(pid);
	r->seconds = now_seconds() - t0;
	sb_release(&in);

	char buf[512];
	if (killed) {
		r->status = GPU_HANG;
		r->exit_code = -1;
		r->signal = SIGKILL;
		double limit = strncmp(r->stage, "launch", 6) ? jit_limit_s : timeout_s;
		snprintf(buf, sizeof buf,
		         "no result after %.1f s in stage '%s' (limit %.0f s): killed; "
		         "the kernel hangs or runs too long (raise --timeout)",
		         r->seconds, *r->stage ? r->stage : "start", limit);
		r->message = xstrdup(buf);
		return 0;
	}
	if (WIFSIGNALED(status)) {
		r->status = GPU_FAULT;
		r->exit_code = -1;
		r->signal = WTERMSIG(status);
		snprintf(buf, sizeof buf, "the child process died of signal %d (%s) in stage '%s'",
		         r->signal, strsignal(r->signal), *r->stage ? r->stage : "start");
		r->message = xstrdup(buf);
		return 0;
	}
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r->status = GPU_OK;
	for (size_t i = 0; i < r->nrecs; i++) {
		GpuStatus s = r->recs[i].status;
		if (s > r->status || (s != GPU_OK && !r->message)) {
			if (s > r->status)
				r->status = s;
			free(r->message);
			r->message = xstrdup(r->recs[i].message ? r->recs[i].message : "");
		}
	}
	if (!r->nrecs) {
		r->status = GPU_ERROR;
		snprintf(buf, sizeof buf, "the child process exited with status %d without a result",
		         r->exit_code);
		r->message = xstrdup(buf);
	}
	return 0;
}

int gpu_child_run(GpuChildBody body, void *arg, double timeout_s, double jit_limit_s,
                  GpuChildResult *r, Err *e)
{
	memset(r, 0, sizeof(*r));
	r->stage = xstrdup("");
	Started c;
	if (child_start(body, arg, &c, e) < 0)
		return -1;
	return child_wait(&c, timeout_s, jit_limit_s, r);
}

void gpu_child_result_release(GpuChildResult *r)
{
	for (size_t i = 0; i < r->nrecs; i++) {
		free(r->recs[i].message);
		free(r->recs[i].payload);
	}
	free(r->recs);
	free(r->message);
	free(r->stage);
	memset(r, 0, sizeof(*r));
}

/* ---- children side by side ------------------------------------------------- */

/*
 * Every child is forked from this thread before any waiting thread exists,
 * so no thread of ours is inside malloc (or holds any other lock) when a
 * child is made.  glibc's malloc survives a fork from a busy process, but
 * the sanitizers' allocators (GCC 12, LLVM 14) do not: a child forked
 * while another thread allocated would wait forever for a lock that no
 * thread of its own holds.  The threads only read pipes and wait.
 */
typedef struct {
	Started c;
	GpuChildTask *task;
	double timeout_s, jit_limit_s;
} Side;

static void *side_thread(void *p)
{
	Side *s = p;
	s->task->rc = child_wait(&s->c, s->timeout_s, s->jit_limit_s, &s->task->cr);
	return NULL;
}

void gpu_child_run_all(GpuChildBody body, GpuChildTask *tasks, size_t n, double timeout_s,
                       double jit_limit_s, bool serial, double *wall_s)
{
	Side *sides = xcalloc(n + 1, sizeof(Side));
	pthread_t *th = xcalloc(n + 1, sizeof(pthread_t));
	bool *started = xcalloc(n + 1, sizeof(bool));
	double t0 = now_seconds();
	if (serial) {
		for (size_t k = 0; k < n; k++) {
			tasks[k].e = (Err)ERR_INIT;
			tasks[k].rc = gpu_child_run(body, tasks[k].arg, timeout_s, jit_limit_s,
			                            &tasks[k].cr, &tasks[k].e);
		}
	} else {
		for (size_t k = 0; k < n; k++) {
			GpuChildResult *r = &tasks[k].cr;
			memset(r, 0, sizeof(*r));
			r->stage = xstrdup("");
			tasks[k].e = (Err)ERR_INIT;
			sides[k] = (Side){{0}, &tasks[k], timeout_s, jit_limit_s};
			tasks[k].rc = child_start(body, tasks[k].arg, &sides[k].c, &tasks[k].e);
			if (tasks[k].rc < 0) {
				free(r->stage);
				r->stage = NULL;
			}
		}
		for (size_t k = 0; k < n; k++) {
			if (tasks[k].rc < 0)
				continue;
			if (pthread_create(&th[k], NULL, side_thread, &sides[k]) == 0)
				started[k] = true;
		}
		/* a child whose waiting thread could not be made is waited for
		 * here, the others meanwhile by their threads */
		for (size_t k = 0; k < n; k++)
			if (tasks[k].rc == 0 && !started[k])
				side_thread(&sides[k]);
		for (size_t k = 0; k < n; k++)
			if (started[k])
				pthread_join(th[k], NULL);
	}
	if (wall_s)
		*wall_s = now_seconds() - t0;
	free(sides);
	free(th);
	free(started);
}

/* ---- reading a payload ------------------------------------------------------ */

uint64_t gpu_rd_u64(GpuRd *r)
{
	uint64_t v = 0;
	if (r->bad || r->n - r->at < 8) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p + r->at, 8);
	r->at += 8;
	return v;
}

double gpu_rd_f64(GpuRd *r)
{
	uint64_t u = gpu_rd_u64(r);
	double v;
	memcpy(&v, &u, 8);
	return v;
}

const unsigned char *gpu_rd_span(GpuRd *r, uint64_t n)
{
	if (r->bad || r->n - r->at < n) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *p = r->p + r->at;
	r->at += (size_t)n;
	return p;
}
