//! Building a new GLM by composition: probit regression, its log-likelihood
//! and gradients in two fused kernels, checked against finite differences.
//! `cargo run --example glm_composition`

use clfuse::Result;
use clfuse::prelude::*;

/// log p(y | x, alpha, beta) = sum log Phi(s * (x beta + alpha)), s = 2y - 1,
/// with d/d alpha and d/d beta (x read twice: once per kernel).
fn probit_glm(
    y: &MatrixCl<i32>,
    x: &MatrixCl<f64>,
    alpha: f64,
    beta: &MatrixCl<f64>,
) -> Result<(f64, f64, Vec<f64>)> {
    let (n, p) = (x.rows(), x.cols());
    let s = 2 * y - 1;
    let z = elt_multiply(&s, matrix_vector_multiply(x, beta) + alpha);
    let phi_z = Phi(&z);
    let density = exp(-0.5 * square(&z)) * 0.3989422804014327;
    let derivative = elt_multiply(&s, elt_divide(density, &phi_z));
    let (d, logp, d_alpha) = (
        MatrixCl::<f64>::zeros(n, 1)?,
        MatrixCl::<f64>::zeros(1, 1)?,
        MatrixCl::<f64>::zeros(1, 1)?,
    );
    let derivative = &derivative;
    fuse((
        check(y, "probit_glm", "y", ge(y, 0).and(le(y, 1))).requiring("0 or 1"),
        output(&d, derivative),
        output(&logp, colwise_sum(log(&phi_z))),
        output(&d_alpha, colwise_sum(derivative)),
    ))?;
    let d_beta = colwise_sum(elt_multiply(x, colwise_broadcast(&d, p))).eval()?; // x^T d, as a row
    Ok((logp.to_vec()?[0], d_alpha.to_vec()?[0], d_beta.to_vec()?))
}

fn main() -> Result<()> {
    let (n, p) = (1000, 3);
    let xs: Vec<f64> = (0..n * p)
        .map(|k| ((k * 37) % 101) as f64 / 50.0 - 1.0)
        .collect();
    let ys: Vec<i32> = (0..n).map(|i| ((i * 7) % 3 == 0) as i32).collect();
    let (x, y) = (
        MatrixCl::from_slice(n, p, &xs)?,
        MatrixCl::from_slice(n, 1, &ys)?,
    );
    let (alpha, beta_host) = (0.2, vec![0.5, -0.3, 0.8]);
    let beta = MatrixCl::from_slice(p, 1, &beta_host)?;
    let (logp, d_alpha, d_beta) = probit_glm(&y, &x, alpha, &beta)?;
    println!("log-likelihood {logp:.6}, d/d alpha {d_alpha:.6}, d/d beta {d_beta:.6?}");
    let cpu: f64 = (0..n)
        .map(|i| {
            let eta = alpha + (0..p).map(|k| xs[i + n * k] * beta_host[k]).sum::<f64>();
            let z = if ys[i] == 1 { eta } else { -eta };
            (0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)).ln()
        })
        .sum();
    assert!(
        (cpu - logp).abs() < 1e-10 * cpu.abs(),
        "value: {logp} vs CPU {cpu}"
    );
    let h = 1e-6;
    let fd_alpha = (probit_glm(&y, &x, alpha + h, &beta)?.0
        - probit_glm(&y, &x, alpha - h, &beta)?.0)
        / (2.0 * h);
    assert!(
        (fd_alpha - d_alpha).abs() < 1e-5 * d_alpha.abs().max(1.0),
        "alpha: {fd_alpha} vs {d_alpha}"
    );
    for k in 0..p {
        let shifted = |dx: f64| -> Result<f64> {
            let mut b = beta_host.clone();
            b[k] += dx;
            Ok(probit_glm(&y, &x, alpha, &MatrixCl::from_slice(p, 1, &b)?)?.0)
        };
        let fd = (shifted(h)? - shifted(-h)?) / (2.0 * h);
        assert!(
            (fd - d_beta[k]).abs() < 1e-5 * d_beta[k].abs().max(1.0),
            "beta[{k}]: {fd} vs {}",
            d_beta[k]
        );
    }
    println!("gradients match central finite differences");
    let bad = MatrixCl::from_slice(
        n,
        1,
        &ys.iter()
            .enumerate()
            .map(|(i, v)| if i == 17 { 2 } else { *v })
            .collect::<Vec<_>>(),
    )?;
    println!(
        "invalid y: {}",
        probit_glm(&bad, &x, alpha, &beta).unwrap_err()
    );
    Ok(())
}
