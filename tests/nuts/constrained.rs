//! `nuts::sample` on models declared with constrained parameters
//! (`clfuse::params`): the sampler moves on the unconstrained scale, the
//! log-Jacobian is added on the device, and the draws come back constrained.

use clfuse::Result;
use clfuse::dist::{beta_lpdf, binomial_lpmf, normal_lpdf};
use clfuse::nuts::{Init, Sampler, sample};
use clfuse::params::{Constraint, Parameters};
use clfuse::prelude::*;

fn quick(seed: u64) -> Sampler {
    Sampler {
        chains: 4,
        warmup: 300,
        draws: 500,
        seed,
        ..Sampler::default()
    }
}

/// theta in (0, 1), y ~ binomial(n, theta), theta ~ beta(2, 3): the
/// posterior is beta(2 + y, 3 + n - y). Without the transform's Jacobian
/// the draws would follow another distribution, so this tests it too.
#[test]
fn bounded_parameter_has_its_beta_posterior() -> Result<()> {
    let (successes, trials) = (7, 20);
    let y = MatrixCl::from_slice(1, 1, &[successes])?;
    let n = MatrixCl::from_slice(1, 1, &[trials])?;
    let mut p = Parameters::new();
    let theta = p.real("theta", Constraint::lower_upper(0.0, 1.0))?;
    let model = p.model(|v| {
        let prior = beta_lpdf(&v[theta], 2.0, 3.0).eval()?;
        let likelihood = binomial_lpmf(&y, &n, &v[theta]).eval()?;
        (&prior + &likelihood).eval()
    });
    let fit = sample(&model, &quick(3))?;
    let summary = fit.summary();
    println!("{summary}");
    let (a, b) = (2.0 + successes as f64, 3.0 + (trials - successes) as f64);
    let mean = a / (a + b);
    let sd = (a * b / ((a + b).powi(2) * (a + b + 1.0))).sqrt();
    let row = summary.row("theta").expect("a column named theta");
    super::assert_mean_within_4_mcse(row, mean);
    assert!(
        (row.sd / sd - 1.0).abs() < 0.1,
        "sd {} vs exact {sd}",
        row.sd
    );
    assert!(row.rhat < 1.01, "R-hat {}", row.rhat);
    // Every draw is inside the bounds (the constrained scale).
    for draws in fit.column("theta").expect("theta's draws") {
        assert!(draws.iter().all(|&t| t > 0.0 && t < 1.0));
    }
    Ok(())
}

/// A conjugate normal with a simplex and a user-given initial value on the
/// constrained scale, converted by the inverse transform.
#[test]
fn initial_values_on_the_constrained_scale() -> Result<()> {
    let data = [1.9, 2.4, 0.7, 1.6, 2.2];
    let y = MatrixCl::from_slice(5, 1, &data)?;
    let mut p = Parameters::new();
    let mu = p.real("mu", Constraint::Unconstrained)?;
    let sigma = p.real("sigma", Constraint::lower(0.0))?;
    p.vector("w", 3, Constraint::Simplex)?;
    let inits: Vec<Vec<f64>> = (0..4)
        .map(|c| {
            let c = c as f64;
            p.unconstrain(&[
                ("mu", &[c][..]),
                ("sigma", &[1.0 + c][..]),
                ("w", &[0.2, 0.3, 0.5][..]),
            ])
        })
        .collect::<Result<_>>()?;
    let model = p.model(|v| {
        let likelihood = normal_lpdf(&y, &v[mu], &v[sigma]).eval()?;
        let prior = normal_lpdf(&v[sigma], 0.0, 5.0).eval()?;
        // No term for w: with its Jacobian alone its draws are uniform on
        // the simplex, Dirichlet(1, 1, 1).
        (&likelihood + &prior).eval()
    });
    let sampler = Sampler {
        init: Init::Points(inits.clone()),
        ..quick(5)
    };
    let fit = sample(&model, &sampler)?;
    for (chain, init) in fit.chains().iter().zip(&inits) {
        assert_eq!(&chain.init, init);
    }
    let summary = fit.summary();
    println!("{summary}");
    for name in ["w[1]", "w[2]", "w[3]"] {
        let row = summary.row(name).expect("a simplex column");
        // Dirichlet(1, 1, 1): each share has mean 1/3.
        super::assert_mean_within_4_mcse(row, 1.0 / 3.0);
        assert!(row.rhat < 1.01, "{name}: R-hat {}", row.rhat);
    }
    let sigma_draws = fit.column("sigma").expect("sigma's draws");
    assert!(sigma_draws.iter().flatten().all(|&s| s > 0.0));
    Ok(())
}

/// The README's first screen, verbatim but for the run length: eight
/// schools, non-centred through `offset_multiplier(mu, tau)`.
#[test]
fn readme_eight_schools() -> Result<()> {
    use clfuse::dist::cauchy_lpdf;
    let y = MatrixCl::from_slice(8, 1, &[28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])?;
    let sigma = MatrixCl::from_slice(8, 1, &[15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])?;
    let mut p = Parameters::new();
    let mu = p.real("mu", Constraint::Unconstrained)?;
    let tau = p.real("tau", Constraint::lower(0.0))?;
    let theta = p.vector("theta", 8, Constraint::offset_multiplier(mu, tau))?;
    let model = p.model(|v| {
        (normal_lpdf(&v[mu], 0.0, 5.0).eval()?
            + cauchy_lpdf(&v[tau], 0.0, 5.0).eval()?
            + normal_lpdf(&v[theta], &v[mu], &v[tau]).eval()?
            + normal_lpdf(&y, &v[theta], &sigma).eval()?)
        .eval()
    });
    let fit = sample(&model, &quick(8))?;
    let summary = fit.summary();
    println!("{summary}");
    // posteriordb's reference for eight_schools_noncentered: mu 4.4 (sd
    // 3.3), tau 3.6 (sd 3.2); a short run, so a loose check.
    let mu_row = summary.row("mu").expect("mu");
    assert!(
        (mu_row.mean - 4.4).abs() < 4.0 * mu_row.mcse_mean + 0.3,
        "{mu_row:?}"
    );
    let tau_row = summary.row("tau").expect("tau");
    assert!(tau_row.mean > 2.0 && tau_row.mean < 5.5, "{tau_row:?}");
    assert!(summary.max_rhat() < 1.05, "R-hat {}", summary.max_rhat());
    Ok(())
}
