#!/usr/bin/env bash
# One run, two recorders: the API tier attached with -p against CUPTI's truth of the same
# seconds (issue 33: attached, torch-loop read 97% busy and torch-free 64% where CUPTI said 57%
# and 42% of other runs). Carry build/gapscope-portable and build/libgapscope-cupti.so.
#   OUT=DIR tests/gpu/apitier_dual.sh          (about 2 minutes)
# Each program is launched under a recorder with CUPTI; once it is ready (a "ready PID" line, or
# its pid in OUT/NAME.ready) a second recorder
# attaches to it with -p for ATTACH_S (default 6) seconds. Both traces come back under OUT
# (NAME.launch.gsc, NAME.attach.gsc) for the comparison to be made where the traces are read:
# the attached trace's API-tier gaps against the launched trace's CUPTI gaps inside the attach's
# window: apitier_dual_compare.py makes it here too, with this build, into table.txt beside
# the files and both recorders' last lines. PROGS (default "jax torch-free torch-loop") picks.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/gpu-apitier-dual}
. tests/gpu/lib.sh
export GAPSCOPE_CUPTI_LIB=$PWD/$BUILD/libgapscope-cupti.so
ATTACH_S=${ATTACH_S:-6}

dual() { # dual NAME PROG ARGS...
	local name=$1 pid= rp
	shift
	"$GS" record -f -o "$OUT/$name.launch.gsc" -- python3 "$@" >"$OUT/$name.out" \
		2>"$OUT/$name.launch.err" &
	rp=$!
	for _ in $(seq 240); do
		pid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$OUT/$name.out" | head -1)
		[ -z "$pid" ] && [ -s "$OUT/$name.ready" ] && pid=$(cat "$OUT/$name.ready")
		[ -n "$pid" ] && break
		kill -0 "$rp" 2>/dev/null || break
		sleep 0.5
	done
	[ -n "$pid" ] || { say "$name: the program did not start"; kill "$rp"; return 1; }
	timeout 60 "$GS" record -f -o "$OUT/$name.attach.gsc" -p "$pid" --duration "$ATTACH_S" \
		2>"$OUT/$name.attach.err"
	wait "$rp"
	say "$name launched: $(tail -1 "$OUT/$name.launch.err")"
	say "$name attached: $(tail -1 "$OUT/$name.attach.err")"
	ls -la "$OUT/$name".*.gsc | tee -a "$table"
}

for p in ${PROGS:-jax torch-free torch-loop}; do
	case $p in
	jax)
		if python3 -c 'import jax; assert jax.devices("gpu")' 2>/dev/null; then
			dual jax tests/gpu/progs/jax_prep.py 14
		else
			say "jax: no JAX with a GPU here"
		fi
		;;
	torch-free) dual torch-free tests/gpu/progs/torch_free.py 14 ;;
	torch-loop) dual torch-loop tests/gpu/progs/torch_loop.py --seconds 14 --ready "$OUT/torch-loop.ready" ;;
	esac
done
say "== tests/gpu/apitier_dual_compare.py"
python3 tests/gpu/apitier_dual_compare.py "$OUT" "$GS" 2>&1 | tee -a "$table"
