//! The fusion demo: `make demo` (or `cargo run --release --example demo`).
//!
//! Builds a lazy expression, shows the one kernel generated for it, runs it,
//! checks it against the CPU, and shows that a second call compiles nothing.

use clfuse::Result;
use clfuse::prelude::*;

fn main() -> Result<()> {
    let rt = clfuse::Runtime::get()?;
    println!(
        "device: {} ({})",
        rt.device_info().name,
        rt.device_info().platform_name
    );

    let n = 1_000_000;
    let a_host: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 / 1000.0).collect();
    let b_host: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let a = MatrixCl::from_slice(n, 1, &a_host)?;
    let b = MatrixCl::from_slice(n, 1, &b_host)?;
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let c = 2.5;

    let before = kernel_stats();
    d.assign(c * (&a + &b))?;
    let first = kernel_stats() - before;
    println!(
        "d = c * (a + b): {} kernel compiled, {} loaded from the disk cache, {} launched",
        first.compiled, first.loaded, first.launched
    );
    let got = d.to_vec()?;
    let max_err = got
        .iter()
        .zip(a_host.iter().zip(&b_host))
        .map(|(g, (x, y))| (g - c * (x + y)).abs())
        .fold(0.0, f64::max);
    println!("max |error| vs CPU: {max_err:e}");

    let before = kernel_stats();
    d.assign(4.0 * (&b + &a))?;
    println!(
        "same expression, other scalar: {} kernels built",
        (kernel_stats() - before).built()
    );

    let s = inv_logit(&a - 0.5f64).elt_multiply(log1p_exp(&b));
    println!(
        "\nGenerated OpenCL C for inv_logit(a - 0.5) .* log1p_exp(b):\n\n{}",
        s.kernel_source()?
    );
    let r = s.eval()?;
    println!("first elements: {:?}", &r.to_vec()?[..4]);
    Ok(())
}
