//! Small buffers carved out of larger ones, so that a kernel can reach many
//! of them through one argument.
//!
//! On NVIDIA's driver every kernel argument costs the host time at each
//! enqueue (0.15–0.3 µs), and a sampler's replayed gradient call passes
//! about a hundred buffers (its parameters, their adjoints, a density's
//! partials), a batched round of four chains about three hundred: more
//! host time than the kernels' work. So a matrix of at most
//! [`ARENA_MAX_BYTES`] is a sub-buffer of the device's current *parent*
//! buffer (`clCreateSubBuffer`), and a replayed launch's variant
//! (`kernel_variants`) takes each parent once and finds each of its
//! buffers at an offset read from the launch's scalar table.
//!
//! A sub-buffer is an ordinary buffer to everything else: it has its own
//! events, the buffer pool reuses it by its size class, and reads, writes
//! and fills name it alone. Parents are filled in order and never reused;
//! OpenCL frees one when its last sub-buffer is released. A variant's
//! launch names the parent but is ordered by the sub-buffers it reaches,
//! as the launch it stands for was; two sub-buffers never overlap.
//! (OpenCL leaves undefined a command on a parent running at the same time
//! as one on a sub-buffer of it, overlapping or not: a variant's kernel and
//! a read-back on the transfer queue. The drivers here, on contexts of one
//! device, make a sub-buffer an offset into its parent; the tests pass on
//! both.)
//!
//! `FUSION_ARENA=0` (or [`Tuning::arena`](crate::Tuning)) turns it off for
//! a runtime: matrices it creates from then on get buffers of their own.

use crate::events::{BufferOwner, EventLists};
use crate::runtime::Runtime;
use opencl3::memory::{CL_MEM_READ_WRITE, get_mem_object_info};
use opencl3::types::{cl_buffer_region, cl_mem};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Largest buffer carved from a parent (bytes): a model's parameters,
/// adjoints, partials and small temporaries; data stays apart.
pub const ARENA_MAX_BYTES: usize = 64 << 10;

/// Bytes of one parent buffer.
const PARENT_BYTES: usize = 4 << 20;

/// The parent being filled on a device, with our reference to it.
struct Current {
    parent: cl_mem,
    used: usize,
}

// SAFETY: OpenCL memory objects may be used and released from any host
// thread (OpenCL 1.2+ API thread safety).
unsafe impl Send for Current {}

impl Drop for Current {
    fn drop(&mut self) {
        // SAFETY: `Current` holds one reference; the parent lives on while
        // any sub-buffer of it does.
        unsafe {
            let _ = opencl3::memory::release_mem_object(self.parent);
        }
    }
}

/// Per runtime slot, the parent being filled.
static CURRENT: Mutex<Option<HashMap<usize, Current>>> = Mutex::new(None);

/// Whether `rt` carves small buffers from parents (`FUSION_ARENA`, default on).
pub(crate) fn on(rt: &Runtime) -> bool {
    rt.tuning().arena != Some(false)
}

/// A new sub-buffer of `bytes` (a size class, at most [`ARENA_MAX_BYTES`])
/// of `rt`'s current parent, a new parent made when it is full; one
/// reference, passed to the caller. `None` when the runtime keeps its
/// buffers apart or the driver refuses (the caller creates a buffer of its
/// own).
pub(crate) fn carve(rt: &Runtime, bytes: usize) -> Option<cl_mem> {
    if bytes == 0 || bytes > ARENA_MAX_BYTES || !on(rt) {
        return None;
    }
    // Each sub-buffer starts where the device allows a buffer to start.
    let align = rt.device_info().mem_base_align_bytes.max(1);
    let stride = bytes.div_ceil(align) * align;
    let mut guard = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    let currents = guard.get_or_insert_with(HashMap::new);
    let full = currents
        .get(&rt.slot())
        .is_none_or(|c| c.used + stride > PARENT_BYTES);
    if full {
        // SAFETY: no host pointer; the size is non-zero.
        let parent = unsafe {
            opencl3::memory::create_buffer(
                rt.context().get(),
                CL_MEM_READ_WRITE,
                PARENT_BYTES,
                std::ptr::null_mut(),
            )
        }
        .ok()?;
        // Replacing the full parent drops our reference to it.
        currents.insert(rt.slot(), Current { parent, used: 0 });
    }
    let current = currents.get_mut(&rt.slot())?;
    let region = cl_buffer_region {
        origin: current.used,
        size: bytes,
    };
    // SAFETY: the region lies inside the parent (checked above) and starts
    // at a multiple of the device's base alignment; `region` outlives the call.
    let sub = unsafe {
        opencl3::memory::create_sub_buffer(
            current.parent,
            CL_MEM_READ_WRITE,
            opencl3::memory::CL_BUFFER_CREATE_TYPE_REGION,
            (&raw const region).cast(),
        )
    }
    .ok()?;
    current.used += stride;
    Some(sub)
}

/// The parent `mem` was carved from and its offset in bytes; `None` for
/// a buffer of its own.
pub(crate) fn parent_of(mem: cl_mem) -> Option<(cl_mem, usize)> {
    if mem.is_null() {
        return None;
    }
    let parent = get_mem_object_info(mem, opencl3::memory::CL_MEM_ASSOCIATED_MEMOBJECT).ok()?;
    let parent = isize::from(parent) as cl_mem;
    if parent.is_null() {
        return None;
    }
    let offset = get_mem_object_info(mem, opencl3::memory::CL_MEM_OFFSET).ok()?;
    Some((parent, usize::from(offset)))
}

/// A parent passed to a variant's launch: the launch is ordered by the
/// sub-buffers it reaches through it, so the parent itself is only read
/// (its events: the launches' own, pruned as they complete). It holds a
/// reference of its own to the parent.
pub(crate) struct ParentArg {
    mem: cl_mem,
    events: EventLists,
}

// SAFETY: as for `Current`; the event lists lock themselves.
unsafe impl Send for ParentArg {}
// SAFETY: the handle is only read; the event lists lock themselves.
unsafe impl Sync for ParentArg {}

impl ParentArg {
    /// Holds `parent` (a reference of its own).
    pub(crate) fn new(parent: cl_mem) -> Option<Arc<Self>> {
        // SAFETY: `parent` is live: a sub-buffer of it is.
        unsafe { opencl3::memory::retain_mem_object(parent) }.ok()?;
        Some(Arc::new(ParentArg {
            mem: parent,
            events: EventLists::default(),
        }))
    }

    /// Its `cl_mem`.
    pub(crate) fn mem(&self) -> cl_mem {
        self.mem
    }
}

impl Drop for ParentArg {
    fn drop(&mut self) {
        // SAFETY: the reference taken in `new`.
        unsafe {
            let _ = opencl3::memory::release_mem_object(self.mem);
        }
    }
}

impl BufferOwner for Arc<ParentArg> {
    fn events(&self) -> &EventLists {
        &self.events
    }

    fn retain(&self) -> Arc<dyn BufferOwner> {
        Arc::new(Arc::clone(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, Device, KernelArg, MatrixCl, Result, RuntimeConfig, Tuning};

    fn mem_of<T: crate::ClType>(m: &MatrixCl<T>) -> cl_mem {
        match KernelArg::buffer(m, Access::Read) {
            KernelArg::Buffer { mem, .. } => mem,
            _ => std::ptr::null_mut(),
        }
    }

    #[test]
    fn small_matrices_are_sub_buffers_apart_that_keep_their_own_values() -> Result<()> {
        let rt = Runtime::get()?;
        let align = rt.device_info().mem_base_align_bytes;
        let lens = [1usize, 31, 33, 64, 257];
        let matrices = lens
            .iter()
            .map(|&n| MatrixCl::from_slice(n, 1, &vec![n as f64; n]))
            .collect::<Result<Vec<_>>>()?;
        let mut regions = Vec::new();
        for (m, &n) in matrices.iter().zip(&lens) {
            let (parent, offset) = parent_of(mem_of(m)).expect("a sub-buffer");
            assert_eq!(offset % align, 0, "{n} elements at offset {offset}");
            regions.push((parent as usize, offset, 8 * n));
        }
        // No two overlap (other tests carve from the same parents meanwhile).
        for (k, a) in regions.iter().enumerate() {
            for b in &regions[k + 1..] {
                assert!(
                    a.0 != b.0 || a.1 + a.2 <= b.1 || b.1 + b.2 <= a.1,
                    "{a:?} {b:?}"
                );
            }
        }
        // Writing and filling one leaves its neighbours as they were.
        matrices[2].fill(-1.0)?;
        matrices[3].write(&[7.0; 64])?;
        for (k, (m, &n)) in matrices.iter().zip(&lens).enumerate() {
            let want = match k {
                2 => vec![-1.0; n],
                3 => vec![7.0; n],
                _ => vec![n as f64; n],
            };
            assert_eq!(m.to_vec()?, want);
        }
        // Data larger than a carved buffer gets a buffer of its own.
        let large = MatrixCl::<f64>::zeros(ARENA_MAX_BYTES / 8 + 1, 1)?;
        assert!(parent_of(mem_of(&large)).is_none());
        Ok(())
    }

    #[test]
    fn a_runtime_without_the_arena_gives_each_matrix_its_own_buffer() -> Result<()> {
        let config = RuntimeConfig {
            tuning: Tuning {
                arena: Some(false),
                ..Tuning::default()
            },
            ..RuntimeConfig::from_env()?
        };
        let device = Device::open_new(config)?;
        device.run(|| -> Result<()> {
            let m = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
            assert!(parent_of(mem_of(&m)).is_none());
            assert_eq!(m.to_vec()?, vec![1.0, 2.0, 3.0]);
            Ok(())
        })
    }
}
