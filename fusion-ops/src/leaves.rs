//! Leaves: matrices, scalars, shared sub-expressions, constants and indices.

use crate::binder::{Binder, Identity};
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use clfuse_core::expr::MatrixRef;
use clfuse_core::expr::{Load, Scalar, Shared};
use clfuse_core::{Access, ClType, Expr, MatrixCl, Result, View};

impl<T: ClType> Operation for Load<'_, T> {
    type Scalar = T;
    type Key = Load<'static, T>;

    fn shape(&self) -> Result<Shape> {
        Ok(Some((self.0.rows(), self.0.cols())))
    }

    fn view(&self) -> View {
        self.0.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let identity = Identity::Buffer(self.0.buffer_id());
        g.note_read(identity, at);
        if let Some(var) = g.known(identity, at) {
            return var;
        }
        let base = g.buffer(identity, T::CL_NAME, true);
        if *at == Index::work_item()
            && let Some(var) = g.prefetched_row_load(identity, &base, T::CL_NAME)
        {
            g.remember(identity, at, &var);
            return var;
        }
        // The first read at the work item's own position is named after the
        // buffer (`var1` from `var1_global`), as a person would write it.
        let var = if *at == Index::work_item() && !g.is_declared(&base) {
            base.clone()
        } else {
            g.fresh()
        };
        let (i, j) = (&at.i, &at.j);
        g.mark_declared(&var);
        g.statement(&format!("{} {var} = 0;", T::CL_NAME));
        g.statement(&format!("if (in_view({i}, {j}, {base}_view)) {{"));
        g.statement(&format!("{var} = {base}_global[{i} + {base}_rows * {j}];"));
        g.statement("}");
        g.remember(identity, at, &var);
        var
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.matrix(&self.0, Access::Read, true);
    }

    fn matrix(&self) -> Option<&MatrixCl<T>> {
        Some(&self.0)
    }
}

impl<T: ClType> Operation for Scalar<T> {
    type Scalar = T;
    type Key = Scalar<T>;

    fn shape(&self) -> Result<Shape> {
        Ok(None)
    }

    fn view(&self) -> View {
        // A value is never a structural zero: `0.0 * x` must keep x's NaN
        // and inf (IEEE), so nothing may be skipped because of it.
        View::Entire
    }

    fn generate(&self, g: &mut Generator, _at: &Index) -> String {
        g.value_param(T::CL_NAME)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.scalar(self.0);
    }
}

impl<O: Operation> Operation for Shared<'_, O> {
    type Scalar = O::Scalar;
    type Key = Shared<'static, O::Key>;

    fn shape(&self) -> Result<Shape> {
        self.0.shape()
    }

    fn view(&self) -> View {
        self.0.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let identity = Identity::Shared(self.0 as *const O as usize);
        if let Some(var) = g.known(identity, at) {
            return var;
        }
        let var = g.shared_subtree(identity, |g| self.0.generate(g, at));
        g.remember(identity, at, &var);
        var
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if b.first_use(Identity::Shared(self.0 as *const O as usize)) {
            self.0.bind(b);
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction()
    }

    fn matrix(&self) -> Option<&MatrixCl<O::Scalar>> {
        self.0.matrix()
    }

    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        self.0.epilogue_product()
    }
}

/// A `rows x cols` matrix with every element `value` (never stored).
#[derive(Debug, Clone, Copy)]
pub struct Constant<T: ClType> {
    value: T,
    rows: usize,
    cols: usize,
}

/// A lazy `rows x cols` matrix of `value`s.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = constant(2.5f64, 2, 3).eval()?;
/// assert_eq!(m.to_vec()?, vec![2.5; 6]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn constant<T: ClType>(value: T, rows: usize, cols: usize) -> Expr<Constant<T>> {
    Expr(Constant { value, rows, cols })
}

impl<T: ClType> Operation for Constant<T> {
    type Scalar = T;
    type Key = Constant<T>;

    fn shape(&self) -> Result<Shape> {
        Ok(Some((self.rows, self.cols)))
    }

    fn view(&self) -> View {
        // As for `Scalar`: a zero value is not a structural zero.
        View::Entire
    }

    fn generate(&self, g: &mut Generator, _at: &Index) -> String {
        g.value_param(T::CL_NAME)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.scalar(self.value);
    }
}

/// The row index `i` of each element of a `rows x cols` matrix.
#[derive(Debug, Clone, Copy)]
pub struct RowIndex {
    rows: usize,
    cols: usize,
}

/// The column index `j` of each element of a `rows x cols` matrix.
#[derive(Debug, Clone, Copy)]
pub struct ColIndex {
    rows: usize,
    cols: usize,
}

/// A lazy `rows x cols` matrix whose element `(i, j)` is `i`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// assert_eq!(row_index(2, 2).eval()?.to_vec()?, vec![0, 1, 0, 1]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn row_index(rows: usize, cols: usize) -> Expr<RowIndex> {
    Expr(RowIndex { rows, cols })
}

/// A lazy `rows x cols` matrix whose element `(i, j)` is `j`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// assert_eq!(col_index(2, 2).eval()?.to_vec()?, vec![0, 0, 1, 1]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn col_index(rows: usize, cols: usize) -> Expr<ColIndex> {
    Expr(ColIndex { rows, cols })
}

macro_rules! index_leaf {
    ($ty:ident, $field:ident) => {
        impl Operation for $ty {
            type Scalar = i32;
            type Key = $ty;

            fn shape(&self) -> Result<Shape> {
                Ok(Some((self.rows, self.cols)))
            }

            fn view(&self) -> View {
                View::Entire
            }

            fn generate(&self, _g: &mut Generator, at: &Index) -> String {
                at.$field.clone()
            }

            fn bind<'a>(&'a self, _b: &mut Binder<'a>) {}
        }
    };
}
index_leaf!(RowIndex, i);
index_leaf!(ColIndex, j);

/// One value per row that is either the same for every row, passed as a
/// kernel argument (no buffer, no upload), or a column read per row: a
/// model parameter given as a scalar or per observation. Which one is part
/// of the kernel's structure; the scalar's value is not.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let doubled = elt_multiply(&x, scalar_or_column(ScalarOrColumn::Scalar(2.0))).eval()?;
/// assert_eq!(doubled.to_vec()?, vec![2.0, 4.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[derive(Debug)]
pub enum ScalarOrColumn<'a, T: ClType> {
    /// Every row's value (shape: a scalar, broadcast like one).
    Scalar(T),
    /// An `n x 1` column, one value per row.
    Column(&'a MatrixCl<T>),
    /// Every row's value, read from a `1 x 1` device matrix: a column of
    /// this many rows holding it.
    Broadcast(&'a MatrixCl<T>, usize),
}

/// A lazy scalar-or-column value; see [`ScalarOrColumn`].
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let shift = MatrixCl::from_slice(3, 1, &[10.0f64, 20.0, 30.0])?;
/// let same = (&x + scalar_or_column(ScalarOrColumn::Scalar(0.5))).eval()?;
/// let per_row = (&x + scalar_or_column(ScalarOrColumn::Column(&shift))).eval()?;
/// assert_eq!(same.to_vec()?, vec![1.5, 2.5, 3.5]);
/// assert_eq!(per_row.to_vec()?, vec![11.0, 22.0, 33.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn scalar_or_column<T: ClType>(value: ScalarOrColumn<'_, T>) -> Expr<ScalarOrColumn<'_, T>> {
    Expr(value)
}

impl<T: ClType> Operation for ScalarOrColumn<'_, T> {
    type Scalar = T;
    type Key = ScalarOrColumn<'static, T>;

    fn shape(&self) -> Result<Shape> {
        Ok(match self {
            ScalarOrColumn::Scalar(_) => None,
            ScalarOrColumn::Column(m) => Some((m.rows(), m.cols())),
            ScalarOrColumn::Broadcast(_, rows) => Some((*rows, 1)),
        })
    }

    fn view(&self) -> View {
        match self {
            ScalarOrColumn::Scalar(_) | ScalarOrColumn::Broadcast(..) => View::Entire,
            ScalarOrColumn::Column(m) => m.view(),
        }
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        match self {
            ScalarOrColumn::Scalar(_) => g.value_param(T::CL_NAME),
            ScalarOrColumn::Column(m) => Load(MatrixRef::Borrowed(m)).generate(g, at),
            ScalarOrColumn::Broadcast(m, _) => {
                Load(MatrixRef::Borrowed(m)).generate(g, &Index::new("0", "0"))
            }
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        match self {
            ScalarOrColumn::Scalar(v) => {
                b.structure(0);
                b.scalar(*v);
            }
            ScalarOrColumn::Column(m) => {
                b.structure(1);
                b.matrix(m, Access::Read, true);
            }
            ScalarOrColumn::Broadcast(m, _) => {
                b.structure(2);
                b.matrix(m, Access::Read, true);
            }
        }
    }

    fn matrix(&self) -> Option<&MatrixCl<T>> {
        match self {
            ScalarOrColumn::Scalar(_) | ScalarOrColumn::Broadcast(..) => None,
            ScalarOrColumn::Column(m) => Some(m),
        }
    }
}
