// SPDX-License-Identifier: MIT
//! tokengine: zkengine's proving pipeline as the seed's engine had it, on tokio.
//!
//!   dispatcher task ──(memory budget: a Semaphore)──▶ synthesis (spawn_blocking) ──▶ GPU task N
//!   GPU task:   tracker.job_failed().await, tracker.mark_busy().await (the tracker's
//!               tokio::sync::Mutex, twice a partition), then prove_start in spawn_blocking:
//!               upload, the per-GPU lock for the kernels' submission, download, wait
//!   finalizer task: the CPU tail (spawn_blocking), then tracker.process_partition_result():
//!               the tracker lock and malloc_trim(0); the result's records then go to its
//!               results thread (results-N, nice 10: partition % N), where they replace the
//!               last ones and fragment the heap again
//!
//! Scenarios:
//!   fixed         the trim after the lock is released, in a blocking-pool thread at nice 10
//!   tracker-trim  the finalizer task holds the tracker lock across malloc_trim(0), on a worker
//!                 (with --heap-lock: the tracker on the heap, no symbol names its lock, and the
//!                 trim in the blocking pool, the lock held across its await, as the seed's)
//!   starved       CPU-heavy tasks keep every worker thread busy polling them (`hog_crunch`):
//!                 the GPU tasks, woken, wait for a worker
//!
//! Every trim is sized, not timed: each results thread first records the results a running
//! daemon kept from before (built before the device is touched, kept for the whole run), which
//! pin `blocks` page-spanning free chunks apart in its own malloc arena.  A result's records
//! rebuilt in one arena may fill its chunks for a while, never another's, so every
//! malloc_trim(0) walks at least (threads - 1) * blocks free chunks, one madvise each (40,000
//! on simcuda: 100-850 ms on the 2-CPU test machine, against a GPU section of 23 ms; 120,000
//! on a GPU, against ~19 ms of kernels on an H200).  Each thread's arena is its own (M_ARENA_MAX raised
//! above the threads' count), so a trim, which holds each arena's lock while it walks it, stops
//! no thread on the path that feeds the GPU.
//!
//! The GPU layer is zkengine's (engine/gpu.c): the same driver calls and kernels, on the real
//! libcuda.so.1 or simcuda next to the binary.  --truth FILE writes the engine's own account in
//! zkengine's format (truth.rs).

mod gpu;
mod truth;

use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, Mutex, Semaphore};

use gpu::Ptr;

const SEED: u64 = 0x7a6b_656e_6769_6e65;

struct Opts {
    device: i32,
    scenario: String,
    partitions: u32,
    log2n: u32,
    workers: usize,
    gpu_tasks: usize,
    truth: Option<String>,
    heap_lock: bool, // the tracker on the heap, its trims in the blocking pool under the lock
}

fn usage() -> ! {
    eprintln!(
        "usage: tokengine [--device auto|cuda|sim] [--scenario fixed|tracker-trim|starved] \
         [--partitions N] [--log2n K] [--workers W] [--gpu-tasks G] [--truth FILE] [--heap-lock]"
    );
    exit(2)
}

fn parse() -> Opts {
    let mut o = Opts {
        device: gpu::BACKEND_AUTO,
        scenario: "fixed".into(),
        partitions: 16,
        log2n: 0,
        workers: 2,
        gpu_tasks: 2,
        truth: None,
        heap_lock: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--heap-lock" {
            o.heap_lock = true;
            i += 1;
            continue;
        }
        let val = |i: usize| -> &str {
            args.get(i + 1).map(|s| s.as_str()).unwrap_or_else(|| {
                eprintln!("tokengine: {} needs a value", args[i]);
                exit(2)
            })
        };
        let num = |i: usize, lo: u64, hi: u64| -> u64 {
            match val(i).parse::<u64>() {
                Ok(n) if n >= lo && n <= hi => n,
                _ => {
                    eprintln!("tokengine: {} {}: expected {}..{}", args[i], val(i), lo, hi);
                    exit(2)
                }
            }
        };
        match args[i].as_str() {
            "--device" => {
                o.device = match val(i) {
                    "auto" => gpu::BACKEND_AUTO,
                    "cuda" => gpu::BACKEND_CUDA,
                    "sim" => gpu::BACKEND_SIM,
                    d => {
                        eprintln!("tokengine: --device {}: expected auto, cuda or sim", d);
                        exit(2)
                    }
                }
            }
            "--scenario" => {
                o.scenario = val(i).into();
                if !["fixed", "tracker-trim", "starved"].contains(&o.scenario.as_str()) {
                    eprintln!("tokengine: --scenario {}: expected fixed, tracker-trim or starved", o.scenario);
                    exit(2)
                }
            }
            "--partitions" => o.partitions = num(i, 1, 100000) as u32,
            "--log2n" => o.log2n = num(i, 4, 26) as u32,
            "--workers" => o.workers = num(i, 1, 256) as usize,
            "--gpu-tasks" => o.gpu_tasks = num(i, 1, 16) as usize,
            "--truth" => o.truth = Some(val(i).into()),
            "-h" | "--help" => usage(),
            a => {
                eprintln!("tokengine: unknown option {}", a);
                usage()
            }
        }
        i += 2;
    }
    o
}

/// Sizes per backend, as zkengine's: everything that feeds the GPU is well below the GPU
/// section; each scenario makes only its own mechanism slower.
struct Sizing {
    blocks: usize,  // result records: heap blocks a partition (the trim's fragmentation)
    tail_ops: u64,  // field multiplications of the CPU tail
    hog_slice_ms: u64, // starved: a CPU-heavy task's work between two yields
    slots: usize,      // results threads (zkengine's finalizer threads)
}

struct TrackerState {
    done: u32,
    busy: u32,
    failed: bool,
}

/// The job tracker behind the async lock, as in the seed: the GPU tasks lock it twice a
/// partition, finalizers once, across malloc_trim(0) in tracker-trim.  A static, as zkengine's
/// tracker lock is (a profiler names it by its symbol).
struct Tracker {
    state: Mutex<TrackerState>,
}

static TRACKER: Tracker =
    Tracker { state: Mutex::const_new(TrackerState { done: 0, busy: 0, failed: false }) };

fn waited(t0: u64) {
    let t1 = truth::now_ns();
    if t1 - t0 >= 1_000_000 {
        truth::stall("tracker_wait", t0, t1, "");
    }
}

impl Tracker {
    async fn job_failed(&self) -> bool {
        let t0 = truth::now_ns();
        let g = self.state.lock().await;
        waited(t0);
        g.failed
    }

    async fn mark_busy(&self) {
        let t0 = truth::now_ns();
        let mut g = self.state.lock().await;
        waited(t0);
        g.busy += 1;
    }

    /// The result recorded under the lock, then malloc_trim(0) over the heap the result's
    /// records left: still under the lock in tracker-trim (on the worker thread polling this
    /// task), after it elsewhere (blocking pool, nice 10).
    async fn process_partition_result(&self, idx: u32, under_lock: bool, heap_lock: bool) {
        let mut g = self.state.lock().await;
        g.done += 1;
        g.busy -= 1;
        if under_lock && heap_lock {
            // As the seed's finalizers: the trim in the blocking pool, the lock held across
            // the task's await of it.
            let (t0, t1) = background(move || {
                let t0 = truth::now_ns();
                unsafe { libc::malloc_trim(0) };
                (t0, truth::now_ns())
            })
            .await;
            drop(g);
            truth::stall("trim_locked", t0, t1, "");
            trimmed(t0, t1, true, idx);
        } else if under_lock {
            let t0 = truth::now_ns();
            unsafe { libc::malloc_trim(0) };
            let t1 = truth::now_ns();
            drop(g);
            truth::stall("trim_locked", t0, t1, "");
            trimmed(t0, t1, true, idx);
        } else {
            drop(g);
            let (t0, t1) = background(move || {
                let t0 = truth::now_ns();
                unsafe { libc::malloc_trim(0) };
                (t0, truth::now_ns())
            })
            .await;
            trimmed(t0, t1, false, idx);
        }
    }
}

fn trimmed(t0: u64, t1: u64, held: bool, idx: u32) {
    TRIMS.fetch_add(1, Ordering::Relaxed);
    if truth::enabled() {
        let x = format!(",\"tracker_lock_held\":{},\"partition\":{}", held, idx);
        truth::stall("malloc_trim", t0, t1, &x);
    }
}

static TRIMS: AtomicU64 = AtomicU64::new(0);
static PROVING_DONE: AtomicBool = AtomicBool::new(false);
static HOG_SINK: AtomicU64 = AtomicU64::new(0); // keeps the CPU-heavy work from being optimized away

/// Background work in the blocking pool at nice 10 (as zkengine's finalizer threads): it must
/// not take CPUs from the feeding path.  The thread's priority is restored after.
async fn background<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(move || {
        let tid = truth::tid() as libc::id_t;
        unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 10) };
        let r = f();
        unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 0) };
        r
    })
    .await
    .unwrap_or_else(|_| exit(1))
}

/// The result's records: blocks allocated and freed around small records that stay, so the
/// freed pages are scattered for the next trim to walk (zkengine's build_result_records).
#[derive(Default)]
struct Records(Vec<usize>);

/// A results thread (zkengine's finalizer thread, background work at nice 10): the results the
/// daemon kept from before, then each partition's records in turn, each replacing the last.
/// Once the GPU sections are over no trim that matters follows, and the results left are only
/// drained.
fn results_thread(i: usize, blocks: usize, rx: std::sync::mpsc::Receiver<u32>,
                  ready: std::sync::mpsc::Sender<()>) {
    let kept = build_records(blocks, SEED ^ (u64::MAX - i as u64));
    unsafe { libc::setpriority(libc::PRIO_PROCESS, truth::tid() as libc::id_t, 10) };
    let _ = ready.send(());
    let mut last = Records::default();
    for idx in rx {
        if PROVING_DONE.load(Ordering::Relaxed) {
            continue;
        }
        drop(std::mem::take(&mut last));
        let t0 = truth::now_ns();
        last = build_records(blocks, SEED ^ idx as u64);
        let x = format!(",\"partition\":{},\"blocks\":{}", idx, blocks);
        truth::stall("result_records", t0, truth::now_ns(), &x);
    }
    drop(kept);
}

fn build_records(n: usize, seed: u64) -> Records {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut blocks = Vec::with_capacity(n);
    let mut recs = Vec::with_capacity(n);
    for j in 0..n {
        let bytes = 6144 + (next() % 4096) as usize;
        let b = unsafe { libc::malloc(bytes) as *mut u8 };
        let rec = 48 + (next() % 400) as usize;
        let r = unsafe { libc::malloc(rec) as *mut u8 };
        if b.is_null() || r.is_null() {
            eprintln!("tokengine: out of memory");
            exit(1);
        }
        unsafe {
            let mut k = 0;
            while k < bytes {
                *b.add(k) = (j + k) as u8;
                k += 64;
            }
            std::ptr::write_bytes(r, j as u8, rec);
        }
        blocks.push(b as usize);
        recs.push(r as usize);
    }
    for b in blocks {
        unsafe { libc::free(b as *mut libc::c_void) };
    }
    Records(recs)
}

impl Drop for Records {
    fn drop(&mut self) {
        for &r in &self.0 {
            unsafe { libc::free(r as *mut libc::c_void) };
        }
    }
}

struct Part {
    idx: u32,
    buf: Ptr,
    permit: tokio::sync::OwnedSemaphorePermit,
}

struct Shared {
    dev: gpu::Device,
    tracker: &'static Tracker,
    gpu_lock: std::sync::Mutex<()>,
    bufs: std::sync::Mutex<Vec<Ptr>>,
    /// The results threads' queues: a partition's index, once its result is processed.
    results: Vec<std::sync::Mutex<Option<std::sync::mpsc::Sender<u32>>>>,
    spans: std::sync::Mutex<Vec<(u64, u64)>>,
    sz: Sizing,
    scenario: String,
    heap_lock: bool,
    partitions: u32,
    finished: AtomicU64,
    done: Semaphore, // a permit per partition finished
}

/// prove_start, in the blocking pool: upload, the per-GPU lock for the kernels' submission
/// alone, download and wait.  The kernels' [start, end].
fn prove_start(sh: &Shared, work: Ptr, p: &Part) -> (u64, u64) {
    let n = sh.dev.log2n;
    let t0 = truth::now_ns();
    gpu::upload(work, p.buf, n);
    {
        let _g = sh.gpu_lock.lock().unwrap_or_else(|e| e.into_inner());
        gpu::compute(work);
    }
    let (k0, k1) = gpu::finish(work, p.buf, n);
    truth::line(&format!(
        "{{\"kind\":\"partition\",\"partition\":{},\"job\":{},\"gpu\":0,\"tid\":{},\"gpu_start_ns\":{},\"kernels_start_ns\":{},\"kernels_end_ns\":{}}}",
        p.idx, p.idx / 4, truth::tid(), t0, k0, k1
    ));
    (k0, k1)
}

async fn gpu_task(sh: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Part>) {
    let work = sh.dev.work_new();
    while let Some(p) = rx.recv().await {
        if sh.tracker.job_failed().await {
            continue;
        }
        sh.tracker.mark_busy().await;
        let s = sh.clone();
        let (p, span) = tokio::task::spawn_blocking(move || {
            let span = prove_start(&s, work, &p);
            (p, span)
        })
        .await
        .unwrap_or_else(|_| exit(1));
        let n = {
            let mut v = sh.spans.lock().unwrap();
            v.push(span);
            v.len()
        };
        if n == sh.partitions as usize {
            PROVING_DONE.store(true, Ordering::Relaxed);
        }
        tokio::spawn(finalizer_task(sh.clone(), p));
    }
}

/// The CPU tail, buffers and budget back (nothing a finalizer holds gates the pipeline), then
/// the result: the tracker lock and malloc_trim(0); its records to its results thread.
async fn finalizer_task(sh: Arc<Shared>, p: Part) {
    let (n, ops, buf) = (sh.dev.log2n, sh.sz.tail_ops, p.buf);
    tokio::task::spawn_blocking(move || gpu::tail(buf, n, ops)).await.unwrap_or_else(|_| exit(1));
    let idx = p.idx;
    sh.bufs.lock().unwrap().push(p.buf);
    drop(p.permit);
    sh.tracker.process_partition_result(idx, sh.scenario == "tracker-trim", sh.heap_lock).await;
    if let Some(tx) = sh.results[idx as usize % sh.results.len()].lock().unwrap().as_ref() {
        let _ = tx.send(idx);
    }
    sh.finished.fetch_add(1, Ordering::Relaxed);
    sh.done.add_permits(1);
}

/// starved: CPU work between yields, long against the GPU section.
#[inline(never)]
fn hog_crunch(ms: u64, seed: u64) -> u64 {
    let end = truth::now_ns() + ms * 1_000_000;
    let mut x = seed | 1;
    while truth::now_ns() < end {
        for _ in 0..1000 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5851_f42d;
        }
    }
    x
}

/// A task that computes for a slice between yields, at the workers' own priority: with two of
/// them a worker, every worker thread is always polling one, and a task woken meanwhile waits
/// in the run queue until a worker gets to it (the blocking pool's threads, which mostly wait
/// for the device, still get CPUs: what the GPU tasks lack is a worker thread to poll them).
async fn cpu_heavy_task(i: u64, ms: u64) {
    let mut acc = 0;
    while !PROVING_DONE.load(Ordering::Relaxed) {
        let t0 = truth::now_ns();
        acc ^= hog_crunch(ms, acc ^ i);
        truth::stall("hog_poll", t0, truth::now_ns(), "");
        tokio::task::yield_now().await;
    }
    HOG_SINK.fetch_xor(acc, Ordering::Relaxed);
}

async fn run(o: &Opts, sh: Arc<Shared>, inflight: usize) {
    let mut txs = Vec::new();
    let mut gpus = Vec::new();
    for _ in 0..o.gpu_tasks {
        let (tx, rx) = mpsc::unbounded_channel();
        txs.push(tx);
        gpus.push(tokio::spawn(gpu_task(sh.clone(), rx)));
    }
    let mut hogs = Vec::new();
    if o.scenario == "starved" {
        for i in 0..2 * o.workers as u64 {
            hogs.push(tokio::spawn(cpu_heavy_task(i, sh.sz.hog_slice_ms)));
        }
    }
    let budget = Arc::new(Semaphore::new(inflight));
    for idx in 0..o.partitions {
        let permit = budget.clone().acquire_owned().await.unwrap_or_else(|_| exit(1));
        let buf = sh.bufs.lock().unwrap().pop().unwrap_or_else(|| sh.dev.host_alloc());
        let tx = txs[idx as usize % txs.len()].clone();
        let n = sh.dev.log2n;
        tokio::spawn(async move {
            tokio::task::spawn_blocking(move || gpu::synth(buf, n, SEED, idx as u64))
                .await
                .unwrap_or_else(|_| exit(1));
            let _ = tx.send(Part { idx, buf, permit });
        });
    }
    drop(txs);
    let _ = sh.done.acquire_many(o.partitions).await;
    for g in gpus {
        let _ = g.await;
    }
    for h in hogs {
        let _ = h.await;
    }
}

fn main() {
    let o = parse();
    let mut sim_trace = None;
    if let Some(t) = &o.truth {
        if let Err(e) = truth::open(t) {
            eprintln!("tokengine: cannot write {}: {}", t, e);
            exit(1);
        }
        if o.device != gpu::BACKEND_CUDA {
            let p = std::env::var("SIMCUDA_TRACE").unwrap_or_else(|_| {
                let p = format!("{}.simcuda-trace", t);
                let _ = std::fs::remove_file(&p);
                std::env::set_var("SIMCUDA_TRACE", &p);
                p
            });
            sim_trace = Some(p);
        }
    }
    let backend = gpu::Device::init(o.device);
    let real = backend == gpu::BACKEND_CUDA;
    let log2n = if o.log2n > 0 { o.log2n } else if real { 22 } else { 8 };
    let sz = if real {
        Sizing { blocks: 60000, tail_ops: 200_000, hog_slice_ms: 120, slots: 3 }
    } else {
        Sizing { blocks: 20000, tail_ops: 20_000, hog_slice_ms: 120, slots: 3 }
    };
    // One malloc arena a thread, whatever the CPU count (glibc's default is 8 a CPU): the
    // results threads' fragmented arenas are theirs alone.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 256) };
    // The results threads first: the heap a running daemon has is built before the device is
    // touched, so the recording's first GPU work is the proving's.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let mut results = Vec::new();
    let mut result_threads = Vec::new();
    for i in 0..sz.slots {
        let (tx, rx) = std::sync::mpsc::channel();
        let (blocks, ready) = (sz.blocks, ready_tx.clone());
        let t = std::thread::Builder::new()
            .name(format!("results-{}", i))
            .spawn(move || results_thread(i, blocks, rx, ready))
            .unwrap_or_else(|e| {
                eprintln!("tokengine: cannot start a thread: {}", e);
                exit(1)
            });
        results.push(std::sync::Mutex::new(Some(tx)));
        result_threads.push(t);
    }
    for _ in 0..sz.slots {
        let _ = ready_rx.recv();
    }
    let dev = gpu::Device::open(backend, log2n);
    let inflight = 2 * o.gpu_tasks + 2;
    println!(
        "tokengine: {} backend, scenario {}, {} partitions of 2^{}, {} worker threads, {} GPU tasks",
        dev.backend_name(), o.scenario, o.partitions, log2n, o.workers, o.gpu_tasks
    );
    truth::line(&format!(
        "{{\"kind\":\"meta\",\"engine\":\"tokengine\",\"scenario\":\"{}\",\"backend\":\"{}\",\"partitions\":{},\"log2n\":{},\"workers\":{},\"gpu_tasks\":{},\"clock\":\"CLOCK_MONOTONIC\"}}",
        o.scenario, dev.backend_name(), o.partitions, log2n, o.workers, o.gpu_tasks
    ));
    let sh = Arc::new(Shared {
        dev,
        // --heap-lock: a tracker no symbol names, as an Arc<Mutex<_>>'s lock is.
        tracker: if o.heap_lock {
            Box::leak(Box::new(Tracker {
                state: Mutex::new(TrackerState { done: 0, busy: 0, failed: false }),
            }))
        } else {
            &TRACKER
        },
        heap_lock: o.heap_lock,
        gpu_lock: std::sync::Mutex::new(()),
        bufs: std::sync::Mutex::new(Vec::new()),
        results,
        spans: std::sync::Mutex::new(Vec::new()),
        sz,
        scenario: o.scenario.clone(),
        partitions: o.partitions,
        finished: AtomicU64::new(0),
        done: Semaphore::new(0),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.workers)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("tokengine: cannot start the runtime: {}", e);
            exit(1)
        });
    let t_start = truth::now_ns();
    rt.block_on(run(&o, sh.clone(), inflight));
    drop(rt);
    for r in &sh.results {
        r.lock().unwrap().take();
    }
    for t in result_threads {
        let _ = t.join();
    }
    let spans = sh.spans.lock().unwrap().clone();
    let busy = truth::busy(sim_trace.as_deref(), &spans, t_start);
    let own = truth::own_stalls(&o.scenario, o.workers);
    let pct = truth::gpu(&busy, &own);
    let launches = sh.dev.launches();
    println!(
        "gpu 0 busy: {:.1}% steady (first kernel to last), {} partitions, {} kernel launches, {} trims",
        pct, sh.finished.load(Ordering::Relaxed), launches, TRIMS.load(Ordering::Relaxed)
    );
    truth::line(&format!(
        "{{\"kind\":\"counts\",\"partitions\":{},\"launches\":{},\"malloc_trim\":{},\"wall_ns\":{}}}",
        sh.finished.load(Ordering::Relaxed), launches, TRIMS.load(Ordering::Relaxed),
        truth::now_ns() - t_start
    ));
    if o.truth.is_some() && std::env::var("SIMCUDA_TRACE").ok().as_deref() == sim_trace.as_deref() {
        if let Some(p) = &sim_trace {
            if p.ends_with(".simcuda-trace") {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
