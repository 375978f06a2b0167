//! `results((&d, &e)).assign((x, y))`: several targets, one kernel.

use crate::driver::{run, source_of};
use crate::outputs::{AsTarget, Assignable};
use clfuse_core::{IntoOperand, Result};

/// Several targets computed by one kernel.
#[derive(Debug, Clone, Copy)]
pub struct Results<R>(R);

/// Groups targets for a multi-output assignment.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1.0f64, 2.0])?;
/// let b = MatrixCl::from_slice(1, 2, &[3.0f64, 5.0])?;
/// let (d, e) = (MatrixCl::<f64>::zeros(1, 2)?, MatrixCl::<f64>::zeros(1, 2)?);
/// results((&d, &e)).assign((&a + &b, &a - &b))?; // one kernel, a and b read once
/// assert_eq!(d.to_vec()?, vec![4.0, 7.0]);
/// assert_eq!(e.to_vec()?, vec![-2.0, -3.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn results<R>(targets: R) -> Results<R> {
    Results(targets)
}

macro_rules! results_assign {
    ($($t:ident $e:ident $index:tt),+) => {
        impl<'t, $($t: AsTarget<'t> + ?Sized),+> Results<($(&'t $t,)+)> {
            /// Computes each expression into its target in one kernel.
            pub fn assign<$($e),+>(self, exprs: ($($e,)+)) -> Result<()>
            where
                $($e: IntoOperand, $e::Operand: Assignable<$t::Target>,)+
            {
                run(&($(exprs.$index.into_operand().into_output(self.0.$index.as_target()),)+))
            }

            /// The source of the kernel that [`assign`](Self::assign) would compile.
            pub fn kernel_source<$($e),+>(self, exprs: ($($e,)+)) -> Result<String>
            where
                $($e: IntoOperand, $e::Operand: Assignable<$t::Target>,)+
            {
                source_of(&($(exprs.$index.into_operand().into_output(self.0.$index.as_target()),)+))
            }
        }
    };
}

results_assign!(T0 E0 0);
results_assign!(T0 E0 0, T1 E1 1);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8, T9 E9 9);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8, T9 E9 9, T10 E10 10);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8, T9 E9 9, T10 E10 10, T11 E11 11);
