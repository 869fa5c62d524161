#!/usr/bin/env python3
"""Checks a report's timeline.json (Chrome trace events) against its summary.json.

  check_timeline.py REPORT_DIR [--tracker-trim]

- it parses, as the JSON object form, with the metadata that says what was left out;
- a track per GPU (process "GPU", a thread named "GPU d" per device of summary.json) and a
  thread_name for every thread that has slices, among them every thread of every chain;
- every gap of summary.json is a slice on its GPU's track, starting and lasting what the
  summary says (within 1 us);
- slices on one track nest or are disjoint, taking times as Perfetto does (ts * 1000 rounded to
  ns, ties in file order), so none is dropped or moved; GPU tracks and the threads' off-CPU
  states are in time order and disjoint;
- flows: every bind_id has one flow_out and one flow_in slice, the out slice starting first (so
  the start is bound before the end); every chain link that goes on to another thread has an
  arrow from that thread to the link's thread, ending in a slice inside the gap;
- --tracker-trim: the closer of each gap whose cause is malloc_trim has a lock wait on the
  chain's lock in the gap, the root a malloc_trim slice in it; launches carry kernel names.
Exits non-zero with the first failure.
"""
import collections
import json
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ns(x):
    return round(x * 1000)


def main():
    d = sys.argv[1]
    tracker_trim = "--tracker-trim" in sys.argv[2:]
    tl = json.load(open(d + "/timeline.json", encoding="utf-8"))
    summ = json.load(open(d + "/summary.json", encoding="utf-8"))
    if not isinstance(tl, dict) or not isinstance(tl.get("traceEvents"), list):
        fail("not the JSON object form with traceEvents")
    if tl.get("displayTimeUnit") != "ns":
        fail("displayTimeUnit is not ns")
    meta = tl.get("metadata", {})
    for k in ("trace_start_ns", "min_slice_ns", "left_out_short", "left_out_past_max_slices"):
        if k not in meta:
            fail("metadata lacks " + k)
    t0 = meta["trace_start_ns"]
    ev = tl["traceEvents"]
    xs = [(i, e) for i, e in enumerate(ev) if e.get("ph") == "X"]
    for i, e in xs:
        for k in ("pid", "tid", "ts", "dur", "name"):
            if k not in e:
                fail("slice %d lacks %s" % (i, k))
        if e["ts"] < 0 or e["dur"] < 0:
            fail("slice %d: negative time" % i)

    # Tracks and their names.
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "process_name"}
    tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
              if e.get("ph") == "M" and e["name"] == "thread_name"}
    gpu = [p for p, n in procs.items() if n == "GPU"]
    if len(gpu) != 1:
        fail("no single process named GPU: %s" % procs)
    gpu = gpu[0]
    dev_track = {}
    for dev in summ["devices"]:
        t = [k for k, n in tnames.items() if k[0] == gpu and n == "GPU %d" % dev["id"]]
        if len(t) != 1:
            fail("no track for GPU %d" % dev["id"])
        dev_track[dev["id"]] = t[0]
    tracks = collections.defaultdict(list)
    for i, e in xs:
        tracks[(e["pid"], e["tid"])].append((i, e))
    for k in tracks:
        if k not in tnames:
            fail("track %s has slices but no thread_name" % (k,))
    thread_of = {k[1]: k for k in tnames if k[0] != gpu}
    chain_tids = {l["tid"] for g in summ["gaps"] for l in g["chain"]}
    chain_tids |= {g["closer"]["tid"] for g in summ["gaps"]}
    for tid in chain_tids:
        if tid not in thread_of:
            fail("thread %d of a chain has no track" % tid)
    print("tracks: %d GPU, %d threads; %d slices" %
          (len(dev_track), len(thread_of), len(xs)))

    # Gaps on their GPU's track.
    for g in summ["gaps"]:
        tr = dev_track.get(g["device"])
        hit = [e for _, e in tracks.get(tr, [])
               if e.get("cat") == "gap" and e["name"].startswith("gap %d:" % g["id"])]
        if len(hit) != 1:
            fail("gap %d: %d slices on GPU %d's track" % (g["id"], len(hit), g["device"]))
        e = hit[0]
        if abs(ns(e["dur"]) - g["duration_ns"]) > 1000:
            fail("gap %d lasts %s us, summary %d ns" % (g["id"], e["dur"], g["duration_ns"]))
        if abs(ns(e["ts"]) - (g["start_ns"] - t0)) > 1000:
            fail("gap %d starts at %s us, summary %d ns" % (g["id"], e["ts"], g["start_ns"] - t0))
    print("gaps: all %d on their GPU's track" % len(summ["gaps"]))

    # Nesting as Perfetto's slice stack sees it.
    for k, sl in tracks.items():
        stack = []
        for i, e in sorted(sl, key=lambda x: (ns(x[1]["ts"]), x[0])):
            s, z = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while stack and (stack[-1][1] < s or (stack[-1][1] == s and
                                                  not (stack[-1][1] == stack[-1][0] and z == s))):
                stack.pop()
            if stack and z > stack[-1][1]:
                fail("track %s: slice %d %r [%d, %d] overlaps %r [%d, %d]" %
                     (k, i, e["name"], s, z, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((s, z, e["name"]))
    for tr in dev_track.values():
        for cat in ("gpu", "gap"):
            sl = [e for _, e in tracks.get(tr, []) if e.get("cat") == cat]
            for a, b in zip(sl, sl[1:]):
                if ns(b["ts"]) < ns(a["ts"]) + ns(a["dur"]):
                    fail("GPU track %s: %s slices out of order or overlapping" % (tr, cat))
    for k, sl in tracks.items():
        st = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for _, e in sl
                    if e.get("cat") == "state")
        for a, b in zip(st, st[1:]):
            if b[0] < a[1]:
                fail("thread %s: off-CPU states overlap: %s %s" % (k, a, b))
    print("nesting: every track nests or is disjoint")

    # Flows.
    ends = collections.defaultdict(dict)
    for i, e in xs:
        if "bind_id" in e:
            way = "out" if e.get("flow_out") else "in" if e.get("flow_in") else None
            if not way or way in ends[e["bind_id"]]:
                fail("bind_id %s: slice %d is a second or undirected end" % (e["bind_id"], i))
            ends[e["bind_id"]][way] = e
    for fid, w in ends.items():
        if set(w) != {"in", "out"}:
            fail("flow %s has no %s" % (fid, "in" if "in" not in w else "out"))
        if ns(w["out"]["ts"]) >= ns(w["in"]["ts"]):
            fail("flow %s: its start does not come before its end" % fid)
    links = 0
    for g in summ["gaps"]:
        c = g["chain"]
        for a, b in zip(c, c[1:]):
            if a["state"] != "blocked" or a["tid"] == b["tid"]:
                continue
            links += 1
            ok = [w for w in ends.values()
                  if w["out"]["tid"] == b["tid"] and w["in"]["tid"] == a["tid"] and
                  ns(w["in"]["ts"]) <= g["end_ns"] - t0 and
                  ns(w["in"]["ts"]) + ns(w["in"]["dur"]) >= g["start_ns"] - t0]
            if not ok:
                fail("gap %d: no arrow from %s to %s" % (g["id"], b["comm"], a["comm"]))
    if meta.get("flows") != len(ends):
        fail("metadata says %s flows, the file has %d" % (meta.get("flows"), len(ends)))
    print("flows: %d, every one of the %d chain links has one" % (len(ends), links))

    if tracker_trim:
        n = 0
        for g in summ["gaps"]:
            c = g["chain"]
            if not g["cause"] or g["cause"]["kind"] != "malloc_trim" or c[0]["kind"] != "lock":
                continue
            n += 1
            g0, g1 = g["start_ns"] - t0, g["end_ns"] - t0

            def inside(tid, pred):
                return [e for _, e in tracks[thread_of[tid]] if pred(e) and
                        ns(e["ts"]) < g1 and ns(e["ts"]) + ns(e["dur"]) > g0]
            if not inside(c[0]["tid"], lambda e: e["name"] == "lock wait " + c[0]["lock"]):
                fail("gap %d: %s has no lock wait on %s" % (g["id"], c[0]["comm"], c[0]["lock"]))
            if not inside(c[-1]["tid"], lambda e: e["name"] == "malloc_trim"):
                fail("gap %d: %s has no malloc_trim slice" % (g["id"], c[-1]["comm"]))
        if not n:
            fail("no gap caused by malloc_trim through a lock")
        kern = [e for _, e in xs if e.get("cat") == "cuda" and e["args"].get("kernel")]
        if not kern or not all(e["name"].endswith(" " + e["args"]["kernel"]) for e in kern):
            fail("launches without their kernel's name")
        print("tracker-trim: %d gaps show the lock wait and malloc_trim; %d named launches" %
              (n, len(kern)))


main()
