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
//! so the device E-step is one kernel (`log_softmax_rows_of_product`:
//! `[x², x]` is data, formed once; the product, each row's log-sum-exp and
//! the difference are computed and stored in one pass over the n x k
//! result). It is checked against a serial CPU loop
//! (to 1e-9) and timed against it and a multithreaded faer version.
//!
//! `cargo run --release --example mixture_estep -- [--n N] [--p P] [--k K] [--quick]`

#[path = "support/flags.rs"]
mod flags;
#[path = "support/mixture.rs"]
mod mixture;

use clfuse::prelude::*;
use clfuse::{Error, Result};
use faer::Mat;
use flags::flag;
use mixture::{e_step, synthetic};
use std::time::Instant;

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
        e_step(&expanded, &w, &constant, &log_resp)
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
