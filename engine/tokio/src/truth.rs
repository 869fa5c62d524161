// SPDX-License-Identifier: MIT
//! --truth FILE: what the engine knows about itself, in zkengine's format (one JSON object a
//! line, CLOCK_MONOTONIC ns; engine/pipeline.c's header lists the kinds).  The profiler never
//! reads it; tests compare its reports against it.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::Mutex;

static OUT: Mutex<Option<File>> = Mutex::new(None);
/// Stalls kept for the idle windows' accounting: (kind, start, end).
static STALLS: Mutex<Vec<(&'static str, u64, u64)>> = Mutex::new(Vec::new());

pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn tid() -> i64 {
    unsafe { libc::syscall(libc::SYS_gettid) }
}

fn comm() -> String {
    let mut buf = [0u8; 16];
    unsafe { libc::prctl(libc::PR_GET_NAME, buf.as_mut_ptr() as libc::c_ulong, 0, 0, 0) };
    let n = buf.iter().position(|&c| c == 0).unwrap_or(16);
    String::from_utf8_lossy(&buf[..n]).replace(['"', '\\'], "_")
}

pub fn open(path: &str) -> std::io::Result<()> {
    *OUT.lock().unwrap() = Some(File::create(path)?);
    Ok(())
}

pub fn enabled() -> bool {
    OUT.lock().unwrap().is_some()
}

pub fn line(s: &str) {
    if let Some(f) = OUT.lock().unwrap().as_mut() {
        let _ = writeln!(f, "{}", s);
    }
}

/// A stall of this thread: its kind, tid and name, the interval, then `extra` (",\"k\":v...").
pub fn stall(kind: &'static str, start: u64, end: u64, extra: &str) {
    if !enabled() {
        return;
    }
    STALLS.lock().unwrap().push((kind, start, end));
    line(&format!(
        "{{\"kind\":\"{}\",\"tid\":{},\"comm\":\"{}\",\"start_ns\":{},\"end_ns\":{},\"ns\":{}{}}}",
        kind,
        tid(),
        comm(),
        start,
        end,
        end - start,
        extra
    ));
}

/// Intervals sorted and merged (closer than `bridge` ns joined).
pub fn merge(mut v: Vec<(u64, u64)>, bridge: u64) -> Vec<(u64, u64)> {
    v.sort();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(l) if s <= l.1 + bridge => l.1 = l.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn overlap(v: &[(u64, u64)], s: u64, e: u64) -> u64 {
    v.iter().map(|&(a, b)| b.min(e).saturating_sub(a.max(s))).sum()
}

fn intersect(x: &[(u64, u64)], y: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for &(a, b) in x {
        for &(c, d) in y {
            if a.max(c) < b.min(d) {
                out.push((a.max(c), b.min(d)));
            }
        }
    }
    merge(out, 0)
}

/// Where at least `n` of the intervals overlap.
fn at_least(v: &[(u64, u64)], n: usize) -> Vec<(u64, u64)> {
    let mut ev: Vec<(u64, i32)> = Vec::new();
    for &(s, e) in v {
        ev.push((s, 1));
        ev.push((e, -1));
    }
    ev.sort();
    let (mut depth, mut from, mut out) = (0i32, 0u64, Vec::new());
    for (t, d) in ev {
        let before = depth;
        depth += d;
        if before < n as i32 && depth >= n as i32 {
            from = t;
        } else if before >= n as i32 && depth < n as i32 && t > from {
            out.push((from, t));
        }
    }
    out
}

fn stalls_of(kind: &str) -> Vec<(u64, u64)> {
    let s = STALLS.lock().unwrap();
    merge(s.iter().filter(|x| x.0 == kind).map(|x| (x.1, x.2)).collect(), 0)
}

/// The scenario's own mechanism: tracker-trim, the tracker waits of the GPU tasks while a trim
/// holds the lock; starved, the times every worker thread was polling a CPU-heavy task.
pub fn own_stalls(scenario: &str, workers: usize) -> Vec<(u64, u64)> {
    match scenario {
        "tracker-trim" => intersect(&stalls_of("tracker_wait"), &stalls_of("trim_locked")),
        "starved" => {
            let s = STALLS.lock().unwrap();
            let v: Vec<_> = s.iter().filter(|x| x.0 == "hog_poll").map(|x| (x.1, x.2)).collect();
            at_least(&v, workers)
        }
        _ => Vec::new(),
    }
}

/// The device's busy intervals: simcuda's exact kernel intervals (its SIMCUDA_TRACE file) on
/// the simulator, else each partition's kernel span from its CUDA events.
pub fn busy(sim_trace: Option<&str>, spans: &[(u64, u64)], since: u64) -> Vec<(u64, u64)> {
    let f = match sim_trace.and_then(|p| File::open(p).ok()) {
        Some(f) => f,
        None => return merge(spans.to_vec(), 0),
    };
    let num = |l: &str, key: &str| -> Option<u64> {
        let i = l.find(key)? + key.len();
        l[i..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    let mut v = Vec::new();
    for l in BufReader::new(f).lines().flatten() {
        if num(&l, "{\"device\":") != Some(0) {
            continue;
        }
        if let (Some(s), Some(e)) = (num(&l, "\"start_ns\":"), num(&l, "\"end_ns\":")) {
            if s >= since {
                v.push((s, e));
            }
        }
    }
    merge(v, 100_000)
}

const STALL_KINDS: [&str; 5] = ["tracker_wait", "trim_locked", "malloc_trim", "result_records", "hog_poll"];

/// gpu_busy, gpu_idle (windows >= 1 ms with the stalls that overlap them) and gpu_steady.
/// Returns the steady-state busy percentage.
pub fn gpu(busy: &[(u64, u64)], own: &[(u64, u64)]) -> f64 {
    let (mut b, mut idle, mut own_ns) = (0u64, 0u64, 0u64);
    for &(s, e) in busy {
        b += e - s;
        line(&format!("{{\"kind\":\"gpu_busy\",\"gpu\":0,\"start_ns\":{},\"end_ns\":{}}}", s, e));
    }
    for w in busy.windows(2) {
        let (s, e) = (w[0].1, w[1].0);
        if e - s < 1_000_000 {
            continue;
        }
        let kinds: Vec<String> = STALL_KINDS
            .iter()
            .map(|k| (k, overlap(&stalls_of(k), s, e)))
            .filter(|x| x.1 > 0)
            .map(|(k, ns)| format!("\"{}\":{}", k, ns))
            .collect();
        let o = overlap(own, s, e);
        idle += e - s;
        own_ns += o;
        line(&format!(
            "{{\"kind\":\"gpu_idle\",\"gpu\":0,\"start_ns\":{},\"end_ns\":{},\"ns\":{},\"own_ns\":{},\"stalls\":{{{}}}}}",
            s, e, e - s, o, kinds.join(",")
        ));
    }
    let first = busy.first().map_or(0, |x| x.0);
    let last = busy.last().map_or(0, |x| x.1);
    let steady = if last > first { 100.0 * b as f64 / (last - first) as f64 } else { 0.0 };
    line(&format!(
        "{{\"kind\":\"gpu_steady\",\"gpu\":0,\"busy_pct\":{:.2},\"first_kernel_ns\":{},\"last_kernel_ns\":{},\"idle_ns\":{},\"own_ns\":{},\"own_share\":{:.4}}}",
        steady, first, last, idle, own_ns,
        if idle > 0 { own_ns as f64 / idle as f64 } else { 0.0 }
    ));
    steady
}
