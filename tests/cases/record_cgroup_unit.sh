#!/usr/bin/env bash
# --cgroup records the cgroup, not its first member (red team D24): the recording goes on while
# the cgroup has processes and ends, saying so, when it has none left. Two members at the attach;
# the one the recorder names first (whichever cgroup.procs listed first) exits; a newcomer joins
# after that and is taken; the other member and the newcomer then make 100 malloc_trim calls
# each, all in the trace, and exit; the recorder ends by itself, having said the cgroup is empty.
# On every cgroup hierarchy the machine has (v2, v1's pids controller).
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
	for d in "${cgs[@]}"; do rmdir "$d" 2>/dev/null || true; done
}
# tests/lib.sh's cleanup last, with the test's exit status (GAPSCOPE_KEEP_FAILED).
trap 'rc=$?; cleanup_cgroups; set +e; (exit "$rc"); cleanup' EXIT

roots=$(cgroup_roots)
[ -n "$roots" ] || die "no cgroup hierarchy with cgroup.procs under /sys/fs/cgroup"
for h in $roots; do
	tag=$(basename "$h")
	cg=$h/gapscope-unit-$$
	mkdir "$cg" && cgs+=("$cg")
	member "$tag-p" "$cg/cgroup.procs"
	member "$tag-q" "$cg/cgroup.procs"
	record "$tag" --cgroup "$cg"
	read_until "$REC_FD" "$TMP/$tag.err" "*recording pid * and 1 more process*" ||
		{ cat "$TMP/$tag.err"; die "$tag: no attach to both members"; }
	first=$(sed -n 's/.*recording pid \([0-9]*\) .*/\1/p' "$TMP/$tag.err")
	case $first in
	"${MEMBER_PID[$tag-p]}") a=$tag-p b=$tag-q ;;
	"${MEMBER_PID[$tag-q]}") a=$tag-q b=$tag-p ;;
	*) die "$tag: the recorder named pid '$first' first, not a member" ;;
	esac

	# The first one named exits; a process that joins after that is taken all the same.
	leave "$a"
	member "$tag-new" "$cg/cgroup.procs"
	read_until "$REC_FD" "$TMP/$tag.err" "*pid ${MEMBER_PID[$tag-new]} joined the cgroup: recording it*" ||
		{ cat "$TMP/$tag.err"; die "$tag: the recording did not outlive the first member named"; }
	trim "$b" 100
	trim "$tag-new" 100
	leave "$b"
	leave "$tag-new"
	read_until "$REC_FD" "$TMP/$tag.err" "gapscope: the cgroup $cg has no process left: the recording ends" ||
		{ cat "$TMP/$tag.err"; die "$tag: the recording did not end with the cgroup's last process"; }
	cat <&"$REC_FD" >>"$TMP/$tag.err"
	wait "$REC_PID" || { cat "$TMP/$tag.err"; die "$tag: record failed"; }
	REC_PID=
	exec {REC_FD}<&-

	nb=$(calls "$tag" "${MEMBER_PID[$b]}")
	nn=$(calls "$tag" "${MEMBER_PID[$tag-new]}")
	echo "$tag: after the first member named exited: $nb of 100 malloc_trim calls of the other," \
		"$nn of 100 of a newcomer"
	assert_eq "$nb" 100 "$tag: calls of the member that outlived the first"
	assert_eq "$nn" 100 "$tag: calls of the process that joined after the first exited"
	"$GS" script --no-stacks "$TMP/$tag.gsc" | grep -q '^# losses total=0 ' || die "$tag: events lost"
	rmdir "$cg"
done
echo "ok: a --cgroup recording lives while the cgroup has processes, and ends when it has none"
