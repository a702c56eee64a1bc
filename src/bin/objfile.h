/*
 * objfile.h - where the data of a host binary lies: ELF and PE/COFF sections.
 *
 * The fatbin reader does not care what kind of binary holds its containers;
 * it needs the byte ranges worth searching and a name for each, so that an
 * index can say ".nv_fatbin" or ".rodata" and so that a corrupt container in
 * a section made for fatbins is an error while a stray magic number in
 * .rodata is not.  obj_regions() reads the section table of an ELF (32 or
 * 64 bit, little-endian) or PE/COFF file and lists its file-backed sections;
 * when there is no usable table (a raw fatbin, a stripped or damaged header,
 * anything else) it returns the whole file as one region, and the caller
 * falls back to scanning for the container magic.
 *
 * A damaged header is also reported: every header, table and string table
 * read is checked against the file's size first, and each claim that does
 * not hold becomes a problem naming its file offset, "offset 0x9b08408:
 * truncated: ..." when the bytes are not there (a cut-off download), or
 * "offset 0x5: ..." when they are there but say something impossible.  The
 * regions still come back (what the file does hold is scanned), so the
 * caller can extract what survives and exit with an error.
 */
#ifndef D4R_OBJFILE_H
#define D4R_OBJFILE_H

#include "base/base.h"

typedef enum {
	OBJ_UNKNOWN,   /* no recognised header: scan the whole file */
	OBJ_FATBIN,    /* starts with a fatbin container */
	OBJ_ELF,
	OBJ_PE,
} ObjKind;

typedef struct {
	size_t off, size;   /* byte range in the file, inside its bounds */
	char name[32];      /* section name ("" when the table has none) */
	bool fatbin;        /* a section made to hold fatbins: walk it strictly */
} ObjRegion;

typedef struct {
	ObjKind kind;
	bool table_ok;      /* the section table was read; else one region */
	VEC(ObjRegion) regions;  /* sorted by offset, not overlapping */
	VEC(char *) problems;    /* "offset 0xOFF: what is wrong", file order */
} ObjFile;

/*
 * Classifies p[0..n) and fills o->regions.  Never fails: damaged headers
 * degrade to a single whole-file region (o->table_ok false), and what is
 * wrong with them is in o->problems (empty for a sound file).  Release with
 * obj_release.
 */
void obj_regions(ObjFile *o, const void *p, size_t n);
void obj_release(ObjFile *o);
const char *obj_kind_name(ObjKind k);
/* The region holding file offset `off`, or NULL. */
const ObjRegion *obj_region_at(const ObjFile *o, size_t off);

#endif
