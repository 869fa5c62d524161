#!/usr/bin/env bash
# Ctrl-C on a terminal reaches the recorded program exactly as without gapscope (once, from the
# terminal, not forwarded a second time); the recorder passes its exit status through and the
# trace is complete; the same for kill(2) of the process group. A pseudo-terminal stands in for
# the user's terminal. The target says when it is ready for the Ctrl-C; the recorder is stopped
# (SIGSTOP, waited for) until the target says it took its SIGINT, so that a second one passed on
# would not merge with the first while pending; then a SIGTERM to the recorder alone, which it
# passes on after any SIGINT it passed on (it takes pending signals lowest number first), ends the
# target (target.c --then-sigterm). No timing is assumed.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs"
GS=$(realpath "$BUILD/gapscope")
$CC -O2 -g -pthread -o "$TMP/target" tests/record/target.c -ldl

python3 - "$GS" "$TMP/t.gsc" "$TMP/target" >"$TMP/out" <<'PY'
import os, pty, signal, sys
gs, out, target = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(gs, [gs, "record", "-o", out, "--", target, "--trims", "3", "--wait-sigint",
                  "--then-sigterm"])
buf = b""
while b"ready" not in buf:
    buf += os.read(fd, 4096)
os.kill(pid, signal.SIGSTOP)  # the recorder acts on the SIGINT only once the target took its own
os.waitpid(pid, os.WUNTRACED)
os.write(fd, b"\x03")  # the terminal's VINTR: SIGINT to the foreground process group
while b"sigint\r\n" not in buf:
    buf += os.read(fd, 4096)
os.kill(pid, signal.SIGCONT)
os.kill(pid, signal.SIGTERM)  # to the recorder alone: passed on after any SIGINT it passed on
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:  # EIO: the session ended
        break
    if not data:
        break
    buf += data
_, status = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace").replace("\r", ""))
print("status=%d" % os.waitstatus_to_exitcode(status))
PY
cat "$TMP/out"
grep -q 'sigints=1$' "$TMP/out" || die "the target did not see exactly one SIGINT"
grep -q '^status=42$' "$TMP/out" || die "gapscope did not exit with the target's status 42"
"$GS" script "$TMP/t.gsc" >"$TMP/script"
grep -q '^# exit pid=[0-9]* status=0x2a00 ' "$TMP/script" || die "exit not in the trace"
grep -q '^# end ' "$TMP/script" || die "trace not finished"
assert_eq "$(grep -c 'probe:malloc_trim' "$TMP/script")" 3 "malloc_trim events"

# The same from kill(2) of the process group (kill -INT -PGID), which the recorder tells from a
# signal to it alone by the sender's kill(2) (bpf/sigfwd.bpf.c).
python3 - "$GS" "$TMP/k.gsc" "$TMP/target" >"$TMP/out" <<'PY'
import os, signal, subprocess, sys
gs, out, target = sys.argv[1:]
p = subprocess.Popen([gs, "record", "-o", out, "--", target, "--wait-sigint", "--then-sigterm"],
                     stdout=subprocess.PIPE, start_new_session=True)
lines = []
for line in p.stdout:
    lines.append(line.decode())
    if line == b"ready\n":
        os.kill(p.pid, signal.SIGSTOP)
        os.waitpid(p.pid, os.WUNTRACED)
        os.killpg(p.pid, signal.SIGINT)
    elif line == b"sigint\n":
        os.kill(p.pid, signal.SIGCONT)
        os.kill(p.pid, signal.SIGTERM)
p.wait()
sys.stdout.write("".join(lines))
print("status=%d" % p.returncode)
PY
cat "$TMP/out"
grep -q 'sigints=1$' "$TMP/out" || die "kill of the group: the target did not see exactly one SIGINT"
grep -q '^status=42$' "$TMP/out" || die "kill of the group: not the target's status 42"
"$GS" script "$TMP/k.gsc" | grep -q '^# exit pid=[0-9]* status=0x2a00 ' ||
	die "kill of the group: exit not in the trace"
echo ok
