#!/usr/bin/env bash
# roundtrip: exit codes (0 identical, 1 differs, 2 error) and messages.
# Exit 1 needs a parser bug (emitted bytes or re-rendered statements that
# differ from the input), so it cannot be provoked here; the unit tests and
# the corpus test hold the parser to 0.
. "$D4R_TOP/tests/cli/lib.sh"
g="$TOP/tests/golden/roundtrip"

# usage
expect_rc 2 "$D4R" roundtrip
expect_grep '^usage: d4r-splice roundtrip' "$T/err"
expect_rc 2 "$D4R" roundtrip --bogus "$g/small.ptx"
expect_grep "unknown option '--bogus'" "$T/err"
expect_rc 0 "$D4R" roundtrip --help
expect_grep '^usage: d4r-splice roundtrip' "$T/out"

# ok: silent without --stats
expect_rc 0 "$D4R" roundtrip "$g/small.ptx"
[ -s "$T/out" ] && fail "roundtrip printed on success without --stats"
[ -s "$T/err" ] && fail "roundtrip wrote to stderr on success"

# missing file: named, exit 2
expect_rc 2 "$D4R" roundtrip "$T/missing.ptx"
expect_grep "missing\.ptx" "$T/err"

# a directory is not a module
expect_rc 2 "$D4R" roundtrip "$T"

# parse errors: file:line:col: message, the source line, a caret
printf '.version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tmov.u32 %%r1 %%r2;\n}\n' >"$T/a.ptx"
expect_rc 2 "$D4R" roundtrip "$T/a.ptx"
expect_grep "a\.ptx:6:14: expected ',' or ';' after an operand$" "$T/err"
expect_grep '^    	mov\.u32 %r1 %r2;$' "$T/err"
expect_grep '^    	            \^$' "$T/err"

# one bad file among good ones: all are processed, the bad one is named,
# the exit status is 2, and --stats still reports the good ones
expect_rc 2 "$D4R" roundtrip --stats "$g/small.ptx" "$T/a.ptx" "$g/constructs.ptx"
expect_grep '^small\.ptx .* identical$' "$T/out"
expect_grep '^constructs\.ptx .* identical$' "$T/out"
expect_grep 'a\.ptx:6:14:' "$T/err"

# empty file and binary garbage
: >"$T/empty.ptx"
expect_rc 2 "$D4R" roundtrip "$T/empty.ptx"
expect_grep 'empty\.ptx: empty file: not a PTX module' "$T/err"
head -c 4096 "$D4R" >"$T/bin.ptx"
expect_rc 2 "$D4R" roundtrip "$T/bin.ptx"
expect_grep 'bin\.ptx:1:1: expected a directive' "$T/err"

# a module that ends inside a statement
printf '.version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tld.global.u32 %%r1, [%%rd1' >"$T/cut.ptx"
expect_rc 2 "$D4R" roundtrip "$T/cut.ptx"
expect_grep "cut\.ptx:6:26: expected ',' or ']'" "$T/err"
exit 0
