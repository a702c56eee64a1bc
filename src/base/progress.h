/*
 * progress.h - the one progress line of long work, on standard error.
 *
 *     check enc4: 3/11 recipes, 41 s, about 1 min 50 s left; phase-08.json: compiling
 * (driver JIT) 8 s
 *
 * Work that counts (recipes checked, phases spliced, files extracted)
 * says how much is done of how much (done/total), the time since it
 * started and an estimate of the time left (the mean time per item so
 * far, times the items left); work that waits (the driver's JIT of a
 * module, in a child process) says what it waits for and for how long.
 * The line is redrawn in place at most five times a second, cut to the
 * terminal's width, and erased when the work ends or before anything else
 * is written to the same terminal (progress_hide).
 *
 * Decisions:
 *  - It is drawn only when standard error is a terminal: never into a pipe
 *    or a file, so CI logs and scripts never see it.  progress_start
 *    returns NULL otherwise, and every function takes NULL as "no
 *    progress", so callers need no test of their own.
 *  - One line per process: the last progress started is the current one
 *    (progress_current), and a wait reported while there is none
 *    (progress_wait: the main job's JIT) draws a line of its own that goes
 *    when the wait ends.  Library code reports to the current line through
 *    a hook the command installs (gpu/child.h), never by printing.
 *  - Safe to call from several threads (check's workers): one mutex.
 */
#ifndef D4R_PROGRESS_H
#define D4R_PROGRESS_H

#include "base.h"

#include <stdio.h>

typedef struct Progress Progress;

/* A progress line for `what` ("check enc4", "extract") over `total` items
 * named `unit` ("recipes", "phases"; total 0: not counted), drawn on stderr
 * when it is a terminal; NULL when it is not. */
Progress *progress_start(const char *what, size_t total, const char *unit);
/* The line being drawn, or NULL. */
Progress *progress_current(void);
/* One more item done (`item`, the one done or next, may be NULL). */
void progress_step(Progress *p, const char *item);
/* What is being worked on now ("phase-08.json"), shown after the count. */
void progress_item(Progress *p, const char *item);
/* Free text after the item ("1203 modules, 45 duplicates, 300 MiB"). */
void progress_detail(Progress *p, const char *fmt, ...) PRINTF_LIKE(2, 3);
/*
 * A wait: `what` ("compiling spliced (driver JIT)") for `seconds` so far;
 * what == NULL ends it.  On the current line, else on a line of its own
 * (drawn when stderr is a terminal, erased when the wait ends).
 */
void progress_wait(const char *what, double seconds);
/* Erases the line until the next update (before writing results to a
 * terminal). */
void progress_hide(Progress *p);
/* Erases the line and frees it. */
void progress_end(Progress *p);

/* "41 s", "1 min 50 s", "2 h 05 min" into buf. */
void progress_duration(double seconds, char *buf, size_t n);

#endif
