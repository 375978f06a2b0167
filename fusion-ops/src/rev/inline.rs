//! Row-wise products read inline by a scalar step.
//!
//! A step whose result is `1 x 1` (`colwise_sum` of a column: a
//! log-likelihood) has one scalar seed, so its gradient with respect to each
//! variable is known, up to that seed, while its forward kernel runs. A
//! row-wise product `x · v` of a constant matrix and a variable vector
//! inside such a step is therefore computed inline like any fused
//! operation, and the same kernel sums `xᵀ·c`, where `c` is the derivative
//! of the result with respect to each row of the product: `x` is staged in
//! registers and leaves global memory once, as in the hand-fused GLMs. The
//! reverse pass then only scales those sums by the seed (`Mode::Summed`).
//!
//! Elsewhere (a step with a larger result, a product read at another
//! element, a variable also scattered into by the same step), or when one
//! pass does not pay off on the device ([`crate::one_pass_worthwhile`]),
//! the product is a step of its own and the reverse pass reads `x` again.
//!
//! The step decides explicitly: `evaluate_leaves` prepares every product
//! that could be read inline (its vector operand as a variable), the step
//! binds its expression, and a step that cannot read the products inline
//! computes each of them apart ([`compute_apart`]) before binding again.
//! Which products a kernel reads inline is part of its binding (a structure
//! code of the alias pattern), so the forward kernels and the plans of the
//! two cases are cached apart.

use crate::binder::Binder;
use crate::operation::Operation;
use clfuse_core::Result;

/// Computes every product that `op` reads inline by a kernel of its own,
/// each recorded as a step, so that binding `op` again reads their
/// results: for a step that cannot read them inline.
pub(crate) fn compute_apart<O: Operation>(op: &O) -> Result<()> {
    let mut binder = Binder::new();
    op.bind(&mut binder);
    for product in binder.computable_apart() {
        product.compute_apart()?;
    }
    Ok(())
}

/// Evaluates `op`'s leaves for a step that reads no product inline (an
/// element-wise step, the operand of a nested one): the products it could
/// read inline are computed apart.
pub(crate) fn evaluate_apart<O: Operation>(op: &O) -> Result<()> {
    op.evaluate_leaves()?;
    // Such a product counts as a reduction: other trees bind none.
    if op.contains_reduction() {
        compute_apart(op)?;
    }
    Ok(())
}
