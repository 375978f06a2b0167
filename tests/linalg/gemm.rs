//! GEMM family against nalgebra: odd and tile-crossing sizes, rectangular
//! shapes (tall, wide, k ≫ m·n with split-k), every view combination,
//! transposed operands, A·Aᵀ, matrix-vector kernels and the `*` operator.
//! Bound: max |C - C_ref| ≤ 1e-12 · max(|C_ref|, 1) (entries in [-1, 1),
//! sums of at most a few thousand terms).

use crate::common;
use clfuse::Result;
use clfuse::clfuse_kernels::{self as k, GemmConfig, MultiplyOptions, Op};
use clfuse::prelude::*;
use common::linalg::*;
use common::soak::full_or;
use nalgebra::DMatrix;

const TOL: f64 = 1e-12;

fn check_product(m: usize, kk: usize, n: usize, options: &MultiplyOptions) {
    let mut rng = Rng::new((m * 31 + kk * 7 + n) as u64);
    let (a, b) = (rng.matrix(m, kk), rng.matrix(kk, n));
    let c = k::multiply_with(&to_device(&a), &to_device(&b), options).expect("multiply");
    assert_eq!((c.rows(), c.cols()), (m, n));
    let got = to_host(&c);
    if m * n * kk > 300_000_000 {
        assert_product_probe(&format!("{m}x{kk}x{n}"), &got, |x| &a * (&b * x), TOL);
    } else {
        assert_relative(&format!("{m}x{kk}x{n}"), &got, &(&a * &b), TOL);
    }
}

#[test]
fn square_sizes_around_the_tiles() {
    for n in [1, 2, 31, 32, 33, 100, 257] {
        check_product(n, n, n, &MultiplyOptions::default());
    }
}

#[test]
fn large_square() {
    check_product(1000, 1000, 1000, &MultiplyOptions::default());
    // 2049 leaves a partial tile at both edges of a large product. Its full
    // cube took over 200 s of PoCL with the tests' unoptimized kernels (in
    // each of make test's two linalg runs): CI runs it with a short inner
    // dimension, soak runs in full.
    let inner = full_or("gemm::large_square, 2049 x k x 2049, k", 100, 2049);
    check_product(2049, inner, 2049, &MultiplyOptions::default());
}

#[test]
fn rectangular_shapes() {
    for (m, kk, n) in [
        (1000, 3, 7),
        (7, 3, 1000),
        (33, 1000, 31),
        (257, 100, 2),
        (2, 100, 257),
        (0, 5, 3),
        (3, 5, 0),
        (4, 0, 3),
    ] {
        check_product(m, kk, n, &MultiplyOptions::default());
    }
}

#[test]
fn split_k_for_long_inner_dimension() {
    // k ≫ m·n: chosen automatically, and forced to awkward part counts.
    check_product(5, 100_000, 3, &MultiplyOptions::default());
    for splits in [2, 3, 7, 64] {
        check_product(
            33,
            5000,
            31,
            &MultiplyOptions {
                splits: Some(splits),
                config: None,
            },
        );
    }
}

#[test]
fn explicit_tilings() {
    let tiled = [(16, 1, 8), (32, 2, 16), (32, 4, 16), (64, 8, 8)].map(
        |(thread_block_size, work_per_thread, tile_k)| GemmConfig::Tiled {
            thread_block_size,
            work_per_thread,
            tile_k,
        },
    );
    let direct =
        [(1, 1), (3, 5), (8, 4), (16, 8)].map(|(rows, cols)| GemmConfig::Direct { rows, cols });
    // `Portable`: the device's own choice for the shape, without tensor cores.
    for config in tiled
        .into_iter()
        .chain(direct)
        .chain([GemmConfig::Portable])
    {
        for splits in [None, Some(3)] {
            check_product(
                67,
                45,
                71,
                &MultiplyOptions {
                    splits,
                    config: Some(config),
                },
            );
        }
    }
    let bad = GemmConfig::Tiled {
        thread_block_size: 30,
        work_per_thread: 4,
        tile_k: 16,
    };
    let a = MatrixCl::<f64>::zeros(2, 2).unwrap();
    let err = k::multiply_with(
        &a,
        &a,
        &MultiplyOptions {
            splits: None,
            config: Some(bad),
        },
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("multiple of work_per_thread"),
        "{err}"
    );
}

fn masked(m: &DMatrix<f64>, view: View) -> DMatrix<f64> {
    DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| {
        if view.contains(i, j) { m[(i, j)] } else { 0.0 }
    })
}

#[test]
fn every_view_combination_skips_zero_tiles_and_sets_the_view() {
    let views = [View::Entire, View::Lower, View::Upper, View::Diagonal];
    for n in [33, 100] {
        let mut rng = Rng::new(n as u64);
        // Garbage outside the views must never be read.
        let (a, b) = (rng.matrix(n, n), rng.matrix(n, n));
        for va in views {
            for vb in views {
                let da = to_device(&a).with_view(va);
                let db = to_device(&b).with_view(vb);
                let c = k::multiply(&da, &db).unwrap();
                let want = masked(&a, va) * masked(&b, vb);
                assert_relative(&format!("{va:?}·{vb:?} n={n}"), &to_host(&c), &want, TOL);
                assert_eq!(c.view(), va.union(vb), "{va:?}·{vb:?}");
            }
        }
    }
}

#[test]
fn transposed_operands_are_read_in_place() {
    let mut rng = Rng::new(5);
    let (a, b) = (rng.matrix(37, 65), rng.matrix(29, 65));
    let c = k::multiply_transposed(&to_device(&a), Op::N, &to_device(&b), Op::T).unwrap();
    assert_relative("a·bᵀ", &to_host(&c), &(&a * b.transpose()), TOL);
    let c = k::multiply_transposed(&to_device(&b), Op::T, &to_device(&b), Op::N).unwrap();
    assert_relative("bᵀ·b", &to_host(&c), &(b.transpose() * &b), TOL);
    let d = rng.matrix(29, 37);
    let c = k::multiply_transposed(&to_device(&a), Op::T, &to_device(&d), Op::T).unwrap();
    assert_relative("aᵀ·dᵀ", &to_host(&c), &(a.transpose() * d.transpose()), TOL);
}

#[test]
fn multiply_transpose_computes_one_triangle_and_mirrors() {
    for (n, kk) in [(1, 1), (31, 7), (33, 100), (257, 31)] {
        let a = Rng::new(n as u64).matrix(n, kk);
        let c = k::multiply_transpose(&to_device(&a)).unwrap();
        assert_relative("a·aᵀ", &to_host(&c), &(&a * a.transpose()), TOL);
        assert_eq!(c.view(), View::Entire);
    }
}

#[test]
fn matrix_vector_kernels() {
    for (m, kk) in [
        (1, 1),
        (2, 31),
        (33, 1000),
        (1000, 33),
        (257, 0),
        (100_000, 10),
        (0, 3),
    ] {
        let mut rng = Rng::new((m + kk) as u64);
        let (a, x) = (rng.matrix(m, kk), rng.matrix(kk, 1));
        let y = k::matrix_vector_multiply(&to_device(&a), &to_device(&x)).unwrap();
        assert_relative("a·x", &to_host(&y), &(&a * &x), TOL);
        let xt = rng.matrix(1, m);
        let y = k::row_vector_matrix_multiply(&to_device(&xt), &to_device(&a)).unwrap();
        assert_relative("xᵀ·a", &to_host(&y), &(&xt * &a), TOL);
        for view in [View::Lower, View::Upper] {
            if m == kk || kk > 0 {
                let da = to_device(&a).with_view(view);
                let y = k::matrix_vector_multiply(&da, &to_device(&x)).unwrap();
                assert_relative("view·x", &to_host(&y), &(masked(&a, view) * &x), TOL);
                let y = k::row_vector_matrix_multiply(&to_device(&xt), &da).unwrap();
                assert_relative("xᵀ·view", &to_host(&y), &(&xt * masked(&a, view)), TOL);
            }
        }
    }
}

#[test]
fn dimension_errors_name_the_operation() {
    let a = MatrixCl::<f64>::zeros(2, 3).unwrap();
    for err in [
        k::multiply(&a, &a).unwrap_err(),
        k::matrix_vector_multiply(&a, &a).unwrap_err(),
        k::row_vector_matrix_multiply(&a, &a).unwrap_err(),
    ] {
        assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    }
    assert!(
        k::multiply(&a, &a)
            .unwrap_err()
            .to_string()
            .contains("multiply")
    );
}

#[test]
fn f32_products() {
    let a = MatrixCl::from_slice(2, 2, &[1.0f32, 3.0, 2.0, 4.0]).unwrap();
    assert_eq!(
        k::multiply(&a, &a).unwrap().to_vec().unwrap(),
        vec![7.0, 15.0, 10.0, 22.0]
    );
}

#[test]
fn star_operator_is_the_gemm_leaf_inside_fused_expressions() {
    let mut rng = Rng::new(11);
    let (a, b, c) = (rng.matrix(33, 31), rng.matrix(31, 35), rng.matrix(33, 35));
    let (da, db, dc) = (to_device(&a), to_device(&b), to_device(&c));
    let out = MatrixCl::<f64>::zeros(33, 35).unwrap();

    // Warm the kernels, then count: one GEMM launch with the element-wise
    // tail in its epilogue (tests/ops/epilogue.rs has the rest).
    out.assign(2.0 * (&da * &db) + &dc).unwrap();
    let before = thread_kernel_stats();
    out.assign(2.0 * (&da * &db) + &dc).unwrap();
    let used = thread_kernel_stats() - before;
    assert_eq!(used.launched, 1, "one GEMM kernel with an epilogue");
    assert_relative("2·a·b + c", &to_host(&out), &((&a * &b) * 2.0 + &c), TOL);

    // Expression operands are evaluated first; products chain.
    let e = ((&da + 1.0) * &db).eval().unwrap();
    assert_relative("(a+1)·b", &to_host(&e), &(a.add_scalar(1.0) * &b), TOL);
    let cb = rng.matrix(35, 3);
    let chained = ((&da * &db) * to_device(&cb)).eval().unwrap();
    assert_relative("(a·b)·c", &to_host(&chained), &(&a * &b * &cb), TOL);
    let shared = &da * &db;
    let twice = (&shared + &shared).eval().unwrap();
    assert_relative("p + p", &to_host(&twice), &((&a * &b) * 2.0), TOL);

    // Views flow through: Lower · Lower is Lower.
    let l = to_device(&Rng::new(2).lower(40)).with_view(View::Lower);
    let ll = (&l * &l).eval().unwrap();
    assert_eq!(ll.view(), View::Lower);

    // Mismatched shapes are an error, not a panic, and nothing is written.
    let before = to_host(&out);
    let err = out.assign(&da * &dc).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    assert_eq!(to_host(&out), before);
}

/// Asking a product for its shape or view runs nothing; the GEMM runs in
/// the driver's leaf step, once per product, and a mismatch is reported
/// by the query itself.
#[test]
fn product_queries_are_pure_and_the_leaf_step_runs_the_gemm_once() -> Result<()> {
    use clfuse::clfuse_ops::{IntoOperand, Operation};
    let a = MatrixCl::from_slice(3, 2, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let b = MatrixCl::from_slice(2, 3, &[1.0f64, 0.0, 0.0, 1.0, 1.0, 1.0])?;
    let product = (&a * &b).into_operand();
    let before = clfuse::thread_kernel_stats();
    assert_eq!(product.shape()?, Some((3, 3)));
    assert_eq!(product.view(), View::Entire);
    assert_eq!(clfuse::thread_kernel_stats() - before, Default::default());
    product.evaluate_leaves(clfuse::clfuse_ops::HeldProduct::NONE)?;
    let launched = (clfuse::thread_kernel_stats() - before).launched;
    assert!(launched >= 1);
    product.evaluate_leaves(clfuse::clfuse_ops::HeldProduct::NONE)?; // already computed: nothing more runs
    assert_eq!((clfuse::thread_kernel_stats() - before).launched, launched);
    assert_eq!(product.view(), View::Entire);
    let d = MatrixCl::<f64>::zeros(3, 3)?;
    d.assign(Expr(product) + 1.0)?;
    let host = d.to_vec()?;
    // Row i of a·b is (a[i,0], a[i,1], a[i,0] + a[i,1]), plus one.
    for i in 0..3 {
        let (x, y) = (a.to_vec()?[i], a.to_vec()?[i + 3]);
        assert_eq!(
            [host[i], host[i + 3], host[i + 6]],
            [x + 1.0, y + 1.0, x + y + 1.0]
        );
    }
    let mismatch = (&a * &a).into_operand();
    assert!(matches!(
        mismatch.shape(),
        Err(clfuse::Error::DimensionMismatch { .. })
    ));
    Ok(())
}

/// FP64 tensor cores (#21): the default on NVIDIA devices of compute
/// capability 8.0 and 9.0+, checked against nalgebra at odd sizes, with
/// each tensor-core blocking, split-k, views and transposes; elsewhere the
/// tensor-core kernel is refused with its reason and the default stays
/// portable.
#[test]
fn tensor_cores_where_the_device_has_them() -> Result<()> {
    let info = clfuse::Runtime::get()?.device_info().clone();
    let tensor = |thread_block_size, work_per_thread, tile_k| GemmConfig::TensorCores {
        thread_block_size,
        work_per_thread,
        tile_k,
    };
    if !info.has_fp64_tensor_cores() {
        let err = tensor(128, 8, 8).validate::<f64>().unwrap_err();
        assert!(err.to_string().contains("compute capability"), "{err}");
        assert!(!matches!(
            GemmConfig::for_device()?,
            GemmConfig::TensorCores { .. }
        ));
        return Ok(());
    }
    if std::env::var_os("FUSION_GEMM").is_none() {
        assert_eq!(GemmConfig::for_device()?, tensor(128, 8, 8));
    }
    // A warp of a 96-wide tile would own 24 rows: not whole fragments.
    let err = tensor(96, 6, 8).validate::<f64>().unwrap_err();
    assert!(err.to_string().contains("multiple of 64"), "{err}");
    // Slices of 8 take m16n8k4 steps, of 16 and 32 m16n8k16 ones (on 8.x
    // all take m8n8k4).
    for config in [
        tensor(128, 8, 8),
        tensor(64, 4, 8),
        tensor(128, 8, 16),
        tensor(64, 4, 16),
        tensor(64, 4, 32),
    ] {
        let options = MultiplyOptions {
            splits: None,
            config: Some(config),
        };
        for n in [1, 15, 64, 65, 1000, 4097] {
            check_product(n, n, n, &options);
        }
        for (m, kk, n) in [(1000, 3, 7), (33, 1000, 31), (257, 100, 2)] {
            check_product(m, kk, n, &options);
        }
        check_product(
            33,
            5000,
            31,
            &MultiplyOptions {
                splits: Some(7),
                ..options
            },
        );
    }
    // f32 takes the portable kernel.
    let a = MatrixCl::from_slice(2, 2, &[1.0f32, 2.0, 3.0, 4.0])?;
    let product = k::multiply_with(
        &a,
        &a,
        &MultiplyOptions {
            splits: None,
            config: Some(tensor(128, 8, 8)),
        },
    )?;
    assert_eq!(product.to_vec()?, vec![7.0, 10.0, 15.0, 22.0]);
    Ok(())
}

/// Tall-skinny products (a batch of chains' `x·θ` and `xᵀ·D`) take the
/// skinny kernels: against nalgebra for 1, 2, 7 and 16 columns, at row
/// counts around the dispatch threshold and the work-group size, directly
/// and through `multiply` / `multiply_transposed`; a triangular view of
/// the tall operand is honoured. `xᵀ·D` takes both of its kernels: sums in
/// registers (8 or 4 rows per team: up to 100 columns by 7, 33 by 16) and
/// local-memory tiles (256 columns by 7 and 16).
#[test]
fn tall_skinny_products() -> Result<()> {
    for (rows, p) in [
        (4096usize, 3usize),
        (5000, 10),
        (10_001, 33),
        (2100, 256),
        (3001, 100),
        (257, 5),
        (1, 1),
        (0, 4),
    ] {
        for cols in [1usize, 2, 7, 16] {
            let mut rng = Rng::new((rows * 13 + p * 5 + cols) as u64);
            let (a, x) = (rng.matrix(rows, p), rng.matrix(p, cols));
            let what = format!("{rows}x{p} * {p}x{cols}");
            let direct = k::matrix_skinny_multiply(&to_device(&a), &to_device(&x))?;
            assert_relative(&what, &to_host(&direct), &(&a * &x), TOL);
            let through = k::multiply(&to_device(&a), &to_device(&x))?;
            assert_relative(&what, &to_host(&through), &(&a * &x), TOL);

            let d = rng.matrix(rows, cols);
            let what = format!("({rows}x{p})ᵀ * {rows}x{cols}");
            let want = a.transpose() * &d;
            let direct = k::transposed_skinny_multiply(&to_device(&a), &to_device(&d))?;
            assert_eq!((direct.rows(), direct.cols()), (p, cols));
            assert_relative(&what, &to_host(&direct), &want, TOL);
            let through = k::multiply_transposed(&to_device(&a), Op::T, &to_device(&d), Op::N)?;
            assert_relative(&what, &to_host(&through), &want, TOL);
        }
    }
    // A lower-triangular tall operand: only its stored triangle counts.
    let mut rng = Rng::new(99);
    let a = rng.matrix(5000, 6);
    let lower = DMatrix::from_fn(5000, 6, |i, j| if i >= j { a[(i, j)] } else { 0.0 });
    let x = rng.matrix(6, 3);
    let device = to_device(&a).with_view(View::Lower);
    assert_relative(
        "lower * x",
        &to_host(&k::multiply(&device, &to_device(&x))?),
        &(&lower * &x),
        TOL,
    );
    let d = rng.matrix(5000, 3);
    let got = k::multiply_transposed(&device, Op::T, &to_device(&d), Op::N)?;
    assert_relative("lowerᵀ * d", &to_host(&got), &(lower.transpose() * &d), TOL);
    // `x` too large to stage in local memory (300 x 16): read from global.
    let (a, x) = (rng.matrix(4200, 300), rng.matrix(300, 16));
    let got = k::matrix_skinny_multiply(&to_device(&a), &to_device(&x))?;
    assert_relative("4200x300 * 300x16", &to_host(&got), &(&a * &x), TOL);
    // More columns of `a` than a tile takes: the GEMM serves the product.
    let (a, d) = (rng.matrix(4100, 257), rng.matrix(4100, 2));
    let got = k::multiply_transposed(&to_device(&a), Op::T, &to_device(&d), Op::N)?;
    assert_relative("257 columns", &to_host(&got), &(a.transpose() * &d), TOL);
    assert!(matches!(
        k::transposed_skinny_multiply(&to_device(&a), &to_device(&d)),
        Err(clfuse::Error::InvalidArgument { argument: "a", .. })
    ));
    // Too many columns, or a triangular right operand: a clear error.
    let wide = to_device(&rng.matrix(6, 17));
    assert!(matches!(
        k::matrix_skinny_multiply(&device, &wide),
        Err(clfuse::Error::InvalidArgument { argument: "x", .. })
    ));
    Ok(())
}
