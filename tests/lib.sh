# Shared helpers for shell tests: source it after `set -eu`.
BUILD=${BUILD:-build}
TMP=$(mktemp -d)
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# Root-only tests skip on a developer machine without root, never in CI.
need_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	[ -n "${CI:-}" ] && die "not root in CI, but this test $*"
	skip "not root (this test $*)"
}

# assert_eq ACTUAL EXPECTED WHAT
assert_eq() { [ "$1" = "$2" ] || die "$3: got '$1', expected '$2'"; }
