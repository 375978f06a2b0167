//! `categorical_logit_glm_lpmf(y | x, alpha, beta)`.

use super::shared::{LINEAR_PREDICTOR, column, outcomes, target, value};
use super::{GlmOptions, GlmOutput, Outcomes};
use clfuse_core::{Error, MatrixCl, Result};
use clfuse_kernels::{self as k, Op};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction};

/// Log mass of `y ∈ 1..K` under `y ~ Categorical(softmax(x·beta + alpha))`
/// with `alpha` a `K x 1` vector and `beta` `P x K`:
/// `Σ lp[i, y_i] - log_sum_exp(lp[i, ·])`, `lp = x·beta + 1·alphaᵀ`.
/// The derivative with respect to `lp` is `onehot(y) - softmax(lp)`.
///
/// `x·beta` is the GEMM leaf (`*`); one fused kernel computes the
/// row-wise log-sum-exp, the value and the checks, a second (over the
/// `N x K` predictor) the derivative and `d_alpha`; `xᵀ·d` and `d·betaᵀ` are GEMMs.
///
/// ```
/// use clfuse::glm::{categorical_logit_glm_lpmf, GlmOptions};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let alpha = MatrixCl::from_slice(3, 1, &[0.0, 0.0, 0.0])?;
/// let beta = MatrixCl::from_slice(1, 3, &[1.0, 2.0, 3.0])?;
/// let out = categorical_logit_glm_lpmf(&[2][..], &x, &alpha, &beta, &GlmOptions::default())?;
/// assert!((out.value - (1.0f64 / 3.0).ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn categorical_logit_glm_lpmf<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    alpha: &MatrixCl<f64>,
    beta: &MatrixCl<f64>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "categorical_logit_glm_lpmf";
    let (n, categories) = (x.rows(), beta.cols());
    let y = outcomes(F, y.into(), n)?;
    if beta.rows() != x.cols() || categories == 0 {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "beta",
            reason: format!(
                "must be {} x K (K >= 1) for x of {} x {}, got {} x {}",
                x.cols(),
                n,
                x.cols(),
                beta.rows(),
                beta.cols()
            ),
        });
    }
    column(F, "alpha", alpha, categories)?;
    let wrt = options.wrt;
    let y = &*y;
    let k_int = i32::try_from(categories).map_err(|_| Error::InvalidArgument {
        function: F,
        argument: "beta",
        reason: format!("{categories} categories exceed the kernels' 32-bit indices"),
    })?;

    let lp = x * beta + rowwise_broadcast(transpose(alpha), n);
    let lp = &lp;
    let row_max = rowwise_max(lp);
    let row_max = &row_max;
    let log_normaliser = row_max
        + log(rowwise_sum(
            exp(lp - colwise_broadcast(row_max, categories)),
        ));
    let log_normaliser = &log_normaliser;
    let is_observed = eq(
        col_index(n, categories) + 1,
        colwise_broadcast(y, categories),
    );
    let is_observed = &is_observed;
    let observed = rowwise_sum(select(is_observed, lp, 0.0));

    let logp = full_reduction::<SumOp, _>(observed - log_normaliser);
    let need_derivative = wrt.alpha || wrt.beta || wrt.x;
    let normaliser = target(n, 1, need_derivative)?;
    fuse((
        check(y, F, "y", ge(y, 1).and(le(y, k_int))).requiring(&format!("in 1..={categories}")),
        check(
            log_normaliser,
            F,
            LINEAR_PREDICTOR,
            lt(fabs(log_normaliser), f64::INFINITY),
        )
        .requiring("finite"),
        optional(output(&normaliser, log_normaliser), need_derivative),
        &logp,
    ))
    .map_err(|e| diagnose(F, x, alpha, beta, e))?;
    let value = value(logp.value(), options, 0.0)?;
    if !need_derivative {
        return Ok(GlmOutput {
            value,
            d_alpha: None,
            d_beta: None,
            d_x: None,
            d_aux: None,
            prefetched: Default::default(),
        });
    }

    let derivative =
        select(is_observed, 1.0, 0.0) - exp(lp - colwise_broadcast(&normaliser, categories));
    let derivative = &derivative;
    let d_lp = target(n, categories, wrt.beta || wrt.x)?;
    let d_alpha = target(1, categories, wrt.alpha)?;
    fuse((
        optional(output(&d_lp, derivative), wrt.beta || wrt.x),
        optional(output(&d_alpha, colwise_sum(derivative)), wrt.alpha),
    ))?;
    Ok(GlmOutput {
        value,
        d_alpha: if wrt.alpha {
            Some(d_alpha.reshape(categories, 1)?)
        } else {
            None
        },
        d_beta: if wrt.beta {
            Some(k::multiply_transposed(x, Op::T, &d_lp, Op::N)?)
        } else {
            None
        },
        d_x: if wrt.x {
            Some(k::multiply_transposed(&d_lp, Op::N, beta, Op::T)?)
        } else {
            None
        },
        d_aux: None,
        prefetched: Default::default(),
    })
}

/// A non-finite log-normaliser: blame x, beta or alpha when one holds a
/// non-finite value.
fn diagnose(
    function: &'static str,
    x: &MatrixCl<f64>,
    alpha: &MatrixCl<f64>,
    beta: &MatrixCl<f64>,
    error: Error,
) -> Error {
    let error = super::shared::diagnose(function, x, beta, error);
    if matches!(&error, Error::CheckFailed { argument, .. } if argument == LINEAR_PREDICTOR)
        && let Err(e) = check_finite(alpha, function, "alpha").run()
    {
        return e;
    }
    error
}
