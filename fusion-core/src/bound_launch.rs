//! A replayed launch bound to a kernel object of its own.
//!
//! Kernels are shared: every density, chain and call that launches the same
//! generated kernel sets its arguments on the one kernel object, and a
//! launch sets again every argument that differs from the last launch's. A
//! replay issues the same launches on the same buffers every time, so a
//! [`Recording`](crate::Recording) binds each of its launches (a whole
//! sweep among them) to a kernel object created for it from the same
//! program, with its arguments set once: replaying it only enqueues. With
//! four chains interleaved on one device, the shared objects had every
//! argument set again on every launch.

use crate::compile::count_launch;
use crate::error::Result;
use crate::events::Access;
use crate::kernel_cache::CompiledKernel;
use crate::launch::{HeldArg, KernelArg, NdRange, launch_again, note_launch, set_arg, submit};
use opencl3::kernel::Kernel;

/// A launch with its own kernel object, its arguments set.
pub(crate) struct BoundLaunch {
    /// Its own kernel object, never set again after [`BoundLaunch::new`].
    object: Kernel,
    /// The kernel it was created from (its program stays alive with it).
    kernel: CompiledKernel,
    args: Vec<HeldArg>,
    touches: Vec<(u64, Access)>,
    range: NdRange,
    /// Launches asked for that it stands for (a sweep's counted members).
    asked: usize,
    /// The launch as recorded, when this is a compact variant of it
    /// (`kernel_variants::compact`): chains are batched from their recorded
    /// launches, whose kernels are the same for every chain.
    recorded: Option<Box<BoundLaunch>>,
}

impl BoundLaunch {
    /// Creates a kernel object for `kernel` and sets `args` on it.
    pub(crate) fn new(
        kernel: &CompiledKernel,
        args: Vec<HeldArg>,
        range: NdRange,
        asked: usize,
    ) -> Result<Self> {
        let object = kernel.new_object()?;
        for (index, arg) in args.iter().enumerate() {
            set_arg(&object, index, &arg.arg())?;
        }
        let touches = args
            .iter()
            .filter_map(|a| match a {
                HeldArg::Buffer { id, access, .. } => Some((*id, *access)),
                _ => None,
            })
            .collect();
        Ok(BoundLaunch {
            object,
            kernel: kernel.clone(),
            args,
            touches,
            range,
            asked,
            recorded: None,
        })
    }

    /// This launch, standing in for `recorded` (its compact variant).
    pub(crate) fn standing_for(mut self, recorded: BoundLaunch) -> Self {
        self.recorded = Some(Box::new(recorded));
        self
    }

    /// The launch as it was recorded: itself, or the one it is a compact
    /// variant of.
    pub(crate) fn as_recorded(&self) -> &BoundLaunch {
        self.recorded.as_deref().unwrap_or(self)
    }

    /// Launches asked for that it stands for.
    pub(crate) fn asked(&self) -> usize {
        self.asked
    }

    /// The kernel it launches.
    pub(crate) fn kernel(&self) -> &CompiledKernel {
        &self.kernel
    }

    /// Its arguments, in the kernel's order.
    pub(crate) fn args(&self) -> &[HeldArg] {
        &self.args
    }

    /// Its range.
    pub(crate) fn range(&self) -> NdRange {
        self.range
    }

    /// Enqueues it, in order with the device's other commands as
    /// [`enqueue`](crate::enqueue) would (the calling thread's pending
    /// sweep, and any other thread's that shares a buffer, first).
    pub(crate) fn issue(&self) -> Result<()> {
        let args: Vec<KernelArg<'_>> = self.args.iter().map(HeldArg::arg).collect();
        crate::recorder::command(
            false,
            |notes| {
                note_launch(notes, self.kernel.identity(), &args, &self.range);
                launch_again(&self.kernel, &args, self.range)
            },
            || {
                let rt = self.kernel.runtime();
                let _ordering = rt.ordered(&self.touches)?;
                // Only this launch uses `object`, and its arguments are set.
                submit(
                    rt,
                    self.object.get(),
                    self.kernel.name(),
                    &args,
                    self.range,
                    false,
                )?;
                for _ in 0..self.asked {
                    count_launch();
                }
                Ok(())
            },
        )
    }
}
