//! Densities on the real line with a location and a scale: normal and its
//! relatives (heavier tails, skewed, exponentially modified).

use super::common::{
    Checks, Density, LOG_PI, LOG_SQRT_TWO_PI, LOG_TWO, Lp, Real, Req, checked_eval,
};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

/// `log(√π)`.
const LOG_SQRT_PI: f64 = 0.572_364_942_924_700_1;

/// Stan's `normal_lpdf(y | mu, sigma)`:
/// `Σ -((y - μ)/σ)²/2 - log σ - log √(2π)`.
///
/// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = MatrixCl::from_slice(2, 1, &[0.0, 1.0])?;
/// let sigma = Var::new(MatrixCl::from_slice(1, 1, &[1.0])?);
/// let lp = dist::normal_lpdf(&y, 0.0, &sigma).eval()?;
/// let want = -0.5 - 2.0 * 0.918_938_533_204_672_8;
/// assert!((lp.value().to_vec()?[0] - want).abs() < 1e-12);
/// lp.grad()?; // d/dσ = Σ (z² - 1) / σ = -1
/// assert!((sigma.adjoint().to_vec()?[0] + 1.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn normal_lpdf<Y: Real, M: Real, S: Real>(
    y: Y,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("normal_lpdf")
            .real("y", &y, Req::NotNan)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, sigma) = (y.leaf(n), mu.leaf(n), sigma.leaf(n));
        let z = elt_divide(&y - &mu, &sigma);
        let lp = -0.5 * square(z) - log(&sigma) - LOG_SQRT_TWO_PI;
        checked_eval::<(Y, M, S), _>(n, lp, checks)
    })
}

/// Stan's `std_normal_lpdf(y)`: `Σ -y²/2 - log √(2π)`.
///
/// Checks: `y` not NaN.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = Var::new(MatrixCl::from_slice(2, 1, &[0.0, 1.0])?);
/// let lp = dist::std_normal_lpdf(&y).eval()?;
/// lp.grad()?; // d/dy = -y
/// assert_eq!(y.adjoint().to_vec()?, vec![0.0, -1.0]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn std_normal_lpdf<Y: Real>(y: Y) -> Density<impl FnOnce() -> Result<Lp<(Y,)>>> {
    Density::new(move || {
        let mut checks = Checks::new("std_normal_lpdf").real("y", &y, Req::NotNan);
        let n = checks.length()?;
        let lp = -0.5 * square(y.leaf(n)) - LOG_SQRT_TWO_PI;
        checked_eval::<(Y,), _>(n, lp, checks)
    })
}

/// Stan's `student_t_lpdf(y | nu, mu, sigma)`:
/// `Σ lgamma((ν+1)/2) - lgamma(ν/2) - log(νπ)/2 - log σ - (ν+1)/2 · log(1 + z²/ν)`,
/// `z = (y - μ)/σ`.
///
/// Checks: `y` not NaN, `nu` positive and finite, `mu` finite, `sigma`
/// positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.0])?;
/// // ν = 1 is the Cauchy density: 1/π at its centre
/// let lp = dist::student_t_lpdf(&y, 1.0, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp + std::f64::consts::PI.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn student_t_lpdf<Y: Real, N: Real, M: Real, S: Real>(
    y: Y,
    nu: N,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, N, M, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("student_t_lpdf")
            .real("y", &y, Req::NotNan)
            .real("nu", &nu, Req::PositiveFinite)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, nu, mu, sigma) = (y.leaf(n), nu.leaf(n), mu.leaf(n), sigma.leaf(n));
        let z = elt_divide(&y - &mu, &sigma);
        let half_nu = 0.5 * &nu;
        let lp = lgamma(&half_nu + 0.5)
            - lgamma(&half_nu)
            - 0.5 * log(&nu)
            - LOG_SQRT_PI
            - log(&sigma)
            - elt_multiply(&half_nu + 0.5, log1p(elt_divide(square(z), &nu)));
        checked_eval::<(Y, N, M, S), _>(n, lp, checks)
    })
}

/// Stan's `cauchy_lpdf(y | mu, sigma)`: `Σ -log π - log σ - log(1 + z²)`,
/// `z = (y - μ)/σ`.
///
/// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::cauchy_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - (0.5 / std::f64::consts::PI).ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn cauchy_lpdf<Y: Real, M: Real, S: Real>(
    y: Y,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("cauchy_lpdf")
            .real("y", &y, Req::NotNan)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, sigma) = (y.leaf(n), mu.leaf(n), sigma.leaf(n));
        let z = elt_divide(&y - &mu, &sigma);
        let lp = -log1p(square(z)) - log(&sigma) - LOG_PI;
        checked_eval::<(Y, M, S), _>(n, lp, checks)
    })
}

/// Stan's `logistic_lpdf(y | mu, sigma)`:
/// `Σ -z - 2 log(1 + e^{-z}) - log σ`, `z = (y - μ)/σ`.
///
/// Checks: `y` finite, `mu` finite, `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let lp = dist::logistic_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - 0.25f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn logistic_lpdf<Y: Real, M: Real, S: Real>(
    y: Y,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("logistic_lpdf")
            .real("y", &y, Req::Finite)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, sigma) = (y.leaf(n), mu.leaf(n), sigma.leaf(n));
        let z = elt_divide(&y - &mu, &sigma);
        let lp = -2.0 * log1p_exp(-&z) - &z - log(&sigma);
        checked_eval::<(Y, M, S), _>(n, lp, checks)
    })
}

/// Stan's `gumbel_lpdf(y | mu, beta)`: `Σ -log β - z - e^{-z}`,
/// `z = (y - μ)/β`.
///
/// Checks: `y` not NaN, `mu` finite, `beta` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let lp = dist::gumbel_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp + 1.0).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn gumbel_lpdf<Y: Real, M: Real, B: Real>(
    y: Y,
    mu: M,
    beta: B,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, B)>>> {
    Density::new(move || {
        let mut checks = Checks::new("gumbel_lpdf")
            .real("y", &y, Req::NotNan)
            .real("mu", &mu, Req::Finite)
            .real("beta", &beta, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, beta) = (y.leaf(n), mu.leaf(n), beta.leaf(n));
        let z = elt_divide(&y - &mu, &beta);
        let lp = -log(&beta) - &z - exp(-&z);
        checked_eval::<(Y, M, B), _>(n, lp, checks)
    })
}

/// Stan's `double_exponential_lpdf(y | mu, sigma)` (Laplace):
/// `Σ -log 2 - log σ - |y - μ|/σ`.
///
/// Checks: `y` finite, `mu` finite, `sigma` positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let lp = dist::double_exponential_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - (0.5f64.ln() - 1.0)).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn double_exponential_lpdf<Y: Real, M: Real, S: Real>(
    y: Y,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S)>>> {
    Density::new(move || {
        let mut checks = Checks::new("double_exponential_lpdf")
            .real("y", &y, Req::Finite)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, sigma) = (y.leaf(n), mu.leaf(n), sigma.leaf(n));
        let lp = -elt_divide(fabs(&y - &mu), &sigma) - log(&sigma) - LOG_TWO;
        checked_eval::<(Y, M, S), _>(n, lp, checks)
    })
}

/// Stan's `skew_normal_lpdf(y | xi, omega, alpha)`:
/// `Σ -log √(2π) - log ω - z²/2 + log erfc(-α z/√2)`, `z = (y - ξ)/ω`
/// (twice the normal density times the normal CDF of `α z`).
///
/// Checks: `y` not NaN, `xi` finite, `omega` positive and finite, `alpha`
/// finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.3])?;
/// // α = 0 is the normal density
/// let skew = dist::skew_normal_lpdf(&y, 0.0, 1.0, 0.0).eval()?.to_vec()?[0];
/// let normal = dist::normal_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((skew - normal).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn skew_normal_lpdf<Y: Real, X: Real, O: Real, A: Real>(
    y: Y,
    xi: X,
    omega: O,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(Y, X, O, A)>>> {
    Density::new(move || {
        let mut checks = Checks::new("skew_normal_lpdf")
            .real("y", &y, Req::NotNan)
            .real("xi", &xi, Req::Finite)
            .real("omega", &omega, Req::PositiveFinite)
            .real("alpha", &alpha, Req::Finite);
        let n = checks.length()?;
        let (y, xi, omega, alpha) = (y.leaf(n), xi.leaf(n), omega.leaf(n), alpha.leaf(n));
        let z = elt_divide(&y - &xi, &omega);
        let lp = log(erfc(
            -std::f64::consts::FRAC_1_SQRT_2 * elt_multiply(&alpha, &z),
        )) - 0.5 * square(&z)
            - log(&omega)
            - LOG_SQRT_TWO_PI;
        checked_eval::<(Y, X, O, A), _>(n, lp, checks)
    })
}

/// Stan's `skew_double_exponential_lpdf(y | mu, sigma, tau)`:
/// `Σ log 2 + log τ + log(1 - τ) - log σ - 2 w |y - μ|/σ`, `w = 1 - τ`
/// below `μ` and `τ` above.
///
/// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite, `tau` in
/// `(0, 1)`.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[1.0])?;
/// // τ = 1/2 is the Laplace density
/// let skew = dist::skew_double_exponential_lpdf(&y, 0.0, 1.0, 0.5).eval()?.to_vec()?[0];
/// let laplace = dist::double_exponential_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
/// assert!((skew - laplace).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn skew_double_exponential_lpdf<Y: Real, M: Real, S: Real, T: Real>(
    y: Y,
    mu: M,
    sigma: S,
    tau: T,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S, T)>>> {
    Density::new(move || {
        let mut checks = Checks::new("skew_double_exponential_lpdf")
            .real("y", &y, Req::NotNan)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite)
            .real("tau", &tau, Req::OpenUnit);
        let n = checks.length()?;
        let (y, mu, sigma, tau) = (y.leaf(n), mu.leaf(n), sigma.leaf(n), tau.leaf(n));
        let weight = select(lt(&y, &mu), 1.0 - &tau, &tau);
        let lp = log(&tau) + log1m(&tau) - log(&sigma) + LOG_TWO
            - 2.0 * elt_divide(elt_multiply(weight, fabs(&y - &mu)), &sigma);
        checked_eval::<(Y, M, S, T), _>(n, lp, checks)
    })
}

/// Stan's `exp_mod_normal_lpdf(y | mu, sigma, lambda)` (a normal plus an
/// exponential of rate `λ`):
/// `Σ log λ - log 2 + λ(μ + λσ²/2 - y) + log erfc((μ + λσ² - y)/(σ√2))`.
///
/// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite, `lambda`
/// positive and finite.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::dist;
/// let y = MatrixCl::from_slice(1, 1, &[0.0])?;
/// // at y = μ + λσ²: λ/2 · exp(-λ²σ²/2)
/// let lp = dist::exp_mod_normal_lpdf(&y, -1.0, 1.0, 1.0).eval()?.to_vec()?[0];
/// assert!((lp - (0.5f64.ln() - 0.5)).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn exp_mod_normal_lpdf<Y: Real, M: Real, S: Real, L: Real>(
    y: Y,
    mu: M,
    sigma: S,
    lambda: L,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S, L)>>> {
    Density::new(move || {
        let mut checks = Checks::new("exp_mod_normal_lpdf")
            .real("y", &y, Req::NotNan)
            .real("mu", &mu, Req::Finite)
            .real("sigma", &sigma, Req::PositiveFinite)
            .real("lambda", &lambda, Req::PositiveFinite);
        let n = checks.length()?;
        let (y, mu, sigma, lambda) = (y.leaf(n), mu.leaf(n), sigma.leaf(n), lambda.leaf(n));
        let lambda_var = elt_multiply(&lambda, square(&sigma));
        let lp = log(&lambda) - LOG_TWO
            + elt_multiply(&lambda, &mu + 0.5 * &lambda_var - &y)
            + log(erfc(
                std::f64::consts::FRAC_1_SQRT_2 * elt_divide(&mu + &lambda_var - &y, &sigma),
            ));
        checked_eval::<(Y, M, S, L), _>(n, lp, checks)
    })
}
