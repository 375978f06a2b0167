//! What [`sample`](super::sample) returns: [`Fit`], its chains
//! ([`ChainDraws`]) and per-draw sampler statistics ([`DrawStats`]).

use super::Summary;
use clfuse_core::{Error, Result};
use std::time::Duration;

/// The sampler's statistics of one kept draw (Stan's `lp__`,
/// `accept_stat__`, `stepsize__`, `treedepth__`, `n_leapfrog__`,
/// `divergent__`, `energy__`).
///
/// ```
/// use clfuse::nuts::DrawStats;
/// let s = DrawStats { log_density: -1.0, accept: 0.9, step_size: 0.5, depth: 2,
///     max_depth_reached: false, leapfrog_steps: 3, diverging: false, energy: 1.5 };
/// assert!(!s.diverging);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawStats {
    /// Log density at the draw (unconstrained scale, as the model returns it).
    pub log_density: f64,
    /// Mean acceptance statistic over the trajectory.
    pub accept: f64,
    /// Step size of the trajectory. (The first draw of a run without
    /// warm-up reports the step size after it: `nuts-rs` does not expose
    /// the initial one.)
    pub step_size: f64,
    /// Tree depth of the trajectory.
    pub depth: u64,
    /// The trajectory stopped at the maximum tree depth.
    pub max_depth_reached: bool,
    /// Leapfrog steps (gradient evaluations) of the trajectory.
    pub leapfrog_steps: u64,
    /// The trajectory diverged.
    pub diverging: bool,
    /// Hamiltonian (potential plus kinetic energy) at the draw.
    pub energy: f64,
}

/// One chain's kept draws and statistics.
///
/// ```
/// use clfuse::nuts::ChainDraws;
/// let chain = ChainDraws { draws: vec![vec![1.0], vec![2.0]], stats: vec![], init: vec![0.0],
///     warmup_time: Default::default(), sampling_time: Default::default() };
/// assert_eq!(chain.draws.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ChainDraws {
    /// Draws x columns, on the constrained scale, columns as
    /// [`Fit::column_names`].
    pub draws: Vec<Vec<f64>>,
    /// The sampler's statistics, one per draw.
    pub stats: Vec<DrawStats>,
    /// The unconstrained point the chain started from.
    pub init: Vec<f64>,
    /// Wall time of the warm-up (with the search for an initial point).
    pub warmup_time: Duration,
    /// Wall time of the kept draws.
    pub sampling_time: Duration,
}

impl ChainDraws {
    /// Divergent transitions among the kept draws.
    ///
    /// ```
    /// use clfuse::nuts::ChainDraws;
    /// let chain = ChainDraws { draws: vec![], stats: vec![], init: vec![],
    ///     warmup_time: Default::default(), sampling_time: Default::default() };
    /// assert_eq!(chain.divergences(), 0);
    /// ```
    pub fn divergences(&self) -> usize {
        self.stats.iter().filter(|s| s.diverging).count()
    }

    /// Kept draws whose trajectory stopped at the maximum tree depth.
    ///
    /// ```
    /// use clfuse::nuts::ChainDraws;
    /// let chain = ChainDraws { draws: vec![], stats: vec![], init: vec![],
    ///     warmup_time: Default::default(), sampling_time: Default::default() };
    /// assert_eq!(chain.max_depth_hits(), 0);
    /// ```
    pub fn max_depth_hits(&self) -> usize {
        self.stats.iter().filter(|s| s.max_depth_reached).count()
    }

    /// Wall time of the whole chain, warm-up included.
    ///
    /// ```
    /// use clfuse::nuts::ChainDraws;
    /// use std::time::Duration;
    /// let chain = ChainDraws { draws: vec![], stats: vec![], init: vec![],
    ///     warmup_time: Duration::from_secs(1), sampling_time: Duration::from_secs(2) };
    /// assert_eq!(chain.elapsed(), Duration::from_secs(3));
    /// ```
    pub fn elapsed(&self) -> Duration {
        self.warmup_time + self.sampling_time
    }
}

/// The draws of all chains of one [`sample`](super::sample) run, by
/// column name, with the sampler's statistics.
///
/// ```
/// use clfuse::nuts::{ChainDraws, Fit};
/// let chain = |d: &[f64]| ChainDraws { draws: d.iter().map(|&v| vec![v]).collect(), stats: vec![],
///     init: vec![0.0], warmup_time: Default::default(), sampling_time: Default::default() };
/// let fit = Fit::new(vec!["mu".into()], vec![chain(&[1.0, 2.0]), chain(&[3.0, 4.0])])?;
/// assert_eq!(fit.column("mu"), Some(vec![vec![1.0, 2.0], vec![3.0, 4.0]]));
/// assert_eq!(fit.column("sigma"), None);
/// # Ok::<(), clfuse::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    column_names: Vec<String>,
    chains: Vec<ChainDraws>,
}

impl Fit {
    /// A fit from its column names and chains: every draw has one value
    /// per column, and a chain has one [`DrawStats`] per draw or none.
    ///
    /// ```
    /// use clfuse::nuts::{ChainDraws, Fit};
    /// let fit = Fit::new(vec!["mu".into()], vec![])?;
    /// assert_eq!(fit.chains().len(), 0);
    /// let two_values = ChainDraws { draws: vec![vec![1.0, 2.0]], stats: vec![], init: vec![0.0],
    ///     warmup_time: Default::default(), sampling_time: Default::default() };
    /// assert!(Fit::new(vec!["mu".into()], vec![two_values]).is_err());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn new(column_names: Vec<String>, chains: Vec<ChainDraws>) -> Result<Self> {
        for (c, chain) in chains.iter().enumerate() {
            if let Some(d) = chain
                .draws
                .iter()
                .position(|d| d.len() != column_names.len())
            {
                return Err(Error::InvalidArgument {
                    function: "Fit::new",
                    argument: "chains",
                    reason: format!(
                        "draw {} of chain {} has {} values for {} columns",
                        d + 1,
                        c + 1,
                        chain.draws[d].len(),
                        column_names.len()
                    ),
                });
            }
            if !chain.stats.is_empty() && chain.stats.len() != chain.draws.len() {
                return Err(Error::InvalidArgument {
                    function: "Fit::new",
                    argument: "chains",
                    reason: format!(
                        "chain {} has {} statistics for {} draws",
                        c + 1,
                        chain.stats.len(),
                        chain.draws.len()
                    ),
                });
            }
        }
        Ok(Fit {
            column_names,
            chains,
        })
    }

    /// The constrained columns' names, Stan style (`mu`, `theta[1]`).
    ///
    /// ```
    /// use clfuse::nuts::Fit;
    /// assert_eq!(Fit::new(vec!["mu".into()], vec![])?.column_names(), ["mu"]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn column_names(&self) -> &[String] {
        &self.column_names
    }

    /// The chains, in order.
    ///
    /// ```
    /// use clfuse::nuts::Fit;
    /// assert!(Fit::new(vec![], vec![])?.chains().is_empty());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn chains(&self) -> &[ChainDraws] {
        &self.chains
    }

    /// One column's draws, one vector per chain; `None` for an unknown name.
    ///
    /// ```
    /// use clfuse::nuts::{ChainDraws, Fit};
    /// let chain = ChainDraws { draws: vec![vec![1.0, 10.0], vec![2.0, 20.0]], stats: vec![],
    ///     init: vec![0.0, 0.0], warmup_time: Default::default(), sampling_time: Default::default() };
    /// let fit = Fit::new(vec!["a".into(), "b".into()], vec![chain])?;
    /// assert_eq!(fit.column("b"), Some(vec![vec![10.0, 20.0]]));
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn column(&self, name: &str) -> Option<Vec<Vec<f64>>> {
        let k = self.column_names.iter().position(|n| n == name)?;
        Some(self.column_at(k))
    }

    /// Column `k`'s draws, one vector per chain.
    pub(crate) fn column_at(&self, k: usize) -> Vec<Vec<f64>> {
        self.chains
            .iter()
            .map(|c| c.draws.iter().map(|d| d[k]).collect())
            .collect()
    }

    /// Divergent transitions among all kept draws.
    ///
    /// ```
    /// use clfuse::nuts::Fit;
    /// assert_eq!(Fit::new(vec![], vec![])?.divergences(), 0);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn divergences(&self) -> usize {
        self.chains.iter().map(ChainDraws::divergences).sum()
    }

    /// Kept draws, over all chains, that stopped at the maximum tree depth.
    ///
    /// ```
    /// use clfuse::nuts::Fit;
    /// assert_eq!(Fit::new(vec![], vec![])?.max_depth_hits(), 0);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn max_depth_hits(&self) -> usize {
        self.chains.iter().map(ChainDraws::max_depth_hits).sum()
    }

    /// Diagnostics and posterior summaries per column ([`Summary`]).
    ///
    /// ```
    /// use clfuse::nuts::{ChainDraws, Fit};
    /// let chain = |d: Vec<f64>| ChainDraws { draws: d.into_iter().map(|v| vec![v]).collect(),
    ///     stats: vec![], init: vec![0.0], warmup_time: Default::default(), sampling_time: Default::default() };
    /// let draws = |c: f64| (0..100).map(|i| ((i * 37 + 11) % 100) as f64 + c).collect();
    /// let fit = Fit::new(vec!["x".into()], vec![chain(draws(0.0)), chain(draws(0.5))])?;
    /// let summary = fit.summary();
    /// assert!((summary.row("x").unwrap().mean - 49.75).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn summary(&self) -> Summary {
        Summary::new(self)
    }

    /// The draws as a host table of plain columns, one row per draw of each
    /// chain (chain after chain): `chain` and `draw` (both from 1), the
    /// sampler's statistics in Stan's names (`lp__`, `accept_stat__`,
    /// `stepsize__`, `treedepth__`, `n_leapfrog__`, `divergent__`,
    /// `energy__`), then the model's columns.
    ///
    /// ```
    /// use clfuse::nuts::{ChainDraws, DrawStats, Fit};
    /// let stats = DrawStats { log_density: -1.0, accept: 0.9, step_size: 0.5, depth: 2,
    ///     max_depth_reached: false, leapfrog_steps: 3, diverging: false, energy: 1.5 };
    /// let chain = ChainDraws { draws: vec![vec![7.0]], stats: vec![stats], init: vec![0.0],
    ///     warmup_time: Default::default(), sampling_time: Default::default() };
    /// let table = Fit::new(vec!["mu".into()], vec![chain.clone(), chain])?.to_columns();
    /// assert_eq!(table[0], ("chain".to_string(), vec![1.0, 2.0]));
    /// assert_eq!(table.last().unwrap(), &("mu".to_string(), vec![7.0, 7.0]));
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn to_columns(&self) -> Vec<(String, Vec<f64>)> {
        type Stat = fn(&DrawStats) -> f64;
        let stats: [(&str, Stat); 7] = [
            ("lp__", |s| s.log_density),
            ("accept_stat__", |s| s.accept),
            ("stepsize__", |s| s.step_size),
            ("treedepth__", |s| s.depth as f64),
            ("n_leapfrog__", |s| s.leapfrog_steps as f64),
            ("divergent__", |s| f64::from(u8::from(s.diverging))),
            ("energy__", |s| s.energy),
        ];
        let mut table = vec![
            (
                "chain".to_string(),
                self.chains
                    .iter()
                    .enumerate()
                    .flat_map(|(c, chain)| std::iter::repeat_n((c + 1) as f64, chain.draws.len()))
                    .collect(),
            ),
            (
                "draw".to_string(),
                self.chains
                    .iter()
                    .flat_map(|chain| (1..=chain.draws.len()).map(|d| d as f64))
                    .collect(),
            ),
        ];
        for (name, stat) in stats {
            let column = self
                .chains
                .iter()
                .flat_map(|chain| {
                    // A chain built by hand may have no statistics: NaN keeps
                    // the table rectangular.
                    (0..chain.draws.len()).map(|d| chain.stats.get(d).map_or(f64::NAN, stat))
                })
                .collect();
            table.push((name.to_string(), column));
        }
        for (k, name) in self.column_names.iter().enumerate() {
            table.push((name.clone(), self.column_at(k).concat()));
        }
        table
    }
}
