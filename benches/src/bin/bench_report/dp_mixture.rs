//! `--suite seeds --figures g`: seed 004's Gibbs sweep at flow-cytometry
//! size (n = 1e6, p = 14, k = 64 and 256): the E-step alone (from the
//! packed components, and as BEM takes it: the features times the expanded
//! parameters, uploaded each call, in one kernel), the indicator
//! step (fused with the E-step), the statistics, and the whole sweep (host
//! waits, as the sampler does), each at the start of a run (the state the
//! JAX peer, `scripts/dp_mixture_reference.py`, is timed in) and after
//! ten sweeps; and one serial CPU sweep (one core: the data steps as a
//! plain loop, then the same host steps).

#[path = "../../../../examples/support/dp_mixture.rs"]
mod support;

use crate::timing::measure;
use crate::workloads::Ctx;
use clfuse::Result;
use clfuse::clfuse_kernels::{
    RandomKey, log_softmax_rows_of_product, mixture_features, mixture_indicators,
    mixture_log_responsibilities, mixture_statistics,
};
use clfuse::mixture::{Concentration, Gibbs, NormalInverseWishart};
use clfuse::prelude::*;
use std::time::Instant;

/// The workload name of truncation `k`.
pub fn workload(k: usize) -> String {
    format!("Seed 004: DP mixture Gibbs sweep (p = 14, k = {k})")
}

/// The figure at `n` points for each of `ks`; the serial sweep when
/// `serial` (it takes seconds).
pub fn gibbs(ctx: &mut Ctx, n: usize, ks: &[usize], serial: bool) -> Result<()> {
    let p = 14;
    let data = support::flow_cytometry(n, p, 12, 7);
    let x = MatrixCl::from_slice(n, p, &data.x)?;
    let features = mixture_features(&x)?;
    let mean: Vec<f64> = (0..p)
        .map(|a| data.x[a * n..(a + 1) * n].iter().sum::<f64>() / n as f64)
        .collect();
    let prior = NormalInverseWishart::weakly_informative(&mean, 1.0);
    let concentration = Concentration::Gamma {
        shape: 1.0,
        rate: 1.0,
        initial: 1.0,
    };
    for &k in ks {
        let name = workload(k);
        let mut sampler = Gibbs::new(&x, data.start(k)?, prior.clone(), concentration, 1)?;
        for state in ["start", "after 10 sweeps"] {
            if state != "start" {
                for _ in 0..10 {
                    sampler.sweep()?;
                }
            }
            ctx.progress.set_message(format!("{name}, {state}"));
            let components = sampler.mixture().upload()?;
            let key = RandomKey::new(3);
            let t = measure(ctx.reps, || {
                mixture_log_responsibilities(&x, &components).map(drop)
            })?;
            ctx.push(&name, &format!("E-step alone, {state}"), n, 0.0, 0.0, t);
            let log_r = MatrixCl::<f64>::uninitialized(n, k)?;
            let zeros = MatrixCl::<f64>::zeros(1, k)?;
            let t = measure(ctx.reps, || {
                let w = MatrixCl::from_slice(
                    features.cols(),
                    k,
                    &sampler.mixture().expanded_parameters(),
                )?;
                log_softmax_rows_of_product(&features, &w, &zeros, &log_r).map(drop)
            })?;
            let label = format!("E-step alone, expanded product (one kernel), {state}");
            ctx.push(&name, &label, n, 0.0, 0.0, t);
            let t = measure(ctx.reps, || {
                mixture_indicators(&x, &components, key).map(drop)
            })?;
            ctx.push(&name, &format!("indicator step, {state}"), n, 0.0, 0.0, t);
            let (z, _) = mixture_indicators(&x, &components, key)?;
            let t = measure(ctx.reps, || mixture_statistics(&x, &z, k).map(drop))?;
            ctx.push(&name, &format!("statistics, {state}"), n, 0.0, 0.0, t);
            // Whole sweeps move the chain on: measured on a copy.
            let mut copy = Gibbs::new(
                &x,
                sampler.mixture().clone(),
                prior.clone(),
                concentration,
                2,
            )?;
            let t = measure(ctx.reps, || copy.sweep().map(drop))?;
            ctx.push(&name, &format!("whole sweep, {state}"), n, 0.0, 0.0, t);
            if serial && state == "start" {
                ctx.progress
                    .set_message(format!("{name}: serial CPU sweep"));
                let mut copy = Gibbs::new(
                    &x,
                    sampler.mixture().clone(),
                    prior.clone(),
                    concentration,
                    2,
                )?;
                let start = Instant::now();
                let key = copy.indicator_key();
                let (stats, complete) = support::serial_sweep(&data, copy.mixture(), key)?;
                copy.update(&stats, complete)?;
                let t = start.elapsed().as_secs_f64();
                ctx.push(
                    &name,
                    "serial CPU sweep (1 core), start",
                    n,
                    0.0,
                    0.0,
                    (t, t, t),
                );
            }
        }
    }
    Ok(())
}
