//! `binomial_logit_glm_lpmf(n | N, x, alpha, beta)`.

use super::shared::{LINEAR_PREDICTOR, LinearGlm, keep, outcomes_named};
use super::{GlmOptions, GlmOutput, Outcomes, Param};
use clfuse_core::{MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction};

/// Log mass of successes `n` in `N` trials under
/// `n ~ Binomial(N, inv_logit(x·beta + alpha))` (Stan's argument order:
/// successes, trials, then `x`, `alpha`, `beta`):
/// `Σ lchoose(N, n) + n·η - N·log1p_exp(η)` (the first term dropped by
/// `propto`), `η = x·beta + alpha`, and `d/dη = n - N·inv_logit(η)`.
///
/// Checks: `N` non-negative, `n` in `[0, N]`, the intercept and the linear
/// predictor finite (a non-finite one traced back to `x` or `beta`).
///
/// ```
/// use clfuse::glm::{binomial_logit_glm_lpmf, GlmOptions, Wrt};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[0.0, 0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[1.0])?;
/// // η = 0: p = 1/2; 1 of 2 and 3 of 3
/// let out = binomial_logit_glm_lpmf(&[1, 3][..], &[2, 3][..], &x, 0.0, &beta, &GlmOptions::gradients(Wrt::ALPHA))?;
/// assert!((out.value - (2.0f64.ln() - 5.0 * 2.0f64.ln())).abs() < 1e-12);
/// // d/dα = Σ n - N/2 = 4 - 2.5
/// assert!((out.d_alpha()?.to_vec()?[0] - 1.5).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
#[allow(non_snake_case)]
pub fn binomial_logit_glm_lpmf<'a>(
    n: impl Into<Outcomes<'a, i32>>,
    N: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    alpha: impl Into<Param<'a>>,
    beta: &MatrixCl<f64>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "binomial_logit_glm_lpmf";
    let glm = LinearGlm::with_outcomes_named(F, "n", n.into(), x, alpha.into(), beta, options)?;
    let trials = outcomes_named(F, "N", N.into(), x.rows())?;
    let (total, d_beta) = {
        let (n, alpha, trials) = (&*glm.y, &glm.alpha, &*trials);
        let eta = matrix_vector_multiply(x, beta) + alpha;
        let eta = &eta;
        let d_eta = n - elt_multiply(trials, inv_logit(eta));
        let d_eta = &d_eta;
        let term = elt_multiply(n, eta) - elt_multiply(trials, log1p_exp(eta))
            + keep(!options.propto) * binomial_coefficient_log(trials, n);
        let logp = full_reduction::<SumOp, _>(term);
        let d_beta = glm.run(
            F,
            (
                check(trials, F, "N", ge(trials, 0)).requiring("non-negative"),
                check(n, F, "n", ge(n, 0).and(le(n, trials))).requiring("in [0, N]"),
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
