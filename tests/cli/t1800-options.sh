#!/usr/bin/env bash
# t1800-options: one option parser for every verb.  The verbs are the ones
# listed here; each one's --help exits 0; the man page's synopsis of each
# verb names the same options as the verb's table (--list-options), read
# with a parser of the man page's own; unknown options, missing values, bad
# values and options the chosen form would ignore exit 2 with a message
# naming the option; --name=value, short groups and -- work.
. "$D4R_TOP/tests/cli/lib.sh"
MAN="$TOP/man/d4r-splice.1"
G="$TOP/tests/golden/splice"
K="$TOP/tests/fixtures/ana/k.ptx"

# The verbs and sub-verbs (the man page's COMMANDS), and the main job.
verbs=(roundtrip extract phases show grep report splice recipe "recipe new" "recipe check" "recipe best"
	run diff check probe bisect profile capture replay)
expect_rc 0 "$D4R" --list-verbs
printf '%s\n' "${verbs[@]}" >"$T/want-verbs"
diff -u "$T/want-verbs" "$T/out" || fail "--list-verbs is not the list of verbs"

# --help and -h: exit 0, the usage first, every option of the table in it.
for v in "${verbs[@]}" LAYER; do
	[ "$v" = LAYER ] && argv=(enc4) || read -ra argv <<<"$v"
	for h in --help -h; do
		expect_rc 0 "$D4R" "${argv[@]}" $h
		expect_grep "^usage: d4r-splice $v" "$T/out"
		[ -s "$T/err" ] && fail "'$v $h' wrote to stderr"
	done
	cp "$T/out" "$T/help"
	expect_rc 0 "$D4R" "${argv[@]}" --list-options
	cut -f1 "$T/out" >"$T/longs"
	[ -s "$T/longs" ] || fail "'$v --list-options' printed nothing"
	while read -r o; do
		grep -Eq -- "(^|[ ,])$o([ =[]|$)" "$T/help" || fail "'$v --help' does not show $o"
	done <"$T/longs"
done
expect_rc 0 "$D4R" --help
expect_grep '^usage: d4r-splice LAYER --phase N' "$T/out"
expect_grep '^  recipe +write a recipe scaffold' "$T/out"
# `recipe new --help` and `recipe check --help` were usage errors once.
expect_rc 0 "$D4R" recipe new --help
expect_grep '^usage: d4r-splice recipe new LAYER --phase N' "$T/out"
expect_rc 0 "$D4R" recipe check -h
expect_grep '^usage: d4r-splice recipe check RECIPE' "$T/out"

# The man page's synopses against the tables.  The man page is read here,
# independently of the program: a synopsis is what follows a section's
# heading up to its first paragraph; options are \-\-name and \-x in it.
for v in "${verbs[@]}" LAYER GLOBAL; do
	case $v in
	LAYER) argv=(enc4) ;;
	GLOBAL) argv=() ;;
	recipe) continue ;;   # no options of its own; its sub-verbs have sections
	*) read -ra argv <<<"$v" ;;
	esac
	"$D4R" "${argv[@]}" --list-options >"$T/table-$v" || fail "'$v --list-options' failed"
done
python3 - "$MAN" "$T" "${verbs[@]}" <<'PY' || fail "the man page's synopses and the option tables differ"
import re, sys
man, tmp, verbs = sys.argv[1], sys.argv[2], [v for v in sys.argv[3:] if v != "recipe"]
text = open(man).read().split("\n")

def plain(lines):
    s = "\n".join(l for l in lines if not l.startswith(".\\\""))
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace("\\(aq", "'")
    return re.sub(r'^\.[A-Z]+ ?', "", s, flags=re.M)

def options(s):
    longs = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", s))
    shorts = set(re.findall(r"(?<![\w-])-([A-Za-z])(?![\w-])", s))
    return longs, shorts

# sections: heading -> (synopsis lines, body lines)
sections, cur = {}, None
for line in text:
    m = re.match(r'^\.S[SH] "?(.*?)"?$', line)
    if m:
        cur = m.group(1).replace("\\-", "-")
        sections[cur] = [[], [], False]
        continue
    if cur is None:
        continue
    if line.startswith(".PP") or line.startswith(".TP"):
        sections[cur][2] = True
    sections[cur][1 if sections[cur][2] else 0].append(line)

def section(v):
    if v == "LAYER":
        return next(k for k in sections if k.startswith("The main job"))
    return v

def table(v):
    rows = [l.split("\t") for l in open("%s/table-%s" % (tmp, v)).read().splitlines()]
    opts, aliases = [], []
    for long_, short, value, arg, choices, alias, help_ in rows:
        if long_ == "--help" and v != "GLOBAL":
            continue
        (aliases if alias != "-" else opts).append((long_[2:], short[1:] if short != "-" else None))
    return opts, aliases

bad = []
for v in verbs + ["LAYER", "GLOBAL"]:
    if v == "GLOBAL":
        # the SYNOPSIS form that starts with an option
        forms = [f.strip().split("\n") for f in "\n".join(sections["SYNOPSIS"][0]).split(".br")]
        glob = [f for f in forms if len(f) > 1 and f[1].startswith(".RB (")]
        if not glob:
            bad.append("GLOBAL: no synopsis form of the global options")
            continue
        syn, body = plain(glob[0]), ""
    else:
        k = section(v)
        if k not in sections:
            bad.append("%s: no section in the man page" % v)
            continue
        syn, body = plain(sections[k][0]), plain(sections[k][1])
    longs, shorts = options(syn)
    opts, aliases = table(v)
    for l, s in opts:
        if l not in longs and (s is None or s not in shorts):
            bad.append("%s: --%s is in the table, not in the man page's synopsis" % (v, l))
    known_l = {l for l, s in opts}
    known_s = {s for l, s in opts if s}
    for l in sorted(longs - known_l):
        bad.append("%s: the synopsis names --%s, which the table %s" % (
            v, l, "has as an alias" if l in {a for a, _ in aliases} else "lacks"))
    for s in sorted(shorts - known_s):
        bad.append("%s: the synopsis names -%s, which the table lacks" % (v, s))
    for l, s in aliases:
        if "--" + l not in body:
            bad.append("%s: alias --%s is not documented in its section" % (v, l))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# Unknown options, for every verb: exit 2, named.
for v in "${verbs[@]}" LAYER; do
	[ "$v" = LAYER ] && argv=(enc4) || read -ra argv <<<"$v"
	expect_rc 2 "$D4R" "${argv[@]}" --no-such-option
	expect_grep "unknown option '--no-such-option'" "$T/err"
	expect_grep "^usage: d4r-splice" "$T/err"
done
expect_rc 2 "$D4R" --no-such-option
expect_grep "^d4r-splice: unknown option '--no-such-option'" "$T/err"
expect_rc 2 "$D4R" grep "$K" -cz x
expect_grep "unknown option '-z' \(in '-cz'\)" "$T/err"
# recipe new took --arch once and dropped it
expect_rc 2 "$D4R" recipe new small --phase 1 --arch sm_90
expect_grep "recipe new: unknown option '--arch'" "$T/err"

# A missing value, for every option that takes one, of every verb: named.
for v in "${verbs[@]}" LAYER; do
	[ "$v" = LAYER ] && argv=(enc4) || read -ra argv <<<"$v"
	"$D4R" "${argv[@]}" --list-options | awk -F'\t' '$3 == "required" {print $1}' >"$T/req"
	while read -r o; do
		expect_rc 2 "$D4R" "${argv[@]}" "$o"
		expect_grep "option '$o' needs a value" "$T/err"
	done <"$T/req"
done
expect_rc 2 "$D4R" phases "$K" --gap
expect_grep "^d4r-splice: phases: option '--gap' needs a value$" "$T/err"
expect_rc 2 "$D4R" splice -o
expect_grep "option '-o' needs a value" "$T/err"
expect_rc 2 "$D4R" phases "$K" --json=yes
expect_grep "option '--json' takes no value" "$T/err"

# Bad values: the option and the value are named.
expect_rc 2 "$D4R" phases "$K" --gap x
expect_grep "option '--gap': 'x' is not a whole number" "$T/err"
expect_rc 2 "$D4R" show "$K" --phase 0
expect_grep "option '--phase': '0' is not a phase number" "$T/err"
expect_rc 2 "$D4R" enc4 --phase 8 --runs 100001
expect_grep "option '--runs': '100001' is not a whole number in \[0, 100000\]" "$T/err"
expect_rc 2 "$D4R" check enc4 --timeout 5s
expect_grep "option '--timeout': '5s' is not a number of seconds" "$T/err"
expect_rc 2 "$D4R" splice --module "$K" --every-phase --template nope
expect_grep "option '--template': 'nope': expected identity or perturb" "$T/err"
expect_rc 2 "$D4R" recipe check --check=maybe x.json
expect_grep "option '--check': 'maybe': expected ptxas or none" "$T/err"

# Options the chosen form would ignore are refused, and nothing is done.
refused() {   # message, then the command
	local msg=$1
	shift
	expect_rc 2 "$@"
	expect_grep "$msg" "$T/err"
	case " $* " in
	*" --json "*) # stdout is the error document, and only that
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="error" and d["exit"]==2' "$T/out" ||
			fail "'$*' printed more than its error document" ;;
	*) [ -s "$T/out" ] && fail "'$*' printed on stdout before refusing" ;;
	esac
	[ ! -e "$T/o.ptx" ] || fail "'$*' wrote its output"
}
E=(splice --module "$G/small.ptx" --every-phase)
refused "option '-o' cannot be used with '--every-phase'" "$D4R" "${E[@]}" -o "$T/o.ptx"
refused "option '--output' cannot be used with '--every-phase'" "$D4R" "${E[@]}" --output="$T/o.ptx"
refused "option '--recipe' cannot be used with '--every-phase'" "$D4R" "${E[@]}" --recipe "$G/identity-phase1.recipe.json"
refused "option '--phase' cannot be used with '--every-phase'" "$D4R" "${E[@]}" --phase 1
refused "option '--force' cannot be used with '--every-phase'" "$D4R" "${E[@]}" --force
refused "option '-q' cannot be used with '--every-phase'" "$D4R" "${E[@]}" -q
refused "option '--corpus' cannot be used with '--every-phase'" "$D4R" "${E[@]}" --corpus "$G"
refused "option '--ptx' cannot be used with '--every-phase'" "$D4R" "${E[@]}" --ptx "$G"
refused "unexpected argument 'small': --every-phase takes --module FILE" "$D4R" "${E[@]}" small
refused "option '--every-phase' needs '--module'" "$D4R" splice --every-phase
R=(splice --corpus "$G" --recipe "$G/identity-phase1.recipe.json" -o "$T/o.ptx")
refused "option '--together' needs '--every-phase'" "$D4R" "${R[@]}" --together
refused "option '--template' needs '--every-phase'" "$D4R" "${R[@]}" --template perturb
refused "option '--arch' needs '--check=ptxas'" "$D4R" "${R[@]}" --arch sm_90
refused "option '--arch' needs '--check=ptxas'" "$D4R" "${R[@]}" --arch sm_90 --check=none
refused "option '--arch' needs '--check=ptxas'" "$D4R" "${E[@]}" --arch sm_90
refused "option '--arch' needs '--check=ptxas'" "$D4R" recipe check --arch 90 "$G/identity-phase1.recipe.json"
refused "option '--ptx' cannot be used with the built-in template 'identity'" \
	"$D4R" recipe new --module "$G/small.ptx" --phase 1 --template identity -o "$T/o.ptx" --ptx "$T"
refused "option '--force' cannot be used with '-o -'" \
	"$D4R" recipe new --module "$G/small.ptx" --phase 1 --template identity -o - --force
refused "option '-o' cannot be used with '--list'" "$D4R" extract --list -o "$T/o.ptx" "$K"
refused "option '--epilogue' cannot be used with '--stmts'" "$D4R" show "$K" --stmts 1:2 --epilogue
refused "option '--gap' cannot be used with '--stmts'" "$D4R" show "$K" --stmts 1:2 --gap 1
refused "option '--phase' cannot be used with '--stmts'" "$D4R" show "$K" --stmts 1:2 --phase 1
refused "option '--json' cannot be used with '--md'" "$D4R" phases "$K" --json --md
refused "option '--md' cannot be used with '--json'" "$D4R" report "$K" --md --json
refused "option '--layer' cannot be used with '--layout'" "$D4R" diff "$K" "$K" --layer x --layout a:u8:4
refused "option '--diff-image' needs '--layer' or '--layout'" "$D4R" diff "$K" "$K" --diff-image "$T/o.ptx"
# the alias stands for --check=ptxas, so --arch goes with it
expect_rc 2 "$D4R" recipe check --ptxas --arch 90 "$T/missing.json"
expect_no_grep "needs '--check=ptxas'" "$T/err"
expect_grep "cannot open '.*missing.json'" "$T/err"
expect_rc 2 "$D4R" recipe check --ptxas=yes x.json
expect_grep "option '--ptxas' takes no value" "$T/err"

# --name=value is --name value; short options combine; -- ends the options.
expect_rc 0 "$D4R" phases "$K" --gap 2 --entry k
cp "$T/out" "$T/spaced"
expect_rc 0 "$D4R" phases --gap=2 --entry=k "$K"
cmp -s "$T/spaced" "$T/out" || fail "--gap=2 --entry=k differs from --gap 2 --entry k"
expect_grep '^k: 2 phases' "$T/out"
expect_rc 0 "$D4R" grep "$K" -ci 'MMA\.SYNC'
expect_grep '^k: 9$' "$T/out"
expect_rc 0 "$D4R" grep --count --ignore-case -- "$K" 'MMA\.SYNC'
expect_grep '^k: 9$' "$T/out"
expect_rc 0 "$D4R" splice --corpus="$G" --recipe="$G/identity-phase1.recipe.json" --output="$T/eq.ptx" -q
cmp -s "$T/eq.ptx" "$G/identity-phase1.out.ptx" || fail "--output=FILE did not write the spliced module"
exit 0
