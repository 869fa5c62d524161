#!/usr/bin/env bash
# One busy figure for the demo (tests/demo.sh: zkengine tracker-trim, 16 partitions, recorded
# and reported): the report's headline is busy over the active window (first to last GPU work),
# and the page's card shows it as summary.txt prints it, from the one rounding both take
# (summary.json's active_busy_text); the time before the first GPU work and after the last is
# shown apart (summary.txt's idle line, summary.json's idle_split, the page's data for its
# timeline) and is more than nothing here (the engine builds its inputs first).
#
# Against the engine, two things that hold whatever the machine's load, from the one run:
#   - the headline is at least the kernels' share of the active window, the kernels' times
#     being simcuda's own (SIMCUDA_TRACE): the API tier counts busy everything from a launch to
#     the evidence that it completed, and every kernel runs in there;
#   - it is nearer the engine's steady figure (first kernel to last) than to the engine's whole
#     run figure: leaving setup and tail out is what makes them agree. Not within a fixed point:
#     the headline also counts the copies and the idle windows under the floor, which the
#     engine's kernels-only figure leaves out: 10 to 30 ms of busy time, a point of a 1.2 s
#     window on a quiet machine.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"
cd "$GAPSCOPE_ROOT"
SIMCUDA_TRACE=$TMP/kernels.jsonl DEMO_OUT=$TMP/demo tests/demo.sh "$BUILD" >"$TMP/demo.txt" 2>&1 ||
	{ cat "$TMP/demo.txt"; die "make demo"; }
sed -n '1,/^gaps:/p' "$TMP/demo/report/summary.txt"
grep '^gpu 0 busy' "$TMP/demo.txt"
python3 - "$TMP/demo.txt" "$TMP/demo/report" "$TMP/kernels.jsonl" <<'PY' || die "the busy figures disagree"
import json, os, re, sys
demo, rep, kernels = sys.argv[1:]
m = re.search(r"^gpu 0 busy: ([0-9.]+)% steady \(first kernel to last\), ([0-9.]+)% whole run",
              open(demo).read(), re.M)
steady, whole = float(m.group(1)), float(m.group(2))
txt = open(rep + "/summary.txt").read()
# A bound ("at most N%"), or a range ("L-H%": busy time that no completion signal backs).
m = re.search(r"^device 0: busy (at most )?([0-9.]+)(?:-([0-9.]+))?% \(.*first to last GPU work",
              txt, re.M)
headline = float(m.group(3) or m.group(2))
text = m.group(0)[len("device 0: busy "):m.group(0).index("%")]
page = open(rep + "/index.html", encoding="utf-8").read()
s = json.loads(re.search(r'<script type="application/json" id="gs-summary">(.*?)</script>',
                         page, re.S).group(1))
d = s["devices"][0]
# The card (reports/render/assets/report.js): active_busy_text, "\u2264" for "at most".
card = d["active_busy_text"].replace("at most ", "\u2264 ")
active = d["active_end_ns"] - d["active_start_ns"]
print("engine steady %.1f%%, whole run %.1f%%; report headline %s%%, page card %s%%; "
      "busy %.1f ms of %.1f ms; setup %.0f ms, tail %.0f ms" %
      (steady, whole, text, card, d["busy_ns"] / 1e6, active / 1e6,
       d["idle_split"]["setup_ns"] / 1e6, d["idle_split"]["tail_ns"] / 1e6))
if card != text.replace("at most ", "\u2264 "):
    sys.exit("the card %s, the headline %s%%" % (card, text))
# Over the active window: the same double summary.txt rounded, rounded the same way.
if "%.1f" % (100.0 * min(d["busy_ns"], active) / active) != "%.1f" % headline:
    sys.exit("headline %s%%, busy over the active window %.3f%%" %
             (text, 100.0 * d["busy_ns"] / active))
if os.path.exists(kernels):
    iv = sorted((k["start_ns"], k["end_ns"]) for k in map(json.loads, open(kernels))
                if k["device"] == 0)
    ns, end = 0, 0
    for a, b in iv:  # one kernel at a time on a device; a union all the same
        ns += max(0, b - max(a, end))
        end = max(end, b)
    share = 100.0 * ns / active
    print("%d kernels, %.1f ms: %.2f%% of the active window" % (len(iv), ns / 1e6, share))
    if not iv or share > headline + 0.05:
        sys.exit("headline %s%%, the kernels alone %.2f%% of the active window" % (text, share))
if not abs(headline - steady) < abs(headline - whole):
    sys.exit("headline %s%%: nearer the engine's whole run %.1f%% than its steady %.1f%%" %
             (text, whole, steady))
if d["idle_split"]["setup_ns"] < 1e8 or not re.search(r"^device 0 idle: .*, setup [0-9]", txt, re.M):
    sys.exit("the setup window is not shown")
if not d["active_start_ns"] < d["active_end_ns"]:
    sys.exit("no active window for the page's timeline")
PY
echo ok
