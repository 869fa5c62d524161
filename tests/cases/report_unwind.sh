#!/usr/bin/env bash
# User stacks unwound from snapshots (reports/symbols/unwind.c), on programs without frame pointers
# (simcuda, real probes):
#   zkengine-nofp tracker-trim: at least 95% of the snapshot stacks on gap chains (the waits'
#     and malloc_trim's) reach the thread's or the program's start, the finalizer's frames
#     above malloc_trim and each lock waiter's above its wait (a GPU worker's, or a
#     finalizer's behind another's trim); recorded again with
#     --stack-snapshot 0, the frame-pointer figures say what is lost (no snapshot captured,
#     fewer chain stacks complete);
#   the feeder's deep mode (2000 frames of 1 KiB below a sleep): its stacks are reported
#     truncated, and the frames they show are the sleep's, deep_bottom's, then deep_recurse's.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
[ -x "$BUILD/zkengine-nofp" ] || die "zkengine-nofp not built"
need_built "$LIBCUDA"

# record NAME ARGS...: a trace and its report in $TMP/NAME.{gsc,rep,txt}
record() {
	local name=$1
	shift
	timeout 300 "$GS" record -o "$TMP/$name.gsc" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.out" "$TMP/$name.err"; die "record $name"; }
	"$GS" report "$TMP/$name.gsc" -o "$TMP/$name.rep" --top 3 >"$TMP/$name.txt" ||
		die "report $name"
	echo "== $name"
	grep '^stacks: ' "$TMP/$name.txt" || die "$name: summary.txt has no stacks line"
}

# chains SUMMARY: what share of the gap chains' stacks that snapshots unwind reach a start, as
# a fraction: the waits' (a futex's, an off-CPU interval's) and the probes'. Not a CUDA call's:
# its stack is the frame-pointer walk at its return (bpf/cuda.bpf.c), which stops at the first
# frame without one; nor on-CPU time's, from a sample or, where none fell, the nearest stack,
# which can be a CUDA call's. On a busy machine such links are on chains too (gpu-worker-1 on
# CPU 22 ms in cuStreamSynchronize), and of few chains (8) one is 12%.
CHAINS='
import json, sys
ROOTS = {"start_thread", "clone3", "clone", "__clone", "__clone3", "main", "_start",
         "__libc_start_main", "__libc_start_call_main"}
SNAPPED = {"lock", "cond", "sleep", "io", "malloc_trim"}
d = json.load(open(sys.argv[1]))
links = [l for g in d["gaps"] for l in g["chain"] if l.get("frames") and l["kind"] in SNAPPED]
done = [l for l in links if ROOTS & set(l["frames"])]
print("%d of %d chain stacks complete" % (len(done), len(links)), file=sys.stderr)
print(len(done) / len(links) if links else 0)
'

record nofp -- "$BUILD/zkengine-nofp" --device sim --scenario tracker-trim
dwarf=$(python3 -c "$CHAINS" "$TMP/nofp.rep/summary.json")
python3 - "$TMP/nofp.rep/summary.json" "$dwarf" <<'EOF' || die "zkengine-nofp: DWARF stacks"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stacks"]
assert s["captured"] > 0 and s["complete"] >= 0.95 * s["captured"], s
assert float(sys.argv[2]) >= 0.95, "chain stacks complete: %s" % sys.argv[2]

def ordered(frames, names):
    """names appear in frames (leaf first) in this order."""
    i = 0
    for f in frames:
        if i < len(names) and f == names[i]:
            i += 1
    return i == len(names)

links = [l for g in d["gaps"] for l in g["chain"]]
trim = [l for l in links if l["kind"] == "malloc_trim"]
lock = [l for l in links if l["kind"] == "lock" and "tracker" in (l.get("lock") or "")]
assert trim and lock, "no tracker-trim chain"
assert all(ordered(l["frames"], ["process_partition_result", "finalizer_main", "start_thread"])
           for l in trim), [l["frames"] for l in trim]
# A chain may pass through a finalizer that waited for the tracker lock behind another's trim:
# each lock link shows its own thread's frames above the wait.
MAIN = {"gpu-worker": ["gpu_worker_main"], "finalizer": ["process_partition_result", "finalizer_main"]}
role = lambda l: (l.get("comm") or "").rsplit("-", 1)[0]
assert any(role(l) == "gpu-worker" for l in lock), [l.get("comm") for l in lock]
assert all(role(l) in MAIN and
           ordered(l["frames"], ["pthread_mutex_lock"] + MAIN[role(l)] + ["start_thread"])
           for l in lock), [(l.get("comm"), l["frames"]) for l in lock]
EOF

# The same run with frame pointers only: no snapshot, and the loss shows beside the figures.
record fp --stack-snapshot 0 -- "$BUILD/zkengine-nofp" --device sim --scenario tracker-trim
fp=$(python3 -c "$CHAINS" "$TMP/fp.rep/summary.json")
grep -q '^stacks: 0 captured (0 complete, 0 truncated, 0 stopped), [1-9][0-9]* fp_only ([0-9]* complete)$' \
	"$TMP/fp.txt" || die "frame pointers only: the stacks line"
awk -v f="$fp" -v d="$dwarf" 'BEGIN { exit !(f < d) }' ||
	die "frame pointers only: chain stacks complete $fp, DWARF $dwarf"

# Deeper than any snapshot: the feeder built without frame pointers, so only DWARF finds them.
${CC:-cc} -O2 -g -fomit-frame-pointer -Iengine -pthread -o "$TMP/feeder" tests/report/feeder.c \
	-ldl || die "cannot build the feeder"
record deep -- "$TMP/feeder" "$LIBCUDA" deep 20 15
# A sleep's stack is the snapshot taken as its system call returns, asked for when the thread is
# switched back in: one whose switch back in the scheduler did not report (summary.json's
# offcpu_resume_unseen, seen on a busy machine) has none, and its link no frames. Those are
# counted; every other sleep shows the frames.
python3 - "$TMP/deep.rep/summary.json" <<'EOF' || die "deep stacks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stacks"]["truncated"] >= 15, d["stacks"]
sleeps = [l for g in d["gaps"] for l in g["chain"] if l["kind"] == "sleep"]
assert len(sleeps) >= 15, "%d sleep links" % len(sleeps)
bare = [l for l in sleeps if not l["frames"]]
print("%d sleep links, %d without frames, %d off-CPU intervals resumed unseen" %
      (len(sleeps), len(bare), d["offcpu_resume_unseen"]))
assert len(bare) <= d["offcpu_resume_unseen"], bare
for l in sleeps:
    f = l["frames"]
    if not f:
        continue
    assert "deep_bottom" in f, f
    k = f.index("deep_bottom")
    # Leaf first: the C library's sleep, deep_bottom, then nothing but deep_recurse, as many
    # as 16 KiB of 1 KiB frames hold; the program's start is far out of reach.
    assert 1 <= k <= 3 and all("sleep" in x for x in f[:k]), f
    rest = f[k + 1:]
    assert 10 <= len(rest) <= 16 and set(rest) == {"deep_recurse"}, f
EOF
