#!/usr/bin/env bash
# gapscope report's rendered outputs of a zkengine tracker-trim recording on simcuda (real
# probes): timeline.json checked against summary.json by tests/render/check_timeline.py (a track
# per GPU and per thread, every gap on its GPU's track with its duration, slices that nest as
# Perfetto needs, an arrow bound to slices at both ends for every chain link, the lock wait and
# malloc_trim of each malloc_trim gap); a flame graph per gap titled with its chain, all.svg,
# speedscope with the all-gaps profile first, index.html. Then a generated trace of 600000
# events (tests/report/gen_trace.c), past the size from which short intervals outside the gaps
# are left out: the threshold is said in the metadata and kept to, and the arrows are all there.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
CHECK="python3 $GAPSCOPE_ROOT/tests/render/check_timeline.py"
need_built "$ZK"

"$GS" record -o "$TMP/t.gsc" -- "$ZK" --device sim --scenario tracker-trim \
	>"$TMP/rec.out" 2>"$TMP/rec.err" || { cat "$TMP/rec.out" "$TMP/rec.err"; die "record"; }
"$GS" report "$TMP/t.gsc" -o "$TMP/rep" --top 3 >"$TMP/rep.txt" 2>"$TMP/rep.err" ||
	{ cat "$TMP/rep.err"; die "report"; }
cat "$TMP/rep.txt"
[ -s "$TMP/rep.err" ] && { cat "$TMP/rep.err"; die "report warned"; }
$CHECK "$TMP/rep" --tracker-trim || die "timeline.json"

# The other outputs: one graph per gap titled with its chain, speedscope's profiles in order.
python3 - "$TMP/rep" <<'EOF' || die "rendered outputs"
import json, os, re, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
for g in s["gaps"]:
    svg = open("%s/gaps/%04d.svg" % (d, g["id"]), encoding="utf-8").read()
    text = re.sub(r"<[^>]+>", " ", svg)
    if g["closer"]["comm"] not in text or ("gap %d on GPU %d" % (g["id"], g["device"])) not in text:
        sys.exit("gap %d: its svg lacks the chain or the subtitle" % g["id"])
    for l in g["chain"]:
        if l.get("lock") and l["lock"] not in text:
            sys.exit("gap %d: its svg title lacks the lock %s" % (g["id"], l["lock"]))
if not os.path.getsize(d + "/gaps/all.svg") or not os.path.getsize(d + "/index.html"):
    sys.exit("all.svg or index.html empty")
sp = json.load(open(d + "/gaps.speedscope.json"))
names = [p["name"] for p in sp["profiles"]]
if len(names) != len(s["gaps"]) + 1 or names[0] != "all gaps" or \
   any(not n.startswith("gap %d on GPU" % g["id"]) for n, g in zip(names[1:], s["gaps"])):
    sys.exit("speedscope profiles: %s" % names[:4])
print("svgs: %d titled with their chains; speedscope: %d profiles" % (len(s["gaps"]), len(names)))
EOF

# A trace past TIMELINE_ALL_EVENTS: only intervals of 1 ms or more outside the gaps.
need_built "$BUILD/lib/libgapscope.a"
${CC:-cc} $SAN_FLAGS -O2 -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/gen_trace" \
	tests/report/gen_trace.c tests/report/genlib.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build gen_trace"
"$TMP/gen_trace" "$TMP/g.gsc" 600000 >/dev/null
"$GS" report "$TMP/g.gsc" -o "$TMP/g" >/dev/null 2>"$TMP/g.err" || { cat "$TMP/g.err"; die "report g"; }
$CHECK "$TMP/g" || die "generated trace's timeline.json"
python3 - "$TMP/g" <<'EOF' || die "generated trace: threshold"
import json, sys
d = sys.argv[1]
tl = json.load(open(d + "/timeline.json"))
s = json.load(open(d + "/summary.json"))
m = tl["metadata"]
t0 = m["trace_start_ns"]
win = [(g["start_ns"] - t0, g["end_ns"] - t0) for g in s["gaps"]]
if m["min_slice_ns"] != 1000000 or not m["left_out_short"]:
    sys.exit("metadata: %s" % m)
short = 0
for e in tl["traceEvents"]:
    if e.get("ph") != "X" or e["pid"] == 1000000000 or e.get("cat") == "chain":
        continue
    a, z = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
    if z - a < m["min_slice_ns"] and not any(a <= g1 and z >= g0 for g0, g1 in win):
        short += 1
if short:
    sys.exit("%d slices shorter than %d ns outside every gap" % (short, m["min_slice_ns"]))
print("generated: %d thread slices written, %d short ones left out, %d bytes" %
      (m["thread_slices"], m["left_out_short"], len(open(d + "/timeline.json").read())))
EOF
