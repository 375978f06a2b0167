//! Reuse of device buffers (a caching allocator, as GPU array libraries
//! keep): a dropped matrix's buffer goes back to a pool by size class
//! instead of to the driver, and the next matrix of that class takes it.
//!
//! Why: creating and releasing buffers costs more than a small kernel, and
//! a driver may wait for the device when memory is freed, so blocked
//! algorithms and per-call temporaries (GLM derivatives, reduction partials)
//! would stall the queue. A pooled buffer keeps its pending read/write
//! events, so its next owner's first command waits for the previous owner's
//! last ones, exactly as if it were the same matrix.
//!
//! `FUSION_BUFFER_CACHE=0` (or `RuntimeConfig::no_buffer_cache`) turns
//! the pool off for a runtime; at most a quarter of each device's memory is
//! kept for its runtime; [`release_cached_buffers`] hands everything back
//! to the driver.

use crate::events::EventLists;
use opencl3::types::cl_mem;
use std::collections::HashMap;
use std::sync::Mutex;

/// A buffer handle owned by the pool (one OpenCL reference).
struct OwnedMem(cl_mem);

// SAFETY: OpenCL memory objects may be used and released from any host
// thread (OpenCL 1.2+ API thread safety); the pool hands each handle to one
// owner at a time.
unsafe impl Send for OwnedMem {}

impl Drop for OwnedMem {
    fn drop(&mut self) {
        // SAFETY: the pool holds exactly one reference to the object.
        unsafe {
            let _ = opencl3::memory::release_mem_object(self.0);
        }
    }
}

/// A free buffer and the events its last owner left pending.
struct Free {
    mem: OwnedMem,
    events: EventLists,
}

#[derive(Default)]
struct Pool {
    /// By (runtime slot, size class): a buffer serves only its own context.
    free: HashMap<(usize, usize), Vec<Free>>,
    /// Bytes kept, per runtime slot.
    bytes: HashMap<usize, usize>,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);
/// The most bytes kept per runtime slot (none set: no limit). Apart from
/// the pool, so that emptying the pool keeps them.
static LIMITS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn pool() -> std::sync::MutexGuard<'static, Option<Pool>> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sets the most bytes the pool keeps for the runtime in `slot` (0 turns
/// pooling off for it); other runtimes keep their own limits.
pub(crate) fn set_limit(slot: usize, bytes: usize) {
    let mut limits = LIMITS.lock().unwrap_or_else(|p| p.into_inner());
    limits.retain(|(s, _)| *s != slot);
    limits.push((slot, bytes));
}

fn limit(slot: usize) -> usize {
    let limits = LIMITS.lock().unwrap_or_else(|p| p.into_inner());
    limits
        .iter()
        .find(|(s, _)| *s == slot)
        .map_or(usize::MAX, |(_, bytes)| *bytes)
}

/// The bytes a buffer for `bytes` is allocated with: rounded up to 512 bytes,
/// and to 1 MiB above 4 MiB, so that similar sizes share buffers.
pub(crate) fn size_class(bytes: usize) -> usize {
    const SMALL: usize = 512;
    const LARGE: usize = 1 << 20;
    if bytes > 4 * LARGE {
        bytes.div_ceil(LARGE) * LARGE
    } else {
        bytes.div_ceil(SMALL) * SMALL
    }
}

/// A free buffer of exactly `class` bytes, with its pending events.
pub(crate) fn take(slot: usize, class: usize) -> Option<(cl_mem, EventLists)> {
    let mut guard = pool();
    let pool = guard.as_mut()?;
    let free = pool.free.get_mut(&(slot, class))?.pop()?;
    if let Some(bytes) = pool.bytes.get_mut(&slot) {
        *bytes -= class;
    }
    let mem = free.mem.0;
    // The caller takes over the pool's reference.
    std::mem::forget(free.mem);
    Some((mem, free.events))
}

/// Offers a buffer of `class` bytes (one reference, passed in) to the pool;
/// it is released when the pool is off or full.
pub(crate) fn give(slot: usize, mem: cl_mem, class: usize, events: EventLists) {
    let mem = OwnedMem(mem);
    let limit = limit(slot);
    let mut guard = pool();
    let pool = guard.get_or_insert_with(Pool::default);
    let bytes = pool.bytes.entry(slot).or_default();
    if *bytes + class > limit {
        return;
    }
    *bytes += class;
    pool.free
        .entry((slot, class))
        .or_default()
        .push(Free { mem, events });
}

/// Hands every pooled buffer back to the driver and returns how many bytes
/// that freed (matrices still alive are not affected).
///
/// ```
/// let m = clfuse_core::MatrixCl::<f64>::zeros(100, 1)?;
/// drop(m);
/// assert_eq!(clfuse_core::cached_buffer_bytes(), 1024);
/// clfuse_core::release_cached_buffers();
/// assert_eq!(clfuse_core::cached_buffer_bytes(), 0);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn release_cached_buffers() -> usize {
    let taken = pool().take();
    // Released outside the lock: a release may wait for the device.
    taken.map_or(0, |p| p.bytes.values().sum())
}

/// Bytes the pool keeps for the runtime in `slot`.
pub(crate) fn cached_bytes_of(slot: usize) -> usize {
    pool()
        .as_ref()
        .and_then(|p| p.bytes.get(&slot).copied())
        .unwrap_or(0)
}

/// Bytes of device memory held by the pool for reuse.
///
/// ```
/// let before = clfuse_core::cached_buffer_bytes();
/// drop(clfuse_core::MatrixCl::<f32>::zeros(1, 1)?);
/// assert!(clfuse_core::cached_buffer_bytes() >= before);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn cached_buffer_bytes() -> usize {
    pool().as_ref().map_or(0, |p| p.bytes.values().sum())
}
