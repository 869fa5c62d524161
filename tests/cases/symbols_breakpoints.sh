#!/usr/bin/env bash
# Issue 43: a uprobe on a file writes its breakpoint into every private mapping of that file, so
# a reader that maps ELF files finds pages of its own in a probed library's image (lib/elfpages
# took them for pages the process wrote, and kept libc's image resident whenever any uprobe on
# libc was live). The recorder and report read files with pread instead (lib/elfread.c):
# test_elfread, run while trapcount holds a uprobe on libc's malloc_trim for every process, sees
# the breakpoint in its own text, the file's bytes through its reads, and maps nothing.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "attaches a uprobe"
need_built "$BUILD/bench/trapcount" "$BUILD/tests/test_elfread"
libc=$(ldd "$BUILD/tests/test_elfread" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -f "$libc" ] || die "no C library found for test_elfread"
"$BUILD/bench/trapcount" "$libc" malloc_trim "$BUILD/tests/test_elfread" >"$TMP/out" 2>"$TMP/err" ||
	die "test_elfread failed under the uprobe: $(cat "$TMP/out" "$TMP/err")"
cat "$TMP/out" "$TMP/err"
grep -q "this process's text 0xcc (a breakpoint)" "$TMP/out" ||
	die "no breakpoint in the test's own text: the uprobe was not live"
