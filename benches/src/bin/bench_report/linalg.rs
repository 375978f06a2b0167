//! Hand-written leaves against faer on the CPU, in the same run (paper
//! Figure 5 style): DGEMM, Cholesky and the triangular inverse on the
//! paper's Toeplitz input; time, TFLOP/s and the GPU/CPU speedup.

use crate::timing::measure;
use crate::workloads::Ctx;
use clfuse::Result;
use clfuse::clfuse_kernels::{self as k, CholeskyOptions, GemmConfig, MultiplyOptions};
use clfuse::prelude::*;
use faer::linalg::{matmul::matmul, triangular_inverse::invert_lower_triangular};
use faer::{Accum, Mat, Par, Side};
use std::time::Instant;

fn toeplitz(n: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            v.push(if i == j {
                (n * n) as f64
            } else {
                n as f64 - (i as f64 - j as f64).abs()
            });
        }
    }
    v
}

fn to_faer(n: usize, data: &[f64]) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| data[i + n * j])
}

/// Median of `reps` timings of a host computation (fewer for slow ones).
fn cpu_time(reps: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    f();
    let mut times = Vec::new();
    let mut total = 0.0;
    while times.len() < reps && (times.len() < 3 || total < 20.0) {
        let start = Instant::now();
        f();
        let t = start.elapsed().as_secs_f64();
        total += t;
        times.push(t);
    }
    crate::timing::median_min_max(times)
}

pub fn gemm(ctx: &mut Ctx, n: usize) -> Result<()> {
    let data = toeplitz(n);
    let a = MatrixCl::from_slice(n, n, &data)?;
    let b = MatrixCl::from_slice(n, n, &data)?;
    let flops = 2.0 * (n as f64).powi(3);
    let t = measure(ctx.reps, || k::multiply(&a, &b).map(drop))?;
    ctx.push("dgemm", "fusion (OpenCL)", n, 0.0, flops, t);
    if !ctx.baselines {
        return Ok(());
    }
    let (fa, fb) = (to_faer(n, &data), to_faer(n, &data));
    let mut fc = Mat::<f64>::zeros(n, n);
    let t = cpu_time(ctx.reps, || {
        matmul(
            fc.as_mut(),
            Accum::Replace,
            fa.as_ref(),
            fb.as_ref(),
            1.0,
            Par::rayon(0),
        )
    });
    ctx.push("dgemm", "faer (CPU, all cores)", n, 0.0, flops, t);
    Ok(())
}

/// GEMM tilings tried at one size (`--gemm-sweep`), to pick device defaults.
pub fn gemm_sweep(ctx: &mut Ctx, n: usize, gpu: bool) -> Result<()> {
    let data = toeplitz(n);
    let a = MatrixCl::from_slice(n, n, &data)?;
    let flops = 2.0 * (n as f64).powi(3);
    let tiled = [
        (64, 4, 8),
        (64, 8, 8),
        (96, 6, 8),
        (112, 7, 8),
        (128, 8, 4),
        (128, 8, 8),
        (128, 8, 16),
        (128, 8, 6),
        (128, 8, 12),
        (96, 6, 16),
        (128, 4, 8),
        (64, 4, 16),
        (64, 8, 16),
        (160, 10, 8),
        (32, 8, 32),
    ]
    .map(
        |(thread_block_size, work_per_thread, tile_k)| GemmConfig::Tiled {
            thread_block_size,
            work_per_thread,
            tile_k,
        },
    );
    // FP64 tensor cores (validate skips them on devices without).
    let tensor = [
        (128, 8, 8),
        (128, 8, 16),
        (128, 8, 4),
        (64, 4, 8),
        (64, 4, 16),
        (64, 4, 32),
    ]
    .map(
        |(thread_block_size, work_per_thread, tile_k)| GemmConfig::TensorCores {
            thread_block_size,
            work_per_thread,
            tile_k,
        },
    );
    let direct = [(8, 4), (8, 8), (16, 4), (16, 8), (8, 16)]
        .map(|(rows, cols)| GemmConfig::Direct { rows, cols });
    // The direct kernel is for CPUs (no local memory); on a GPU it only costs time.
    let direct = if gpu { &[][..] } else { &direct[..] };
    for config in tiled
        .into_iter()
        .chain(tensor)
        .chain(direct.iter().copied())
    {
        let label = match config {
            GemmConfig::Tiled {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => format!("tiled TS={thread_block_size} WPT={work_per_thread} TILE_K={tile_k}"),
            GemmConfig::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => {
                format!("tensor cores TS={thread_block_size} WPT={work_per_thread} TILE_K={tile_k}")
            }
            GemmConfig::Direct { rows, cols } => format!("direct {rows}x{cols}"),
            GemmConfig::Portable => "portable".to_string(),
        };
        if config.validate::<f64>().is_err() {
            continue;
        }
        let options = MultiplyOptions {
            splits: Some(1),
            config: Some(config),
        };
        // A blocking the device cannot run (registers, local memory) is reported, not fatal.
        let t = match measure(ctx.reps, || k::multiply_with(&a, &a, &options).map(drop)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("dgemm {label}: {e}");
                continue;
            }
        };
        ctx.push("dgemm tiling", &label, n, 0.0, flops, t);
    }
    Ok(())
}

pub fn cholesky(ctx: &mut Ctx, n: usize) -> Result<()> {
    let data = toeplitz(n);
    let a = MatrixCl::from_slice(n, n, &data)?;
    let flops = (n as f64).powi(3) / 3.0;
    let t = measure(ctx.reps, || k::cholesky_decompose(&a).map(drop))?;
    ctx.push("cholesky", "fusion (OpenCL)", n, 0.0, flops, t);
    ctx.profile(format!("cholesky n = {n}"), || {
        k::cholesky_decompose(&a).map(drop)
    })?;
    if !ctx.baselines {
        return Ok(());
    }
    let fa = to_faer(n, &data);
    let t = cpu_time(ctx.reps, || {
        let _ = fa.llt(Side::Lower);
    });
    ctx.push("cholesky", "faer (CPU, all cores)", n, 0.0, flops, t);
    Ok(())
}

pub fn tri_inverse(ctx: &mut Ctx, n: usize) -> Result<()> {
    let data = toeplitz(n);
    let fa = to_faer(n, &data);
    let l = fa.llt(Side::Lower).map_err(|e| Error::InvalidArgument {
        function: "bench tri_inverse",
        argument: "toeplitz",
        reason: format!("{e:?}"),
    })?;
    let l = l.L().to_owned();
    let host: Vec<f64> = (0..n * n).map(|i| l[(i % n, i / n)]).collect();
    let dl = MatrixCl::from_slice(n, n, &host)?.with_view(View::Lower);
    let flops = (n as f64).powi(3) / 3.0;
    let t = measure(ctx.reps, || k::tri_inverse(&dl).map(drop))?;
    ctx.push("triangular inverse", "fusion (OpenCL)", n, 0.0, flops, t);
    ctx.profile(format!("triangular inverse n = {n}"), || {
        k::tri_inverse(&dl).map(drop)
    })?;
    if !ctx.baselines {
        return Ok(());
    }
    let mut inv = Mat::<f64>::zeros(n, n);
    let t = cpu_time(ctx.reps, || {
        invert_lower_triangular(inv.as_mut(), l.as_ref(), Par::rayon(0))
    });
    ctx.push(
        "triangular inverse",
        "faer (CPU, all cores)",
        n,
        0.0,
        flops,
        t,
    );
    Ok(())
}

/// The Cholesky adjoint of every schedule (and the factorization it is
/// measured against: issue #37's goal is the adjoint within 2.5x of it),
/// per call, on the Toeplitz factor with a random lower `adj(L)`.
pub fn cholesky_adjoint(ctx: &mut Ctx, n: usize) -> Result<()> {
    use k::CholeskyAdjointMethod::{Auto, Blocked, ThroughInverse};
    let a = MatrixCl::from_slice(n, n, &toeplitz(n))?;
    let t = measure(ctx.reps, || k::cholesky_decompose(&a).map(drop))?;
    let flops = (n as f64).powi(3) / 3.0;
    ctx.push(
        "cholesky (adjoint sizes)",
        "fusion (OpenCL)",
        n,
        0.0,
        flops,
        t,
    );
    ctx.profile(format!("cholesky n = {n} (adjoint sizes)"), || {
        k::cholesky_decompose(&a).map(drop)
    })?;
    let l = k::cholesky_decompose(&a)?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let weights: Vec<f64> = (0..n * n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % n >= i / n {
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            } else {
                0.0
            }
        })
        .collect();
    let adj_l = MatrixCl::from_slice(n, n, &weights)?.with_view(View::Lower);
    for (label, method) in [
        ("auto", Auto),
        ("through the inverse", ThroughInverse),
        ("blocked, 128 columns", Blocked(128)),
        ("blocked, 256 columns", Blocked(256)),
        ("blocked, 512 columns", Blocked(512)),
        ("blocked, 1024 columns", Blocked(1024)),
        ("blocked, 2048 columns", Blocked(2048)),
    ] {
        let t = measure(ctx.reps, || {
            k::cholesky_adjoint_with(&l, &adj_l, method).map(drop)
        })?;
        ctx.push("cholesky adjoint", label, n, 0.0, flops, t);
        ctx.profile(format!("cholesky adjoint n = {n}, {label}"), || {
            k::cholesky_adjoint_with(&l, &adj_l, method).map(drop)
        })?;
    }
    Ok(())
}

/// Cholesky `partition` / `min_l11_size` pairs tried at one size
/// (`--gemm-sweep`).
pub fn cholesky_sweep(ctx: &mut Ctx, n: usize, tunings: &[(usize, usize)]) -> Result<()> {
    let a = MatrixCl::from_slice(n, n, &toeplitz(n))?;
    let flops = (n as f64).powi(3) / 3.0;
    for &(partition, min_l11_size) in tunings {
        let options = CholeskyOptions {
            partition,
            min_l11_size,
            ..CholeskyOptions::for_device()?
        };
        let t = measure(ctx.reps, || {
            k::cholesky_decompose_with(&a, &options).map(drop)
        })?;
        ctx.push(
            "cholesky tuning",
            &format!("partition={partition} min_L11_size={min_l11_size}"),
            n,
            0.0,
            flops,
            t,
        );
    }
    Ok(())
}

/// Epilogue fusion (`inv_logit(x * b + 1)`, x `rows x k`, b `k x cols`):
/// the GEMM alone, the one kernel that applies the tail in the GEMM's
/// store, and the GEMM followed by an element-wise kernel (the chain the
/// fusion replaces). Per call: each repetition waits for the device.
pub fn epilogue(ctx: &mut Ctx, rows: usize, k: usize, cols: usize) -> Result<()> {
    let x_host: Vec<f64> = (0..rows * k)
        .map(|i| ((i % 997) as f64 - 498.0) / 4980.0)
        .collect();
    let b_host: Vec<f64> = (0..k * cols)
        .map(|i| ((i % 89) as f64 - 44.0) / 440.0)
        .collect();
    let x = MatrixCl::from_slice(rows, k, &x_host)?;
    let b = MatrixCl::from_slice(k, cols, &b_host)?;
    let d = MatrixCl::<f64>::zeros(rows, cols)?;
    let flops = 2.0 * (rows * k * cols) as f64;
    // x and b read, the result written once.
    let bytes = 8.0 * (rows * k + k * cols + rows * cols) as f64;
    let name = format!("inv_logit(x*b+1), x {rows}x{k}, b {k}x{cols}");
    let t = measure(ctx.reps, || k::multiply(&x, &b).map(drop))?;
    ctx.push(&name, "GEMM alone", rows, bytes, flops, t);
    let t = measure(ctx.reps, || d.assign(inv_logit(&x * &b + 1.0)))?;
    ctx.push(
        &name,
        "fused: one GEMM with the epilogue",
        rows,
        bytes,
        flops,
        t,
    );
    // A tail with no arithmetic to speak of: what the epilogue's store costs.
    let t = measure(ctx.reps, || d.assign(&x * &b + 1.0))?;
    ctx.push(&name, "fused, tail x*b + 1 only", rows, bytes, flops, t);
    ctx.profile(format!("{name}, fused"), || {
        d.assign(inv_logit(&x * &b + 1.0))
    })?;
    let t = measure(ctx.reps, || {
        let product = k::multiply(&x, &b)?;
        d.assign(inv_logit(&product + 1.0))
    })?;
    ctx.push(
        &name,
        "GEMM, then an element-wise kernel",
        rows,
        bytes,
        flops,
        t,
    );
    Ok(())
}
