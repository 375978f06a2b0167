//! Assignment targets: a matrix, or a block, transpose, diagonal or scatter of one.

use crate::binder::{Binder, Identity};
use crate::checks::check;
use crate::gather_checks::in_range;
use crate::generator::{Generator, Index};
use crate::logic::{and, ge, lt};
use crate::operation::{Operation, combine_shapes};
use crate::structural::{Block, Diagonal, Indexing, Transpose, fits};
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, Error, Expr, MatrixCl, Result, View};

/// Where an assignment writes.
pub trait Target: Copy {
    /// Element type stored.
    type Scalar: ClType;
    /// Cache key type (lifetimes erased).
    type Key: 'static;
    /// The operation reading the target's current values at the positions it writes.
    type Current: Operation<Scalar = Self::Scalar>;
    /// Rows and columns written, after checking that the written region
    /// lies inside the matrix (`Err(TargetOutOfRange)` otherwise: no safe
    /// call may write outside a buffer).
    fn shape(&self) -> Result<(usize, usize)>;
    /// The matrix written.
    fn matrix(&self) -> &MatrixCl<Self::Scalar>;
    /// Binds the buffer and any offsets.
    fn bind<'a>(&'a self, b: &mut Binder<'a>);
    /// Emits the store of `value` for the element at `at`.
    fn store(&self, g: &mut Generator, at: &Index, value: &str);
    /// Runs before the kernel, and before anything else is written: checks
    /// what can only be checked on the device (scatter indices); then, when
    /// the written part makes the matrix's view grow, materialises zeros
    /// outside the old view so they stay zeros.
    fn prepare(&self, written_view: View) -> Result<()>;
    /// Runs after the kernel: the matrix's new view.
    fn finish(&self, written_view: View);
    /// The current values, for compound assignment.
    fn current(&self) -> Self::Current;
}

fn identity<T: ClType>(m: &MatrixCl<T>) -> Identity {
    Identity::Buffer(m.buffer_id())
}

/// Writes zeros outside `m`'s view so that widening the view exposes zeros.
fn materialise_zeros<T: ClType>(m: &MatrixCl<T>, new_view: View) -> Result<()> {
    let old = m.view();
    if old.union(new_view) == old {
        return Ok(());
    }
    // A load outside its view yields 0; storing every element writes them.
    crate::driver::run(&crate::outputs::Assignment::new(
        m,
        Load(MatrixRef::Borrowed(m)),
    ))
}

impl<'t, T: ClType> Target for &'t MatrixCl<T> {
    type Scalar = T;
    type Key = MatrixCl<T>;
    type Current = Load<'t, T>;

    fn shape(&self) -> Result<(usize, usize)> {
        Ok((self.rows(), self.cols()))
    }

    fn matrix(&self) -> &MatrixCl<T> {
        self
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.matrix(self, Access::Write, false);
    }

    fn store(&self, g: &mut Generator, at: &Index, value: &str) {
        g.store(identity(self), T::CL_NAME, at, value);
    }

    fn prepare(&self, _written_view: View) -> Result<()> {
        Ok(())
    }

    fn finish(&self, written_view: View) {
        self.set_view(written_view);
    }

    fn current(&self) -> Load<'t, T> {
        Load(MatrixRef::Borrowed(self))
    }
}

/// Fails with `TargetOutOfRange` at the first element of `index` (a
/// scatter's row or column indices, over the assignment's `shape`) outside
/// `0 .. limit`. Run on the device before the scatter writes anything.
fn check_scatter_indices<I: Operation<Scalar = i32>>(
    index: &I,
    shape: (usize, usize),
    limit: usize,
    which: &'static str,
    matrix: (usize, usize),
) -> Result<()> {
    if shape.0 == 0 || shape.1 == 0 {
        return Ok(());
    }
    let bound = i32::try_from(limit).unwrap_or(i32::MAX);
    // A scalar index is checked once, on a 1 x 1 grid.
    let in_range = and(ge(Expr(index), 0), lt(Expr(index), bound));
    match check(Expr(index), "assign", "scatter index", in_range).run() {
        Err(Error::CheckFailed {
            row, col, value, ..
        }) => Err(Error::TargetOutOfRange {
            function: "assign",
            target: "scatter",
            region: format!(
                "{which} index {value} at position ({row}, {col}) of the indices, which must be in 0..{limit}"
            ),
            rows: matrix.0,
            cols: matrix.1,
        }),
        other => other,
    }
}

/// The parent-matrix view bits that writing `view`-shaped values into the
/// block at (`row`, `col`) of size `rows x cols` can make non-zero.
fn block_view(row: usize, col: usize, rows: usize, cols: usize, view: View) -> View {
    if rows == 0 || cols == 0 {
        return View::Diagonal;
    }
    if row == col {
        return view;
    }
    let lower = row + rows > col + 1;
    let upper = col + cols > row + 1;
    View::from_bits(i32::from(lower) | (i32::from(upper) << 1))
}

impl<'t, 'a, T: ClType> Target for &'t Block<Load<'a, T>> {
    type Scalar = T;
    type Key = Block<MatrixCl<T>>;
    type Current = Block<Load<'t, T>>;

    fn shape(&self) -> Result<(usize, usize)> {
        let m: &MatrixCl<T> = &self.inner.0;
        if !(fits(self.row, self.rows, m.rows()) && fits(self.col, self.cols, m.cols())) {
            return Err(Error::TargetOutOfRange {
                function: "assign",
                target: "block",
                region: format!(
                    "{} x {} at ({}, {})",
                    self.rows, self.cols, self.row, self.col
                ),
                rows: m.rows(),
                cols: m.cols(),
            });
        }
        Ok((self.rows, self.cols))
    }

    fn matrix(&self) -> &MatrixCl<T> {
        &self.inner.0
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        b.matrix(&self.inner.0, Access::Write, false);
        b.int(self.row as i32);
        b.int(self.col as i32);
    }

    fn store(&self, g: &mut Generator, at: &Index, value: &str) {
        let m: &MatrixCl<T> = &self.inner.0;
        // Declare the buffer before the offsets, as `bind` orders them.
        g.buffer(identity(m), T::CL_NAME, false);
        let r = g.value_param("int");
        let c = g.value_param("int");
        g.store(
            identity(m),
            T::CL_NAME,
            &Index::new(format!("({} + {r})", at.i), format!("({} + {c})", at.j)),
            value,
        );
    }

    fn prepare(&self, written_view: View) -> Result<()> {
        let m: &MatrixCl<T> = &self.inner.0;
        let grown = m.view().union(block_view(
            self.row,
            self.col,
            self.rows,
            self.cols,
            written_view,
        ));
        materialise_zeros(m, grown)
    }

    fn finish(&self, written_view: View) {
        let m: &MatrixCl<T> = &self.inner.0;
        m.set_view(m.view().union(block_view(
            self.row,
            self.col,
            self.rows,
            self.cols,
            written_view,
        )));
    }

    fn current(&self) -> Block<Load<'t, T>> {
        Block {
            inner: Load(MatrixRef::Borrowed(&self.inner.0)),
            row: self.row,
            col: self.col,
            rows: self.rows,
            cols: self.cols,
        }
    }
}

impl<'t, 'a, T: ClType> Target for &'t Transpose<Load<'a, T>> {
    type Scalar = T;
    type Key = Transpose<MatrixCl<T>>;
    type Current = Transpose<Load<'t, T>>;

    fn shape(&self) -> Result<(usize, usize)> {
        Ok((self.0.0.cols(), self.0.0.rows()))
    }

    fn matrix(&self) -> &MatrixCl<T> {
        &self.0.0
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        b.matrix(&self.0.0, Access::Write, false);
    }

    fn store(&self, g: &mut Generator, at: &Index, value: &str) {
        g.store(
            identity(&self.0.0),
            T::CL_NAME,
            &Index::new(at.j.clone(), at.i.clone()),
            value,
        );
    }

    fn prepare(&self, _written_view: View) -> Result<()> {
        Ok(()) // every element is written
    }

    fn finish(&self, written_view: View) {
        self.0.0.set_view(written_view.transpose());
    }

    fn current(&self) -> Transpose<Load<'t, T>> {
        Transpose(Load(MatrixRef::Borrowed(&self.0.0)))
    }
}

impl<'t, 'a, T: ClType> Target for &'t Diagonal<Load<'a, T>> {
    type Scalar = T;
    type Key = Diagonal<MatrixCl<T>>;
    type Current = Diagonal<Load<'t, T>>;

    fn shape(&self) -> Result<(usize, usize)> {
        Ok((self.0.0.rows().min(self.0.0.cols()), 1))
    }

    fn matrix(&self) -> &MatrixCl<T> {
        &self.0.0
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        b.matrix(&self.0.0, Access::Write, false);
    }

    fn store(&self, g: &mut Generator, at: &Index, value: &str) {
        g.store(
            identity(&self.0.0),
            T::CL_NAME,
            &Index::new(at.i.clone(), at.i.clone()),
            value,
        );
    }

    fn prepare(&self, _written_view: View) -> Result<()> {
        Ok(()) // the diagonal is inside every view
    }

    fn finish(&self, _written_view: View) {}

    fn current(&self) -> Diagonal<Load<'t, T>> {
        Diagonal(Load(MatrixRef::Borrowed(&self.0.0)))
    }
}

impl<'t, 'a, T, R, C> Target for &'t Indexing<Load<'a, T>, R, C>
where
    T: ClType,
    R: Operation<Scalar = i32>,
    C: Operation<Scalar = i32>,
{
    type Scalar = T;
    type Key = Indexing<MatrixCl<T>, R::Key, C::Key>;
    type Current = Indexing<Load<'t, T>, &'t R, &'t C>;

    fn shape(&self) -> Result<(usize, usize)> {
        let shape = combine_shapes(
            "assign (scatter indices)",
            self.row_index.shape()?,
            self.col_index.shape()?,
        )?;
        Ok(shape.unwrap_or((1, 1)))
    }

    fn matrix(&self) -> &MatrixCl<T> {
        &self.matrix.0
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        self.row_index.bind(b);
        self.col_index.bind(b);
        let m: &MatrixCl<T> = &self.matrix.0;
        b.int(m.rows() as i32);
        b.int(m.cols() as i32);
        b.matrix(m, Access::Write, false);
    }

    fn store(&self, g: &mut Generator, at: &Index, value: &str) {
        let r = self.row_index.generate(g, at);
        let c = self.col_index.generate(g, at);
        let (m_rows, m_cols) = (g.value_param("int"), g.value_param("int"));
        // Checked before the kernel (`prepare`); kept safe all the same.
        g.statement(&format!(
            "if ({} && {}) {{",
            in_range(&r, &m_rows),
            in_range(&c, &m_cols)
        ));
        g.store(
            identity(&self.matrix.0),
            T::CL_NAME,
            &Index::new(r, c),
            value,
        );
        g.statement("}");
    }

    fn prepare(&self, _written_view: View) -> Result<()> {
        let m: &MatrixCl<T> = &self.matrix.0;
        let shape = Target::shape(self)?;
        check_scatter_indices(
            &self.row_index,
            shape,
            m.rows(),
            "row",
            (m.rows(), m.cols()),
        )?;
        check_scatter_indices(
            &self.col_index,
            shape,
            m.cols(),
            "column",
            (m.rows(), m.cols()),
        )?;
        materialise_zeros(m, View::Entire)
    }

    fn finish(&self, _written_view: View) {
        self.matrix.0.set_view(View::Entire);
    }

    fn current(&self) -> Indexing<Load<'t, T>, &'t R, &'t C> {
        Indexing {
            matrix: Load(MatrixRef::Borrowed(&self.matrix.0)),
            row_index: &self.row_index,
            col_index: &self.col_index,
        }
    }
}
