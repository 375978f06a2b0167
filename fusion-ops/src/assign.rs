//! Running outputs: one generated kernel per distinct structure, compiled
//! once, cached, and launched with the values bound.
//!
//! `target.assign(expr)` → [`run`]: shapes checked → launch shape chosen →
//! outputs prepared (scratch buffers) → arguments bound (one tree walk, which
//! also yields the alias pattern) → cache lookup by (type, alias pattern) →
//! on a miss only: source generated and compiled → enqueue → outputs
//! finished (views set, reductions combined, checks read).

use crate::binder::Binder;
use crate::generator::{Generator, Index, Section, StageLayout};
use crate::operation::Operation;
use crate::read_back::ReadBack;
use crate::reductions::{ColwiseReduction, ReduceOp};
use crate::structural::{Block, Diagonal, Indexing, Transpose};
use crate::targets::Target;
use crate::templates::convert;
use fusion_core::BuildOnce;
use fusion_core::expr::{Load, MatrixRef};
use fusion_core::{
    Access, ClType, CompiledKernel, Error, Expr, IntoOperand, MatrixCl, NdRange, Result, Runtime,
    View, compile_kernel, enqueue, tuning_knob, tuning_override,
};
use std::any::{Any, TypeId};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// A compiled fused kernel and its source.
#[derive(Debug)]
pub struct FusedKernel {
    compiled: CompiledKernel,
    source: String,
}

impl FusedKernel {
    /// The generated OpenCL C.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// What the cache knows about one structure.
#[derive(Debug, Clone)]
enum Plan {
    /// Run the kernel in place.
    Direct(Arc<FusedKernel>),
    /// A target is read at other positions than it is written: evaluate into
    /// temporaries first.
    ViaTemporaries,
}

type CacheKey = (TypeId, Vec<u32>);
/// Threads meeting one new structure at once share its one compile.
static CACHE: LazyLock<BuildOnce<CacheKey, Plan>> = LazyLock::new(BuildOnce::new);

/// The work-item grid of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Rows of the element grid.
    pub rows: usize,
    /// Columns of the element grid.
    pub cols: usize,
    /// Work-group size along rows and columns.
    pub local: [usize; 2],
    /// Row-block kernels: rows per block (0 otherwise).
    pub block_rows: usize,
    /// Row-block kernels: how the matrices to stage are held in registers,
    /// `None` when they do not fit.
    pub staged: Option<StageLayout>,
    groups: usize,
}

impl LaunchShape {
    fn choose<L: OutputList>(
        rows: usize,
        cols: usize,
        list: &L,
        device: &fusion_core::DeviceInfo,
    ) -> Self {
        let (reduces, row_block) = (list.reduces(), list.row_block());
        let compute_units = device.compute_units as usize;
        let group = device.max_work_group_size.clamp(1, 256);
        if let Some(staged_columns) = row_block {
            let kind = if list.row_work() {
                RowBlockKind::WithRowWork
            } else {
                RowBlockKind::ProductAlone
            };
            return Self::row_blocks(rows, cols, staged_columns, kind, device);
        }
        let l0 = rows.max(1).next_power_of_two().min(group);
        if !reduces {
            let l1 = cols.max(1).next_power_of_two().min(group / l0).max(1);
            return LaunchShape {
                rows,
                cols,
                local: [l0, l1],
                block_rows: 0,
                staged: None,
                groups: rows.div_ceil(l0),
            };
        }
        // Column-wise reductions: one column per work-group; enough groups
        // to fill the device, each work item looping over rows with a
        // grid-sized stride, so that few partial results remain.
        let wanted = (groups_per_compute_unit() * compute_units.max(1))
            .div_ceil(cols.max(1))
            .max(1);
        LaunchShape {
            rows,
            cols,
            local: [l0, 1],
            block_rows: 0,
            staged: None,
            groups: rows
                .div_ceil(l0)
                .clamp(1, wanted.min(list.max_row_groups()).max(1)),
        }
    }

    /// Row blocks: work-groups of (up to) 256 work items walk blocks of
    /// rows. A staged row is spread over the fewest work items (a power of
    /// two) that hold it with at most [`staged_per_work_item`] elements each;
    /// the block has as many rows as the group has such teams. A row that
    /// needs more than the whole group is not staged (blocks of `lsize` rows).
    fn row_blocks(
        rows: usize,
        cols: usize,
        staged_columns: usize,
        kind: RowBlockKind,
        device: &fusion_core::DeviceInfo,
    ) -> Self {
        let l0 = row_block_local_size(kind, device);
        let staged = stage_layout(staged_columns, kind, l0);
        let block_rows = l0 / staged.map_or(1, |s| s.team);
        let prefetch = staged.is_some_and(|s| s.prefetch);
        let wanted = row_block_groups_per_compute_unit(kind, prefetch)
            * (device.compute_units as usize).max(1);
        LaunchShape {
            rows,
            cols,
            local: [l0, 1],
            block_rows,
            staged,
            groups: rows.div_ceil(block_rows).clamp(1, wanted),
        }
    }

    /// Work-groups along rows (the number of partial results per column).
    pub fn row_groups(&self) -> usize {
        self.groups
    }

    fn range(&self) -> NdRange {
        NdRange::d2([
            self.row_groups() * self.local[0],
            self.cols.div_ceil(self.local[1]) * self.local[1],
        ])
        .with_local(&self.local)
    }
}

/// How rows of `columns` elements are staged in a work-group of `l0` (a
/// power of two) work items: spread over the fewest work items (a power of
/// two, the row's team) holding at most [`staged_per_work_item`] each;
/// `None` when the team would exceed the group (or there is nothing to stage).
fn stage_layout(columns: usize, kind: RowBlockKind, l0: usize) -> Option<StageLayout> {
    if columns == 0 {
        return None;
    }
    let team = columns
        .div_ceil(staged_per_work_item(kind))
        .next_power_of_two();
    (team <= l0).then(|| StageLayout {
        per_item: columns.div_ceil(team),
        team,
        prefetch: row_block_prefetch().unwrap_or(team > 1),
    })
}

/// What a row-block kernel computes besides `xᵀ·v`, which decides how it
/// spreads rows over work items: measured on an H200 (BENCHMARKS.md), the
/// product alone runs fastest with rows shared by more work items holding
/// fewer elements each, and a kernel that also does per-row work (`x·β`
/// inside `v`, a GLM's terms, checks and sums — which every work item
/// sharing a row repeats) with fewer work items per row holding more, in
/// smaller work-groups.
///
/// ```
/// use fusion_ops::{RowBlockKind, staged_row_team};
/// // 100 columns: 8 work items of 13 elements alone, 4 of 25 with row work.
/// let alone = staged_row_team(100, RowBlockKind::ProductAlone)?;
/// let with_work = staged_row_team(100, RowBlockKind::WithRowWork)?;
/// assert!(with_work <= alone);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowBlockKind {
    /// `xᵀ·v` alone, with a `v` that does not read `x`.
    ProductAlone,
    /// Per-row work besides the product.
    WithRowWork,
}

/// How many work items of a row-block kernel of `kind` on this device share
/// each row of a staged matrix of `columns` columns (a power of two), or
/// `None` when such a matrix is not staged (then `transpose_vector_multiply`
/// reads it where it is used). With one, the kernel needs no barrier per block.
///
/// ```
/// use fusion_ops::{RowBlockKind, staged_row_team};
/// assert_eq!(staged_row_team(10, RowBlockKind::ProductAlone)?, Some(1));
/// assert_eq!(staged_row_team(1 << 20, RowBlockKind::WithRowWork)?, None);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn staged_row_team(columns: usize, kind: RowBlockKind) -> Result<Option<usize>> {
    let l0 = row_block_local_size(kind, Runtime::get()?.device_info());
    Ok(stage_layout(columns, kind, l0).map(|layout| layout.team))
}

/// Work items per work-group of a row-block kernel on `device`: a power of
/// two, at most [`row_block_group_size`].
fn row_block_local_size(kind: RowBlockKind, device: &fusion_core::DeviceInfo) -> usize {
    let group = device
        .max_work_group_size
        .clamp(1, row_block_group_size(kind));
    1 << group.ilog2()
}

/// Elements of a staged row one work item holds at most:
/// `FUSION_STAGED_PER_WORK_ITEM` (a tuning knob, read once; at most 64),
/// else 16 for the product alone and 32 with per-row work.
fn staged_per_work_item(kind: RowBlockKind) -> usize {
    static VALUE: OnceLock<Option<usize>> = OnceLock::new();
    let knob =
        *VALUE.get_or_init(|| tuning_override("FUSION_STAGED_PER_WORK_ITEM").map(|v| v.min(64)));
    knob.unwrap_or(match kind {
        RowBlockKind::ProductAlone => 16,
        RowBlockKind::WithRowWork => 32,
    })
}

/// Whether staged blocks are prefetched: `FUSION_ROW_BLOCK_PREFETCH=0|1`
/// (read once); unset, the launch decides (prefetch when rows are shared,
/// where a barrier per block would expose the fetch's latency).
fn row_block_prefetch() -> Option<bool> {
    static VALUE: OnceLock<Option<bool>> = OnceLock::new();
    *VALUE.get_or_init(
        || match std::env::var("FUSION_ROW_BLOCK_PREFETCH").as_deref() {
            Ok("0") => Some(false),
            Ok("1") => Some(true),
            _ => None,
        },
    )
}

/// Work items per row-block work-group: `FUSION_ROW_BLOCK_GROUP_SIZE`
/// (a power of two, read once; at most 256), else 256 for the product alone
/// and 128 with per-row work.
fn row_block_group_size(kind: RowBlockKind) -> usize {
    static VALUE: OnceLock<Option<usize>> = OnceLock::new();
    let knob =
        *VALUE.get_or_init(|| tuning_override("FUSION_ROW_BLOCK_GROUP_SIZE").map(|v| v.min(256)));
    let size = knob.unwrap_or(match kind {
        RowBlockKind::ProductAlone => 256,
        RowBlockKind::WithRowWork => 128,
    });
    1 << size.ilog2()
}

/// Work-groups per compute unit for row-block kernels:
/// `FUSION_ROW_BLOCK_GROUPS_PER_CU`, else 2 for the product alone and, with
/// per-row work, 4 (of half the size), or 2 where blocks are prefetched
/// (twice the registers): on an H200 about as many as are resident at once,
/// so that the groups run in one wave and each group's closing reductions
/// run once per compute unit's share.
fn row_block_groups_per_compute_unit(kind: RowBlockKind, prefetch: bool) -> usize {
    static VALUE: OnceLock<Option<usize>> = OnceLock::new();
    let knob = *VALUE.get_or_init(|| tuning_override("FUSION_ROW_BLOCK_GROUPS_PER_CU"));
    knob.unwrap_or(match kind {
        RowBlockKind::ProductAlone => 2,
        RowBlockKind::WithRowWork if prefetch => 2,
        RowBlockKind::WithRowWork => 4,
    })
}

/// Work-groups per compute unit for reductions: `FUSION_REDUCTION_GROUPS_PER_CU`
/// (a tuning knob, read once), else 32 (best of 4, 8, 32, 128 on an H200).
fn groups_per_compute_unit() -> usize {
    static VALUE: OnceLock<usize> = OnceLock::new();
    *VALUE.get_or_init(|| tuning_knob("FUSION_REDUCTION_GROUPS_PER_CU", 32))
}

/// Outputs computed together by one kernel. Expressions are all evaluated
/// before any target is written, so an output may read another's target.
pub trait OutputList {
    /// Cache key type (lifetimes erased).
    type Key: 'static;
    /// Checks shapes; sets or checks the common element grid.
    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()>;
    /// Whether a column-wise reduction is among the outputs.
    fn reduces(&self) -> bool;
    /// Allocates scratch buffers and prepares targets before binding.
    fn prepare(&self, launch: &LaunchShape) -> Result<()>;
    /// Binds the expressions' arguments.
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>);
    /// Binds the outputs' arguments.
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>);
    /// Generates every expression, pushing the variables holding the values.
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>);
    /// Generates the stores, consuming `values` in order.
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>);
    /// After the kernel: views, reductions' second step — work that is
    /// queued, not waited for.
    fn finish(&self, launch: &LaunchShape) -> Result<()>;
    /// After every output's `finish`, before the caller's follow-up work:
    /// queues the read-backs that `verify` needs without waiting, so that all
    /// of a kernel's flags and partial sums share one round trip.
    fn start_reads(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    /// Last: the checks' verdicts and the full reductions' values, from the
    /// read-backs `start_reads` queued (or a blocking read if it did not run).
    fn verify(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    /// Outputs that combine the rows of a block (`transpose_vector_multiply`):
    /// `Some(columns)`, the columns of the matrices they stage (0 when
    /// nothing is staged). The kernel then walks row blocks.
    fn row_block(&self) -> Option<usize> {
        None
    }
    /// Whether the output does work per row beyond `xᵀ·v`'s running sums
    /// (a store, a check, a reduction; for `xᵀ·v`, a `v` that reads `x`):
    /// a row-block kernel that does favours fewer work items per row (see
    /// [`RowBlockKind`]).
    fn row_work(&self) -> bool {
        true
    }
    /// Before any expression is generated: declares the staged matrices of a
    /// row-block kernel (when `launch.staged`), so that the operations able
    /// to use them read them from registers.
    fn plan(&self, _g: &mut Generator, _launch: &LaunchShape) {}
    /// Binds what [`OutputList::plan`] declared, in the same order.
    fn bind_plan<'a>(&'a self, _b: &mut Binder<'a>, _launch: &LaunchShape) {}
    /// At most this many work-groups along rows (a reduction's last step
    /// asks for one, so that it writes its target directly).
    fn max_row_groups(&self) -> usize {
        usize::MAX
    }
    /// Pushes the buffer ids of the matrices written.
    fn target_ids(&self, ids: &mut Vec<u64>);
    /// Temporary path, step 1: evaluate element-wise outputs into temporaries
    /// (and run reductions and checks on their own).
    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()>;
    /// Temporary path, step 2: copy the temporaries into the targets.
    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()>;
}

/// One target and the expression assigned to it.
#[derive(Debug)]
pub struct Assignment<Tg, E> {
    target: Tg,
    expr: E,
}

impl<Tg: Target, E: Operation> Assignment<Tg, E> {
    /// Pairs a target with an expression.
    pub fn new(target: Tg, expr: E) -> Self {
        Assignment { target, expr }
    }
}

impl<Tg: Target, E: Operation> OutputList for Assignment<Tg, E> {
    type Key = (Tg::Key, E::Key);

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let target = self.target.shape()?;
        if let Some(shape) = self.expr.shape()?
            && shape != target
        {
            return Err(Error::DimensionMismatch {
                operation: "assign".into(),
                lhs: target,
                rhs: shape,
            });
        }
        common_grid(grid, target)
    }

    fn reduces(&self) -> bool {
        false
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        self.target.prepare(self.expr.view())
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.expr.bind(b);
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        self.target.bind(b);
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let value = self.expr.generate(g, &Index::work_item());
        values.push(convert::<E::Scalar, Tg::Scalar>(&value));
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let value = values.next().cloned().unwrap_or_default();
        self.target.store(g, &Index::work_item(), &value);
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        self.target.finish(self.expr.view());
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.target.matrix().buffer_id());
    }

    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        let (rows, cols) = self.target.shape()?;
        let temp = MatrixCl::<E::Scalar>::uninitialized(rows, cols)?;
        run_direct(&Assignment::new(&temp, &self.expr))?;
        temps.push(Box::new(temp));
        Ok(())
    }

    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        let temp = temps
            .next()
            .and_then(|t| t.downcast::<MatrixCl<E::Scalar>>().ok())
            .ok_or_else(|| Error::InvalidArgument {
                function: "assign",
                argument: "temporaries",
                reason: "internal: temporary missing or of the wrong type".into(),
            })?;
        run(&Assignment::new(
            self.target,
            Load(MatrixRef::Borrowed(&*temp)),
        ))
    }
}

fn common_grid(grid: &mut Option<(usize, usize)>, shape: (usize, usize)) -> Result<()> {
    match grid {
        Some(c) if *c != shape => Err(Error::DimensionMismatch {
            operation: "outputs of one kernel must share one shape".into(),
            lhs: *c,
            rhs: shape,
        }),
        _ => {
            *grid = Some(shape);
            Ok(())
        }
    }
}

/// A column-wise reduction written into a `1 x cols` matrix.
#[derive(Debug)]
pub struct ColwiseAssignment<'t, T: ClType, R, E> {
    target: &'t MatrixCl<T>,
    expr: E,
    /// One row per work-group; the target itself for a last step.
    partial: OnceLock<MatrixRef<'t, T>>,
    local_bytes: OnceLock<usize>,
    last_step: bool,
    _op: std::marker::PhantomData<R>,
}

/// Declares the accumulator before the bounds guard, sets it inside, and
/// combines the work-group's values in local memory after it; work item 0 of
/// each group writes the group's result to row `group` of `partial`.
fn generate_group_reduction<R: ReduceOp>(
    g: &mut Generator,
    cl_type: &'static str,
    value: &str,
    partial: crate::binder::Identity,
) {
    g.use_local_ids();
    g.set_section(Section::Before);
    let acc = g.declare(cl_type, R::init(cl_type));
    g.set_section(Section::Outputs);
    g.statement(&format!("{acc} = {};", R::combine(cl_type, &acc, value)));
    g.set_section(Section::After);
    let base = g.buffer(partial, cl_type, false);
    g.mark_written(partial);
    let local = g.local_param(cl_type);
    let step = g.fresh();
    g.statement(&format!("{local}[lid] = {acc};"));
    g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
    g.statement(&format!(
        "for (int {step} = lsize / 2; {step} > 0; {step} /= 2) {{"
    ));
    g.statement(&format!("if (lid < {step}) {{"));
    g.statement(&format!(
        "{local}[lid] = {};",
        R::combine(
            cl_type,
            &format!("{local}[lid]"),
            &format!("{local}[lid + {step}]")
        )
    ));
    g.statement("}");
    g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
    g.statement("}");
    g.statement("if (lid == 0 && j < cols) {");
    g.statement(&format!(
        "{base}_global[get_group_id(0) + get_num_groups(0) * j] = {local}[0];"
    ));
    g.statement("}");
    g.set_section(Section::Outputs);
}

impl<T: ClType, R: ReduceOp, E: Operation> OutputList for ColwiseAssignment<'_, T, R, E> {
    type Key = (ColwiseReduction<R, T>, E::Key);

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let shape = self.expr.shape()?.ok_or_else(|| Error::InvalidArgument {
            function: "colwise reduction",
            argument: "expr",
            reason: "needs a matrix operand, not a scalar".into(),
        })?;
        let target = (self.target.rows(), self.target.cols());
        // A last step (one work-group) writes element j of its target, so
        // a column serves as well as a row.
        let column = self.last_step && target == (shape.1, 1);
        if target != (1, shape.1) && !column {
            return Err(Error::DimensionMismatch {
                operation: format!("colwise_{} (target must be 1 x cols)", R::NAME),
                lhs: target,
                rhs: (1, shape.1),
            });
        }
        common_grid(grid, shape)
    }

    fn reduces(&self) -> bool {
        true
    }

    fn max_row_groups(&self) -> usize {
        if self.last_step { 1 } else { usize::MAX }
    }

    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        // A last step (one work-group) writes its one row straight into the
        // target, which its expression (the previous partial results) never reads.
        let partial = if self.last_step && launch.row_groups() == 1 {
            MatrixRef::Borrowed(self.target)
        } else {
            MatrixRef::Owned(MatrixCl::<T>::uninitialized(
                launch.row_groups().max(1),
                launch.cols,
            )?)
        };
        // A repeated run of the same output object reuses nothing stale:
        // the partial buffer is sized for this launch.
        let _ = self.partial.set(partial);
        let _ = self
            .local_bytes
            .set(launch.local[0] * std::mem::size_of::<T>());
        Ok(())
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.expr.bind(b);
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(p) = self.partial.get() {
            b.matrix(p, Access::Write, false);
        }
        b.local(self.local_bytes.get().copied().unwrap_or(0));
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let value = self.expr.generate(g, &Index::work_item());
        values.push(convert::<E::Scalar, T>(&value));
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let value = values.next().cloned().unwrap_or_default();
        // Before `prepare` (kernel_source) there is no buffer yet; the
        // identity only has to be distinct from every bound buffer.
        let partial = self.partial.get().map_or(u64::MAX, |p| p.buffer_id());
        generate_group_reduction::<R>(
            g,
            T::CL_NAME,
            &value,
            crate::binder::Identity::Buffer(partial),
        );
    }

    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        let Some(partial) = self.partial.get() else {
            return Ok(());
        };
        if launch.rows == 0 || launch.cols == 0 {
            self.target.fill(R::host_init::<T>())?;
        } else if partial.buffer_id() == self.target.buffer_id() {
            // A last step wrote the target directly.
        } else if partial.rows() == 1 {
            self.target.copy_from(partial)?;
        } else {
            // The last step: one work-group reduces the partial results
            // straight into the target.
            run(&ColwiseAssignment::<T, R, _>::last_step(
                self.target,
                Load(MatrixRef::Borrowed(&**partial)),
            ))?;
        }
        self.target.set_view(View::Entire);
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.target.buffer_id());
    }

    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        // Reductions never write a target inside the kernel: run them alone first.
        run_direct(&ColwiseAssignment::<T, R, _>::new(self.target, &self.expr))
    }

    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}

impl<'t, T: ClType, R: ReduceOp, E: Operation> ColwiseAssignment<'t, T, R, E> {
    /// A column-wise reduction of `expr` into `target` (`1 x cols`).
    pub fn new(target: &'t MatrixCl<T>, expr: E) -> Self {
        ColwiseAssignment {
            target,
            expr,
            partial: OnceLock::new(),
            local_bytes: OnceLock::new(),
            last_step: false,
            _op: std::marker::PhantomData,
        }
    }

    /// The last step of a reduction: one work-group reduces `expr` (partial
    /// results, never the target) and writes the target (`1 x cols` or
    /// `cols x 1`) directly.
    pub(crate) fn last_step(target: &'t MatrixCl<T>, expr: E) -> Self {
        ColwiseAssignment {
            last_step: true,
            ..Self::new(target, expr)
        }
    }
}

/// Turns an expression into the output that writes it to a target: element-wise
/// expressions are stored, column-wise reductions are reduced.
pub trait Assignable<Tg> {
    /// The output.
    type Output: OutputList;
    /// Pairs with the target.
    fn into_output(self, target: Tg) -> Self::Output;
}

impl<Tg: Target, O: Operation> Assignable<Tg> for O {
    type Output = Assignment<Tg, O>;
    fn into_output(self, target: Tg) -> Assignment<Tg, O> {
        Assignment::new(target, self)
    }
}

impl<'t, T: ClType, R: ReduceOp, E: Operation> Assignable<&'t MatrixCl<T>>
    for ColwiseReduction<R, E>
{
    type Output = ColwiseAssignment<'t, T, R, E>;
    fn into_output(self, target: &'t MatrixCl<T>) -> Self::Output {
        ColwiseAssignment::new(target, self.0)
    }
}

/// Things that can be written to: matrices and blocks, transposes, diagonals
/// and scatters (`indexing`) of matrices.
pub trait AsTarget<'t> {
    /// The target.
    type Target: Target + 't;
    /// Converts.
    fn as_target(&'t self) -> Self::Target;
}

impl<'t, T: ClType> AsTarget<'t> for MatrixCl<T> {
    type Target = &'t MatrixCl<T>;
    fn as_target(&'t self) -> &'t MatrixCl<T> {
        self
    }
}

macro_rules! structural_target {
    ($([$($g:tt)*] $node:ty),*) => {$(
        impl<'t, $($g)*> AsTarget<'t> for Expr<$node> where &'t $node: Target, $node: 't {
            type Target = &'t $node;
            fn as_target(&'t self) -> &'t $node {
                &self.0
            }
        }
    )*};
}

structural_target!(
    ['a, T: ClType] Block<Load<'a, T>>,
    ['a, T: ClType] Transpose<Load<'a, T>>,
    ['a, T: ClType] Diagonal<Load<'a, T>>,
    ['a, T: ClType, R: Operation<Scalar = i32>, C: Operation<Scalar = i32>] Indexing<Load<'a, T>, R, C>
);

/// An output pairing `target` with `expr`, for [`fuse`].
///
/// ```
/// use fusion_ops::prelude::*;
/// let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let (d, total) = (MatrixCl::<f64>::zeros(3, 1)?, MatrixCl::<f64>::zeros(1, 1)?);
/// fuse((output(&d, exp(&x)), output(&total, colwise_sum(square(&x)))))?; // one kernel
/// assert_eq!(total.to_vec()?, vec![14.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn output<'t, Tg, E>(target: &'t Tg, expr: E) -> <E::Operand as Assignable<Tg::Target>>::Output
where
    Tg: AsTarget<'t> + ?Sized,
    E: IntoOperand,
    E::Operand: Assignable<Tg::Target>,
{
    expr.into_operand().into_output(target.as_target())
}

/// Runs several outputs (a tuple from [`output`], [`optional`], checks, ...) in one kernel.
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
/// use fusion_ops::prelude::*;
/// use fusion_ops::fuse_then;
/// let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let d = MatrixCl::<f64>::zeros(3, 1)?;
/// let mut twice: Option<MatrixCl<f64>> = None;
/// fuse_then((output(&d, exp(&x)), check_finite(&x, "example", "x")), || {
///     twice = Some((2.0f64 * &d).eval()?);
///     Ok(())
/// })?;
/// assert!(twice.is_some());
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn fuse_then<L: OutputList>(outputs: L, mut then: impl FnMut() -> Result<()>) -> Result<()> {
    run_then(&outputs, &mut then)
}

/// An output that is present only when `enabled` (a run-time switch that is
/// part of the cache key): a disabled output and the work only it needs are
/// absent from the generated kernel.
#[derive(Debug)]
pub struct Optional<O> {
    inner: O,
    enabled: bool,
}

/// Makes `output` optional; see [`Optional`].
///
/// ```
/// use fusion_ops::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let (d, e) = (MatrixCl::<f64>::zeros(2, 1)?, MatrixCl::<f64>::zeros(2, 1)?);
/// fuse((output(&d, &x + 1.0), optional(output(&e, exp(&x)), false)))?;
/// assert_eq!(e.to_vec()?, vec![0.0, 0.0]); // not computed
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn optional<O: OutputList>(output: O, enabled: bool) -> Optional<O> {
    Optional {
        inner: output,
        enabled,
    }
}

impl<O: OutputList> OutputList for Optional<O> {
    type Key = Optional<O::Key>;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        if self.enabled {
            self.inner.grid(grid)
        } else {
            Ok(())
        }
    }
    fn reduces(&self) -> bool {
        self.enabled && self.inner.reduces()
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.prepare(launch)
        } else {
            Ok(())
        }
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(u32::from(self.enabled));
        if self.enabled {
            self.inner.bind_exprs(b);
        }
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if self.enabled {
            self.inner.bind_outputs(b);
        }
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        if self.enabled {
            self.inner.generate_exprs(g, values);
        }
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        if self.enabled {
            self.inner.generate_outputs(g, values);
        }
    }
    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.finish(launch)
        } else {
            Ok(())
        }
    }
    fn start_reads(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.start_reads(launch)
        } else {
            Ok(())
        }
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.verify(launch)
        } else {
            Ok(())
        }
    }
    fn row_block(&self) -> Option<usize> {
        self.inner.row_block().filter(|_| self.enabled)
    }
    fn row_work(&self) -> bool {
        self.enabled && self.inner.row_work()
    }
    fn max_row_groups(&self) -> usize {
        if self.enabled {
            self.inner.max_row_groups()
        } else {
            usize::MAX
        }
    }
    fn plan(&self, g: &mut Generator, launch: &LaunchShape) {
        if self.enabled {
            self.inner.plan(g, launch);
        }
    }
    fn bind_plan<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
        if self.enabled {
            self.inner.bind_plan(b, launch);
        }
    }
    fn target_ids(&self, ids: &mut Vec<u64>) {
        if self.enabled {
            self.inner.target_ids(ids);
        }
    }
    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        if self.enabled {
            self.inner.eval_to_temporaries(temps)
        } else {
            Ok(())
        }
    }
    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        if self.enabled {
            self.inner.copy_from_temporaries(temps)
        } else {
            Ok(())
        }
    }
}

/// Outputs can be fused by reference and inspected afterwards (a
/// [`FullReduction`]'s value).
impl<O: OutputList> OutputList for &O {
    type Key = O::Key;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        (**self).grid(grid)
    }
    fn reduces(&self) -> bool {
        (**self).reduces()
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        (**self).prepare(launch)
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        (**self).bind_exprs(b);
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        (**self).bind_outputs(b);
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        (**self).generate_exprs(g, values);
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        (**self).generate_outputs(g, values);
    }
    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        (**self).finish(launch)
    }
    fn start_reads(&self, launch: &LaunchShape) -> Result<()> {
        (**self).start_reads(launch)
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        (**self).verify(launch)
    }
    fn row_block(&self) -> Option<usize> {
        (**self).row_block()
    }
    fn row_work(&self) -> bool {
        (**self).row_work()
    }
    fn plan(&self, g: &mut Generator, launch: &LaunchShape) {
        (**self).plan(g, launch);
    }
    fn bind_plan<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
        (**self).bind_plan(b, launch);
    }
    fn max_row_groups(&self) -> usize {
        (**self).max_row_groups()
    }
    fn target_ids(&self, ids: &mut Vec<u64>) {
        (**self).target_ids(ids);
    }
    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        (**self).eval_to_temporaries(temps)
    }
    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        (**self).copy_from_temporaries(temps)
    }
}

macro_rules! output_tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: OutputList),+> OutputList for ($($name,)+) {
            type Key = ($($name::Key,)+);

            fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
                $(self.$index.grid(grid)?;)+
                Ok(())
            }
            fn reduces(&self) -> bool {
                false $(|| self.$index.reduces())+
            }
            fn prepare(&self, launch: &LaunchShape) -> Result<()> {
                $(self.$index.prepare(launch)?;)+
                Ok(())
            }
            fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
                $(self.$index.bind_exprs(b);)+
            }
            fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
                $(self.$index.bind_outputs(b);)+
            }
            fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
                $(self.$index.generate_exprs(g, values);)+
            }
            fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
                $(self.$index.generate_outputs(g, values);)+
            }
            fn finish(&self, launch: &LaunchShape) -> Result<()> {
                // Every output is finished even if one fails; the first error is returned.
                let mut first = Ok(());
                $(if let Err(e) = self.$index.finish(launch) { if first.is_ok() { first = Err(e); } })+
                first
            }
            fn start_reads(&self, launch: &LaunchShape) -> Result<()> {
                $(self.$index.start_reads(launch)?;)+
                Ok(())
            }
            fn verify(&self, launch: &LaunchShape) -> Result<()> {
                // In order: the first failing check is the one reported.
                $(self.$index.verify(launch)?;)+
                Ok(())
            }
            fn row_block(&self) -> Option<usize> {
                let blocks = [$(self.$index.row_block()),+];
                blocks.iter().any(Option::is_some).then(|| blocks.iter().flatten().sum())
            }
            fn row_work(&self) -> bool {
                false $(|| self.$index.row_work())+
            }
            fn plan(&self, g: &mut Generator, launch: &LaunchShape) {
                $(self.$index.plan(g, launch);)+
            }
            fn max_row_groups(&self) -> usize {
                [$(self.$index.max_row_groups()),+].into_iter().min().unwrap_or(usize::MAX)
            }
            fn bind_plan<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
                $(self.$index.bind_plan(b, launch);)+
            }
            fn target_ids(&self, ids: &mut Vec<u64>) {
                $(self.$index.target_ids(ids);)+
            }
            fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
                $(self.$index.eval_to_temporaries(temps)?;)+
                Ok(())
            }
            fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
                $(self.$index.copy_from_temporaries(temps)?;)+
                Ok(())
            }
        }
    };
}

output_tuple!(A 0);
output_tuple!(A 0, B 1);
output_tuple!(A 0, B 1, C 2);
output_tuple!(A 0, B 1, C 2, D 3);
output_tuple!(A 0, B 1, C 2, D 3, E 4);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// The source of the kernel computing `list`.
fn generate<L: OutputList>(list: &L, launch: &LaunchShape) -> Generator {
    let mut g = Generator::new();
    if list.row_block().is_some() {
        g.use_row_blocks();
    }
    list.plan(&mut g, launch);
    let mut values = Vec::new();
    list.generate_exprs(&mut g, &mut values);
    g.set_section(Section::Outputs);
    list.generate_outputs(&mut g, &mut values.iter());
    g
}

fn dump_name(key: &CacheKey) -> String {
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
    let limit = fusion_core::MAX_ELEMENTS;
    if rows > limit || cols > limit || rows.checked_mul(cols).is_none_or(|n| n > limit) {
        return Err(Error::InvalidArgument {
            function: "assign",
            argument: "expr",
            reason: format!(
                "a {rows} x {cols} result exceeds the limit of {} elements",
                fusion_core::MAX_ELEMENTS
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
    let rt = Runtime::get()?;
    let launch = LaunchShape::choose(rows, cols, list, rt.device_info());
    list.prepare(&launch)?;
    let mut binder = Binder::new();
    if launch.block_rows > 0 {
        // Staged or not, and how: different kernels.
        binder.structure(launch.staged.map_or(0, |layout| 1 + layout.code()));
    }
    list.bind_plan(&mut binder, &launch);
    list.bind_exprs(&mut binder);
    list.bind_outputs(&mut binder);
    binder.int(rows as i32);
    binder.int(cols as i32);
    if launch.block_rows > 0 {
        binder.int(launch.block_rows as i32);
    }
    let (args, pattern) = binder.finish();
    let key: CacheKey = (TypeId::of::<L::Key>(), pattern);
    let plan = CACHE.get_or_build(&key, || {
        let g = generate(list, &launch);
        if g.reads_target_elsewhere() {
            return Ok(Plan::ViaTemporaries);
        }
        if g.uses_fp64() {
            rt.require::<f64>("assign")?;
        }
        let source = g.kernel_source();
        let compiled = compile_kernel("calculate", &source, "", &dump_name(&key))?;
        Ok(Plan::Direct(Arc::new(FusedKernel { compiled, source })))
    })?;
    match plan {
        Plan::Direct(kernel) => {
            if rows > 0 && cols > 0 {
                enqueue(&kernel.compiled, &args, launch.range())?;
                if list.reduces() {
                    // The device starts on the kernel while the host queues
                    // the second steps and read-backs.
                    rt.flush()?;
                }
            }
            // Read-backs are queued (not waited for) before `then`, so they
            // complete while `then`'s work runs, even on an in-order queue.
            let finished = list
                .finish(&launch)
                .and_then(|()| list.start_reads(&launch))
                .and_then(|()| then());
            list.verify(&launch)?;
            finished?;
            Ok(Launched::Done)
        }
        Plan::ViaTemporaries => Ok(Launched::NeedsTemporaries),
    }
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
        Launched::NeedsTemporaries => Err(Error::InvalidArgument {
            function: "assign",
            argument: "outputs",
            reason: "internal: an output into a fresh temporary was planned through temporaries"
                .into(),
        }),
    }
}

/// Evaluates `op` into a new matrix without the temporary path.
pub(crate) fn eval_direct<O: Operation>(op: O) -> Result<MatrixCl<O::Scalar>> {
    let (rows, cols) = op.shape()?.unwrap_or((1, 1));
    let out = MatrixCl::<O::Scalar>::uninitialized(rows, cols)?;
    run_direct(&Assignment::new(&out, op))?;
    Ok(out)
}

/// The source `run(list)` compiles (generated afresh, not looked up).
pub fn source_of<L: OutputList>(list: &L) -> Result<String> {
    let mut grid = None;
    list.grid(&mut grid)?;
    let (rows, cols) = grid.unwrap_or((0, 0));
    let rt = Runtime::get()?;
    let launch = LaunchShape::choose(rows, cols, list, rt.device_info());
    Ok(generate(list, &launch).kernel_source())
}

/// Number of distinct kernel structures seen in this process.
pub fn cached_kernels() -> usize {
    CACHE.len()
}

/// Assignment into matrices and into blocks, transposes, diagonals and
/// scatters of matrices; compound forms return `Result` instead of
/// overloading `+=` (an operator could not report errors).
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let b = MatrixCl::from_slice(2, 1, &[10.0f64, 20.0])?;
/// let d = MatrixCl::<f64>::zeros(2, 1)?;
/// d.assign(3.0 * (&a + &b))?;
/// assert_eq!(d.to_vec()?, vec![33.0, 66.0]);
/// d.add_assign(&a)?;
/// d.mul_assign(2.0)?;
/// assert_eq!(d.to_vec()?, vec![68.0, 136.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub trait AssignExt<'t>: AsTarget<'t> {
    /// Computes `expr` into `self` with one fused kernel; `self` takes the expression's view.
    fn assign<E>(&'t self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Assignable<Self::Target>,
    {
        run(&expr.into_operand().into_output(self.as_target()))
    }

    /// `self = self + expr`.
    fn add_assign<E>(&'t self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Operation,
        <<Self::Target as Target>::Current as Operation>::Scalar:
            fusion_core::Promote<<E::Operand as Operation>::Scalar>,
    {
        let target = self.as_target();
        run(&Assignment::new(
            target,
            fusion_core::expr::Add(target.current(), expr.into_operand()),
        ))
    }

    /// `self = self - expr`.
    fn sub_assign<E>(&'t self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Operation,
        <<Self::Target as Target>::Current as Operation>::Scalar:
            fusion_core::Promote<<E::Operand as Operation>::Scalar>,
    {
        let target = self.as_target();
        run(&Assignment::new(
            target,
            fusion_core::expr::Sub(target.current(), expr.into_operand()),
        ))
    }

    /// `self = self * scalar`.
    fn mul_assign<S>(&'t self, scalar: S) -> Result<()>
    where
        S: ClType + IntoOperand<Operand = fusion_core::expr::Scalar<S>>,
        <<Self::Target as Target>::Current as Operation>::Scalar: fusion_core::Promote<S>,
    {
        let target = self.as_target();
        run(&Assignment::new(
            target,
            fusion_core::expr::ElewiseMul(target.current(), fusion_core::expr::Scalar(scalar)),
        ))
    }
}

impl<'t, X: AsTarget<'t>> AssignExt<'t> for X {}

/// Evaluates an operation into a new matrix.
pub fn eval_operation<O: Operation>(op: O) -> Result<MatrixCl<O::Scalar>> {
    let Some((rows, cols)) = op.shape()? else {
        return Err(Error::InvalidArgument {
            function: "eval",
            argument: "expr",
            reason: "a scalar-only expression has no shape; use constant(v, rows, cols)".into(),
        });
    };
    let out = MatrixCl::<O::Scalar>::uninitialized(rows, cols)?;
    run(&Assignment::new(&out, op))?;
    Ok(out)
}

/// Evaluates a column-wise reduction into a new `1 x cols` matrix.
pub fn eval_colwise<R: ReduceOp, E: Operation>(
    r: ColwiseReduction<R, E>,
) -> Result<MatrixCl<E::Scalar>> {
    let cols = r.0.shape()?.map_or(1, |s| s.1);
    let out = MatrixCl::<E::Scalar>::uninitialized(1, cols)?;
    run(&ColwiseAssignment::<E::Scalar, R, E>::new(&out, r.0))?;
    Ok(out)
}

/// The kernel source that evaluating `op` into a fresh matrix uses.
pub fn operation_source<O: Operation>(op: &O) -> Result<String> {
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

/// A full reduction of an expression to one value, usable alone ([`sum`] and
/// friends) or as an output of a larger kernel.
#[derive(Debug)]
pub struct FullReduction<R, E: Operation> {
    inner: ColwiseAssignmentOwned<R, E>,
    value: Mutex<Option<f64>>,
    /// The partial sums on their way to the host.
    partial_read: ReadBack<E::Scalar>,
}

#[derive(Debug)]
struct ColwiseAssignmentOwned<R, E: Operation> {
    expr: E,
    partial: OnceLock<MatrixCl<E::Scalar>>,
    local_bytes: OnceLock<usize>,
    _op: std::marker::PhantomData<R>,
}

impl<R: ReduceOp, E: Operation> FullReduction<R, E> {
    /// The reduced value after the kernel ran.
    pub fn value(&self) -> Option<E::Scalar> {
        self.value
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(E::Scalar::from_f64)
    }
}

impl<R: ReduceOp, E: Operation> OutputList for FullReduction<R, E> {
    type Key = (
        FullReduction<R, fusion_core::expr::Scalar<E::Scalar>>,
        E::Key,
    );

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let shape = self.inner.expr.shape()?.unwrap_or((1, 1));
        common_grid(grid, shape)
    }
    fn reduces(&self) -> bool {
        true
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        let _ = self.inner.partial.set(MatrixCl::uninitialized(
            launch.row_groups().max(1),
            launch.cols.max(1),
        )?);
        let _ = self
            .inner
            .local_bytes
            .set(launch.local[0] * std::mem::size_of::<E::Scalar>());
        Ok(())
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.inner.expr.bind(b);
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(p) = self.inner.partial.get() {
            b.matrix(p, Access::Write, false);
        }
        b.local(self.inner.local_bytes.get().copied().unwrap_or(0));
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        values.push(self.inner.expr.generate(g, &Index::work_item()));
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let value = values.next().cloned().unwrap_or_default();
        let partial = self
            .inner
            .partial
            .get()
            .map_or(u64::MAX, MatrixCl::buffer_id);
        generate_group_reduction::<R>(
            g,
            E::Scalar::CL_NAME,
            &value,
            crate::binder::Identity::Buffer(partial),
        );
    }
    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    fn start_reads(&self, launch: &LaunchShape) -> Result<()> {
        if launch.rows > 0
            && launch.cols > 0
            && let Some(p) = self.inner.partial.get()
        {
            self.partial_read.start(p)?;
        }
        Ok(())
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        // Read back with the checks' flags, once every output's follow-up
        // work is queued.
        let mut total = R::host_init::<E::Scalar>().to_f64();
        let partials = match self.inner.partial.get() {
            Some(p) if launch.rows > 0 && launch.cols > 0 => self.partial_read.finish(p)?,
            _ => Vec::new(),
        };
        // The tiny final step, on the host: one value per work-group and column.
        for v in partials {
            total = R::host_combine(total, v.to_f64());
        }
        *self.value.lock().unwrap_or_else(|p| p.into_inner()) = Some(total);
        Ok(())
    }
    fn target_ids(&self, _ids: &mut Vec<u64>) {}
    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        run_direct(self)
    }
    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}

/// A full-reduction output of `expr`; read it with [`FullReduction::value`] after [`fuse`].
pub fn full_reduction<R: ReduceOp, A: IntoOperand>(expr: A) -> FullReduction<R, A::Operand>
where
    A::Operand: Operation,
{
    FullReduction {
        inner: ColwiseAssignmentOwned {
            expr: expr.into_operand(),
            partial: OnceLock::new(),
            local_bytes: OnceLock::new(),
            _op: std::marker::PhantomData,
        },
        value: Mutex::new(None),
        partial_read: ReadBack::default(),
    }
}

macro_rules! full {
    ($($fun:ident $op:ident $doc:literal;)*) => {$(
        #[doc = concat!("The ", $doc, " of every element of `expr`: one kernel (the expression is computed inside it) plus a tiny final step on the host.\n\n",
            "```\nuse fusion_ops::prelude::*;\n",
            "let a = MatrixCl::from_slice(2, 2, &[1.0f64, -2.0, 3.0, 4.0])?;\n",
            "let v: f64 = ", stringify!($fun), "(square(&a))?;\n",
            "# let _ = v;\n",
            "# Ok::<(), fusion_ops::Error>(())\n```")]
        pub fn $fun<A: IntoOperand>(expr: A) -> Result<<A::Operand as Operation>::Scalar>
        where
            A::Operand: Operation,
        {
            let r = full_reduction::<crate::reductions::$op, A>(expr);
            run(&r)?;
            r.value().ok_or_else(|| Error::InvalidArgument { function: stringify!($fun), argument: "expr", reason: "internal: no value".into() })
        }
    )*};
}

full! {
    sum SumOp "sum";
    prod ProdOp "product";
    max MaxOp "maximum";
    min MinOp "minimum";
}
