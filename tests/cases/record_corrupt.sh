#!/usr/bin/env bash
# Issue 5, "what it must show" 4: the trace reader (gapscope script) built with ASan and UBSan
# reads real traces cut at random offsets and with corrupted bytes, never crashes, and says what
# it skipped. Three kinds of damage, 40 files each (seeded, reproducible):
#   cut:     truncated at a random offset: read to the last whole chunk, "cut off" warning
#   flip:    random bytes overwritten: the chunk fails its CRC, "corrupt chunk(s) skipped",
#            later chunks still read
#   forged:  bytes of a chunk's records overwritten and the chunk's CRC recomputed, so the
#            record parser itself meets garbage (sizes, counts, strings)
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "records a real trace"
cd "$GAPSCOPE_ROOT"
$CC -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-D_GNU_SOURCE -Ibpf -Ilib -Ireports -Ireports/render -Ireports/analysis -Ireports/symbols -Icmd -o "$TMP/script-asan" tests/record/script_main.c \
	cmd/script.c cmd/script_meta.c reports/analysis/launches.c reports/analysis/context.c reports/analysis/knames.c reports/symbols/perfmap.c \
	reports/analysis/reader.c reports/symbols/addrmaps.c lib/idmap.c \
	lib/strtab.c lib/vec.c lib/escape.c reports/analysis/kinds.c lib/ksyms.c lib/numarg.c lib/trace.c lib/syscalls.c \
	lib/trace_read.c lib/trace_names.c cmd/cli.c -lz -lzstd
$CC -O2 -g -pthread -o "$TMP/target" tests/record/target.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
# Several chunks by their size, not by the clock: the recorder writes a chunk at 256 KiB of
# records or every 200 ms, and this run's records came to two chunks or five as the machine
# was busy. 2000 rounds of synchronizing calls are 12000 records of about 150 bytes, 1.8 MB: six
# chunks or more are full ones, however long the recording took.
"$BUILD/gapscope" record -o "$TMP/t.gsc" -- "$TMP/target" --dlopen "$TMP/libcuda.so.1" \
	--launches 2000 --syncs 2000 --trims 3 --contend --burn 0.3 >/dev/null 2>&1
"$TMP/script-asan" "$TMP/t.gsc" >"$TMP/clean.txt" 2>"$TMP/clean.err" ||
	{ cat "$TMP/clean.err"; die "the sanitized reader fails on the intact trace"; }
[ -s "$TMP/clean.err" ] && { cat "$TMP/clean.err"; die "warnings on the intact trace"; }
echo "intact: $(wc -l <"$TMP/clean.txt") lines, $(stat -c %s "$TMP/t.gsc") bytes"

python3 - "$TMP" <<'PY'
import os, random, struct, subprocess, sys, zlib
tmp = sys.argv[1]
data = open(os.path.join(tmp, "t.gsc"), "rb").read()
rnd = random.Random(5)
env = dict(os.environ, ASAN_OPTIONS="exitcode=99:detect_leaks=1",
           UBSAN_OPTIONS="halt_on_error=1:exitcode=98:print_stacktrace=1")

# Chunks: (offset, payload length) from the intact file. File header 32 bytes, chunk header 24.
FH, CH = 32, 32
chunks, off = [], FH
while off + CH <= len(data):
    magic, ln = struct.unpack_from("<II", data, off)
    assert magic == 0x4b434753
    chunks.append((off, ln))
    off += CH + ln
assert off == len(data) and len(chunks) >= 3, "want a trace of several chunks"
print("%d chunks" % len(chunks))

def run(name, blob, expect):
    path = os.path.join(tmp, name)
    open(path, "wb").write(blob)
    r = subprocess.run([os.path.join(tmp, "script-asan"), path], capture_output=True, text=True, errors="replace",
                       env=env)
    crashed = r.returncode not in (0, 1) or "Sanitizer" in r.stderr or "runtime error" in r.stderr
    if crashed:
        print(r.stderr[-3000:])
        sys.exit("FAIL: %s: the reader crashed (exit %d)" % (name, r.returncode))
    if r.returncode == 1 and expect != "header":
        sys.exit("FAIL: %s: refused: %s" % (name, r.stderr))
    if expect and expect != "header" and expect not in r.stderr:
        sys.exit("FAIL: %s: no '%s' warning: %s" % (name, expect, r.stderr))
    warn = [l for l in r.stderr.splitlines() if "skipped" in l or "cut off" in l]
    return r.stdout.count("\n"), warn

counts = {}
for i in range(40):
    cut = rnd.randrange(1, len(data))
    expect = "header" if cut < FH else ("cut off" if not any(o + CH + l == cut for o, l in chunks) and cut > FH else "did not finish")
    n, w = run("cut%d.gsc" % i, data[:cut], expect)
    counts.setdefault("cut", []).append(n)
    if i < 3:
        print("cut at %d: %d lines; %s" % (cut, n, "; ".join(w)))
for i in range(40):
    b = bytearray(data)
    o, l = chunks[rnd.randrange(1, len(chunks))]
    for _ in range(rnd.randrange(1, 9)):
        b[rnd.randrange(o, o + CH + l)] ^= rnd.randrange(1, 256)
    n, w = run("flip%d.gsc" % i, bytes(b), "corrupt chunk")
    counts.setdefault("flip", []).append(n)
    if i < 3:
        print("flipped bytes in chunk at %d: %d lines; %s" % (o, n, "; ".join(w)))
for i in range(40):
    b = bytearray(data)
    o, l = chunks[rnd.randrange(0, len(chunks))]
    for _ in range(rnd.randrange(1, 33)):
        p = rnd.randrange(o + CH, o + CH + l)
        b[p] = rnd.choice([0, 0xff, 0x80, 0x7f, rnd.randrange(256)])
    struct.pack_into("<I", b, o + 20, 0)
    crc = zlib.crc32(bytes(b[o:o + CH + l]))
    struct.pack_into("<I", b, o + 20, crc)
    n, w = run("forged%d.gsc" % i, bytes(b), None)
    counts.setdefault("forged", []).append(n)
    if i < 3:
        print("forged records in chunk at %d: %d lines; %s" % (o, n, "; ".join(w) or "no skip"))
for k, v in counts.items():
    print("%s: 40 files, none crashed, %d..%d lines printed" % (k, min(v), max(v)))
PY
echo ok
