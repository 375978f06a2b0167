//! Stan's GP covariance functions and `add_diag` against plain CPU loops
//! (Stan's definitions), one and two sets of points, d ∈ {1, 3}, isotropic
//! and ARD length scales, at sizes around a 32-wide tile.

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

#[derive(Debug, Clone, Copy)]
enum Kind {
    ExpQuad,
    Matern32,
    Matern52,
    Exponential,
    Periodic,
    DotProd,
}

const SIGMA: f64 = 1.3;
const PERIOD: f64 = 0.9;

/// Stan's covariance of the rows of `x1` and `x2`; `l` has one element
/// (isotropic) or one per dimension (ARD).
fn reference(kind: Kind, x1: &DMatrix<f64>, x2: &DMatrix<f64>, l: &[f64]) -> DMatrix<f64> {
    let d = x1.ncols();
    let s2 = SIGMA * SIGMA;
    DMatrix::from_fn(x1.nrows(), x2.nrows(), |i, j| {
        let lk = |k: usize| if l.len() == 1 { l[0] } else { l[k] };
        let r2: f64 = (0..d)
            .map(|k| ((x1[(i, k)] - x2[(j, k)]) / lk(k)).powi(2))
            .sum();
        let r = r2.sqrt();
        match kind {
            Kind::ExpQuad => s2 * (-0.5 * r2).exp(),
            Kind::Matern32 => {
                let s3 = 3f64.sqrt();
                s2 * (1.0 + s3 * r) * (-s3 * r).exp()
            }
            Kind::Matern52 => {
                let s5 = 5f64.sqrt();
                s2 * (1.0 + s5 * r + 5.0 / 3.0 * r2) * (-s5 * r).exp()
            }
            Kind::Exponential => s2 * (-r).exp(),
            Kind::Periodic => {
                let dist: f64 = (0..d)
                    .map(|k| (x1[(i, k)] - x2[(j, k)]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let s = (std::f64::consts::PI * dist / PERIOD).sin();
                s2 * (-2.0 * s * s / (l[0] * l[0])).exp()
            }
            Kind::DotProd => s2 + (0..d).map(|k| x1[(i, k)] * x2[(j, k)]).sum::<f64>(),
        }
    })
}

fn one_set(kind: Kind, x: &MatrixCl<f64>, l: &MatrixCl<f64>) -> Result<MatrixCl<f64>> {
    match kind {
        Kind::ExpQuad => gp_exp_quad_cov(x, SIGMA, l)?.eval(),
        Kind::Matern32 => gp_matern32_cov(x, SIGMA, l)?.eval(),
        Kind::Matern52 => gp_matern52_cov(x, SIGMA, l)?.eval(),
        Kind::Exponential => gp_exponential_cov(x, SIGMA, l)?.eval(),
        Kind::Periodic => gp_periodic_cov(x, SIGMA, l, PERIOD)?.eval(),
        Kind::DotProd => gp_dot_prod_cov(x, SIGMA)?.eval(),
    }
}

fn two_sets(
    kind: Kind,
    x1: &MatrixCl<f64>,
    x2: &MatrixCl<f64>,
    l: &MatrixCl<f64>,
) -> Result<MatrixCl<f64>> {
    match kind {
        Kind::ExpQuad => gp_exp_quad_cross_cov(x1, x2, SIGMA, l)?.eval(),
        Kind::Matern32 => gp_matern32_cross_cov(x1, x2, SIGMA, l)?.eval(),
        Kind::Matern52 => gp_matern52_cross_cov(x1, x2, SIGMA, l)?.eval(),
        Kind::Exponential => gp_exponential_cross_cov(x1, x2, SIGMA, l)?.eval(),
        Kind::Periodic => gp_periodic_cross_cov(x1, x2, SIGMA, l, PERIOD)?.eval(),
        Kind::DotProd => gp_dot_prod_cross_cov(x1, x2, SIGMA)?.eval(),
    }
}

fn assert_matches(what: &str, got: &MatrixCl<f64>, want: &DMatrix<f64>) {
    let got = to_host(got);
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (k, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{what}[{k}]: {g} vs {w}"
        );
    }
}

#[test]
fn covariances_match_stan_definitions() -> Result<()> {
    use Kind::*;
    for kind in [ExpQuad, Matern32, Matern52, Exponential, Periodic, DotProd] {
        let ard_form = !matches!(kind, Periodic | DotProd);
        for d in [1, 3] {
            let mut rng = Rng::new(d as u64 + 11);
            let iso = [0.7];
            let ard: Vec<f64> = (0..d).map(|k| 0.5 + 0.3 * k as f64).collect();
            let mut scales: Vec<&[f64]> = vec![&iso];
            if ard_form && d > 1 {
                scales.push(&ard);
            }
            for l in scales {
                let dl = MatrixCl::from_slice(l.len(), 1, l)?;
                for (n, m) in [(1, 1), (31, 33), (33, 5), (70, 70)] {
                    let (x1, x2) = (rng.matrix(n, d), rng.matrix(m, d));
                    let what = format!("{kind:?} n={n} m={m} d={d} l={}", l.len());
                    let (dx1, dx2) = (to_device(&x1), to_device(&x2));
                    let k = one_set(kind, &dx1, &dl)?;
                    assert_matches(
                        &format!("{what} one set"),
                        &k,
                        &reference(kind, &x1, &x1, l),
                    );
                    // One set: exactly symmetric where Stan's is, σ² on the diagonal.
                    let kh = to_host(&k);
                    if !matches!(kind, DotProd) {
                        assert!((0..n).all(|i| kh[(i, i)] == SIGMA * SIGMA), "{what}");
                    }
                    let k = two_sets(kind, &dx1, &dx2, &dl)?;
                    assert_matches(
                        &format!("{what} two sets"),
                        &k,
                        &reference(kind, &x1, &x2, l),
                    );
                }
            }
        }
    }
    Ok(())
}

#[test]
fn ard_length_scale_as_a_row_and_numbers_as_arguments() -> Result<()> {
    let mut rng = Rng::new(5);
    let x = rng.matrix(9, 3);
    let l = [0.5, 1.0, 2.0];
    let row = MatrixCl::from_slice(1, 3, &l)?;
    let got = gp_exp_quad_cov(&to_device(&x), SIGMA, &row)?.eval()?;
    assert_matches("ARD as a row", &got, &reference(Kind::ExpQuad, &x, &x, &l));
    let got = gp_matern32_cov(&to_device(&x), SIGMA, 0.7)?.eval()?;
    assert_matches("numbers", &got, &reference(Kind::Matern32, &x, &x, &[0.7]));
    Ok(())
}

#[test]
fn add_diag_adds_numbers_and_vectors() -> Result<()> {
    let m = Rng::new(8).matrix(5, 4);
    let dm = to_device(&m);
    let got = to_host(&add_diag(&dm, 0.25)?.eval()?);
    let want = DMatrix::from_fn(5, 4, |i, j| m[(i, j)] + if i == j { 0.25 } else { 0.0 });
    assert_eq!(got, want);
    let v = [1.0, 2.0, 3.0, 4.0];
    let dv = MatrixCl::from_slice(4, 1, &v)?;
    let got = to_host(&add_diag(&dm, &dv)?.eval()?);
    let want = DMatrix::from_fn(5, 4, |i, j| m[(i, j)] + if i == j { v[i] } else { 0.0 });
    assert_eq!(got, want);
    // Fused with a covariance: one expression.
    let x = to_device(&Rng::new(9).matrix(6, 2));
    let k = to_host(&add_diag(gp_exp_quad_cov(&x, 1.0, 0.5)?, 0.1)?.eval()?);
    assert!((0..6).all(|i| (k[(i, i)] - 1.1).abs() < 1e-15));
    Ok(())
}

#[test]
fn bad_arguments_are_errors_naming_function_and_argument() -> Result<()> {
    let x = MatrixCl::from_slice(3, 2, &[0.0f64; 6])?;
    let y = MatrixCl::from_slice(3, 3, &[0.0f64; 9])?;
    let l3 = MatrixCl::from_slice(3, 1, &[1.0f64; 3])?;
    let expect = |r: Result<()>, function: &str, argument: &str| {
        let err = r.unwrap_err().to_string();
        assert!(
            err.contains(function) && err.contains(argument),
            "{err} should name {function} and {argument}"
        );
    };
    expect(
        gp_exp_quad_cov(&x, -1.0, 1.0).map(|_| ()),
        "gp_exp_quad_cov",
        "sigma",
    );
    expect(
        gp_matern32_cov(&x, 1.0, 0.0).map(|_| ()),
        "gp_matern32_cov",
        "length_scale",
    );
    expect(
        gp_matern52_cov(&x, 1.0, &l3).map(|_| ()),
        "gp_matern52_cov",
        "length_scale",
    );
    expect(
        gp_exponential_cross_cov(&x, &y, 1.0, 1.0).map(|_| ()),
        "gp_exponential_cov",
        "x2",
    );
    expect(
        gp_periodic_cov(&x, 1.0, 1.0, f64::NAN).map(|_| ()),
        "gp_periodic_cov",
        "period",
    );
    expect(
        gp_periodic_cov(&x, 1.0, &l3, 1.0).map(|_| ()),
        "gp_periodic_cov",
        "length_scale",
    );
    expect(
        gp_dot_prod_cov(&x, -0.5).map(|_| ()),
        "gp_dot_prod_cov",
        "sigma",
    );
    assert!(gp_dot_prod_cov(&x, 0.0).is_ok());
    expect(
        add_diag(&y, &MatrixCl::from_slice(2, 1, &[1.0f64; 2])?).map(|_| ()),
        "add_diag",
        "d",
    );
    Ok(())
}

/// The distances' pieces (row norms, the GEMM and the scaled points it
/// reads) and then ONE kernel for the whole covariance.
#[test]
fn covariance_is_one_kernel_after_the_distances() -> Result<()> {
    let x = to_device(&Rng::new(4).matrix(20, 2));
    let l = MatrixCl::from_slice(1, 1, &[0.7])?;
    let d2 = squared_distance(&x, &x)?;
    let before = thread_kernel_stats();
    d2.eval()?;
    let distances = (thread_kernel_stats() - before).launched;
    let before = thread_kernel_stats();
    gp_matern52_cov(&x, 1.0, &l)?.eval()?;
    let cov = (thread_kernel_stats() - before).launched;
    println!("squared_distance: {distances} launches, gp_matern52_cov: {cov}");
    // The covariance's kernel replaces the distances' own; the scaled
    // points are evaluated for the GEMM (one kernel per operand).
    assert!(cov <= distances + 2, "{cov} vs {distances}");
    Ok(())
}

/// `add_diag` of a vector on a tall matrix: the rows below the diagonal
/// read no element of the vector (a gather out of range is an error now).
#[test]
fn add_diag_of_a_vector_on_a_tall_matrix() -> Result<()> {
    let m = Rng::new(10).matrix(7, 3);
    let v = [0.5, -1.0, 2.0];
    let got = to_host(&add_diag(&to_device(&m), &MatrixCl::from_slice(3, 1, &v)?)?.eval()?);
    let want = DMatrix::from_fn(7, 3, |i, j| m[(i, j)] + if i == j { v[i] } else { 0.0 });
    assert_eq!(got, want);
    Ok(())
}
