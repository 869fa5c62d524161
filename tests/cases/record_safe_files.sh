#!/usr/bin/env bash
# Trace and report files are created 0600 (or narrower, by the umask), exclusively, and never
# written through a link: an existing output is refused without -f (one line, non-zero exit, the
# file untouched); -f removes what is there and creates the file anew. In a sticky directory
# that others can write to (as /tmp), a symbolic link or a hard link planted at the output path
# never leads gapscope to write into the file it points to, with -f or without; nor does a link
# planted in a report directory, or a report directory that is a link or someone else's.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "loads BPF programs"
GS=$(realpath "$BUILD/gapscope")
GOLDEN=$GAPSCOPE_ROOT/tests/golden/report/trace.gsc # a trace with gaps: every report file

chmod 0755 "$TMP" # the planting user must reach the shared directory
SHARED=$TMP/shared
mkdir -m 1777 "$SHARED"
echo "precious" >"$TMP/victim"
chmod 0644 "$TMP/victim"
victim_ino=$(stat -c %i "$TMP/victim")
victim_intact() {
	assert_eq "$(cat "$TMP/victim")" precious "$1: the victim's content"
	assert_eq "$(stat -c '%i %a %U' "$TMP/victim")" "$victim_ino 644 root" "$1: the victim's inode, mode, owner"
}
# as_nobody CMD...: runs CMD as another user (who plants links in the shared directory)
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# record_to OUT [ARGS...]: records a short command into OUT; its exit status.
record_to() {
	local out=$1 rc=0
	shift
	"$GS" record "$@" -o "$out" -- true >"$TMP/rec.out" 2>"$TMP/rec.err" || rc=$?
	return $rc
}
finished() { "$GS" script "$1" 2>/dev/null | grep -q '^# end ' || die "$1: not a finished trace"; }

# Modes: 0600 under the usual umask, narrower where the umask says so.
for m in 022:600 077:600 027:600 0277:400; do
	(umask "${m%:*}" && record_to "$TMP/mode-${m%:*}.gsc") || die "record under umask ${m%:*}"
	assert_eq "$(stat -c %a "$TMP/mode-${m%:*}.gsc")" "${m#*:}" "trace mode under umask ${m%:*}"
	finished "$TMP/mode-${m%:*}.gsc"
done

# An existing output without -f: refused, one line, the file untouched; -f replaces it (a new
# file: a hard link to the old one keeps the old content).
echo old >"$TMP/exists.gsc"
ln "$TMP/exists.gsc" "$TMP/exists.keep"
rc=0
record_to "$TMP/exists.gsc" || rc=$?
[ "$rc" -ne 0 ] || die "an existing output was not refused"
assert_eq "$(wc -l <"$TMP/rec.err")" 1 "lines on stderr for an existing output"
grep -q "^gapscope: $TMP/exists.gsc exists (use -f to overwrite)$" "$TMP/rec.err" ||
	die "unexpected message: $(cat "$TMP/rec.err")"
assert_eq "$(cat "$TMP/exists.gsc")" old "an existing output without -f"
record_to "$TMP/exists.gsc" -f || die "-f: $(cat "$TMP/rec.err")"
finished "$TMP/exists.gsc"
assert_eq "$(cat "$TMP/exists.keep")" old "the old file's other link after -f"
assert_eq "$(stat -c '%h %a' "$TMP/exists.gsc")" "1 600" "links and mode of the replaced trace"

# Links planted in the sticky directory, by root and by another user; dangling ones too.
ln -s "$TMP/victim" "$SHARED/root-sym.gsc"
as_nobody ln -s "$TMP/victim" "$SHARED/user-sym.gsc"
ln "$TMP/victim" "$SHARED/hard.gsc"
ln -s "$TMP/nowhere" "$SHARED/dangling.gsc"
for name in root-sym user-sym hard dangling; do
	out=$SHARED/$name.gsc
	rc=0
	record_to "$out" || rc=$?
	[ "$rc" -ne 0 ] || die "$name: a planted link was written through without -f"
	grep -q "^gapscope: $out exists (use -f to overwrite)$" "$TMP/rec.err" ||
		die "$name: unexpected message: $(cat "$TMP/rec.err")"
	[ "$name" = hard ] || [ -L "$out" ] || die "$name: the planted link is gone without -f"
	victim_intact "$name without -f"
	record_to "$out" -f || die "$name -f: $(cat "$TMP/rec.err")"
	[ ! -L "$out" ] || die "$name -f: still a link"
	assert_eq "$(stat -c '%h %a %U' "$out")" "1 600 root" "$name -f: the new trace's links, mode, owner"
	finished "$out"
	victim_intact "$name with -f"
	[ ! -e "$TMP/nowhere" ] || die "$name: the dangling link's target was created"
done
assert_eq "$(stat -c %h "$TMP/victim")" 1 "the victim's links once the hard link was replaced"

# A directory at the output path is not removed by -f.
mkdir "$SHARED/dir.gsc"
rc=0
record_to "$SHARED/dir.gsc" -f || rc=$?
[ "$rc" -ne 0 ] && [ -d "$SHARED/dir.gsc" ] || die "-f onto a directory"
grep -q "^gapscope: $SHARED/dir.gsc is a directory: -f replaces only a regular file or a link$" "$TMP/rec.err" ||
	die "unexpected message: $(cat "$TMP/rec.err")"

# report -o DIR: the directory 0700, its files 0600 (or narrower).
report_to() {
	local rc=0
	"$GS" report "$GOLDEN" "$@" >"$TMP/rep.out" 2>"$TMP/rep.err" || rc=$?
	return $rc
}
report_to -o "$SHARED/rep" || die "report: $(cat "$TMP/rep.err")"
[ -e "$SHARED/rep/gaps/0001.svg" ] || die "the golden trace's report has no gap files"
assert_eq "$(stat -c %a "$SHARED/rep" "$SHARED/rep/gaps" | sort -u)" 700 "report directory modes"
assert_eq "$(find "$SHARED/rep" -type f -printf '%m\n' | sort -u)" 600 "report file modes"
(umask 0277 && report_to -o "$TMP/rep-0277") || die "report under umask 0277"
assert_eq "$(find "$TMP/rep-0277" -type f -printf '%m\n' | sort -u)" 400 "report file modes, umask 0277"
nfiles=$(find "$SHARED/rep" -type f | wc -l)

# An existing DIR without -f: refused, untouched.
rc=0
report_to -o "$SHARED/rep" || rc=$?
[ "$rc" -ne 0 ] || die "report into an existing directory without -f"
assert_eq "$(cat "$TMP/rep.err")" "gapscope: $SHARED/rep exists (use -f to write into it)" "message"

# -f into DIR whose files are planted links (as its owner could have left them): replaced.
for f in summary.txt summary.json index.html gaps/0001.svg gaps/all.folded gaps/0001.folded; do
	rm -f "$SHARED/rep/$f"
done
ln -s "$TMP/victim" "$SHARED/rep/summary.txt"
ln "$TMP/victim" "$SHARED/rep/summary.json"
ln -s "$TMP/victim" "$SHARED/rep/index.html"
ln -s "$TMP/victim" "$SHARED/rep/gaps/0001.svg"
ln "$TMP/victim" "$SHARED/rep/gaps/all.folded"
ln -s "$TMP/victim" "$SHARED/rep/gaps/0001.folded" # written by a rename
report_to -o "$SHARED/rep" -f || die "report -f: $(cat "$TMP/rep.err")"
victim_intact "report -f over planted links"
assert_eq "$(stat -c %h "$TMP/victim")" 1 "the victim's links after report -f"
[ -z "$(find "$SHARED/rep" -type l)" ] || die "links left in the report: $(find "$SHARED/rep" -type l)"
assert_eq "$(find "$SHARED/rep" -type f -links 1 -printf '%m\n' | sort | uniq -c | awk '{print $1, $2}')" \
	"$nfiles 600" "report files after -f (count, mode)"
grep -q '^gaps: ' "$SHARED/rep/summary.txt" || die "summary.txt not written"

# DIR itself a planted link to a directory, or someone else's directory: never written into.
mkdir "$TMP/victim-dir"
ln -s "$TMP/victim-dir" "$SHARED/rep-link"
rc=0
report_to -o "$SHARED/rep-link" -f || rc=$?
[ "$rc" -ne 0 ] || die "report -f through a link to a directory"
assert_eq "$(cat "$TMP/rep.err")" "gapscope: $SHARED/rep-link is a symbolic link: not written through" "message"
as_nobody mkdir "$SHARED/rep-other"
rc=0
report_to -o "$SHARED/rep-other" -f || rc=$?
[ "$rc" -ne 0 ] || die "report -f into another user's directory"
assert_eq "$(cat "$TMP/rep.err")" "gapscope: $SHARED/rep-other belongs to another user: not written into" \
	"message"
assert_eq "$(find "$TMP/victim-dir" "$SHARED/rep-other" -mindepth 1 | wc -l)" 0 "files written there"
echo ok
