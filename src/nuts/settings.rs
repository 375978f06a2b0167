//! The multi-chain sampler's settings ([`Sampler`], [`Init`]).

use clfuse_core::{Error, Result};
use nuts_rs::{DiagNutsSettings, Settings};

/// Where each chain starts, on the unconstrained scale.
///
/// ```
/// use clfuse::nuts::{Init, Sampler};
/// // Stan's default: uniform(-2, 2) per coordinate.
/// assert_eq!(Sampler::default().init, Init::Random { radius: 2.0 });
/// // Two chains from given points of a 1-parameter model.
/// let given = Init::Points(vec![vec![0.5], vec![-0.5]]);
/// let sampler = Sampler { chains: 2, init: given, ..Sampler::default() };
/// # let _ = sampler;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// Uniform on `(-radius, radius)` per unconstrained coordinate, each
    /// chain from its own seeded stream. As in Stan, a point where the log
    /// density or its gradient is not finite is drawn again, up to 100
    /// times, before sampling fails. `radius = 0` starts every chain at 0.
    Random {
        /// Half-width of the interval (Stan's `init = 2`).
        radius: f64,
    },
    /// One unconstrained point per chain (`chains` points of `dim` values).
    Points(Vec<Vec<f64>>),
}

impl Default for Init {
    fn default() -> Self {
        Init::Random { radius: 2.0 }
    }
}

/// The settings of [`sample`](super::sample), with Stan's defaults: four
/// chains of 1000 warm-up iterations and 1000 draws, maximum tree depth 10,
/// target acceptance 0.8, adapted diagonal mass matrix, random inits in
/// (−2, 2).
///
/// A plain struct: set the fields you need and take the rest from
/// [`Default`]. The same settings and seed give the same draws.
///
/// ```
/// use clfuse::nuts::Sampler;
/// let sampler = Sampler { chains: 2, warmup: 200, draws: 300, seed: 42, ..Sampler::default() };
/// assert_eq!((sampler.max_depth, sampler.target_accept), (10, 0.8));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    /// Chains, each on its own thread (4).
    pub chains: usize,
    /// Warm-up (adaptation) iterations per chain, not kept (1000).
    pub warmup: u64,
    /// Draws kept per chain (1000).
    pub draws: u64,
    /// Seed of the whole run; each chain derives its own stream from it (0).
    pub seed: u64,
    /// Maximum tree depth: at most 2^`max_depth` leapfrog steps per draw (10).
    pub max_depth: u64,
    /// The mean acceptance statistic step-size adaptation aims at, in (0, 1) (0.8).
    pub target_accept: f64,
    /// Adapt the diagonal mass matrix during warm-up (true). When off, the
    /// step size still adapts and the diagonal mass matrix stays at the one
    /// `nuts-rs` sets from the initial point's gradient (`nuts-rs` 0.19
    /// has no unit-metric option for its diagonal sampler).
    pub adapt_mass_matrix: bool,
    /// Where chains start ([`Init::Random`] with radius 2).
    pub init: Init,
    /// Draw a progress bar per chain on stderr (false). Hidden when stderr
    /// is not a terminal.
    pub progress: bool,
    /// The devices the chains run on, each taking a consecutive share of
    /// them (empty: the default device). With [`sample`](super::sample)
    /// each chain's thread has its device current (the model's data must
    /// be there); with [`sample_batched`](super::sample_batched) each
    /// device is one batch with its own copy of the data.
    pub devices: Vec<clfuse_core::Device>,
    /// With [`sample_batched`](super::sample_batched) and several
    /// [`devices`](Self::devices): one batch of every chain whose data
    /// rows are split over the devices, each evaluating all the chains on
    /// its share of the rows ([`RowSplitDensity`](super::RowSplitDensity)),
    /// instead of each device batching its share of the chains (false).
    /// The model must be splittable ([`BatchedModel::rows`](super::BatchedModel::rows),
    /// e.g. a [`SplitBatchModel`](super::SplitBatchModel)); [`sample`](super::sample)
    /// does not split.
    pub split_rows: bool,
    /// When [`sample`](super::sample) evaluates each device's chains from
    /// one thread, every chain's call queued before any is waited for
    /// ([`Interleaving::OnGpus`]; see [`Interleaving`]).
    pub interleave: Interleaving,
}

/// When a device's chains are evaluated from one thread, interleaved: each
/// round starts every chain's call, then waits for them, so that the device
/// runs the calls back to back and the host waits about once per round
/// instead of once per call (see [`Interleave`](super::Interleave)). Only
/// models that allow it ([`Model::interleaves`](super::Model::interleaves))
/// are interleaved; the draws are those of chains on threads of their own.
///
/// ```
/// use clfuse::nuts::{Interleaving, Sampler};
/// assert_eq!(Sampler::default().interleave, Interleaving::OnGpus);
/// let threaded = Sampler { interleave: Interleaving::Never, ..Sampler::default() };
/// # let _ = threaded;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interleaving {
    /// When every device of the run is a GPU: there a chain's call is
    /// mostly a wait for the device (on an H200, 4 chains of the regression
    /// example: 15.3 s against 21.4 s on threads). On a CPU device the
    /// chains' threads run side by side instead (PoCL, 2 cores: a GP
    /// 48 s interleaved, 32 s on threads).
    #[default]
    OnGpus,
    /// On every device.
    Always,
    /// Never: each chain's thread evaluates its own density.
    Never,
}

impl Interleaving {
    /// Whether a run on `devices` interleaves its chains (where its model
    /// allows).
    ///
    /// ```
    /// use clfuse::nuts::Interleaving;
    /// let device = clfuse::Device::default_device()?;
    /// assert_eq!(Interleaving::OnGpus.applies(&[device]), device.info().is_gpu);
    /// assert!(Interleaving::Always.applies(&[device]));
    /// assert!(!Interleaving::Never.applies(&[device]));
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn applies(self, devices: &[clfuse_core::Device]) -> bool {
        match self {
            Interleaving::OnGpus => devices.iter().all(|d| d.info().is_gpu),
            Interleaving::Always => true,
            Interleaving::Never => false,
        }
    }
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            chains: 4,
            warmup: 1000,
            draws: 1000,
            seed: 0,
            max_depth: 10,
            target_accept: 0.8,
            adapt_mass_matrix: true,
            init: Init::default(),
            progress: false,
            devices: Vec::new(),
            split_rows: false,
            interleave: Interleaving::OnGpus,
        }
    }
}

/// How often a random init is drawn again before sampling fails (Stan's).
pub(crate) const MAX_INIT_ATTEMPTS: usize = 100;

fn invalid(argument: &'static str, reason: String) -> Error {
    Error::InvalidArgument {
        function: "nuts::sample",
        argument,
        reason,
    }
}

impl Sampler {
    /// Checks the settings against a model of `dim` unconstrained
    /// parameters; [`sample`](super::sample) does this before starting.
    ///
    /// ```
    /// use clfuse::nuts::{Init, Sampler};
    /// assert!(Sampler::default().validate(3).is_ok());
    /// assert!(Sampler { chains: 0, ..Sampler::default() }.validate(3).is_err());
    /// let short = Sampler { chains: 1, init: Init::Points(vec![vec![0.0; 2]]), ..Sampler::default() };
    /// assert!(short.validate(3).is_err());
    /// ```
    pub fn validate(&self, dim: usize) -> Result<()> {
        if self.chains == 0 {
            return Err(invalid("chains", "is 0: sampling needs a chain".into()));
        }
        if self.warmup == 0 && self.draws == 0 {
            return Err(invalid(
                "draws",
                "and warmup are both 0: there is nothing to run".into(),
            ));
        }
        if self.warmup.checked_add(self.draws).is_none() {
            return Err(invalid(
                "draws",
                "plus warmup overflows the iteration count".into(),
            ));
        }
        if self.max_depth == 0 {
            return Err(invalid("max_depth", "is 0: a tree needs a doubling".into()));
        }
        if !(self.target_accept > 0.0 && self.target_accept < 1.0) {
            return Err(invalid(
                "target_accept",
                format!("is {}, not in (0, 1)", self.target_accept),
            ));
        }
        if dim == 0 {
            return Err(invalid("model", "has no parameters (dim 0)".into()));
        }
        match &self.init {
            Init::Random { radius } => {
                if !(radius.is_finite() && *radius >= 0.0) {
                    return Err(invalid(
                        "init",
                        format!("radius is {radius}, not finite and non-negative"),
                    ));
                }
            }
            Init::Points(points) => {
                if points.len() != self.chains {
                    return Err(invalid(
                        "init",
                        format!("has {} points for {} chains", points.len(), self.chains),
                    ));
                }
                for (chain, point) in points.iter().enumerate() {
                    if point.len() != dim {
                        return Err(invalid(
                            "init",
                            format!(
                                "point of chain {} has {} values for {dim} parameters",
                                chain + 1,
                                point.len()
                            ),
                        ));
                    }
                    if point.iter().any(|v| !v.is_finite()) {
                        return Err(invalid(
                            "init",
                            format!("point of chain {} is not finite: {point:?}", chain + 1),
                        ));
                    }
                }
            }
        }
        self.nuts_settings()
            .validate()
            .map_err(|e| invalid("settings", format!("nuts-rs refused them: {e}")))
    }

    /// The devices to run on: [`devices`](Self::devices), or the default one.
    pub(crate) fn devices_or_default(&self) -> Result<Vec<clfuse_core::Device>> {
        if self.devices.is_empty() {
            Ok(vec![clfuse_core::Device::default_device()?])
        } else {
            Ok(self.devices.clone())
        }
    }

    /// Which of `devices` devices chain `chain` runs on: consecutive,
    /// near-equal shares.
    ///
    /// ```
    /// use clfuse::nuts::Sampler;
    /// let s = Sampler { chains: 8, ..Sampler::default() };
    /// let on: Vec<usize> = (0..8).map(|c| s.device_of(c, 2)).collect();
    /// assert_eq!(on, [0, 0, 0, 0, 1, 1, 1, 1]);
    /// ```
    pub fn device_of(&self, chain: usize, devices: usize) -> usize {
        (chain * devices.max(1)) / self.chains.max(1)
    }

    /// The `nuts-rs` settings of one chain.
    pub(crate) fn nuts_settings(&self) -> DiagNutsSettings {
        let mut settings = DiagNutsSettings {
            num_tune: self.warmup,
            num_draws: self.draws,
            maxdepth: self.max_depth,
            seed: self.seed,
            num_chains: self.chains,
            ..DiagNutsSettings::default()
        };
        let adapt = &mut settings.adapt_options;
        adapt.step_size_settings.target_accept = self.target_accept;
        if !self.adapt_mass_matrix {
            // The whole warm-up is then nuts-rs's final step-size window,
            // where the mass matrix is no longer updated.
            adapt.step_size_window = 1.0;
        }
        settings
    }
}
