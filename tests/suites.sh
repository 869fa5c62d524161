#!/usr/bin/env bash
# Runs test suites one after the other, every one of them whatever the others did, then ends with
# one line "N passed, N failed, N skipped" over all of them. Exits non-zero when any suite did.
#
# usage: tests/suites.sh NAME 'COMMAND' [NAME 'COMMAND' ...]
#
# A suite's verdict is its exit status. Its counts, for the last line, come from the file named
# by GAPSCOPE_RESULTS in its environment ("PASS FAIL SKIP", as tests/run.sh and
# tests/check_asan.sh write it); a suite that failed without saying which test failed counts as
# one failed test, so the last line never says "0 failed" for a failed run.
set -u
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || { echo "usage: $0 NAME 'COMMAND' ..." >&2; exit 64; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

pass=0 fail=0 skip=0 verdicts=() bad=0
while [ $# -gt 0 ]; do
	name=$1 cmd=$2
	shift 2
	echo "== suite $name: $cmd"
	start=$(date +%s)
	rc=0
	GAPSCOPE_RESULTS="$dir/$name" bash -c "$cmd" || rc=$?
	p=0 f=0 s=0
	[ -s "$dir/$name" ] && read -r p f s <"$dir/$name"
	if [ "$rc" -ne 0 ]; then
		bad=$((bad + 1))
		[ "${f:-0}" -gt 0 ] 2>/dev/null || f=1
		verdict="FAILED (exit $rc)"
	else
		verdict=passed
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	verdicts+=("$(printf '%-12s %s: %s passed, %s failed, %s skipped, %s s' "$name" "$verdict" \
		"$p" "$f" "$s" $(($(date +%s) - start)))")
	echo "== suite $name: $verdict"
done

echo "== suites"
printf '  %s\n' "${verdicts[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$bad" -eq 0 ]
