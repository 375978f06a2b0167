//! Host references for the linear-algebra leaves: deterministic random
//! matrices, nalgebra conversions, the paper's Toeplitz SPD matrices and
//! randomised (Freivalds) checks for sizes where an O(n³) host product is slow.
#![allow(dead_code)]

use clfuse::prelude::*;
use nalgebra::DMatrix;

/// A deterministic generator (SplitMix64), so failures reproduce.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// Uniform in [-1, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn matrix(&mut self, rows: usize, cols: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |_, _| self.next())
    }
    /// Lower triangular, well conditioned: diagonal in [1, 2), the rest in [-1, 1) / n.
    pub fn lower(&mut self, n: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, n, |i, j| {
            let v = self.next();
            if i == j {
                1.5 + 0.5 * v
            } else if i > j {
                v / n as f64
            } else {
                0.0
            }
        })
    }
}

pub fn to_device(m: &DMatrix<f64>) -> MatrixCl<f64> {
    MatrixCl::from_slice(m.nrows(), m.ncols(), m.as_slice()).expect("upload")
}

pub fn to_host(m: &MatrixCl<f64>) -> DMatrix<f64> {
    DMatrix::from_vec(m.rows(), m.cols(), m.to_vec().expect("download"))
}

/// The paper's SPD test matrix: A_ij = n - |i - j|, A_ii = n².
pub fn toeplitz(n: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            (n * n) as f64
        } else {
            n as f64 - (i as f64 - j as f64).abs()
        }
    })
}

/// max |got - want| / max(max |want|, 1).
pub fn relative_error(got: &DMatrix<f64>, want: &DMatrix<f64>) -> f64 {
    assert_eq!(got.shape(), want.shape(), "shapes differ");
    let scale = want.amax().max(1.0);
    (got - want).amax() / scale
}

pub fn assert_relative(what: &str, got: &DMatrix<f64>, want: &DMatrix<f64>, tolerance: f64) {
    let err = relative_error(got, want);
    assert!(
        err <= tolerance,
        "{what}: relative error {err:e} > {tolerance:e}"
    );
}

/// Freivalds-style check of `got = product` through two random vectors:
/// compares got·x with `apply(x)`, both O(n²).
pub fn assert_product_probe(
    what: &str,
    got: &DMatrix<f64>,
    apply: impl Fn(&DMatrix<f64>) -> DMatrix<f64>,
    tolerance: f64,
) {
    let mut rng = Rng::new(99);
    for _ in 0..2 {
        let x = rng.matrix(got.ncols(), 1);
        assert_relative(what, &(got * &x), &apply(&x), tolerance);
    }
}
