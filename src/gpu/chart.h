/*
 * chart.h - bar charts as PNG: two bars per group (original and spliced),
 * with a title, a legend, a labelled value axis and a label under each
 * group, drawn with a built-in 5x7 bitmap font so that the chart needs no
 * font library.
 */
#ifndef D4R_GPU_CHART_H
#define D4R_GPU_CHART_H

#include "base/base.h"
#include "base/err.h"

typedef struct {
	char label[16]; /* under the group: "8" */
	double a, b;    /* the two bars' values; below 0: none (a gap) */
} ChartBar;

typedef struct {
	const char *title;
	const char *legend_a, *legend_b; /* "original", "spliced" */
	const char *x_name, *y_name;     /* "phase", "cycles" */
	const ChartBar *bars;
	size_t n;
} ChartSpec;

/*
 * Draws the chart of `c` and writes it to `path` (PNG, atomically).  The
 * width grows with the number of groups; the value axis runs from 0 to a
 * round number above the largest bar.  Returns 0 or -1.
 */
int chart_bars_png(const char *path, const ChartSpec *c, Err *e);

/* The 5x7 glyph of character ch (letters in capitals): 7 rows of 5 bits,
 * the leftmost pixel in bit 4; an unknown character gets a box. */
const unsigned char *chart_glyph(int ch);

#endif
