/*
 * fuzz_manifest.c - libFuzzer target for the layer-manifest reader
 * (gpu/manifest.h over base/json.h).
 *
 * Any byte string is read as a manifest.  It may be refused, but never
 * without a message naming the file first.  What is accepted keeps the
 * validator's promises, which the GPU side relies on without checking
 * again: each launch's parameter block is built into exactly its size (a
 * field past the end would be caught by ASan), buffer and array references
 * are in range, the outputs tile the frame, and files named stay inside
 * the corpus folder.
 */
#include "base/err.h"
#include "base/layout.h"
#include "gpu/manifest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(const char *file, const Err *e)
{
	size_t n = strlen(file);
	if (!e->set || strncmp(err_msg(e), file, n) || (err_msg(e)[n] != ':')) {
		fprintf(stderr, "refused without a message naming '%s': '%s'\n", file,
		        e->set ? err_msg(e) : "(none)");
		abort();
	}
}

static void accepted(const Manifest *m)
{
	uint64_t frame = 0;
	for (size_t i = 0; i < m->noutputs; i++) {
		const MfOutput *o = &m->outputs[i];
		if (o->frame_off != frame || (o->buffer < 0) == (o->array < 0))
			abort();
		if (o->buffer >= (int)m->nbuffers || o->array >= (int)m->narrays)
			abort();
		if (o->buffer >= 0 && (o->offset > m->buffers[o->buffer].size ||
		                       o->size > m->buffers[o->buffer].size - o->offset))
			abort();
		frame += o->size;
	}
	if (frame != m->frame_size)
		abort();
	if (m->module && !layout_inside(m->module))
		abort();
	for (size_t i = 0; i < m->nbuffers; i++)
		if (m->buffers[i].init.kind == MF_INIT_FILE && !layout_inside(m->buffers[i].init.path))
			abort();
	uint64_t *addr = calloc(m->nbuffers + 1, sizeof *addr);
	uint64_t *obj = calloc(m->narrays + 1, sizeof *obj);
	for (size_t i = 0; i < m->nlaunches; i++) {
		const MfLaunch *l = &m->launches[i];
		for (size_t k = 0; k < l->nfields; k++) {
			const MfField *f = &l->fields[k];
			if (f->offset >= l->param_size)
				abort();
			if (f->kind == MF_P_BUFFER && (f->ref < 0 || f->ref >= (int)m->nbuffers))
				abort();
		}
		unsigned char *blk = malloc(l->param_size ? l->param_size : 1);
		mf_param_block(l, addr, obj, obj, blk);
		free(blk);
	}
	free(addr);
	free(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	if (size)
		memcpy(text, data, size);
	Err e = ERR_INIT;
	Manifest m;
	if (mf_parse("fuzz-layer.json", text, size, &m, &e) == 0) {
		accepted(&m);
		mf_release(&m);
	} else
		refused("fuzz-layer.json", &e);
	err_release(&e);
	free(text);
	return 0;
}
