//! Densities of positive quantities: lognormal, the gamma family
//! (exponential, gamma, inverse gamma, the chi-squares), and the
//! extreme-value and power-law ones (Weibull, Fréchet, Rayleigh, Pareto).

use super::common::{
    Checks, Density, LOG_SQRT_TWO_PI, LOG_TWO, Lp, Order, Real, Req, checked_eval,
};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

const NEG_INF: f64 = f64::NEG_INFINITY;

/// Stan's `lognormal_lpdf(y | mu, sigma)`:
/// `Σ -log √(2π) - log σ - log y - ((log y - μ)/σ)²/2`, `-∞` where `y = 0`.
///
/// Checks: `y` non-negative, `mu` finite, `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::lognormal_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp + 0.918_938_533_204_672_8).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn lognormal_lpdf<Y: Real, M: Real, S: Real>(
    y: Y,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("lognormal_lpdf")
            .real("y", &y, Req::NonNegative)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, sigma) = (y.leaf(n), mu.leaf(n), sigma.leaf(n));
        let log_y = log(&y);
        let z = elt_divide(&log_y - &mu, &sigma);
        let lp = -0.5 * square(z) - log(&sigma) - &log_y - LOG_SQRT_TWO_PI;
        let lp = select(eq(&y, 0.0), NEG_INF, lp);
        checked_eval::<(Y, M, S), _>(n, lp, checks)
    })
}

/// Stan's `exponential_lpdf(y | beta)`: `Σ log β - β y`.
///
/// Checks: `y` non-negative, `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = MatrixCl::from_slice(2, 1, &[1.0, 3.0])?;
/// let beta = Var::new(MatrixCl::from_slice(1, 1, &[0.5])?);
/// let lp = dist::exponential_lpdf(&y, &beta).eval()?;
/// lp.grad()?; // d/dβ = Σ 1/β - y = 4 - 4
/// assert!(beta.adjoint().to_vec()?[0].abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn exponential_lpdf<Y: Real, B: Real>(
    y: Y,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("exponential_lpdf")
            .real("y", &y, Req::NonNegative)
            .real("beta", &beta, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, beta) = (y.leaf(n), beta.leaf(n));
        let lp = log(&beta) - elt_multiply(&beta, &y);
        checked_eval::<(Y, B), _>(n, lp, checks)
    })
}

/// Stan's `gamma_lpdf(y | alpha, beta)` (shape `α`, rate `β`):
/// `Σ α log β - lgamma(α) + (α - 1) log y - β y`.
///
/// Checks: `y` positive and finite, `alpha` and `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[2.0])?;
/// // α = 1 is the exponential density
/// let lp = dist::gamma_lpdf(&y, 1.0, 0.5).eval()?.to_vec()?[0];
/// assert!((lp - (0.5f64.ln() - 1.0)).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn gamma_lpdf<Y: Real, A: Real, B: Real>(
    y: Y,
    alpha: A,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, A, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("gamma_lpdf")
            .real("y", &y, Req::PositiveFinite)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("beta", &beta, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, alpha, beta) = (y.leaf(n), alpha.leaf(n), beta.leaf(n));
        let lp = elt_multiply(&alpha, log(&beta)) - lgamma(&alpha)
            + elt_multiply(&alpha - 1.0, log(&y))
            - elt_multiply(&beta, &y);
        checked_eval::<(Y, A, B), _>(n, lp, checks)
    })
}

/// Stan's `inv_gamma_lpdf(y | alpha, beta)` (shape `α`, scale `β`):
/// `Σ α log β - lgamma(α) - (α + 1) log y - β/y`, `-∞` where `y ≤ 0`.
///
/// Checks: `y` not NaN, `alpha` and `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::inv_gamma_lpdf(&y, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp + 1.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn inv_gamma_lpdf<Y: Real, A: Real, B: Real>(
    y: Y,
    alpha: A,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, A, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("inv_gamma_lpdf")
            .real("y", &y, Req::NotNan)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("beta", &beta, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, alpha, beta) = (y.leaf(n), alpha.leaf(n), beta.leaf(n));
        let lp = elt_multiply(&alpha, log(&beta))
            - lgamma(&alpha)
            - elt_multiply(&alpha + 1.0, log(&y))
            - elt_divide(&beta, &y);
        let lp = select(le(&y, 0.0), NEG_INF, lp);
        checked_eval::<(Y, A, B), _>(n, lp, checks)
    })
}

/// Stan's `chi_square_lpdf(y | nu)`:
/// `Σ (ν/2 - 1) log y - y/2 - lgamma(ν/2) - (ν/2) log 2`.
///
/// Checks: `y` non-negative, `nu` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// // ν = 2 is the exponential density with rate 1/2
/// let lp = dist::chi_square_lpdf(&y, 2.0).eval()?.to_vec()?[0];
/// assert!((lp - (0.5f64.ln() - 0.5)).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn chi_square_lpdf<Y: Real, N: Real>(
    y: Y,
    nu: N,
) -> Density<impl FnOnce() -> Result<Lp<(Y, N)>>> {
    Density::new(move || {
        let mut checks = Checks::new("chi_square_lpdf")
            .real("y", &y, Req::NonNegative)
            .real("nu", &nu, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, nu) = (y.leaf(n), nu.leaf(n));
        let half_nu = 0.5 * &nu;
        let lp = elt_multiply(&half_nu - 1.0, log(&y))
            - 0.5 * &y
            - lgamma(&half_nu)
            - LOG_TWO * &half_nu;
        checked_eval::<(Y, N), _>(n, lp, checks)
    })
}

/// Stan's `inv_chi_square_lpdf(y | nu)`:
/// `Σ -(ν/2) log 2 - lgamma(ν/2) - (ν/2 + 1) log y - 1/(2y)`, `-∞` where
/// `y ≤ 0`.
///
/// Checks: `y` not NaN, `nu` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.5])?;
/// // ν = 2: (1/2) y⁻² e^{-1/(2y)}
/// let lp = dist::inv_chi_square_lpdf(&y, 2.0).eval()?.to_vec()?[0];
/// assert!((lp - (2.0f64.ln() - 1.0)).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn inv_chi_square_lpdf<Y: Real, N: Real>(
    y: Y,
    nu: N,
) -> Density<impl FnOnce() -> Result<Lp<(Y, N)>>> {
    Density::new(move || {
        let mut checks = Checks::new("inv_chi_square_lpdf")
            .real("y", &y, Req::NotNan)
            .real("nu", &nu, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, nu) = (y.leaf(n), nu.leaf(n));
        let half_nu = 0.5 * &nu;
        let lp = -LOG_TWO * &half_nu
            - lgamma(&half_nu)
            - elt_multiply(&half_nu + 1.0, log(&y))
            - elt_divide(0.5, &y);
        let lp = select(le(&y, 0.0), NEG_INF, lp);
        checked_eval::<(Y, N), _>(n, lp, checks)
    })
}

/// Stan's `scaled_inv_chi_square_lpdf(y | nu, s)`:
/// `Σ (ν/2) log(ν/2) - lgamma(ν/2) + ν log s - (ν/2 + 1) log y - ν s²/(2y)`,
/// `-∞` where `y ≤ 0`.
///
/// Checks: `y` not NaN, `nu` and `s` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.5])?;
/// // s² = 1/ν is the inverse chi-square density
/// let scaled = dist::scaled_inv_chi_square_lpdf(&y, 2.0, 0.5f64.sqrt()).eval()?.to_vec()?[0];
/// let plain = dist::inv_chi_square_lpdf(&y, 2.0).eval()?.to_vec()?[0];
/// assert!((scaled - plain).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn scaled_inv_chi_square_lpdf<Y: Real, N: Real, S: Real>(
    y: Y,
    nu: N,
    s: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, N, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("scaled_inv_chi_square_lpdf")
            .real("y", &y, Req::NotNan)
            .real("nu", &nu, Req::PositiveFinite)
            .real("s", &s, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, nu, s) = (y.leaf(n), nu.leaf(n), s.leaf(n));
        let half_nu = 0.5 * &nu;
        let lp = elt_multiply(&half_nu, log(&half_nu)) - lgamma(&half_nu)
            + elt_multiply(&nu, log(&s))
            - elt_multiply(&half_nu + 1.0, log(&y))
            - elt_divide(elt_multiply(&half_nu, square(&s)), &y);
        let lp = select(le(&y, 0.0), NEG_INF, lp);
        checked_eval::<(Y, N, S), _>(n, lp, checks)
    })
}

/// Stan's `weibull_lpdf(y | alpha, sigma)` (shape `α`, scale `σ`):
/// `Σ log α - log σ + (α - 1) log(y/σ) - (y/σ)^α`, `-∞` where `y < 0`.
///
/// Checks: `y` finite, `alpha` and `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[2.0])?;
/// // α = 1 is the exponential density with rate 1/σ
/// let lp = dist::weibull_lpdf(&y, 1.0, 2.0).eval()?.to_vec()?[0];
/// assert!((lp - (0.5f64.ln() - 1.0)).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn weibull_lpdf<Y: Real, A: Real, S: Real>(
    y: Y,
    alpha: A,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, A, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("weibull_lpdf")
            .real("y", &y, Req::Finite)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, alpha, sigma) = (y.leaf(n), alpha.leaf(n), sigma.leaf(n));
        let scaled = elt_divide(&y, &sigma);
        let lp = log(&alpha) - log(&sigma) + elt_multiply(&alpha - 1.0, log(&scaled))
            - pow(&scaled, &alpha);
        let lp = select(lt(&y, 0.0), NEG_INF, lp);
        checked_eval::<(Y, A, S), _>(n, lp, checks)
    })
}

/// Stan's `frechet_lpdf(y | alpha, sigma)` (shape `α`, scale `σ`):
/// `Σ log α + α log σ - (α + 1) log y - (y/σ)^{-α}`.
///
/// Checks: `y` positive, `alpha` and `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::frechet_lpdf(&y, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp + 1.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn frechet_lpdf<Y: Real, A: Real, S: Real>(
    y: Y,
    alpha: A,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, A, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("frechet_lpdf")
            .real("y", &y, Req::Positive)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, alpha, sigma) = (y.leaf(n), alpha.leaf(n), sigma.leaf(n));
        let lp = log(&alpha) + elt_multiply(&alpha, log(&sigma))
            - elt_multiply(&alpha + 1.0, log(&y))
            - pow(elt_divide(&y, &sigma), -&alpha);
        checked_eval::<(Y, A, S), _>(n, lp, checks)
    })
}

/// Stan's `rayleigh_lpdf(y | sigma)`: `Σ log y - 2 log σ - y²/(2σ²)`.
///
/// Checks: `y` positive, `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::rayleigh_lpdf(&y, 1.0).eval()?.to_vec()?[0];
/// assert!((lp + 0.5).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn rayleigh_lpdf<Y: Real, S: Real>(
    y: Y,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("rayleigh_lpdf")
            .real("y", &y, Req::Positive)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, sigma) = (y.leaf(n), sigma.leaf(n));
        let lp = log(&y) - 2.0 * log(&sigma) - 0.5 * square(elt_divide(&y, &sigma));
        checked_eval::<(Y, S), _>(n, lp, checks)
    })
}

/// Stan's `pareto_lpdf(y | y_min, alpha)`:
/// `Σ log α + α log y_min - (α + 1) log y`, `-∞` where `y < y_min`.
///
/// Checks: `y` not NaN, `y_min` and `alpha` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(2, 1, &[2.0, 0.5])?;
/// let lp = dist::pareto_lpdf(&y, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert_eq!(lp, f64::NEG_INFINITY); // 0.5 is below y_min
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn pareto_lpdf<Y: Real, M: Real, A: Real>(
    y: Y,
    y_min: M,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, A)>>> {
    Density::new(move || {
        let mut checks = Checks::new("pareto_lpdf")
            .real("y", &y, Req::NotNan)
            .real("y_min", &y_min, Req::PositiveFinite)
            .real("alpha", &alpha, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, y_min, alpha) = (y.leaf(n), y_min.leaf(n), alpha.leaf(n));
        let lp =
            log(&alpha) + elt_multiply(&alpha, log(&y_min)) - elt_multiply(&alpha + 1.0, log(&y));
        let lp = select(lt(&y, &y_min), NEG_INF, lp);
        checked_eval::<(Y, M, A), _>(n, lp, checks)
    })
}

/// Stan's `pareto_type_2_lpdf(y | mu, lambda, alpha)` (Lomax shifted by
/// `μ`): `Σ log α - log λ - (α + 1) log(1 + (y - μ)/λ)`.
///
/// Checks: `y ≥ mu`, `lambda` and `alpha` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::pareto_type_2_lpdf(&y, 0.0, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - 0.25f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn pareto_type_2_lpdf<Y: Real, M: Real, L: Real, A: Real>(
    y: Y,
    mu: M,
    lambda: L,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, L, A)>>> {
    Density::new(move || {
        let mut checks = Checks::new("pareto_type_2_lpdf")
            .real("y", &y, Req::NotNan)
            .real("mu", &mu, Req::Any)
            .relation("y", &y, Order::GreaterEq, "mu", &mu)
            .real("lambda", &lambda, Req::PositiveFinite)
            .real("alpha", &alpha, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, lambda, alpha) = (y.leaf(n), mu.leaf(n), lambda.leaf(n), alpha.leaf(n));
        let lp = log(&alpha)
            - log(&lambda)
            - elt_multiply(&alpha + 1.0, log1p(elt_divide(&y - &mu, &lambda)));
        checked_eval::<(Y, M, L, A), _>(n, lp, checks)
    })
}
