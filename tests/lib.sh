# Shared helpers for shell tests: source it after `set -eu`.
BUILD=${BUILD:-build}
TMP=$(mktemp -d)
cleanup() {
	local rc=$?

	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "${GAPSCOPE_KEEP_FAILED:-}" ]; then
		mkdir -p "$GAPSCOPE_KEEP_FAILED" &&
			cp -a "$TMP" "$GAPSCOPE_KEEP_FAILED/$(basename "$0" .sh).$(date +%s).files"
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# What the tests run: the recorder and reporter, the engine, simcuda's driver (an absolute path,
# for programs that dlopen it), the C compiler.
GS=$BUILD/gapscope
# A program a test links with $BUILD's libgapscope.a is built as that archive was: sanitized
# under make check-asan (its objects then need the sanitizers' runtime), plain otherwise.
SAN_FLAGS=$(nm "$BUILD/lib/libgapscope.a" 2>/dev/null | grep -q ' __asan_' &&
	echo "-fsanitize=address,undefined" || true)
ZK=$BUILD/zkengine
case $BUILD in
/*) LIBCUDA=$BUILD/simcuda/libcuda.so.1 ;;
*) LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1 ;;
esac
CC=${CC:-cc}

# need_built FILE...: each was built, or the test fails saying which was not.
need_built() {
	local f
	for f; do [ -e "$f" ] || die "$f not built"; done
}

# Root-only tests skip on a developer machine without root, never in CI.
need_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	[ -n "${CI:-}" ] && die "not root in CI, but this test $*"
	skip "not root (this test $*)"
}

# The warnings in a script or report run's stderr FILE, less the one a loaded machine causes by
# itself: records put out of time order because a BPF program was preempted between taking its
# timestamp and reserving its record (uprobe and system-call programs run preemptibly). The
# reader still delivers them, counts them and says so; any other warning is damage.
other_warnings() { grep -v "arrived too late to be put in time order" "$1" || true; }

# read_until FD LOG GLOB: lines from FD (a recorder's stderr) appended to LOG until one matches
# GLOB (true), or until FD ends or is silent for 60 s (false: a guard, not a timing).
read_until() {
	local l
	while read -r -t 60 l <&"$1"; do
		echo "$l" >>"$2"
		# shellcheck disable=SC2053 # GLOB is a pattern
		[[ $l == $3 ]] && return 0
	done
	return 1
}

# assert_eq ACTUAL EXPECTED WHAT
# launch_count SCRIPT ERE: the launches the recorder counted ("# launch-count" lines of
# `gapscope script`) on lines that match ERE.
launch_count() {
	grep '^# launch-count ' "$1" | grep -E -- "$2" | sed 's/.* n=//' | awk '{ s += $1 } END { print s + 0 }'
}
assert_eq() { [ "$1" = "$2" ] || die "$3: got '$1', expected '$2'"; }

# check_samples SCRIPT N MIN TOL: N CPU samples against what `gapscope script` output SCRIPT
# says to expect, the target's CPU time (utime + stime of its exit record) over the period one
# sample stands for (its sampler record); within TOL (a fraction), at least MIN expected.
check_samples() {
	local period cpu_ns expect
	period=$(sed -n 's/^# sampler .* period_ns=\([0-9]*\)$/\1/p' "$1" | tail -1)
	[ -n "$period" ] || die "no sampler record"
	cpu_ns=$(sed -n 's/^# exit .* utime_ns=\([0-9]*\) stime_ns=\([0-9]*\)/\1 \2/p' "$1" |
		awk '{print $1 + $2}')
	[ -n "$cpu_ns" ] || die "no exit record"
	expect=$((cpu_ns / period))
	echo "samples $2, expected $expect ($cpu_ns ns of CPU / $period ns)"
	[ "$expect" -ge "$3" ] || die "too little CPU time to judge sampling: $cpu_ns ns"
	awk -v n="$2" -v e="$expect" -v t="$4" 'BEGIN { exit !(n >= (1 - t) * e && n <= (1 + t) * e) }' ||
		die "$2 samples, expected $expect +-$4"
}

# need_probes: root (the test loads BPF programs and attaches uprobes) and the recorder built.
need_probes() {
	need_root "loads BPF programs and attaches uprobes"
	need_built "$GS"
}

# flight_rss PID ERR: PID's VmRSS (KiB) every second until it exits, its seconds counted from the
# flight recorder's memory line in ERR (its start-up done): at10 and at60 set to the sizes at 10
# and 60 s of recording, empty where it ended before.
flight_rss() {
	local t=0 rss
	at10= at60=
	while rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null) && [ -n "$rss" ]; do
		if grep -q 'flight: memory: about' "$2"; then
			t=$((t + 1))
			[ "$t" = 10 ] && at10=$rss
			[ "$t" = 60 ] && at60=$rss
		fi
		sleep 1
	done
}
