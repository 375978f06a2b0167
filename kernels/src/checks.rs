//! Device-side checks that report the first offending element: each kernel
//! `atomic_min`s a linear index into a one-element flag, so a check costs one
//! launch and one 4-byte read, and several checks can share one read. The
//! public checks (`check_nan`, `check_finite`, `check_symmetric`,
//! `check_diagonal_zeros`) read their flag at once; the blocked algorithms
//! queue theirs and read several together.

use crate::basic::{Block, copy_block, int, square};
use crate::launchers as cl;
use clfuse_core::{ClFloat, Error, MatrixCl, NdRange, ReadBatch, Result, View};

/// A flag that no element has tripped yet (`i32::MAX`).
pub(crate) fn new_flag() -> Result<MatrixCl<i32>> {
    MatrixCl::constant(1, 1, i32::MAX)
}

/// The index a flag holds, if an element tripped it.
fn flagged(value: Option<i32>) -> Option<usize> {
    value
        .filter(|v| *v != i32::MAX)
        .and_then(|v| usize::try_from(v).ok())
}

/// The index recorded in `flag`, if any (reads it back: a synchronisation point).
pub(crate) fn first_flagged(flag: &MatrixCl<i32>) -> Result<Option<usize>> {
    let [found] = first_flagged_all([Some(flag)])?;
    Ok(found)
}

/// The indices recorded in several flags, read back together (one round
/// trip to the device instead of one per flag, and one batch: one marker
/// and one flush of each queue for all of them, where each read alone
/// took its own, 15-30 µs of host time apiece on an H200); a missing flag
/// reads as nothing recorded.
pub(crate) fn first_flagged_all<const N: usize>(
    flags: [Option<&MatrixCl<i32>>; N],
) -> Result<[Option<usize>; N]> {
    let mut reads = Vec::with_capacity(N);
    // Declared after the reads, so dropped (submitted) before them on an error.
    let batch = ReadBatch::new();
    for flag in flags {
        reads.push(flag.map(|f| f.read_later_in(&batch)).transpose()?);
    }
    batch.finish()?;
    let mut found = [None; N];
    for (slot, read) in found.iter_mut().zip(reads) {
        if let Some(read) = read {
            *slot = flagged(read.wait()?.first().copied());
        }
    }
    Ok(found)
}

/// A finite check of one argument, queued with its read-back so that it
/// completes beside the work that follows and costs no round trip of its
/// own; [`finish`](Self::finish) reports it.
pub(crate) struct FiniteCheck<'a, T: ClFloat> {
    function: &'static str,
    argument: &'static str,
    a: &'a MatrixCl<T>,
    flag: clfuse_core::PendingRead<i32>,
    transposed: bool,
}

impl<'a, T: ClFloat> FiniteCheck<'a, T> {
    /// Queues the check of `a` inside its view, and the flag's read-back.
    pub(crate) fn start(
        function: &'static str,
        argument: &'static str,
        a: &'a MatrixCl<T>,
    ) -> Result<Self> {
        let flag = enqueue_check_finite(function, a, a.view())?.read_later()?;
        Ok(FiniteCheck {
            function,
            argument,
            a,
            flag,
            transposed: false,
        })
    }

    /// Marks `a` as the transpose of the argument the user passed, whose
    /// positions the error reports.
    pub(crate) fn of_transpose(mut self, transposed: bool) -> Self {
        self.transposed = transposed;
        self
    }

    /// Fails with `NotFinite` at the first NaN or inf found.
    pub(crate) fn finish(self) -> Result<()> {
        match flagged(self.flag.wait()?.first().copied()) {
            Some(index) => Err(not_finite(
                self.function,
                self.argument,
                self.a,
                index,
                self.transposed,
            )),
            None => Ok(()),
        }
    }
}

/// Queues a check that every element of `a` inside `view` is finite.
pub(crate) fn enqueue_check_finite<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    view: View,
) -> Result<MatrixCl<i32>> {
    let flag = new_flag()?;
    cl::check_finite::<T>().launch(
        NdRange::d2([a.rows(), a.cols()]),
        (
            a,
            &flag,
            int(function, "a", a.rows())?,
            int(function, "a", a.cols())?,
            view.bits(),
        ),
    )?;
    Ok(flag)
}

/// A copy of `a`, whose part inside `view` is checked for NaN and inf on the
/// way (for leaves that copy their input anyway: the check costs no pass of
/// its own). Returns the copy and the check's flag.
pub(crate) fn copy_checking_finite<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    view: View,
) -> Result<(MatrixCl<T>, MatrixCl<i32>)> {
    let flag = new_flag()?;
    let copy = MatrixCl::<T>::uninitialized(a.rows(), a.cols())?;
    cl::copy_check_finite::<T>().launch(
        NdRange::d2([a.rows(), a.cols()]),
        (
            a,
            &copy,
            &flag,
            int(function, "a", a.rows())?,
            int(function, "a", a.cols())?,
            view.bits(),
        ),
    )?;
    copy.set_view(a.view());
    Ok((copy, flag))
}

/// The grid of the symmetry kernels: one work-group of `SYMMETRY_TILE x
/// SYMMETRY_ROWS` (checks.cl) per 32 x 32 tile of an `n x n` matrix.
fn symmetry_tiles(n: usize) -> NdRange {
    const TILE: usize = 32;
    const ROWS: usize = 8;
    let tiles = n.div_ceil(TILE);
    NdRange::d2([tiles * TILE, tiles * ROWS]).with_local(&[TILE, ROWS])
}

/// A working copy of the lower triangle of the square `a` (tiles above the
/// diagonal left unwritten), with flags for the first non-finite element
/// of that triangle and the first element whose mirror above the diagonal
/// differs by more than `tolerance` (relative): one pass over `a` where a
/// copy and a symmetry check would take two.
pub(crate) fn copy_lower_checking_symmetric<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    tolerance: T,
) -> Result<(MatrixCl<T>, MatrixCl<i32>, MatrixCl<i32>)> {
    let n = square(function, "a", a)?;
    let non_finite = new_flag()?;
    let asymmetric = new_flag()?;
    let copy = MatrixCl::<T>::uninitialized(n, n)?;
    cl::copy_lower_check_symmetric::<T>().launch(
        symmetry_tiles(n),
        (
            a,
            &copy,
            &non_finite,
            &asymmetric,
            int(function, "a", n)?,
            tolerance,
        ),
    )?;
    copy.set_view(a.view());
    Ok((copy, non_finite, asymmetric))
}

/// The `NotFinite` error for the element at column-major `index` of `a`
/// (its value is read back: this runs only when a check failed). With
/// `transposed`, `a` is the transpose of the argument the user passed, and
/// the position is reported in the user's matrix.
pub(crate) fn not_finite<T: ClFloat>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
    index: usize,
    transposed: bool,
) -> Error {
    let rows = a.rows().max(1);
    let (row, col) = (index % rows, index / rows);
    let value = copy_block(a, Block::new(row, col, 1, 1))
        .and_then(|element| element.to_vec())
        .ok()
        .and_then(|v| v.first().map(|x| x.to_f64()))
        .unwrap_or(f64::NAN);
    let (row, col) = if transposed { (col, row) } else { (row, col) };
    Error::NotFinite {
        function,
        argument,
        row,
        col,
        value,
    }
}

/// The error for a zero at column-major `index` on the diagonal of a
/// `rows`-row matrix that must be invertible.
pub(crate) fn zero_on_diagonal(
    function: &'static str,
    argument: &'static str,
    rows: usize,
    index: usize,
) -> Error {
    let i = index % rows.max(1);
    Error::CheckFailed {
        function: function.to_string(),
        argument: argument.to_string(),
        row: i,
        col: i,
        value: 0.0,
        requirement: "non-zero (the matrix is singular)".to_string(),
    }
}

pub(crate) fn enqueue_check_nan<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<i32>> {
    let flag = new_flag()?;
    cl::check_nan::<T>().launch(
        NdRange::d2([a.rows(), a.cols()]),
        (
            a,
            &flag,
            int("check_nan", "a", a.rows())?,
            int("check_nan", "a", a.cols())?,
            a.view().bits(),
        ),
    )?;
    Ok(flag)
}

pub(crate) fn enqueue_check_symmetric<T: ClFloat>(
    a: &MatrixCl<T>,
    tolerance: T,
) -> Result<MatrixCl<i32>> {
    let n = square("check_symmetric", "a", a)?;
    let flag = new_flag()?;
    cl::check_symmetric::<T>().launch(
        symmetry_tiles(n),
        (a, &flag, int("check_symmetric", "a", n)?, tolerance),
    )?;
    Ok(flag)
}

pub(crate) fn enqueue_check_diagonal_zeros<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<i32>> {
    let flag = new_flag()?;
    cl::check_diagonal_zeros::<T>().launch(
        NdRange::d1(a.rows().min(a.cols())),
        (
            a,
            &flag,
            int("check_diagonal_zeros", "a", a.rows())?,
            int("check_diagonal_zeros", "a", a.cols())?,
        ),
    )?;
    Ok(flag)
}

/// Fails with `NaN { row, col }` at the first NaN inside `a`'s view.
///
/// ```
/// use clfuse_core::{Error, MatrixCl};
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, f64::NAN, 4.0])?;
/// let err = clfuse_kernels::check_nan("my_function", "a", &a).unwrap_err();
/// assert!(matches!(err, Error::NaN { row: 0, col: 1, .. }));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn check_nan<T: ClFloat>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
) -> Result<()> {
    let flag = enqueue_check_nan(a)?;
    match first_flagged(&flag)? {
        Some(index) => Err(Error::NaN {
            function,
            argument,
            row: index % a.rows(),
            col: index / a.rows(),
        }),
        None => Ok(()),
    }
}

/// Fails with `NotFinite { row, col, value }` at the first NaN, inf or -inf
/// inside `a`'s view (column-major order), as Stan's `check_finite`.
///
/// ```
/// use clfuse_core::{Error, MatrixCl};
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, f64::INFINITY, 4.0])?;
/// let err = clfuse_kernels::check_finite("my_function", "a", &a).unwrap_err();
/// assert_eq!(err.to_string(), "my_function: a[0, 1] is inf, but must be finite");
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn check_finite<T: ClFloat>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
) -> Result<()> {
    FiniteCheck::start(function, argument, a)?.finish()
}

/// Fails with `NotSymmetric { row, col }` (row > col) at the first pair with
/// `|a_ij - a_ji| > tolerance * max(|a_ij|, |a_ji|, 1)`.
///
/// ```
/// use clfuse_core::{Error, MatrixCl};
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 2.5, 4.0])?;
/// assert!(matches!(
///     clfuse_kernels::check_symmetric("f", "a", &a, 1e-8),
///     Err(Error::NotSymmetric { row: 1, col: 0, .. })
/// ));
/// assert!(clfuse_kernels::check_symmetric("f", "a", &a, 0.5).is_ok());
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn check_symmetric<T: ClFloat>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
    tolerance: T,
) -> Result<()> {
    square(function, argument, a)?;
    let flag = enqueue_check_symmetric(a, tolerance)?;
    match first_flagged(&flag)? {
        Some(index) => Err(Error::NotSymmetric {
            function,
            argument,
            row: index % a.rows(),
            col: index / a.rows(),
        }),
        None => Ok(()),
    }
}

/// Fails with `CheckFailed` at the first zero on the diagonal (a singular
/// triangular matrix).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 0.0])?;
/// let err = clfuse_kernels::check_diagonal_zeros("f", "a", &a).unwrap_err();
/// assert!(err.to_string().contains("a[1, 1]"));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn check_diagonal_zeros<T: ClFloat>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
) -> Result<()> {
    let flag = enqueue_check_diagonal_zeros(a)?;
    match first_flagged(&flag)? {
        Some(index) => Err(zero_on_diagonal(function, argument, a.rows(), index)),
        None => Ok(()),
    }
}
