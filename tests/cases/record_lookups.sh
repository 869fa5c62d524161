#!/usr/bin/env bash
# One trap per launch (loader/uprobes.h, uprobes__retire_lookups): a target that calls
# cuKernelGetFunction before every cuLaunchKernelEx, as PyTorch does (tests/record/
# lookups_target.c, against the stand-in libcuda). By default the recorder retires that probe
# once the library's handles have shown their names: the trace has exactly the 64 lookups made
# before (the target waits for the probe's breakpoint to go before going on, so the count does
# not depend on timing), a "retired-at" record, and every launch after it named correctly, also
# that of a function no probe saw made (named from its handle). With --keep-lookups every lookup
# is there and nothing is retired.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
cd "$GAPSCOPE_ROOT"
mkdir -p "$TMP/lib"
$CC -O2 -g -shared -fPIC -o "$TMP/lib/libcuda.so.1" tests/record/fakecuda.c
$CC -O2 -g -o "$TMP/lookups_target" tests/record/lookups_target.c -ldl
N=400

check() { # check NAME LOOKUPS RETIRED
	local name=$1 want=$2 retired=$3 s=$TMP/$1.script
	"$GS" script --no-stacks "$TMP/$name.gsc" >"$s" 2>"$TMP/$name.serr"
	[ -n "$(other_warnings "$TMP/$name.serr")" ] && { cat "$TMP/$name.serr"; die "$name: script warned"; }
	assert_eq "$(grep -c 'cuda:cuKernelGetFunction ' "$s" || true)" "$want" "$name: lookups in the trace"
	assert_eq "$(grep -c '^# probe .*:cuKernelGetFunction retired-at=' "$s" || true)" "$retired" \
		"$name: retired probe records"
	assert_eq "$(grep -c 'cuda:cuLaunchKernelEx ' "$s" || true)" $((64 + N + 1)) "$name: launches"
	for k in alpha beta gamma delta; do
		assert_eq "$(grep -c "cuda:cuLaunchKernelEx kernel=lk_$k[ (]" "$s" || true)" $(((64 + N) / 4)) \
			"$name: launches of lk_$k"
	done
	assert_eq "$(grep -c 'cuda:cuLaunchKernelEx kernel=lk_epsilon[ (]' "$s" || true)" 1 \
		"$name: the launch of a function no probe saw made"
}

"$GS" record --all-launches -o "$TMP/retire.gsc" -- "$TMP/lookups_target" "$TMP/lib/libcuda.so.1" $N 1 \
	>"$TMP/retire.out" 2>"$TMP/retire.err" || { cat "$TMP/retire.err"; die "record (retire)"; }
check retire 64 1
"$GS" record --all-launches --keep-lookups -o "$TMP/keep.gsc" -- "$TMP/lookups_target" \
	"$TMP/lib/libcuda.so.1" $N 0 >"$TMP/keep.out" 2>"$TMP/keep.err" ||
	{ cat "$TMP/keep.err"; die "record (--keep-lookups)"; }
check keep $((64 + N + 1)) 0
echo "ok: 64 lookups then retired; $((64 + N + 1)) with --keep-lookups; every launch named"
