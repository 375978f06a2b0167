//! Argument checks (one failing argument per family at least: the error's
//! text, and nothing recorded), shapes, and the values at the edges of the
//! support (`-∞` where Stan returns it).

use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};

fn col(v: &[f64]) -> Result<MatrixCl<f64>> {
    MatrixCl::from_slice(v.len(), 1, v)
}

fn ints(v: &[i32]) -> Result<MatrixCl<i32>> {
    MatrixCl::from_slice(v.len(), 1, v)
}

fn message<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn location_scale() -> Result<()> {
    let y = col(&[0.5, -1.0, 2.0, 0.0])?;
    let sigma = col(&[1.0, 2.0, 1.0, -1.0])?;
    let mu = col(&[0.0; 4])?;
    assert_eq!(
        message(dist::normal_lpdf(&y, &mu, &sigma).eval()),
        "normal_lpdf: sigma[3, 0] is -1, but must be positive and finite"
    );
    assert_eq!(
        message(dist::normal_lpdf(&y, 0.0, f64::INFINITY).eval()),
        "normal_lpdf: sigma[0, 0] is inf, but must be positive and finite"
    );
    let nan = col(&[0.5, f64::NAN, 2.0, 0.0])?;
    assert_eq!(
        message(dist::student_t_lpdf(&nan, 3.0, 0.0, 1.0).eval()),
        "student_t_lpdf: y[1, 0] is NaN, but must be not NaN"
    );
    assert_eq!(
        message(dist::logistic_lpdf(&y, f64::NEG_INFINITY, 1.0).eval()),
        "logistic_lpdf: mu[0, 0] is -inf, but must be finite"
    );
    assert_eq!(
        message(dist::skew_double_exponential_lpdf(&y, 0.0, 1.0, 1.0).eval()),
        "skew_double_exponential_lpdf: tau[0, 0] is 1, but must be in (0, 1)"
    );
    Ok(())
}

/// A failed check of variables records nothing on the tape.
#[test]
fn nothing_recorded() -> Result<()> {
    let y = Var::new(col(&[0.5, -1.0, 2.0, 0.0])?);
    let mu = Var::new(col(&[0.0; 4])?);
    let sigma = Var::new(col(&[1.0, 2.0, 0.0, 1.0])?);
    let before = rev::steps_recorded();
    assert_eq!(
        message(dist::normal_lpdf(&y, &mu, &sigma).eval()),
        "normal_lpdf: sigma[2, 0] is 0, but must be positive and finite"
    );
    assert_eq!(rev::steps_recorded(), before);
    rev::clear()
}

/// The checks of arguments as long as the outcomes are outputs of the
/// density's own forward kernel: one generated kernel per density (of
/// variables, one more for the reverse pass).
#[test]
fn checks_run_in_the_density_kernel() -> Result<()> {
    // Alone in its process: the runtime profiles every launch.
    if crate::common::process::run_alone("checks::checks_run_in_the_density_kernel") {
        return Ok(());
    }
    clfuse::configure(clfuse::RuntimeConfig {
        profiling: true,
        ..clfuse::RuntimeConfig::from_env()?
    })?;
    let generated = |profile: &clfuse::Profile| {
        profile
            .kernels
            .iter()
            .filter(|(name, _)| !name.starts_with("fill"))
            .map(|(_, k)| k.launches)
            .sum::<usize>()
    };
    let y = col(&[0.5, -1.0, 2.0, 0.0, 3.0])?;
    let sigma = col(&[1.0, 2.0, 0.5, 1.0, 1.0])?;
    let mu = Var::new(col(&[0.0; 5])?);
    clfuse::take_profile()?;
    let lp = dist::normal_lpdf(&y, &mu, &sigma).eval()?;
    assert_eq!(
        generated(&clfuse::take_profile()?),
        1,
        "forward kernel only"
    );
    lp.grad()?;
    assert_eq!(
        generated(&clfuse::take_profile()?),
        1,
        "reverse kernel only"
    );
    let bad = col(&[1.0, 2.0, -0.5, 1.0, 1.0])?;
    assert_eq!(
        message(dist::normal_lpdf(&y, &mu, &bad).eval()),
        "normal_lpdf: sigma[2, 0] is -0.5, but must be positive and finite"
    );
    // The failing forward kernel, then one that reads the failing value.
    assert_eq!(generated(&clfuse::take_profile()?), 2, "failure");
    rev::clear()
}

#[test]
fn positive() -> Result<()> {
    let y = col(&[0.5, 1.0, 2.0])?;
    assert_eq!(
        message(dist::gamma_lpdf(&y, 0.0, 1.0).eval()),
        "gamma_lpdf: alpha[0, 0] is 0, but must be positive and finite"
    );
    let negative = col(&[0.5, -1.0, 2.0])?;
    assert_eq!(
        message(dist::lognormal_lpdf(&negative, 0.0, 1.0).eval()),
        "lognormal_lpdf: y[1, 0] is -1, but must be non-negative"
    );
    assert_eq!(
        message(dist::gamma_lpdf(&negative, 1.0, 1.0).eval()),
        "gamma_lpdf: y[1, 0] is -1, but must be positive and finite"
    );
    let mu = col(&[0.0, 0.0, 3.0])?;
    assert_eq!(
        message(dist::pareto_type_2_lpdf(&y, &mu, 1.0, 1.0).eval()),
        "pareto_type_2_lpdf: y[2, 0] is 2, but must be greater than or equal to mu"
    );
    Ok(())
}

#[test]
fn bounded() -> Result<()> {
    let y = col(&[0.5, 1.5])?;
    assert_eq!(
        message(dist::beta_lpdf(&y, 1.0, 1.0).eval()),
        "beta_lpdf: y[1, 0] is 1.5, but must be in [0, 1]"
    );
    assert_eq!(
        message(dist::uniform_lpdf(&y, 1.0, 1.0).eval()),
        "uniform_lpdf: beta[0, 0] is 1, but must be greater than alpha"
    );
    let beta = col(&[2.0, -1.0])?;
    assert_eq!(
        message(dist::uniform_lpdf(&y, 0.0, &beta).eval()),
        "uniform_lpdf: beta[1, 0] is -1, but must be greater than alpha"
    );
    assert_eq!(
        message(dist::beta_proportion_lpdf(&y, 1.0, 1.0).eval()),
        "beta_proportion_lpdf: mu[0, 0] is 1, but must be in (0, 1)"
    );
    Ok(())
}

#[test]
fn discrete() -> Result<()> {
    let n = ints(&[0, 1, 2])?;
    assert_eq!(
        message(dist::bernoulli_lpmf(&n, 0.5).eval()),
        "bernoulli_lpmf: n[2, 0] is 2, but must be 0 or 1"
    );
    assert_eq!(
        message(dist::bernoulli_lpmf(&ints(&[0, 1])?, 1.5).eval()),
        "bernoulli_lpmf: theta[0, 0] is 1.5, but must be in [0, 1]"
    );
    let trials = ints(&[3, 1, 1])?;
    assert_eq!(
        message(dist::binomial_lpmf(&n, &trials, 0.5).eval()),
        "binomial_lpmf: n[2, 0] is 2, but must be less than or equal to N"
    );
    assert_eq!(
        message(dist::binomial_logit_lpmf(&n, -1, 0.5).eval()),
        "binomial_logit_lpmf: N[0, 0] is -1, but must be non-negative"
    );
    let counts = ints(&[0, -1, 2])?;
    assert_eq!(
        message(dist::poisson_lpmf(&counts, 1.5).eval()),
        "poisson_lpmf: n[1, 0] is -1, but must be non-negative"
    );
    assert_eq!(
        message(dist::neg_binomial_2_lpmf(&n, 1.0, f64::INFINITY).eval()),
        "neg_binomial_2_lpmf: phi[0, 0] is inf, but must be positive and finite"
    );
    Ok(())
}

#[test]
fn shapes() -> Result<()> {
    let y = col(&[0.5, -1.0, 2.0])?;
    let sigma = col(&[1.0, 2.0])?;
    assert_eq!(
        message(dist::normal_lpdf(&y, 0.0, &sigma).eval()),
        "normal_lpdf: argument `sigma` is invalid: has 2 elements, but `y` has 3: \
         vector arguments must have the same length"
    );
    let wide = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
    assert_eq!(
        message(dist::cauchy_lpdf(&y, &wide, 1.0).eval()),
        "cauchy_lpdf: argument `mu` is invalid: must be a column vector or 1 x 1, is 1 x 2"
    );
    // A 1 x 1 matrix broadcasts like a number.
    let one = col(&[1.0])?;
    let a = dist::normal_lpdf(&y, 0.0, &one).eval()?.to_vec()?[0];
    let b = dist::normal_lpdf(&y, 0.0, 1.0).eval()?.to_vec()?[0];
    assert!((a - b).abs() < 1e-12);
    // Length zero: no term, no check.
    let empty = col(&[])?;
    assert_eq!(
        dist::normal_lpdf(&empty, 0.0, &col(&[-1.0])?)
            .eval()?
            .to_vec()?,
        vec![0.0]
    );
    Ok(())
}

/// Where Stan returns `-∞` (outside the support) or a finite limit.
#[test]
fn support_edges() -> Result<()> {
    let inf = f64::NEG_INFINITY;
    let first = |m: MatrixCl<f64>| -> Result<f64> { Ok(m.to_vec()?[0]) };
    assert_eq!(
        first(dist::uniform_lpdf(&col(&[0.5, 3.0])?, 0.0, 2.0).eval()?)?,
        inf
    );
    assert_eq!(
        first(dist::pareto_lpdf(&col(&[2.0, 0.5])?, 1.0, 1.0).eval()?)?,
        inf
    );
    assert_eq!(
        first(dist::lognormal_lpdf(&col(&[0.0, 1.0])?, 0.0, 1.0).eval()?)?,
        inf
    );
    assert_eq!(
        first(dist::inv_gamma_lpdf(&col(&[-1.0, 1.0])?, 1.0, 1.0).eval()?)?,
        inf
    );
    assert_eq!(
        first(dist::weibull_lpdf(&col(&[-1.0, 1.0])?, 1.0, 1.0).eval()?)?,
        inf
    );
    // Beta(1, 1) at the ends: log 1, not 0 · log 0 = NaN.
    assert_eq!(
        first(dist::beta_lpdf(&col(&[0.0, 1.0])?, 1.0, 1.0).eval()?)?,
        0.0
    );
    let out = ints(&[0, 3])?;
    assert_eq!(
        first(dist::beta_binomial_lpmf(&out, 2, 1.0, 1.0).eval()?)?,
        inf
    );
    // λ = 0 with n = 0: probability 1.
    assert_eq!(
        first(dist::poisson_lpmf(&ints(&[0, 0])?, 0.0).eval()?)?,
        0.0
    );
    assert_eq!(
        first(dist::poisson_lpmf(&ints(&[0, 1])?, 0.0).eval()?)?,
        inf
    );
    assert_eq!(
        first(dist::poisson_log_lpmf(&ints(&[0])?, f64::NEG_INFINITY).eval()?)?,
        0.0
    );
    // θ = 1 with every trial a success.
    assert_eq!(
        first(dist::binomial_lpmf(&ints(&[4])?, 4, 1.0).eval()?)?,
        0.0
    );
    Ok(())
}
