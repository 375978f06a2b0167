//! Several chains' replays of the same work, launched together.
//!
//! Interleaved chains of one model on one device replay recordings of the
//! same kernels on buffers of their own. Bound to kernel objects of their
//! own (`bound_launch`), each chain's launches still cost the host one
//! enqueue each, and a sweep of one work-group leaves every other compute
//! unit idle while it runs. A [`ReplayBatch`] issues each step that every
//! chain's recording launches alike once for all of them: a variant of the
//! kernel takes each buffer of a chain's own once per chain, a buffer they
//! all pass once, the scalars from a table with a row per chain (on
//! NVIDIA's driver an enqueue costs the host more the more arguments it
//! carries), and has one more dimension, whose work items each belong to
//! one chain. A sweep of four chains is then four work-groups side by side,
//! one launch. The variants are written by `kernel_variants`.

use crate::bound_launch::BoundLaunch;
use crate::error::Result;
use crate::events::Access;
use crate::groups_done::{chain_counter, is_shared_counter};
use crate::kernel_variants::{
    KernelSignature, Pass, batched_kernel, held, parent_args, parent_count, passes_of, reached,
    tables,
};
use crate::launch::{HeldArg, KernelArg};
use crate::recorder::QueuedRead;
use crate::replay::{QueuedReads, Recording, Step};
use std::collections::HashMap;

/// Replays several chains' recordings of the same work together: each
/// step that launches the same kernel on every chain's buffers is one
/// launch of a batched variant of it (see the module's documentation);
/// any other step (a read, a launch whose chains write one buffer) is
/// issued chain by chain. Recordings that differ are replayed one after
/// the other, as [`Recording::replay_queued`] does.
///
/// ```
/// use clfuse_core::*;
/// let k = compile_kernel("plus", "__kernel void plus(__global int* x, int v) {
///   x[get_global_id(0)] += v;
/// }", "", "plus")?;
/// let chains = [MatrixCl::from_slice(2, 1, &[1, 2])?, MatrixCl::from_slice(2, 1, &[10, 20])?];
/// let recordings: Vec<Recording> = chains
///     .iter()
///     .map(|x| {
///         let (_, r) = record(|| {
///             enqueue(&k, &[KernelArg::buffer(x, Access::ReadWrite), KernelArg::Int(1)], NdRange::d1(2))?;
///             x.to_vec()
///         })?;
///         r.map_err(|why| Error::Unsupported { what: why.into() })
///     })
///     .collect::<Result<_>>()?;
/// let mut batch = ReplayBatch::new();
/// let reads = batch.replay(&[&recordings[0], &recordings[1]])?;
/// let got: Vec<_> = reads.into_iter().map(|r| r.wait()).collect::<Result<_>>()?;
/// assert_eq!(got[0][0].downcast_ref::<Vec<i32>>(), Some(&vec![3, 4]));
/// assert_eq!(got[1][0].downcast_ref::<Vec<i32>>(), Some(&vec![12, 22]));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Default)]
pub struct ReplayBatch {
    /// The plan for each list of recordings (by their identities); `None`
    /// when they cannot be replayed together.
    plans: HashMap<Vec<u64>, Option<Vec<BatchStep>>>,
}

impl std::fmt::Debug for ReplayBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReplayBatch({} plans)", self.plans.len())
    }
}

/// One step of a batched replay.
enum BatchStep {
    /// Step `i` of every chain's plan, issued chain by chain.
    Each(usize),
    /// Step `i` of every chain's plan as launches of the batched kernel,
    /// each for as many chains as its arguments fit.
    Together { step: usize, parts: Vec<Part> },
}

/// A share of the chains of a batched step.
enum Part {
    /// These chains' launches as one.
    Launch(BoundLaunch),
    /// One chain's launch, issued from its own plan.
    Alone(usize),
}

/// Plans kept at most: a batch of `k` chains meets at most `k` lists of
/// them (chains leave a round as they finish), and a recording made again
/// (after a failed check) leaves its old plans unused.
const MAX_PLANS: usize = 32;

impl ReplayBatch {
    /// A batch with no plan yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues every recording's replay, as [`Recording::replay_queued`]
    /// would one after the other, and returns their reads in the same
    /// order. Unless `FUSION_BATCH_CHAINS=0` (or bound replays are off),
    /// steps that launch the same kernel for every chain are launched
    /// once, for all of them.
    pub fn replay(&mut self, recordings: &[&Recording]) -> Result<Vec<QueuedReads>> {
        let on = recordings.len() > 1
            && crate::Runtime::current().is_some_and(|rt| {
                rt.tuning().batch_chains != Some(false) && rt.tuning().bind_replays != Some(false)
            });
        if !on {
            return recordings.iter().map(|r| r.replay_queued()).collect();
        }
        let key: Vec<u64> = recordings.iter().map(|r| r.id()).collect();
        if !self.plans.contains_key(&key) {
            if self.plans.len() >= MAX_PLANS {
                self.plans.clear();
            }
            self.plans.insert(key.clone(), plan(recordings));
        }
        let Some(Some(steps)) = self.plans.get(&key) else {
            return recordings.iter().map(|r| r.replay_queued()).collect();
        };
        let mut reads: Vec<Vec<QueuedRead>> = recordings.iter().map(|_| Vec::new()).collect();
        for step in steps {
            match step {
                BatchStep::Each(i) => {
                    for (recording, reads) in recordings.iter().zip(&mut reads) {
                        recording.issue_step(*i, reads)?;
                    }
                }
                BatchStep::Together { step, parts } => {
                    for part in parts {
                        match part {
                            Part::Launch(launch) => launch.issue()?,
                            Part::Alone(c) => recordings[*c].issue_step(*step, &mut reads[*c])?,
                        }
                    }
                }
            }
        }
        Ok(reads.into_iter().map(QueuedReads).collect())
    }
}

/// The batched plan of `recordings`, or `None` when their plans differ in
/// length. (Their scalars may differ: each chain's are its own arguments.)
/// It batches the launches as recorded, not their compact variants: those
/// of two chains may differ in which buffers they pass twice.
fn plan(recordings: &[&Recording]) -> Option<Vec<BatchStep>> {
    let plans: Vec<_> = recordings.iter().map(|r| r.plan()).collect();
    let steps = plans[0].len();
    if plans.iter().any(|p| p.len() != steps) {
        return None;
    }
    let steps = (0..steps)
        .map(|i| {
            let launches: Option<Vec<&BoundLaunch>> = plans
                .iter()
                .map(|p| match &p[i] {
                    Step::Bound(launch) => Some(launch.as_recorded()),
                    Step::Again(_) => None,
                })
                .collect();
            match launches.and_then(|l| together(&l)) {
                Some(parts) => BatchStep::Together { step: i, parts },
                None => BatchStep::Each(i),
            }
        })
        .collect();
    Some(steps)
}

/// The launches of one step of every chain as batched launches, or `None`
/// when they cannot run together: another kernel or range, arguments of
/// other kinds, a buffer one chain writes and another uses, or a kernel
/// the batched variant cannot be made of.
fn together(launches: &[&BoundLaunch]) -> Option<Vec<Part>> {
    let first = launches[0];
    let kernel = first.kernel();
    let range = first.range();
    let same = launches.iter().all(|l| {
        l.kernel().identity() == kernel.identity()
            && l.range() == range
            && l.args().len() == first.args().len()
            && l.args()
                .iter()
                .zip(first.args())
                .all(|(a, b)| same_kind(a, b))
    });
    if !same {
        return None;
    }
    let rt = kernel.runtime();
    let same_buffer = |index: usize| match &first.args()[index] {
        HeldArg::Buffer { id, .. } => launches
            .iter()
            .all(|l| matches!(&l.args()[index], HeldArg::Buffer { id: other, .. } if other == id)),
        _ => false,
    };
    // The finished-groups counter every chain shares: one of its own each.
    let counters: Vec<bool> = (0..first.args().len())
        .map(|index| match &first.args()[index] {
            HeldArg::Buffer { id, .. } => is_shared_counter(rt, *id) && same_buffer(index),
            _ => false,
        })
        .collect();
    if shares_written_buffer(launches, &counters) {
        return None;
    }
    let source = kernel.source();
    let signature = KernelSignature::find(source, kernel.name())?;
    if !signature.matches(first.args()) {
        return None;
    }
    // A work-group the driver sizes could take work items of two chains:
    // only for kernels whose work items do not share work-group memory.
    if range.local_left_to_driver() && (source.contains("barrier(") || source.contains("local ")) {
        return None;
    }
    // The chains' dimension: one the kernel never asks about (a kernel
    // written for two dimensions may run with one, reading index 0 there).
    let chain_dim = free_dimension(source, range.dims())?;
    let passes = passes_of(launches, &signature, &counters);
    // Pointers, each 8 bytes at most: per chain, and once.
    let per_chain = 8 * passes.iter().filter(|&&p| p == Pass::PerChain).count();
    let once = 8
        * (3 + parent_count(&passes)
            + passes
                .iter()
                .filter(|p| matches!(p, Pass::Local | Pass::Shared))
                .count());
    let fit = rt
        .device_info()
        .max_parameter_bytes
        .saturating_sub(once)
        .checked_div(per_chain.max(1))?;
    if fit < 2 {
        return None;
    }
    let parts = launches.len().div_ceil(fit);
    let per_part = launches.len().div_ceil(parts);
    let mut out = Vec::new();
    for (p, chunk) in launches.chunks(per_part).enumerate() {
        if chunk.len() == 1 {
            out.push(Part::Alone(p * per_part));
            continue;
        }
        let batched = batched_kernel(kernel, &signature, &passes, chunk.len(), chain_dim)?;
        let mut args = Vec::new();
        for (index, pass) in passes.iter().enumerate() {
            match pass {
                Pass::Local | Pass::Shared => args.push(held(chunk[0], index, &passes)),
                Pass::PerChain => {
                    for (c, l) in chunk.iter().enumerate() {
                        args.push(if counters[index] && c > 0 {
                            let counter = chain_counter(rt, c).ok()?;
                            HeldArg::hold(&KernelArg::buffer(&counter, Access::ReadWrite))
                        } else {
                            held(l, index, &passes)
                        });
                    }
                }
                Pass::Same(_)
                | Pass::Within { .. }
                | Pass::Int(_)
                | Pass::Float(_)
                | Pass::Double(_) => {}
            }
        }
        args.extend(parent_args(chunk[0], &passes)?);
        args.extend(tables(chunk, &passes)?);
        let reached = chunk.iter().flat_map(|l| reached(l, &passes)).collect();
        let asked = chunk.iter().map(|l| l.asked()).sum();
        let range = range.with_chains(chunk.len(), chain_dim)?;
        let launch = BoundLaunch::reaching(&batched, args, reached, range, asked);
        out.push(Part::Launch(launch.ok()?));
    }
    Some(out)
}

/// The first dimension from `dims` on that `source` never names in a
/// work-item function (`get_global_id(2)`, ...), or `None` when there is
/// none or it names one by a variable.
fn free_dimension(source: &str, dims: usize) -> Option<usize> {
    const FUNCTIONS: [&str; 7] = [
        "get_global_id(",
        "get_local_id(",
        "get_group_id(",
        "get_global_size(",
        "get_local_size(",
        "get_num_groups(",
        "get_global_offset(",
    ];
    let mut named = [false; 3];
    for function in FUNCTIONS {
        for (at, _) in source.match_indices(function) {
            let argument = source[at + function.len()..].split(')').next()?.trim();
            match argument.parse::<usize>() {
                Ok(d) if d < 3 => named[d] = true,
                _ => return None,
            }
        }
    }
    (dims..3).find(|&d| !named[d])
}

/// Whether two arguments are of one kind (work-group memory of one size).
fn same_kind(a: &HeldArg, b: &HeldArg) -> bool {
    match (a, b) {
        (HeldArg::Local(x), HeldArg::Local(y)) => x == y,
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// Whether a buffer one chain's launch writes is an argument of another
/// chain's launch too (the chains would race for it), the arguments at the
/// positions in `own` aside (each chain gets its own buffer there).
fn shares_written_buffer(launches: &[&BoundLaunch], own: &[bool]) -> bool {
    let buffers = |l: &BoundLaunch| -> Vec<(u64, bool)> {
        l.args()
            .iter()
            .zip(own)
            .filter_map(|(a, &own)| match a {
                HeldArg::Buffer { id, access, .. } if !own => Some((*id, *access != Access::Read)),
                _ => None,
            })
            .collect()
    };
    let all: Vec<Vec<(u64, bool)>> = launches.iter().map(|l| buffers(l)).collect();
    all.iter().enumerate().any(|(c, mine)| {
        mine.iter().filter(|(_, written)| *written).any(|(id, _)| {
            all.iter()
                .enumerate()
                .any(|(other, theirs)| other != c && theirs.iter().any(|(t, _)| t == id))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FusedKernel, enqueue, enqueue_joined, set_launch_sweeps, sweep_group};
    use crate::{KernelArg, LaunchSweeps, MatrixCl, NdRange, Runtime, compile_kernel, record};
    use std::sync::Arc;

    /// What a batched plan is: `T` and its parts' kinds (`L` a batched
    /// launch for that many launches asked, `1` a chain alone), `E` chain
    /// by chain.
    fn shape(batch: &ReplayBatch, recordings: &[&Recording]) -> Vec<String> {
        let key: Vec<u64> = recordings.iter().map(|r| r.id()).collect();
        let Some(Some(steps)) = batch.plans.get(&key) else {
            return vec!["none".into()];
        };
        steps
            .iter()
            .map(|s| match s {
                BatchStep::Each(_) => "E".to_string(),
                BatchStep::Together { parts, .. } => parts
                    .iter()
                    .map(|p| match p {
                        Part::Launch(l) => format!("L{}", l.asked()),
                        Part::Alone(_) => "1".to_string(),
                    })
                    .collect(),
            })
            .collect()
    }

    /// One chain's call: a sweep of 13 members adding `v * (1 + shift)`
    /// for `v` in 1..=13 (26 arguments: its buffer 13 times, 13 ints), then
    /// a read.
    fn thirteen_adds() -> Result<impl Fn(&MatrixCl<i32>, i32) -> Result<Vec<i32>>> {
        let (add, one_group) = (add_to_kernel()?, one_group()?);
        Ok(move |x: &MatrixCl<i32>, shift: i32| -> Result<Vec<i32>> {
            for v in 1..=13 {
                let args = [
                    KernelArg::buffer(x, Access::ReadWrite),
                    KernelArg::Int(v * (1 + shift)),
                ];
                enqueue_joined(&add, &args, one_group, false)?;
            }
            x.to_vec()
        })
    }

    /// The batched launch of the first step of `recordings`' plan.
    fn first_batched_launch<'b>(
        batch: &'b ReplayBatch,
        recordings: &[&Recording],
    ) -> &'b BoundLaunch {
        let key: Vec<u64> = recordings.iter().map(|r| r.id()).collect();
        let Some(Some(steps)) = batch.plans.get(&key) else {
            panic!("no plan");
        };
        let BatchStep::Together { parts, .. } = &steps[0] else {
            panic!("the sweeps are not batched");
        };
        let Part::Launch(launch) = &parts[0] else {
            panic!("the sweeps are not one launch");
        };
        launch
    }

    /// A range of one work-group, as sweeps take.
    fn one_group() -> Result<NdRange> {
        let group = sweep_group(Runtime::get()?);
        Ok(NdRange::d1(group).with_local(&[group]))
    }

    /// One `1 x 1` zero of each of `chains` chains.
    fn counters(chains: usize) -> Result<Vec<MatrixCl<i32>>> {
        (0..chains)
            .map(|_| MatrixCl::from_slice(1, 1, &[0]))
            .collect()
    }

    /// A kernel of one work-group that adds `v` to `x[0]`, as a sweep's member.
    fn add_to_kernel() -> Result<Arc<FusedKernel>> {
        let source = "__kernel void add_to(__global int* x, int v) {\n  if (get_global_id(0) == 0) x[0] += v;\n}\n";
        Ok(Arc::new(FusedKernel::new(
            compile_kernel("add_to", source, "", "add_to")?,
            source.into(),
        )))
    }

    /// Each chain's recording of `work(x, c)`, recorded again (up to ten
    /// times) until every plan has `steps` steps: another test thread's
    /// `Runtime::finish` launches every thread's pending sweep, which can
    /// split a chain's sweep while it records (its replay then runs alone,
    /// correctly, but the plans' shapes differ).
    fn record_alike(
        chains: &[MatrixCl<i32>],
        work: impl Fn(&MatrixCl<i32>, i32) -> Result<Vec<i32>>,
        steps: usize,
    ) -> Result<Vec<Recording>> {
        let record_chains = || -> Result<Vec<Recording>> {
            chains
                .iter()
                .enumerate()
                .map(|(c, x)| {
                    let (_, r) = record(|| work(x, c as i32))?;
                    r.map_err(|why| crate::Error::Unsupported { what: why.into() })
                })
                .collect()
        };
        let mut recordings = record_chains()?;
        for _ in 0..10 {
            if recordings.iter().all(|r| r.plan().len() == steps) {
                break;
            }
            recordings = record_chains()?;
        }
        Ok(recordings)
    }

    #[test]
    fn chains_replay_each_sweep_and_kernel_as_one_launch() -> Result<()> {
        let add = add_to_kernel()?;
        // Written for two dimensions, launched with one (its column index 0):
        // the chains must take the third.
        let double = compile_kernel(
            "double_it",
            "__kernel void double_it(__global int* x) { x[get_global_id(0) + get_global_id(1)] *= 2; }",
            "",
            "double_it",
        )?;
        let (one_group, chains) = (one_group()?, counters(3)?);
        // One chain's call: three members of a sweep, a kernel, a read.
        let work = |x: &MatrixCl<i32>, shift: i32| -> Result<Vec<i32>> {
            for v in [2, 3, 4] {
                let args = [
                    KernelArg::buffer(x, Access::ReadWrite),
                    KernelArg::Int(v + shift),
                ];
                enqueue_joined(&add, &args, one_group, false)?;
            }
            enqueue(
                &double,
                &[KernelArg::buffer(x, Access::ReadWrite)],
                NdRange::d1(1),
            )?;
            x.to_vec()
        };
        let before = set_launch_sweeps(LaunchSweeps::Always);
        let outcome = (|| -> Result<()> {
            let recordings = record_alike(&chains, work, 3)?;
            // A sweep of 6 arguments is too few to compact.
            for recording in &recordings {
                if let Step::Bound(launch) = &recording.plan()[0] {
                    assert_eq!(launch.args().len(), 6);
                    assert!(std::ptr::eq(launch.as_recorded(), launch));
                }
            }
            let all: Vec<&Recording> = recordings.iter().collect();
            let mut batch = ReplayBatch::new();
            for start in [1, -5, 0] {
                for x in &chains {
                    x.write(&[start])?;
                }
                let reads = batch.replay(&all)?;
                for (c, queued) in reads.into_iter().enumerate() {
                    let got = queued.wait()?;
                    let want = 2 * (start + 9 + 3 * c as i32);
                    assert_eq!(got[0].downcast_ref::<Vec<i32>>(), Some(&vec![want]));
                }
            }
            // The sweep and the kernel once for the three chains; the reads each.
            assert_eq!(shape(&batch, &all), ["L9", "L3", "E"]);
            // Two chains of the three: their own plan.
            batch.replay(&all[1..])?;
            assert_eq!(shape(&batch, &all[1..]), ["L6", "L2", "E"]);
            // The same chain twice writes one buffer from both: chain by chain.
            for queued in batch.replay(&[all[0], all[0]])? {
                queued.wait()?;
            }
            assert_eq!(shape(&batch, &[all[0], all[0]]), ["E", "E", "E"]);
            Ok(())
        })();
        set_launch_sweeps(before);
        outcome
    }

    #[test]
    fn chains_whose_buffers_lie_in_two_parents_pass_each_their_own() -> Result<()> {
        let parent = |m: &MatrixCl<i32>| match KernelArg::buffer(m, Access::Read) {
            KernelArg::Buffer { mem, .. } => crate::arena::parent_of(mem).map(|(p, _)| p as usize),
            _ => None,
        };
        // Small matrices until one lies in another parent than the first
        // (a parent holds 8192 of them at most).
        let first = MatrixCl::from_slice(1, 1, &[0])?;
        let mut fillers = Vec::new();
        let second = loop {
            let m = MatrixCl::from_slice(1, 1, &[0])?;
            if parent(&m) != parent(&first) || fillers.len() > 20_000 {
                break m;
            }
            fillers.push(m);
        };
        assert_ne!(parent(&first), parent(&second));
        let chains = [first, second];
        let work = thirteen_adds()?;
        let before = set_launch_sweeps(LaunchSweeps::Always);
        let outcome = (|| -> Result<()> {
            let recordings = record_alike(&chains, work, 2)?;
            let all: Vec<&Recording> = recordings.iter().collect();
            let mut batch = ReplayBatch::new();
            for start in [3, -8] {
                for x in &chains {
                    x.write(&[start])?;
                }
                for (c, queued) in batch.replay(&all)?.into_iter().enumerate() {
                    let want = start + 91 * (1 + c as i32);
                    assert_eq!(
                        queued.wait()?[0].downcast_ref::<Vec<i32>>(),
                        Some(&vec![want])
                    );
                }
            }
            // One launch for both, each chain's buffer passed as its own.
            assert_eq!(shape(&batch, &all), ["L26", "E"]);
            let launch = first_batched_launch(&batch, &all);
            assert_eq!(launch.args().len(), 3);
            assert!(!launch.kernel().source().contains("arena_0"));
            Ok(())
        })();
        set_launch_sweeps(before);
        outcome
    }

    #[test]
    fn the_chains_take_a_dimension_the_kernel_never_names() {
        assert_eq!(free_dimension("x[get_global_id(0)]", 1), Some(1));
        assert_eq!(
            free_dimension("x[get_global_id(0) + get_global_id(1)]", 1),
            Some(2)
        );
        assert_eq!(
            free_dimension("get_local_size(1); get_group_id(2)", 1),
            None
        );
        assert_eq!(free_dimension("x[get_global_id(d)]", 1), None);
        assert_eq!(free_dimension("x[get_global_id(0)]", 3), None);
    }

    #[test]
    fn a_replayed_launch_of_many_arguments_is_compacted() -> Result<()> {
        let chains = counters(2)?;
        let work = thirteen_adds()?;
        let before = set_launch_sweeps(LaunchSweeps::Always);
        let outcome = (|| -> Result<()> {
            let recordings = record_alike(&chains, work, 2)?;
            let sum = |c: i32| 91 * (1 + c);
            for (c, recording) in recordings.iter().enumerate() {
                // The sweep passes its buffer once (through the parent it
                // was carved from) and its ints as a table.
                if let Step::Bound(launch) = &recording.plan()[0] {
                    assert_eq!(launch.args().len(), 2);
                    assert_eq!(launch.asked(), 13);
                    assert!(launch.kernel().source().starts_with("// Compacted"));
                    assert!(
                        launch
                            .kernel()
                            .source()
                            .contains("(arena_0 + scalar_ints[0])")
                    );
                } else {
                    panic!("the sweep is not bound");
                }
                for start in [4, -100] {
                    chains[c].write(&[start])?;
                    let got = recording.replay()?;
                    let want = start + sum(c as i32);
                    assert_eq!(got[0].downcast_ref::<Vec<i32>>(), Some(&vec![want]));
                }
            }
            // Two chains of compacted launches, batched: each chain's buffer
            // and table once.
            let all: Vec<&Recording> = recordings.iter().collect();
            let mut batch = ReplayBatch::new();
            for start in [7, 0] {
                for x in &chains {
                    x.write(&[start])?;
                }
                for (c, queued) in batch.replay(&all)?.into_iter().enumerate() {
                    let want = start + sum(c as i32);
                    assert_eq!(
                        queued.wait()?[0].downcast_ref::<Vec<i32>>(),
                        Some(&vec![want])
                    );
                }
            }
            assert_eq!(shape(&batch, &all), ["L26", "E"]);
            // Batched from the recorded launches: both chains' buffers
            // through their parent, once, and one table of both chains'
            // ints and offsets.
            let launch = first_batched_launch(&batch, &all);
            assert_eq!(launch.args().len(), 2);
            assert!(
                launch
                    .kernel()
                    .source()
                    .contains("(arena_0 + chain_ints[chain * 14 + 0])")
            );
            Ok(())
        })();
        set_launch_sweeps(before);
        outcome
    }
}
