/*
 * chart.c - bar charts drawn into an RGB buffer and written as PNG by the
 * frame module's writer (frame.h).
 *
 * Decisions:
 *  - A 5x7 font of digits, capitals and the punctuation of the labels is
 *    built in (lower case is drawn in capitals): a chart must be readable
 *    on a machine with no font files, and a few hundred bytes do it.
 *  - Text is drawn at twice the font's size (12 pixels a character), group
 *    labels too where they fit under their two bars, else at the font's.
 */
#include "gpu/chart.h"

#include "gpu/frame.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	char ch;
	unsigned char rows[7];
} font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
    {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
    {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
    {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
    {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
    {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
    {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
    {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
    {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
    {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
    {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
    {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}},
    {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {' ', {0, 0, 0, 0, 0, 0, 0}},
    {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
    {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
    {',', {0, 0, 0, 0, 0x0C, 0x04, 0x08}},
    {'-', {0, 0, 0, 0x1F, 0, 0, 0}},
    {'/', {0, 0x01, 0x02, 0x04, 0x08, 0x10, 0}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
    {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}},
    {'[', {0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E}},
    {']', {0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E}},
    {'+', {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0}},
    {'=', {0, 0, 0x1F, 0, 0x1F, 0, 0}},
};

static const unsigned char box[7] = {0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F};

const unsigned char *chart_glyph(int ch)
{
	ch = toupper((unsigned char)ch);
	for (size_t i = 0; i < ARRAY_SIZE(font); i++)
		if (font[i].ch == ch)
			return font[i].rows;
	return box;
}

typedef struct {
	unsigned char *p;
	unsigned w, h;
} Canvas;

static void fill(Canvas *c, int x0, int y0, int x1, int y1, const unsigned char rgb[3])
{
	for (int y = y0 < 0 ? 0 : y0; y < y1 && y < (int)c->h; y++)
		for (int x = x0 < 0 ? 0 : x0; x < x1 && x < (int)c->w; x++)
			memcpy(c->p + ((size_t)y * c->w + (size_t)x) * 3, rgb, 3);
}

/* Text with its top left at (x, y), each font pixel `s` pixels square. */
static void text(Canvas *c, int x, int y, int s, const char *t,
                 const unsigned char rgb[3])
{
	for (; *t; t++, x += 6 * s) {
		const unsigned char *g = chart_glyph(*t);
		for (int r = 0; r < 7; r++)
			for (int k = 0; k < 5; k++)
				if (g[r] & (0x10 >> k))
					fill(c, x + k * s, y + r * s, x + (k + 1) * s,
					     y + (r + 1) * s, rgb);
	}
}

static int text_width(const char *t, int s)
{
	return (int)strlen(t) * 6 * s;
}

/* The smallest of 1, 2, 5 x 10^k at or above v / 5: the axis step. */
static double axis_step(double v)
{
	if (v <= 0)
		return 1;
	double raw = v / 5, p = pow(10, floor(log10(raw)));
	if (raw <= p)
		return p;
	if (raw <= 2 * p)
		return 2 * p;
	if (raw <= 5 * p)
		return 5 * p;
	return 10 * p;
}

int chart_bars_png(const char *path, const ChartSpec *cs, Err *e)
{
	static const unsigned char white[3] = {255, 255, 255}, black[3] = {0, 0, 0},
	                           grid[3] = {225, 225, 225}, col_a[3] = {90, 110, 140},
	                           col_b[3] = {230, 120, 30};
	const int left = 110, right = 30, top = 90, bottom = 70, plot_h = 360;
	const int bar = 10, group = 2 * bar + 10;
	int plot_w = (int)cs->n * group;
	if (plot_w < 400)
		plot_w = 400;
	int tw = text_width(cs->title ? cs->title : "", 2) + 40;
	Canvas c;
	c.w = (unsigned)(left + plot_w + right);
	if ((int)c.w < tw)
		c.w = (unsigned)tw;
	c.h = (unsigned)(top + plot_h + bottom);
	c.p = xmalloc((size_t)c.w * c.h * 3);
	fill(&c, 0, 0, (int)c.w, (int)c.h, white);

	double vmax = 0;
	for (size_t i = 0; i < cs->n; i++) {
		vmax = cs->bars[i].a > vmax ? cs->bars[i].a : vmax;
		vmax = cs->bars[i].b > vmax ? cs->bars[i].b : vmax;
	}
	double step = axis_step(vmax), ymax = step * ceil((vmax > 0 ? vmax : 1) / step);
	int y0 = top + plot_h;
	char num[64];
	for (double v = 0; v <= ymax + step / 2; v += step) {
		int y = y0 - (int)(v / ymax * plot_h);
		fill(&c, left, y, left + plot_w, y + 1, grid);
		snprintf(num, sizeof num, "%.0f", v);
		text(&c, left - 10 - text_width(num, 2), y - 7, 2, num, black);
	}
	fill(&c, left, top, left + 2, y0 + 1, black);
	fill(&c, left, y0, left + plot_w, y0 + 2, black);
	for (size_t i = 0; i < cs->n; i++) {
		const ChartBar *b = &cs->bars[i];
		int x = left + 6 + (int)i * group;
		if (b->a >= 0)
			fill(&c, x, y0 - (int)(b->a / ymax * plot_h), x + bar, y0, col_a);
		if (b->b >= 0)
			fill(&c, x + bar, y0 - (int)(b->b / ymax * plot_h), x + 2 * bar,
			     y0, col_b);
		/* at twice the font's size where the label fits under its group */
		int ls = text_width(b->label, 2) + 4 <= group ? 2 : 1;
		int lw = text_width(b->label, ls);
		text(&c, x + bar - lw / 2, y0 + 8, ls, b->label, black);
	}
	text(&c, 20, 16, 2, cs->title ? cs->title : "", black);
	int lx = left + 140;
	fill(&c, lx, 50, lx + 14, 64, col_a);
	text(&c, lx + 20, 50, 2, cs->legend_a ? cs->legend_a : "a", black);
	lx += 20 + text_width(cs->legend_a ? cs->legend_a : "a", 2) + 30;
	fill(&c, lx, 50, lx + 14, 64, col_b);
	text(&c, lx + 20, 50, 2, cs->legend_b ? cs->legend_b : "b", black);
	if (cs->x_name)
		text(&c, left + plot_w / 2 - text_width(cs->x_name, 2) / 2, y0 + 32, 2,
		     cs->x_name, black);
	if (cs->y_name)
		text(&c, 20, 50, 2, cs->y_name, black);
	int rc = frame_png_rgb(path, c.w, c.h, c.p, e);
	free(c.p);
	return rc;
}
