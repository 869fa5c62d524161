#!/usr/bin/env bash
# report --pprof: the gaps' stacks as a gzipped pprof profile, read by a real pprof reader
# (Debian golang-go's `go tool pprof`). Its total is the gaps' total time in summary.json, its
# top function (flat) the report's top root cause, and its labels split the total by gap and
# by cause exactly as summary.json's gaps do.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
command -v go >/dev/null || die "go not installed (make deps: golang-go)"
GS=$BUILD/gapscope
export HOME=$TMP # go tool pprof keeps nothing, but wants a home

"$GS" record -o "$TMP/zk.gsc" -- "$BUILD/zkengine" --device sim --scenario tracker-trim \
	>"$TMP/out" 2>&1 || { cat "$TMP/out"; die "record failed"; }
"$GS" report "$TMP/zk.gsc" -o "$TMP/rep" --pprof "$TMP/gaps.pb.gz" >/dev/null ||
	die "report --pprof failed"
gzip -t "$TMP/gaps.pb.gz" || die "not gzip"

pprof() { go tool pprof -unit ns "$@" "$TMP/gaps.pb.gz" 2>/dev/null; }
pprof -top >"$TMP/top" || die "go tool pprof cannot read it"
cat "$TMP/top"
total=$(sed -n 's/.* of \([0-9]*\)ns total.*/\1/p' "$TMP/top")
top=$(awk '/flat%/ { getline; print $NF; exit }' "$TMP/top")
read -r want_total want_top < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(g["duration_ns"] for g in d["gaps"]), d["causes"][0]["function"])' "$TMP/rep/summary.json")
assert_eq "$total" "$want_total" "pprof total (ns)"
assert_eq "$top" "$want_top" "pprof top function"

# By label: each gap's samples add up to its duration, each cause kind's to its gaps'.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["gaps"]:
    print("gap", g["id"], g["duration_ns"])
kinds = {}
for g in d["gaps"]:
    k = g["cause"]["kind"] if g["cause"] else None
    if k:
        kinds[k] = kinds.get(k, 0) + g["duration_ns"]
for k, ns in kinds.items():
    print("cause", k, ns)' "$TMP/rep/summary.json" >"$TMP/want"
# go tool pprof -tags: per label key, the total of each value ("gap" values print as "2ns").
pprof -tags | awk '/: Total / { key = $1; sub(":", "", key); next }
	/%\): / { v = $1; sub("ns$", "", v); sub("\\.0$", "", v); l = $NF; sub("ns$", "", l)
		   print key, l, v }' | sort >"$TMP/got"
sort "$TMP/want" >"$TMP/want.sorted"
grep -E '^(gap|cause) ' "$TMP/got" | diff -u "$TMP/want.sorted" - || die "pprof label totals differ"
[ "$(wc -l <"$TMP/want")" -ge 3 ] || die "only $(wc -l <"$TMP/want") labels checked"
grep -q '^tier api ' "$TMP/got" || die "no tier label"

# An existing file is not replaced without -f: one line, non-zero.
if "$GS" report "$TMP/zk.gsc" -o "$TMP/rep2" --pprof "$TMP/gaps.pb.gz" >/dev/null 2>"$TMP/err"; then
	die "an existing --pprof file was replaced without -f"
fi
assert_eq "$(wc -l <"$TMP/err")" 1 "error lines"
cat "$TMP/err"
echo ok
