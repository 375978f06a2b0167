//! CDFs of positive quantities: lognormal, and the exponential, Weibull,
//! Fréchet, Rayleigh and Pareto families, whose log CDF or log CCDF is an
//! exact power or logarithm and the other side its `log1m_exp`.

use super::cdf;
use crate::dist::common::{
    Checks, Density, Lp, Order, Real, Req, checked_eval, checked_eval_product,
};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

cdf! {
    /// Stan's `lognormal_cdf(y | mu, sigma)`: `Π Φ((log y - μ)/σ)` (`0` at
    /// `y = 0`).
    ///
    /// Checks: `y` non-negative, `mu` finite, `sigma` positive and finite.
    fn lognormal_cdf(y: Y = Req::NonNegative, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval_product, example("1.0", "0.0, 1.0", "0.5")
        = log_phi(elt_divide(log(&y) - &mu, &sigma));
}

cdf! {
    /// Stan's `lognormal_lcdf(y | mu, sigma)`: `Σ log Φ((log y - μ)/σ)`.
    ///
    /// Checks: `y` non-negative, `mu` finite, `sigma` positive and finite.
    fn lognormal_lcdf(y: Y = Req::NonNegative, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("1.0", "0.0, 1.0", "0.5f64.ln()")
        = log_phi(elt_divide(log(&y) - &mu, &sigma));
}

cdf! {
    /// Stan's `lognormal_lccdf(y | mu, sigma)`: `Σ log Φ(-(log y - μ)/σ)`.
    ///
    /// Checks: `y` non-negative, `mu` finite, `sigma` positive and finite.
    fn lognormal_lccdf(y: Y = Req::NonNegative, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("1.0", "0.0, 1.0", "0.5f64.ln()")
        = log_phi(elt_divide(&mu - log(&y), &sigma));
}

cdf! {
    /// Stan's `exponential_cdf(y | beta)`: `Π 1 - e^{-βy}`.
    ///
    /// Checks: `y` non-negative, `beta` positive and finite.
    fn exponential_cdf(y: Y = Req::NonNegative, beta: B = Req::PositiveFinite)
        => checked_eval_product, example("2.0", "0.5", "1.0 - (-1.0f64).exp()")
        = log1m_exp(-elt_multiply(&beta, &y));
}

cdf! {
    /// Stan's `exponential_lcdf(y | beta)`: `Σ log1m_exp(-βy)`.
    ///
    /// Checks: `y` non-negative, `beta` positive and finite.
    fn exponential_lcdf(y: Y = Req::NonNegative, beta: B = Req::PositiveFinite)
        => checked_eval, example("1e-10", "1.0", "(1e-10f64 - 5e-21).ln()")
        = log1m_exp(-elt_multiply(&beta, &y));
}

cdf! {
    /// Stan's `exponential_lccdf(y | beta)`: `Σ -βy`.
    ///
    /// Checks: `y` non-negative, `beta` positive and finite.
    fn exponential_lccdf(y: Y = Req::NonNegative, beta: B = Req::PositiveFinite)
        => checked_eval, example("2.0", "0.5", "-1.0")
        = -elt_multiply(&beta, &y);
}

cdf! {
    /// Stan's `weibull_cdf(y | alpha, sigma)` (shape `α`, scale `σ`):
    /// `Π 1 - e^{-(y/σ)^α}`.
    ///
    /// Checks: `y` non-negative, `alpha` and `sigma` positive and finite.
    fn weibull_cdf(y: Y = Req::NonNegative, alpha: A = Req::PositiveFinite, sigma: S = Req::PositiveFinite)
        => checked_eval_product, example("2.0", "2.0, 2.0", "1.0 - (-1.0f64).exp()")
        = log1m_exp(-pow(elt_divide(&y, &sigma), &alpha));
}

cdf! {
    /// Stan's `weibull_lcdf(y | alpha, sigma)`: `Σ log1m_exp(-(y/σ)^α)`.
    ///
    /// Checks: `y` non-negative, `alpha` and `sigma` positive and finite.
    fn weibull_lcdf(y: Y = Req::NonNegative, alpha: A = Req::PositiveFinite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("2.0", "2.0, 2.0", "(1.0 - (-1.0f64).exp()).ln()")
        = log1m_exp(-pow(elt_divide(&y, &sigma), &alpha));
}

cdf! {
    /// Stan's `weibull_lccdf(y | alpha, sigma)`: `Σ -(y/σ)^α`.
    ///
    /// Checks: `y` non-negative, `alpha` and `sigma` positive and finite.
    fn weibull_lccdf(y: Y = Req::NonNegative, alpha: A = Req::PositiveFinite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("4.0", "2.0, 2.0", "-4.0")
        = -pow(elt_divide(&y, &sigma), &alpha);
}

cdf! {
    /// Stan's `frechet_cdf(y | alpha, sigma)` (shape `α`, scale `σ`):
    /// `Π e^{-(y/σ)^{-α}}`.
    ///
    /// Checks: `y` positive, `alpha` and `sigma` positive and finite.
    fn frechet_cdf(y: Y = Req::Positive, alpha: A = Req::PositiveFinite, sigma: S = Req::PositiveFinite)
        => checked_eval_product, example("1.0", "1.0, 1.0", "(-1.0f64).exp()")
        = -pow(elt_divide(&y, &sigma), -&alpha);
}

cdf! {
    /// Stan's `frechet_lcdf(y | alpha, sigma)`: `Σ -(y/σ)^{-α}`.
    ///
    /// Checks: `y` positive, `alpha` and `sigma` positive and finite.
    fn frechet_lcdf(y: Y = Req::Positive, alpha: A = Req::PositiveFinite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("0.5", "2.0, 1.0", "-4.0")
        = -pow(elt_divide(&y, &sigma), -&alpha);
}

cdf! {
    /// Stan's `frechet_lccdf(y | alpha, sigma)`: `Σ log1m_exp(-(y/σ)^{-α})`.
    ///
    /// Checks: `y` positive, `alpha` and `sigma` positive and finite.
    fn frechet_lccdf(y: Y = Req::Positive, alpha: A = Req::PositiveFinite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("1.0", "1.0, 1.0", "(1.0 - (-1.0f64).exp()).ln()")
        = log1m_exp(-pow(elt_divide(&y, &sigma), -&alpha));
}

cdf! {
    /// Stan's `rayleigh_cdf(y | sigma)`: `Π 1 - e^{-y²/(2σ²)}`.
    ///
    /// Checks: `y` non-negative, `sigma` positive.
    fn rayleigh_cdf(y: Y = Req::NonNegative, sigma: S = Req::Positive)
        => checked_eval_product, example("2.0", "2.0", "1.0 - (-0.5f64).exp()")
        = log1m_exp(-0.5 * square(elt_divide(&y, &sigma)));
}

cdf! {
    /// Stan's `rayleigh_lcdf(y | sigma)`: `Σ log1m_exp(-y²/(2σ²))`.
    ///
    /// Checks: `y` non-negative, `sigma` positive.
    fn rayleigh_lcdf(y: Y = Req::NonNegative, sigma: S = Req::Positive)
        => checked_eval, example("2.0", "2.0", "(1.0 - (-0.5f64).exp()).ln()")
        = log1m_exp(-0.5 * square(elt_divide(&y, &sigma)));
}

cdf! {
    /// Stan's `rayleigh_lccdf(y | sigma)`: `Σ -y²/(2σ²)`.
    ///
    /// Checks: `y` non-negative, `sigma` positive.
    fn rayleigh_lccdf(y: Y = Req::NonNegative, sigma: S = Req::Positive)
        => checked_eval, example("2.0", "1.0", "-2.0")
        = -0.5 * square(elt_divide(&y, &sigma));
}

/// `α log(y_min/y)`, as `-α log1p((y - y_min)/y_min)` (exact near `y_min`,
/// where `log y_min - log y` would cancel), kept at or below 0 (its value
/// where `y < y_min`, which the callers do not select, would make
/// `log1m_exp` NaN).
macro_rules! pareto_log_survival {
    ($y:expr, $y_min:expr, $alpha:expr) => {
        elt_multiply($alpha, fmin(-log1p(elt_divide($y - $y_min, $y_min)), 0.0))
    };
}

cdf! {
    /// Stan's `pareto_cdf(y | y_min, alpha)`: `Π 1 - (y_min/y)^α`, `0` where
    /// `y < y_min`.
    ///
    /// Checks: `y` non-negative, `y_min` and `alpha` positive and finite.
    fn pareto_cdf(y: Y = Req::NonNegative, y_min: M = Req::PositiveFinite, alpha: A = Req::PositiveFinite)
        => checked_eval_product, example("2.0", "1.0, 1.0", "0.5")
        = select(
            lt(&y, &y_min),
            f64::NEG_INFINITY,
            log1m_exp(pareto_log_survival!(&y, &y_min, &alpha)),
        );
}

cdf! {
    /// Stan's `pareto_lcdf(y | y_min, alpha)`: `Σ log1m_exp(α log(y_min/y))`,
    /// `-∞` where `y < y_min`.
    ///
    /// Checks: `y` non-negative, `y_min` and `alpha` positive and finite.
    fn pareto_lcdf(y: Y = Req::NonNegative, y_min: M = Req::PositiveFinite, alpha: A = Req::PositiveFinite)
        => checked_eval, example("2.0", "1.0, 1.0", "0.5f64.ln()")
        = select(
            lt(&y, &y_min),
            f64::NEG_INFINITY,
            log1m_exp(pareto_log_survival!(&y, &y_min, &alpha)),
        );
}

cdf! {
    /// Stan's `pareto_lccdf(y | y_min, alpha)`: `Σ α log(y_min/y)`, `0` where
    /// `y < y_min`.
    ///
    /// Checks: `y` non-negative, `y_min` and `alpha` positive and finite.
    fn pareto_lccdf(y: Y = Req::NonNegative, y_min: M = Req::PositiveFinite, alpha: A = Req::PositiveFinite)
        => checked_eval, example("4.0", "1.0, 0.5", "-(2.0f64.ln())")
        = pareto_log_survival!(&y, &y_min, &alpha);
}

cdf! {
    /// Stan's `pareto_type_2_cdf(y | mu, lambda, alpha)`:
    /// `Π 1 - (1 + (y - μ)/λ)^{-α}`.
    ///
    /// Checks: `y` not NaN and at least `mu`, `lambda` and `alpha` positive
    /// and finite.
    fn pareto_type_2_cdf(y: Y = Req::NotNan, mu: M = Req::Any, lambda: L = Req::PositiveFinite, alpha: A = Req::PositiveFinite)
        where y GreaterEq mu
        => checked_eval_product, example("1.0", "0.0, 1.0, 1.0", "0.5")
        = log1m_exp(-elt_multiply(&alpha, log1p(elt_divide(&y - &mu, &lambda))));
}

cdf! {
    /// Stan's `pareto_type_2_lcdf(y | mu, lambda, alpha)`:
    /// `Σ log1m_exp(-α log1p((y - μ)/λ))`.
    ///
    /// Checks: `y` not NaN and at least `mu`, `lambda` and `alpha` positive
    /// and finite.
    fn pareto_type_2_lcdf(y: Y = Req::NotNan, mu: M = Req::Any, lambda: L = Req::PositiveFinite, alpha: A = Req::PositiveFinite)
        where y GreaterEq mu
        => checked_eval, example("1.0", "0.0, 1.0, 1.0", "0.5f64.ln()")
        = log1m_exp(-elt_multiply(&alpha, log1p(elt_divide(&y - &mu, &lambda))));
}

cdf! {
    /// Stan's `pareto_type_2_lccdf(y | mu, lambda, alpha)`:
    /// `Σ -α log1p((y - μ)/λ)`.
    ///
    /// Checks: `y` not NaN and at least `mu`, `lambda` and `alpha` positive
    /// and finite.
    fn pareto_type_2_lccdf(y: Y = Req::NotNan, mu: M = Req::Any, lambda: L = Req::PositiveFinite, alpha: A = Req::PositiveFinite)
        where y GreaterEq mu
        => checked_eval, example("1.0", "0.0, 1.0, 2.0", "-2.0 * 2.0f64.ln()")
        = -elt_multiply(&alpha, log1p(elt_divide(&y - &mu, &lambda)));
}
