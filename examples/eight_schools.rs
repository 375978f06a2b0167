//! Eight schools, non-centred (Rubin 1981; posteriordb's
//! `eight_schools-eight_schools_noncentered`), declared with
//! `clfuse::params` and `clfuse::dist` and sampled by `nuts::sample`.
//!
//! ```stan
//! data { array[8] real y; array[8] real<lower=0> sigma; }
//! parameters { real mu; real<lower=0> tau; vector[8] theta_tilde; }
//! transformed parameters { vector[8] theta = mu + tau * theta_tilde; }
//! model {
//!   mu ~ normal(0, 5);
//!   tau ~ cauchy(0, 5);        // half-Cauchy: tau's lower bound
//!   theta_tilde ~ normal(0, 1);
//!   y ~ normal(theta, sigma);
//! }
//! ```
//!
//! The check: posteriordb's reference posterior (10 chains x 1000 draws of
//! Stan, thinned from 10 000 each): every mean (mu, tau, theta[1..8]) within
//! 4 Monte Carlo standard errors (this run's and the reference's together),
//! every sd within 4 MCSE of its own (which widens with tau's heavy right
//! tail), R̂ < 1.01 and at most 0.5% divergent draws.
//!
//! `cargo run --release --features nuts --example eight_schools -- [--warmup W] [--draws D] [--seed S] [--quick] [--threaded]`

mod support;

use clfuse::Result;
use clfuse::dist::{cauchy_lpdf, normal_lpdf};
use clfuse::nuts::{Interleaving, Sampler, sample};
use clfuse::params::{Constraint, Parameters};
use clfuse::prelude::*;
use support::{Reference, check_reference, failed, flag, with_columns};

const EXAMPLE: &str = "eight_schools";
const Y: [f64; 8] = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0];
const SIGMA: [f64; 8] = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0];

/// posteriordb's reference, as published
/// (`reference_posteriors/summary_statistics`): each mean and mean square,
/// with their Monte Carlo standard errors.
#[rustfmt::skip]
const REFERENCE: [Reference; 10] = [
    Reference::new("mu", (4.410_518_336_954_93, 0.033_037_470_595_091_7), (30.403_02, 0.335_135_6)),
    Reference::new("tau", (3.602_059_523_640_59, 0.031_861_513_564_070_6), (23.204_07, 0.484_887_2)),
    Reference::new("theta[1]", (6.150_502_293_344_25, 0.055_737_528_229_521_9), (69.363_45, 1.169_210_2)),
    Reference::new("theta[2]", (4.939_581_140_742_2, 0.046_229_378_862_484_7), (45.978_7, 0.634_649_4)),
    Reference::new("theta[3]", (3.905_906_090_015_82, 0.054_231_370_563_212_4), (43.139_23, 0.653_941_8)),
    Reference::new("theta[4]", (4.796_016_751_384_94, 0.047_493_581_676_228_1), (45.761_35, 0.619_368_9)),
    Reference::new("theta[5]", (3.614_436_324_679_9, 0.046_145_061_024_460_3), (34.357_67, 0.455_048_9)),
    Reference::new("theta[6]", (4.051_147_578_967_5, 0.048_519_539_252_803_1), (39.413_5, 0.539_021_3)),
    Reference::new("theta[7]", (6.317_169_758_868_93, 0.049_876_679_407_579_4), (64.932_69, 0.921_613_2)),
    Reference::new("theta[8]", (4.883_996_943_532_88, 0.054_251_160_656_097_2), (52.128_45, 0.902_474_8)),
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let y = MatrixCl::from_slice(8, 1, &Y)?;
    let sigma = MatrixCl::from_slice(8, 1, &SIGMA)?;

    // The Stan program, line for line.
    let mut p = Parameters::new();
    let mu = p.real("mu", Constraint::Unconstrained)?;
    let tau = p.real("tau", Constraint::lower(0.0))?;
    let theta_tilde = p.vector("theta_tilde", 8, Constraint::Unconstrained)?;
    let model = p.model(|v| {
        let theta = optional_broadcast(&v[mu], 8, 1)
            + elt_multiply(optional_broadcast(&v[tau], 8, 1), &v[theta_tilde]);
        let priors = normal_lpdf(&v[mu], 0.0, 5.0).eval()?
            + cauchy_lpdf(&v[tau], 0.0, 5.0).eval()?
            + normal_lpdf(&v[theta_tilde], 0.0, 1.0).eval()?;
        (priors + normal_lpdf(&y, theta, &sigma).eval()?).eval()
    });

    let sampler = Sampler {
        chains: 4,
        warmup: flag(&args, "--warmup", if quick { 300 } else { 1000 }) as u64,
        draws: flag(&args, "--draws", if quick { 500 } else { 1000 }) as u64,
        seed: flag(&args, "--seed", 8) as u64,
        // Chains on threads of their own instead of interleaved from one.
        interleave: if args.iter().any(|a| a == "--threaded") {
            Interleaving::Never
        } else {
            Interleaving::OnGpus
        },
        ..Sampler::default()
    };
    println!(
        "eight schools (non-centred): {} chains x ({} warm-up + {} draws), {}",
        sampler.chains,
        sampler.warmup,
        sampler.draws,
        clfuse::Runtime::get()?.device_info().name
    );
    let start = std::time::Instant::now();
    let fit = sample(&model, &sampler)?;
    let elapsed = start.elapsed().as_secs_f64();

    // theta, the transformed parameter, from each draw (posteriordb reports it).
    let names: Vec<String> = (1..=8).map(|j| format!("theta[{j}]")).collect();
    let at = |name: &str| fit.column_names().iter().position(|n| n == name);
    let (Some(m), Some(t), Some(z)) = (at("mu"), at("tau"), at("theta_tilde[1]")) else {
        return Err(failed(
            EXAMPLE,
            "fit",
            "a parameter's column is missing".into(),
        ));
    };
    let fit = with_columns(&fit, &names, |d| {
        (0..8).map(|j| d[m] + d[t] * d[z + j]).collect()
    })?;
    let summary = fit.summary();
    println!("{summary}");
    println!("whole run {elapsed:.2} s");

    for reference in &REFERENCE {
        check_reference(EXAMPLE, &fit, &summary, reference)?;
    }
    let converged = summary.max_rhat() < 1.01; // NaN fails
    if !converged {
        return Err(failed(
            EXAMPLE,
            "R-hat",
            format!("max R-hat {:.4} >= 1.01", summary.max_rhat()),
        ));
    }
    let draws = summary.chains * summary.draws;
    if summary.divergences * 200 > draws {
        return Err(failed(
            EXAMPLE,
            "divergences",
            format!("{} of {draws} draws diverged (> 0.5%)", summary.divergences),
        ));
    }
    println!(
        "means within 4 MCSE of posteriordb's reference, sds within 4 MCSE, R-hat < 1.01, {} divergences",
        summary.divergences
    );
    Ok(())
}
