#!/usr/bin/env bash
# The rooms' layering (ARCHITECTURE.md, "Layout"): includes go down only,
#   loader/live > loader > reports > reports/render > reports/analysis > reports/symbols > lib > bpf
# the recorder's stages never include loader/live/ (only the command: gapscope.c, record.c,
# options.[ch]); no .c file is #included anywhere; one FNV-1a.
# Includes are bare names (#include "trace.h") found through -I: every name is unique in the tree.
set -eu
cd "${GAPSCOPE_ROOT:-$(dirname "$0")/../..}"

rank() {
	case $1 in
	loader/live) echo 8 ;; loader) echo 7 ;; loader/cupti) echo 7 ;;
	reports) echo 6 ;; reports/render) echo 5 ;; reports/analysis) echo 4 ;;
	reports/symbols) echo 3 ;; lib) echo 2 ;; bpf) echo 1 ;; *) echo 0 ;;
	esac
}

fail=0
declare -A room
rooms="lib bpf loader loader/live loader/cupti reports reports/render reports/analysis reports/symbols"
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
			if [ "$d" = loader ] && [ "$to" = loader/live ]; then
				case $(basename "$f") in gapscope.c | record.c | options.c | options.h) continue ;; esac
			fi
			if [ "$(rank "$to")" -gt "$r" ]; then
				echo "layout: $f includes $inc from $to, a higher room"; fail=1
			fi
			if [ "$d" = loader ] && [ "$to" = loader/live ]; then
				case $(basename "$f") in gapscope.c | record.c | options.c | options.h) ;;
				*) echo "layout: $f (a recorder stage) includes $inc from loader/live"; fail=1 ;;
				esac
			fi
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
done

if grep -rn --include='*.c' --include='*.h' --include='*.cu' '^#include "[^"]*\.c"' \
	lib bpf loader reports engine tests; then
	echo "layout: .c files #included above"; fail=1
fi

n=$(grep -rlE '14695981039346656037|0xcbf29ce484222325|1469598103934665603' \
	--include='*.c' --include='*.h' lib bpf loader reports engine tests | wc -l)
if [ "$n" -ne 1 ]; then
	echo "layout: FNV-1a's offset basis in $n files (one definition, lib/hash.h)"
	grep -rnE '14695981039346656037|0xcbf29ce484222325|1469598103934665603' \
		--include='*.c' --include='*.h' lib bpf loader reports engine tests
	fail=1
fi

[ $fail -eq 0 ] && echo "layout: ok"
exit $fail
