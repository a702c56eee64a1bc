/*
 * test_opcheck.c - opcodes against the PTX ISA's instruction set: the
 * spellings below are the ISA manual's own (one per family it describes),
 * and every one must pass; misspellings are refused with the nearest
 * spelling, at the misspelt component.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ptx/opcheck.h"

#include <string.h>

static void test_opcheck__isa_spellings_pass(void **state)
{
	(void)state;
	static const char *const ok[] = {
	    "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
	    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
	    "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32",
	    "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc",
	    "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e3m2.f32",
	    "wmma.load.a.sync.aligned.row.m16n16k16.global.f16",
	    "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3",
	    "wgmma.fence.sync.aligned",
	    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
	    "ldmatrix.sync.aligned.m16n16.x1.trans.shared::cta.b8x16.b6x16_p32",
	    "ld.global.nc.L1::no_allocate.L2::256B.v4.u32",
	    "ld.global.L2::cache_hint.f32",
	    "ld.relaxed.gpu.global.b32",
	    "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32",
	    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
	    "bytes",
	    "cp.async.ca.shared.global.L2::128B",
	    "cp.async.wait_group",
	    "cvt.rn.satfinite.e4m3x2.f32",
	    "cvt.rn.f16x2.e4m3x2",
	    "cvt.rna.tf32.f32",
	    "cvta.to.global.u64",
	    "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64",
	    "mbarrier.arrive.noComplete.shared.b64",
	    "fence.proxy.tensormap::generic.release.gpu",
	    "min.NaN.xorsign.abs.f16x2",
	    "setp.ne.and.s32",
	    "shfl.sync.bfly.b32",
	    "vote.sync.ballot.b32",
	    "atom.global.cas.b64",
	    "red.release.gpu.global.add.u32",
	    "bar.sync",
	    "barrier.cluster.arrive.release.aligned",
	    "tcgen05.ld.sync.aligned.16x32bx2.x128.b32",
	    "tcgen05.mma.cta_group::2.kind::f16",
	    "tensormap.replace.tile.global_address.shared::cta.b1024.b64",
	    "tex.2d.v4.f32.f32",
	    "suld.b.2d.v4.b32.trap",
	    "prmt.b32.f4e",
	    "mul.wide.u32",
	    "mad.lo.cc.u32",
	    "add.rn.f32x2",
	    "ret.uni",
	    "exit",
	    "griddepcontrol.launch_dependents",
	    "setmaxnreg.inc.sync.aligned.u32",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		OpProblem p;
		if (ptx_opcode_check(ok[i], strlen(ok[i]), &p))
			fail_msg("'%s' was refused: %s", ok[i], p.msg);
	}
}

static void expect(const char *op, const char *msg, size_t off)
{
	OpProblem p;
	assert_int_equal(ptx_opcode_check(op, strlen(op), &p), 1);
	if (strcmp(p.msg, msg))
		fail_msg("'%s': expected '%s'\n     got '%s'", op, msg, p.msg);
	assert_int_equal(p.off, off);
}

static void test_opcheck__misspellings_refused(void **state)
{
	(void)state;
	expect("mma.snyc.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
	       "unknown modifier '.snyc' of 'mma' (did you mean 'mma.sync'?)", 4);
	expect("mma.sync.algined.m16n8k32",
	       "unknown modifier '.algined' of 'mma' (did you mean "
	       "'mma.sync.aligned'?)",
	       9);
	expect("mmaa.sync", "unknown instruction 'mmaa' (did you mean 'mma.sync'?)", 0);
	/* equally near two instructions (mma, wmma): no guess */
	expect("mmma.sync", "unknown instruction 'mmma': not in the PTX ISA's instruction set", 0);
	expect("ld.global.L2::cache_hnit.f32",
	       "unknown modifier '.L2::cache_hnit' of 'ld' (did you mean "
	       "'ld.global.L2::cache_hint'?)",
	       10);
	expect("ld.shared::cluser.u32",
	       "unknown modifier '.shared::cluser' of 'ld' (did you mean "
	       "'ld.shared::cluster'?)",
	       3);
	expect("cvt.rn.satfinit.e4m3x2.f32",
	       "unknown modifier '.satfinit' of 'cvt' (did you mean 'cvt.rn.satfinite'?)",
	       7);
	expect("frobnicate.b32",
	       "unknown instruction 'frobnicate': not in the PTX ISA's instruction set",
	       0);
	expect("mov.qqqq.b32",
	       "unknown modifier '.qqqq' of 'mov': no word of the PTX ISA's modifiers is "
	       "spelt "
	       "'qqqq'",
	       4);
	expect("add..u32", "empty modifier in 'add.' of 'add'", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_opcheck__isa_spellings_pass),
	    cmocka_unit_test(test_opcheck__misspellings_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
