#!/usr/bin/env bash
# Issue 16, churn: gapscope record on a target that churns (tests/record/churn.c): it
# re-executes itself, loads the stand-in libcuda late, creates and ends 5,000 threads (50 at a
# time, each one launch and one malloc_trim), loads, calls and unloads a library 1,000 times (its
# function probed with --probe), forks children that make probed calls and exit, forks children
# that exec a second image making probed calls, and leaves a child behind as it exits.
#   - every event of the target's threads is in the trace, exactly as many as the target counted,
#     nothing lost; its two execs are recorded;
#   - without --follow-children not one event of the children, with it exactly theirs (each
#     child calls once the recorder says its own probes are in place: the trace holds the
#     window before, for each child);
#   - the library's probe is attached once and every load carries it;
#   - after the recording, the child left behind holds the file's bytes at every probed address
#     (it saw a breakpoint there while recorded);
#   - the recorder's peak resident memory stays under 200 MiB (the ring buffer, mapped
#     whole, and kernel symbols are most of it) and does not grow with the thread count: the
#     5,000-thread run within 8 MiB of a 500-thread one.
# Each recording takes about a second on a 2-CPU machine.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes

lingerers=()
cleanup() {
	# Only a lingering child of ours still running (its id not yet reused).
	for p in "${lingerers[@]}"; do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q "^$TMP/churn " &&
			kill "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}

mkdir -p "$TMP/lib"
$CC -O2 -g -fno-omit-frame-pointer -shared -fPIC -o "$TMP/lib/libcuda.so.1" \
	tests/record/fakecuda.c
$CC -O2 -g -fno-omit-frame-pointer -shared -fPIC -o "$TMP/lib/libchurn.so" \
	tests/record/churn_plugin.c
$CC -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/churn" tests/record/churn.c -ldl

THREADS=5000 DLOPENS=1000 FORKS=20 EXECS=10 K=5
RSS_MAX_KB=$((200 << 10)) RSS_GROWTH_KB=$((8 << 10))

# record NAME THREADS [OPTIONS]: a recording of the churn target; its peak RSS (the recorder's,
# or a child's, the target's being far smaller) from wait4 into NAME.rss. Followed, each child
# calls once the recorder (-v) says its probes are in place: a SIGUSR1 tells it then.
record() {
	local name=$1 threads=$2 rc probed=()
	shift 2
	case " $* " in *" --follow-children "*) probed=(--probed) ;; esac
	python3 - "$TMP/$name" "$GS" record -v --all-launches -o "$TMP/$name.gsc" "$@" \
		--probe libchurn.so:churn_fn -- "$TMP/churn" --reexec --cuda "$TMP/lib/libcuda.so.1" \
		--plugin "$TMP/lib/libchurn.so" --threads "$threads" --batch 50 \
		--dlopens $DLOPENS --forks $FORKS --execs $EXECS --calls $K --linger "${probed[@]}" <<'PY'
import os, re, signal, subprocess, sys, threading
base = sys.argv[1]
p = subprocess.Popen(sys.argv[2:], stdout=open(base + ".out", "w"), stderr=subprocess.PIPE,
                     text=True, errors="replace")
err = open(base + ".err", "w", buffering=1)
def relay():  # the child left behind keeps the pipe open: read on a thread of its own
    for line in p.stderr:
        err.write(line)
        m = re.search(r"pid (\d+): \d+ probe links after ", line)
        if m:
            try:
                os.kill(int(m.group(1)), signal.SIGUSR1)
            except ProcessLookupError:
                pass
threading.Thread(target=relay, daemon=True).start()
_, status, ru = os.wait4(p.pid, 0)
open(base + ".rss", "w").write("%d %d\n" % (os.waitstatus_to_exitcode(status), ru.ru_maxrss))
PY
	lingerers+=("$(sed -n 's/^linger=//p' "$TMP/$name.out")")
	cat "$TMP/$name.out"
	grep -v '^gapscope: pid [0-9]*: [0-9]* probe links after ' "$TMP/$name.err" || true
	read -r rc RSS <"$TMP/$name.rss"
	assert_eq "$rc" 0 "$name: gapscope's exit status"
	echo "$name: recorder peak RSS $RSS KiB"
	[ "$RSS" -lt $RSS_MAX_KB ] || die "$name: peak RSS $RSS KiB, bound $RSS_MAX_KB KiB"
	"$GS" script --no-stacks "$TMP/$name.gsc" >"$TMP/$name.script" 2>"$TMP/$name.serr"
	"$GS" script --no-stacks --no-meta "$TMP/$name.gsc" >"$TMP/$name.events"
	[ -n "$(other_warnings "$TMP/$name.serr")" ] && { cat "$TMP/$name.serr"; die "$name: script warned"; }
	return 0
}

# check NAME FOLLOW: the trace of record NAME against what the target printed.
check() {
	local name=$1 follow=$2 pid linger ev=$TMP/$1.events
	val() { sed -n "s/^$1=//p" "$TMP/$name.out"; }
	# Events of the target (tgid PID) or of any other process (tgid not PID) matching RE.
	mine() { awk -v re="$1" -v t="/$pid\$" '$2 ~ t && $0 ~ re' "$ev" | wc -l; }
	others() { awk -v re="$1" -v t="/$pid\$" '$2 !~ t && $0 ~ re' "$ev" | wc -l; }
	pid=$(val pid) linger=$(val linger)
	assert_eq "$(val threads)/$(val thread_launches)/$(val thread_trims)" \
		"$THREADS/$THREADS/$THREADS" "$name: the target's thread count"
	assert_eq "$(val plugin_calls)/$(val unmapped_checks)" "$DLOPENS/10/10" \
		"$name: the target's library loads (and unloads seen)"
	assert_eq "$(val fork_calls)/$(val exec_calls)" "$((FORKS * K))/$((EXECS * K))" \
		"$name: the target's children's calls"

	grep -q '^# losses total=0 ' "$TMP/$name.script" ||
		die "$name: $(grep '^# losses' "$TMP/$name.script")"
	grep -q '^# end events=' "$TMP/$name.script" || die "$name: no end record"
	grep -q "^# exit pid=$pid status=0x0 " "$TMP/$name.script" || die "$name: no exit record"

	# The target: its launch and its re-exec, then every thread's events.
	assert_eq "$(mine " sched:exec $TMP/churn\$")" 2 "$name: the target's execs"
	assert_eq "$(mine 'cuda:cuLaunchKernel .* grid=\(1,1,1\)')" "$(val main_calls)" \
		"$name: the main thread's launch"
	assert_eq "$(mine 'cuda:cuLaunchKernel .* grid=\(2,1,1\)')" "$(val thread_launches)" \
		"$name: the threads' launches"
	assert_eq "$(mine ' probe:malloc_trim ')" $(($(val main_calls) + $(val thread_trims))) \
		"$name: the target's malloc_trim calls"
	assert_eq "$(mine ' sched:thread_new ')" $THREADS "$name: threads started"
	assert_eq "$(mine ' sched:exit ')" $((THREADS + 1)) "$name: threads ended (and main)"
	assert_eq "$(mine ' sched:fork ')" $((FORKS + EXECS + 1)) "$name: the target's forks"

	# The library: attached once, every load carrying the probe, every call counted.
	assert_eq "$(grep -c "^# probe [0-9]* user $TMP/lib/libchurn.so:churn_fn live-since=" \
		"$TMP/$name.script")" 1 "$name: probes of the library (attached once)"
	assert_eq "$(mine " mmap .*libchurn.so watched")" $((DLOPENS + 1)) \
		"$name: loads of the library"
	assert_eq "$(mine " mmap .*libchurn.so watched stopped-for-attach")" 1 \
		"$name: loads of the library stopped for an attach"
	assert_eq "$(mine ' probe:churn_fn dur=')" "$(val plugin_calls)" "$name: the library's calls"

	# The children.
	if [ "$follow" = yes ]; then
		assert_eq "$(others 'cuda:cuLaunchKernel .* grid=\(3,1,1\)')" "$(val fork_calls)" \
			"$name: the forked children's launches"
		assert_eq "$(others " sched:exec $TMP/churn\$")" $EXECS "$name: the children's execs"
		assert_eq "$(others 'cuda:cuLaunchKernel .* grid=\(4,1,1\)')" "$(val exec_calls)" \
			"$name: the exec'ed children's launches"
		assert_eq "$(others ' probe:malloc_trim ')" $(($(val fork_calls) + $(val exec_calls))) \
			"$name: the children's malloc_trim calls"
		assert_eq "$(others ' sched:exit ')" $((FORKS + EXECS)) "$name: the children's exits"
		# Each child's window before its own probes, in the trace (the one left behind too).
		assert_eq "$(grep -c '^# unprobed pid=[0-9]* why=fork for_ns=[0-9]* links=[1-9]' \
			"$TMP/$name.script")" $((FORKS + EXECS + 1)) "$name: the children's unprobed windows"
	else
		assert_eq "$(others .)" 0 "$name: events of the children, not followed"
	fi

	# Nothing left behind in the child still running: it saw the breakpoint while recorded.
	assert_eq "$(val linger_int3)" 1 "$name: a breakpoint seen by the lingering child"
	# The test's own files: libc may hold breakpoints of another recording on the machine.
	python3 tests/record/probe_bytes.py "$linger" "$TMP/$name.script" clean "$TMP" ||
		die "$name: a breakpoint stayed behind in pid $linger after the recording"
	kill "$linger"
}

record plain $THREADS
check plain no
rss_plain=$RSS
record follow $THREADS --follow-children
check follow yes
rss_follow=$RSS
# The same, with a tenth of the threads: the recorder's memory does not scale with them.
record small $((THREADS / 10)) --follow-children
grep -q '^# losses total=0 ' "$TMP/small.script" || die "small: $(grep '^# losses' "$TMP/small.script")"
kill "${lingerers[2]}"
rss_small=$RSS growth=$((rss_follow - RSS))
echo "peak RSS: $rss_plain KiB plain, $rss_follow KiB followed, $rss_small KiB with" \
	"$((THREADS / 10)) threads (growth $growth KiB)"
[ "$growth" -lt $RSS_GROWTH_KB ] ||
	die "the recorder grew by $growth KiB with $THREADS threads over $((THREADS / 10))"
echo "ok: $THREADS threads, $DLOPENS loads, $FORKS forks and $EXECS execs counted exactly"
