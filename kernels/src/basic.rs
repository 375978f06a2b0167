//! Basic kernels (paper §3.5): the building blocks of the blocked algorithms
//! and the "chain of basic kernels" that fused expressions are measured
//! against. Each takes whole matrices, honours their views (elements outside
//! a view read as zero) and returns a new matrix or works in place.

use crate::launchers as cl;
use clfuse_core::{ClFloat, ClType, Error, MatrixCl, NdRange, Result, View};

/// Rows/cols as the `int` a kernel takes, or an error naming the function.
pub(crate) fn int(function: &'static str, argument: &'static str, value: usize) -> Result<i32> {
    i32::try_from(value).map_err(|_| Error::InvalidArgument {
        function,
        argument,
        reason: format!("{value} does not fit the kernels' 32-bit indices"),
    })
}

fn same_shape<T: ClType>(function: &'static str, a: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<()> {
    if (a.rows(), a.cols()) != (b.rows(), b.cols()) {
        return Err(Error::DimensionMismatch {
            operation: function.to_string(),
            lhs: (a.rows(), a.cols()),
            rhs: (b.rows(), b.cols()),
        });
    }
    Ok(())
}

pub(crate) fn square<T: ClType>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
) -> Result<usize> {
    if a.rows() != a.cols() {
        return Err(Error::InvalidArgument {
            function,
            argument,
            reason: format!("must be square, got {} x {}", a.rows(), a.cols()),
        });
    }
    Ok(a.rows())
}

/// The view of `a`, which must be triangular (`Lower`, `Upper` or
/// `Diagonal`), or an error naming `function`.
pub(crate) fn triangular_view<T: ClFloat>(function: &'static str, a: &MatrixCl<T>) -> Result<View> {
    match a.view() {
        v @ (View::Lower | View::Upper | View::Diagonal) => Ok(v),
        View::Entire => Err(Error::InvalidView {
            function,
            view: View::Entire,
            reason: "the matrix must be triangular: set its view to Lower or Upper",
        }),
    }
}

fn grid(rows: usize, cols: usize) -> NdRange {
    NdRange::d2([rows, cols])
}

/// The `n x n` identity (view `Diagonal`).
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let i = clfuse_kernels::identity::<f32>(2)?;
/// assert_eq!(i.to_vec()?, vec![1.0, 0.0, 0.0, 1.0]);
/// assert_eq!(i.view(), View::Diagonal);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn identity<T: ClType>(n: usize) -> Result<MatrixCl<T>> {
    let size = int("identity", "n", n)?;
    let m = MatrixCl::<T>::uninitialized(n, n)?;
    cl::identity_kernel::<T>().launch(grid(n, n), (&m, size, size))?;
    m.set_view(View::Diagonal);
    Ok(m)
}

/// `batches` identity matrices of size `n x n`, stacked one after another in
/// one `n x (n * batches)` matrix (the starting point of the batched
/// triangular inverse).
///
/// ```
/// let b = clfuse_kernels::batch_identity::<f64>(2, 2)?;
/// assert_eq!(b.to_vec()?, vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn batch_identity<T: ClType>(n: usize, batches: usize) -> Result<MatrixCl<T>> {
    let cols = n
        .checked_mul(batches)
        .ok_or_else(|| Error::InvalidArgument {
            function: "batch_identity",
            argument: "batches",
            reason: format!("{n} x {batches} identities overflow"),
        })?;
    let m = MatrixCl::<T>::uninitialized(n, cols)?;
    cl::batch_identity::<T>().launch(
        NdRange::d3([batches, n, n]),
        (
            &m,
            int("batch_identity", "n", n)?,
            int("batch_identity", "batches", batches)?,
        ),
    )?;
    Ok(m)
}

fn elementwise<T: ClType>(
    function: &'static str,
    a: &MatrixCl<T>,
    b: &MatrixCl<T>,
    subtract: bool,
) -> Result<MatrixCl<T>> {
    same_shape(function, a, b)?;
    let c = MatrixCl::<T>::uninitialized(a.rows(), a.cols())?;
    let args = (
        &c,
        a,
        b,
        int(function, "a", a.rows())?,
        int(function, "a", a.cols())?,
        a.view().bits(),
        b.view().bits(),
    );
    let range = grid(a.rows(), a.cols());
    if subtract {
        cl::subtract::<T>().launch(range, args)?;
    } else {
        cl::add::<T>().launch(range, args)?;
    }
    c.set_view(a.view().union(b.view()));
    Ok(c)
}

/// `a + b` by the basic `add` kernel (views honoured; the result's view is their union).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// assert_eq!(clfuse_kernels::add(&a, &a)?.to_vec()?, vec![2.0, 4.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn add<T: ClType>(a: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    elementwise("add", a, b, false)
}

/// `a - b` by the basic `subtract` kernel.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// let b = MatrixCl::from_slice(1, 2, &[3.0, 1.0])?;
/// assert_eq!(clfuse_kernels::subtract(&a, &b)?.to_vec()?, vec![-2.0, 1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn subtract<T: ClType>(a: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    elementwise("subtract", a, b, true)
}

/// `scalar * a` by the basic `scalar_mul` kernel.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(1, 2, &[1.0f32, 2.0])?;
/// assert_eq!(clfuse_kernels::scalar_mul(&a, 3.0)?.to_vec()?, vec![3.0, 6.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn scalar_mul<T: ClType>(a: &MatrixCl<T>, scalar: T) -> Result<MatrixCl<T>> {
    let b = MatrixCl::<T>::uninitialized(a.rows(), a.cols())?;
    cl::scalar_mul::<T>().launch(
        grid(a.rows(), a.cols()),
        (
            &b,
            a,
            scalar,
            int("scalar_mul", "a", a.rows())?,
            int("scalar_mul", "a", a.cols())?,
            a.view().bits(),
        ),
    )?;
    b.set_view(a.view());
    Ok(b)
}

/// Multiplies the diagonal of `a` by `scalar`, in place.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
/// clfuse_kernels::scalar_mul_diagonal(&a, 0.5)?;
/// assert_eq!(a.to_vec()?, vec![0.5, 2.0, 3.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn scalar_mul_diagonal<T: ClType>(a: &MatrixCl<T>, scalar: T) -> Result<()> {
    cl::scalar_mul_diagonal::<T>().launch(
        NdRange::d1(a.rows().min(a.cols())),
        (
            a,
            scalar,
            int("scalar_mul_diagonal", "a", a.rows())?,
            int("scalar_mul_diagonal", "a", a.cols())?,
        ),
    )?;
    Ok(())
}

/// The transpose, through local-memory tiles (coalesced reads and writes).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 3, &[1, 2, 3, 4, 5, 6])?;
/// let t = clfuse_kernels::transpose(&a)?;
/// assert_eq!((t.rows(), t.cols()), (3, 2));
/// assert_eq!(t.to_vec()?, vec![1, 3, 5, 2, 4, 6]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn transpose<T: ClType>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const TILE: usize = 16;
    let b = MatrixCl::<T>::uninitialized(a.cols(), a.rows())?;
    let range = grid(
        a.rows().div_ceil(TILE) * TILE,
        a.cols().div_ceil(TILE) * TILE,
    )
    .with_local(&[TILE, TILE]);
    cl::transpose::<T>().launch(
        range,
        (
            &b,
            a,
            int("transpose", "a", a.rows())?,
            int("transpose", "a", a.cols())?,
            a.view().bits(),
        ),
    )?;
    b.set_view(a.view().transpose());
    Ok(b)
}

/// Which way [`triangular_transpose`] mirrors.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Mirror;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 0.0, 5.0, 1.0])?;
/// clfuse_kernels::triangular_transpose(&a, Mirror::UpperToLower)?;
/// assert_eq!(a.to_vec()?, vec![1.0, 5.0, 5.0, 1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirror {
    /// Copy the lower triangle onto the upper one.
    LowerToUpper,
    /// Copy the upper triangle onto the lower one.
    UpperToLower,
}

/// Mirrors one triangle of a square matrix onto the other, in place; the
/// view becomes `Entire` (the result is symmetric).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Mirror;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 0.0, 3.0])?;
/// clfuse_kernels::triangular_transpose(&a, Mirror::LowerToUpper)?;
/// assert_eq!(a.to_vec()?, vec![1.0, 2.0, 2.0, 3.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn triangular_transpose<T: ClType>(a: &MatrixCl<T>, mirror: Mirror) -> Result<()> {
    let n = square("triangular_transpose", "a", a)?;
    cl::triangular_transpose::<T>().launch(
        grid(n, n),
        (
            a,
            int("triangular_transpose", "a", n)?,
            i32::from(mirror == Mirror::LowerToUpper),
        ),
    )?;
    a.set_view(View::Entire);
    Ok(())
}

/// Which part [`zeros`] clears.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Part;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
/// clfuse_kernels::zeros(&a, Part::All)?;
/// assert_eq!(a.to_vec()?, vec![0.0; 4]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every element.
    All,
    /// The part strictly below the diagonal.
    StrictlyLower,
    /// The part strictly above the diagonal.
    StrictlyUpper,
}

/// Zeroes all of `a` or one strict triangle, in place (the view shrinks to match).
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::Part;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
/// clfuse_kernels::zeros(&a, Part::StrictlyUpper)?;
/// assert_eq!(a.to_vec()?, vec![1.0, 2.0, 0.0, 4.0]);
/// assert_eq!(a.view(), View::Lower);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn zeros<T: ClType>(a: &MatrixCl<T>, part: Part) -> Result<()> {
    let (code, remaining) = match part {
        Part::All => (3, View::Diagonal),
        Part::StrictlyLower => (1, View::Upper),
        Part::StrictlyUpper => (2, View::Lower),
    };
    cl::zeros::<T>().launch(
        grid(a.rows(), a.cols()),
        (
            a,
            int("zeros", "a", a.rows())?,
            int("zeros", "a", a.cols())?,
            code,
        ),
    )?;
    a.set_view(a.view().intersection(remaining));
    Ok(())
}

/// A rectangular block of a matrix: `rows x cols` elements starting at (`row`, `col`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// First row.
    pub row: usize,
    /// First column.
    pub col: usize,
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
}

impl Block {
    /// A block at (`row`, `col`) of `rows x cols` elements.
    ///
    /// ```
    /// let b = clfuse_kernels::Block::new(1, 2, 3, 4);
    /// assert_eq!((b.row, b.col, b.rows, b.cols), (1, 2, 3, 4));
    /// ```
    pub fn new(row: usize, col: usize, rows: usize, cols: usize) -> Self {
        Block {
            row,
            col,
            rows,
            cols,
        }
    }

    pub(crate) fn check<T: ClType>(
        &self,
        function: &'static str,
        argument: &'static str,
        m: &MatrixCl<T>,
    ) -> Result<()> {
        let fits = |start: usize, len: usize, limit: usize| {
            start.checked_add(len).is_some_and(|end| end <= limit)
        };
        if !(fits(self.row, self.rows, m.rows()) && fits(self.col, self.cols, m.cols())) {
            return Err(Error::InvalidArgument {
                function,
                argument,
                reason: format!(
                    "block of {} x {} at ({}, {}) does not fit a {} x {} matrix",
                    self.rows,
                    self.cols,
                    self.row,
                    self.col,
                    m.rows(),
                    m.cols()
                ),
            });
        }
        Ok(())
    }
}

/// Copies the `rows x cols` block of `src` at (`src_block.row`, `src_block.col`)
/// into `dst` at (`dst_row`, `dst_col`). With `view` `Lower`/`Upper` only that
/// triangle of the block is copied (the rest of `dst` is untouched).
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::Block;
/// let src = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
/// let dst = MatrixCl::<f64>::zeros(3, 3)?;
/// clfuse_kernels::sub_block(&dst, 1, 1, &src, Block::new(0, 0, 2, 2), View::Lower)?;
/// assert_eq!(dst.to_vec()?, vec![0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 4.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn sub_block<T: ClType>(
    dst: &MatrixCl<T>,
    dst_row: usize,
    dst_col: usize,
    src: &MatrixCl<T>,
    src_block: Block,
    view: View,
) -> Result<()> {
    const F: &str = "sub_block";
    src_block.check(F, "src_block", src)?;
    Block::new(dst_row, dst_col, src_block.rows, src_block.cols).check(
        F,
        "dst_row/dst_col",
        dst,
    )?;
    if dst.buffer_id() == src.buffer_id() {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "dst",
            reason: "src and dst must be different matrices".into(),
        });
    }
    cl::sub_block::<T>().launch(
        grid(src_block.rows, src_block.cols),
        (
            dst,
            src,
            int(F, "src_block", src_block.row)?,
            int(F, "src_block", src_block.col)?,
            int(F, "dst_row", dst_row)?,
            int(F, "dst_col", dst_col)?,
            int(F, "src_block", src_block.rows)?,
            int(F, "src_block", src_block.cols)?,
            int(F, "src", src.rows())?,
            int(F, "dst", dst.rows())?,
            view.bits(),
        ),
    )?;
    Ok(())
}

/// A new matrix holding a block of `src`.
pub(crate) fn copy_block<T: ClType>(src: &MatrixCl<T>, block: Block) -> Result<MatrixCl<T>> {
    let out = MatrixCl::<T>::uninitialized(block.rows, block.cols)?;
    sub_block(&out, 0, 0, src, block, View::Entire)?;
    Ok(out)
}

/// `c = sum of the batches + beta * c`, where `batch` holds `batches` copies of
/// `c`'s shape one after another (split-k's second step).
pub(crate) fn add_batch<T: ClFloat>(
    c: &MatrixCl<T>,
    batch: &MatrixCl<T>,
    batches: usize,
    beta: T,
) -> Result<()> {
    let size = c.len();
    cl::add_batch::<T>().launch(
        NdRange::d1(size),
        (
            c,
            batch,
            int("add_batch", "c", size)?,
            int("add_batch", "batches", batches)?,
            beta,
        ),
    )?;
    Ok(())
}
