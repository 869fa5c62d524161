#!/usr/bin/env bash
# gapscope record against careless and hostile use: -f onto a device node, a FIFO or a directory
# is refused in one line and leaves it alone; numbers that would wrap at 32 bits, NaN and
# infinities are refused; a command that cannot run exits 127; --probe with a path that is no
# ELF file (or lacks the function) is refused; -p of a kernel thread or a zombie says so; a
# process whose main thread called pthread_exit is recorded through its live thread; a memory
# cgroup too small for a recording is refused at start; a closed stderr (SIGPIPE) never stops a
# recording; every catchable signal sent to the recorder alone reaches the target (SIGUSR1,
# SIGUSR2, SIGWINCH, SIGRTMIN+1...). Every wait is for a line or an exit, never for a time.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs, makes device nodes and memory cgroups"
GS=$(realpath "$BUILD/gapscope")
CC=${CC:-cc}
$CC -O2 -g -o "$TMP/sigseq" tests/record/sigseq.c
$CC -O2 -g -pthread -o "$TMP/mainexit" tests/record/mainexit.c

# refused NAME PATTERN CMD...: non-zero exit, a line matching PATTERN first on stderr, and the
# target (touch $TMP/ran) never ran.
refused() {
	local name=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	echo "$name: exit $rc: $(head -1 "$TMP/$name.err")"
	[ "$rc" -ne 0 ] || die "$name: exit status 0"
	head -1 "$TMP/$name.err" | grep -q -- "$pattern" || die "$name: message does not match '$pattern'"
	[ ! -e "$TMP/ran" ] || die "$name: the target ran"
}
target=(touch "$TMP/ran")

# -f replaces only a regular file or a link: a character device (as /dev/null), a FIFO and a
# directory stay what they are.
mknod "$TMP/null" c 1 3
mkfifo "$TMP/fifo"
mkdir "$TMP/dir"
for n in null:"a character device" fifo:"a FIFO" dir:"a directory"; do
	f=${n%%:*}
	refused "force-$f" "^gapscope: $TMP/$f is ${n#*:}: -f replaces only a regular file or a link$" \
		"$GS" record -f -o "$TMP/$f" -- "${target[@]}"
	assert_eq "$(wc -l <"$TMP/force-$f.err")" 1 "force-$f: stderr lines"
done
assert_eq "$(stat -c '%F %t:%T' "$TMP/null")" "character special file 1:3" "the device node after -f"
[ -p "$TMP/fifo" ] && [ -d "$TMP/dir" ] || die "the FIFO or the directory was replaced"

# Numbers: no 32-bit wrap, no NaN or infinity, pids in range.
refused pid-wrap "^gapscope record: -p: a process id" "$GS" record -o "$TMP/n.gsc" -p 4294967297
refused pid-neg "^gapscope record: -p: a process id" "$GS" record -o "$TMP/n.gsc" -p -1
for o in "--freq 4294967297" "--freq 0" "--ringbuf-mb 4294967296" "--ringbuf-mb 3" \
	"--stack-snapshot 4294967297" "--duration nan" "--duration inf" "--duration -1" \
	"--duration 0x10" "--snapshot-min-block nan" "--snapshot-min-block 1e999"; do
	# shellcheck disable=SC2086
	refused "opt-${o%% *}" "^gapscope record: ${o%% *}" "$GS" record -o "$TMP/n.gsc" $o -- "${target[@]}"
done
[ ! -e "$TMP/n.gsc" ] || die "a refused option left a trace"

# A command that cannot run: 127, as a shell says it.
rc=0
"$GS" record -o "$TMP/x.gsc" -- "$TMP/no-such-command" 2>"$TMP/x.err" || rc=$?
assert_eq "$rc" 127 "exit status of a command that cannot run"
grep -q "^gapscope: cannot run $TMP/no-such-command: No such file or directory$" "$TMP/x.err" ||
	die "no word of the missing command: $(cat "$TMP/x.err")"

# --probe with a path: an ELF file with that function.
refused probe-notelf "^gapscope record: --probe /etc/passwd:foo: /etc/passwd is not an ELF file$" \
	"$GS" record -o "$TMP/p.gsc" --probe /etc/passwd:foo -- "${target[@]}"
refused probe-nofile "^gapscope record: --probe $TMP/none.so:foo: $TMP/none.so: No such file" \
	"$GS" record -o "$TMP/p.gsc" --probe "$TMP/none.so:foo" -- "${target[@]}"
refused probe-nosym "^gapscope record: --probe $TMP/mainexit:no_such_fn: $TMP/mainexit has no function no_such_fn$" \
	"$GS" record -o "$TMP/p.gsc" --probe "$TMP/mainexit:no_such_fn" -- "${target[@]}"

# -p of a kernel thread; of a zombie (a child its parent, sh, never reaps while it sleeps).
kt=$(awk '{ if (int($9 / 2097152) % 2) { print FILENAME; exit } }' /proc/[0-9]*/stat 2>/dev/null |
	sed 's,/proc/\([0-9]*\)/stat,\1,')
[ -n "$kt" ] || die "no kernel thread found"
refused kthread "^gapscope: cannot attach to pid $kt: a kernel thread ($(cat /proc/"$kt"/comm)), no program to record$" \
	"$GS" record -o "$TMP/k.gsc" -p "$kt"
# The zombie's parent never waits (SIGCHLD at its default, whatever this shell was given).
exec 8< <(exec python3 -c '
import os, signal
signal.signal(signal.SIGCHLD, signal.SIG_DFL)
pid = os.fork()
if pid == 0:
    os._exit(0)
while open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z":
    os.sched_yield()
print(pid, flush=True)
signal.pause()')
zpar=$!
read -r zombie <&8
refused zombie "^gapscope: cannot attach to pid $zombie: it has exited (a zombie its parent has not reaped)$" \
	"$GS" record -o "$TMP/z.gsc" -p "$zombie"
kill "$zpar"
exec 8<&-

# A process whose main thread called pthread_exit: attached through its live thread, whose
# calls of a probed function are all recorded.
python3 - "$GS" "$TMP" <<'PY' || die "attach to a process whose main thread exited"
import os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["GAPSCOPE_ROOT"], "tests/record"))
from attach import Lines, start_record, script, die
gs, tmp = sys.argv[1:]
N = 25
t = subprocess.Popen([os.path.join(tmp, "mainexit"), str(N)], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
out = Lines(t.stdout)
if out.wait(r"^ready$") is None:
    die("mainexit never got ready")
state = open("/proc/%d/stat" % t.pid).read().rsplit(")", 1)[1].split()[0]
if state != "Z":
    die("the main thread has not exited: state %s" % state)
trace = os.path.join(tmp, "mainexit.gsc")
rec, err = start_record(t.pid, trace,
                        ["--probe", os.path.join(tmp, "mainexit") + ":mainexit_work"])
t.stdin.write(b"go\n")
t.stdin.close()
t.wait()
rec.wait()
if rec.returncode != 0:
    die("recorder exit %d: %s" % (rec.returncode, "\n".join(err.join())))
rc, txt, warn = script(trace, "--no-stacks")
calls = len(re.findall(r"probe:mainexit_work\b", txt))
print("probed calls recorded: %d of %d" % (calls, N))
if calls != N:
    die("%d calls of mainexit_work recorded, %d made" % (calls, N))
PY

# A memory cgroup smaller than a recording needs: refused at start, with the numbers.
cg=
if grep -q '^0::' /proc/self/cgroup && [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/gapscope-test-$$
	limit=memory.max
else
	cg=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/gapscope-test-$$
	limit=memory.limit_in_bytes
fi
mkdir "$cg" || die "cannot make a memory cgroup at $cg"
echo $((50 << 20)) >"$cg/$limit"
rc=0
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
	"$GS" record -o "$TMP/mem.gsc" -- "${target[@]}" 2>"$TMP/mem.err" || rc=$?
rmdir "$cg"
echo "memory: exit $rc: $(cat "$TMP/mem.err")"
[ "$rc" -eq 1 ] || die "a recording in a 50 MiB cgroup: exit $rc"
grep -q "^gapscope: the memory cgroup allows 50 MiB, a recording needs about 80 MiB (64 MiB and --ringbuf-mb 16): not started$" \
	"$TMP/mem.err" || die "no word of the memory floor"
[ ! -e "$TMP/ran" ] && [ ! -e "$TMP/mem.gsc" ] || die "a refused recording started"
"$GS" record --help | grep -q "^MEMORY: a recording needs about 64 MiB" || die "--help says no memory floor"

# A closed stderr (a reader that went away): the recording goes on and ends as it would, its
# summary line lost, the target's exit status passed through; not a death by SIGPIPE.
python3 - "$GS" "$TMP" <<'PY' || die "closed stderr"
import os, subprocess, sys
gs, tmp = sys.argv[1:]
r, w = os.pipe()
os.close(r)
p = subprocess.Popen([gs, "record", "-o", os.path.join(tmp, "pipe.gsc"), "--", "sh", "-c",
                      "exit 7"], stdout=subprocess.DEVNULL, stderr=w)
os.close(w)
p.wait()
print("recorder with a closed stderr: exit %d" % p.returncode)
if p.returncode != 7:
    sys.exit("FAIL: exit %d with a closed stderr, the target's was 7" % p.returncode)
PY
"$GS" script "$TMP/pipe.gsc" | grep -q '^# end ' || die "a closed stderr left the trace unfinished"

# Signals sent to the recorder alone reach the target, each in turn: the target waits for them
# in order and says when it got each.
python3 - "$GS" "$TMP" <<'PY' || die "signals passed on"
import os, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["GAPSCOPE_ROOT"], "tests/record"))
from attach import Lines, die
gs, tmp = sys.argv[1:]
sigs = [signal.SIGUSR1, signal.SIGUSR2, signal.SIGWINCH, signal.SIGALRM, signal.SIGRTMIN + 1,
        signal.SIGCONT, signal.SIGHUP]
trace = os.path.join(tmp, "sig.gsc")
p = subprocess.Popen([gs, "record", "-o", trace, "--", os.path.join(tmp, "sigseq")] +
                     [str(int(s)) for s in sigs], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, start_new_session=True)
out, err = Lines(p.stdout), Lines(p.stderr)
if out.wait(r"^ready$") is None:
    die("sigseq never got ready: %s" % "\n".join(err.join()))
at = 0
for s in sigs:
    os.kill(p.pid, s)  # the recorder alone
    at = out.wait(r"^got ", at)
    if at is None:
        p.wait()
        die("%s was not passed on (recorder exit %s): %s" % (signal.Signals(s).name if s in
            signal.Signals.__members__.values() else s, p.returncode, "\n".join(err.join())))
    if out.lines[at] != "got %d" % s:
        die("got %s, sent %d" % (out.lines[at], s))
    print("passed on:", int(s))
    at += 1
p.wait()
if p.returncode != 0:
    die("recorder exit %d: %s" % (p.returncode, "\n".join(err.join())))
PY
"$GS" script "$TMP/sig.gsc" | grep -q '^# end ' || die "signal test: trace unfinished"
echo ok
