#!/usr/bin/env python3
"""Checks a flame graph SVG against the folded file it was drawn from.

    check_svg.py FOLDED SVG

The SVG must be well-formed XML; every frame of the folded stacks (a name at a depth) must be
drawn, unless the SVG says it left narrow frames out, and then what it drew must be frames of
the input; and each frame's width must be its weight over the total, of the drawing width
(summed over the frames of one name at one depth, which the layout may split)."""
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

SVG = '{http://www.w3.org/2000/svg}'
FRAME_H = 16
PAD = 10


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def folded_weights(path):
    """(depth, name) -> total weight, and the total."""
    w, total = defaultdict(int), 0
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            stack, n = line.rsplit(' ', 1)
            n = int(n)
            total += n
            for depth, name in enumerate(stack.split(';')):
                w[(depth, name)] += n
    return w, total


def main():
    folded, svg = sys.argv[1], sys.argv[2]
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        fail(f'{svg} is not well-formed XML: {e}')
    width = float(root.get('viewBox').split()[2])
    frames = root.find(f"{SVG}g[@class='frames']")
    if frames is None:
        fail('no frames group')
    drawn = []
    for g in frames.findall(f'{SVG}g'):
        name = g.find(f'{SVG}title').text.split('\n')[0]
        r = g.find(f'{SVG}rect')
        drawn.append((name, float(r.get('x')), float(r.get('y')), float(r.get('width'))))
    if not drawn:
        fail('no frames drawn')
    ymax = max(d[2] for d in drawn)
    got = defaultdict(float)
    count = defaultdict(int)
    for name, x, y, w in drawn:
        depth = round((ymax - y) / FRAME_H)
        got[(depth, name)] += w
        count[(depth, name)] += 1
        if x < PAD - 0.01 or x + w > width - PAD + 0.02:
            fail(f'{name} at depth {depth} drawn outside the graph: x {x} width {w}')
    want, total = folded_weights(folded)
    omitted = any(t.get('class', '').endswith('omitted') for t in root.iter(f'{SVG}text'))
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    if extra:
        fail(f'{len(extra)} frames drawn that are not in the input, e.g. {extra[:3]}')
    if missing and not omitted:
        fail(f'{len(missing)} of {len(want)} frames missing, e.g. {missing[:5]}')
    scale = (width - 2 * PAD) / total
    worst = 0.0
    for k, w in got.items():
        # Widths are written with two decimals: each frame may be 0.005 px off.
        err = abs(w - want[k] * scale)
        worst = max(worst, err)
        if err > 0.006 * count[k] + 1e-9:
            fail(f'{k[1]} at depth {k[0]}: {w:.3f} px drawn, weight {want[k]} of {total} '
                 f'is {want[k] * scale:.3f} px')
    print(f'{svg.split("/")[-1]}: well-formed, {len(got)} of {len(want)} frames drawn'
          f'{" (narrow ones left out, as the SVG says)" if missing else ", all of them"}, '
          f'widths within {worst:.4f} px of weight/total')


main()
