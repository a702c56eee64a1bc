/*
 * cupti.c - libcupti at run time, and the map from SASS PCs to statements
 * (sample.h, step 3).
 *
 * Like the driver (gpu/driver.c), libcupti is opened with dlopen and its
 * functions looked up by name, so the tool builds and runs where it is
 * absent.  The table holds what sampling uses; today that is the SASS to
 * source correlation, which reads a cubin and needs no device (checked on
 * a machine without a GPU, CUDA 13.0).
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

static struct {
	void *lib;
	char why[512];
	CUptiResult (*cuptiGetSassToSourceCorrelation)(CUpti_GetSassToSourceCorrelationParams *);
	CUptiResult (*cuptiGetResultString)(CUptiResult, const char **);
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
