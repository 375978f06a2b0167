//! The transforms on the host, in plain loops after Stan's definitions:
//! the forward map turns a sampler's unconstrained draws into constrained
//! values, the inverse turns user-given initial values into unconstrained
//! ones. (The device's transforms, in `device.rs`, are built differently,
//! from fused expressions; the tests hold each against the other.)
//!
//! Matrices are column-major, as on the device.

use super::constraint::Constraint;
use clfuse_core::{Error, Result};

/// A bound's values on the host: one value for all elements, or one each.
pub(crate) struct HostBound(pub Vec<f64>);

impl HostBound {
    fn at(&self, i: usize) -> f64 {
        if self.0.len() == 1 {
            self.0[0]
        } else {
            self.0.get(i).copied().unwrap_or(f64::NAN)
        }
    }
}

fn inv_logit(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

/// The constrained values (`rows x cols`, column-major) of the
/// unconstrained `x`.
pub(crate) fn constrain(
    c: &Constraint,
    x: &[f64],
    rows: usize,
    cols: usize,
    bounds: &[HostBound],
) -> Vec<f64> {
    let lower = |i: usize| bounds.first().map_or(f64::NAN, |b| b.at(i));
    let upper = |i: usize| bounds.get(1).map_or(f64::NAN, |b| b.at(i));
    match c {
        Constraint::Unconstrained => x.to_vec(),
        Constraint::Lower(_) => x
            .iter()
            .enumerate()
            .map(|(i, &v)| scalar_lower(v, lower(i)))
            .collect(),
        Constraint::Upper(_) => x
            .iter()
            .enumerate()
            .map(|(i, &v)| scalar_upper(v, lower(i)))
            .collect(),
        Constraint::LowerUpper(..) => x
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (l, u) = (lower(i), upper(i));
                match (l.is_finite(), u.is_finite()) {
                    (true, true) => l + (u - l) * inv_logit(v),
                    (true, false) => scalar_lower(v, l),
                    (false, true) => scalar_upper(v, u),
                    (false, false) => v,
                }
            })
            .collect(),
        Constraint::OffsetMultiplier(..) => x
            .iter()
            .enumerate()
            .map(|(i, &v)| lower(i) + upper(i) * v)
            .collect(),
        Constraint::Ordered => {
            let mut y = Vec::with_capacity(x.len());
            for (k, &v) in x.iter().enumerate() {
                y.push(if k == 0 { v } else { y[k - 1] + v.exp() });
            }
            y
        }
        Constraint::PositiveOrdered => {
            let mut y = Vec::with_capacity(x.len());
            for (k, &v) in x.iter().enumerate() {
                y.push(if k == 0 { v.exp() } else { y[k - 1] + v.exp() });
            }
            y
        }
        Constraint::Simplex => {
            // Stan's stick breaking: each share's logit is offset so that
            // x = 0 is the uniform simplex.
            let m = x.len();
            let mut y = Vec::with_capacity(m + 1);
            let mut stick = 1.0;
            for (k, &v) in x.iter().enumerate() {
                let z = inv_logit(v - ((m - k) as f64).ln());
                y.push(stick * z);
                stick -= stick * z;
            }
            y.push(stick);
            y
        }
        Constraint::UnitVector => {
            let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            x.iter().map(|v| v / norm).collect()
        }
        Constraint::SumToZero => {
            let n = x.len();
            let mut z = vec![0.0; n + 1];
            let mut sum_w = 0.0;
            for i in (1..=n).rev() {
                let nf = i as f64;
                let w = x[i - 1] / (nf * (nf + 1.0)).sqrt();
                sum_w += w;
                z[i - 1] += sum_w;
                z[i] -= w * nf;
            }
            z
        }
        Constraint::CholeskyFactorCorr => {
            let k = rows;
            let mut l = vec![0.0; k * k];
            let mut pos = 0;
            for i in 0..k {
                let mut sum_sqs = 0.0f64;
                for j in 0..i {
                    let z = x[pos].tanh();
                    pos += 1;
                    let v = z * (1.0 - sum_sqs).sqrt();
                    l[i + j * k] = v;
                    sum_sqs += v * v;
                }
                l[i + i * k] = (1.0 - sum_sqs).sqrt();
            }
            l
        }
        Constraint::CorrMatrix => {
            let k = rows;
            let l = corr_cholesky_by_columns(x, k);
            lower_times_transpose(&l, k)
        }
        Constraint::CholeskyFactorCov => cholesky_cov(x, rows, cols),
        Constraint::CovMatrix => lower_times_transpose(&cholesky_cov(x, rows, rows), rows),
    }
}

fn scalar_lower(v: f64, l: f64) -> f64 {
    if l == f64::NEG_INFINITY {
        v
    } else {
        l + v.exp()
    }
}

fn scalar_upper(v: f64, u: f64) -> f64 {
    if u == f64::INFINITY { v } else { u - v.exp() }
}

/// The Cholesky factor of a correlation matrix from partial correlations
/// taken column by column (Stan's `read_corr_L`).
fn corr_cholesky_by_columns(x: &[f64], k: usize) -> Vec<f64> {
    let mut l = vec![0.0; k * k];
    // Remaining squared length of each row.
    let mut left = vec![1.0f64; k];
    let mut pos = 0;
    for j in 0..k {
        l[j + j * k] = left[j].sqrt();
        for i in j + 1..k {
            let z = x[pos].tanh();
            pos += 1;
            l[i + j * k] = z * left[i].sqrt();
            left[i] *= 1.0 - z * z;
        }
    }
    l
}

/// `M x N` lower-triangular factor, rows filled in order, the diagonal
/// through `exp`.
fn cholesky_cov(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut l = vec![0.0; rows * cols];
    let mut pos = 0;
    for i in 0..rows {
        for j in 0..=i.min(cols - 1) {
            l[i + j * rows] = if i == j { x[pos].exp() } else { x[pos] };
            pos += 1;
        }
    }
    l
}

fn lower_times_transpose(l: &[f64], k: usize) -> Vec<f64> {
    let mut s = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..k {
            s[i + j * k] = (0..k).map(|m| l[i + m * k] * l[j + m * k]).sum();
        }
    }
    s
}

/// The unconstrained values of the constrained `y` (`rows x cols`,
/// column-major), or an error naming the first element that breaks the
/// constraint.
pub(crate) fn unconstrain(
    name: &str,
    c: &Constraint,
    y: &[f64],
    rows: usize,
    cols: usize,
    bounds: &[HostBound],
) -> Result<Vec<f64>> {
    let fail = |index: usize, value: f64, requirement: &str| Error::CheckFailed {
        function: "Parameters::unconstrain".to_string(),
        argument: name.to_string(),
        row: if cols == 0 { 0 } else { index % rows.max(1) },
        col: if rows == 0 { 0 } else { index / rows.max(1) },
        value,
        requirement: requirement.to_string(),
    };
    let lower = |i: usize| bounds.first().map_or(f64::NAN, |b| b.at(i));
    let upper = |i: usize| bounds.get(1).map_or(f64::NAN, |b| b.at(i));
    let tolerance = 1e-8;
    let mut x = Vec::with_capacity(y.len());
    match c {
        Constraint::Unconstrained => x.extend_from_slice(y),
        Constraint::Lower(_) | Constraint::Upper(_) | Constraint::LowerUpper(..) => {
            for (i, &v) in y.iter().enumerate() {
                let (l, u) = match c {
                    Constraint::Lower(_) => (lower(i), f64::INFINITY),
                    Constraint::Upper(_) => (f64::NEG_INFINITY, lower(i)),
                    _ => (lower(i), upper(i)),
                };
                let inside = v > l && v < u;
                if !inside {
                    return Err(fail(i, v, &format!("strictly between {l} and {u}")));
                }
                x.push(match (l.is_finite(), u.is_finite()) {
                    (true, true) => logit((v - l) / (u - l)),
                    (true, false) => (v - l).ln(),
                    (false, true) => (u - v).ln(),
                    (false, false) => v,
                });
            }
        }
        Constraint::OffsetMultiplier(..) => {
            for (i, &v) in y.iter().enumerate() {
                x.push((v - lower(i)) / upper(i));
            }
        }
        Constraint::Ordered | Constraint::PositiveOrdered => {
            for (k, &v) in y.iter().enumerate() {
                let previous = if k > 0 { y[k - 1] } else { 0.0 };
                if k == 0 && matches!(c, Constraint::Ordered) {
                    x.push(v);
                } else if v > previous {
                    x.push((v - previous).ln());
                } else {
                    let need = if k == 0 {
                        "positive"
                    } else {
                        "greater than the previous element"
                    };
                    return Err(fail(k, v, need));
                }
            }
        }
        Constraint::Simplex => {
            check_simplex(y, tolerance).map_err(|(i, v, why)| fail(i, v, why))?;
            let m = y.len().saturating_sub(1);
            let mut stick = y.last().copied().unwrap_or(1.0);
            let mut out = vec![0.0; m];
            for k in (0..m).rev() {
                stick += y[k];
                out[k] = logit(y[k] / stick) + ((m - k) as f64).ln();
            }
            x = out;
        }
        Constraint::UnitVector => {
            let norm2: f64 = y.iter().map(|v| v * v).sum();
            if (norm2 - 1.0).abs() > tolerance {
                return Err(fail(
                    0,
                    norm2.sqrt(),
                    "a vector of length 1 (this is its length)",
                ));
            }
            x.extend_from_slice(y);
        }
        Constraint::SumToZero => {
            let total: f64 = y.iter().sum();
            if total.abs() > tolerance * (y.len().max(1) as f64) {
                return Err(fail(0, total, "a vector summing to zero (this is its sum)"));
            }
            // Undo the isometric map from the last element back.
            let n = y.len().saturating_sub(1);
            let mut w = vec![0.0; n + 2];
            let mut suffix = 0.0;
            for k in (1..=n).rev() {
                w[k] = (suffix - y[k]) / k as f64;
                suffix += w[k];
            }
            x = (1..=n)
                .map(|k| w[k] * ((k * (k + 1)) as f64).sqrt())
                .collect();
        }
        Constraint::CholeskyFactorCorr => {
            let k = rows;
            for i in 0..k {
                let mut sum_sqs = 0.0f64;
                for j in 0..i {
                    let v = y[i + j * k];
                    x.push((v / (1.0 - sum_sqs).sqrt()).atanh());
                    sum_sqs += v * v;
                }
                check_unit_row(y, k, i, tolerance).map_err(|(idx, v, why)| fail(idx, v, why))?;
            }
        }
        Constraint::CholeskyFactorCov => {
            for i in 0..rows {
                for j in 0..=i.min(cols.saturating_sub(1)) {
                    let v = y[i + j * rows];
                    if i == j {
                        if v.is_nan() || v <= 0.0 {
                            return Err(fail(i + j * rows, v, "positive (a diagonal element)"));
                        }
                        x.push(v.ln());
                    } else {
                        x.push(v);
                    }
                }
            }
        }
        Constraint::CovMatrix | Constraint::CorrMatrix => {
            let k = rows;
            let l = cholesky_lower(y, k).map_err(|(idx, v, why)| fail(idx, v, why))?;
            if matches!(c, Constraint::CovMatrix) {
                for i in 0..k {
                    for j in 0..=i {
                        let v = l[i + j * k];
                        x.push(if i == j { v.ln() } else { v });
                    }
                }
            } else {
                for i in 0..k {
                    if (y[i + i * k] - 1.0).abs() > tolerance {
                        return Err(fail(
                            i + i * k,
                            y[i + i * k],
                            "1 (a correlation matrix's diagonal)",
                        ));
                    }
                }
                // Partial correlations column by column (the inverse of
                // `corr_cholesky_by_columns`).
                let mut left = vec![1.0f64; k];
                for j in 0..k {
                    for i in j + 1..k {
                        let z = l[i + j * k] / left[i].sqrt();
                        x.push(z.atanh());
                        left[i] *= 1.0 - z * z;
                    }
                }
            }
        }
    }
    Ok(x)
}

fn check_simplex(y: &[f64], tolerance: f64) -> std::result::Result<(), (usize, f64, &'static str)> {
    if let Some((i, &v)) = y.iter().enumerate().find(|(_, v)| v.is_nan() || **v <= 0.0) {
        return Err((i, v, "positive (a simplex element)"));
    }
    let total: f64 = y.iter().sum();
    if (total - 1.0).abs() > tolerance {
        return Err((0, total, "a simplex summing to 1 (this is its sum)"));
    }
    Ok(())
}

fn check_unit_row(
    y: &[f64],
    k: usize,
    i: usize,
    tolerance: f64,
) -> std::result::Result<(), (usize, f64, &'static str)> {
    let norm2: f64 = (0..=i).map(|j| y[i + j * k].powi(2)).sum();
    if (norm2 - 1.0).abs() > tolerance || y[i + i * k].is_nan() || y[i + i * k] <= 0.0 {
        return Err((
            i + i * k,
            y[i + i * k],
            "a Cholesky factor of a correlation matrix: rows of length 1, a positive diagonal",
        ));
    }
    if let Some(j) = (i + 1..k).find(|&j| y[i + j * k] != 0.0) {
        return Err((
            i + j * k,
            y[i + j * k],
            "0 (above the diagonal of a Cholesky factor)",
        ));
    }
    Ok(())
}

/// The Cholesky factor of a symmetric positive-definite `k x k` matrix
/// (nalgebra's), column-major.
fn cholesky_lower(
    y: &[f64],
    k: usize,
) -> std::result::Result<Vec<f64>, (usize, f64, &'static str)> {
    for i in 0..k {
        for j in 0..i {
            let (a, b) = (y[i + j * k], y[j + i * k]);
            if (a - b).abs() > 1e-8 * (1.0 + a.abs()) {
                return Err((i + j * k, a, "symmetric"));
            }
        }
    }
    let m = nalgebra::DMatrix::from_column_slice(k, k, y);
    match nalgebra::linalg::Cholesky::new(m) {
        Some(c) => Ok(c.l().as_slice().to_vec()),
        None => Err((
            0,
            y.first().copied().unwrap_or(f64::NAN),
            "positive definite",
        )),
    }
}
