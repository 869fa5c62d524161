#!/usr/bin/env bash
# The flight recorder's budget verdicts (tests/bench/flight_verdict.py, issue 48), fed canned
# runs: each RESULT line says yes or NO for its own reason, the CPU counts the reaped children's
# (the dumps' reports) from the first sample past the start-up, the peak RSS adds the largest
# report's, a run shorter than some other figure is not said NO for it, and a missing line is NO
# rather than a guess.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
V="python3 $GAPSCOPE_ROOT/tests/bench/flight_verdict.py"

# A stall at [1000, 2000] ns; one dump's report blames it on malloc_trim through a lock.
mkdir -p "$TMP/d.gsc.report" "$TMP/e.gsc.report"
cat >"$TMP/d.gsc.report/summary.json" <<'EOF'
{"gaps": [{"start_ns": 900, "end_ns": 1500, "cause": {"kind": "malloc_trim"},
	   "chain": [{"thread": "feeder"}, {"lock": "feed_lock"}]}],
 "causes": [{"kind": "malloc_trim", "function": "malloc_trim", "share": 0.9}]}
EOF
# The same gap blamed on malloc_trim without a lock on its chain.
cat >"$TMP/e.gsc.report/summary.json" <<'EOF'
{"gaps": [{"start_ns": 900, "end_ns": 1500, "cause": {"kind": "malloc_trim"},
	   "chain": [{"thread": "feeder"}]}], "causes": []}
EOF
dump() { # dump NAME: its line as the recorder prints it
	echo "gapscope: flight: dump $TMP/$1: gap of 0.600 s on gpu0 (malloc_trim malloc_trim)," \
		"window 100..3000 ns (0.000 s, from an idle GPU), 10 records, 0.1 MB, written in 5 ms" \
		"(40 ms after the window), report written in 300 ms"
}
head_line='gapscope: flight: memory: about 160 MiB in all (32 MiB, the ring buffer'"'"'s 16 MiB, the ring'"'"'s 64, 16 for what every dump needs, 32 for the live analysis)'
summary='gapscope: flight: 1 dump(s) written (0.1 MB), 0.2 MiB on disk with their reports (--dump-max-mb 1024), 0 report(s) removed for it, 0 not written for the limits, 0 inside another'"'"'s window; 0 chunk(s) let go early for --flight-mb, 0 record(s) dropped, 0 not kept for every dump; the ring held at most 3.0 MiB (dumps being written included)'
cost() { # cost OWN_MIB BOTH_MIB BOUND
	echo "gapscope: flight: cost: 1.00 s of CPU in 125 s (0.480 s a minute), 0.30 s of it in 1" \
		"dump report(s); peak RSS $1 MiB, $2 MiB with the largest report's, against the" \
		"stated $3 MiB"
}
{
	echo "$head_line"
	dump d.gsc
	echo "$summary"
	cost 70.0 150.5 160
} >"$TMP/good.err"
# 125 s sampled at 100 ticks a second: 40 ticks of its own and 10 of the reports' = 0.24 s/min
# with the start-up; from 60 s in (the first sample past --warmup's 30 s), 25 ticks in 65 s.
printf '0 3000 3000 100 0\n60 60000 70000 120 5\n125 65000 71680 140 10\n' >"$TMP/good.rss"

$V --err "$TMP/good.err" --samples "$TMP/good.rss" --tck 100 --stall 1000 2000 >"$TMP/out" ||
	die "flight_verdict.py failed on a good run"
for want in \
	"RESULT: the injected stall's dump names malloc_trim via the lock: yes" \
	"RESULT: records dropped: 0 (0 chunk(s) let go early): yes" \
	"RESULT: CPU 0.231 s/min (children included, from 60 s in) <= 0.3: yes" \
	"RESULT: the stated bound 160 MiB <= 160 MiB: yes" \
	"RESULT: peak RSS 150.5 MiB (VmHWM 70.0 MiB, with the largest dump report's) within the stated 160 MiB: yes"; do
	grep -qxF "$want" "$TMP/out" || { cat "$TMP/out"; die "good run: no line '$want'"; }
done
grep -q "NO" "$TMP/out" && { cat "$TMP/out"; die "a good run of 125 s is said NO somewhere"; }
grep -qxF "recorder CPU over 125 s sampled: 0.40 s own, 0.10 s in its children (the dumps' reports): 0.240 s/min with its start-up" \
	"$TMP/out" || die "the CPU split is not own and children's"

# --min-secs: its own line, the others unchanged.
$V --err "$TMP/good.err" --samples "$TMP/good.rss" --min-secs 300 >"$TMP/out"
grep -qxF "RESULT: sampled over 125 s, at least 300 s: NO" "$TMP/out" || die "no duration line"
[ "$(grep -c ': NO$' "$TMP/out")" -eq 1 ] || die "a short run made another line NO"

# Children's CPU alone past the budget: from 30 s in, 20 ticks of its own and 80 of the reports'.
printf '0 3000 3000 100 0\n30 3000 3000 100 0\n125 65000 71680 120 80\n' >"$TMP/kids.rss"
$V --err "$TMP/good.err" --samples "$TMP/kids.rss" >"$TMP/out"
grep -qxF "RESULT: CPU 0.632 s/min (children included, from 30 s in) <= 0.3: NO" "$TMP/out" ||
	{ cat "$TMP/out"; die "the reports' CPU is not counted"; }

# The recorder alone within the bound, with the largest report past it; a sampled VmHWM above
# the cost line's (read later) counts too; a larger bound than 160 is NO on its own line.
{
	echo "${head_line/160 MiB/208 MiB}"
	dump e.gsc
	echo "${summary/0 record(s) dropped/3 record(s) dropped}"
	cost 90.0 171.6 208
} >"$TMP/bad.err"
printf '0 3000 3000 100 0\n30 3000 3000 100 0\n125 65000 215000 110 2\n' >"$TMP/bad.rss"
$V --err "$TMP/bad.err" --samples "$TMP/bad.rss" --stall 1000 2000 >"$TMP/out"
for want in \
	"RESULT: the injected stall's dump names malloc_trim via the lock: NO" \
	"RESULT: records dropped: 3 (0 chunk(s) let go early): NO" \
	"RESULT: CPU 0.076 s/min (children included, from 30 s in) <= 0.3: yes" \
	"RESULT: the stated bound 208 MiB <= 160 MiB: NO" \
	"RESULT: peak RSS 210.0 MiB (VmHWM 210.0 MiB, with the largest dump report's) within the stated 208 MiB: NO"; do
	grep -qxF "$want" "$TMP/out" || { cat "$TMP/out"; die "bad run: no line '$want'"; }
done

# Lines missing: NO, never a guess; one sample: no CPU figure.
echo "$head_line" >"$TMP/bare.err"
printf '0 3000 3000 100 0\n' >"$TMP/one.rss"
$V --err "$TMP/bare.err" --samples "$TMP/one.rss" >"$TMP/out"
for want in \
	"RESULT: no flight summary line (records dropped unknown): NO" \
	"RESULT: CPU not measured (no sample after the first 30 s): NO" \
	"RESULT: no cost line from the recorder (the reports' peak RSS unknown), VmHWM sampled 2.9 MiB of the stated 160 MiB: NO"; do
	grep -qxF "$want" "$TMP/out" || { cat "$TMP/out"; die "bare run: no line '$want'"; }
done
: >"$TMP/empty.err"
$V --err "$TMP/empty.err" --samples "$TMP/one.rss" >"$TMP/out"
grep -qxF "RESULT: no memory bound stated at start-up: NO" "$TMP/out" || die "no bound: not NO"
echo "ok"
