//! Masses of counts: Poisson and negative binomial, by rate, by log rate,
//! and by mean and dispersion.

use super::common::{Checks, Density, Int, IntReq, Lp, Real, Req, checked_eval};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

const NEG_INF: f64 = f64::NEG_INFINITY;

/// Stan's `poisson_lpmf(n | lambda)`: `Σ n log λ - λ - log n!`, `-∞` where
/// `λ = ∞`.
///
/// Checks: `n` non-negative, `lambda` non-negative.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let counts = MatrixCl::from_slice(2, 1, &[0, 2])?;
/// let lp = dist::poisson_lpmf(&counts, 1.5).eval()?.to_vec()?[0];
/// let want = -1.5 + (2.0 * 1.5f64.ln() - 1.5 - 2.0f64.ln());
/// assert!((lp - want).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn poisson_lpmf<N: Int, L: Real>(
    n: N,
    lambda: L,
) -> Density<impl FnOnce() -> Result<Lp<(N, L)>>> {
    Density::new(move || {
        let mut checks = Checks::new("poisson_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .real("lambda", &lambda, Req::NonNegative);
        let len = checks.length()?;
        let (n, lambda) = (n.leaf(len), lambda.leaf(len));
        let lp = lmultiply((&n).cast::<f64>(), &lambda) - &lambda - lgamma(&n + 1);
        let lp = select(eq(&lambda, f64::INFINITY), NEG_INF, lp);
        checked_eval::<(N, L), _>(len, lp, checks)
    })
}

/// Stan's `poisson_log_lpmf(n | alpha)`: the Poisson mass with `λ = e^α`:
/// `Σ n α - e^α - log n!` (`-∞` where `α = ∞`; `n α = 0` where `n = 0`).
///
/// Checks: `n` non-negative, `alpha` not NaN.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let counts = MatrixCl::from_slice(2, 1, &[1, 3])?;
/// let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
/// let lp = dist::poisson_log_lpmf(&counts, &alpha).eval()?;
/// lp.grad()?; // Σ n - e^α
/// assert!((alpha.adjoint().to_vec()?[0] - 2.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn poisson_log_lpmf<N: Int, A: Real>(
    n: N,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(N, A)>>> {
    Density::new(move || {
        let mut checks = Checks::new("poisson_log_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .real("alpha", &alpha, Req::NotNan);
        let len = checks.length()?;
        let (n, alpha) = (n.leaf(len), alpha.leaf(len));
        let n_alpha = select(eq(&n, 0), 0.0, elt_multiply((&n).cast::<f64>(), &alpha));
        let lp = n_alpha - exp(&alpha) - lgamma(&n + 1);
        let lp = select(eq(&alpha, f64::INFINITY), NEG_INF, lp);
        checked_eval::<(N, A), _>(len, lp, checks)
    })
}

/// Stan's `neg_binomial_lpmf(n | alpha, beta)` (shape `α`, inverse scale
/// `β`): `Σ log C(n + α - 1, n) + α log β - (α + n) log(1 + β)`.
///
/// Checks: `n` non-negative, `alpha` and `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(1, 1, &[0])?;
/// // P(0) = (β / (1 + β))^α
/// let lp = dist::neg_binomial_lpmf(&n, 2.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - 2.0 * 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn neg_binomial_lpmf<N: Int, A: Real, B: Real>(
    n: N,
    alpha: A,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(N, A, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("neg_binomial_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("beta", &beta, Req::PositiveFinite);
        let len = checks.length()?;
        let (n, alpha, beta) = (n.leaf(len), alpha.leaf(len), beta.leaf(len));
        let lp = binomial_coefficient_log(&n + &alpha - 1.0, &n) + elt_multiply(&alpha, log(&beta))
            - elt_multiply(&alpha + &n, log1p(&beta));
        checked_eval::<(N, A, B), _>(len, lp, checks)
    })
}

/// Stan's `neg_binomial_2_lpmf(n | mu, phi)` (mean `μ`, dispersion `φ`):
/// `Σ log C(n + φ - 1, n) + n log μ - φ log(1 + μ/φ) - n log(μ + φ)`.
///
/// Checks: `n` non-negative, `mu` and `phi` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(1, 1, &[0])?;
/// // P(0) = (φ / (μ + φ))^φ
/// let lp = dist::neg_binomial_2_lpmf(&n, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn neg_binomial_2_lpmf<N: Int, M: Real, P: Real>(
    n: N,
    mu: M,
    phi: P,
) -> Density<impl FnOnce() -> Result<Lp<(N, M, P)>>> {
    Density::new(move || {
        let mut checks = Checks::new("neg_binomial_2_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .real("mu", &mu, Req::PositiveFinite)
            .real("phi", &phi, Req::PositiveFinite);
        let len = checks.length()?;
        let (n, mu, phi) = (n.leaf(len), mu.leaf(len), phi.leaf(len));
        let lp = binomial_coefficient_log(&n + &phi - 1.0, &n) + lmultiply((&n).cast::<f64>(), &mu)
            - elt_multiply(&phi, log1p(elt_divide(&mu, &phi)))
            - elt_multiply((&n).cast::<f64>(), log(&mu + &phi));
        checked_eval::<(N, M, P), _>(len, lp, checks)
    })
}

/// Stan's `neg_binomial_2_log_lpmf(n | eta, phi)`: the mean-dispersion
/// negative binomial with `μ = e^η`, in log space:
/// `Σ log C(n + φ - 1, n) + n η - (n + φ) log(1 + e^{η}/φ) - n log φ`.
///
/// Checks: `n` non-negative, `eta` finite, `phi` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(1, 1, &[0])?;
/// let lp = dist::neg_binomial_2_log_lpmf(&n, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn neg_binomial_2_log_lpmf<N: Int, E: Real, P: Real>(
    n: N,
    eta: E,
    phi: P,
) -> Density<impl FnOnce() -> Result<Lp<(N, E, P)>>> {
    Density::new(move || {
        let mut checks = Checks::new("neg_binomial_2_log_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .real("eta", &eta, Req::Finite)
            .real("phi", &phi, Req::PositiveFinite);
        let len = checks.length()?;
        let (n, eta, phi) = (n.leaf(len), eta.leaf(len), phi.leaf(len));
        let log_phi = log(&phi);
        let log1p_ratio = log1p_exp(&eta - &log_phi);
        let lp = binomial_coefficient_log(&n + &phi - 1.0, &n)
            + elt_multiply((&n).cast::<f64>(), &eta - &log_phi)
            - elt_multiply(&n + &phi, &log1p_ratio);
        checked_eval::<(N, E, P), _>(len, lp, checks)
    })
}
