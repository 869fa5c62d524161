#!/usr/bin/env bash
# Launch-mode resolution and options of gapscope record:
#  - a program linked against libcuda.so.1 (DT_NEEDED) found through its RUNPATH ($ORIGIN) or
#    LD_LIBRARY_PATH is attached by file before exec: its first driver call is recorded, and no
#    thread had to be stopped for a late attach;
#  - --probe LIB:SYM records a function of the executable as an interval;
#  - --follow-children records the processes the target starts, and only with it.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes

mkdir -p "$TMP/bin/lib" "$TMP/other"
$CC -O2 -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$TMP/bin/lib/libcuda.so.1" tests/record/fakecuda.c
cp "$TMP/bin/lib/libcuda.so.1" "$TMP/other/libcuda.so.1"
cat >"$TMP/linked.c" <<'C'
typedef int (*fn)(void);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		   void *, void **, void **);
int cuStreamSynchronize(void *);
int main(void)
{
	/* The very first thing the program does. */
	cuLaunchKernel((void *)1, 1, 2, 3, 4, 5, 6, 0, (void *)0x42, 0, 0);
	return cuStreamSynchronize((void *)0x42);
}
C
$CC -O2 -o "$TMP/bin/runpath" "$TMP/linked.c" -L"$TMP/bin/lib" -l:libcuda.so.1 \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'
$CC -O2 -o "$TMP/bin/plain" "$TMP/linked.c" -L"$TMP/bin/lib" -l:libcuda.so.1
$CC -O2 -g -fno-omit-frame-pointer -pthread -o "$TMP/target" tests/record/target.c -ldl

check_linked() { # NAME: the first call recorded, from a library attached before exec
	"$GS" script --no-stacks "$TMP/$1.gsc" >"$TMP/$1.txt"
	assert_eq "$(grep -c 'cuda:cuLaunchKernel .*grid=(1,2,3) block=(4,5,6) .*stream=0x42 ' \
		"$TMP/$1.txt")" 1 "$1: first launch"
	assert_eq "$(grep -c 'cuda:cuStreamSynchronize ' "$TMP/$1.txt")" 1 "$1: sync"
	grep -q "^# probe .* cuda $2:cuLaunchKernel live-since" "$TMP/$1.txt" ||
		die "$1: not attached to $2"
	if grep -q 'stopped-for-attach' "$TMP/$1.txt"; then die "$1: late attach needed"; fi
}
"$GS" record -o "$TMP/runpath.gsc" -- "$TMP/bin/runpath" 2>"$TMP/err" || { cat "$TMP/err"; die runpath; }
check_linked runpath "$TMP/bin/lib/libcuda.so.1"
LD_LIBRARY_PATH="$TMP/other" "$GS" record -o "$TMP/ldpath.gsc" -- "$TMP/bin/plain" 2>"$TMP/err" ||
	{ cat "$TMP/err"; die ldpath; }
check_linked ldpath "$TMP/other/libcuda.so.1"

# --probe on a function of the executable: one interval per call, as long as the call.
"$GS" record -o "$TMP/probe.gsc" --probe "$TMP/target:burn" -- "$TMP/target" --contend \
	--burn 0.3 >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; die probe; }
"$GS" script --no-stacks "$TMP/probe.gsc" >"$TMP/probe.txt"
grep -q "^# probe [0-9]* user $TMP/target:burn live-since" "$TMP/probe.txt" || die "no burn probe"
assert_eq "$(grep -c 'probe:burn ' "$TMP/probe.txt")" 2 "burn intervals (--contend and --burn)"
# burn(0.3) runs until its thread used 0.3 s of CPU: at least that long.
grep 'probe:burn ' "$TMP/probe.txt" | sed -n 's/.* dur=\([0-9.]*\)ms .*/\1/p' |
	awk '$1 >= 300 { n++ } END { exit n != 1 }' || die "no burn interval of >= 300 ms"

# --follow-children: the shell's children are recorded with it, not without it.
sh_cmd="$TMP/target --trims 2 >/dev/null; $TMP/target --trims 3 >/dev/null"
"$GS" record -o "$TMP/nofollow.gsc" -- sh -c "$sh_cmd" 2>/dev/null
"$GS" record -o "$TMP/follow.gsc" --follow-children -- sh -c "$sh_cmd" 2>/dev/null
assert_eq "$("$GS" script "$TMP/nofollow.gsc" | grep -c 'probe:malloc_trim')" 0 "trims without"
"$GS" script --no-stacks "$TMP/follow.gsc" >"$TMP/follow.txt"
assert_eq "$(grep -c 'probe:malloc_trim' "$TMP/follow.txt")" 5 "trims of the children"
assert_eq "$(grep -c 'sched:fork ' "$TMP/follow.txt")" 2 "forks"
assert_eq "$(grep -c "sched:exec $TMP/target" "$TMP/follow.txt")" 2 "children's execs"
echo ok
