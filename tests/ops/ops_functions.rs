//! Every element-wise function against a CPU reference, over odd shapes.
//!
//! Tolerances (relative, with an absolute floor of the same size near zero):
//! 1e-13 for functions the device library computes directly, 1e-12 for the
//! special functions written here (Phi, inv_Phi, digamma), 1e-10 for trigamma
//! (reference is a truncated series) and 1e-9 for lbeta and
//! binomial_coefficient_log (lgamma cancellation for larger arguments).

use crate::common;

use clfuse::Result;
use clfuse::prelude::*;
use common::reference as r;

/// Shapes: empty, single, row, column, not multiples of any work-group size,
/// and over a million elements (checked on a strided sample).
const SHAPES: [(usize, usize); 7] = [
    (0, 0),
    (1, 1),
    (1, 37),
    (41, 1),
    (33, 31),
    (257, 3),
    (1031, 1021),
];

/// Every element of small results; every 997th of large ones (the CPU
/// references of some special functions are slow).
fn sample(n: usize) -> usize {
    if n > 100_000 { 997 } else { 1 }
}

fn inputs(n: usize, lo: f64, hi: f64, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let u = ((k * 7919 + salt * 104729) % 10007) as f64 / 10006.0;
            lo + (hi - lo) * u
        })
        .collect()
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tol * want.abs().max(1.0)
}

fn assert_all_close(name: &str, got: &[f64], want: &[f64], inputs: &[(f64, f64)], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if inputs[k].0.is_nan() {
            continue; // not sampled
        }
        assert!(
            close(*g, *w, tol),
            "{name}{:?}: device {g:e}, reference {w:e} (tolerance {tol:e})",
            inputs[k]
        );
    }
}

macro_rules! unary_tests {
    ($($fun:ident: [$lo:expr, $hi:expr], $reference:expr, $tol:expr;)*) => {$(
        mod $fun {
        use super::*;
        #[test]
        fn matches_reference() -> Result<()> {
            for (rows, cols) in SHAPES {
                let x = inputs(rows * cols, $lo, $hi, 1);
                let a = MatrixCl::from_slice(rows, cols, &x)?;
                let got = clfuse::clfuse_ops::$fun(&a).eval()?;
                assert_eq!((got.rows(), got.cols()), (rows, cols));
                let reference: fn(f64) -> f64 = $reference;
                let step = sample(x.len());
                let want: Vec<f64> = x.iter().enumerate().map(|(k, v)| if k % step == 0 { reference(*v) } else { 0.0 }).collect();
                let pairs: Vec<(f64, f64)> = x.iter().enumerate().map(|(k, v)| if k % step == 0 { (*v, 0.0) } else { (f64::NAN, 0.0) }).collect();
                assert_all_close(stringify!($fun), &got.to_vec()?, &want, &pairs, $tol);
            }
            // The method form and f32 agree too (f32 relative tolerance 1e-5).
            let x = inputs(65, $lo, $hi, 2);
            let xf: Vec<f32> = x.iter().map(|v| *v as f32).collect();
            let af = MatrixCl::from_slice(65, 1, &xf)?;
            let got: Vec<f32> = (&af).$fun().eval()?.to_vec()?;
            let reference: fn(f64) -> f64 = $reference;
            for (k, g) in got.iter().enumerate() {
                let want = reference(xf[k] as f64);
                assert!(close(*g as f64, want, 2e-5), "{}f({}) = {g}, want {want}", stringify!($fun), xf[k]);
            }
            Ok(())
        }
        }
    )*};
}

unary_tests! {
    exp: [-20.0, 20.0], f64::exp, 1e-13;
    exp2: [-20.0, 20.0], f64::exp2, 1e-13;
    expm1: [-5.0, 5.0], f64::exp_m1, 1e-13;
    log: [1e-3, 1e3], f64::ln, 1e-13;
    log2: [1e-3, 1e3], f64::log2, 1e-13;
    log10: [1e-3, 1e3], f64::log10, 1e-13;
    log1p: [-0.9, 10.0], f64::ln_1p, 1e-13;
    sqrt: [0.0, 100.0], f64::sqrt, 1e-13;
    cbrt: [-100.0, 100.0], f64::cbrt, 1e-13;
    rsqrt: [0.01, 100.0], |x| 1.0 / x.sqrt(), 1e-13;
    square: [-100.0, 100.0], |x| x * x, 1e-13;
    fabs: [-5.0, 5.0], f64::abs, 0.0;
    floor: [-5.0, 5.0], f64::floor, 0.0;
    ceil: [-5.0, 5.0], f64::ceil, 0.0;
    round: [-5.0, 5.0], f64::round, 0.0;
    trunc: [-5.0, 5.0], f64::trunc, 0.0;
    sin: [-10.0, 10.0], f64::sin, 1e-13;
    cos: [-10.0, 10.0], f64::cos, 1e-13;
    tan: [-1.5, 1.5], f64::tan, 1e-13;
    asin: [-0.99, 0.99], f64::asin, 1e-13;
    acos: [-0.99, 0.99], f64::acos, 1e-13;
    atan: [-10.0, 10.0], f64::atan, 1e-13;
    sinh: [-5.0, 5.0], f64::sinh, 1e-13;
    cosh: [-5.0, 5.0], f64::cosh, 1e-13;
    tanh: [-5.0, 5.0], f64::tanh, 1e-13;
    asinh: [-10.0, 10.0], f64::asinh, 1e-13;
    acosh: [1.01, 10.0], f64::acosh, 1e-13;
    atanh: [-0.99, 0.99], f64::atanh, 1e-13;
    erf: [-4.0, 4.0], libm::erf, 1e-13;
    erfc: [-4.0, 10.0], libm::erfc, 1e-13;
    lgamma: [0.1, 30.0], libm::lgamma, 1e-12;
    tgamma: [0.1, 20.0], libm::tgamma, 1e-12;
    inv_logit: [-40.0, 40.0], r::inv_logit, 1e-13;
    logit: [0.001, 0.999], r::logit, 1e-12;
    log_inv_logit: [-40.0, 40.0], r::log_inv_logit, 1e-13;
    log1m_inv_logit: [-40.0, 40.0], r::log1m_inv_logit, 1e-13;
    log1p_exp: [-40.0, 40.0], r::log1p_exp, 1e-13;
    log1m_exp: [-20.0, -1e-6], r::log1m_exp, 1e-12;
    log1m: [-10.0, 0.999], r::log1m, 1e-13;
    phi: [-40.0, 10.0], r::phi, 1e-12;
    log_phi: [-60.0, 10.0], r::log_phi, 1e-12;
    phi_approx: [-10.0, 10.0], r::phi_approx, 1e-13;
    inv_phi: [1e-10, 0.9999999], r::inv_phi, 1e-12;
    digamma: [0.05, 30.0], r::digamma, 1e-12;
    trigamma: [0.05, 30.0], r::trigamma, 1e-10;
    inv: [0.1, 10.0], |x| 1.0 / x, 1e-13;
    inv_square: [0.1, 10.0], |x| 1.0 / (x * x), 1e-13;
    inv_cloglog: [-10.0, 3.0], r::inv_cloglog, 1e-13;
    sign: [-5.0, 5.0], r::sign, 0.0;
}

macro_rules! binary_tests {
    ($($fun:ident: [$lo:expr, $hi:expr], [$lo2:expr, $hi2:expr], $reference:expr, $tol:expr;)*) => {$(
        mod $fun {
        use super::*;
        #[test]
        fn matches_reference() -> Result<()> {
            for (rows, cols) in SHAPES {
                let x = inputs(rows * cols, $lo, $hi, 3);
                let y = inputs(rows * cols, $lo2, $hi2, 4);
                let a = MatrixCl::from_slice(rows, cols, &x)?;
                let b = MatrixCl::from_slice(rows, cols, &y)?;
                let got = clfuse::clfuse_ops::$fun(&a, &b).eval()?;
                let reference: fn(f64, f64) -> f64 = $reference;
                let step = sample(x.len());
                let want: Vec<f64> = x.iter().zip(&y).enumerate().map(|(k, (u, v))| if k % step == 0 { reference(*u, *v) } else { 0.0 }).collect();
                let pairs: Vec<(f64, f64)> = x.iter().zip(&y).enumerate().map(|(k, (u, v))| if k % step == 0 { (*u, *v) } else { (f64::NAN, 0.0) }).collect();
                assert_all_close(stringify!($fun), &got.to_vec()?, &want, &pairs, $tol);
            }
            // Method form with a scalar operand.
            let x = inputs(40, $lo, $hi, 5);
            let a = MatrixCl::from_slice(40, 1, &x)?;
            let s: f64 = ($lo2 + $hi2) / 2.0;
            let got = (&a).$fun(s).eval()?.to_vec()?;
            let reference: fn(f64, f64) -> f64 = $reference;
            let want: Vec<f64> = x.iter().map(|u| reference(*u, s)).collect();
            let pairs: Vec<(f64, f64)> = x.iter().map(|u| (*u, s)).collect();
            assert_all_close(stringify!($fun), &got, &want, &pairs, $tol);
            Ok(())
        }
        }
    )*};
}

binary_tests! {
    pow: [0.1, 10.0], [-3.0, 3.0], f64::powf, 1e-13;
    fmin: [-5.0, 5.0], [-5.0, 5.0], f64::min, 0.0;
    fmax: [-5.0, 5.0], [-5.0, 5.0], f64::max, 0.0;
    fmod: [-50.0, 50.0], [0.5, 7.0], |a, b| a % b, 1e-13;
    hypot: [-5.0, 5.0], [-5.0, 5.0], f64::hypot, 1e-13;
    copysign: [-5.0, 5.0], [-5.0, 5.0], f64::copysign, 0.0;
    fdim: [-5.0, 5.0], [-5.0, 5.0], r::fdim, 1e-15;
    lbeta: [0.1, 20.0], [0.1, 20.0], r::lbeta, 1e-9;
    binomial_coefficient_log: [20.0, 50.0], [0.0, 19.0], r::binomial_coefficient_log, 1e-9;
    lmultiply: [0.0, 5.0], [0.01, 5.0], r::lmultiply, 1e-13;
    log_diff_exp: [0.0, 5.0], [-10.0, -0.1], r::log_diff_exp, 1e-12;
    log_sum_exp: [-50.0, 50.0], [-50.0, 50.0], r::log_sum_exp, 1e-13;
    log_inv_logit_diff: [0.0, 5.0], [-5.0, -0.1], r::log_inv_logit_diff, 1e-12;
    ldexp: [-5.0, 5.0], [-10.0, 10.0], r::ldexp, 0.0;
}

#[test]
fn stable_forms_stay_finite() -> Result<()> {
    let big = MatrixCl::from_slice(1, 2, &[800.0f64, -800.0])?;
    assert_eq!(log1p_exp(&big).eval()?.to_vec()?, vec![800.0, 0.0]);
    assert_eq!(log_inv_logit(&big).eval()?.to_vec()?, vec![0.0, -800.0]);
    assert_eq!(log1m_inv_logit(&big).eval()?.to_vec()?, vec![-800.0, 0.0]);
    assert_eq!(inv_logit(&big).eval()?.to_vec()?, vec![1.0, 0.0]);
    let lse = log_sum_exp(&big, &big).eval()?.to_vec()?;
    assert!((lse[0] - (800.0 + std::f64::consts::LN_2)).abs() < 1e-12);
    assert!((lse[1] - (-800.0 + std::f64::consts::LN_2)).abs() < 1e-12);
    let tiny = MatrixCl::from_slice(1, 2, &[-1e-20f64, -800.0])?;
    let v = log1m_exp(&tiny).eval()?.to_vec()?;
    assert!((v[0] - (1e-20f64).ln()).abs() < 1e-10 && v[1].abs() < 1e-300);
    let p = MatrixCl::from_slice(1, 3, &[0.0f64, 1.0, 1e-300])?;
    let q = inv_phi(&p).eval()?.to_vec()?;
    assert_eq!((q[0], q[1]), (f64::NEG_INFINITY, f64::INFINITY));
    assert!(q[2].is_finite() && (q[2] - r::inv_phi(1e-300)).abs() < 1e-9 * 37.0);
    let z = MatrixCl::from_slice(1, 2, &[-40.0f64, 40.0])?;
    assert_eq!(phi(&z).eval()?.to_vec()?, vec![0.0, 1.0]);
    // Negative non-integer arguments use reflection.
    let neg = MatrixCl::from_slice(1, 2, &[-0.5f64, -2.3])?;
    let d = digamma(&neg).eval()?.to_vec()?;
    assert!(close(d[0], r::digamma(-0.5), 1e-12) && close(d[1], r::digamma(-2.3), 1e-11));
    let t = trigamma(&neg).eval()?.to_vec()?;
    assert!(close(t[0], r::trigamma(-0.5), 1e-10) && close(t[1], r::trigamma(-2.3), 1e-10));
    Ok(())
}

#[test]
fn integer_operands_promote_to_double() -> Result<()> {
    let i = MatrixCl::from_slice(1, 3, &[1, 2, 3])?;
    let e: MatrixCl<f64> = exp(&i).eval()?;
    let want: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|v| v.exp()).collect();
    assert_all_close(
        "exp(int)",
        &e.to_vec()?,
        &want,
        &[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)],
        1e-15,
    );
    let p: MatrixCl<f64> = pow(&i, 2).eval()?;
    assert_eq!(p.to_vec()?, vec![1.0, 4.0, 9.0]);
    Ok(())
}

#[test]
fn large_matrix_of_a_million_elements() -> Result<()> {
    let n = 1 << 20;
    let x = inputs(n, -3.0, 3.0, 9);
    let a = MatrixCl::from_slice(1024, n / 1024, &x)?;
    let got = log1p_exp(&a).eval()?.to_vec()?;
    for (k, g) in got.iter().enumerate().step_by(997) {
        assert!(close(*g, r::log1p_exp(x[k]), 1e-13));
    }
    assert_eq!(got.len(), n);
    Ok(())
}
