#!/usr/bin/env bash
# Cross-process blame on the GPU machine (carry build/gapscope-portable): a PyTorch training loop
# whose DataLoader has two worker processes doing slow CPU work in the dataset's __getitem__
# (tests/gpu/progs/torch_dataloader.py), attached with -p to the running main process (its
# workers already exist). The report's top causes, the chain of the longest gap, and whether the
# workers' Python function (augment) is named. Then the lock+trim PyTorch case (torch_trim.py)
# attached the same way, for its cause and its Python names. No -X perf anywhere.
#   OUT=DIR tests/gpu/dataloader.sh
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RES=${OUT:-$BUILD/gpu-dataloader}
mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
GS=$PWD/$BUILD/gapscope-portable
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T || true
table=$RES/table.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "== $(uname -r), $(nproc) CPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(python3 -c 'import sys; print(sys.version.split()[0])')"

# attach NAME PROG ARGS...: the program runs until "ready PID"; recorded -p for 10 s.
attach() {
	local name=$1 line pid
	shift
	coproc P { exec python3 "$@"; }
	read -r -t 240 line <&"${P[0]}" || line=
	case $line in ready*) ;; *) say "$name: the program did not start"; kill "$P_PID"; return 1 ;; esac
	pid=${line#ready }
	timeout 120 "$GS" record -f -o "$RES/$name.gsc" -p "$pid" --duration 10 >"$RES/$name.record.txt" 2>&1
	kill "$pid" 2>/dev/null
	wait "$P_PID" 2>/dev/null
	"$GS" report -f -o "$RES/$name.report" "$RES/$name.gsc" >"$RES/$name.summary.txt" 2>&1
	cp "$RES/$name.report/summary.json" "$RES/$name.summary.json" 2>/dev/null
	grep "recording pid" "$RES/$name.record.txt" | head -1
	python3 - "$RES/$name.report/summary.json" "$name" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
name = sys.argv[2]
t = s["causes"][:4]
print("%-12s busy %.1f%%, %d gaps; causes: %s" % (name, s["devices"][0]["busy_pct"] if s["devices"] else 0,
      len(s["gaps"]), "; ".join("%s %s (%s) %.2f" % (c["kind"], c.get("function") or "", c.get("comm", ""), c["share"]) for c in t)))
if s["gaps"]:
    g = max(s["gaps"], key=lambda g: g["duration_ns"])
    print("  longest gap %.1f ms: %s" % (g["duration_ns"] / 1e6, " <- ".join(
        "%s %s %s" % (l["comm"], l["kind"], l.get("function") or l.get("lock") or "") for l in g["chain"])))
PY
	say "  Python frames in the gap stacks: $(cat "$RES/$name.report"/gaps/*.folded 2>/dev/null | grep -c '\.py:'), lines naming augment: $(cat "$RES/$name.report"/gaps/*.folded 2>/dev/null | grep -c 'augment')"
}

attach dataloader tests/gpu/progs/torch_dataloader.py 40
[ -n "${SKIP_TRIM:-}" ] || attach torch-trim tests/gpu/progs/torch_trim.py 40
echo
cat "$table"
