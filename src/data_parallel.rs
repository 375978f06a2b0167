//! Data parallelism over several devices: rows of a data set split across
//! devices in proportion to their measured speed, each part evaluated on
//! its own device, partial results combined on the host.
//!
//! The parts of one call run at once: each on a worker thread of the
//! split's own pool (started once, so a call starts no thread and each
//! worker's per-device caches stay warm), the last part on the calling
//! thread. Devices share no lock on the launch path (each has its own
//! ordering lock), and each part waits for its own device once. A split
//! pays a hand-off (waking the workers, joining them), which
//! [`calibrate`](DataParallel::calibrate) measures: [`split`](DataParallel::split)
//! gives every row to the fastest device whenever that is predicted to be
//! quicker than splitting. Every part a call runs is timed: after a
//! sampler's warm-up, [`recalibrate`](DataParallel::recalibrate) refits the
//! cost models to what the real calls cost (online calibration).
//!
//! ```
//! use clfuse::data_parallel::DataParallel;
//! use clfuse::prelude::*;
//! use clfuse::Device;
//! let parallel = DataParallel::new(&[Device::default_device()?])?;
//! let host: Vec<f64> = (0..10).map(f64::from).collect();
//! let parts = parallel.upload_rows(&host, 10, 1)?;
//! let sums = parallel.map(|part, _device| sum(&parts[part]))?;
//! assert_eq!(sums.iter().sum::<f64>(), 45.0);
//! # Ok::<(), clfuse::Error>(())
//! ```

use crate::glm::GlmOutput;
use clfuse_core::{ClType, Device, Error, MatrixCl, Result};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What one part of the work costs on a device: a fixed time per call
/// (launches, read-backs, thread hand-off) plus a time per row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Seconds per call whatever the rows.
    pub fixed_s: f64,
    /// Seconds per row.
    pub per_row_s: f64,
}

impl Cost {
    /// The time for `rows` rows.
    pub fn time(&self, rows: usize) -> f64 {
        self.fixed_s + self.per_row_s * rows as f64
    }
}

/// Devices sharing one data set, each with a cost model that decides its
/// share of the rows.
#[derive(Debug, Clone)]
pub struct DataParallel {
    devices: Vec<Device>,
    costs: Vec<Cost>,
    /// Seconds a call with more than one part pays to hand the parts to
    /// the workers and collect them.
    handoff_s: f64,
    /// One worker per device but the last (whose part runs on the caller).
    workers: Arc<rayon::ThreadPool>,
    /// Per device, the fastest time seen for each number of rows: from
    /// [`calibrate`](Self::calibrate) and from every part [`glm`](Self::glm)
    /// ran, which [`recalibrate`](Self::recalibrate) fits.
    observed: Arc<Mutex<Vec<BTreeMap<usize, f64>>>>,
}

impl DataParallel {
    /// The devices with equal speeds and no fixed cost (see [`calibrate`](Self::calibrate)).
    pub fn new(devices: &[Device]) -> Result<Self> {
        Self::with_weights(devices, &vec![1.0; devices.len()])
    }

    /// The devices with given relative speeds (any positive scale) and no
    /// fixed cost: rows split in proportion to the weights.
    ///
    /// ```
    /// use clfuse::data_parallel::DataParallel;
    /// let d = clfuse::Device::default_device()?;
    /// assert!(DataParallel::with_weights(&[d], &[0.0]).is_err());
    /// assert!(DataParallel::with_weights(&[d, d], &[1.0]).is_err());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn with_weights(devices: &[Device], weights: &[f64]) -> Result<Self> {
        let invalid = |reason: String| Error::InvalidArgument {
            function: "DataParallel::with_weights",
            argument: "weights",
            reason,
        };
        if devices.is_empty() {
            return Err(Error::InvalidArgument {
                function: "DataParallel::with_weights",
                argument: "devices",
                reason: "at least one device is needed".into(),
            });
        }
        if weights.len() != devices.len() {
            return Err(invalid(format!(
                "{} weights for {} devices",
                weights.len(),
                devices.len()
            )));
        }
        if let Some((k, w)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !(w.is_finite() && **w > 0.0))
        {
            return Err(invalid(format!(
                "weight {k} is {w}; weights must be positive and finite"
            )));
        }
        let workers = rayon::ThreadPoolBuilder::new()
            .num_threads(devices.len().saturating_sub(1).max(1))
            .thread_name(|k| format!("clfuse-part-{k}"))
            .build()
            .map_err(|e| Error::Unsupported {
                what: format!(
                    "DataParallel::with_weights: no worker threads could be started: {e}"
                ),
            })?;
        Ok(DataParallel {
            devices: devices.to_vec(),
            handoff_s: 0.0,
            workers: Arc::new(workers),
            observed: Arc::new(Mutex::new(vec![BTreeMap::new(); devices.len()])),
            costs: weights
                .iter()
                .map(|w| Cost {
                    fixed_s: 0.0,
                    per_row_s: 1.0 / w,
                })
                .collect(),
        })
    }

    /// The devices with known cost models (from an earlier
    /// [`calibrate`](Self::calibrate), say).
    ///
    /// ```
    /// use clfuse::data_parallel::{Cost, DataParallel};
    /// let d = clfuse::Device::default_device()?;
    /// let fast = Cost { fixed_s: 50e-6, per_row_s: 1e-10 };
    /// let slow = Cost { fixed_s: 2e-3, per_row_s: 2e-10 };
    /// let p = DataParallel::with_costs(&[d, d], &[fast, slow])?;
    /// // The slow device's fixed cost alone exceeds the fast one's whole call.
    /// assert_eq!(p.split(1_000_000), vec![0..1_000_000, 1_000_000..1_000_000]);
    /// // With enough rows both work, finishing together.
    /// let parts = p.split(1_000_000_000);
    /// let (a, b) = (fast.time(parts[0].len()), slow.time(parts[1].len()));
    /// assert!((a - b).abs() < 1e-3 * a);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn with_costs(devices: &[Device], costs: &[Cost]) -> Result<Self> {
        let mut parallel = Self::new(devices)?;
        if costs.len() != devices.len() {
            return Err(Error::InvalidArgument {
                function: "DataParallel::with_costs",
                argument: "costs",
                reason: format!("{} costs for {} devices", costs.len(), devices.len()),
            });
        }
        if let Some((k, c)) = costs.iter().enumerate().find(|(_, c)| {
            !(c.fixed_s.is_finite()
                && c.fixed_s >= 0.0
                && c.per_row_s.is_finite()
                && c.per_row_s > 0.0)
        }) {
            return Err(Error::InvalidArgument {
                function: "DataParallel::with_costs",
                argument: "costs",
                reason: format!("cost {k} is {c:?}; times must be finite, per-row times positive"),
            });
        }
        parallel.costs = costs.to_vec();
        Ok(parallel)
    }

    /// The devices, in part order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// Each device's cost model, in part order.
    pub fn costs(&self) -> &[Cost] {
        &self.costs
    }

    /// Measures each device's cost model: `probe(part, rows)` runs the real
    /// work on `rows` rows with part `part`'s device current (its data
    /// already there: upload outside the probe), once to warm up, then
    /// `repeats` times timed at each of the two sizes in `rows`; the fixed
    /// and per-row costs come from the fastest times. Devices are measured
    /// one after another, then all at once at the smaller size for the
    /// hand-off ([`handoff_s`](Self::handoff_s)), so `probe` is `Sync`.
    pub fn calibrate(
        &mut self,
        rows: (usize, usize),
        repeats: usize,
        probe: impl Fn(usize, usize) -> Result<()> + Sync,
    ) -> Result<&[Cost]> {
        let (small, large) = (rows.0.min(rows.1), rows.0.max(rows.1));
        if small == large {
            return Err(Error::InvalidArgument {
                function: "DataParallel::calibrate",
                argument: "rows",
                reason: format!("two different sizes are needed, got {small} twice"),
            });
        }
        let mut costs = Vec::with_capacity(self.devices.len());
        for (part, &device) in self.devices.iter().enumerate() {
            let fastest = |n: usize| -> Result<f64> {
                device.run(|| probe(part, n))?;
                device.finish()?;
                let mut best = f64::INFINITY;
                for _ in 0..repeats.max(1) {
                    let start = Instant::now();
                    device.run(|| probe(part, n))?;
                    device.finish()?;
                    best = best.min(start.elapsed().as_secs_f64());
                }
                Ok(best)
            };
            let (t_small, t_large) = (fastest(small)?, fastest(large)?);
            self.observe(part, small, t_small);
            self.observe(part, large, t_large);
            let per_row_s = ((t_large - t_small) / (large - small) as f64).max(1e-15);
            let fixed_s = (t_small - per_row_s * small as f64).max(0.0);
            costs.push(Cost { fixed_s, per_row_s });
        }
        self.costs = costs;
        // The hand-off: every device running the small probe at once, less
        // the slowest of them alone. It holds what concurrency itself costs
        // (waking the workers, the drivers of several devices at once).
        self.handoff_s = if self.devices.len() > 1 {
            let all: Vec<usize> = (0..self.devices.len()).collect();
            let mut best = f64::INFINITY;
            for _ in 0..repeats.max(1) + 1 {
                let start = Instant::now();
                self.run_parts(&all, &|part, device| {
                    probe(part, small)?;
                    device.finish()
                })?;
                best = best.min(start.elapsed().as_secs_f64());
            }
            let slowest_alone = self.costs.iter().map(|c| c.time(small)).fold(0.0, f64::max);
            (best - slowest_alone).max(0.0)
        } else {
            0.0
        };
        Ok(&self.costs)
    }

    /// Records that device `part` took `seconds` for `rows` rows (the
    /// fastest time per size is kept).
    fn observe(&self, part: usize, rows: usize, seconds: f64) {
        let mut observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(times) = observed.get_mut(part) {
            let best = times.entry(rows).or_insert(seconds);
            *best = best.min(seconds);
        }
    }

    /// Each device's observations, as (rows, fastest seconds) by rows:
    /// [`calibrate`](Self::calibrate)'s samples and the parts of every
    /// [`glm`](Self::glm) call since.
    pub fn observations(&self) -> Vec<Vec<(usize, f64)>> {
        let observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        observed
            .iter()
            .map(|times| times.iter().map(|(&r, &t)| (r, t)).collect())
            .collect()
    }

    /// Refits each device's cost model to its [`observations`](Self::observations)
    /// (least squares over the fastest time per size; a device seen at
    /// fewer than two sizes keeps its model). Called after a sampler's
    /// warm-up, it folds what the real calls cost into the model: when
    /// [`split`](Self::split) then places the rows differently, upload the
    /// parts again to follow it. Returns whether any model changed.
    ///
    /// ```
    /// use clfuse::data_parallel::DataParallel;
    /// let d = clfuse::Device::default_device()?;
    /// let mut p = DataParallel::new(&[d])?;
    /// // Nothing observed yet: nothing to fit.
    /// assert!(!p.recalibrate());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn recalibrate(&mut self) -> bool {
        let observations = self.observations();
        let mut changed = false;
        for (cost, points) in self.costs.iter_mut().zip(&observations) {
            if let Some(fitted) = fit(points)
                && fitted != *cost
            {
                *cost = fitted;
                changed = true;
            }
        }
        changed
    }

    /// What a call with more than one part pays on top of its slowest
    /// part (seconds): waking the workers and joining them, and what the
    /// devices cost each other when driven at once, measured by
    /// [`calibrate`](Self::calibrate) (0 until then).
    ///
    /// ```
    /// let d = clfuse::Device::default_device()?;
    /// let p = clfuse::data_parallel::DataParallel::new(&[d, d])?;
    /// assert_eq!(p.handoff_s(), 0.0);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn handoff_s(&self) -> f64 {
        self.handoff_s
    }

    /// Splits `rows` into consecutive ranges, one per device, so that the
    /// slowest part finishes as early as the cost models allow: a device
    /// whose fixed cost alone exceeds that time gets no rows (its range is
    /// empty); without fixed costs the split is proportional to speed.
    /// Unless the split plus its [`handoff_s`](Self::handoff_s) is predicted
    /// to finish at least 5% sooner than the fastest device alone, that
    /// device gets every row: a cost model fitted to noisy timings must not
    /// turn a call into a slower split.
    ///
    /// ```
    /// use clfuse::data_parallel::DataParallel;
    /// let d = clfuse::Device::default_device()?;
    /// let p = DataParallel::with_weights(&[d, d], &[3.0, 1.0])?;
    /// assert_eq!(p.split(10), vec![0..8, 8..10]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn split(&self, rows: usize) -> Vec<Range<usize>> {
        // Rows device k takes when every part may run until `t` seconds.
        let share = |cost: &Cost, t: f64| ((t - cost.fixed_s) / cost.per_row_s).max(0.0);
        let capacity = |t: f64| self.costs.iter().map(|c| share(c, t)).sum::<f64>();
        let mut low = 0.0;
        let mut high = self
            .costs
            .iter()
            .map(|c| c.time(rows))
            .fold(f64::INFINITY, f64::min);
        for _ in 0..200 {
            let middle = 0.5 * (low + high);
            if capacity(middle) >= rows as f64 {
                high = middle;
            } else {
                low = middle;
            }
        }
        let mut shares: Vec<f64> = self.costs.iter().map(|c| share(c, high)).collect();
        let used = shares.iter().filter(|s| **s > 0.0).count();
        let (fastest, alone) = self.costs.iter().map(|c| c.time(rows)).enumerate().fold(
            (0, f64::INFINITY),
            |best, (k, t)| if t < best.1 { (k, t) } else { best },
        );
        if used > 1 && alone <= (high + self.handoff_s) * (1.0 + SPLIT_MARGIN) {
            shares = vec![0.0; self.costs.len()];
            shares[fastest] = 1.0;
        }
        let total: f64 = shares.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        // Cumulative rounding keeps the parts consecutive and the total exact.
        let mut start = 0;
        let mut seen = 0.0;
        shares
            .iter()
            .enumerate()
            .map(|(k, s)| {
                seen += s;
                let end = if k + 1 == shares.len() {
                    rows
                } else {
                    ((rows as f64 * seen / total).round() as usize).clamp(start, rows)
                };
                let part = start..end;
                start = end;
                part
            })
            .collect()
    }

    /// Uploads the rows of a column-major `rows x cols` host matrix, part k
    /// onto device k (each part a column-major `len x cols` matrix).
    pub fn upload_rows<T: ClType>(
        &self,
        host: &[T],
        rows: usize,
        cols: usize,
    ) -> Result<Vec<MatrixCl<T>>> {
        if rows.checked_mul(cols) != Some(host.len()) {
            return Err(Error::SizeMismatch {
                function: "DataParallel::upload_rows",
                argument: "host",
                expected: rows.saturating_mul(cols),
                actual: host.len(),
            });
        }
        self.split(rows)
            .into_iter()
            .zip(&self.devices)
            .map(|(part, device)| {
                let mut block = Vec::with_capacity(part.len() * cols);
                for j in 0..cols {
                    block.extend_from_slice(&host[j * rows + part.start..j * rows + part.end]);
                }
                device.run(|| MatrixCl::from_slice(part.len(), cols, &block))
            })
            .collect()
    }

    /// Uploads the same host matrix to every device (parameters every part
    /// reads, such as `beta`).
    pub fn upload_everywhere<T: ClType>(
        &self,
        host: &[T],
        rows: usize,
        cols: usize,
    ) -> Result<Vec<MatrixCl<T>>> {
        self.devices
            .iter()
            .map(|device| device.run(|| MatrixCl::from_slice(rows, cols, host)))
            .collect()
    }

    /// Runs `work(part, device)` for every part at once, each with its
    /// device current (on the split's worker threads and the calling
    /// thread), and returns the results in part order (the first error, if
    /// any).
    pub fn map<R: Send>(&self, work: impl Fn(usize, Device) -> Result<R> + Sync) -> Result<Vec<R>> {
        let all: Vec<usize> = (0..self.devices.len()).collect();
        self.run_parts(&all, &work)
    }

    /// Runs `work` for the listed parts at once: the last on the calling
    /// thread, the others on the workers (none when there is one part).
    fn run_parts<R: Send>(
        &self,
        parts: &[usize],
        work: &(impl Fn(usize, Device) -> Result<R> + Sync),
    ) -> Result<Vec<R>> {
        let run = |part: usize| -> Result<R> {
            let device = self.devices[part];
            // A panicking part becomes that part's error; the others finish.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                device.run(|| work(part, device))
            }))
            .unwrap_or_else(|_| {
                Err(Error::InvalidArgument {
                    function: "DataParallel::map",
                    argument: "work",
                    reason: format!("part {part}'s work panicked"),
                })
            })
        };
        let Some((&last, others)) = parts.split_last() else {
            return Ok(Vec::new());
        };
        let mut results: Vec<Option<Result<R>>> = (0..parts.len()).map(|_| None).collect();
        let (theirs, mine) = results.split_at_mut(others.len());
        self.workers.in_place_scope(|scope| {
            for (slot, &part) in theirs.iter_mut().zip(others) {
                let run = &run;
                scope.spawn(move |_| *slot = Some(run(part)));
            }
            mine[0] = Some(run(last));
        });
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(Error::InvalidArgument {
                        function: "DataParallel::map",
                        argument: "work",
                        reason: "a part did not run".into(),
                    })
                })
            })
            .collect()
    }

    /// Evaluates a GLM over `rows` rows split by [`split`](Self::split)
    /// (as [`upload_rows`](Self::upload_rows) placed them): `glm(part)`
    /// computes part `part`'s [`GlmOutput`] on its device, with a scalar
    /// intercept. Parts without rows are skipped (ask the GLM for
    /// [`GlmOptions::prefetch`](crate::glm::GlmOptions::prefetch): each
    /// part's value and gradients then reach the host in one round trip).
    /// The values and the
    /// gradients with respect to the shared parameters (`alpha` as a
    /// scalar, `beta`, a scalar auxiliary parameter) are summed;
    /// per-observation gradients (`x`, a vector `alpha`) stay with their
    /// parts and are not combined.
    pub fn glm(
        &self,
        rows: usize,
        glm: impl Fn(usize) -> Result<GlmOutput> + Sync,
    ) -> Result<GlmTotals> {
        let parts = self.split(rows);
        let active: Vec<usize> = (0..parts.len()).filter(|&k| !parts[k].is_empty()).collect();
        let outputs = self.run_parts(&active, &|part, _| {
            let start = Instant::now();
            let mut out = glm(part)?;
            // Queued before any wait: with `GlmOptions::prefetch` the
            // intercept's and beta's reads are already on their way.
            let aux = out.d_aux.as_ref().map(MatrixCl::read_later).transpose()?;
            let (alpha, beta) = out.host_gradients()?;
            let aux = aux.map(|r| r.wait()).transpose()?;
            self.observe(part, parts[part].len(), start.elapsed().as_secs_f64());
            Ok((out.value, alpha, beta, aux))
        })?;
        let mut totals = GlmTotals::default();
        for (value, alpha, beta, aux) in outputs {
            totals.value += value;
            add_into(&mut totals.d_alpha, alpha, "d_alpha")?;
            add_into(&mut totals.d_beta, beta, "d_beta")?;
            add_into(&mut totals.d_aux, aux, "d_aux")?;
        }
        Ok(totals)
    }
}

/// How much faster than the fastest device alone a split must be predicted
/// to be before [`DataParallel::split`] takes it.
const SPLIT_MARGIN: f64 = 0.05;

/// The least-squares line `seconds = fixed + per_row * rows` through
/// `points`, with a positive per-row time and a non-negative fixed one;
/// `None` below two sizes.
fn fit(points: &[(usize, f64)]) -> Option<Cost> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mean_r = points.iter().map(|(r, _)| *r as f64).sum::<f64>() / n;
    let mean_t = points.iter().map(|(_, t)| t).sum::<f64>() / n;
    let (mut srr, mut srt) = (0.0, 0.0);
    for &(r, t) in points {
        let dr = r as f64 - mean_r;
        srr += dr * dr;
        srt += dr * (t - mean_t);
    }
    let per_row_s = (srt / srr).max(1e-15);
    let fixed_s = (mean_t - per_row_s * mean_r).max(0.0);
    (per_row_s.is_finite() && fixed_s.is_finite()).then_some(Cost { fixed_s, per_row_s })
}

/// Adds a part's gradient into the running total (same length required).
fn add_into(total: &mut Option<Vec<f64>>, part: Option<Vec<f64>>, name: &str) -> Result<()> {
    let Some(part) = part else { return Ok(()) };
    match total {
        None => *total = Some(part),
        Some(sum) if sum.len() == part.len() => {
            sum.iter_mut().zip(&part).for_each(|(s, p)| *s += p);
        }
        Some(sum) => {
            return Err(Error::InvalidArgument {
                function: "DataParallel::glm",
                argument: "glm",
                reason: format!(
                    "parts returned {name} of {} and {} elements: only gradients of shared parameters can be summed",
                    sum.len(),
                    part.len()
                ),
            });
        }
    }
    Ok(())
}

/// A GLM's value and shared-parameter gradients summed over the parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GlmTotals {
    /// The log density of all rows.
    pub value: f64,
    /// The gradient with respect to a scalar `alpha`, when asked for.
    pub d_alpha: Option<Vec<f64>>,
    /// The gradient with respect to `beta`, when asked for.
    pub d_beta: Option<Vec<f64>>,
    /// The gradient with respect to a scalar auxiliary parameter, when asked for.
    pub d_aux: Option<Vec<f64>>,
}
