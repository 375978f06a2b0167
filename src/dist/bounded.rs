//! Densities on an interval: beta (two parameterisations) and uniform.

use super::common::{Checks, Density, Lp, Order, Real, Req, checked_eval};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

/// Stan's `beta_lpdf(y | alpha, beta)`:
/// `Σ (α - 1) log y + (β - 1) log(1 - y) - lbeta(α, β)`, with `0 · log 0 = 0`
/// at the ends.
///
/// Checks: `y` in `[0, 1]`, `alpha` and `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.5])?;
/// // Beta(2, 2) = 6 y (1 - y)
/// let lp = dist::beta_lpdf(&y, 2.0, 2.0).eval()?.to_vec()?[0];
/// assert!((lp - 1.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn beta_lpdf<Y: Real, A: Real, B: Real>(
    y: Y,
    alpha: A,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, A, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("beta_lpdf")
            .real("y", &y, Req::Unit)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("beta", &beta, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, alpha, beta) = (y.leaf(n), alpha.leaf(n), beta.leaf(n));
        let lp =
            lmultiply(&alpha - 1.0, &y) + lmultiply(&beta - 1.0, 1.0 - &y) - lbeta(&alpha, &beta);
        checked_eval::<(Y, A, B), _>(n, lp, checks)
    })
}

/// Stan's `beta_proportion_lpdf(y | mu, kappa)`: the beta density with
/// `α = μκ`, `β = (1 - μ)κ` (mean `μ`, precision `κ`).
///
/// Checks: `y` in `[0, 1]`, `mu` in `(0, 1)`, `kappa` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.3])?;
/// let a = dist::beta_proportion_lpdf(&y, 0.5, 4.0).eval()?.to_vec()?[0];
/// let b = dist::beta_lpdf(&y, 2.0, 2.0).eval()?.to_vec()?[0];
/// assert!((a - b).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn beta_proportion_lpdf<Y: Real, M: Real, K: Real>(
    y: Y,
    mu: M,
    kappa: K,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, K)>>> {
    Density::new(move || {
        let mut checks = Checks::new("beta_proportion_lpdf")
            .real("y", &y, Req::Unit)
            .real("mu", &mu, Req::OpenUnit)
            .real("kappa", &kappa, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, kappa) = (y.leaf(n), mu.leaf(n), kappa.leaf(n));
        let a = elt_multiply(&mu, &kappa);
        let b = &kappa - &a;
        let lp = lgamma(&kappa) - lgamma(&a) - lgamma(&b)
            + lmultiply(&a - 1.0, &y)
            + lmultiply(&b - 1.0, 1.0 - &y);
        checked_eval::<(Y, M, K), _>(n, lp, checks)
    })
}

/// Stan's `uniform_lpdf(y | alpha, beta)`: `Σ -log(β - α)`, `-∞` where `y`
/// lies outside `[α, β]`.
///
/// Checks: `y` not NaN, `alpha` and `beta` finite, `beta > alpha`.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(2, 1, &[0.5, 1.5])?;
/// let lp = dist::uniform_lpdf(&y, 0.0, 2.0).eval()?.to_vec()?[0];
/// assert!((lp - 2.0 * 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn uniform_lpdf<Y: Real, A: Real, B: Real>(
    y: Y,
    alpha: A,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, A, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("uniform_lpdf")
            .real("y", &y, Req::NotNan)
            .real("alpha", &alpha, Req::Finite)
            .real("beta", &beta, Req::Finite)
            .relation("beta", &beta, Order::Greater, "alpha", &alpha);
        let n = checks.length()?;
        let (y, alpha, beta) = (y.leaf(n), alpha.leaf(n), beta.leaf(n));
        let outside = lt(&y, &alpha).or(gt(&y, &beta));
        let lp = select(outside, f64::NEG_INFINITY, -log(&beta - &alpha));
        checked_eval::<(Y, A, B), _>(n, lp, checks)
    })
}
