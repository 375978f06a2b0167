//! CDFs on the real line: normal, standard normal, Cauchy, logistic,
//! Gumbel, Laplace (plain and skewed) and the exponentially modified normal.

use super::cdf;
use crate::dist::common::{
    Checks, Density, LOG_TWO, Lp, Real, Req, checked_eval, checked_eval_product,
};
use clfuse_core::Result;
use clfuse_ops::prelude::*;
use std::f64::consts::FRAC_1_PI;

cdf! {
    /// Stan's `normal_cdf(y | mu, sigma)`: `Π Φ((y - μ)/σ)`, computed as
    /// `exp(Σ log Φ)`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive.
    fn normal_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::Positive)
        => checked_eval_product, example("0.0", "0.0, 1.0", "0.5")
        = log_phi(elt_divide(&y - &mu, &sigma));
}

cdf! {
    /// Stan's `normal_lcdf(y | mu, sigma)`: `Σ log Φ((y - μ)/σ)`, accurate far
    /// into the lower tail ([`log_phi`](crate::clfuse_ops::log_phi)).
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive.
    fn normal_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::Positive)
        => checked_eval, example("-30.0", "0.0, 1.0", "-454.321_243_956_343_2")
        = log_phi(elt_divide(&y - &mu, &sigma));
}

cdf! {
    /// Stan's `normal_lccdf(y | mu, sigma)`: `Σ log Φ(-(y - μ)/σ)`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive.
    fn normal_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::Positive)
        => checked_eval, example("0.0", "0.0, 1.0", "0.5f64.ln()")
        = log_phi(elt_divide(&mu - &y, &sigma));
}

cdf! {
    /// Stan's `std_normal_cdf(y)`: `Π Φ(y)`.
    ///
    /// Checks: `y` not NaN.
    fn std_normal_cdf(y: Y = Req::NotNan)
        => checked_eval_product, example("0.0", "", "0.5")
        = log_phi(&y);
}

cdf! {
    /// Stan's `std_normal_lcdf(y)`: `Σ log Φ(y)`.
    ///
    /// Checks: `y` not NaN.
    fn std_normal_lcdf(y: Y = Req::NotNan)
        => checked_eval, example("0.0", "", "0.5f64.ln()")
        = log_phi(&y);
}

cdf! {
    /// Stan's `std_normal_lccdf(y)`: `Σ log Φ(-y)`.
    ///
    /// Checks: `y` not NaN.
    fn std_normal_lccdf(y: Y = Req::NotNan)
        => checked_eval, example("0.0", "", "0.5f64.ln()")
        = log_phi(-&y);
}

cdf! {
    /// Stan's `cauchy_cdf(y | mu, sigma)`: `Π 1/2 + atan((y - μ)/σ)/π`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn cauchy_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval_product, example("1.0", "0.0, 1.0", "0.75")
        = let z = elt_divide(&y - &mu, &sigma);
          let safe = select(lt(&z, 0.0), &z, -1.0);
          log(select(
              lt(&z, 0.0),
              atan(elt_divide(-1.0, &safe)) * FRAC_1_PI,
              0.5 + atan(&z) * FRAC_1_PI,
          ));
}

cdf! {
    /// Stan's `cauchy_lcdf(y | mu, sigma)`: `Σ log(1/2 + atan(z)/π)`,
    /// `z = (y - μ)/σ` (as `log(atan(-1/z)/π)` below the centre).
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn cauchy_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("-1.0", "0.0, 1.0", "0.25f64.ln()")
        = let z = elt_divide(&y - &mu, &sigma);
          let safe = select(lt(&z, 0.0), &z, -1.0);
          log(select(
              lt(&z, 0.0),
              atan(elt_divide(-1.0, &safe)) * FRAC_1_PI,
              0.5 + atan(&z) * FRAC_1_PI,
          ));
}

cdf! {
    /// Stan's `cauchy_lccdf(y | mu, sigma)`: `Σ log(1/2 - atan(z)/π)`,
    /// `z = (y - μ)/σ` (the log CDF at `-z`).
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn cauchy_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("1.0", "0.0, 1.0", "0.25f64.ln()")
        = let z = elt_divide(&mu - &y, &sigma);
          let safe = select(lt(&z, 0.0), &z, -1.0);
          log(select(
              lt(&z, 0.0),
              atan(elt_divide(-1.0, &safe)) * FRAC_1_PI,
              0.5 + atan(&z) * FRAC_1_PI,
          ));
}

cdf! {
    /// Stan's `logistic_cdf(y | mu, sigma)`: `Π logit⁻¹((y - μ)/σ)`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn logistic_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval_product, example("0.0", "0.0, 1.0", "0.5")
        = log_inv_logit(elt_divide(&y - &mu, &sigma));
}

cdf! {
    /// Stan's `logistic_lcdf(y | mu, sigma)`: `Σ log_inv_logit((y - μ)/σ)`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn logistic_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("-800.0", "0.0, 1.0", "-800.0")
        = log_inv_logit(elt_divide(&y - &mu, &sigma));
}

cdf! {
    /// Stan's `logistic_lccdf(y | mu, sigma)`: `Σ log1m_inv_logit((y - μ)/σ)`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn logistic_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("800.0", "0.0, 1.0", "-800.0")
        = log1m_inv_logit(elt_divide(&y - &mu, &sigma));
}

cdf! {
    /// Stan's `gumbel_cdf(y | mu, beta)`: `Π exp(-exp(-(y - μ)/β))`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `beta` positive and finite.
    fn gumbel_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, beta: B = Req::PositiveFinite)
        => checked_eval_product, example("0.0", "0.0, 1.0", "(-1.0f64).exp()")
        = -exp(elt_divide(&mu - &y, &beta));
}

cdf! {
    /// Stan's `gumbel_lcdf(y | mu, beta)`: `Σ -exp(-(y - μ)/β)`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `beta` positive and finite.
    fn gumbel_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, beta: B = Req::PositiveFinite)
        => checked_eval, example("0.0", "0.0, 1.0", "-1.0")
        = -exp(elt_divide(&mu - &y, &beta));
}

cdf! {
    /// Stan's `gumbel_lccdf(y | mu, beta)`: `Σ log1m_exp(-exp(-(y - μ)/β))`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `beta` positive and finite.
    fn gumbel_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, beta: B = Req::PositiveFinite)
        => checked_eval, example("30.0", "0.0, 1.0", "-30.0")
        = log1m_exp(-exp(elt_divide(&mu - &y, &beta)));
}

cdf! {
    /// Stan's `double_exponential_cdf(y | mu, sigma)` (Laplace):
    /// `Π F(z)`, `z = (y - μ)/σ`, `F = e^z/2` below 0 and `1 - e^{-z}/2` above.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn double_exponential_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval_product, example("0.0", "0.0, 1.0", "0.5")
        = let z = elt_divide(&y - &mu, &sigma);
          select(lt(&z, 0.0), &z - LOG_TWO, log1m(0.5 * exp(-fmax(&z, 0.0))));
}

cdf! {
    /// Stan's `double_exponential_lcdf(y | mu, sigma)`: `Σ z - log 2` below
    /// the centre, `log1m(e^{-z}/2)` above, `z = (y - μ)/σ`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn double_exponential_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("-1.0", "0.0, 1.0", "0.5f64.ln() - 1.0")
        = let z = elt_divide(&y - &mu, &sigma);
          select(lt(&z, 0.0), &z - LOG_TWO, log1m(0.5 * exp(-fmax(&z, 0.0))));
}

cdf! {
    /// Stan's `double_exponential_lccdf(y | mu, sigma)`: `Σ log1m(e^z/2)`
    /// below the centre, `-z - log 2` above, `z = (y - μ)/σ`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite.
    fn double_exponential_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite)
        => checked_eval, example("1.0", "0.0, 1.0", "0.5f64.ln() - 1.0")
        = let z = elt_divide(&y - &mu, &sigma);
          select(lt(&z, 0.0), log1m(0.5 * exp(fmin(&z, 0.0))), -&z - LOG_TWO);
}

cdf! {
    /// Stan's `skew_double_exponential_cdf(y | mu, sigma, tau)`: `Π F`,
    /// `F = τ e^{-2(1-τ)(μ-y)/σ}` below `μ`, `1 - (1-τ) e^{-2τ(y-μ)/σ}` above
    /// (each exponential reads `max(·, 0)`, finite on the side not taken).
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite, `tau`
    /// in `[0, 1]`.
    fn skew_double_exponential_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite, tau: T = Req::Unit)
        => checked_eval_product, example("0.0", "0.0, 1.0, 0.3", "0.3")
        = let below = elt_divide(2.0 * elt_multiply(1.0 - &tau, fmax(&mu - &y, 0.0)), &sigma);
          let above = elt_divide(2.0 * elt_multiply(&tau, fmax(&y - &mu, 0.0)), &sigma);
          select(
              lt(&y, &mu),
              log(&tau) - &below,
              log1m(elt_multiply(1.0 - &tau, exp(-&above))),
          );
}

cdf! {
    /// Stan's `skew_double_exponential_lcdf(y | mu, sigma, tau)`: `Σ log F`
    /// (see [`skew_double_exponential_cdf`]), in log space on both sides.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite, `tau`
    /// in `[0, 1]`.
    fn skew_double_exponential_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite, tau: T = Req::Unit)
        => checked_eval, example("-1.0", "0.0, 1.0, 0.5", "0.5f64.ln() - 1.0")
        = let below = elt_divide(2.0 * elt_multiply(1.0 - &tau, fmax(&mu - &y, 0.0)), &sigma);
          let above = elt_divide(2.0 * elt_multiply(&tau, fmax(&y - &mu, 0.0)), &sigma);
          select(
              lt(&y, &mu),
              log(&tau) - &below,
              log1m(elt_multiply(1.0 - &tau, exp(-&above))),
          );
}

cdf! {
    /// Stan's `skew_double_exponential_lccdf(y | mu, sigma, tau)`:
    /// `Σ log(1 - F)` (see [`skew_double_exponential_cdf`]).
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` positive and finite, `tau`
    /// in `[0, 1]`.
    fn skew_double_exponential_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite, tau: T = Req::Unit)
        => checked_eval, example("1.0", "0.0, 1.0, 0.5", "0.5f64.ln() - 1.0")
        = let below = elt_divide(2.0 * elt_multiply(1.0 - &tau, fmax(&mu - &y, 0.0)), &sigma);
          let above = elt_divide(2.0 * elt_multiply(&tau, fmax(&y - &mu, 0.0)), &sigma);
          select(
              lt(&y, &mu),
              log1m(elt_multiply(&tau, exp(-&below))),
              log1m(&tau) - &above,
          );
}

cdf! {
    /// Stan's `exp_mod_normal_cdf(y | mu, sigma, lambda)`:
    /// `Π Φ(u) - e^{λ²σ²/2 - λ(y - μ)} Φ(u - λσ)`, `u = (y - μ)/σ`.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` and `lambda` positive and
    /// finite.
    fn exp_mod_normal_cdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite, lambda: L = Req::PositiveFinite)
        => checked_eval_product, example("1.0", "0.0, 1.0, 1.0", "0.841_344_746_068_543 - 0.5 * (-0.5f64).exp()")
        = let u = elt_divide(&y - &mu, &sigma);
          let v = elt_multiply(&lambda, &sigma);
          let second = elt_multiply(&v, 0.5 * &v - &u) + log_phi(&u - &v);
          log_diff_exp(log_phi(&u), &second);
}

cdf! {
    /// Stan's `exp_mod_normal_lcdf(y | mu, sigma, lambda)`: `Σ log F` (see
    /// [`exp_mod_normal_cdf`]), as the `log_diff_exp` of `log Φ(u)` and the
    /// log of the second term.
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` and `lambda` positive and
    /// finite.
    fn exp_mod_normal_lcdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite, lambda: L = Req::PositiveFinite)
        => checked_eval, example("1.0", "0.0, 1.0, 1.0", "(0.841_344_746_068_543 - 0.5 * (-0.5f64).exp()).ln()")
        = let u = elt_divide(&y - &mu, &sigma);
          let v = elt_multiply(&lambda, &sigma);
          let second = elt_multiply(&v, 0.5 * &v - &u) + log_phi(&u - &v);
          log_diff_exp(log_phi(&u), &second);
}

cdf! {
    /// Stan's `exp_mod_normal_lccdf(y | mu, sigma, lambda)`: `Σ log(1 - F)`,
    /// the `log_sum_exp` of `log Φ(-u)` and the log of the second term (see
    /// [`exp_mod_normal_cdf`]).
    ///
    /// Checks: `y` not NaN, `mu` finite, `sigma` and `lambda` positive and
    /// finite.
    fn exp_mod_normal_lccdf(y: Y = Req::NotNan, mu: M = Req::Finite, sigma: S = Req::PositiveFinite, lambda: L = Req::PositiveFinite)
        => checked_eval, example("1.0", "0.0, 1.0, 1.0", "(1.0 - 0.841_344_746_068_543 + 0.5 * (-0.5f64).exp()).ln()")
        = let u = elt_divide(&y - &mu, &sigma);
          let v = elt_multiply(&lambda, &sigma);
          let second = elt_multiply(&v, 0.5 * &v - &u) + log_phi(&u - &v);
          log_sum_exp(log_phi(-&u), &second);
}
