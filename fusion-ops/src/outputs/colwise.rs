//! Column-wise reductions written into a `1 x cols` matrix: each work-group
//! reduces its rows in local memory; a second, one-group step combines the
//! groups' partial results.

use super::{OutputList, Schedule, common_grid};
use crate::binder::Binder;
use crate::driver::{run, run_direct};
use crate::generator::{Generator, Index, Section};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::reductions::{ColwiseReduction, ReduceOp};
use crate::templates::convert;
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, Error, MatrixCl, Result, View};
use std::any::Any;
use std::sync::OnceLock;

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
pub(crate) fn generate_group_reduction<R: ReduceOp>(
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

    fn schedule(&self) -> Schedule {
        Schedule {
            reduces: true,
            // A last step runs as one work-group, so that it writes its target directly.
            max_row_groups: if self.last_step { 1 } else { usize::MAX },
            ..Schedule::ELEMENTWISE
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.expr.evaluate_leaves(held)
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
