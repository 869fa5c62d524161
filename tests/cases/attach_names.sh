#!/usr/bin/env bash
# Kernel names when attaching after the lookups (record -p): a launch of a handle no lookup in
# the trace named gets its name from the handle (*(handle + 8), driver 580's layout; the stand-in
# libcuda lays its handles out so), marked kernel=NAME(handle). Every lookup the recorder does
# see checks that layout; one that contradicts it turns the names from handles off for the
# library, also those read before the contradiction: such launches show kernel=?, never a wrong
# name. tests/record/names_target.c looks up three kernels, waits to be attached (a line on its
# stdin once the recorder said "recording pid"), launches them, looks up a fourth, launches all.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes

mkdir -p "$TMP/lib"
$CC -O2 -g -shared -fPIC -o "$TMP/lib/libcuda.so.1" tests/record/fakecuda.c
$CC -O2 -g -o "$TMP/names_target" tests/record/names_target.c -ldl

cd "$GAPSCOPE_ROOT"
python3 - "$TMP" <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp = sys.argv[1]
N = 5
OLD = {"alpha": "k_alpha", "beta": "_Z6k_betaPfS_i", "gamma": "k_gamma"}


def run(layout):
    trace = os.path.join(tmp, "names-%s.gsc" % layout)
    env = dict(os.environ, FAKECUDA_NAME_LAYOUT=layout)
    t = subprocess.Popen([os.path.join(tmp, "names_target"), os.path.join(tmp, "lib/libcuda.so.1"),
                          str(N)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    out = Lines(t.stdout)
    if out.wait(r"^ready$") is None:
        die("names_target never got ready: %s" % out.join())
    rec, err = start_record(t.pid, trace, ["--all-launches"])
    t.stdin.write(b"go\n")
    t.stdin.close()
    t.wait()
    rec.wait()
    lines = out.join()
    if t.returncode != 0 or rec.returncode != 0:
        die("target exit %s, recorder exit %s:\n%s" % (t.returncode, rec.returncode,
                                                      "\n".join(err.join())))
    h = dict(l.split("=", 1) for l in lines if "=" in l)
    rc, txt, warn = script(trace, "--no-stacks")
    open(os.path.join(tmp, "script-%s.txt" % layout), "w").write(txt)
    if rc != 0 or warn.strip():
        die("gapscope script failed or warned: %s" % warn)
    if not re.search(r"^# losses total=0 ", txt, re.M):
        die("losses: %s" % re.findall(r"^# losses.*", txt, re.M))
    launches = {}
    for m in re.finditer(r"cuda:cuLaunchKernel(?:Ex)? kernel=(\S+) func=(0x[0-9a-f]+)", txt):
        launches.setdefault(m.group(2), []).append(m.group(1))
    stats = re.findall(r"^# kernel-names-from-handles (.*)$", txt, re.M)
    if not stats:
        die("no kernel-names-from-handles line")
    print("%s layout: %s" % (layout, stats[-1]))
    return h, launches, dict(kv.split("=") for kv in stats[-1].split()), txt


def expect(what, got, want):
    if got != want:
        die("%s: got %r, expected %r" % (what, got, want))


# The driver's layout: the three kernels looked up before the attach are named from their
# handles, each handle read once; the fourth by its lookup, which confirms the layout.
h, launches, st, txt = run("driver")
for k, name in OLD.items():
    expect("launches of %s" % k, launches.get(h[k]), [name + "(handle)"] * (2 * N))
expect("launches of delta", launches.get(h["delta"]), ["k_delta"] * N)
expect("handles read", len(re.findall(r"cuda:kernel-name name=\S+ handle=", txt)), 3)
if re.search(r"cuda:kernel-name .* untrusted", txt):
    die("names from handles marked untrusted with a layout that agrees")
if not re.search(r"cuda:cuModuleGetFunction name=k_delta .* handle-name=agrees", txt):
    die("the lookup after the attach was not checked against the handle")
expect("counts", (st["checked"], st["agreed"], st["disagreed"], st["named"], st["off"]),
       ("1", "1", "0", "3", "0"))

# Another layout (offset 8 points to a plausible but wrong name): the lookup contradicts it;
# every launch of the old kernels shows kernel=? (those before the contradiction too), the
# looked-up one its name, and the wrong names appear nowhere as a kernel.
h, launches, st, txt = run("other")
for k in OLD:
    expect("launches of %s" % k, launches.get(h[k]), ["?"] * (2 * N))
expect("launches of delta", launches.get(h["delta"]), ["k_delta"] * N)
if re.search(r"kernel=not_", txt):
    die("a wrong name from a handle reached a launch")
if not re.search(r"cuda:cuModuleGetFunction name=k_delta .* handle-name=DISAGREES", txt):
    die("the contradicting lookup is not marked")
expect("counts", (st["checked"], st["disagreed"], st["off"]), ("1", "1", "1"))
print("ok")
PY
