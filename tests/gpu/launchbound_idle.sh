#!/usr/bin/env bash
# Idle time no single gap explains, on the GPU machine (carry build/gapscope-portable and
# build/libgapscope-cupti.so):   OUT=DIR tests/gpu/launchbound_idle.sh
# A launch-bound PyTorch loop (tests/gpu/progs/torch_tinyloop.py: a 4096-element add, 200
# launches between synchronizes, SECS seconds, default 8):
#   launch   recorded in launch mode, CUPTI on: the report's CUPTI tier (kernel times)
#   api      the same trace read --api-only: the API tier on the same run
#   attach   the program attached with -p once warmed up: the API tier as a user gets it
# Per report: the headline busy figure (over the active window; "<=" where it is a bound), the
# idle split as shares of the run (gaps >= 1 ms, under the floor, setup, tail), the launch-bound
# cause of the idle under the floor (share, function, frames), the time between launches counted
# in BPF (p50/p99 buckets) and, from CUPTI's records, the host's time between launches and the
# kernels' durations (p50/p99). A short table last; OUT gets
# table.txt, log.txt and summaries.tgz (each report's summary.txt and summary.json).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RES=${OUT:-$BUILD/gpu-launchbound-idle}
W=$(mktemp -d)
mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
GS=$PWD/$BUILD/gapscope-portable
export GAPSCOPE_CUPTI_LIB=$PWD/$BUILD/libgapscope-cupti.so
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RES/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(git rev-parse --short HEAD 2>/dev/null)"
PROG=tests/gpu/progs/torch_tinyloop.py
SECS=${SECS:-8}

# row NAME: the report in $W/NAME.rep as one block of the table.
row() {
	python3 - "$W/$1.rep/summary.json" "$1" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
run = s["duration_ns"] or 1
for d in s["devices"]:
    sp = d["idle_split"]
    pc = lambda ns: "-" if ns is None else "%.1f%%" % (100.0 * ns / run)
    print("%-7s gpu%d busy %s%.1f%% of the active window (%.1f%% of the run) | idle: gaps %s, "
          "under the floor %s, setup %s, tail %s | gaps listed %d" % (
              sys.argv[2], d["id"], "<=" if d["busy_bound"] else "", d["active_busy_pct"],
              d["busy_pct"], pc(sp["gaps_ns"]), pc(sp["under_floor_ns"]), pc(sp["setup_ns"]),
              pc(sp["tail_ns"]), sum(1 for g in s["gaps"] if g["device"] == d["id"])))
    t = d.get("launch_timing")
    if t:
        print("        between launches (tid %d) p50 %.1f us p99 %.1f us (%d); kernels p50 %.1f us "
              "p99 %.1f us (%d)" % (t["tid"], t["host_p50_ns"] / 1e3, t["host_p99_ns"] / 1e3,
                                    t["host_n"], t["kernel_p50_ns"] / 1e3,
                                    t["kernel_p99_ns"] / 1e3, t["kernel_n"]))
u = s.get("under_floor")
if u:
    k = {x["kind"]: x["share"] for x in u["kinds"]}
    print("        launching thread %s: %d launches in the trace, launch-bound %.2f in %s "
          "(%d of %d samples); frames %s" % (
              u["comm"], u["launches"], k.get("launch_bound", 0), u["function"],
              u["function_samples"], u["samples"], " <- ".join(u["frames"][:4])))
    iv = u.get("launch_intervals")
    if iv:
        print("        between launches, counted in BPF (tid %d): p50 %.1f-%.1f us, p99 from %.1f us "
              "(%d)" % (iv["tid"], iv["p50_ns"][0] / 1e3, iv["p50_ns"][1] / 1e3,
                        iv["p99_ns"][0] / 1e3, iv["n"]))
    print("        synchronizes returned at once: %d of %d" % (u["syncs_quick"], u["syncs"]))
    py = [f for f in u["frames"] if ".py:" in f]
    if py:
        print("        its Python frames: %s" % " <- ".join(py[:4]))
l = s.get("launches") or {}
print("        launches counted %s, in the trace %s" % (l.get("total"), l.get("in_trace")))
PY
}

# 1. Launch mode, CUPTI on.
"$GS" record -f -o "$W/launch.gsc" -- python3 "$PROG" "$SECS" 200 go >"$W/launch.out" 2>"$W/launch.rec"
tail -3 "$W/launch.rec"
cat "$W/launch.out"
"$GS" report -f "$W/launch.gsc" -o "$W/launch.rep" >/dev/null 2>"$W/launch.err" || cat "$W/launch.err"
"$GS" report -f --api-only "$W/launch.gsc" -o "$W/api.rep" >/dev/null 2>"$W/api.err" || cat "$W/api.err"
sed -n '1,/^gaps:/p' "$W/launch.rep/summary.txt"

# 2. Attached once warmed up.
coproc P { exec python3 "$PROG" "$SECS" 200 wait; }
pid=$P_PID
read -r -t 180 line <&"${P[0]}" || line=
case $line in
ready*)
	"$GS" record -f -o "$W/attach.gsc" -p "$pid" 2>"$W/attach.rec" &
	rp=$!
	for _ in $(seq 300); do grep -q "recording pid" "$W/attach.rec" && break; sleep 0.1; done
	echo go >&"${P[1]}"
	cat <&"${P[0]}" >"$W/attach.out"
	wait "$pid" 2>/dev/null
	wait "$rp"
	cat "$W/attach.out"
	"$GS" report -f "$W/attach.gsc" -o "$W/attach.rep" >/dev/null 2>"$W/attach.err" || cat "$W/attach.err"
	sed -n '1,/^gaps:/p' "$W/attach.rep/summary.txt"
	;;
*)
	say "attach: the loop did not start"
	kill "$pid"
	;;
esac

say "== torch_tinyloop.py: 4096-element add, 200 launches a synchronize, $SECS s"
for r in launch api attach; do
	[ -f "$W/$r.rep/summary.json" ] && row "$r"
done
(cd "$W" && tar czf "$RES/summaries.tgz" --ignore-failed-read ./*.rep/summary.txt \
	./*.rep/summary.json ./*.rec 2>/dev/null)
echo
cat "$table"
