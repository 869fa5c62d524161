#!/usr/bin/env python3
"""decided_check.py ALL.json DECIDED.json NAME [ENGINE_LAUNCHES]: the report of a trace recorded
with --all-launches against the report of the same trace read --decided-only (what the default
recording keeps). Both must give the same gaps (count, and each gap's edges within EDGE_NS) and
the same top cause; launch counts must equal the recorder's (and the program's own where given),
and the decided view must hold fewer launch records than the full one where there were many."""
import json
import sys

EDGE_NS = 50_000  # 0.05 ms: the trace is the same, so any difference is the model's


def top(s):
    c = s["causes"][0] if s["causes"] else {"kind": "-", "function": "", "share": 0.0}
    return c["kind"], c.get("function") or "", c["share"]


def main():
    a, d = (json.load(open(p)) for p in sys.argv[1:3])
    name = sys.argv[3]
    bad = []
    ga = [(g["start_ns"], g["end_ns"]) for g in a["gaps"]]
    gd = [(g["start_ns"], g["end_ns"]) for g in d["gaps"]]
    diff = 0
    if len(ga) != len(gd):
        bad.append("%d gaps from every launch, %d from the decided ones" % (len(ga), len(gd)))
    else:
        for x, y in zip(ga, gd):
            diff = max(diff, abs(x[0] - y[0]), abs(x[1] - y[1]))
        if diff > EDGE_NS:
            bad.append("a gap edge moved %.3f ms" % (diff / 1e6))
    ta, td = top(a), top(d)
    if ta[:2] != td[:2] or abs(ta[2] - td[2]) > 0.02:
        bad.append("top cause %s against %s" % (ta, td))
    la, ld = a["launches"], d["launches"]
    if not (la["counted"] and la["all"]):
        bad.append("the trace has no launch counts of an --all-launches recording: %s" % la)
    if la["total"] != la["in_trace"]:
        bad.append("%d launches counted, %d recorded" % (la["total"], la["in_trace"]))
    if ld["total"] != la["total"]:
        bad.append("the decided view counts %d launches, the full one %d" % (ld["total"], la["total"]))
    if len(sys.argv) > 4 and la["total"] != int(sys.argv[4]):
        bad.append("%d launches counted, the program made %s" % (la["total"], sys.argv[4]))
    if la["total"] >= 100 and ld["in_trace"] * 2 > la["total"]:
        bad.append("the decided view keeps %d of %d launches" % (ld["in_trace"], la["total"]))
    print("%-16s gaps %d/%d, edges within %.3f ms, top %s %s %.3f / %.3f, launches %d, "
          "%d in the decided trace" % (name, len(ga), len(gd), diff / 1e6, ta[0], ta[1], ta[2],
                                       td[2], la["total"], ld["in_trace"]))
    for b in bad:
        print("FAIL: %s: %s" % (name, b), file=sys.stderr)
    return 1 if bad else 0


sys.exit(main())
