//! `bernoulli_logit_glm_lpmf(y | x, alpha, beta)`.

use super::shared::{LINEAR_PREDICTOR, LinearGlm};
use super::{GlmOptions, GlmOutput, Outcomes, Param};
use clfuse_core::{MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction};

/// Log mass of `y ∈ {0, 1}` under `y ~ Bernoulli(inv_logit(x·beta + alpha))`:
/// `Σ log_inv_logit(s·η)` with `s = 2y - 1`, `η = x·beta + alpha`, and
/// `d/dη = s·inv_logit(-s·η)`.
///
/// ```
/// use clfuse::glm::{bernoulli_logit_glm_lpmf, GlmOptions};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[0.0, 0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let out = bernoulli_logit_glm_lpmf(&[1, 0][..], &x, 0.0, &beta, &GlmOptions::default())?;
/// assert!((out.value - 2.0 * 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn bernoulli_logit_glm_lpmf<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    alpha: impl Into<Param<'a>>,
    beta: &MatrixCl<f64>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "bernoulli_logit_glm_lpmf";
    let glm = LinearGlm::new(F, y.into(), x, alpha.into(), beta, options)?;
    let (total, d_beta) = {
        let (y, alpha) = (&*glm.y, &glm.alpha);
        let eta = matrix_vector_multiply(x, beta) + alpha;
        let eta = &eta;
        let sign = 2 * y - 1;
        let signed_eta = elt_multiply(&sign, eta);
        let signed_eta = &signed_eta;
        let d_eta = elt_multiply(&sign, inv_logit(-signed_eta));
        let d_eta = &d_eta;
        let logp = full_reduction::<SumOp, _>(-log1p_exp(-signed_eta));
        let d_beta = glm.run(
            F,
            (
                check(y, F, "y", ge(y, 0).and(le(y, 1))).requiring("0 or 1"),
                optional(check_finite(alpha, F, "alpha"), glm.alpha_on_device),
                check(eta, F, LINEAR_PREDICTOR, lt(fabs(eta), f64::INFINITY)).requiring("finite"),
                glm.gradient_outputs(d_eta),
                &logp,
            ),
        )?;
        (logp.value(), d_beta)
    };
    // Every term depends on alpha, beta and x: propto with no gradient drops them all.
    glm.output(total, d_beta, 0.0, None)
}
