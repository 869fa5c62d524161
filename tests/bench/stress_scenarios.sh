#!/usr/bin/env bash
# make stress-scenarios: the scenario test (tests/cases/engine_scenarios.sh) RUNS times in a row
# (default 10) with two CPU-bound processes running beside it, as on a loaded 2-CPU machine.
# Every run must pass.  Output: each run's table and verdict, then a summary line; kept in
# tests/bench/stress-scenarios.txt.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export BUILD GAPSCOPE_ROOT=$PWD
RUNS=${RUNS:-10}
hogs=()
for i in 1 2; do
	sh -c 'while :; do :; done' &
	hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $RUNS runs, 2 CPU-bound processes beside each"
pass=0
for r in $(seq 1 "$RUNS"); do
	start=$(date +%s)
	if out=$(tests/cases/engine_scenarios.sh 2>&1); then
		pass=$((pass + 1)) verdict=PASS
	else
		verdict=FAIL
	fi
	echo "== run $r: $verdict in $(($(date +%s) - start)) s"
	echo "$out" | grep -E '^(scenario|fixed|tracker-trim|gpu-lock-wide|starved|pageable|oversubscribed) |FAIL'
done
echo "$pass of $RUNS runs passed"
[ "$pass" -eq "$RUNS" ]
