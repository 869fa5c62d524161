#!/usr/bin/env bash
# The report's renderers on generated inputs: flame graph SVGs well-formed, holding every frame
# of their folded stacks, with widths proportional to the weights; the speedscope file valid
# against the schema the speedscope npm package ships; and an hour-long report within its size
# limits (index.html < 20 MB, each SVG < 5 MB), saying how much it downsampled.
set -eu
. "$(dirname "$0")/../lib.sh"

gen=$BUILD/tests/render/render_gen
check_svg=tests/render/check_svg.py
[ -x "$gen" ] || die "$gen not built (reports/render/assets.mk)"
if [ ! -d tests/browser/node_modules/ajv ] || ! command -v node >/dev/null; then
	[ -n "${CI:-}" ] && die "node or tests/browser/node_modules missing in CI (make deps)"
	skip "node or the npm packages are missing (make deps installs them)"
fi

# A random folded input: many depths and weights over six orders of magnitude, names that XML
# must escape, non-ASCII, kernel and synthetic frames.
python3 - "$TMP/random.folded" <<'PY'
import random, sys
random.seed(12)
names = ['main', 'start_thread', 'operator<<(std::ostream&, T const&)', 'a & b "c" \'d\'',
         ']]> <script>', 'naïve_ünïcode', '日本語の関数', 'do_syscall_64_[k]', 'schedule_[k]',
         '[lock tracker_lock]', '[woken by finalizer-2]', '--', 'malloc_trim', 'memcpy',
         'cuLaunchKernel'] + ['fn_%d' % i for i in range(60)]
with open(sys.argv[1], 'w', encoding='utf-8') as f:
    for _ in range(400):
        depth = random.randint(1, 24)
        stack = ['root-thread'] + [random.choice(names) for _ in range(depth)]
        f.write(';'.join(stack) + ' %d\n' % int(10 ** random.uniform(2, 8)))
PY
"$gen" --svg "$TMP/random.folded" "$TMP/random.svg" 'chain: a <b> & "c"'
python3 "$check_svg" "$TMP/random.folded" "$TMP/random.svg"

# The check can fail: one width off by a pixel is caught.
sed '0,/width="\([0-9]*\)\.\([0-9]*\)" height="15"/s//width="1\1.\2" height="15"/' \
	"$TMP/random.svg" > "$TMP/bad.svg"
if python3 "$check_svg" "$TMP/random.folded" "$TMP/bad.svg" 2>/dev/null; then
	die "a wrong width passed the check"
fi

# Long C++ names in many narrow frames: the SVG keeps under 5 MB by leaving the narrowest out,
# and what it draws still matches the input.
python3 - "$TMP/long.folded" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], 'w') as f:
    for i in range(30000):
        name = 'ns_%d::Template<std::vector<std::pair<int, long>>, %s>::method_%d' % (
            i, 'Allocator<char>' * 12, i)
        f.write('main;worker;%s;leaf_%d %d\n' % (name, i % 7, random.randint(1, 10**6)))
PY
"$gen" --svg "$TMP/long.folded" "$TMP/long.svg"
size=$(stat -c %s "$TMP/long.svg")
echo "long names: 60002 frames in, SVG $size bytes"
[ "$size" -lt 5000000 ] || die "SVG of long names is $size bytes, over 5 MB"
python3 "$check_svg" "$TMP/long.folded" "$TMP/long.svg"

# Bytes that are not UTF-8 in a symbol still give well-formed XML.
printf 'main;bad\377\376name;leaf 100\nmain;ok 50\n' > "$TMP/bytes.folded"
"$gen" --svg "$TMP/bytes.folded" "$TMP/bytes.svg"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$TMP/bytes.svg" ||
	die "a name with bytes that are not UTF-8 broke the SVG"

# A malformed line is refused, not drawn.
printf 'main;a 10\nmain;b ten\n' > "$TMP/malformed.folded"
if "$gen" --svg "$TMP/malformed.folded" "$TMP/malformed.svg" 2>"$TMP/malformed.err"; then
	die "a malformed folded file was drawn"
fi
grep -q 'Invalid argument' "$TMP/malformed.err" || die "malformed: $(cat "$TMP/malformed.err")"

# A small report: each gap's SVG against its folded file, speedscope against its schema.
"$gen" "$TMP/small" > "$TMP/small.log"
n=0
for f in "$TMP"/small/gaps/*.folded; do
	python3 "$check_svg" "$f" "${f%.folded}.svg" >/dev/null
	n=$((n + 1))
done
assert_eq "$n" 9 "folded files in the small report (8 gaps and all)"
echo "small report: $n SVGs match their folded files"
node tests/browser/speedscope_check.js "$TMP/small/gaps.speedscope.json" 9

# An hour on 2 GPUs: 6.4 million kernels, ~3000 gaps, half a million distinct frames.
"$gen" --hour "$TMP/hour" | tee "$TMP/hour.log"
size=$(stat -c %s "$TMP/hour/index.html")
echo "hour: index.html $size bytes"
[ "$size" -lt 20000000 ] || die "index.html of an hour is $size bytes, over 20 MB"
big=$(find "$TMP/hour/gaps" -name '*.svg' -size +4882k | head -3)
[ -z "$big" ] || die "SVGs over 5 MB: $big"
nsvg=$(find "$TMP/hour/gaps" -name '*.svg' | wc -l)
max=$(find "$TMP/hour/gaps" -name '*.svg' -printf '%s\n' | sort -n | tail -1)
echo "hour: $nsvg SVGs, the largest $max bytes"
grep -q 'busy intervals [0-9]* -> [0-9]* (idle holes under' "$TMP/hour.log" ||
	die "no downsampling report"
# The downsampled timeline keeps each device's busy time exact: merged intervals carry it.
python3 - "$TMP/hour/index.html" "$TMP/hour/summary.json" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding='utf-8').read()
summary = json.load(open(sys.argv[2]))
tl = json.loads(re.search(r'<script type="application/json" id="gs-timeline">(.*?)</script>',
                          page, re.S).group(1))
busy = {d['id']: d['busy_ns'] for d in summary['devices']}
assert tl['merge_ns'] > 0 and tl['intervals_out'] < tl['intervals_in'], tl['merge_ns']
for d in tl['devices']:
    t, total, prev_end = d['t'], 0, 0
    for i in range(0, len(t), 3):
        gap, length, idle = t[i:i + 3]
        assert 0 <= idle <= length and (i == 0 or gap >= tl['merge_ns']), (i, gap, length, idle)
        total += length - idle
    assert total == busy[d['id']], f"GPU {d['id']}: busy {total} in the page, {busy[d['id']]} given"
    print(f"hour: GPU {d['id']}: {len(t) // 3} intervals in the page, busy {total} ns as given")
PY
python3 "$check_svg" "$TMP/hour/gaps/all.folded" "$TMP/hour/gaps/all.svg"
grep -q 'class="note omitted"' "$TMP/hour/gaps/all.svg" ||
	die "all.svg of an hour should say what it left out"
node tests/browser/speedscope_check.js "$TMP/hour/gaps.speedscope.json" $((nsvg))
