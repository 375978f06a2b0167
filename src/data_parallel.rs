//! Data parallelism over several devices: rows of a data set split across
//! devices in proportion to their measured speed, each part evaluated on
//! its own device (one host thread per device), partial results combined
//! on the host.
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
use std::ops::Range;
use std::time::Instant;

/// Devices sharing one data set, each with a weight (its share of the rows).
#[derive(Debug, Clone)]
pub struct DataParallel {
    devices: Vec<Device>,
    weights: Vec<f64>,
}

impl DataParallel {
    /// The devices with equal weights (see [`calibrate`](Self::calibrate)).
    pub fn new(devices: &[Device]) -> Result<Self> {
        Self::with_weights(devices, &vec![1.0; devices.len()])
    }

    /// The devices with given weights (any positive scale).
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
        Ok(DataParallel {
            devices: devices.to_vec(),
            weights: weights.to_vec(),
        })
    }

    /// The devices, in part order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The weights, in part order.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Sets each device's weight to its speed on `probe`: `probe(device)`
    /// runs once on every device to warm up (compiles), then `repeats`
    /// times timed, devices one after another; the weight is the inverse of
    /// the fastest time. The probe should be the real work on a sample of
    /// the rows, each device's own copy.
    pub fn calibrate(
        &mut self,
        repeats: usize,
        probe: impl Fn(Device) -> Result<()>,
    ) -> Result<&[f64]> {
        let mut weights = Vec::with_capacity(self.devices.len());
        for &device in &self.devices {
            device.run(|| probe(device))?;
            device.finish()?;
            let mut best = f64::INFINITY;
            for _ in 0..repeats.max(1) {
                let start = Instant::now();
                device.run(|| probe(device))?;
                device.finish()?;
                best = best.min(start.elapsed().as_secs_f64());
            }
            weights.push(1.0 / best.max(1e-9));
        }
        self.weights = weights;
        Ok(&self.weights)
    }

    /// Splits `rows` into consecutive ranges, one per device, in proportion
    /// to the weights (the last takes the rounding remainder; a part may be
    /// empty).
    ///
    /// ```
    /// use clfuse::data_parallel::DataParallel;
    /// let d = clfuse::Device::default_device()?;
    /// let p = DataParallel::with_weights(&[d, d], &[3.0, 1.0])?;
    /// assert_eq!(p.split(10), vec![0..8, 8..10]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn split(&self, rows: usize) -> Vec<Range<usize>> {
        let total: f64 = self.weights.iter().sum();
        let mut start = 0;
        let mut seen = 0.0;
        let last = self.weights.len() - 1;
        self.weights
            .iter()
            .enumerate()
            .map(|(k, w)| {
                seen += w;
                let end = if k == last {
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

    /// Runs `work(part, device)` for every part at once, each on its own
    /// host thread with its device current, and returns the results in
    /// part order (the first error, if any).
    pub fn map<R: Send>(&self, work: impl Fn(usize, Device) -> Result<R> + Sync) -> Result<Vec<R>> {
        let work = &work;
        std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .devices
                .iter()
                .enumerate()
                .map(|(part, &device)| scope.spawn(move || device.run(|| work(part, device))))
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle.join().unwrap_or_else(|_| {
                        Err(Error::InvalidArgument {
                            function: "DataParallel::map",
                            argument: "work",
                            reason: "a part's work panicked".into(),
                        })
                    })
                })
                .collect()
        })
    }

    /// Evaluates a GLM over row-split data: `glm(part)` computes part
    /// `part`'s [`GlmOutput`] (on its device, with a scalar intercept); the
    /// values and the gradients with respect to the shared parameters
    /// (`alpha` as a scalar, `beta`, and a scalar auxiliary parameter) are
    /// summed. Per-observation gradients (`x`, a vector `alpha`) stay with
    /// their parts and are not combined.
    pub fn glm(&self, glm: impl Fn(usize) -> Result<GlmOutput> + Sync) -> Result<GlmTotals> {
        let outputs = self.map(|part, _| {
            let out = glm(part)?;
            let read = |m: &Option<MatrixCl<f64>>| m.as_ref().map(MatrixCl::read_later).transpose();
            let (alpha, beta, aux) = (read(&out.d_alpha)?, read(&out.d_beta)?, read(&out.d_aux)?);
            let wait = |r: Option<clfuse_core::PendingRead<f64>>| r.map(|r| r.wait()).transpose();
            Ok((out.value, wait(alpha)?, wait(beta)?, wait(aux)?))
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
