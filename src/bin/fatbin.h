/*
 * fatbin.h - NVIDIA fatbin containers: find them, walk their entries,
 * decompress the PTX they hold.
 *
 * A container is a 16-byte header (u32 magic 0xBA55ED50, u16 version 1,
 * u16 header size 16, u64 size of what follows) and then entries back to
 * back.  Each entry is a header of its own stated size (64, 80, 96, 112
 * bytes seen) and a payload padded to 8 bytes.  The layout, as read from
 * the CUDA 13 toolkit's libraries and from `fatbinary` output:
 *
 *   +0  u16 kind (1 PTX, 2 cubin, 8 and 16 other images)
 *   +2  u16 entry version (0x0101)     +4  u32 entry header size
 *   +8  u64 payload size, padded       +16 u32 compressed size (0: stored)
 *   +20 u32 (64)                       +24 u16 PTX minor, +26 u16 PTX major
 *   +28 u32 arch (sm_XX as XX)         +32 u32, u32 (relocations; 0)
 *   +40 u64 flags: 0x1 64-bit, 0x10 Linux, 0x1000 old NVIDIA compression,
 *       0x2000 LZ4 block, 0x8000 zstd frame
 *   +56 u64 uncompressed size (0 when stored)
 *   +64 u32 offset, +68 u32 size of the ptxas options string (in the header)
 *
 * The reader trusts none of it: every size is checked against what is left
 * of the entry, the container and the region before a byte is read, and a
 * lie becomes an error naming its file offset.  Errors do not stop the
 * scan: the caller reports each one and asks for the next entry, which
 * continues after the damage.
 */
#ifndef D4R_FATBIN_H
#define D4R_FATBIN_H

#include "base/base.h"
#include "base/err.h"
#include "bin/objfile.h"

#define FATBIN_MAGIC 0xBA55ED50u

enum { FATBIN_PTX = 1, FATBIN_CUBIN = 2 };

typedef enum { FATBIN_STORED, FATBIN_ZSTD, FATBIN_LZ4 } FatbinCodec;

typedef struct {
	size_t container_off;  /* file offset of the container header */
	size_t entry_off;      /* file offset of the entry header */
	const char *section;   /* region name, "" when unknown */
	unsigned kind;         /* FATBIN_PTX, FATBIN_CUBIN, other */
	unsigned arch;         /* 80 for sm_80 */
	unsigned ptx_major, ptx_minor;
	uint64_t flags;
	FatbinCodec codec;
	const uint8_t *data;   /* the stored bytes (compressed or plain) */
	size_t data_size;
	uint64_t raw_size;     /* uncompressed size the header states (0: stored) */
	Str options;           /* ptxas options from the header, maybe empty */
} FatbinEntry;

/* Scan state over one mapped file; regions come from obj_regions. */
typedef struct {
	const uint8_t *p;
	size_t n;
	const ObjFile *obj;
	size_t region;      /* index of the region being scanned */
	size_t pos;         /* next scan position (file offset) */
	bool strict;        /* expecting containers back to back at pos */
	bool in_container;
	size_t cont_off, cont_end, epos;
	unsigned containers;  /* containers found so far */
} FatbinScan;

void fatbin_scan_init(FatbinScan *s, const void *p, size_t n, const ObjFile *obj);
/*
 * Produces the next entry of any kind.  Returns 1 with *en filled, 0 at the
 * end of the file, -1 with "offset 0xOFF: what is wrong" in e when the bytes
 * at OFF are not what a container or entry must be; the next call resumes
 * after the damage.  Pointers in *en point into the mapped file.
 */
int fatbin_scan_next(FatbinScan *s, FatbinEntry *en, Err *e);

/*
 * Decompresses (or copies) an entry's payload into *buf (grown with
 * xrealloc as needed; *cap is its size) and sets *len.  For PTX the
 * trailing NUL padding is removed.  Sizes stated by the header must agree
 * with what the codec produces; a disagreement is an error naming the
 * entry's offset.  Returns 0 or -1.
 */
int fatbin_entry_data(const FatbinEntry *en, uint8_t **buf, size_t *cap, size_t *len,
                      Err *e);

const char *fatbin_codec_name(FatbinCodec c);

#endif
