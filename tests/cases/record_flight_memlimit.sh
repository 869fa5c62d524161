#!/usr/bin/env bash
# record --flight against its memory cgroup (red-team D6, issue 48): the start-up check counts
# flight mode (--flight-mb, what every dump needs, the live analysis) with the one figure --help,
# the README and the start-up line state, at most 160 MiB at the defaults. A cgroup of 128 MiB,
# below it, is refused at start with the figure; one at the stated need records a storm of 30,000
# futex calls a second for 60 s with --flight 30, is not OOM-killed, and its peak RSS (the cost
# line's VmHWM) is within the figure; with no dump it leaves no debug cache in --dump-dir.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and makes memory cgroups"
need_built "$GS"
STORM=$TMP/storm
$CC -O2 -pthread -o "$STORM" "$GAPSCOPE_ROOT/tests/bench/storm.c" || die "cannot build storm"
S=
cg=
stop() {
	[ -n "$S" ] && kill "$S" 2>/dev/null
	[ -n "$cg" ] && [ -d "$cg" ] && rmdir "$cg" 2>/dev/null
	cleanup
}
trap stop EXIT
if grep -q '^0::' /proc/self/cgroup && [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/gapscope-flight-$$
	limit=memory.max
else
	cg=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/gapscope-flight-$$
	limit=memory.limit_in_bytes
fi
mkdir "$cg" || die "cannot make a memory cgroup at $cg"
in_cg() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }

# The figure at the defaults, as --help computes it (memlimit__need_mb).
B=$("$GS" record --help | tr '\n' ' ' | sed -n 's/.*live analysis (\([0-9]*\) MiB by default).*/\1/p')
[ -n "$B" ] || die "--help states no flight figure"
[ "$B" -le 160 ] || die "the bound at the defaults is $B MiB, over 160"
grep -q "it needs about $B MiB at the defaults" "$GAPSCOPE_ROOT/README.md" ||
	die "the README does not state --help's $B MiB"
"$STORM" --threads 2 --rate 30000 --seconds 100 >"$TMP/storm.out" &
S=$!
mkdir "$TMP/d"
echo $((128 << 20)) >"$cg/$limit"
rc=0
in_cg "$GS" record --flight 30 --dump-dir "$TMP/d" -p "$S" 2>"$TMP/small.err" || rc=$?
echo "128 MiB: exit $rc: $(cat "$TMP/small.err")"
[ "$rc" -eq 1 ] || die "--flight in a 128 MiB cgroup: exit $rc"
grep -q "^gapscope: the memory cgroup allows 128 MiB, a flight recording needs about $B MiB (64 MiB, --ringbuf-mb 16, --flight-mb 32, 16 MiB for what every dump needs, 32 MiB for the live analysis): not started$" \
	"$TMP/small.err" || die "no word of flight mode's memory need"

echo $((B << 20)) >"$cg/$limit"
rc=0
in_cg "$GS" record --flight 30 --dump-dir "$TMP/d" -p "$S" --duration 60 2>"$TMP/ok.err" || rc=$?
tail -3 "$TMP/ok.err"
[ "$rc" -eq 0 ] || die "--flight at the stated $B MiB: exit $rc (137: OOM-killed)"
grep -q "^gapscope: flight: memory: about $B MiB in all " "$TMP/ok.err" ||
	die "the start-up line does not state the $B MiB the check used"
peak=$(sed -n 's/^gapscope: flight: cost: .*; peak RSS \([0-9.]*\) MiB, \([0-9.]*\) MiB with .*/\2/p' \
	"$TMP/ok.err")
[ -n "$peak" ] || die "no cost line"
# No dump, no debug cache (debugcache.h): a recording that writes nothing leaves nothing.
[ ! -e "$TMP/d/.debug-cache" ] || die "a debug cache made without a dump"
awk -v p="$peak" -v b="$B" 'BEGIN { exit !(p <= b) }' ||
	die "peak RSS $peak MiB (with its reports') over the stated $B MiB"
if [ -e "$cg/memory.events" ]; then
	oom=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")
else
	oom=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control" 2>/dev/null || echo 0)
fi
assert_eq "${oom:-0}" 0 "OOM kills in the cgroup"
