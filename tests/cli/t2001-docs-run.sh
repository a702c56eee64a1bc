#!/usr/bin/env bash
# t2001-docs-run: every command of README.md's code blocks and of the man
# page's EXAMPLES is listed in tests/cli/docs-commands.txt, and every one
# that needs no GPU runs with the exit status and the output written there
# (the ptxas runs only with D4R_DOCS_SLOW=1; tests/gpu/t0111-docs-gpu.sh
# runs the GPU ones).  In a scratch copy of the repository's data.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/extract-fixtures.sh"
command -v python3 >/dev/null || skip "no python3"
mkdir -p "$T/repo" "$T/bin"
cp -r "$TOP/recipes" "$TOP/ptx" "$TOP/corpus" "$T/repo/"
ln -s "$D4R" "$T/bin/d4r-splice"
cd "$T/repo"
cp corpus/enc4/enc4.ptx vendor.ptx
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n' >small.ptx
fatbin_ptx small.ptx 90 >kernels.fatbin
fatbin_ptx small.ptx 80 >libfoo.so
cp libfoo.so vendor.dll
PATH="$T/bin:$PATH" python3 "$TOP/tests/cli/docs-run.py" "$TOP" fast >"$T/log" 2>&1
rc=$?
cat "$T/log"
[ $rc -eq 0 ] || fail "a documented command does not do what the documentation says"
# The native recipes regenerated with --force are the committed bytes.
diff -r "$TOP/recipes" recipes >/dev/null || fail "recipe new --native --force changed recipes/"
diff -r "$TOP/ptx" ptx >/dev/null || fail "recipe new --native --force changed ptx/"
exit 0
