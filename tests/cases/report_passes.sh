#!/usr/bin/env bash
# How often `gapscope report` reads a trace's bytes, as the reader counts it (report -v): three
# passes at most, the pre-pass (the program's name, and the records written late where the
# file's header flags say it has them: CUPTI's activity, perf maps, Python code, archived files,
# cgroups), the analysis, the timeline. The last two read every chunk; the pre-pass too where
# the file has such records or an attached target (whose name is its main thread's last), else
# it ends early (a launched program's fuzz seed, 17 chunks). On the checked-in golden trace,
# that seed, the demo (zkengine tracker-trim, 16 partitions, on simcuda: cgroups) and
# ../shared/traces/jax_arch.gsc (attached, archived files and Python code), that last one left
# out, and said so, only where the file is absent beside the clone (a user's clone).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"
JAX=$GAPSCOPE_ROOT/../shared/traces/jax_arch.gsc

# passes TRACE [early]: report -v of TRACE, its counter line checked against the file's header;
# early: the pre-pass must end before the file does.
passes() {
	local name
	name=$(basename "$1" .gsc)
	"$GS" report -v -o "$TMP/$name.report" "$1" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; die "report -v $1"; }
	grep 'passes over the trace' "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; die "report -v of $1 printed no counter"; }
	python3 - "$1" "$TMP/$name.err" "${2:-}" <<'PY' || die "$1 read too often"
import os, re, struct, sys
path, err, early = sys.argv[1:]
hdr = open(path, "rb").read(32)
hdr_size, flags = struct.unpack("<I", hdr[12:16])[0], struct.unpack("<I", hdr[24:28])[0]
m = re.search(r"(\d+) passes over the trace \((\d+) opens, (\d+) chunks\): (\d+) of its "
              r"(\d+) bytes read, (\d+) decompressed", open(err).read())
assert m, "no counter line"
passes, opens, chunks, read, size, raw = map(int, m.groups())
body = size - hdr_size
assert size == os.path.getsize(path), "size %d, the file's %d" % (size, os.path.getsize(path))
assert passes == 3, "%d passes, expected 3" % passes
assert opens == passes, "%d opens for %d passes" % (opens, passes)
assert 2 * body <= read <= 3 * body, "%d bytes read of %d" % (read, body)
# TRACE_F_GPU_ACT, PERF_MAP, ARCHIVE, PYCODE, CGROUP (lib/trace.h): the pre-pass reads it all.
if flags & 0x1f:
    assert read == 3 * body, "%d bytes read, 3 x %d expected (flags 0x%x)" % (read, body, flags)
if early:
    assert read < 3 * body, "the pre-pass read all %d bytes" % body
print("ok: %s: %d passes (flags 0x%x), %.2f x its %d bytes read, %d decompressed" %
      (os.path.basename(path), passes, flags, read / body, body, raw))
PY
}

passes "$GAPSCOPE_ROOT/tests/golden/report/trace.gsc"
passes "$GAPSCOPE_ROOT/tests/fuzz/corpus/report/seed-zkengine.gsc" early

"$GS" record -o "$TMP/demo.gsc" -- "$ZK" --device sim --scenario tracker-trim --partitions 16 \
	>"$TMP/rec.out" 2>"$TMP/rec.err" || { cat "$TMP/rec.out" "$TMP/rec.err"; die "record"; }
passes "$TMP/demo.gsc"
# The counter changes nothing in the report: the same summary as without -v.
"$GS" report -o "$TMP/plain" "$TMP/demo.gsc" >"$TMP/plain.out" 2>/dev/null || die "report"
cmp "$TMP/plain.out" "$TMP/demo.out" || die "report -v printed another summary"

if [ ! -f "$JAX" ]; then
	echo "$JAX absent (the H200's traces are beside CI's clone only): not read"
	exit 0
fi
passes "$JAX"
