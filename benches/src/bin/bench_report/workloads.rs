//! The workloads: each computes one thing several ways in the same run.

use crate::timing::{Record, first_call, measure};
use clfuse::Result;
use clfuse::Runtime;
use clfuse::clfuse_core::{In, NdRange, Out, TypedKernel};
use clfuse::prelude::*;

pub struct Ctx {
    pub reps: usize,
    /// Whether the GLM workloads also time the chain and the CPU (off for tuning runs).
    pub baselines: bool,
    pub records: Vec<Record>,
    pub progress: indicatif::ProgressBar,
    /// Kernel timelines (`FUSION_PROFILING=1`): title and table.
    pub profiles: Vec<(String, String)>,
    /// Every profiled call's commands, as CSV rows (profile, command,
    /// queued, start and end in µs from its first command).
    pub timelines: String,
}

impl Ctx {
    pub fn push(
        &mut self,
        workload: &str,
        variant: &str,
        n: usize,
        bytes: f64,
        flops: f64,
        t: (f64, f64, f64),
    ) {
        self.records.push(Record {
            workload: workload.into(),
            variant: variant.into(),
            n,
            median_s: t.0,
            min_s: t.1,
            max_s: t.2,
            repetitions: self.reps,
            bytes,
            flops,
        });
        self.progress.inc(1);
    }

    /// On a profiling queue, runs `f` once more and keeps its kernel timeline.
    pub fn profile(&mut self, title: String, f: impl FnOnce() -> Result<()>) -> Result<()> {
        let rt = Runtime::get()?;
        if !rt.profiling() {
            return Ok(());
        }
        rt.finish()?;
        clfuse::clfuse_core::take_profile()?;
        clfuse::clfuse_core::profile_mark("(host: call starts)")?;
        f()?;
        clfuse::clfuse_core::profile_mark("(host: call returned)")?;
        rt.finish()?;
        let profile = clfuse::clfuse_core::take_profile()?;
        for c in &profile.timeline {
            let us = |ns: u64| ns as f64 * 1e-3;
            self.timelines += &format!(
                "\"{title}\",\"{}\",{:.1},{:.1},{:.1}\n",
                c.name,
                us(c.queued_ns),
                us(c.start_ns),
                us(c.end_ns)
            );
        }
        self.profiles.push((title, profile.to_string()));
        Ok(())
    }

    fn first(&mut self, workload: &str, n: usize, seconds: f64) {
        self.records.push(Record {
            workload: workload.into(),
            variant: "first call (compile)".into(),
            n,
            median_s: seconds,
            min_s: seconds,
            max_s: seconds,
            repetitions: 1,
            bytes: 0.0,
            flops: 0.0,
        });
    }
}

fn vector(n: usize, salt: f64) -> Result<MatrixCl<f64>> {
    let host: Vec<f64> = (0..n)
        .map(|i| ((i % 1000) as f64 + salt) / 1000.0)
        .collect();
    MatrixCl::from_slice(n, 1, &host)
}

const HAND_WRITTEN: &str = "
__kernel void scaled_sum(__global double* d, const __global double* a, const __global double* b, double c, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    d[i] = c * (a[i] + b[i]);
  }
}";

static SCALED_SUM: TypedKernel<(Out<f64>, In<f64>, In<f64>, f64, i32)> =
    TypedKernel::new("scaled_sum", HAND_WRITTEN, "");

/// Device-to-device copy: the bandwidth every GB/s figure is compared with.
pub fn copy_bandwidth(ctx: &mut Ctx, n: usize) -> Result<()> {
    let a = vector(n, 0.0)?;
    let b = MatrixCl::<f64>::zeros(n, 1)?;
    let t = measure(ctx.reps, || b.copy_from(&a))?;
    ctx.push("copy", "clEnqueueCopyBuffer", n, 16.0 * n as f64, 0.0, t);
    Ok(())
}

/// d = c * (a + b), scalar c.
pub fn scaled_sum(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (a, b) = (vector(n, 0.0)?, vector(n, 1.0)?);
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let c = 2.5;
    let bytes = 24.0 * n as f64;
    let w = "d = c*(a+b)";
    let f = first_call(|| d.assign(c * (&a + &b)))?;
    ctx.first(w, n, f);
    let t = measure(ctx.reps, || d.assign(c * (&a + &b)))?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        let sum = (&a + &b).eval()?;
        d.assign(c * &sum)
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        SCALED_SUM.launch(
            NdRange::d1(n.div_ceil(256) * 256).with_local(&[256]),
            (&d, &a, &b, c, n as i32),
        )?;
        Ok(())
    })?;
    ctx.push(w, "hand-written", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

/// d = c .* (a + b), vector c.
pub fn vector_scaled_sum(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (a, b, c) = (vector(n, 0.0)?, vector(n, 1.0)?, vector(n, 2.0)?);
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let bytes = 32.0 * n as f64;
    let w = "d = c.*(a+b)";
    let t = measure(ctx.reps, || d.assign(elt_multiply(&c, &a + &b)))?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        let sum = (&a + &b).eval()?;
        d.assign(elt_multiply(&c, &sum))
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

/// d = ((a + b) .* c - a) * 0.5 + b ./ c: six operations.
pub fn six_op_chain(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (a, b, c) = (vector(n, 0.0)?, vector(n, 1.0)?, vector(n, 2.0)?);
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let bytes = 32.0 * n as f64;
    let w = "6-op chain";
    let t = measure(ctx.reps, || {
        d.assign((elt_multiply(&a + &b, &c) - &a) * 0.5f64 + elt_divide(&b, &c))
    })?;
    ctx.push(w, "fused", n, bytes, 6.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        let t1 = (&a + &b).eval()?;
        let t2 = elt_multiply(&t1, &c).eval()?;
        let t3 = (&t2 - &a).eval()?;
        let t4 = (&t3 * 0.5f64).eval()?;
        let t5 = elt_divide(&b, &c).eval()?;
        d.assign(&t4 + &t5)
    })?;
    ctx.push(w, "chain", n, bytes, 6.0 * n as f64, t);
    Ok(())
}

/// d = a + b and e = a - b: one two-output kernel vs two kernels.
pub fn multi_output(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (a, b) = (vector(n, 0.0)?, vector(n, 1.0)?);
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let e = MatrixCl::<f64>::zeros(n, 1)?;
    let bytes = 32.0 * n as f64;
    let w = "d=a+b, e=a-b";
    let t = measure(ctx.reps, || results((&d, &e)).assign((&a + &b, &a - &b)))?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        d.assign(&a + &b)?;
        e.assign(&a - &b)
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

fn matrix(rows: usize, cols: usize, salt: f64) -> Result<MatrixCl<f64>> {
    let host: Vec<f64> = (0..rows * cols)
        .map(|i| ((i % 1000) as f64 + salt) / 1000.0)
        .collect();
    MatrixCl::from_slice(rows, cols, &host)
}

/// sum(a .* b): one kernel plus a host step, vs materialising a .* b first.
pub fn dot(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (a, b) = (vector(n, 0.0)?, vector(n, 1.0)?);
    let w = "sum(a.*b)";
    let bytes = 16.0 * n as f64;
    let t = measure(ctx.reps, || sum(elt_multiply(&a, &b)).map(|_| ()))?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        let p = elt_multiply(&a, &b).eval()?;
        sum(&p).map(|_| ())
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

/// colwise_sum(exp(A)) for a tall A (n / 64 x 64).
pub fn colwise_exp_sum(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (rows, cols) = ((n / 64).max(1), 64);
    let a = matrix(rows, cols, 0.0)?;
    let out = MatrixCl::<f64>::zeros(1, cols)?;
    let w = "colwise_sum(exp(A)), A n/64 x 64";
    let bytes = 8.0 * (rows * cols) as f64;
    let t = measure(ctx.reps, || out.assign(colwise_sum(exp(&a))))?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || out.assign(colwise_sum(&a)))?;
    ctx.push(w, "colwise_sum(A) alone (no exp)", n, bytes, n as f64, t);
    let t = measure(ctx.reps, || {
        let e = exp(&a).eval()?;
        out.assign(colwise_sum(&e))
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

/// rowwise_sum(exp(A)) for A n/16 x 16.
pub fn rowwise_exp_sum(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (rows, cols) = ((n / 16).max(1), 16);
    let a = matrix(rows, cols, 0.0)?;
    let out = MatrixCl::<f64>::zeros(rows, 1)?;
    let w = "rowwise_sum(exp(A)), A n/16 x 16";
    let bytes = 8.0 * (rows * cols + rows) as f64;
    let t = measure(ctx.reps, || out.assign(rowwise_sum(exp(&a))))?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || out.assign(rowwise_sum(&a)))?;
    ctx.push(w, "rowwise_sum(A) alone (no exp)", n, bytes, n as f64, t);
    let t = measure(ctx.reps, || {
        let e = exp(&a).eval()?;
        out.assign(rowwise_sum(&e))
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

/// inv_logit(X·beta + alpha) for X n/16 x 16: the GLM linear predictor and link.
pub fn glm_link(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (rows, cols) = ((n / 16).max(1), 16);
    let x = matrix(rows, cols, 0.0)?;
    let beta = matrix(cols, 1, 3.0)?;
    let mu = MatrixCl::<f64>::zeros(rows, 1)?;
    let w = "inv_logit(X*beta + alpha), X n/16 x 16";
    let bytes = 8.0 * (rows * cols + rows) as f64;
    let t = measure(ctx.reps, || {
        mu.assign(inv_logit(matrix_vector_multiply(&x, &beta) + 0.5))
    })?;
    ctx.push(w, "fused", n, bytes, 2.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        let eta = matrix_vector_multiply(&x, &beta).eval()?;
        mu.assign(inv_logit(&eta + 0.5))
    })?;
    ctx.push(w, "chain", n, bytes, 2.0 * n as f64, t);
    Ok(())
}

clfuse::clfuse_core::kernel! {
    /// A hand-crafted Bayesian linear regression likelihood kernel (the
    /// slides' comparison): residuals, squares and a work-group reduction.
    fn blr_squares(out partial: f64, in y: f64, in x: f64, in beta: f64, alpha: f64, inv_sigma: f64, n: i32, p: i32) = source "
        __kernel void blr_squares(__global double* partial, const __global double* y, const __global double* x,
                                  const __global double* beta, double alpha, double inv_sigma, int n, int p) {
          __local double scratch[256];
          const int lid = get_local_id(0);
          double acc = 0;
          for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
            double eta = alpha;
            for (int k = 0; k < p; k++) {
              eta += x[i + n * k] * beta[k];
            }
            const double r = (y[i] - eta) * inv_sigma;
            acc += r * r;
          }
          scratch[lid] = acc;
          barrier(CLK_LOCAL_MEM_FENCE);
          for (int step = 128; step > 0; step >>= 1) {
            if (lid < step) {
              scratch[lid] += scratch[lid + step];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
          }
          if (lid == 0) {
            partial[get_group_id(0)] = scratch[0];
          }
        }";
}

/// Bayesian linear regression log-likelihood, y ~ normal(X beta + alpha, sigma),
/// X n/8 x 8: fused vs hand-crafted vs chain.
pub fn linear_regression(ctx: &mut Ctx, n: usize) -> Result<()> {
    let (rows, p) = ((n / 8).max(1), 8);
    let x = matrix(rows, p, 0.0)?;
    let y = matrix(rows, 1, 5.0)?;
    let beta = matrix(p, 1, 3.0)?;
    let (alpha, sigma) = (0.5f64, 1.7f64);
    let w = "linear regression log-likelihood, X n/8 x 8";
    let bytes = 8.0 * (rows * p + rows) as f64;
    let loglik = |squares: f64| -(rows as f64) * sigma.ln() - 0.5 * squares;
    let mut fused_value = 0.0;
    let t = measure(ctx.reps, || {
        fused_value = loglik(sum(square(
            (&y - matrix_vector_multiply(&x, &beta) - alpha) / sigma,
        ))?);
        Ok(())
    })?;
    ctx.push(w, "fused", n, bytes, 3.0 * n as f64, t);
    let groups = (32 * Runtime::get()?.device_info().compute_units as usize)
        .min(rows.div_ceil(256))
        .max(1);
    let partial = MatrixCl::<f64>::zeros(groups, 1)?;
    let mut hand_value = 0.0;
    let t = measure(ctx.reps, || {
        blr_squares().launch(
            NdRange::d1(groups * 256).with_local(&[256]),
            (
                &partial,
                &y,
                &x,
                &beta,
                alpha,
                1.0 / sigma,
                rows as i32,
                p as i32,
            ),
        )?;
        hand_value = loglik(partial.to_vec()?.iter().sum());
        Ok(())
    })?;
    ctx.push(w, "hand-written", n, bytes, 3.0 * n as f64, t);
    let t = measure(ctx.reps, || {
        let eta = matrix_vector_multiply(&x, &beta).eval()?;
        let r = ((&y - &eta - alpha) / sigma).eval()?;
        let _ = loglik(sum(square(&r))?);
        Ok(())
    })?;
    ctx.push(w, "chain", n, bytes, 3.0 * n as f64, t);
    if (fused_value - hand_value).abs() > 1e-6 * hand_value.abs().max(1.0) {
        return Err(clfuse::Error::InvalidArgument {
            function: "linear_regression benchmark",
            argument: "results",
            reason: format!("fused {fused_value} and hand-written {hand_value} disagree"),
        });
    }
    Ok(())
}
