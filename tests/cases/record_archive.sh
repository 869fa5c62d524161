#!/usr/bin/env bash
# record --archive (loader/archive.c) and the report's use of it (reports/symbols/archived.c), on a copy
# of zkengine-nofp and simcuda (no frame pointers: stacks come from DWARF unwinding of snapshots):
#   recorded with --archive and reported (A), then the copy moved away and reported again (B): B's
#     folded stacks and gap chains are A's, frame for frame, and B says it used archived files
#     where A, with the files in place, used none;
#   recorded without --archive, the same report after the move loses the engine's names;
#   an archived file's bytes damaged (the chunk's CRCs made right again) is said in a warning and
#     counted, and the report still completes.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
GS=$PWD/$BUILD/gapscope
[ -x "$BUILD/zkengine-nofp" ] || die "zkengine-nofp not built"
[ -f "$BUILD/simcuda/libcuda.so.1" ] || die "simcuda not built"
ENG=$TMP/eng
mkdir -p "$ENG/simcuda"
cp "$BUILD/zkengine-nofp" "$ENG/"
cp "$BUILD/simcuda/libcuda.so.1" "$ENG/simcuda/"

# record NAME ARGS...: $TMP/NAME.gsc, its stderr in $TMP/NAME.err
record() {
	local name=$1
	shift
	timeout 300 "$GS" record -o "$TMP/$name.gsc" "$@" -- "$ENG/zkengine-nofp" --device sim \
		--scenario tracker-trim >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.out" "$TMP/$name.err"; die "record $name"; }
}
# report NAME TRACE: $TMP/NAME.rep, summary.txt in $TMP/NAME.txt, stderr in $TMP/NAME.rerr
report() {
	"$GS" report "$TMP/$2.gsc" -o "$TMP/$1.rep" >"$TMP/$1.txt" 2>"$TMP/$1.rerr" ||
		{ cat "$TMP/$1.rerr"; die "report $1"; }
}

record arch --archive --uncompressed # (uncompressed: forged below byte by byte)
record plain
grep -E '^gapscope: archive: [1-9][0-9]* files, [0-9.]+ MB kept in the trace' "$TMP/arch.err" ||
	{ cat "$TMP/arch.err"; die "no archive line"; }
grep -q 'archive' "$TMP/plain.err" && die "an archive line without --archive"
"$GS" script "$TMP/arch.gsc" >"$TMP/arch.script"
grep -qE "^# archive pid=[0-9]+ part=0 bytes=[0-9]+ at=0 of=[0-9]+ (dwarf )?build-id=[0-9a-f]{40} $ENG/zkengine-nofp\$" \
	"$TMP/arch.script" || die "script: no '# archive' line for the engine"
grep -q "^# archive .* $ENG/simcuda/libcuda.so.1\$" "$TMP/arch.script" ||
	die "script: no '# archive' line for simcuda"
"$GS" script "$TMP/plain.gsc" | grep -q '^# archive' && die "script: archive lines without --archive"

report a arch
grep -q '^archive: [1-9][0-9]* files, 0 used, 0 damaged$' "$TMP/a.txt" ||
	{ grep archive "$TMP/a.txt"; die "A: the local files are not the ones used"; }
grep -q '^archive' "$TMP/plain.txt" 2>/dev/null && die "an archive line for a trace without one"

# Moved away: only the trace knows the engine's files now.
mv "$ENG" "$TMP/gone"
report b arch
report n plain
echo "== A: $(grep '^archive' "$TMP/a.txt"); B: $(grep '^archive' "$TMP/b.txt")"
grep -q '^archive: [1-9][0-9]* files, [2-9][0-9]* used, 0 damaged$' "$TMP/b.txt" ||
	{ grep archive "$TMP/b.txt"; die "B: the archived files are not used"; }
grep -q '^archive' "$TMP/n.txt" && die "an archive line for a trace without one"
diff -ru "$TMP/a.rep/gaps" "$TMP/b.rep/gaps" --exclude='*.svg' >"$TMP/ab.diff" ||
	{ head -40 "$TMP/ab.diff"; die "B's folded stacks differ from A's"; }

python3 - "$TMP" <<'EOF' || die "chains"
import glob, json, os, sys
tmp = sys.argv[1]
def chains(name):
    d = json.load(open(os.path.join(tmp, name + ".rep", "summary.json")))
    return d, [[(l["kind"], l.get("function"), l.get("lock"), l.get("frames")) for l in g["chain"]]
               for g in d["gaps"]]
a, ca = chains("a")
b, cb = chains("b")
n, cn = chains("n")
assert ca and ca == cb, "B's chains are not A's"
assert a["archive"]["used"] == 0 and b["archive"]["used"] >= 2, (a["archive"], b["archive"])
assert a["archive"]["files"] == b["archive"]["files"] >= 4, a["archive"]
assert "archive" not in n, n.get("archive")
assert a["stacks"] == b["stacks"], (a["stacks"], b["stacks"])
ENGINE = {"finalizer_main", "gpu_worker_main", "process_partition_result"}
def names(chs):
    return {f for ch in chs for l in ch for f in (l[3] or [])}
assert ENGINE <= names(ca), ENGINE - names(ca)
assert not ENGINE & names(cn), "names without the files or an archive: %s" % (ENGINE & names(cn))
unnamed = [f for f in names(cn) if "zkengine-nofp+0x" in f or f.startswith("[unknown]")]
assert unnamed, "without the archive no frame lost its name"
folded = "".join(open(p).read() for p in glob.glob(os.path.join(tmp, "b.rep/gaps/*.folded")))
assert "finalizer_main" in folded and "zkengine-nofp+0x" not in folded, "B's folded stacks"
print("A == B: %d gaps, %d chain links; without --archive %d frames unnamed"
      % (len(ca), sum(map(len, ca)), len(unnamed)))
EOF

# A byte of the engine's archived file flipped, the chunk's CRCs recomputed: the report meets it.
python3 - "$TMP/arch.gsc" "$TMP/forged.gsc" <<'EOF' || die "cannot forge the trace"
import struct, sys, zlib
data = bytearray(open(sys.argv[1], "rb").read())
off = struct.unpack_from("<I", data, 12)[0]  # hdr_size
done = False
while off + 32 <= len(data) and not done:
    magic, ln, seq, nrec, crc, hcrc, pad = struct.unpack_from("<IIQIIII", data, off)
    p, end = off + 32, off + 32 + ln
    while p + 8 <= end:
        typ, size = struct.unpack_from("<II", data, p)
        if typ == 0x10E and b"zkengine-nofp\0" in data[p:p + size]:
            data[p + size - 9] ^= 0x5A  # in the file's bytes, past the path
            done = True
            break
        p += (size + 7) & ~7
    if done:
        struct.pack_into("<I", data, off + 20, 0)
        struct.pack_into("<I", data, off + 20, zlib.crc32(bytes(data[off:end])))
    off = end
assert done, "no archive record of the engine"
open(sys.argv[2], "wb").write(data)
EOF
report f forged
grep -q "^gapscope: warning: $TMP/forged.gsc: 1 archived files damaged, not used" "$TMP/f.rerr" ||
	{ cat "$TMP/f.rerr"; die "no warning for the damaged archive"; }
grep -q '^archive: [1-9][0-9]* files, [1-9][0-9]* used, 1 damaged$' "$TMP/f.txt" ||
	{ grep archive "$TMP/f.txt"; die "the damaged file is not counted"; }
echo "damaged: $(grep '^archive' "$TMP/f.txt")"
echo ok
