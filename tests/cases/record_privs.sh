#!/usr/bin/env bash
# record with the least privilege it needs (README: Privileges): as uid 65534 with exactly
# CAP_BPF (load the BPF programs, create their maps) and CAP_PERFMON (attach uprobes, tracepoints
# and perf events, read user memory and stacks from BPF), and no other capability, in its
# permitted, effective, inheritable, ambient and bounding sets. Nothing else is needed on a
# kernel that charges BPF maps to the memory cgroup (5.11 and later: no memlock rlimit to raise,
# no CAP_SYS_RESOURCE), with every tracepoint attached by BTF rather than through tracefs (root's
# only), and a target of our own uid (its /proc/PID/maps and mem need no CAP_DAC_READ_SEARCH nor
# CAP_SYS_PTRACE). Kernel addresses stay hidden (no CAP_SYSLOG): the recorder says so in one note
# and samples from cpu-clock timers.
#
# Checked: launch mode and -p record real traces with every event the targets say they made; the
# launched target runs with no capability; without CAP_BPF or CAP_PERFMON (or both) one line names
# each one missing, exit 1, no file; -p refuses a root process and one of another uid (65533) in
# one line, exit 1, no file.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "changes uid and grants capabilities"
command -v setpriv >/dev/null || die "setpriv (util-linux) not installed"
GS=$(realpath "$BUILD/gapscope")
ME=65534 OTHER=65533

# The files the unprivileged recorder reads, and a directory of its own for its traces.
chmod 755 "$TMP"
mkdir -p "$TMP/lib" "$TMP/out"
chown "$ME:$ME" "$TMP/out"
$CC -O2 -g -fno-omit-frame-pointer -shared -fPIC -o "$TMP/lib/libcuda.so.1" \
	tests/record/fakecuda.c
$CC -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/target" tests/record/target.c -ldl
$CC -O2 -g -o "$TMP/names_target" tests/record/names_target.c -ldl
chmod -R a+rX "$TMP/lib" "$TMP/target" "$TMP/names_target"

# as UID CAPS CMD...: CMD as UID with exactly CAPS (a setpriv list: "+bpf,+perfmon", or "").
as() {
	local uid=$1 caps=$2
	shift 2
	setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all$caps \
		--ambient-caps=-all$caps --bounding-set=-all$caps -- "$@"
}
CAPS=",+bpf,+perfmon"

# Launch mode.
N=7 T=4
rc=0
as $ME "$CAPS" "$GS" record --all-launches -o "$TMP/out/t.gsc" -- "$TMP/target" --dlopen "$TMP/lib/libcuda.so.1" \
	--launches $N --trims $T --contend --exit 3 >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
cat "$TMP/stdout" "$TMP/stderr"
assert_eq "$rc" 3 "exit status (the target's)"
assert_eq "$(stat -c '%u %a' "$TMP/out/t.gsc")" "$ME 600" "trace owner and mode"
"$GS" script --no-stacks "$TMP/t.gsc" >/dev/null 2>&1 && die "a trace where none was asked for"
"$GS" script --no-stacks "$TMP/out/t.gsc" >"$TMP/script"
count() { grep -c -- "$1" "$TMP/script" || true; }
pid=$(sed -n 's/^pid=//p' "$TMP/stdout")
assert_eq "$(count " $pid/$pid .* cuda:cuLaunchKernel kernel=gs_test_kernel .* grid=(7,8,9) ")" $N \
	"cuLaunchKernel events"
assert_eq "$(count 'cuda:cuLaunchKernelEx kernel=gs_lib_kernel ')" $N "cuLaunchKernelEx events"
assert_eq "$(count 'cuda:cuLaunch')" $((3 * N)) "launch events"
assert_eq "$(count 'probe:malloc_trim ')" $T "malloc_trim events"
waiter=$(sed -n 's/^waiter_tid=//p' "$TMP/stdout")
assert_eq "$(count " $waiter/$pid .* futex:wait .* owner=$pid ")" 1 "the contended futex wait"
grep -q "^# exit pid=$pid status=0x300 " "$TMP/script" || die "no exit record"
grep -q '^# end ' "$TMP/script" || die "trace not finished"

# The launched target gets none of the recorder's capabilities (ambient and inheritable ones
# are cleared).
as $ME "$CAPS" "$GS" record -o "$TMP/out/caps.gsc" -- grep '^Cap' /proc/self/status \
	>"$TMP/caps" 2>/dev/null
cat "$TMP/caps"
# Its bounding set is as setpriv left it: lowering that takes CAP_SETPCAP, and with nothing
# inheritable or ambient it grants nothing.
for set in Inh Prm Eff Amb; do
	assert_eq "$(sed -n "s/^Cap$set:[[:space:]]*//p" "$TMP/caps")" 0000000000000000 "target's Cap$set"
done
assert_eq "$(sed -n "s/^CapBnd:[[:space:]]*//p" "$TMP/caps")" 000000c000000000 "target's CapBnd"

# Without them: one line naming each one missing, exit 1, no file.
refused() { # WHAT EXPECTED-LINE-PATTERN UID CAPS ARGS...
	local what=$1 pattern=$2 uid=$3 caps=$4
	shift 4
	rc=0
	as "$uid" "$caps" "$GS" record -o "$TMP/out/no.gsc" "$@" >"$TMP/stdout" 2>"$TMP/stderr" ||
		rc=$?
	cat "$TMP/stderr"
	assert_eq "$rc" 1 "$what: exit status"
	assert_eq "$(wc -l <"$TMP/stderr")" 1 "$what: lines on stderr"
	grep -Eq "^gapscope: $pattern" "$TMP/stderr" || die "$what: not the line expected"
	[ -e "$TMP/out/no.gsc" ] && die "$what: a trace was written"
	[ -s "$TMP/stdout" ] && die "$what: the target ran"
	return 0
}
BPF='CAP_BPF \(to load the BPF programs\)'
PERFMON='CAP_PERFMON \(to attach uprobes, tracepoints and perf events\)'
refused "no capability" "missing capabilities: $BPF, $PERFMON; .*\(uid $ME\)$" $ME "" -- /bin/echo x
refused "CAP_PERFMON only" "missing capabilities: $BPF; " $ME ",+perfmon" -- /bin/echo x
refused "CAP_BPF only" "missing capabilities: $PERFMON; " $ME ",+bpf" -- /bin/echo x

# -p: a target of our own uid is recorded; a root process and one of another uid are refused.
cd "$GAPSCOPE_ROOT"
python3 - "$TMP" "$ME" "$OTHER" "$CAPS" <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, me, other, caps = sys.argv[1:]
N = 5


def setpriv(uid, caps):
    return ["setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups",
            "--inh-caps=-all" + caps, "--ambient-caps=-all" + caps, "--bounding-set=-all" + caps,
            "--"]


def record(pid, trace):
    return subprocess.Popen(setpriv(me, caps) + [GS, "record", "--all-launches", "-o", trace, "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


t = subprocess.Popen(setpriv(me, "") + [os.path.join(tmp, "names_target"),
                                          os.path.join(tmp, "lib/libcuda.so.1"), str(N)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = Lines(t.stdout)
if out.wait(r"^ready$") is None:
    die("names_target never got ready: %s" % out.join())
# Without capabilities, -p of our own process is refused too (in one line, before anything).
r = subprocess.run(setpriv(me, "") + [GS, "record", "-o", os.path.join(tmp, "out/no.gsc"), "-p",
                                      str(t.pid)], capture_output=True, text=True)
if (r.returncode != 1 or len(r.stderr.splitlines()) != 1 or
        not r.stderr.startswith("gapscope: missing capabilities: CAP_BPF ") or
        os.path.exists(os.path.join(tmp, "out/no.gsc"))):
    die("-p without capabilities: exit %d, stderr %r" % (r.returncode, r.stderr))
trace = os.path.join(tmp, "out/p.gsc")
rec = record(t.pid, trace)
err = Lines(rec.stderr, echo="recorder: ")
if err.wait(r"^gapscope: recording pid %d " % t.pid) is None:
    rec.wait()
    die("the recorder never said it was recording (exit %s)" % rec.returncode)
t.stdin.write(b"go\n")
t.stdin.close()
t.wait()
rec.wait()
if t.returncode != 0 or rec.returncode != 0:
    die("target exit %s, recorder exit %s" % (t.returncode, rec.returncode))
h = dict(l.split("=", 1) for l in out.join() if "=" in l)
rc, txt, warn = script(trace, "--no-stacks")
if rc != 0 or warn.strip():
    die("gapscope script failed or warned: %s" % warn)
launches = {}
for m in re.finditer(r" %d/%d .* cuda:cuLaunchKernel(?:Ex)? kernel=(\S+) func=(0x[0-9a-f]+)" %
                     (t.pid, t.pid), txt):
    launches.setdefault(m.group(2), []).append(m.group(1))
want = {h["alpha"]: ["k_alpha(handle)"] * (2 * N), h["beta"]: ["_Z6k_betaPfS_i(handle)"] * (2 * N),
        h["gamma"]: ["k_gamma(handle)"] * (2 * N), h["delta"]: ["k_delta"] * N}
if launches != want:
    die("-p launches: got %r, expected %r" % (launches, want))
print("-p, uid %s: %d launches recorded" % (me, sum(len(v) for v in launches.values())))


def refused(what, pid, uid):
    trace = os.path.join(tmp, "out/refused.gsc")
    r = subprocess.run(setpriv(me, caps) + [GS, "record", "-o", trace, "-p", str(pid)],
                       capture_output=True, text=True)
    print(what + ": " + r.stderr, end="")
    lines = r.stderr.splitlines()
    want = (r"^gapscope: cannot attach to pid %d: not permitted to trace it \(it runs as uid %s, "
            r"we as uid %s; needs the same user or CAP_SYS_PTRACE\)$" % (pid, uid, me))
    if r.returncode != 1 or len(lines) != 1 or not re.match(want, lines[0]):
        die("%s: exit %d, stderr %r" % (what, r.returncode, r.stderr))
    if os.path.exists(trace):
        die("%s: a trace was written" % what)


refused("a root process", os.getpid(), "0")
o = subprocess.Popen(setpriv(other, "") + [sys.executable, "-c",
                                           "import sys; print('ready', flush=True); sys.stdin.read()"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
if Lines(o.stdout).wait(r"^ready$") is None:
    die("the other uid's process never got ready")
refused("uid %s's process" % other, o.pid, other)
o.stdin.close()
o.wait()
print("ok")
PY
