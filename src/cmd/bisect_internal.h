/*
 * bisect_internal.h - what bisect.c (the verb and its output) and
 * bisect_prep.c (the spliced module and the probe plans) share.
 */
#ifndef D4R_CMD_BISECT_INTERNAL_H
#define D4R_CMD_BISECT_INTERNAL_H

#include "base/numlist.h"
#include "cmd.h"
#include "gpu/probe.h"
#include "splice/probe.h"

#include <pthread.h>

typedef struct {
	uint32_t first, last;
	uint32_t phase; /* the recipe's phase, 0 for a statement range */
	char *recipe;
	char *template_name;
} Cut;

typedef struct {
	/* options */
	const char *layer, *recipe_opt, *module_opt, *oracle_opt, *corpus, *keep;
	unsigned phase;
	NumList phases, window;
	ProbeAt at;
	ProbeRegs regs;
	uint64_t dump_limit; /* --dump-limit, 0: what the device and the host allow */
	double timeout;
	bool json, no_cache, force, serial;
	/* the layer and the two modules */
	Manifest mf;
	char *module_path;
	LoadedModule lm;
	const Func *fo;
	StrBuf spliced;
	Module *ms;
	const Func *fs;
	VEC(Cut) cuts;
	char *mode_text; /* what the spliced module is, for the output */
	/* the probes */
	unsigned grid[3], block[3];
	size_t nphases;
	ProbePlan po, ps; /* the same records in the original and the spliced module */
	ProbeIndexVec dropped;
	size_t unprobed;     /* points a probe cannot go to */
	StrBuf unprobed_why; /* the first one's reason */
	size_t planned;      /* records before the size limit */
	uint64_t full_bytes; /* the dump of all planned records */
	StrBuf left_out;     /* the phases the size limit left out */
	ProbeResult ro, rs;
	StrBuf red_o, red_s;
	uint32_t nmatched;
	/* the device's memory, asked on a thread while the host prepares */
	pthread_t mem_thread;
	bool mem_started;
	int mem_rc;
	Err mem_err;
	uint64_t dev_free, dev_total;
	char dev_name[128];
	uint64_t limit;        /* the limit applied */
	const char *limit_why; /* where it comes from, for the output */
	/* times */
	double t_prep;
} Bisect;

/* The spliced module of b's mode, parsed (b->ms, b->fs, b->cuts). */
int bisect_make_spliced(Bisect *b, Err *e);
/* The probe plans b->po and b->ps, and the instrumented modules' texts
 * (b->red_o, b->red_s), within the dump's size limit. */
int bisect_plan_probes(Bisect *b, Err *e);
/* Thread body: the device's free and total memory into b (a Bisect *). */
void *bisect_mem_query(void *b);
/* GpuModuleSrc notes: where an original or spliced line of a message
 * falls among the probes. */
void bisect_note_o(void *ctx, unsigned line, StrBuf *out);
void bisect_note_s(void *ctx, unsigned line, StrBuf *out);
/* "1.5 GB", "12.3 MB", "4.0 KB", "512 bytes" in buf; buf. */
const char *bisect_size_text(uint64_t n, char buf[32]);
/* The phases records [from, to) of p belong to, as a list, into sb. */
void bisect_plan_phases(const ProbePlan *p, size_t from, size_t to, StrBuf *sb);

#endif
