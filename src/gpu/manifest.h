/*
 * manifest.h - the launch manifest, recipes/LAYER/layer.json.
 *
 * The format is doc/layer-manifest.md; this is its reader and validator.
 * Everything the GPU side needs to run a layer is here, checked before any
 * device work starts: sizes, alignment, overlap, references between
 * buffers, arrays, parameter fields and frame outputs.  Messages name the
 * file and the JSON path of the offending value:
 *
 *     recipes/enc4/layer.json: launches[1].params.fields[3]: offset 140 + 8
 *     exceeds the 144-byte block
 *
 * The parameter block builder and the seeded generator are pure functions,
 * so everything except the launch itself is tested without a GPU.
 */
#ifndef D4R_GPU_MANIFEST_H
#define D4R_GPU_MANIFEST_H

#include "base/base.h"
#include "base/err.h"
#include "base/layout.h"

/* Element formats of buffers, arrays and frame outputs. */
typedef enum {
	MF_NOFMT = 0,
	MF_U8,
	MF_U16,
	MF_U32,
	MF_S8,
	MF_S16,
	MF_S32,
	MF_F16,
	MF_F32,
} MfFormat;

const char *mf_format_name(MfFormat f);
size_t mf_format_size(MfFormat f);      /* bytes per element; 0 for MF_NOFMT */
MfFormat mf_format_parse(const char *s); /* MF_NOFMT when unknown */

typedef enum { MF_INIT_ZERO, MF_INIT_FILL, MF_INIT_FILE, MF_INIT_RANDOM } MfInitKind;

typedef struct {
	MfInitKind kind;
	unsigned byte;      /* fill */
	char *path;         /* file: as written, relative to the corpus folder */
	uint64_t seed;      /* random */
	MfFormat format;    /* random: element format */
	double min, max;    /* random */
} MfInit;

typedef struct {
	char *name;
	uint64_t size;
	MfInit init;
	uint64_t address;   /* "address": the device address it must have; 0 any */
} MfBuffer;

enum { MF_ADDR_CLAMP, MF_ADDR_WRAP, MF_ADDR_BORDER, MF_ADDR_MIRROR };

typedef struct {
	char *name;
	unsigned width, height, channels;
	MfFormat format;
	MfInit init;
	bool texture;            /* a CUtexObject over it */
	bool tex_linear;         /* filter: linear (else point) */
	int tex_address;         /* MF_ADDR_* */
	bool tex_normalized;     /* normalized coordinates */
	bool tex_read_float;     /* read: normalized_float (else element) */
	bool surface;            /* a CUsurfObject over it */
} MfArray;

typedef enum {
	MF_P_U8,
	MF_P_U16,
	MF_P_U32,
	MF_P_U64,
	MF_P_S32,
	MF_P_F32,
	MF_P_BUFFER,
	MF_P_TEXTURE,
	MF_P_SURFACE,
} MfFieldKind;

typedef struct {
	uint32_t offset;
	MfFieldKind kind;
	uint64_t value;   /* integer kinds: the bits (s32 two's complement) */
	float fvalue;     /* f32 */
	int ref;          /* buffer / array index */
	uint64_t add;     /* buffer: byte offset into it */
} MfField;

/*
 * A launch attribute a launch asks for ("attributes": {"priority": 3}),
 * passed to cuLaunchKernelEx (gpu/place.c) as the CUlaunchAttribute `id`
 * with the value v[0] (the bits of a 32-bit integer), or v[0..3) for a
 * shape.  Which ones a manifest may name: gpu/mfattr.h.  The cluster shape
 * is "cluster", not an attribute.
 */
typedef struct {
	unsigned id;
	uint32_t v[3];
} MfAttr;

#define MF_MAX_ATTRS 12

typedef struct {
	char *entry;
	unsigned grid[3], block[3];
	unsigned cluster[3];      /* "cluster": blocks per cluster; 1 1 1 without */
	MfAttr attrs[MF_MAX_ATTRS]; /* "attributes", in the manifest's order */
	unsigned nattrs;
	uint32_t dynamic_shared_bytes;
	uint32_t param_size;
	MfField *fields;
	size_t nfields;
	unsigned repeat;
} MfLaunch;

typedef struct {
	char *name;
	int buffer;          /* index or -1 */
	int array;           /* index or -1 */
	uint64_t offset;     /* into the buffer */
	uint64_t size;       /* bytes this output adds to the frame */
	uint64_t frame_off;  /* where it starts in the frame */
	MfFormat format;     /* MF_NOFMT: read as bytes */
	unsigned width, height, channels; /* 0 when not described */
} MfOutput;

typedef struct {
	char *path;          /* the manifest file, as given */
	char *corpus;        /* corpus folder, or NULL when none was found */
	char *layer;
	char *module;        /* as written: relative to the corpus folder */
	char *entry;
	MfBuffer *buffers;
	size_t nbuffers;
	MfArray *arrays;
	size_t narrays;
	MfLaunch *launches;
	size_t nlaunches;
	MfOutput *outputs;
	size_t noutputs;
	uint64_t frame_size; /* sum of the outputs' sizes */
	char *oracle_path;   /* NULL when the manifest has no oracle */
	char oracle_sha256[65];
} Manifest;

/*
 * Reads and validates `path`.  `corpus_dir` is the --corpus option or NULL;
 * the folder is resolved with layout_corpus_dir, and a manifest whose
 * corpus cannot be found still loads (m->corpus is NULL: diff needs no
 * corpus; run reports the missing folder when it needs a file from it).
 * Returns 0, or -1 with a message naming the file and the JSON path
 * (base/json.h).
 */
int mf_load(const char *path, const char *corpus_dir, Manifest *m, Err *e);
/* The same from text already in memory (`path` only names it in messages). */
int mf_parse(const char *path, const char *text, size_t len, Manifest *m, Err *e);
void mf_release(Manifest *m);

/* mf_load of LAYER's manifest, found by layout_find_layer. */
int mf_load_layer(const char *layer, const char *corpus_opt, Manifest *m, Err *e);

/* corpus/rel as a malloc'd path; -1 with a message when there is no corpus. */
int mf_corpus_path(const Manifest *m, const char *rel, char **out, Err *e);

/*
 * What LAYER's manifest says about where its module is, for the floors
 * below this one (base/layout.h: a LayoutLayerFn).  The manifest is read
 * and checked whole: a manifest with a mistake is refused here too.
 */
int mf_layout_layer(const char *layer, const char *corpus_opt, LayoutLayer *out, Err *e);

int mf_buffer_index(const Manifest *m, const char *name);
int mf_array_index(const Manifest *m, const char *name);
int mf_output_index(const Manifest *m, const char *name);
/* Bytes of one array, rows packed. */
uint64_t mf_array_bytes(const MfArray *a);

/*
 * Builds launch `l`'s parameter block into out[0..l->param_size): zero
 * bytes, then each field.  buf_addr[i] is buffer i's device address,
 * tex[i] / surf[i] array i's texture / surface object handle (either array
 * may be NULL when the manifest has no arrays).  Pure: no GPU involved.
 */
void mf_param_block(const MfLaunch *l, const uint64_t *buf_addr,
                    const uint64_t *tex, const uint64_t *surf, unsigned char *out);

/*
 * The seeded generator of doc/layer-manifest.md: splitmix64.  `state` is
 * the seed; each call advances it and returns the next output.
 */
uint64_t mf_splitmix64(uint64_t *state);
/* Fills dst[0..n) with elements of `init` (kind random) in format `f`;
 * n is a multiple of the element size. */
void mf_fill_random(const MfInit *init, MfFormat f, void *dst, size_t n);

/* IEEE binary16 conversions: from double with one rounding (to nearest,
 * ties to even), and exactly back. */
uint16_t mf_f16_from_double(double x);
double mf_f16_to_double(uint16_t h);

#endif
