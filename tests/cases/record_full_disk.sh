#!/usr/bin/env bash
# A full disk during `record` (small tmpfs mounts) ends the recording with one line on stderr and
# exit status 1, while the target runs to its own end unharmed; the trace stays readable to its
# last whole chunk (script and report work on it and say it was cut; a trace cut before its
# first chunk holds no record, which report refuses in one line), and the line counts the
# chunk where it was cut and the events lost. A report or script output that cannot be written
# makes those fail too. A flight recorder whose --pprof-dir fills up goes on recording: the
# command's exit status, a whole trace, one line for the profiles not written, and no partial or
# empty profile left behind (a second fclose of a failed stream aborted it before). A --dump-dir
# that fills up: the summary counts the dumps whose files are there, and no file is left empty
# or cut short.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and mounts tmpfs"
GS=$(realpath "$BUILD/gapscope")
$CC -O2 -g -pthread -o "$TMP/target" tests/record/target.c -ldl
mounts=()
trap 'for m in "${mounts[@]}"; do umount "$m"; done; cleanup' EXIT

# small_disk NAME SIZE: a tmpfs of SIZE at $TMP/NAME
small_disk() {
	mkdir "$TMP/$1"
	mount -t tmpfs -o "size=$2,mode=1777" "gapscope-test-$1" "$TMP/$1"
	mounts+=("$TMP/$1")
}

# whole_chunks FILE: "CHUNKS RECORDS TAIL": the whole chunks at the start of FILE (each with its
# CRCs right and its sequence number in order), their records, and the bytes after them.
whole_chunks() {
	python3 - "$1" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
off = struct.unpack_from("<I", data, 12)[0]  # trace_file_hdr.hdr_size
chunks = records = 0
while len(data) - off >= 32:
    magic, length, seq, nrec, crc, hcrc = struct.unpack_from("<IIQIII", data, off)
    if magic != 0x4B434753 or seq != chunks or off + 32 + length > len(data):
        break
    hdr = bytearray(data[off:off + 32]); hdr[20:24] = b"\0\0\0\0"
    if zlib.crc32(data[off + 32:off + 32 + length], zlib.crc32(bytes(hdr))) != crc:
        break
    chunks += 1; records += nrec; off += 32 + length
print(chunks, records, len(data) - off)
PY
}

# no_cut_files DIR: no file under DIR is empty, and a report's gaps/all.folded holds every line
# of its gaps' files (NNNN.folded, or .seq-N.folded before the gaps are numbered): empty only
# where its report found no gap. Under load a dump's window can begin inside a gap longer than
# the flight ring holds (7 s of malloc_trim): its report finds none, its whole all.folded is
# empty.
no_cut_files() {
	python3 - "$1" <<'PY'
import collections, os, re, sys
bad = []
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        if os.path.getsize(os.path.join(root, f)) == 0 and f != "all.folded":
            bad.append(os.path.join(root, f))
    if "all.folded" in files:
        lines = lambda f: collections.Counter(open(os.path.join(root, f), errors="replace"))
        gap_files = [f for f in files if re.fullmatch(r"([0-9]{4}|\.seq-[0-9]+)\.folded", f)]
        gaps = sum((lines(f) for f in gap_files), collections.Counter())
        if lines("all.folded") != gaps:
            bad.append("%s/all.folded (%d lines, its gaps' files %d)" %
                       (root, sum(lines("all.folded").values()), sum(gaps.values())))
print(" ".join(bad))
PY
}

# full_disk SIZE TRIMS: records TRIMS malloc_trim calls onto a tmpfs of SIZE.
full_disk() {
	local name=disk-$1 rc=0 line chunk lost whole
	small_disk "$name" "$1"
	"$GS" record -o "$TMP/$name/t.gsc" -- "$TMP/target" --trims "$2" --exit 5 \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	echo "$1: exit $rc: $(cat "$TMP/$name.err")"
	assert_eq "$rc" 1 "$1: the recorder's exit status (its failure before the target's 5)"
	assert_eq "$(wc -l <"$TMP/$name.err")" 1 "$1: lines on stderr"
	line=$(cat "$TMP/$name.err")
	[[ $line =~ ^gapscope:\ cannot\ write\ $TMP/$name/t.gsc:\ No\ space\ left\ on\ device:\ trace\ cut\ at\ chunk\ ([0-9]+),\ ([0-9]+)\ events\ lost,\ recording\ stopped$ ]] ||
		die "$1: unexpected message"
	chunk=${BASH_REMATCH[1]} lost=${BASH_REMATCH[2]}
	# The target did all its work: the recorder let it run, then waited for it.
	grep -q "^trims=$2$" "$TMP/$name.out" || die "$1: the target did not finish: $(cat "$TMP/$name.out")"
	# The file is full, and readable to the chunk before the one cut.
	assert_eq "$(df --output=avail -B1 "$TMP/$name" | tail -1 | tr -d " ")" 0 "$1: bytes left on the disk"
	read -r whole records tail < <(whole_chunks "$TMP/$name/t.gsc")
	echo "$1: $whole whole chunks ($records records), $tail bytes after them, cut at chunk $chunk, $lost lost"
	assert_eq "$whole" "$chunk" "$1: whole chunks in the file"
	[ "$lost" -gt 0 ] || die "$1: nothing counted lost"
	"$GS" script "$TMP/$name/t.gsc" >"$TMP/$name.script" 2>"$TMP/$name.script.err" ||
		die "$1: script failed on the cut trace"
	grep -q "recording did not finish" "$TMP/$name.script.err" || die "$1: script does not say it was cut"
	if [ "$tail" -gt 0 ]; then
		grep -q "trace cut off: read to the last whole chunk" "$TMP/$name.script.err" ||
			die "$1: script does not report the cut-off tail"
	fi
	trims=$(grep -c 'probe:malloc_trim' "$TMP/$name.script" || true)
	[ "$trims" -lt "$2" ] || die "$1: all $2 trims in a cut trace"
	rc=0
	"$GS" report -o "$TMP/$name.report" "$TMP/$name/t.gsc" >/dev/null 2>"$TMP/$name.report.err" ||
		rc=$?
	if [ "$records" -eq 0 ]; then
		assert_eq "$rc" 1 "$1: report's exit status on a trace without records"
		assert_eq "$(cat "$TMP/$name.report.err")" \
			"gapscope: $TMP/$name/t.gsc holds no records: its recorder ended before writing any" \
			"$1: report on a trace without records"
	else
		[ "$rc" -eq 0 ] || die "$1: report failed on the cut trace: $(cat "$TMP/$name.report.err")"
		grep -q "the recording did not finish" "$TMP/$name.report.err" ||
			die "$1: report does not say it was cut"
	fi
	echo "$1: script read $trims of $2 malloc_trim calls"
}

# A disk of one page: the file header fits, the first chunk does not.
full_disk 4k 2000
# A larger one: whole chunks, then the cut (a chunk is written at 256 KiB, or every 200 ms).
full_disk 1m 100000

# A report onto a full disk, and script onto a full output, fail.
rc=0
"$GS" report -o "$TMP/disk-4k/report" "$TMP/disk-1m/t.gsc" >/dev/null 2>"$TMP/report.err" || rc=$?
assert_eq "$rc" 1 "report onto a full disk"
grep -q "^gapscope: cannot write $TMP/disk-4k/report/.*: No space left on device$" "$TMP/report.err" ||
	die "report: no write error: $(cat "$TMP/report.err")"
rc=0
"$GS" script "$TMP/disk-1m/t.gsc" >/dev/full 2>"$TMP/script.err" || rc=$?
assert_eq "$rc" 1 "script onto a full output"
grep -q "^gapscope: cannot write standard output" "$TMP/script.err" || die "script: no write error"

# --pprof-dir on a full disk: the profiles are lost, said once, the recording is not.
small_disk pp 2m
mkdir "$TMP/pp/dir"
dd if=/dev/zero of="$TMP/pp/fill" bs=4k count=1000 2>/dev/null || true
rc=0
"$GS" record --flight 5 --pprof-dir "$TMP/pp/dir" --push-interval 1 -o "$TMP/pp.gsc" -f -- \
	"$BUILD/zkengine" --device sim --scenario tracker-trim -n 12 >/dev/null 2>"$TMP/pp.err" || rc=$?
grep '^gapscope: flight: .*profile' "$TMP/pp.err" || true
assert_eq "$rc" 0 "--pprof-dir on a full disk: the recorder's exit status (the command's)"
assert_eq "$(grep -c 'cannot write the profile .*: No space left on device (counted' "$TMP/pp.err")" 1 \
	"--pprof-dir on a full disk: lines saying a profile was not written"
grep -q '^gapscope: flight: 0 gap profile(s) pushed, 0 failed, 0 skipped (the last push still going), 0 written, [1-9][0-9]* not written$' \
	"$TMP/pp.err" || die "--pprof-dir on a full disk: the profiles are not counted"
assert_eq "$(find "$TMP/pp/dir" -type f | wc -l)" 0 "--pprof-dir on a full disk: files left"
"$GS" script "$TMP/pp.gsc" >/dev/null 2>"$TMP/pp.script.err" || die "script failed on the trace"
! grep -q "did not finish\|cut off" "$TMP/pp.script.err" || die "--pprof-dir on a full disk: the trace was cut"

# A report of gaps onto a full disk leaves no file empty or cut short: gaps/all.folded, opened
# before the gaps are analysed, is removed when it could not be written to its end (it was left
# empty). The flight recorder's reports of its dumps below meet this where --dump-dir fills up,
# at a moment that is up to chance.
rc=0
"$GS" report -o "$TMP/disk-4k/pp.report" "$TMP/pp.gsc" >/dev/null 2>"$TMP/pp.report.err" || rc=$?
assert_eq "$rc" 1 "report of gaps onto a full disk"
cut=$(no_cut_files "$TMP/disk-4k/pp.report")
[ -z "$cut" ] || die "report of gaps onto a full disk: files left empty or cut short: $cut"

# --dump-dir on a full disk: room for about one dump and part of its report.
small_disk dd 512k
"$GS" record --flight 5 --trigger-gap 50 --dump-dir "$TMP/dd" -o "$TMP/dd.gsc" -f -- \
	"$BUILD/zkengine" --device sim --scenario tracker-trim -n 24 >/dev/null 2>"$TMP/dd.err" ||
	die "--dump-dir on a full disk: record failed: $(cat "$TMP/dd.err")"
grep '^gapscope: flight: ' "$TMP/dd.err" | cut -c1-200
line=$(grep '^gapscope: flight: [0-9]* dump(s) written' "$TMP/dd.err") || die "no summary line"
said=$(echo "$line" | sed 's/^gapscope: flight: \([0-9]*\) dump.*/\1/')
mb=$(echo "$line" | sed 's/.* written (\([0-9.]*\) MB).*/\1/')
files=$(find "$TMP/dd" -maxdepth 1 -name '*.gsc' | wc -l)
bytes=$(find "$TMP/dd" -maxdepth 1 -name '*.gsc' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
echo "--dump-dir on a full disk: $said said written ($mb MB), $files on disk ($bytes bytes)"
assert_eq "$said" "$files" "--dump-dir on a full disk: dumps said written against files there"
awk -v mb="$mb" -v b="$bytes" 'BEGIN { exit !(mb * 1e6 > b - 60000 && mb * 1e6 < b + 60000) }' ||
	die "--dump-dir on a full disk: $mb MB said, $bytes bytes there"
grep -q 'cannot write .*No space left on device\|report FAILED' "$TMP/dd.err" || die "the disk never filled"
cut=$(no_cut_files "$TMP/dd")
[ -z "$cut" ] || die "--dump-dir on a full disk: files left empty or cut short: $cut"
echo ok
