//! Special functions on the host, for the constant terms of a model and
//! for CPU references: the same functions the densities use on the device
//! (`lgamma`, `lbeta`, `digamma`, `log1p_exp`, `lchoose`, ...), each from a
//! well-kept crate where one has it (`libm`'s `lgamma`, `erf` and `erfc`,
//! `statrs`' `digamma`) or written in the numerically careful form Stan
//! uses.
//!
//! ```
//! use clfuse::special::{lchoose, lgamma};
//! // log of 10 choose 3 = log 120
//! assert!((lchoose(10.0, 3.0) - 120f64.ln()).abs() < 1e-12);
//! assert!((lgamma(5.0) - 24f64.ln()).abs() < 1e-12);
//! ```

/// `log |Γ(x)|` (Stan's `lgamma`), for every `x` but the poles.
///
/// ```
/// assert!((clfuse::special::lgamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
/// ```
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// `log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)` for `a, b > 0`,
/// accurate when one argument is much larger than the other (where the
/// plain difference of `lgamma`s cancels): with `x = min(a, b)`, `y =
/// max(a, b)` and `y ≥ 10`, Stirling's series is split so that the large
/// terms cancel in closed form (`log1p(x/y)`), as Stan's `lbeta` does.
///
/// ```
/// use clfuse::special::{lbeta, lgamma};
/// // B(2, 3) = 1/12
/// assert!((lbeta(2.0, 3.0) + 12f64.ln()).abs() < 1e-13);
/// // B(a, b) ≈ Γ(a) b^-a for b ≫ a: the plain form loses every digit here
/// let want = lgamma(0.5) - 0.5 * 1e15f64.ln();
/// assert!((lbeta(0.5, 1e15) - want).abs() < 1e-12 * want.abs());
/// ```
pub fn lbeta(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (x, y) = if a < b { (a, b) } else { (b, a) };
    if y < 10.0 {
        return lgamma(x) + lgamma(y) - lgamma(x + y);
    }
    // lgamma(y) - lgamma(x + y) with the Stirling terms in closed form.
    let ratio = x / y;
    let tail = stirling_remainder(y) - stirling_remainder(x + y);
    if x < 10.0 {
        // -x·log y - (x + y - 0.5)·log1p(x/y) + x
        lgamma(x) - x * y.ln() - (x + y - 0.5) * ratio.ln_1p() + x + tail
    } else {
        const HALF_LOG_TWO_PI: f64 = 0.918_938_533_204_672_8;
        HALF_LOG_TWO_PI - 0.5 * y.ln() + (x - 0.5) * (x / (x + y)).ln() - y * ratio.ln_1p()
            + stirling_remainder(x)
            + tail
    }
}

/// `lgamma(x) - ((x - 0.5)·log x - x + log √(2π))` for `x ≥ 10`: the
/// remainder of Stirling's series, summed to `x⁻¹³` (relative error below
/// `1e-16` there).
fn stirling_remainder(x: f64) -> f64 {
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    // Bernoulli-number coefficients B₂ₖ / (2k(2k-1)).
    let series = 1.0 / 12.0
        + inv2
            * (-1.0 / 360.0
                + inv2
                    * (1.0 / 1260.0
                        + inv2
                            * (-1.0 / 1680.0
                                + inv2
                                    * (1.0 / 1188.0
                                        + inv2 * (-691.0 / 360_360.0 + inv2 * (1.0 / 156.0))))));
    series * inv
}

/// `ψ(x) = d/dx log Γ(x)`.
///
/// ```
/// // ψ(1) = -γ (Euler's constant)
/// assert!((clfuse::special::digamma(1.0) + 0.577_215_664_901_532_9).abs() < 1e-12);
/// ```
pub fn digamma(x: f64) -> f64 {
    statrs::function::gamma::digamma(x)
}

/// `log (n choose k)` for real `n ≥ k ≥ 0` (Stan's `lchoose`, its
/// `binomial_coefficient_log`).
///
/// ```
/// assert!((clfuse::special::lchoose(5.0, 2.0) - 10f64.ln()).abs() < 1e-13);
/// assert_eq!(clfuse::special::lchoose(7.0, 0.0), 0.0);
/// ```
pub fn lchoose(n: f64, k: f64) -> f64 {
    if k == 0.0 || k == n {
        return 0.0;
    }
    -(n + 1.0).ln() - lbeta(n - k + 1.0, k + 1.0)
}

/// `log(1 + exp(x))` without overflow for large `x` (Stan's `log1p_exp`).
///
/// ```
/// use clfuse::special::log1p_exp;
/// assert_eq!(log1p_exp(1000.0), 1000.0);
/// assert!((log1p_exp(0.0) - 2f64.ln()).abs() < 1e-15);
/// ```
pub fn log1p_exp(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// `log(1 - exp(x))` for `x ≤ 0`, accurate near 0 and far below it (Stan's
/// `log1m_exp`); NaN for `x > 0`.
///
/// ```
/// use clfuse::special::log1m_exp;
/// assert!((log1m_exp(-1e-20) - (1e-20f64).ln()).abs() < 1e-12);
/// assert!(log1m_exp(1.0).is_nan());
/// ```
pub fn log1m_exp(x: f64) -> f64 {
    if x > 0.0 {
        f64::NAN
    } else if x > -std::f64::consts::LN_2 {
        (-x.exp_m1()).ln()
    } else {
        (-x.exp()).ln_1p()
    }
}

/// `log(exp(a) + exp(b))` without overflow.
///
/// ```
/// assert_eq!(clfuse::special::log_sum_exp(1000.0, f64::NEG_INFINITY), 1000.0);
/// ```
pub fn log_sum_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + log1p_exp(lo - hi)
}

/// `log(exp(a) - exp(b))` for `a ≥ b` (Stan's `log_diff_exp`).
///
/// ```
/// let v = clfuse::special::log_diff_exp(2f64.ln(), 0.0); // log(2 - 1)
/// assert!(v.abs() < 1e-15);
/// ```
pub fn log_diff_exp(a: f64, b: f64) -> f64 {
    if b == f64::NEG_INFINITY {
        return a;
    }
    a + log1m_exp(b - a)
}

/// `1 / (1 + exp(-x))`.
///
/// ```
/// assert_eq!(clfuse::special::inv_logit(0.0), 0.5);
/// ```
pub fn inv_logit(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `log(p / (1 - p))`.
///
/// ```
/// assert_eq!(clfuse::special::logit(0.5), 0.0);
/// ```
pub fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

/// `log(inv_logit(x))`, accurate for large `|x|`.
///
/// ```
/// assert_eq!(clfuse::special::log_inv_logit(-800.0), -800.0);
/// ```
pub fn log_inv_logit(x: f64) -> f64 {
    -log1p_exp(-x)
}

/// `log(1 - inv_logit(x))`, accurate for large `|x|`.
///
/// ```
/// assert_eq!(clfuse::special::log1m_inv_logit(800.0), -800.0);
/// ```
pub fn log1m_inv_logit(x: f64) -> f64 {
    -log1p_exp(x)
}

/// The error function.
///
/// ```
/// assert_eq!(clfuse::special::erf(0.0), 0.0);
/// ```
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// `1 - erf(x)`, accurate where `erf(x)` is near 1.
///
/// ```
/// assert!(clfuse::special::erfc(10.0) > 0.0);
/// ```
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

/// The standard normal CDF `Φ(x)` (Stan's `Phi`).
///
/// ```
/// assert_eq!(clfuse::special::phi(0.0), 0.5);
/// ```
pub fn phi(x: f64) -> f64 {
    0.5 * erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lchoose_matches_counting() {
        let mut row = vec![1.0f64];
        for n in 1..40 {
            let mut next = vec![1.0; n + 1];
            for k in 1..n {
                next[k] = row[k - 1] + row[k];
            }
            row = next;
            for (k, c) in row.iter().enumerate() {
                let got = lchoose(n as f64, k as f64);
                assert!(
                    (got - c.ln()).abs() <= 1e-12 * c.ln().abs().max(1.0),
                    "{n} choose {k}"
                );
            }
        }
    }

    #[test]
    fn log_space_forms_agree_with_the_plain_ones_where_those_are_exact() {
        for &x in &[-30.0, -5.0, -0.5, -1e-3, 0.0, 0.25, 3.0, 30.0] {
            let plain = (1.0 + f64::exp(x)).ln();
            assert!(
                (log1p_exp(x) - plain).abs() <= 1e-14 * plain.abs().max(1.0),
                "{x}"
            );
            if x < 0.0 {
                let plain = (1.0 - f64::exp(x)).ln();
                assert!(
                    (log1m_exp(x) - plain).abs() <= 1e-9 * plain.abs().max(1.0),
                    "{x}"
                );
            }
            assert!((log_sum_exp(x, 1.0) - (x.exp() + 1f64.exp()).ln()).abs() < 1e-13);
            assert!((inv_logit(x) - 1.0 / (1.0 + (-x).exp())).abs() < 1e-15);
            assert!(
                (log_inv_logit(x) + log1m_inv_logit(x) - (inv_logit(x) * inv_logit(-x)).ln()).abs()
                    < 1e-12
            );
        }
        assert!((log_diff_exp(3.0, 1.0) - (3f64.exp() - 1f64.exp()).ln()).abs() < 1e-14);
        assert!((lbeta(0.5, 0.5) - std::f64::consts::PI.ln()).abs() < 1e-13);
        // Each branch of lbeta against the plain form where that is exact
        // enough (moderate arguments), including the branch boundaries.
        for &(a, b) in &[
            (0.3, 9.9),
            (0.3, 10.0),
            (2.5, 40.0),
            (9.9, 10.1),
            (10.0, 10.0),
            (15.0, 60.0),
            (120.0, 33.0),
        ] {
            let plain = lgamma(a) + lgamma(b) - lgamma(a + b);
            assert!(
                (lbeta(a, b) - plain).abs() <= 1e-12 * plain.abs().max(1.0),
                "lbeta({a}, {b}) = {} vs {plain}",
                lbeta(a, b)
            );
        }
        assert!(
            (phi(1.96) - 0.975_002_104_851_780).abs() < 1e-12,
            "{}",
            phi(1.96)
        );
        assert!((erf(1.0) + erfc(1.0) - 1.0).abs() < 1e-15);
        assert!((logit(inv_logit(0.7)) - 0.7).abs() < 1e-14);
    }
}
