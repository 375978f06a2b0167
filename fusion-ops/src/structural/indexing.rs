//! Gathers by integer index expressions (and, as a target, scatters).

use super::shape_or_err;
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use clfuse_core::{ClType, Expr, IntoOperand, Result, View};

/// Gathers `m(row_index(i, j), col_index(i, j))`: the node built by [`indexing()`].
#[derive(Debug, Clone, Copy)]
pub struct Indexing<M, R, C> {
    /// The indexed operand.
    pub matrix: M,
    /// Row indices (an `int` expression).
    pub row_index: R,
    /// Column indices (an `int` expression).
    pub col_index: C,
}

/// Gather: element `(i, j)` is `m(rows(i, j), cols(i, j))`, with `rows` and
/// `cols` integer expressions (scalars broadcast). Out-of-range indices read 0.
///
/// As an assignment target it scatters. Every index is checked on the
/// device before anything is written: one out of range (negative, or not
/// below the matrix's rows or columns) is an `Err(TargetOutOfRange)` and the
/// matrix is left as it was. Repeated indices race: which of the elements
/// written to one position wins is unspecified, and a compound form
/// (`add_assign`) adds only one of them, not their sum.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(3, 1, &[10.0f64, 20.0, 30.0])?;
/// let idx = MatrixCl::from_slice(4, 1, &[2, 0, 0, 1])?;
/// assert_eq!(indexing(&m, &idx, 0).eval()?.to_vec()?, vec![30.0, 10.0, 10.0, 20.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn indexing<M: IntoOperand, R: IntoOperand, C: IntoOperand>(
    m: M,
    rows: R,
    cols: C,
) -> Expr<Indexing<M::Operand, R::Operand, C::Operand>> {
    Expr(Indexing {
        matrix: m.into_operand(),
        row_index: rows.into_operand(),
        col_index: cols.into_operand(),
    })
}

impl<M: Operation, R: Operation<Scalar = i32>, C: Operation<Scalar = i32>> Operation
    for Indexing<M, R, C>
{
    type Scalar = M::Scalar;
    type Key = Indexing<M::Key, R::Key, C::Key>;

    fn shape(&self) -> Result<Shape> {
        shape_or_err("indexing", self.matrix.shape()?, "indexing")?;
        crate::operation::combine_shapes(
            "indexing",
            self.row_index.shape()?,
            self.col_index.shape()?,
        )
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let r = self.row_index.generate(g, at);
        let c = self.col_index.generate(g, at);
        let (m_rows, m_cols) = (g.value_param("int"), g.value_param("int"));
        let var = g.declare(M::Scalar::CL_NAME, "0");
        g.statement(&format!(
            "if ({r} >= 0 && {r} < {m_rows} && {c} >= 0 && {c} < {m_cols}) {{"
        ));
        g.open_scope();
        let x = self.matrix.generate(g, &Index::new(r, c));
        g.statement(&format!("{var} = {x};"));
        g.close_scope();
        g.statement("}");
        var
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.row_index.bind(b);
        self.col_index.bind(b);
        let (r, c) = self.matrix.shape().ok().flatten().unwrap_or((0, 0));
        b.int(r as i32);
        b.int(c as i32);
        self.matrix.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.row_index.evaluate_leaves(held)?;
        self.col_index.evaluate_leaves(held)?;
        self.matrix.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.row_index.contains_reduction()
            || self.col_index.contains_reduction()
            || self.matrix.contains_reduction()
    }
}
