//! The E-step of a Gaussian mixture model (seed 004, Suchard et al.: the
//! configuration probabilities of a massive mixture): the n x k log
//! responsibilities of n points under k diagonal-Gaussian components,
//! normalised by a row-wise log-sum-exp.
//!
//! ```text
//! log r_ic = log π_c + log N(x_i | μ_c, diag σ_c²) - log Σ_c' exp(...)
//! ```
//!
//! The quadratic form expands into one product: with `P = 1/σ²`,
//! `Σ_j -(x_ij - μ_cj)² P_cj / 2 = [x², x]_i · [-P/2; μ∘P]_c - Σ_j μ_cj² P_cj / 2`,
//! so the device E-step is a GEMM leaf (`[x², x]` is data, formed once),
//! the row-wise log-sum-exp (its own kernel, by the nested-reduction rule)
//! and one element-wise kernel. It is checked against a serial CPU loop
//! (to 1e-9) and timed against it and a multithreaded faer version.
//!
//! `cargo run --release --example mixture_estep -- [--n N] [--p P] [--k K] [--quick]`

use clfuse::prelude::*;
use clfuse::{Error, Result};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use std::time::Instant;

const LOG_2PI: f64 = 1.837_877_066_409_345_3;

struct Mixture {
    n: usize,
    p: usize,
    k: usize,
    /// n x p, column-major.
    x: Vec<f64>,
    /// k x p means and standard deviations, column-major.
    mu: Vec<f64>,
    sigma: Vec<f64>,
    log_weight: Vec<f64>,
}

fn synthetic(n: usize, p: usize, k: usize) -> Mixture {
    let mut state = 0xd1b5_4a32_d192_ed03u64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mu: Vec<f64> = (0..k * p).map(|_| uniform() * 6.0 - 3.0).collect();
    let sigma: Vec<f64> = (0..k * p).map(|_| 0.5 + uniform()).collect();
    let raw: Vec<f64> = (0..k).map(|_| 0.2 + uniform()).collect();
    let total: f64 = raw.iter().sum();
    let log_weight = raw.iter().map(|w| (w / total).ln()).collect();
    let x = (0..n * p).map(|_| uniform() * 8.0 - 4.0).collect();
    Mixture {
        n,
        p,
        k,
        x,
        mu,
        sigma,
        log_weight,
    }
}

impl Mixture {
    /// `[-P/2; μ∘P]` (2p x k) and each component's constant (1 x k).
    fn expanded_parameters(&self) -> (Vec<f64>, Vec<f64>) {
        let (p, k) = (self.p, self.k);
        let mut w = vec![0.0; 2 * p * k];
        let mut constant = self.log_weight.clone();
        for c in 0..k {
            for j in 0..p {
                let (m, s) = (self.mu[c + k * j], self.sigma[c + k * j]);
                let precision = 1.0 / (s * s);
                w[j + 2 * p * c] = -0.5 * precision;
                w[p + j + 2 * p * c] = m * precision;
                constant[c] -= 0.5 * LOG_2PI + s.ln() + 0.5 * m * m * precision;
            }
        }
        (w, constant)
    }

    /// `[x², x]`, n x 2p.
    fn expanded_data(&self) -> Vec<f64> {
        let squares = self.x.iter().map(|v| v * v);
        squares.chain(self.x.iter().copied()).collect()
    }

    /// The serial CPU reference, row by row: each component's precision
    /// and constant computed once, then a plain loop (as a careful C
    /// programmer would write it, without SIMD intrinsics).
    fn serial(&self) -> Vec<f64> {
        let (n, p, k) = (self.n, self.p, self.k);
        let mut precision = vec![0.0; k * p];
        let mut constant = self.log_weight.clone();
        for c in 0..k {
            for j in 0..p {
                let s = self.sigma[c + k * j];
                precision[j + p * c] = 1.0 / (s * s);
                constant[c] -= 0.5 * LOG_2PI + s.ln();
            }
        }
        let mut out = vec![0.0; n * k];
        let mut row = vec![0.0; k];
        let mut x = vec![0.0; p];
        for i in 0..n {
            for (j, v) in x.iter_mut().enumerate() {
                *v = self.x[i + n * j];
            }
            for (c, r) in row.iter_mut().enumerate() {
                let mut quadratic = 0.0;
                for j in 0..p {
                    let d = x[j] - self.mu[c + k * j];
                    quadratic += d * d * precision[j + p * c];
                }
                *r = constant[c] - 0.5 * quadratic;
            }
            let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let lse = max + row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
            for c in 0..k {
                out[i + n * c] = row[c] - lse;
            }
        }
        out
    }

    /// faer's product on blocks of rows, one per thread, then each row's
    /// log-sum-exp on the same thread; the blocks, in row order.
    fn threaded(&self, expanded: &Mat<f64>, w: &Mat<f64>, constant: &[f64]) -> Vec<Mat<f64>> {
        let (n, k) = (self.n, self.k);
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let rows_per = n.div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .step_by(rows_per)
                .map(|start| {
                    let rows = rows_per.min(n - start);
                    scope.spawn(move || {
                        let mut block = Mat::<f64>::zeros(rows, k);
                        let x = expanded.as_ref().subrows(start, rows);
                        matmul(block.as_mut(), Accum::Replace, x, w.as_ref(), 1.0, Par::Seq);
                        // Column by column (the matrix is column-major).
                        let mut max = vec![f64::NEG_INFINITY; rows];
                        for (c, shift) in constant.iter().enumerate() {
                            let column = block.col_mut(c).try_as_col_major_mut();
                            let Some(column) = column else { continue };
                            for (v, m) in column.as_slice_mut().iter_mut().zip(&mut max) {
                                *v += shift;
                                *m = m.max(*v);
                            }
                        }
                        let mut sum = vec![0.0; rows];
                        for c in 0..k {
                            if let Some(column) = block.col(c).try_as_col_major() {
                                for ((v, m), s) in column.as_slice().iter().zip(&max).zip(&mut sum)
                                {
                                    *s += (v - m).exp();
                                }
                            }
                        }
                        let lse: Vec<f64> = max.iter().zip(&sum).map(|(m, s)| m + s.ln()).collect();
                        for c in 0..k {
                            if let Some(column) = block.col_mut(c).try_as_col_major_mut() {
                                for (v, l) in column.as_slice_mut().iter_mut().zip(&lse) {
                                    *v -= l;
                                }
                            }
                        }
                        block
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        })
    }
}

fn flag(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn mismatch(what: &str, index: usize, got: f64, want: f64) -> Error {
    Error::InvalidArgument {
        function: "mixture_estep",
        argument: "log responsibilities",
        reason: format!("{what}[{index}]: {got} vs {want}"),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 2001 } else { 1_000_000 });
    let p = flag(&args, "--p", if quick { 5 } else { 14 });
    let k = flag(&args, "--k", if quick { 33 } else { 256 });
    let repeats = if quick { 2 } else { 5 };
    let m = synthetic(n, p, k);
    let device = clfuse::Runtime::get()?;
    println!(
        "mixture E-step: n = {n}, p = {p}, k = {k} on {}",
        device.device_info().name
    );

    // Data once; parameters per E-step.
    let expanded_host = m.expanded_data();
    let expanded = MatrixCl::from_slice(n, 2 * p, &expanded_host)?;
    let (w_host, constant_host) = m.expanded_parameters();
    let log_resp = MatrixCl::<f64>::zeros(n, k)?;
    let e_step = || -> Result<()> {
        let w = MatrixCl::from_slice(2 * p, k, &w_host)?;
        let constant = MatrixCl::from_slice(1, k, &constant_host)?;
        // These three lines are the E-step.
        let log_density = &expanded * &w + rowwise_broadcast(&constant, n);
        let log_density = &log_density;
        log_resp.assign(log_density - colwise_broadcast(rowwise_log_sum_exp(log_density), k))
    };
    e_step()?; // compile
    device.finish()?;
    let start = Instant::now();
    for _ in 0..repeats {
        e_step()?;
        device.finish()?;
    }
    let t_device = start.elapsed().as_secs_f64() / repeats as f64;

    let start = Instant::now();
    let serial = m.serial();
    let t_serial = start.elapsed().as_secs_f64();

    let expanded_faer = Mat::from_fn(n, 2 * p, |i, j| expanded_host[i + n * j]);
    let w_faer = Mat::from_fn(2 * p, k, |i, j| w_host[i + 2 * p * j]);
    let start = Instant::now();
    let blocks = m.threaded(&expanded_faer, &w_faer, &constant_host);
    let t_threaded = start.elapsed().as_secs_f64();
    let mut threaded = Vec::with_capacity(n * k);
    for c in 0..k {
        for block in &blocks {
            threaded.extend((0..block.nrows()).map(|i| block[(i, c)]));
        }
    }

    // Check: device and faer against the serial loop; responsibilities sum to 1.
    let got = log_resp.to_vec()?;
    for (idx, (g, s)) in got.iter().zip(&serial).enumerate() {
        if (g - s).abs() > 1e-9 * s.abs().max(1.0) {
            return Err(mismatch("device", idx, *g, *s));
        }
        let t = threaded[idx];
        if (t - s).abs() > 1e-9 * s.abs().max(1.0) {
            return Err(mismatch("faer", idx, t, *s));
        }
    }
    for i in 0..n {
        let total: f64 = (0..k).map(|c| got[i + n * c].exp()).sum();
        if (total - 1.0).abs() > 1e-12 {
            return Err(mismatch("row sum", i, total, 1.0));
        }
    }
    println!("log responsibilities agree with the serial loop to 1e-9; every row sums to 1");
    println!(
        "per E-step (host waits): device {:.2} ms; serial CPU {:.1} ms (device {:.1}x faster); faer on {} threads {:.1} ms (device {:.1}x faster)",
        t_device * 1e3,
        t_serial * 1e3,
        t_serial / t_device,
        std::thread::available_parallelism().map_or(1, |t| t.get()),
        t_threaded * 1e3,
        t_threaded / t_device
    );
    Ok(())
}
