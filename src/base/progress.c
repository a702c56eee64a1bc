/*
 * progress.c - the progress line (progress.h says what it shows and when).
 *
 * The line is drawn with a carriage return and an erase-to-end-of-line
 * (ESC [ K), so each drawing replaces the last, and is cut to the
 * terminal's width so that it never wraps (a wrapped line cannot be
 * erased from its end).
 */
#include "progress.h"

#include "strbuf.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct Progress {
	char *what, *unit, *item;
	size_t total, done;
	char detail[256];
	char wait[160]; /* what it waits for; "" when it does not */
	double wait_s;
	double t0, last_draw;
	bool drawn;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Progress *current;   /* the line progress_start made last */
static Progress *wait_line; /* a wait's own line while there is no current */

/* Redraws at most this often, in seconds. */
#define REDRAW_S 0.2

static bool on_terminal(void)
{
	return isatty(STDERR_FILENO) == 1;
}

static size_t columns(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8)
		return ws.ws_col;
	return 80;
}

void progress_duration(double s, char *buf, size_t n)
{
	if (s < 0)
		s = 0;
	unsigned long t = (unsigned long)(s + 0.5);
	if (t < 60)
		snprintf(buf, n, "%lu s", t);
	else if (t < 3600)
		snprintf(buf, n, "%lu min %02lu s", t / 60, t % 60);
	else
		snprintf(buf, n, "%lu h %02lu min", t / 3600, t / 60 % 60);
}

static void erase(Progress *p)
{
	if (p && p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = false;
	}
}

/* Draws p when `force` or when the last drawing is old enough.  Under the
 * lock. */
static void draw(Progress *p, bool force)
{
	double now = now_seconds();
	if (!force && p->drawn && now - p->last_draw < REDRAW_S)
		return;
	p->last_draw = now;
	StrBuf l = STRBUF_INIT;
	char d[32];
	if (p->what)
		sb_addf(&l, "%s: ", p->what);
	if (p->total) {
		progress_duration(now - p->t0, d, sizeof d);
		sb_addf(&l, "%zu/%zu %s, %s", p->done, p->total, p->unit ? p->unit : "",
		        d);
		if (p->done && p->done < p->total) {
			double per = (now - p->t0) / (double)p->done;
			progress_duration(per * (double)(p->total - p->done), d,
			                  sizeof d);
			sb_addf(&l, ", about %s left", d);
		}
	}
	bool sep = p->total != 0;
	if (p->item && *p->item) {
		sb_addf(&l, "%s%s", sep ? "; " : "", p->item);
		sep = true;
	}
	if (p->wait[0]) {
		progress_duration(p->wait_s, d, sizeof d);
		sb_addf(&l, "%s%s %s", sep ? (p->item && *p->item ? ": " : "; ") : "",
		        p->wait, d);
	} else if (p->detail[0])
		sb_addf(&l, "%s%s", sep ? ": " : "", p->detail);
	size_t cols = columns();
	if (l.n >= cols)
		l.p[cols - 1] = 0;
	fprintf(stderr, "\r\033[K%s", l.p ? l.p : "");
	fflush(stderr);
	p->drawn = true;
	sb_release(&l);
}

static Progress *make(const char *what, size_t total, const char *unit)
{
	Progress *p = xcalloc(1, sizeof *p);
	p->what = what ? xstrdup(what) : NULL;
	p->unit = unit ? xstrdup(unit) : NULL;
	p->total = total;
	p->t0 = now_seconds();
	return p;
}

static void release(Progress *p)
{
	free(p->what);
	free(p->unit);
	free(p->item);
	free(p);
}

Progress *progress_start(const char *what, size_t total, const char *unit)
{
	if (!on_terminal())
		return NULL;
	Progress *p = make(what, total, unit);
	pthread_mutex_lock(&lock);
	if (wait_line) {
		erase(wait_line);
		release(wait_line);
		wait_line = NULL;
	}
	current = p;
	draw(p, true);
	pthread_mutex_unlock(&lock);
	return p;
}

Progress *progress_current(void)
{
	pthread_mutex_lock(&lock);
	Progress *p = current;
	pthread_mutex_unlock(&lock);
	return p;
}

static void set_item(Progress *p, const char *item)
{
	if (!item)
		return;
	free(p->item);
	p->item = xstrdup(item);
}

void progress_step(Progress *p, const char *item)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	p->done++;
	set_item(p, item);
	draw(p, p->done == p->total);
	pthread_mutex_unlock(&lock);
}

void progress_item(Progress *p, const char *item)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	set_item(p, item);
	draw(p, false);
	pthread_mutex_unlock(&lock);
}

void progress_detail(Progress *p, const char *fmt, ...)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof p->detail, fmt, ap);
	va_end(ap);
	draw(p, false);
	pthread_mutex_unlock(&lock);
}

void progress_wait(const char *what, double seconds)
{
	pthread_mutex_lock(&lock);
	Progress *p = current ? current : wait_line;
	if (!p && what && on_terminal())
		p = wait_line = make(NULL, 0, NULL);
	if (p && what) {
		snprintf(p->wait, sizeof p->wait, "%s", what);
		p->wait_s = seconds;
		draw(p, false);
	} else if (p) {
		p->wait[0] = 0;
		if (p == wait_line) {
			erase(p);
			release(p);
			wait_line = NULL;
		} else
			draw(p, true);
	}
	pthread_mutex_unlock(&lock);
}

void progress_hide(Progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	erase(p);
	pthread_mutex_unlock(&lock);
}

void progress_end(Progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	erase(p);
	if (current == p)
		current = NULL;
	release(p);
	pthread_mutex_unlock(&lock);
}
