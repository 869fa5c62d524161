#!/usr/bin/env bash
# The API tier on JAX, from the H200 traces in ../shared/traces (README.md there): XLA ends no
# step with a synchronize; completion reaches its host thread only as a wake chain from the
# GPU's interrupt (cuda-EvtHandlr, a libcuda futex thread, py_xla_callback, the main thread).
#  - jax_launch.gsc (CUPTI on): the default report's API-vs-CUPTI line shows recall and
#    precision >= 95%; `report --api-only` gives a busy range whose low end is within 3 points
#    of CUPTI's busy (0.9%), and whose unconfirmed part is what no completion signal backs.
#  - jax_attach.gsc (-p, no CUPTI): the truth is ~1% busy and a gap a step (about 90): the API
#    tier's busy is within 3 points of 1%, with at least 85 gaps.
# Without the traces (a clone without ../shared) it skips.
set -eu
GAPSCOPE_ROOT=${GAPSCOPE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
TRACES=${GAPSCOPE_TRACES:-$GAPSCOPE_ROOT/../shared/traces}
for f in jax_launch.gsc jax_attach.gsc; do
	[ -r "$TRACES/$f" ] || skip "$TRACES/$f absent (the H200 traces are beside the clone)"
done
need_built "$GS"

json() { python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print($2)" "$1"; }

"$GS" report "$TRACES/jax_launch.gsc" -o "$TMP/launch" -f >"$TMP/launch.txt" 2>"$TMP/launch.err" ||
	die "report of jax_launch.gsc failed: $(cat "$TMP/launch.err")"
line=$(grep "API-inferred gaps against CUPTI's" "$TMP/launch.txt") ||
	die "no API-vs-CUPTI line: $(cat "$TMP/launch.txt")"
echo "$line"
recall=$(echo "$line" | sed -n 's/.*recall \([0-9.]*\)%.*/\1/p')
precision=$(echo "$line" | sed -n 's/.*precision \([0-9.]*\)%.*/\1/p')
python3 -c "import sys; sys.exit(not ($recall >= 95 and $precision >= 95))" ||
	die "jax_launch: API vs CUPTI recall $recall%, precision $precision% (want >= 95% each)"
cupti=$(json "$TMP/launch/summary.json" 's["devices"][0]["busy_pct"]')

"$GS" report --api-only "$TRACES/jax_launch.gsc" -o "$TMP/api" -f >"$TMP/api.txt" 2>&1 ||
	die "report --api-only of jax_launch.gsc failed: $(cat "$TMP/api.txt")"
grep '^device 0: busy' "$TMP/api.txt"
low=$(json "$TMP/api/summary.json" 's["devices"][0].get("busy_min_pct", s["devices"][0]["busy_pct"])')
python3 -c "import sys; sys.exit(not (abs($low - $cupti) <= 3))" ||
	die "jax_launch --api-only: busy from $low%, CUPTI's $cupti% (want within 3 points)"
# Where the range is wider than the 3 points, the summary says which part nothing backs.
if [ "$(json "$TMP/api/summary.json" 's["devices"][0]["busy_pct"] - '"$cupti"' > 3')" = True ]; then
	grep -q '^device 0: busy [0-9.]*-[0-9.]*% .*no completion signal followed' "$TMP/api.txt" ||
		die "jax_launch --api-only: a busy figure over CUPTI's by 3 points printed as a fact"
fi
# Most gaps begin at the interrupt that ended the step, passed on through the waiters.
chained=$(json "$TMP/api/summary.json" 'sum("interrupt" in g["start_edge"] for g in s["gaps"])')
[ "$chained" -ge 85 ] || die "jax_launch --api-only: $chained gaps start at the GPU's interrupt"

"$GS" report "$TRACES/jax_attach.gsc" -o "$TMP/attach" -f >"$TMP/attach.txt" 2>&1 ||
	die "report of jax_attach.gsc failed: $(cat "$TMP/attach.txt")"
grep '^device 0: busy' "$TMP/attach.txt"
busy=$(json "$TMP/attach/summary.json" 's["devices"][0].get("busy_min_pct", s["devices"][0]["busy_pct"])')
gaps=$(json "$TMP/attach/summary.json" 'len(s["gaps"])')
python3 -c "import sys; sys.exit(not ($busy <= 4))" ||
	die "jax_attach: busy $busy% (the program is ~1% busy)"
[ "$gaps" -ge 85 ] || die "jax_attach: $gaps gaps (one a step: about 90)"
echo "jax_launch: recall $recall%, precision $precision%, busy from $low% (CUPTI $cupti%);" \
	"jax_attach: busy $busy%, $gaps gaps"
