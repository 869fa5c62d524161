#!/usr/bin/env bash
# make bench: the recorder's peak resident size attached to a program that maps many large
# libraries (issue 37). zkengine on simcuda (tracker-trim, its gaps) with the 60 largest shared
# objects of the system that load cleanly preloaded (LD_PRELOAD: each mapped whole, ~0.5 GB of
# files), attached with `record -p` for RSS_LIBS_S (default 30) seconds: plain, then
# --flight 30 --trigger-gap 250 (dumps and their reports on). VmHWM of the recorder against the
# goals: plain <= 100 MB; flight <= --flight-mb + the ring buffer (mapped twice: what RSS shows of
# it) + 48 MB. Prints a table last.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
GS=$PWD/$BUILD/gapscope
ZK=$PWD/$BUILD/zkengine
SECS=${RSS_LIBS_S:-30}
NLIBS=${RSS_LIBS_N:-60}
TMP=$(mktemp -d)
Z=
trap '[ -n "$Z" ] && kill $Z 2>/dev/null; rm -rf "$TMP"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }

# The largest libraries that preload without a word (no missing dependency, no refusal).
libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
: >"$TMP/libs"
n=0
# shellcheck disable=SC2045 # ls -S: by size, largest first; library paths have no spaces
for f in $(ls -S "$libdir"/*.so "$libdir"/*.so.* 2>/dev/null); do
	case $(basename "$f") in
	libc.so* | libpthread* | lib?san* | libhwasan* | libmemusage* | libpcprofile* | libSegFault* | \
		libjemalloc* | libtcmalloc* | libfakeroot* | libeatmydata*) continue ;;
	esac
	if [ ! -f "$f" ] || [ -n "$(LD_PRELOAD=$f /bin/true 2>&1)" ]; then
		continue
	fi
	echo "$f" >>"$TMP/libs"
	n=$((n + 1))
	[ "$n" -ge "$NLIBS" ] && break
done
mb=$(xargs du -cmL <"$TMP/libs" | tail -1 | cut -f1)
echo "# $n libraries preloaded, $mb MB of files"

# peak NAME ARGS...: the recorder's VmHWM (KiB) attached to a fresh engine for SECS seconds.
peak() {
	local name=$1 r hwm=0 h
	shift
	LD_PRELOAD=$(paste -sd: "$TMP/libs") SIMCUDA_TIME_SCALE=10 "$ZK" --device sim \
		--scenario tracker-trim --partitions 1000000 >/dev/null 2>&1 &
	Z=$!
	until [ "$(grep -c '\.so' "/proc/$Z/maps" 2>/dev/null || echo 0)" -gt "$n" ]; do sleep 0.1; done
	mkdir -p "$TMP/$name"
	"$GS" record -p "$Z" --duration "$SECS" -o "$TMP/$name/t.gsc" "$@" 2>"$TMP/$name/err" &
	r=$!
	while kill -0 "$r" 2>/dev/null; do
		h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$r/status" 2>/dev/null) && [ -n "$h" ] && hwm=$h
		sleep 0.5
	done
	wait "$r" || { cat "$TMP/$name/err" >&2; echo "bench: record $name failed" >&2; exit 1; }
	kill "$Z"
	wait "$Z" 2>/dev/null || true
	Z=
	echo "$hwm"
}
maps=$(LD_PRELOAD=$(paste -sd: "$TMP/libs") sh -c 'grep -c "\.so" /proc/$$/maps')
plain=$(peak plain)
flight=$(peak flight --flight 30 --trigger-gap 250 --dump-dir "$TMP/flight")
ringbuf=16
fmb=64
bound=$(sed -n 's/^gapscope: flight: memory: about \([0-9]*\) MiB in all .*/\1/p' "$TMP/flight/err")
goal=$(((fmb + 2 * ringbuf) * 1048576 / 1000000 + 48))
grep '^gapscope: flight: [0-9]* dump(s)' "$TMP/flight/err" || true
printf '\n%-44s %10s %10s\n' "recorder attached ($n libraries, $maps maps)" "peak MB" "goal MB"
printf '%-44s %10d %10d\n' "record -p (plain)" $((plain * 1024 / 1000000)) 100
printf '%-44s %10d %10d\n' "record -p --flight 30 (--flight-mb $fmb)" $((flight * 1024 / 1000000)) "$goal"
printf '%-44s %10s\n' "bound stated at start-up (MiB)" "$bound"
