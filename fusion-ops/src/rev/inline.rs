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

use std::cell::Cell;

thread_local! {
    /// Whether the step being recorded on this thread reads products inline.
    static ALLOWED: Cell<bool> = const { Cell::new(false) };
}

/// While alive, sets whether products evaluated on this thread may be read
/// inline; restores the previous setting when dropped (nested steps set
/// their own).
pub(crate) struct Scope {
    previous: bool,
}

/// Allows (or forbids) inline products until the returned scope drops.
pub(crate) fn scope(allowed: bool) -> Scope {
    Scope {
        previous: ALLOWED.with(|a| a.replace(allowed)),
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        ALLOWED.with(|a| a.set(self.previous));
    }
}

/// Whether the step being recorded reads products inline.
pub(crate) fn allowed() -> bool {
    ALLOWED.with(Cell::get)
}
