#!/usr/bin/env bash
# Your code first (reports/analysis/actionable.c): on-CPU time is named by the innermost frame of
# the user's own code, not by a library's. tests/record/ownfeeder.py (Debian's python3) feeds a
# simcuda device through ctypes and starves it in prepare(), its own function, which calls
# crunch() of a package installed in a site-packages folder, which serialises a large object
# with the standard library's json.dumps (Python frames of json/__init__.py and encoder.py over
# the C encoder). Attached with -p, SCHED_FIFO (on a loaded machine its bursts are on-CPU, not
# preempted). Checked, in summary.json:
# - the top cause is on_cpu "prepare (ownfeeder.py)" with share >= 0.8, and no row is named by a
#   frame of the package or of the standard library; its first leaf is native code beneath them;
# - with --own SITE_PACKAGES the package is the user's: the top cause is "crunch (ownpkg.py)",
#   share >= 0.8, the json frames still not a row; both reports' rows hold the same ns;
# - --own with a relative path that does not exist: an error naming it, a non-zero exit.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
PY=/usr/bin/python3
[ -x "$PY" ] || die "$PY missing (make deps)"
LIBCUDA=$PWD/$BUILD/simcuda/libcuda.so.1
[ -f "$LIBCUDA" ] || die "$LIBCUDA not built"

cd "$GAPSCOPE_ROOT"
SITE=$TMP/lib/python3/site-packages
mkdir -p "$SITE"
cat >"$SITE/ownpkg.py" <<'PKG'
import json


def crunch(rows):
    return len(json.dumps(rows))
PKG
python3 - "$TMP" "$PY" "$LIBCUDA" "$SITE" <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, "tests/record")
from attach import *

tmp, py, libcuda, site = sys.argv[1:5]
src = os.path.realpath("tests/record/ownfeeder.py")
trace = os.path.join(tmp, "own.gsc")
record_gated(["chrt", "-f", "1", py, src, libcuda, site, "40", "5000"], "ownfeeder", trace)


def report(name, *opts):
    rep = os.path.join(tmp, name)
    r = subprocess.run([GS, "report", "-f", "-o", rep] + list(opts) + [trace],
                       capture_output=True, text=True)
    if r.returncode != 0:
        die("report %s failed: %s" % (" ".join(opts), r.stderr))
    s = json.load(open(os.path.join(rep, "summary.json")))
    if not s["causes"]:
        die("no causes")
    for c in s["causes"][:5]:
        print("  %5.1f%% %-8s %-32s leaves %s" % (100 * c["share"], c["kind"], c["function"],
              ", ".join("%s %.0f%%" % (p["name"], 100 * p["share"])
                        for p in c.get("leaves", [])[:3])))
    return s


def check_top(s, row, library):
    top = s["causes"][0]
    if (top["kind"], top["function"]) != ("on_cpu", row) or top["share"] < 0.8:
        die("top cause %s %s %.3f, expected on_cpu %s >= 0.8" % (
            top["kind"], top["function"], top["share"], row))
    named = [c["function"] for c in s["causes"]
             if any(c["function"].endswith(" (%s)" % f) for f in library)]
    if named:
        die("rows named by a library's frame: %s" % named)
    leaves = top.get("leaves", [])
    if not leaves or leaves[0]["name"] == row or ".py" in leaves[0]["name"]:
        die("row %s: its first leaf is %s, not the native code beneath" % (
            row, leaves[0]["name"] if leaves else "none"))
    print("ok: %s %.1f%%, leaf %s" % (row, 100 * top["share"], leaves[0]["name"]))
    return sum(c["ns"] for c in s["causes"])


print("report:")
own_ns = check_top(report("rep"), "prepare (ownfeeder.py)",
                   ("ownpkg.py", "encoder.py", "json/__init__.py"))
print("report --own %s:" % site)
pkg_ns = check_top(report("rep-own", "--own", site), "crunch (ownpkg.py)",
                   ("encoder.py", "json/__init__.py"))
if own_ns != pkg_ns:
    die("the rows hold %d ns, with --own %d ns" % (own_ns, pkg_ns))

r = subprocess.run([GS, "report", "-f", "-o", os.path.join(tmp, "bad"), "--own",
                    "no/such/dir", trace], capture_output=True, text=True)
err = r.stderr.strip().split("\n")
if r.returncode == 0 or "--own: no/such/dir: No such file" not in err[0]:
    die("--own no/such/dir: exit %d, %s" % (r.returncode, r.stderr))
print("ok: %s" % err[0])
PY
