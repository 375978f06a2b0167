//! Stan's matrix functions (`fusion-ops/src/matrix_functions.rs`) against
//! nalgebra and plain loops, at sizes 0 (where defined), 1, 31, 33 and a
//! rectangular shape of no multiple of 32; column and row vectors.

use crate::common;

use clfuse::Result;
use clfuse::prelude::*;
use common::{assert_close, values};
use nalgebra::DMatrix;

const LENGTHS: [usize; 5] = [0, 1, 31, 33, 45];
const SHAPES: [(usize, usize); 5] = [(0, 0), (1, 1), (31, 31), (33, 33), (45, 7)];
const TOL: f64 = 1e-12;

/// A deterministic `rows x cols` matrix on both sides (column-major).
fn pair(rows: usize, cols: usize, seed: f64) -> Result<(DMatrix<f64>, MatrixCl<f64>)> {
    let v = values(rows * cols, seed);
    Ok((
        DMatrix::from_vec(rows, cols, v.clone()),
        MatrixCl::from_slice(rows, cols, &v)?,
    ))
}

fn host(m: &MatrixCl<f64>) -> Result<DMatrix<f64>> {
    Ok(DMatrix::from_vec(m.rows(), m.cols(), m.to_vec()?))
}

fn same(what: &str, got: &MatrixCl<f64>, want: &DMatrix<f64>) -> Result<()> {
    assert_eq!((got.rows(), got.cols()), want.shape(), "{what}: shape");
    assert_close(what, &got.to_vec()?, want.as_slice(), TOL);
    Ok(())
}

fn scalar(what: &str, got: &MatrixCl<f64>, want: f64) -> Result<()> {
    same(what, got, &DMatrix::from_element(1, 1, want))
}

#[test]
fn dot_products_of_vectors() -> Result<()> {
    for n in LENGTHS {
        for (r, c) in [(n, 1), (1, n)] {
            let (ha, a) = pair(r, c, 1.0)?;
            let (hb, b) = pair(r, c, 2.0)?;
            scalar("dot_product", &dot_product(&a, &b).eval()?, ha.dot(&hb))?;
            scalar("dot_self", &dot_self(&a).eval()?, ha.dot(&ha))?;
        }
    }
    Ok(())
}

#[test]
fn columns_and_rows_dot_products() -> Result<()> {
    for (r, c) in SHAPES {
        let (ha, a) = pair(r, c, 3.0)?;
        let (hb, b) = pair(r, c, 4.0)?;
        let prod = ha.component_mul(&hb);
        let squares = ha.component_mul(&ha);
        let col_sums = |m: &DMatrix<f64>| DMatrix::from_fn(1, c, |_, j| m.column(j).sum());
        let row_sums = |m: &DMatrix<f64>| DMatrix::from_fn(r, 1, |i, _| m.row(i).sum());
        same(
            "columns_dot_product",
            &columns_dot_product(&a, &b).eval()?,
            &col_sums(&prod),
        )?;
        same(
            "rows_dot_product",
            &rows_dot_product(&a, &b).eval()?,
            &row_sums(&prod),
        )?;
        same(
            "columns_dot_self",
            &columns_dot_self(&a).eval()?,
            &col_sums(&squares),
        )?;
        same(
            "rows_dot_self",
            &rows_dot_self(&a).eval()?,
            &row_sums(&squares),
        )?;
    }
    Ok(())
}

#[test]
fn mean_variance_sd() -> Result<()> {
    let shapes = LENGTHS.iter().flat_map(|&n| [(n, 1), (1, n)]).chain(SHAPES);
    for (r, c) in shapes {
        let (hx, x) = pair(r, c, 5.0)?;
        let n = r * c;
        if n == 0 {
            for err in [mean(&x).err(), variance(&x).err(), sd(&x).err()] {
                let err = err.expect("an empty argument is an error").to_string();
                assert!(err.contains("size 0"), "{err}");
            }
            continue;
        }
        let m = hx.sum() / n as f64;
        let var = if n == 1 {
            0.0
        } else {
            hx.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1) as f64
        };
        scalar("mean", &mean(&x)?.eval()?, m)?;
        scalar("variance", &variance(&x)?.eval()?, var)?;
        scalar("sd", &sd(&x)?.eval()?, var.sqrt())?;
    }
    Ok(())
}

#[test]
fn trace_and_diagonal_scalings() -> Result<()> {
    for (r, c) in SHAPES {
        let (hm, m) = pair(r, c, 6.0)?;
        scalar(
            "trace",
            &trace(&m).eval()?,
            (0..r.min(c)).map(|i| hm[(i, i)]).sum(),
        )?;
        let (hv, v) = pair(r, 1, 7.0)?;
        let vrow = MatrixCl::from_slice(1, r, hv.as_slice())?;
        let want = DMatrix::from_diagonal(&hv.column(0)) * &hm;
        same(
            "diag_pre_multiply",
            &diag_pre_multiply(&v, &m)?.eval()?,
            &want,
        )?;
        same(
            "diag_pre_multiply (row)",
            &diag_pre_multiply(&vrow, &m)?.eval()?,
            &want,
        )?;
        let (hw, w) = pair(c, 1, 8.0)?;
        let wrow = MatrixCl::from_slice(1, c, hw.as_slice())?;
        let want = &hm * DMatrix::from_diagonal(&hw.column(0));
        same(
            "diag_post_multiply",
            &diag_post_multiply(&m, &w)?.eval()?,
            &want,
        )?;
        same(
            "diag_post_multiply (row)",
            &diag_post_multiply(&m, &wrow)?.eval()?,
            &want,
        )?;
        if r == c {
            let d = DMatrix::from_diagonal(&hv.column(0));
            let want = &d * &hm * &d;
            same("quad_form_diag", &quad_form_diag(&m, &v)?.eval()?, &want)?;
        } else {
            assert!(quad_form_diag(&m, &v).is_err(), "not square");
        }
    }
    let (_, m) = pair(3, 3, 1.0)?;
    let (_, v) = pair(2, 1, 1.0)?;
    let err = diag_pre_multiply(&v, &m).unwrap_err().to_string();
    assert!(
        err.contains("2 elements") && err.contains("3 rows"),
        "{err}"
    );
    Ok(())
}

#[test]
fn log_softmax_and_log_mix() -> Result<()> {
    for n in LENGTHS {
        let (hv, v) = pair(n, 1, 9.0)?;
        let hv = hv * 30.0;
        let v30 = (&v * 30.0).eval()?;
        if n == 0 {
            assert!(log_softmax(&v30).is_err());
        } else {
            let max = hv.max();
            let lse = max + hv.iter().map(|x| (x - max).exp()).sum::<f64>().ln();
            let want = hv.map(|x| x - lse);
            same("log_softmax", &log_softmax(&v30)?.eval()?, &want)?;
        }
        // theta in (0, 1), the lambdas large enough that exp would overflow.
        let (ht, _) = pair(n, 1, 10.0)?;
        let ht = ht.map(|t| 0.5 + 0.45 * t);
        let theta = MatrixCl::from_slice(n, 1, ht.as_slice())?;
        let (hl1, l1) = pair(n, 1, 11.0)?;
        let (hl2, l2) = pair(n, 1, 12.0)?;
        let (big1, big2) = ((&l1 * 800.0).eval()?, (&l2 * 800.0).eval()?);
        let mix = |t: f64, a: f64, b: f64| {
            let m = a.max(b);
            m + (t * (a - m).exp() + (1.0 - t) * (b - m).exp()).ln()
        };
        let want = DMatrix::from_fn(n, 1, |i, _| mix(ht[i], 800.0 * hl1[i], 800.0 * hl2[i]));
        same("log_mix", &log_mix(&theta, &big1, &big2).eval()?, &want)?;
        let want = DMatrix::from_fn(n, 1, |i, _| mix(0.3, hl1[i], hl2[i]));
        same("log_mix (number)", &log_mix(0.3, &l1, &l2).eval()?, &want)?;
        // The vector form: log Σ θ_k exp(λ_k), θ normalised.
        let total: f64 = ht.sum();
        let hw = ht.map(|t| t / total);
        let w = MatrixCl::from_slice(n, 1, hw.as_slice())?;
        let lam = hl1.map(|l| 800.0 * l);
        let want = if n == 0 {
            f64::NEG_INFINITY
        } else {
            let max = lam.max();
            max + hw
                .iter()
                .zip(lam.iter())
                .map(|(t, l)| t * (l - max).exp())
                .sum::<f64>()
                .ln()
        };
        scalar("log_mix_vector", &log_mix_vector(&w, &big1).eval()?, want)?;
    }
    Ok(())
}

#[test]
fn reverse_and_cumulative_sum() -> Result<()> {
    for n in LENGTHS {
        let (hv, v) = pair(n, 1, 13.0)?;
        let rev: Vec<f64> = hv.iter().rev().copied().collect();
        same(
            "reverse",
            &reverse(&v)?.eval()?,
            &DMatrix::from_vec(n, 1, rev.clone()),
        )?;
        let row = MatrixCl::from_slice(1, n, hv.as_slice())?;
        same(
            "reverse (row)",
            &reverse(&row)?.eval()?,
            &DMatrix::from_vec(1, n, rev),
        )?;
        let mut acc = 0.0;
        let sums: Vec<f64> = hv
            .iter()
            .map(|x| {
                acc += x;
                acc
            })
            .collect();
        same(
            "cumulative_sum",
            &cumulative_sum(&v)?.eval()?,
            &DMatrix::from_vec(n, 1, sums),
        )?;
    }
    let (_, m) = pair(2, 3, 1.0)?;
    assert!(reverse(&m).is_err() && cumulative_sum(&m).is_err());
    Ok(())
}

#[test]
fn products_through_gemm() -> Result<()> {
    for (r, c) in SHAPES {
        let (ha, a) = pair(r, c, 14.0)?;
        same("crossprod", &crossprod(&a).eval()?, &(ha.transpose() * &ha))?;
        same(
            "tcrossprod",
            &tcrossprod(&a).eval()?,
            &(&ha * ha.transpose()),
        )?;
        let (hs, s) = pair(r, r, 15.0)?;
        let want = ha.transpose() * &hs * &ha;
        let got = host(&quad_form(&s, &a).eval()?)?;
        assert_eq!(got.shape(), want.shape());
        assert_close("quad_form", got.as_slice(), want.as_slice(), 1e-11);
    }
    Ok(())
}

/// The new element-wise functions beyond the function tables: `lchoose` is
/// `binomial_coefficient_log`'s node, `ldexp` takes integer exponents, and
/// the log-space functions Stan users reach for are in the prelude.
#[test]
fn element_wise_additions() -> Result<()> {
    let n = MatrixCl::from_slice(3, 1, &[5.0f64, 10.0, 20.0])?;
    let k = MatrixCl::from_slice(3, 1, &[2.0f64, 3.0, 19.0])?;
    assert_eq!(
        lchoose(&n, &k).kernel_source()?,
        binomial_coefficient_log(&n, &k).kernel_source()?
    );
    let want = [10f64.ln(), 120f64.ln(), 20f64.ln()];
    assert_close("lchoose", &lchoose(&n, &k).eval()?.to_vec()?, &want, 1e-12);
    let e = MatrixCl::from_slice(3, 1, &[3, -2, 0])?;
    assert_eq!(ldexp(&n, &e).eval()?.to_vec()?, vec![40.0, 2.5, 20.0]);
    let s = MatrixCl::from_slice(1, 4, &[-2.5f64, 0.0, 3.0, -0.0])?;
    assert_eq!(sign(&s).eval()?.to_vec()?, vec![-1.0, 0.0, 1.0, 0.0]);
    // Far in the tails: no cancellation.
    let x = MatrixCl::from_slice(1, 2, &[-40.0f64, 40.0])?;
    let c = inv_cloglog(&x).eval()?.to_vec()?;
    assert!((c[0] - (-40f64).exp()).abs() < 1e-30 && c[1] == 1.0);
    let y = MatrixCl::from_slice(1, 2, &[-41.0f64, 39.0])?;
    let d = log_inv_logit_diff(&x, &y).eval()?.to_vec()?;
    let want0 = (-40f64).exp() * (1.0 - (-1f64).exp());
    assert!((d[0] - want0.ln()).abs() < 1e-10, "{}", d[0]);
    let want1 =
        -39.0 + (1.0 - (-1f64).exp()).ln() - (-40f64).exp().ln_1p() - (-39f64).exp().ln_1p();
    assert!((d[1] - want1).abs() < 1e-10, "{}", d[1]);
    // The log-space functions that already existed are in the prelude too.
    let z = MatrixCl::from_slice(3, 1, &[-1.0f64, -2.0, -3.0])?;
    let both = (lbeta(&k, &k) + log1m_exp(&z) + log_diff_exp(&k, &z)).eval()?;
    assert_eq!(both.rows(), 3);
    Ok(())
}
