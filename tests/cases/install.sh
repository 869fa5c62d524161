#!/usr/bin/env bash
# make install into a temporary DESTDIR: the binary (gapscope here, where its shared libraries
# are all there; gapscope-portable where ldd finds one missing, or with PORTABLE=1), the CUPTI
# collector where the installed record finds it, a man page per command made from its --help,
# bash completion that completes commands and options; the installed binary runs; make uninstall
# leaves no file behind.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_root "records with the installed binary"
cd "$GAPSCOPE_ROOT"
ROOT=$TMP/root P=/usr/local
D=$ROOT$P
FILES="bin/gapscope lib/gapscope/libgapscope-cupti.so share/man/man1/gapscope.1
share/man/man1/gapscope-record.1 share/man/man1/gapscope-report.1 share/man/man1/gapscope-script.1
share/man/man1/gapscope-diff.1
share/bash-completion/completions/gapscope"

installed() { (cd "$D" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort); }
uninstall() {
	make -s --no-print-directory uninstall BUILD="$BUILD" PREFIX=$P DESTDIR="$ROOT"
	assert_eq "$(find "$ROOT" \( -type f -o -type l \) | wc -l)" 0 "files left after uninstall"
	[ -e "$D/lib/gapscope" ] && die "lib/gapscope left after uninstall"
	return 0
}

make -s --no-print-directory install BUILD="$BUILD" PREFIX=$P DESTDIR="$ROOT"
assert_eq "$(installed)" "$(echo $FILES | tr " " "\n" | sort)" "installed files"
cmp "$D/bin/gapscope" "$BUILD/gapscope" || die "not build/gapscope installed"
assert_eq "$(stat -c %a "$D/bin/gapscope")" 755 "binary mode"
assert_eq "$(stat -c %a "$D/share/man/man1/gapscope-record.1")" 644 "man page mode"

# The installed binary runs, and its record finds the installed collector.
"$D/bin/gapscope" --help | grep -q '^  record   record a program' || die "gapscope --help"
"$D/bin/gapscope" record --help >"$TMP/help"
grep -q '^Usage: gapscope record ' "$TMP/help" || die "gapscope record --help"
"$D/bin/gapscope" record -o "$TMP/c.gsc" -- sh -c 'echo "inject=$CUDA_INJECTION64_PATH"' \
	>"$TMP/out" 2>/dev/null
assert_eq "$(cat "$TMP/out")" "inject=$D/lib/gapscope/libgapscope-cupti.so" "the collector record found"

# A man page per command, from its --help: name line, and options of that command only.
for cmd in record report script diff; do
	page=$D/share/man/man1/gapscope-$cmd.1
	grep -q "^\.TH GAPSCOPE-${cmd^^} \"1\"" "$page" || die "$page: no title"
	grep -q "^gapscope-$cmd \\\\- " "$page" || die "$page: no name line"
done
grep -q 'follow\\-children' "$D/share/man/man1/gapscope-record.1" || die "record's options missing"
grep -q 'min\\-gap' "$D/share/man/man1/gapscope-report.1" || die "report's options missing"
grep -q 'follow\\-children' "$D/share/man/man1/gapscope-report.1" && die "record's options in report's page"
grep -q '^record$' "$D/share/man/man1/gapscope.1" || die "gapscope.1 does not list record"

# Completion: commands, and a command's options from the installed binary's --help.
complete_words() { # WORD...: what the completion offers for the last one
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gapscope
		printf "%s\n" "${COMPREPLY[@]}"' _ "$D/share/bash-completion/completions/gapscope" "$@"
}
assert_eq "$(complete_words "$D/bin/gapscope" re | sort | tr '\n' ' ')" "record report " "commands"
assert_eq "$(complete_words "$D/bin/gapscope" record --follow)" "--follow-children" "record options"
assert_eq "$(complete_words "$D/bin/gapscope" report --min)" "--min-gap" "report options"
uninstall

# The portable build where a library the shared build links is missing (a stand-in ldd says so),
# or when asked for.
printf '#!/bin/sh\necho "\tlibbpf.so.1 => not found"\n' >"$TMP/ldd"
chmod +x "$TMP/ldd"
make -s --no-print-directory install BUILD="$BUILD" PREFIX=$P DESTDIR="$ROOT" LDD="$TMP/ldd" \
	>/dev/null
cmp "$D/bin/gapscope" "$BUILD/gapscope-portable" || die "libraries missing: not the portable build"
uninstall
make -s --no-print-directory install BUILD="$BUILD" PREFIX=$P DESTDIR="$ROOT" PORTABLE=1 >/dev/null
cmp "$D/bin/gapscope" "$BUILD/gapscope-portable" || die "PORTABLE=1: not the portable build"
"$D/bin/gapscope" script --help | grep -q '^Usage: gapscope script ' || die "portable script --help"
uninstall
echo ok
