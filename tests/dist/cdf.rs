//! The 51 CDFs: each a line of a table, its value against statrs (or the
//! formula written plainly, in log space) and its gradient in every
//! argument against finite differences, by the drivers of `support.rs`. A
//! `_cdf` (a product) is compared through the device `log` of its result:
//! `log Π F = Σ log F` and `∂ log Π F = Σ ∂ log F`, which checks the product
//! and its gradient to the same relative precision as the sums (its `y`
//! ranges keep `Π F` far from underflow at 1000 elements). Then the tails
//! of every log CDF and log CCDF against log-space references, and the
//! argument checks.

use crate::common::reference as r;
use crate::support::{
    Case, IntCase, check_mass_scalar_vars, check_masses, check_numbers, check_scalar_vars,
    check_vectors, sizes, soak,
};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};
use statrs::distribution::{
    Cauchy, ContinuousCDF, Exp, Gumbel, Laplace, LogNormal, Normal, Pareto, Uniform, Weibull,
};

/// A `_cdf`'s result, logged on the device; an `_lcdf`'s or `_lccdf`'s, as it is.
trait Logged: Sized {
    fn logged(self) -> Result<Self>;
}
impl Logged for Var {
    fn logged(self) -> Result<Var> {
        log(&self).eval()
    }
}
impl Logged for MatrixCl<f64> {
    fn logged(self) -> Result<MatrixCl<f64>> {
        log(&self).eval()
    }
}
fn product<T: Logged>(x: T) -> Result<T> {
    x.logged()
}
fn sum<T>(x: T) -> Result<T> {
    Ok(x)
}

/// The functions whose `1 x 1`-variable form runs without `FUSION_SOAK`.
const SCALAR_VARS: &[&str] = &[
    "normal_lcdf",
    "exp_mod_normal_lccdf",
    "skew_double_exponential_lcdf",
    "weibull_cdf",
];

fn run(case: &Case) -> Result<()> {
    for &n in sizes() {
        check_vectors(case, n)?;
        check_numbers(case, n)?;
    }
    if soak() || SCALAR_VARS.contains(&case.name) {
        for n in [1, 33] {
            check_scalar_vars(case, n)?;
        }
    }
    Ok(())
}

macro_rules! cdfs {
    ($($kind:ident $name:ident($y:ident in [$ylo:literal, $yhi:literal] $(, $p:ident in [$lo:literal, $hi:literal])*) => $reference:expr;)*) => {$(
        #[test]
        fn $name() -> Result<()> {
            run(&Case {
                name: stringify!($name),
                ranges: &[($ylo, $yhi) $(, ($lo, $hi))*],
                reference: |a: &[f64]| {
                    let &[$y $(, $p)*] = a else { unreachable!() };
                    $reference
                },
                vars: |v: &[&Var]| {
                    let &[$y $(, $p)*] = v else { unreachable!() };
                    $kind(dist::$name($y $(, $p)*).eval()?)
                },
                numbers: |$y: &MatrixCl<f64>, p: &[f64]| {
                    let &[$($p),*] = p else { unreachable!() };
                    $kind(dist::$name($y $(, $p)*).eval()?)
                },
                scalar_vars: |$y: &MatrixCl<f64>, p: &[&Var]| {
                    let &[$($p),*] = p else { unreachable!() };
                    $kind(dist::$name($y $(, $p)*).eval()?)
                },
            })
        }
    )*};
}

fn normal(mu: f64, sigma: f64) -> Normal {
    Normal::new(mu, sigma).unwrap()
}

/// `log(-expm1(x))`, `log(1 - e^x)` for `x < 0`.
fn log1m_exp(x: f64) -> f64 {
    r::log1m_exp(x)
}

/// The exponentially modified normal's CDF, plainly (ranges keep `u` above
/// -4, where its two terms do not cancel badly).
fn emg_cdf(y: f64, mu: f64, sigma: f64, lambda: f64) -> f64 {
    let u = (y - mu) / sigma;
    let v = lambda * sigma;
    let std = Normal::standard();
    std.cdf(u) - (v * v / 2.0 - v * u).exp() * std.cdf(u - v)
}

/// The skewed Laplace's CDF, plainly.
fn skew_laplace_cdf(y: f64, mu: f64, sigma: f64, tau: f64) -> f64 {
    if y < mu {
        tau * (-2.0 * (1.0 - tau) * (mu - y) / sigma).exp()
    } else {
        1.0 - (1.0 - tau) * (-2.0 * tau * (y - mu) / sigma).exp()
    }
}

cdfs! {
    product normal_cdf(y in [0.5, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => normal(mu, sigma).cdf(y).ln();
    sum normal_lcdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => normal(mu, sigma).cdf(y).ln();
    sum normal_lccdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => normal(mu, sigma).sf(y).ln();
    product cauchy_cdf(y in [0.5, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Cauchy::new(mu, sigma).unwrap().cdf(y).ln();
    sum cauchy_lcdf(y in [-5.0, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Cauchy::new(mu, sigma).unwrap().cdf(y).ln();
    sum cauchy_lccdf(y in [-5.0, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Cauchy::new(mu, sigma).unwrap().sf(y).ln();
    product logistic_cdf(y in [0.5, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => -(-(y - mu) / sigma).exp().ln_1p();
    sum logistic_lcdf(y in [-5.0, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => -(-(y - mu) / sigma).exp().ln_1p();
    sum logistic_lccdf(y in [-5.0, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => -((y - mu) / sigma).exp().ln_1p();
    product gumbel_cdf(y in [0.5, 4.0], mu in [-1.0, 1.0], beta in [0.5, 2.0])
        => Gumbel::new(mu, beta).unwrap().cdf(y).ln();
    sum gumbel_lcdf(y in [-2.0, 3.0], mu in [-1.0, 1.0], beta in [0.5, 2.0])
        => Gumbel::new(mu, beta).unwrap().cdf(y).ln();
    sum gumbel_lccdf(y in [-2.0, 3.0], mu in [-1.0, 1.0], beta in [0.5, 2.0])
        => log1m_exp(-(-(y - mu) / beta).exp());
    product double_exponential_cdf(y in [0.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Laplace::new(mu, sigma).unwrap().cdf(y).ln();
    sum double_exponential_lcdf(y in [-4.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Laplace::new(mu, sigma).unwrap().cdf(y).ln();
    sum double_exponential_lccdf(y in [-4.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Laplace::new(mu, sigma).unwrap().sf(y).ln();
    product skew_double_exponential_cdf(y in [0.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], tau in [0.1, 0.9])
        => skew_laplace_cdf(y, mu, sigma, tau).ln();
    sum skew_double_exponential_lcdf(y in [-4.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], tau in [0.1, 0.9])
        => skew_laplace_cdf(y, mu, sigma, tau).ln();
    sum skew_double_exponential_lccdf(y in [-4.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], tau in [0.1, 0.9])
        => (1.0 - skew_laplace_cdf(y, mu, sigma, tau)).ln();
    product exp_mod_normal_cdf(y in [1.0, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], lambda in [0.5, 2.0])
        => emg_cdf(y, mu, sigma, lambda).ln();
    sum exp_mod_normal_lcdf(y in [-1.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], lambda in [0.5, 2.0])
        => emg_cdf(y, mu, sigma, lambda).ln();
    sum exp_mod_normal_lccdf(y in [-1.0, 4.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], lambda in [0.5, 2.0])
        => (1.0 - emg_cdf(y, mu, sigma, lambda)).ln();
    product lognormal_cdf(y in [1.5, 8.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => LogNormal::new(mu, sigma).unwrap().cdf(y).ln();
    sum lognormal_lcdf(y in [0.1, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => LogNormal::new(mu, sigma).unwrap().cdf(y).ln();
    sum lognormal_lccdf(y in [0.1, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => LogNormal::new(mu, sigma).unwrap().sf(y).ln();
    product exponential_cdf(y in [1.0, 5.0], beta in [0.5, 2.0])
        => Exp::new(beta).unwrap().cdf(y).ln();
    sum exponential_lcdf(y in [0.01, 5.0], beta in [0.5, 2.0])
        => Exp::new(beta).unwrap().cdf(y).ln();
    sum exponential_lccdf(y in [0.01, 5.0], beta in [0.5, 2.0])
        => Exp::new(beta).unwrap().sf(y).ln();
    product weibull_cdf(y in [1.5, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 1.5])
        => Weibull::new(alpha, sigma).unwrap().cdf(y).ln();
    sum weibull_lcdf(y in [0.1, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 2.0])
        => Weibull::new(alpha, sigma).unwrap().cdf(y).ln();
    sum weibull_lccdf(y in [0.1, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 2.0])
        => -(y / sigma).powf(alpha);
    product frechet_cdf(y in [1.5, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 1.5])
        => -(y / sigma).powf(-alpha);
    sum frechet_lcdf(y in [0.1, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 2.0])
        => -(y / sigma).powf(-alpha);
    sum frechet_lccdf(y in [0.1, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 2.0])
        => log1m_exp(-(y / sigma).powf(-alpha));
    product rayleigh_cdf(y in [1.5, 5.0], sigma in [0.5, 1.5])
        => log1m_exp(-0.5 * (y / sigma).powi(2));
    sum rayleigh_lcdf(y in [0.1, 5.0], sigma in [0.5, 2.0])
        => log1m_exp(-0.5 * (y / sigma).powi(2));
    sum rayleigh_lccdf(y in [0.1, 5.0], sigma in [0.5, 2.0])
        => -0.5 * (y / sigma).powi(2);
    product pareto_cdf(y in [4.0, 9.0], y_min in [0.5, 1.9], alpha in [0.5, 3.0])
        => Pareto::new(y_min, alpha).unwrap().cdf(y).ln();
    sum pareto_lcdf(y in [2.0, 5.0], y_min in [0.5, 1.9], alpha in [0.5, 3.0])
        => Pareto::new(y_min, alpha).unwrap().cdf(y).ln();
    sum pareto_lccdf(y in [2.0, 5.0], y_min in [0.5, 1.9], alpha in [0.5, 3.0])
        => Pareto::new(y_min, alpha).unwrap().sf(y).ln();
    product pareto_type_2_cdf(y in [3.0, 8.0], mu in [-1.0, 1.0], lambda in [0.5, 2.0], alpha in [0.5, 3.0])
        => log1m_exp(-alpha * ((y - mu) / lambda).ln_1p());
    sum pareto_type_2_lcdf(y in [1.1, 5.0], mu in [-1.0, 1.0], lambda in [0.5, 2.0], alpha in [0.5, 3.0])
        => (1.0 - (1.0 + (y - mu) / lambda).powf(-alpha)).ln();
    sum pareto_type_2_lccdf(y in [1.1, 5.0], mu in [-1.0, 1.0], lambda in [0.5, 2.0], alpha in [0.5, 3.0])
        => -alpha * ((y - mu) / lambda).ln_1p();
    product uniform_cdf(y in [0.5, 0.9], alpha in [-2.0, -1.0], beta in [1.0, 2.0])
        => Uniform::new(alpha, beta).unwrap().cdf(y).ln();
    sum uniform_lcdf(y in [-0.5, 0.5], alpha in [-2.0, -1.0], beta in [1.0, 2.0])
        => Uniform::new(alpha, beta).unwrap().cdf(y).ln();
    sum uniform_lccdf(y in [-0.5, 0.5], alpha in [-2.0, -1.0], beta in [1.0, 2.0])
        => Uniform::new(alpha, beta).unwrap().sf(y).ln();
}

/// The standard normal has no parameters: its own tests.
macro_rules! std_normal {
    ($($kind:ident $name:ident in [$lo:literal, $hi:literal] => $reference:expr;)*) => {$(
        #[test]
        fn $name() -> Result<()> {
            let case = Case {
                name: stringify!($name),
                ranges: &[($lo, $hi)],
                reference: $reference,
                vars: |v| $kind(dist::$name(v[0]).eval()?),
                numbers: |y, _| $kind(dist::$name(y).eval()?),
                scalar_vars: |_, _| unreachable!(),
            };
            for &n in sizes() {
                check_vectors(&case, n)?;
                check_numbers(&case, n)?;
            }
            Ok(())
        }
    )*};
}

std_normal! {
    product std_normal_cdf in [-0.5, 3.0] => |a| Normal::standard().cdf(a[0]).ln();
    sum std_normal_lcdf in [-3.0, 3.0] => |a| Normal::standard().cdf(a[0]).ln();
    sum std_normal_lccdf in [-3.0, 3.0] => |a| Normal::standard().sf(a[0]).ln();
}

/// The Bernoulli: outcomes 0 and 1 (lcdf), 0 and -1 (lccdf, finite there).
macro_rules! bernoulli {
    ($($kind:ident $name:ident, $ints:expr => $reference:expr;)*) => {$(
        #[test]
        fn $name() -> Result<()> {
            let case = IntCase {
                name: stringify!($name),
                ints: $ints,
                ranges: &[(0.05, 0.95)],
                reference: $reference,
                vars: |n, v| $kind(dist::$name(n[0], v[0]).eval()?),
                numbers: |n, p| $kind(dist::$name(n[0], p[0]).eval()?),
                scalar_vars: |n, v| $kind(dist::$name(n[0], v[0]).eval()?),
            };
            for &len in sizes() {
                check_masses(&case, len)?;
            }
            check_mass_scalar_vars(&case, 33)
        }
    )*};
}

fn bernoulli_lcdf_ref(n: &[i32], p: &[f64]) -> f64 {
    match n[0] {
        ..0 => f64::NEG_INFINITY,
        0 => (-p[0]).ln_1p(),
        _ => 0.0,
    }
}

fn bernoulli_lccdf_ref(n: &[i32], p: &[f64]) -> f64 {
    match n[0] {
        ..0 => 0.0,
        0 => p[0].ln(),
        _ => f64::NEG_INFINITY,
    }
}

/// Mostly 1 (the product stays far from underflow), some 0.
fn mostly_ones(len: usize) -> Vec<Vec<i32>> {
    vec![(0..len).map(|i| i32::from(i % 7 != 3)).collect()]
}

/// 0 and -1 alternating: the log CCDF is finite.
fn zeros_and_negative(len: usize) -> Vec<Vec<i32>> {
    vec![(0..len).map(|i| -((i % 2) as i32)).collect()]
}

bernoulli! {
    product bernoulli_cdf, mostly_ones => bernoulli_lcdf_ref;
    sum bernoulli_lcdf, mostly_ones => bernoulli_lcdf_ref;
    sum bernoulli_lccdf, zeros_and_negative => bernoulli_lccdf_ref;
}

/// `log Φ(x)` for `x ≤ -20` by the asymptotic series of the Mills ratio,
/// in f64, as the kernel's helper is not.
fn log_phi_asymptotic(x: f64) -> f64 {
    let r = 1.0 / (x * x);
    let (mut term, mut sum) = (1.0, 1.0);
    for k in 1..30 {
        term *= -((2 * k - 1) as f64) * r;
        sum += term;
    }
    -0.5 * x * x - (-x).ln() - 0.5 * (2.0 * std::f64::consts::PI).ln() + sum.ln()
}

fn col(v: &[f64]) -> Result<MatrixCl<f64>> {
    MatrixCl::from_slice(v.len(), 1, v)
}

/// One element, relative `tol` (exact where the reference is infinite).
fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    let ok = got == want || (got - want).abs() <= tol * want.abs();
    assert!(ok, "{what}: device {got:e}, reference {want:e}");
}

/// A log CDF or CCDF at one point, `y` a `1 x 1` matrix and the parameters
/// numbers (the table's kernels).
macro_rules! tail {
    ($name:ident($y:expr $(, $p:expr)*) == $want:expr) => {{
        let got = dist::$name(&col(&[$y])? $(, $p)*).eval()?.to_vec()?[0];
        assert_close(
            &format!("{}({:?})", stringify!($name), ($y $(, $p)*)),
            got,
            $want,
            1e-10,
        );
    }};
}

/// The tails: every log CDF and log CCDF with `|z|` up to 30 (or as far as
/// the family goes), against log-space references.
#[test]
fn tails() -> Result<()> {
    let lp30 = log_phi_asymptotic(-30.0);
    assert!(
        (lp30 + 454.321_243_956_343_2).abs() < 1e-10 * 454.0,
        "{lp30}"
    );
    tail!(normal_lcdf(-30.0, 0.0, 1.0) == lp30);
    tail!(normal_lcdf(-61.0, -1.0, 2.0) == lp30);
    tail!(normal_lccdf(30.0, 0.0, 1.0) == lp30);
    tail!(normal_lcdf(-1e3, 0.0, 1.0) == log_phi_asymptotic(-1e3));
    tail!(normal_lcdf(30.0, 0.0, 1.0) == -lp30.exp());
    for z in [-25.0, -12.0, -9.9, -5.0, -1.0, 0.5, 4.0] {
        tail!(std_normal_lcdf(z) == r::log_phi(z));
        tail!(std_normal_lccdf(-z) == r::log_phi(z));
        tail!(normal_lcdf(2.0 * z + 1.0, 1.0, 2.0) == r::log_phi(z));
        tail!(lognormal_lcdf((2.0 * z + 1.0f64).exp(), 1.0, 2.0) == r::log_phi(z));
        tail!(lognormal_lccdf((1.0 - 2.0 * z).exp(), 1.0, 2.0) == r::log_phi(z));
    }
    tail!(std_normal_lcdf(-30.0) == lp30);
    tail!(logistic_lcdf(-30.0, 0.0, 1.0) == -30.0 - (-30.0f64).exp().ln_1p());
    tail!(logistic_lccdf(30.0, 0.0, 1.0) == -30.0 - (-30.0f64).exp().ln_1p());
    tail!(logistic_lcdf(30.0, 0.0, 1.0) == -(-30.0f64).exp().ln_1p());
    let atan30 = (1.0f64 / 30.0).atan() / std::f64::consts::PI;
    tail!(cauchy_lcdf(-30.0, 0.0, 1.0) == atan30.ln());
    tail!(cauchy_lccdf(30.0, 0.0, 1.0) == atan30.ln());
    tail!(cauchy_lcdf(-1e10, 0.0, 1.0) == (1e-10 / std::f64::consts::PI).ln());
    tail!(gumbel_lcdf(-3.0, 0.0, 1.0) == -(3.0f64).exp());
    tail!(gumbel_lccdf(30.0, 0.0, 1.0) == log1m_exp(-(-30.0f64).exp()));
    tail!(gumbel_lcdf(30.0, 0.0, 1.0) == -(-30.0f64).exp());
    tail!(double_exponential_lcdf(-30.0, 0.0, 1.0) == -30.0 - 2f64.ln());
    tail!(double_exponential_lccdf(30.0, 0.0, 1.0) == -30.0 - 2f64.ln());
    tail!(double_exponential_lcdf(30.0, 0.0, 1.0) == (-0.5 * (-30.0f64).exp()).ln_1p());
    tail!(double_exponential_lccdf(-800.0, 0.0, 1.0) == 0.0);
    tail!(skew_double_exponential_lcdf(-30.0, 0.0, 1.0, 0.25) == 0.25f64.ln() - 45.0);
    tail!(skew_double_exponential_lccdf(30.0, 0.0, 1.0, 0.25) == 0.75f64.ln() - 15.0);
    tail!(skew_double_exponential_lcdf(30.0, 0.0, 1.0, 0.25) == (-0.75 * (-15.0f64).exp()).ln_1p());
    // Exponentially modified normal, u = ±30: log-space references.
    for (y, mu, sigma, lambda) in [(-30.0, 0.0, 1.0, 1.0), (-59.0, 1.0, 2.0, 0.5)] {
        let u: f64 = (y - mu) / sigma;
        let v = lambda * sigma;
        let second = v * (0.5 * v - u) + r::log_phi(u - v);
        let first = r::log_phi(u);
        let want = first + log1m_exp(second - first);
        tail!(exp_mod_normal_lcdf(y, mu, sigma, lambda) == want);
        let (y2, u2) = (2.0 * mu - y, -u);
        let upper = r::log_phi(-u2);
        let second2 = v * (0.5 * v - u2) + r::log_phi(u2 - v);
        let want2 = upper.max(second2) + (-(upper - second2).abs()).exp().ln_1p();
        tail!(exp_mod_normal_lccdf(y2, mu, sigma, lambda) == want2);
    }
    // Positive families: tiny and huge arguments.
    tail!(exponential_lcdf(1e-14, 1.0) == log1m_exp(-1e-14));
    tail!(exponential_lccdf(30.0, 1.0) == -30.0);
    tail!(exponential_lcdf(30.0, 1.0) == log1m_exp(-30.0));
    tail!(weibull_lcdf(1e-13, 2.0, 1.0) == log1m_exp(-1e-26));
    tail!(weibull_lccdf(30.0, 2.0, 3.0) == -100.0);
    tail!(frechet_lcdf(0.1, 2.0, 1.0) == -100.0);
    tail!(frechet_lccdf(1e13, 2.0, 1.0) == log1m_exp(-1e-26));
    tail!(rayleigh_lcdf(1e-13, 1.0) == log1m_exp(-0.5e-26));
    tail!(rayleigh_lccdf(30.0, 2.0) == -112.5);
    // y - y_min and y - alpha exactly as the doubles have them.
    let y = 1.0 + 1e-12;
    tail!(pareto_lcdf(y, 1.0, 2.0) == log1m_exp(-2.0 * (y - 1.0).ln_1p()));
    tail!(pareto_lccdf(1e13, 1.0, 2.0) == -26.0 * 10f64.ln());
    tail!(pareto_type_2_lcdf(1e-12, 0.0, 1.0, 2.0) == log1m_exp(-2.0 * (1e-12f64).ln_1p()));
    tail!(pareto_type_2_lccdf(1e13, 0.0, 1.0, 2.0) == -2.0 * (1e13f64).ln_1p());
    let (lo, hi) = (-1.0 + 1e-12, 1.0 - 1e-12);
    tail!(uniform_lcdf(lo, -1.0, 1.0) == (0.5 * (lo + 1.0)).ln());
    tail!(uniform_lccdf(hi, -1.0, 1.0) == (0.5 * (1.0 - hi)).ln());
    Ok(())
}

/// Outside the support, and at its edges: Stan's values.
#[test]
fn support_edges() -> Result<()> {
    let inf = f64::INFINITY;
    tail!(exponential_lcdf(0.0, 1.0) == -inf);
    tail!(exponential_lccdf(0.0, 1.0) == 0.0);
    tail!(lognormal_lcdf(0.0, 0.0, 1.0) == -inf);
    tail!(lognormal_lccdf(0.0, 0.0, 1.0) == 0.0);
    tail!(pareto_lcdf(0.5, 1.0, 2.0) == -inf);
    tail!(pareto_lccdf(0.5, 1.0, 2.0) == 0.0);
    tail!(uniform_lcdf(-3.0, -1.0, 1.0) == -inf);
    tail!(uniform_lcdf(3.0, -1.0, 1.0) == 0.0);
    tail!(uniform_lccdf(-3.0, -1.0, 1.0) == 0.0);
    tail!(uniform_lccdf(3.0, -1.0, 1.0) == -inf);
    tail!(normal_lcdf(-inf, 0.0, 1.0) == -inf);
    tail!(normal_lccdf(inf, 0.0, 1.0) == -inf);
    let n = MatrixCl::from_slice(3, 1, &[-1, 0, 2])?;
    let p = dist::bernoulli_cdf(&n, 0.25).eval()?.to_vec()?[0];
    assert_eq!(p, 0.0);
    let n = MatrixCl::from_slice(2, 1, &[0, 2])?;
    let p = dist::bernoulli_cdf(&n, 0.25).eval()?.to_vec()?[0];
    assert!((p - 0.75).abs() < 1e-15);
    Ok(())
}

/// The gradient deep in the tail: `d/dy log Φ((y - μ)/σ)` is the inverse
/// Mills ratio over `σ`, about `-z/σ`, where `Φ` itself has underflowed.
#[test]
fn tail_gradients() -> Result<()> {
    let one = |v: f64| -> Result<Var> { Ok(Var::new(col(&[v])?)) };
    for z in [-30.0, -45.0, -12.0] {
        let (y, mu, sigma) = (one(z * 2.0 + 1.0)?, one(1.0)?, one(2.0)?);
        let lp = dist::normal_lcdf(&y, &mu, &sigma).eval()?;
        lp.grad()?;
        // The inverse Mills ratio by the continued fraction of the reference.
        let h = 1e-6;
        let mills = (r::log_phi(z + h) - r::log_phi(z - h)) / (2.0 * h);
        let dy = y.adjoint().to_vec()?[0];
        assert_close(&format!("d/dy at z = {z}"), dy, mills / 2.0, 1e-6);
        assert_close(
            &format!("d/dmu at z = {z}"),
            mu.adjoint().to_vec()?[0],
            -mills / 2.0,
            1e-6,
        );
        assert_close(
            &format!("d/dsigma at z = {z}"),
            sigma.adjoint().to_vec()?[0],
            -mills * z / 2.0,
            1e-6,
        );
        rev::clear()?;
    }
    Ok(())
}

fn message<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// For each family, each checked argument in turn bad (all arguments
/// one-element variables, checked in the forward kernel): the error names
/// the function, argument, element and value, and nothing is recorded.
macro_rules! checks {
    ($([$($name:ident),+] $args:tt;)*) => {
        #[test]
        fn argument_checks() -> Result<()> {
            $($( check_one!($name $args); )+)*
            rev::clear()
        }
    };
}

/// One function of [`checks!`]: each argument bad in turn.
macro_rules! check_one {
    ($name:ident ($($arg:ident: $good:literal | $bad:expr, $req:literal),+)) => {
        let names = [$(stringify!($arg)),+];
        let good = [$($good),+];
        let bad = [$($bad),+];
        let reqs = [$($req),+];
        for k in 0..names.len() {
            let mut values = good;
            values[k] = bad[k];
            let vars = values
                .iter()
                .map(|&v| Ok(Var::new(col(&[v])?)))
                .collect::<Result<Vec<_>>>()?;
            let before = rev::steps_recorded();
            let [$($arg),+] = &vars[..] else { unreachable!() };
            let got = message(dist::$name($($arg),+).eval());
            let want = format!(
                "{}: {}[0, 0] is {}, but must be {}",
                stringify!($name), names[k], bad[k], reqs[k]
            );
            assert_eq!(got, want);
            assert_eq!(rev::steps_recorded(), before, "{} recorded", stringify!($name));
        }
    };
}

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

checks! {
    [normal_cdf, normal_lcdf, normal_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | INF, "finite", sigma: 1.0 | 0.0, "positive");
    [std_normal_cdf, std_normal_lcdf, std_normal_lccdf] (y: 0.5 | NAN, "not NaN");
    [cauchy_cdf, cauchy_lcdf, cauchy_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | -INF, "finite", sigma: 1.0 | INF, "positive and finite");
    [logistic_cdf, logistic_lcdf, logistic_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | INF, "finite", sigma: 1.0 | -1.0, "positive and finite");
    [gumbel_cdf, gumbel_lcdf, gumbel_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | INF, "finite", beta: 1.0 | 0.0, "positive and finite");
    [double_exponential_cdf, double_exponential_lcdf, double_exponential_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | INF, "finite", sigma: 1.0 | -2.0, "positive and finite");
    [skew_double_exponential_cdf, skew_double_exponential_lcdf, skew_double_exponential_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | INF, "finite", sigma: 1.0 | INF, "positive and finite", tau: 0.5 | 1.5, "in [0, 1]");
    [exp_mod_normal_cdf, exp_mod_normal_lcdf, exp_mod_normal_lccdf]
        (y: 0.5 | NAN, "not NaN", mu: 0.0 | INF, "finite", sigma: 1.0 | 0.0, "positive and finite", lambda: 1.0 | INF, "positive and finite");
    [lognormal_cdf, lognormal_lcdf, lognormal_lccdf]
        (y: 0.5 | -1.0, "non-negative", mu: 0.0 | INF, "finite", sigma: 1.0 | 0.0, "positive and finite");
    [exponential_cdf, exponential_lcdf, exponential_lccdf]
        (y: 0.5 | -0.5, "non-negative", beta: 1.0 | INF, "positive and finite");
    [weibull_cdf, weibull_lcdf, weibull_lccdf]
        (y: 0.5 | -1.0, "non-negative", alpha: 1.0 | 0.0, "positive and finite", sigma: 1.0 | INF, "positive and finite");
    [frechet_cdf, frechet_lcdf, frechet_lccdf]
        (y: 0.5 | 0.0, "positive", alpha: 1.0 | -1.0, "positive and finite", sigma: 1.0 | INF, "positive and finite");
    [rayleigh_cdf, rayleigh_lcdf, rayleigh_lccdf]
        (y: 0.5 | NAN, "non-negative", sigma: 1.0 | 0.0, "positive");
    [pareto_cdf, pareto_lcdf, pareto_lccdf]
        (y: 2.0 | -1.0, "non-negative", y_min: 1.0 | INF, "positive and finite", alpha: 1.0 | 0.0, "positive and finite");
    [uniform_cdf, uniform_lcdf, uniform_lccdf]
        (y: 0.5 | NAN, "not NaN", alpha: 0.0 | -INF, "finite", beta: 1.0 | INF, "finite");
}

/// The relations between arguments, and the Bernoulli's probability.
#[test]
fn relation_checks() -> Result<()> {
    let y = col(&[0.5, 1.5])?;
    assert_eq!(
        message(dist::uniform_lcdf(&y, 1.0, 1.0).eval()),
        "uniform_lcdf: beta[0, 0] is 1, but must be greater than alpha"
    );
    let beta = col(&[2.0, 0.5])?;
    assert_eq!(
        message(dist::uniform_cdf(&y, 0.5, &beta).eval()),
        "uniform_cdf: beta[1, 0] is 0.5, but must be greater than alpha"
    );
    assert_eq!(
        message(dist::pareto_type_2_lccdf(&y, 1.0, 1.0, 1.0).eval()),
        "pareto_type_2_lccdf: y[0, 0] is 0.5, but must be greater than or equal to mu"
    );
    // The Pareto type 2's own arguments (its `mu` is checked only through `y ≥ mu`).
    let one = |v: f64| -> Result<Var> { Ok(Var::new(col(&[v])?)) };
    let (y2, mu, lambda, alpha) = (one(2.0)?, one(0.0)?, one(1.0)?, one(1.0)?);
    let (nan, zero, inf) = (one(f64::NAN)?, one(0.0)?, one(f64::INFINITY)?);
    let before = rev::steps_recorded();
    assert_eq!(
        message(dist::pareto_type_2_cdf(&nan, &mu, &lambda, &alpha).eval()),
        "pareto_type_2_cdf: y[0, 0] is NaN, but must be not NaN"
    );
    assert_eq!(
        message(dist::pareto_type_2_lcdf(&y2, &mu, &zero, &alpha).eval()),
        "pareto_type_2_lcdf: lambda[0, 0] is 0, but must be positive and finite"
    );
    assert_eq!(
        message(dist::pareto_type_2_lccdf(&y2, &mu, &lambda, &inf).eval()),
        "pareto_type_2_lccdf: alpha[0, 0] is inf, but must be positive and finite"
    );
    assert_eq!(rev::steps_recorded(), before);
    let n = MatrixCl::from_slice(2, 1, &[0, 1])?;
    let theta = Var::new(col(&[0.5, 1.5])?);
    let before = rev::steps_recorded();
    for r in [
        dist::bernoulli_cdf(&n, &theta).eval(),
        dist::bernoulli_lcdf(&n, &theta).eval(),
        dist::bernoulli_lccdf(&n, &theta).eval(),
    ] {
        assert!(message(r).ends_with("theta[1, 0] is 1.5, but must be in [0, 1]"));
    }
    assert_eq!(rev::steps_recorded(), before);
    rev::clear()
}
