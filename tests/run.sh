#!/usr/bin/env bash
# Runs every test once and ends with "N passed, N failed, N skipped".
#   build/tests/<unit binary>   C unit tests
#   tests/cases/*.sh            shell tests (end-to-end, as root)
# CASES=tests/soak runs that folder's shell tests instead, and no unit test: make check-soak's
# (soaks and fuzzing, minutes each).
# A test passes with exit 0, skips with exit 77 (printing "SKIP: reason"), fails otherwise.
# TESTS=pattern runs only the tests whose name matches the pattern (grep -E).
# GAPSCOPE_KEEP_FAILED=DIR keeps a failed test's whole log there, and a shell test's files
# (tests/lib.sh's TMP: traces, reports) with it.
# GAPSCOPE_RESULTS=FILE: the counts written there too, one line "PASS FAIL SKIP", for
# tests/suites.sh to add up. The exit status alone says whether the run passed: 0 when no test
# failed, 1 otherwise, never read from a log, whose lines are the tests' own words.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.."
export BUILD GAPSCOPE_ROOT=$PWD
results=${GAPSCOPE_RESULTS:-}
unset GAPSCOPE_RESULTS # not the tests' to write

pass=0 fail=0 skip=0 failed=()
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

CASES=${CASES:-tests/cases}
units=("$BUILD"/tests/test_*)
[ "$CASES" = tests/cases ] || units=()
tests=()
for t in "${units[@]}" "$CASES"/*.sh; do
	[ -x "$t" ] || continue
	[ -n "${TESTS:-}" ] && ! echo "$t" | grep -Eq "$TESTS" && continue
	tests+=("$t")
done

for t in "${tests[@]}"; do
	name=$(basename "$t")
	log="$logdir/$name.log"
	start=$(date +%s%N)
	timeout --kill-after=10 "${TEST_TIMEOUT:-600}" "$t" >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000)); secs=$((ms / 1000)).$(((ms % 1000) / 100))
	case $rc in
	0)  pass=$((pass + 1)); printf '  PASS  %-40s %6ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf '  SKIP  %-40s %s\n' "$name" "$(grep -m1 SKIP "$log" | sed 's/^.*SKIP:* *//')" ;;
	*)  fail=$((fail + 1)); failed+=("$name")
	    printf '  FAIL  %-40s %6ss (exit %d)\n' "$name" "$secs" "$rc"
	    sed 's/^/        | /' "$log" | tail -n 40
	    [ -n "${GAPSCOPE_KEEP_FAILED:-}" ] && mkdir -p "$GAPSCOPE_KEEP_FAILED" &&
		cp "$log" "$GAPSCOPE_KEEP_FAILED/$name.$(date +%s).log" ;;
	esac
done

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
[ -n "$results" ] && echo "$pass $fail $skip" >"$results"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
