#!/usr/bin/env bash
# The command line behaves as perf's, bpftool's and bpftrace's do:
#  - `gapscope --version` and `-V` (and each command's) print the release and the commit built;
#  - `record -h`, `report -h`, `script -h` and `gapscope help CMD` print that command's --help,
#    on stdout, exit 0; `gapscope help` with no command the list of commands;
#  - each help has exactly one "Usage:" line, with its operands, and no line argp broke badly
#    (over 79 columns, trailing blanks, or a lone word left by a hard newline in a wrapped line);
#  - record's help says which signals the recorder keeps and whether launch mode follows children.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$GS"

commit=$(git -C "$GAPSCOPE_ROOT" describe --always --abbrev=12 2>/dev/null || echo unknown)
for v in --version -V "record --version" "report -V" "script --version"; do
	# shellcheck disable=SC2086 # two words where a command is given
	out=$("$GS" $v)
	[[ $out =~ ^gapscope\ [0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]+|unknown)(-dirty)?\)$ ]] ||
		die "gapscope $v: '$out'"
	# The binary tested is the one built from this tree (its commit, or a later build's).
	[[ $out == *"commit $commit"* ]] || die "gapscope $v: '$out', tree at $commit (run make)"
done

# usage_ok NAME FILE OPERANDS: one Usage line naming its operands, and nothing wrapped badly.
usage_ok() {
	assert_eq "$(grep -c '^Usage:' "$2")" 1 "$1: Usage lines"
	assert_eq "$(grep -ci 'usage:' "$2")" 1 "$1: usage lines of any case"
	grep -qxF "Usage: gapscope $1 [OPTION...] $3" "$2" || die "$1: $(grep '^Usage:' "$2")"
	grep -q '^  -h, --help  ' "$2" || die "$1: help does not list -h, --help"
	grep -q '^  -V, --version  ' "$2" || die "$1: help does not list -V, --version"
	! awk 'length > 79' "$2" | grep . || die "$1: lines over 79 columns"
	! grep -n '[[:space:]]$' "$2" || die "$1: trailing blanks"
	# A hard newline inside a paragraph argp had wrapped leaves a line of one or two words
	# between two lines of the same paragraph.
	! awk '{ l[NR] = $0 } END { for (i = 2; i < NR; i++)
		if (l[i] !~ /^ / && split(l[i], w) <= 2 && l[i - 1] != "" && l[i + 1] != "" &&
		    l[i + 1] !~ /^ /) print l[i] }' "$2" | grep . || die "$1: a line broken in two"
}

for c in record report script diff; do
	"$GS" "$c" --help >"$TMP/$c.long"
	"$GS" "$c" -h >"$TMP/$c.short" 2>"$TMP/$c.err" || die "$c -h: exit $?"
	[ ! -s "$TMP/$c.err" ] || die "$c -h: $(cat "$TMP/$c.err")"
	cmp -s "$TMP/$c.long" "$TMP/$c.short" || die "$c -h differs from --help"
	"$GS" help "$c" >"$TMP/$c.help"
	cmp -s "$TMP/$c.long" "$TMP/$c.help" || die "gapscope help $c differs from $c --help"
	case $c in
	record) operands='(-p PID | --cgroup PATH | -- CMD [ARGS...])' ;;
	diff) operands='A B' ;;
	*) operands=FILE ;;
	esac
	usage_ok "$c" "$TMP/$c.long" "$operands"
	# --usage: the short form, every option in brackets, exit 0.
	"$GS" "$c" --usage >"$TMP/$c.usage" 2>"$TMP/$c.uerr" || die "$c --usage: exit $?"
	[ ! -s "$TMP/$c.uerr" ] || die "$c --usage: $(cat "$TMP/$c.uerr")"
	grep -q "^Usage: gapscope $c \\[-" "$TMP/$c.usage" || die "$c --usage: $(head -1 "$TMP/$c.usage")"
done

# -h among other options is help too, and records nothing.
"$GS" record -o "$TMP/x" -h -- true >/dev/null
[ ! -e "$TMP/x" ] || die "record -h recorded"

"$GS" help >"$TMP/top"
grep -q '^  report   find GPU idle gaps' "$TMP/top" || die "gapscope help: $(cat "$TMP/top")"
assert_eq "$(grep -c '^Usage: gapscope COMMAND' "$TMP/top")" 1 "gapscope help: Usage line"
rc=0
"$GS" help nosuch >/dev/null 2>"$TMP/err" || rc=$?
assert_eq "$rc" 2 "gapscope help nosuch: exit"
assert_eq "$(head -1 "$TMP/err")" "gapscope: help: no command 'nosuch'" "gapscope help nosuch"

# What the recorder keeps of the signals sent to it, and what launch mode follows.
tr '\n' ' ' <"$TMP/record.long" | tr -s ' ' >"$TMP/record.flat"
grep -q 'the recorder keeps SIGCHLD, SIGPIPE .* in flight mode, SIGUSR1' "$TMP/record.flat" ||
	die "record --help: signals kept"
grep -q -- '-- CMD records CMD alone (--follow-children adds what it forks)' "$TMP/record.flat" ||
	die "record --help: launch mode and children"
echo "versions, -h, help CMD and usage lines: ok"
