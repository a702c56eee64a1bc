/*
 * driver.c - dlopen table, context, JIT with whole logs, compiled-image cache.
 *
 * The JIT is where a GPU check spends its time (a 2.5 MB vendor module
 * takes seconds: doc/gpu-results.md has the figures), so compiled images are cached
 * under the user's cache folder by a key covering everything the cubin
 * depends on: the PTX bytes, the driver version, the device's compute
 * capability and the JIT options.
 *
 * The driver has a compute cache of its own (~/.nv/ComputeCache, or
 * $CUDA_CACHE_PATH).  We set it aside on purpose: the child process that
 * uses the GPU sets CUDA_CACHE_DISABLE=1 unless the user set
 * CUDA_CACHE_DISABLE or CUDA_CACHE_PATH, so that (1) the JIT time we report
 * is a real compile or a hit in our cache, never a silent hit in theirs,
 * (2) --no-cache means a cold JIT, and (3) big vendor modules, which the
 * driver's small default cache limit evicts anyway, are not stored twice.
 * See gpu_job_run (job.c).
 */
#include "gpu/driver.h"

#include "base/file.h"
#include "base/sha256.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

GpuDriver gpu_cu;
CUresult gpu_cu_last_error;

#define STR_(x) #x
#define STR(x) STR_(x)

/* Each member: the name cuda.h maps it to (versioned), then the plain one. */
static const struct {
	const char *versioned, *plain;
	size_t off;
} syms[] = {
#define GPU_CU_SYM(name) {STR(name), #name, offsetof(GpuDriver, name)},
	GPU_CU_FUNCS(GPU_CU_SYM)
#undef GPU_CU_SYM
};

static int load_state;      /* 0 not tried, 1 loaded, -1 failed */
static char load_error[512];

int gpu_driver_load(Err *e)
{
	if (load_state > 0)
		return 0;
	if (load_state < 0)
		return err_set(e, "%s", load_error);
	const char *libname = getenv("D4R_LIBCUDA");  /* tests point it elsewhere */
	if (!libname || !*libname)
		libname = "libcuda.so.1";
	void *lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		snprintf(load_error, sizeof load_error, "no CUDA driver: %s",
		         why ? why : libname);
		if (!strstr(load_error + 16, libname))
			snprintf(load_error, sizeof load_error, "no CUDA driver: %s: %s", libname,
			         why ? why : "cannot load");
		load_state = -1;
		return err_set(e, "%s", load_error);
	}
	GpuDriver d;
	memset(&d, 0, sizeof d);
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		void *p = dlsym(lib, syms[i].versioned);
		if (!p)
			p = dlsym(lib, syms[i].plain);
		if (!p) {
			snprintf(load_error, sizeof load_error,
			         "CUDA driver %s lacks '%s' (too old for this program)", libname,
			         syms[i].versioned);
			dlclose(lib);
			load_state = -1;
			return err_set(e, "%s", load_error);
		}
		memcpy((char *)&d + syms[i].off, &p, sizeof p);
	}
	d.lib = lib;
	int v = 0;
	if (d.cuDriverGetVersion(&v) == CUDA_SUCCESS)
		d.driver_version = v;
	gpu_cu = d;
	load_state = 1;
	return 0;
}

void gpu_driver_use(const GpuDriver *d)
{
	gpu_cu = *d;
	load_state = 1;
}

int gpu_cu_check(CUresult r, const char *what, Err *e)
{
	if (r == CUDA_SUCCESS)
		return 0;
	gpu_cu_last_error = r;
	const char *name = NULL, *desc = NULL;
	if (gpu_cu.cuGetErrorName)
		gpu_cu.cuGetErrorName(r, &name);
	if (gpu_cu.cuGetErrorString)
		gpu_cu.cuGetErrorString(r, &desc);
	return err_set(e, "%s: %s (%d): %s", what, name ? name : "CUDA error", (int)r,
	               desc ? desc : "unknown");
}

bool gpu_cu_is_fault(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_ECC_UNCORRECTABLE:
		return true;
	default:
		return false;
	}
}

int gpu_context_open(int ordinal, GpuContext *c, Err *e)
{
	memset(c, 0, sizeof(*c));
	int n = 0;
	if (gpu_cu_check(gpu_cu.cuInit(0), "cuInit", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuDeviceGetCount(&n), "cuDeviceGetCount", e) < 0)
		return -1;
	if (ordinal < 0 || ordinal >= n)
		return err_set(e, "no CUDA device %d (the driver sees %d)", ordinal, n);
	if (gpu_cu_check(gpu_cu.cuDeviceGet(&c->dev, ordinal), "cuDeviceGet", e) < 0)
		return -1;
	gpu_cu.cuDeviceGetName(c->name, sizeof c->name, c->dev);
	gpu_cu.cuDeviceGetAttribute(&c->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
	                            c->dev);
	gpu_cu.cuDeviceGetAttribute(&c->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
	                            c->dev);
	if (gpu_cu_check(gpu_cu.cuDevicePrimaryCtxRetain(&c->ctx, c->dev),
	                 "cuDevicePrimaryCtxRetain", e) < 0)
		return -1;
	if (gpu_cu_check(gpu_cu.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", e) < 0) {
		gpu_cu.cuDevicePrimaryCtxRelease(c->dev);
		c->ctx = NULL;
		return -1;
	}
	return 0;
}

void gpu_context_close(GpuContext *c)
{
	if (c->ctx) {
		gpu_cu.cuCtxSetCurrent(NULL);
		gpu_cu.cuDevicePrimaryCtxRelease(c->dev);
	}
	c->ctx = NULL;
}

/* ---- cache --------------------------------------------------------------- */

void gpu_cache_key(const char *ptx, size_t n, int driver_version, int cc_major,
                   int cc_minor, const char *options, char out[65])
{
	Sha256 s;
	unsigned char d[32];
	char extra[256];
	int len = snprintf(extra, sizeof extra, "\n--d4r-splice-cache-v1 driver=%d target=sm_%d%d options=%s",
	                   driver_version, cc_major, cc_minor, options ? options : "");
	sha256_init(&s);
	sha256_update(&s, ptx, n);
	sha256_update(&s, extra, (size_t)MIN(len, (int)sizeof extra - 1));
	sha256_final(&s, d);
	sha256_tohex(d, out);
}

/* ---- logs ---------------------------------------------------------------- */

void gpu_log_lines(const char *log, const char *ptx, size_t n, unsigned max,
                   GpuLineNote note, void *note_ctx, StrBuf *out)
{
	unsigned seen[64];
	unsigned nseen = 0;
	if (max > ARRAY_SIZE(seen))
		max = ARRAY_SIZE(seen);
	for (const char *p = log; p && (p = strstr(p, "line ")) != NULL; p += 5) {
		if (p > log && (p[-1] != ' ' && p[-1] != ','))
			continue;
		char *end;
		unsigned long ln = strtoul(p + 5, &end, 10);
		if (end == p + 5 || ln == 0)
			continue;
		int dup = 0;
		for (unsigned i = 0; i < nseen; i++)
			dup |= seen[i] == ln;
		if (dup)
			continue;
		if (nseen == max)
			break;
		seen[nseen++] = (unsigned)ln;
		/* Find PTX line ln. */
		size_t at = 0;
		unsigned cur = 1;
		while (cur < ln && at < n) {
			const char *nl = memchr(ptx + at, '\n', n - at);
			if (!nl) {
				at = n;
				break;
			}
			at = (size_t)(nl - ptx) + 1;
			cur++;
		}
		if (cur != ln || at >= n) {
			sb_addf(out, "\n    %lu | (beyond the end of the PTX)", ln);
			continue;
		}
		const char *nl = memchr(ptx + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (ptx + at)) : n - at;
		if (len > 200)
			len = 200;
		sb_addf(out, "\n    %lu | %.*s", ln, (int)len, ptx + at);
		if (note) {
			StrBuf ns = STRBUF_INIT;
			note(note_ctx, (unsigned)ln, &ns);
			if (ns.n)
				sb_addf(out, "\n      (%s)", ns.p);
			sb_release(&ns);
		}
	}
}

/* ---- JIT ----------------------------------------------------------------- */

#define LOG_BYTES (1u << 20)

typedef struct {
	CUjit_option opt[10];
	void *val[10];
	unsigned n;
	char *info, *error;
	int wall_at, info_size_at, error_size_at;
} JitOpts;

static void jit_opts(JitOpts *j, const GpuJitOptions *o)
{
	memset(j, 0, sizeof(*j));
	j->info = xcalloc(1, LOG_BYTES);
	j->error = xcalloc(1, LOG_BYTES);
	j->opt[j->n] = CU_JIT_INFO_LOG_BUFFER, j->val[j->n++] = j->info;
	j->info_size_at = (int)j->n;
	j->opt[j->n] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, j->val[j->n++] = (void *)(uintptr_t)LOG_BYTES;
	j->opt[j->n] = CU_JIT_ERROR_LOG_BUFFER, j->val[j->n++] = j->error;
	j->error_size_at = (int)j->n;
	j->opt[j->n] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, j->val[j->n++] = (void *)(uintptr_t)LOG_BYTES;
	j->opt[j->n] = CU_JIT_LOG_VERBOSE, j->val[j->n++] = (void *)(uintptr_t)(o && o->verbose);
	j->wall_at = (int)j->n;
	j->opt[j->n] = CU_JIT_WALL_TIME, j->val[j->n++] = NULL;
	if (o && o->opt_level >= 0 && o->opt_level <= 4)
		j->opt[j->n] = CU_JIT_OPTIMIZATION_LEVEL, j->val[j->n++] = (void *)(uintptr_t)o->opt_level;
	if (o && o->line_info)
		j->opt[j->n] = CU_JIT_GENERATE_LINE_INFO, j->val[j->n++] = (void *)(uintptr_t)1;
}

/* The options that change the cubin, as a string for the cache key. */
static void option_string(const GpuJitOptions *o, char *buf, size_t n)
{
	snprintf(buf, n, "opt_level=%d verbose=%d%s", o ? o->opt_level : -1,
	         o ? (int)o->verbose : 0, o && o->line_info ? " lineinfo=1" : "");
}

static void take_logs(JitOpts *j, GpuJitResult *r)
{
	float ms;
	memcpy(&ms, &j->val[j->wall_at], sizeof ms);
	r->driver_ms = ms;
	r->info_log = j->info;
	r->error_log = j->error;
	j->info = j->error = NULL;
}

static int jit_failed(CUresult rc, const char *what, const char *ptx, size_t n,
                      const GpuJitOptions *o, GpuJitResult *r, Err *e)
{
	gpu_cu_check(rc, what, e);
	const char *name = o && o->name ? o->name : "module";
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "JIT of '%s' failed: %s", name, err_msg(e));
	if (r->error_log && *r->error_log) {
		sb_addf(&sb, "\n%s", r->error_log);
		while (sb.n && sb.p[sb.n - 1] == '\n')
			sb.p[--sb.n] = 0;
		gpu_log_lines(r->error_log, ptx, n, 8, o ? o->line_note : NULL,
		              o ? o->line_ctx : NULL, &sb);
	}
	/* The whole log: err_set would cut it at its 2 KB buffer. */
	sb_reset(&e->msg);
	sb_addn(&e->msg, sb.p, sb.n);
	e->set = 1;
	sb_release(&sb);
	return -1;
}

/* Loads an image from the cache; 0 on a hit.  With keep, r keeps it. */
static int cache_load(const char *file, bool keep, GpuJitResult *r)
{
	char *img;
	size_t sz;
	Err ig = ERR_INIT;
	int rc = -1;
	if (read_file(file, &img, &sz, &ig) == 0) {
		if (sz > 0 && gpu_cu.cuModuleLoadData(&r->module, img) == CUDA_SUCCESS)
			rc = 0;
		if (rc == 0 && keep) {
			r->image = (unsigned char *)img;
			r->image_len = sz;
		} else
			free(img);
	}
	err_release(&ig);
	return rc;
}

/* The cache key of ptx[0..n) for the current context's device, the cache
 * folder (*dir, NULL when none is known) and the image's file in it
 * (*file, NULL with no folder); both malloc'd.  -1 without a context. */
static int cache_file(const char *ptx, size_t n, const GpuJitOptions *o, char key[65],
                      char **dir, char **file, Err *e)
{
	CUdevice dev;
	int major = 0, minor = 0;
	*dir = *file = NULL;
	if (gpu_cu_check(gpu_cu.cuCtxGetDevice(&dev), "cuCtxGetDevice", e) < 0)
		return -1;
	gpu_cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	gpu_cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	char opts[128];
	option_string(o, opts, sizeof opts);
	gpu_cache_key(ptx, n, gpu_cu.driver_version, major, minor, opts, key);
	if (o && o->image_file) {
		*file = xstrdup(o->image_file);
		return 0;
	}
	*dir = o && o->cache_dir ? xstrdup(o->cache_dir) : user_cache_dir();
	if (*dir) {
		StrBuf sb = STRBUF_INIT;
		sb_addf(&sb, "%s/%s.cubin", *dir, key);
		*file = sb.p;
	}
	return 0;
}

bool gpu_jit_cached(const char *ptx, size_t n, const GpuJitOptions *o)
{
	if (o && o->no_cache)
		return false;
	char key[65], *dir, *file;
	Err ig = ERR_INIT;
	struct stat st;
	bool hit = cache_file(ptx, n, o, key, &dir, &file, &ig) == 0 && file &&
	           access(file, R_OK) == 0 && stat(file, &st) == 0 && st.st_size > 0;
	free(dir);
	free(file);
	err_release(&ig);
	return hit;
}

int gpu_jit(const char *ptx, size_t n, const GpuJitOptions *o, GpuJitResult *r, Err *e)
{
	memset(r, 0, sizeof(*r));
	double t0 = now_seconds();
	/* The driver reads PTX as a C string. */
	char *text = xmalloc(n + 1);
	memcpy(text, ptx, n);
	text[n] = 0;
	int rc = -1;
	char *dir = NULL, *file = NULL;
	CUlinkState link = NULL;
	JitOpts j;
	jit_opts(&j, o);
	CUresult cr;

	if (n >= 4 && memcmp(ptx, "\177ELF", 4) == 0) {
		/* A cubin (a replay-only captured layer): no JIT, nothing to cache. */
		cr = gpu_cu.cuModuleLoadData(&r->module, text);
		if (cr != CUDA_SUCCESS) {
			r->module = NULL;
			gpu_cu_check(cr, "cuModuleLoadData of the cubin", e);
			goto out;
		}
		if (o && o->keep_image) {
			r->image = xmalloc(n + 1);
			memcpy(r->image, ptx, n);
			r->image_len = n;
		}
		rc = 0;
		goto out;
	}
	if (o && o->no_cache && !o->keep_image) {
		cr = gpu_cu.cuModuleLoadDataEx(&r->module, text, j.n, j.opt, j.val);
		take_logs(&j, r);
		if (cr != CUDA_SUCCESS) {
			r->module = NULL;
			jit_failed(cr, "cuModuleLoadDataEx", text, n, o, r, e);
			goto out;
		}
		rc = 0;
		goto out;
	}

	if (!(o && o->no_cache) && cache_file(text, n, o, r->key, &dir, &file, e) < 0)
		goto out;
	if (file) {
		StrBuf sb = STRBUF_INIT;
		sb_addf(&sb, "%s", file);
		if (cache_load(file, o && o->keep_image, r) == 0) {
			r->cached = true;
			take_logs(&j, r);
			/* The info log of the compile that made the image, kept beside it. */
			char *log;
			size_t loglen;
			Err ig = ERR_INIT;
			sb_addf(&sb, ".log");
			if (dir && read_file(sb.p, &log, &loglen, &ig) == 0) {
				free(r->info_log);
				r->info_log = log;
			}
			err_release(&ig);
			sb_release(&sb);
			rc = 0;
			goto out;
		}
		sb_release(&sb);
	}
	cr = gpu_cu.cuLinkCreate(j.n, j.opt, j.val, &link);
	if (cr != CUDA_SUCCESS) {
		take_logs(&j, r);
		jit_failed(cr, "cuLinkCreate", text, n, o, r, e);
		goto out;
	}
	const char *name = o && o->name ? o->name : "module.ptx";
	cr = gpu_cu.cuLinkAddData(link, CU_JIT_INPUT_PTX, text, n + 1, name, 0, NULL, NULL);
	void *cubin = NULL;
	size_t cubin_size = 0;
	if (cr == CUDA_SUCCESS)
		cr = gpu_cu.cuLinkComplete(link, &cubin, &cubin_size);
	take_logs(&j, r);
	if (cr != CUDA_SUCCESS) {
		jit_failed(cr, "JIT (cuLinkAddData/cuLinkComplete)", text, n, o, r, e);
		goto out;
	}
	cr = gpu_cu.cuModuleLoadData(&r->module, cubin);
	if (cr != CUDA_SUCCESS) {
		r->module = NULL;
		gpu_cu_check(cr, "cuModuleLoadData (compiled image)", e);
		goto out;
	}
	if (o && o->keep_image) {
		r->image = xmalloc(cubin_size + 1);
		memcpy(r->image, cubin, cubin_size);
		r->image_len = cubin_size;
	}
	if (file) {
		/* A cache that cannot be written costs time, not correctness. */
		Err ig = ERR_INIT;
		if ((!dir || mkdir_p(dir, &ig) == 0) &&
		    write_file_atomic(file, cubin, cubin_size, &ig) == 0 && dir) {
			StrBuf lp = STRBUF_INIT;
			sb_addf(&lp, "%s.log", file);
			write_file_atomic(lp.p, r->info_log, strlen(r->info_log), &ig);
			sb_release(&lp);
		}
		err_release(&ig);
	}
	rc = 0;
out:
	if (link)
		gpu_cu.cuLinkDestroy(link);
	free(j.info);
	free(j.error);
	if (!r->info_log)
		r->info_log = xstrdup("");
	if (!r->error_log)
		r->error_log = xstrdup("");
	free(text);
	free(dir);
	free(file);
	r->seconds = now_seconds() - t0;
	return rc;
}

void gpu_jit_result_release(GpuJitResult *r)
{
	if (r->module)
		gpu_cu.cuModuleUnload(r->module);
	free(r->info_log);
	free(r->error_log);
	free(r->image);
	memset(r, 0, sizeof(*r));
}

/* ---- what the compiler made ------------------------------------------------ */

int gpu_func_attrs(CUfunction f, GpuFuncAttrs *a, Err *e)
{
	memset(a, 0, sizeof(*a));
	if (gpu_cu_check(gpu_cu.cuFuncGetAttribute(&a->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
	                 "cuFuncGetAttribute NUM_REGS", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuFuncGetAttribute(&a->local_bytes,
	                                           CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f),
	                 "cuFuncGetAttribute LOCAL_SIZE_BYTES", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuFuncGetAttribute(&a->shared_bytes,
	                                           CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
	                 "cuFuncGetAttribute SHARED_SIZE_BYTES", e) < 0 ||
	    gpu_cu_check(gpu_cu.cuFuncGetAttribute(&a->max_threads,
	                                           CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
	                 "cuFuncGetAttribute MAX_THREADS_PER_BLOCK", e) < 0)
		return -1;
	a->known = true;
	return 0;
}

/* The number before `word` in line[0..n) ("12 bytes spill stores"), or 0. */
static uint64_t number_before(const char *line, size_t n, const char *word)
{
	size_t wl = strlen(word);
	for (size_t i = 0; i + wl <= n; i++) {
		if (memcmp(line + i, word, wl))
			continue;
		size_t j = i;
		while (j > 0 && line[j - 1] == ' ')
			j--;
		size_t k = j;
		while (k > 0 && line[k - 1] >= '0' && line[k - 1] <= '9')
			k--;
		return k < j ? strtoull(line + k, NULL, 10) : 0;
	}
	return 0;
}

unsigned gpu_log_spills(const char *log, StrBuf *lines, uint64_t *stores, uint64_t *loads)
{
	unsigned count = 0;
	if (stores)
		*stores = 0;
	if (loads)
		*loads = 0;
	for (const char *p = log; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		uint64_t st = number_before(p, n, "bytes spill stores");
		uint64_t ld = number_before(p, n, "bytes spill loads");
		if (st || ld) {
			count++;
			if (stores)
				*stores += st;
			if (loads)
				*loads += ld;
			if (lines) {
				const char *q = p;
				while (q < p + n && (*q == ' ' || *q == '\t'))
					q++;
				sb_addn(lines, q, (size_t)(p + n - q));
				sb_addc(lines, '\n');
			}
		}
		p += n + (nl != NULL);
	}
	return count;
}

void gpu_func_attrs_text(const GpuFuncAttrs *a, StrBuf *out)
{
	if (!a->known) {
		sb_adds(out, "-");
		return;
	}
	sb_addf(out, "%d registers, %d B local, %d B shared", a->regs, a->local_bytes,
	        a->shared_bytes);
}

/* The entry's block of a verbose log: [*from, *to). */
static int entry_block(const char *log, const char *entry, const char **from, const char **to)
{
	char want[320];
	snprintf(want, sizeof want, "Compiling entry function '%s'", entry);
	const char *p = strstr(log, want);
	if (!p) {
		snprintf(want, sizeof want, "Function properties for %s\n", entry);
		p = strstr(log, want);
	}
	if (!p)
		return -1;
	const char *q = strstr(p + 1, "Compiling entry function '");
	const char *r = strstr(p + strlen(want), "Function properties for ");
	/* a later "Function properties for" of another function ends it too */
	if (r && strncmp(r + 24, entry, strlen(entry)) != 0 && (!q || r < q))
		q = r;
	*from = p;
	*to = q ? q : p + strlen(p);
	return 0;
}

int gpu_log_func_attrs(const char *log, const char *entry, GpuLogAttrs *a)
{
	memset(a, 0, sizeof(*a));
	const char *p, *end;
	if (!log || entry_block(log, entry, &p, &end) < 0)
		return -1;
	a->known = true;
	for (; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *u = memmem(p, n, "Used ", 5);
		if (u && memmem(p, n, " registers", 10))
			a->regs = atoi(u + 5);
		if (memmem(p, n, "bytes smem", 10))
			a->shared_bytes = (int)number_before(p, n, "bytes smem");
		if (memmem(p, n, "bytes stack frame", 17)) {
			a->stack_bytes = (int)number_before(p, n, "bytes stack frame");
			a->spill_stores = number_before(p, n, "bytes spill stores");
			a->spill_loads = number_before(p, n, "bytes spill loads");
			const char *q = p;
			while (q < p + n && (*q == ' ' || *q == '\t'))
				q++;
			snprintf(a->spill_line, sizeof a->spill_line, "%.*s", (int)(p + n - q), q);
		}
		p += n + (nl != NULL);
	}
	return 0;
}

void gpu_log_attrs_text(const GpuLogAttrs *a, StrBuf *out)
{
	if (!a->known) {
		sb_adds(out, "-");
		return;
	}
	sb_addf(out, "%d registers, %d B stack, %d B shared, ", a->regs, a->stack_bytes,
	        a->shared_bytes);
	if (a->spill_stores || a->spill_loads)
		sb_addf(out, "spills %llu B stored / %llu B loaded",
		        (unsigned long long)a->spill_stores, (unsigned long long)a->spill_loads);
	else
		sb_adds(out, "no spills");
}

bool gpu_log_attrs_spill_more(const GpuLogAttrs *a, const GpuLogAttrs *b)
{
	return a->known && b->known && (b->spill_stores || b->spill_loads) &&
	       !(a->spill_stores || a->spill_loads);
}

unsigned gpu_compiled_changes(const GpuFuncAttrs *fa, const GpuLogAttrs *la,
                              const GpuFuncAttrs *fb, const GpuLogAttrs *lb,
                              GpuCompiledChange out[4])
{
	unsigned n = 0;
	bool f = fa->known && fb->known, l = la->known && lb->known;
	const struct {
		bool known;
		const char *what, *key, *unit;
		long long a, b;
	} fig[4] = {
	    {f, "registers", "registers", "", fa->regs, fb->regs},
	    {f, "local memory", "local_bytes", " B", fa->local_bytes, fb->local_bytes},
	    {l, "spill stores", "spill_store_bytes", " B", (long long)la->spill_stores,
	     (long long)lb->spill_stores},
	    {l, "spill loads", "spill_load_bytes", " B", (long long)la->spill_loads,
	     (long long)lb->spill_loads},
	};
	for (int i = 0; i < 4; i++)
		if (fig[i].known && fig[i].a != fig[i].b)
			out[n++] = (GpuCompiledChange){fig[i].what, fig[i].key, fig[i].unit, fig[i].a,
			                               fig[i].b};
	return n;
}

void gpu_compiled_changes_text(const GpuCompiledChange *c, unsigned n, StrBuf *out)
{
	for (unsigned i = 0; i < n; i++)
		sb_addf(out, "%s%s %lld -> %lld%s", i ? ", " : "", c[i].what, c[i].a, c[i].b,
		        c[i].unit);
}
