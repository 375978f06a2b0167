//! `poisson_log_glm_lpmf(y | x, alpha, beta)`.

use super::shared::{LINEAR_PREDICTOR, LinearGlm, keep};
use super::{GlmOptions, GlmOutput, Outcomes, Param};
use clfuse_core::{MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction};

/// Log mass of counts `y ≥ 0` under `y ~ Poisson(exp(x·beta + alpha))`:
/// `Σ y·η - exp(η) - lgamma(y + 1)` (the last term dropped by `propto`), and
/// `d/dη = y - exp(η)`.
///
/// ```
/// use clfuse::glm::{poisson_log_glm_lpmf, GlmOptions};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
/// // y = 0 with rate 1: log p = -1
/// let out = poisson_log_glm_lpmf(&[0][..], &x, 0.0, &beta, &GlmOptions::default())?;
/// assert!((out.value + 1.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn poisson_log_glm_lpmf<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    alpha: impl Into<Param<'a>>,
    beta: &MatrixCl<f64>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "poisson_log_glm_lpmf";
    let glm = LinearGlm::new(F, y.into(), x, alpha.into(), beta, options)?;
    let (total, d_beta) = {
        let (y, alpha) = (&*glm.y, &glm.alpha);
        let eta = matrix_vector_multiply(x, beta) + alpha;
        let eta = &eta;
        let rate = exp(eta);
        let rate = &rate;
        let d_eta = y - rate;
        let d_eta = &d_eta;
        let term = elt_multiply(y, eta) - rate - keep(!options.propto) * lgamma(y + 1);
        let logp = full_reduction::<SumOp, _>(term);
        let d_beta = glm.run(
            F,
            (
                check(y, F, "y", ge(y, 0)).requiring("non-negative"),
                optional(check_finite(alpha, F, "alpha"), glm.alpha_on_device),
                check(eta, F, LINEAR_PREDICTOR, lt(fabs(eta), f64::INFINITY)).requiring("finite"),
                glm.gradient_outputs(d_eta),
                &logp,
            ),
        )?;
        (logp.value(), d_beta)
    };
    glm.output(total, d_beta, 0.0, None)
}
