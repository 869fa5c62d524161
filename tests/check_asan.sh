#!/usr/bin/env bash
# make check-asan: what reads traces and writes reports, under AddressSanitizer and
# UndefinedBehaviorSanitizer (any report of either fails the run, leaks included):
#
#   1. the unit tests, built with the sanitizers into ASAN_BUILD
#   2. the report and script end-to-end tests, run on the sanitized gapscope (the engine,
#      simcuda and the other helpers are the plain build's)
#   3. the fuzz targets (already sanitized) on their checked-in corpora, every input once
#   4. a mutated-trace corpus (tests/fuzz/mutate.c: MUTANTS copies of every report seed, fields
#      of records set to odd values, bytes flipped, files cut, CRCs made right), each through
#      report (with --pprof) and script: each must end with a status below 128, in 60 s, with
#      no sanitizer report
#
# usage: tests/check_asan.sh BUILD ASAN_BUILD   (make check-asan builds both first)
set -u
BUILD=${1:-build}
AB=${2:-$BUILD/check-asan}
MUTANTS=${MUTANTS:-40}
cd "$(dirname "$0")/.."
# verify_asan_link_order=0: a test preloads a library into what it records, the recorder too.
export ASAN_OPTIONS=detect_leaks=1:exitcode=99:verify_asan_link_order=0
export UBSAN_OPTIONS=halt_on_error=1:exitcode=98:print_stacktrace=1
fail=0
step() { printf '== %s (%s s)\n' "$1" $(($(date +%s) - T0)); }
T0=$(date +%s)

# The plain build's helpers beside the sanitized binaries: the engine, and simcuda, which plain
# programs load (a sanitized library needs the sanitizer's runtime loaded first). The sanitized
# build makes none of them (make check-asan), so that it never writes through these links.
rm -f "$AB/tests/test_simcuda"
for p in zkengine zkengine-nofp simcuda bench tests/render tests/report; do
	[ -e "$BUILD/$p" ] || continue
	[ -L "$AB/$p" ] || rm -rf "${AB:?}/$p"
	ln -sfn "$(realpath "$BUILD/$p")" "$AB/$p"
done

step "unit tests and end-to-end tests on the sanitized build"
TESTS='/tests/test_|/(report_golden|script_golden|report_hostile|report_pprof|report_timeline|report_stripped|record_corrupt|record_full_disk|record_flight_dumpdir)\.sh$' \
	tests/run.sh "$AB" | tee "$AB/check-asan.log"
grep -q ' 0 failed' "$AB/check-asan.log" || fail=1

step "fuzz targets on their corpora"
for t in trace script report; do
	if ! "$BUILD/fuzz/fuzz_$t" -runs=0 "tests/fuzz/corpus/$t" >"$AB/fuzz-$t.log" 2>&1; then
		tail -n 30 "$AB/fuzz-$t.log"
		echo "FAIL: fuzz_$t on its corpus"
		fail=1
	else
		echo "  PASS  fuzz_$t: $(find "tests/fuzz/corpus/$t" -type f | wc -l) inputs"
	fi
done

step "a mutated-trace corpus through report --pprof and script"
M=$AB/mutated
rm -rf "$M" && mkdir -p "$M/in" "$M/out"
cc -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -o "$M/mutate" tests/fuzz/mutate.c -lz || exit 1
"$M/mutate" 1 "$MUTANTS" "$M/in" tests/fuzz/corpus/report/*.gsc || exit 1
n=0 bad=0
for f in "$M"/in/*.gsc; do
	b=$(basename "$f" .gsc)
	for cmd in report script; do
		if [ $cmd = report ]; then
			args=(report "$f" -o "$M/out/$b.rep" --pprof "$M/out/$b.pb.gz")
		else
			args=(script "$f")
		fi
		rc=0
		timeout 60 "$AB/gapscope" "${args[@]}" >/dev/null 2>"$M/out/$b.$cmd.err" || rc=$?
		n=$((n + 1))
		if [ "$rc" -ge 98 ] || grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer' "$M/out/$b.$cmd.err"; then
			bad=$((bad + 1))
			echo "FAIL: $cmd of $f: exit $rc"
			tail -n 30 "$M/out/$b.$cmd.err"
		fi
		rm -rf "$M/out/$b.rep" "$M/out/$b.pb.gz"
	done
done
echo "  $n runs on $(ls "$M/in" | wc -l) mutated traces, $bad failed"
[ "$bad" -eq 0 ] || fail=1
step "done"
[ "$fail" -eq 0 ] && echo "check-asan: passed" || echo "check-asan: FAILED"
exit "$fail"
