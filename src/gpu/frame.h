/*
 * frame.h - frames: comparison, statistics, the diff image.
 *
 * A frame is the concatenation of a layer's outputs after its launch
 * sequence (doc/layer-manifest.md, "frame").  Frames are compared byte for
 * byte; when they differ, the first differing byte is placed in its output,
 * pixel and channel, and the largest difference is read in each output's
 * element format, so "off by one ulp in f16" is told from "garbage".
 *
 * The layout of a frame comes from a manifest (frame_layout_from_manifest)
 * or from a compact spec for frames without one (`diff --layout`):
 *
 *     NAME:FORMAT:WxHxC[,NAME:FORMAT:WxHxC...]     e.g. rgba:u8:512x512x4,surf0:f16:80x46x4
 *     NAME:FORMAT:BYTES                            a flat output of BYTES bytes
 *
 * FORMAT is u8, u16, u32, s8, s16, s32, f16 or f32; `bytes` (or `raw`)
 * reads the output as u8.
 */
#ifndef D4R_GPU_FRAME_H
#define D4R_GPU_FRAME_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"
#include "gpu/manifest.h"

typedef struct {
	char *name;
	uint64_t off, size;          /* bytes within the frame */
	MfFormat format;             /* MF_NOFMT: bytes */
	unsigned width, height, channels; /* 0 when unknown */
} FrameOutput;

typedef struct {
	FrameOutput *v;
	size_t n;
	uint64_t size;
} FrameLayout;

void frame_layout_from_manifest(const Manifest *m, FrameLayout *lay);
/* Parses a --layout spec (above); -1 with a message naming the bad part. */
int frame_layout_parse(const char *spec, FrameLayout *lay, Err *e);
void frame_layout_release(FrameLayout *lay);

/* Per output: how two frames differ there. */
typedef struct {
	uint64_t bytes_differ;         /* differing bytes */
	uint64_t elems_differ;         /* differing elements (format-sized) */
	int64_t first_off;             /* first differing byte, from the output's start; -1 */
	double max_abs;                /* largest |a-b| over elements, in the format */
	int64_t max_elem;              /* the element where it is; -1 */
	bool nan_mismatch;             /* a NaN on one side only (f16/f32) */
} FrameOutputDiff;

typedef struct {
	uint64_t bytes_differ;
	int64_t first_off;             /* first differing byte of the frame, -1 when equal */
	int first_output;              /* output holding it, -1 */
	int64_t first_x, first_y, first_c; /* pixel and channel, -1 when not described */
	FrameOutputDiff *outs;         /* lay->n entries */
	size_t nouts;
	bool size_differs;             /* the frames' sizes differ (compared up to the shorter) */
} FrameDiff;

/*
 * Compares a[0..na) with b[0..nb) under `lay` (which may be NULL: one
 * flat u8 output).  Returns 1 when they differ, 0 when identical.
 */
int frame_compare(const FrameLayout *lay, const unsigned char *a, size_t na,
                  const unsigned char *b, size_t nb, FrameDiff *d);
void frame_diff_release(FrameDiff *d);

/* Element e of format f at p, as a double. */
double frame_elem_value(MfFormat f, const unsigned char *p);

/* A human summary of d (several lines, no trailing newline) into sb. */
void frame_diff_describe(const FrameLayout *lay, const FrameDiff *d, StrBuf *sb);
/* The same as JSON members (no braces): "identical": ..., "differing_bytes": ... */
void frame_diff_json(const FrameLayout *lay, const FrameDiff *d, StrBuf *sb);

/*
 * Writes `path` (PNG, atomically): the first output of the layout that has
 * a width and height and differs (or the first described one when none
 * differs), drawn as a dimmed greyscale of frame `a` with every differing
 * pixel red.  -1 with a message when no output is described as an image.
 */
int frame_diff_image(const char *path, const FrameLayout *lay, const unsigned char *a,
                     const unsigned char *b, size_t n, const FrameDiff *d, Err *e);

/* Writes an RGB image (w x h pixels, 3 bytes each, row after row) as PNG
 * to `path`, atomically.  -1 with libpng's message. */
int frame_png_rgb(const char *path, unsigned w, unsigned h, const unsigned char *rgb, Err *e);

#endif
