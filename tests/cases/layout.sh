#!/usr/bin/env bash
# The rooms' layering (ARCHITECTURE.md, "Layout"): includes go down only, by rank, no exemption,
#   cmd > loader/live > loader, loader/cupti > reports > reports/render > reports/analysis
#     > reports/symbols > lib > bpf
# (so the recorder's stages never include loader/live/: only the commands do); no .c file is
# #included anywhere; one FNV-1a; no include circle; every .c in ARCHITECTURE.md's stage table.
# Includes are bare names (#include "trace.h") found through -I: every name is unique in the tree.
set -eu
cd "${GAPSCOPE_ROOT:-$(dirname "$0")/../..}"

rank() {
	case $1 in
	cmd) echo 9 ;; loader/live) echo 8 ;; loader) echo 7 ;; loader/cupti) echo 7 ;;
	reports) echo 6 ;; reports/render) echo 5 ;; reports/analysis) echo 4 ;;
	reports/symbols) echo 3 ;; lib) echo 2 ;; bpf) echo 1 ;; *) echo 0 ;;
	esac
}

fail=0
declare -A room
rooms="lib bpf cmd loader loader/live loader/cupti reports reports/render reports/analysis reports/symbols"
for d in $rooms; do
	for f in "$d"/*.h "$d"/*.c; do
		[ -e "$f" ] || continue
		n=$(basename "$f")
		case $n in *.bpf.c) continue ;; esac
		if [ -n "${room[$n]:-}" ]; then
			echo "layout: $n is in both ${room[$n]} and $d (names are unique)"; fail=1
		fi
		room[$n]=$d
	done
done

for d in $rooms; do
	for f in "$d"/*.h "$d"/*.c; do
		[ -e "$f" ] || continue
		case $f in *.bpf.c) continue ;; esac
		r=$(rank "$d")
		while read -r inc; do
			to=${room[$inc]:-}
			[ -n "$to" ] || continue
			if [ "$(rank "$to")" -gt "$r" ]; then
				echo "layout: $f includes $inc from $to, a higher room"; fail=1
			fi
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
done

if grep -rn --include='*.c' --include='*.h' --include='*.cu' '^#include "[^"]*\.c"' \
	lib bpf cmd loader reports engine tests; then
	echo "layout: .c files #included above"; fail=1
fi

n=$(grep -rlE '14695981039346656037|0xcbf29ce484222325|1469598103934665603' \
	--include='*.c' --include='*.h' lib bpf cmd loader reports engine tests | wc -l)
if [ "$n" -ne 1 ]; then
	echo "layout: FNV-1a's offset basis in $n files (one definition, lib/hash.h)"
	grep -rnE '14695981039346656037|0xcbf29ce484222325|1469598103934665603' \
		--include='*.c' --include='*.h' lib bpf cmd loader reports engine tests
	fail=1
fi

# No include circle anywhere in the house: a .c, its .h and its private _int.h/_priv.h are one
# node, an include an arrow between nodes; every strongly connected component of more than one
# node (Tarjan's) is listed, each a circle to cut.
python3 - <<'PY' || fail=1
import os, re, subprocess, sys
from collections import defaultdict

ROOTS = ["lib", "bpf", "loader", "reports", "cmd", "engine"]
files = [f for f in subprocess.run(["git", "ls-files", "--"] + ROOTS, capture_output=True,
                                    text=True).stdout.split() if re.search(r"\.(c|h)$", f)]
byname = defaultdict(list)
for f in files:
    byname[os.path.basename(f)].append(f)
fileset = set(files)

def node(f):
    d, b = os.path.split(f)
    stem = re.sub(r"(\.bpf)?\.(c|h)$", "", b)
    stem = re.sub(r"_(int|priv)$", "", stem)
    return f"{d}/{stem}"

edges = defaultdict(set)
for f in files:
    src = open(f, errors="replace").read()
    for inc in re.findall(r'^#include "([^"]+)"', src, re.M):
        rel = os.path.normpath(os.path.join(os.path.dirname(f), inc))
        to = rel if rel in fileset else (byname[inc][0] if len(byname[inc]) == 1 else None)
        if to and node(to) != node(f):
            edges[node(f)].add(node(to))

# Tarjan's strongly connected components, iteratively.
index, low, on, stack, sccs, n = {}, {}, set(), [], [], [0]
nodes = sorted({node(f) for f in files})
for root in nodes:
    if root in index:
        continue
    work = [(root, iter(sorted(edges[root])))]
    index[root] = low[root] = n[0]; n[0] += 1; stack.append(root); on.add(root)
    while work:
        v, it = work[-1]
        for w in it:
            if w not in index:
                index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
                break
            if w in on:
                low[v] = min(low[v], index[w])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

for comp in sorted(sccs):
    print(f"layout: include circle of {len(comp)} nodes: {' '.join(comp)}")
sys.exit(1 if sccs else 0)
PY

# Every source file has its row: each .c of the house named in ARCHITECTURE.md's stage table.
python3 - <<'PY' || fail=1
import re, subprocess, sys

doc = open("ARCHITECTURE.md").read()
start = doc.index("## Where each stage lives")
table = doc[start:doc.index("\n## ", start + 1)]
named = set(re.findall(r"`([^`]+)`", table))
files = subprocess.run(["git", "ls-files", "--", "lib", "bpf", "loader", "reports", "cmd", "engine"],
                       capture_output=True, text=True).stdout.split()
missing = [f for f in files if f.endswith(".c") and f not in named]
for f in missing:
    print(f"layout: {f} is not in ARCHITECTURE.md's stage table")
sys.exit(1 if missing else 0)
PY

[ $fail -eq 0 ] && echo "layout: ok"
exit $fail
