//! Broadcasts: a vector repeated along rows or columns ([`Broadcast`]), or
//! any dimension of size 1 repeated, decided when the kernel runs
//! ([`OptionalBroadcast`]).

use super::shape_or_err;
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::hoisted::Hoisted;
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use clfuse_core::{Error, Expr, IntoOperand, Result, View};
use std::marker::PhantomData;

/// Which way a [`Broadcast`] repeats its operand: [`DownRows`] (a row
/// vector repeated down the rows) or [`AcrossColumns`] (a column vector
/// repeated across the columns).
pub trait BroadcastAxis: 'static {
    /// The function's name in errors.
    const FUNCTION: &'static str;
    /// The result's shape for an operand of shape `operand` repeated `count`
    /// times, or why the operand does not fit.
    fn result_shape(operand: (usize, usize), count: usize) -> Result<(usize, usize)>;
    /// Where the operand is read for the result's element `at`.
    fn operand_index(at: &Index) -> Index;
}

/// A `1 x n` row repeated down the rows ([`rowwise_broadcast()`]).
#[derive(Debug, Clone, Copy)]
pub struct DownRows;

/// An `n x 1` column repeated across the columns ([`colwise_broadcast()`]).
#[derive(Debug, Clone, Copy)]
pub struct AcrossColumns;

impl BroadcastAxis for DownRows {
    const FUNCTION: &'static str = "rowwise_broadcast";
    fn result_shape((r, c): (usize, usize), rows: usize) -> Result<(usize, usize)> {
        if r != 1 {
            return Err(Error::DimensionMismatch {
                operation: "rowwise_broadcast (needs one row)".into(),
                lhs: (1, c),
                rhs: (r, c),
            });
        }
        Ok((rows, c))
    }
    fn operand_index(at: &Index) -> Index {
        Index::new("0", at.j.clone())
    }
}

impl BroadcastAxis for AcrossColumns {
    const FUNCTION: &'static str = "colwise_broadcast";
    fn result_shape((r, c): (usize, usize), cols: usize) -> Result<(usize, usize)> {
        if c != 1 {
            return Err(Error::DimensionMismatch {
                operation: "colwise_broadcast (needs one column)".into(),
                lhs: (r, 1),
                rhs: (r, c),
            });
        }
        Ok((r, cols))
    }
    fn operand_index(at: &Index) -> Index {
        Index::new(at.i.clone(), "0")
    }
}

/// A vector repeated `count` times along axis `A`: the node built by
/// [`rowwise_broadcast()`] and [`colwise_broadcast()`].
#[derive(Debug, Clone)]
pub struct Broadcast<E, A> {
    /// The vector (evaluated apart when it contains a reduction).
    pub inner: Hoisted<E>,
    /// How many times it is repeated: rows for [`DownRows`], columns for
    /// [`AcrossColumns`].
    pub count: usize,
    axis: PhantomData<A>,
}

impl<E, A> Broadcast<E, A> {
    /// `inner` repeated `count` times along `A`.
    pub fn new(inner: E, count: usize) -> Self {
        Broadcast {
            inner: Hoisted::new(inner),
            count,
            axis: PhantomData,
        }
    }
}

/// A row vector repeated down the rows.
pub type RowwiseBroadcast<E> = Broadcast<E, DownRows>;
/// A column vector repeated across the columns.
pub type ColwiseBroadcast<E> = Broadcast<E, AcrossColumns>;

/// Repeats the row vector `a` (1 x n) to `rows x n`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(1, 2, &[1, 2])?;
/// assert_eq!(rowwise_broadcast(&v, 3).eval()?.to_vec()?, vec![1, 1, 1, 2, 2, 2]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn rowwise_broadcast<A: IntoOperand>(a: A, rows: usize) -> Expr<RowwiseBroadcast<A::Operand>> {
    Expr(Broadcast::new(a.into_operand(), rows))
}

/// Repeats the column vector `a` (n x 1) to `n x cols`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(2, 1, &[1, 2])?;
/// assert_eq!(colwise_broadcast(&v, 2).eval()?.to_vec()?, vec![1, 2, 1, 2]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn colwise_broadcast<A: IntoOperand>(a: A, cols: usize) -> Expr<ColwiseBroadcast<A::Operand>> {
    Expr(Broadcast::new(a.into_operand(), cols))
}

impl<E: Operation, A: BroadcastAxis> Operation for Broadcast<E, A> {
    type Scalar = E::Scalar;
    type Key = Broadcast<E::Key, A>;

    fn shape(&self) -> Result<Shape> {
        let operand = shape_or_err(A::FUNCTION, self.inner.shape()?, A::FUNCTION)?;
        A::result_shape(operand, self.count).map(Some)
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.inner.generate(g, &A::operand_index(at))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.inner.bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}

/// Broadcasts each dimension that is 1 to the requested size, decided when the
/// kernel runs (one kernel serves both cases): the node built by [`optional_broadcast()`].
#[derive(Debug, Clone)]
pub struct OptionalBroadcast<E> {
    /// The operand (evaluated apart when it contains a reduction).
    pub inner: Hoisted<E>,
    /// Rows of the result.
    pub rows: usize,
    /// Columns of the result.
    pub cols: usize,
}

/// `a` as a `rows x cols` matrix, repeating any dimension of `a` that is 1.
/// Useful where an argument may be a scalar-like vector or a full one (GLM
/// intercepts, per-observation scales).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let one = MatrixCl::from_slice(1, 1, &[2.0f64])?;
/// let many = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// assert_eq!(optional_broadcast(&one, 3, 1).eval()?.to_vec()?, vec![2.0; 3]);
/// assert_eq!(optional_broadcast(&many, 3, 1).eval()?.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn optional_broadcast<A: IntoOperand>(
    a: A,
    rows: usize,
    cols: usize,
) -> Expr<OptionalBroadcast<A::Operand>> {
    Expr(OptionalBroadcast {
        inner: Hoisted::new(a.into_operand()),
        rows,
        cols,
    })
}

impl<E: Operation> Operation for OptionalBroadcast<E> {
    type Scalar = E::Scalar;
    type Key = OptionalBroadcast<E::Key>;

    fn shape(&self) -> Result<Shape> {
        if let Some((r, c)) = self.inner.shape()?
            && ((r != self.rows && r != 1) || (c != self.cols && c != 1))
        {
            return Err(Error::DimensionMismatch {
                operation: "optional_broadcast".into(),
                lhs: (self.rows, self.cols),
                rhs: (r, c),
            });
        }
        Ok(Some((self.rows, self.cols)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let broadcast_rows = g.value_param("int");
        let broadcast_cols = g.value_param("int");
        self.inner.generate(
            g,
            &Index::new(
                format!("({broadcast_rows} ? 0 : {})", at.i),
                format!("({broadcast_cols} ? 0 : {})", at.j),
            ),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        let (r, c) = self.inner.shape().ok().flatten().unwrap_or((1, 1));
        b.int((r == 1 && self.rows != 1) as i32);
        b.int((c == 1 && self.cols != 1) as i32);
        self.inner.bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}
