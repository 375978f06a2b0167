//! Device work recorded once and issued again: a sampler's gradient call
//! does the same device work every time, only on other numbers, so after
//! recording it the host need not build it again (no expression binding,
//! no tape, no reverse planning): replaying issues the recorded commands on
//! the same buffers, as `jax.jit` replays a traced function.
//!
//! While [`record`] runs, every command this thread queues (kernel launches,
//! sweep members, fills, writes, copies, reads) is noted (by `recorder`)
//! with what it needs to be issued again: its kernel, its arguments with
//! their buffers held alive, or the host data it wrote. A recording can be replayed only when
//! its reads come last: a read in between means the host chose what came
//! next from device values, which replaying would not redo.
//!
//! Two recordings of the same work have the same
//! [`signature`](Recording::signature): the commands' kernels, ranges,
//! scalar arguments, written data, and which arguments are the same buffer.
//! A caller compares two before trusting one (the model may do other work
//! on another call).

use crate::bound_launch::BoundLaunch;
use crate::error::Result;
use crate::kernel_cache::CompiledKernel;
use crate::launch::LaunchNote;
use crate::recorder::{Command, QueuedRead, noting};
use std::cell::RefCell;

pub use crate::recorder::ReadBack;

/// The work of one call, recorded by [`record`].
pub struct Recording {
    commands: Vec<Command>,
    signature: u64,
    /// Process-unique, never reused: names it in a batch's key.
    id: u64,
    /// How a replay issues the commands, made at the first replay.
    plan: RefCell<Option<Vec<Step>>>,
}

/// One step of a replay.
pub(crate) enum Step {
    /// The command at this index, issued as it was recorded.
    Again(usize),
    /// A launch (a whole sweep, or a kernel) on its own kernel object.
    Bound(BoundLaunch),
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("commands", &self.commands.len())
            .field("signature", &self.signature)
            .finish()
    }
}

impl Recording {
    /// Identifies the work: two recordings of the same commands on the
    /// same kernels, ranges, scalars and data, with the same arguments
    /// sharing a buffer, have the same signature.
    pub fn signature(&self) -> u64 {
        self.signature
    }

    /// How many commands it holds.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether it holds no command.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Issues the recorded commands again, in order, on the buffers they
    /// used (which they kept alive), and returns what its reads read, in
    /// order. A buffer the recorded commands read is read as it is now:
    /// write new inputs into it first.
    ///
    /// ```
    /// use clfuse_core::*;
    /// let k = compile_kernel("twice", "__kernel void twice(__global const int* x, __global int* y) {
    ///   y[get_global_id(0)] = 2 * x[get_global_id(0)];
    /// }", "", "twice")?;
    /// let x = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
    /// let (first, recording) = record(|| {
    ///     let y = MatrixCl::<i32>::uninitialized(3, 1)?;
    ///     enqueue(&k, &[KernelArg::buffer(&x, Access::Read), KernelArg::buffer(&y, Access::Write)], NdRange::d1(3))?;
    ///     y.to_vec()
    /// })?;
    /// assert_eq!(first, vec![2, 4, 6]);
    /// x.write(&[5, 6, 7])?;
    /// let again = recording.map_err(|why| Error::Unsupported { what: why.into() })?.replay()?;
    /// assert_eq!(again[0].downcast_ref::<Vec<i32>>(), Some(&vec![10, 12, 14]));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn replay(&self) -> Result<Vec<ReadBack>> {
        self.replay_queued()?.wait()
    }

    /// [`replay`](Self::replay) without waiting: the commands and their
    /// reads are queued, and [`QueuedReads::wait`] waits for the reads.
    /// Between the two the host is free to queue other work (another
    /// chain's call), which the device runs behind this one's.
    ///
    /// ```
    /// use clfuse_core::*;
    /// let k = compile_kernel("plus1", "__kernel void plus1(__global int* x) {
    ///   x[get_global_id(0)] += 1;
    /// }", "", "plus1")?;
    /// let (x, y) = (MatrixCl::from_slice(2, 1, &[1, 2])?, MatrixCl::from_slice(1, 1, &[7])?);
    /// let step = |m: &MatrixCl<i32>| -> Result<Recording> {
    ///     let (_, recording) = record(|| {
    ///         enqueue(&k, &[KernelArg::buffer(m, Access::ReadWrite)], NdRange::d1(m.len()))?;
    ///         m.to_vec()
    ///     })?;
    ///     recording.map_err(|why| Error::Unsupported { what: why.into() })
    /// };
    /// let (for_x, for_y) = (step(&x)?, step(&y)?);
    /// // Both queued before either is waited for.
    /// let (queued_x, queued_y) = (for_x.replay_queued()?, for_y.replay_queued()?);
    /// assert_eq!(queued_y.wait()?[0].downcast_ref::<Vec<i32>>(), Some(&vec![9]));
    /// assert_eq!(queued_x.wait()?[0].downcast_ref::<Vec<i32>>(), Some(&vec![3, 4]));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn replay_queued(&self) -> Result<QueuedReads> {
        let mut reads = Vec::new();
        for step in 0..self.plan().len() {
            self.issue_step(step, &mut reads)?;
        }
        Ok(QueuedReads(reads))
    }

    /// Its process-unique identity.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// How a replay issues its commands (made at the first call).
    pub(crate) fn plan(&self) -> std::cell::Ref<'_, [Step]> {
        if self.plan.borrow().is_none() {
            *self.plan.borrow_mut() = Some(self.steps());
        }
        std::cell::Ref::map(self.plan.borrow(), |plan| plan.as_deref().unwrap_or(&[]))
    }

    /// Issues step `step` of its plan, adding its read (if it is one) to `reads`.
    pub(crate) fn issue_step(&self, step: usize, reads: &mut Vec<QueuedRead>) -> Result<()> {
        match self.plan().get(step) {
            Some(Step::Again(k)) => {
                if let Some(read) = self.commands[*k].again()? {
                    reads.push(read);
                }
                Ok(())
            }
            Some(Step::Bound(launch)) => launch.issue(),
            None => Ok(()),
        }
    }

    /// How a replay issues the commands: each launch on a kernel object of
    /// its own, its arguments set once, and each sweep the recording saw
    /// as one such launch of the sweep's kernel, so that replaying only
    /// enqueues; a launch of many arguments as a compact variant of its
    /// kernel (`kernel_variants::compact`). A sweep whose members the recording
    /// did not all see, or whose launch cannot be bound, is joined again
    /// member by member.
    fn steps(&self) -> Vec<Step> {
        let bind = self
            .commands
            .iter()
            .find_map(|c| c.launch_note::<LaunchNote>())
            .and_then(|note| note.kernel.runtime().tuning().bind_replays)
            .unwrap_or(true);
        if !bind {
            return (0..self.commands.len()).map(Step::Again).collect();
        }
        let mut steps = Vec::with_capacity(self.commands.len());
        let mut k = 0;
        while k < self.commands.len() {
            let bound = self.commands[k]
                .launch_note::<LaunchNote>()
                .and_then(|note| {
                    let (kernel, n) = match &note.sweep {
                        None => (&note.kernel, 1),
                        Some(_) => match self.sweep_at(k)? {
                            (Some(sweep), n) => (sweep, n),
                            (None, _) => (&note.kernel, 1),
                        },
                    };
                    let notes = self.commands[k..k + n]
                        .iter()
                        .filter_map(|c| c.launch_note::<LaunchNote>());
                    let args = notes.clone().flat_map(|m| m.args.iter().cloned()).collect();
                    let asked = notes.map(|m| m.asked).sum();
                    let launch = BoundLaunch::new(kernel, args, note.range, asked).ok()?;
                    Some((crate::kernel_variants::compact(launch), n))
                });
            match bound {
                Some((launch, n)) => {
                    steps.push(Step::Bound(launch));
                    k += n;
                }
                None => {
                    steps.push(Step::Again(k));
                    k += 1;
                }
            }
        }
        steps
    }

    /// How the sweep member at command `k` ran, when the recording saw
    /// it run: `(None, 1)` as its own kernel, `(Some(kernel), n)` as the
    /// first of the `n` members of a sweep that are this command and the
    /// ones after it. `None` when the recording did not see it run or did
    /// not see its whole sweep.
    fn sweep_at(&self, k: usize) -> Option<(Option<&CompiledKernel>, usize)> {
        let launched = self.commands[k]
            .launch_note::<LaunchNote>()?
            .sweep
            .as_ref()?
            .launched()?;
        let Some(kernel) = &launched.kernel else {
            return Some((None, 1));
        };
        if launched.position != 0 || k + launched.members > self.commands.len() {
            return None;
        }
        let whole = self.commands[k..k + launched.members]
            .iter()
            .enumerate()
            .all(|(position, c)| {
                c.launch_note::<LaunchNote>()
                    .and_then(|m| m.sweep.as_ref())
                    .and_then(|tag| tag.launched())
                    .is_some_and(|l| l.sweep == launched.sweep && l.position == position)
            });
        whole.then_some((Some(&**kernel), launched.members))
    }
}

/// The reads of a replay queued by [`Recording::replay_queued`]; dropped
/// unwaited, each still waits for its copy (the host memory it fills).
pub struct QueuedReads(pub(crate) Vec<QueuedRead>);

impl std::fmt::Debug for QueuedReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QueuedReads({})", self.0.len())
    }
}

impl QueuedReads {
    /// Waits for the reads and returns what they read, in order.
    pub fn wait(self) -> Result<Vec<ReadBack>> {
        self.0.into_iter().map(|read| read()).collect()
    }
}

/// Runs `f`, recording the device commands this thread queues meanwhile.
/// Returns `f`'s result and the recording, or why it cannot be replayed
/// (a read before a later command, a failed command, a recording already
/// running on this thread).
pub fn record<R>(
    f: impl FnOnce() -> Result<R>,
) -> Result<(R, std::result::Result<Recording, &'static str>)> {
    let (value, noted) = noting(f)?;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let recording = noted.map(|(commands, signature)| Recording {
        commands,
        signature,
        id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        plan: RefCell::new(None),
    });
    Ok((value, recording))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, KernelArg, LaunchSweeps, MatrixCl, Runtime, enqueue, enqueue_joined};
    use crate::{FusedKernel, compile_kernel, set_launch_sweeps, sweep_group};
    use std::sync::Arc;

    fn fused(name: &str, source: &str) -> Result<Arc<FusedKernel>> {
        Ok(Arc::new(FusedKernel::new(
            compile_kernel(name, source, "", name)?,
            source.into(),
        )))
    }

    /// What a replay's plan is: `B` a bound launch standing for that many
    /// commands, `A` a command issued as recorded.
    fn shape(recording: &Recording) -> Vec<String> {
        let steps = recording.steps();
        steps
            .iter()
            .map(|s| match s {
                Step::Again(_) => "A".to_string(),
                Step::Bound(b) => format!("B{}", b.asked()),
            })
            .collect()
    }

    #[test]
    fn a_replay_launches_each_recorded_sweep_as_one_bound_launch() -> Result<()> {
        let add = fused(
            "add_to",
            "__kernel void add_to(__global int* x, int v) {\n  if (get_global_id(0) == 0) x[0] += v;\n}\n",
        )?;
        let double = compile_kernel(
            "double_it",
            "__kernel void double_it(__global int* x) { x[get_global_id(0)] *= 2; }",
            "",
            "double_it",
        )?;
        let x = MatrixCl::from_slice(1, 1, &[1])?;
        let group = sweep_group(Runtime::get()?);
        let one_group = crate::NdRange::d1(group).with_local(&[group]);
        // Joins `x[0] += v` to the thread's sweep.
        let add_to = |v: i32| {
            let args = [KernelArg::buffer(&x, Access::ReadWrite), KernelArg::Int(v)];
            enqueue_joined(&add, &args, one_group, false)
        };
        // The recorded work: three members, a kernel, a read.
        let work = || -> Result<Vec<i32>> {
            for v in [2, 3, 4] {
                add_to(v)?;
            }
            let args = [KernelArg::buffer(&x, Access::ReadWrite)];
            enqueue(&double, &args, crate::NdRange::d1(1))?;
            x.to_vec()
        };
        let before = set_launch_sweeps(LaunchSweeps::Always);
        let outcome = (|| -> Result<()> {
            // Each call starts with a member queued before the recording,
            // as a sampler writes its position: not part of the recorded sweep.
            x.write(&[0])?;
            add_to(10)?;
            let (first, recording) = record(work)?;
            assert_eq!(first, vec![38]);
            let recording =
                recording.map_err(|why| crate::Error::Unsupported { what: why.into() })?;
            // The three members as one launch, the kernel bound, the read.
            assert_eq!(shape(&recording), ["B3", "B1", "A"]);
            for input in [5, -7, 0] {
                x.write(&[0])?;
                add_to(input)?;
                let got = recording.replay()?;
                assert_eq!(
                    got[0].downcast_ref::<Vec<i32>>(),
                    Some(&vec![2 * (input + 9)])
                );
                x.write(&[0])?;
                add_to(input)?;
                assert_eq!(work()?, vec![2 * (input + 9)]);
            }
            Ok(())
        })();
        set_launch_sweeps(before);
        outcome
    }

    /// A member queued before a replay (a sampler's position write) runs
    /// as the first step of the replay's recorded sweep: one kernel.
    #[test]
    fn a_replayed_sweep_takes_the_member_queued_before_it() -> Result<()> {
        let add = fused(
            "add_to",
            "__kernel void add_to(__global int* x, int v) {\n  if (get_global_id(0) == 0) x[0] += v;\n}\n",
        )?;
        let set = fused(
            "set_to",
            "__kernel void set_to(__global int* x, int v) {\n  if (get_global_id(0) == 0) x[0] = v;\n}\n",
        )?;
        let x = MatrixCl::from_slice(1, 1, &[0])?;
        let rt = Runtime::get()?;
        let group = sweep_group(rt);
        let one_group = crate::NdRange::d1(group).with_local(&[group]);
        let join = |kernel: &Arc<FusedKernel>, v: i32| {
            let args = [KernelArg::buffer(&x, Access::ReadWrite), KernelArg::Int(v)];
            enqueue_joined(kernel, &args, one_group, false)
        };
        let triple = fused(
            "triple",
            "__kernel void triple(__global int* x, int unused) {\n  if (get_global_id(0) == 0) x[0] *= 3;\n}\n",
        )?;
        // The recorded work: x = 3 * (x + 1), as three members, then a read.
        let work = || -> Result<Vec<i32>> {
            join(&add, 1)?;
            join(&triple, 0)?;
            join(&add, 0)?;
            x.to_vec()
        };
        let before = set_launch_sweeps(LaunchSweeps::Always);
        let outcome = (|| -> Result<()> {
            join(&set, 4)?;
            let (first, recording) = record(work)?;
            assert_eq!(first, vec![15]);
            let recording =
                recording.map_err(|why| crate::Error::Unsupported { what: why.into() })?;
            assert_eq!(shape(&recording), ["B3", "A"]);
            let prologues = rt.tuning().replay_prologues != Some(false);
            for input in [5, -7, 0, 2] {
                // Queued before the replay, outside the recording.
                join(&set, input)?;
                let queued = crate::thread_kernel_stats().queued;
                let got = recording.replay()?;
                let kernels = crate::thread_kernel_stats().queued - queued;
                assert_eq!(
                    got[0].downcast_ref::<Vec<i32>>(),
                    Some(&vec![3 * (input + 1)])
                );
                assert_eq!(kernels, if prologues { 1 } else { 2 });
            }
            // Two members queued before: both run first, in order.
            join(&set, 10)?;
            join(&add, 1)?;
            let got = recording.replay()?;
            assert_eq!(got[0].downcast_ref::<Vec<i32>>(), Some(&vec![36]));
            Ok(())
        })();
        set_launch_sweeps(before);
        outcome
    }

    /// A sampler's position (26 doubles, written as two vectors of 16)
    /// queued before each replay is what the replayed sweep reads: taken as
    /// its prologue, one kernel; else its own sweep first, two.
    #[test]
    fn a_packed_position_write_runs_first_in_the_replayed_sweep() -> Result<()> {
        let weigh = fused(
            "weigh",
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n\
             __kernel void weigh(__global const double* p, __global double* s, int n) {\n  \
             if (get_local_id(0) == 0) {\n    double t = 0;\n    \
             for (int i = 0; i < n; i++) t += (i + 1) * p[i];\n    s[0] = t;\n  }\n}\n",
        )?;
        let scale = fused(
            "scale",
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n\
             __kernel void scale(__global double* s, int k) {\n  \
             if (get_local_id(0) == 0) s[0] *= k;\n}\n",
        )?;
        let n = 26;
        let position = MatrixCl::<f64>::zeros(n, 1)?;
        let sum = MatrixCl::<f64>::zeros(1, 1)?;
        let rt = Runtime::get()?;
        let group = sweep_group(rt);
        let one_group = crate::NdRange::d1(group).with_local(&[group]);
        // The recorded work: s = 2 * sum((i + 1) * p[i]), two members, then a read.
        let work = || -> Result<Vec<f64>> {
            let args = [
                KernelArg::buffer(&position, Access::Read),
                KernelArg::buffer(&sum, Access::Write),
                KernelArg::Int(n as i32),
            ];
            enqueue_joined(&weigh, &args, one_group, false)?;
            let args = [
                KernelArg::buffer(&sum, Access::ReadWrite),
                KernelArg::Int(2),
            ];
            enqueue_joined(&scale, &args, one_group, false)?;
            sum.to_vec()
        };
        let expected = |p: &[f64]| {
            2.0 * p
                .iter()
                .enumerate()
                .map(|(i, v)| (i + 1) as f64 * v)
                .sum::<f64>()
        };
        let before = set_launch_sweeps(LaunchSweeps::Always);
        let outcome = (|| -> Result<()> {
            let first: Vec<f64> = (0..n).map(|i| 0.25 * i as f64 - 1.0).collect();
            position.write_queued(&first)?;
            let (got, recording) = record(work)?;
            assert_eq!(got, vec![expected(&first)]);
            let recording =
                recording.map_err(|why| crate::Error::Unsupported { what: why.into() })?;
            assert_eq!(shape(&recording), ["B2", "A"]);
            let prologues = rt.tuning().replay_prologues != Some(false);
            for call in 1..5 {
                let p: Vec<f64> = (0..n).map(|i| ((i * call) % 7) as f64 - 2.5).collect();
                position.write_queued(&p)?;
                let queued = crate::thread_kernel_stats().queued;
                let got = recording.replay()?;
                let kernels = crate::thread_kernel_stats().queued - queued;
                assert_eq!(got[0].downcast_ref::<Vec<f64>>(), Some(&vec![expected(&p)]));
                assert_eq!(kernels, if prologues { 1 } else { 2 }, "call {call}");
            }
            Ok(())
        })();
        set_launch_sweeps(before);
        outcome
    }
}
