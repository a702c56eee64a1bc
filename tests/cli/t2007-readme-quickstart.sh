#!/usr/bin/env bash
# t2007-readme-quickstart: README's Quick start, as a new user types it:
# its first code block's commands, one after the other in one shell, in a
# fresh copy of the repository (its tracked and unignored files: no build/,
# no binary of this tree's own).  Each must succeed, but the main job's,
# which without a CUDA driver must say "no CUDA driver" and exit 2 (with
# one: exit 0, IDENTICAL).  The commands are read from README.md, so a
# Quick start that changes is tested as it reads.
. "$D4R_TOP/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3"
mkdir -p "$T/clone"
if command -v git >/dev/null && git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$TOP" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
		tar -C "$T/clone" -xf - || fail "cannot copy the repository"
else # a copy of a tree (make mutate's): everything but what a build makes
	tar -C "$TOP" --exclude=./build --exclude=./.gpu --exclude=./.git -cf - . |
		tar -C "$T/clone" -xf - || fail "cannot copy the repository"
fi
[ -e "$T/clone/build" ] && fail "the copy has a build/ folder"
python3 - "$TOP/README.md" >"$T/cmds" <<'PY' || fail "no Quick start block in README.md"
import sys
text = open(sys.argv[1]).read()
qs = text.split("\n## Quick start\n", 1)[1]
block = qs.split("```sh\n", 1)[1].split("```", 1)[0]
cmds = [l for l in block.splitlines() if l.strip() and not l.lstrip().startswith("#")]
assert len(cmds) >= 3, cmds
print("\n".join(cmds))
PY
grep -qx 'd4r-splice enc4 --phase 8' "$T/cmds" || fail "the Quick start does not run the main job"
driver=0
if [ -n "${D4R_LIBCUDA:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then driver=1; fi
cd "$T/clone"
# a new user's shell: no settings of the make that runs this suite (make
# asan's BUILD=build-asan would send the Quick start's build elsewhere)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES BUILD OPT SANITIZE
n=0
# one shell for all of them, as a user's terminal: export PATH carries over
exec 3<"$T/cmds"
while IFS= read -r c <&3; do
	n=$((n + 1))
	eval "$c" >"$T/out.$n" 2>&1 </dev/null
	rc=$?
	want=0
	if [ "$c" = "d4r-splice enc4 --phase 8" ] && [ $driver = 0 ]; then
		want=2
		grep -q "no CUDA driver" "$T/out.$n" || { cat "$T/out.$n"; fail "'$c' did not say 'no CUDA driver'"; }
	fi
	case $c in *--check=ptxas*)
		[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ] || { skip_part "no ptxas for '$c'"; continue; } ;;
	esac
	[ $rc -eq $want ] || { tail -20 "$T/out.$n"; fail "Quick start step $n, '$c': exit $rc, expected $want"; }
	echo "ok    $c (exit $rc)"
done
[ "$(command -v d4r-splice)" = "$T/clone/build/d4r-splice" ] ||
	fail "after the Quick start, d4r-splice is $(command -v d4r-splice), not the copy's build/d4r-splice"
test_done
