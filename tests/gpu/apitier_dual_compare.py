#!/usr/bin/env python3
"""The API tier attached with -p against CUPTI's truth of the same seconds, from the traces
tests/gpu/apitier_dual.sh brings back:   apitier_dual_compare.py DIR [GAPSCOPE]
For each NAME with NAME.attach.gsc and NAME.launch.gsc in DIR, at gap floors of 1 and 0.1 ms:
the attached trace's API-tier gaps against the launched trace's CUPTI gaps inside the attached
recording's active window, its first GPU work seen to its last (both traces are on
CLOCK_MONOTONIC; before that the probes were still going live): recall (CUPTI gaps an API gap
overlaps), precision (API gaps that overlap a CUPTI gap), and busy over that window (the
window less the gaps, and under the floor where CUPTI measured it). CUPTI's gaps that straddle
the window's edges are left out: the attached recorder saw no launch before the first."""
import glob, json, os, subprocess, sys, tempfile

d = sys.argv[1]
gs = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../build/gapscope")


def report(path, floor):
    out = tempfile.mkdtemp()
    r = subprocess.run([gs, "report", "-f", "-o", out, path, "--min-gap", str(floor),
                        "--top", "0", "-F", "json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


for att in sorted(glob.glob(os.path.join(d, "*.attach.gsc"))):
    name = os.path.basename(att)[:-len(".attach.gsc")]
    for floor in (1, 0.1):
        a, l = report(att, floor), report(os.path.join(d, name + ".launch.gsc"), floor)
        dev = a["devices"][0]
        t0, t1 = dev["active_start_ns"], dev["active_end_ns"]
        api = [(g["start_ns"], g["end_ns"]) for g in a["gaps"]]
        # CUPTI's gaps inside the window: one that began before the attached recording's
        # first GPU work (or ends after its last) is one the API tier cannot have seen begin
        # (or end), and is left out of both counts.
        cup = [(g["start_ns"], g["end_ns"]) for g in l["gaps"] if g["start_ns"] >= t0 and g["end_ns"] <= t1]

        def total(gs):
            return sum(min(e, t1) - max(s, t0) for s, e in gs)

        def hit(x, ys):
            return any(min(x[1], y[1]) > max(x[0], y[0]) for y in ys)

        recall = sum(hit(g, api) for g in cup) / len(cup) if cup else float("nan")
        prec = sum(hit(g, cup) for g in api) / len(api) if api else float("nan")
        w = t1 - t0
        print("%-10s floor %4.1f ms, %.2f s attached and active: CUPTI gaps %4d (%7.1f ms) | API gaps %4d "
              "(%7.1f ms) | recall %.3f precision %.3f | busy over the window, less gaps: "
              "CUPTI %.1f%% API %.1f%%"
              % (name, floor, w / 1e9, len(cup), total(cup) / 1e6, len(api), total(api) / 1e6,
                 recall, prec, 100 * (w - total(cup)) / w, 100 * (w - total(api)) / w))
