//! Every GLM validation error: named function, argument, index and value
//! (Stan's message style), from the same kernel that computes the value.

use clfuse::glm::*;
use clfuse::prelude::*;

fn m(rows: usize, cols: usize, v: &[f64]) -> MatrixCl<f64> {
    MatrixCl::from_slice(rows, cols, v).unwrap()
}

fn expect(result: clfuse::Result<GlmOutput>, text: &str) {
    let err = result.expect_err(text);
    assert!(err.to_string().contains(text), "expected {text:?} in {err}");
}

const O: GlmOptions = GlmOptions {
    wrt: Wrt::ALL,
    propto: false,
    prefetch: false,
};

#[test]
fn outcome_ranges() {
    let x = m(4, 2, &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]);
    let beta = m(2, 1, &[0.5, -0.5]);
    expect(
        bernoulli_logit_glm_lpmf(&[0, 1, 1, 2][..], &x, 0.0, &beta, &O),
        "bernoulli_logit_glm_lpmf: y[3, 0] is 2, but must be 0 or 1",
    );
    expect(
        poisson_log_glm_lpmf(&[0, -1, 1, 2][..], &x, 0.0, &beta, &O),
        "poisson_log_glm_lpmf: y[1, 0] is -1, but must be non-negative",
    );
    expect(
        neg_binomial_2_log_glm_lpmf(&[0, 1, -3, 2][..], &x, 0.0, &beta, 1.0, &O),
        "neg_binomial_2_log_glm_lpmf: y[2, 0] is -3",
    );
    let alpha = m(3, 1, &[0.0; 3]);
    let beta3 = m(2, 3, &[0.1; 6]);
    expect(
        categorical_logit_glm_lpmf(&[1, 2, 3, 4][..], &x, &alpha, &beta3, &O),
        "categorical_logit_glm_lpmf: y[3, 0] is 4, but must be in 1..=3",
    );
    expect(
        categorical_logit_glm_lpmf(&[0, 2, 3, 1][..], &x, &alpha, &beta3, &O),
        "y[0, 0] is 0",
    );
    let cuts = m(2, 1, &[-1.0, 1.0]);
    expect(
        ordered_logistic_glm_lpmf(&[1, 2, 4, 3][..], &x, &beta, &cuts, &O),
        "ordered_logistic_glm_lpmf: y[2, 0] is 4, but must be in 1..=3",
    );
    expect(
        normal_id_glm_lpdf(&[0.0, f64::NAN, 1.0, 2.0][..], &x, 0.0, &beta, 1.0, &O),
        "normal_id_glm_lpdf: y[1, 0] is NaN, but must be finite",
    );
}

#[test]
fn non_finite_design_and_coefficients() {
    let y = [0, 1, 1, 0];
    let beta = m(2, 1, &[0.5, -0.5]);
    let mut xs = vec![0.1; 8];
    xs[6] = f64::NAN; // x[2, 1]
    expect(
        bernoulli_logit_glm_lpmf(&y[..], &m(4, 2, &xs), 0.0, &beta, &O),
        "bernoulli_logit_glm_lpmf: x[2, 1] is NaN, but must be finite",
    );
    xs[6] = f64::INFINITY; // +inf with y = 1 would give a finite value: still rejected
    expect(
        bernoulli_logit_glm_lpmf(&y[..], &m(4, 2, &xs), 0.0, &beta, &O),
        "x[2, 1] is inf",
    );
    let x = m(4, 2, &[0.1; 8]);
    expect(
        poisson_log_glm_lpmf(&y[..], &x, 0.0, &m(2, 1, &[0.5, f64::NAN]), &O),
        "poisson_log_glm_lpmf: beta[1, 0] is NaN, but must be finite",
    );
    expect(
        ordered_logistic_glm_lpmf(
            &[1, 2, 1, 2][..],
            &x,
            &m(2, 1, &[f64::INFINITY, 0.0]),
            &m(1, 1, &[0.0]),
            &O,
        ),
        "beta[0, 0] is inf",
    );
    let beta3 = m(2, 3, &[0.1; 6]);
    expect(
        categorical_logit_glm_lpmf(
            &[1, 2, 3, 1][..],
            &x,
            &m(3, 1, &[0.0, f64::NAN, 0.0]),
            &beta3,
            &O,
        ),
        "categorical_logit_glm_lpmf: alpha[1, 0] is NaN",
    );
    let mut xs = vec![0.1; 8];
    xs[1] = f64::NEG_INFINITY;
    expect(
        categorical_logit_glm_lpmf(
            &[1, 2, 3, 1][..],
            &m(4, 2, &xs),
            &m(3, 1, &[0.0; 3]),
            &beta3,
            &O,
        ),
        "x[1, 0] is -inf",
    );
}

#[test]
fn scalar_and_vector_parameters() {
    let y = [0, 1, 1, 0];
    let x = m(4, 2, &[0.1; 8]);
    let beta = m(2, 1, &[0.5, -0.5]);
    expect(
        bernoulli_logit_glm_lpmf(&y[..], &x, f64::NAN, &beta, &O),
        "bernoulli_logit_glm_lpmf: alpha[0, 0] is NaN, but must be finite",
    );
    let alpha = m(4, 1, &[0.0, 0.0, f64::INFINITY, 0.0]);
    expect(
        bernoulli_logit_glm_lpmf(&y[..], &x, &alpha, &beta, &O),
        "alpha[2, 0] is inf, but must be finite",
    );
    let yr = [0.0, 1.0, 1.0, 0.0];
    expect(
        normal_id_glm_lpdf(&yr[..], &x, 0.0, &beta, 0.0, &O),
        "normal_id_glm_lpdf: sigma[0, 0] is 0, but must be positive finite",
    );
    let sigma = m(4, 1, &[1.0, -2.0, 1.0, 1.0]);
    expect(
        normal_id_glm_lpdf(&yr[..], &x, 0.0, &beta, &sigma, &O),
        "sigma[1, 0] is -2, but must be positive finite",
    );
    expect(
        neg_binomial_2_log_glm_lpmf(&y[..], &x, 0.0, &beta, -1.0, &O),
        "neg_binomial_2_log_glm_lpmf: phi[0, 0] is -1",
    );
    let phi = m(4, 1, &[1.0, 1.0, 1.0, f64::INFINITY]);
    expect(
        neg_binomial_2_log_glm_lpmf(&y[..], &x, 0.0, &beta, &phi, &O),
        "phi[3, 0] is inf",
    );
    // Device scalars: checked by the GLM's own kernel, never read to the host.
    let nan = m(1, 1, &[f64::NAN]);
    expect(
        bernoulli_logit_glm_lpmf(&y[..], &x, Param::Device(&nan), &beta, &O),
        "bernoulli_logit_glm_lpmf: alpha[0, 0] is NaN, but must be finite",
    );
    let zero = m(1, 1, &[0.0]);
    expect(
        normal_id_glm_lpdf(&yr[..], &x, 0.0, &beta, Param::Device(&zero), &O),
        "normal_id_glm_lpdf: sigma[0, 0] is 0, but must be positive finite",
    );
    let negative = m(1, 1, &[-0.5]);
    expect(
        neg_binomial_2_log_glm_lpmf(&y[..], &x, 0.0, &beta, Param::Device(&negative), &O),
        "neg_binomial_2_log_glm_lpmf: phi[0, 0] is -0.5, but must be positive finite",
    );
    let column = m(2, 1, &[0.0, 0.0]);
    expect(
        poisson_log_glm_lpmf(&y[..], &x, Param::Device(&column), &beta, &O),
        "argument `alpha` is invalid: a device scalar must be 1 x 1, got 2 x 1",
    );
    let cuts = m(3, 1, &[-1.0, 1.0, 0.5]);
    expect(
        ordered_logistic_glm_lpmf(&[1, 2, 1, 2][..], &x, &beta, &cuts, &O),
        "ordered_logistic_glm_lpmf: cutpoints[2, 0] is 0.5, but must be finite and greater than the previous cutpoint",
    );
    let cuts = m(2, 1, &[f64::NAN, 1.0]);
    expect(
        ordered_logistic_glm_lpmf(&[1, 2, 1, 2][..], &x, &beta, &cuts, &O),
        "cutpoints[0, 0] is NaN",
    );
}

#[test]
fn dimension_mismatches() {
    let x = m(4, 2, &[0.1; 8]);
    let beta = m(2, 1, &[0.5, -0.5]);
    let e = bernoulli_logit_glm_lpmf(&[0, 1, 1][..], &x, 0.0, &beta, &O).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                argument: "y",
                expected: 4,
                actual: 3,
                ..
            }
        ),
        "{e}"
    );
    expect(
        bernoulli_logit_glm_lpmf(&[0, 1, 1, 0][..], &x, 0.0, &m(3, 1, &[0.0; 3]), &O),
        "beta",
    );
    expect(
        bernoulli_logit_glm_lpmf(&[0, 1, 1, 0][..], &x, &m(3, 1, &[0.0; 3]), &beta, &O),
        "alpha",
    );
    expect(
        normal_id_glm_lpdf(&[0.0; 4][..], &x, 0.0, &beta, &m(2, 1, &[1.0; 2]), &O),
        "sigma",
    );
    let y_device = MatrixCl::from_slice(1, 4, &[0, 1, 1, 0]).unwrap();
    expect(
        poisson_log_glm_lpmf(&y_device, &x, 0.0, &beta, &O),
        "must be a 4 x 1 column",
    );
    expect(
        categorical_logit_glm_lpmf(
            &[1, 1, 1, 1][..],
            &x,
            &m(2, 1, &[0.0; 2]),
            &m(2, 3, &[0.0; 6]),
            &O,
        ),
        "alpha",
    );
    expect(
        ordered_logistic_glm_lpmf(&[1, 1, 1, 1][..], &x, &beta, &m(0, 1, &[]), &O),
        "at least one cutpoint",
    );
}

#[test]
fn binomial_successes_and_trials() {
    let x = m(4, 2, &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]);
    let beta = m(2, 1, &[0.5, -0.5]);
    let f = binomial_logit_glm_lpmf;
    expect(
        f(&[0, 1, 4, 2][..], &[3, 3, 3, 3][..], &x, 0.0, &beta, &O),
        "binomial_logit_glm_lpmf: n[2, 0] is 4, but must be in [0, N]",
    );
    expect(
        f(&[0, -1, 1, 2][..], &[3, 3, 3, 3][..], &x, 0.0, &beta, &O),
        "binomial_logit_glm_lpmf: n[1, 0] is -1, but must be in [0, N]",
    );
    expect(
        f(&[0, 0, 0, 0][..], &[3, 3, 3, -2][..], &x, 0.0, &beta, &O),
        "binomial_logit_glm_lpmf: N[3, 0] is -2, but must be non-negative",
    );
    expect(
        f(
            &[0, 0, 0, 0][..],
            &[3, 3, 3, 3][..],
            &x,
            f64::NAN,
            &beta,
            &O,
        ),
        "binomial_logit_glm_lpmf: alpha[0, 0] is NaN, but must be finite",
    );
    let mut xs = vec![0.1; 8];
    xs[5] = f64::INFINITY; // x[1, 1]
    expect(
        f(
            &[0, 0, 0, 0][..],
            &[3, 3, 3, 3][..],
            &m(4, 2, &xs),
            0.0,
            &beta,
            &O,
        ),
        "binomial_logit_glm_lpmf: x[1, 1] is inf, but must be finite",
    );
    let e = f(&[0, 1, 1][..], &[3, 3, 3, 3][..], &x, 0.0, &beta, &O).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                argument: "n",
                expected: 4,
                actual: 3,
                ..
            }
        ),
        "{e}"
    );
    let e = f(&[0, 1, 1, 0][..], &[3, 3][..], &x, 0.0, &beta, &O).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                argument: "N",
                expected: 4,
                actual: 2,
                ..
            }
        ),
        "{e}"
    );
    let trials = MatrixCl::from_slice(1, 4, &[3, 3, 3, 3]).unwrap();
    expect(
        binomial_logit_glm_lpmf(&[0, 1, 1, 0][..], &trials, &x, 0.0, &beta, &O),
        "argument `N` is invalid: must be a 4 x 1 column",
    );
    expect(
        f(
            &[0, 1, 1, 0][..],
            &[3, 3, 3, 3][..],
            &x,
            0.0,
            &m(3, 1, &[0.0; 3]),
            &O,
        ),
        "beta",
    );
}
