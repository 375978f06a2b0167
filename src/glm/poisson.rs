//! `poisson_log_glm_lpmf(y | x, alpha, beta)`.

use super::shared::{
    Finish, LINEAR_PREDICTOR, Requirement, design, diagnose, is_vector, keep, outcomes, parameter,
    target, value_of,
};
use super::{GlmOptions, GlmOutput, Outcomes, Param};
use fusion_core::{MatrixCl, Result};
use fusion_ops::prelude::*;

/// Log mass of counts `y ≥ 0` under `y ~ Poisson(exp(x·beta + alpha))`:
/// `Σ y·η - exp(η) - lgamma(y + 1)` (the last term dropped by `propto`), and
/// `d/dη = y - exp(η)`.
///
/// ```
/// use fusion::glm::{poisson_log_glm_lpmf, GlmOptions};
/// use fusion::prelude::*;
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
/// // y = 0 with rate 1: log p = -1
/// let out = poisson_log_glm_lpmf(&[0][..], &x, 0.0, &beta, &GlmOptions::default())?;
/// assert!((out.value + 1.0).abs() < 1e-12);
/// # Ok::<(), fusion::Error>(())
/// ```
pub fn poisson_log_glm_lpmf<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    alpha: impl Into<Param<'a>>,
    beta: &MatrixCl<f64>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "poisson_log_glm_lpmf";
    let n = x.rows();
    let alpha = alpha.into();
    let y = outcomes(F, y.into(), n)?;
    design(F, x, beta, 1)?;
    let alpha_vector = is_vector(&alpha);
    let alpha = parameter(F, "alpha", alpha, n, Requirement::Finite)?;
    let finish = Finish {
        x,
        beta,
        wrt: options.wrt,
        alpha_is_vector: alpha_vector,
    };
    let (y, alpha) = (&*y, &*alpha);

    let eta = matrix_vector_multiply(x, beta) + optional_broadcast(alpha, n, 1);
    let eta = &eta;
    let rate = exp(eta);
    let rate = &rate;
    let d_eta_expr = y - rate;
    let d_eta_expr = &d_eta_expr;
    let term = elt_multiply(y, eta) - rate - keep(!options.propto) * lgamma(y + 1);

    let logp = target(1, 1, true)?;
    let d_eta = target(n, 1, finish.needs_d_eta())?;
    let d_alpha_sum = target(1, 1, options.wrt.alpha && !alpha_vector)?;
    fuse((
        // Checks last: their flags are read back after the other outputs'
        // work is queued.
        output(&logp, colwise_sum(term)),
        optional(output(&d_eta, d_eta_expr), finish.needs_d_eta()),
        optional(
            output(&d_alpha_sum, colwise_sum(d_eta_expr)),
            options.wrt.alpha && !alpha_vector,
        ),
        check(y, F, "y", ge(y, 0)).requiring("non-negative"),
        optional(check_finite(alpha, F, "alpha"), alpha_vector),
        check(eta, F, LINEAR_PREDICTOR, lt(fabs(eta), f64::INFINITY)).requiring("finite"),
    ))
    .map_err(|e| diagnose(F, x, beta, e))?;
    let value = if options.propto && !options.wrt.any_gradient() {
        0.0
    } else {
        value_of(&logp)?
    };
    finish.output(value, d_eta, d_alpha_sum, None)
}
