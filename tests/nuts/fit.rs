//! The fit's table, columns and summary printing.

use clfuse::Result;
use clfuse::nuts::{Sampler, UnconstrainedModel, sample};
use clfuse::prelude::*;
use clfuse::rev::Var;

#[test]
fn table_has_chain_draw_stats_and_columns() -> Result<()> {
    let model = UnconstrainedModel::new(2, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    let fit = sample(
        &model,
        &Sampler {
            chains: 2,
            warmup: 20,
            draws: 7,
            seed: 3,
            ..Sampler::default()
        },
    )?;
    let table = fit.to_columns();
    let names: Vec<&str> = table.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "chain",
            "draw",
            "lp__",
            "accept_stat__",
            "stepsize__",
            "treedepth__",
            "n_leapfrog__",
            "divergent__",
            "energy__",
            "theta[1]",
            "theta[2]"
        ]
    );
    assert!(table.iter().all(|(_, c)| c.len() == 14));
    assert_eq!(
        table[0].1,
        [
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0
        ]
    );
    assert_eq!(table[1].1[..8], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 1.0]);
    // The parameter columns are the chains' draws, chain after chain.
    let theta2 = fit.column("theta[2]").expect("theta[2]");
    assert_eq!(table[10].1, theta2.concat());
    // lp__ is the model's log density at the draw: -|theta|²/2.
    let theta1 = fit.column("theta[1]").expect("theta[1]").concat();
    for ((lp, a), b) in table[2].1.iter().zip(&theta1).zip(theta2.concat()) {
        assert!((lp + 0.5 * (a * a + b * b)).abs() < 1e-9);
    }
    Ok(())
}

#[test]
fn summary_prints_a_row_per_column() -> Result<()> {
    let model = UnconstrainedModel::new(3, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    let fit = sample(
        &model,
        &Sampler {
            chains: 2,
            warmup: 50,
            draws: 50,
            seed: 8,
            ..Sampler::default()
        },
    )?;
    let text = fit.summary().to_string();
    assert_eq!(text.lines().count(), 1 + 3 + 1, "{text}");
    for name in [
        "theta[1]",
        "theta[2]",
        "theta[3]",
        "r_hat",
        "ess_tail",
        "2 chains x 50 draws",
    ] {
        assert!(text.contains(name), "{text}");
    }
    Ok(())
}
