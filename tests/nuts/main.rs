//! `clfuse::nuts`'s multi-chain front end (feature `nuts`): the
//! diagnostics against ArviZ on fixed draws, sampling models with known
//! posteriors, seeded reproducibility, initial points, invalid settings and
//! the fit's tables. One test binary (`cargo test --features nuts --test
//! nuts`), a module per topic.

mod batched;
mod constrained;
mod diagnostics;
mod fit;
mod front_end;
mod interleave;
mod settings;
mod split;

/// Asserts that a summary row's posterior mean is within 4 Monte-Carlo
/// standard errors of `mean` (the known posterior's).
fn assert_mean_within_4_mcse(row: &clfuse::nuts::SummaryRow, mean: f64) {
    assert!(
        (row.mean - mean).abs() < 4.0 * row.mcse_mean,
        "{}: mean {} vs {mean} (mcse {})",
        row.name,
        row.mean,
        row.mcse_mean
    );
}
