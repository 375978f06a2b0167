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
//!
//! A bound launch of one work-group (a recorded sweep) also takes the
//! thread's pending launches from outside the recording, such as a
//! sampler's position write, as its first steps (`sweep::take_prologue`):
//! a kernel with that prologue is built once per sequence of prologue
//! kernels, on an object of its own whose launch arguments are set once;
//! only the prologue's are set at each replay.

use crate::compile::count_launch;
use crate::error::Result;
use crate::events::Access;
use crate::kernel_cache::CompiledKernel;
use crate::launch::{
    HeldArg, KernelArg, NdRange, launch_again, note_launch, note_writes, set_arg, submit,
};
use crate::runtime::Runtime;
use crate::sweep::{Prologue, build_with_prologue, launch_prologue, sweep_group, take_prologue};
use opencl3::kernel::Kernel;
use std::collections::HashMap;
use std::sync::Mutex;

/// Most prologue kernels one bound launch builds (a replay sees one or two
/// sequences of pending launches before it).
const MAX_PROLOGUES: usize = 4;

/// A bound launch's kernel with a prologue before its own steps, on an
/// object of its own: the launch's arguments set once, after the
/// prologue's.
struct WithPrologue {
    kernel: CompiledKernel,
    object: Kernel,
}

/// A launch with its own kernel object, its arguments set.
pub(crate) struct BoundLaunch {
    /// Its own kernel object, never set again after [`BoundLaunch::new`].
    object: Kernel,
    /// The kernel it was created from (its program stays alive with it).
    kernel: CompiledKernel,
    args: Box<[HeldArg]>,
    /// Buffers its kernel reaches through a parent passed in `args`
    /// (`arena`): not arguments, but what orders the launch, and held.
    reached: Box<[HeldArg]>,
    touches: Box<[(u64, Access)]>,
    range: NdRange,
    /// Launches asked for that it stands for (a sweep's counted members).
    asked: usize,
    /// The launch as recorded, when this is a compact variant of it
    /// (`kernel_variants::compact`): chains are batched from their recorded
    /// launches, whose kernels are the same for every chain.
    recorded: Option<Box<BoundLaunch>>,
    /// Its kernel with prologues before it, by the prologue's kernels;
    /// `None`: that one did not build (the prologue launches alone).
    prologues: Mutex<HashMap<Vec<u64>, Option<WithPrologue>>>,
}

impl BoundLaunch {
    /// Creates a kernel object for `kernel` and sets `args` on it.
    pub(crate) fn new(
        kernel: &CompiledKernel,
        args: Vec<HeldArg>,
        range: NdRange,
        asked: usize,
    ) -> Result<Self> {
        Self::reaching(kernel, args, Vec::new(), range, asked)
    }

    /// [`new`](Self::new) for a kernel that also reaches the buffers
    /// `reached` through parents among `args` (`arena`): the launch is
    /// ordered as one of them, and holds them.
    pub(crate) fn reaching(
        kernel: &CompiledKernel,
        args: Vec<HeldArg>,
        reached: Vec<HeldArg>,
        range: NdRange,
        asked: usize,
    ) -> Result<Self> {
        let object = kernel.new_object()?;
        for (index, arg) in args.iter().enumerate() {
            set_arg(&object, index, &arg.arg())?;
        }
        let touches = args
            .iter()
            .chain(&reached)
            .filter_map(|a| match a {
                HeldArg::Buffer { id, access, .. } => Some((*id, *access)),
                _ => None,
            })
            .collect();
        Ok(BoundLaunch {
            object,
            kernel: kernel.clone(),
            args: args.into(),
            reached: reached.into(),
            touches,
            range,
            asked,
            recorded: None,
            prologues: Mutex::new(HashMap::new()),
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
        // What orders it: its arguments, then the buffers it reaches.
        let ordered: Vec<KernelArg<'_>> = self
            .args
            .iter()
            .chain(&self.reached)
            .map(HeldArg::arg)
            .collect();
        let args = &ordered[..self.args.len()];
        crate::recorder::command(
            false,
            |notes| {
                if self.reached.is_empty() {
                    note_launch(notes, self.kernel.identity(), args, &self.range);
                    return launch_again(&self.kernel, args, self.range);
                }
                // Issued while recording: as the launch it stands for
                // (reached buffers are no arguments of a shared kernel).
                let recorded = self.as_recorded();
                let args: Vec<KernelArg<'_>> = recorded.args.iter().map(HeldArg::arg).collect();
                note_launch(notes, recorded.kernel.identity(), &args, &recorded.range);
                launch_again(&recorded.kernel, &args, recorded.range)
            },
            || {
                let rt = self.kernel.runtime();
                let mut held = rt.ordering_only();
                let prologue = if self.takes_prologues(rt) {
                    let bytes = args.iter().map(KernelArg::parameter_bytes).sum();
                    let local = args.iter().map(KernelArg::local_bytes).sum();
                    take_prologue(&mut held, &self.touches, bytes, local, rt)?
                } else {
                    if let Some(held) = held.as_mut() {
                        held.launch_before(&self.touches)?;
                    }
                    None
                };
                let ran = match prologue {
                    Some(prologue) => {
                        let ran = self.submit_after(&prologue, &ordered)?;
                        if !ran {
                            launch_prologue(&mut held, prologue)?;
                        }
                        ran
                    }
                    None => false,
                };
                if !ran {
                    // Only this launch uses `object`, and its arguments are set.
                    submit(
                        rt,
                        self.object.get(),
                        self.kernel.name(),
                        &ordered,
                        self.range,
                        false,
                    )?;
                }
                for _ in 0..self.asked {
                    count_launch();
                }
                Ok(())
            },
        )
    }

    /// Whether it runs the thread's pending launches as its first steps:
    /// a launch of one sweep-sized work-group, unless
    /// `FUSION_REPLAY_PROLOGUES=0`.
    fn takes_prologues(&self, rt: &Runtime) -> bool {
        rt.tuning().replay_prologues != Some(false)
            && self.range.one_group() == Some(sweep_group(rt))
    }

    /// Submits its kernel with `prologue` before it (built on first use),
    /// with its own arguments followed by the buffers it reaches
    /// (`ordered`, as [`issue`](Self::issue) lists them); `false` when that
    /// kernel does not build (nothing was submitted). Under the ordering lock.
    fn submit_after(&self, prologue: &Prologue, ordered: &[KernelArg<'_>]) -> Result<bool> {
        let args = &ordered[..self.args.len()];
        let mut built = self.prologues.lock().unwrap_or_else(|p| p.into_inner());
        let key = prologue.key();
        if !built.contains_key(&key) {
            if built.len() >= MAX_PROLOGUES {
                return Ok(false);
            }
            let made = match build_with_prologue(prologue, &self.kernel)? {
                Some(kernel) => {
                    let object = kernel.new_object()?;
                    let first = prologue.args().len();
                    for (index, arg) in args.iter().enumerate() {
                        set_arg(&object, first + index, arg)?;
                    }
                    Some(WithPrologue { kernel, object })
                }
                None => None,
            };
            built.insert(key.clone(), made);
        }
        let Some(Some(with)) = built.get(&key) else {
            return Ok(false);
        };
        let mut all = prologue.args();
        for (index, arg) in all.iter().enumerate() {
            set_arg(&with.object, index, arg)?;
        }
        // The prologue's writes were noted when its members joined; this
        // launch's are noted here, as `submit` would have.
        note_writes(ordered);
        all.extend(ordered.iter().copied());
        // Only this launch uses `with.object`, and its arguments are set.
        submit(
            with.kernel.runtime(),
            with.object.get(),
            with.kernel.name(),
            &all,
            self.range,
            true,
        )?;
        Ok(true)
    }
}
