#!/usr/bin/env bash
# Names the target chooses, through every output: tests/report/hostile.c names its threads and
# kernels with bytes that are no UTF-8, surrogates, U+FFFE/U+FFFF, code points beyond U+10FFFF,
# overlong forms, terminal escapes, newlines and markup, and runs from a directory whose name
# holds a newline, "# end events=0" and an OSC sequence. summary.json, timeline.json and
# gaps.speedscope.json must be UTF-8 that json.load takes; every SVG (and those inlined in
# index.html) well-formed XML; summary.txt, report's stdout and script's output free of control
# characters, with one '# end' line (tests/report/hostile_check.py); the page opens in Chromium
# without errors and shows a gap's flame graph; --pprof's profile passes a strict proto3
# decoder; the program's file under the newline directory is read (not "missing"). Also report's
# options: NaN, wrapping numbers and an absurd --copy-rate refused; report -f into an older
# report leaves none of its gap files.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
GS=$(realpath "$BUILD/gapscope")
CC=${CC:-cc}

evil="$TMP/evil
# end events=0
$(printf '\033]0;owned\007')"
mkdir -p "$evil" "$TMP/lib"
$CC -O2 -g -fno-omit-frame-pointer -pthread -o "$evil/hostile" tests/report/hostile.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/lib/libcuda.so.1" tests/record/fakecuda.c

"$GS" record -o "$TMP/t.gsc" -- "$evil/hostile" "$TMP/lib/libcuda.so.1" 3 3 \
	>"$TMP/rec.out" 2>&1 || { cat "$TMP/rec.out"; die "record"; }
# --top 1000: every gap listed with its closer (the hostile threads' gaps are all 3 ms: which
# ten of them are the longest is chance).
"$GS" report "$TMP/t.gsc" -o "$TMP/rep" --top 1000 --pprof "$TMP/rep.pb.gz" >"$TMP/rep.txt" 2>"$TMP/rep.err" ||
	{ cat "$TMP/rep.err"; die "report"; }
[ ! -s "$TMP/rep.err" ] || die "report warned: $(cat "$TMP/rep.err")"
"$GS" script "$TMP/t.gsc" >"$TMP/script.txt" 2>"$TMP/script.err" || die "script"
grep -q '^gaps: [1-9]' "$TMP/rep.txt" || die "no gaps: $(cat "$TMP/rep.txt")"
python3 tests/report/hostile_check.py "$TMP/rep" "$TMP/rep.txt" "$TMP/script.txt" ||
	die "hostile names broke an output"
# --pprof's string table through a strict proto3 decoder (Debian's python3-protobuf, under the
# system's interpreter): the names are UTF-8, U+FFFD where the target's bytes were none.
/usr/bin/python3 tests/report/pprof_strict.py "$TMP/rep.pb.gz" >"$TMP/pprof.txt" || die "--pprof: invalid strings"
cat "$TMP/pprof.txt"
grep -q ' [1-9][0-9]* with U+FFFD$' "$TMP/pprof.txt" || die "--pprof: no hostile name in the profile"
# The program's own file, under a directory whose name holds a newline, is found and read:
# /proc/PID/maps writes the newline as \012, which no file is named.
python3 - "$TMP/rep/summary.json" <<'PY' || die "a file under the newline directory was not read"
import json, sys
s = json.load(open(sys.argv[1]))
bad = [f for f in s.get("symbols", {}).get("unnamed_files", [])
       if ("\n" in f["path"] or "\\012" in f["path"]) and f["state"] != "ok"]
print("files under the newline directory not read: %d" % len(bad))
assert not bad, bad
PY
# Each thread closed gaps, under its escaped name (one sample: a terminal escape).
grep -q '\\x1b\]0;pwned\\x07' "$TMP/rep.txt" || die "the OSC name is not shown escaped"
grep -q "^# target pid=[0-9]* launch $TMP/evil\\\\x0a# end events=0\\\\x0a" "$TMP/script.txt" ||
	die "the target's path is not shown escaped: $(grep '^# target' "$TMP/script.txt")"

# The gaps the program made on purpose: each thread's sleeps between a synchronize and its next
# launch (3 for each of the 7 threads), begun and closed by that one thread. Not a gap from one
# thread's last synchronize to the next thread's first launch: that one is the scheduler's (on a
# busy machine the new thread waits for a CPU before its first run, which no event shows: it
# reads as on CPU), and it can be the longest. Nor the longest of the sleeps: on a busy machine a
# thread woken from its sleep can wait for a CPU longer than it slept, and that wait is the
# gap's cause. The shortest one is clicked, and it is under twice the 3 ms sleep: its sleep is
# the larger part of it, whatever the machine did.
pick=$(python3 - "$TMP/rep/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
mine = [g for g in s["gaps"]
        if g["start_edge"] == "cuStreamSynchronize returned in " + g["closer"]["comm"]]
g = min(mine, key=lambda g: g["duration_ns"]) if mine else {"id": 0, "duration_ns": 0}
print(len(mine), g["id"], g["duration_ns"])
PY
)
read -r n id ns <<<"$pick"
echo "$n gaps begun and closed by one thread; the shortest, gap $id: $ns ns"
assert_eq "$n" 21 "gaps begun and closed by one thread"
[ "$ns" -lt 6000000 ] || die "the shortest sleep's gap is $ns ns, twice the sleep or more"

# The page, in Chromium: no console error; clicked, that gap shows its sleep in its flame graph
# and its chain names the sleep.
if [ -x "${CHROMIUM:-/usr/bin/chromium}" ] && [ -e tests/browser/node_modules/puppeteer-core ] &&
	command -v node >/dev/null; then
	mkdir -p "$BUILD/tests/render"
	CHROMIUM=${CHROMIUM:-/usr/bin/chromium} CLICK_GAPS=$id node tests/browser/check_page.js \
		"$TMP/rep/index.html" "$BUILD/tests/render/index-hostile.png" clock_nanosleep sleep ||
		die "the page with hostile names"
else
	[ -z "${CI:-}" ] || die "chromium, node or puppeteer missing in CI (make deps installs them)"
	echo "note: no Chromium: the page was not opened"
fi

# report's numbers: no NaN, no wrap, no copy rate that would make copies outlast the run.
for o in "--min-gap nan" "--min-gap inf" "--min-gap -1" "--top 4294967297" \
	"--copy-rate 1e-6" "--copy-rate nan" "--copy-rate 10,nan" "--copy-rate 10,1e9"; do
	rc=0
	# shellcheck disable=SC2086
	"$GS" report "$TMP/t.gsc" -o "$TMP/bad" $o >/dev/null 2>"$TMP/bad.err" || rc=$?
	[ "$rc" -ne 0 ] || die "report $o: exit 0"
	grep -q "^gapscope report: ${o%% *}: " "$TMP/bad.err" || die "report $o: $(cat "$TMP/bad.err")"
	[ ! -e "$TMP/bad" ] || die "report $o left a directory"
done
rc=0
"$GS" script -w nan "$TMP/t.gsc" >/dev/null 2>"$TMP/bad.err" || rc=$?
[ "$rc" -ne 0 ] || die "script -w nan: exit 0"

# report -f into an older report with more gaps: none of its gap files stay.
"$GS" report "$TMP/t.gsc" -o "$TMP/rep" -f --min-gap 1e6 >/dev/null 2>&1 || die "report -f"
left=$(cd "$TMP/rep/gaps" && ls)
assert_eq "$(echo $left)" "all.folded all.svg" "gap files after report -f with no gaps"
echo ok
