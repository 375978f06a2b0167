//! The continuous densities: one line of the table each.

use crate::support::{Case, check_numbers, check_scalar_vars, check_vectors, sizes, soak};
use clfuse::prelude::*;
use clfuse::rev::Var;
use clfuse::{Result, dist};
use statrs::distribution::{
    Beta, Cauchy, ChiSquared, Continuous, ContinuousCDF, Exp, Gamma, Gumbel, InverseGamma, Laplace,
    LogNormal, Normal, Pareto, StudentsT, Uniform, Weibull,
};

/// The densities whose `1 x 1`-variable form (parameters broadcast over a
/// data vector) runs without `FUSION_SOAK`: each form is one more kernel to
/// compile, about a second on PoCL.
const SCALAR_VARS: &[&str] = &[
    "normal_lpdf",
    "student_t_lpdf",
    "skew_normal_lpdf",
    "gamma_lpdf",
    "beta_lpdf",
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

macro_rules! continuous {
    ($($name:ident($y:ident in [$ylo:literal, $yhi:literal] $(, $p:ident in [$lo:literal, $hi:literal])*) => $reference:expr;)*) => {$(
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
                    dist::$name($y $(, $p)*).eval()
                },
                numbers: |$y: &MatrixCl<f64>, p: &[f64]| {
                    let &[$($p),*] = p else { unreachable!() };
                    dist::$name($y $(, $p)*).eval()
                },
                scalar_vars: |$y: &MatrixCl<f64>, p: &[&Var]| {
                    let &[$($p),*] = p else { unreachable!() };
                    dist::$name($y $(, $p)*).eval()
                },
            })
        }
    )*};
}

fn ln_phi(x: f64) -> f64 {
    Normal::standard().cdf(x).ln()
}

continuous! {
    normal_lpdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Normal::new(mu, sigma).unwrap().ln_pdf(y);
    student_t_lpdf(y in [-3.0, 3.0], nu in [1.0, 10.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => StudentsT::new(mu, sigma, nu).unwrap().ln_pdf(y);
    cauchy_lpdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Cauchy::new(mu, sigma).unwrap().ln_pdf(y);
    logistic_lpdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => { let e = (-(y - mu) / sigma).exp(); (e / (sigma * (1.0 + e).powi(2))).ln() };
    gumbel_lpdf(y in [-2.0, 3.0], mu in [-1.0, 1.0], beta in [0.5, 2.0])
        => Gumbel::new(mu, beta).unwrap().ln_pdf(y);
    double_exponential_lpdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => Laplace::new(mu, sigma).unwrap().ln_pdf(y);
    skew_normal_lpdf(y in [-3.0, 3.0], xi in [-1.0, 1.0], omega in [0.5, 2.0], alpha in [-2.0, 2.0])
        => 2f64.ln() + Normal::new(xi, omega).unwrap().ln_pdf(y) + ln_phi(alpha * (y - xi) / omega);
    skew_double_exponential_lpdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], tau in [0.1, 0.9])
        => {
            let d = if y < mu { (1.0 - tau) * (mu - y) } else { tau * (y - mu) };
            (2.0 * tau * (1.0 - tau) / sigma * (-2.0 * d / sigma).exp()).ln()
        };
    exp_mod_normal_lpdf(y in [-3.0, 3.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0], lambda in [0.5, 2.0])
        => {
            let v = sigma * sigma;
            let pdf = lambda / 2.0 * (lambda / 2.0 * (2.0 * mu + lambda * v - 2.0 * y)).exp()
                * libm::erfc((mu + lambda * v - y) / (std::f64::consts::SQRT_2 * sigma));
            pdf.ln()
        };
    lognormal_lpdf(y in [0.1, 5.0], mu in [-1.0, 1.0], sigma in [0.5, 2.0])
        => LogNormal::new(mu, sigma).unwrap().ln_pdf(y);
    exponential_lpdf(y in [0.01, 5.0], beta in [0.5, 2.0])
        => Exp::new(beta).unwrap().ln_pdf(y);
    gamma_lpdf(y in [0.1, 5.0], alpha in [0.5, 5.0], beta in [0.5, 2.0])
        => Gamma::new(alpha, beta).unwrap().ln_pdf(y);
    inv_gamma_lpdf(y in [0.1, 5.0], alpha in [0.5, 5.0], beta in [0.5, 2.0])
        => InverseGamma::new(alpha, beta).unwrap().ln_pdf(y);
    chi_square_lpdf(y in [0.1, 5.0], nu in [0.5, 10.0])
        => ChiSquared::new(nu).unwrap().ln_pdf(y);
    inv_chi_square_lpdf(y in [0.1, 5.0], nu in [0.5, 10.0])
        => InverseGamma::new(nu / 2.0, 0.5).unwrap().ln_pdf(y);
    scaled_inv_chi_square_lpdf(y in [0.1, 5.0], nu in [0.5, 10.0], s in [0.5, 2.0])
        => InverseGamma::new(nu / 2.0, nu * s * s / 2.0).unwrap().ln_pdf(y);
    weibull_lpdf(y in [0.1, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 2.0])
        => Weibull::new(alpha, sigma).unwrap().ln_pdf(y);
    frechet_lpdf(y in [0.1, 5.0], alpha in [0.5, 3.0], sigma in [0.5, 2.0])
        => {
            let t = y / sigma;
            (alpha / sigma * t.powf(-1.0 - alpha) * (-t.powf(-alpha)).exp()).ln()
        };
    rayleigh_lpdf(y in [0.1, 5.0], sigma in [0.5, 2.0])
        => (y / (sigma * sigma) * (-y * y / (2.0 * sigma * sigma)).exp()).ln();
    pareto_lpdf(y in [2.0, 5.0], y_min in [0.5, 1.9], alpha in [0.5, 3.0])
        => Pareto::new(y_min, alpha).unwrap().ln_pdf(y);
    pareto_type_2_lpdf(y in [1.1, 5.0], mu in [-1.0, 1.0], lambda in [0.5, 2.0], alpha in [0.5, 3.0])
        => (alpha / lambda * (1.0 + (y - mu) / lambda).powf(-(alpha + 1.0))).ln();
    uniform_lpdf(y in [-0.5, 0.5], alpha in [-2.0, -1.0], beta in [1.0, 2.0])
        => Uniform::new(alpha, beta).unwrap().ln_pdf(y);
    beta_lpdf(y in [0.05, 0.95], alpha in [0.5, 5.0], beta in [0.5, 5.0])
        => Beta::new(alpha, beta).unwrap().ln_pdf(y);
    beta_proportion_lpdf(y in [0.05, 0.95], mu in [0.1, 0.9], kappa in [1.0, 10.0])
        => Beta::new(mu * kappa, (1.0 - mu) * kappa).unwrap().ln_pdf(y);
}

/// `std_normal_lpdf` has no parameters: its own test.
#[test]
fn std_normal_lpdf() -> Result<()> {
    let case = Case {
        name: "std_normal_lpdf",
        ranges: &[(-3.0, 3.0)],
        reference: |a| Normal::standard().ln_pdf(a[0]),
        vars: |v| dist::std_normal_lpdf(v[0]).eval(),
        numbers: |y, _| dist::std_normal_lpdf(y).eval(),
        scalar_vars: |_, _| unreachable!(),
    };
    for &n in sizes() {
        check_vectors(&case, n)?;
        check_numbers(&case, n)?;
    }
    Ok(())
}
