#!/usr/bin/env bash
# A recording probes the processes it records and no other (DESIGN.md, "Uprobes belong to the
# recorded processes"). For each way of choosing them (-p, --cgroup, --follow-children in launch
# mode) the recorder records a target that has the stand-in CUDA driver loaded, while two
# neighbours outside the recording, one that loaded the same driver file before the attach and
# one after it, make 200,000 cuLaunchKernel calls each (tests/record/latecuda.c):
#   - each neighbour's CPU time per call stays under 0.5 us (a trap costs about 10 us of the
#     calling thread's CPU time here; an untrapped call a few ns), measured on its own thread's
#     CPU clock, which the machine's other work cannot inflate;
#   - the driver's executable mapping in each neighbour holds no anonymous page (the breakpoint
#     a uprobe writes makes one);
#   - and the target's own 40 cuCtxSynchronize calls are all in the trace: it is probed.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "attaches BPF programs and makes a cgroup"
cd "$GAPSCOPE_ROOT"
need_built "$GS"
$CC -O2 -g -o "$TMP/latecuda" tests/record/latecuda.c -ldl
$CC -O2 -g -shared -fPIC -o "$TMP/libcuda.so.1" tests/record/fakecuda.c
LIB=$TMP/libcuda.so.1
N=200000

cg=
for h in /sys/fs/cgroup/unified /sys/fs/cgroup/pids /sys/fs/cgroup; do
	[ -f "$h/cgroup.procs" ] && mkdir "$h/gapscope-iso-$$" 2>/dev/null && cg=$h/gapscope-iso-$$ &&
		break
done
[ -n "$cg" ] || die "cannot make a cgroup"
pids=()
cleanup_all() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rmdir "$cg" 2>/dev/null || true
}
trap 'cleanup_all; cleanup' EXIT

# start NAME COMMAND...: runs a latecuda (or a recorder launching one) with its stdin and stdout
# on fifos, NAME_in and NAME_out the test's ends of them, NAME_pid its pid, its stderr in
# $TMP/NAME.err; waits for "ready".
# Each child closes the test's ends of the others' fifos, so that closing one ends its reader.
fds=()
close_fds() {
	local f
	for f in "${fds[@]}"; do eval "exec $f>&-"; done
}
start() {
	local name=$1
	shift
	mkfifo "$TMP/$name.in" "$TMP/$name.out"
	(close_fds && exec "$@") <"$TMP/$name.in" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	printf -v "${name}_pid" %s $!
	pids+=($!)
	exec {fdi}>"$TMP/$name.in" {fdo}<"$TMP/$name.out"
	printf -v "${name}_in" %s "$fdi"
	printf -v "${name}_out" %s "$fdo"
	fds+=("$fdi" "$fdo")
	read -r -t 60 _ <&"$fdo" || die "$name did not start"
}

# say NAME WORD REPLY: one line to a latecuda, and its answer's first word must be REPLY; the
# answer in $said.
say() {
	local in=${1}_in out=${1}_out
	echo "$2" >&"${!in}"
	read -r -t 60 said <&"${!out}" && [ "${said%% *}" = "$3" ] ||
		die "no '$3' after '$2' (got '${said:-}')"
}

# anon_kb PID: the anonymous kB in PID's executable mappings of the driver file.
anon_kb() {
	awk -v lib="$LIB" '
		/^[0-9a-f]+-[0-9a-f]+ / { inlib = ($2 ~ /x/ && $6 == lib) }
		inlib && /^Anonymous:/ { kb += $2 }
		END { print kb + 0 }' "/proc/$1/smaps"
}

# neighbours MODE: both neighbours' launches while the recorder records, each judged.
neighbours() {
	local ns
	say N1 launch launched
	ns=${said#launched }
	echo "$1: neighbour loaded before the attach: $ns ns a call, $(anon_kb "$N1_pid") kB anonymous"
	[ "$ns" -lt 500 ] || die "$1: a neighbour's call took $ns ns of its CPU time (trapped)"
	[ "$(anon_kb "$N1_pid")" = 0 ] || die "$1: a breakpoint in the neighbour's driver mapping"
	start N2$1 "$TMP/latecuda" "$LIB" $N
	say N2$1 load loaded
	say N2$1 launch launched
	local pid=N2${1}_pid
	ns=${said#launched }
	echo "$1: neighbour loaded after the attach: $ns ns a call, $(anon_kb "${!pid}") kB anonymous"
	[ "$ns" -lt 500 ] || die "$1: a neighbour's call took $ns ns of its CPU time (trapped)"
	[ "$(anon_kb "${!pid}")" = 0 ] || die "$1: a breakpoint in the neighbour's driver mapping"
}

# recorded MODE: the target's 40 calls are in the trace.
recorded() {
	local n
	"$GS" script --no-stacks "$TMP/$1.gsc" >"$TMP/$1.txt" 2>"$TMP/$1.serr" ||
		die "$1: script: $(cat "$TMP/$1.serr")"
	n=$(grep -c 'cuCtxSynchronize' "$TMP/$1.txt" || true)
	[ "$n" -ge 40 ] || die "$1: $n of the target's 40 cuCtxSynchronize calls in the trace"
}

start N1 "$TMP/latecuda" "$LIB" $N
say N1 load loaded

for mode in p cgroup follow; do
	if [ $mode = follow ]; then
		# Launched: released (it says "ready") once the recorder's probes are on.
		start T$mode "$GS" record -o "$TMP/$mode.gsc" --follow-children -- \
			"$TMP/latecuda" "$LIB" 40
		ln -s "T$mode.err" "$TMP/$mode.err"
		say T$mode load loaded
	else
		mkfifo "$TMP/$mode.fifo"
		start T$mode "$TMP/latecuda" "$LIB" 40
		say T$mode load loaded
		tp=T${mode}_pid
		if [ $mode = cgroup ]; then
			echo "${!tp}" >"$cg/cgroup.procs"
			(close_fds && exec "$GS" record -o "$TMP/$mode.gsc" --cgroup "$cg") \
				2>"$TMP/$mode.fifo" &
		else
			(close_fds && exec "$GS" record -o "$TMP/$mode.gsc" -p "${!tp}") \
				2>"$TMP/$mode.fifo" &
		fi
		rp=$!
		pids+=("$rp")
		exec {fd}<"$TMP/$mode.fifo"
		read_until "$fd" "$TMP/$mode.err" "*recording*" ||
			die "$mode: no recording: $(cat "$TMP/$mode.err")"
		(close_fds && exec cat) <&$fd >>"$TMP/$mode.err" &
		exec {fd}<&-
	fi
	say T$mode call called
	neighbours $mode
	tp=T${mode}_pid tin=T${mode}_in
	if [ $mode = follow ]; then
		eval "exec ${!tin}>&-" # the target ends, and with it the recording
		wait "${!tp}" || die "$mode: the recorder failed: $(cat "$TMP/$mode.err")"
	else
		kill -INT "$rp"
		wait "$rp" || die "$mode: the recorder failed: $(cat "$TMP/$mode.err")"
		eval "exec ${!tin}>&-"
		wait "${!tp}" 2>/dev/null || true
	fi
	recorded $mode
done
echo "isolation: no neighbour trapped, in -p, --cgroup and --follow-children"
