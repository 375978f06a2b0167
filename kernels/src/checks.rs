//! Device-side checks that report the first offending element: each kernel
//! `atomic_min`s a linear index into a one-element flag, so a check costs one
//! launch and one 4-byte read, and several checks can share one read.

use crate::basic::{int, square};
use crate::launchers as cl;
use fusion_core::{ClFloat, MatrixCl, NdRange, Result};

/// A flag that no element has tripped yet (`i32::MAX`).
pub(crate) fn new_flag() -> Result<MatrixCl<i32>> {
    MatrixCl::constant(1, 1, i32::MAX)
}

/// The index recorded in `flag`, if any (reads it back: a synchronisation point).
pub(crate) fn first_flagged(flag: &MatrixCl<i32>) -> Result<Option<usize>> {
    let value = flag.to_vec()?.first().copied().unwrap_or(i32::MAX);
    Ok((value != i32::MAX).then_some(value as usize))
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
        NdRange::d2([n, n]),
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
