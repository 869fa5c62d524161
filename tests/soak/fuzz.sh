#!/usr/bin/env bash
# The fuzz targets of the trace readers (tests/fuzz/README.md): built with clang's fuzzer,
# address and undefined behaviour sanitizers, each run for FUZZ_SECONDS (default 60) from its
# checked-in corpus, whose regression inputs (crashes found before) must all pass first.
set -eu
GAPSCOPE_ROOT=${GAPSCOPE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
SECS=${FUZZ_SECONDS:-60}
command -v clang >/dev/null || die "clang not installed (make deps)"
make --no-print-directory -s BUILD="$BUILD" fuzz-build >"$TMP/build.log" 2>&1 || {
	cat "$TMP/build.log"
	die "the fuzz targets did not build"
}
for t in trace script report; do
	# Every checked-in input once, by itself: the regressions fail loudly here.
	n=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
	[ "$n" -ge 3 ] || die "corpus of $t has $n inputs"
	"$BUILD/fuzz/fuzz_$t" -runs=0 "tests/fuzz/corpus/$t" >"$TMP/$t.seeds" 2>&1 || {
		tail -n 40 "$TMP/$t.seeds"
		die "fuzz_$t fails on its checked-in corpus"
	}
	grep -q "INITED" "$TMP/$t.seeds" || die "fuzz_$t did not read its corpus"
done
tests/fuzz/run.sh "$BUILD" "$SECS" trace script report
