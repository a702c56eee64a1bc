#!/usr/bin/env bash
# t0111-docs-gpu: the documentation's GPU commands (mode gpu in
# tests/cli/docs-commands.txt: the main job, check, run, diff, bisect) run
# with the exit status and output written there (a regular expression over
# the text, or for --json the document compared as JSON), in a scratch copy
# of the repository's data with d4r-splice on PATH, and README's and the man
# page's samples of them are what they print now (docs-run.py: times and
# ratios masked; t2001 holds the same samples to the run recorded in
# tests/cli/docs-samples/).  The no-GPU ones are
# tests/cli/t2001-docs-run.sh's.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
command -v python3 >/dev/null || skip "no python3"
mkdir -p "$T/repo" "$T/bin"
cp -r "$TOP/recipes" "$TOP/ptx" "$TOP/corpus" "$T/repo/"
ln -s "$D4R" "$T/bin/d4r-splice"
cd "$T/repo"
unset D4R_CORPUS
# Each command's line as it ends, here and in $OUTD/docs-gpu.txt (a run cut
# short by a time limit still leaves the lines of the commands it ran).
PATH="$T/bin:$PATH" python3 -u "$TOP/tests/cli/docs-run.py" "$TOP" gpu 2>&1 |
	tee "$OUTD/docs-gpu.txt"
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] || fail "a documented GPU command does not do what the documentation says"
exit 0
