//! The mixture model of `mixture_estep` (seed 004): synthetic data, the
//! device E-step, and the serial and threaded CPU references. Shared by the
//! example and `bench_report --suite seeds`.

use clfuse::Result;
use clfuse::prelude::*;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};

pub const LOG_2PI: f64 = 1.837_877_066_409_345_3;

pub struct Mixture {
    pub n: usize,
    pub p: usize,
    pub k: usize,
    /// n x p, column-major.
    pub x: Vec<f64>,
    /// k x p means and standard deviations, column-major.
    pub mu: Vec<f64>,
    pub sigma: Vec<f64>,
    pub log_weight: Vec<f64>,
}

pub fn synthetic(n: usize, p: usize, k: usize) -> Mixture {
    let mut state = 0xd1b5_4a32_d192_ed03u64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mu: Vec<f64> = (0..k * p).map(|_| uniform() * 6.0 - 3.0).collect();
    let sigma: Vec<f64> = (0..k * p).map(|_| 0.5 + uniform()).collect();
    let raw: Vec<f64> = (0..k).map(|_| 0.2 + uniform()).collect();
    let total: f64 = raw.iter().sum();
    let log_weight = raw.iter().map(|w| (w / total).ln()).collect();
    let x = (0..n * p).map(|_| uniform() * 8.0 - 4.0).collect();
    Mixture {
        n,
        p,
        k,
        x,
        mu,
        sigma,
        log_weight,
    }
}

impl Mixture {
    /// `[-P/2; μ∘P]` (2p x k) and each component's constant (1 x k).
    pub fn expanded_parameters(&self) -> (Vec<f64>, Vec<f64>) {
        let (p, k) = (self.p, self.k);
        let mut w = vec![0.0; 2 * p * k];
        let mut constant = self.log_weight.clone();
        for c in 0..k {
            for j in 0..p {
                let (m, s) = (self.mu[c + k * j], self.sigma[c + k * j]);
                let precision = 1.0 / (s * s);
                w[j + 2 * p * c] = -0.5 * precision;
                w[p + j + 2 * p * c] = m * precision;
                constant[c] -= 0.5 * LOG_2PI + s.ln() + 0.5 * m * m * precision;
            }
        }
        (w, constant)
    }

    /// `[x², x]`, n x 2p.
    pub fn expanded_data(&self) -> Vec<f64> {
        let squares = self.x.iter().map(|v| v * v);
        squares.chain(self.x.iter().copied()).collect()
    }

    /// The serial CPU reference, row by row: each component's precision
    /// and constant computed once, then a plain loop (as a careful C
    /// programmer would write it, without SIMD intrinsics).
    pub fn serial(&self) -> Vec<f64> {
        let (n, p, k) = (self.n, self.p, self.k);
        let mut precision = vec![0.0; k * p];
        let mut constant = self.log_weight.clone();
        for c in 0..k {
            for j in 0..p {
                let s = self.sigma[c + k * j];
                precision[j + p * c] = 1.0 / (s * s);
                constant[c] -= 0.5 * LOG_2PI + s.ln();
            }
        }
        let mut out = vec![0.0; n * k];
        let mut row = vec![0.0; k];
        let mut x = vec![0.0; p];
        for i in 0..n {
            for (j, v) in x.iter_mut().enumerate() {
                *v = self.x[i + n * j];
            }
            for (c, r) in row.iter_mut().enumerate() {
                let mut quadratic = 0.0;
                for j in 0..p {
                    let d = x[j] - self.mu[c + k * j];
                    quadratic += d * d * precision[j + p * c];
                }
                *r = constant[c] - 0.5 * quadratic;
            }
            let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let lse = max + row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
            for c in 0..k {
                out[i + n * c] = row[c] - lse;
            }
        }
        out
    }

    /// faer's product on blocks of rows, one per thread, then each row's
    /// log-sum-exp on the same thread; the blocks, in row order.
    pub fn threaded(&self, expanded: &Mat<f64>, w: &Mat<f64>, constant: &[f64]) -> Vec<Mat<f64>> {
        let (n, k) = (self.n, self.k);
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let rows_per = n.div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .step_by(rows_per)
                .map(|start| {
                    let rows = rows_per.min(n - start);
                    scope.spawn(move || {
                        let mut block = Mat::<f64>::zeros(rows, k);
                        let x = expanded.as_ref().subrows(start, rows);
                        matmul(block.as_mut(), Accum::Replace, x, w.as_ref(), 1.0, Par::Seq);
                        // Column by column (the matrix is column-major).
                        let mut max = vec![f64::NEG_INFINITY; rows];
                        for (c, shift) in constant.iter().enumerate() {
                            let column = block.col_mut(c).try_as_col_major_mut();
                            let Some(column) = column else { continue };
                            for (v, m) in column.as_slice_mut().iter_mut().zip(&mut max) {
                                *v += shift;
                                *m = m.max(*v);
                            }
                        }
                        let mut sum = vec![0.0; rows];
                        for c in 0..k {
                            if let Some(column) = block.col(c).try_as_col_major() {
                                for ((v, m), s) in column.as_slice().iter().zip(&max).zip(&mut sum)
                                {
                                    *s += (v - m).exp();
                                }
                            }
                        }
                        let lse: Vec<f64> = max.iter().zip(&sum).map(|(m, s)| m + s.ln()).collect();
                        for c in 0..k {
                            if let Some(column) = block.col_mut(c).try_as_col_major_mut() {
                                for (v, l) in column.as_slice_mut().iter_mut().zip(&lse) {
                                    *v -= l;
                                }
                            }
                        }
                        block
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        })
    }
}

/// The device E-step: log responsibilities of every row into `log_resp`
/// (n x k) from the expanded data `[x², x]` (n x 2p), the expanded
/// parameters `w` (2p x k) and the components' constants (1 x k).
pub fn e_step(
    expanded: &MatrixCl<f64>,
    w: &MatrixCl<f64>,
    constant: &MatrixCl<f64>,
    log_resp: &MatrixCl<f64>,
) -> Result<()> {
    if expanded.cols() <= LOG_SOFTMAX_MAX_INNER && w.cols() <= LOG_SOFTMAX_MAX_COLUMNS {
        // One kernel: each row's densities formed, normalised and stored once.
        return log_softmax_rows_of_product(expanded, w, constant, log_resp).map(drop);
    }
    // More components than a work-group keeps: the densities, their
    // row-wise log-sum-exp, the difference.
    let (n, k) = (expanded.rows(), w.cols());
    let log_density = expanded * w + rowwise_broadcast(constant, n);
    let log_density = &log_density;
    log_resp.assign(log_density - colwise_broadcast(rowwise_log_sum_exp(log_density), k))
}

/// The E-step in two passes, as it was before the one-kernel form (kept for
/// the benchmark's comparison): each row's normaliser without forming the
/// n x k densities, then one GEMM whose store subtracts it.
#[allow(dead_code)] // the benchmark's, not the example's
pub fn e_step_two_passes(
    expanded: &MatrixCl<f64>,
    w: &MatrixCl<f64>,
    constant: &MatrixCl<f64>,
    log_resp: &MatrixCl<f64>,
) -> Result<()> {
    let (n, k) = (expanded.rows(), w.cols());
    let normaliser = log_sum_exp_rows_of_product(expanded, w, constant)?;
    let log_density = expanded * w + rowwise_broadcast(constant, n);
    log_resp.assign(log_density - colwise_broadcast(&normaliser, k))
}
