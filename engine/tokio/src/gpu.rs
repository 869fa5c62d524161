// SPDX-License-Identifier: MIT
//! The engine's GPU layer (engine/gpu.c through engine/tokio/shim.c): the same driver calls and
//! kernels as zkengine's.  Every call exits the process with a one-line message on a driver
//! error, as zkengine's do.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_void};

extern "C" {
    fn tk_init(want: c_int) -> c_int;
    fn tk_open(log2n: c_uint) -> *mut c_void;
    fn tk_backend_name(b: c_int) -> *const c_char;
    fn tk_work_new(dev: *mut c_void, log2n: c_uint) -> *mut c_void;
    fn tk_host_alloc(dev: *mut c_void, log2n: c_uint) -> *mut c_void;
    fn tk_synth(buf: *mut c_void, log2n: c_uint, seed: u64, idx: u64);
    fn tk_upload(w: *mut c_void, buf: *mut c_void, log2n: c_uint);
    fn tk_compute(w: *mut c_void);
    fn tk_finish(w: *mut c_void, buf: *mut c_void, log2n: c_uint, ns: *mut u64);
    fn tk_launches(dev: *mut c_void) -> u64;
    fn tk_tail(buf: *const c_void, log2n: c_uint, ops: u64) -> u64;
}

pub const BACKEND_AUTO: i32 = 0;
pub const BACKEND_CUDA: i32 = 1;
pub const BACKEND_SIM: i32 = 2;

/// Pointers the driver layer hands out; they are used by one thread at a time (the engine's
/// queues pass them along), which is what the C layer requires.
#[derive(Clone, Copy)]
pub struct Ptr(pub *mut c_void);
unsafe impl Send for Ptr {}
unsafe impl Sync for Ptr {}

pub struct Device {
    pub dev: Ptr,
    pub backend: i32,
    pub log2n: u32,
}

impl Device {
    /// Load the driver (BACKEND_*): the backend in use.
    pub fn init(want: i32) -> i32 {
        unsafe { tk_init(want) }
    }
    pub fn open(backend: i32, log2n: u32) -> Device {
        Device { dev: Ptr(unsafe { tk_open(log2n) }), backend, log2n }
    }
    pub fn backend_name(&self) -> &'static str {
        unsafe { CStr::from_ptr(tk_backend_name(self.backend)) }.to_str().unwrap_or("?")
    }
    pub fn work_new(&self) -> Ptr {
        Ptr(unsafe { tk_work_new(self.dev.0, self.log2n) })
    }
    /// Pinned host memory for a partition: a, b, c, then h.
    pub fn host_alloc(&self) -> Ptr {
        Ptr(unsafe { tk_host_alloc(self.dev.0, self.log2n) })
    }
    pub fn launches(&self) -> u64 {
        unsafe { tk_launches(self.dev.0) }
    }
}

pub fn synth(buf: Ptr, log2n: u32, seed: u64, idx: u64) {
    unsafe { tk_synth(buf.0, log2n, seed, idx) }
}
pub fn upload(w: Ptr, buf: Ptr, log2n: u32) {
    unsafe { tk_upload(w.0, buf.0, log2n) }
}
pub fn compute(w: Ptr) {
    unsafe { tk_compute(w.0) }
}
/// Download h and wait for the stream: the kernels' [start, end] (CLOCK_MONOTONIC ns).
pub fn finish(w: Ptr, buf: Ptr, log2n: u32) -> (u64, u64) {
    let mut ns = [0u64; 2];
    unsafe { tk_finish(w.0, buf.0, log2n, ns.as_mut_ptr()) };
    (ns[0], ns[1])
}
pub fn tail(buf: Ptr, log2n: u32, ops: u64) -> u64 {
    unsafe { tk_tail(buf.0, log2n, ops) }
}
