/*
 * capture.c - `d4r-splice capture -o DIR -- PROGRAM [ARGS...]`: run a
 * program with the injection library (src/capture/capture.h), turn the
 * launches it recorded into layers, and prove each by replaying it.
 *
 *   1. checks before PROGRAM runs: -o given and not among PROGRAM's own
 *      files (PROGRAM, an existing argument, a folder holding PROGRAM),
 *      --kernel a POSIX extended regular expression, the injection
 *      library and CUPTI there
 *   2. PROGRAM runs with CUDA_INJECTION64_PATH and the D4R_CAPTURE_*
 *      settings (tap.h); its output is its own; a PROGRAM that fails ends
 *      the capture (exit 2, nothing written)
 *   3. the spool's events: notes and refusals said; a --kernel that never
 *      launched lists the kernels that did (exit 2)
 *   4. each record -> DIR/LAYER (record.c; a launch attribute a replay
 *      cannot give refuses the layer, exit 2)
 *   5. each layer replayed by `run` in a child process; its frame must be
 *      the captured output byte for byte.  When it is not, the buffer that
 *      differs is named and the layer is written again without an oracle,
 *      marked non-deterministic in capture.json (exit 1)
 *
 * Exit: 0 every layer reproduced, 1 some replay differed, 2 error.
 *
 * With --json the lines go to stderr, PROGRAM's standard output too, and
 * stdout holds one document: the layers written (what each line says) and
 * the launches refused.
 */
#include "cmd/cmd.h"

#include "base/file.h"
#include "capture/capture.h"
#include "cmd/jsonout.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const usage[] = {
    "capture [--kernel REGEX] [--launch N|all] [--max-bytes SIZE] [--ptx-from DIR] "
    "[--randomize] [--json] -o DIR -- PROGRAM [ARGS...]",
    NULL,
};

/* The folder of this executable (malloc'd), or NULL. */
static char *exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	return xstrdup(buf);
}

/* The injection library: $D4R_CAPTURE_LIB, else beside the program, else
 * PREFIX/lib/d4r-splice (make install). */
static char *find_library(Err *e)
{
	const char *env = getenv("D4R_CAPTURE_LIB");
	if (env && *env)
		return access(env, R_OK) == 0 ? realpath(env, NULL)
		                              : (err_set(e, "D4R_CAPTURE_LIB: '%s': %s",
		                                         env, strerror(errno)),
		                                 NULL);
	char *dir = exe_dir();
	StrBuf p = STRBUF_INIT;
	const char *rel[] = {"/libd4r-capture.so",
	                     "/../lib/d4r-splice/libd4r-capture.so"};
	for (size_t i = 0; dir && i < ARRAY_SIZE(rel); i++) {
		sb_reset(&p);
		sb_addf(&p, "%s%s", dir, rel[i]);
		if (access(p.p, R_OK) == 0) {
			char *real = realpath(p.p, NULL);
			free(dir);
			sb_release(&p);
			return real;
		}
	}
	err_set(e, "no injection library: libd4r-capture.so is neither beside the "
	           "program nor in "
	           "../lib/d4r-splice (set D4R_CAPTURE_LIB)");
	free(dir);
	sb_release(&p);
	return NULL;
}

/* CUPTI, which the injection library loads inside PROGRAM: $D4R_LIBCUPTI,
 * the loader's search, then the toolkit's folders. */
static char *find_cupti(Err *e)
{
	const char *env = getenv("D4R_LIBCUPTI");
	const char *cands[] = {env && *env ? env : NULL,
	                       "libcupti.so.13",
	                       "libcupti.so",
	                       D4R_CUDA_HOME "/targets/x86_64-linux/lib/libcupti.so",
	                       D4R_CUDA_HOME "/extras/CUPTI/lib64/libcupti.so",
	                       "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so",
	                       "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
	StrBuf tried = STRBUF_INIT;
	for (size_t i = 0; i < ARRAY_SIZE(cands); i++) {
		if (!cands[i])
			continue;
		void *h = dlopen(cands[i], RTLD_LAZY | RTLD_LOCAL);
		if (h) {
			struct link_map *lm = NULL;
			char *path =
			    xstrdup(strchr(cands[i], '/') ||
			                    dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm ||
			                    !lm->l_name || !*lm->l_name
			                ? cands[i]
			                : lm->l_name);
			dlclose(h);
			sb_release(&tried);
			return path;
		}
		sb_addf(&tried, "%s%s", tried.n ? ", " : "", cands[i]);
	}
	err_set(e,
	        "no CUPTI (libcupti from the CUDA toolkit; set D4R_LIBCUPTI): tried %s",
	        tried.p);
	sb_release(&tried);
	return NULL;
}

/* PROGRAM's path as exec will find it (PATH searched when it has no '/'). */
static char *program_path(const char *prog)
{
	if (strchr(prog, '/'))
		return realpath(prog, NULL);
	const char *path = getenv("PATH");
	StrBuf p = STRBUF_INIT;
	for (const char *s = path ? path : ""; *s;) {
		const char *c = strchr(s, ':');
		size_t n = c ? (size_t)(c - s) : strlen(s);
		sb_reset(&p);
		sb_addf(&p, "%.*s/%s", (int)n, s, prog);
		if (access(p.p, X_OK) == 0) {
			char *r = realpath(p.p, NULL);
			sb_release(&p);
			return r;
		}
		s += n + (c != NULL);
	}
	sb_release(&p);
	return NULL;
}

static bool inside(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	return !strncmp(dir, path, n) &&
	       (path[n] == '/' || path[n] == 0 || !strcmp(dir, "/"));
}

/* Step 1's check of -o: -1 with a message when DIR is among PROGRAM's files. */
static int check_output(const char *out, int argc, char **argv, Err *e)
{
	char *dir = realpath(out, NULL);
	if (!dir) {
		if (errno != ENOENT)
			return err_set(e, "'%s': %s", out, strerror(errno));
		return 0; /* a new folder holds none of PROGRAM's files */
	}
	struct stat st;
	int rc = 0;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		rc = err_set(e, "-o '%s' is a file, not a folder", out);
		goto out;
	}
	char *prog = program_path(argv[0]);
	if (prog && inside(dir, prog))
		rc = err_set(
		    e,
		    "-o '%s' holds PROGRAM '%s': the layers would be written among "
		    "PROGRAM's own files (give a folder of their own)",
		    out, argv[0]);
	free(prog);
	for (int i = 1; !rc && i < argc; i++) {
		char *a = realpath(argv[i], NULL);
		if (a && (inside(dir, a) || inside(a, dir)))
			rc = err_set(e,
			             "-o '%s' is or holds '%s', a file PROGRAM is given: "
			             "the layers "
			             "would be written among PROGRAM's own files",
			             out, argv[i]);
		free(a);
	}
out:
	free(dir);
	return rc;
}

/*
 * PROGRAM runs with address-space randomisation off (unless --randomize):
 * its libraries, the driver's own memory and so its device allocations then
 * lie at the top of the address space.  A replay that must give buffers
 * their recorded addresses gets them only above the driver's own memory in
 * its process and where nothing was mapped when the driver started
 * (gpu/place.c), and a replay's process, randomised, has its driver lower
 * than that almost always (below by up to 1 TiB, at random).  Where the
 * kernel refuses (a seccomp filter), it is said and PROGRAM runs as it is.
 */
/* Whether PROGRAM can run with randomisation off, said on stderr: "off",
 * or "on" with why, for capture.json and --json.  The parent asks the
 * kernel and puts its own setting back; the child sets it for PROGRAM. */
static const char *randomisation_state(bool randomize, char *buf, size_t size)
{
	if (randomize)
		return "on (--randomize)";
	int cur = personality(0xffffffff);
	if (cur == -1 || personality((unsigned long)cur | ADDR_NO_RANDOMIZE) == -1) {
		snprintf(buf, size, "on (personality: %s)", strerror(errno));
		fprintf(stderr,
		        "d4r-splice: capture: address-space randomisation stays on for PROGRAM "
		        "(personality: %s): a layer whose buffers point into each other may "
		        "replay in some processes only\n",
		        strerror(errno));
		return buf;
	}
	personality((unsigned long)cur);
	fprintf(stderr, "d4r-splice: capture: address-space randomisation off for PROGRAM "
	                "(its device addresses high, where a replay can have them)\n");
	return "off";
}

/* Step 2: PROGRAM with the injection library; its exit status, or -1. */
static int run_program(char **argv, const char *lib, const char *cupti, const char *spool,
                       const char *kernel, const char *launch, uint64_t max_bytes,
                       bool randomise_off, bool stdout_to_stderr, Err *e)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return err_set(e, "fork: %s", strerror(errno));
	if (pid == 0) {
		char mb[32];
		snprintf(mb, sizeof mb, "%llu", (unsigned long long)max_bytes);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		setenv("D4R_LIBCUPTI", cupti, 1);
		setenv("D4R_CAPTURE_SPOOL", spool, 1);
		setenv("D4R_CAPTURE_LAUNCH", launch, 1);
		setenv("D4R_CAPTURE_MAX_BYTES", mb, 1);
		if (kernel)
			setenv("D4R_CAPTURE_KERNEL", kernel, 1);
		else
			unsetenv("D4R_CAPTURE_KERNEL");
		if (randomise_off)
			personality((unsigned long)personality(0xffffffff) | ADDR_NO_RANDOMIZE);
		if (stdout_to_stderr) /* --json: stdout is the document's */
			dup2(2, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "d4r-splice: capture: cannot run '%s': %s\n", argv[0],
		        strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return err_set(e, "waitpid: %s", strerror(errno));
	if (WIFSIGNALED(st))
		return err_set(
		    e, "PROGRAM '%s' failed: killed by signal %d (nothing captured)",
		    argv[0], WTERMSIG(st));
	if (WEXITSTATUS(st))
		return err_set(e,
		               "PROGRAM '%s' failed: exit status %d (nothing captured)",
		               argv[0], WEXITSTATUS(st));
	return 0;
}

static int rm_rf(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
		_exit(127);
	}
	int st;
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st)
	           ? 0
	           : -1;
}

typedef struct {
	VEC(char *) launched, records, errors, refused;
	unsigned refusals;
	bool loaded;
	char *graph; /* the API of the first CUDA graph launched, or NULL */
} Events;

static void events_release(Events *ev)
{
	for (size_t i = 0; i < ev->launched.n; i++)
		free(ev->launched.v[i]);
	for (size_t i = 0; i < ev->records.n; i++)
		free(ev->records.v[i]);
	for (size_t i = 0; i < ev->errors.n; i++)
		free(ev->errors.v[i]);
	for (size_t i = 0; i < ev->refused.n; i++)
		free(ev->refused.v[i]);
	VEC_FREE(ev->refused);
	VEC_FREE(ev->launched);
	VEC_FREE(ev->records);
	VEC_FREE(ev->errors);
	free(ev->graph);
}

/* Step 3: the events file, its notes and refusals said on stderr. */
static void read_events(const char *spool, Events *ev)
{
	StrBuf path = STRBUF_INIT;
	sb_addf(&path, "%s/events", spool);
	char *text = NULL;
	size_t n;
	Err ig = ERR_INIT;
	if (read_file(path.p, &text, &n, &ig) < 0) {
		err_release(&ig);
		sb_release(&path);
		return;
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strcmp(line, "loaded"))
			ev->loaded = true;
		else if (!strncmp(line, "launch ", 7))
			VEC_PUSH(ev->launched, xstrdup(line + 7));
		else if (!strncmp(line, "record ", 7))
			VEC_PUSH(ev->records, xstrndup(line + 7, strcspn(line + 7, " ")));
		else if (!strncmp(line, "error ", 6))
			VEC_PUSH(ev->errors, xstrdup(line + 6));
		else if (!strncmp(line, "graph ", 6) && !ev->graph) {
			ev->graph = xstrdup(line + 6);
			fprintf(
			    stderr,
			    "d4r-splice: capture: PROGRAM launched CUDA graphs (%s): the "
			    "kernels inside them are not seen, and not captured\n",
			    ev->graph);
		} else if (!strncmp(line, "refuse ", 7)) {
			ev->refusals++;
			VEC_PUSH(ev->refused, xstrdup(line + 7));
			fprintf(stderr, "d4r-splice: capture: not captured: %s\n",
			        line + 7);
		} else if (!strncmp(line, "note ", 5))
			fprintf(stderr, "d4r-splice: capture: %s\n", line + 5);
	}
	free(text);
	sb_release(&path);
}

/* Step 5: `run DIR/LAYER --corpus DIR --frame FRAME` in a child; its exit
 * status (0 identical, 1 differs, 2 error), its output in *out. */
static int replay(const char *dir, const char *layer, const char *frame, StrBuf *out)
{
	char *self = exe_dir();
	StrBuf exe = STRBUF_INIT, manifest = STRBUF_INIT;
	sb_addf(&exe, "%s/d4r-splice", self ? self : ".");
	sb_addf(&manifest, "%s/%s", dir, layer);
	free(self);
	int fds[2];
	if (pipe(fds) < 0)
		return 2;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execl("/proc/self/exe", exe.p, "run", manifest.p, "--corpus", dir,
		      "--frame", frame, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	if (f) {
		sb_read_stream(out, f);
		fclose(f);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	sb_release(&exe);
	sb_release(&manifest);
	if (pid < 0 || !WIFEXITED(st))
		return 2;
	return WEXITSTATUS(st) > 2 ? 2 : WEXITSTATUS(st);
}

/* Which buffer of the record a replayed frame first differs in. */
static void name_difference(const CapRecord *r, const char *frame, StrBuf *why)
{
	char *data = NULL;
	size_t n = 0;
	Err ig = ERR_INIT;
	if (read_file(frame, &data, &n, &ig) < 0) {
		sb_addf(why, "the replay's frame cannot be read: %s", err_msg(&ig));
		err_release(&ig);
		return;
	}
	size_t at = 0;
	for (size_t i = 0; i < r->nallocs + r->narrays; i++) {
		bool buf = i < r->nallocs;
		const unsigned char *before =
		    buf ? r->allocs[i].before : r->arrays[i - r->nallocs].before;
		const unsigned char *after =
		    buf ? r->allocs[i].after : r->arrays[i - r->nallocs].after;
		uint64_t size = buf ? r->allocs[i].size : r->arrays[i - r->nallocs].bytes;
		if (!memcmp(before, after, size))
			continue;
		for (uint64_t k = 0; k < size; k++) {
			if (at + k >= n || (unsigned char)data[at + k] != after[k]) {
				if (buf)
					sb_addf(why,
					        "buffer 'a%zu' (0x%llx, %llu bytes) "
					        "differs from the program's "
					        "output first at byte %llu",
					        i, (unsigned long long)r->allocs[i].base,
					        (unsigned long long)size,
					        (unsigned long long)k);
				else
					sb_addf(why,
					        "array 't%zu' (%llu bytes) differs from "
					        "the program's output "
					        "first at byte %llu",
					        i - r->nallocs, (unsigned long long)size,
					        (unsigned long long)k);
				free(data);
				return;
			}
		}
		at += size;
	}
	sb_adds(why, "the replay's frame differs from the program's output");
	free(data);
}

/* The layer written again as it was first (relocated buffers) and replayed,
 * so that what is said and kept is the first replay's. */
static int replay_again(const char *dir, const char *layer, CapRecord *r,
                        const CapWriteOpts *wo, const char *frame, StrBuf *out, Err *e)
{
	CapLayerInfo info;
	int rc = cap_layer_write(r, dir, wo, true, &info, e) < 0
	             ? 2
	             : replay(dir, layer, frame, out);
	cap_layer_info_release(&info);
	return rc;
}

/* What one_layer says: its lines on `say`; with --json, an object per
 * layer in `layers` and each refusal in `refused`. */
typedef struct {
	FILE *say;
	cJSON *layers, *refused;
} Said;

/* The --json object of a layer written (man page, JSON OUTPUT). */
static void layer_json(const Said *s, const CapRecord *r, const CapLayerInfo *info,
                       const char *dir, const char *attrs, const char *verdict,
                       const char *differs)
{
	if (!s->layers)
		return;
	cJSON *o = cJSON_CreateObject();
	StrBuf path = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&path, "%s/%s", dir, info->layer);
	cJSON_AddStringToObject(o, "layer", info->layer);
	cJSON_AddStringToObject(o, "path", path.p);
	cJSON_AddStringToObject(o, "kernel", r->kernel);
	cJSON_AddNumberToObject(o, "launch", r->launch);
	cJSON_AddStringToObject(o, "api", r->api);
	cJSON_AddNumberToObject(o, "buffers", (double)info->nbuffers);
	cJSON_AddNumberToObject(o, "arrays", (double)r->narrays);
	cJSON_AddNumberToObject(o, "frame_bytes", (double)info->frame_size);
	/* the PTX: "image", "fatbin" (the image's own), or "file" (source_file) */
	const char *src = info->ptx_source;
	bool own = src && (!strcmp(src, "image") || !strcmp(src, "fatbin"));
	if (src)
		cJSON_AddStringToObject(o, "ptx", own ? src : "file");
	else
		cJSON_AddNullToObject(o, "ptx");
	if (src && !own)
		cJSON_AddStringToObject(o, "source_file", src);
	else
		cJSON_AddNullToObject(o, "source_file");
	sb_addf(&text, "%s/%s", path.p, src ? "module.ptx" : "module.cubin");
	cJSON_AddStringToObject(o, "module", text.p);
	sb_reset(&text);
	cJSON_AddBoolToObject(o, "replay_only", !info->ptx_source);
	cJSON_AddStringToObject(o, "param_source", r->param_source);
	cJSON_AddNumberToObject(o, "inner_pointers", info->inner_pointers);
	cJSON_AddBoolToObject(o, "at_recorded_addresses",
	                      info->inner_pointers || r->at_recorded_addresses);
	sb_addf(&text, "{%s}", attrs ? attrs : "");
	cJSON *a = cJSON_Parse(text.p);
	cJSON_AddItemToObject(o, "attributes", a ? a : cJSON_CreateObject());
	cJSON_AddStringToObject(o, "verdict", verdict);
	if (!strcmp(verdict, "IDENTICAL"))
		cJSON_AddStringToObject(o, "oracle_sha256", info->oracle_sha256);
	else
		cJSON_AddNullToObject(o, "oracle_sha256");
	if (differs)
		cJSON_AddStringToObject(o, "differs", differs);
	cJSON_AddItemToArray(s->layers, o);
	sb_release(&path);
	sb_release(&text);
}

/* A launch that did not become a layer: said (cmd_fail) and listed. */
static void refuse(const Said *s, const char *msg)
{
	cmd_fail("capture: %s", msg);
	if (s->refused)
		cJSON_AddItemToArray(s->refused, cJSON_CreateString(msg));
}

/* Steps 4 and 5 for one record; the exit status it asks for. */
static int one_layer(const char *dir, const char *spool, const char *name,
                     const CapWriteOpts *wo0, const Said *s)
{
	FILE *say = s->say;
	Err e = ERR_INIT;
	CapRecord r;
	CapLayerInfo info;
	int rc = EXIT_ERROR;
	if (cap_record_load(spool, name, &r, &e) < 0) {
		refuse(s, err_msg(&e));
		err_release(&e);
		return EXIT_ERROR;
	}
	CapWriteOpts wo = *wo0;
	if (cap_layer_write(&r, dir, &wo, true, &info, &e) < 0) {
		refuse(s, err_msg(&e));
		cap_layer_info_release(&info);
		goto out;
	}
	fprintf(
	    say,
	    "captured %s launch %u (%s): %s/%s, %zu buffer%s, %llu-byte frame, %s%s\n",
	    r.kernel, r.launch, r.api, dir, info.layer, info.nbuffers,
	    info.nbuffers == 1 ? "" : "s", (unsigned long long)info.frame_size,
	    info.ptx_source ? "PTX from " : "replay-only (no PTX found)",
	    info.ptx_source ? info.ptx_source : "");
	StrBuf attrs = STRBUF_INIT;
	if (cap_launch_attrs(&r, &attrs, &e) == 0 && attrs.n)
		fprintf(say, "  launch attributes, replayed: {%s}\n", attrs.p);
	if (info.inner_pointers)
		fprintf(say,
		        "  %u pointer%s inside the buffers: the layer replays at the "
		        "recorded "
		        "addresses\n",
		        info.inner_pointers, info.inner_pointers == 1 ? "" : "s");
	StrBuf frame = STRBUF_INIT, out = STRBUF_INIT, why = STRBUF_INIT;
	sb_addf(&frame, "%s/.spool/replay.frame", dir);
	int v = replay(dir, info.layer, frame.p, &out);
	char *layer = xstrdup(info.layer);
	bool fixed = info.inner_pointers != 0;
	cap_layer_info_release(&info);
	if (v != 0 && !fixed && r.nallocs) {
		/* Pointers the capture cannot see (inside a TMA descriptor, or
		 * computed by the kernel from a base it was given) only hold at
		 * the recorded addresses: try there before giving up. */
		StrBuf why0 = STRBUF_INIT;
		if (v == 1)
			name_difference(&r, frame.p, &why0);
		else
			sb_adds(&why0, "the replay failed");
		r.at_recorded_addresses = true;
		sb_reset(&out);
		int v2 = cap_layer_write(&r, dir, &wo, true, &info, &e) < 0
		             ? 2
		             : replay(dir, layer, frame.p, &out);
		cap_layer_info_release(&info);
		if (v2 == 0) {
			fprintf(say,
			        "  replay moved: %s; at the recorded addresses it "
			        "reproduces the "
			        "program: the layer keeps them\n",
			        why0.p);
			v = 0;
		} else {
			r.at_recorded_addresses = false;
			sb_reset(&out);
			v = replay_again(dir, layer, &r, &wo, frame.p, &out, &e);
		}
		sb_release(&why0);
	}
	if (v == 0) {
		wo.reproduced = true;
		rc = cap_layer_write(&r, dir, &wo, true, &info, &e) < 0 ? EXIT_ERROR
		                                                        : EXIT_OK;
		if (rc == EXIT_OK) {
			fprintf(
			    say,
			    "  replay: IDENTICAL to the program's output (oracle %s)\n",
			    info.oracle_sha256);
			layer_json(s, &r, &info, dir, attrs.p, "IDENTICAL", NULL);
		}
	} else {
		if (v == 1)
			name_difference(&r, frame.p, &why);
		else
			sb_addf(&why, "the replay failed: %s", out.p ? out.p : "");
		while (why.n && why.p[why.n - 1] == '\n')
			why.p[--why.n] = 0;
		wo.nondeterministic = why.p;
		rc = cap_layer_write(&r, dir, &wo, false, &info, &e) < 0 ? EXIT_ERROR
		     : v == 1                                            ? EXIT_DIFFERS
		                                                         : EXIT_ERROR;
		fprintf(say,
		        "  replay: %s %s: %s; the layer is marked non-deterministic and "
		        "has no oracle\n",
		        v == 1 ? "DIFFERS" : "ERROR", layer, why.p);
		if (info.layer)
			layer_json(s, &r, &info, dir, attrs.p,
			           v == 1 ? "DIFFERS" : "ERROR", why.p);
	}
	if (e.set)
		cmd_fail("capture: %s", err_msg(&e));
	unlink(frame.p);
	free(layer);
	sb_release(&attrs);
	sb_release(&frame);
	sb_release(&out);
	sb_release(&why);
	cap_layer_info_release(&info);
out:
	cap_record_release(&r);
	err_release(&e);
	return rc;
}

int cmd_capture(int argc, char **argv)
{
	const char *kernel = NULL, *launch = "1", *ptx_from = NULL, *outdir = NULL;
	uint64_t max_bytes = 4ull << 30;
	bool json = false, randomize = false;
	const Opt opts[] = {
	    OPT_STRING(0, "kernel", &kernel, "REGEX",
	               "capture launches of kernels whose name matches (POSIX extended)"),
	    OPT_STRING(0, "launch", &launch, "N|all",
	               "the N-th matching launch (from 1; default 1), or every one"),
	    OPT_CALLBACK(
	        0, "max-bytes", &max_bytes, "SIZE", opt_size,
	        "the most bytes of allocations one launch may copy (default 4G)"),
	    OPT_STRING(0, "ptx-from", &ptx_from, "DIR",
	               "a folder of PTX files to find the kernels' PTX in"),
	    OPT_STRING('o', "output", &outdir, "DIR", "where the layers go (DIR/LAYER/)"),
	    OPT_FLAG(0, "randomize", &randomize,
	             "leave PROGRAM's address-space randomisation on (default: off, so that "
	             "replays can have its device addresses)"),
	    OPT_FLAG(
	        0, "json", &json,
	        "one JSON object on stdout (the lines, and PROGRAM's output, on stderr)"),
	    OPT_END(),
	};
	OptParse op = {.verb = "capture", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, -1, "give the PROGRAM to run, after '--'"))
		return EXIT_ERROR;
	if (!outdir)
		return opt_usage_error(&op, "give the output folder with -o DIR");
	if (strcmp(launch, "all") != 0) {
		char *end;
		unsigned long n = strtoul(launch, &end, 10);
		if (*end || !n || n > UINT_MAX || !*launch)
			return opt_fail(
			    &op,
			    "option '--launch': '%s' is not a launch number (1, 2, ...) "
			    "or 'all'",
			    launch);
	}
	regex_t re;
	if (kernel) {
		if (regcomp(&re, kernel, REG_EXTENDED | REG_NOSUB) != 0)
			return opt_fail(
			    &op,
			    "option '--kernel': '%s' is not a POSIX extended regular "
			    "expression",
			    kernel);
	}
	Err e = ERR_INIT;
	char *lib = NULL, *cupti = NULL;
	StrBuf spool = STRBUF_INIT, prog = STRBUF_INIT;
	Events ev = {0};
	int rc = EXIT_ERROR;
	cJSON *doc = NULL;
	Said said = {json ? stderr : stdout, NULL, NULL};
	if (check_output(outdir, nargs, argv, &e) < 0 || !(lib = find_library(&e)) ||
	    !(cupti = find_cupti(&e)) || mkdir_p(outdir, &e) < 0) {
		cmd_fail("capture: %s", err_msg(&e));
		goto out;
	}
	sb_addf(&spool, "%s/.spool", outdir);
	rm_rf(spool.p);
	char aslr_buf[120];
	const char *aslr = randomisation_state(randomize, aslr_buf, sizeof aslr_buf);
	/* PROGRAM's words alone: opt_parse left the options after them */
	char **pargv = xcalloc((size_t)nargs + 1, sizeof(*pargv));
	memcpy(pargv, argv, (size_t)nargs * sizeof(*pargv));
	int prc = mkdir_p(spool.p, &e) < 0
	              ? -1
	              : run_program(pargv, lib, cupti, spool.p, kernel, launch, max_bytes,
	                            !strcmp(aslr, "off"), json, &e);
	free(pargv);
	if (prc < 0) {
		cmd_fail("capture: %s", err_msg(&e));
		goto out;
	}
	read_events(spool.p, &ev);
	for (int i = 0; i < nargs; i++)
		sb_addf(&prog, "%s%s", i ? " " : "", argv[i]);
	if (json) {
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "output", outdir);
		cJSON_AddStringToObject(doc, "program", prog.p);
		cJSON_AddStringToObject(doc, "address_randomisation", aslr);
		if (ev.graph)
			cJSON_AddStringToObject(doc, "graphs", ev.graph);
		else
			cJSON_AddNullToObject(doc, "graphs");
		cJSON *k = cJSON_AddArrayToObject(doc, "kernels_launched");
		for (size_t i = 0; i < ev.launched.n; i++)
			cJSON_AddItemToArray(k, cJSON_CreateString(ev.launched.v[i]));
		said.layers = cJSON_AddArrayToObject(doc, "layers");
		said.refused = cJSON_AddArrayToObject(doc, "refused");
		for (size_t i = 0; i < ev.refused.n; i++)
			cJSON_AddItemToArray(said.refused,
			                     cJSON_CreateString(ev.refused.v[i]));
	}
	if (ev.errors.n) {
		for (size_t i = 0; i < ev.errors.n; i++)
			cmd_fail("capture: in PROGRAM: %s", ev.errors.v[i]);
		goto out;
	}
	if (!ev.loaded) {
		cmd_fail("capture: PROGRAM '%s' never loaded the injection library (it "
		         "made no CUDA "
		         "driver call, or CUDA_INJECTION64_PATH was not honoured)",
		         argv[0]);
		goto out;
	}
	StrBuf seen = STRBUF_INIT;
	size_t matched = 0;
	for (size_t i = 0; i < ev.launched.n; i++) {
		bool m = !kernel || regexec(&re, ev.launched.v[i], 0, NULL, 0) == 0;
		matched += m;
		sb_addf(&seen, "\n    %s", ev.launched.v[i]);
	}
	if (!ev.records.n) {
		const char *graphs =
		    ev.graph
		        ? " outside CUDA graphs (the kernels inside them are not seen)"
		        : "";
		if (!ev.launched.n)
			cmd_fail("capture: PROGRAM '%s' launched no kernel%s", argv[0],
			         graphs);
		else if (!matched)
			cmd_fail("capture: no kernel matching '%s' was launched%s; the "
			         "kernels launched:%s",
			         kernel, graphs, seen.p);
		else if (!ev.refusals)
			cmd_fail(
			    "capture: %s was launched fewer than %s times (--launch %s)",
			    kernel ? "no kernel matching the expression" : "no kernel",
			    launch, launch);
		else
			cmd_fail(
			    "capture: nothing captured (%u launch%s refused, said above)",
			    ev.refusals, ev.refusals == 1 ? "" : "es");
		sb_release(&seen);
		goto out;
	}
	sb_release(&seen);
	CapWriteOpts wo = {.ptx_from = ptx_from, .program = prog.p, .randomisation = aslr};
	rc = EXIT_OK;
	for (size_t i = 0; i < ev.records.n; i++) {
		int r = one_layer(outdir, spool.p, ev.records.v[i], &wo, &said);
		rc = MAX(rc, r);
	}
	if (rc != EXIT_ERROR)
		rm_rf(spool.p);
out:
	if (doc)
		cmd_json_print(doc, rc);
	if (kernel)
		regfree(&re);
	events_release(&ev);
	free(lib);
	free(cupti);
	sb_release(&spool);
	sb_release(&prog);
	err_release(&e);
	return rc;
}
