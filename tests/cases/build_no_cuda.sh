#!/usr/bin/env bash
# Without the CUDA toolkit (CUDA_HOME=/nonexistent), every goal that builds (make demo, make
# check, make) stops at once, before installing or building anything, with one line that names
# the toolkit and where it comes from, as the README says; make clean still works.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
command -v make >/dev/null || skip "no make"

for goal in demo check all; do
	rc=0
	make -C "$GAPSCOPE_ROOT" --no-print-directory CUDA_HOME=/nonexistent BUILD="$TMP/b" \
		"$goal" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" -ne 0 ] || die "make $goal without the toolkit: exit 0"
	assert_eq "$(wc -l <"$TMP/err")" 1 "make $goal: stderr lines ($(cat "$TMP/err"))"
	grep -q 'the CUDA toolkit is missing (/nonexistent/bin/nvcc): install cuda-toolkit-13-0 .*https://developer.nvidia.com/cuda-downloads' \
		"$TMP/err" || die "make $goal: $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || die "make $goal printed: $(cat "$TMP/out")"
	[ ! -e "$TMP/b" ] || die "make $goal built something"
done
grep -q 'cuda-toolkit-13-0' "$GAPSCOPE_ROOT/README.md" || die "the README does not say how"
make -C "$GAPSCOPE_ROOT" --no-print-directory CUDA_HOME=/nonexistent BUILD="$TMP/b" clean
echo "make without the toolkit: one line, nothing built"
