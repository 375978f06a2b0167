//! Structural operations: blocks, transposes, diagonals, broadcasts,
//! concatenation and indexing. Each computes its operand at a transformed
//! index; none moves data by itself.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::hoisted::Hoisted;
use crate::operation::{Operation, Shape};
use crate::rev::Depends;
use crate::rev::{Both, Dual};
use clfuse_core::{ClType, Error, Expr, IntoOperand, Promote, Result, View};

/// Whether `start .. start + len` lies inside `0 .. limit` (checked: an
/// offset near `usize::MAX` does not wrap around).
pub(crate) fn fits(start: usize, len: usize, limit: usize) -> bool {
    start.checked_add(len).is_some_and(|end| end <= limit)
}

/// `a + b` for a concatenation's size, or an error instead of wrapping.
fn concatenated(function: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_add(b).ok_or_else(|| Error::InvalidArgument {
        function,
        argument: "a, b",
        reason: format!("{a} + {b} overflows"),
    })
}

fn shape_or_err(function: &'static str, s: Shape, what: &str) -> Result<(usize, usize)> {
    s.ok_or_else(|| Error::InvalidArgument {
        function,
        argument: "expr",
        reason: format!("{what} needs a matrix operand, not a scalar"),
    })
}

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

impl<E: Depends> Depends for Block<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for Block<E> {
    type Scalar = E::Scalar;
    type Key = Block<E::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let r = g.value_param("int");
        let c = g.value_param("int");
        self.inner.generate_tangents(
            g,
            &Index::new(format!("({} + {r})", at.i), format!("({} + {c})", at.j)),
        )
    }

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

    fn evaluate_leaves(&self) -> Result<()> {
        self.inner.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}

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

impl<E: Depends> Depends for Transpose<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for Transpose<E> {
    type Scalar = E::Scalar;
    type Key = Transpose<E::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.0
            .generate_tangents(g, &Index::new(at.j.clone(), at.i.clone()))
    }

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

    fn evaluate_leaves(&self) -> Result<()> {
        self.0.evaluate_leaves()?;
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

impl<E: Depends> Depends for Diagonal<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for Diagonal<E> {
    type Scalar = E::Scalar;
    type Key = Diagonal<E::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.0
            .generate_tangents(g, &Index::new(at.i.clone(), at.i.clone()))
    }

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

    fn evaluate_leaves(&self) -> Result<()> {
        self.0.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction()
    }
}

/// A row vector repeated down `rows` rows: the node built by [`rowwise_broadcast()`].
#[derive(Debug, Clone)]
pub struct RowwiseBroadcast<E> {
    /// The `1 x cols` operand (evaluated apart when it contains a reduction).
    pub inner: Hoisted<E>,
    /// Rows of the result.
    pub rows: usize,
}

/// Repeats the row vector `a` (1 x n) to `rows x n`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(1, 2, &[1, 2])?;
/// assert_eq!(rowwise_broadcast(&v, 3).eval()?.to_vec()?, vec![1, 1, 1, 2, 2, 2]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn rowwise_broadcast<A: IntoOperand>(a: A, rows: usize) -> Expr<RowwiseBroadcast<A::Operand>> {
    Expr(RowwiseBroadcast {
        inner: Hoisted::new(a.into_operand()),
        rows,
    })
}

impl<E: Depends> Depends for RowwiseBroadcast<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for RowwiseBroadcast<E> {
    type Scalar = E::Scalar;
    type Key = RowwiseBroadcast<E::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.inner
            .generate_tangents(g, &Index::new("0", at.j.clone()))
    }

    fn shape(&self) -> Result<Shape> {
        let (r, c) = shape_or_err(
            "rowwise_broadcast",
            self.inner.shape()?,
            "rowwise_broadcast",
        )?;
        if r != 1 {
            return Err(Error::DimensionMismatch {
                operation: "rowwise_broadcast (needs one row)".into(),
                lhs: (1, c),
                rhs: (r, c),
            });
        }
        Ok(Some((self.rows, c)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.inner.generate(g, &Index::new("0", at.j.clone()))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.inner.bind(b)
    }

    fn evaluate_leaves(&self) -> Result<()> {
        self.inner.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}

/// A column vector repeated across `cols` columns: the node built by [`colwise_broadcast()`].
#[derive(Debug, Clone)]
pub struct ColwiseBroadcast<E> {
    /// The `rows x 1` operand (evaluated apart when it contains a reduction).
    pub inner: Hoisted<E>,
    /// Columns of the result.
    pub cols: usize,
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
    Expr(ColwiseBroadcast {
        inner: Hoisted::new(a.into_operand()),
        cols,
    })
}

impl<E: Depends> Depends for ColwiseBroadcast<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for ColwiseBroadcast<E> {
    type Scalar = E::Scalar;
    type Key = ColwiseBroadcast<E::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.inner
            .generate_tangents(g, &Index::new(at.i.clone(), "0"))
    }

    fn shape(&self) -> Result<Shape> {
        let (r, c) = shape_or_err(
            "colwise_broadcast",
            self.inner.shape()?,
            "colwise_broadcast",
        )?;
        if c != 1 {
            return Err(Error::DimensionMismatch {
                operation: "colwise_broadcast (needs one column)".into(),
                lhs: (r, 1),
                rhs: (r, c),
            });
        }
        Ok(Some((r, self.cols)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.inner.generate(g, &Index::new(at.i.clone(), "0"))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.inner.bind(b)
    }

    fn evaluate_leaves(&self) -> Result<()> {
        self.inner.evaluate_leaves()?;
        Ok(())
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

impl<E: Depends> Depends for OptionalBroadcast<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for OptionalBroadcast<E> {
    type Scalar = E::Scalar;
    type Key = OptionalBroadcast<E::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let broadcast_rows = g.value_param("int");
        let broadcast_cols = g.value_param("int");
        self.inner.generate_tangents(
            g,
            &Index::new(
                format!("({broadcast_rows} ? 0 : {})", at.i),
                format!("({broadcast_cols} ? 0 : {})", at.j),
            ),
        )
    }

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

    fn evaluate_leaves(&self) -> Result<()> {
        self.inner.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}

/// `a` on top of `b`: the node built by [`append_row()`].
#[derive(Debug, Clone, Copy)]
pub struct AppendRow<A, B>(pub A, pub B);

/// `a` on top of `b` (same number of columns).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1, 2])?;
/// let b = MatrixCl::from_slice(1, 2, &[3, 4])?;
/// assert_eq!(append_row(&a, &b).eval()?.to_vec()?, vec![1, 3, 2, 4]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn append_row<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<AppendRow<A::Operand, B::Operand>> {
    Expr(AppendRow(a.into_operand(), b.into_operand()))
}

/// `a` left of `b`: the node built by [`append_col()`].
#[derive(Debug, Clone, Copy)]
pub struct AppendCol<A, B>(pub A, pub B);

/// `a` left of `b` (same number of rows).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[1, 2])?;
/// let b = MatrixCl::from_slice(2, 1, &[3, 4])?;
/// assert_eq!(append_col(&a, &b).eval()?.to_vec()?, vec![1, 2, 3, 4]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn append_col<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<AppendCol<A::Operand, B::Operand>> {
    Expr(AppendCol(a.into_operand(), b.into_operand()))
}

/// Emits `result = first ? a(at_a) : b(at_b)` with each branch in its own scope.
fn branch<A: Operation, B: Operation, T: ClType>(
    g: &mut Generator,
    condition: &str,
    a: (&A, Index),
    b: (&B, Index),
) -> String {
    let var = g.declare(T::CL_NAME, "0");
    g.statement(&format!("if ({condition}) {{"));
    g.open_scope();
    let x = a.0.generate(g, &a.1);
    g.statement(&format!("{var} = {x};"));
    g.close_scope();
    g.statement("} else {");
    g.open_scope();
    let y = b.0.generate(g, &b.1);
    g.statement(&format!("{var} = {y};"));
    g.close_scope();
    g.statement("}");
    var
}

/// [`branch`] with tangents: the tangents (and scattered indices) computed
/// inside either branch are hoisted into variables declared before it.
fn branch_tangents<A: Operation, B: Operation, T: ClType>(
    g: &mut Generator,
    condition: &str,
    a: (&A, Index),
    b: (&B, Index),
) -> Result<Dual> {
    let var = g.declare(T::CL_NAME, "0");
    let mut point = g.insertion_point();
    let mut hoisted = Vec::new();
    g.statement(&format!("if ({condition}) {{"));
    g.open_scope();
    let x = a.0.generate_tangents(g, &a.1)?;
    g.statement(&format!("{var} = {};", x.value));
    crate::rev::hoist(g, &mut point, T::CL_NAME, &x, &mut hoisted);
    g.close_scope();
    g.statement("} else {");
    g.open_scope();
    let y = b.0.generate_tangents(g, &b.1)?;
    g.statement(&format!("{var} = {};", y.value));
    crate::rev::hoist(g, &mut point, T::CL_NAME, &y, &mut hoisted);
    g.close_scope();
    g.statement("}");
    Ok(Dual {
        value: var,
        tangents: hoisted,
    })
}

impl<A: Depends, B: Depends> Depends for AppendRow<A, B> {
    type Dependence = Both<A::Dependence, B::Dependence>;
}

impl<A: Operation, B: Operation> Operation for AppendRow<A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
    type Key = AppendRow<A::Key, B::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let top_rows = g.value_param("int");
        let lower = Index::new(format!("({} - {top_rows})", at.i), at.j.clone());
        branch_tangents::<A, B, Self::Scalar>(
            g,
            &format!("{} < {top_rows}", at.i),
            (&self.0, at.clone()),
            (&self.1, lower),
        )
    }

    fn shape(&self) -> Result<Shape> {
        let a = shape_or_err("append_row", self.0.shape()?, "append_row")?;
        let b = shape_or_err("append_row", self.1.shape()?, "append_row")?;
        if a.1 != b.1 {
            return Err(Error::DimensionMismatch {
                operation: "append_row (columns)".into(),
                lhs: a,
                rhs: b,
            });
        }
        Ok(Some((concatenated("append_row", a.0, b.0)?, a.1)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let top_rows = g.value_param("int");
        let lower = Index::new(format!("({} - {top_rows})", at.i), at.j.clone());
        branch::<A, B, Self::Scalar>(
            g,
            &format!("{} < {top_rows}", at.i),
            (&self.0, at.clone()),
            (&self.1, lower),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        let rows = self.0.shape().ok().flatten().map_or(0, |s| s.0);
        b.int(rows as i32);
        self.0.bind(b);
        self.1.bind(b);
    }

    fn evaluate_leaves(&self) -> Result<()> {
        self.0.evaluate_leaves()?;
        self.1.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction() || self.1.contains_reduction()
    }
}

impl<A: Depends, B: Depends> Depends for AppendCol<A, B> {
    type Dependence = Both<A::Dependence, B::Dependence>;
}

impl<A: Operation, B: Operation> Operation for AppendCol<A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
    type Key = AppendCol<A::Key, B::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let left_cols = g.value_param("int");
        let right = Index::new(at.i.clone(), format!("({} - {left_cols})", at.j));
        branch_tangents::<A, B, Self::Scalar>(
            g,
            &format!("{} < {left_cols}", at.j),
            (&self.0, at.clone()),
            (&self.1, right),
        )
    }

    fn shape(&self) -> Result<Shape> {
        let a = shape_or_err("append_col", self.0.shape()?, "append_col")?;
        let b = shape_or_err("append_col", self.1.shape()?, "append_col")?;
        if a.0 != b.0 {
            return Err(Error::DimensionMismatch {
                operation: "append_col (rows)".into(),
                lhs: a,
                rhs: b,
            });
        }
        Ok(Some((a.0, concatenated("append_col", a.1, b.1)?)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let left_cols = g.value_param("int");
        let right = Index::new(at.i.clone(), format!("({} - {left_cols})", at.j));
        branch::<A, B, Self::Scalar>(
            g,
            &format!("{} < {left_cols}", at.j),
            (&self.0, at.clone()),
            (&self.1, right),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        let cols = self.0.shape().ok().flatten().map_or(0, |s| s.1);
        b.int(cols as i32);
        self.0.bind(b);
        self.1.bind(b);
    }

    fn evaluate_leaves(&self) -> Result<()> {
        self.0.evaluate_leaves()?;
        self.1.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction() || self.1.contains_reduction()
    }
}

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

impl<M: Depends, R: Depends, C: Depends> Depends for Indexing<M, R, C> {
    type Dependence = M::Dependence;
}

impl<M: Operation, R: Operation<Scalar = i32>, C: Operation<Scalar = i32>> Operation
    for Indexing<M, R, C>
{
    type Scalar = M::Scalar;
    type Key = Indexing<M::Key, R::Key, C::Key>;

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let r = self.row_index.generate(g, at);
        let c = self.col_index.generate(g, at);
        let (m_rows, m_cols) = (g.value_param("int"), g.value_param("int"));
        let var = g.declare(M::Scalar::CL_NAME, "0");
        let mut point = g.insertion_point();
        let mut hoisted = Vec::new();
        g.statement(&format!(
            "if ({r} >= 0 && {r} < {m_rows} && {c} >= 0 && {c} < {m_cols}) {{"
        ));
        g.open_scope();
        let x = self.matrix.generate_tangents(g, &Index::new(r, c))?;
        g.statement(&format!("{var} = {};", x.value));
        crate::rev::hoist(g, &mut point, M::Scalar::CL_NAME, &x, &mut hoisted);
        g.close_scope();
        g.statement("}");
        Ok(Dual {
            value: var,
            tangents: hoisted,
        })
    }

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

    fn evaluate_leaves(&self) -> Result<()> {
        self.row_index.evaluate_leaves()?;
        self.col_index.evaluate_leaves()?;
        self.matrix.evaluate_leaves()?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.row_index.contains_reduction()
            || self.col_index.contains_reduction()
            || self.matrix.contains_reduction()
    }
}
