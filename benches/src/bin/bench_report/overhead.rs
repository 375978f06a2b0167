//! Host cost per launch: the typed and fused paths against raw opencl3 enqueues.

use crate::workloads::Ctx;
use clfuse::Result;
use clfuse::clfuse_core::opencl3::kernel::{ExecuteKernel, Kernel};
use clfuse::clfuse_core::opencl3::program::Program;
use clfuse::clfuse_core::{InOut, NdRange, TypedKernel};
use clfuse::prelude::*;
use clfuse::{Error, Runtime};
use std::time::Instant;

const TRIVIAL: &str = "__kernel void touch(__global T* x, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    x[i] += 1;
  }
}";

static TOUCH: TypedKernel<(InOut<i32>, i32)> = TypedKernel::new("touch", TRIVIAL, "");

fn raw_kernel(source: &str, name: &str, options: &str) -> Result<(Program, Kernel)> {
    let rt = Runtime::get()?;
    let cl = |e: clfuse::clfuse_core::opencl3::error_codes::ClError| Error::OpenCl {
        code: e.0,
        name: e.to_string(),
        call: "bench raw kernel",
    };
    let program =
        Program::create_and_build_from_source(rt.context(), source, options).map_err(|log| {
            Error::Build {
                kernel: name.into(),
                options: options.into(),
                log,
            }
        })?;
    let kernel = Kernel::create(&program, name).map_err(cl)?;
    Ok((program, kernel))
}

/// Seconds per launch over `launches` back-to-back enqueues (one finish at the end).
fn per_launch(launches: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let rt = Runtime::get()?;
    f()?;
    rt.finish()?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..launches {
            f()?;
        }
        rt.finish()?;
        best = best.min(start.elapsed().as_secs_f64() / launches as f64);
    }
    Ok(best)
}

pub fn launch_overhead(ctx: &mut Ctx, launches: usize) -> Result<()> {
    let rt = Runtime::get()?;
    let n = 1000usize;
    let x = MatrixCl::<i32>::zeros(n, 1)?;
    let (_program, kernel) = raw_kernel(TRIVIAL, "touch", "-D T=int")?;
    let mem = x.raw_mem();
    let raw = per_launch(launches, || {
        // SAFETY: arguments match `touch(__global int*, int)`; the buffer outlives the queue work.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&mem)
                .set_arg(&(n as i32))
                .set_global_work_size(n)
                .enqueue_nd_range(rt.queue())
        }
        .map(|_| ())
        .map_err(|e| Error::OpenCl {
            code: e.0,
            name: e.to_string(),
            call: "ExecuteKernel",
        })
    })?;
    let typed = per_launch(launches, || {
        TOUCH.launch(NdRange::d1(n), (&x, n as i32)).map(|_| ())
    })?;
    let w = "host cost per launch (n = 1000)";
    ctx.push(
        w,
        "raw opencl3 ExecuteKernel (touch)",
        n,
        0.0,
        0.0,
        (raw, raw, raw),
    );
    ctx.push(
        w,
        "typed kernel (touch)",
        n,
        0.0,
        0.0,
        (typed, typed, typed),
    );

    let a = MatrixCl::from_slice(n, 1, &vec![1.0f64; n])?;
    let b = MatrixCl::from_slice(n, 1, &vec![2.0f64; n])?;
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let c = 3.0f64;
    let fused = per_launch(launches, || d.assign(c * (&a + &b)))?;
    let source = (c * (&a + &b)).kernel_source()?;
    let (_p2, generated) = raw_kernel(&source, "calculate", "")?;
    let (am, bm, dm) = (a.raw_mem(), b.raw_mem(), d.raw_mem());
    let (rows, cols, view) = (n as i32, 1i32, View::Entire.bits());
    let local = n.next_power_of_two().min(256);
    let global = n.div_ceil(local) * local;
    let raw_generated = per_launch(launches, || {
        // SAFETY: the argument list mirrors the generated kernel's parameters.
        unsafe {
            ExecuteKernel::new(&generated)
                .set_arg(&c)
                .set_arg(&am)
                .set_arg(&rows)
                .set_arg(&view)
                .set_arg(&bm)
                .set_arg(&rows)
                .set_arg(&view)
                .set_arg(&dm)
                .set_arg(&rows)
                .set_arg(&rows)
                .set_arg(&cols)
                .set_global_work_sizes(&[global, 1])
                .set_local_work_sizes(&[local, 1])
                .enqueue_nd_range(rt.queue())
        }
        .map(|_| ())
        .map_err(|e| Error::OpenCl {
            code: e.0,
            name: e.to_string(),
            call: "ExecuteKernel",
        })
    })?;
    ctx.push(
        w,
        "raw opencl3 enqueue of the generated c*(a+b) kernel",
        n,
        0.0,
        0.0,
        (raw_generated, raw_generated, raw_generated),
    );
    ctx.push(
        w,
        "cached assign d = c*(a+b)",
        n,
        0.0,
        0.0,
        (fused, fused, fused),
    );
    Ok(())
}
