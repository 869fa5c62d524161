#!/usr/bin/env bash
# Major page faults named (issue 46): tests/gpu/progs/torch_faults.py (a PyTorch loop whose feeder
# gathers 256 rows a step from a memory-mapped 256 MiB file, its pages dropped each step) launched
# under the recorder for 20 s, then reported. The top cause should be kind fault, "major, FILE"
# with the feeder's gather as its code; prints it as one RESULT line (and the table). Under 90 s.
#   here:  make build/gapscope-portable
#   there: OUT=$OUT tests/gpu/faults.sh   (carrying build/gapscope-portable)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-build/gpu-faults}
. tests/gpu/lib.sh
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
	{ say "RESULT faults: no PyTorch with CUDA: nothing run"; exit 1; }
DATA=$(mktemp -d /var/tmp/gapscope-faults.XXXXXX)
trap 'rm -rf "$DATA"' EXIT
timeout 80 "$GS" record -o "$OUT/faults.gsc" -- python3 tests/gpu/progs/torch_faults.py \
	"$DATA/dataset.bin" 20 >"$OUT/faults.out" 2>"$OUT/faults.err"
say "record: exit $?; $(tail -1 "$OUT/faults.err"); $(cat "$OUT/faults.out")"
"$GS" report "$OUT/faults.gsc" -o "$OUT/faults.rep" >"$OUT/faults.txt" 2>"$OUT/faults.rerr"
say "report: exit $?"
sed -n '/^root causes/,/^$/p' "$OUT/faults.txt" | head -8 | tee -a "$table"
python3 - "$OUT/faults.rep/summary.json" "$DATA/dataset.bin" <<'PY' | tee -a "$table"
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("RESULT faults: no summary.json (%s)" % e)
    sys.exit(0)
c = (s.get("causes") or [{}])[0]
fault = next((x for x in s.get("causes", []) if x.get("kind") == "fault"), {})
who = (fault.get("lines") or fault.get("leaves") or [{}])[0].get("name")
print("RESULT faults: top cause %s %s %.1f%%; fault rows' largest %s %.1f%%, file named %s, "
      "code %s, pages %s" % (c.get("kind"), c.get("function"), 100 * c.get("share", 0),
                             fault.get("function"), 100 * fault.get("share", 0),
                             "yes" if (fault.get("function") or "").endswith(sys.argv[2])
                             else "no", who, fault.get("pages")))
PY
