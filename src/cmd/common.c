/*
 * common.c - what every verb shares: error and usage printing.
 */
#include "cmd.h"

#include <stdarg.h>
#include <stdio.h>

int cmd_fail(const char *fmt, ...)
{
	va_list ap;
	fputs("d4r-splice: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_ERROR;
}

int cmd_usage(const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	return EXIT_ERROR;
}
