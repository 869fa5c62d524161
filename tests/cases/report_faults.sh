#!/usr/bin/env bash
# A thread asleep in the kernel's page-fault path is kind fault (reports/analysis/blame.c), on
# simcuda with real probes (tests/report/feeder.c, mode fault): between launches the feeder
# drops the pages of a 64 MiB file of its own from the page cache and reads 8 random pages of it
# through a mapping (MADV_RANDOM: one page a fault), each read a major fault waiting for the disk.
# The feeder runs in a blkio cgroup of its own that lets it read 100 times a second from the disk
# holding the file: each fault waits ~10 ms, far longer than any wait for a CPU on a loaded
# machine, so the fault waits make the gaps by construction.
# - The top cause is kind fault, its function "major, FILE" (the feeder's file, found through the
#   mapping the recorder wrote when it saw the fault), at least 60% of the gap time; its leaf
#   gather_rows (the code that touched the memory, from the stack taken at the switch); its
#   pages within the file and as many faults as the feeder made at most.
# - summary.txt's row names the file by its name, the offsets and the code on one line; the
#   chains say the wakeup was the I/O completion.
# - `gapscope script` prints the file and offset of fault sleeps.
# - Without the tracepoint (GAPSCOPE_NO_FILEMAP_FAULT: a kernel before 6.11) the recording goes
#   on, one failed attach counted; the sleeps are still faults, "major" (their kernel stacks),
#   no file named.
# - Where ../shared/traces/mmapfault_attach.gsc (PyTorch on an H200's machine, an older trace
#   that kept no fault fields) is beside the clone: its top cause is fault, major, at least 40%.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

# The whole disk the file's file system is on (a partition's parent): blkio rules are per disk.
dev=$(findmnt -no MAJ:MIN -T "$TMP" | tr -d ' ')
[ -n "$dev" ] && [ -e "/sys/dev/block/$dev" ] || die "$TMP is on no block device ($dev)"
[ -e "/sys/dev/block/$dev/partition" ] && dev=$(cat "/sys/dev/block/$dev/../dev")
CG=
if [ -d /sys/fs/cgroup/blkio ]; then
	CG=/sys/fs/cgroup/blkio/gapscope-faults.$$
	rule=blkio.throttle.read_iops_device
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw io /sys/fs/cgroup/cgroup.controllers
then
	CG=/sys/fs/cgroup/gapscope-faults.$$
	rule=io.max
fi
[ -n "$CG" ] || die "no blkio (v1) or io (v2) controller to pace the disk's reads"
mkdir "$CG"
trap 'rc=$?; rmdir "$CG" 2>/dev/null || true; (exit $rc); cleanup' EXIT
if [ "$rule" = io.max ]; then
	echo "$dev riops=100" >"$CG/io.max"
else
	echo "$dev 100" >"$CG/$rule"
fi

FILE=$TMP/dataset.bin
timeout 300 "$GS" record -o "$TMP/f.gsc" -- sh -c 'echo $$ >"$1/cgroup.procs" && shift &&
	exec "$@"' sh "$CG" "$TMP/feeder" "$LIBCUDA" fault 20 8 "$FILE" \
	>"$TMP/f.out" 2>"$TMP/f.err" || {
	cat "$TMP/f.out" "$TMP/f.err"
	die "record"
}
"$GS" report "$TMP/f.gsc" -o "$TMP/f.rep" >"$TMP/f.txt" || die "report"
sed -n '/^root causes/,/^losses/p' "$TMP/f.txt"

python3 - "$TMP/f.rep/summary.json" "$FILE" <<'PY' || die "the fault cause"
import json, sys
s, path = json.load(open(sys.argv[1])), sys.argv[2]
c = s["causes"][0]
print("top cause: %s %s %.3f %s" % (c["kind"], c["function"], c["share"], c.get("pages")))
if c["kind"] != "fault" or c["function"] != "major, " + path:
    sys.exit("FAIL: the top cause is %s %s, not fault major, %s" % (c["kind"], c["function"], path))
if c["share"] < 0.6:
    sys.exit("FAIL: fault major explains %.3f of the gap time" % c["share"])
leaves = {p["name"]: p["share"] for p in c.get("leaves", [])}
if leaves.get("gather_rows", 0) < 0.9:
    sys.exit("FAIL: the code that touched the memory is not gather_rows: %s" % leaves)
p = c.get("pages") or {}
# 20 steps of 8 reads, the first step's before the first gap: 152 faults in gaps at most.
if not (0 <= p.get("first_offset", -1) <= p.get("last_offset", -1) < 64 << 20) or \
        not 1 <= p.get("faults", 0) <= 160:
    sys.exit("FAIL: the pages %s" % p)
PY
grep -qE '^ +[0-9.]+%  fault +major, dataset\.bin 0x[0-9a-f]+-0x[0-9a-f]+ \(gather_rows\) ' \
	"$TMP/f.txt" || die "summary.txt: no row 'fault major, dataset.bin 0x..-0x.. (gather_rows)'"
grep -q '← fault major, dataset\.bin woken by I/O completion ' "$TMP/f.txt" ||
	die "summary.txt: no chain ends in the fault, woken by the I/O completion"
"$GS" script "$TMP/f.gsc" >"$TMP/f.script" || die "script"
n=$(grep -cE "sched:offcpu blocked .* fault=$FILE\+0x[0-9a-f]+000 " "$TMP/f.script" || true)
echo "script: $n sleeps name the file's page"
[ "$n" -ge 100 ] || die "script: $n fault sleeps name $FILE, expected at least 100 of 160"

GAPSCOPE_NO_FILEMAP_FAULT=1 timeout 300 "$GS" record -o "$TMP/n.gsc" -- sh -c \
	'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$TMP/feeder" "$LIBCUDA" fault 6 8 \
	"$FILE" >"$TMP/n.out" 2>"$TMP/n.err" || {
	cat "$TMP/n.out" "$TMP/n.err"
	die "record without the tracepoint"
}
grep -q 'attach_failed=1$' "$TMP/n.err" || die "no failed attach counted: $(tail -1 "$TMP/n.err")"
"$GS" report "$TMP/n.gsc" -o "$TMP/n.rep" >"$TMP/n.txt" || die "report without the tracepoint"
grep -q 'attach_failed 1,' "$TMP/n.txt" || die "the report's losses lack the failed attach"
python3 - "$TMP/n.rep/summary.json" <<'PY' || die "faults without the tracepoint"
import json, sys
c = json.load(open(sys.argv[1]))["causes"][0]
print("without the tracepoint: %s %s %.3f" % (c["kind"], c["function"], c["share"]))
if c["kind"] != "fault" or c["function"] != "major" or c["share"] < 0.6:
    sys.exit("FAIL: top cause %s %s %.3f, not fault major (no file)" % (c["kind"], c["function"],
                                                                       c["share"]))
PY

TRACE=$GAPSCOPE_ROOT/../shared/traces/mmapfault_attach.gsc
if [ -f "$TRACE" ]; then
	"$GS" report -o "$TMP/m.rep" "$TRACE" >"$TMP/m.txt" 2>"$TMP/m.err" || {
		cat "$TMP/m.err"
		die "report $TRACE"
	}
	sed -n '/^root causes/,/^longest gaps/p' "$TMP/m.txt"
	python3 - "$TMP/m.rep/summary.json" <<'PY' || die "mmapfault_attach.gsc's causes"
import json, sys
c = json.load(open(sys.argv[1]))["causes"][0]
if c["kind"] != "fault" or not c["function"].startswith("major") or c["share"] < 0.4:
    sys.exit("FAIL: top cause %s %s %.3f, not fault major >= 0.4" % (c["kind"], c["function"],
                                                                    c["share"]))
PY
else
	echo "$TRACE absent: the real trace's part not run"
fi
echo "ok: faults named, with their file, pages and code"
