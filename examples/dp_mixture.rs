//! Seed 004's whole analysis (Suchard et al., GPU mixture models): a
//! truncated Dirichlet-process mixture of multivariate normals with full
//! covariances, fitted to flow-cytometry-like data with known clusters by
//! Gibbs sampling and by Bayesian EM, each checked to recover the clusters.
//!
//! Each Gibbs sweep draws every indicator on the device fused with the
//! E-step (no `n x k` write), reduces the per-component statistics there,
//! and draws the components, stick-breaking weights and concentration on
//! the host from one seed. The serial CPU sweep (one core, the same model
//! and host steps) is timed against it: the seed's headline is the whole
//! program's speed-up.
//!
//! `cargo run --release --example dp_mixture -- [--n N] [--p P] [--k K]
//! [--clusters C] [--sweeps S] [--bem I] [--serial 0|1] [--quick]`
//! (default n = 1e6, p = 14, k = 64 then 256).

#[path = "support/dp_mixture.rs"]
mod dp_mixture;
#[path = "support/flags.rs"]
mod flags;

use clfuse::mixture::{Bem, Concentration, Gibbs, NormalInverseWishart};
use clfuse::prelude::*;
use clfuse::{Error, Result};
use dp_mixture::{FlowData, flow_cytometry, serial_sweep};
use flags::flag;
use std::time::Instant;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(f64::NAN)
}

fn gibbs(data: &FlowData, x: &MatrixCl<f64>, k: usize, sweeps: usize, serial: bool) -> Result<()> {
    let mean: Vec<f64> = (0..data.p)
        .map(|a| data.x[a * data.n..(a + 1) * data.n].iter().sum::<f64>() / data.n as f64)
        .collect();
    let prior = NormalInverseWishart::weakly_informative(&mean, 1.0);
    let concentration = Concentration::Gamma {
        shape: 1.0,
        rate: 1.0,
        initial: 1.0,
    };
    let mut sampler = Gibbs::new(x, data.start(k)?, prior.clone(), concentration, 2026)?;
    let mut times = Vec::with_capacity(sweeps);
    let mut last = None;
    for _ in 0..sweeps {
        let start = Instant::now();
        last = Some(sampler.sweep()?);
        times.push(start.elapsed().as_secs_f64());
    }
    let last = last.ok_or_else(|| Error::InvalidArgument {
        function: "dp_mixture",
        argument: "--sweeps",
        reason: "must be at least 1".into(),
    })?;
    let fitted: Vec<(f64, Vec<f64>)> = sampler
        .mixture()
        .components()
        .iter()
        .zip(&last.counts)
        .map(|(c, &count)| (count as f64 / data.n as f64, c.mean.clone()))
        .collect();
    data.check_recovery(&format!("Gibbs, k = {k}"), &fitted)?;
    let occupied = last.counts.iter().filter(|&&c| c > 0).count();
    let per_sweep = median(times[1..].to_vec());
    println!(
        "Gibbs, k = {k}: {sweeps} sweeps, {occupied} components occupied, α = {:.3}; every cluster recovered; \
         {:.2} ms per sweep on the device (median, host waits)",
        last.concentration,
        per_sweep * 1e3
    );
    if serial {
        // The same sweep on one CPU core: the data steps serially, then the
        // same host steps.
        let key = sampler.indicator_key();
        let start = Instant::now();
        let (stats, complete) = serial_sweep(data, sampler.mixture(), key)?;
        sampler.update(&stats, complete)?;
        let t_serial = start.elapsed().as_secs_f64();
        println!(
            "  serial CPU sweep (1 core): {:.2} s, the device {:.0}x faster",
            t_serial,
            t_serial / per_sweep
        );
    }
    // BEM from the same start.
    let mut bem = Bem::new(x, data.start(k)?, prior)?;
    let mut previous = f64::NEG_INFINITY;
    let mut times = Vec::new();
    for iteration in 0..sweeps {
        let start = Instant::now();
        let step = bem.step()?;
        times.push(start.elapsed().as_secs_f64());
        if step.log_posterior < previous - 1e-9 * previous.abs() {
            return Err(Error::InvalidArgument {
                function: "dp_mixture",
                argument: "BEM",
                reason: format!(
                    "iteration {iteration}: log posterior fell from {previous} to {}",
                    step.log_posterior
                ),
            });
        }
        previous = step.log_posterior;
    }
    let fitted: Vec<(f64, Vec<f64>)> = bem
        .mixture()
        .components()
        .iter()
        .map(|c| (c.log_weight.exp(), c.mean.clone()))
        .collect();
    data.check_recovery(&format!("BEM, k = {k}"), &fitted)?;
    println!(
        "BEM, k = {k}: {sweeps} iterations, log posterior {previous:.1} (never fell); every cluster recovered; \
         {:.2} ms per iteration",
        median(times[1..].to_vec()) * 1e3
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 20_000 } else { 1_000_000 });
    let p = flag(&args, "--p", if quick { 4 } else { 14 });
    let clusters = flag(&args, "--clusters", if quick { 5 } else { 12 });
    let sweeps = flag(&args, "--sweeps", if quick { 40 } else { 100 }).max(2);
    let serial = flag(&args, "--serial", 1) == 1;
    let ks: Vec<usize> = match flag(&args, "--k", 0) {
        0 if quick => vec![16],
        0 => vec![64, 256],
        k => vec![k],
    };
    let device = clfuse::Runtime::get()?;
    println!(
        "truncated-DP mixture: n = {n}, p = {p}, {clusters} true clusters, k = {ks:?} on {}",
        device.device_info().name
    );
    let data = flow_cytometry(n, p, clusters, 7);
    let x = MatrixCl::from_slice(n, p, &data.x)?;
    for k in ks {
        gibbs(&data, &x, k, sweeps, serial)?;
    }
    Ok(())
}
