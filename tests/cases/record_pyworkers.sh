#!/usr/bin/env bash
# Python multiprocessing workers feeding a GPU thread through a queue, attached with -p and no
# -X perf (tests/record/pyworkers.py, Debian's python3, simcuda through ctypes): the workers
# exist before the recorder attaches (it takes them as the process's descendants). The chains
# of the gaps go from the feeder's wait on the queue's pipe into the worker processes and reach
# augment() by name with its file (its lines the breakdown): at least half of the gap time that
# is not CPU contention (preemption) ends there, and the top such cause is augment. The program
# runs at nice -19 so that the machine's other work takes little of its CPU time.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
need_built "$LIBCUDA"
cd "$GAPSCOPE_ROOT"
coproc P { exec nice -n -19 /usr/bin/python3 tests/record/pyworkers.py "$LIBCUDA" 30 25; }
ppid=$P_PID
read -r -t 60 line <&"${P[0]}" || die "the program did not start"
pid=${line##* }
mkfifo "$TMP/err.fifo"
"$GS" record -o "$TMP/p.gsc" -p "$pid" 2>"$TMP/err.fifo" &
rp=$!
exec {fd}<"$TMP/err.fifo"
read_until "$fd" "$TMP/err" "*recording pid $pid and 2 more process(es)*" ||
	{ cat "$TMP/err"; die "no attach to the program and its two workers"; }
cat <&$fd >>"$TMP/err" &
echo go >&"${P[1]}"
cat <&"${P[0]}" >"$TMP/out"
wait "$ppid" || die "the program failed"
wait "$rp" || { cat "$TMP/err"; die "record failed"; }
"$GS" report -o "$TMP/p.rep" "$TMP/p.gsc" >"$TMP/p.txt" 2>"$TMP/p.rerr" || { cat "$TMP/p.rerr"; die "report"; }
python3 - "$TMP/p.rep/summary.json" <<'PY' || { cat "$TMP/p.txt"; die "the chains do not reach augment"; }
import json, re, sys
s = json.load(open(sys.argv[1]))
causes = [c for c in s["causes"] if c["kind"] != "preempted"]
total = sum(c["ns"] for c in causes)
# A Python function's row and root: its name and file; its lines are the row's breakdown.
aug = re.compile(r"^augment \(pyworkers\.py\)$")
assert causes and aug.match(causes[0].get("function") or ""), "top cause %s" % causes[:1]
assert any(re.match(r"^pyworkers\.py:\d+$", p["name"]) for p in causes[0].get("lines", [])), \
    "augment's row without its lines: %s" % causes[0]
share = sum(c["ns"] for c in causes if aug.match(c.get("function") or "")) / total
assert share >= 0.5, "augment: %.2f of the gap time" % share
cross = [g for g in s["gaps"] if g["chain"] and g["chain"][0]["kind"] == "io" and
         "(pipe)" in (g["chain"][0].get("function") or "") and
         aug.match(g["chain"][-1].get("function") or "")]
assert cross, "no chain from the queue's pipe to augment"
print("augment %.2f of the gap time; %d of %d gaps from the queue's pipe to augment" % (
    share, len(cross), len(s["gaps"])))
PY
echo ok
