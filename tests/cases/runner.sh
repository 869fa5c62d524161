#!/usr/bin/env bash
# The runners decide from exit statuses, never from a test's words: a test that fails while its
# output says "0 failed" (as a flight summary line may) fails tests/run.sh, check-asan's test step
# and tests/suites.sh, and the suites still all run when one fails. Each runner is also run on a
# passing test, so that a runner that fails everything cannot pass this test either.
set -eu
. "$(dirname "$0")/../lib.sh"
cd "${GAPSCOPE_ROOT:-$(dirname "$0")/../..}"

# A build tree of one unit test each: one that lies, one that passes.
for kind in liar honest; do
	mkdir -p "$TMP/$kind/tests"
	{
		echo '#!/bin/sh'
		echo 'echo "gapscope: flight: 0 gap profile(s) pushed, 0 failed, 0 skipped"'
		echo 'echo "1 passed, 0 failed, 0 skipped"'
		[ $kind = liar ] && echo 'exit 1' || echo 'exit 0'
	} >"$TMP/$kind/tests/test_runner_$kind"
	chmod +x "$TMP/$kind/tests/test_runner_$kind"
done

# run.sh: its status, its last line and its counts file.
rc=0
TESTS=/test_runner_ GAPSCOPE_RESULTS=$TMP/liar.counts tests/run.sh "$TMP/liar" >"$TMP/liar.out" 2>&1 ||
	rc=$?
[ $rc -eq 1 ] || die "run.sh on a failing test: exit $rc, want 1"
[ "$(tail -n 1 "$TMP/liar.out")" = "0 passed, 1 failed, 0 skipped" ] ||
	die "run.sh's last line: $(tail -n 1 "$TMP/liar.out")"
[ "$(cat "$TMP/liar.counts")" = "0 1 0" ] || die "run.sh's counts: $(cat "$TMP/liar.counts")"
TESTS=/test_runner_ GAPSCOPE_RESULTS=$TMP/honest.counts tests/run.sh "$TMP/honest" \
	>"$TMP/honest.out" 2>&1 || die "run.sh on a passing test: exit $?"
[ "$(cat "$TMP/honest.counts")" = "1 0 0" ] || die "run.sh's counts: $(cat "$TMP/honest.counts")"

# check_asan.sh's test step, the runner of make check-asan (its TESTS pattern takes every unit
# test of the tree given as the sanitized build).
rc=0
STEPS=tests ASAN_TESTS=/test_runner_ tests/check_asan.sh "$TMP/liar" "$TMP/liar" >"$TMP/asan-liar.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || die "check_asan.sh passed a failing test: $(tail -n 3 "$TMP/asan-liar.out")"
grep -qx '0 passed, 1 failed, 0 skipped' "$TMP/asan-liar.out" &&
	grep -qx 'check-asan: FAILED' "$TMP/asan-liar.out" ||
	die "check_asan.sh's verdict: $(tail -n 3 "$TMP/asan-liar.out")"
STEPS=tests ASAN_TESTS=/test_runner_ tests/check_asan.sh "$TMP/honest" "$TMP/honest" >"$TMP/asan-honest.out" 2>&1 ||
	die "check_asan.sh failed a passing test: $(tail -n 3 "$TMP/asan-honest.out")"

# suites.sh (.ci/run): every suite runs, a failed one fails the whole, the counts add up, and a
# suite that fails without counts counts as one failure.
rc=0
tests/suites.sh \
	first "TESTS=/test_runner_ tests/run.sh $TMP/liar" \
	second "TESTS=/test_runner_ tests/run.sh $TMP/honest" \
	third "echo '9 passed, 0 failed'; exit 3" >"$TMP/suites.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || die "suites.sh passed a failed suite"
grep -q '^  second  *passed: 1 passed, 0 failed' "$TMP/suites.out" ||
	die "suites.sh did not run the suite after a failed one: $(cat "$TMP/suites.out")"
grep -q '^  third  *FAILED (exit 3): 0 passed, 1 failed' "$TMP/suites.out" ||
	die "suites.sh took a suite's words for its verdict: $(cat "$TMP/suites.out")"
[ "$(tail -n 1 "$TMP/suites.out")" = "1 passed, 2 failed, 0 skipped" ] ||
	die "suites.sh's last line: $(tail -n 1 "$TMP/suites.out")"
tests/suites.sh one "TESTS=/test_runner_ tests/run.sh $TMP/honest" >"$TMP/suites-ok.out" 2>&1 ||
	die "suites.sh failed a passing suite: $(cat "$TMP/suites-ok.out")"
echo "runners: every verdict from exit statuses"
