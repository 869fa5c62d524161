#!/usr/bin/env bash
# The causes table of a real JAX program (../shared/traces/jax_arch.gsc, recorded on an H200
# with --archive, README there): each step draws normals in numpy (make_batch, jax_prep.py:15)
# and sorts each row (:16) while the GPU waits. The on-CPU row names make_batch with its file,
# share >= 0.8, and its lines list both :15 and :16, in summary.json and in summary.txt. The
# trace is attached and its gaps are the API tier's, which other work changes: the on-CPU row
# and its breakdown are checked, not the gaps. Where ../shared/traces/ is absent beside the
# clone (a user's clone), SKIP.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$GS"
TRACE=$GAPSCOPE_ROOT/../shared/traces/jax_arch.gsc
[ -f "$TRACE" ] || skip "$TRACE absent (the H200's traces are beside CI's clone only)"
"$GS" report -o "$TMP/rep" "$TRACE" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; die "report"; }
sed -n '/^root causes/,/^longest gaps/p' "$TMP/out"
python3 - "$TMP/rep/summary.json" "$TMP/out" <<'PY' || die "jax_arch.gsc's causes"
import json, re, sys
s = json.load(open(sys.argv[1]))
txt = open(sys.argv[2]).read()
row = "make_batch (jax_prep.py)"
cpu = [c for c in s["causes"] if c["kind"] == "on_cpu"]
assert cpu, "no on-CPU row"
c = cpu[0]
assert c["function"] == row, "the on-CPU row is %s, not %s" % (c["function"], row)
assert c["share"] >= 0.8, "%s: share %.3f" % (row, c["share"])
lines = {p["name"]: p["share"] for p in c.get("lines", [])}
for want in ("jax_prep.py:15", "jax_prep.py:16"):
    assert lines.get(want, 0) > 0, "%s's lines lack %s: %s" % (row, want, lines)
leaves = [p["name"] for p in c.get("leaves", [])]
assert "random_standard_normal_f" in leaves, "the draw is not a leaf: %s" % leaves
m = re.search(r"^\s+[0-9.]+%\s+on_cpu\s+" + re.escape(row) + r"\s.*\n\s+lines: (.*)$", txt, re.M)
assert m and "jax_prep.py:15" in m.group(1) and "jax_prep.py:16" in m.group(1), \
    "summary.txt lacks %s with its lines" % row
print("ok: %s %.1f%%, lines %s, leaves %s" % (row, 100 * c["share"], lines, leaves))
PY
