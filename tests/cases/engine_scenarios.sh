#!/usr/bin/env bash
# zkengine's pipeline on simcuda (issue 3): every scenario completes with --verify; tracker-trim
# keeps the GPU less busy than fixed in the same run; each scenario's --truth shows its own
# mechanism; --gpus 2 keeps both devices busy; inconsistent options give one line and exit 2.
# Thresholds are far from the measured values (see the comments), never retried.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
ZK=$BUILD/zkengine
[ -x "$ZK" ] || die "$ZK not built"
command -v python3 >/dev/null || die "python3 missing (make deps)"
P=16

run() { # run NAME ARGS...: output to $TMP/NAME.out, truth to $TMP/NAME.truth; must succeed
	local name=$1; shift
	local rc=0
	"$ZK" --device sim --partitions $P --verify --truth "$TMP/$name.truth" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	grep -E '^(gpu [0-9]+ busy|malloc_trim|partitions done|throughput)' "$TMP/$name.out" |
		sed "s/^/$name: /"
	[ "$rc" -eq 0 ] || { cat "$TMP/$name.err"; die "$name: exit $rc"; }
	grep -q "^verification passed ($P partitions)$" "$TMP/$name.out" || die "$name: not verified"
	assert_eq "$(grep -c ' ok$' "$TMP/$name.out")" "$P" "$name: partitions verified"
	grep -q "^partitions done: $P$" "$TMP/$name.out" || die "$name: partitions done"
}

busy() { sed -n "s/^gpu ${2:-0} busy: \([0-9.]*\)%.*/\1/p" "$TMP/$1.out"; }

# q NAME EXPR: evaluate a python expression over the truth records `t` (a list of dicts)
q() {
	python3 - "$TMP/$1.truth" "$2" <<'PY'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
def k(kind, **kw):
    return [r for r in t if r["kind"] == kind and all(r.get(a) == b for a, b in kw.items())]
def ms(rs):
    return sum(r["ns"] for r in rs) / 1e6
print(eval(sys.argv[2]))
PY
}

for s in fixed tracker-trim gpu-lock-wide starved pageable oversubscribed; do
	run "$s" --scenario "$s"
	# every record is valid JSON with the common fields; counts agree with the printed lines
	assert_eq "$(q "$s" 'k("meta")[0]["scenario"]')" "$s" "$s: truth meta"
	assert_eq "$(q "$s" 'k("counts")[0]["launches"]')" \
		"$(sed -n 's/^launches: //p' "$TMP/$s.out")" "$s: launches in truth and output"
	assert_eq "$(q "$s" 'k("counts")[0]["malloc_trim"]')" "$P" "$s: malloc_trim calls"
	assert_eq "$(q "$s" 'len(k("malloc_trim"))')" "$P" "$s: malloc_trim records"
	assert_eq "$(q "$s" 'all(r["end_ns"] >= r["start_ns"] > 0 for r in t if "start_ns" in r)')" \
		True "$s: intervals well-formed"
	# GPU truth: simcuda's exact kernel intervals, merged
	[ "$(q "$s" 'len(k("gpu_busy", source="simcuda"))')" -gt 0 ] || die "$s: no gpu_busy"
done

# tracker-trim: lower GPU busy than fixed (measured 42-69% vs 74-94% on 2 cores, the pair
# apart by 11-43 points)
f=$(busy fixed) t=$(busy tracker-trim)
echo "busy: fixed $f%, tracker-trim $t%"
python3 -c "import sys; sys.exit(0 if $t + 5 < $f else 1)" ||
	die "tracker-trim busy $t% not below fixed $f%"

# the same malloc_trim(0) calls, by finalizers: under the tracker lock in tracker-trim only
assert_eq "$(q tracker-trim 'all(r["tracker_lock_held"] and r["comm"].startswith("finalizer-") for r in k("malloc_trim"))')" \
	True "tracker-trim: trims under the tracker lock"
assert_eq "$(q fixed 'any(r["tracker_lock_held"] for r in k("malloc_trim"))')" False \
	"fixed: trims outside the tracker lock"
echo "malloc_trim ms: tracker-trim $(q tracker-trim 'round(ms(k("malloc_trim")))') (under lock)," \
	"fixed $(q fixed 'round(ms(k("malloc_trim")))') (outside)"
# slow: the trims of a fragmented heap take tens of ms (measured hundreds in all)
[ "$(q tracker-trim 'ms(k("malloc_trim")) > 100')" = True ] || die "tracker-trim: trims not slow"

# gpu-lock-wide: host work under the per-GPU mutex, twice per partition, tens of ms in all
assert_eq "$(q gpu-lock-wide 'len(k("gpu_lock_hold"))')" $((2 * P)) "gpu-lock-wide: holds"
[ "$(q gpu-lock-wide 'ms(k("gpu_lock_hold")) > 20 * '$P)" = True ] ||
	die "gpu-lock-wide: holds too short: $(q gpu-lock-wide 'ms(k("gpu_lock_hold"))') ms"
assert_eq "$(q fixed 'len(k("gpu_lock_hold"))')" 0 "fixed: no host work under the GPU lock"

# starved: one synthesis thread; the GPU queue runs dry before almost every partition, so the
# GPU workers wait on its condvar for work. Measured: 13-14 waits after the start (of 14 that can
# be), waiting 0.8-1.06 of the run's duration (two workers: at most 2), against 0-3 waits and
# 0-0.42 of it in fixed. (Absolute times do not tell them apart on 2 CPUs: in a slow spell of the
# VM, fixed's workers waited 1.3 s in all, starved's 2.5 s.)
assert_eq "$(q starved 'k("meta")[0]["synth_threads"]')" 1 "starved: synthesis threads"
dur() { awk -v p=$P '/^throughput:/ { print p / $2 }' "$TMP/$1.out"; }
sn=$(q starved 'len(k("cond_wait_work", startup=False))')
ss=$(q starved "round(ms(k('cond_wait_work', startup=False)) / 1000 / $(dur starved), 2)")
fs=$(q fixed "round(ms(k('cond_wait_work', startup=False)) / 1000 / $(dur fixed), 2)")
echo "waits for work after the start: starved $sn, $ss of the run; fixed $fs of the run"
[ "$sn" -ge $((P / 2)) ] || die "starved: the GPU queue ran dry before only $sn partitions"
python3 -c "import sys; sys.exit(0 if $ss > 0.5 and $ss > 2 * $fs else 1)" ||
	die "starved: GPU workers not waiting for work ($ss of the run, fixed $fs)"

# pageable: three synchronous copies per partition, timed, and none elsewhere
assert_eq "$(q pageable 'len(k("sync_memcpy"))')" $((3 * P)) "pageable: sync copies"
assert_eq "$(q pageable 'k("counts")[0]["sync"]["cuMemcpyHtoD"]')" $((3 * P)) "pageable: count"
grep -q "^sync calls cuMemcpyHtoD: $((3 * P))$" "$TMP/pageable.out" || die "pageable: output count"
assert_eq "$(q fixed 'len(k("sync_memcpy"))')" 0 "fixed: no sync copies"
echo "sync_memcpy ms: $(q pageable 'round(ms(k("sync_memcpy")), 1)')"

# oversubscribed: more CPU-bound threads than CPUs; GPU workers runnable but not running
# (measured ~3.9-4.3 s vs ~1.7-2.1 s in fixed, which on 2 cores is itself crowded: the
# simulated GPU is a thread too)
assert_eq "$(q oversubscribed 'k("oversubscribe")[0]["threads"] > k("meta")[0]["cpus"]')" True \
	"oversubscribed: threads beyond the CPUs"
ro=$(q oversubscribed 'round(sum(r["runnable_ns"] for r in k("preempted") if r["comm"].startswith("gpu-worker-")) / 1e6)')
rf=$(q fixed 'round(sum(r["runnable_ns"] for r in k("preempted") if r["comm"].startswith("gpu-worker-")) / 1e6)')
echo "gpu-worker runnable-not-running ms: oversubscribed $ro, fixed $rf"
[ "$ro" -gt 1000 ] && [ "$((10 * ro))" -gt $((14 * rf)) ] || die "oversubscribed: workers not preempted"

# --gpus 2: one context, mutex and workers per device, both kept busy
SIMCUDA_DEVICES=2 run gpus2 --gpus 2
for d in 0 1; do
	b=$(busy gpus2 $d)
	[ -n "$b" ] || die "--gpus 2: no busy line for gpu $d"
	python3 -c "import sys; sys.exit(0 if $b > 40 else 1)" || die "--gpus 2: gpu $d busy $b%"
	[ "$(q gpus2 'len(k("partition", gpu='$d'))')" -gt 0 ] || die "--gpus 2: gpu $d unused"
	[ "$(q gpus2 'len(k("gpu_busy", gpu='$d'))')" -gt 0 ] || die "--gpus 2: no truth for gpu $d"
done

# inconsistent options: one line "zkengine: ...", exit 2
for args in "--gpu-workers 0" "--synth-threads 0" "--scenario bogus" "--gpus 3"; do
	rc=0
	SIMCUDA_DEVICES=2 "$ZK" --device sim $args >"$TMP/o" 2>"$TMP/e" </dev/null || rc=$?
	assert_eq "$rc" 2 "zkengine $args: exit status"
	assert_eq "$(wc -l <"$TMP/e")" 1 "zkengine $args: lines on stderr"
	grep -q '^zkengine: ' "$TMP/e" || die "zkengine $args: $(cat "$TMP/e")"
	[ ! -s "$TMP/o" ] || die "zkengine $args: wrote to stdout"
done
echo "all scenarios verified and showing their mechanisms"
