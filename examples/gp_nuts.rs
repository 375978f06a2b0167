//! Gaussian-process regression sampled with NUTS (the paper's Figure 7):
//! the model declared as in Stan, with `Parameters` (three positive
//! hyperparameters), the fused `gp_exp_quad_cov` and `add_diag`, and
//! `multi_normal_lpdf`, whose covariance adjoint is Stan's closed form;
//! sampled by `nuts::sample` (4 chains), and the same model on the CPU
//! with faer (one thread per chain) through the same front end.
//!
//! ```stan
//! parameters { real<lower=0> rho; real<lower=0> alpha; real<lower=0> sigma; }
//! model {
//!   matrix[N, N] K = add_diag(gp_exp_quad_cov(x, alpha, rho), square(sigma));
//!   rho ~ lognormal(log(0.5), 1);
//!   alpha ~ lognormal(0, 1);
//!   sigma ~ lognormal(log(0.3), 1);
//!   y ~ multi_normal(rep_vector(0, N), K);
//! }
//! ```
//!
//! Synthetic data (n points in [0, 3]^D) drawn from the model itself with a
//! fixed seed. The sampler moves on the unconstrained scale, (log rho,
//! log alpha, log sigma), where the lognormal priors and the transforms'
//! log-Jacobians make exactly the CPU density's normal priors on the logs:
//! the device and CPU densities must agree, value and gradient, to 1e-9.
//! The posterior means of rho, alpha and sigma must lie within 3 posterior
//! standard deviations of the values that generated the data, on both, and
//! R̂ < 1.01 on the device (1.05 below 500 draws a chain, as in --quick).
//!
//! `cargo run --release --features nuts --example gp_nuts -- [--n N] [--d D] [--warmup W] [--draws D] [--chains C] [--cpu-chains C] [--cpu-run 0|1] [--quick] [--threaded]`

// `device_model`, the hand-written model, is `bench_report --suite seeds`'s.
#[allow(dead_code)]
#[path = "support/gp.rs"]
mod gp;
mod support;

use clfuse::Result;
use clfuse::dist::{lognormal_lpdf, multi_normal_lpdf};
use clfuse::nuts::{Fit, Interleaving, Model, Sampler, sample};
use clfuse::params::{Constraint, Parameters};
use clfuse::prelude::*;
use faer::Mat;
use gp::{CpuGp, PRIOR_MEAN, TRUTH, synthetic};
use support::{agree, failed, flag, per_gradient};

const EXAMPLE: &str = "gp_nuts";
const NAMES: [&str; 3] = ["rho", "alpha", "sigma"];

/// The CPU model for `nuts::sample`: each chain gets its own copy of the
/// data, the draws' columns are the exponentials of the log parameters.
struct CpuModel {
    x: Mat<f64>,
    y: Mat<f64>,
}

impl Model for CpuModel {
    type Density<'m> = CpuGp;
    fn dim(&self) -> usize {
        3
    }
    fn column_names(&self) -> Vec<String> {
        NAMES.map(String::from).to_vec()
    }
    fn density(&self) -> Result<CpuGp> {
        Ok(CpuGp {
            x: self.x.clone(),
            y: self.y.clone(),
        })
    }
    fn constrain(&self, unconstrained: &[f64]) -> Result<Vec<f64>> {
        Ok(unconstrained.iter().map(|v| v.exp()).collect())
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 60 } else { 1000 });
    let d = flag(&args, "--d", 2);
    let sampler = Sampler {
        chains: flag(&args, "--chains", 4),
        // Three parameters adapt quickly: --quick spends its time on draws.
        warmup: flag(&args, "--warmup", if quick { 150 } else { 1000 }) as u64,
        draws: flag(&args, "--draws", if quick { 250 } else { 1000 }) as u64,
        seed: 20261123,
        // Chains on threads of their own instead of interleaved from one.
        interleave: if args.iter().any(|a| a == "--threaded") {
            Interleaving::Never
        } else {
            Interleaving::OnGpus
        },
        ..Sampler::default()
    };
    // The CPU runs one chain in --quick: faer unoptimised (debug) is slow.
    let cpu_chains = if flag(&args, "--cpu-run", 1) == 1 {
        flag(
            &args,
            "--cpu-chains",
            if quick { 1 } else { sampler.chains },
        )
    } else {
        0
    };
    let data = synthetic(n, d)?;
    println!(
        "GP regression, n = {n}, D = {d}: {} chains x ({} warm-up + {} draws), {}",
        sampler.chains,
        sampler.warmup,
        sampler.draws,
        clfuse::Runtime::get()?.device_info().name
    );

    let x = MatrixCl::from_slice(n, d, &data.x)?;
    let y = MatrixCl::from_slice(n, 1, &data.y)?;
    let mut p = Parameters::new();
    let rho = p.real("rho", Constraint::lower(0.0))?;
    let alpha = p.real("alpha", Constraint::lower(0.0))?;
    let sigma = p.real("sigma", Constraint::lower(0.0))?;
    let device = p.model(|v| {
        let noise = square(&v[sigma]);
        let k = add_diag(gp_exp_quad_cov(&x, &v[alpha], &v[rho])?, &noise)?.eval()?;
        let priors = lognormal_lpdf(&v[rho], PRIOR_MEAN[0], 1.0).eval()?
            + lognormal_lpdf(&v[alpha], PRIOR_MEAN[1], 1.0).eval()?
            + lognormal_lpdf(&v[sigma], PRIOR_MEAN[2], 1.0).eval()?;
        (priors + multi_normal_lpdf(&y, 0.0, &k).eval()?).eval()
    });
    let cpu = CpuModel {
        x: Mat::from_fn(n, d, |i, k| data.x[i + n * k]),
        y: Mat::from_fn(n, 1, |i, _| data.y[i]),
    };

    // The two densities agree (value and gradient) at the truth and elsewhere.
    let (mut device_density, mut cpu_density) = (device.density()?, cpu.density()?);
    let value = agree(EXAMPLE, &mut device_density, &mut cpu_density, &TRUTH, 1e-9)?;
    agree(
        EXAMPLE,
        &mut device_density,
        &mut cpu_density,
        &[0.3, -0.4, -2.0],
        1e-9,
    )?;
    println!("log density at the truth: {value:.10} (device = CPU to 1e-9)");

    let calls = if quick { 5 } else { 20 };
    let (_, t_device) = per_gradient(&mut device_density, &TRUTH, calls)?;
    let (_, t_cpu) = per_gradient(&mut cpu_density, &TRUTH, calls.min(5))?;
    drop((device_density, cpu_density));
    println!(
        "per gradient (host waits for value and gradient): device {:.1} µs, CPU (faer, 1 thread) {:.1} µs, speedup {:.2}x",
        t_device * 1e6,
        t_cpu * 1e6,
        t_cpu / t_device
    );

    let (device_fit, device_wall) = run("device", &device, &sampler)?;
    let summary = device_fit.summary();
    println!("{summary}");
    // R-hat's own noise at --quick's 250 draws a chain is about 0.01.
    let rhat_limit = if sampler.draws >= 500 { 1.01 } else { 1.05 };
    let converged = summary.max_rhat() < rhat_limit; // NaN fails
    if !converged {
        return Err(failed(
            EXAMPLE,
            "R-hat",
            format!("max R-hat {:.4} >= {rhat_limit}", summary.max_rhat()),
        ));
    }
    if cpu_chains > 0 {
        let cpu_sampler = Sampler {
            chains: cpu_chains,
            ..sampler.clone()
        };
        let (cpu_fit, cpu_wall) = run("CPU", &cpu, &cpu_sampler)?;
        println!("{}", cpu_fit.summary());
        if cpu_chains == sampler.chains {
            println!("whole-run speedup {:.2}x", cpu_wall / device_wall);
        }
    }
    println!("posterior means within 3 sd of the truth:");
    for (row, t) in summary.rows.iter().zip(TRUTH) {
        println!(
            "  {:>5}: mean {:.4} sd {:.4} (truth {:.4})",
            row.name,
            row.mean,
            row.sd,
            t.exp()
        );
    }
    Ok(())
}

/// Samples `model`, reports its run and checks its posterior means against
/// the truth; returns the fit and its wall time in seconds.
fn run<M: Model>(name: &str, model: &M, sampler: &Sampler) -> Result<(Fit, f64)> {
    let start = std::time::Instant::now();
    let fit = sample(model, sampler)?;
    let wall = start.elapsed().as_secs_f64();
    let chains = fit.chains();
    let leapfrogs: u64 = chains
        .iter()
        .flat_map(|c| &c.stats)
        .map(|s| s.leapfrog_steps)
        .sum();
    let sampling: f64 = chains.iter().map(|c| c.sampling_time.as_secs_f64()).sum();
    println!(
        "{name:>6}: {} chain(s), whole run {wall:.2} s; sampling {leapfrogs} leapfrog steps, {:.1} µs each per chain; {} divergences",
        chains.len(),
        sampling * 1e6 / leapfrogs.max(1) as f64,
        fit.divergences()
    );
    for (row, truth) in fit.summary().rows.iter().zip(TRUTH.map(f64::exp)) {
        let within = (row.mean - truth).abs() <= 3.0 * row.sd; // NaN fails
        if !within {
            return Err(failed(
                EXAMPLE,
                "posterior",
                format!(
                    "{name}: {} has mean {:.4} (sd {:.4}), truth {truth:.4}",
                    row.name, row.mean, row.sd
                ),
            ));
        }
    }
    Ok((fit, wall))
}
