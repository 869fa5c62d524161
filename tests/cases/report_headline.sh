#!/usr/bin/env bash
# One busy figure for the demo (tests/demo.sh: zkengine tracker-trim, 16 partitions, recorded
# and reported): the report's headline (busy over the active window, first to last GPU work),
# the engine's steady figure (first kernel to last) and the page's card agree within 1 point;
# the time before the first GPU work and after the last is shown apart (summary.txt's idle
# line, summary.json's idle_split, the page's data for its timeline) and is more than nothing
# here (the engine builds its inputs first), so leaving it out is what makes them agree.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"
cd "$GAPSCOPE_ROOT"
DEMO_OUT=$TMP/demo tests/demo.sh "$BUILD" >"$TMP/demo.txt" 2>&1 || { cat "$TMP/demo.txt"; die "make demo"; }
sed -n '1,/^gaps:/p' "$TMP/demo/report/summary.txt"
grep '^gpu 0 busy' "$TMP/demo.txt"
python3 - "$TMP/demo.txt" "$TMP/demo/report" <<'PY' || die "the busy figures disagree"
import json, re, sys
demo, rep = sys.argv[1:]
engine = float(re.search(r"^gpu 0 busy: ([0-9.]+)% steady", open(demo).read(), re.M).group(1))
txt = open(rep + "/summary.txt").read()
# A bound ("at most N%"), or a range ("L-H%": busy time that no completion signal backs).
m = re.search(r"^device 0: busy (at most )?([0-9.]+)(?:-([0-9.]+))?% \(.*first to last GPU work",
              txt, re.M)
lo, headline = float(m.group(2)), float(m.group(3) or m.group(2))
page = open(rep + "/index.html", encoding="utf-8").read()
s = json.loads(re.search(r'<script type="application/json" id="gs-summary">(.*?)</script>',
                         page, re.S).group(1))
d = s["devices"][0]
# The card (reports/render/assets/report.js): active_busy_pct to one decimal, "\u2264" for a
# bound, "L-H" from active_busy_min_pct for a range.
if "active_busy_min_pct" in d:
    card = "%.1f-%.1f" % (d["active_busy_min_pct"], d["active_busy_pct"])
else:
    card = ("\u2264 " if d["busy_bound"] else "") + "%.1f" % d["active_busy_pct"]
text = m.group(0)[len("device 0: busy "):m.group(0).index("%")]
print("engine steady %.1f%%, report headline %s%%, page card %s%%; setup %.0f ms, tail %.0f ms" %
      (engine, text, card, d["idle_split"]["setup_ns"] / 1e6, d["idle_split"]["tail_ns"] / 1e6))
if not lo - 1 <= engine <= headline + 1:
    sys.exit("headline %s%%, the engine's steady %.1f%%" % (text, engine))
if card != text.replace("at most ", "\u2264 "):
    sys.exit("the card %s, the headline %s%%" % (card, text))
if d["idle_split"]["setup_ns"] < 1e8 or not re.search(r"^device 0 idle: .*, setup [0-9]", txt, re.M):
    sys.exit("the setup window is not shown")
if not d["active_start_ns"] < d["active_end_ns"]:
    sys.exit("no active window for the page's timeline")
PY
echo ok
