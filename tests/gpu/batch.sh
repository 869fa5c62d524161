#!/usr/bin/env bash
# Runs several tests/gpu scripts in one device session and keeps what comes back small: each
# script's table (and the last lines of its log) as one flat file under $OUT.
#   OUT=DIR tests/gpu/batch.sh apitier launchbound_idle      (carry build/gapscope-portable,
#                                                              build/libgapscope-cupti.so)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:?OUT=DIR}
for s in "$@"; do
	dir=/tmp/gpu-batch/$s
	rm -rf "$dir" && mkdir -p "$dir"
	start=$(date +%s)
	OUT=$dir timeout 540 bash "tests/gpu/$s.sh" >"$dir/stdout.txt" 2>&1
	rc=$?
	{
		echo "== tests/gpu/$s.sh: exit $rc, $(($(date +%s) - start)) s"
		find "$dir" -name 'table*.txt' -exec cat {} \; 2>/dev/null
		echo "-- last lines of its output"
		tail -n 60 "$dir/stdout.txt"
	} >"$OUT/$s.txt"
	cat "$OUT/$s.txt"
done
