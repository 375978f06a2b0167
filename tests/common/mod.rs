//! Helpers shared by test binaries.
#![allow(dead_code)]

use clfuse::Result;
use clfuse::clfuse_core::{In, InOut, NdRange, Out, TypedKernel};
use clfuse::prelude::*;

pub const INCREMENT: &str = "
__kernel void increment(__global T* x, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    x[i] += 1;
  }
}
__kernel void add_into(__global T* out, const __global T* a, const __global T* b, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    out[i] = a[i] + b[i];
  }
}";

pub static INCREMENT_K: TypedKernel<(InOut<i32>, i32)> =
    TypedKernel::new("increment", INCREMENT, "");
pub static ADD_INTO: TypedKernel<(Out<i32>, In<i32>, In<i32>, i32)> =
    TypedKernel::new("add_into", INCREMENT, "");

/// 1000+ dependent launches; only the event lists order them on an out-of-order queue.
pub fn dependent_chain() -> Result<()> {
    let n = 1001;
    let a = MatrixCl::<i32>::zeros(n, 1)?;
    let b = MatrixCl::<i32>::zeros(n, 1)?;
    for _ in 0..1000 {
        INCREMENT_K.launch(NdRange::d1(n), (&a, n as i32))?;
    }
    // Ping-pong through b: each launch reads the other matrix's last write.
    let ones = MatrixCl::constant(n, 1, 1i32)?;
    let zeros = MatrixCl::<i32>::zeros(n, 1)?;
    for _ in 0..200 {
        ADD_INTO.launch(NdRange::d1(n), (&b, &a, &ones, n as i32))?;
        ADD_INTO.launch(NdRange::d1(n), (&a, &b, &zeros, n as i32))?;
        INCREMENT_K.launch(NdRange::d1(n), (&a, n as i32))?;
    }
    assert!(a.to_vec()?.iter().all(|v| *v == 1000 + 200 * 2));
    let (reads, writes) = a.events().pending();
    assert!(
        reads <= 17 && writes <= 1,
        "events pile up: {reads} reads, {writes} writes"
    );
    Ok(())
}

pub mod linalg;
pub mod process;
pub mod reference;
pub mod soak;

/// `n` deterministic values in [-1, 1), different for each `seed`.
pub fn values(n: usize, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|k| ((k as f64 + seed) * 0.7548776662).fract() * 2.0 - 1.0)
        .collect()
}

/// Asserts element-wise closeness (relative `tol`, absolute near zero), reporting only the first mismatch.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else {
            (g - w).abs() <= tol * w.abs().max(1.0) || g == w
        };
        assert!(ok, "{what}: element {k}: device {g:e}, reference {w:e}");
    }
}

/// Compares `source` with `tests/golden/NAME.cl`, or rewrites that file
/// when `FUSION_BLESS` is set.
pub fn check_golden(name: &str, source: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.cl"));
    if std::env::var_os("FUSION_BLESS").is_some() {
        std::fs::write(&path, source).expect("write golden file");
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {}", path.display()));
    assert_eq!(source, golden, "generated source for {name} changed");
}
