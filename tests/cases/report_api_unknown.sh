#!/usr/bin/env bash
# The API tier knows what it does not know (tests/report/feeder.c's poll mode on simcuda, real
# probes): the program launches and learns of each kernel's end by spinning on memory the kernel
# writes, never through the driver. No completion signal ever closes its stream: the report says
# the device's busy time is unknown, bounds it, names the stream, and finds no gap it cannot
# back (summary.json: busy_unknown, unclosed).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$LIBCUDA"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -Iengine -pthread -o "$TMP/feeder" \
	tests/report/feeder.c -ldl || die "cannot build the feeder"

timeout 120 "$GS" record -o "$TMP/poll.gsc" -- "$TMP/feeder" "$LIBCUDA" poll 20 5 \
	>"$TMP/poll.out" 2>"$TMP/poll.err" || {
	cat "$TMP/poll.out" "$TMP/poll.err"
	die "record"
}
grep -q '^feeder: poll 20 iterations' "$TMP/poll.out" || die "the feeder did not run: $(cat "$TMP/poll.out")"
"$GS" report "$TMP/poll.gsc" -o "$TMP/poll.rep" >"$TMP/poll.txt" || die "report"
cat "$TMP/poll.txt"
grep -q '^device 0: busy unknown (API-inferred: launches, and no completion signal ever; busy at most [0-9.]*%' \
	"$TMP/poll.txt" || die "the busy line claims a number"
grep -q '^device 0: still busy at the end, never seen done: stream 0x[0-9a-f]* (work queued [0-9.]* s before the end)' \
	"$TMP/poll.txt" || die "the stream it could not close is not named"
python3 - "$TMP/poll.rep/summary.json" <<'PY' || die "summary.json"
import json, sys
s = json.load(open(sys.argv[1]))
d = s["devices"][0]
assert d.get("busy_unknown") is True, d
assert d.get("unclosed", "").startswith("stream 0x"), d
assert d["busy_unconfirmed_ns"] == d["busy_ns"], d
assert not s["gaps"], s["gaps"]
print("busy unknown, at most %.1f%%; unclosed: %s" % (d["busy_pct"], d["unclosed"]))
PY
