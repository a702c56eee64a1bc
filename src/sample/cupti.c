/*
 * cupti.c - libcupti at run time, and the map from SASS PCs to statements
 * (sample.h, step 3).
 *
 * Like the driver (gpu/driver.c), libcupti is opened with dlopen and its
 * functions looked up by name, so the tool builds and runs where it is
 * absent.  The table holds what sampling uses: the SASS to source
 * correlation, which reads a cubin and needs no device (checked on a
 * machine without a GPU, CUDA 13.0), and the PC-sampling session of the
 * GPU child (sample.h): enable, stall reasons, configuration, start and
 * stop around the launches, GetData until nothing is left, disable.
 *
 * Decisions:
 *  - Kernel-serialized collection with start/stop control: only the
 *    launches between start and stop are sampled (not the uploads, not
 *    the warm-up), and CUPTI's PCs are unique per range.
 *  - The "_not_issued" stall counts are left out: each counts the samples
 *    of its reason in which no instruction issued, a subset of that
 *    reason's samples, so with them a sample would count twice.  The sum
 *    of the reasons collected is a PC's samples.
 *  - The function names CUPTI gives may be shared between its records and
 *    are CUPTI's until all are read; they are compared, never kept or freed
 *    (the child that reads them exits after).
 */
#include "sample.h"

#include <cupti_pcsampling.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
/* libcupti keeps what it read of each cubin it correlated for the life of
 * the process; LeakSanitizer reports it at exit (make asan).  Not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libcupti.so"; }
#endif

/* The PC-sampling entry points: looked up with the library, checked only
 * when a session opens (the offline map needs none of them). */
#define SAMPLE_PC_FUNCS(X)                                                                  \
	X(cuptiPCSamplingEnable, CUpti_PCSamplingEnableParams)                              \
	X(cuptiPCSamplingDisable, CUpti_PCSamplingDisableParams)                            \
	X(cuptiPCSamplingStart, CUpti_PCSamplingStartParams)                                \
	X(cuptiPCSamplingStop, CUpti_PCSamplingStopParams)                                  \
	X(cuptiPCSamplingGetData, CUpti_PCSamplingGetDataParams)                            \
	X(cuptiPCSamplingGetNumStallReasons, CUpti_PCSamplingGetNumStallReasonsParams)      \
	X(cuptiPCSamplingGetStallReasons, CUpti_PCSamplingGetStallReasonsParams)            \
	X(cuptiPCSamplingSetConfigurationAttribute, CUpti_PCSamplingConfigurationInfoParams) \
	X(cuptiGetCubinCrc, CUpti_GetCubinCrcParams)

static struct {
	void *lib;
	char why[512];
	CUptiResult (*cuptiGetSassToSourceCorrelation)(CUpti_GetSassToSourceCorrelationParams *);
	CUptiResult (*cuptiGetResultString)(CUptiResult, const char **);
#define MEMBER(name, type) CUptiResult (*name)(type *);
	SAMPLE_PC_FUNCS(MEMBER)
#undef MEMBER
} cupti;

int sample_cupti_load(Err *e)
{
	if (cupti.lib)
		return 0;
	if (cupti.why[0])
		return err_set(e, "%s", cupti.why);
	const char *env = getenv("D4R_LIBCUPTI");
	const char *names[] = {env, "libcupti.so.13", "libcupti.so", NULL};
	const char *last = "no library named";
	for (int i = env ? 0 : 1; names[i]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			last = dlerror();
			if (i == 0) /* the one asked for: no other */
				break;
			continue;
		}
		cupti.cuptiGetSassToSourceCorrelation = (CUptiResult(*)(
		    CUpti_GetSassToSourceCorrelationParams *))dlsym(h, "cuptiGetSassToSourceCorrelation");
		cupti.cuptiGetResultString =
		    (CUptiResult(*)(CUptiResult, const char **))dlsym(h, "cuptiGetResultString");
#define LOOKUP(name, type) cupti.name = (CUptiResult(*)(type *))dlsym(h, #name);
		SAMPLE_PC_FUNCS(LOOKUP)
#undef LOOKUP
		if (!cupti.cuptiGetSassToSourceCorrelation) {
			snprintf(cupti.why, sizeof cupti.why,
			         "%s has no cuptiGetSassToSourceCorrelation (CUPTI older than 11.3)",
			         names[i]);
			dlclose(h);
			return err_set(e, "%s", cupti.why);
		}
		cupti.lib = h;
		return 0;
	}
	snprintf(cupti.why, sizeof cupti.why, "no CUPTI library (libcupti.so.13): %s", last);
	return err_set(e, "%s", cupti.why);
}

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;
	if (cupti.cuptiGetResultString)
		cupti.cuptiGetResultString(r, &s);
	return s ? s : "?";
}

int sample_map(const void *cubin, size_t n, const char *func, uint32_t nstmt, SampleMap *out,
               Err *e)
{
	memset(out, 0, sizeof *out);
	const unsigned char *text;
	size_t len;
	if (sample_cupti_load(e) < 0 || sample_cubin_text(cubin, n, func, &text, &len, e) < 0)
		return -1;
	out->n = len / SAMPLE_INSN_BYTES;
	out->stmt = xcalloc(out->n + 1, sizeof *out->stmt);
	for (size_t i = 0; i < out->n; i++) {
		CUpti_GetSassToSourceCorrelationParams p;
		memset(&p, 0, sizeof p);
		p.size = CUpti_GetSassToSourceCorrelationParamsSize;
		p.cubin = cubin;
		p.cubinSize = n;
		p.functionName = func;
		p.pcOffset = (uint64_t)i * SAMPLE_INSN_BYTES;
		CUptiResult r = cupti.cuptiGetSassToSourceCorrelation(&p);
		if (r != CUPTI_SUCCESS) {
			err_set(e, "cuptiGetSassToSourceCorrelation of '%s' at PC 0x%llx: %s (%d)", func,
			        (unsigned long long)p.pcOffset, result_name(r), (int)r);
			sample_map_release(out);
			return -1;
		}
		bool ours = p.fileName != NULL; /* no line information: NULL, line 0 */
		out->stmt[i] = ours && p.lineNumber >= 1 && p.lineNumber <= nstmt ? p.lineNumber - 1
		                                                                   : UINT32_MAX;
		out->unattributed += out->stmt[i] == UINT32_MAX;
		free(p.fileName);
		free(p.dirName);
	}
	return 0;
}

void sample_map_release(SampleMap *m)
{
	free(m->stmt);
	memset(m, 0, sizeof *m);
}

/* ---- PC sampling -------------------------------------------------------------- */

#define PCS_PER_CALL 4096
#define STALLED_PREFIX "smsp__pcsamp_warps_issue_stalled_"

struct SampleSession {
	CUcontext ctx;
	size_t noffered, nsel;
	uint32_t *offered_idx;
	char **offered_name;
	uint32_t *sel;      /* the collected reasons' CUPTI indices */
	char **sel_name;
	CUpti_PCSamplingData config, get; /* the configured buffer, GetData's */
	bool enabled;
	uint64_t total, dropped, non_user;
	bool full;
};

static int cupti_fail(CUptiResult r, const char *call, Err *e)
{
	return err_set(e, "PC sampling: %s: %s (%d)", call, result_name(r), (int)r);
}

static void data_init(CUpti_PCSamplingData *d, size_t nsel)
{
	memset(d, 0, sizeof *d);
	d->size = sizeof *d;
	d->collectNumPcs = PCS_PER_CALL;
	d->pPcData = xcalloc(PCS_PER_CALL, sizeof *d->pPcData);
	for (size_t i = 0; i < PCS_PER_CALL; i++) {
		d->pPcData[i].size = sizeof d->pPcData[i];
		d->pPcData[i].stallReason = xcalloc(nsel + 1, sizeof(CUpti_PCSamplingStallReason));
	}
}

static void data_free(CUpti_PCSamplingData *d)
{
	for (size_t i = 0; d->pPcData && i < PCS_PER_CALL; i++)
		free(d->pPcData[i].stallReason);
	free(d->pPcData);
	memset(d, 0, sizeof *d);
}

int sample_cubin_crc(const void *cubin, size_t n, uint64_t *crc, Err *e)
{
	if (sample_cupti_load(e) < 0)
		return -1;
	if (!cupti.cuptiGetCubinCrc)
		return err_set(e, "PC sampling: this CUPTI has no cuptiGetCubinCrc");
	CUpti_GetCubinCrcParams p;
	memset(&p, 0, sizeof p);
	p.size = CUpti_GetCubinCrcParamsSize;
	p.cubin = cubin;
	p.cubinSize = n;
	CUptiResult r = cupti.cuptiGetCubinCrc(&p);
	if (r != CUPTI_SUCCESS)
		return cupti_fail(r, "cuptiGetCubinCrc", e);
	*crc = p.cubinCrc;
	return 0;
}

static bool collected(const char *name, bool any_stalled)
{
	size_t n = strlen(name), k = strlen("_not_issued");
	if (n >= k && !strcmp(name + n - k, "_not_issued"))
		return false;
	return !any_stalled || !strncmp(name, STALLED_PREFIX, strlen(STALLED_PREFIX));
}

int sample_session_open(void *ctxp, uint32_t period, SampleSession **out, Err *e)
{
	*out = NULL;
	if (sample_cupti_load(e) < 0)
		return -1;
#define HAVE(name, type) &&cupti.name
	if (!(1 SAMPLE_PC_FUNCS(HAVE)))
		return err_set(e, "PC sampling: this CUPTI lacks the PC sampling API "
		                  "(cupti_pcsampling.h, CUDA 11.3 and later)");
#undef HAVE
	SampleSession *s = xcalloc(1, sizeof *s);
	s->ctx = (CUcontext)ctxp;
	CUptiResult r;
	CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize, NULL, s->ctx};
	if ((r = cupti.cuptiPCSamplingEnable(&ep)) != CUPTI_SUCCESS) {
		cupti_fail(r, "cuptiPCSamplingEnable", e);
		goto fail;
	}
	s->enabled = true;
	CUpti_PCSamplingGetNumStallReasonsParams np;
	memset(&np, 0, sizeof np);
	np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
	np.ctx = s->ctx;
	np.numStallReasons = &s->noffered;
	if ((r = cupti.cuptiPCSamplingGetNumStallReasons(&np)) != CUPTI_SUCCESS) {
		cupti_fail(r, "cuptiPCSamplingGetNumStallReasons", e);
		goto fail;
	}
	if (!s->noffered) {
		err_set(e, "PC sampling: the device offers no stall reason");
		goto fail;
	}
	s->offered_idx = xcalloc(s->noffered, sizeof *s->offered_idx);
	s->offered_name = xcalloc(s->noffered, sizeof *s->offered_name);
	for (size_t i = 0; i < s->noffered; i++)
		s->offered_name[i] = xcalloc(1, CUPTI_STALL_REASON_STRING_SIZE);
	CUpti_PCSamplingGetStallReasonsParams sp;
	memset(&sp, 0, sizeof sp);
	sp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
	sp.ctx = s->ctx;
	sp.numStallReasons = s->noffered;
	sp.stallReasonIndex = s->offered_idx;
	sp.stallReasons = s->offered_name;
	if ((r = cupti.cuptiPCSamplingGetStallReasons(&sp)) != CUPTI_SUCCESS) {
		cupti_fail(r, "cuptiPCSamplingGetStallReasons", e);
		goto fail;
	}
	bool any_stalled = false;
	for (size_t i = 0; i < s->noffered; i++) {
		s->offered_name[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = 0;
		any_stalled |= collected(s->offered_name[i], false) &&
		               !strncmp(s->offered_name[i], STALLED_PREFIX, strlen(STALLED_PREFIX));
	}
	s->sel = xcalloc(s->noffered, sizeof *s->sel);
	s->sel_name = xcalloc(s->noffered, sizeof *s->sel_name);
	for (size_t i = 0; i < s->noffered; i++)
		if (collected(s->offered_name[i], any_stalled)) {
			s->sel_name[s->nsel] = s->offered_name[i];
			s->sel[s->nsel++] = s->offered_idx[i];
		}
	data_init(&s->config, s->nsel);
	data_init(&s->get, s->nsel);
	CUpti_PCSamplingConfigurationInfo ci[6];
	memset(ci, 0, sizeof ci);
	ci[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	ci[0].attributeData.collectionModeData.collectionMode =
	    CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
	ci[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	ci[1].attributeData.enableStartStopControlData.enableStartStopControl = 1;
	ci[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
	ci[2].attributeData.samplingPeriodData.samplingPeriod = period;
	ci[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	ci[3].attributeData.stallReasonData.stallReasonCount = s->nsel;
	ci[3].attributeData.stallReasonData.pStallReasonIndex = s->sel;
	ci[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	/* 16 bytes a PC and a reason, and room: 64k PCs with every reason */
	ci[4].attributeData.scratchBufferSizeData.scratchBufferSize =
	    (size_t)65536 * 16 * (s->nsel + 2);
	ci[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	ci[5].attributeData.samplingDataBufferData.samplingDataBuffer = &s->config;
	CUpti_PCSamplingConfigurationInfoParams cp;
	memset(&cp, 0, sizeof cp);
	cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
	cp.ctx = s->ctx;
	cp.numAttributes = 6;
	cp.pPCSamplingConfigurationInfo = ci;
	if ((r = cupti.cuptiPCSamplingSetConfigurationAttribute(&cp)) != CUPTI_SUCCESS) {
		cupti_fail(r, "cuptiPCSamplingSetConfigurationAttribute", e);
		for (int i = 0; i < 6; i++)
			if (ci[i].attributeStatus != CUPTI_SUCCESS)
				err_set(e, "%s (attribute %d: %s)", err_msg(e), (int)ci[i].attributeType,
				        result_name(ci[i].attributeStatus));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sample_session_close(s, NULL, 0, NULL);
	return -1;
}

int sample_session_start(SampleSession *s, Err *e)
{
	CUpti_PCSamplingStartParams p = {CUpti_PCSamplingStartParamsSize, NULL, s->ctx};
	CUptiResult r = cupti.cuptiPCSamplingStart(&p);
	return r == CUPTI_SUCCESS ? 0 : cupti_fail(r, "cuptiPCSamplingStart", e);
}

/* The records of d into pcs; d's counters into s. */
static void take_pcs(SampleSession *s, const CUpti_PCSamplingData *d, const char *entry,
                     uint64_t crc, SamplePcs *pcs)
{
	s->total += d->totalSamples;
	s->dropped += d->droppedSamples;
	s->non_user += d->nonUsrKernelsTotalSamples;
	s->full |= d->hardwareBufferFull != 0;
	for (size_t i = 0; i < d->totalNumPcs && i < d->collectNumPcs; i++) {
		const CUpti_PCSamplingPCData *pc = &d->pPcData[i];
		bool ours = pc->functionName && entry && !strcmp(pc->functionName, entry) &&
		            pc->cubinCrc == crc;
		uint64_t at = pc->pcOffset / SAMPLE_INSN_BYTES;
		bool inside = ours && pc->pcOffset % SAMPLE_INSN_BYTES == 0 && at < pcs->ninsn;
		for (size_t k = 0; k < pc->stallReasonCount; k++) {
			const CUpti_PCSamplingStallReason *sr = &pc->stallReason[k];
			size_t col = 0;
			while (col < s->nsel && s->sel[col] != sr->pcSamplingStallReasonIndex)
				col++;
			if (!inside || col == s->nsel) {
				/* a reason not asked for would be a CUPTI of another
				 * mind: its samples are kept, as the entry's "other" */
				if (ours)
					pcs->outside += sr->samples;
				else
					pcs->other += sr->samples;
				continue;
			}
			pcs->count[at * s->nsel + col] += sr->samples;
		}
	}
}

int sample_session_stop(SampleSession *s, const char *entry, uint64_t crc, SamplePcs *pcs,
                        Err *e)
{
	CUpti_PCSamplingStopParams p = {CUpti_PCSamplingStopParamsSize, NULL, s->ctx};
	CUptiResult r = cupti.cuptiPCSamplingStop(&p);
	if (r != CUPTI_SUCCESS)
		return cupti_fail(r, "cuptiPCSamplingStop", e);
	if (!pcs->count) {
		pcs->nreasons = s->nsel;
		pcs->count = xcalloc(pcs->ninsn * s->nsel + 1, sizeof *pcs->count);
	}
	for (int guard = 0; guard < 1 << 20; guard++) {
		CUpti_PCSamplingGetDataParams gp;
		memset(&gp, 0, sizeof gp);
		gp.size = CUpti_PCSamplingGetDataParamsSize;
		gp.ctx = s->ctx;
		gp.pcSamplingData = &s->get;
		s->get.totalNumPcs = s->get.remainingNumPcs = 0;
		s->get.totalSamples = s->get.droppedSamples = s->get.nonUsrKernelsTotalSamples = 0;
		r = cupti.cuptiPCSamplingGetData(&gp);
		if (r != CUPTI_SUCCESS)
			return cupti_fail(r, "cuptiPCSamplingGetData", e);
		take_pcs(s, &s->get, entry, crc, pcs);
		if (!s->get.remainingNumPcs)
			break;
	}
	return 0;
}

void sample_session_close(SampleSession *s, const char *entry, uint64_t crc, SamplePcs *pcs)
{
	if (!s)
		return;
	if (s->enabled) {
		CUpti_PCSamplingDisableParams p = {CUpti_PCSamplingDisableParamsSize, NULL, s->ctx};
		s->config.totalNumPcs = 0;
		if (cupti.cuptiPCSamplingDisable(&p) == CUPTI_SUCCESS && pcs && pcs->count)
			take_pcs(s, &s->config, entry, crc, pcs);
	}
	if (pcs) {
		pcs->nreasons = s->nsel;
		pcs->noffered = s->noffered;
		pcs->reason = xcalloc(s->nsel + 1, sizeof *pcs->reason);
		for (size_t i = 0; i < s->nsel; i++)
			pcs->reason[i] = xstrdup(s->sel_name[i]);
		pcs->total = s->total;
		pcs->dropped = s->dropped;
		pcs->non_user = s->non_user;
		pcs->buffer_full = s->full;
	}
	data_free(&s->config);
	data_free(&s->get);
	for (size_t i = 0; s->offered_name && i < s->noffered; i++)
		free(s->offered_name[i]);
	free(s->offered_name);
	free(s->offered_idx);
	free(s->sel);
	free(s->sel_name);
	free(s);
}

void sample_pcs_release(SamplePcs *p)
{
	for (size_t i = 0; p->reason && i < p->nreasons; i++)
		free(p->reason[i]);
	free(p->reason);
	free(p->count);
	memset(p, 0, sizeof *p);
}
