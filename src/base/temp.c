/*
 * temp.c - the registry of temporary files and the handlers that remove
 * them (see temp.h for what and why).
 */
#include "temp.h"

#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	atomic_int used;      /* claimed by a registration */
	atomic_int owner;     /* the pid that registered it */
	_Atomic(char *) path; /* NULL while being claimed or released */
} TempSlot;

typedef struct {
	atomic_int pid; /* 0: free */
	atomic_int owner;
} ChildSlot;

enum { CHILD_SLOTS = 64 };

static TempSlot slots[TEMP_SLOTS];
static ChildSlot children[CHILD_SLOTS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const int caught[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM};

/* Unlinks every file `me` registered.  Async-signal-safe. */
static void remove_all(pid_t me)
{
	for (size_t i = 0; i < TEMP_SLOTS; i++) {
		if (atomic_load(&slots[i].owner) != me)
			continue;
		char *p = atomic_load(&slots[i].path);
		if (p)
			unlink(p);
	}
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Passes `sig` on to the children `me` registered, gives them up to two
 * seconds to end (and remove their own files), then kills the rest.
 * Async-signal-safe. */
static void stop_children(pid_t me, int sig)
{
	int any = 0;
	for (size_t i = 0; i < CHILD_SLOTS; i++) {
		pid_t pid = atomic_load(&children[i].pid);
		if (pid > 0 && atomic_load(&children[i].owner) == me) {
			kill(pid, sig);
			any = 1;
		}
	}
	for (int round = 0; any && round < 200; round++) {
		any = 0;
		for (size_t i = 0; i < CHILD_SLOTS; i++) {
			pid_t pid = atomic_load(&children[i].pid);
			if (pid <= 0 || atomic_load(&children[i].owner) != me)
				continue;
			pid_t w = waitpid(pid, NULL, WNOHANG);
			if (w == pid || (w < 0 && errno == ECHILD))
				atomic_store(&children[i].pid, 0);
			else
				any = 1;
		}
		if (any)
			pause_ms(10);
	}
	for (size_t i = 0; any && i < CHILD_SLOTS; i++) {
		pid_t pid = atomic_load(&children[i].pid);
		if (pid > 0 && atomic_load(&children[i].owner) == me) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
}

static void on_signal(int sig)
{
	pid_t me = getpid();
	remove_all(me);
	stop_children(me, sig);
	/* End the way the signal would have ended the process. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

static void at_exit(void)
{
	remove_all(getpid());
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(caught); i++)
		sigaddset(&sa.sa_mask, caught[i]); /* one handler at a time */
	for (size_t i = 0; i < ARRAY_SIZE(caught); i++) {
		struct sigaction old;
		if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(caught[i], &sa, NULL);
	}
	atexit(at_exit);
}

void temp_install(void)
{
	pthread_once(&once, install);
}

/* Registers `path` (copied): its slot, or -1 when the table is full. */
static int temp_add(const char *path)
{
	temp_install();
	char *copy = xstrdup(path);
	for (size_t i = 0; i < TEMP_SLOTS; i++) {
		int free_slot = 0;
		if (!atomic_compare_exchange_strong(&slots[i].used, &free_slot, 1))
			continue;
		atomic_store(&slots[i].owner, (int)getpid());
		atomic_store(&slots[i].path, copy);
		return (int)i;
	}
	free(copy);
	return -1;
}

static const char letters[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

int temp_mkstemps(char *tmpl, int suffixlen, int *slot)
{
	*slot = -1;
	size_t n = strlen(tmpl);
	if (suffixlen < 0 || n < (size_t)suffixlen + 6 ||
	    memcmp(tmpl + n - suffixlen - 6, "XXXXXX", 6)) {
		errno = EINVAL;
		return -1;
	}
	char *x = tmpl + n - suffixlen - 6;
	static atomic_uint_fast64_t counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t v = ((uint64_t)ts.tv_nsec << 16) ^ (uint64_t)ts.tv_sec ^
	             ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)tmpl;
	for (int attempt = 0; attempt < 1000; attempt++) {
		/* splitmix64 of a value no other call shares */
		uint64_t z =
		    v + 0x9e3779b97f4a7c15ULL * (atomic_fetch_add(&counter, 1) + 1);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		for (int i = 0; i < 6; i++, z /= 62)
			x[i] = letters[z % 62];
		int s = temp_add(tmpl);
		if (s < 0) {
			errno = EMFILE;
			return -1;
		}
		int fd = open(tmpl, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*slot = s;
			return fd;
		}
		int er = errno;
		temp_keep(s); /* not ours: someone else's file, or none */
		if (er != EEXIST) {
			errno = er;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

static void release(int slot, int remove)
{
	if (slot < 0 || slot >= TEMP_SLOTS)
		return;
	TempSlot *s = &slots[slot];
	char *p = atomic_load(&s->path);
	/* Unlinked while still registered: a signal in between unlinks it
	 * again, which is harmless. */
	if (p && remove)
		unlink(p);
	p = atomic_exchange(&s->path, NULL);
	free(p);
	atomic_store(&s->owner, 0);
	atomic_store(&s->used, 0);
}

void temp_remove(int slot)
{
	release(slot, 1);
}

void temp_keep(int slot)
{
	release(slot, 0);
}

void temp_child_add(pid_t pid)
{
	temp_install();
	for (size_t i = 0; i < CHILD_SLOTS; i++) {
		int free_slot = 0;
		if (!atomic_compare_exchange_strong(&children[i].pid, &free_slot, -1))
			continue;
		atomic_store(&children[i].owner, (int)getpid());
		atomic_store(&children[i].pid, (int)pid);
		return;
	}
}

void temp_child_done(pid_t pid)
{
	for (size_t i = 0; i < CHILD_SLOTS; i++)
		if (atomic_load(&children[i].pid) == pid) {
			atomic_store(&children[i].owner, 0);
			atomic_store(&children[i].pid, 0);
		}
}

int temp_count(void)
{
	int n = 0;
	pid_t me = getpid();
	for (size_t i = 0; i < TEMP_SLOTS; i++)
		n += atomic_load(&slots[i].owner) == me &&
		     atomic_load(&slots[i].path) != NULL;
	return n;
}
