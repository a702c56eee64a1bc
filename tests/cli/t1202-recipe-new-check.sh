#!/usr/bin/env bash
# recipe new writes a recipe and a template skeleton that splices as it
# stands (an identity written as a template); recipe check passes it, with
# ptxas too; when the module changes by one statement inside the cut, the
# recipe is stale and both check and splice say what they expected and found.
. "$D4R_TOP/tests/cli/lib.sh"
G="$D4R_TOP/tests/golden/splice"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
mkdir -p "$T/repo/recipes/small" "$T/repo/ptx" "$T/repo/corpus/small"
cp "$G/small.ptx" "$T/repo/corpus/small/small.ptx"
cd "$T/repo" || exit 1
M="corpus/small/small.ptx"

for p in 1 2; do
	expect_rc 0 "$D4R" recipe new small --phase $p --module $M --entry small_kernel
	expect_grep "wrote .*ptx/small/phase-0$p.ptx" "$T/err"
	expect_grep "wrote .*recipes/small/phase-0$p.json" "$T/err"
	[ -f "recipes/small/phase-0$p.json" ] || fail "no recipe written"
	[ -f "ptx/small/phase-0$p.ptx" ] || fail "no template written"
	expect_grep '"sha256":' "recipes/small/phase-0$p.json"
	expect_grep '"live_out":' "recipes/small/phase-0$p.json"
	expect_grep '^//! out +\.b32 ' "ptx/small/phase-0$p.ptx"
done
# the epilogue variant: phase 1 with its epilogue stores to shared and loads
# it back (a read/write dependency), so recipe new refuses it as recipe check
# would, writing nothing, unless --force
expect_rc 2 "$D4R" recipe new small --phase 1 --cut phase+epilogue --module $M --entry small_kernel
expect_grep "the cut cannot be spliced as it is: nothing written" "$T/err"
expect_grep "READ/WRITE DEPENDENCIES: cut invalid: s10\.\.s16" "$T/err"
[ ! -e recipes/small/phase-01-epi.json ] && [ ! -e ptx/small/phase-01-epi.ptx ] ||
	fail "recipe new wrote a recipe for an invalid cut without --force"
expect_rc 0 "$D4R" recipe new small --phase 1 --cut phase+epilogue --module $M --entry small_kernel --force
expect_grep "^note: +READ/WRITE DEPENDENCIES: cut invalid: written with --force" "$T/err"
[ -f recipes/small/phase-01-epi.json ] || fail "no epilogue recipe"
expect_grep '^//! writes shared' ptx/small/phase-01-epi.ptx
expect_grep '^//! barriers 1' ptx/small/phase-01-epi.ptx

# not overwritten
expect_rc 2 "$D4R" recipe new small --phase 1 --module $M --entry small_kernel
expect_grep "exists \(--force overwrites it\)" "$T/err"
echo "// edited" >>ptx/small/phase-01.ptx
expect_rc 0 "$D4R" recipe new small --phase 1 --module $M --entry small_kernel --force
expect_grep "phase-01.ptx exists, kept as it is" "$T/err"
tail -n 1 ptx/small/phase-01.ptx | grep -q '^// edited' || fail "the template was overwritten"

# an output that cannot be written is refused before any work (no "cut:"
# summary yet): a folder is said to be one, a missing folder is named
mkdir -p adir
for f in "" --force; do
	expect_rc 2 "$D4R" recipe new small --phase 2 --module $M --entry small_kernel -o adir $f
	expect_grep "recipe new: cannot write 'adir': it is a directory$" "$T/err"
	expect_no_grep "exists|^cut:" "$T/err"
done
expect_rc 2 "$D4R" recipe new small --phase 2 --module $M --entry small_kernel -o nodir/p2.json
expect_grep "cannot write 'nodir/p2.json': there is no folder 'nodir' \(create it first\)" "$T/err"
expect_no_grep "^cut:" "$T/err"
for v in "splice small --phase 2 --module $M" "splice small --phases 1-2 --module $M" "probe $M"; do
	expect_rc 2 "$D4R" $v -o nodir/out.ptx
	expect_grep "cannot write 'nodir/out.ptx': there is no folder 'nodir'" "$T/err"
	expect_no_grep "^(cut|cuts|probe):" "$T/err"
done
[ ! -e nodir ] || fail "an output into a missing folder created it"

# a template that exists is kept, and a recipe that does not fit it is never
# written: phase 2's cut bound to phase 1's template (2 C registers, not 1),
# and phase 1 written again with --force over phase 2's template
expect_rc 2 "$D4R" recipe new small --phase 2 --module $M --entry small_kernel \
	--template small/phase-01.ptx -o other.json
expect_grep "ptx/small/phase-01.ptx exists and is kept, and the recipe written for this cut does not fit it: nothing written" "$T/err"
expect_grep "'bind\.c': the formal is a list of 1 registers, the binding gives 2" "$T/err"
expect_grep "give a new --template NAME .* or --native mma\|f16" "$T/err"
[ ! -e other.json ] || fail "recipe new wrote a recipe its template rejects"
cp ptx/small/phase-01.ptx "$T/t1" && cp recipes/small/phase-01.json "$T/r1"
cp ptx/small/phase-02.ptx ptx/small/phase-01.ptx
expect_rc 2 "$D4R" recipe new small --phase 1 --module $M --entry small_kernel --force
expect_grep "does not fit it: nothing written" "$T/err"
cmp -s recipes/small/phase-01.json "$T/r1" || fail "recipe new --force replaced a recipe with one its template rejects"
cp "$T/t1" ptx/small/phase-01.ptx
# the enc4 phases' templates are their native ones: a scaffold's recipe
# does not fit them (README's first recipe new, and --force over phase 30)
if [ -f "$TOP/corpus/enc4/enc4.ptx" ]; then
	mkdir -p "$T/e/recipes" "$T/e/ptx"
	cp -r "$TOP/recipes/enc4" "$T/e/recipes/" && cp -r "$TOP/ptx/enc4" "$T/e/ptx/"
	(
		cd "$T/e" || exit 1
		expect_rc 2 "$D4R" recipe new enc4 --phase 8 -o my-phase-08.json --corpus "$TOP/corpus"
		expect_grep "ptx/enc4/phase-08.ptx exists and is kept" "$T/err"
		[ ! -e my-phase-08.json ] || fail "recipe new wrote my-phase-08.json"
		expect_rc 2 "$D4R" recipe new enc4 --phase 30 --force --corpus "$TOP/corpus"
		cmp -s recipes/enc4/phase-30.json "$TOP/recipes/enc4/phase-30.json" ||
			fail "recipe new --force broke recipes/enc4/phase-30.json"
		# a skeleton of its own fits
		expect_rc 0 "$D4R" recipe new enc4 --phase 8 -o my-phase-08.json --template ./my-phase-08.ptx \
			--corpus "$TOP/corpus"
		expect_rc 0 "$D4R" recipe check my-phase-08.json --corpus "$TOP/corpus"
	) || exit 1
fi

# a template named from the repository root (ptx/...), under ptx/, or by
# its absolute path is the same file, never ptx/ptx/...
for t in ptx/small/typed1.ptx small/typed2.ptx "$PWD/ptx/small/typed3.ptx"; do
	n=${t##*/}
	expect_rc 0 "$D4R" recipe new small --phase 2 --module $M --entry small_kernel \
		--template "$t" -o "recipes/small/${n%.ptx}.json"
	[ -f "ptx/small/$n" ] || fail "--template $t: no ptx/small/$n"
	expect_grep "\"template\":[[:space:]]*\"small/$n\"" "recipes/small/${n%.ptx}.json"
	expect_rc 0 "$D4R" recipe check "recipes/small/${n%.ptx}.json" --module $M
done
[ ! -e ptx/ptx ] || fail "--template ptx/... wrote under ptx/ptx"
expect_rc 2 "$D4R" recipe new small --phase 2 --module $M --entry small_kernel \
	--template "$T/elsewhere.ptx" -o recipes/small/x.json
expect_grep "template '$T/elsewhere.ptx': not inside the ptx folder" "$T/err"
# ptx/ptx/ exists: "ptx/small/x.ptx" could name either file, and is refused
mkdir -p ptx/ptx
expect_rc 2 "$D4R" recipe new small --phase 2 --module $M --entry small_kernel \
	--template ptx/small/x.ptx -o recipes/small/x.json
expect_grep "template 'ptx/small/x.ptx': both ptx/small/x.ptx \(from the repository root\) and ptx/ptx/small/x.ptx" "$T/err"
rmdir ptx/ptx
[ ! -e recipes/small/x.json ] || fail "a refused --template wrote a recipe"

# check, with ptxas when it is there
ptxas_opt=
if [ -x "$PTXAS" ]; then
	ptxas_opt=--ptxas
else
	skip_part "no $PTXAS, so recipe check ran without --ptxas and the spliced modules were not given to ptxas"
fi
expect_rc 0 "$D4R" recipe check recipes/small/phase-01.json recipes/small/phase-02.json \
	--module $M $ptxas_opt
expect_grep '^ok +recipes/small/phase-01.json: s10\.\.s11 \(2 mma\)' "$T/out"
# a statement range instead of a phase: the same cut as phase 1 (s10..s11)
expect_rc 0 "$D4R" recipe new --module $M --entry small_kernel --stmts 10:11 \
	--template small/range.ptx -o recipes/small/range.json
expect_grep '"stmts":[[:space:]]*\[10, 11\]' recipes/small/range.json
[ -f ptx/small/range.ptx ] || fail "no template written for --stmts"
expect_rc 0 "$D4R" recipe check recipes/small/range.json --module $M
expect_grep '^ok +recipes/small/range.json: s10\.\.s11 \(2 mma\)' "$T/out"
expect_rc 2 "$D4R" recipe new --module $M --entry small_kernel --stmts 11:10 \
	--template small/r2.ptx -o r2.json
expect_grep "--stmts wants A:B" "$T/err"
expect_rc 2 "$D4R" recipe new small --module $M --entry small_kernel --stmts 10:11 --phase 1 \
	--template small/r2.ptx -o r2.json
expect_grep "'--phase' cannot be used with '--stmts'" "$T/err"
expect_rc 2 "$D4R" recipe new small --module $M --entry small_kernel --stmts 10:11
expect_grep "--stmts needs --template and -o" "$T/err"
[ ! -e r2.json ] && [ ! -e ptx/small/r2.ptx ] || fail "a refused --stmts wrote output"
# phase 1 with its epilogue stores to shared and loads it back: the dataflow
# reports a read/write dependency, and the cut is refused in the seed's words
expect_rc 2 "$D4R" recipe check recipes/small/phase-01-epi.json --module $M
expect_grep '^FAIL +recipes/small/phase-01-epi.json' "$T/out"
expect_grep 'READ/WRITE DEPENDENCIES: cut invalid: s10\.\.s16' "$T/err"
expect_grep "'st\.shared\.v2\.u32 \[%r4\+512\], \{%r16, %r17\};'" "$T/err"
expect_rc 2 "$D4R" splice --recipe recipes/small/phase-01-epi.json --module $M -o epi.ptx
[ ! -e epi.ptx ] || fail "a refused cut wrote output"
# --force splices it, and says so in the output and on stderr
expect_rc 0 "$D4R" splice --recipe recipes/small/phase-01-epi.json --module $M -o epi.ptx --force
expect_grep '^FORCED: +READ/WRITE DEPENDENCIES: cut invalid' "$T/err"
expect_grep '// d4r-splice: --force: READ/WRITE DEPENDENCIES: cut invalid, spliced anyway' epi.ptx
expect_grep '// +s16 \(line 37\)' epi.ptx
if [ -x "$PTXAS" ]; then
	"$PTXAS" -arch=sm_89 -e small_kernel epi.ptx -o /dev/null || fail "ptxas rejects epi.ptx"
fi

# splice by layer and phase: the recipe is found beside the others
expect_rc 0 "$D4R" splice small --phase 2 --module $M -o out2.ptx
expect_grep '^cut: +s17\.\.s18' "$T/err"
expect_grep 'template: +ptx/small/phase-02.ptx' "$T/err"
[ -f out2.ptx ] || fail "no output"
if [ -x "$PTXAS" ]; then
	"$PTXAS" -arch=sm_89 -e small_kernel out2.ptx -o /dev/null || fail "ptxas rejects out2.ptx"
	expect_rc 0 "$D4R" splice small --phase 2 --module $M -o out2.ptx --check=ptxas
	expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok' "$T/err"
fi
# default output name and stdout
expect_rc 0 "$D4R" splice small --phase 1 --module $M
[ -f small-phase-01.spliced.ptx ] || fail "no default output small-phase-01.spliced.ptx"
expect_rc 0 "$D4R" splice small --phase 1 --module $M -o - --quiet
cmp -s "$T/out" small-phase-01.spliced.ptx || fail "-o - differs from the file output"

# one statement of the cut changes: stale
sed -i 's/{%r10, %r9}, {%r11, %r11};/{%r9, %r10}, {%r11, %r11};/' $M
expect_rc 2 "$D4R" recipe check recipes/small/phase-01.json --module $M
expect_grep '^FAIL +recipes/small/phase-01.json' "$T/out"
expect_grep "stale recipe: the cut s10\.\.s11 \(lines 31\.\.32\)" "$T/err"
expect_grep "sha256: expected [0-9a-f]{64}" "$T/err"
expect_grep "last: +expected /.*%r10, %r9" "$T/err"
expect_grep "found +'mma\.sync.*\{%r9, %r10\}, \{%r11, %r11\};'" "$T/err"
expect_rc 2 "$D4R" splice small --phase 1 --module $M -o stale.ptx
expect_grep "stale recipe" "$T/err"
[ ! -e stale.ptx ] || fail "a stale recipe wrote output"
test_done
