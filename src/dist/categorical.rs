//! Masses over categories: ordered logistic (cutpoints on a latent scale)
//! and categorical with log-odds (softmax).

use super::common::{Checks, Density, Int, IntReq, Lp, Real, Req, checked_eval, own_length};
use clfuse_core::{Error, Result};
use clfuse_ops::prelude::*;

/// A category count as the `i32` outcomes are compared with.
fn categories(function: &'static str, argument: &'static str, k: usize) -> Result<i32> {
    i32::try_from(k).map_err(|_| Error::InvalidArgument {
        function,
        argument,
        reason: format!("has {k} elements, more categories than an i32 counts"),
    })
}

/// Stan's `ordered_logistic_lpmf(y | eta, c)`: outcome `y ∈ 1..=K` from a
/// latent logistic variable with location `η` cut at the `K - 1` ascending
/// cutpoints `c` (a vector of its own, shared by every outcome):
/// `Σ log(logit⁻¹(η - c_{y-1}) - logit⁻¹(η - c_y))` with `c_0 = -∞` and
/// `c_K = ∞`, computed in log space.
///
/// Checks: `y` in `[1, K]`, `eta` finite, `c` finite, ascending and not
/// empty.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
/// let c = Var::new(MatrixCl::from_slice(2, 1, &[-1.0, 1.0])?);
/// let lp = dist::ordered_logistic_lpmf(&y, 0.0, &c).eval()?;
/// let s = |x: f64| 1.0 / (1.0 + (-x).exp());
/// let want = (1.0 - s(1.0)).ln() + (s(1.0) - s(-1.0)).ln() + s(-1.0).ln();
/// assert!((lp.value().to_vec()?[0] - want).abs() < 1e-12);
/// lp.grad()?; // symmetric: the cutpoints pull equally and oppositely
/// let g = c.adjoint().to_vec()?;
/// assert!((g[0] + g[1]).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn ordered_logistic_lpmf<Y: Int, E: Real, C: Real>(
    y: Y,
    eta: E,
    c: C,
) -> Density<impl FnOnce() -> Result<Lp<(Y, E, C)>>> {
    Density::new(move || {
        const F: &str = "ordered_logistic_lpmf";
        let cuts = own_length(F, "c", &c, 1)?;
        let k = categories(F, "c", cuts + 1)?;
        let mut checks = Checks::new(F)
            .int("y", &y, IntReq::Range(1, k))
            .real("eta", &eta, Req::Finite)
            .apart("c", &c, cuts, Req::Finite, true);
        let n = checks.length()?;
        let (y, eta, c) = (y.leaf(n), eta.leaf(n), c.leaf(cuts));
        // c_{y-1} and c_y, the index kept in range where the category has
        // one cutpoint (y = 1, y = K): that branch does not read the other.
        let below = indexing(&c, select(eq(&y, 1), 0, &y - 2), 0);
        let above = indexing(&c, select(eq(&y, k), k - 2, &y - 1), 0);
        let a = &eta - below;
        let b = &eta - above;
        // log(logit⁻¹(a) - logit⁻¹(b)) for a > b.
        let between = &a - log1p_exp(&a) + log1m_exp(&b - &a) - log1p_exp(&b);
        let lp = select(
            eq(&y, 1),
            log1m_inv_logit(&b),
            select(eq(&y, k), log_inv_logit(&a), between),
        );
        checked_eval::<(Y, E, C), _>(n, lp, checks)
    })
}

/// Stan's `categorical_logit_lpmf(y | beta)`: outcomes `y ∈ 1..=K` with
/// probabilities `softmax(β)` (`β` a `K`-vector shared by every outcome):
/// `Σ β_y - log Σ_k e^{β_k}`.
///
/// Checks: `y` in `[1, K]`, `beta` finite and not empty.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = MatrixCl::from_slice(2, 1, &[1, 1])?;
/// let beta = Var::new(MatrixCl::zeros(2, 1)?);
/// let lp = dist::categorical_logit_lpmf(&y, &beta).eval()?;
/// assert!((lp.value().to_vec()?[0] - 2.0 * 0.5f64.ln()).abs() < 1e-12);
/// lp.grad()?; // Σ [y = k] - softmax(β)_k
/// assert_eq!(beta.adjoint().to_vec()?, vec![1.0, -1.0]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn categorical_logit_lpmf<Y: Int, B: Real>(
    y: Y,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, B)>>> {
    Density::new(move || {
        const F: &str = "categorical_logit_lpmf";
        let len = own_length(F, "beta", &beta, 1)?;
        let k = categories(F, "beta", len)?;
        let mut checks = Checks::new(F).int("y", &y, IntReq::Range(1, k)).apart(
            "beta",
            &beta,
            len,
            Req::Finite,
            false,
        );
        let n = checks.length()?;
        let beta = beta.leaf(len);
        let normaliser = optional_broadcast(colwise_log_sum_exp(&beta), n, 1);
        let lp = indexing(&beta, y.leaf(n) - 1, 0) - normaliser;
        checked_eval::<(Y, B), _>(n, lp, checks)
    })
}
