//! `neg_binomial_2_log_glm_lpmf(y | x, alpha, beta, phi)`.

use super::shared::{
    LINEAR_PREDICTOR, LinearGlm, Requirement, checked_in_kernel, is_vector, keep, parameter, target,
};
use super::{GlmOptions, GlmOutput, Outcomes, Param};
use clfuse_core::{MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction};

/// Log mass of counts `y ≥ 0` under the negative binomial with log mean
/// `η = x·beta + alpha` and precision `φ`:
/// `Σ lgamma(y + φ) - lgamma(y + 1) - lgamma(φ) + φ·log φ + y·η - (y + φ)·L`,
/// `L = log(exp(η) + φ)`. `propto` drops `lgamma(y + 1)` and, unless `phi`'s
/// gradient is asked for, the terms in `φ` alone.
/// `d/dη = y - (y + φ)·inv_logit(η - log φ)`,
/// `d/dφ = 1 - (y + φ)·exp(-L) + log φ - L + digamma(y + φ) - digamma(φ)`.
///
/// ```
/// use clfuse::glm::{neg_binomial_2_log_glm_lpmf, GlmOptions};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
/// // mean 1, phi 1: p(0) = 1/2
/// let out = neg_binomial_2_log_glm_lpmf(&[0][..], &x, 0.0, &beta, 1.0, &GlmOptions::default())?;
/// assert!((out.value - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn neg_binomial_2_log_glm_lpmf<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    alpha: impl Into<Param<'a>>,
    beta: &MatrixCl<f64>,
    phi: impl Into<Param<'a>>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "neg_binomial_2_log_glm_lpmf";
    let n = x.rows();
    let phi = phi.into();
    let phi_vector = is_vector(&phi);
    let phi_in_kernel = checked_in_kernel(&phi);
    let phi = parameter(F, "phi", phi, n, Requirement::PositiveFinite)?;
    let glm = LinearGlm::new(F, y.into(), x, alpha.into(), beta, options)?;
    let wrt = options.wrt;
    let d_phi = target(if phi_vector { n } else { 1 }, 1, wrt.aux)?;
    let (total, d_beta) = {
        let (y, alpha, phi) = (&*glm.y, &glm.alpha, &phi);
        let eta = matrix_vector_multiply(x, beta) + alpha;
        let eta = &eta;
        let precision = phi;
        let log_phi = log(precision);
        let log_phi = &log_phi;
        let log_mean_plus_phi = log_sum_exp(eta, log_phi);
        let log_mean_plus_phi = &log_mean_plus_phi;
        let y_plus_phi = y + precision;
        let y_plus_phi = &y_plus_phi;
        let d_eta = y - elt_multiply(y_plus_phi, inv_logit(eta - log_phi));
        let d_eta = &d_eta;
        let d_phi_expr = 1.0 - elt_multiply(y_plus_phi, exp(-log_mean_plus_phi)) + log_phi
            - log_mean_plus_phi
            + digamma(y_plus_phi)
            - digamma(precision);
        let d_phi_expr = &d_phi_expr;
        let predictor_terms = elt_multiply(y, eta) - elt_multiply(y_plus_phi, log_mean_plus_phi);
        let phi_terms = elt_multiply(precision, log_phi) + lgamma(y_plus_phi) - lgamma(precision);
        let term = predictor_terms + keep(!options.propto || wrt.aux) * phi_terms
            - keep(!options.propto) * lgamma(y + 1);
        let logp = full_reduction::<SumOp, _>(term);
        let d_beta = glm.run(
            F,
            (
                check(y, F, "y", ge(y, 0)).requiring("non-negative"),
                optional(check_finite(alpha, F, "alpha"), glm.alpha_on_device),
                optional(
                    check(phi, F, "phi", gt(phi, 0.0).and(lt(phi, f64::INFINITY)))
                        .requiring("positive finite"),
                    phi_in_kernel,
                ),
                check(eta, F, LINEAR_PREDICTOR, lt(fabs(eta), f64::INFINITY)).requiring("finite"),
                glm.gradient_outputs(d_eta),
                optional(output(&d_phi, d_phi_expr), wrt.aux && phi_vector),
                optional(
                    output(&d_phi, colwise_sum(d_phi_expr)),
                    wrt.aux && !phi_vector,
                ),
                &logp,
            ),
        )?;
        (logp.value(), d_beta)
    };
    glm.output(total, d_beta, 0.0, wrt.aux.then_some(d_phi))
}
