//! A sampler's gradient call, replayed: after two calls did the same device
//! work, later calls issue that work again on the same buffers instead of
//! building it again (see [`clfuse_core::record`]).

use crate::rev::Var;
use crate::rev::gradient::{
    ReadLayout, check_batch, check_column, columns, split_batch, split_value, split_verdicts,
};
use clfuse_core::{Error, QueuedReads, ReadBack, Recording, Result, record};

/// After this many recordings that did not match the one before, a
/// [`Replay`] stops recording: the model's work changes from call to call.
const MAX_MISMATCHES: usize = 8;

/// Replays the device work of [`value_and_grad_to_host`]-like calls on one
/// parameter column `theta`, as `jax.jit` replays a traced function.
///
/// The first calls run as usual and record the commands they queue. Once
/// two consecutive recordings match (same kernels, ranges, scalars,
/// written data, and the same arguments sharing a buffer), later calls
/// replay the last one: the host writes `theta`, issues the recorded
/// commands and reads the result, with no expression binding, tape or
/// reverse planning. Buffers the model reads (data, `theta`) are read as
/// they are at each call.
///
/// The model must therefore do the same device work at every position,
/// as with `jax.jit`: shapes fixed, no choice made on the host from device
/// values. A call that reads device values to the host before its end is
/// never replayed (it always runs as usual); a model whose work changes
/// between calls is caught by the comparison of two recordings, and after
/// eight such changes is no longer recorded. When a replayed
/// call's in-kernel check fails, the call runs again as usual (which names
/// the failing check) and recording starts over. `FUSION_REPLAY=0` turns
/// replays off.
///
/// [`value_and_grad_to_host`]: crate::rev::value_and_grad_to_host
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{Replay, Var};
/// let theta = Var::new(MatrixCl::from_slice(2, 1, &[0.0f64, 0.0])?);
/// let mut replay = Replay::new();
/// let mut gradient = [0.0; 2];
/// for (x, y) in [(1.0, 2.0), (3.0, -1.0), (0.5, 0.25), (2.0, 2.0)] {
///     theta.value().write(&[x, y])?;
///     let value = replay.value_and_grad_to_host(
///         &theta,
///         || colwise_sum(-0.5f64 * square(&theta)).eval(),
///         &mut gradient,
///     )?;
///     assert_eq!(value, -0.5 * (x * x + y * y));
///     assert_eq!(gradient, [-x, -y]);
/// }
/// assert!(replay.is_replaying());
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[derive(Debug)]
pub struct Replay {
    state: State,
    mismatches: usize,
    /// Why it stopped recording, once it did.
    stopped: Option<&'static str>,
}

/// A gradient call begun by [`Replay::start`], to be waited for by
/// [`Replay::finish_to_host`].
#[derive(Debug)]
pub struct StartedCall(Started);

#[derive(Debug)]
enum Started {
    /// It ran whole: its columns.
    Done(Vec<f64>),
    /// Replayed and queued: its reads, and the recording it replayed.
    Queued {
        reads: QueuedReads,
        recorded: Recorded,
    },
}

#[derive(Debug)]
enum State {
    /// Recording calls; the last recording, to compare with the next.
    Recording(Option<Recorded>),
    /// Replaying this recording.
    Replaying(Recorded),
    /// Calls run as usual.
    Off,
}

/// One call's recording and what it needs to be read again.
#[derive(Debug)]
struct Recorded {
    recording: Recording,
    /// The parameter buffer the recording reads.
    theta: u64,
    /// The shape of `theta` it was recorded for.
    shape: (usize, usize),
    /// The read's layout: `dim + 1` rows per column and this many verdicts.
    verdicts: usize,
}

impl Default for Replay {
    fn default() -> Self {
        Self::new()
    }
}

impl Replay {
    /// A replay that starts recording at its first call (unless
    /// `FUSION_REPLAY=0`).
    ///
    /// ```
    /// assert!(!clfuse_ops::rev::Replay::new().is_replaying());
    /// ```
    pub fn new() -> Self {
        let on = clfuse_core::Runtime::get()
            .ok()
            .and_then(|rt| rt.tuning().replay)
            .unwrap_or(true);
        Replay {
            state: if on {
                State::Recording(None)
            } else {
                State::Off
            },
            mismatches: 0,
            stopped: (!on).then_some("FUSION_REPLAY=0"),
        }
    }

    /// A replay that never replays: every call runs as usual.
    ///
    /// ```
    /// assert!(!clfuse_ops::rev::Replay::off().is_replaying());
    /// ```
    pub fn off() -> Self {
        Replay {
            state: State::Off,
            mismatches: 0,
            stopped: Some("made by Replay::off"),
        }
    }

    /// Whether the next call replays a recording.
    pub fn is_replaying(&self) -> bool {
        matches!(self.state, State::Replaying(_))
    }

    /// Why calls are no longer recorded (they run as usual), once they are
    /// not: a read back before the end of a call, work that changed from
    /// call to call, `FUSION_REPLAY=0`.
    ///
    /// ```
    /// assert_eq!(clfuse_ops::rev::Replay::off().stopped(), Some("made by Replay::off"));
    /// ```
    pub fn stopped(&self) -> Option<&'static str> {
        self.stopped
    }

    /// [`value_and_grad_to_host`](crate::rev::value_and_grad_to_host),
    /// recorded or replayed.
    pub fn value_and_grad_to_host(
        &mut self,
        theta: &Var<f64>,
        mut f: impl FnMut() -> Result<Var<f64>>,
        gradient: &mut [f64],
    ) -> Result<f64> {
        const F: &str = "Replay::value_and_grad_to_host";
        check_column(F, theta, gradient)?;
        let started = self.begin(F, theta, &mut f)?;
        self.end(F, started, theta, &mut f, gradient)
    }

    /// [`batch_value_and_grad_to_host`](crate::rev::batch_value_and_grad_to_host),
    /// recorded or replayed.
    pub fn batch_value_and_grad_to_host(
        &mut self,
        theta: &Var<f64>,
        mut f: impl FnMut() -> Result<Var<f64>>,
        values: &mut [f64],
        gradients: &mut [f64],
    ) -> Result<()> {
        const F: &str = "Replay::batch_value_and_grad_to_host";
        let (dim, _) = check_batch(F, theta, values, gradients)?;
        let host = self.columns(F, theta, &mut f)?;
        split_batch(&host, dim, values, gradients);
        Ok(())
    }

    /// [`value_and_grad_to_host`](Self::value_and_grad_to_host) in two
    /// halves: `start` queues the call (a replayed one is only queued, not
    /// waited for; any other runs whole), [`finish_to_host`](Self::finish_to_host)
    /// waits for it. Between the two the host may queue other work, such
    /// as another chain's call: a sampler's chains on one device then take
    /// one round trip per round instead of one each.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::rev::{Replay, Var};
    /// let (a, b) = (Var::new(MatrixCl::from_slice(1, 1, &[3.0])?), Var::new(MatrixCl::from_slice(1, 1, &[5.0])?));
    /// let (mut ra, mut rb) = (Replay::new(), Replay::new());
    /// let square = |t: &Var| colwise_sum(square(t)).eval();
    /// let mut g = [0.0];
    /// for _ in 0..4 {
    ///     let (started_a, started_b) = (ra.start(&a, || square(&a))?, rb.start(&b, || square(&b))?);
    ///     assert_eq!(rb.finish_to_host(started_b, &b, || square(&b), &mut g)?, 25.0);
    ///     assert_eq!(g, [10.0]);
    ///     assert_eq!(ra.finish_to_host(started_a, &a, || square(&a), &mut g)?, 9.0);
    ///     assert_eq!(g, [6.0]);
    /// }
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn start(
        &mut self,
        theta: &Var<f64>,
        mut f: impl FnMut() -> Result<Var<f64>>,
    ) -> Result<StartedCall> {
        self.begin("Replay::start", theta, &mut f)
    }

    /// Waits for a call [`start`](Self::start) began at `theta` (the same
    /// `theta` and model `f`: a replayed call whose checks failed runs
    /// again as usual, for its error), writes the gradient and returns the
    /// value.
    pub fn finish_to_host(
        &mut self,
        started: StartedCall,
        theta: &Var<f64>,
        mut f: impl FnMut() -> Result<Var<f64>>,
        gradient: &mut [f64],
    ) -> Result<f64> {
        const F: &str = "Replay::finish_to_host";
        check_column(F, theta, gradient)?;
        self.end(F, started, theta, &mut f, gradient)
    }

    /// The recording a call at `theta` would replay now, if any: for
    /// queueing several chains' replays together
    /// ([`ReplayBatch`](clfuse_core::ReplayBatch)), whose reads then go to
    /// [`replayed`](Self::replayed).
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::rev::{Replay, Var};
    /// let theta = Var::new(MatrixCl::from_slice(1, 1, &[2.0f64])?);
    /// let f = || colwise_sum(square(&theta)).eval();
    /// let mut replay = Replay::new();
    /// let mut g = [0.0];
    /// for _ in 0..2 {
    ///     replay.value_and_grad_to_host(&theta, f, &mut g)?;
    /// }
    /// if let Some(recording) = replay.recording_for(&theta) {
    ///     let reads = recording.replay_queued()?;
    ///     let call = replay.replayed(&theta, reads)?;
    ///     assert_eq!(replay.finish_to_host(call, &theta, f, &mut g)?, 4.0);
    ///     assert_eq!(g, [4.0]);
    /// }
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn recording_for(&self, theta: &Var<f64>) -> Option<&Recording> {
        let here = (theta.value().buffer_id(), (theta.rows(), theta.cols()));
        match &self.state {
            State::Replaying(recorded) if (recorded.theta, recorded.shape) == here => {
                Some(&recorded.recording)
            }
            _ => None,
        }
    }

    /// The call whose replay of [`recording_for`](Self::recording_for)
    /// someone else queued, with its `reads`, to be waited for by
    /// [`finish_to_host`](Self::finish_to_host). An error when this replay
    /// has no recording for `theta`.
    pub fn replayed(&mut self, theta: &Var<f64>, reads: QueuedReads) -> Result<StartedCall> {
        let here = (theta.value().buffer_id(), (theta.rows(), theta.cols()));
        match std::mem::replace(&mut self.state, State::Recording(None)) {
            State::Replaying(recorded) if (recorded.theta, recorded.shape) == here => {
                Ok(StartedCall(Started::Queued { reads, recorded }))
            }
            other => {
                self.state = other;
                Err(Error::InvalidArgument {
                    function: "Replay::replayed",
                    argument: "theta",
                    reason: "this replay has no recording of a call at theta".into(),
                })
            }
        }
    }

    /// Starts a call: a replayed one queued, any other run whole.
    fn begin(
        &mut self,
        function: &'static str,
        theta: &Var<f64>,
        f: &mut impl FnMut() -> Result<Var<f64>>,
    ) -> Result<StartedCall> {
        let here = (theta.value().buffer_id(), (theta.rows(), theta.cols()));
        match std::mem::replace(&mut self.state, State::Recording(None)) {
            State::Replaying(recorded) if (recorded.theta, recorded.shape) == here => {
                // Should a read fail, the next call records afresh.
                let reads = recorded.recording.replay_queued()?;
                Ok(StartedCall(Started::Queued { reads, recorded }))
            }
            other => {
                self.state = other;
                Ok(StartedCall(Started::Done(
                    self.columns(function, theta, f)?,
                )))
            }
        }
    }

    /// Waits for a started call and splits its columns into the value
    /// (returned) and `gradient`.
    fn end(
        &mut self,
        function: &'static str,
        started: StartedCall,
        theta: &Var<f64>,
        f: &mut impl FnMut() -> Result<Var<f64>>,
        gradient: &mut [f64],
    ) -> Result<f64> {
        let host = match started.0 {
            Started::Done(host) => host,
            Started::Queued { reads, recorded } => {
                match read_columns(reads.wait()?, &recorded, theta.rows())? {
                    Some(host) => {
                        self.state = State::Replaying(recorded);
                        host
                    }
                    // A check failed: run as usual for its error, record again.
                    None => self.record(function, theta, f, None)?,
                }
            }
        };
        split_value(function, &host, gradient)
    }

    /// The columns `[value; gradient]` of one call (a batch's): replayed,
    /// recorded, or run as usual.
    fn columns(
        &mut self,
        function: &'static str,
        theta: &Var<f64>,
        f: &mut impl FnMut() -> Result<Var<f64>>,
    ) -> Result<Vec<f64>> {
        let here = (theta.value().buffer_id(), (theta.rows(), theta.cols()));
        // Should the call fail, the next one records afresh.
        match std::mem::replace(&mut self.state, State::Recording(None)) {
            State::Off => {
                self.state = State::Off;
                let mut layout = ReadLayout::default();
                columns(function, theta, theta.cols(), f, &mut layout)
            }
            State::Replaying(recorded) if (recorded.theta, recorded.shape) == here => {
                match replay_columns(&recorded, theta.rows())? {
                    Some(host) => {
                        self.state = State::Replaying(recorded);
                        Ok(host)
                    }
                    // A check failed: run as usual for its error, record again.
                    None => self.record(function, theta, f, None),
                }
            }
            State::Replaying(_) => self.record(function, theta, f, None),
            State::Recording(last) => self.record(function, theta, f, last),
        }
    }

    /// Runs one call as usual while recording it; replays from the next
    /// call on when the recording matches `last` (the previous call's).
    fn record(
        &mut self,
        function: &'static str,
        theta: &Var<f64>,
        f: &mut impl FnMut() -> Result<Var<f64>>,
        last: Option<Recorded>,
    ) -> Result<Vec<f64>> {
        let mut layout = ReadLayout::default();
        let (host, recording) = record(|| columns(function, theta, theta.cols(), f, &mut layout))?;
        // Only a call whose deferred checks passed at once is one pass of
        // the model (a failed check runs it again).
        let recorded = match recording {
            Ok(recording) if layout.evaluations == 1 => Recorded {
                recording,
                theta: theta.value().buffer_id(),
                shape: (theta.rows(), theta.cols()),
                verdicts: layout.verdicts,
            },
            Ok(_) => {
                self.state = State::Recording(None);
                return Ok(host);
            }
            // Not replayable (a read before the end, say): run as usual from now on.
            Err(why) => {
                self.state = State::Off;
                self.stopped = Some(why);
                return Ok(host);
            }
        };
        self.state = match last {
            Some(last)
                if last.recording.signature() == recorded.recording.signature()
                    && (last.theta, last.shape, last.verdicts)
                        == (recorded.theta, recorded.shape, recorded.verdicts) =>
            {
                State::Replaying(recorded)
            }
            None => State::Recording(Some(recorded)),
            Some(_) => {
                self.mismatches += 1;
                if self.mismatches >= MAX_MISMATCHES {
                    self.stopped = Some("its calls did different device work");
                    State::Off
                } else {
                    State::Recording(Some(recorded))
                }
            }
        };
        Ok(host)
    }
}

/// Replays `recorded` and splits its read: `None` when a check failed.
fn replay_columns(recorded: &Recorded, dim: usize) -> Result<Option<Vec<f64>>> {
    read_columns(recorded.recording.replay()?, recorded, dim)
}

/// The value and gradient columns of a replayed call's reads, or `None`
/// when one of its checks failed.
fn read_columns(reads: Vec<ReadBack>, recorded: &Recorded, dim: usize) -> Result<Option<Vec<f64>>> {
    let host = match reads.as_slice() {
        [read] => read.downcast_ref::<Vec<f64>>(),
        _ => None,
    }
    .ok_or_else(|| Error::InvalidArgument {
        function: "Replay",
        argument: "recording",
        reason: format!(
            "its reads gave {} results, not one column of doubles",
            reads.len()
        ),
    })?;
    Ok(split_verdicts(host, dim + 1, recorded.verdicts))
}
