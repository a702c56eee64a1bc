#!/usr/bin/env bash
# t1900-outputs-never-replace: every output of every verb goes through one
# writer, which renames a temporary file only onto a regular file or a new
# path; writes a device node, a FIFO, a socket and standard output through;
# follows a symbolic link to the file it names; keeps the permissions of the
# file it replaces; and refuses, with exit 2 before any work, an output that
# is one of the command's inputs (by device and inode: another spelling or
# a hard link is the same file).
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
cd "$T/repo"
# No GPU work may be reached by a refusal: a driver that is not there would
# say so.
export D4R_LIBCUDA=/nonexistent/libcuda.so.1
"$D4R" splice smoke --phase 1 -q -o - >"$T/ref.ptx" || fail "splice to stdout failed"
[ -s "$T/ref.ptx" ] || fail "no spliced module on stdout"

# The reported bug: as root, `-o /dev/null` replaced /dev/null with a regular
# file.  Reproduced with a character device of our own (mknod needs root).
if mknod "$T/null" c 1 3 2>/dev/null; then
	(cd "$TOP" && "$D4R" splice enc4 --phase 8 -q -o "$T/null") >"$T/out" 2>"$T/err" ||
		{ cat "$T/err"; fail "splice -o a character device failed"; }
	[ -c "$T/null" ] || fail "the character device was replaced: $(ls -l "$T/null")"
	ls "$T" | grep -q '^null\.tmp' && fail "a temporary file was left beside the device"
else
	echo "note: mknod is not allowed here; the character-device case is not run"
fi

# A FIFO is written through, and stays a FIFO.
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
reader=$!
expect_rc 0 "$D4R" splice smoke --phase 1 -q -o "$T/fifo"
wait $reader
[ -p "$T/fifo" ] || fail "the FIFO was replaced"
cmp -s "$T/from-fifo" "$T/ref.ptx" || fail "what came through the FIFO is not the spliced module"

# Standard output by a path: through a link of our own to /proc/self/fd/1
# (what /dev/stdout is), into a pipe and into a redirected file.
ln -s /proc/self/fd/1 "$T/stdout"
"$D4R" splice smoke --phase 1 -q -o "$T/stdout" | cmp -s - "$T/ref.ptx" ||
	fail "-o (a link to fd 1) into a pipe is not the spliced module"
[ -L "$T/stdout" ] || fail "the link to standard output was replaced"
"$D4R" splice smoke --phase 1 -q -o "$T/stdout" >"$T/redirected.ptx" || fail "-o stdout into a file failed"
cmp -s "$T/redirected.ptx" "$T/ref.ptx" || fail "-o stdout into a redirected file is not the spliced module"
# The real /dev/stdout (only now that the link above is known to be written
# through: a broken tool would replace /dev/stdout itself).
"$D4R" splice smoke --phase 1 -q -o /dev/stdout | cmp -s - "$T/ref.ptx" ||
	fail "-o /dev/stdout into a pipe is not the spliced module"
[ -L /dev/stdout ] || [ -c /dev/stdout ] || fail "/dev/stdout is no longer a link or a device"

# A socket is written through (connected to), and stays a socket.
python3 - "$T/sock" "$T/from-sock" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
open(sys.argv[1] + ".ready", "w").close()
c, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while True:
        b = c.recv(65536)
        if not b:
            break
        f.write(b)
PY
server=$!
for _ in $(seq 100); do [ -e "$T/sock.ready" ] && break; sleep 0.05; done
expect_rc 0 "$D4R" splice smoke --phase 1 -q -o "$T/sock"
wait $server
[ -S "$T/sock" ] || fail "the socket was replaced"
cmp -s "$T/from-sock" "$T/ref.ptx" || fail "what came through the socket is not the spliced module"

# A symbolic link: the file it names is written, the link stays; a dangling
# link creates the file it names.
echo old >"$T/real.ptx"
ln -s real.ptx "$T/link.ptx"
expect_rc 0 "$D4R" splice smoke --phase 1 -q -o "$T/link.ptx"
[ -L "$T/link.ptx" ] || fail "the symbolic link was replaced by a file"
cmp -s "$T/real.ptx" "$T/ref.ptx" || fail "the link's target is not the spliced module"
ln -s sub/new.ptx "$T/dangling.ptx"
mkdir "$T/sub"
expect_rc 0 "$D4R" splice smoke --phase 1 -q -o "$T/dangling.ptx"
[ -L "$T/dangling.ptx" ] && cmp -s "$T/sub/new.ptx" "$T/ref.ptx" ||
	fail "a dangling link did not create the file it names"

# The file an output replaces keeps its permissions; no temporary file stays.
echo old >"$T/private.ptx"
chmod 600 "$T/private.ptx"
expect_rc 0 "$D4R" splice smoke --phase 1 -q -o "$T/private.ptx"
[ "$(stat -c %a "$T/private.ptx")" = 600 ] || fail "mode $(stat -c %a "$T/private.ptx"), expected 600"
cmp -s "$T/private.ptx" "$T/ref.ptx" || fail "the replaced file is not the spliced module"
ls "$T" | grep -q '\.tmp' && fail "temporary files left: $(ls "$T" | grep '\.tmp')"

# A directory is an error, before any work.
expect_rc 2 "$D4R" splice smoke --phase 1 -o "$T/sub"
expect_grep "cannot write '$T/sub': it is a directory" "$T/err"

# Outputs that are inputs: refused, exit 2, before any work, nothing changed.
printf 'init' >corpus/smoke/init.bin
sed 's|"init": {"kind": "fill", "byte": 255}|"init": {"kind": "file", "path": "smoke/init.bin"}|' \
	recipes/smoke/layer.json >"$T/l.json"
mkdir -p recipes/fromfile && sed 's/"layer": "smoke"/"layer": "fromfile"/' "$T/l.json" >recipes/fromfile/layer.json
find corpus recipes ptx -type f | sort | xargs sha256sum >"$T/before"
ln corpus/smoke/smoke.ptx "$T/hard.ptx"
ln -s "$T/repo/corpus/smoke/smoke.ptx" "$T/sym.ptx"
refused() {   # WHAT COMMAND... (WHAT: module, recipe, ...; an ERE)
	local what=$1
	shift
	expect_rc 2 "$@"
	expect_grep "refusing to write '.*': it is the (same file as the )?$what" "$T/err"
	expect_no_grep "wrote|no CUDA driver" "$T/err"
}
splice_module() { "$D4R" splice --module corpus/smoke/smoke.ptx --recipe recipes/smoke/phase-01.json "$@"; }
refused "module" splice_module -o corpus/smoke/smoke.ptx
refused "module 'corpus/smoke/smoke.ptx'" splice_module -o "$T/hard.ptx"
refused "module" splice_module -o ./corpus/../corpus/smoke/smoke.ptx
refused "module" splice_module -o "$T/sym.ptx"
refused "recipe" splice_module -o recipes/smoke/phase-01.json
refused "template" "$D4R" splice smoke --phase 1 --recipe recipes/smoke/mark.json -o ptx/smoke/mark.ptx
refused "manifest" "$D4R" splice smoke --phase 1 -o recipes/smoke/layer.json
refused "module" "$D4R" recipe new --module corpus/smoke/smoke.ptx --entry pattern --phase 1 \
	--template identity --force -o corpus/smoke/smoke.ptx
refused "oracle" "$D4R" run smoke --frame corpus/smoke/oracle.frame
refused "module" "$D4R" run smoke --module corpus/smoke/smoke.ptx --frame "$T/hard.ptx"
refused "init file" "$D4R" run fromfile --frame corpus/smoke/init.bin
refused "oracle" "$D4R" smoke --phase 1 --diff-image corpus/smoke/oracle.frame
mkdir "$T/keep" && ln corpus/smoke/oracle.frame "$T/keep/original.frame"
refused "oracle" "$D4R" smoke --phase 1 --keep="$T/keep"
refused "recipe" "$D4R" check smoke --junit "$T/repo/recipes/smoke/mark.json"
cp corpus/smoke/oracle.frame "$T/a.frame"
refused "frame" "$D4R" diff "$T/a.frame" corpus/smoke/oracle.frame \
	--layout out:u8:16x16x4 --diff-image "$T/a.frame"
find corpus recipes ptx -type f | sort | xargs sha256sum >"$T/after"
diff "$T/before" "$T/after" || fail "an input changed"
exit 0
