#!/usr/bin/env bash
# The tree is formatted: every C source and header (but the generated vmlinux.h) is what
# clang-format makes of it with the repository's .clang-format (`make format` applies it).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
cd "$GAPSCOPE_ROOT"
command -v clang-format >/dev/null || die "clang-format missing (make deps)"
files=$(git ls-files '*.c' '*.h' | grep -v '^vmlinux/')
[ -n "$files" ] || die "no sources found"
bad=0
for f in $files; do
	if ! clang-format --style=file "$f" | diff -q "$f" - >/dev/null; then
		echo "not formatted: $f"
		clang-format --style=file "$f" | diff -u "$f" - | head -20
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ] || die "$bad files not formatted (make format)"
echo "$(echo "$files" | wc -l) files formatted"
