#!/usr/bin/env bash
# zkengine --verify on simcuda passes on fresh random inputs, and fails when a kernel is wrong
# (SIMCUDA_FAULT corrupts one output element of every launch of the named kernel).
set -eu
. "$GAPSCOPE_ROOT/tests/lib.sh"
need_built "$ZK"

run() { # run NAME ARGS...: exit status to $TMP/NAME.rc, output to $TMP/NAME.{out,err}
	local name=$1; shift
	local rc=0
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	echo "$rc" >"$TMP/$name.rc"
}

run good "$ZK" --device sim --partitions 8 --log2n 12 --verify
cat "$TMP/good.out" "$TMP/good.err"
assert_eq "$(cat "$TMP/good.rc")" 0 "exit status of a correct run"
grep -q '^verification passed (8 partitions)$' "$TMP/good.out" || die "no 'verification passed'"
assert_eq "$(grep -c ' ok$' "$TMP/good.out")" 8 "partitions verified"

# fresh inputs every run: a second run has another seed; --seed reproduces the inputs
run again "$ZK" --device sim --partitions 1 --log2n 8 --verify
seed1=$(sed -n 's/.*seed \(0x[0-9a-f]*\).*/\1/p' "$TMP/good.out")
seed2=$(sed -n 's/.*seed \(0x[0-9a-f]*\).*/\1/p' "$TMP/again.out")
[ -n "$seed1" ] && [ "$seed1" != "$seed2" ] || die "seed not fresh: '$seed1' '$seed2'"
run seeded "$ZK" --device sim --partitions 1 --log2n 8 --verify --seed "$seed1"
grep -q "seed $seed1 " "$TMP/seeded.out" || die "--seed $seed1 not used"

for kernel in fr_ntt_stage fr_pointwise fr_coset; do
	SIMCUDA_FAULT=$kernel run "bad-$kernel" \
		"$ZK" --device sim --partitions 8 --log2n 12 --verify
	cat "$TMP/bad-$kernel.err"
	rc=$(cat "$TMP/bad-$kernel.rc")
	assert_eq "$rc" 1 "exit status with a broken $kernel"
	grep -q '^zkengine: verification FAILED' "$TMP/bad-$kernel.err" ||
		die "broken $kernel: no failure message"
	! grep -q 'verification passed' "$TMP/bad-$kernel.out" || die "broken $kernel passed"
done

# The fault only in the quotient kernel escapes the NTT self-check: the H check must catch it.
grep -q 'partition 0: A(t)\*B(t) - C(t) != H(t)\*(t^n - 1)' "$TMP/bad-fr_pointwise.err" ||
	die "broken fr_pointwise not caught by the H check"

# Without --verify the broken engine runs to the end: only verification notices.
SIMCUDA_FAULT=fr_ntt_stage run unverified "$ZK" --device sim --partitions 2 --log2n 10
assert_eq "$(cat "$TMP/unverified.rc")" 0 "exit status of an unverified broken run"
echo "verify passes when correct, fails for broken fr_ntt_stage, fr_pointwise, fr_coset"
