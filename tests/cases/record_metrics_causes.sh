#!/usr/bin/env bash
# record --flight --metrics: which causes get a series of their own, and what their labels say.
# - A dominant cause that comes after 8 minor ones (2 s of gaps caused by early0..early7 in turn,
#   then 6 s caused by the_real_culprit alone) gets a series of its own, with at least 90% of what
#   the report of the same run's whole recording (-o) gives it. Before, the first 8 functions of a
#   kind kept their series for good and the_real_culprit's time was all function="other".
# - A CPU hog of another process on the target's CPU is in the report with its name and pid, and
#   in the exposition as "another process": no other process's name (the report's, less the pid)
#   nor any pid in a label; with --metrics-other-processes their names, still no pid. Before,
#   /metrics published both.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
command -v promtool >/dev/null || die "promtool not installed (make deps)"
REC_PID= HOG_PID=
stop() {
	[ -z "$REC_PID" ] || kill "$REC_PID" 2>/dev/null || true
	[ -z "$HOG_PID" ] || kill "$HOG_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	cleanup
}
trap stop EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
cat >"$TMP/phases.c" <<'EOF'
/* argv[2] s of gaps caused by 8 small functions in turn, then argv[3] s of gaps caused by one
 * other: a launch, its synchronize, then host work in the function before the next launch. */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#define SPIN(n) __attribute__((noinline)) void n(void) { for (volatile long k = 0; k < 4000000; k++) ; }
SPIN(early0) SPIN(early1) SPIN(early2) SPIN(early3) SPIN(early4) SPIN(early5) SPIN(early6)
SPIN(early7) SPIN(the_real_culprit)
static void (*early[])(void) = { early0, early1, early2, early3, early4, early5, early6, early7 };
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW), *f, *params[1];
	int (*get)(void **, void *, const char *) = dlsym(h, "cuModuleGetFunction");
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      void *, void **, void **) = dlsym(h, "cuLaunchKernel");
	int (*sync)(void *) = dlsym(h, "cuStreamSynchronize");
	double t0 = now(), e = atof(argv[2]), d = atof(argv[3]);

	get(&f, 0, "k");
	for (int i = 0; now() - t0 < e + d; i++) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, 0, params, 0);
		sync(0);
		if (now() - t0 < e)
			early[i % 8]();
		else
			the_real_culprit();
	}
	return 0;
}
EOF
$CC -O1 -g -fno-omit-frame-pointer -o "$TMP/phases" "$TMP/phases.c" -ldl

# metrics_run NAME PORT OPTIONS CMD...: records CMD with --metrics on PORT and -o NAME.gsc; once
# every gap is counted, the exposition into NAME.txt (the recorder lingers until then).
metrics_run() {
	local name=$1 port=$2 opts=$3
	shift 3
	# shellcheck disable=SC2086 # OPTIONS are words
	"$GS" record --flight 30 --metrics "127.0.0.1:$port" --metrics-linger 300 $opts \
		-o "$TMP/$name.gsc" -- "$@" >/dev/null 2>"$TMP/$name.err" &
	REC_PID=$!
	until curl -sf -m 10 "http://127.0.0.1:$port/metrics" >"$TMP/$name.txt" &&
		grep -q '^gapscope_recording_done 1$' "$TMP/$name.txt"; do
		kill -0 "$REC_PID" 2>/dev/null || { cat "$TMP/$name.err"; die "$name: the recorder ended"; }
		sleep 0.2
	done
	kill -TERM "$REC_PID"
	wait "$REC_PID" || true
	REC_PID=
	promtool check metrics <"$TMP/$name.txt" || die "$name: promtool check metrics failed"
	"$GS" report "$TMP/$name.gsc" -o "$TMP/$name.rep" >/dev/null 2>&1 || die "$name: report failed"
}

# D28: the dominant cause that came last.
metrics_run phases "$(free_port)" "" "$TMP/phases" "$TMP/libcuda.so.1" 2 6
grep '^gapscope_gap_cause_seconds_total{kind="on_cpu"' "$TMP/phases.txt"
python3 - "$TMP/phases.rep/summary.json" "$TMP/phases.txt" <<'PY'
import json, re, sys
want = sum(c["ns"] for c in json.load(open(sys.argv[1]))["causes"]
           if c["kind"] == "on_cpu" and c["function"] == "the_real_culprit") / 1e9
got = {}
for l in open(sys.argv[2]):
    m = re.match(r'gapscope_gap_cause_seconds_total\{kind="on_cpu",function="([^"]*)"\} (\S+)', l)
    if m:
        got[m.group(1)] = float(m.group(2))
early = sorted(k for k in got if k.startswith("early"))
print("the_real_culprit: report %.3f s, its series %.3f s (%.1f%%); other %.3f s; early "
      "functions with a series: %s" % (want, got.get("the_real_culprit", 0),
      100 * got.get("the_real_culprit", 0) / want if want else 0, got.get("other", 0), early))
assert want > 0.05, "the report does not have the_real_culprit's time"
assert got.get("the_real_culprit", 0) >= 0.9 * want, "the_real_culprit has no series of its own"
assert len(got) <= 9, "more than 8 series and other"
PY

# D30: another process's CPU hog on the target's CPU.
cat >"$TMP/feed.c" <<'EOF'
/* argv[2] s of launches, synchronizes and host work between them */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW), *f, *params[1];
	int (*get)(void **, void *, const char *) = dlsym(h, "cuModuleGetFunction");
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      void *, void **, void **) = dlsym(h, "cuLaunchKernel");
	int (*sync)(void *) = dlsym(h, "cuStreamSynchronize");
	get(&f, 0, "k");
	for (time_t t0 = time(0); time(0) - t0 < atoi(argv[2]);) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, 0, params, 0);
		sync(0);
		for (volatile long k = 0; k < 3000000; k++) ;
	}
	return 0;
}
EOF
echo 'int main(void) { for (;;) ; }' >"$TMP/hog.c"
$CC -O1 -g -fno-omit-frame-pointer -o "$TMP/feed" "$TMP/feed.c" -ldl
$CC -O0 -o "$TMP/acme-payroll-run" "$TMP/hog.c"
taskset -c 0 "$TMP/acme-payroll-run" &
HOG_PID=$!
# hog_check NAME: the report names the hog with its pid; the exposition has no pid in a label.
hog_check() {
	grep -q "acme-payroll-ru (pid $HOG_PID)" "$TMP/$1.rep/summary.json" ||
		die "$1: the report does not name the hog with its pid (the test saw no preemption)"
	if grep -E '^[a-z_]+\{.*\(pid [0-9]+\)' "$TMP/$1.txt"; then
		die "$1: a pid in a label"
	fi
}
metrics_run hog "$(free_port)" "" taskset -c 0 "$TMP/feed" "$TMP/libcuda.so.1" 5
grep 'kind="preempted"' "$TMP/hog.txt" || true
hog_check hog
# No other process named: the report's names of them, less their pids, are in no label.
python3 - "$TMP/hog.rep/summary.json" "$TMP/hog.txt" <<'PY'
import json, re, sys
expo = open(sys.argv[2]).read()
for c in json.load(open(sys.argv[1]))["causes"]:
    m = re.match(r"(.*) \(pid [0-9]+\)", c["function"])
    assert not m or 'function="%s' % m.group(1) not in expo, "%s is named" % m.group(1)
PY
if grep acme "$TMP/hog.txt"; then
	die "the exposition names another process"
fi
grep -q '^gapscope_gap_cause_seconds_total{kind="preempted",function="another process' "$TMP/hog.txt" ||
	die "no preemption by another process in the exposition"
metrics_run hogname "$(free_port)" --metrics-other-processes \
	taskset -c 0 "$TMP/feed" "$TMP/libcuda.so.1" 5
hog_check hogname
# Every label of another process is the report's name for it less its pid; on a busy machine
# the hog need not be among the top 8, so any other process that preempted the target will do.
python3 - "$TMP/hogname.rep/summary.json" "$TMP/hogname.txt" <<'PY'
import json, re, sys
outside = {re.sub(r" \(pid [0-9]+\)", "", c["function"])
           for c in json.load(open(sys.argv[1]))["causes"]
           if c["kind"] == "preempted" and re.search(r" \(pid [0-9]+\)", c["function"])}
got = [m.group(1) for m in re.finditer(r'kind="preempted",function="([^"]*)"', open(sys.argv[2]).read())]
named = [g for g in got if g in outside]
print("other processes named: %s" % named)
assert named, "--metrics-other-processes names no other process"
assert "another process" not in " ".join(got), "--metrics-other-processes: another process"
PY
echo ok
