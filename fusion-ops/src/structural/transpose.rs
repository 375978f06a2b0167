//! The transpose and the diagonal: an operand read at a permuted index.

use super::shape_or_err;
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use clfuse_core::{Expr, IntoOperand, Result, View};

/// The transpose of an operand: the node built by [`transpose()`].
#[derive(Debug, Clone, Copy)]
pub struct Transpose<E>(pub E);

/// The transpose of `a`. Also an assignment target.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 3, &[1, 2, 3, 4, 5, 6])?;
/// let t = transpose(&m).eval()?;
/// assert_eq!((t.rows(), t.cols()), (3, 2));
/// assert_eq!(t.to_vec()?, vec![1, 3, 5, 2, 4, 6]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn transpose<A: IntoOperand>(a: A) -> Expr<Transpose<A::Operand>> {
    Expr(Transpose(a.into_operand()))
}

impl<E: Operation> Operation for Transpose<E> {
    type Scalar = E::Scalar;
    type Key = Transpose<E::Key>;

    fn shape(&self) -> Result<Shape> {
        Ok(self.0.shape()?.map(|(r, c)| (c, r)))
    }

    fn view(&self) -> View {
        self.0.view().transpose()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.0.generate(g, &Index::new(at.j.clone(), at.i.clone()))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction()
    }
}

/// The diagonal of an operand as a column vector: the node built by [`diagonal()`].
#[derive(Debug, Clone, Copy)]
pub struct Diagonal<E>(pub E);

/// The diagonal of `a` as a `min(rows, cols) x 1` column. Also an assignment target.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f32, 2.0, 3.0, 4.0])?;
/// assert_eq!(diagonal(&m).eval()?.to_vec()?, vec![1.0, 4.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn diagonal<A: IntoOperand>(a: A) -> Expr<Diagonal<A::Operand>> {
    Expr(Diagonal(a.into_operand()))
}

impl<E: Operation> Operation for Diagonal<E> {
    type Scalar = E::Scalar;
    type Key = Diagonal<E::Key>;

    fn shape(&self) -> Result<Shape> {
        let (r, c) = shape_or_err("diagonal", self.0.shape()?, "diagonal")?;
        Ok(Some((r.min(c), 1)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.0.generate(g, &Index::new(at.i.clone(), at.i.clone()))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction()
    }
}
