#!/usr/bin/env bash
# gapscope diff on zkengine's tracker-trim against fixed (simcuda, real probes, same seed):
# malloc_trim is the largest drop (JSON); --fail-if-grows 10 passes in that order and fails in
# the other, naming malloc_trim; two summary.json files give the same rows as their traces;
# different programs are said and not judged; bad input is one line and the right exit status,
# a summary.json's fault named by line and column.
# Each check compares two recordings' own reports: no timing bound.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"

rec() { # rec NAME SCENARIO: a short recording and its report
	timeout 300 "$GS" record -o "$TMP/$1.gsc" -- "$ZK" --device sim --scenario "$2" --seed 11 \
		--partitions 8 >"$TMP/$1.out" 2>"$TMP/$1.err" || { cat "$TMP/$1.err"; die "record $1"; }
	"$GS" report "$TMP/$1.gsc" -o "$TMP/$1.rep" >/dev/null 2>"$TMP/$1.rerr" ||
		{ cat "$TMP/$1.rerr"; die "report $1"; }
}
rec trim tracker-trim
rec fixed fixed
assert_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program"])' \
	"$TMP/trim.rep/summary.json")" zkengine "summary.json's program"

# q FILE EXPR: a python expression over the diff's JSON `d`
q() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

"$GS" diff "$TMP/trim.gsc" "$TMP/fixed.gsc" --format json >"$TMP/d.json"
"$GS" diff "$TMP/trim.gsc" "$TMP/fixed.gsc" >"$TMP/d.txt"
cat "$TMP/d.txt"
assert_eq "$(q "$TMP/d.json" 'd["same_program"] and d["same_devices"]')" True "comparable"
low=$(q "$TMP/d.json" 'min(d["causes"], key=lambda c: c["delta_ns"])')
assert_eq "$(q "$TMP/d.json" '[(c["kind"], c["function"]) for c in d["causes"] if c["delta_ns"] == min(x["delta_ns"] for x in d["causes"])][0]')" \
	"('malloc_trim', 'malloc_trim')" "largest drop: $low"
# the rows add up to each side's gap time, and are in order of change
assert_eq "$(q "$TMP/d.json" 'sum(c["a_ns"] for c in d["causes"]) == d["a"]["gap_ns"] and sum(c["b_ns"] for c in d["causes"]) == d["b"]["gap_ns"]')" \
	True "rows sum to the gap time"
assert_eq "$(q "$TMP/d.json" '[abs(c["delta_ns"]) for c in d["causes"]] == sorted((abs(c["delta_ns"]) for c in d["causes"]), reverse=True)')" \
	True "rows by change"
grep -q '^ *-[0-9.]* m\?s .* malloc_trim  *malloc_trim$' "$TMP/d.txt" || die "text: no malloc_trim row"

# --fail-if-grows 10: the fix passes; the regression fails, naming malloc_trim
"$GS" diff "$TMP/trim.gsc" "$TMP/fixed.gsc" --fail-if-grows 10 >/dev/null 2>"$TMP/ok.err" ||
	die "trim -> fixed failed the gate: $(cat "$TMP/ok.err")"
[ ! -s "$TMP/ok.err" ] || die "trim -> fixed: $(cat "$TMP/ok.err")"
rc=0
"$GS" diff "$TMP/fixed.gsc" "$TMP/trim.gsc" --fail-if-grows 10 >/dev/null 2>"$TMP/bad.err" || rc=$?
assert_eq "$rc" 1 "fixed -> trim: exit status"
grep -q '^gapscope diff: malloc_trim malloc_trim grew by ' "$TMP/bad.err" ||
	die "fixed -> trim: $(cat "$TMP/bad.err")"

# two summary.json files: the same rows as their traces (paths aside)
"$GS" diff "$TMP/trim.rep/summary.json" "$TMP/fixed.rep/summary.json" --format json >"$TMP/j.json"
assert_eq "$(q "$TMP/j.json" 'd["causes"]')" "$(q "$TMP/d.json" 'd["causes"]')" "rows of summary.json"
assert_eq "$(q "$TMP/j.json" '(d["a"]["gap_ns"], d["b"]["gap_ns"], d["a"]["program"])')" \
	"$(q "$TMP/d.json" '(d["a"]["gap_ns"], d["b"]["gap_ns"], d["a"]["program"])')" "totals"
# a trace against a summary.json too
"$GS" diff "$TMP/trim.gsc" "$TMP/fixed.rep/summary.json" --format json >"$TMP/m.json"
assert_eq "$(q "$TMP/m.json" 'd["causes"]')" "$(q "$TMP/d.json" 'd["causes"]')" "mixed inputs"

# another program: said, causes not compared, the gate cannot pass
sed 's/"program":"zkengine"/"program":"python3"/' "$TMP/fixed.rep/summary.json" >"$TMP/other.json"
"$GS" diff "$TMP/trim.rep/summary.json" "$TMP/other.json" >"$TMP/o.txt"
grep -q '^A and B record different programs (zkengine, python3): causes not compared$' "$TMP/o.txt" ||
	die "other program: $(cat "$TMP/o.txt")"
"$GS" diff "$TMP/trim.rep/summary.json" "$TMP/other.json" --format json >"$TMP/o.json"
assert_eq "$(q "$TMP/o.json" '(d["same_program"], d["causes"])')" "(False, [])" "other program: JSON"
rc=0
"$GS" diff "$TMP/trim.rep/summary.json" "$TMP/other.json" --fail-if-grows 10 >/dev/null 2>"$TMP/o.err" || rc=$?
assert_eq "$rc" 1 "other program: gate"
# other devices: causes compared by share, no ns change
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); d["devices"][0]["id"] = 1
json.dump(d, open(sys.argv[2], "w"))' "$TMP/fixed.rep/summary.json" "$TMP/dev1.json"
"$GS" diff "$TMP/trim.rep/summary.json" "$TMP/dev1.json" --format json >"$TMP/v.json"
assert_eq "$(q "$TMP/v.json" '(d["same_devices"], d["causes_compared"], all(c["delta_ns"] is None for c in d["causes"]))')" \
	"(False, 'share', True)" "other devices"

# bad input: one line; 64 for usage, 1 for what cannot be read
printf '{"version":1,' >"$TMP/cut.json"
printf 'not a trace\n' >"$TMP/junk"
for args in "" "$TMP/trim.gsc" "a b c" "--format xml a b" "--fail-if-grows -1 a b" \
	"--fail-if-grows x a b" "--bogus a b" "$TMP/nonexistent $TMP/fixed.gsc" \
	"$TMP/cut.json $TMP/fixed.gsc" "$TMP/junk $TMP/fixed.gsc" "$TMP/fixed.gsc $TMP" \
	"$TMP/fixed.gsc $TMP/ok.err"; do
	rc=0
	# shellcheck disable=SC2086 # the arguments as words
	"$GS" diff $args >"$TMP/e.out" 2>"$TMP/e.err" || rc=$?
	case $args in
	"" | "$TMP/trim.gsc" | "a b c" | --*) want=64 ;;
	*) want=1 ;;
	esac
	assert_eq "$rc" "$want" "diff $args: exit status"
	assert_eq "$(wc -l <"$TMP/e.err")" 1 "diff $args: lines on stderr ($(cat "$TMP/e.err"))"
	grep -q '^gapscope diff: ' "$TMP/e.err" || die "diff $args: $(cat "$TMP/e.err")"
	[ ! -s "$TMP/e.out" ] || die "diff $args: wrote to stdout"
done
# summary.json's faults are named by line and column: cut after its third line (the end of the
# file, line 4 column 0), a key twice (line 1, after `{"version":1,"version"`: column 22)
head -n 3 "$TMP/fixed.rep/summary.json" >"$TMP/cut3.json"
sed '1s/^{"version":1,/{"version":1,"version":1,/' "$TMP/fixed.rep/summary.json" >"$TMP/dup.json"
for f in cut3:'line 4, column 0: .*end of file' dup:'line 1, column 22: duplicate object key'; do
	rc=0
	"$GS" diff "$TMP/${f%%:*}.json" "$TMP/fixed.gsc" >"$TMP/e.out" 2>"$TMP/e.err" || rc=$?
	assert_eq "$rc" 1 "${f%%:*}.json: exit status"
	assert_eq "$(wc -l <"$TMP/e.err")" 1 "${f%%:*}.json: lines on stderr ($(cat "$TMP/e.err"))"
	grep -q "^gapscope diff: $TMP/${f%%:*}.json: ${f#*:}" "$TMP/e.err" ||
		die "${f%%:*}.json: $(cat "$TMP/e.err")"
	[ ! -s "$TMP/e.out" ] || die "${f%%:*}.json: wrote to stdout"
done
echo "diff: malloc_trim the largest drop; the gate passes the fix and fails the regression"
