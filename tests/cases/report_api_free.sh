#!/usr/bin/env bash
# The API tier where a free is the only synchronize (tests/report/feeder.c's free mode on
# simcuda, real probes): each iteration launches, then cuMemFree waits for the device and
# unmaps for ~4 ms, then 10 ms of CPU work. The gap begins at the drain, where the freeing
# thread was woken by the driver's thread, not at the free's return: against simcuda's own
# kernel intervals (SIMCUDA_TRACE), every idle window of 1 ms or more is a gap of the report
# (none lost), and the gaps' start edges are within 0.5 ms of the truth (p50).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

SIMCUDA_TRACE=$TMP/truth.jsonl timeout 120 "$GS" record -o "$TMP/free.gsc" -- "$TMP/feeder" \
	"$LIBCUDA" free 20 10 >"$TMP/free.out" 2>"$TMP/free.err" || {
	cat "$TMP/free.out" "$TMP/free.err"
	die "record"
}
"$GS" report "$TMP/free.gsc" -o "$TMP/free.rep" --top 2 >"$TMP/free.txt" || die "report"
cat "$TMP/free.txt"
python3 - "$TMP/truth.jsonl" "$TMP/free.rep/summary.json" <<'PY' || die "the API tier against simcuda's truth"
import json, sys
kernels = sorted((k["start_ns"], k["end_ns"]) for k in map(json.loads, open(sys.argv[1])))
s = json.load(open(sys.argv[2]))
api = sorted((g["start_ns"], g["end_ns"], g["start_edge"]) for g in s["gaps"])
truth = [(a[1], b[0]) for a, b in zip(kernels, kernels[1:]) if b[0] - a[1] >= 1000000]
errs, lost = [], 0
for t0, t1 in truth:
    m = [g for g in api if g[0] < t1 and g[1] > t0]
    if not m:
        lost += 1
        continue
    errs.append(abs(m[0][0] - t0))
errs.sort()
p50 = errs[len(errs) // 2] / 1e6 if errs else -1
edges = sorted(set(g[2].split(" in ")[0] for g in api))
print("truth gaps %d, api gaps %d, lost %d, start edge error p50 %.3f ms, max %.3f ms; edges: %s"
      % (len(truth), len(api), lost, p50, errs[-1] / 1e6 if errs else -1, edges))
ok = len(truth) >= 18 and lost == 0 and 0 <= p50 <= 0.5 and len(api) <= len(truth) + 1
sys.exit(0 if ok else 1)
PY
