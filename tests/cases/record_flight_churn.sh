#!/usr/bin/env bash
# record --flight lets go of the processes that are gone (issue 24: always on, beside programs
# that come and go, as DataLoader workers do every epoch): 20 short zkengine runs one after
# another, then a long one, under one recorder (--follow-children). The live analysis unwinds
# each one's stacks with a Dwfl of its own (its files opened and mapped); once a process's exit
# is behind every gap still open, that state goes (reports/analysis/feed.c, analysis_priv__forget_exited).
# While the long run goes on, the recorder maps zkengine for at most 3 processes, not 20; the
# wait for that is for the condition (a guard of 300 s against one that never comes).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs and attaches uprobes"
GS=$BUILD/gapscope
ZK=$(realpath "$BUILD/zkengine")
cat >"$TMP/load.sh" <<EOS
#!/bin/sh
for i in \$(seq 20); do
	"$ZK" --device sim --scenario fixed --partitions 1 >/dev/null 2>&1 || exit 1
done
echo short runs done
exec "$ZK" --device sim --scenario fixed --partitions 1000000 >/dev/null 2>&1
EOS
chmod +x "$TMP/load.sh"
mkdir "$TMP/dumps"
: >"$TMP/out"
"$GS" record --flight 5 --follow-children --dump-dir "$TMP/dumps" -- "$TMP/load.sh" \
	>"$TMP/out" 2>"$TMP/err" &
rec=$!
mapped() { grep -c "$ZK" "/proc/$rec/maps" || true; }
until grep -q 'short runs done' "$TMP/out"; do
	kill -0 "$rec" 2>/dev/null || { cat "$TMP/err"; die "the recording ended before the short runs did"; }
	sleep 0.2
done
echo "after 20 short runs: zkengine mapped $(mapped) time(s) by the recorder"
for _ in $(seq 1500); do
	[ "$(mapped)" -le 3 ] && break
	sleep 0.2
done
n=$(mapped)
pkill -TERM -P "$rec" -x zkengine || true
wait "$rec" || [ $? = 143 ] || { cat "$TMP/err"; die "record --flight failed"; }
echo "while the long run went on: zkengine mapped $n time(s)"
[ "$n" -le 3 ] || die "the recorder still maps zkengine $n times: the processes gone were kept"
echo ok
