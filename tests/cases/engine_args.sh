#!/usr/bin/env bash
# zkengine: bad arguments give one line on stderr and exit 2; --device cuda without a GPU
# gives one line and a non-zero exit.
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$ZK"

expect_error() { # expect_error STATUS ARGS...: exactly one line "zkengine: ...", nothing else
	local want=$1; shift
	local rc=0
	"$ZK" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	[ "$rc" -eq "$want" ] || die "zkengine $*: exit $rc, expected $want"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || die "zkengine $*: not one line: $(cat "$TMP/err")"
	grep -q '^zkengine: ' "$TMP/err" || die "zkengine $*: $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || die "zkengine $*: wrote to stdout: $(cat "$TMP/out")"
	echo "zkengine $*: $(cat "$TMP/err")"
}

expect_error 2 --device sim --log2n 3
expect_error 2 --device sim --log2n 27
expect_error 2 --device sim --log2n 12x
expect_error 2 --device sim --log2n
expect_error 2 --device tpu
expect_error 2 --device sim --partitions 0
expect_error 2 --device sim --partitions -1
expect_error 2 --device sim --scenario nonesuch
expect_error 2 --device sim --no-such-option
expect_error 2 --device sim stray-argument
expect_error 2 --device sim --gpus 9      # simcuda has 8 devices by default
SIMCUDA_DEVICES=2 expect_error 2 --device sim --gpus 3

# A driver without devices (simcuda with none) fails at cuInit, naming the call: one line.
SIMCUDA_DEVICES=0 expect_error 1 --device sim --partitions 1 --log2n 8

# --device cuda where no driver can be loaded: one line, non-zero.  Where a real driver exists,
# the engine would run instead, so that part is skipped.
if ldconfig -p | grep -q 'libcuda\.so\.1 '; then
	echo "libcuda.so.1 present: --device cuda without a GPU not testable here"
else
	expect_error 1 --device cuda --partitions 1 --log2n 8
fi

"$ZK" --help >"$TMP/help" || die "--help failed"
grep -q 'EXAMPLES' "$TMP/help" || die "--help has no EXAMPLES"
