#!/usr/bin/env bash
# The recorder's memory attached to a process whose stacks run through a library with tables the
# size of libtorch_cpu.so's (issue 43: the recorder reads the target's ELF files into its own
# memory, never mapped): RSS_BIG_N (default 500000) functions, each with its CFI, one of them
# spinning, called by a feeder between launches through the stand-in driver
# (tests/record/truncfeed.c). For each BUILD given: record --flight 5 -p for RSS_BIG_S (default
# 30) seconds, then a plain record -p as long, the recorder's VmRSS sampled every 0.5 s. Prints
# the library's tables, then a table: per build and mode, VmHWM, the highest VmRSS sampled after
# the first 10 s, and the lowest of the last 10 s (MB).
#   tests/bench/rss_bigsyms.sh BUILD [BUILD...]
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: $0 BUILD [BUILD...]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
N=${RSS_BIG_N:-500000}
SECS=${RSS_BIG_S:-30}
TMP=$(mktemp -d)
P=
trap '[ -n "$P" ] && kill $P 2>/dev/null; rm -rf "$TMP"' EXIT

python3 - "$TMP/big.s" "$N" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write(".text\n")
    # A frame each, as a compiler lays one out: an FDE of its own in .eh_frame.
    fn = (".globl {0}\n.type {0},@function\n{0}:\n.cfi_startproc\npush %rbp\n"
          ".cfi_def_cfa_offset 16\n.cfi_offset 6, -16\nmov %rsp, %rbp\n"
          ".cfi_def_cfa_register 6\n{1}pop %rbp\n.cfi_def_cfa 7, 8\nret\n.cfi_endproc\n"
          ".size {0}, .-{0}\n")
    spin = "mov $20000000, %rcx\n1:\ndec %rcx\njnz 1b\n"
    n = int(sys.argv[2])
    for i in range(n):
        if i == n // 2:
            f.write(fn.format("spin_here", spin))
        f.write(fn.format("torchlike_function_name_%08d" % i, ""))
PY
cc -shared -nostdlib -o "$TMP/libbig.so" "$TMP/big.s"
cc -O1 -g -fno-omit-frame-pointer -o "$TMP/feed" tests/record/truncfeed.c -ldl
echo "# libbig.so: $N functions, $(du -m "$TMP/libbig.so" | cut -f1) MB; its tables (KB):"
readelf -SW "$TMP/libbig.so" | python3 -c 'import re, sys
for l in sys.stdin:
    m = re.search(r"\]\s+(\.\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m and m.group(1) in (".symtab", ".strtab", ".dynsym", ".dynstr", ".eh_frame",
                            ".eh_frame_hdr"):
        print("#   %-14s %8d" % (m.group(1), int(m.group(2), 16) // 1024))'

# run BUILD NAME ARGS...: BUILD's record -p ARGS of a fresh feeder for SECS seconds, VmRSS sampled
# every 0.5 s; prints "NAME VmHWM max min" (MB).
run() {
	local b=$1 name=$2 r t=0 rss hwm last max min
	shift 2
	"$TMP/feed" "$(realpath "$b/simcuda/libcuda.so.1")" "$TMP/libbig.so" 1000000 \
		>/dev/null 2>&1 &
	P=$!
	until grep -q libbig.so "/proc/$P/maps" 2>/dev/null; do
		kill -0 "$P" || { echo "bench: the feeder failed" >&2; exit 1; }
		sleep 0.1
	done
	"$b/gapscope" record -f -p "$P" --duration "$SECS" -o "$TMP/t.gsc" "$@" 2>"$TMP/err" &
	r=$!
	: >"$TMP/rss"
	while rss=$(awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { if (r) print r, h }' \
		"/proc/$r/status" 2>/dev/null) && [ -n "$rss" ]; do
		echo "$t $rss" >>"$TMP/rss"
		t=$((t + 1))
		sleep 0.5
	done
	wait "$r" || { cat "$TMP/err" >&2; echo "bench: $name failed" >&2; exit 1; }
	kill "$P" 2>/dev/null || true
	wait "$P" 2>/dev/null || true
	P=
	hwm=$(tail -1 "$TMP/rss" | awk '{ print $3 }')
	last=$(tail -1 "$TMP/rss" | awk '{ print $1 }')
	max=$(awk '$1 >= 20 && $2 > m { m = $2 } END { print m + 0 }' "$TMP/rss")
	min=$(awk -v l="$last" '$1 > l - 20 && (!m || $2 < m) { m = $2 } END { print m + 0 }' \
		"$TMP/rss")
	printf '%-36s %8d %8d %8d\n' "$name" $((hwm * 1024 / 1000000)) $((max * 1024 / 1000000)) \
		$((min * 1024 / 1000000))
}

printf '\n%-36s %8s %8s %8s\n' "recorder attached (MB)" "VmHWM" "max>10s" "min-last10s"
for b; do
	mkdir -p "$TMP/d"
	run "$b" "$b flight" --flight 5 --dump-dir "$TMP/d"
	run "$b" "$b plain"
done
