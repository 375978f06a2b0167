//! Enqueueing a kernel with the event rules of paper §2.3 applied to its buffers.

use crate::compile::{ArgValue, CompiledKernel, count_launch};
use crate::error::{ClResultExt, Error, Result};
use crate::events::{ClEvent, EventLists, raw_handles};
use crate::runtime::Runtime;
use opencl3::types::cl_mem;

/// How a kernel uses a buffer argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only reads it: waits for its pending writes.
    Read,
    /// Only writes it: waits for its pending reads and writes.
    Write,
    /// Reads and writes it.
    ReadWrite,
}

/// One argument of a kernel launch.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg<'a> {
    /// A device buffer with its event lists.
    Buffer {
        /// The `cl_mem` handle (null for an empty matrix).
        mem: cl_mem,
        /// The matrix's [`buffer_id`](crate::MatrixCl::buffer_id): never
        /// reused, unlike a released handle's value, so a kernel keeps a
        /// buffer argument between launches only while it is the same
        /// matrix's.
        id: u64,
        /// The device the buffer belongs to (`None`: any).
        home: Option<&'static Runtime>,
        /// Its event lists.
        events: &'a EventLists,
        /// How the kernel uses it.
        access: Access,
    },
    /// An `int` value.
    Int(i32),
    /// A `float` value.
    Float(f32),
    /// A `double` value.
    Double(f64),
    /// `__local` memory of this many bytes.
    Local(usize),
}

impl<'a> KernelArg<'a> {
    /// The value as set on the kernel, to tell whether it changed.
    fn value(&self) -> ArgValue {
        match *self {
            KernelArg::Buffer { mem, id, .. } => ArgValue::Mem(mem as usize, id),
            KernelArg::Int(v) => ArgValue::Int(v),
            KernelArg::Float(v) => ArgValue::Float(v.to_bits()),
            KernelArg::Double(v) => ArgValue::Double(v.to_bits()),
            KernelArg::Local(bytes) => ArgValue::Local(bytes),
        }
    }

    /// A buffer argument for `matrix`.
    pub fn buffer<T: crate::ClType>(matrix: &'a crate::MatrixCl<T>, access: Access) -> Self {
        KernelArg::Buffer {
            mem: matrix.raw_mem(),
            id: matrix.buffer_id(),
            home: matrix.device().map(|d| d.runtime()),
            events: matrix.events(),
            access,
        }
    }
}

/// An ND-range: global sizes and optional local sizes (1 to 3 dimensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdRange {
    dims: usize,
    global: [usize; 3],
    local: Option<[usize; 3]>,
}

impl NdRange {
    /// A 1-D range of `global` work items, the work-group size left to the driver.
    pub fn d1(global: usize) -> Self {
        NdRange {
            dims: 1,
            global: [global, 1, 1],
            local: None,
        }
    }

    /// A 2-D range.
    pub fn d2(global: [usize; 2]) -> Self {
        NdRange {
            dims: 2,
            global: [global[0], global[1], 1],
            local: None,
        }
    }

    /// A 3-D range (the third dimension often indexes a batch).
    ///
    /// ```
    /// let r = clfuse_core::NdRange::d3([4, 4, 2]);
    /// assert!(!r.is_empty());
    /// ```
    pub fn d3(global: [usize; 3]) -> Self {
        NdRange {
            dims: 3,
            global,
            local: None,
        }
    }

    /// Sets the work-group sizes (one per dimension used).
    pub fn with_local(mut self, local: &[usize]) -> Self {
        let mut l = [1; 3];
        l[..local.len().min(3)].copy_from_slice(&local[..local.len().min(3)]);
        self.local = Some(l);
        self
    }

    /// Whether any dimension is empty.
    pub fn is_empty(&self) -> bool {
        self.global[..self.dims].contains(&0)
    }
}

/// Sets `args` on `kernel` and enqueues it over `range`, waiting for and
/// recording events on every buffer argument. Returns the launch's event
/// (`None` when the range is empty and nothing was launched).
///
/// ```
/// use clfuse_core::{compile_kernel, enqueue, Access, KernelArg, MatrixCl, NdRange};
/// let k = compile_kernel("inc", "__kernel void inc(__global int* x) { x[get_global_id(0)] += 1; }", "", "inc")?;
/// let m = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
/// enqueue(&k, &[KernelArg::buffer(&m, Access::ReadWrite)], NdRange::d1(3))?;
/// assert_eq!(m.to_vec()?, vec![2, 3, 4]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn enqueue(
    kernel: &CompiledKernel,
    args: &[KernelArg<'_>],
    range: NdRange,
) -> Result<Option<ClEvent>> {
    if range.is_empty() {
        return Ok(None);
    }
    let rt = kernel.runtime();
    // An in-order queue already runs commands in submission order, so event
    // bookkeeping is needed only on an out-of-order queue (and on PoCL, whose
    // matrices settle their commands when dropped).
    let track = rt.tracks_events();
    // Held until the event is recorded on every buffer (see `events`).
    let _ordering = track.then(crate::events::ordered);
    let mut wait = Vec::new();
    for arg in args {
        if let KernelArg::Buffer {
            events,
            access,
            mem,
            home,
            ..
        } = arg
        {
            if let Some(home) = home
                && home.slot() != rt.slot()
            {
                return Err(crate::Device::mismatch(
                    &format!("kernel `{}`", kernel.name()),
                    rt,
                    home,
                ));
            }
            if mem.is_null() {
                return Err(Error::InvalidArgument {
                    function: "enqueue",
                    argument: "args",
                    reason: format!("kernel `{}` got an empty matrix as a buffer", kernel.name()),
                });
            }
            if track {
                match access {
                    Access::Read => events.wait_list_for_read(&mut wait),
                    Access::Write | Access::ReadWrite => events.wait_list_for_write(&mut wait),
                }
            }
        }
    }
    let event = {
        let mut state = kernel.lock();
        for (index, arg) in args.iter().enumerate() {
            let value = arg.value();
            if state.set.get(index) == Some(&Some(value)) {
                continue;
            }
            let slot = index as u32;
            // SAFETY: each value matches the kernel parameter's size: buffers
            // are `cl_mem`, scalars their C type; callers (generated code or
            // typed launchers) keep the parameter list and `args` in step.
            let set = unsafe {
                match arg {
                    KernelArg::Buffer { mem, .. } => state.kernel.set_arg(slot, mem),
                    KernelArg::Int(v) => state.kernel.set_arg(slot, v),
                    KernelArg::Float(v) => state.kernel.set_arg(slot, v),
                    KernelArg::Double(v) => state.kernel.set_arg(slot, v),
                    KernelArg::Local(bytes) => state.kernel.set_arg_local_buffer(slot, *bytes),
                }
            };
            if let Err(error) = set {
                // What the kernel holds at this index is now unknown.
                state.set.clear();
                return Err(error).call("clSetKernelArg");
            }
            if state.set.len() <= index {
                state.set.resize(index + 1, None);
            }
            state.set[index] = Some(value);
        }
        let local_ptr = range
            .local
            .as_ref()
            .map_or(std::ptr::null(), |l| l.as_ptr());
        // SAFETY: the kernel's arguments are all set (now or, unchanged, by
        // an earlier launch under the same lock); the size arrays live until
        // the call returns and have `dims` valid entries.
        unsafe {
            rt.queue().enqueue_nd_range_kernel(
                state.kernel.get(),
                range.dims as u32,
                std::ptr::null(),
                range.global.as_ptr(),
                local_ptr,
                &raw_handles(&wait),
            )
        }
        .call("clEnqueueNDRangeKernel")?
    };
    count_launch();
    let event = ClEvent::new(event);
    if rt.profiling() {
        crate::profile::record(kernel.name(), &event);
    }
    if !track {
        return Ok(Some(event));
    }
    for arg in args {
        if let KernelArg::Buffer {
            events,
            access: Access::Read,
            ..
        } = arg
        {
            events.add_read(event.clone());
        }
    }
    for arg in args {
        if let KernelArg::Buffer {
            events,
            access: Access::Write | Access::ReadWrite,
            ..
        } = arg
        {
            events.add_write(event.clone());
        }
    }
    Ok(Some(event))
}
