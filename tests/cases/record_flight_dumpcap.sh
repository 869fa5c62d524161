#!/usr/bin/env bash
# record --flight --dump-max-mb bounds what the dumps leave on disk, their reports included (a
# report is about 15x its trace): with --dump-max-mb 2 and --trigger-gap 50 on tracker-trim,
# `du -s` of the dump directory stays at or below 2 MiB, and the recorder's count of it is du's.
# Each trace and report is taken from the budget by the thread that wrote it, at once, so the
# dumps in flight count before the next one starts; one that would pass the cap is removed and
# counted. How many gaps pass the trigger depends on the machine: only the bound is asserted,
# and that at least one dump was written and counted.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
CAP=$((2 << 20))
mkdir "$TMP/dumps"

"$GS" record --flight 5 --trigger-gap 50 --dump-max-mb 2 --dump-dir "$TMP/dumps" -- \
	"$ZK" --device sim --scenario tracker-trim -n 40 >/dev/null 2>"$TMP/err" ||
	{ cat "$TMP/err"; die "record --flight failed"; }
grep '^gapscope: flight: ' "$TMP/err" | cut -c1-240
du=$(du -s -B1 "$TMP/dumps" | cut -f1)
traces=$(find "$TMP/dumps" -maxdepth 1 -name '*.gsc' | wc -l)
reports=$(find "$TMP/dumps" -maxdepth 1 -name '*.gsc.report' | wc -l)
line=$(grep '^gapscope: flight: [0-9]* dump(s) written' "$TMP/err") || die "no summary line"
said=$(echo "$line" | sed 's/^gapscope: flight: \([0-9]*\) dump.*/\1/')
counted=$(echo "$line" | sed -n 's/.* \([0-9.]*\) MiB on disk with their reports (--dump-max-mb 2).*/\1/p')
removed=$(echo "$line" | sed -n 's/.*, \([0-9]*\) report(s) removed for it,.*/\1/p')
echo "du -s: $du bytes (cap $CAP); $traces trace(s), $reports report(s) on disk, $removed removed;" \
	"the recorder counted $counted MiB"
[ "$du" -le "$CAP" ] || die "the dump directory holds $du bytes, past --dump-max-mb 2 ($CAP)"
[ -n "$counted" ] && [ -n "$removed" ] || die "the summary does not say what is on disk: $line"
[ "$said" -ge 1 ] && [ "$traces" -ge 1 ] || die "no dump written"
assert_eq "$said" "$traces" "dumps said written against traces on disk"
# Every trace kept has its report, or the report was removed for the cap (and said so).
assert_eq "$((reports + removed))" "$traces" "reports on disk and removed against traces"
assert_eq "$(grep -c 'report removed: it would pass --dump-max-mb' "$TMP/err" || true)" "$removed" \
	"reports said removed"
# The recorder's count is du's: the reports are counted, not only the traces.
awk -v c="$counted" -v d="$du" 'BEGIN { exit !(c * 1048576 > d - 65536 && c * 1048576 < d + 65536) }' ||
	die "the recorder counted $counted MiB, du says $du bytes"
echo ok
