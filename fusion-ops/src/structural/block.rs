//! A block of an operand: its element at an offset index.

use super::fits;
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use clfuse_core::{Error, Expr, IntoOperand, Result, View};

/// A `rows x cols` block of an operand starting at (`row`, `col`): the node built by [`block()`].
#[derive(Debug, Clone, Copy)]
pub struct Block<E> {
    /// The operand.
    pub inner: E,
    /// First row.
    pub row: usize,
    /// First column.
    pub col: usize,
    /// Rows of the block.
    pub rows: usize,
    /// Columns of the block.
    pub cols: usize,
}

/// A block of `a`: rows `row..row + rows`, columns `col..col + cols`. Also an
/// assignment target (`block(&m, ..).assign(expr)`).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(3, 3, &[1.0f64, 2., 3., 4., 5., 6., 7., 8., 9.])?;
/// assert_eq!(block(&m, 1, 1, 2, 2).eval()?.to_vec()?, vec![5.0, 6.0, 8.0, 9.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn block<A: IntoOperand>(
    a: A,
    row: usize,
    col: usize,
    rows: usize,
    cols: usize,
) -> Expr<Block<A::Operand>> {
    Expr(Block {
        inner: a.into_operand(),
        row,
        col,
        rows,
        cols,
    })
}

impl<E: Operation> Operation for Block<E> {
    type Scalar = E::Scalar;
    type Key = Block<E::Key>;

    fn shape(&self) -> Result<Shape> {
        if let Some((r, c)) = self.inner.shape()?
            && !(fits(self.row, self.rows, r) && fits(self.col, self.cols, c))
        {
            return Err(Error::InvalidArgument {
                function: "block",
                argument: "row/col/rows/cols",
                reason: format!(
                    "block ({}, {}) of size {} x {} does not fit in a {r} x {c} operand",
                    self.row, self.col, self.rows, self.cols
                ),
            });
        }
        Ok(Some((self.rows, self.cols)))
    }

    fn view(&self) -> View {
        // Same diagonal: the triangle is kept; otherwise be conservative.
        if self.row == self.col {
            self.inner.view()
        } else {
            View::Entire
        }
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let r = g.value_param("int");
        let c = g.value_param("int");
        self.inner.generate(
            g,
            &Index::new(format!("({} + {r})", at.i), format!("({} + {c})", at.j)),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.int(self.row as i32);
        b.int(self.col as i32);
        self.inner.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}
