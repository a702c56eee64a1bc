/*
 * capture.h - a layer out of a running program: the recording stage.
 *
 * `d4r-splice capture -- PROGRAM` runs PROGRAM with an injection library
 * the CUDA driver loads (CUDA_INJECTION64_PATH).  The stage has two
 * halves, joined only by the files they exchange, as Mneme keeps recording
 * and replay apart:
 *
 *   in PROGRAM (build/libd4r-capture.so)
 *     inject.c   CUPTI callbacks -> the tap; the only file that knows CUPTI
 *     tap.c      module images kept; the chosen launch's geometry and
 *                parameter block; each device pointer resolved to its
 *                allocation and copied before and after the launch; all of
 *                it written to the spool folder
 *   in d4r-splice (the `capture` verb, after PROGRAM has ended)
 *     record.c   a spool record -> DIR/LAYER/layer.json in the manifest
 *                format gpu/manifest.c reads, its corpus files and its
 *                oracle frame (the manifest writer)
 *   both
 *     nvinfo.c   a kernel's parameter offsets and sizes from the cubin's
 *                .nv.info section, or from the PTX entry's .param list
 *
 * The spool, DIR/.spool/ (doc/layer-manifest.md, "Captured layers"):
 *     events          one line per event, appended as PROGRAM runs:
 *                     "loaded", "launch KERNEL", "record L-N KERNEL",
 *                     "refuse KERNEL #N: why", "graph API" (the first
 *                     CUDA graph launched), "note text", "error text"
 *     modules/mNNNN.img    each module image as the driver was handed it
 *     L-N/record.json      the launch: see cap_record_load
 *     L-N/params.bin       its parameter block
 *     L-N/aI.before, L-N/aI.after   allocation I before and after
 *
 * Decisions:
 *  - The tap writes raw facts only; every decision that can be taken after
 *    PROGRAM ended (which parameter is a pointer to which buffer, which
 *    buffers the launch wrote, where the PTX is) is record.c's, so it is
 *    tested without a GPU and without CUPTI.
 *  - Pointers stored inside buffers cannot be rebased by a manifest field;
 *    the layer then asks for its buffers at their recorded addresses
 *    ("address" of each buffer) and says so.
 */
#ifndef D4R_CAPTURE_H
#define D4R_CAPTURE_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"

/* ---- parameter layouts (nvinfo.c) ----------------------------------------- */

typedef struct {
	uint32_t offset, size;
} CapParam;

typedef struct {
	CapParam *v;
	size_t n, cap;
	uint32_t block_size; /* the whole block (0 when unknown: the end of the last) */
} CapParams;

void cap_params_release(CapParams *p);

/*
 * The parameters of `kernel` from an ELF cubin's .nv.info.KERNEL section
 * (EIATTR_KPARAM_INFO records: ordinal, offset, size; EIATTR_PARAM_CBANK or
 * EIATTR_CBANK_PARAM_SIZE for the block size), in ordinal order.  Returns
 * 1 with *out filled, 0 when the cubin has no such section (or it holds no
 * parameter records), -1 when the ELF or the section is damaged ("offset
 * 0xOFF: ...").  Every read is bounded by n.
 */
int cap_nvinfo_params(const void *elf, size_t n, const char *kernel, CapParams *out,
                      Err *e);

/*
 * The parameters of `.entry kernel` in PTX text: each `.param .TYPE
 * [.align N] name[[K]]` laid out as the PTX ISA lays out a kernel's
 * parameter space (each aligned to its alignment, in order).  1 found, 0 no
 * such entry, -1 a parameter list that cannot be read.
 */
int cap_ptx_params(const char *ptx, size_t n, const char *kernel, CapParams *out, Err *e);

/* What kind of module image p[0..n) is. */
typedef enum { CAP_IMG_OTHER, CAP_IMG_PTX, CAP_IMG_CUBIN, CAP_IMG_FATBIN } CapImageKind;
CapImageKind cap_image_kind(const void *p, size_t n);
/* Does the image define kernel `name` (an ELF symbol, a PTX .entry, or
 * either inside a fatbin's entries)? */
bool cap_image_has_kernel(const void *p, size_t n, const char *name);
/*
 * The layout of `kernel` from an image of any kind: a cubin's .nv.info, a
 * PTX entry, a fatbin's cubin entries then its PTX entries.  *source says
 * which ("nv.info", "ptx").  1 found, 0 none, -1 a damaged image.
 */
int cap_image_params(const void *p, size_t n, const char *kernel, CapParams *out,
                     const char **source, Err *e);

/* ---- a recorded launch (record.c) ------------------------------------------ */

typedef struct {
	uint64_t base, size;           /* the allocation (cuMemGetAddressRange) */
	unsigned char *before, *after; /* its bytes before and after the launch */
} CapAlloc;

/* A CUDA array behind a texture or surface object parameter (2-D). */
typedef struct {
	unsigned width, height, channels;
	char format[8];                  /* the manifest's name: "f16", "u8", ... */
	bool texture, surface;           /* objects of each kind over it */
	char filter[8], address[8];      /* the texture's: "point", "clamp", ... */
	bool normalized, read_float;
	uint64_t bytes;                  /* rows packed */
	unsigned char *before, *after;
} CapArray;

/* A parameter that is a texture or surface object: the 8 bytes at offset. */
typedef struct {
	uint32_t offset;
	bool surface;                    /* else a texture */
	unsigned array;
} CapObject;

/* A cuLaunchKernelEx attribute as the program gave it: its
 * CUlaunchAttributeID and the first 32 bytes of its value. */
typedef struct {
	unsigned id;
	uint32_t value[8];
} CapAttr;

typedef struct {
	char *kernel;
	unsigned launch; /* 1 for the first launch of this kernel */
	char *api;       /* "cuLaunchKernelEx" */
	unsigned grid[3], block[3], cluster[3];
	uint32_t dynamic_shared_bytes;
	unsigned char *param_block;
	uint32_t param_size;
	CapParams params;
	char *param_source; /* "cuFuncGetParamInfo", "nv.info", "ptx", "extra" */
	CapAlloc *allocs;
	size_t nallocs;
	CapArray *arrays;
	size_t narrays;
	CapObject *objects;
	size_t nobjects;
	bool at_recorded_addresses; /* every buffer at its recorded address */
	unsigned char *image; /* the module image */
	size_t image_size;
	bool synchronised; /* the context was synchronised around the launch */
	bool cooperative;  /* cuLaunchCooperativeKernel */
	CapAttr *attrs;    /* cuLaunchKernelEx's attributes */
	size_t nattrs;
} CapRecord;

/* Reads the spool's L-N folder (record.json, params.bin, aI.before/after,
 * the module image it names).  -1 naming the file that is missing or
 * wrong. */
int cap_record_load(const char *spool, const char *name, CapRecord *r, Err *e);
void cap_record_release(CapRecord *r);

typedef struct {
	const char *ptx_from;         /* --ptx-from DIR, or NULL */
	const char *triton_cache;     /* NULL: $TRITON_CACHE_DIR, else ~/.triton/cache */
	bool no_triton;               /* do not look in Triton's cache */
	const char *program;          /* PROGRAM and its arguments, for capture.json */
	const char *randomisation;    /* PROGRAM's address-space randomisation: "off", "on (...)" */
	bool reproduced;              /* a replay gave the captured frame */
	const char *nondeterministic; /* a replay did not: which buffer differed */
} CapWriteOpts;

typedef struct {
	char *layer;      /* the layer's name (its folder under DIR) */
	char *ptx_source; /* where the PTX came from; NULL: replay-only */
	size_t nbuffers, noutputs, nfields;
	unsigned pointer_params; /* parameters that point into buffers */
	unsigned inner_pointers; /* pointers found inside the buffers */
	uint64_t frame_size;
	char oracle_sha256[65];
} CapLayerInfo;

/*
 * What the launch attributes of r ask of a replay: each one the manifest
 * replays ("attributes" of the launch, gpu/manifest.h's mf_attr_kinds;
 * the cluster shape is "cluster"; cuLaunchCooperativeKernel is
 * "cooperative": 1) as "NAME": VALUE text, comma-separated, in *json
 * (empty when none).  One that asks nothing of the launch (its default
 * value, a stream's policy, a cluster scheduling preference without
 * clusters) is left out.  -1 naming the first attribute a replay cannot give
 * ("its launch attribute 'launch_completion_event' (id 12) is not
 * replayed: ..."): such a launch is not made into a layer.
 */
int cap_launch_attrs(const CapRecord *r, StrBuf *json, Err *e);

/*
 * The layer name of a record: the kernel's name made file-safe, and "-N"
 * for a launch after the first.
 */
char *cap_layer_name(const CapRecord *r);

/*
 * Writes DIR/LAYER/: layer.json (doc/layer-manifest.md), the module
 * (module.ptx, or module.cubin when no PTX is found: replay-only), each
 * buffer's initial contents (aI.bin, trailing zero bytes left out; none
 * when all zero), oracle.frame (the after-bytes of the buffers the launch
 * wrote, in buffer order) and capture.json (where it came from).  The
 * manifest names the oracle when `with_oracle`; otherwise it has none and
 * says "deterministic": false in capture.json.  Every file is written
 * whole or not at all (base/file.h).
 */
int cap_layer_write(const CapRecord *r, const char *dir, const CapWriteOpts *o,
                    bool with_oracle, CapLayerInfo *info, Err *e);
void cap_layer_info_release(CapLayerInfo *info);

/* The manifest text alone (what cap_layer_write puts in layer.json), for
 * the golden tests.  `ptx_file` is the module's path in the corpus folder. */
void cap_manifest_text(const CapRecord *r, const char *layer, const char *module_file,
                       bool with_oracle, const char *oracle_sha256, StrBuf *out,
                       CapLayerInfo *info);

/*
 * Where the PTX of r's kernel is: the image itself (PTX text, or a PTX
 * entry of a fatbin), then o->ptx_from (a NAME.ptx with `.entry KERNEL`;
 * when a NAME.cubin lies beside it, it must equal the image), then
 * Triton's cache (a KERNEL.ptx beside a KERNEL.cubin equal to the image).
 * Returns 1 with *ptx (malloc'd, *n bytes) and *source ("image", "fatbin",
 * a file path), 0 when there is none, -1 on a read error.
 */
int cap_find_ptx(const CapRecord *r, const CapWriteOpts *o, char **ptx, size_t *n,
                 char **source, Err *e);

#endif
