//! Enqueueing a kernel with the event rules of paper §2.3 applied to its buffers.

use crate::compile::{count_launch, count_queued};
use crate::device::Device;
use crate::error::{ClResultExt, Error, Result};
use crate::events::{Access, BufferOwner, ClEvent, raw_handles};
use crate::kernel_cache::{ArgValue, CompiledKernel};
use crate::recorder::{Command, Notes};
use crate::runtime::Runtime;
use opencl3::kernel::Kernel;
use opencl3::types::cl_mem;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

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
        /// What owns it: its event lists.
        owner: &'a dyn BufferOwner,
        /// How the kernel uses it.
        access: Access,
    },
    /// An `int` value.
    Int(i32),
    /// A `float` value.
    Float(f32),
    /// A `double` value.
    Double(f64),
    /// Sixteen values as one vector argument (`int16`, `float16`, `double16`).
    Lanes(Lanes16),
    /// `__local` memory of this many bytes.
    Local(usize),
}

/// Sixteen values of one OpenCL type, passed as one vector argument
/// (`int16`, `float16` or `double16`). On NVIDIA's driver every argument
/// costs the host time at each enqueue, so a kernel that carries many
/// values (a sampler's position) takes them sixteen to an argument.
///
/// ```
/// use clfuse_core::Lanes16;
/// let lanes = Lanes16::Double([0.5; 16]);
/// assert_eq!(lanes.cl_type(), "double16");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lanes16 {
    /// An `int16`.
    Int([i32; 16]),
    /// A `float16`.
    Float([f32; 16]),
    /// A `double16`.
    Double([f64; 16]),
}

impl Lanes16 {
    /// The OpenCL C type of the argument.
    pub fn cl_type(&self) -> &'static str {
        match self {
            Lanes16::Int(_) => "int16",
            Lanes16::Float(_) => "float16",
            Lanes16::Double(_) => "double16",
        }
    }

    /// The lanes' bits, lane by lane (for a recording's signature).
    fn bits(&self) -> [u64; 16] {
        match self {
            Lanes16::Int(v) => v.map(|x| x as u32 as u64),
            Lanes16::Float(v) => v.map(|x| x.to_bits() as u64),
            Lanes16::Double(v) => v.map(f64::to_bits),
        }
    }
}

impl<'a> KernelArg<'a> {
    /// The value as set on the kernel, to tell whether it changed; `None`
    /// for vector values, which are set at every launch (a position changes
    /// every call, and comparing sixteen lanes would cost what setting does).
    fn value(&self) -> Option<ArgValue> {
        Some(match *self {
            KernelArg::Buffer { mem, id, .. } => ArgValue::Mem(mem as usize, id),
            KernelArg::Int(v) => ArgValue::Int(v),
            KernelArg::Float(v) => ArgValue::Float(v.to_bits()),
            KernelArg::Double(v) => ArgValue::Double(v.to_bits()),
            KernelArg::Lanes(_) => return None,
            KernelArg::Local(bytes) => ArgValue::Local(bytes),
        })
    }

    /// Bytes of work-group memory it asks for (0 unless `Local`).
    pub(crate) fn local_bytes(&self) -> usize {
        match self {
            KernelArg::Local(bytes) => *bytes,
            _ => 0,
        }
    }

    /// Bytes the argument takes among a kernel's parameters, its alignment
    /// padding included (a vector of sixteen is aligned to its size).
    pub(crate) fn parameter_bytes(&self) -> usize {
        match self {
            KernelArg::Lanes(lanes) => match lanes {
                Lanes16::Double(_) => 2 * 128,
                Lanes16::Int(_) | Lanes16::Float(_) => 2 * 64,
            },
            _ => 8,
        }
    }
}

/// An ND-range: global sizes and optional local sizes (1 to 3 dimensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

    /// The size of its one work-group, when it is exactly one work-group
    /// of work items along its first dimension.
    pub fn one_group(&self) -> Option<usize> {
        let local = self.local?;
        let one = self.global == local && self.global[1] == 1 && self.global[2] == 1;
        (one && self.global[0] > 0).then_some(self.global[0])
    }

    /// The range with `copies` work items along dimension `dim` (one
    /// work-group each; it had none there): a batched launch's chains.
    /// `None` for a dimension it uses or past the third.
    pub(crate) fn with_chains(self, copies: usize, dim: usize) -> Option<NdRange> {
        if dim < self.dims || dim >= 3 {
            return None;
        }
        let mut range = self;
        range.global[dim] = copies;
        range.dims = dim + 1;
        Some(range)
    }

    /// Its number of dimensions.
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Whether its work-group size is chosen by the driver.
    pub(crate) fn local_left_to_driver(&self) -> bool {
        self.local.is_none()
    }

    /// Whether any dimension is empty.
    pub fn is_empty(&self) -> bool {
        self.global[..self.dims].contains(&0)
    }
}

/// A launch's argument, held past the launch: until its sweep is queued,
/// or for as long as a [`Recording`](crate::Recording) of it lives.
#[derive(Clone)]
pub(crate) enum HeldArg {
    Buffer {
        /// The `cl_mem`, valid while `owner` lives.
        mem: usize,
        id: u64,
        home: Option<&'static Runtime>,
        owner: Arc<dyn BufferOwner>,
        access: Access,
    },
    Int(i32),
    Float(f32),
    Double(f64),
    Lanes(Lanes16),
    Local(usize),
}

impl HeldArg {
    pub(crate) fn hold(arg: &KernelArg<'_>) -> Self {
        match *arg {
            KernelArg::Buffer {
                mem,
                id,
                home,
                owner,
                access,
            } => HeldArg::Buffer {
                mem: mem as usize,
                id,
                home,
                owner: owner.retain(),
                access,
            },
            KernelArg::Int(v) => HeldArg::Int(v),
            KernelArg::Float(v) => HeldArg::Float(v),
            KernelArg::Double(v) => HeldArg::Double(v),
            KernelArg::Lanes(v) => HeldArg::Lanes(v),
            KernelArg::Local(bytes) => HeldArg::Local(bytes),
        }
    }

    pub(crate) fn arg(&self) -> KernelArg<'_> {
        match self {
            HeldArg::Buffer {
                mem,
                id,
                home,
                owner,
                access,
            } => KernelArg::Buffer {
                mem: *mem as opencl3::types::cl_mem,
                id: *id,
                home: *home,
                owner: &**owner,
                access: *access,
            },
            HeldArg::Int(v) => KernelArg::Int(*v),
            HeldArg::Float(v) => KernelArg::Float(*v),
            HeldArg::Double(v) => KernelArg::Double(*v),
            HeldArg::Lanes(v) => KernelArg::Lanes(*v),
            HeldArg::Local(bytes) => KernelArg::Local(*bytes),
        }
    }
}

/// A recorded launch: its kernel, arguments and range, how many launches
/// asked for it counts, and, for a sweep's member, how its sweep ran.
pub(crate) struct LaunchNote {
    pub(crate) kernel: CompiledKernel,
    pub(crate) args: Vec<HeldArg>,
    pub(crate) range: NdRange,
    pub(crate) asked: usize,
    pub(crate) sweep: Option<Arc<SweepTag>>,
}

/// How a recorded sweep member ran: set when its sweep is launched.
#[derive(Default)]
pub(crate) struct SweepTag(OnceLock<Launched>);

/// How a sweep member ran.
pub(crate) struct Launched {
    /// Which sweep launch (process-unique).
    pub(crate) sweep: u64,
    /// Its place among the sweep's members.
    pub(crate) position: usize,
    /// How many members the sweep had.
    pub(crate) members: usize,
    /// The sweep's kernel; `None` when the member ran as its own kernel.
    pub(crate) kernel: Option<Arc<CompiledKernel>>,
}

impl SweepTag {
    /// How the member ran, once it has.
    pub(crate) fn launched(&self) -> Option<&Launched> {
        self.0.get()
    }

    pub(crate) fn set(&self, launched: Launched) {
        // A member runs once; a second setting cannot happen.
        let _ = self.0.set(launched);
    }

    /// Notes that the member ran alone, as its own kernel.
    pub(crate) fn alone(&self) {
        self.set(Launched {
            sweep: next_sweep(),
            position: 0,
            members: 1,
            kernel: None,
        });
    }
}

/// A process-unique number for a sweep launch.
pub(crate) fn next_sweep() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Enqueues `kernel` (its arguments set) over `range` on `rt`'s queue
/// without asking for an event (opencl3 always asks for one).
fn enqueue_without_event(
    rt: &Runtime,
    kernel: opencl3::types::cl_kernel,
    range: &NdRange,
    wait: &[opencl3::types::cl_event],
) -> Result<()> {
    let library = cl3::load_library().as_ref().map_err(|_| Error::OpenCl {
        code: cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED,
        name: "the OpenCL library could not be loaded".into(),
        call: "clEnqueueNDRangeKernel",
    })?;
    let local = range
        .local
        .as_ref()
        .map_or(std::ptr::null(), |l| l.as_ptr());
    // The queue and kernel are live handles of `rt`'s context; the size
    // arrays and the wait list (live events) outlive the call and have
    // `dims` and `wait.len()` entries; a null event pointer asks for no event.
    let status = library.clEnqueueNDRangeKernel(
        rt.queue().get(),
        kernel,
        range.dims as u32,
        std::ptr::null(),
        range.global.as_ptr(),
        local,
        wait.len() as u32,
        if wait.is_empty() {
            std::ptr::null()
        } else {
            wait.as_ptr()
        },
        std::ptr::null_mut(),
    );
    match status {
        Some(0) => Ok(()),
        Some(code) => Err(Error::OpenCl {
            code,
            name: opencl3::error_codes::error_text(code).to_string(),
            call: "clEnqueueNDRangeKernel",
        }),
        None => Err(Error::OpenCl {
            code: cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE,
            name: "the OpenCL library lacks clEnqueueNDRangeKernel".into(),
            call: "clEnqueueNDRangeKernel",
        }),
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
    crate::recorder::command(
        false,
        |notes| {
            note_launch(notes, kernel.identity(), args, &range);
            launch_again(kernel, args, range)
        },
        || {
            let rt = kernel.runtime();
            check_buffers(kernel.name(), rt, args)?;
            // Held until the event is recorded on every buffer (see
            // `events`), and without tracking until the launch is queued, so
            // that a read-back on the transfer queue is either queued behind
            // it or seen in the lists. Taking it launches a pending sweep
            // first (see `sweep`).
            let _ordering = rt.ordered(&touches(args))?;
            let event = enqueue_ordered(kernel, args, range, false)?;
            count_launch();
            Ok(event)
        },
    )
}

/// Tells a recording (see [`crate::record`]) about a launch of the kernel
/// `kernel` (its identity): its range and arguments, a buffer named by its
/// place among the recording's buffers.
pub(crate) fn note_launch(
    notes: &mut Notes<'_>,
    kernel: usize,
    args: &[KernelArg<'_>],
    range: &NdRange,
) {
    notes.mix((kernel, range));
    for arg in args {
        match arg {
            KernelArg::Buffer { id, access, .. } => notes.buffer(*id, *access),
            KernelArg::Int(v) => notes.mix((1u8, *v)),
            KernelArg::Float(v) => notes.mix((2u8, v.to_bits())),
            KernelArg::Double(v) => notes.mix((3u8, v.to_bits())),
            KernelArg::Lanes(v) => notes.mix((5u8, v.bits())),
            KernelArg::Local(bytes) => notes.mix((4u8, *bytes)),
        }
    }
}

/// The recorded command that launches `kernel` again with `args` over `range`.
pub(crate) fn launch_again(
    kernel: &CompiledKernel,
    args: &[KernelArg<'_>],
    range: NdRange,
) -> Command {
    let held: Vec<HeldArg> = args.iter().map(HeldArg::hold).collect();
    let note = LaunchNote {
        kernel: kernel.clone(),
        args: held.clone(),
        range,
        asked: 1,
        sweep: None,
    };
    let kernel = kernel.clone();
    Command::launch(
        move || {
            let args: Vec<KernelArg<'_>> = held.iter().map(HeldArg::arg).collect();
            enqueue(&kernel, &args, range)?;
            Ok(None)
        },
        note,
    )
}

/// The buffers `args` use and how.
pub(crate) fn touches(args: &[KernelArg<'_>]) -> Vec<(u64, Access)> {
    args.iter()
        .filter_map(|a| match a {
            KernelArg::Buffer { id, access, .. } => Some((*id, *access)),
            _ => None,
        })
        .collect()
}

/// Checks that every buffer argument lives on `rt`'s device and is not
/// empty, before anything is queued or held.
pub(crate) fn check_buffers(name: &str, rt: &Runtime, args: &[KernelArg<'_>]) -> Result<()> {
    for arg in args {
        if let KernelArg::Buffer { mem, home, .. } = arg {
            if let Some(home) = home
                && home.slot() != rt.slot()
            {
                return Err(Device::mismatch(&format!("kernel `{name}`"), rt, home));
            }
            if mem.is_null() {
                return Err(Error::InvalidArgument {
                    function: "enqueue",
                    argument: "args",
                    reason: format!("kernel `{name}` got an empty matrix as a buffer"),
                });
            }
        }
    }
    Ok(())
}

/// Notes a launch's writes on buffers whose queue does not track events
/// (see [`crate::EventLists::note_write`]).
pub(crate) fn note_writes(args: &[KernelArg<'_>]) {
    for arg in args {
        if let KernelArg::Buffer {
            owner,
            access: Access::Write | Access::ReadWrite,
            ..
        } = arg
        {
            owner.events().note_write();
        }
    }
}

/// [`enqueue`] with the arguments checked and the device's ordering lock
/// held by the caller (counted as queued, not as a launch asked for).
/// `noted`: its writes were counted already (a sweep's members, when they
/// joined), so that a reader comparing counts sees each write once.
pub(crate) fn enqueue_ordered(
    kernel: &CompiledKernel,
    args: &[KernelArg<'_>],
    range: NdRange,
    noted: bool,
) -> Result<Option<ClEvent>> {
    let mut state = kernel.lock();
    for (index, arg) in args.iter().enumerate() {
        let value = arg.value();
        if value.is_some() && state.set.get(index) == Some(&value) {
            continue;
        }
        if let Err(error) = set_arg(&state.kernel, index, arg) {
            // What the kernel holds at this index is now unknown.
            state.set.clear();
            return Err(error);
        }
        if state.set.len() <= index {
            state.set.resize(index + 1, None);
        }
        state.set[index] = value;
    }
    submit(
        kernel.runtime(),
        state.kernel.get(),
        kernel.name(),
        args,
        range,
        noted,
    )
}

/// Sets argument `index` of `kernel` to `arg`.
pub(crate) fn set_arg(kernel: &Kernel, index: usize, arg: &KernelArg<'_>) -> Result<()> {
    let slot = index as u32;
    // SAFETY: each value matches the kernel parameter's size: buffers are
    // `cl_mem`, scalars their C type, vectors sixteen lanes of it; callers (generated code or typed
    // launchers) keep the parameter list and `args` in step.
    unsafe {
        match arg {
            KernelArg::Buffer { mem, .. } => kernel.set_arg(slot, mem),
            KernelArg::Int(v) => kernel.set_arg(slot, v),
            KernelArg::Float(v) => kernel.set_arg(slot, v),
            KernelArg::Double(v) => kernel.set_arg(slot, v),
            // A vector of sixteen: its lanes in order, as the C type lays them out.
            KernelArg::Lanes(Lanes16::Int(v)) => kernel.set_arg(slot, v),
            KernelArg::Lanes(Lanes16::Float(v)) => kernel.set_arg(slot, v),
            KernelArg::Lanes(Lanes16::Double(v)) => kernel.set_arg(slot, v),
            KernelArg::Local(bytes) => kernel.set_arg_local_buffer(slot, *bytes),
        }
    }
    .call("clSetKernelArg")
}

/// Enqueues `kernel` (a handle whose arguments are `args`, all set, and
/// which no other thread sets meanwhile) over `range`, behind what its
/// buffers wait for, and records its event where events are tracked. The
/// caller holds the device's ordering lock. `noted`: see [`enqueue_ordered`].
pub(crate) fn submit(
    rt: &Runtime,
    kernel: opencl3::types::cl_kernel,
    name: &str,
    args: &[KernelArg<'_>],
    range: NdRange,
    noted: bool,
) -> Result<Option<ClEvent>> {
    // An in-order queue already runs commands in submission order, so event
    // bookkeeping is needed only on an out-of-order queue (and on PoCL, whose
    // matrices settle their commands when dropped). Without it, a kernel
    // still waits where queues meet: for read-backs of a buffer it writes
    // that run on the transfer queue.
    let track = rt.tracks_events();
    let mut wait = Vec::new();
    for arg in args {
        if let KernelArg::Buffer { owner, access, .. } = arg {
            match access {
                Access::Read if track => owner.events().wait_list_for_read(&mut wait),
                Access::Read => {}
                Access::Write | Access::ReadWrite => {
                    // Without tracking, still behind reads of it on the
                    // transfer queue.
                    owner.events().wait_list_for_write(&mut wait);
                    if !track && !noted {
                        owner.events().note_write();
                    }
                }
            }
        }
    }
    if !track && !rt.profiling() {
        // Nothing will wait for or time this launch: no event at all
        // (creating and releasing one is driver work on every launch).
        enqueue_without_event(rt, kernel, &range, &raw_handles(&wait))?;
        count_queued();
        return Ok(None);
    }
    let local_ptr = range
        .local
        .as_ref()
        .map_or(std::ptr::null(), |l| l.as_ptr());
    // SAFETY: the kernel's arguments are all set (the caller's promise);
    // the size arrays live until the call returns and have `dims` valid
    // entries.
    let event = unsafe {
        rt.queue().enqueue_nd_range_kernel(
            kernel,
            range.dims as u32,
            std::ptr::null(),
            range.global.as_ptr(),
            local_ptr,
            &raw_handles(&wait),
        )
    }
    .call("clEnqueueNDRangeKernel")?;
    count_queued();
    let event = ClEvent::new(event);
    if rt.profiling() {
        crate::profile::record(name, &event);
    }
    if !track {
        return Ok(Some(event));
    }
    for arg in args {
        if let KernelArg::Buffer {
            owner,
            access: Access::Read,
            ..
        } = arg
        {
            owner.events().add_read(event.clone());
        }
    }
    for arg in args {
        if let KernelArg::Buffer {
            owner,
            access: Access::Write | Access::ReadWrite,
            ..
        } = arg
        {
            if noted {
                owner.events().set_write(event.clone());
            } else {
                owner.events().add_write(event.clone());
            }
        }
    }
    Ok(Some(event))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The event-free path runs only on in-order queues of drivers that do
    /// not settle on drop (not PoCL): tried here directly.
    #[test]
    fn a_launch_without_an_event_runs() -> Result<()> {
        let kernel = crate::compile_kernel(
            "add_one",
            "__kernel void add_one(__global int* x) { x[get_global_id(0)] += 1; }",
            "",
            "add_one",
        )?;
        let x = crate::MatrixCl::from_slice(5, 1, &[1, 2, 3, 4, 5])?;
        let rt = kernel.runtime();
        rt.finish()?;
        {
            let mut state = kernel.lock();
            let mem = x.raw_mem();
            // SAFETY: argument 0 is the `__global int*` buffer of 5 elements.
            unsafe { state.kernel.set_arg(0, &mem) }.call("clSetKernelArg")?;
            state.set.clear();
            enqueue_without_event(rt, state.kernel.get(), &NdRange::d1(5), &[])?;
        }
        rt.finish()?;
        assert_eq!(x.to_vec()?, vec![2, 3, 4, 5, 6]);
        Ok(())
    }
}
