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
# Each step's verdict is its programs' exit status, never a line of their output; the run ends
# with "N passed, N failed, N skipped" (the tests of step 1, then one each for the fuzz targets and
# the corpus) and exits non-zero when anything failed. STEPS="tests fuzz mutated" picks steps
# (tests/cases/runner.sh runs step 1 alone, ASAN_TESTS its pattern, on a test made to fail).
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
STEPS=${STEPS:-tests fuzz mutated}
results=${GAPSCOPE_RESULTS:-}
unset GAPSCOPE_RESULTS
fail=0 npass=0 nfail=0 nskip=0
want() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
verdict() { # verdict OK: one more passed (OK 1) or failed (OK 0)
	if [ "$1" = 1 ]; then npass=$((npass + 1)); else nfail=$((nfail + 1)) fail=1; fi
}
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

if want tests; then
	step "unit tests and end-to-end tests on the sanitized build"
	rm -f "$AB/check-asan.counts"
	TESTS=${ASAN_TESTS:-'/tests/test_|/(report_golden|script_golden|report_hostile|report_pprof|report_timeline|report_stripped|record_corrupt|record_full_disk|record_flight_dumpdir|report_api_chain|report_taskpolls|report_streams_trace|record_streams|diff|report_debuginfod|record_flight_debuginfod|record_flight_replay|report_passes|report_cupti|report_child_heap|report_own_code|report_gc|report_recoverable|report_faults|record_flight_dumpcap|record_metrics_causes|record_metrics_flood)\.sh$'} \
		GAPSCOPE_RESULTS="$AB/check-asan.counts" tests/run.sh "$AB" 2>&1 | tee "$AB/check-asan.log"
	rc=${PIPESTATUS[0]}
	p=0 f=0 sk=0
	[ -s "$AB/check-asan.counts" ] && read -r p f sk <"$AB/check-asan.counts"
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 # failed before it could count
	npass=$((npass + p)) nfail=$((nfail + f)) nskip=$((nskip + sk))
	[ "$rc" -eq 0 ] || fail=1
fi

if want fuzz; then
	step "fuzz targets on their corpora"
	for t in trace script report; do
		if ! "$BUILD/fuzz/fuzz_$t" -runs=0 "tests/fuzz/corpus/$t" >"$AB/fuzz-$t.log" 2>&1; then
			tail -n 30 "$AB/fuzz-$t.log"
			echo "  FAIL  fuzz_$t on its corpus"
			verdict 0
		else
			echo "  PASS  fuzz_$t: $(find "tests/fuzz/corpus/$t" -type f | wc -l) inputs"
			verdict 1
		fi
	done
fi

if want mutated; then
	step "a mutated-trace corpus through report --pprof and script"
	M=$AB/mutated
	rm -rf "$M" && mkdir -p "$M/in" "$M/out"
	cc -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -o "$M/mutate" tests/fuzz/mutate.c -lz || { verdict 0; exit 1; }
	"$M/mutate" 1 "$MUTANTS" "$M/in" tests/fuzz/corpus/report/*.gsc || { verdict 0; exit 1; }
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
	[ "$bad" -eq 0 ] && verdict 1 || verdict 0
fi

step "done"
[ -n "$results" ] && echo "$npass $nfail $nskip" >"$results"
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$fail" -eq 0 ] && echo "check-asan: passed" || echo "check-asan: FAILED"
exit "$fail"
