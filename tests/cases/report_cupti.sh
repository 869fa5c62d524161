#!/usr/bin/env bash
# The report's CUPTI tier (reports/analysis/tiers.c) on a real simcuda recording of tracker-trim, whose
# engine truth (simcuda's exact kernel intervals) is added to a copy of the trace as the CUPTI
# collector would send it (tests/report/add_cupti.c: late batches, no launch records):
#   - the gaps are CUPTI's: exactly the truth's idle windows of 1 ms or more, tier "cupti", and
#     the device's busy time is the truth's kernel time (the windows under 1 ms: idle under the
#     floor), the idle split's parts summing to its idle time;
#   - the agreement figures are the ones computed here from the API tier's own report of the
#     original trace at --min-gap 0.25 (the windows the analysis compares);
#   - the closers come from the API tier, and the cause is still malloc_trim via the tracker lock.
# tracker-trim for its cause, starved for its many short gaps, and tracker-trim on two simulated
# devices: each device's gaps and busy time are its own (the API tier tells the devices apart by
# the context->device mapping the probes record; the CUPTI tier by the records' device). Everything is compared within one
# recording: nothing depends on the machine's speed.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK" "$BUILD/lib/libgapscope.a"
cd "$GAPSCOPE_ROOT"
$CC $SAN_FLAGS -O2 -g -D_GNU_SOURCE -Ibpf -Ilib -o "$TMP/add_cupti" tests/report/add_cupti.c \
	"$BUILD/lib/libgapscope.a" -lz -lzstd || die "cannot build add_cupti"

cupti_case() { # cupti_case NAME SCENARIO [ENGINE-ARGS...]
	local sc=$1 scenario=$2
	shift 2
	timeout 300 "$GS" record -o "$TMP/$sc.gsc" -- "$ZK" --device sim --scenario "$scenario" "$@" \
		--truth "$TMP/$sc.truth" >"$TMP/$sc.rec.out" 2>"$TMP/$sc.rec.err" ||
		{ cat "$TMP/$sc.rec.err"; die "record $sc"; }
	"$TMP/add_cupti" "$TMP/$sc.gsc" "$TMP/$sc.truth" "$TMP/$sc.c.gsc" || die "add_cupti"
	"$GS" report "$TMP/$sc.c.gsc" -o "$TMP/$sc.c.rep" >"$TMP/$sc.c.txt" 2>"$TMP/$sc.c.err" ||
		{ cat "$TMP/$sc.c.err"; die "$sc: report of the CUPTI trace"; }
	[ -s "$TMP/$sc.c.err" ] && { cat "$TMP/$sc.c.err"; die "the report warned"; }
	"$GS" report "$TMP/$sc.gsc" -o "$TMP/$sc.api.rep" --min-gap 0.25 >/dev/null 2>"$TMP/$sc.api.err" ||
		{ cat "$TMP/$sc.api.err"; die "report of the original trace"; }
	sed -n '1,/^root causes/p' "$TMP/$sc.c.txt"
	grep -q '^device 0: busy [0-9.]*% (.*CUPTI); [0-9.]*% of the run$' "$TMP/$sc.c.txt" || die "summary.txt does not say the busy time is CUPTI's"
	grep -q '^device 0: API-inferred gaps against CUPTI' "$TMP/$sc.c.txt" || die "no agreement line"

	# --api-only: CUPTI's records left aside, the same gaps as the trace without them.
	"$GS" report --api-only "$TMP/$sc.c.gsc" -o "$TMP/$sc.a.rep" >/dev/null 2>&1 ||
		die "$sc: report --api-only"
	"$GS" report "$TMP/$sc.gsc" -o "$TMP/$sc.o.rep" >/dev/null 2>&1 || die "$sc: report"
	python3 - "$TMP/$sc.a.rep/summary.json" "$TMP/$sc.o.rep/summary.json" <<'PY' ||
import json, sys
a, o = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda s: [(g["start_ns"], g["end_ns"], g["tier"], g["closer"]["tid"]) for g in s["gaps"]]
sys.exit(0 if key(a) == key(o) and "cupti" not in a else "api-only gaps differ")
PY
		die "$sc: --api-only"
	# --copy-rate at simcuda's own copy model (50 us + 60 us a KiB): a gap's end moves by the
	# uploads queued ahead of the kernels that end it (about 1.6 ms here); no CUPTI gap of 3 ms
	# or more is lost.
	# A device whose gaps end that way (end error p50 over 0.5 ms) comes to under half of it;
	# one whose gaps all end with a kernel that had nothing queued ahead (a slow machine can
	# open a 1 ms window inside a partition: an error of a few us) has nothing to gain and must
	# lose nothing. tracker-trim on one device (its partitions start with uploads) needs the
	# first kind. The start moves by the copy back (about 0.5 ms), which is the size of the
	# lateness of a synchronize's return on a loaded machine: it is printed, not judged.
	"$GS" report "$TMP/$sc.c.gsc" -o "$TMP/$sc.m.rep" --copy-rate 0.0170667,50 >"$TMP/$sc.m.txt" \
		2>&1 || { cat "$TMP/$sc.m.txt"; die "$sc: report --copy-rate"; }
	grep -q '^API-inferred tier: host<->device async copies modelled at 0.0170667 GB/s + 50 us$' \
		"$TMP/$sc.m.txt" || die "$sc: summary.txt does not name the copy model"
	python3 - "$TMP/$sc.c.rep/summary.json" "$TMP/$sc.m.rep/summary.json" "$sc" <<'PY' ||
import json, sys
plain, model = (json.load(open(p)) for p in sys.argv[1:3])
queued = 0
assert model["copy_model"] == {"gbps": 0.0170667, "latency_us": 50}, model["copy_model"]
pa = {t["device"]: t for t in plain["cupti"]["agreement"]}
for t in model["cupti"]["agreement"]:
    p = pa[t["device"]]
    print("device %d: recall %.3f -> %.3f, start p50 %.3f -> %.3f ms, end p50 %.3f -> %.3f ms"
          % (t["device"], p["recall"], t["recall"], p["start_err_p50_ns"] / 1e6,
             t["start_err_p50_ns"] / 1e6, p["end_err_p50_ns"] / 1e6, t["end_err_p50_ns"] / 1e6))
    # A CUPTI gap not much longer than the copy back (~0.5 ms) plus a loaded machine's late
    # return from a synchronize can lose its API-tier match to the start the model moves later;
    # none longer than 3 ms may be lost.
    short = sum(1 for g in plain["gaps"] if g["device"] == t["device"] and
                g["duration_ns"] < 3000000)
    if t["recalled"] < p["recalled"] - short:
        sys.exit("the copy model lost a CUPTI gap longer than 3 ms")
    if p["end_err_p50_ns"] > 500000:
        queued += 1
        if t["end_err_p50_ns"] * 2 >= p["end_err_p50_ns"]:
            sys.exit("the copy model did not bring the gaps' ends closer to CUPTI's")
    elif t["end_err_p50_ns"] > p["end_err_p50_ns"] + 50000:
        sys.exit("the copy model moved ends that had no copies queued ahead")
if sys.argv[3] == "tracker-trim" and not queued:
    sys.exit("no device's gaps ended behind queued uploads")
PY
		die "$sc: copy model"
	for d in $(python3 -c 'import json, sys; print(" ".join(str(d["id"]) for d in
		json.load(open(sys.argv[1]))["devices"]))' "$TMP/$sc.c.rep/summary.json"); do
		python3 tests/report/cupti_check.py "$sc" "$TMP/$sc.c.rep/summary.json" \
			"$TMP/$sc.api.rep/summary.json" "$TMP/$sc.truth" "$d" || die "$sc: CUPTI tier"
	done
}

cupti_case tracker-trim tracker-trim
cupti_case starved starved
cupti_case two-gpus tracker-trim --gpus 2
python3 - "$TMP/two-gpus.api.rep/summary.json" "$TMP/two-gpus.c.rep/summary.json" <<'PY' ||
import json, sys
# Both tiers see both devices (each device's CUPTI gaps were checked exactly above).
for p in sys.argv[1:]:
    s = json.load(open(p))
    ids = sorted(d["id"] for d in s["devices"])
    print("%s: devices %s, gaps on %s" % (p.split("/")[-2], ids,
                                          sorted({g["device"] for g in s["gaps"]})))
    if ids != [0, 1] or any(d["busy_ns"] <= 0 for d in s["devices"]):
        sys.exit("expected two devices, each busy")
PY
	die "two devices"
python3 tests/report/report_check.py cause "$TMP/tracker-trim.c.rep/summary.json" malloc_trim \
	--truth "$TMP/tracker-trim.truth" --lock tracker --root malloc_trim || die "tracker-trim under the CUPTI tier"
echo "ok"
