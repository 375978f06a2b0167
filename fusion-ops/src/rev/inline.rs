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
//! The step decides explicitly, by the [`ProductReads`] it passes to
//! `record_leaves`: a scalar step prepares every product it could read
//! inline (its vector operand as a variable) and binds its expression; if
//! the plan then fails, it records the leaves again with
//! [`ProductReads::Apart`], which computes each prepared product as a step
//! of its own. Which products a kernel reads inline is part of its binding
//! (a structure code of the alias pattern), so the forward kernels and the
//! plans of the two cases are cached apart.

use crate::rev::{Dependence, Differentiable};
use clfuse_core::{Result, View};

/// How the step being recorded reads the products `x · v` inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProductReads {
    /// Where it can, inline (a step with a `1 x 1` result).
    Inline,
    /// Each as a step of its own.
    Apart,
}

/// Whether a step may read the product `x · v` inline: `x` a constant
/// matrix seen whole, and one pass over `x` worthwhile on the device.
pub(crate) fn allowed<X: Differentiable>(x: &X) -> Result<bool> {
    if X::Dependence::VARIABLE {
        return Ok(false);
    }
    match x.matrix() {
        Some(m) if m.view() == View::Entire => crate::one_pass_worthwhile(m),
        _ => Ok(false),
    }
}
