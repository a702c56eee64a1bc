/*
 * frame.c - comparing frames and drawing where they differ.
 *
 * The verdict is the byte comparison and nothing else; the statistics
 * (where the first difference is, the largest difference read in the
 * output's format) only help a person see what went wrong.  One pass over
 * both frames, output by output.
 */
#include "gpu/frame.h"

#include "base/file.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void frame_layout_from_manifest(const Manifest *m, FrameLayout *lay)
{
	lay->v = xcalloc(m->noutputs + 1, sizeof(FrameOutput));
	lay->n = m->noutputs;
	lay->size = m->frame_size;
	for (size_t i = 0; i < m->noutputs; i++) {
		const MfOutput *o = &m->outputs[i];
		FrameOutput *f = &lay->v[i];
		f->name = xstrdup(o->name);
		f->off = o->frame_off;
		f->size = o->size;
		f->format = o->format;
		f->width = o->width;
		f->height = o->height;
		f->channels = o->channels;
	}
}

int frame_layout_parse(const char *spec, FrameLayout *lay, Err *e)
{
	memset(lay, 0, sizeof(*lay));
	char *copy = xstrdup(spec), *save = NULL;
	size_t cap = 1;
	for (const char *p = spec; *p; p++)
		cap += *p == ',';
	lay->v = xcalloc(cap, sizeof(FrameOutput));
	int rc = -1;
	for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		char *c1 = strchr(part, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c1 || !c2 || c1 == part) {
			err_set(e, "--layout: '%s' is not NAME:FORMAT:WxHxC or NAME:FORMAT:BYTES", part);
			goto out;
		}
		*c1 = *c2 = 0;
		FrameOutput *f = &lay->v[lay->n];
		const char *fmt = c1 + 1, *shape = c2 + 1;
		if (!strcmp(fmt, "bytes") || !strcmp(fmt, "raw")) {
			f->format = MF_U8;
		} else if ((f->format = mf_format_parse(fmt)) == MF_NOFMT) {
			err_set(e, "--layout: '%s': unknown format '%s' (u8, u16, u32, s8, s16, "
			           "s32, f16, f32, bytes)", part, fmt);
			goto out;
		}
		unsigned long long a = 0, b = 0, c = 1;
		int used = 0, shaped = 1;
		size_t es = mf_format_size(f->format);
		if (sscanf(shape, "%llux%llux%llu%n", &a, &b, &c, &used) == 3 && !shape[used]) {
			/* W x H x C */
		} else if (c = 1, sscanf(shape, "%llux%llu%n", &a, &b, &used) == 2 && !shape[used]) {
			/* W x H, one channel */
		} else if (sscanf(shape, "%llu%n", &a, &used) == 1 && !shape[used] &&
		           shape[0] >= '0' && shape[0] <= '9') {
			shaped = 0;
		} else {
			err_set(e, "--layout: '%s': bad shape '%s' (WxHxC, WxH or BYTES)", part, shape);
			goto out;
		}
		if (!shaped) {
			if (a == 0 || a % es) {
				err_set(e, "--layout: '%s': %llu bytes is not a whole number of "
				           "'%s' elements", part, a, fmt);
				goto out;
			}
			f->size = a;
		} else {
			if (!a || !b || !c || a > 1u << 20 || b > 1u << 20 || c > 64 ||
			    shape[0] < '0' || shape[0] > '9') {
				err_set(e, "--layout: '%s': bad shape '%s'", part, shape);
				goto out;
			}
			f->width = (unsigned)a;
			f->height = (unsigned)b;
			f->channels = (unsigned)c;
			f->size = a * b * c * es;
		}
		f->name = xstrdup(part);
		f->off = lay->size;
		lay->size += f->size;
		lay->n++;
	}
	if (!lay->n) {
		err_set(e, "--layout: empty spec");
		goto out;
	}
	rc = 0;
out:
	free(copy);
	if (rc < 0)
		frame_layout_release(lay);
	return rc;
}

void frame_layout_release(FrameLayout *lay)
{
	for (size_t i = 0; i < lay->n; i++)
		free(lay->v[i].name);
	free(lay->v);
	memset(lay, 0, sizeof(*lay));
}

double frame_elem_value(MfFormat f, const unsigned char *p)
{
	switch (f) {
	case MF_U16: return (double)(p[0] | p[1] << 8);
	case MF_S16: return (double)(int16_t)(p[0] | p[1] << 8);
	case MF_U32: return (double)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
		                         (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
	case MF_S32: return (double)(int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
		                                  (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
	case MF_S8: return (double)(int8_t)p[0];
	case MF_F16: return mf_f16_to_double((uint16_t)(p[0] | p[1] << 8));
	case MF_F32: {
		uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		             (uint32_t)p[3] << 24;
		float fl;
		memcpy(&fl, &u, 4);
		return fl;
	}
	default: return (double)p[0];
	}
}

static void compare_output(const FrameOutput *o, const unsigned char *a,
                           const unsigned char *b, uint64_t n, FrameOutputDiff *od)
{
	memset(od, 0, sizeof(*od));
	od->first_off = od->max_elem = -1;
	MfFormat f = o->format ? o->format : MF_U8;
	size_t es = mf_format_size(f);
	for (uint64_t i = 0; i < n; i += es) {
		if (i + es > n || memcmp(a + i, b + i, es) == 0) {
			/* A ragged tail (frames of different sizes) is compared bytewise. */
			for (uint64_t k = i; k < n && k < i + es && i + es > n; k++)
				if (a[k] != b[k]) {
					od->bytes_differ++;
					if (od->first_off < 0)
						od->first_off = (int64_t)k;
				}
			continue;
		}
		od->elems_differ++;
		for (size_t k = 0; k < es; k++)
			if (a[i + k] != b[i + k]) {
				od->bytes_differ++;
				if (od->first_off < 0)
					od->first_off = (int64_t)(i + k);
			}
		double va = frame_elem_value(f, a + i), vb = frame_elem_value(f, b + i);
		if (isnan(va) != isnan(vb)) {
			od->nan_mismatch = true;
			continue;
		}
		double d = fabs(va - vb);
		if (isnan(va) || isnan(d))   /* both NaN with other payloads; inf - inf */
			continue;
		if (od->max_elem < 0 || d > od->max_abs) {
			od->max_abs = d;
			od->max_elem = (int64_t)(i / es);
		}
	}
}

int frame_compare(const FrameLayout *lay, const unsigned char *a, size_t na,
                  const unsigned char *b, size_t nb, FrameDiff *d)
{
	memset(d, 0, sizeof(*d));
	d->first_off = -1;
	d->first_output = -1;
	d->first_x = d->first_y = d->first_c = -1;
	size_t n = MIN(na, nb);
	d->size_differs = na != nb;
	FrameOutput flat = {.name = (char *)"frame", .off = 0, .size = n, .format = MF_U8};
	FrameLayout one = {.v = &flat, .n = 1, .size = n};
	if (!lay)
		lay = &one;
	d->nouts = lay->n;
	d->outs = xcalloc(lay->n + 1, sizeof(FrameOutputDiff));
	uint64_t covered = 0;
	for (size_t i = 0; i < lay->n; i++) {
		const FrameOutput *o = &lay->v[i];
		FrameOutputDiff *od = &d->outs[i];
		if (o->off >= n) {
			memset(od, 0, sizeof(*od));
			od->first_off = od->max_elem = -1;
			continue;
		}
		uint64_t len = MIN(o->size, n - o->off);
		compare_output(o, a + o->off, b + o->off, len, od);
		covered = MAX(covered, o->off + len);
		d->bytes_differ += od->bytes_differ;
		if (od->first_off >= 0 && d->first_off < 0) {
			d->first_off = (int64_t)o->off + od->first_off;
			d->first_output = (int)i;
			if (o->width && o->height) {
				size_t es = mf_format_size(o->format ? o->format : MF_U8);
				uint64_t elem = (uint64_t)od->first_off / es;
				unsigned ch = o->channels ? o->channels : 1;
				d->first_c = (int64_t)(elem % ch);
				d->first_x = (int64_t)((elem / ch) % o->width);
				d->first_y = (int64_t)(elem / ch / o->width);
			}
		}
	}
	/* Bytes past the layout (a layout shorter than the frames). */
	for (uint64_t k = covered; k < n; k++)
		if (a[k] != b[k]) {
			d->bytes_differ++;
			if (d->first_off < 0)
				d->first_off = (int64_t)k;
		}
	return d->bytes_differ || d->size_differs;
}

void frame_diff_release(FrameDiff *d)
{
	free(d->outs);
	memset(d, 0, sizeof(*d));
}

void frame_diff_describe(const FrameLayout *lay, const FrameDiff *d, StrBuf *sb)
{
	if (!d->bytes_differ && !d->size_differs) {
		sb_adds(sb, "frames are identical");
		return;
	}
	sb_addf(sb, "frames differ: %" PRIu64 " byte%s", d->bytes_differ,
	        d->bytes_differ == 1 ? "" : "s");
	if (d->size_differs)
		sb_adds(sb, " (and their sizes differ)");
	if (d->first_off >= 0) {
		sb_addf(sb, "\nfirst difference at byte %" PRId64, d->first_off);
		if (d->first_output >= 0) {
			const FrameOutput *o = &lay->v[d->first_output];
			sb_addf(sb, " (output '%s' byte %" PRId64, o->name,
			        d->first_off - (int64_t)o->off);
			if (d->first_x >= 0)
				sb_addf(sb, ", pixel (%" PRId64 ", %" PRId64 ") channel %" PRId64,
				        d->first_x, d->first_y, d->first_c);
			sb_adds(sb, ")");
		}
	}
	for (size_t i = 0; lay && i < d->nouts; i++) {
		const FrameOutputDiff *od = &d->outs[i];
		if (!od->bytes_differ)
			continue;
		const FrameOutput *o = &lay->v[i];
		MfFormat f = o->format ? o->format : MF_U8;
		sb_addf(sb, "\n  %s: %" PRIu64 " bytes, %" PRIu64 " %s elements differ; "
		            "max |a-b| %.9g at element %" PRId64,
		        o->name, od->bytes_differ, od->elems_differ, mf_format_name(f), od->max_abs,
		        od->max_elem);
		if (od->nan_mismatch)
			sb_adds(sb, "; NaN on one side");
	}
}


void frame_diff_json(const FrameLayout *lay, const FrameDiff *d, StrBuf *sb)
{
	int same = !d->bytes_differ && !d->size_differs;
	sb_addf(sb, "\"identical\": %s, \"differing_bytes\": %" PRIu64 ", \"size_differs\": %s",
	        same ? "true" : "false", d->bytes_differ, d->size_differs ? "true" : "false");
	if (d->first_off >= 0) {
		sb_addf(sb, ", \"first_difference\": {\"offset\": %" PRId64, d->first_off);
		if (d->first_output >= 0) {
			sb_adds(sb, ", \"output\": ");
			sb_add_json(sb, lay->v[d->first_output].name);
			sb_addf(sb, ", \"output_offset\": %" PRId64,
			        d->first_off - (int64_t)lay->v[d->first_output].off);
			if (d->first_x >= 0)
				sb_addf(sb, ", \"x\": %" PRId64 ", \"y\": %" PRId64 ", \"channel\": %" PRId64,
				        d->first_x, d->first_y, d->first_c);
		}
		sb_adds(sb, "}");
	}
	if (lay) {
		sb_adds(sb, ", \"outputs\": [");
		for (size_t i = 0; i < d->nouts; i++) {
			const FrameOutputDiff *od = &d->outs[i];
			const FrameOutput *o = &lay->v[i];
			sb_adds(sb, i ? ", {\"name\": " : "{\"name\": ");
			sb_add_json(sb, o->name);
			sb_addf(sb, ", \"format\": \"%s\", \"differing_bytes\": %" PRIu64
			            ", \"differing_elements\": %" PRIu64,
			        mf_format_name(o->format ? o->format : MF_U8), od->bytes_differ,
			        od->elems_differ);
			if (od->max_elem >= 0)
				sb_addf(sb, ", \"max_abs_diff\": %.17g, \"max_abs_element\": %" PRId64,
				        od->max_abs, od->max_elem);
			sb_addf(sb, ", \"nan_mismatch\": %s}", od->nan_mismatch ? "true" : "false");
		}
		sb_adds(sb, "]");
	}
}

/* ---- the diff image ------------------------------------------------------ */

/* An element as brightness in [0, 1]. */
static double brightness(MfFormat f, const unsigned char *p)
{
	double v = frame_elem_value(f, p);
	switch (f) {
	case MF_U8: v /= 255.0; break;
	case MF_U16: v /= 65535.0; break;
	case MF_U32: v /= 4294967295.0; break;
	case MF_S8: v = (v + 128) / 255.0; break;
	case MF_S16: v = (v + 32768) / 65535.0; break;
	case MF_S32: v = (v + 2147483648.0) / 4294967295.0; break;
	default: break; /* f16/f32: taken as [0, 1] */
	}
	if (!(v > 0))
		return 0;
	return v > 1 ? 1 : v;
}

typedef struct {
	jmp_buf jb;
	char msg[256];
} PngErr;

static void png_error_fn(png_structp png, png_const_charp msg)
{
	PngErr *pe = png_get_error_ptr(png);
	snprintf(pe->msg, sizeof pe->msg, "%s", msg);
	longjmp(pe->jb, 1);
}

static void png_warn_fn(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

int frame_png_rgb(const char *path, unsigned w, unsigned h, const unsigned char *rgb, Err *e)
{
	OutFile out;
	if (out_open(&out, path, e) < 0)
		return -1;
	PngErr pe = {.msg = ""};
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &pe, png_error_fn,
	                                          png_warn_fn);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (!png || !info) {
		png_destroy_write_struct(&png, NULL);
		out_abort(&out);
		return err_set(e, "cannot write '%s': out of memory in libpng", path);
	}
	if (setjmp(pe.jb)) {
		png_destroy_write_struct(&png, &info);
		out_abort(&out);
		return err_set(e, "cannot write '%s': %s", path, pe.msg);
	}
	png_init_io(png, out.f);
	png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (unsigned y = 0; y < h; y++)
		png_write_row(png, (png_bytep)(rgb + (size_t)y * w * 3));
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return out_commit(&out, e);
}

int frame_diff_image(const char *path, const FrameLayout *lay, const unsigned char *a,
                     const unsigned char *b, size_t n, const FrameDiff *d, Err *e)
{
	int pick = -1;
	for (size_t i = 0; lay && i < lay->n; i++) {
		if (!lay->v[i].width || !lay->v[i].height || lay->v[i].off + lay->v[i].size > n)
			continue;
		if (pick < 0)
			pick = (int)i;
		if (d && i < d->nouts && d->outs[i].bytes_differ) {
			pick = (int)i;
			break;
		}
	}
	if (pick < 0)
		return err_set(e, "cannot draw '%s': no output of the frame has a width and "
		                  "height (give them in the manifest or in --layout)", path);
	const FrameOutput *o = &lay->v[pick];
	MfFormat f = o->format ? o->format : MF_U8;
	size_t es = mf_format_size(f);
	unsigned ch = o->channels ? o->channels : 1, w = o->width, h = o->height;
	const unsigned char *pa = a + o->off, *pb = b + o->off;

	unsigned char *rgb = xmalloc((size_t)w * h * 3 + 1);
	size_t px = (size_t)ch * es;
	for (unsigned y = 0; y < h; y++) {
		for (unsigned x = 0; x < w; x++) {
			size_t at = ((size_t)y * w + x) * px;
			unsigned char *q = rgb + ((size_t)y * w + x) * 3;
			if (memcmp(pa + at, pb + at, px)) {
				q[0] = 255, q[1] = 0, q[2] = 0;
				continue;
			}
			double g = 0;
			unsigned nc = ch >= 3 ? 3 : ch;   /* alpha does not count */
			for (unsigned c = 0; c < nc; c++)
				g += brightness(f, pa + at + c * es);
			unsigned char v = (unsigned char)(24 + g / nc * 0.4 * 255);
			q[0] = q[1] = q[2] = v;
		}
	}
	int rc = frame_png_rgb(path, w, h, rgb, e);
	free(rgb);
	return rc;
}
