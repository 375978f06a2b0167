//! [`DeviceDensity`]: a device model as `nuts-rs`'s log density.

use crate::rev::{self, Var};
use clfuse_core::{Error, MatrixCl, QueuedReads, Recording, Result};
use nuts_rs::{CpuLogpFunc, CpuMathError, HasDims, LogpError};
use std::collections::HashMap;

/// A model's failure at one position. Non-finite values and failed
/// decompositions are recoverable (the sampler treats the position as a
/// divergence); anything else (a device error) stops sampling, and
/// [`sample`](super::sample) returns the wrapped error.
///
/// ```
/// use clfuse::nuts::DensityError;
/// use clfuse::nuts::nuts_rs::LogpError;
/// let nan = DensityError(clfuse::Error::NaN { function: "model", argument: "theta", row: 0, col: 0 });
/// assert!(nan.is_recoverable());
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DensityError(pub Error);

impl LogpError for DensityError {
    fn is_recoverable(&self) -> bool {
        matches!(
            self.0,
            Error::NotFinite { .. }
                | Error::NotPositiveDefinite { .. }
                | Error::CheckFailed { .. }
                | Error::NaN { .. }
        )
    }
}

/// A density's value for `nuts-rs`: a NaN is a recoverable error (the
/// sampler treats it as a divergence); `col` names the chain in a batch.
pub(crate) fn not_nan(
    function: &'static str,
    col: usize,
    value: Result<f64>,
) -> std::result::Result<f64, DensityError> {
    match value {
        Ok(value) if value.is_nan() => Err(DensityError(Error::NotFinite {
            function,
            argument: "model",
            row: 0,
            col,
            value,
        })),
        Ok(value) => Ok(value),
        Err(e) => Err(DensityError(e)),
    }
}

/// A log density on the device, for `nuts-rs`: `model(&theta)` returns the
/// `1 x 1` log density of the `dim x 1` parameter column `theta`.
///
/// ```
/// use clfuse::nuts::DeviceDensity;
/// use clfuse::prelude::*;
/// use nuts_rs::CpuLogpFunc;
/// // A standard normal in two dimensions.
/// let mut density = DeviceDensity::new(2, |theta| colwise_sum(-0.5f64 * square(theta)).eval())?;
/// let mut gradient = [0.0; 2];
/// let lp = density.logp(&[1.0, 2.0], &mut gradient)?;
/// assert_eq!((lp, gradient), (-2.5, [-1.0, -2.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DeviceDensity<F> {
    theta: Var,
    model: F,
    evaluations: u64,
    replay: rev::Replay,
    /// The call [`start`](Self::start) began, until [`finish`](Self::finish).
    started: Option<rev::StartedCall>,
}

impl<F: FnMut(&Var) -> Result<Var>> DeviceDensity<F> {
    /// A density over `dim` parameters. Once two evaluations did the same
    /// device work, later ones replay it ([`rev::Replay`]: the model must
    /// do the same device work at every position, as with `jax.jit`; see
    /// [`without_replay`](Self::without_replay)).
    pub fn new(dim: usize, model: F) -> Result<Self> {
        Ok(DeviceDensity {
            theta: Var::new(MatrixCl::zeros(dim, 1)?),
            model,
            evaluations: 0,
            replay: rev::Replay::new(),
            started: None,
        })
    }

    /// The same density, every evaluation run as written (never replayed):
    /// for a model whose device work depends on more than the position.
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// let mut density = DeviceDensity::new(1, |theta| colwise_sum(theta).eval())?.without_replay();
    /// let mut g = [0.0];
    /// for x in [1.0, 2.0, 3.0] {
    ///     assert_eq!(density.value_and_grad(&[x], &mut g)?, x);
    /// }
    /// assert!(!density.replays());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn without_replay(mut self) -> Self {
        self.replay = rev::Replay::off();
        self
    }

    /// Whether the next evaluation replays recorded device work.
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// let mut density = DeviceDensity::new(2, |theta| colwise_sum(square(theta)).eval())?;
    /// let mut g = [0.0; 2];
    /// for x in [1.0, 2.0, 3.0] {
    ///     assert_eq!(density.value_and_grad(&[x, 1.0], &mut g)?, x * x + 1.0);
    ///     assert_eq!(g, [2.0 * x, 2.0]);
    /// }
    /// // Unless FUSION_REPLAY=0.
    /// let on = clfuse::Runtime::get()?.tuning().replay != Some(false);
    /// assert_eq!(density.replays(), on);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn replays(&self) -> bool {
        self.replay.is_replaying()
    }

    /// How many times the density was evaluated.
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// let density = DeviceDensity::new(1, |theta| colwise_sum(theta).eval())?;
    /// assert_eq!(density.evaluations(), 0);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// The log density at `position`, its gradient written to `gradient`.
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// let mut density = DeviceDensity::new(1, |theta| colwise_sum(theta).eval())?;
    /// let mut g = [0.0];
    /// assert_eq!(density.value_and_grad(&[3.0], &mut g)?, 3.0);
    /// assert_eq!(g, [1.0]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn value_and_grad(&mut self, position: &[f64], gradient: &mut [f64]) -> Result<f64> {
        self.write_position("DeviceDensity::value_and_grad", position)?;
        let (theta, model) = (&self.theta, &mut self.model);
        self.replay
            .value_and_grad_to_host(theta, || model(theta), gradient)
    }

    /// Writes `position` to the parameter vector (not waited for: it
    /// travels as kernel arguments) and counts the evaluation.
    fn write_position(&mut self, function: &'static str, position: &[f64]) -> Result<()> {
        let dim = self.theta.rows();
        if position.len() != dim {
            return Err(Error::InvalidArgument {
                function,
                argument: "position",
                reason: format!("has {} values for {dim} parameters", position.len()),
            });
        }
        self.theta.value().write_queued(position)?;
        self.evaluations += 1;
        Ok(())
    }

    /// [`value_and_grad`](Self::value_and_grad) in two halves: `start`
    /// queues the evaluation at `position` (a replayed call is only queued;
    /// see [`rev::Replay::start`]) and [`finish`](Self::finish) waits for
    /// it. Several chains' densities on one device started one after the
    /// other and then finished cost about one round trip to the device, not
    /// one each ([`Sampler::interleave`](super::Sampler::interleave)).
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let model = |t: &Var| colwise_sum(-0.5f64 * square(t)).eval();
    /// let (mut a, mut b) = (DeviceDensity::new(1, model)?, DeviceDensity::new(1, model)?);
    /// let (mut ga, mut gb) = ([0.0], [0.0]);
    /// for x in [1.0, 2.0, 3.0] {
    ///     a.start(&[x])?;
    ///     b.start(&[-x])?;
    ///     assert_eq!((a.finish(&mut ga)?, b.finish(&mut gb)?), (-0.5 * x * x, -0.5 * x * x));
    ///     assert_eq!((ga, gb), ([-x], [x]));
    /// }
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn start(&mut self, position: &[f64]) -> Result<()> {
        // An unfinished call is dropped (its reads still complete).
        self.started = None;
        self.write_position("DeviceDensity::start", position)?;
        let (theta, model) = (&self.theta, &mut self.model);
        self.started = Some(self.replay.start(theta, || model(theta))?);
        Ok(())
    }

    /// [`start`](Self::start), unless the evaluation replays a recording:
    /// then the position is written and `true` returned, and the caller
    /// queues the replay ([`Interleave::replaying`], [`Interleave::queued`]).
    fn prepare(&mut self, position: &[f64]) -> Result<bool> {
        self.started = None;
        self.write_position("DeviceDensity::start", position)?;
        if self.replay.recording_for(&self.theta).is_some() {
            return Ok(true);
        }
        let (theta, model) = (&self.theta, &mut self.model);
        self.started = Some(self.replay.start(theta, || model(theta))?);
        Ok(false)
    }

    /// Waits for the evaluation [`start`](Self::start) began, writes its
    /// gradient and returns its value; an error when none was started.
    pub fn finish(&mut self, gradient: &mut [f64]) -> Result<f64> {
        let started = self.started.take().ok_or_else(|| Error::InvalidArgument {
            function: "DeviceDensity::finish",
            argument: "self",
            reason: "no evaluation was started (call start first)".into(),
        })?;
        let (theta, model) = (&self.theta, &mut self.model);
        self.replay
            .finish_to_host(started, theta, || model(theta), gradient)
    }
}

impl<F> HasDims for DeviceDensity<F> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        HashMap::from([(
            "unconstrained_parameter".to_string(),
            self.theta.rows() as u64,
        )])
    }
}

impl<F: FnMut(&Var) -> Result<Var>> CpuLogpFunc for DeviceDensity<F> {
    type LogpError = DensityError;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.theta.rows()
    }

    fn logp(
        &mut self,
        position: &[f64],
        gradient: &mut [f64],
    ) -> std::result::Result<f64, DensityError> {
        let value = self.value_and_grad(position, gradient);
        not_nan("DeviceDensity::logp", 0, value)
    }

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}

/// A log density whose evaluation can be queued and waited for separately,
/// so that one thread can have several in flight: a device's chains
/// interleaved ([`Sampler::interleave`](super::Sampler::interleave),
/// [`Model::interleaved_density`](super::Model::interleaved_density)).
///
/// A density that replays recorded device work can leave the replay to its
/// caller ([`prepare`](Self::prepare)), which then queues several chains'
/// replays together ([`ReplayBatch`](clfuse_core::ReplayBatch)).
pub trait Interleave {
    /// Queues an evaluation at `position`.
    fn start(&mut self, position: &[f64]) -> Result<()>;
    /// Waits for the evaluation last started, writes its gradient and
    /// returns its value.
    fn finish(&mut self, gradient: &mut [f64]) -> Result<f64>;
    /// Begins an evaluation at `position`: `true` when it replays the
    /// recording [`replaying`](Self::replaying) gives, which the caller
    /// queues and hands back by [`queued`](Self::queued); `false` when it
    /// started as [`start`](Self::start) starts it. By default it starts.
    fn prepare(&mut self, position: &[f64]) -> Result<bool> {
        self.start(position).map(|()| false)
    }
    /// The recording an evaluation [`prepare`](Self::prepare)d replays.
    fn replaying(&self) -> Option<&Recording> {
        None
    }
    /// The reads of the replay the caller queued for the evaluation
    /// [`prepare`](Self::prepare) began; [`finish`](Self::finish) waits
    /// for them.
    fn queued(&mut self, reads: QueuedReads) -> Result<()> {
        drop(reads);
        Err(Error::InvalidArgument {
            function: "Interleave::queued",
            argument: "self",
            reason: "this density does not leave its replays to the caller".into(),
        })
    }
}

impl<D: Interleave + ?Sized> Interleave for Box<D> {
    fn start(&mut self, position: &[f64]) -> Result<()> {
        (**self).start(position)
    }

    fn finish(&mut self, gradient: &mut [f64]) -> Result<f64> {
        (**self).finish(gradient)
    }

    fn prepare(&mut self, position: &[f64]) -> Result<bool> {
        (**self).prepare(position)
    }

    fn replaying(&self) -> Option<&Recording> {
        (**self).replaying()
    }

    fn queued(&mut self, reads: QueuedReads) -> Result<()> {
        (**self).queued(reads)
    }
}

impl<F: FnMut(&Var) -> Result<Var>> Interleave for DeviceDensity<F> {
    fn start(&mut self, position: &[f64]) -> Result<()> {
        DeviceDensity::start(self, position)
    }

    fn prepare(&mut self, position: &[f64]) -> Result<bool> {
        DeviceDensity::prepare(self, position)
    }

    fn replaying(&self) -> Option<&Recording> {
        self.replay.recording_for(&self.theta)
    }

    fn queued(&mut self, reads: QueuedReads) -> Result<()> {
        self.started = Some(self.replay.replayed(&self.theta, reads)?);
        Ok(())
    }

    fn finish(&mut self, gradient: &mut [f64]) -> Result<f64> {
        DeviceDensity::finish(self, gradient)
    }
}
