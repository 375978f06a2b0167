//! A model none of the built-in GLMs covers, differentiated by the tape: a
//! hierarchical logistic regression with one intercept per group (read
//! through `indexing`) and a learned group scale.
//!
//! ```text
//! y_i ~ Bernoulli(inv_logit(x_i·β + u[g_i]))    u_k ~ Normal(0, exp(log_tau))
//! ```
//!
//! The gradient is checked against central finite differences of a CPU
//! evaluation, then `value_and_grad` runs in a loop (as a sampler would),
//! timed per call (the host waits for value and gradient each time) against
//! a hand-written CPU gradient. With `--compare-glm`, the composed
//! Bernoulli GLM's autodiff is timed against the hand-fused GLM leaf
//! (`--glm-only`: only that comparison); with `FUSION_PROFILING=1` it also
//! prints one call of each as a kernel timeline.
//!
//! `cargo run --release --example autodiff_model -- [--n N] [--p P] [--groups K] [--calls C] [--compare-glm] [--glm-only] [--quick]`

use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use std::time::Instant;

struct Data {
    n: usize,
    p: usize,
    groups: usize,
    x: Vec<f64>,
    y: Vec<i32>,
    g: Vec<i32>,
}

fn synthetic(n: usize, p: usize, groups: usize) -> Data {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n * p).map(|_| uniform() * 2.0 - 1.0).collect();
    let g: Vec<i32> = (0..n).map(|_| (uniform() * groups as f64) as i32).collect();
    let effects: Vec<f64> = (0..groups).map(|k| (k as f64 * 0.9).sin()).collect();
    let y = (0..n)
        .map(|i| {
            let eta: f64 = (0..p).map(|k| x[i + n * k] * 0.5).sum::<f64>() + effects[g[i] as usize];
            (uniform() < 1.0 / (1.0 + (-eta).exp())) as i32
        })
        .collect();
    Data {
        n,
        p,
        groups,
        x,
        y,
        g,
    }
}

/// The log density on the device: the model is the few lines in this function.
fn log_density(d: &Device, beta: &Var, u: &Var, log_tau: &Var) -> Result<Var> {
    let eta = matrix_vector_multiply(&d.x, beta) + indexing(u, &d.group, &d.zero);
    let likelihood = colwise_sum(log_inv_logit(elt_multiply(&d.sign, eta))).eval()?;
    let tau = exp(optional_broadcast(log_tau, u.rows(), 1));
    let tau = &tau;
    let prior = colwise_sum(-0.5f64 * square(elt_divide(u, tau)) - log(tau)).eval()?;
    (&likelihood + &prior + -0.5f64 * square(log_tau)).eval()
}

struct Device {
    x: MatrixCl<f64>,
    sign: MatrixCl<f64>,
    group: MatrixCl<i32>,
    zero: MatrixCl<i32>,
}

/// The same log density and its gradient on the CPU (hand-derived).
fn cpu_value_and_grad(
    d: &Data,
    beta: &[f64],
    u: &[f64],
    log_tau: f64,
) -> (f64, Vec<f64>, Vec<f64>, f64) {
    let (n, p) = (d.n, d.p);
    let mut value = 0.0;
    let (mut d_beta, mut d_u) = (vec![0.0; p], vec![0.0; d.groups]);
    for i in 0..n {
        let s = 2.0 * d.y[i] as f64 - 1.0;
        let eta: f64 = (0..p).map(|k| d.x[i + n * k] * beta[k]).sum::<f64>() + u[d.g[i] as usize];
        let z = s * eta;
        value += -(-z).exp().ln_1p();
        let r = s / (1.0 + z.exp());
        for (k, db) in d_beta.iter_mut().enumerate() {
            *db += r * d.x[i + n * k];
        }
        d_u[d.g[i] as usize] += r;
    }
    let tau = log_tau.exp();
    let mut d_log_tau = -log_tau;
    value -= 0.5 * log_tau * log_tau;
    for (k, uk) in u.iter().enumerate() {
        value += -0.5 * (uk / tau).powi(2) - log_tau;
        d_u[k] -= uk / (tau * tau);
        d_log_tau += (uk / tau).powi(2) - 1.0;
    }
    (value, d_beta, d_u, d_log_tau)
}

fn flag(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 2_000 } else { 200_000 });
    let p = flag(&args, "--p", 10);
    let groups = flag(&args, "--groups", 50);
    let calls = flag(&args, "--calls", if quick { 20 } else { 200 });
    let data = synthetic(n, p, groups);
    let dev = Device {
        x: MatrixCl::from_slice(n, p, &data.x)?,
        sign: MatrixCl::from_slice(
            n,
            1,
            &data
                .y
                .iter()
                .map(|y| 2.0 * *y as f64 - 1.0)
                .collect::<Vec<_>>(),
        )?,
        group: MatrixCl::from_slice(n, 1, &data.g)?,
        zero: MatrixCl::from_slice(n, 1, &vec![0; n])?,
    };
    if args.iter().any(|a| a == "--glm-only") {
        return compare_glm(&dev, &data, calls);
    }
    let beta0: Vec<f64> = (0..p).map(|k| 0.1 * k as f64).collect();
    let u0: Vec<f64> = (0..groups).map(|k| 0.05 * (k as f64).cos()).collect();
    let beta = Var::new(MatrixCl::from_slice(p, 1, &beta0)?);
    let u = Var::new(MatrixCl::from_slice(groups, 1, &u0)?);
    let log_tau = Var::new(MatrixCl::from_slice(1, 1, &[-0.3])?);
    let inputs = [&beta, &u, &log_tau];

    // 1. The gradient against the CPU's and against finite differences.
    let (value, grads) = rev::value_and_grad(&inputs, || log_density(&dev, &beta, &u, &log_tau))?;
    let (cpu_value, cpu_beta, cpu_u, cpu_tau) = cpu_value_and_grad(&data, &beta0, &u0, -0.3);
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1.0);
    let mut worst = rel(value, cpu_value);
    for (got, want) in [
        (grads[0].to_vec()?, cpu_beta),
        (grads[1].to_vec()?, cpu_u),
        (grads[2].to_vec()?, vec![cpu_tau]),
    ] {
        for (a, b) in got.iter().zip(&want) {
            worst = worst.max(rel(*a, *b));
        }
    }
    let h = 1e-5;
    let mut fd_worst: f64 = 0.0;
    for k in 0..p.min(3) {
        let shifted = |d: f64| {
            let mut b = beta0.clone();
            b[k] += d;
            cpu_value_and_grad(&data, &b, &u0, -0.3).0
        };
        let fd = (shifted(h) - shifted(-h)) / (2.0 * h);
        fd_worst = fd_worst.max(rel(grads[0].to_vec()?[k], fd));
    }
    let fd_tau = (cpu_value_and_grad(&data, &beta0, &u0, -0.3 + h).0
        - cpu_value_and_grad(&data, &beta0, &u0, -0.3 - h).0)
        / (2.0 * h);
    fd_worst = fd_worst.max(rel(grads[2].to_vec()?[0], fd_tau));
    println!("n = {n}, p = {p}, groups = {groups}: log density {value:.6}");
    println!("  vs the CPU's value and gradient: worst relative difference {worst:.2e}");
    println!("  vs central finite differences: worst relative difference {fd_worst:.2e}");
    // Finite differences of a sum over many rows carry rounding noise of
    // about eps·|value|/h; the CPU comparison is the tight one.
    if worst > 1e-9 || fd_worst > 1e-5 {
        return Err(clfuse::Error::InvalidArgument {
            function: "autodiff_model",
            argument: "gradient",
            reason: format!(
                "disagrees with the CPU ({worst:e}) or finite differences ({fd_worst:e})"
            ),
        });
    }

    // 2. value_and_grad in a loop, as a sampler calls it.
    let start = Instant::now();
    for _ in 0..calls {
        rev::value_and_grad(&inputs, || log_density(&dev, &beta, &u, &log_tau))?;
    }
    let device_us = start.elapsed().as_secs_f64() * 1e6 / calls as f64;
    let cpu_calls = calls.min(20);
    let start = Instant::now();
    for _ in 0..cpu_calls {
        std::hint::black_box(cpu_value_and_grad(&data, &beta0, &u0, -0.3));
    }
    let cpu_us = start.elapsed().as_secs_f64() * 1e6 / cpu_calls as f64;
    println!(
        "value_and_grad per call (host waits): device {device_us:.1} µs, serial CPU {cpu_us:.1} µs ({:.1}x)",
        cpu_us / device_us
    );
    // With FUSION_PROFILING=1: where one call spends its device time.
    let rt = clfuse::Runtime::get()?;
    if rt.profiling() {
        rt.finish()?;
        clfuse::clfuse_core::take_profile()?;
        rev::value_and_grad(&inputs, || log_density(&dev, &beta, &u, &log_tau))?;
        rt.finish()?;
        println!(
            "profile of one call:\n{}",
            clfuse::clfuse_core::take_profile()?
        );
    }

    if args.iter().any(|a| a == "--compare-glm") {
        compare_glm(&dev, &data, calls)?;
    }
    Ok(())
}

/// The composed Bernoulli GLM's autodiff against the hand-fused leaf.
fn compare_glm(dev: &Device, data: &Data, calls: usize) -> Result<()> {
    let y = MatrixCl::from_slice(data.n, 1, &data.y)?;
    let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.1])?);
    let beta = Var::new(MatrixCl::from_slice(data.p, 1, &vec![0.05; data.p])?);
    let time = |f: &dyn Fn() -> Result<Var>| -> Result<f64> {
        rev::value_and_grad(&[&alpha, &beta], f)?;
        let start = Instant::now();
        for _ in 0..calls {
            rev::value_and_grad(&[&alpha, &beta], f)?;
        }
        Ok(start.elapsed().as_secs_f64() * 1e6 / calls as f64)
    };
    // Both forms must agree before either is timed.
    let (v1, g1) = rev::value_and_grad(&[&alpha, &beta], || {
        rev::bernoulli_logit_glm(&y, &dev.x, &alpha, &beta)
    })?;
    let (v2, g2) = rev::value_and_grad(&[&alpha, &beta], || {
        rev::composed::bernoulli_logit_glm(&y, &dev.x, &alpha, &beta)
    })?;
    let mut worst = (v1 - v2).abs() / v1.abs().max(1.0);
    for (a, b) in g1.iter().zip(&g2) {
        for (a, b) in a.to_vec()?.iter().zip(b.to_vec()?) {
            worst = worst.max((a - b).abs() / a.abs().max(1.0));
        }
    }
    println!("composed vs hand-fused value and gradient: worst relative difference {worst:.2e}");
    if worst > 1e-9 {
        return Err(clfuse::Error::InvalidArgument {
            function: "autodiff_model",
            argument: "--compare-glm",
            reason: format!("the composed GLM disagrees with the hand-fused one ({worst:e})"),
        });
    }
    let fused = time(&|| rev::bernoulli_logit_glm(&y, &dev.x, &alpha, &beta))?;
    let composed = time(&|| rev::composed::bernoulli_logit_glm(&y, &dev.x, &alpha, &beta))?;
    println!(
        "bernoulli GLM value+gradient per call at ({}, {}): hand-fused leaf {fused:.1} µs, composed autodiff {composed:.1} µs ({:.2}x)",
        data.n,
        data.p,
        composed / fused
    );
    // With FUSION_PROFILING=1: where one call of each spends its device time.
    let rt = clfuse::Runtime::get()?;
    if rt.profiling() {
        for (name, f) in [
            (
                "hand-fused leaf",
                &(|| rev::bernoulli_logit_glm(&y, &dev.x, &alpha, &beta))
                    as &dyn Fn() -> Result<Var>,
            ),
            ("composed autodiff", &|| {
                rev::composed::bernoulli_logit_glm(&y, &dev.x, &alpha, &beta)
            }),
        ] {
            rt.finish()?;
            clfuse::clfuse_core::take_profile()?;
            rev::value_and_grad(&[&alpha, &beta], f)?;
            rt.finish()?;
            println!(
                "profile of one {name} call:\n{}",
                clfuse::clfuse_core::take_profile()?
            );
        }
    }
    Ok(())
}
