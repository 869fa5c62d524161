#!/usr/bin/env bash
# gapscope report on zkengine's parallel-waits and its twins (simcuda, real probes, same seed):
# the report names both waits' causes, the trim via the tracker lock and the producer; the twins'
# gap time relates as removing each cause would: --without trim near the original (the worker
# still waits for the batch), --without slow-producer clearly lower (then the trim bounds it).
# The ratios are generous: the runs are separate and the machine may be loaded.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
need_built "$ZK"

rec() { # rec NAME ARGS...
	local name=$1
	shift
	timeout 300 "$GS" record -o "$TMP/$name.gsc" -- "$ZK" --device sim --scenario parallel-waits \
		--seed 9 --partitions 24 --truth "$TMP/$name.truth" "$@" >"$TMP/$name.out" \
		2>"$TMP/$name.err" || { cat "$TMP/$name.err"; die "record $name"; }
	"$GS" report "$TMP/$name.gsc" -o "$TMP/$name.rep" --top 3 >"$TMP/$name.txt" \
		2>"$TMP/$name.rerr" || { cat "$TMP/$name.rerr"; die "report $name"; }
	echo "== $name"
	sed -n '/^gaps:/p;/^root causes/,/^$/p' "$TMP/$name.txt" | head -12
}
rec pw
rec notrim --without trim
rec noslow --without slow-producer

# j NAME EXPR: a python expression over the report's summary.json `s`
j() { python3 -c 'import json,sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
	"$TMP/$1.rep/summary.json" "$2"; }
share() { j "$1" 'sum(c["share"] for c in s["causes"] if c["kind"] == "'"$2"'" and (c["function"] or "").startswith("'"$3"'"))'; }

trim=$(share pw malloc_trim malloc_trim)
prod=$(share pw on_cpu produce_batch)
echo "parallel-waits: malloc_trim share $trim, produce_batch share $prod"
# Named, not sized: on a loaded machine much of the producer's time is its preemption, which
# the report rightly blames on whoever held its CPU (the shares are the model's business).
awk -v t="$trim" -v p="$prod" 'BEGIN { exit !(t > 0 && p > 0) }' ||
	die "parallel-waits: both causes must be named (malloc_trim $trim, produce_batch $prod)"
# the trim reached through the tracker lock, the producer through a condition wait
assert_eq "$(j pw 'any(any(l.get("lock", "").find("tracker") >= 0 for l in g["chain"]) and g["cause"]["kind"] == "malloc_trim" for g in s["gaps"])')" \
	True "parallel-waits: a chain through the tracker lock to malloc_trim"
grep -q '\[cond [^]]*\];.*produce_batch' "$TMP/pw.rep/gaps/all.folded" ||
	die "parallel-waits: no stack through a cond wait into produce_batch"

gap() { j "$1" 's["gap_ns"]'; }
a=$(gap pw) t=$(gap notrim) p=$(gap noslow)
echo "gap time: parallel-waits $a ns, --without trim $t ns, --without slow-producer $p ns"
awk -v a="$a" -v t="$t" 'BEGIN { exit !(t >= 0.6 * a && t <= 1.6 * a) }' ||
	die "--without trim: gap time $t ns, not near the original's $a ns"
# about (X + e) / (Y + e) of it, 0.45 on an idle machine, 0.70 at a load of 20
awk -v a="$a" -v p="$p" 'BEGIN { exit !(p <= 0.85 * a) }' ||
	die "--without slow-producer: gap time $p ns, not clearly below the original's $a ns"
echo "parallel-waits: both causes named; removing the trim recovers little, the producer more"
