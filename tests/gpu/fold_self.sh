#!/usr/bin/env bash
# Folds a recorder's self-profile (tests/gpu/flight_profile.sh's self.gsc) into the functions
# its CPU went to, on a machine with the same build:   tests/gpu/fold_self.sh SELF.gsc [BINARY]
# BINARY (default build/gapscope-portable) names the recorder's own frames (addr2line); other
# modules' frames stay module+offset, kernel frames keep their names. Prints the leaf functions
# and the functions on the stack (inclusive), by share of the samples.
set -eu
cd "$(dirname "$0")/../.."
T=${1:?SELF.gsc}
BIN=${2:-build/gapscope-portable}
base=$(basename "$BIN")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One line a sample: its frames, innermost first, as "module+0xoff" or a kernel name.
build/gapscope script "$T" 2>/dev/null | awk '
	/^\t/ && s != "" {
		f = $0; sub(/^[ \t]*[0-9a-f]+ /, "", f)
		if (f ~ /\[kernel.kallsyms\]/) { sub(/\+0x.*/, "", f); f = "[k]" f }
		else { gsub(/[()]/, "", f); n = split(f, p, "/"); f = p[n] }
		s = s " " f
		next
	}
	{ if (s != "") print s; s = /: sample:/ ? "@" : "" } # an event: a sample, or another
	END { if (s != "") print s }' >"$tmp/stacks"
# The binary's offsets, named once each.
grep -o "$base+0x[0-9a-f]*" "$tmp/stacks" | sort -u | sed "s/^$base+//" >"$tmp/offs" || true
addr2line -f -C -e "$BIN" <"$tmp/offs" | paste - - | cut -f1 | paste "$tmp/offs" - >"$tmp/names"
awk -v base="$base" '
	FILENAME == ARGV[1] { name[base "+" $1] = $2; next }
	{
		n++; delete seen
		for (i = 2; i <= NF; i++) {
			f = ($i in name) ? name[$i] : $i
			if (i == 2) leaf[f]++
			if (!(f in seen)) { incl[f]++; seen[f] = 1 }
		}
	}
	END {
		printf "samples %d\n", n
		for (k in leaf) printf "leaf %5.1f%% %s\n", 100 * leaf[k] / n, k | "sort -k2 -rn | head -25"
		close("sort -k2 -rn | head -25")
		for (k in incl) printf "incl %5.1f%% %s\n", 100 * incl[k] / n, k | "sort -k2 -rn | head -45"
	}' "$tmp/names" "$tmp/stacks"
