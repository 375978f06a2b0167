//! `target.assign(expr)` and its compound forms: the user-facing entry to
//! the driver (`driver.rs`).

use crate::driver::run;
use crate::operation::Operation;
use crate::outputs::{AsTarget, Assignable, Assignment};
use crate::targets::Target;
use clfuse_core::expr::{Add, ElewiseMul, Scalar, Sub};
use clfuse_core::{ClType, IntoOperand, Result};

/// Assignment into matrices and into blocks, transposes, diagonals and
/// scatters of matrices; compound forms return `Result` instead of
/// overloading `+=` (an operator could not report errors).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let b = MatrixCl::from_slice(2, 1, &[10.0f64, 20.0])?;
/// let d = MatrixCl::<f64>::zeros(2, 1)?;
/// d.assign(3.0 * (&a + &b))?;
/// assert_eq!(d.to_vec()?, vec![33.0, 66.0]);
/// d.add_assign(&a)?;
/// d.mul_assign(2.0)?;
/// assert_eq!(d.to_vec()?, vec![68.0, 136.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub trait AssignExt<'t>: AsTarget<'t> {
    /// Computes `expr` into `self` with one fused kernel; `self` takes the expression's view.
    fn assign<E>(&'t self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Assignable<Self::Target>,
    {
        run(&expr.into_operand().into_output(self.as_target()))
    }

    /// `self = self + expr`.
    fn add_assign<E>(&'t self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Operation,
        <<Self::Target as Target>::Current as Operation>::Scalar:
            clfuse_core::Promote<<E::Operand as Operation>::Scalar>,
    {
        compound(self.as_target(), |current| {
            Add(current, expr.into_operand())
        })
    }

    /// `self = self - expr`.
    fn sub_assign<E>(&'t self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Operation,
        <<Self::Target as Target>::Current as Operation>::Scalar:
            clfuse_core::Promote<<E::Operand as Operation>::Scalar>,
    {
        compound(self.as_target(), |current| {
            Sub(current, expr.into_operand())
        })
    }

    /// `self = self * scalar`.
    fn mul_assign<S>(&'t self, scalar: S) -> Result<()>
    where
        S: ClType + IntoOperand<Operand = clfuse_core::expr::Scalar<S>>,
        <<Self::Target as Target>::Current as Operation>::Scalar: clfuse_core::Promote<S>,
    {
        compound(self.as_target(), |current| {
            ElewiseMul(current, Scalar(scalar))
        })
    }
}

impl<'t, X: AsTarget<'t>> AssignExt<'t> for X {}

/// `target = combine(target's current values)` in one kernel: the compound
/// assignments, written once.
fn compound<Tg: Target, C: Operation>(
    target: Tg,
    combine: impl FnOnce(Tg::Current) -> C,
) -> Result<()> {
    run(&Assignment::new(target, combine(target.current())))
}
