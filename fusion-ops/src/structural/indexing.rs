//! Gathers by integer index expressions (and, as a target, scatters).

use super::{Block, shape_or_err};
use crate::binder::Binder;
use crate::binder::GatherCheck;
use crate::driver::eval_direct;
use crate::gather_checks::{guarded_read_end, guarded_read_start};
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::combine_shapes;
use crate::operation::{Operation, Shape};
use clfuse_core::{ClType, Error, Expr, IntoOperand, Result, View};

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
/// `cols` integer expressions (scalars broadcast).
///
/// Every index is checked by the kernel that reads through it (an
/// assignment, a reduction, a variable's forward kernel): one out of range
/// (negative, or not below the matrix's rows or columns) is an
/// `Err(IndexOutOfRange)` naming the element of the result where it was
/// first found (in column-major order), the index (`rows` or `cols`), its
/// value and the matrix's size. The kernel never reads outside the matrix
/// (it reads 0 there and goes on); as with a failed [`check`](crate::check),
/// the outputs of that kernel then hold unspecified values, so an
/// assignment's target may have been partly written. With several gathers
/// in one kernel, the first one (in the expression's order) that found a
/// bad index is reported; a failed check of the same kernel is reported
/// before it. Valid indices cost the read-back of two flags per gather.
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
///
/// // Row index 3 of a 3 x 1 matrix, at element [1, 0] of the result:
/// let bad = MatrixCl::from_slice(2, 1, &[0, 3])?;
/// let err = indexing(&m, &bad, 0).eval().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "indexing: rows[1, 0] is 3, but must be in 0..3 to index a 3 x 1 matrix"
/// );
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
        let read = guarded_read_start(g, self.node(), &r, &c, M::Scalar::CL_NAME);
        read.open(g);
        g.open_scope();
        let x = self.matrix.generate(g, &Index::new(r, c));
        g.statement(&format!("{} = {x};", read.var));
        g.close_scope();
        guarded_read_end(g, &read, at);
        read.var
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.row_index.bind(b);
        self.col_index.bind(b);
        let (r, c) = self.matrix.shape().ok().flatten().unwrap_or((0, 0));
        b.int(r as i32);
        b.int(c as i32);
        b.gather(self.node(), self);
        b.int(self.result_rows() as i32);
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

impl<M, R, C> Indexing<M, R, C> {
    /// The node's identity in a kernel: its address.
    pub(crate) fn node(&self) -> usize {
        self as *const Self as usize
    }
}

impl<M: Operation, R: Operation<Scalar = i32>, C: Operation<Scalar = i32>> Indexing<M, R, C> {
    /// The shape of the result: the indices'.
    fn index_shape(&self) -> Result<Shape> {
        combine_shapes("indexing", self.row_index.shape()?, self.col_index.shape()?)
    }

    /// The rows of the result (1 for a scalar's).
    pub(crate) fn result_rows(&self) -> usize {
        match self.index_shape() {
            Ok(Some((rows, _))) => rows,
            _ => 1,
        }
    }
}

/// Element `(row, col)` of the index expression `index` (a scalar's value).
fn index_at<I: Operation<Scalar = i32>>(index: &I, row: usize, col: usize) -> Result<i64> {
    let value = match index.shape()? {
        None => eval_direct(index)?,
        Some(_) => eval_direct(Block {
            inner: index,
            row,
            col,
            rows: 1,
            cols: 1,
        })?,
    };
    Ok(value.to_vec()?.first().map_or(0, |&v| i64::from(v)))
}

impl<M: Operation, R: Operation<Scalar = i32>, C: Operation<Scalar = i32>> GatherCheck
    for Indexing<M, R, C>
{
    fn failure(&self, column: bool, first: i32) -> Error {
        let first = usize::try_from(first).unwrap_or(0);
        let (row, col) = match self.index_shape() {
            Ok(Some((rows, _))) if rows > 0 => (first % rows, first / rows),
            _ => (0, 0),
        };
        let (rows, cols) = self.matrix.shape().ok().flatten().unwrap_or((0, 0));
        let (argument, bound, value) = if column {
            ("cols", cols, index_at(&self.col_index, row, col))
        } else {
            ("rows", rows, index_at(&self.row_index, row, col))
        };
        match value {
            Ok(value) => Error::IndexOutOfRange {
                function: "indexing",
                argument,
                row,
                col,
                value,
                bound,
                rows,
                cols,
            },
            Err(e) => e,
        }
    }
}
