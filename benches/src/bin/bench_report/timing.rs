//! Repetitions, medians and the per-measurement record.

use clfuse::{Result, Runtime};
use std::time::Instant;

/// One measured variant of one workload at one size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Record {
    pub workload: String,
    pub variant: String,
    pub n: usize,
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub repetitions: usize,
    /// Bytes that must move (inputs read once, outputs written once).
    pub bytes: f64,
    /// Floating-point operations, where meaningful (compute-bound workloads).
    pub flops: f64,
}

impl Record {
    pub fn gbps(&self) -> f64 {
        self.bytes / self.median_s / 1e9
    }
}

/// Times `f` (which enqueues work) `reps` times after one warm-up; each
/// repetition ends with `clFinish`, so device time is included.
pub fn measure(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64, f64)> {
    let rt = Runtime::get()?;
    f()?;
    rt.finish()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        f()?;
        rt.finish()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok(median_min_max(times))
}

/// The median, the least and the greatest of `times` (at least one), as
/// every row of the report gives them.
pub fn median_min_max(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

/// Times the very first call (kernel compilation included).
pub fn first_call(f: impl FnOnce() -> Result<()>) -> Result<f64> {
    let rt = Runtime::get()?;
    let start = Instant::now();
    f()?;
    rt.finish()?;
    Ok(start.elapsed().as_secs_f64())
}
