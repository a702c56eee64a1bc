/*
 * child.h - running GPU work in a child process with a time limit.
 *
 * A spliced kernel may fault (illegal address, misaligned access) and leave
 * its CUDA context unusable, or spin forever.  Neither may take the tool
 * down or hide the original module's result, so every GPU job runs in a
 * forked child.  The child sends records up a pipe: stage marks ("jit",
 * "launch") and results (a status, a message, a payload of bytes).  The
 * parent reads them until the pipe closes, and judges how the child ended:
 *
 *   ok      the child sent a result and exited 0
 *   error   the child sent an error (a CUDA error that is not a fault, a
 *           JIT failure, a missing file)
 *   fault   the child sent a fault (the kernel faulted), or died of a
 *           signal (SIGSEGV, SIGBUS, SIGABRT in the driver...)
 *   hang    the time limit passed; the child was killed with SIGKILL
 *
 * The body of the child is a function pointer, so the machinery is tested
 * with stand-in children that sleep, crash or send data (no GPU needed).
 *
 * The time limit: a child runs under `jit_limit_s` from its start and from
 * every stage it marks "jit..."; every stage it marks "launch..." gives it
 * `timeout_s` from then on.  JIT of a large vendor module may take a minute
 * when nothing is cached, and that is not a hang of the kernel under test.
 */
#ifndef D4R_GPU_CHILD_H
#define D4R_GPU_CHILD_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"

typedef enum {
	GPU_OK = 0,
	GPU_ERROR,
	GPU_FAULT,
	GPU_HANG,
} GpuStatus;

const char *gpu_status_name(GpuStatus s);

/* The child's end of the pipe. */
typedef struct {
	int fd;
} GpuChan;

/* Marks a stage: "jit ..." (restarts the jit_limit_s clock), "launch ..."
 * (restarts the timeout_s clock), anything else (clock unchanged). */
void gpu_chan_stage(GpuChan *ch, const char *stage);
/* Sends one result record.  A body may send several (one per module). */
void gpu_chan_result(GpuChan *ch, GpuStatus st, const char *msg, const void *payload,
                     size_t n);

/* The child's work.  Its return value becomes the exit status. */
typedef int (*GpuChildBody)(void *arg, GpuChan *ch);

typedef struct {
	GpuStatus status;
	char *message;        /* malloc'd; NULL when ok */
	unsigned char *payload;
	size_t npayload;
} GpuChildRecord;

typedef struct {
	GpuStatus status;     /* how the child ended (worst of its records) */
	char *message;        /* what ended it, for error/fault/hang */
	char *stage;          /* the last stage it marked ("" when none) */
	GpuChildRecord *recs; /* results it sent, in order */
	size_t nrecs;
	double seconds;       /* wall time of the child */
	int exit_code;        /* -1 when killed by a signal */
	int signal;           /* 0 when it exited */
} GpuChildResult;

/*
 * Forks, runs body(arg, ch) in the child and collects what it sends.
 * Returns 0 when the child ran (whatever became of it: see r->status), -1
 * when it could not be started (fork or pipe failed).
 */
int gpu_child_run(GpuChildBody body, void *arg, double timeout_s, double jit_limit_s,
                  GpuChildResult *r, Err *e);
void gpu_child_result_release(GpuChildResult *r);

/* One child of gpu_child_run_all: its argument in, its end out. */
typedef struct {
	void *arg;          /* what body gets */
	int rc;             /* gpu_child_run's return */
	GpuChildResult cr;  /* when rc == 0; release it with gpu_child_result_release */
	Err e;              /* why it could not start, when rc < 0; release it */
} GpuChildTask;

/*
 * Runs body(tasks[i].arg) for every task, each in a child of its own
 * (gpu_child_run, with the same limits for all), every child at the same
 * time: this thread forks every child, then one thread per task waits for
 * its child (so that no fork is made while another thread allocates).  With
 * `serial`, one after the other in this thread; a child whose thread cannot
 * be made is waited for in this thread.  Returns when every child has ended; *wall_s (may be NULL) gets
 * the seconds from the first start to the last end.
 */
void gpu_child_run_all(GpuChildBody body, GpuChildTask *tasks, size_t n, double timeout_s,
                       double jit_limit_s, bool serial, double *wall_s);

/*
 * A watcher of the waits: while gpu_child_run waits for a child it calls
 * fn(ctx, stage, seconds) about four times a second with the stage the
 * child marked last ("jit spliced", "" before the first) and the seconds
 * since it marked it, and fn(ctx, NULL, 0) when the child has ended.  For
 * the command's progress line (base/progress.h); process-wide, set before
 * any child runs, and called from whichever thread waits.  NULL: none.
 */
typedef void (*GpuChildWatch)(void *ctx, const char *stage, double seconds);
void gpu_child_watch(GpuChildWatch fn, void *ctx);

/* Reading a record's payload: 64-bit numbers and spans, bounds-checked.
 * A read past the end sets bad and gives 0 (or NULL); the caller checks
 * bad once at the end. */
typedef struct {
	const unsigned char *p;
	size_t n, at;
	int bad;
} GpuRd;
uint64_t gpu_rd_u64(GpuRd *r);
double gpu_rd_f64(GpuRd *r);
/* A pointer to the next n bytes (inside the payload), or NULL. */
const unsigned char *gpu_rd_span(GpuRd *r, uint64_t n);

#endif
