//! Page-locked host memory for small read-backs (check flags, reduction
//! partials). A driver copies into pageable memory through its own staging
//! buffer, one read at a time: on an H200 each queued read then started
//! ~50 µs after the previous one ended. Reads into page-locked memory go
//! straight to the host and follow one another on the copy engine.
//!
//! A slot is a buffer allocated with `CL_MEM_ALLOC_HOST_PTR` and mapped once
//! for the life of the process; its mapped pointer is the destination of
//! [`MatrixCl::read_later`](crate::MatrixCl::read_later). Slots are pooled by
//! size and handed back when their read has been collected.

use crate::error::{ClResultExt, Result};
use crate::runtime::Runtime;
use opencl3::memory::{
    Buffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE, ClMem,
};
use opencl3::types::{CL_BLOCKING, cl_mem};
use std::sync::Mutex;

/// Read-backs up to this size use a slot; larger ones read into a `Vec`
/// (the staging copy matters less next to the transfer itself).
pub(crate) const MAX_BYTES: usize = 64 * 1024;

/// Smallest slot: a page.
const MIN_BYTES: usize = 4096;

/// Slots kept per size for reuse (a kernel reads back a handful at a time).
const KEEP_PER_SIZE: usize = 16;

/// Page-locked host memory of `bytes` bytes, mapped while the slot lives
/// (pooled slots live as long as the process).
#[derive(Debug)]
pub(crate) struct PinnedSlot {
    /// The runtime whose context owns the mapping.
    runtime: &'static Runtime,
    buffer: Buffer<u8>,
    ptr: *mut u8,
    bytes: usize,
}

impl Drop for PinnedSlot {
    /// A slot the pool does not keep is unmapped before its buffer goes.
    fn drop(&mut self) {
        // SAFETY: `ptr` is this buffer's live mapping, and no read
        // targets it any more (a slot is dropped only after its read
        // completed); the driver releases the buffer once the unmap ran.
        let _ = unsafe {
            self.runtime
                .queue()
                .enqueue_unmap_mem_object(self.buffer.get(), self.ptr.cast(), &[])
        };
    }
}

// SAFETY: the slot owns its mapping exclusively (the pool hands it to one
// reader at a time); the pointer is plain host memory.
unsafe impl Send for PinnedSlot {}

impl PinnedSlot {
    /// The mapped host memory.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Its size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

static POOL: Mutex<Vec<PinnedSlot>> = Mutex::new(Vec::new());

fn size_class(bytes: usize) -> usize {
    bytes.max(MIN_BYTES).next_power_of_two()
}

/// A slot of at least `bytes` bytes, or `None` when the read is too large
/// for one or the driver cannot provide page-locked memory (the caller then
/// reads into ordinary memory).
pub(crate) fn take(runtime: &'static Runtime, bytes: usize) -> Option<PinnedSlot> {
    if bytes == 0 || bytes > MAX_BYTES {
        return None;
    }
    let class = size_class(bytes);
    {
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = pool
            .iter()
            .position(|s| s.bytes == class && s.runtime.slot() == runtime.slot())
        {
            return Some(pool.swap_remove(k));
        }
    }
    create(runtime, class).ok()
}

/// Returns a slot whose read has completed to the pool.
pub(crate) fn give(slot: PinnedSlot) {
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    let alike = |s: &&PinnedSlot| s.bytes == slot.bytes && s.runtime.slot() == slot.runtime.slot();
    if pool.iter().filter(alike).count() < KEEP_PER_SIZE {
        pool.push(slot);
    }
}

fn create(rt: &'static Runtime, bytes: usize) -> Result<PinnedSlot> {
    // SAFETY: no host pointer is passed; the size is non-zero and bounded.
    let buffer = unsafe {
        Buffer::<u8>::create(
            rt.context(),
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            bytes,
            std::ptr::null_mut(),
        )
    }
    .call("clCreateBuffer")?;
    let mut mapped: cl_mem = std::ptr::null_mut();
    // SAFETY: a blocking map of the whole live buffer; the pointer it
    // returns stays valid while the buffer lives (it is never unmapped).
    unsafe {
        rt.queue().enqueue_map_buffer(
            &buffer,
            CL_BLOCKING,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            bytes,
            &mut mapped,
            &[],
        )
    }
    .call("clEnqueueMapBuffer")?;
    Ok(PinnedSlot {
        runtime: rt,
        buffer,
        ptr: mapped.cast::<u8>(),
        bytes,
    })
}
