#!/usr/bin/env bash
# Memory against unique thread names (red-team D7): 4 threads renaming themselves without end
# (150,000 new names a second) took a report to 402 MB at 10 s and 695 MB at 20 s, and the flight
# recorder from 145 to 266 MB in 50 s. Thread names are now kept up to THREADS_NAMES_MAX distinct
# ones (reports/analysis/threads.h), the rest counted in a note. A 20 s renamer's report stays under
# 150 MB and within 1.5x of a 10 s one's; the flight recorder's resident size at 60 s is within
# 1.3x of its size at 10 s and within the bound its start-up line states.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs"
need_built "$GS"
cat >"$TMP/renamer.c" <<'EOC'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int secs;

static void *run(void *a)
{
	unsigned long i = 0;
	time_t t0 = time(0);
	char n[16];

	while (time(0) - t0 < secs) {
		snprintf(n, sizeof(n), "w%lx", (i++ << 4) | (long)a);
		prctl(PR_SET_NAME, n);
		if (!(i & 255))
			usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];

	secs = atoi(argv[1]);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
EOC
$CC -O2 -pthread -o "$TMP/renamer" "$TMP/renamer.c" || die "cannot build the renamer"

# report_rss SECONDS: the peak RSS (KiB) of the report of a recording of a renamer that ran so long.
report_rss() {
	"$GS" record -o "$TMP/r$1.gsc" -- "$TMP/renamer" "$1" 2>"$TMP/r$1.err" ||
		{ cat "$TMP/r$1.err"; die "recording the renamer failed"; }
	/usr/bin/time -f '%M' -o "$TMP/r$1.rss" "$GS" report "$TMP/r$1.gsc" -o "$TMP/r$1.rep" \
		>/dev/null 2>&1 || die "report of the $1 s renamer failed"
	grep -q '^note: [0-9]* thread renames not followed: over 16384 distinct thread names$' \
		"$TMP/r$1.rep/summary.txt" || die "the names not kept are not counted"
	cat "$TMP/r$1.rss"
}
r10=$(report_rss 10)
r20=$(report_rss 20)
echo "report RSS: $r10 KiB (10 s), $r20 KiB (20 s)"
[ "$r20" -le $((150 << 10)) ] || die "the 20 s renamer's report took $r20 KiB, over 150 MB"
awk -v a="$r10" -v b="$r20" 'BEGIN { exit !(b <= 1.5 * a) }' || die "the report's RSS grew with the run"

# The flight recorder over 60 s of renaming.
mkdir "$TMP/d"
"$GS" record --flight 5 --flight-mb 16 --dump-dir "$TMP/d" -- "$TMP/renamer" 70 \
	2>"$TMP/f.err" &
pid=$!
flight_rss "$pid" "$TMP/f.err"
wait "$pid" || { cat "$TMP/f.err"; die "record --flight of the renamer failed"; }
bound=$(sed -n 's/^gapscope: flight: memory: about \([0-9]*\) MiB in all .*/\1/p' "$TMP/f.err")
echo "flight RSS: ${at10:-?} KiB at 10 s, ${at60:-?} KiB at 60 s; stated bound $bound MiB"
[ -n "${at60:-}" ] || die "the recording did not last 60 s"
awk -v a="$at10" -v b="$at60" 'BEGIN { exit !(b <= 1.3 * a) }' || die "the flight recorder's RSS grew past 1.3x"
[ "$at60" -le $((bound << 10)) ] || die "the flight recorder's RSS is over its stated bound"
