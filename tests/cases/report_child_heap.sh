#!/usr/bin/env bash
# Kernel work a user recognises, named so (reports/analysis/blame.c), on simcuda with real probes
# (tests/report/feeder.c, 20 submissions 15 ms apart):
# - child: between launches the feeder runs /bin/sleep for 15 ms (fork, exec) and waits for it.
#   Recorded alone, the top cause is kind child, function "sleep", and each gap's chain ends
#   "waiting for child sleep (pid N, not recorded)" with N one of the pids the feeder forked.
#   With --follow-children the hop goes on into the child: at least 3 gaps in 4 have the link
#   followed by the child's own thread (its tid the pid named).
# - heap: between launches the feeder maps 64 MiB of fresh memory (populated) and unmaps it for
#   15 ms. The row stays heap_churn (on_cpu); its leaves are "fresh memory (mmap)" and
#   "unmapping (munmap)", at least 90% of it together, and no leaf is the bare call.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
CHECK="python3 $GAPSCOPE_ROOT/tests/report/report_check.py"
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

# run NAME MODE [record options...]
run() {
	local name=$1 mode=$2
	shift 2
	timeout 120 "$GS" record "$@" -o "$TMP/$name.gsc" -- "$TMP/feeder" "$LIBCUDA" "$mode" \
		20 15 >"$TMP/$name.out" 2>"$TMP/$name.err" || {
		cat "$TMP/$name.out" "$TMP/$name.err"
		die "record $name"
	}
	"$GS" report "$TMP/$name.gsc" -o "$TMP/$name.rep" --top 2 >"$TMP/$name.txt" ||
		die "report $name"
	echo "== $name"
	sed -n '/^root causes/,/^losses/p' "$TMP/$name.txt"
}

run child child
$CHECK cause "$TMP/child.rep/summary.json" child --min 0.5 || die "child: not the top cause"
grep -q '^ *[0-9.]*%  child  *sleep  ' "$TMP/child.txt" || die "child: no row 'child sleep'"
grep -q '← waiting for child sleep (pid [0-9]*, not recorded) ' "$TMP/child.txt" ||
	die "child: no gap's chain waits for the child by name"

# Followed, the child's time is its own: its sleep, and its loader's mmap calls, which wait
# for the recorder placing its probes in the new process (woken by gapscope): not judged here.
run follow child --follow-children

python3 - "$TMP" <<'PY' || die "child chains"
import json, re, sys
tmp = sys.argv[1]


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


for name, followed in (("child", False), ("follow", True)):
    pids = {int(m.group(1)) for m in (re.match(r"feeder: child (\d+)$", l.strip())
                                      for l in open("%s/%s.out" % (tmp, name))) if m}
    if len(pids) != 20:
        die("%s: the feeder forked %d children, expected 20" % (name, len(pids)))
    s = json.load(open("%s/%s.rep/summary.json" % (tmp, name)))
    gaps = s["gaps"]
    if not 17 <= len(gaps) <= 21:
        die("%s: %d gaps, expected 19" % (name, len(gaps)))
    named = through = 0
    for g in gaps:
        ch = g["chain"]
        k = next((i for i, l in enumerate(ch) if l["kind"] == "child"), None)
        if k is None:
            continue
        link = ch[k]
        m = re.match(r"pid (\d+)(, not recorded)?$", link.get("detail") or "")
        if link.get("function") != "sleep" or not m or int(m.group(1)) not in pids:
            die("%s: gap %d: child link %s, not a child the feeder ran" % (name, g["id"], link))
        if bool(m.group(2)) == followed:
            die("%s: gap %d: child link %s: recorded? expected %s" % (name, g["id"], link,
                                                                    followed))
        named += 1
        if followed and k + 1 < len(ch) and ch[k + 1]["tid"] == int(m.group(1)) and \
                ch[k + 1]["comm"] == "sleep":
            through += 1
    print("%s: %d of %d gaps wait for a child by name, %d followed into it"
          % (name, named, len(gaps), through))
    if named < 0.75 * len(gaps):
        die("%s: %d of %d gaps' chains name the child" % (name, named, len(gaps)))
    if followed and through < 0.75 * len(gaps):
        die("follow: %d of %d gaps' chains go on into the child" % (through, len(gaps)))
PY

run heap heap
$CHECK cause "$TMP/heap.rep/summary.json" on_cpu --min 0.5 --function heap_churn ||
	die "heap: on_cpu heap_churn not the top cause"
python3 - "$TMP/heap.rep/summary.json" <<'PY' || die "heap leaves"
import json, sys
s = json.load(open(sys.argv[1]))
row = next((c for c in s["causes"] if c["kind"] == "on_cpu" and c["function"] == "heap_churn"),
           None)
if not row:
    print("FAIL: no row on_cpu heap_churn")
    sys.exit(1)
leaves = {p["name"]: p["share"] for p in row.get("leaves", [])}
print("heap_churn leaves: %s" % leaves)
mem = leaves.get("fresh memory (mmap)", 0) + leaves.get("unmapping (munmap)", 0)
bare = [n for n in leaves if n.strip("_").rstrip("64") in ("mmap", "munmap")]
if not leaves.get("fresh memory (mmap)") or not leaves.get("unmapping (munmap)") or mem < 0.9:
    print("FAIL: heap_churn's leaves name the memory work in %.3f of it" % mem)
    sys.exit(1)
if bare:
    print("FAIL: bare calls among the leaves: %s" % bare)
    sys.exit(1)
PY
grep -q '^ *leaves: .*fresh memory (mmap)' "$TMP/heap.txt" || die "heap: summary.txt's leaves"
echo "ok: the child and the memory work named"
