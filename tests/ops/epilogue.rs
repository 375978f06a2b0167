//! Epilogue fusion: an element-wise expression of a matrix product runs as
//! ONE kernel, the GEMM applying the expression where it stores each
//! element. Against nalgebra at odd and tile-crossing sizes; the launch
//! count says whether it fused, and the cases that must not fuse (vectors,
//! split-k, a target that is an operand, a tail needing other elements)
//! still compute the right values. Bound: 1e-12 relative.

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::thread_kernel_stats;
use common::linalg::*;
use common::reference::inv_logit as inv_logit_ref;
use nalgebra::DMatrix;

const TOL: f64 = 1e-12;

/// Kernels launched by `f` on this thread.
fn launches(f: impl FnOnce() -> Result<()>) -> Result<u64> {
    let before = thread_kernel_stats();
    f()?;
    Ok((thread_kernel_stats() - before).launched)
}

fn map(m: &DMatrix<f64>, f: impl Fn(f64) -> f64) -> DMatrix<f64> {
    m.map(f)
}

#[test]
fn inv_logit_of_a_product_plus_one_at_odd_sizes() -> Result<()> {
    for (m, k, n) in [
        (2, 1, 2),
        (15, 15, 15),
        (64, 64, 64),
        (65, 33, 65),
        (131, 100, 97),
    ] {
        let mut rng = Rng::new((m * 7 + k * 3 + n) as u64);
        let (x, b) = (rng.matrix(m, k), rng.matrix(k, n));
        let (dx, db) = (to_device(&x), to_device(&b));
        let d = MatrixCl::<f64>::zeros(m, n)?;
        let used = launches(|| d.assign(inv_logit(&dx * &db + 1.0)))?;
        assert_eq!(used, 1, "{m}x{k}x{n}: one kernel");
        let want = map(&(&x * &b), |v| inv_logit_ref(v + 1.0));
        assert_relative(&format!("{m}x{k}x{n}"), &to_host(&d), &want, TOL);
        // `eval` takes the same path.
        let e = launches(|| inv_logit(&dx * &db + 1.0).eval().map(drop))?;
        assert_eq!(e, 1, "{m}x{k}x{n}: eval, one kernel");
    }
    Ok(())
}

#[test]
fn the_tails_the_issue_names() -> Result<()> {
    let mut rng = Rng::new(5);
    let (a, b, c) = (rng.matrix(33, 31), rng.matrix(31, 35), rng.matrix(33, 35));
    let (da, db, dc) = (to_device(&a), to_device(&b), to_device(&c));
    let ab = &a * &b;

    let d = MatrixCl::<f64>::zeros(33, 35)?;
    assert_eq!(launches(|| d.assign((&da * &db).elt_multiply(&dc)))?, 1);
    assert_relative("(a*b).*c", &to_host(&d), &ab.component_mul(&c), TOL);

    assert_eq!(launches(|| d.assign(&da * &db - &dc))?, 1);
    assert_relative("a*b - c", &to_host(&d), &(&ab - &c), TOL);

    // The target read at its own element only: still one kernel, in place.
    let c2 = to_device(&c);
    assert_eq!(launches(|| c2.assign(&da * &db - &c2))?, 1);
    assert_relative("c = a*b - c", &to_host(&c2), &(&ab - &c), TOL);

    // Several leaves, the same one twice, a select on the product's sign.
    let e = (2.0f64 * (&da * &db) + &dc + &dc).eval()?;
    assert_relative("2ab + c + c", &to_host(&e), &(&ab * 2.0 + &c * 2.0), TOL);
    let s = select(gt(&da * &db, 0.0), &dc, 0.0).eval()?;
    let want = DMatrix::from_fn(
        33,
        35,
        |i, j| if ab[(i, j)] > 0.0 { c[(i, j)] } else { 0.0 },
    );
    assert_relative("select(ab > 0, c, 0)", &to_host(&s), &want, TOL);

    // Operands that are expressions are evaluated first.
    let sum = launches(|| d.assign(exp((&da + 1.0) * &db)))?;
    assert_eq!(sum, 2, "the operand's kernel and the GEMM");
    let want = map(&(a.add_scalar(1.0) * &b), f64::exp);
    assert_relative("exp((a+1)*b)", &to_host(&d), &want, TOL);
    Ok(())
}

#[test]
fn what_must_not_fuse_is_still_right() -> Result<()> {
    let mut rng = Rng::new(9);
    // A target that is an operand: the GEMM reads it while the tail writes.
    let (a, b) = (rng.matrix(40, 40), rng.matrix(40, 40));
    let (da, db) = (to_device(&a), to_device(&b));
    let used = launches(|| da.assign(&da * &db + 1.0))?;
    assert!(used >= 2, "a separate GEMM, {used} kernels");
    assert_relative(
        "a = a*b + 1",
        &to_host(&da),
        &(&a * &b).add_scalar(1.0),
        TOL,
    );

    // A tail that reads the target elsewhere goes through a temporary.
    let (da, c) = (to_device(&a), rng.matrix(40, 40));
    let dc = to_device(&c);
    dc.assign(&da * &db + transpose(&dc))?;
    assert_relative(
        "c = a*b + cᵀ",
        &to_host(&dc),
        &(&a * &b + c.transpose()),
        TOL,
    );

    // Vectors take the matrix-vector kernels.
    let v = rng.matrix(40, 1);
    let out = exp(&da * &to_device(&v)).eval()?;
    assert_relative("exp(a*v)", &to_host(&out), &map(&(&a * &v), f64::exp), TOL);

    // An empty inner dimension: the product is zero.
    let (e1, e2) = (MatrixCl::<f64>::zeros(5, 0)?, MatrixCl::<f64>::zeros(0, 4)?);
    let out = exp(&e1 * &e2).eval()?;
    assert_eq!(out.to_vec()?, vec![1.0; 20]);

    // A shared product also read under a reduction (a row's log-sum-exp):
    // the GEMM cannot hold the other elements, so the product is computed.
    let p = &da * &db;
    let centred = (&p - colwise_broadcast(rowwise_log_sum_exp(&p), 40)).eval()?;
    let ab = &a * &b;
    let want = DMatrix::from_fn(40, 40, |i, j| {
        let row = ab.row(i);
        let top = row.max();
        ab[(i, j)] - (top + row.iter().map(|v| (v - top).exp()).sum::<f64>().ln())
    });
    assert_relative("p - lse(p)", &to_host(&centred), &want, TOL);

    // A row-wise reduction of the product stays two kernels and is right.
    let r = rowwise_sum(&da * &db).eval()?;
    let want = DMatrix::from_fn(40, 1, |i, _| (&a * &b).row(i).sum());
    assert_relative("rowwise_sum(a*b)", &to_host(&r), &want, TOL);

    // Shapes that disagree: an error, and the target unchanged.
    let d = MatrixCl::<f64>::zeros(40, 40)?;
    let wrong = to_device(&rng.matrix(40, 3));
    let err = d.assign(exp(&da * &wrong)).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    assert_eq!(d.to_vec()?, vec![0.0; 1600]);
    Ok(())
}

#[test]
fn triangular_operands_and_f32() -> Result<()> {
    // Tiles known to be zero are skipped; the tail still sees every element.
    let l = Rng::new(2).lower(37);
    let dl = to_device(&l).with_view(View::Lower);
    let out = exp(&dl * &dl).eval()?;
    assert_relative("exp(L*L)", &to_host(&out), &map(&(&l * &l), f64::exp), TOL);

    let a: Vec<f32> = (0..12).map(|v| v as f32 * 0.25).collect();
    let da = MatrixCl::from_slice(4, 3, &a)?;
    let db = MatrixCl::from_slice(3, 4, &a)?;
    let used = launches(|| (&da * &db + 1.0f32).eval().map(drop))?;
    assert_eq!(used, 1);
    let got = (&da * &db + 1.0f32).eval()?.to_vec()?;
    for i in 0..4 {
        for j in 0..4 {
            let want: f32 = (0..3).map(|k| a[i + 4 * k] * a[k + 3 * j]).sum::<f32>() + 1.0;
            assert!((got[i + 4 * j] - want).abs() <= 1e-5 * want.abs().max(1.0));
        }
    }
    Ok(())
}

#[test]
fn a_second_evaluation_compiles_nothing_and_aliases_get_their_own_kernel() -> Result<()> {
    let mut rng = Rng::new(3);
    let (a, b, c, e) = (
        rng.matrix(20, 10),
        rng.matrix(10, 30),
        rng.matrix(20, 30),
        rng.matrix(20, 30),
    );
    let (da, db, dc, de) = (to_device(&a), to_device(&b), to_device(&c), to_device(&e));
    let d = MatrixCl::<f64>::zeros(20, 30)?;
    d.assign(&da * &db + &dc + &de)?;
    let before = thread_kernel_stats();
    d.assign(&da * &db + &dc + &de)?;
    assert_eq!((thread_kernel_stats() - before).built(), 0, "cached");
    assert_relative("ab + c + e", &to_host(&d), &(&a * &b + &c + &e), TOL);
    // `c + c` against `c + e`: another alias pattern, another kernel.
    d.assign(&da * &db + &dc + &dc)?;
    assert_relative("ab + c + c", &to_host(&d), &(&a * &b + &c * 2.0), TOL);
    Ok(())
}

#[test]
fn the_generated_epilogue_reads_like_the_expression() -> Result<()> {
    let a = MatrixCl::<f64>::zeros(8, 8)?;
    let d = MatrixCl::<f64>::zeros(8, 8)?;
    let source = clfuse::clfuse_ops::source_of(&output(&d, log1p_exp(&a * &a) + 2.5))?;
    let expected =
        "inline void epilogue(const int i, const int j, const double product EPILOGUE_PARAMS) {
  double var1 = log1p_exp(product);
  double var3 = var1 + var2;
  var4_global[i + var4_rows * j] = var3;
}

#define EPILOGUE
";
    assert!(source.contains(expected), "{source}");
    Ok(())
}

/// A refused epilogue keeps the product it planned: an operand that is an
/// expression is evaluated once, not again by the plain path.
#[test]
fn a_refused_epilogue_evaluates_its_operands_once() -> Result<()> {
    let mut rng = Rng::new(11);
    let (a, b, c) = (rng.matrix(40, 40), rng.matrix(40, 40), rng.matrix(40, 40));
    let (da, db, dc) = (to_device(&a), to_device(&b), to_device(&c));
    // The tail reads the target at other elements: no epilogue.
    let used = launches(|| dc.assign((&da + 1.0) * &db + transpose(&dc)))?;
    let want = &(a.add_scalar(1.0) * &b) + c.transpose();
    assert_relative("(a+1)*b + cᵀ", &to_host(&dc), &want, TOL);
    // a + 1, the GEMM, the target's copy and the fused tail; evaluating
    // a + 1 again for the plain path made it five.
    assert_eq!(used, 4, "{used} kernels");
    Ok(())
}

/// Which product takes the epilogue is part of the kernel's cache key: with
/// the first product computed already (a row-wise sum read it), the second
/// takes it, and the kernel cached for the first taking it is not reused.
#[test]
fn the_product_taking_the_epilogue_is_part_of_the_cache_key() -> Result<()> {
    let mut rng = Rng::new(13);
    let (a, b, c, e) = (
        rng.matrix(20, 20),
        rng.matrix(20, 20),
        rng.matrix(20, 20),
        rng.matrix(20, 20),
    );
    let (da, db, dc, de) = (to_device(&a), to_device(&b), to_device(&c), to_device(&e));
    let want = &map(&(&a * &b), f64::exp) + &(&c * &e);
    let d = MatrixCl::<f64>::zeros(20, 20)?;
    let (p1, p2) = (&da * &db, &dc * &de);
    d.assign(exp(&p1) + &p2)?;
    assert_relative("exp(ab) + ce", &to_host(&d), &want, TOL);
    let (p1, p2) = (&da * &db, &dc * &de);
    rowwise_sum(&p1).eval()?;
    let d = MatrixCl::<f64>::zeros(20, 20)?;
    d.assign(exp(&p1) + &p2)?;
    assert_relative("exp(ab) + ce, ab computed", &to_host(&d), &want, TOL);
    Ok(())
}
