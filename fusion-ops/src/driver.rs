//! The assignment driver: from a list of outputs to one enqueued kernel.
//!
//! [`run`] → `launch`: shapes checked (pure queries) → non-fusable leaves
//! evaluated (GEMM products, an explicit step) → launch shape chosen from the
//! outputs' [`Schedule`](crate::Schedule) → outputs prepared (scratch
//! buffers) → arguments bound (one tree walk, which also yields the alias
//! pattern) → the device's [`KernelCache`](clfuse_core::KernelCache) looked
//! up by (device, type, alias pattern) → on a miss only: source generated
//! and compiled → enqueue → outputs finished (views set, reductions
//! combined, checks read).

use crate::binder::Binder;
use crate::failure_flags::FailureFlags;
use crate::gather_checks::Gathers;
use crate::generator::{Generator, Index, Section};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::outputs::{Assignment, OutputList};
use clfuse_core::{
    ClType, Error, FusedKernel, FusedKey, FusedPlan, MatrixCl, Result, Runtime, compile_kernel,
    enqueue_joined,
};
use std::any::TypeId;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Runs several outputs (a tuple from [`output`](crate::output), [`optional`](crate::optional), checks, ...) in one kernel.
pub fn fuse<L: OutputList>(outputs: L) -> Result<()> {
    run(&outputs)
}

/// [`fuse`], with `then` run right after the kernel, its outputs' follow-up
/// steps and the queuing of the read-backs (checks' flags, full reductions'
/// values), before the host waits for those: work that uses the outputs (a
/// hand-written leaf on one of them, say) is queued behind the transfers
/// instead of after the wait. An error from a check takes precedence over
/// one from `then`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::fuse_then;
/// let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let d = MatrixCl::<f64>::zeros(3, 1)?;
/// let mut twice: Option<MatrixCl<f64>> = None;
/// fuse_then((output(&d, exp(&x)), check_finite(&x, "example", "x")), || {
///     twice = Some((2.0f64 * &d).eval()?);
///     Ok(())
/// })?;
/// assert!(twice.is_some());
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn fuse_then<L: OutputList>(outputs: L, mut then: impl FnMut() -> Result<()>) -> Result<()> {
    run_then(&outputs, &mut then)
}

/// The source of the kernel computing `list`.
fn generate<L: OutputList>(list: &L, launch: &LaunchShape) -> Generator {
    let mut g = Generator::new();
    if launch.block_rows > 0 {
        g.use_row_blocks();
    }
    list.declare_staged(&mut g, launch);
    let mut values = Vec::new();
    list.generate_exprs(&mut g, &mut values);
    g.set_section(Section::Outputs);
    list.generate_outputs(&mut g, &mut values.iter());
    g
}

pub(crate) fn dump_name(key: &FusedKey) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    format!("fused_{:016x}", h.finish())
}

/// What [`launch`] did.
enum Launched {
    Done,
    NeedsTemporaries,
}

/// Work queued after the kernel's own follow-up steps and before any result
/// is read back (see [`fuse_then`]).
type Then<'f> = &'f mut dyn FnMut() -> Result<()>;

/// Checks, binds, looks up or builds the kernel, and runs it, unless the
/// structure needs temporaries.
fn launch<L: OutputList>(list: &L, then: Then<'_>) -> Result<Launched> {
    let mut grid = None;
    list.grid(&mut grid)?;
    let (rows, cols) = grid.unwrap_or((0, 0));
    // Generated kernels index with `int`: a larger grid (a broadcast of a
    // huge size) would wrap around.
    let limit = clfuse_core::MAX_ELEMENTS;
    if rows > limit || cols > limit || rows.checked_mul(cols).is_none_or(|n| n > limit) {
        return Err(Error::InvalidArgument {
            function: "assign",
            argument: "expr",
            reason: format!(
                "a {rows} x {cols} result exceeds the limit of {} elements",
                clfuse_core::MAX_ELEMENTS
            ),
        });
    }
    let mut ids = Vec::new();
    list.target_ids(&mut ids);
    for (k, id) in ids.iter().enumerate().skip(1) {
        if ids[..k].contains(id) {
            return Err(Error::InvalidArgument {
                function: "assign",
                argument: "targets",
                reason: format!("output {k} writes the same matrix as an earlier output"),
            });
        }
    }
    // A product whose element-wise consumer its GEMM can apply: one kernel.
    if let Some(product) = list.epilogue_product()
        && crate::epilogue::launch(list, product, (rows, cols), then)?
    {
        return Ok(Launched::Done);
    }
    // The non-fusable leaves (GEMM products) run first, so that the kernel
    // reads their results like any matrix.
    list.evaluate_leaves(HeldProduct::NONE)?;
    let rt = Runtime::get()?;
    let schedule = list.schedule();
    let launch = LaunchShape::choose(rows, cols, schedule, rt);
    list.prepare(&launch)?;
    let gather_flags = FailureFlags::default();
    let mut binder = Binder::new();
    if launch.block_rows > 0 {
        // Staged or not, and how: different kernels.
        binder.structure(launch.staged.map_or(0, |layout| 1 + layout.code()));
    }
    list.bind_staged(&mut binder, &launch);
    list.bind_exprs(&mut binder);
    list.bind_outputs(&mut binder);
    binder.int(rows as i32);
    binder.int(cols as i32);
    if launch.block_rows > 0 {
        binder.int(launch.block_rows as i32);
    }
    let gathers = Gathers::attach(&mut binder, &gather_flags)?;
    let (args, pattern) = binder.finish()?;
    let plan = rt.kernels().fused(TypeId::of::<L::Key>(), pattern, |key| {
        let g = generate(list, &launch);
        if g.reads_target_elsewhere() {
            return Ok(FusedPlan::ViaTemporaries);
        }
        if g.uses_fp64() {
            rt.require::<f64>("assign")?;
        }
        let source = g.kernel_source();
        let compiled = compile_kernel("calculate", &source, "", &dump_name(key))?;
        Ok(FusedPlan::Direct(Arc::new(FusedKernel::new(
            compiled, source,
        ))))
    })?;
    match plan {
        FusedPlan::Direct(kernel) => {
            if rows > 0 && cols > 0 {
                // One work-group may wait to run in a sweep with its
                // neighbours (see `clfuse_core::enqueue_joined`).
                enqueue_joined(&kernel, &args, launch.range(), false)?;
                if schedule.reduces {
                    // The device starts on the kernel while the host queues
                    // the second steps and read-backs.
                    rt.flush()?;
                }
            }
            complete(list, &gathers, &launch, then)?;
            Ok(Launched::Done)
        }
        FusedPlan::ViaTemporaries => Ok(Launched::NeedsTemporaries),
    }
}

/// After `list`'s kernel is queued: its outputs' follow-up steps, the
/// read-backs queued (not waited for) before `then`, so that they complete
/// while `then`'s work runs, even on an in-order queue, and last the checks'
/// verdicts, then the gathers' (`gathers`: an index out of range), which
/// take precedence over an error from `then`. A failed check comes first:
/// a bad argument (an outcome out of its range, say) may be what made an
/// index derived from it bad.
pub(crate) fn complete<L: OutputList>(
    list: &L,
    gathers: &Gathers<'_>,
    launch: &LaunchShape,
    then: Then<'_>,
) -> Result<()> {
    // The read-backs share one wait for the kernel and are submitted
    // before `then` queues anything behind them.
    let reads = clfuse_core::ReadBatch::new();
    let finished = list
        .finish(launch)
        .and_then(|()| list.start_reads(launch, &reads))
        .and_then(|()| gathers.start_reads(launch, &reads))
        .and_then(|()| reads.finish())
        .and_then(|()| then());
    list.verify(launch)?;
    gathers.verify(launch)?;
    finished
}

/// Runs the outputs in `list` as one kernel or, when a target is read at
/// positions other than those written (`a.assign(transpose(&a))`), by
/// evaluating into temporaries first.
pub fn run<L: OutputList>(list: &L) -> Result<()> {
    run_then(list, &mut || Ok(()))
}

fn run_then<L: OutputList>(list: &L, then: Then<'_>) -> Result<()> {
    match launch(list, then)? {
        Launched::Done => Ok(()),
        Launched::NeedsTemporaries => {
            let mut temps = Vec::new();
            list.eval_to_temporaries(&mut temps)?;
            list.copy_from_temporaries(&mut temps.into_iter())?;
            then()
        }
    }
}

/// Like [`run`] for outputs that cannot alias their inputs (fresh
/// temporaries, reductions, checks). Kept separate so that the temporary
/// path is not instantiated for ever-deeper reference types.
pub(crate) fn run_direct<L: OutputList>(list: &L) -> Result<()> {
    match launch(list, &mut || Ok(()))? {
        Launched::Done => Ok(()),
        Launched::NeedsTemporaries => Err(crate::outputs::fresh_targets_only()),
    }
}

/// Evaluates `op` into a new matrix without the temporary path.
pub(crate) fn eval_direct<O: Operation>(op: O) -> Result<MatrixCl<O::Scalar>> {
    let (rows, cols) = op.shape()?.unwrap_or((1, 1));
    let out = MatrixCl::<O::Scalar>::uninitialized(rows, cols)?;
    run_direct(&Assignment::new(&out, op))?;
    Ok(out)
}

/// The source `run(list)` compiles (generated afresh, not looked up): the
/// fused kernel, or the GEMM with its generated epilogue in front when a
/// product takes the outputs' element-wise expression (see
/// [`crate::epilogue`]).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::<f64>::zeros(8, 8)?;
/// let d = MatrixCl::<f64>::zeros(8, 8)?;
/// let source = clfuse_ops::source_of(&output(&d, exp(&a * &a)))?;
/// assert!(source.contains("exp(product)"));
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn source_of<L: OutputList>(list: &L) -> Result<String> {
    let mut grid = None;
    list.grid(&mut grid)?;
    let (rows, cols) = grid.unwrap_or((0, 0));
    if let Some(source) = crate::epilogue::source(list)? {
        return Ok(source);
    }
    list.evaluate_leaves(HeldProduct::NONE)?;
    let rt = Runtime::get()?;
    let launch = LaunchShape::choose(rows, cols, list.schedule(), rt);
    Ok(generate(list, &launch).kernel_source())
}

/// Number of distinct kernel structures cached for the runtime's device
/// (0 before the runtime exists).
pub fn cached_kernels() -> usize {
    Runtime::current().map_or(0, |rt| rt.kernels().fused_len())
}

/// The kernel source that evaluating `op` into a fresh matrix uses.
pub fn operation_source<O: Operation>(op: &O) -> Result<String> {
    op.evaluate_leaves(HeldProduct::NONE)?;
    let mut g = Generator::new();
    let value = op.generate(&mut g, &Index::work_item());
    // A target no expression can alias: buffer ids start at 1.
    g.store(
        crate::binder::Identity::Buffer(0),
        O::Scalar::CL_NAME,
        &Index::work_item(),
        &value,
    );
    Ok(g.kernel_source())
}
