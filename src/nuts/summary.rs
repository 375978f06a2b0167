//! Posterior summaries and convergence diagnostics of a [`Fit`], per column.

use super::Fit;
use super::diagnostics::{ess_bulk, ess_tail, mcse_mean, quantile, rhat};
use std::fmt;

/// One column's summary over all chains.
///
/// ```
/// use clfuse::nuts::{ChainDraws, Fit};
/// let chain = |d: Vec<f64>| ChainDraws { draws: d.into_iter().map(|v| vec![v]).collect(),
///     stats: vec![], init: vec![0.0], warmup_time: Default::default(), sampling_time: Default::default() };
/// let fit = Fit::new(vec!["x".into()], vec![chain((0..50).map(f64::from).collect())])?;
/// let row = &fit.summary().rows[0];
/// assert_eq!((row.name.as_str(), row.mean, row.q50), ("x", 24.5, 24.5));
/// # Ok::<(), clfuse::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The column's name.
    pub name: String,
    /// Posterior mean.
    pub mean: f64,
    /// Monte Carlo standard error of the mean.
    pub mcse_mean: f64,
    /// Posterior standard deviation.
    pub sd: f64,
    /// 5% quantile.
    pub q5: f64,
    /// Median.
    pub q50: f64,
    /// 95% quantile.
    pub q95: f64,
    /// Bulk effective sample size.
    pub ess_bulk: f64,
    /// Tail effective sample size.
    pub ess_tail: f64,
    /// Rank-normalised split-R̂ (the larger of bulk and tail).
    pub rhat: f64,
}

/// Per-column summaries and diagnostics of a [`Fit`]
/// ([`Fit::summary`]), with the sampler's warnings; `Display` prints it as
/// a table.
///
/// The diagnostics are those of [`diagnostics`](super::diagnostics): the
/// rank-normalised split-R̂ and bulk and tail ESS of Vehtari et al. (2021).
///
/// ```
/// use clfuse::nuts::{ChainDraws, Fit};
/// let chain = |d: Vec<f64>| ChainDraws { draws: d.into_iter().map(|v| vec![v]).collect(),
///     stats: vec![], init: vec![0.0], warmup_time: Default::default(), sampling_time: Default::default() };
/// let fit = Fit::new(vec!["x".into()], vec![chain((0..50).map(f64::from).collect())])?;
/// let summary = fit.summary();
/// assert_eq!((summary.chains, summary.draws, summary.divergences), (1, 50, 0));
/// assert!(summary.to_string().contains("ess_bulk"));
/// # Ok::<(), clfuse::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// One row per column of the fit, in its order.
    pub rows: Vec<SummaryRow>,
    /// Chains summarised.
    pub chains: usize,
    /// Draws per chain.
    pub draws: usize,
    /// Divergent transitions among the kept draws (all chains).
    pub divergences: usize,
    /// Kept draws that stopped at the maximum tree depth (all chains).
    pub max_depth_hits: usize,
}

impl Summary {
    /// The summary of `fit` (same as [`Fit::summary`]).
    ///
    /// ```
    /// use clfuse::nuts::{Fit, Summary};
    /// let empty = Summary::new(&Fit::new(vec![], vec![])?);
    /// assert!(empty.rows.is_empty());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn new(fit: &Fit) -> Self {
        let rows = fit
            .column_names()
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let chains = fit.column_at(k);
                let all = chains.concat();
                let n = all.len() as f64;
                let mean = all.iter().sum::<f64>() / n;
                let sd = (all.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
                SummaryRow {
                    name: name.clone(),
                    mean,
                    mcse_mean: mcse_mean(&chains),
                    sd,
                    q5: quantile(&all, 0.05),
                    q50: quantile(&all, 0.5),
                    q95: quantile(&all, 0.95),
                    ess_bulk: ess_bulk(&chains),
                    ess_tail: ess_tail(&chains),
                    rhat: rhat(&chains),
                }
            })
            .collect();
        Summary {
            rows,
            chains: fit.chains().len(),
            draws: fit.chains().first().map_or(0, |c| c.draws.len()),
            divergences: fit.divergences(),
            max_depth_hits: fit.max_depth_hits(),
        }
    }

    /// The row of the column `name`.
    ///
    /// ```
    /// use clfuse::nuts::{ChainDraws, Fit};
    /// let chain = ChainDraws { draws: vec![vec![1.0], vec![2.0], vec![3.0]], stats: vec![],
    ///     init: vec![0.0], warmup_time: Default::default(), sampling_time: Default::default() };
    /// let summary = Fit::new(vec!["mu".into()], vec![chain])?.summary();
    /// assert_eq!(summary.row("mu").map(|r| r.mean), Some(2.0));
    /// assert!(summary.row("sigma").is_none());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn row(&self, name: &str) -> Option<&SummaryRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// The largest R̂ over all columns (NaN if any is NaN).
    ///
    /// ```
    /// use clfuse::nuts::{ChainDraws, Fit};
    /// let summary = Fit::new(vec![], vec![])?.summary();
    /// assert_eq!(summary.max_rhat(), f64::NEG_INFINITY);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn max_rhat(&self) -> f64 {
        self.rows.iter().fold(f64::NEG_INFINITY, |m, r| {
            if m.is_nan() || r.rhat.is_nan() {
                f64::NAN
            } else {
                m.max(r.rhat)
            }
        })
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(8);
        writeln!(
            f,
            "{:<width$} {:>10} {:>9} {:>9} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6}",
            "", "mean", "mcse", "sd", "5%", "50%", "95%", "ess_bulk", "ess_tail", "r_hat"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:<width$} {:>10.4} {:>9.4} {:>9.4} {:>10.4} {:>10.4} {:>10.4} {:>8.0} {:>8.0} {:>6.3}",
                r.name,
                r.mean,
                r.mcse_mean,
                r.sd,
                r.q5,
                r.q50,
                r.q95,
                r.ess_bulk,
                r.ess_tail,
                r.rhat
            )?;
        }
        write!(
            f,
            "{} chains x {} draws; {} divergent transitions; {} draws at the maximum tree depth",
            self.chains, self.draws, self.divergences, self.max_depth_hits
        )
    }
}
