#!/usr/bin/env python3
"""Checks a flame graph SVG against the folded file it was drawn from.

    check_svg.py FOLDED SVG

The SVG must be well-formed XML. Its frames come in depth-first order, parents first (as
reports/render/flamegraph.c walks the stacks), so a frame's parent is the last frame one level down
before it, and its path from the root is known exactly. Every frame of the input (a path) must
be drawn, unless the SVG says it left narrow frames out, and then none drawn may be narrower
than one left out; nothing may be drawn that is not in the input; each frame's width must be
its weight over the total, of the drawing width, and its x where its earlier siblings (in name
order, from its parent's left edge) end."""
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

SVG = '{http://www.w3.org/2000/svg}'
FRAME_H = 16
PAD = 10
ROUND = 0.006       # positions and widths are written with two decimals


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def folded_tree(path):
    """path (a tuple of frames, root first) -> weight through it; children per path; total."""
    w, kids, total = defaultdict(int), defaultdict(set), 0
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            stack, n = line.rsplit(' ', 1)
            n = int(n)
            total += n
            frames = tuple(stack.split(';'))
            for depth in range(len(frames)):
                w[frames[:depth + 1]] += n
                kids[frames[:depth]].add(frames[depth])
    return w, kids, total


def main():
    folded, svg = sys.argv[1], sys.argv[2]
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        fail(f'{svg} is not well-formed XML: {e}')
    width = float(root.get('viewBox').split()[2])
    group = root.find(f"{SVG}g[@class='frames']")
    if group is None:
        fail('no frames group')
    want, kids, total = folded_tree(folded)
    scale = (width - 2 * PAD) / total

    # Where each frame should start: its parent's x plus its earlier siblings' weights.
    x_want = {}
    def place(path, x):
        x_want[path] = x
        at = x
        for name in sorted(kids[path], key=lambda s: s.encode('utf-8')):
            place(path + (name,), at)
            at += want[path + (name,)]
    sys.setrecursionlimit(10000)
    place((), 0)

    frames = []
    for g in group.findall(f'{SVG}g'):
        r = g.find(f'{SVG}rect')
        frames.append((g.find(f'{SVG}title').text.split('\n')[0], float(r.get('x')),
                       float(r.get('y')), float(r.get('width'))))
    if not frames:
        fail('no frames drawn')
    ymax = max(f[2] for f in frames)
    got, stack, worst = {}, [], 0.0
    for name, x, y, w in frames:
        depth = round((ymax - y) / FRAME_H)
        if depth > len(stack):
            fail(f'{name} at depth {depth} comes before any frame below it')
        del stack[depth:]
        stack.append(name)
        path = tuple(stack)
        if path in got:
            fail(f'{";".join(path)} drawn twice')
        if path not in want:
            fail(f'{";".join(path)} drawn, but not in the input')
        got[path] = w
        err = max(abs(w - want[path] * scale), abs(x - PAD - x_want[path] * scale))
        worst = max(worst, err)
        if err > ROUND:
            fail(f'{";".join(path)}: x {x:.2f} width {w:.2f} px drawn; weight {want[path]} of '
                 f'{total} is x {PAD + x_want[path] * scale:.3f} width {want[path] * scale:.3f}')
    omitted = any(t.get('class', '').endswith('omitted') for t in root.iter(f'{SVG}text'))
    missing = [k for k in want if k and k not in got]
    if missing and not omitted:
        fail(f'{len(missing)} of {len(want)} frames missing, e.g. {missing[:3]}')
    if missing:
        narrowest = min(want[k] for k in got)
        widest_out = max(want[k] for k in missing)
        if widest_out >= narrowest:
            fail(f'a frame of weight {widest_out} left out, one of {narrowest} drawn')
    print(f'{svg.split("/")[-1]}: well-formed, {len(got)} of {len(want)} frames drawn'
          f'{" (the narrowest left out, as the SVG says)" if missing else ", all of them"}, '
          f'x and widths within {worst:.4f} px of the weights')


main()
