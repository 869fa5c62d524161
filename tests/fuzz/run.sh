#!/usr/bin/env bash
# Runs each fuzz target for SECONDS from its checked-in corpus, one process each (the machines are
# small); the first crash stops the run with libFuzzer's report and the crashing input's path.
#   tests/fuzz/run.sh BUILD SECONDS TARGET...
# Prints per target its last status line (executions, coverage: cov, features: ft).
set -eu
BUILD=$1 SECONDS_EACH=$2
shift 2
cd "$(dirname "$0")/../.."
for t in "$@"; do
	bin=$BUILD/fuzz/fuzz_$t
	seeds=tests/fuzz/corpus/$t
	work=$BUILD/fuzz/corpus/$t
	log=$BUILD/fuzz/$t.log
	[ -x "$bin" ] || { echo "fuzz: $bin not built" >&2; exit 1; }
	mkdir -p "$work"
	echo "  FUZZ      $t for ${SECONDS_EACH}s"
	if ! "$bin" -max_total_time="$SECONDS_EACH" -timeout=20 \
		-rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
		-artifact_prefix="$BUILD/fuzz/crash-$t-" "$work" "$seeds" >"$log" 2>&1; then
		tail -n 60 "$log" >&2
		echo "fuzz: $t failed (log: $log)" >&2
		exit 1
	fi
	grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1 | sed "s/^/  $t: /"
	grep -E '^stat::number_of_executed_units' "$log" | sed "s/^/  $t: /"
done
