#!/usr/bin/env bash
# gapscope record refuses bad setups with one line on stderr and a non-zero exit, before starting
# the target: existing output without -f, unwritable output, no privileges, no kernel BTF, a
# command that does not exist (127, as a shell says it), a pid that does not exist (1), a
# --cgroup outside /sys/fs/cgroup (a cgroup.procs file planted elsewhere and reached through ..).
# A refusal after -p listed the processes frees them (valgrind). It records the process of a
# thread id given with -p, saying so. And it passes the target's exit status
# through: a code as a code, a signal as the same signal.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs, drops privileges and hides BTF in a mount namespace"
GS=$(realpath "$BUILD/gapscope")
need_built "$GS"

# expect_error NAME PATTERN CMD...: non-zero exit, exactly one stderr line matching PATTERN,
# and the target never ran (it would have created $TMP/ran).
expect_error() {
	local name=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	echo "$rc" >"$TMP/$name.rc"
	echo "$name: exit $rc: $(cat "$TMP/$name.err")"
	[ "$rc" -ne 0 ] || die "$name: exit status 0"
	assert_eq "$(wc -l <"$TMP/$name.err")" 1 "$name: stderr lines"
	grep -q "^gapscope: $pattern" "$TMP/$name.err" || die "$name: message does not match '$pattern'"
	[ ! -e "$TMP/ran" ] || die "$name: the target ran"
}
target=(touch "$TMP/ran")

echo old >"$TMP/exists.gsc"
expect_error exists "$TMP/exists.gsc exists (use -f to overwrite)" \
	"$GS" record -o "$TMP/exists.gsc" -- "${target[@]}"
assert_eq "$(cat "$TMP/exists.gsc")" old "an existing trace is left alone"

expect_error nodir "cannot create $TMP/no/such/dir.gsc: No such file or directory" \
	"$GS" record -o "$TMP/no/such/dir.gsc" -- "${target[@]}"
expect_error readonly "cannot create /sys/gapscope-test.gsc: " \
	"$GS" record -o /sys/gapscope-test.gsc -- "${target[@]}"

chmod 0777 "$TMP"
expect_error notroot "missing capabilities: CAP_BPF (to load the BPF programs), CAP_PERFMON" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$GS" record -o "$TMP/user.gsc" -- "${target[@]}"
[ ! -e "$TMP/user.gsc" ] || die "notroot: output created"

# No BTF: a private mount namespace where /sys/kernel/btf is an empty tmpfs.
expect_error nobtf "kernel BTF not available" \
	unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' sh \
	"$GS" record -o "$TMP/nobtf.gsc" -- "${target[@]}"
[ ! -e "$TMP/nobtf.gsc" ] || die "nobtf: output created"

expect_error nocmd "cannot run gapscope-no-such-command: No such file or directory" \
	"$GS" record -o "$TMP/nocmd.gsc" -- gapscope-no-such-command
# A pid that cannot exist (pid_max is at most 4194304, every pid below it).
expect_error nopid "cannot attach to pid 4194304: no such process" \
	"$GS" record -o "$TMP/nopid.gsc" -p 4194304
for name in exists nodir readonly nobtf nopid; do
	assert_eq "$(cat "$TMP/$name.rc")" 1 "$name: exit status"
done
assert_eq "$(cat "$TMP/nocmd.rc")" 127 "nocmd: exit status"

# The processes -p listed are freed when the output cannot be made: every failure goes through
# the one cleanup (valgrind's leak report would be more lines on stderr, and exit 99).
expect_error leak "cannot create $TMP/no/such/dir.gsc: No such file or directory" \
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
	"$GS" record -o "$TMP/no/such/dir.gsc" -p $$
assert_eq "$(cat "$TMP/leak.rc")" 1 "leak: exit status"

# A cgroup.procs outside the cgroup file system, naming a live process.
mkdir "$TMP/fakecg"
echo $$ >"$TMP/fakecg/cgroup.procs"
expect_error cgroup_escape "--cgroup ../../..$TMP/fakecg is not under /sys/fs/cgroup" \
	"$GS" record -o "$TMP/cg.gsc" --cgroup "../../..$TMP/fakecg"

# -p of a thread that is not its process's main thread: the process is recorded.
cat >"$TMP/threads.c" <<'EOC'
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static void *run(void *a)
{
	char c;
	printf("%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (read(0, &c, 1) == 1) /* a malloc_trim per byte of stdin, until it ends */
		malloc_trim(0);
	return a;
}
int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, run, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
EOC
$CC -O2 -pthread -o "$TMP/threads" "$TMP/threads.c"
mkfifo "$TMP/tin"
coproc TH { exec "$TMP/threads" <"$TMP/tin"; }
thpid=$TH_PID
exec {tw}>"$TMP/tin"
read -r tid <&"${TH[0]}"
mkfifo "$TMP/trec"
"$GS" record -o "$TMP/tid.gsc" -p "$tid" 2>"$TMP/trec" {tw}>&- &
rp=$!
exec {tr}<"$TMP/trec"
read_until "$tr" "$TMP/tid.err" "*recording pid*" || die "-p TID: no recording: $(cat "$TMP/tid.err")"
grep -q "^gapscope: pid $tid is a thread of process $thpid: recording the process$" "$TMP/tid.err" ||
	die "-p TID: not said: $(cat "$TMP/tid.err")"
# 20 trims, one per byte, through the thread's fd 0 (the FIFO): then the end.
printf '%020d' 0 >&$tw
exec {tw}>&-
cat <&$tr >>"$TMP/tid.err"
wait "$rp" || die "-p TID: record failed: $(cat "$TMP/tid.err")"
"$GS" script --no-stacks "$TMP/tid.gsc" >"$TMP/tid.txt"
grep -q "^# target pid=$thpid attach" "$TMP/tid.txt" || die "-p TID: the target is not the process"
assert_eq "$(grep -c ' probe:malloc_trim ' "$TMP/tid.txt")" 20 "-p TID: the thread's malloc_trim calls"

# Exit status: the target's code; a death by signal is the same signal for the caller.
rc=0
"$GS" record -o "$TMP/code.gsc" -- sh -c 'exit 7' 2>/dev/null || rc=$?
assert_eq "$rc" 7 "exit code passed through"
rc=0
"$GS" record -o "$TMP/sig.gsc" -- sh -c 'kill -TERM $$' 2>/dev/null || rc=$?
assert_eq "$rc" $((128 + 15)) "death by SIGTERM passed through"
"$GS" script "$TMP/sig.gsc" | grep -q '^# exit pid=[0-9]* status=0xf ' || die "signal status"
"$GS" script "$TMP/sig.gsc" | grep -q '^# end ' || die "trace not finished"

# -f overwrites.
"$GS" record -f -o "$TMP/exists.gsc" -- true 2>/dev/null
"$GS" script "$TMP/exists.gsc" | grep -q '^# end ' || die "-f did not write a trace"
echo ok
