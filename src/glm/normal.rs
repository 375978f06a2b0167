//! `normal_id_glm_lpdf(y | x, alpha, beta, sigma)`.

use super::shared::{
    LINEAR_PREDICTOR, LinearGlm, Requirement, checked_in_kernel, is_vector, keep, parameter, target,
};
use super::{GlmOptions, GlmOutput, Outcomes, Param};
use clfuse_core::{MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction};

/// log(sqrt(2π)).
const LOG_SQRT_TWO_PI: f64 = 0.918_938_533_204_672_8;

/// Log density of `y ~ Normal(x·beta + alpha, sigma)`:
/// `Σ -z²/2 - log σ - log √(2π)` with `z = (y - η) / σ`; `propto` drops the
/// constant and, unless `sigma`'s gradient is asked for, `log σ`.
/// `d/dη = z / σ`, `d/dσ = (z² - 1) / σ`.
///
/// ```
/// use clfuse::glm::{normal_id_glm_lpdf, GlmOptions};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let out = normal_id_glm_lpdf(&[0.0][..], &x, 0.0, &beta, 1.0, &GlmOptions::default())?;
/// assert!((out.value + 0.918_938_533_204_672_8).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn normal_id_glm_lpdf<'a>(
    y: impl Into<Outcomes<'a, f64>>,
    x: &MatrixCl<f64>,
    alpha: impl Into<Param<'a>>,
    beta: &MatrixCl<f64>,
    sigma: impl Into<Param<'a>>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "normal_id_glm_lpdf";
    let n = x.rows();
    let sigma = sigma.into();
    let sigma_vector = is_vector(&sigma);
    let sigma_in_kernel = checked_in_kernel(&sigma);
    let sigma = parameter(F, "sigma", sigma, n, Requirement::PositiveFinite)?;
    let glm = LinearGlm::new(F, y.into(), x, alpha.into(), beta, options)?;
    let wrt = options.wrt;
    let d_sigma = target(if sigma_vector { n } else { 1 }, 1, wrt.aux)?;
    let (total, d_beta) = {
        let (y, alpha, sigma) = (&*glm.y, &glm.alpha, &sigma);
        let eta = matrix_vector_multiply(x, beta) + alpha;
        let eta = &eta;
        let scale = sigma;
        let z = elt_divide(y - eta, scale);
        let z = &z;
        let d_eta = elt_divide(z, scale);
        let d_eta = &d_eta;
        let d_sigma_expr = elt_divide(square(z) - 1.0, scale);
        let d_sigma_expr = &d_sigma_expr;
        let keep_log_sigma = !options.propto || wrt.aux;
        let term = -0.5 * square(z) - keep(keep_log_sigma) * log(scale);
        let logp = full_reduction::<SumOp, _>(term);
        let d_beta = glm.run(
            F,
            (
                check_finite(y, F, "y"),
                optional(check_finite(alpha, F, "alpha"), glm.alpha_on_device),
                optional(
                    check(
                        sigma,
                        F,
                        "sigma",
                        gt(sigma, 0.0).and(lt(sigma, f64::INFINITY)),
                    )
                    .requiring("positive finite"),
                    sigma_in_kernel,
                ),
                check(eta, F, LINEAR_PREDICTOR, lt(fabs(eta), f64::INFINITY)).requiring("finite"),
                glm.gradient_outputs(d_eta),
                optional(output(&d_sigma, d_sigma_expr), wrt.aux && sigma_vector),
                optional(
                    output(&d_sigma, colwise_sum(d_sigma_expr)),
                    wrt.aux && !sigma_vector,
                ),
                &logp,
            ),
        )?;
        (logp.value(), d_beta)
    };
    let constant = -keep(!options.propto) * n as f64 * LOG_SQRT_TWO_PI;
    glm.output(total, d_beta, constant, wrt.aux.then_some(d_sigma))
}
