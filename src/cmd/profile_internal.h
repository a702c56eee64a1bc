/*
 * profile_internal.h - what profile.c (one spliced module, its profile and
 * output) and profile_variants.c (a list of variants, ranked per phase)
 * share.
 */
#ifndef D4R_CMD_PROFILE_INTERNAL_H
#define D4R_CMD_PROFILE_INTERNAL_H

#include "base/numlist.h"
#include "cmd.h"
#include "gpu/manifest.h"
#include "gpu/probe.h"
#include "splice/multi.h"
#include "splice/probe.h"
#include "splice/profile.h"
#include "splice/splice.h"

#include <cjson/cJSON.h>

/* the probes' overhead may be this many percent either way */
#define OVERHEAD_TARGET 3.0

typedef struct {
	const char *layer, *recipe_opt, *module_opt, *phases_opt, *variant, *corpus;
	const char *chart, *keep;
	unsigned phase, runs;
	NumList window;
	double timeout;
	bool json, no_cache, force, no_run, sass;
	bool sampling, no_sampling; /* --sampling, --no-sampling; neither: where CUPTI is */
	unsigned sampling_period;   /* log2 cycles */
	Manifest mf;
	char *module_path;
	LoadedModule lm;
	const Func *fo;
	SpliceResult sr;
	SpliceManyResult sm;
	Recipe rcp, *sel;
	size_t nsel;
	StrBuf spliced;
	char *source;
	VEC(ProbeCut) cuts;
	Module *ms;
	const Func *fs;
	unsigned grid[3], block[3];
	ProfilePlan po, ps;
	ProbeResult ro, rs;
	StrBuf red[4];
} Prof;

/* What the probes did to one module's compiled kernel (plain vs probed). */
typedef struct {
	GpuCompiledChange c[4];
	unsigned n;
} ProbeChange;

/* What one variant's run leaves for the ranking of a variant list. */
typedef struct {
	const char *variant;
	char *source, *message;
	double ms[4]; /* original, spliced, and both probed: median kernel ms */
	double ov_o, ov_s;
	ProbeChange ch_o, ch_s;
	bool ok, same_frame;
	size_t n;
	uint32_t *phase;
	double *orig, *spl; /* median cycles of each phase plus its epilogue; -1: unread */
} VariantRun;

/* |pct| within OVERHEAD_TARGET */
bool overhead_met(double pct);
/* "the probes changed the compiled kernel: spill stores 3120 -> 1724 B, 22%
 * faster; the cycles below are of the probed kernel"; nothing when they
 * did not */
void probe_change_text(const ProbeChange *pc, double ov, StrBuf *sb);
cJSON *probe_change_json(const ProbeChange *pc, double ov);

/*
 * Everything after the options: the spliced module, the four modules run,
 * the figures printed.  With vr (one variant of a list) nothing is printed
 * but errors: vr gets the kernel times, the probes' verdict and the
 * cycles of each phase and its epilogue.  Returns the exit status.
 */
int profile_body(Prof *p, VariantRun *vr);

/* `--sass` (profile_sass.c): SASS instructions per phase and epilogue of
 * the original and the spliced module, offline.  Returns the exit status. */
int profile_sass(Prof *p);

/* What PC sampling found (profile_sampling.c). */
#include "sample/sample.h"
typedef struct {
	bool taken;
	char *why;                /* not taken: why */
	SampleProfile prof[2];    /* original, spliced */
	SamplePcs pcs[2];
	bool same[2];             /* the .loc build is the plain one's code */
	size_t first_diff[2], n_plain[2], unattributed[2];
	unsigned char *frame[2];  /* the sampled builds' frames */
	size_t frame_len[2];
	bool jit_cached[2];
	char device[128];
	int cc_major, cc_minor;
} ProfSampled;
/*
 * The sampled profile of p's original and spliced modules (p->red[0..3]
 * reduced already).  Returns 0 with s->taken, or 0 with s->why where
 * sampling was not asked for by name and could not be had; -1 on an error
 * (any, with --sampling).
 */
int profile_sampling_take(Prof *p, ProfSampled *s, Err *e);
void prof_sampled_release(ProfSampled *s);
/* The lines and the JSON object of a sampled profile, with the probes'
 * results (pr[0..2), may be NULL) for the comparison and the plain
 * builds' frames (may be NULL). */
void profile_sampling_text(const Prof *p, const ProfSampled *s, const ProfResult *pr[2],
                           const unsigned char *plain_frame[2]);
cJSON *profile_sampling_json(const Prof *p, const ProfSampled *s, const ProfResult *pr[2],
                             const unsigned char *plain_frame[2]);

/* `--variant A,B,...` (profile_variants.c): each variant profiled, then
 * ranked per phase.  Returns the exit status. */
int profile_variants(Prof *base, OptParse *op);

#endif
