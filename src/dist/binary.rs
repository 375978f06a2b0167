//! Masses of successes: Bernoulli and binomial (by probability or
//! log-odds) and the beta-binomial.

use super::common::{Checks, Density, Int, IntReq, Lp, Order, Real, Req, checked_eval};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

/// Stan's `bernoulli_lpmf(n | theta)`: `Σ log θ` where `n = 1`, `log(1 - θ)`
/// where `n = 0`.
///
/// Checks: `n` 0 or 1, `theta` in `[0, 1]`.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let n = MatrixCl::from_slice(3, 1, &[1, 0, 1])?;
/// let theta = Var::new(MatrixCl::from_slice(1, 1, &[0.5])?);
/// let lp = dist::bernoulli_lpmf(&n, &theta).eval()?;
/// assert!((lp.value().to_vec()?[0] - 3.0 * 0.5f64.ln()).abs() < 1e-12);
/// lp.grad()?; // 2/θ - 1/(1 - θ)
/// assert!((theta.adjoint().to_vec()?[0] - 2.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn bernoulli_lpmf<N: Int, T: Real>(
    n: N,
    theta: T,
) -> Density<impl FnOnce() -> Result<Lp<(N, T)>>> {
    Density::new(move || {
        let mut checks = Checks::new("bernoulli_lpmf")
            .int("n", &n, IntReq::Binary)
            .real("theta", &theta, Req::Unit);
        let len = checks.length()?;
        let (n, theta) = (n.leaf(len), theta.leaf(len));
        let lp = select(eq(n, 1), log(&theta), log1m(&theta));
        checked_eval::<(N, T), _>(len, lp, checks)
    })
}

/// Stan's `bernoulli_logit_lpmf(n | alpha)`: the Bernoulli mass with
/// `θ = logit⁻¹(α)`, computed in log space (`log_inv_logit`).
///
/// Checks: `n` 0 or 1, `alpha` not NaN.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(2, 1, &[1, 0])?;
/// let lp = dist::bernoulli_logit_lpmf(&n, 0.0).eval()?.to_vec()?[0];
/// assert!((lp - 2.0 * 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn bernoulli_logit_lpmf<N: Int, A: Real>(
    n: N,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(N, A)>>> {
    Density::new(move || {
        let mut checks = Checks::new("bernoulli_logit_lpmf")
            .int("n", &n, IntReq::Binary)
            .real("alpha", &alpha, Req::NotNan);
        let len = checks.length()?;
        let (n, alpha) = (n.leaf(len), alpha.leaf(len));
        let lp = select(eq(n, 1), log_inv_logit(&alpha), log1m_inv_logit(&alpha));
        checked_eval::<(N, A), _>(len, lp, checks)
    })
}

/// Stan's `binomial_lpmf(n | N, theta)`:
/// `Σ log C(N, n) + n log θ + (N - n) log(1 - θ)` (`0 · log 0 = 0`).
///
/// Checks: `N` non-negative, `n` in `[0, N]`, `theta` in `[0, 1]`.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(1, 1, &[1])?;
/// // C(2, 1) / 4
/// let lp = dist::binomial_lpmf(&n, 2, 0.5).eval()?.to_vec()?[0];
/// assert!((lp - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
#[allow(non_snake_case)]
pub fn binomial_lpmf<N: Int, M: Int, T: Real>(
    n: N,
    N: M,
    theta: T,
) -> Density<impl FnOnce() -> Result<Lp<(N, M, T)>>> {
    Density::new(move || {
        let mut checks = Checks::new("binomial_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .int("N", &N, IntReq::NonNegative)
            .int_relation("n", &n, Order::LessEq, "N", &N)
            .real("theta", &theta, Req::Unit);
        let len = checks.length()?;
        let (n, N, theta) = (n.leaf(len), N.leaf(len), theta.leaf(len));
        let failures = &N - &n;
        let lp = binomial_coefficient_log(&N, &n)
            + lmultiply((&n).cast::<f64>(), &theta)
            + select(
                eq(&failures, 0),
                0.0,
                elt_multiply((&failures).cast::<f64>(), log1m(&theta)),
            );
        checked_eval::<(N, M, T), _>(len, lp, checks)
    })
}

/// Stan's `binomial_logit_lpmf(n | N, alpha)`: the binomial mass with
/// `θ = logit⁻¹(α)`, computed in log space.
///
/// Checks: `N` non-negative, `n` in `[0, N]`, `alpha` finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(1, 1, &[1])?;
/// let lp = dist::binomial_logit_lpmf(&n, 2, 0.0).eval()?.to_vec()?[0];
/// assert!((lp - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
#[allow(non_snake_case)]
pub fn binomial_logit_lpmf<N: Int, M: Int, A: Real>(
    n: N,
    N: M,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(N, M, A)>>> {
    Density::new(move || {
        let mut checks = Checks::new("binomial_logit_lpmf")
            .int("n", &n, IntReq::NonNegative)
            .int("N", &N, IntReq::NonNegative)
            .int_relation("n", &n, Order::LessEq, "N", &N)
            .real("alpha", &alpha, Req::Finite);
        let len = checks.length()?;
        let (n, N, alpha) = (n.leaf(len), N.leaf(len), alpha.leaf(len));
        let lp = binomial_coefficient_log(&N, &n)
            + elt_multiply((&n).cast::<f64>(), log_inv_logit(&alpha))
            + elt_multiply((&N - &n).cast::<f64>(), log1m_inv_logit(&alpha));
        checked_eval::<(N, M, A), _>(len, lp, checks)
    })
}

/// Stan's `beta_binomial_lpmf(n | N, alpha, beta)`:
/// `Σ log C(N, n) + lbeta(n + α, N - n + β) - lbeta(α, β)`, `-∞` where `n`
/// lies outside `[0, N]`.
///
/// Checks: `N` non-negative, `alpha` and `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let n = MatrixCl::from_slice(3, 1, &[0, 1, 2])?;
/// // α = β = 1: uniform over 0..=N
/// let lp = dist::beta_binomial_lpmf(&n, 2, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - 3.0 * (1.0f64 / 3.0).ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
#[allow(non_snake_case)]
pub fn beta_binomial_lpmf<N: Int, M: Int, A: Real, B: Real>(
    n: N,
    N: M,
    alpha: A,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(N, M, A, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("beta_binomial_lpmf")
            .int("n", &n, IntReq::Any)
            .int("N", &N, IntReq::NonNegative)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("beta", &beta, Req::PositiveFinite);
        let len = checks.length()?;
        let (n, N, alpha, beta) = (n.leaf(len), N.leaf(len), alpha.leaf(len), beta.leaf(len));
        let lp = binomial_coefficient_log(&N, &n) + lbeta(&n + &alpha, &N - &n + &beta)
            - lbeta(&alpha, &beta);
        let outside = lt(&n, 0).or(gt(&n, &N));
        let lp = select(outside, f64::NEG_INFINITY, lp);
        checked_eval::<(N, M, A, B), _>(len, lp, checks)
    })
}
