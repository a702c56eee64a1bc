/*
 * temp.h - temporary files that are removed on every exit path.
 *
 * A command makes temporary files beside its outputs (file.h: out_open) and
 * for ptxas runs; a child process (gpu/child.h) makes its own while it
 * writes the compiled-image cache.  Each one is registered here while it
 * exists.  What removes them:
 *
 *   - the code that made it, on success (renamed into place) and on error;
 *   - exit() and a return from main: an atexit handler;
 *   - SIGHUP, SIGINT, SIGQUIT, SIGPIPE and SIGTERM: a handler that removes
 *     this process's files, passes the signal on to the registered child
 *     processes (and waits for them a moment, so their files go too), then
 *     restores the default action and raises the signal again, so the
 *     process still ends by that signal and the exit status says so.
 *
 * A signal that is ignored when the handlers are installed stays ignored
 * (nohup, a background job of a shell without job control).
 *
 * Decisions:
 *   - The handler is async-signal-safe: the table is a fixed array of
 *     atomic pointers to paths copied at registration, and the handler only
 *     reads it and calls unlink, kill, waitpid, nanosleep, sigaction,
 *     sigprocmask and raise.  No malloc, no stdio.
 *   - Each entry records the process that registered it.  A forked child
 *     inherits the table, and must neither remove its parent's files nor
 *     stop its siblings: the handler and the atexit handler act only on the
 *     entries of getpid().
 *   - The table is a fixed size, TEMP_SLOTS files at once; a registration
 *     past it fails like a creation would (EMFILE), so every temporary
 *     file that exists is a registered one.  The tool holds a few at a
 *     time; more would be a leak, not a workload.
 *   - A slot's path is freed when it is released; a handler running in
 *     another thread at that moment could read freed memory.  The tool's
 *     threads (check's workers, extract's hashers) make no temporary files
 *     in the parent process, so every registration is the main thread's
 *     or a child's.
 *   - SIGKILL cannot be caught: a file made just before it stays behind.
 *     Its name says where it came from (NAME.tmpXXXXXX, d4r-splice-*.ptx).
 */
#ifndef D4R_TEMP_H
#define D4R_TEMP_H

#include <sys/types.h>

enum { TEMP_SLOTS = 256 };

/* Installs the signal and exit handlers (once; later calls do nothing).
 * temp_mkstemps does it; gpu_child_run calls it before fork, so a child
 * inherits them. */
void temp_install(void);

/*
 * mkstemps(3), registered: tmpl ends in "XXXXXX" and then `suffixlen`
 * bytes of suffix; the X's are replaced in place, the file is created
 * (O_EXCL, mode 0600) and registered, the name before the file, so no
 * moment exists where the file is there and unregistered.  Returns the
 * descriptor and sets *slot, or -1 with errno (EMFILE: the table is full).
 */
int temp_mkstemps(char *tmpl, int suffixlen, int *slot);
/* Removes the file of `slot` (unlink; a missing file is fine) and frees the
 * slot. */
void temp_remove(int slot);
/* Frees `slot` without touching the file: it was renamed into place. */
void temp_keep(int slot);

/* A child process to pass a terminating signal on to; temp_child_done
 * when it has been reaped. */
void temp_child_add(pid_t pid);
void temp_child_done(pid_t pid);

/* How many files of this process are registered (for tests). */
int temp_count(void);

#endif
