#!/usr/bin/env bash
# minidebuginfo.sh IN OUT: OUT is IN stripped, with MiniDebugInfo as distributions that ship it
# make it (gdb's manual, "MiniDebugInfo"): the function symbols .dynsym lacks, in a .symtab of
# their own, xz-compressed into the section .gnu_debugdata.
set -eu
in=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D "$in" --format=posix --defined-only | awk '{ print $1 }' | sort >"$tmp/dynsyms"
nm "$in" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" >"$tmp/keep"
objcopy --only-keep-debug "$in" "$tmp/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$tmp/keep" \
	"$tmp/debug" "$tmp/mini"
xz -f "$tmp/mini"
objcopy --strip-all --remove-section .comment "$in" "$tmp/stripped"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" "$out"
