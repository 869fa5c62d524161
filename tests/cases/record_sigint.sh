#!/usr/bin/env bash
# Ctrl-C on a terminal reaches the recorded program exactly as without gapscope (once, from the
# terminal, not forwarded a second time); the recorder passes its exit status through and the
# trace is complete. A pseudo-terminal stands in for the user's terminal; the target says when it
# is ready for the Ctrl-C, so no timing is assumed.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs"
GS=$(realpath "$BUILD/gapscope")
CC=${CC:-cc}
$CC -O2 -g -pthread -o "$TMP/target" tests/record/target.c -ldl

python3 - "$GS" "$TMP/t.gsc" "$TMP/target" >"$TMP/out" <<'PY'
import os, pty, sys
gs, out, target = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(gs, [gs, "record", "-o", out, "--", target, "--trims", "3", "--wait-sigint"])
buf = b""
while b"ready" not in buf:
    buf += os.read(fd, 4096)
os.write(fd, b"\x03")  # the terminal's VINTR: SIGINT to the foreground process group
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
echo ok
