//! `xᵀ·v` as a kernel output: the rows of `x` weighted by a per-row value
//! that the same kernel computes, summed.
//!
//! The kernel walks blocks of rows with each block of `x` held in registers
//! spread over the work-group (see `StagedMatrix`): the row-wise product
//! `x·β` inside `v` and `x_blockᵀ·v_block` both use the held elements, so
//! `x` is read once. Each work-group writes its sums; the last group to
//! finish adds them up into the target (a second kernel does it instead
//! when the groups' sums are too many for one work-group to read).
//!
//! How rows are spread over work items depends on what else the kernel
//! computes (`RowBlockKind`): alone, up to 16 elements per work item in
//! groups of 256; beside per-row work such as a GLM's terms and checks, up
//! to 32 in groups of 128, so that fewer work items repeat each row's work.
//! Measured on an H200 (docs/benchmarks/HISTORY.md), a GLM reading `x` once this way is
//! faster than two passes up to 8 work items per row (256 columns), so the
//! GLMs put `xᵀ·d` in their kernel there.

use crate::binder::{Binder, Identity};
use crate::driver::{run, run_direct};
use crate::generator::{Generator, Index, Section, StagedMatrix};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::outputs::{Assignable, ColwiseAssignment, OutputList, Schedule};
use crate::reductions::SumOp;
use crate::templates::convert;
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, Error, Expr, IntoOperand, MatrixCl, Result, View};
use std::any::Any;
use std::sync::OnceLock;

/// Columns whose staged sums are added up together at the end of a
/// row-block kernel (each work item stores this many in local memory).
const SUM_ROUND: usize = 8;

/// Most of the work-groups' sums per work item for which the kernel's last
/// group adds them up itself; with more, a second kernel (one work-group
/// per column) does. On an H200 the second kernel cost a diamonds call
/// (`n = 5000`, 24 columns, 40 groups) 7.6 µs of device time besides its launch.
const LAST_GROUP_READS_PER_ITEM: usize = 32;

/// Most work items sharing a row of `x` for which a kernel with per-row
/// work computes `xᵀ·v` itself by default: with more, a second pass
/// measured faster on an H200 (BENCHMARKS.md).
const ONE_PASS_MAX_TEAM: usize = 8;

/// Whether a kernel with per-row work (a GLM's terms, a recorded step's
/// likelihood) should compute `xᵀ·v` for this `x` itself, reading `x`
/// once, rather than leave it to a second pass over `x`. By default
/// (`FUSION_GLM_ONE_PASS=1`, [`Tuning::glm_one_pass`](clfuse_core::Tuning::glm_one_pass))
/// when at most 8 work items (one on a CPU, where a team's sums cost 3x a
/// second pass on PoCL) share each staged row; with `2` whenever `x` is
/// staged; with `0` never.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::<f64>::zeros(1000, 10)?;
/// // Ten columns fit one work item's registers: one pass.
/// assert!(clfuse_ops::one_pass_worthwhile(&x)?);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn one_pass_worthwhile<T: ClType>(x: &MatrixCl<T>) -> Result<bool> {
    use clfuse_core::GlmOnePass;
    let rt = x.runtime()?;
    let team = crate::launch_shape::staged_row_team(x.cols(), crate::RowBlockKind::WithRowWork)?;
    let max_team = if rt.device_info().is_gpu {
        ONE_PASS_MAX_TEAM
    } else {
        1
    };
    Ok(match rt.tuning().glm_one_pass.unwrap_or_default() {
        GlmOnePass::Never => false,
        GlmOnePass::SmallTeams => team.is_some_and(|t| t <= max_team),
        GlmOnePass::WheneverStaged => team.is_some(),
    })
}

/// `xᵀ·v` for an `n x p` matrix `x` and an `n x 1` column `v`: the node built
/// by [`transpose_vector_multiply()`], a kernel output (`p x 1`).
#[derive(Debug, Clone, Copy)]
pub struct TransposeVectorMultiply<X, V>(pub X, pub V);

/// `xᵀ·v` (`x` is `n x p`, `v` is `n x 1`, the result `p x 1`), computed by
/// the kernel that computes `v`: assign it with [`output`](crate::output)
/// beside other outputs over the same `n` rows, or `.eval()` it. When `x` is
/// a matrix of at most 4096 columns (16 per work item of a 256-item group;
/// 4096 with other outputs too, 32 per work item of 128) its blocks of rows
/// are staged in registers, and
/// `matrix_vector_multiply(&x, &beta)` inside `v` reads the same elements,
/// so `x` leaves global memory once; otherwise `x` is read where it is used.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(3, 2, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let beta = MatrixCl::from_slice(2, 1, &[1.0f64, -1.0])?;
/// // xᵀ·(x·beta): the residual-style product a least-squares gradient needs.
/// let g = transpose_vector_multiply(&x, matrix_vector_multiply(&x, &beta)).eval()?;
/// assert_eq!(g.to_vec()?, vec![-18.0, -45.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn transpose_vector_multiply<X: IntoOperand, V: IntoOperand>(
    x: X,
    v: V,
) -> Expr<TransposeVectorMultiply<X::Operand, V::Operand>> {
    Expr(TransposeVectorMultiply(x.into_operand(), v.into_operand()))
}

/// Evaluates `xᵀ·v` of constants into a new `p x 1` matrix.
pub(crate) fn eval_direct<X: Operation, V: Operation>(
    t: TransposeVectorMultiply<X, V>,
) -> Result<MatrixCl<X::Scalar>> {
    let p = t.0.shape()?.map_or(0, |s| s.1);
    let out = MatrixCl::<X::Scalar>::uninitialized(p, 1)?;
    run(&TransposeProductAssignment::new(&out, t))?;
    Ok(out)
}

impl<'t, T: ClType, X: Operation, V: Operation> Assignable<&'t MatrixCl<T>>
    for TransposeVectorMultiply<X, V>
{
    type Output = TransposeProductAssignment<'t, T, X, V>;
    fn into_output(self, target: &'t MatrixCl<T>) -> Self::Output {
        TransposeProductAssignment::new(target, self)
    }
}

/// The end of a staged `xᵀ·v`: the work items of one `tile_col` (lids
/// `tile_col * block_rows` onwards) hold running sums `acc` of the same
/// columns, which are added up into the work-group's row of `partial`.
///
/// In rounds of up to [`SUM_ROUND`] columns: every work item stores its sums
/// of the round side by side; `helpers` work items per column add up
/// interleaved slices of its `block_rows` sums into the tail of `sums`; one
/// work item per column adds the helpers' results. Two barriers a round: a
/// tree per column took `2 + log2(block_rows)` barriers each and cost 33 µs
/// of 376 at (1e6, 100) on an H200.
fn generate_staged_sums(g: &mut Generator, t: &str, acc: &str, per_item: usize, names: &Names) {
    let Names {
        sums,
        cols,
        partial,
        ..
    } = names;
    let [
        outputs,
        helpers,
        task,
        out,
        helper,
        member,
        kk,
        part,
        r,
        total,
        col,
    ] = std::array::from_fn(|_| g.fresh());
    for first in (0..per_item).step_by(SUM_ROUND) {
        let width = SUM_ROUND.min(per_item - first);
        for k in 0..width {
            g.statement(&format!(
                "{sums}[lid * {width} + {k}] = {acc}[{}];",
                first + k
            ));
        }
        g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
        g.statement("{");
        g.statement(&format!("const int {outputs} = tile_col_step * {width};"));
        g.statement(&format!("const int {helpers} = max(1, lsize / {outputs});"));
        g.statement(&format!(
            "for (int {task} = lid; {task} < {outputs} * {helpers}; {task} += lsize) {{"
        ));
        g.statement(&format!("const int {out} = {task} % {outputs};"));
        g.statement(&format!("const int {helper} = {task} / {outputs};"));
        g.statement(&format!("const int {member} = {out} / {width};"));
        g.statement(&format!("const int {kk} = {out} % {width};"));
        g.statement(&format!("{t} {part} = 0;"));
        g.statement(&format!(
            "for (int {r} = {helper}; {r} < block_rows; {r} += {helpers}) {{"
        ));
        g.statement(&format!(
            "{part} += {sums}[({member} * block_rows + {r}) * {width} + {kk}];"
        ));
        g.statement("}");
        g.statement(&format!("{sums}[lsize * {width} + {task}] = {part};"));
        g.statement("}");
        g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
        g.statement(&format!(
            "for (int {out} = lid; {out} < {outputs}; {out} += lsize) {{"
        ));
        g.statement(&format!("{t} {total} = 0;"));
        g.statement(&format!(
            "for (int {helper} = 0; {helper} < {helpers}; {helper}++) {{"
        ));
        g.statement(&format!(
            "{total} += {sums}[lsize * {width} + {helper} * {outputs} + {out}];"
        ));
        g.statement("}");
        let k = if first == 0 {
            format!("({out} % {width})")
        } else {
            format!("({first} + {out} % {width})")
        };
        g.statement(&format!(
            "const int {col} = {out} / {width} + tile_col_step * {k};"
        ));
        g.statement(&format!("if ({col} < {cols}) {{"));
        g.statement(&format!(
            "{partial}_global[get_group_id(0) + {partial}_rows * {col}] = {total};"
        ));
        g.statement("}");
        g.statement("}");
        g.statement("}");
    }
}

/// The kernel names both forms of the epilogue use.
struct Names {
    /// Local array: the block's values of `v`.
    block_values: String,
    /// Local array: running sums.
    sums: String,
    /// Parameter: the columns of `x`.
    cols: String,
    /// Base name of the work-groups' sums buffer.
    partial: String,
}

/// `xᵀ·v` written into a `p x 1` matrix (see [`transpose_vector_multiply()`]).
#[derive(Debug)]
pub struct TransposeProductAssignment<'t, T: ClType, X, V> {
    target: &'t MatrixCl<T>,
    product: TransposeVectorMultiply<X, V>,
    /// `groups x p`: row `g` holds work-group `g`'s sums.
    partial: OnceLock<MatrixCl<T>>,
    block_rows: OnceLock<usize>,
    /// Elements of the `sums` local buffer.
    sums_len: OnceLock<usize>,
    /// Whether the kernel's last group writes the target (else `finish`
    /// runs the second kernel).
    last_group_sums: OnceLock<bool>,
    /// Whether the kernel has that ending at all (the device's tuning).
    may_end_in_kernel: OnceLock<bool>,
    /// This thread's finished-groups counter (one slot of it).
    counter: OnceLock<MatrixCl<i32>>,
}

impl<'t, T: ClType, X: Operation, V: Operation> TransposeProductAssignment<'t, T, X, V> {
    /// `product` into `target` (`p x 1`).
    pub fn new(target: &'t MatrixCl<T>, product: TransposeVectorMultiply<X, V>) -> Self {
        TransposeProductAssignment {
            target,
            product,
            partial: OnceLock::new(),
            block_rows: OnceLock::new(),
            sums_len: OnceLock::new(),
            last_group_sums: OnceLock::new(),
            may_end_in_kernel: OnceLock::new(),
            counter: OnceLock::new(),
        }
    }

    /// Whether the kernel carries the last-group ending
    /// ([`Tuning::last_group_sums`](clfuse_core::Tuning::last_group_sums):
    /// by default on GPUs only); `prepare` then picks it per launch.
    fn may_end_in_kernel(&self) -> bool {
        *self.may_end_in_kernel.get_or_init(|| {
            clfuse_core::Runtime::get()
                .is_ok_and(|rt| rt.on_gpus_unless_set(rt.tuning().last_group_sums))
        })
    }

    fn x_cols(&self) -> usize {
        self.product.0.shape().ok().flatten().map_or(0, |s| s.1)
    }

    /// `x` is staged in registers (see [`StagedMatrix`]): each work item
    /// adds its elements times their row's `v` to one running sum per
    /// element it holds, across all blocks, with no synchronisation (every
    /// work item sharing a row computes that row's `v`); at the end the work
    /// items holding the same columns add up their sums.
    fn generate_staged(&self, g: &mut Generator, staged: &StagedMatrix, v: &str, names: &Names) {
        let t = T::CL_NAME;
        let per_item = staged.layout.per_item;
        let acc = g.fresh();
        g.set_section(Section::Before);
        // Zeroed by an initializer, not a loop: a loop here (run once, before
        // the block loop) could be left rolled, putting the sums in local memory.
        g.statement(&format!("{t} {acc}[{per_item}] = {{0}};"));
        g.set_section(Section::Body);
        g.open_unrolled_loop(per_item);
        let held = convert::<X::Scalar, T>(&staged.element("k"));
        g.statement(&format!("{acc}[k] += {held} * {v};"));
        g.statement("}");
        g.set_section(Section::After);
        generate_staged_sums(g, t, &acc, per_item, names);
        g.set_section(Section::Outputs);
    }

    /// Any `x`: the block's rows x columns products are shared out as
    /// (column, slice of rows) pairs, `x` computed at each.
    fn generate_generic(&self, g: &mut Generator, v: &str, names: &Names) {
        let Names {
            block_values,
            sums,
            cols,
            partial,
        } = names;
        let t = T::CL_NAME;
        // One work item per row writes the row's value of v.
        g.set_section(Section::Outputs);
        g.statement(&format!("{block_values}[i - block] = {v};"));
        // Pair q is column q % cols, rows q / cols + k * slices, so that all
        // work items help even when x has few columns.
        // Each pair keeps its running sum in its own slot of `sums` across
        // blocks (no races, no barriers); the slices are added up at the end.
        let (slices, pair, col, row, r, sum) = (
            g.fresh(),
            g.fresh(),
            g.fresh(),
            g.fresh(),
            g.fresh(),
            g.fresh(),
        );
        g.set_section(Section::Before);
        g.statement(&format!(
            "const int {slices} = max(1, lsize / max(1, {cols}));"
        ));
        g.statement(&format!(
            "for (int {pair} = lid; {pair} < {cols} * {slices}; {pair} += lsize) {{"
        ));
        g.statement(&format!("{sums}[{pair}] = 0;"));
        g.statement("}");
        g.set_section(Section::Epilogue);
        g.statement(&format!(
            "for (int {pair} = lid; {pair} < {cols} * {slices}; {pair} += lsize) {{"
        ));
        g.statement(&format!("const int {col} = {pair} % {cols};"));
        g.statement(&format!("{t} {sum} = 0;"));
        g.statement(&format!(
            "for (int {r} = {pair} / {cols}; {r} < rows_here; {r} += {slices}) {{"
        ));
        g.statement(&format!("const int {row} = block + {r};"));
        g.open_scope();
        let x = self
            .product
            .0
            .generate(g, &Index::new(row.clone(), col.clone()));
        g.close_scope();
        let x = convert::<X::Scalar, T>(&x);
        g.statement(&format!("{sum} += {x} * {block_values}[{r}];"));
        g.statement("}");
        g.statement(&format!("{sums}[{pair}] += {sum};"));
        g.statement("}");
        g.set_section(Section::After);
        let (total, slice) = (g.fresh(), g.fresh());
        g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
        g.statement(&format!(
            "for (int {col} = lid; {col} < {cols}; {col} += lsize) {{"
        ));
        g.statement(&format!("{t} {total} = 0;"));
        g.statement(&format!(
            "for (int {slice} = 0; {slice} < {slices}; {slice}++) {{"
        ));
        g.statement(&format!("{total} += {sums}[{col} + {cols} * {slice}];"));
        g.statement("}");
        g.statement(&format!(
            "{partial}_global[get_group_id(0) + {partial}_rows * {col}] = {total};"
        ));
        g.statement("}");
        g.set_section(Section::Outputs);
    }

    /// The kernel's end, active when its argument `last_group_sums` is
    /// set: each group counts itself done once its row of `partial` is
    /// written, and the last one adds up every group's row into the target,
    /// `slices` work items per column. A launch of one group skips the count.
    fn generate_last_group_sums(
        &self,
        g: &mut Generator,
        names: &Names,
        last_group_sums: &str,
        done: &str,
        target: &str,
    ) {
        let t = T::CL_NAME;
        let Names {
            sums,
            cols,
            partial,
            ..
        } = names;
        let slot = g.groups_done_slot();
        let [last, all, slices, task, col, total, group, slice] =
            std::array::from_fn(|_| g.fresh());
        // Every barrier at the top level: PoCL miscompiled one inside the
        // last group's branch (it corrupted the host's heap).
        g.statements(&format!(
            "{{
               // The last group to finish adds every group's sums into the
               // target: their writes are made visible before each group
               // counts itself done.
               barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
               if (lid == 0) {{
                 bool {last} = {last_group_sums} && get_num_groups(0) == 1;
                 if ({last_group_sums} && get_num_groups(0) > 1) {{
                   mem_fence(CLK_GLOBAL_MEM_FENCE);
                   {last} = atomic_inc(&{done}_global[{slot}]) == get_num_groups(0) - 1;
                 }}
                 {sums}[0] = {last};
               }}
               barrier(CLK_LOCAL_MEM_FENCE);
               const bool {last} = {sums}[0] != 0;
               barrier(CLK_LOCAL_MEM_FENCE);
               const int {slices} = max(1, lsize / max(1, {cols}));
               if ({last}) {{
                 // Read past any cache that may hold stale sums.
                 mem_fence(CLK_GLOBAL_MEM_FENCE);
                 volatile __global const {t}* {all} = {partial}_global;
                 for (int {task} = lid; {task} < {cols} * {slices}; {task} += lsize) {{
                   const int {col} = {task} % {cols};
                   {t} {total} = 0;
                   for (int {group} = {task} / {cols}; {group} < get_num_groups(0); {group} += {slices}) {{
                     {total} += {all}[{group} + {partial}_rows * {col}];
                   }}
                   if ({slices} == 1) {{
                     {target}_global[{col}] = {total};
                   }} else {{
                     {sums}[{task}] = {total};
                   }}
                 }}
               }}
               barrier(CLK_LOCAL_MEM_FENCE);
               if ({last} && {slices} > 1) {{
                 for (int {col} = lid; {col} < {cols}; {col} += lsize) {{
                   {t} {total} = 0;
                   for (int {slice} = 0; {slice} < {slices}; {slice}++) {{
                     {total} += {sums}[{col} + {cols} * {slice}];
                   }}
                   {target}_global[{col}] = {total};
                 }}
               }}
               if ({last} && lid == 0 && get_num_groups(0) > 1) {{
                 {done}_global[{slot}] = 0;
               }}
             }}"
        ));
    }

    /// Whether `v` reads `x` (its row-wise product, say): binding `v` after
    /// `x` finds `x` already bound. Without a matrix `x`, assume it does.
    fn v_reads_x(&self) -> bool {
        let Some(x) = self.product.0.matrix() else {
            return true;
        };
        let mut b = Binder::new();
        b.first_use(Identity::Buffer(x.buffer_id()));
        self.product.1.bind(&mut b);
        b.bound_again(Identity::Buffer(x.buffer_id()))
    }

    fn staged_matrix(&self, launch: &LaunchShape) -> Option<&MatrixCl<X::Scalar>> {
        self.product.0.matrix().filter(|_| launch.staged.is_some())
    }
}

impl<T: ClType, X: Operation, V: Operation> OutputList for TransposeProductAssignment<'_, T, X, V> {
    type Key = (TransposeVectorMultiply<X::Key, V::Key>, T);

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        const F: &str = "transpose_vector_multiply";
        let Some((n, p)) = self.product.0.shape()? else {
            return Err(Error::InvalidArgument {
                function: F,
                argument: "x",
                reason: "needs a matrix, not a scalar".into(),
            });
        };
        let v = self.product.1.shape()?.unwrap_or((n, 1));
        if v != (n, 1) {
            return Err(Error::DimensionMismatch {
                operation: format!("{F} (v must be a column with x's rows)"),
                lhs: (n, p),
                rhs: v,
            });
        }
        let target = (self.target.rows(), self.target.cols());
        if target != (p, 1) {
            return Err(Error::DimensionMismatch {
                operation: format!("{F} (target must be cols(x) x 1)"),
                lhs: target,
                rhs: (p, 1),
            });
        }
        match grid {
            None => *grid = Some((n, 1)),
            Some(g) if *g == (n, 1) => {}
            Some(g) => {
                return Err(Error::DimensionMismatch {
                    operation: format!("{F} (its rows are the kernel's rows)"),
                    lhs: *g,
                    rhs: (n, 1),
                });
            }
        }
        Ok(())
    }

    fn schedule(&self) -> Schedule {
        let staged = self.product.0.matrix();
        Schedule {
            reduces: true,
            row_block: Some(if staged.is_some() { self.x_cols() } else { 0 }),
            row_work: self.v_reads_x(),
            ..Schedule::NONE
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.product.0.evaluate_leaves(held)?;
        self.product.1.evaluate_leaves(held)
    }

    fn declare_staged(&self, g: &mut Generator, launch: &LaunchShape) {
        if let Some(x) = self.staged_matrix(launch)
            && g.staged(Identity::Buffer(x.buffer_id())).is_none()
        {
            let cols = g.value_param("int");
            if let Some(layout) = launch.staged {
                g.stage(
                    Identity::Buffer(x.buffer_id()),
                    X::Scalar::CL_NAME,
                    &cols,
                    layout,
                );
            }
        }
    }

    fn bind_staged<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
        if let Some(x) = self.staged_matrix(launch)
            && b.first_use(Identity::Tile(x.buffer_id()))
        {
            b.int(x.cols() as i32);
            b.matrix(x, Access::Read, true);
        }
    }

    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        let partial = MatrixCl::<T>::uninitialized(launch.row_groups().max(1), self.x_cols())?;
        let _ = self.partial.set(partial);
        let _ = self.block_rows.set(launch.block_rows);
        // Staged: a round of sums per work item and the helpers' results
        // (see `generate_staged_sums`).
        // Otherwise one running sum per (column, slice of rows) pair.
        let sums_len = match (self.staged_matrix(launch), launch.staged) {
            (Some(_), Some(layout)) => {
                let width = layout.per_item.min(SUM_ROUND);
                launch.local[0] * width + launch.local[0].max(layout.team * width)
            }
            _ => self.x_cols().max(launch.local[0]),
        };
        let _ = self.sums_len.set(sums_len);
        let groups = launch.row_groups().max(1);
        let cols = self.x_cols();
        let _ = self.last_group_sums.set(
            self.may_end_in_kernel()
                && launch.rows > 0
                && cols > 0
                && groups * cols <= LAST_GROUP_READS_PER_ITEM * launch.local[0].max(1),
        );
        if self.may_end_in_kernel() {
            let _ = self.counter.set(clfuse_core::groups_done_counter(
                clfuse_core::Runtime::get()?,
            )?);
        }
        Ok(())
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.product.1.bind(b);
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        let size = std::mem::size_of::<T>();
        let block_rows = self.block_rows.get().copied().unwrap_or(1);
        b.local(block_rows.max(1) * size);
        b.local(self.sums_len.get().copied().unwrap_or(1).max(1) * size);
        b.int(self.x_cols() as i32);
        let ending = self.may_end_in_kernel();
        if let Some(p) = self.partial.get() {
            // Read back by the last group, when the kernel has that ending.
            let access = if ending {
                Access::ReadWrite
            } else {
                Access::Write
            };
            b.matrix(p, access, false);
        }
        if ending {
            b.int(i32::from(
                self.last_group_sums.get().copied().unwrap_or(false),
            ));
            if let Some(counter) = self.counter.get() {
                b.matrix(counter, Access::ReadWrite, false);
            }
            b.matrix(self.target, Access::Write, false);
        }
        self.product.0.bind(b);
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let v = self.product.1.generate(g, &Index::work_item());
        values.push(convert::<V::Scalar, T>(&v));
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let t = T::CL_NAME;
        let v = values.next().cloned().unwrap_or_default();
        let block_values = g.local_param(t);
        let sums = g.local_param(t);
        let cols = g.value_param("int");
        let partial_id = Identity::Buffer(self.partial.get().map_or(u64::MAX, MatrixCl::buffer_id));
        let partial = g.buffer(partial_id, t, false);
        g.mark_written(partial_id);
        let ending = self.may_end_in_kernel().then(|| {
            let last_group_sums = g.value_param("int");
            // Before `prepare` (kernel_source) there is no counter yet; the
            // identity only has to be distinct from every bound buffer.
            let counter_id =
                Identity::Buffer(self.counter.get().map_or(u64::MAX - 1, MatrixCl::buffer_id));
            let done = g.buffer(counter_id, "int", false);
            g.mark_written(counter_id);
            let target_id = Identity::Buffer(self.target.buffer_id());
            let target = g.buffer(target_id, t, false);
            g.mark_written(target_id);
            (last_group_sums, done, target)
        });
        g.use_local_ids();
        let names = Names {
            block_values,
            sums,
            cols,
            partial,
        };
        let staged = self
            .product
            .0
            .matrix()
            .and_then(|m| g.staged(Identity::Buffer(m.buffer_id())));
        match staged {
            Some(staged) => self.generate_staged(g, &staged, &v, &names),
            None => self.generate_generic(g, &v, &names),
        }
        if let Some((last_group_sums, done, target)) = ending {
            g.set_section(Section::After);
            self.generate_last_group_sums(g, &names, &last_group_sums, &done, &target);
            g.set_section(Section::Outputs);
        }
    }

    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        let Some(partial) = self.partial.get() else {
            return Ok(());
        };
        let _scope = clfuse_core::profile_scope("xᵀ·v: sums over work-groups");
        if self.target.rows() > 0 {
            if launch.rows == 0 {
                self.target.fill(T::default())?;
            } else if self.last_group_sums.get() != Some(&true) {
                // The second step: each column's sums over the work-groups,
                // one work-group per column, written straight into the target.
                run_direct(&ColwiseAssignment::<T, SumOp, _>::last_step(
                    self.target,
                    Load(MatrixRef::Borrowed(partial)),
                ))?;
            }
        }
        self.target.set_view(View::Entire);
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.target.buffer_id());
    }

    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        // Like the other reductions, the target is written only after the
        // kernel (by the second step): run it alone first.
        run_direct(&TransposeProductAssignment::new(
            self.target,
            TransposeVectorMultiply(&self.product.0, &self.product.1),
        ))
    }

    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch_shape::LaunchShape;
    use crate::prelude::*;
    use clfuse_core::Runtime;

    /// Whether the kernel's last group, not a second kernel, would add up
    /// the groups' sums of `xᵀ·v` for this `x`.
    fn ends_in_kernel(x: &MatrixCl<f64>, v: &MatrixCl<f64>) -> Result<bool> {
        let target = MatrixCl::<f64>::uninitialized(x.cols(), 1)?;
        let assignment =
            TransposeProductAssignment::new(&target, transpose_vector_multiply(x, v).0);
        let launch = LaunchShape::choose(x.rows(), 1, assignment.schedule(), Runtime::get()?);
        assignment.prepare(&launch)?;
        Ok(assignment.last_group_sums.get() == Some(&true))
    }

    #[test]
    fn the_last_group_or_a_second_kernel_adds_up_the_groups_sums() -> Result<()> {
        let mut ends = Vec::new();
        // One group, several groups, and several groups of many columns
        // (too many sums for one group to add up: a second kernel).
        for (n, p) in [(1, 4), (33, 5), (100_003, 3), (2_001, 7), (256, 4_096)] {
            let xs: Vec<f64> = (0..n * p).map(|k| ((k * 7) % 13) as f64 - 6.0).collect();
            let vs: Vec<f64> = (0..n).map(|i| ((i * 5) % 11) as f64 / 4.0 - 1.0).collect();
            let x = MatrixCl::from_slice(n, p, &xs)?;
            let v = MatrixCl::from_slice(n, 1, &vs)?;
            ends.push(ends_in_kernel(&x, &v)?);
            // Twice: the second launch finds the counter set back to zero.
            for _ in 0..2 {
                let got = transpose_vector_multiply(&x, &v).eval()?.to_vec()?;
                for (j, got) in got.iter().enumerate() {
                    let want: f64 = (0..n).map(|i| xs[i + n * j] * vs[i]).sum();
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                        "{n} x {p}, column {j}: {got} against {want}"
                    );
                }
            }
        }
        // CPUs leave the ending out unless asked (`FUSION_LAST_GROUP_SUMS=1`).
        let rt = Runtime::get()?;
        let may = rt.on_gpus_unless_set(rt.tuning().last_group_sums);
        assert_eq!(ends.contains(&true), may, "{ends:?}");
        // The widest needs more than two groups to leave it to a second kernel.
        if !may || rt.device_info().compute_units >= 2 {
            assert!(ends.contains(&false), "{ends:?}");
        }
        Ok(())
    }
}
