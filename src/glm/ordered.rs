//! `ordered_logistic_glm_lpmf(y | x, beta, cutpoints)`.

use super::shared::{Finish, LINEAR_PREDICTOR, column, design, diagnose, outcomes, target, value};
use super::{GlmOptions, GlmOutput, Outcomes};
use clfuse_core::{Error, MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::{SumOp, full_reduction, fuse_then};

/// Log mass of `y ∈ 1..K` under the ordered logistic model with location
/// `η = x·beta` and ascending cutpoints `c` (`K - 1` of them):
/// `log(inv_logit(η - c[y-1]) - inv_logit(η - c[y]))` with `c[0] = -∞`,
/// `c[K] = +∞`, computed stably as
/// `-log1p_exp(-(η - c[y-1])) - log1p_exp(η - c[y]) + log1m_exp(c[y-1] - c[y])`.
///
/// ```
/// use clfuse::glm::{ordered_logistic_glm_lpmf, GlmOptions};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let cuts = MatrixCl::from_slice(1, 1, &[0.0])?;
/// // K = 2, cut at 0, location 0: p(y = 1) = 1/2
/// let out = ordered_logistic_glm_lpmf(&[1][..], &x, &beta, &cuts, &GlmOptions::default())?;
/// assert!((out.value - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn ordered_logistic_glm_lpmf<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: &MatrixCl<f64>,
    beta: &MatrixCl<f64>,
    cutpoints: &MatrixCl<f64>,
    options: &GlmOptions,
) -> Result<GlmOutput> {
    const F: &str = "ordered_logistic_glm_lpmf";
    let n = x.rows();
    let y = outcomes(F, y.into(), n)?;
    design(F, x, beta, 1)?;
    let cuts = cutpoints.rows();
    if cuts == 0 {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "cutpoints",
            reason: "needs at least one cutpoint (K >= 2)".into(),
        });
    }
    column(F, "cutpoints", cutpoints, cuts)?;
    check_cutpoints(F, cutpoints)?;
    let categories = i32::try_from(cuts + 1).map_err(|_| Error::InvalidArgument {
        function: F,
        argument: "cutpoints",
        reason: "too many cutpoints for 32-bit indices".into(),
    })?;
    // No intercept: the alpha slot of Finish stays unused.
    let wrt = super::Wrt {
        alpha: false,
        ..options.wrt
    };
    let finish = Finish {
        x,
        beta,
        wrt,
        alpha_is_vector: false,
        beta_in_kernel: false,
    };
    let y = &*y;

    let eta = matrix_vector_multiply(x, beta);
    let eta = &eta;
    let has_lower = gt(y, 1);
    let has_lower = &has_lower;
    let has_upper = lt(y, categories);
    let has_upper = &has_upper;
    let both = has_lower.and(has_upper);
    let both = &both;
    // The cutpoints below and above y, the index kept in range where y
    // has none there (y = 1, y = K, or y out of range, which the check on
    // y reports): those terms are masked below.
    let above_lower = eta - indexing(cutpoints, select(has_lower, y - 2, 0), 0);
    let above_lower = &above_lower;
    let above_upper = eta - indexing(cutpoints, select(has_upper, y - 1, 0), 0);
    let above_upper = &above_upper;
    let gap_term = select(both, 1.0 / expm1(above_lower - above_upper), 0.0);
    let gap_term = &gap_term;
    let term = select(has_lower, -log1p_exp(-above_lower), 0.0)
        + select(has_upper, -log1p_exp(above_upper), 0.0)
        + select(both, log1m_exp(above_upper - above_lower), 0.0);
    let d_eta_expr = select(has_lower, inv_logit(-above_lower), 0.0)
        - select(has_upper, inv_logit(above_upper), 0.0);
    let d_lower_expr = -select(has_lower, inv_logit(-above_lower) + gap_term, 0.0);
    let d_upper_expr = select(has_upper, inv_logit(above_upper) + gap_term, 0.0);

    let logp = full_reduction::<SumOp, _>(term);
    let d_eta = target(n, 1, finish.needs_d_eta())?;
    let (d_lower, d_upper) = (target(n, 1, wrt.aux)?, target(n, 1, wrt.aux)?);
    let mut d_beta = None;
    fuse_then(
        (
            check(y, F, "y", ge(y, 1).and(le(y, categories)))
                .requiring(&format!("in 1..={categories}")),
            check(eta, F, LINEAR_PREDICTOR, lt(fabs(eta), f64::INFINITY)).requiring("finite"),
            optional(output(&d_eta, d_eta_expr), finish.needs_d_eta()),
            optional(output(&d_lower, d_lower_expr), wrt.aux),
            optional(output(&d_upper, d_upper_expr), wrt.aux),
            &logp,
        ),
        || {
            d_beta = finish.beta_gradient(&d_eta)?;
            Ok(())
        },
    )
    .map_err(|e| diagnose(F, x, beta, e))?;
    let value = value(logp.value(), &GlmOptions { wrt, ..*options }, 0.0)?;
    let d_cutpoints = if wrt.aux {
        // Each observation adds its two derivatives to cutpoints y-1 and y (1-based).
        let outcome = colwise_broadcast(y, cuts);
        let outcome = &outcome;
        let cut = col_index(n, cuts);
        let cut = &cut;
        let scattered = select(
            eq(outcome, cut + 2),
            colwise_broadcast(&d_lower, cuts),
            0.0f64,
        ) + select(
            eq(outcome, cut + 1),
            colwise_broadcast(&d_upper, cuts),
            0.0f64,
        );
        Some(colwise_sum(scattered).eval()?.reshape(cuts, 1)?)
    } else {
        None
    };
    finish.output(
        value,
        d_eta,
        MatrixCl::uninitialized(0, 0)?,
        d_beta,
        d_cutpoints,
    )
}

/// Cutpoints must be finite and strictly ascending: checked by a small
/// kernel of its own (the GLM's kernel runs over the observations), so
/// only its verdict comes back to the host, not the cutpoints.
fn check_cutpoints(function: &'static str, cutpoints: &MatrixCl<f64>) -> Result<()> {
    let k = cutpoints.rows();
    if k == 0 {
        return Ok(());
    }
    let row = || row_index(k, 1);
    let previous = indexing(cutpoints, select(gt(row(), 0), row() - 1, 0), 0);
    let ascending = eq(row(), 0).or(gt(cutpoints, previous));
    let finite = lt(fabs(cutpoints), f64::INFINITY);
    fuse((
        check(cutpoints, function, "cutpoints", finite.and(ascending))
            .requiring("finite and greater than the previous cutpoint"),
    ))
}
