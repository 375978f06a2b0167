//! The row-wise softmax as one kernel: each work item owns one row, walks
//! it once for the running log-sum-exp and once more to write
//! `exp(x - lse)`. The operand is fused into both walks (generated twice,
//! at the two loops' indices), so nothing is stored in between.

use super::{OutputList, Schedule, common_grid};
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::reductions::{LogSumExpOp, RowReduce};
use crate::targets::Target;
use clfuse_core::{ClType, Error, MatrixCl, Result};

/// Writes each row's softmax of `expr` to `target` (the same shape) in one
/// kernel of one work item per row.
#[derive(Debug)]
pub(crate) struct RowSoftmaxAssignment<'t, T: ClType, E> {
    target: &'t MatrixCl<T>,
    expr: E,
}

impl<'t, T: ClType, E: Operation<Scalar = T>> RowSoftmaxAssignment<'t, T, E> {
    pub(crate) fn new(target: &'t MatrixCl<T>, expr: E) -> Self {
        RowSoftmaxAssignment { target, expr }
    }

    fn cols(&self) -> usize {
        self.target.cols()
    }

    /// `for (int k = 0; k < cols; k++) {`, with the expression's element
    /// (i, k) generated inside; returns its value. The caller closes the loop.
    fn open_row_loop(&self, g: &mut Generator) -> (String, Index) {
        let cols = g.value_param("int");
        let k = g.fresh();
        g.statement(&format!("for (int {k} = 0; {k} < {cols}; {k}++) {{"));
        g.open_scope();
        let at = Index::new(Index::work_item().i, k);
        (self.expr.generate(g, &at), at)
    }

    fn close_row_loop(g: &mut Generator) {
        g.close_scope();
        g.statement("}");
    }

    fn bind_row_loop<'a>(&'a self, b: &mut Binder<'a>) {
        b.int(self.cols() as i32);
        self.expr.bind(b);
    }
}

impl<'t, T: ClType, E: Operation<Scalar = T>> OutputList for RowSoftmaxAssignment<'t, T, E> {
    type Key = (RowSoftmaxAssignment<'static, T, ()>, E::Key);

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let target = (self.target.rows(), self.target.cols());
        if let Some(shape) = self.expr.shape()?
            && shape != target
        {
            return Err(Error::DimensionMismatch {
                operation: "rowwise_softmax".into(),
                lhs: target,
                rhs: shape,
            });
        }
        // One work item per row; an empty row has nothing to write.
        let rows = if target.1 == 0 { 0 } else { target.0 };
        common_grid(grid, (rows, 1))
    }

    fn schedule(&self) -> Schedule {
        Schedule::ELEMENTWISE
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.expr.evaluate_leaves(held)
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        Target::prepare(&self.target, clfuse_core::View::Entire)
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.bind_row_loop(b);
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        self.bind_row_loop(b);
        Target::bind(&self.target, b);
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let t = T::CL_NAME;
        let acc = LogSumExpOp::begin(g, t);
        let (x, _) = self.open_row_loop(g);
        LogSumExpOp::step(g, t, &acc, &x);
        Self::close_row_loop(g);
        values.push(LogSumExpOp::finish(g, t, &acc));
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let lse = values.next().cloned().unwrap_or_default();
        let (x, at) = self.open_row_loop(g);
        Target::store(&self.target, g, &at, &format!("exp({x} - {lse})"));
        Self::close_row_loop(g);
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Target::finish(&self.target, clfuse_core::View::Entire);
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.target.buffer_id());
    }
}
