//! Criterion benchmarks (developer use): fused kernels vs chains of
//! single-operation kernels. `cargo bench`; HTML reports in target/criterion.
//! The user-facing comparison with plots is the `bench_report` binary of this crate.

use clfuse::prelude::*;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn vector(n: usize, salt: f64) -> MatrixCl<f64> {
    let host: Vec<f64> = (0..n)
        .map(|i| ((i % 1000) as f64 + salt) / 1000.0)
        .collect();
    match MatrixCl::from_slice(n, 1, &host) {
        Ok(m) => m,
        Err(e) => panic!("benchmark setup: {e}"),
    }
}

fn finish() {
    if let Ok(rt) = clfuse::Runtime::get() {
        let _ = rt.finish();
    }
}

fn elementwise(c: &mut Criterion) {
    let mut group = c.benchmark_group("d = c.*(a+b)");
    for n in [1_000usize, 100_000, 1_000_000] {
        let (a, b, cv) = (vector(n, 0.0), vector(n, 1.0), vector(n, 2.0));
        let d = vector(n, 3.0);
        group.bench_with_input(BenchmarkId::new("fused", n), &n, |bench, _| {
            bench.iter(|| {
                let _ = d.assign(elt_multiply(&cv, &a + &b));
                finish();
            })
        });
        group.bench_with_input(BenchmarkId::new("chain", n), &n, |bench, _| {
            bench.iter(|| {
                if let Ok(t) = (&a + &b).eval() {
                    let _ = d.assign(elt_multiply(&cv, &t));
                }
                finish();
            })
        });
    }
    group.finish();
}

fn reductions(c: &mut Criterion) {
    let mut group = c.benchmark_group("sum(a.*b)");
    for n in [1_000usize, 100_000, 1_000_000] {
        let (a, b) = (vector(n, 0.0), vector(n, 1.0));
        group.bench_with_input(BenchmarkId::new("fused", n), &n, |bench, _| {
            bench.iter(|| sum(elt_multiply(&a, &b)))
        });
        group.bench_with_input(BenchmarkId::new("chain", n), &n, |bench, _| {
            bench.iter(|| elt_multiply(&a, &b).eval().and_then(|p| sum(&p)))
        });
    }
    group.finish();
}

/// The paper's SPD test matrix: A_ij = n - |i - j|, A_ii = n².
fn toeplitz(n: usize) -> MatrixCl<f64> {
    let host: Vec<f64> = (0..n * n)
        .map(|e| {
            let (i, j) = ((e % n) as f64, (e / n) as f64);
            if i == j {
                (n * n) as f64
            } else {
                n as f64 - (i - j).abs()
            }
        })
        .collect();
    match MatrixCl::from_slice(n, n, &host) {
        Ok(m) => m,
        Err(e) => panic!("benchmark setup: {e}"),
    }
}

/// The hand-written leaves (GPU/CPU comparisons with faer are in bench_report).
fn linear_algebra(c: &mut Criterion) {
    use clfuse::clfuse_kernels as k;
    let mut group = c.benchmark_group("linear algebra");
    group.sample_size(10);
    for n in [256usize, 512] {
        let a = toeplitz(n);
        group.bench_with_input(BenchmarkId::new("dgemm", n), &n, |bench, _| {
            bench.iter(|| {
                let _ = k::multiply(&a, &a);
                finish();
            })
        });
        group.bench_with_input(BenchmarkId::new("cholesky", n), &n, |bench, _| {
            bench.iter(|| k::cholesky_decompose(&a).map(drop))
        });
        if let Ok(l) = k::cholesky_decompose(&a) {
            group.bench_with_input(BenchmarkId::new("tri_inverse", n), &n, |bench, _| {
                bench.iter(|| {
                    let _ = k::tri_inverse(&l);
                    finish();
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, elementwise, reductions, linear_algebra);
criterion_main!(benches);
