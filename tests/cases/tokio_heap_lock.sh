#!/usr/bin/env bash
# An async lock no symbol names: tokengine --heap-lock keeps its tracker on the heap (as an
# Arc<Mutex<_>> is) and, in tracker-trim, its finalizer tasks hold it across malloc_trim(0) run
# in the blocking pool (spawn_blocking), as the seed's finalizers did. Recorded on simcuda
# (real probes), the report names the lock by where the GPU task awaited it, the function and
# file:line of its own frame ("async by tokengine::Tracker::mark_busy (main.rs:N)"), its holder
# by its task's function, and summary.txt reads the chain from the GPU task to malloc_trim in at
# most 4 hops (the runtime's plumbing folded: blocking pool, join). The static tracker (without
# --heap-lock) keeps its symbol's name, "async tokengine::TRACKER".
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$BUILD/tokengine"

for v in heap static; do
	flag=
	[ $v = heap ] && flag=--heap-lock
	timeout 300 "$GS" record -o "$TMP/$v.gsc" -- "$BUILD/tokengine" --device sim \
		--scenario tracker-trim --partitions 8 $flag >"$TMP/$v.out" 2>&1 ||
		{ cat "$TMP/$v.out"; die "record $v"; }
	"$GS" report -o "$TMP/$v.rep" "$TMP/$v.gsc" >"$TMP/$v.txt" 2>&1 || die "report $v"
	sed -n '/^root causes/,/^losses/p' "$TMP/$v.txt" | cut -c1-300
done
python3 - "$TMP/heap.rep/summary.json" "$TMP/heap.txt" "$TMP/static.rep/summary.json" <<'PY' ||
import json, re, sys
s = json.load(open(sys.argv[1]))
txt = open(sys.argv[2]).read()
assert s["causes"] and s["causes"][0]["kind"] == "malloc_trim", "top cause %s" % s["causes"][:1]
trims = sorted([g for g in s["gaps"] if g["cause"] and g["cause"]["kind"] == "malloc_trim"],
               key=lambda g: -g["duration_ns"])
assert trims, "no gap caused by malloc_trim"
site = re.compile(r"^async by tokengine::Tracker::\w+ \(main\.rs:\d+\)$")
# The longest such gap goes through the lock; every one that does reads the same way (on a
# loaded machine a short one may be a preemption's).
for i, g in enumerate(trims):
    locks = [l for l in g["chain"] if l["kind"] == "lock" and l.get("lock", "").startswith("async")]
    if not locks and i:
        continue
    assert locks, "gap %d: no async lock on its chain" % g["id"]
    assert site.match(locks[0]["lock"]), "gap %d: the lock is %s" % (g["id"], locks[0]["lock"])
    assert "held by task tokengine::" in (locks[-1].get("detail") or ""), \
        "gap %d: holder %s" % (g["id"], locks[-1].get("detail"))
    line = next(l for l in txt.split("\n") if l.startswith("gap %d [" % g["id"]))
    hops = line.count("\u2190")
    print("gap %d, %d hops in JSON, %d in summary.txt: %s" % (g["id"], len(g["chain"]), hops, line))
    assert hops <= 4, "gap %d: %d hops in summary.txt" % (g["id"], hops)
st = json.load(open(sys.argv[3]))
locks = [l["lock"] for g in st["gaps"] for l in g["chain"] if l["kind"] == "lock"]
assert "async tokengine::TRACKER" in locks, "the static lock is not named by its symbol: %s" % locks[:4]
print("ok")
PY
	die "tokengine's heap lock"
