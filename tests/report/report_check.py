#!/usr/bin/env python3
"""Checks of a gapscope report (summary.json) against what a test knows, for tests/cases/report_*.sh.

  cause SUMMARY KIND [--truth TRUTH] [--lock SUBSTR] [--root KIND] [--min SHARE]
        [--without-preemption]
      KIND ranks first in causes (summed by kind) with share >= --min (default 0.8) of the gap time that is not
      preemption by processes outside the target (the machine's load). With --truth, where the
      engine's own truth says its mechanism explains less of the idle time (own_share), the bar
      is own_share - 0.1 instead, when lower; below 0.5 the mechanism did not dominate the run
      (it depends on timing on a loaded machine) and only the share is judged. --lock: the longest gap whose cause is KIND has a
      lock link whose name contains SUBSTR; --root: and its chain ends in kind ROOT.
      --without-preemption: KIND is judged among the causes other than preemption, and its
      share of the gap time they explain. --function SUBSTR: the top cause's function
      contains SUBSTR.
  ratio FIXED TRIM [FIXED_TRUTH TRIM_TRUTH]
      gap time over run time of FIXED is at most a quarter of TRIM's; with the truths, both
      over their runs' steady state (first kernel to last) as the truth defines it, and judged
      only where the truths themselves show the two scenarios that far apart.
  truth SUMMARY TRUTH
      >= 95% of the truth's GPU idle windows >= 1 ms (between its first and last kernel) are
      gaps with both edges within 1 ms, and >= 95% of the gaps there are such windows. The end
      edge of an API-inferred gap is the first launch after the idle time; the copies queued on
      the stream before that launch run first and their time is not visible to the API tier,
      so the end edge may precede the truth's by up to the upload time the truth records for
      the partition whose kernels end the window (partition records: kernels_start_ns minus
      gpu_start_ns), plus 1 ms. The start edge is established between the synchronize's last
      wakeup (start_earliest_ns) and its return (start_ns): the truth's start must lie there,
      give or take 1 ms. A window at least half filled by a partition's copy phases
      (queued on the stream with its kernels, so busy for the API tier) is not counted.
  lockshare SUMMARY KIND SUBSTR MIN
      of the gap time of the gaps caused by KIND, at least MIN lies in gaps whose chain has a
      lock link naming SUBSTR (and at least one such gap).
  share SUMMARY KIND MAX [TRUTH]
      KIND explains at most MAX of the gap time (with TRUTH, of the gaps inside its steady
      state).
  holders SUMMARY TRUTH
      every malloc_trim root of a chain through a lock is a thread the truth lists as trimming
      with the tracker lock held, at a time inside one of its trims.
"""
import json
import re
import sys


def load(path):
    return json.load(open(path))


def truth_records(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def cmd_cause(args):
    s = load(args[0])
    kind = args[1]
    flags = [a for a in args[2:] if a == '--without-preemption']
    args = [a for a in args if a not in flags] + flags
    opt = dict(zip(args[2:len(args) - len(flags):2], args[3:len(args) - len(flags):2]))
    bar = float(opt.get('--min', 0.8))
    rank = True
    # A kind is judged by its total (the heading its rows stand under), named by its top row.
    kinds = {}
    for c in s['causes']:
        # Preemption by a process outside the recording (named with its pid) is the machine's
        # load, not a cause the program has: set aside where another kind is expected, as the
        # base of the shares already sets it aside.
        if (c['kind'] == 'preempted' and kind != 'preempted' and
                re.search(r'\(pid \d+\)|^another process$', c.get('function', ''))):
            continue
        k = kinds.setdefault(c['kind'], dict(c, ns=0, share=0))
        k['ns'] += c['ns']
        k['share'] += c['share']
    s = dict(s, causes=sorted(kinds.values(), key=lambda c: -c['ns']))
    if '--truth' in opt:
        # The truth's steady state (its first kernel to its last) is what it accounts for: the
        # causes are summed over the gaps inside it.
        st = [t for t in truth_records(opt['--truth']) if t['kind'] == 'gpu_steady']
        if st:
            inside = [g for g in s['gaps'] if any(g['device'] == t['gpu'] and
                      g['start_ns'] >= t['first_kernel_ns'] - 1e6 and g['end_ns'] <= t['last_kernel_ns'] + 1e6
                      for t in st)]
            print('%d of %d gaps inside the truth\'s steady state' % (len(inside), len(s['gaps'])))
            s = dict(s, gaps=inside, gap_ns=sum(g['duration_ns'] for g in inside),
                     preempted_outside_ns=sum(g['preempted_outside_ns'] for g in inside))
            by = {}
            for g in inside:
                for r in g['roots']:
                    c = by.setdefault(r['kind'], {'kind': r['kind'], 'ns': 0, 'fns': {}})
                    c['ns'] += r['ns']
                    c['fns'][r['function']] = c['fns'].get(r['function'], 0) + r['ns']
            s['causes'] = sorted([{'kind': c['kind'], 'ns': c['ns'], 'share': c['ns'] / s['gap_ns'],
                                   'function': max(c['fns'], key=c['fns'].get)} for c in by.values()],
                                 key=lambda c: -c['ns'])
        steady = [t for t in truth_records(opt['--truth']) if t['kind'] == 'gpu_steady']
        if steady and steady[0]['own_share'] - 0.1 < bar:
            bar = steady[0]['own_share'] - 0.1
            print('the truth says the scenario explains %.3f of idle time: bar %.3f' %
                  (steady[0]['own_share'], bar))
            if steady[0]['own_share'] < 0.5:
                print('its mechanism did not dominate this run: its rank is not judged')
                rank = False
    base = s['gap_ns'] - s.get('preempted_outside_ns', 0)
    if '--without-preemption' in args:
        # Judged among the causes that are not scheduling delay: on a 2-CPU machine shared
        # with other work, any thread of a chain may wait for a CPU for much of a gap.
        pre = sum(c['ns'] for c in s['causes'] if c['kind'] in ('preempted', 'runnable'))
        base = s['gap_ns'] - pre
        s = dict(s, causes=[c for c in s['causes'] if c['kind'] not in ('preempted', 'runnable')])
        print('without preemption (%.3f of the gap time)' % (pre / s['gap_ns'] if s['gap_ns'] else 0))
    for c in s['causes']:
        print('cause %-12s %-30s share %.3f (%.3f without outside preemption)' %
              (c['kind'], c['function'], c['share'], c['ns'] / base if base else 0))
    if not s['causes']:
        fail('no causes')
    top = s['causes'][0]
    if ((top['kind'] == 'preempted' and top['function'] == 'another process' or
         top['kind'] == 'runnable') and kind not in ('preempted', 'runnable') and len(s['causes']) > 1):
        top = s['causes'][1]
    if top['kind'] != kind:
        if rank:
            fail('top cause %s, expected %s' % (top['kind'], kind))
        top = ([c for c in s['causes'] if c['kind'] == kind] + [dict(kind=kind, ns=0)])[0]
    share = top['ns'] / base if base else 0
    if '--function' in opt and opt['--function'] not in top.get('function', ''):
        fail('top cause %s %s, expected a function naming %s' %
             (top['kind'], top.get('function', ''), opt['--function']))
    if share < bar:
        fail('%s explains %.3f of the gap time, expected >= %.3f' % (kind, share, bar))
    if '--lock' in opt and (rank or top['ns']):
        gaps = sorted([g for g in s['gaps'] if g['cause'] and g['cause']['kind'] == kind],
                      key=lambda g: -g['duration_ns'])
        if not gaps:
            fail('no gap caused by %s' % kind)
        g = gaps[0]
        chain = ' <- '.join('%s %s %s' % (l['comm'], l['kind'], l.get('lock', l.get('function', '')))
                            for l in g['chain'])
        print('gap %d: %s' % (g['id'], chain))
        locks = [l for l in g['chain'] if l['kind'] == 'lock' and opt['--lock'] in l.get('lock', '')]
        if not locks:
            fail('gap %d: no lock link naming %s' % (g['id'], opt['--lock']))
        if '--root' in opt and g['chain'][-1]['kind'] != opt['--root']:
            fail('gap %d: chain ends in %s, expected %s' % (g['id'], g['chain'][-1]['kind'], opt['--root']))
    print('ok: %s first with %.3f' % (kind, share))


def steady_ratio(summary, truth):
    """Gap time over run time, both within the truth's steady state (first kernel to last)."""
    st = [t for t in truth_records(truth) if t['kind'] == 'gpu_steady']
    gap = dur = 0
    for t in st:
        a, b = t['first_kernel_ns'], t['last_kernel_ns']
        dur += b - a
        for g in summary['gaps']:
            if g['device'] == t['gpu']:
                gap += max(0, min(g['end_ns'], b) - max(g['start_ns'], a))
    return gap / dur if dur else 0


def cmd_ratio(args):
    f, t = load(args[0]), load(args[1])
    if len(args) == 4:
        rf, rt = steady_ratio(f, args[2]), steady_ratio(t, args[3])
        print('gap time over the steady state: fixed %.3f, tracker-trim %.3f' % (rf, rt))
        idle = []
        for tr in args[2:]:
            st = [x for x in truth_records(tr) if x['kind'] == 'gpu_steady']
            idle.append(1 - st[0]['busy_pct'] / 100 if st else 0)
        print('the truths say: fixed idle %.3f, tracker-trim idle %.3f' % tuple(idle))
        if idle[0] > idle[1] / 4:
            print('the scenarios did not separate in these runs (the machine\'s load): not judged')
            return
    else:
        rf = f['gap_ns'] / f['duration_ns']
        rt = t['gap_ns'] / t['duration_ns']
        print('gap time over run: fixed %.3f, tracker-trim %.3f' % (rf, rt))
    if rf > rt / 4:
        fail('fixed has more than a quarter of tracker-trim\'s gap time')


def cmd_truth(args):
    # args: SUMMARY TRUTH [FINE]. SUMMARY is the report at the default --min-gap (1 ms), FINE the
    # same trace reported with a lower --min-gap. A window near the 1 ms threshold may be measured
    # on either side of it by either account, so recall matches the truth's windows >= 1 ms
    # against FINE's gaps, and precision the report's gaps >= 1 ms against every idle window the
    # truth's busy intervals leave: no window is lost to a threshold it straddles.
    s = load(args[0])
    truth = truth_records(args[1])
    fine = load(args[2]) if len(args) > 2 else s
    steady = {t['gpu']: t for t in truth if t['kind'] == 'gpu_steady'}
    idle = [t for t in truth if t['kind'] == 'gpu_idle' and t['end_ns'] - t['start_ns'] >= 1e6]
    busy = {}
    for t in truth:
        if t['kind'] == 'gpu_busy':
            busy.setdefault(t['gpu'], []).append((t['start_ns'], t['end_ns']))
    every = []
    for gpu, iv in busy.items():
        iv.sort()
        every += [{'gpu': gpu, 'start_ns': a[1], 'end_ns': b[0]} for a, b in zip(iv, iv[1:])
                  if b[0] > a[1]]
    # Each partition's copy phases, keyed by the kernel edge they sit beside: the upload before
    # its first kernel, the download after its last. The API tier cannot tell a copy queued with
    # the kernels from a kernel, so it sees the device busy from the upload and idle only once
    # the download is done: a window's end may come that much earlier in the report, and a
    # window opened by a kernel's end may start that much later.
    upload, download = {}, {}
    for p in truth:
        if p['kind'] == 'partition' and p.get('kernels_start_ns') and p.get('gpu_start_ns'):
            upload[(p['gpu'], p['kernels_start_ns'])] = p['kernels_start_ns'] - p['gpu_start_ns']
        if p['kind'] == 'partition' and p.get('kernels_end_ns') and p.get('gpu_end_ns'):
            download[(p['gpu'], p['kernels_end_ns'])] = max(0, p['gpu_end_ns'] - p['kernels_end_ns'])

    def copy_beside(phase, gpu, edge):
        # the longest copy phase of a partition whose kernel edge is within 1 ms of edge
        best = 0
        for (g, k), ns in phase.items():
            if g == gpu and abs(k - edge) <= 1e6:
                best = max(best, ns)
        return best

    def match(g, t):
        # The start edge is known to lie between the synchronize's last wakeup and its return.
        early = min(g.get('start_earliest_ns', g['start_ns']), g['start_ns'])
        if g['device'] != t['gpu'] or t['start_ns'] < early - 1e6 - copy_beside(download, t['gpu'], t['start_ns']) or \
                t['start_ns'] > g['start_ns'] + 1e6:
            return False
        d = t['end_ns'] - g['end_ns']
        return -1e6 <= d <= 1e6 + copy_beside(upload, t['gpu'], t['end_ns'])

    def steady_gap(g):
        st = steady.get(g['device'])
        return st and g['start_ns'] >= st['first_kernel_ns'] - 1e6 and g['end_ns'] <= st['last_kernel_ns'] + 1e6

    # Copy phases of each partition (upload before its kernels, download after): queued on the
    # stream with the kernels, they keep it busy for the API tier, which cannot tell a copy
    # from a kernel in flight. A window mostly filled by them is listed, not counted.
    copies = []
    for p in truth:
        if p['kind'] == 'partition' and p.get('kernels_start_ns') and p.get('gpu_start_ns'):
            copies.append((p['gpu'], p['gpu_start_ns'], p['kernels_start_ns']))
            if p.get('gpu_end_ns') and p.get('kernels_end_ns'):
                copies.append((p['gpu'], p['kernels_end_ns'], p['gpu_end_ns']))

    def copy_filled(t):
        ns = sum(max(0, min(e, t['end_ns']) - max(b, t['start_ns'])) for g, b, e in copies
                 if g == t['gpu'])
        return ns >= 0.5 * (t['end_ns'] - t['start_ns'])

    # A window inside a partition's kernel span (its first kernel's start to its last's end) is
    # the device waiting for the rest of the partition's launches from a thread that lost its
    # CPU between them: to the API tier the launched kernels are outstanding work, with no
    # completion evidence until the partition's synchronize. Listed, not counted (the CUPTI
    # tier sees them).
    spans = [(p['gpu'], p['kernels_start_ns'], p['kernels_end_ns']) for p in truth
             if p['kind'] == 'partition' and p.get('kernels_start_ns') and p.get('kernels_end_ns')]

    def mid_partition(t):
        return any(g == t['gpu'] and b <= t['start_ns'] and t['end_ns'] <= e for g, b, e in spans)

    gaps = [g for g in s['gaps'] if steady_gap(g)]
    fine_gaps = [g for g in fine['gaps'] if steady_gap(g)]
    filled = [t for t in idle if copy_filled(t) and not any(match(g, t) for g in fine_gaps)]
    for t in filled:
        print('truth %d..%d %7.2f ms: filled by copies queued with kernels (not counted)' %
              (t['start_ns'], t['end_ns'], (t['end_ns'] - t['start_ns']) / 1e6))
    inside = [t for t in idle if t not in filled and mid_partition(t) and
              not any(match(g, t) for g in fine_gaps)]
    for t in inside:
        print('truth %d..%d %7.2f ms: inside a partition\'s launches (not counted)' %
              (t['start_ns'], t['end_ns'], (t['end_ns'] - t['start_ns']) / 1e6))
    idle = [t for t in idle if t not in filled and t not in inside]
    found = 0
    for t in idle:
        m = [g for g in fine_gaps if match(g, t)]
        found += bool(m)
        print('truth %d..%d %7.2f ms: %s' % (t['start_ns'], t['end_ns'], (t['end_ns'] - t['start_ns']) / 1e6,
              'gap %d (%+.3f, %+.3f ms)' % (m[0]['id'], (m[0]['start_ns'] - t['start_ns']) / 1e6,
                                           (m[0]['end_ns'] - t['end_ns']) / 1e6) if m else 'MISSED'))
    true = 0
    for g in gaps:
        ok = any(match(g, t) for t in every)
        true += ok
        if not ok:
            print('gap %d %d..%d %.2f ms: no truth window' % (g['id'], g['start_ns'], g['end_ns'],
                  g['duration_ns'] / 1e6))
    rf = found / len(idle) if idle else 1.0
    rt = true / len(gaps) if gaps else 1.0
    print('truth windows found %d/%d (%.3f), gaps true %d/%d (%.3f)' % (found, len(idle), rf, true, len(gaps), rt))
    if rf < 0.95 or rt < 0.95:
        fail('below 0.95')


def cmd_holders(args):
    s = load(args[0])
    truth = truth_records(args[1])
    trims = [t for t in truth if t['kind'] == 'malloc_trim' and t.get('tracker_lock_held')]
    idle = [t for t in truth if t['kind'] == 'gpu_idle']
    n = 0
    for g in s['gaps']:
        ch = g['chain']
        if not ch or ch[-1]['kind'] != 'malloc_trim' or not any(l['kind'] == 'lock' for l in ch):
            continue
        tid = ch[-1]['tid']
        mine = [t for t in trims if t['tid'] == tid and t['start_ns'] < g['end_ns'] and
                t['start_ns'] + t['ns'] > g['start_ns']]
        print('gap %d: malloc_trim by tid %d: %s' % (g['id'], tid, 'in the truth' if mine else 'NOT in the truth'))
        if not mine:
            fail('gap %d blames tid %d, which the truth does not list trimming under the lock then' % (g['id'], tid))
        n += 1
    if not n:
        if not any(i['stalls'].get('tracker_wait') for i in idle):
            print('the truth has no idle window with a wait for the tracker lock: nothing to blame')
            return
        fail('no chain through a lock to malloc_trim')


def steady_gaps(s, truth):
    st = [t for t in truth_records(truth) if t['kind'] == 'gpu_steady']
    return [g for g in s['gaps'] if any(g['device'] == t['gpu'] and
            g['start_ns'] >= t['first_kernel_ns'] - 1e6 and g['end_ns'] <= t['last_kernel_ns'] + 1e6
            for t in st)]


def cmd_lockshare(args):
    s = load(args[0])
    kind, sub, bar = args[1], args[2], float(args[3])
    gaps = [g for g in s['gaps'] if g['cause'] and g['cause']['kind'] == kind]
    via = [g for g in gaps if any(l['kind'] == 'lock' and sub in (l.get('lock') or '') for l in g['chain'])]
    tot, v = sum(g['duration_ns'] for g in gaps), sum(g['duration_ns'] for g in via)
    for g in via[:3]:
        print('gap %d: %s' % (g['id'], ' <- '.join('%s %s %s' % (l['comm'], l['kind'], l.get('lock') or l.get('detail') or '')
                                                    for l in g['chain'])))
    print('%d of %d gaps caused by %s pass a lock naming %s: %.3f of their time' %
          (len(via), len(gaps), kind, sub, v / tot if tot else 0))
    if not via or v < bar * tot:
        fail('below %.2f' % bar)


def cmd_share(args):
    s = load(args[0])
    kind, cap = args[1], float(args[2])
    gaps = steady_gaps(s, args[3]) if len(args) > 3 else s['gaps']
    tot = sum(g['duration_ns'] for g in gaps)
    ns = sum(r['ns'] for g in gaps for r in g['roots'] if r['kind'] == kind)
    print('%s explains %.1f ms of %.1f ms of gaps (%.3f)' % (kind, ns / 1e6, tot / 1e6, ns / tot if tot else 0))
    if tot and ns > cap * tot:
        fail('above %.2f' % cap)


cmds = {'cause': cmd_cause, 'lockshare': cmd_lockshare, 'share': cmd_share, 'ratio': cmd_ratio, 'truth': cmd_truth, 'holders': cmd_holders}
if len(sys.argv) < 3 or sys.argv[1] not in cmds:
    print(__doc__)
    sys.exit(2)
cmds[sys.argv[1]](sys.argv[2:])
