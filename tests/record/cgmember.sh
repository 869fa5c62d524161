# shellcheck shell=bash disable=SC2034 # MEMBER_PID, REC_PID and REC_FD are for the tests
# The shell side of tests/record/cgmember.c for tests/cases/record_cgroup_*.sh (sourced after
# tests/lib.sh): members of a cgroup driven through fifos, and a recorder whose stderr is read
# as it goes.
$CC -O2 -g -o "$TMP/cgmember" "$GAPSCOPE_ROOT/tests/record/cgmember.c"

declare -A MEMBER_IN MEMBER_OUT MEMBER_PID MEMBER_JOB

# The hierarchies to make cgroups in: v2 (on its own or beside v1) and v1's pids controller.
cgroup_roots() {
	local h
	for h in /sys/fs/cgroup/unified /sys/fs/cgroup/pids /sys/fs/cgroup; do
		[ -f "$h/cgroup.procs" ] && echo "$h"
	done
	return 0
}

# In a process started: none of the members' fifos (a member sees the end of its input only
# when no other process holds it open).
unshare_fds() {
	local f
	for f in "${MEMBER_IN[@]}" "${MEMBER_OUT[@]}"; do eval "exec $f>&-"; done
}

# member NAME PROCS [PID]: a cgmember that joins the cgroup.procs file PROCS (started as pid PID
# where given); MEMBER_PID[NAME] is its pid once it is in.
member() {
	local name=$1 procs=$2 l in out
	mkfifo "$TMP/$name.in" "$TMP/$name.out"
	(
		unshare_fds
		exec "$TMP/cgmember" ${3:+--as "$3"} "$procs"
	) <"$TMP/$name.in" >"$TMP/$name.out" &
	MEMBER_JOB[$name]=$!
	exec {in}>"$TMP/$name.in" {out}<"$TMP/$name.out"
	MEMBER_IN[$name]=$in MEMBER_OUT[$name]=$out
	read -r -t 30 l <&"$out" && [[ $l == "in "* ]] || die "$name did not join $procs"
	MEMBER_PID[$name]=${l#in }
}

# trim NAME N: N malloc_trim calls by the member, done when it returns.
trim() {
	local l
	echo "trim $2" >&"${MEMBER_IN[$1]}"
	read -r -t 30 l <&"${MEMBER_OUT[$1]}" && [ "$l" = trimmed ] || die "$1 did not trim"
}

# leave NAME: the member exits (its stdin closed), and is waited for.
leave() {
	local in=${MEMBER_IN[$1]} out=${MEMBER_OUT[$1]}
	exec {in}>&- {out}<&-
	wait "${MEMBER_JOB[$1]}" || die "$1 failed"
	unset "MEMBER_JOB[$1]" "MEMBER_IN[$1]" "MEMBER_OUT[$1]"
}

# Every member still there, gone.
members_end() {
	local j
	for j in "${MEMBER_JOB[@]}"; do kill "$j" 2>/dev/null || true; done
	for j in "${MEMBER_JOB[@]}"; do wait "$j" 2>/dev/null || true; done
	MEMBER_JOB=()
}

# record TAG ARGS...: a recorder to $TMP/TAG.gsc, its stderr read through REC_FD into
# $TMP/TAG.err (read_until); REC_PID is its pid.
record() {
	local tag=$1
	shift
	mkfifo "$TMP/$tag.fifo"
	(
		unshare_fds
		exec "$GS" record -o "$TMP/$tag.gsc" "$@"
	) 2>"$TMP/$tag.fifo" &
	REC_PID=$!
	exec {REC_FD}<"$TMP/$tag.fifo"
}

# calls TAG PID: malloc_trim calls of process PID in the trace TAG.
calls() {
	"$GS" script --no-stacks --no-meta "$TMP/$1.gsc" |
		awk -v t="/$2\$" '$2 ~ t && / probe:malloc_trim /' | wc -l
}
