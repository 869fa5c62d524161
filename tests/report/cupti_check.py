#!/usr/bin/env python3
"""For tests/cases/report_cupti.sh: the report of a trace with CUPTI's kernels added (SUMMARY)
against the engine's truth (TRUTH, whose gpu_busy intervals are those kernels) and the API tier's
report of the original trace at --min-gap 0.25 (API_SUMMARY).

  cupti_check.py SCENARIO SUMMARY API_SUMMARY TRUTH [DEVICE]

for DEVICE (default 0; the CUPTI block's kernel count is over every device):

The gaps are exactly the truth's idle windows of 1 ms or more (windows under a quarter ms
merged, as the tier merges them), all of tier "cupti", each with a closer; the device's busy
time is the truth's kernel time within the report's span, and the windows under 1 ms between
its runs its idle time under the floor; the agreement figures are the ones computed here from
the API tier's windows; the idle split's parts sum to the idle time.
"""
import json
import os
import subprocess
import sys
sc, summary, api_summary, truth = sys.argv[1:5]
dev = int(sys.argv[5]) if len(sys.argv) > 5 else 0
MS = 1000000
s = json.load(open(summary))
api = json.load(open(api_summary))
busy, nbusy = [], 0
for line in open(truth):
    r = json.loads(line)
    if r["kind"] == "gpu_busy":
        nbusy += 1
        if r["gpu"] == dev:
            busy.append((r["start_ns"], r["end_ns"]))
busy.sort()
# The truth's windows as the tier merges them: under a quarter ms bridged.
runs = []
for b in busy:
    if runs and b[0] <= runs[-1][1] + MS // 4:
        runs[-1][1] = max(runs[-1][1], b[1])
    else:
        runs.append(list(b))
windows = [(runs[i - 1][1], runs[i][0]) for i in range(1, len(runs))]
truth_gaps = [w for w in windows if w[1] - w[0] >= MS]

c = s.get("cupti")
if not c or not c["on"] or not c["flushed"] or c["kernels"] != nbusy:
    sys.exit("cupti block: %s (truth %d kernels)" % (c, nbusy))
gaps = [(g["start_ns"], g["end_ns"]) for g in s["gaps"] if g["device"] == dev]
if any(g["tier"] != "cupti" for g in s["gaps"]):
    sys.exit("a gap not of the CUPTI tier")
if sorted(gaps) != truth_gaps:
    sys.exit("gaps %s != truth windows %s" % (sorted(gaps), truth_gaps))
if any(not g["closer"]["tid"] for g in s["gaps"]):
    sys.exit("a gap without a closer")

# Busy: the runs clipped to the report's span, windows under 1 ms bridged.
t0, t1 = s["start_ns"], s["start_ns"] + s["duration_ns"]
merged = []
for a, b in runs:
    a, b = max(a, t0), min(b, t1)
    if b <= a:
        continue
    if merged and a - merged[-1][1] < MS:
        merged[-1][1] = b
    else:
        merged.append([a, b])
coarse = sum(b - a for a, b in merged)
# busy_ns is the kernels' own time: the windows under 1 ms inside the merged runs are idle, the
# idle split's part under the floor (a kernel cut at the span's edge counted in proportion).
want = sum(min(b, t1) - max(a, t0) for a, b in busy if min(b, t1) > max(a, t0))
ds = [d for d in s["devices"] if d["id"] == dev][0]
if abs(ds["busy_ns"] - want) > max(1, want // 10000):
    sys.exit("busy_ns %d, the truth's kernels give %d" % (ds["busy_ns"], want))
under = ds["idle_split"]["under_floor_ns"]
if under is None or abs(under - (coarse - ds["busy_ns"])) > 1:
    sys.exit("under the floor %s, the merged runs give %d" % (under, coarse - ds["busy_ns"]))

# Agreement, from the API tier's windows of a quarter ms or more.
aw = [(g["start_ns"], g["end_ns"]) for g in api["gaps"] if g["device"] == dev]
ov = lambda a, b: max(0, min(a[1], b[1]) - max(a[0], b[0]))
recalled, se, ee = 0, [], []
for g in truth_gaps:
    best = max(aw, key=lambda w: ov(w, g), default=None)
    if best is None or ov(best, g) == 0:
        continue
    recalled += 1
    se.append(abs(best[0] - g[0]))
    ee.append(abs(best[1] - g[1]))
api_gaps = [w for w in aw if w[1] - w[0] >= MS]
precise = sum(1 for w in api_gaps if any(ov(w, x) for x in windows))
q = lambda v, p: sorted(v)[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))] if v else 0
ag = [x for x in c["agreement"] if x["device"] == dev][0]
want = {"cupti_gaps": len(truth_gaps), "api_gaps": len(api_gaps), "recalled": recalled,
        "precise": precise, "start_err_p50_ns": q(se, 0.5), "start_err_p99_ns": q(se, 0.99),
        "end_err_p50_ns": q(ee, 0.5), "end_err_p99_ns": q(ee, 0.99)}
got = {k: ag[k] for k in want}
if got != want:
    sys.exit("agreement %s, expected %s" % (got, want))
if subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "split_check.py"),
                   "sum", summary]).returncode:
    sys.exit("the idle split")
print(sc + ": device %d: CUPTI tier: %d gaps as the truth's windows, busy %.3f s; agreement %s" %
      (dev, len(gaps), ds["busy_ns"] / 1e9, got))
