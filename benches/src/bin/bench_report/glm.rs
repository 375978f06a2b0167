//! `bernoulli_logit_glm` value + gradients (alpha, beta): the fused GLM, an
//! unfused chain of basic kernels, and a multithreaded CPU reference (faer
//! for the two matrix-vector products) in the same run. GB/s counts one pass
//! over `x` (N·P·8 bytes), so "% of copy" reads as x-passes efficiency.

use crate::timing::measure;
use crate::workloads::Ctx;
use clfuse::Result;
use clfuse::clfuse_kernels as k;
use clfuse::glm::{GlmOptions, Wrt, bernoulli_logit_glm_lpmf};
use clfuse::prelude::*;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use std::time::Instant;

pub const SHAPES: [(usize, usize); 4] = [
    (10_000, 10),
    (100_000, 100),
    (1_000_000, 100),
    (10_000_000, 10),
];

pub fn data(n: usize, p: usize) -> (Vec<f64>, Vec<i32>, Vec<f64>) {
    let x: Vec<f64> = (0..n * p)
        .map(|i| ((i * 37 % 101) as f64 / 50.0 - 1.0) / (p as f64).sqrt())
        .collect();
    let y: Vec<i32> = (0..n).map(|i| (i * 7 % 3 == 0) as i32).collect();
    let beta: Vec<f64> = (0..p).map(|k| (k as f64 * 0.37).sin()).collect();
    (x, y, beta)
}

pub fn bernoulli(ctx: &mut Ctx, n: usize, p: usize) -> Result<()> {
    let w = format!("bernoulli_logit_glm value+grad, P = {p}");
    let (xs, ys, bs) = data(n, p);
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &ys)?;
    let beta = MatrixCl::from_slice(p, 1, &bs)?;
    let alpha = 0.3;
    let bytes = 8.0 * (n * p) as f64;
    // Bandwidth-bound: reported as GB/s over one pass of x, not TFLOP/s.
    let flops = 0.0;
    let options = GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA);
    let reference = bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &options)?;
    let t = measure(ctx.reps, || {
        let out = bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &options)?;
        // The value reaches the host inside the call; the gradients stay on the device.
        std::hint::black_box(out.value);
        Ok(())
    })?;
    ctx.push(&w, "fused (clfuse::glm)", n, bytes, flops, t);
    ctx.profile(
        format!("bernoulli_logit_glm value+grad n = {n}, p = {p}"),
        || bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &options).map(drop),
    )?;

    // Where the time goes: the value alone (one pass over x) and each pass by itself.
    let value_only = GlmOptions::default();
    let t = measure(ctx.reps, || {
        bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &value_only).map(drop)
    })?;
    ctx.push(&w, "fused, value only", n, bytes, flops, t);
    let eta = MatrixCl::<f64>::zeros(n, 1)?;
    let t = measure(ctx.reps, || {
        eta.assign(matrix_vector_multiply(&x, &beta) + alpha)
    })?;
    ctx.push(&w, "pass 1 alone: eta = x·beta + alpha", n, bytes, flops, t);
    let d = MatrixCl::<f64>::constant(n, 1, 0.5)?;
    let t = measure(ctx.reps, || {
        colwise_sum(elt_multiply(&x, colwise_broadcast(&d, p)))
            .eval()
            .map(drop)
    })?;
    ctx.push(
        &w,
        "pass 2 as a fused column-wise sum of x .* d",
        n,
        bytes,
        flops,
        t,
    );
    let d_row = d.reshape(1, n)?;
    let t = measure(ctx.reps, || {
        k::row_vector_matrix_multiply(&d_row, &x).map(drop)
    })?;
    ctx.push(
        &w,
        "pass 2 alone: xᵀ·d (row-vector leaf)",
        n,
        bytes,
        flops,
        t,
    );
    let d_column = d_row.reshape(n, 1)?;
    let t = measure(ctx.reps, || {
        transpose_vector_multiply(&x, &d_column).eval().map(drop)
    })?;
    ctx.push(
        &w,
        "pass 2 alone: xᵀ·d (row-block output, x staged)",
        n,
        bytes,
        flops,
        t,
    );
    let t = measure(ctx.reps, || {
        transpose_vector_multiply(&x, inv_logit(matrix_vector_multiply(&x, &beta) + alpha))
            .eval()
            .map(drop)
    })?;
    ctx.push(
        &w,
        "one pass: xᵀ·inv_logit(x·beta + alpha) from one tile",
        n,
        bytes,
        flops,
        t,
    );
    // The alternative split: a per-row kernel (value terms and d, x read
    // row by row), then the staged xᵀ·d (x read again), without checks.
    let (logp, d_eta) = (MatrixCl::<f64>::zeros(1, 1)?, MatrixCl::<f64>::zeros(n, 1)?);
    let t = measure(ctx.reps, || {
        {
            let sign = 2 * &y - 1;
            let signed = elt_multiply(&sign, matrix_vector_multiply(&x, &beta) + alpha);
            let signed = &signed;
            fuse((
                output(&logp, colwise_sum(-log1p_exp(-signed))),
                output(&d_eta, elt_multiply(&sign, inv_logit(-signed))),
            ))?;
        }
        transpose_vector_multiply(&x, &d_eta).eval()?;
        std::hint::black_box(logp.to_vec()?);
        Ok(())
    })?;
    ctx.push(
        &w,
        "two kernels: value terms + d, then staged xᵀ·d (no checks)",
        n,
        bytes,
        flops,
        t,
    );
    if !ctx.baselines {
        return Ok(());
    }

    // The same computation as one basic kernel per step (paper §3.5 style).
    let chain = || -> Result<(f64, f64, Vec<f64>)> {
        let eta = k::matrix_vector_multiply(&x, &beta)?;
        let eta = (&eta + alpha).eval()?;
        let sign = (2 * &y - 1).eval()?;
        let signed = elt_multiply(&sign, &eta).eval()?;
        let terms = (-log1p_exp(-&signed)).eval()?;
        let value = sum(&terms)?;
        let back = inv_logit(-&signed).eval()?;
        let d = elt_multiply(&sign, &back).eval()?;
        let d_alpha = sum(&d)?;
        let d_beta = k::row_vector_matrix_multiply(&d.reshape(1, n)?, &x)?;
        Ok((value, d_alpha, d_beta.to_vec()?))
    };
    let (value, ..) = chain()?;
    assert!(
        (value - reference.value).abs() <= 1e-9 * value.abs().max(1.0),
        "chain disagrees: {value} vs {}",
        reference.value
    );
    let t = measure(ctx.reps, || chain().map(drop))?;
    ctx.push(&w, "chain", n, bytes, flops, t);

    // CPU: faer matrix-vector products on all cores, element-wise loop between.
    let fx = Mat::from_fn(n, p, |i, j| xs[i + n * j]);
    let fb = Mat::from_fn(p, 1, |i, _| bs[i]);
    let mut eta = Mat::<f64>::zeros(n, 1);
    let mut d = Mat::<f64>::zeros(n, 1);
    let mut d_beta = Mat::<f64>::zeros(p, 1);
    let mut cpu = || {
        matmul(
            eta.as_mut(),
            Accum::Replace,
            fx.as_ref(),
            fb.as_ref(),
            1.0,
            Par::rayon(0),
        );
        let mut value = 0.0;
        let mut d_alpha = 0.0;
        for i in 0..n {
            let s = 2.0 * ys[i] as f64 - 1.0;
            let z = s * (eta[(i, 0)] + alpha);
            value -= if z > 0.0 {
                (-z).exp().ln_1p()
            } else {
                -z + z.exp().ln_1p()
            };
            d[(i, 0)] = s / (1.0 + z.exp());
            d_alpha += d[(i, 0)];
        }
        matmul(
            d_beta.as_mut(),
            Accum::Replace,
            fx.transpose(),
            d.as_ref(),
            1.0,
            Par::rayon(0),
        );
        (value, d_alpha)
    };
    let (value, d_alpha) = cpu();
    assert!(
        (value - reference.value).abs() <= 1e-9 * value.abs().max(1.0),
        "CPU disagrees: {value} vs {}",
        reference.value
    );
    // The gradients too: a faster kernel that sums the wrong rows must not pass.
    let close = |cpu: f64, gpu: f64| (cpu - gpu).abs() <= 1e-9 * cpu.abs().max(1.0);
    let fused_alpha = reference.d_alpha()?.to_vec()?;
    assert!(
        fused_alpha.len() == 1 && close(d_alpha, fused_alpha[0]),
        "d_alpha disagrees: CPU {d_alpha} vs fused {fused_alpha:?}"
    );
    let mut times = Vec::new();
    for _ in 0..ctx.reps.min(5) {
        let start = Instant::now();
        std::hint::black_box(cpu());
        times.push(start.elapsed().as_secs_f64());
    }
    let fused_beta = reference.d_beta()?.to_vec()?;
    assert!(
        fused_beta.len() == p && (0..p).all(|k| close(d_beta[(k, 0)], fused_beta[k])),
        "d_beta disagrees with the CPU"
    );
    ctx.push(
        &w,
        "CPU (faer, all cores)",
        n,
        bytes,
        flops,
        crate::timing::median_min_max(times),
    );
    Ok(())
}

/// The fixed costs a GLM call is made of, each timed alone (n = 10 000):
/// what the latency-bound small shapes spend their time on.
pub fn fixed_costs(ctx: &mut Ctx) -> Result<()> {
    let n = 10_000;
    let w = "GLM building blocks, n = 10 000";
    let y = MatrixCl::from_slice(n, 1, &vec![1i32; n])?;
    let d = MatrixCl::<f64>::constant(n, 1, 0.5)?;
    let t = measure(ctx.reps, || MatrixCl::from_slice(1, 1, &[0.3]).map(drop))?;
    ctx.push(w, "upload a 1x1 parameter", n, 0.0, 0.0, t);
    let flag = MatrixCl::<i32>::uninitialized(1, 1)?;
    let t = measure(ctx.reps, || flag.fill(i32::MAX))?;
    ctx.push(w, "fill a 1x1 flag", n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || flag.to_vec().map(drop))?;
    ctx.push(w, "read 4 bytes back", n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || MatrixCl::<f64>::uninitialized(n, 1).map(drop))?;
    ctx.push(w, "allocate an n x 1 buffer", n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || check(&y, "f", "y", ge(&y, 0)).run())?;
    ctx.push(w, "one check kernel (launch + flag + read)", n, 0.0, 0.0, t);
    let out = MatrixCl::<f64>::uninitialized(n, 1)?;
    let t = measure(ctx.reps, || out.assign(exp(&d)))?;
    ctx.push(w, "one element-wise kernel", n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || colwise_sum(&d).eval().map(drop))?;
    ctx.push(w, "column sum to 1x1 (two kernels)", n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || sum(&d).map(drop))?;
    ctx.push(w, "sum to the host", n, 0.0, 0.0, t);
    Ok(())
}
