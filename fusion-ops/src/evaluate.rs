//! `eval` without reverse mode: an operation or a column-wise reduction
//! into a new matrix, by one assignment through the driver.

use crate::driver::run;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::outputs::{Assignment, ColwiseAssignment, OutputList};
use crate::reductions::{ColwiseReduction, ReduceOp};
use clfuse_core::{Error, MatrixCl, Result};

/// Evaluates an operation into a new matrix.
pub fn eval_operation<O: Operation>(mut op: O) -> Result<MatrixCl<O::Scalar>> {
    let Some((rows, cols)) = op.shape()? else {
        return Err(Error::InvalidArgument {
            function: "eval",
            argument: "expr",
            reason: "a scalar-only expression has no shape; use constant(v, rows, cols)".into(),
        });
    };
    // A leaf that computes its whole result (a softmax) is returned as is;
    // a product's element-wise consumer goes into the GEMM's epilogue, so
    // the product is not computed ahead.
    if op.epilogue_product().is_none() {
        op.evaluate_leaves(HeldProduct::NONE)?;
        if let Some(result) = op.take_evaluated() {
            return Ok(result);
        }
    }
    let out = MatrixCl::<O::Scalar>::uninitialized(rows, cols)?;
    run(&Assignment::new(&out, op))?;
    Ok(out)
}

/// Evaluates a column-wise reduction into a new `1 x cols` matrix.
pub fn eval_colwise<R: ReduceOp, E: Operation>(
    r: ColwiseReduction<R, E>,
) -> Result<MatrixCl<E::Scalar>> {
    let cols = r.0.shape()?.map_or(1, |s| s.1);
    let out = MatrixCl::<E::Scalar>::uninitialized(1, cols)?;
    run(&ColwiseAssignment::<E::Scalar, R, E>::new(&out, r.0))?;
    Ok(out)
}

/// [`eval_colwise`] of a sum whose kernel also computes `also` (the checks
/// of the operands, say): one kernel for both. An `Err` from `also` (a
/// failed check) is returned instead of the sums.
pub fn eval_colwise_sum_with<E: Operation, L: OutputList>(
    e: E,
    also: &L,
) -> Result<MatrixCl<E::Scalar>> {
    let cols = e.shape()?.map_or(1, |s| s.1);
    let out = MatrixCl::<E::Scalar>::uninitialized(1, cols)?;
    run(&(
        ColwiseAssignment::<E::Scalar, crate::reductions::SumOp, E>::new(&out, e),
        also,
    ))?;
    Ok(out)
}
