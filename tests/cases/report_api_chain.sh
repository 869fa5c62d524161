#!/usr/bin/env bash
# A chain of event waits as long as the trace makes it (red team D20): 60,000 streams, each made
# to wait (cuStreamWaitEvent) on an event recorded on the next after a launch there, and one
# synchronize of the default stream at the end: its completion evidence runs down the whole
# chain. The handles need not be valid (the probes record a call before the driver checks it),
# so a stand-in driver whose calls all succeed makes them. The report walks the chain with a
# worklist: it ends with exit 0 and a GPU timeline, as does the flight recorder, whose live
# analysis runs the same code on its consumer thread, with the command's own status. Both run
# with a 512 KiB stack, which a recursion down this chain overflowed (60,000 streams did with
# the default 8 MiB). The report's stream table keeps the chain's last 4,096 streams (its bound,
# reports/analysis/gputime.h): before it had one, every call walked every stream seen, and the
# report of this chain took minutes. report_streams_trace.sh runs 1,000,000 through a replay.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "attaches BPF programs"
cd "$GAPSCOPE_ROOT"
need_built "$GS"
N=${CHAIN_STREAMS:-60000}
cat >"$TMP/stubcuda.c" <<'C'
/* A stand-in libcuda whose every call succeeds and does nothing. */
static char fh[64];
int cuModuleGetFunction(void **f, void *m, const char *n) { (void)m; (void)n; *f = fh; return 0; }
int cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g,
		   unsigned sh, void *st, void **p, void **x) { return 0; }
int cuStreamSynchronize(void *s) { (void)s; return 0; }
int cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
int cuStreamWaitEvent(void *s, void *e, unsigned fl) { (void)s; (void)e; (void)fl; return 0; }
C
cat >"$TMP/chain.c" <<'C'
/* N streams: stream i-1 waits on an event recorded on stream i after a launch there; then a
 * launch on and a synchronize of stream 0, the default one. Exits 7: a status of its own. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#define S(i) ((void *)(uintptr_t)((i) ? 0x100000 + 16 * (uintptr_t)(i) : 0))
#define E(i) ((void *)(uintptr_t)(0x90000000 + 16 * (uintptr_t)(i)))
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW), *f, *params[1];
	int (*get)(void **, void *, const char *) = dlsym(h, "cuModuleGetFunction");
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      void *, void **, void **) = dlsym(h, "cuLaunchKernel");
	int (*sync)(void *) = dlsym(h, "cuStreamSynchronize");
	int (*rec)(void *, void *) = dlsym(h, "cuEventRecord");
	int (*wait)(void *, void *, unsigned) = dlsym(h, "cuStreamWaitEvent");
	get(&f, 0, "k");
	for (long i = atol(argv[2]); i > 0; i--) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, S(i), params, 0);
		rec(E(i), S(i));
		wait(S(i - 1), E(i), 0);
	}
	launch(f, 1, 1, 1, 1, 1, 1, 0, S(0), params, 0);
	return sync(S(0)) ? 1 : 7;
}
C
$CC -O2 -shared -fPIC -o "$TMP/libcuda.so.1" "$TMP/stubcuda.c"
$CC -O2 -o "$TMP/chain" "$TMP/chain.c" -ldl

rc=0
"$GS" record --all-launches -o "$TMP/chain.gsc" -- "$TMP/chain" "$TMP/libcuda.so.1" "$N" \
	2>"$TMP/rec.err" || rc=$?
[ "$rc" = 7 ] || die "record: exit $rc, the command's is 7: $(tail -3 "$TMP/rec.err")"
rc=0
(ulimit -s 512 && exec "$GS" report -o "$TMP/rep" "$TMP/chain.gsc") >"$TMP/rep.txt" 2>"$TMP/rep.err" ||
	rc=$?
[ "$rc" = 0 ] || die "report of a $N-stream chain: exit $rc: $(tail -3 "$TMP/rep.err")"
grep -q '^device 0: busy' "$TMP/rep.txt" || die "no GPU timeline: $(head -5 "$TMP/rep.txt")"
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert s["launches"]["in_trace"] >= int(sys.argv[2]) + 1, s["launches"]' "$TMP/rep/summary.json" "$N" ||
	die "the report's launches"

# Live: the flight recorder's analysis takes the same chain on its consumer thread.
mkdir "$TMP/dumps"
rc=0
(ulimit -s 512 && exec "$GS" record --flight 5 --dump-dir "$TMP/dumps" -o "$TMP/flight.gsc" -- \
	"$TMP/chain" "$TMP/libcuda.so.1" "$N") 2>"$TMP/flight.err" || rc=$?
[ "$rc" = 7 ] || die "record --flight: exit $rc, the command's is 7: $(tail -3 "$TMP/flight.err")"
echo "a chain of $N streams: report and flight recorder through it"
