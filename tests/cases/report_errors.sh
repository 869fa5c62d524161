#!/usr/bin/env bash
# gapscope report on bad input, built with ASan and UBSan (into build/asan/): a missing file, a
# file that is no trace, bad options and an existing output directory each give one line and a
# non-zero exit (bad options: argp's message); an empty trace (the header alone, as a recorder
# killed at once leaves it) is an error, one without CUDA events says so; traces cut at random
# offsets or with bytes overwritten give a report of what could be read and say what was not;
# a version 1 trace (before the off-CPU system call) is read, its blocked reasons unknown.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "records real traces"
ASAN_BIN=$BUILD/asan/gapscope
# The report's objects are rebuilt every time (a header change must reach each of them).
rm -rf "$ASAN_BIN" "$BUILD/asan/reports"
make -s -j2 BUILD="$BUILD/asan" CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all" \
	LDFLAGS="-fsanitize=address,undefined" "$ASAN_BIN" >/dev/null ||
	die "cannot build the sanitized gapscope"
ASAN=$TMP/asan-report
printf '#!/bin/sh\nexec "%s" report "$@"\n' "$PWD/$ASAN_BIN" >"$ASAN"
chmod +x "$ASAN"
export ASAN_OPTIONS=exitcode=99:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:exitcode=98:print_stacktrace=1
${CC} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" tests/report/feeder.c -ldl
# A second of feeding: several chunks (one every 200 ms), so that a cut leaves whole ones.
timeout 120 "$GS" record -o "$TMP/t.gsc" -- "$TMP/feeder" "$LIBCUDA" sleep 40 25 >/dev/null 2>&1 ||
	die "record the feeder"
timeout 120 "$GS" record -o "$TMP/nocuda.gsc" -- sleep 0.05 >/dev/null 2>&1 || die "record sleep"

# one_line CMD...: fails with exactly one line on stderr, no sanitizer report.
one_line() {
	local rc=0
	"$@" >"$TMP/o" 2>"$TMP/e" || rc=$?
	[ "$rc" -ne 0 ] || die "$*: exit 0"
	[ "$rc" -lt 98 ] || { cat "$TMP/e"; die "$*: sanitizer error"; }
	[ "$(wc -l <"$TMP/e")" -eq 1 ] || { cat "$TMP/e"; die "$*: not one line"; }
	echo "$*: $(cat "$TMP/e")"
}
one_line "$ASAN" "$TMP/missing.gsc" -o "$TMP/r0"
echo "not a trace" >"$TMP/junk"
one_line "$ASAN" "$TMP/junk" -o "$TMP/r0"
mkdir "$TMP/exists"
one_line "$ASAN" "$TMP/t.gsc" -o "$TMP/exists"
# Bad options: argp's message (and its usage hint), a non-zero exit.
for opt in "--min-gap abc" "--format xml" "--top -1"; do
	rc=0
	"$ASAN" "$TMP/t.gsc" -o "$TMP/r0" $opt >/dev/null 2>"$TMP/e" || rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 98 ] || die "$opt: exit $rc"
	grep -q -- "${opt%% *}" "$TMP/e" || die "$opt: the error does not name the option"
done
[ ! -e "$TMP/r0" ] || die "a failed command left its output directory"

# Intact: the sanitized build writes what the normal one does.
"$ASAN" "$TMP/t.gsc" -o "$TMP/exists" -f --format json >"$TMP/asan.json" || die "sanitized report"
"$GS" report "$TMP/t.gsc" -o "$TMP/plain" --format json >"$TMP/plain.json" || die "report"
cmp -s "$TMP/asan.json" "$TMP/plain.json" || die "sanitized and plain reports differ"
[ -s "$TMP/exists/gaps/all.folded" ] && [ -s "$TMP/exists/gaps/0001.folded" ] ||
	die "no folded stacks"
cmp -s "$TMP/exists/summary.json" "$TMP/asan.json" || die "--format json is not summary.json"

# No CUDA events; an empty trace (the file header alone).
"$ASAN" "$TMP/nocuda.gsc" -o "$TMP/r1" >"$TMP/o" 2>"$TMP/e" || die "report without CUDA"
grep -q 'no CUDA events' "$TMP/e" "$TMP/o" || die "no word of the missing CUDA events"
head -c 32 "$TMP/t.gsc" >"$TMP/empty.gsc"
rc=0
"$ASAN" "$TMP/empty.gsc" -o "$TMP/r2" >"$TMP/o" 2>"$TMP/e" || rc=$?
[ "$rc" -ne 0 ] || die "report of an empty trace: exit 0"
assert_eq "$(cat "$TMP/e")" "gapscope: $TMP/empty.gsc holds no records: its recorder ended before writing any" \
	"report of an empty trace"
[ ! -e "$TMP/r2" ] || die "an empty trace left a report directory"

# Damaged copies, and a version 1 header.
python3 - "$TMP" "$ASAN" <<'PY' || die "damaged traces"
import os, random, struct, subprocess, sys, zlib
tmp, asan = sys.argv[1], sys.argv[2]
data = open(os.path.join(tmp, "t.gsc"), "rb").read()
rnd = random.Random(11)
def report(name, blob, expect, empty_ok=False):
    p = os.path.join(tmp, name)
    open(p, "wb").write(blob)
    r = subprocess.run([asan, p, "-o", p + ".rep"], capture_output=True, text=True)
    # Cut inside its first chunk, a trace holds no record: an error, as for the header alone.
    if empty_ok and r.returncode == 1 and r.stderr.endswith(
            "holds no records: its recorder ended before writing any\n"):
        return False
    if r.returncode != 0:
        sys.exit("%s: exit %d: %s" % (name, r.returncode, r.stderr))
    if expect not in r.stderr + r.stdout:
        sys.exit("%s: no '%s' in: %s" % (name, expect, r.stderr))
    return True
reported = 0
for i in range(8):
    cut = rnd.randrange(64, len(data) - 8)
    reported += report("cut%d.gsc" % i, data[:cut], "did not finish", empty_ok=True)
if reported < 4:
    sys.exit("only %d of 8 cut traces were reported" % reported)
for i in range(8):
    b = bytearray(data)
    for _ in range(4):
        b[rnd.randrange(64, len(b))] ^= 0xff
    report("flip%d.gsc" % i, bytes(b), "corrupt chunk")
hdr = bytearray(data[:32])
struct.pack_into("<I", hdr, 8, 1)
struct.pack_into("<I", hdr, 28, 0)
struct.pack_into("<I", hdr, 28, zlib.crc32(bytes(hdr)))
report("v1.gsc", bytes(hdr) + data[32:], "gaps:")
print("damaged traces: reported, no sanitizer errors")
PY
grep -q 'syscall unknown' "$TMP/v1.gsc.rep/summary.json" || die "version 1: blocked reasons not unknown"
grep -q 'clock_nanosleep' "$TMP/plain/summary.json" || die "version 2: the sleep is not named"
