#!/bin/bash
# Recording cost of user stack snapshots: zkengine (fixed scenario, simcuda) recorded with
# --stack-snapshot 16384 and with 0 (frame pointers only), interleaved, REPS times each; prints
# the wall time of each run and the ratio of the medians. Needs root.
#   tests/bench/snapshots.sh [BUILD] [REPS]
set -eu
BUILD=${1:-build}
REPS=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # $1: snapshot bytes; prints ms
	local t0 t1
	t0=$(date +%s%N)
	"$BUILD/gapscope" record -f -o "$tmp/t.gsc" --stack-snapshot "$1" -- \
		"$BUILD/zkengine" --device sim --scenario fixed >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

on=() off=()
for i in $(seq "$REPS"); do
	on+=("$(run 16384)")
	size_on=$(stat -c %s "$tmp/t.gsc")
	off+=("$(run 0)")
	size_off=$(stat -c %s "$tmp/t.gsc")
	echo "rep $i: snapshots ${on[-1]} ms ($size_on bytes), frame pointers only ${off[-1]} ms ($size_off bytes)"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
mon=$(median "${on[@]}")
moff=$(median "${off[@]}")
awk -v a="$mon" -v b="$moff" 'BEGIN {
	printf "zkengine fixed, recorded: snapshots on %d ms, off %d ms (medians): ratio %.3f\n", a, b, a / b }'
