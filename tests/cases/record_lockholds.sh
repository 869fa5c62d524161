#!/usr/bin/env bash
# --lock-holds: pthread mutex hold times by uprobes on pthread_mutex_lock/unlock in the target's
# libc. The target (tests/record/target.c --contend) holds its static mutex until a second thread
# sleeps on it in the kernel, then burns 2 ms of CPU before unlocking; the second thread then
# takes and drops it. So the trace must hold exactly two holds of that mutex: the main thread's,
# at least 2 ms long, and the waiter's, whose wait is at least 2 ms. Without --lock-holds the
# lock functions are not probed at all (uncontended locks cost nothing).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
$CC -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/target" tests/record/target.c -ldl

"$GS" record -o "$TMP/on.gsc" --lock-holds -- "$TMP/target" --contend >"$TMP/out" 2>"$TMP/err" ||
	{ cat "$TMP/err"; die "record --lock-holds failed"; }
"$GS" script --no-stacks "$TMP/on.gsc" >"$TMP/on"
val() { sed -n "s/^$1=//p" "$TMP/out"; }
lock=$(val lock) holder=$(val holder_tid) waiter=$(val waiter_tid)
[ -n "$lock" ] && [ -n "$waiter" ] || die "target printed no lock/waiter: $(cat "$TMP/out")"

grep -q '^# probe .* lock .*:pthread_mutex_lock live-since=.* +return' "$TMP/on" ||
	die "pthread_mutex_lock not probed with its return"
grep -q '^# probe .* lock .*:pthread_mutex_unlock live-since=' "$TMP/on" ||
	die "pthread_mutex_unlock not probed"

# Durations as printed: hold=<v><unit> wait=<v><unit>; to ns.
holds=$(grep " lock:hold mutex=$lock " "$TMP/on" | awk '
	function ns(s) { v = s + 0; if (s ~ /ms$/) return v * 1e6; if (s ~ /us$/) return v * 1e3;
			 if (s ~ /ns$/) return v; return v * 1e9 }
	{ split($2, t, "/"); h = w = ""
	  for (i = 1; i <= NF; i++) { if ($i ~ /^hold=/) h = ns(substr($i, 6));
				      if ($i ~ /^wait=/) w = ns(substr($i, 6)) }
	  printf "%s %d %d\n", t[1], h, w }')
echo "holds of $lock (tid hold_ns wait_ns):"
echo "$holds"
assert_eq "$(echo "$holds" | grep -c .)" 2 "holds of the contended mutex"
echo "$holds" | awk -v t="$holder" '$1 == t && $2 >= 2000000 { ok = 1 } END { exit !ok }' ||
	die "the holder's hold is missing or shorter than its 2 ms burn"
echo "$holds" | awk -v t="$waiter" '$1 == t && $3 >= 2000000 { ok = 1 } END { exit !ok }' ||
	die "the waiter's hold is missing or its wait is shorter than the holder's burn"
grep -q '^# losses total=0' "$TMP/on" || die "losses: $(grep '^# losses' "$TMP/on")"

# Without the option: no lock probes, no hold events.
"$GS" record -o "$TMP/off.gsc" -- "$TMP/target" --contend >/dev/null 2>&1
"$GS" script --no-stacks "$TMP/off.gsc" >"$TMP/off"
grep -q 'pthread_mutex_\(un\)\?lock' "$TMP/off" && die "lock functions probed without --lock-holds"
grep -q ' lock:hold ' "$TMP/off" && die "hold events without --lock-holds"
echo ok
