#!/usr/bin/env bash
# t1920-capture-stand-in: `capture -o DIR -- PROGRAM` end to end without a GPU.
# PROGRAM is tests/capture/stand-in-program.c on the stand-in driver: it
# loads the injection library as the driver would and calls the tap where
# CUPTI's callbacks would.  The layer it writes must replay IDENTICAL with
# `run`, take `phases`, `recipe new` and the main job, and its oracle must
# be the stand-in kernel's rule (byte i = 7 i + k), computed here.  Then the
# refusals: a replay that cannot reproduce the program, a --kernel that
# never launched, a failing or killed PROGRAM, the size cap, -o among
# PROGRAM's files, graphs, managed, host and peer memory, launch attributes
# a replay cannot give.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
stand_in_driver
LIB=$D4R_BUILD/libd4r-capture.so
[ -f "$LIB" ] || fail "no $LIB: make builds it beside the program"
capture_program "$T/prog"
# The stand-in program calls the tap itself: CUPTI only has to be found.
"${CC:-cc}" -shared -fPIC -o "$T/libcupti-stand-in.so" -x c /dev/null ||
	fail "cannot build the CUPTI stand-in"
export D4R_LIBCUPTI=$T/libcupti-stand-in.so
PTX=$T/repo/corpus/smoke/smoke.ptx
oracle() { # FILE K: the pattern kernel's output with k = K, 1024 bytes
	python3 -c 'import sys; k = int(sys.argv[2]); open(sys.argv[1], "wb").write(bytes(((7 * i + k) & 255) for i in range(1024)))' "$1" "$2"
}

# --- a launch becomes a layer, and the layer replays -------------------------------
expect_rc 0 "$D4R" capture -o "$T/caps" -- "$T/prog" "$PTX"
expect_grep '^captured pattern launch 1 \(cuLaunchKernel\): .*/caps/pattern, 1 buffer, 1024-byte frame, PTX from image$' "$T/out"
expect_grep '^  replay: IDENTICAL to the program.s output \(oracle [0-9a-f]{64}\)$' "$T/out"
expect_grep 'capture: pattern #1: the context was synchronised before and after the launch' "$T/err"
L=$T/caps/pattern
oracle "$T/want" 90
cmp "$L/oracle.frame" "$T/want" || fail "the oracle is not the kernel's output with k = 90"
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\xff" * 1024)' "$T/init"
cmp "$L/a0.bin" "$T/init" || fail "a0.bin is not the buffer before the launch (0xff)"
expect_grep '"offset": 0, "kind": "buffer", "buffer": "a0"' "$L/layer.json"
expect_grep '"offset": 8, "kind": "u32", "value": 90' "$L/layer.json"
expect_grep '"param_source": "ptx"' "$L/capture.json"
expect_grep '"deterministic": true' "$L/capture.json"
[ ! -e "$T/caps/.spool" ] || fail "the spool stayed behind"
expect_rc 0 "$D4R" run "$L" --corpus "$T/caps"
expect_grep '^  oracle: matches$' "$T/out"
expect_rc 0 "$D4R" phases "$L/module.ptx"
expect_grep 'pattern' "$T/out"
expect_rc 0 "$D4R" recipe new "$L" --phase 1 --template identity --corpus "$T/caps"
expect_rc 0 "$D4R" "$L" --phase 1 --corpus "$T/caps"
expect_grep 'IDENTICAL' "$T/out"

# --- every launch, or the N-th ------------------------------------------------------
expect_rc 0 "$D4R" capture --launch all -o "$T/all" -- "$T/prog" "$PTX" twice
oracle "$T/want91" 91
cmp "$T/all/pattern/oracle.frame" "$T/want" || fail "launch 1's oracle"
cmp "$T/all/pattern-2/oracle.frame" "$T/want91" || fail "launch 2's oracle (k = 91)"
expect_rc 0 "$D4R" capture --launch 2 --kernel '^patt' -o "$T/second" -- "$T/prog" "$PTX" twice
[ -d "$T/second/pattern-2" ] && [ ! -d "$T/second/pattern" ] || fail "--launch 2 took another launch"

# --- a replay that cannot reproduce the program: said, no oracle ---------------------
expect_rc 1 "$D4R" capture -o "$T/racy" -- "$T/prog" "$PTX" racy
expect_grep "replay: DIFFERS pattern: buffer 'a0' \(0x[0-9a-f]+, 1024 bytes\) differs from the program's output first at byte 5; the layer is marked non-deterministic and has no oracle" "$T/out"
[ ! -e "$T/racy/pattern/oracle.frame" ] || fail "an oracle from a replay that did not reproduce"
expect_no_grep '"oracle"' "$T/racy/pattern/layer.json"
expect_grep '"deterministic": false, "differs": "buffer .a0.' "$T/racy/pattern/capture.json"

# --- refusals -------------------------------------------------------------------------
expect_rc 2 "$D4R" capture --kernel 'gemm|conv' -o "$T/none" -- "$T/prog" "$PTX"
expect_grep "no kernel matching 'gemm\|conv' was launched; the kernels launched:" "$T/err"
expect_grep '^    pattern$' "$T/err"
expect_rc 2 "$D4R" capture -o "$T/fail" -- "$T/prog" "$PTX" fail
expect_grep "PROGRAM '.*/prog' failed: exit status 3 \(nothing captured\)" "$T/err"
[ ! -e "$T/fail/pattern" ] || fail "a layer from a PROGRAM that failed"
expect_rc 2 "$D4R" capture --max-bytes 512 -o "$T/cap" -- "$T/prog" "$PTX"
expect_grep "not captured: pattern #1: the parameter at offset 0, 0x[0-9a-f]+: its allocation 0x[0-9a-f]+ of 1024 bytes takes the copies past --max-bytes 512" "$T/err"
expect_rc 2 "$D4R" capture -o "$T" -- "$T/prog" "$PTX"
expect_grep "holds PROGRAM '.*/prog': the layers would be written among PROGRAM's own files" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/repo/corpus" -- "$T/prog" "$PTX"
expect_grep "is or holds '.*smoke.ptx', a file PROGRAM is given" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" graph
expect_grep "not captured: pattern #1: launched into a CUDA graph being captured" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" managed
expect_grep "not captured: pattern #1: the parameter at offset 0, 0x[0-9a-f]+ is managed memory \(not captured\)" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" host
expect_grep "not captured: pattern #1: the parameter at offset 0, 0x[0-9a-f]+ is host memory \(not captured\)" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" peer
expect_grep "not captured: pattern #1: the parameter at offset 0, 0x[0-9a-f]+ is memory of device 1, a peer \(not captured\)" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" none
expect_grep "launched no kernel" "$T/err"
# CUDA graphs: said once however often they are launched, and in the error
expect_rc 2 "$D4R" capture --kernel 'gemm' -o "$T/q" -- "$T/prog" "$PTX" graphs
[ "$(grep -c 'PROGRAM launched CUDA graphs (cuGraphLaunch): the kernels inside them are not seen, and not captured$' "$T/err")" = 1 ] ||
	fail "three graph launches are not said once"
[ "$(grep -c '^graph ' "$T/q/.spool/events")" = 1 ] || fail "three graph launches are not one event in the spool"
expect_grep "no kernel matching 'gemm' was launched outside CUDA graphs \(the kernels inside them are not seen\); the kernels launched:" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" graphs
expect_grep "not captured: pattern #1: launched into a CUDA graph being captured" "$T/err"
expect_grep "nothing captured \(1 launch refused, said above\)" "$T/err"
expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX" crash
expect_grep "PROGRAM '.*/prog' failed: killed by signal 9 \(nothing captured\)" "$T/err"
[ ! -e "$T/q/pattern" ] || fail "a layer from a PROGRAM that was killed"
expect_rc 2 "$D4R" capture --kernel '(' -o "$T/q" -- "$T/prog" "$PTX"
expect_grep "'\(' is not a POSIX extended regular expression" "$T/err"
expect_rc 2 "$D4R" capture --launch 0 -o "$T/q" -- "$T/prog" "$PTX"
expect_rc 2 "$D4R" capture -- "$T/prog" "$PTX"
expect_grep 'give the output folder with -o DIR' "$T/err"
D4R_CAPTURE_LIB=$T/nothing.so expect_rc 2 "$D4R" capture -o "$T/q" -- "$T/prog" "$PTX"
expect_grep "D4R_CAPTURE_LIB: '.*nothing.so'" "$T/err"

# --- texture and surface objects: their CUDA arrays captured ----------------------------
cat >"$T/copy.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64
.visible .entry copy(
	.param .u64 tex,
	.param .u64 surf
)
{
	ret;
}
PTX
expect_rc 0 "$D4R" capture -o "$T/arr" -- "$T/prog" "$T/copy.ptx" arrays
expect_grep '^captured copy launch 1 \(cuLaunchKernel\): .*/arr/copy, 0 buffers, 256-byte frame, PTX from image$' "$T/out"
expect_grep '^  replay: IDENTICAL' "$T/out"
A=$T/arr/copy
expect_grep '"offset": 0, "kind": "texture", "array": "t0"' "$A/layer.json"
expect_grep '"offset": 8, "kind": "surface", "array": "t1"' "$A/layer.json"
expect_grep '"t0": \{"width": 8, "height": 4, "format": "f16", "channels": 4' "$A/layer.json"
expect_grep '"texture": \{"filter": "point", "address": "clamp"' "$A/layer.json"
expect_grep '"frame": \[\{"name": "t1", "array": "t1"\}\]' "$A/layer.json"
python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes(((3 * i + 1) & 255) for i in range(256)))' "$T/img"
cmp "$A/oracle.frame" "$T/img" || fail "the frame is not the texture's image copied into the surface"
cmp "$A/t0.bin" "$T/img" || fail "t0.bin is not the texture's array before the launch"
[ ! -e "$A/t1.bin" ] || fail "the surface's array was all zero before the launch"

# --- a cluster launch: the layer keeps the cluster shape and replays in clusters -------
expect_rc 0 "$D4R" capture -o "$T/clu" -- "$T/prog" "$PTX" cluster
expect_grep '^captured pattern launch 1 \(cuLaunchKernelEx\)' "$T/out"
expect_grep '^  replay: IDENTICAL' "$T/out"
expect_grep '"cluster": \[2, 1, 1\]' "$T/clu/pattern/layer.json"
cmp "$T/clu/pattern/oracle.frame" "$T/want91" || fail "the cluster launch's frame (k = 91)"

# --- launch attributes: recorded, and replayed or refused by name ------------------------
expect_rc 0 "$D4R" capture -o "$T/att" -- "$T/prog" "$PTX" attrs
expect_grep '^  launch attributes, replayed: \{"priority": 3, "cooperative": 1, "cluster_scheduling_policy_preference": 1\}$' "$T/out"
expect_grep '^  replay: IDENTICAL' "$T/out"
expect_grep '"attributes": \{"priority": 3, "cooperative": 1, "cluster_scheduling_policy_preference": 1\}' "$T/att/pattern/layer.json"
python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes(((7 * i + 104) & 255) for i in range(1024)))' "$T/want104"
cmp "$T/att/pattern/oracle.frame" "$T/want104" || fail "the frame of the launch with attributes (k = 90 + 1 + 3 + 10)"
# the same layer without its attributes is another launch: the replay passes them
sed -i 's/"priority": 3, //' "$T/att/pattern/layer.json"
expect_rc 1 "$D4R" run "$T/att/pattern" --corpus "$T/att"
expect_rc 0 "$D4R" capture -o "$T/coop" -- "$T/prog" "$PTX" coop
expect_grep '^captured pattern launch 1 \(cuLaunchCooperativeKernel\)' "$T/out"
expect_grep '^  launch attributes, replayed: \{"cooperative": 1\}$' "$T/out"
expect_grep '^  replay: IDENTICAL' "$T/out"
python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes(((7 * i + 100) & 255) for i in range(1024)))' "$T/want100"
cmp "$T/coop/pattern/oracle.frame" "$T/want100" || fail "the cooperative launch's frame (k = 100)"
expect_rc 2 "$D4R" capture -o "$T/ev" -- "$T/prog" "$PTX" event
expect_grep "capture: 'pattern' launch 1: its launch attribute 'launch_completion_event' \(id 12\) is not replayed: it records an event of the program's, which a replay has not" "$T/err"
[ ! -e "$T/ev/pattern" ] || fail "a layer from a launch whose attribute cannot be replayed"

# --- a pointer inside a buffer: replayed at the recorded addresses ----------------------
sed 's/pattern/indirect/; s/\.param \.u64 out/.param .u64 table/' "$PTX" >"$T/indirect.ptx"
# (its proof is a run: one whose stack lay in the chunks is tried again)
for try in 1 2; do
	rm -rf "$T/tab"
	"$D4R" capture -o "$T/tab" -- "$T/prog" "$T/indirect.ptx" table >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -ne 0 ] && grep -q 'holds \[stack\] at' "$T/out" "$T/err" || break
done
[ $rc -eq 0 ] || { cat "$T/out" "$T/err"; fail "capture of the pointer table exited $rc"; }
expect_grep '^captured indirect launch 1 .*/tab/indirect, 2 buffers, 1024-byte frame' "$T/out"
expect_grep '^  1 pointer inside the buffers: the layer replays at the recorded addresses$' "$T/out"
expect_grep '^  replay: IDENTICAL' "$T/out"
B=$T/tab/indirect
[ "$(grep -c '"address": "0x' "$B/layer.json")" = 2 ] || fail "not every buffer has its recorded address"
python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes(((5 * i + 90) & 255) for i in range(1024)))' "$T/want5"
cmp "$B/oracle.frame" "$T/want5" || fail "the indirect kernel's frame is not its rule"
# The stand-in places reservations as the H200's driver does (a hint below
# its own memory is ignored, one over what was mapped at its start gives a
# later 32 MiB boundary), and each run is a process of its own, its
# libraries and the driver's start where chance puts them.  PROGRAM ran with
# address-space randomisation off, so its addresses lie at the top: every
# one of eight runs must have them.  (Where the kernel refuses to turn it
# off, capture says so, and the runs are left to chance: not checked.)
if grep -q '^d4r-splice: capture: address-space randomisation off for PROGRAM (its device addresses high, where a replay can have them)$' "$T/err"; then
	expect_grep '"address_randomisation": "off"' "$B/capture.json"
	# (a run whose own stack lies in the chunks, by chance, is refused
	# saying so: allowed, twice at most)
	ok=0
	for i in 1 2 3 4 5 6 7 8; do
		"$D4R" run "$B" --corpus "$T/tab" >"$T/out" 2>&1
		rc=$?
		if [ $rc -eq 0 ]; then
			expect_grep '^  oracle: matches$' "$T/out"
			ok=$((ok + 1))
		elif [ $rc -eq 2 ] && grep -q "holds \[stack\] at 0x[0-9a-f]*-0x[0-9a-f]* in this process (each run is placed anew)" "$T/out"; then
			echo "note: run $i: its stack lay in the recorded chunks"
		else
			cat "$T/out"
			fail "run $i of the pointer table exited $rc"
		fi
	done
	[ $ok -ge 6 ] || fail "only $ok of 8 runs had the recorded addresses"
else
	expect_grep '^d4r-splice: capture: address-space randomisation stays on for PROGRAM \(personality: .*\): a layer whose buffers point into each other may replay in some processes only$' "$T/err"
	expect_grep '"address_randomisation": "on \(personality: ' "$B/capture.json"
	echo "note: address-space randomisation cannot be turned off here; the eight runs are not checked"
fi
# --randomize leaves PROGRAM's randomisation on, and says so in capture.json
# (its proof then has the addresses or not, by chance: exit 0 or 2)
"$D4R" capture --randomize -o "$T/rnd" -- "$T/prog" "$T/indirect.ptx" table >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -q "buffer 'a0' must be at" "$T/out" "$T/err"; } ||
	{ cat "$T/out" "$T/err"; fail "capture --randomize exited $rc"; }
! grep -q 'randomisation off' "$T/err" || fail "--randomize: randomisation turned off all the same"
expect_grep '"address_randomisation": "on \(--randomize\)"' "$T/rnd/indirect/capture.json"
# an address that cannot be had (in the kernel's half) is said, naming the buffer
cp "$B/layer.json" "$T/layer.json.kept"
sed -i '0,/"address": "0x[0-9a-f]*"/s//"address": "0xfff0000000000000"/' "$B/layer.json"
expect_rc 2 "$D4R" run "$B" --corpus "$T/tab"
expect_grep "buffer 'a0' must be at 0xfff0000000000000 \(a captured layer whose buffers point into each other\): no device address is that high" "$T/out"
# one the driver will not give (below its own memory: the hint is ignored,
# the reservation lands elsewhere) is refused, with each hint and what it
# gave, or what of the process is there (a sanitizer's shadow memory)
cp "$T/layer.json.kept" "$B/layer.json"
sed -i '0,/"address": "0x[0-9a-f]*"/s//"address": "0x10000000"/' "$B/layer.json"
expect_rc 2 "$D4R" run "$B" --corpus "$T/tab"
expect_grep "buffer 'a0' must be at 0x10000000 \(a captured layer whose buffers point into each other\): (cuMemAddressReserve at 0x10000000 gave 0x[0-9a-f]+ \(the driver gives an address only above its own memory, where nothing was mapped when it started\)|its address space \(the driver's 32 MiB chunks\), 0x10000000-0x12000000, holds .* at 0x[0-9a-f]+-0x[0-9a-f]+ in this process \(each run is placed anew\))" "$T/out"
cp "$T/layer.json.kept" "$B/layer.json"

# --- a module without PTX: replay-only, and the tools that need PTX say so ------------
printf '\177ELF\002\001\001' >"$T/module.cubin"
expect_rc 2 "$D4R" phases "$T/module.cubin"
expect_grep 'expected a directive \(this does not look like PTX: an ELF file, a cubin\? a captured layer without PTX is replay-only' "$T/err"
