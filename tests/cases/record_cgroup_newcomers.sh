#!/usr/bin/env bash
# --cgroup takes every newcomer (red team D25): (a) in a cgroup below the one given, there at the
# attach or joining later; (b) one whose pid an earlier member had, that member seen and gone; (c)
# one that joins after the cgroup was renamed (v1; v2 cannot rename a cgroup). Each newcomer,
# once the recorder says it took it, makes 100 malloc_trim calls: all of them are in the trace.
# A member that stays holds the recording open until the end. On every cgroup hierarchy the
# machine has (v2, v1's pids controller).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_probes
cd "$GAPSCOPE_ROOT"
. tests/record/cgmember.sh

cgs=()
cleanup_cgroups() {
	local d
	members_end
	if [ -n "${REC_PID:-}" ]; then
		kill -INT "$REC_PID" 2>/dev/null || true
		wait "$REC_PID" || true
	fi
	for d in "${cgs[@]}"; do rmdir "$d/sub" "$d" 2>/dev/null || true; done
}
# tests/lib.sh's cleanup last, with the test's exit status (GAPSCOPE_KEEP_FAILED).
trap 'rc=$?; cleanup_cgroups; set +e; (exit "$rc"); cleanup' EXIT

# joined TAG NAME: the recorder says it took member NAME.
joined() {
	read_until "$REC_FD" "$TMP/$1.err" "*pid ${MEMBER_PID[$2]} joined the cgroup: recording it*" ||
		{ cat "$TMP/$1.err"; die "$1: $2 (pid ${MEMBER_PID[$2]}) not taken: $3"; }
}

roots=$(cgroup_roots)
[ -n "$roots" ] || die "no cgroup hierarchy with cgroup.procs under /sys/fs/cgroup"
for h in $roots; do
	tag=$(basename "$h")
	cg=$h/gapscope-newc-$$
	mkdir "$cg" && cgs+=("$cg")
	mkdir "$cg/sub"
	member "$tag-stay" "$cg/cgroup.procs"
	member "$tag-below" "$cg/sub/cgroup.procs"
	record "$tag" --cgroup "$cg"
	read_until "$REC_FD" "$TMP/$tag.err" "*recording pid *" ||
		{ cat "$TMP/$tag.err"; die "$tag: no attach"; }
	grep -q "recording pid [0-9]* and 1 more process" "$TMP/$tag.err" ||
		{ cat "$TMP/$tag.err"; die "$tag: (a) the process in a cgroup below not taken at the attach"; }
	trim "$tag-below" 100
	want="$tag-below"

	# (a) A newcomer in the cgroup below.
	member "$tag-a" "$cg/sub/cgroup.procs"
	joined "$tag" "$tag-a" "(a) it joined a cgroup below"
	trim "$tag-a" 100
	want+=" $tag-a"

	# (b) A member taken, gone, and a newcomer with its pid.
	member "$tag-x" "$cg/cgroup.procs"
	joined "$tag" "$tag-x" "a newcomer"
	leave "$tag-x"
	member "$tag-b" "$cg/cgroup.procs" "${MEMBER_PID[$tag-x]}"
	assert_eq "${MEMBER_PID[$tag-b]}" "${MEMBER_PID[$tag-x]}" "$tag: the newcomer's pid"
	joined "$tag" "$tag-b" "(b) its pid was an earlier member's"
	trim "$tag-b" 100
	want+=" $tag-b"

	# (c) The cgroup renamed, and a newcomer.
	if mv "$cg" "$cg-moved" 2>/dev/null; then
		cgs+=("$cg-moved")
		cg=$cg-moved
		member "$tag-c" "$cg/cgroup.procs"
		joined "$tag" "$tag-c" "(c) it joined after the cgroup was renamed"
		trim "$tag-c" 100
		want+=" $tag-c"
	else
		echo "$tag: (c) left out: this hierarchy cannot rename a cgroup"
	fi

	for m in $want; do leave "$m"; done
	leave "$tag-stay"
	read_until "$REC_FD" "$TMP/$tag.err" "gapscope: the cgroup * has no process left: the recording ends" ||
		{ cat "$TMP/$tag.err"; die "$tag: the recording did not end with the cgroup's last process"; }
	cat <&"$REC_FD" >>"$TMP/$tag.err"
	wait "$REC_PID" || { cat "$TMP/$tag.err"; die "$tag: record failed"; }
	REC_PID=
	exec {REC_FD}<&-
	for m in $want; do
		n=$(calls "$tag" "${MEMBER_PID[$m]}")
		echo "$m (pid ${MEMBER_PID[$m]}): $n of 100 malloc_trim calls recorded"
		assert_eq "$n" 100 "$m: malloc_trim calls recorded"
	done
	"$GS" script --no-stacks "$TMP/$tag.gsc" | grep -q '^# losses total=0 ' || die "$tag: events lost"
	rmdir "$cg/sub" "$cg"
done
echo "ok: --cgroup takes newcomers below it, with a reused pid, and after a rename"
