/*
 * wgmma.h - the facts of each wgmma.mma_async of a range (wgmma.c): its
 * shape and types, where A comes from (registers or a matrix descriptor),
 * B's descriptor, each descriptor decoded (the start address as the
 * shared-memory symbol and offset it resolves to, the leading and stride
 * byte offsets, the swizzle mode, and the bytes the instruction reads
 * through it when the facts bound them), scale-d (an immediate or a
 * predicate), the immediate scale and transpose operands, and the
 * wgmma.fence and wgmma.commit_group around it.
 *
 * A fact the analysis cannot derive is reported unknown with the reason,
 * never guessed.  Field names follow the PTX ISA ("Matrix Descriptor
 * Format", "Shared Memory Matrix Layout").  Used by `phases --json`,
 * `show --live`, the native wgmma forms (splice/native_wgmma.c) and the
 * cut interface's memory facts (cut.c, through wgmma_reads).
 */
#ifndef D4R_ANA_WGMMA_H
#define D4R_ANA_WGMMA_H

#include "ana.h"

#include <cjson/cJSON.h>

/* Swizzle modes of the descriptor's bits 62-63 (the PTX ISA's encoding). */
enum { WG_SWZ_NONE = 0, WG_SWZ_128B = 1, WG_SWZ_64B = 2, WG_SWZ_32B = 3 };
const char *wg_swizzle_name(unsigned mode); /* "none", "128B", "64B", "32B" */

typedef struct {
	uint32_t reg;      /* the descriptor register (a .b64) */
	bool known;        /* the value was decoded: the fields below hold */
	const char *why;   /* !known: why not (static text) */
	uint32_t def;      /* the statement combining the start field with a
	                      constant: or.b64 / add.s64 d, x, C (or mov.b64 d, C) */
	char op[8];        /* "or", "add", "mov" */
	uint64_t constant; /* C */
	/* fields of C (exact: see wgmma.c) */
	uint32_t start_add;  /* bytes C adds to the start address (field x 16) */
	uint32_t lbo, sbo;   /* leading / stride dimension byte offsets */
	uint8_t base_offset; /* bits 49-51 */
	uint8_t swizzle;     /* WG_SWZ_* */
	/* the start address: bits 4-17 of a shared address in a register */
	bool start_known; /* the address resolved (addr_value) */
	const char *start_why;
	uint32_t
	    field_stmt;     /* the statement extracting bits 4-17 (bfe.u32 x, a, 4, 14) */
	uint32_t addr_stmt; /* where the address register is read (= field_stmt) */
	uint32_t addr_reg;  /* the address register */
	Addr addr;          /* what it resolves to */
	int64_t start_off;  /* addr.offset + start_add: bytes from the symbol
	                       (when !addr.variable) */
	int64_t var_stmt;   /* an address that resolves only in part (a symbol
	                       plus terms that do not): the statement defining
	                       the first such term (-1: none or not known), and
	                       why it does not resolve */
	const char *var_why;
	/* the bytes read through the descriptor: [lo, hi) from the symbol */
	bool range_known;
	const char *range_why;
	int64_t lo, hi;
} WgDesc;

typedef struct {
	uint32_t stmt;
	uint32_t m, n, k; /* m64n128k16 */
	char shape[16];
	char dtype[8], atype[8], btype[8]; /* "f32", "f16", "e4m3" ... */
	uint32_t elem_bits;                /* of A and B: 16 for f16, 8 for e4m3 */
	bool sparse;                       /* wgmma.mma_async.sp: no descriptor facts */
	bool a_regs;                       /* A in registers (a_nregs of them) */
	uint32_t a_nregs;
	uint32_t d_nregs;
	WgDesc a, b; /* a: only when !a_regs */
	/* scale-d: the immediate (0 or 1), or a predicate (negated with !) */
	bool scale_d_pred;
	int64_t scale_d_imm;
	uint32_t scale_d_reg;
	bool scale_d_not;
	/* imm-scale-a/b (1 or -1), imm-trans-a/b (0 or 1); -2 when the form
	 * has no such operand (tf32, fp8, integer; trans-a with A in registers) */
	int imm_scale_a, imm_scale_b, tnsp_a, tnsp_b;
	/* the wgmma.fence before it and the wgmma.commit_group after it, in its
	 * basic block (-1: none there) */
	int64_t fence, commit;
} WgmmaFact;

typedef struct {
	VEC(WgmmaFact) v;
} WgmmaFacts;

/*
 * The facts of every wgmma.mma_async in [first, last] of the dataflow's
 * function, in statement order (none: out->v.n == 0).  Returns 0, or -1
 * with e set for a range outside the function.  Release with
 * wgmma_facts_release.
 */
int ana_wgmma(Dataflow *df, uint32_t first, uint32_t last, WgmmaFacts *out, Err *e);
void wgmma_facts_release(WgmmaFacts *w);

/*
 * The byte address, from the start of the descriptor's matrix, of element
 * (row, kbyte) of the tile it describes: row along M (A) or N (B), kbyte
 * the byte offset along K, before the swizzle is applied; K-major layouts
 * only (trans 0).  wg_swizzle applies the descriptor's swizzle mode to an
 * absolute shared address (the PTX ISA: bits 4.. XOR bits 7..).
 */
uint32_t wg_kmajor_offset(const WgDesc *d, uint32_t row, uint32_t kbyte);
/* The same for an MN-major layout (trans 1): element (k, x), x along M/N. */
uint32_t wg_mnmajor_offset(const WgDesc *d, uint32_t elem_bytes, uint32_t k, uint32_t x);
uint32_t wg_swizzle(unsigned mode, uint32_t addr);

/*
 * The shared bytes one wgmma.mma_async reads through a descriptor, as the
 * memory facts take them (cut.c's read/write dependencies):
 *  - WR_RANGE: [lo, hi) from the symbol (or absolute, for a descriptor
 *    that is a constant), wgmma.c's range widened by `widen` bytes on
 *    each side where its premise is not declared (a symbol aligned to
 *    less than the swizzle's row, or to less than 16 bytes: the hardware
 *    swizzles by absolute address bits and drops the low 4);
 *  - WR_SYMBOL: somewhere in the symbol (its start resolves only in part:
 *    a loop-carried stage offset), the whole of it;
 *  - WR_SHARED: somewhere in shared memory (the start does not resolve).
 * addr is the access as addr_disjoint compares it: base, offset lo and
 * hi - lo bytes (WR_RANGE); the symbol with no size and a variable part
 * (WR_SYMBOL); AB_NONE (WR_SHARED).  Never a guessed range.
 */
enum { WR_RANGE, WR_SYMBOL, WR_SHARED };
typedef struct {
	char which; /* 'a' or 'b' */
	int kind;   /* WR_* */
	Addr addr;
	int64_t lo, hi; /* WR_RANGE, widened */
	uint32_t widen;
	const char *why; /* not WR_RANGE: why the range is not bounded */
} WgRead;
/* The reads of the wgmma.mma_async at `stmt`: A's (when A is not in
 * registers), then B's, into out; returns how many (1 or 2), or 0 when
 * the statement is not a wgmma.mma_async. */
int wgmma_reads(Dataflow *df, uint32_t stmt, WgRead out[2]);

/* The facts as JSON (an array, one object per wgmma) and as text. */
cJSON *wgmma_facts_json(Dataflow *df, const WgmmaFacts *w);
void wgmma_facts_text(Dataflow *df, const WgmmaFacts *w, StrBuf *out);

#endif
