//! Reductions fused with their producers, multi-output kernels, checks and optional outputs.

use crate::common;

use clfuse::Error;
use clfuse::Result;
use clfuse::prelude::*;
use common::assert_close;
use nalgebra::DMatrix;

fn host(rows: usize, cols: usize, salt: usize) -> DMatrix<f64> {
    DMatrix::from_fn(rows, cols, |i, j| {
        ((i * 13 + j * 7 + salt * 3) % 23) as f64 / 8.0 - 1.2
    })
}

const SHAPES: [(usize, usize); 8] = [
    (1, 1),
    (63, 1),
    (64, 2),
    (65, 3),
    (1000, 4),
    (4097, 2),
    (2, 1000),
    (0, 3),
];

#[test]
fn rowwise_reductions() -> Result<()> {
    for (r, c) in SHAPES {
        let h = host(r, c, 1);
        let m = MatrixCl::try_from(&h)?;
        let sums: Vec<f64> = h
            .row_iter()
            .map(|row| row.iter().map(|v| v.exp()).sum())
            .collect();
        assert_close(
            "rowwise_sum(exp)",
            &rowwise_sum(exp(&m)).eval()?.to_vec()?,
            &sums,
            1e-13,
        );
        let prods: Vec<f64> = h.row_iter().map(|row| row.iter().product()).collect();
        assert_close(
            "rowwise_prod",
            &rowwise_prod(&m).eval()?.to_vec()?,
            &prods,
            1e-12,
        );
        let maxs: Vec<f64> = h
            .row_iter()
            .map(|row| row.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
            .collect();
        assert_eq!(rowwise_max(&m).eval()?.to_vec()?, maxs);
        let mins: Vec<f64> = h
            .row_iter()
            .map(|row| row.iter().cloned().fold(f64::INFINITY, f64::min))
            .collect();
        assert_eq!(rowwise_min(&m).eval()?.to_vec()?, mins);
    }
    Ok(())
}

#[test]
fn colwise_reductions() -> Result<()> {
    for (r, c) in SHAPES {
        let h = host(r, c, 2);
        let m = MatrixCl::try_from(&h)?;
        let sums: Vec<f64> = h
            .column_iter()
            .map(|col| col.iter().map(|v| v * v).sum())
            .collect();
        assert_close(
            "colwise_sum(square)",
            &colwise_sum(square(&m)).eval()?.to_vec()?,
            &sums,
            1e-12,
        );
        let prods: Vec<f64> = h
            .column_iter()
            .map(|col| col.iter().map(|v| 1.0 + v / 100.0).product())
            .collect();
        assert_close(
            "colwise_prod",
            &colwise_prod(1.0f64 + &m / 100.0).eval()?.to_vec()?,
            &prods,
            1e-12,
        );
        let maxs: Vec<f64> = h
            .column_iter()
            .map(|col| col.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
            .collect();
        assert_eq!(colwise_max(&m).eval()?.to_vec()?, maxs);
        let mins: Vec<f64> = h
            .column_iter()
            .map(|col| col.iter().cloned().fold(f64::INFINITY, f64::min))
            .collect();
        assert_eq!(colwise_min(&m).eval()?.to_vec()?, mins);
    }
    // Integers.
    let i = MatrixCl::from_slice(3, 2, &[1, 5, -2, 4, 0, 9])?;
    assert_eq!(colwise_sum(&i).eval()?.to_vec()?, vec![4, 13]);
    assert_eq!(colwise_max(&i).eval()?.to_vec()?, vec![5, 9]);
    assert_eq!(rowwise_min(&i).eval()?.to_vec()?, vec![1, 0, -2]);
    Ok(())
}

#[test]
fn full_reductions_are_one_kernel_plus_a_host_step() -> Result<()> {
    for (r, c) in SHAPES {
        let (ha, hb) = (host(r, c, 3), host(r, c, 4));
        let (a, b) = (MatrixCl::try_from(&ha)?, MatrixCl::try_from(&hb)?);
        let want: f64 = ha
            .iter()
            .zip(hb.iter())
            .map(|(x, y)| (x - y) * (x - y))
            .sum();
        let before = thread_kernel_stats();
        let got = sum(square(&a - &b))?;
        assert!((thread_kernel_stats() - before).launched <= 1);
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{r}x{c}: {got} vs {want}"
        );
        let want_dot: f64 = ha.iter().zip(hb.iter()).map(|(x, y)| x * y).sum();
        assert!((sum(elt_multiply(&a, &b))? - want_dot).abs() <= 1e-12 * want_dot.abs().max(1.0));
        if r * c > 0 {
            assert_eq!(max(&a)?, ha.max());
            assert_eq!(min(&a)?, ha.min());
        }
    }
    assert_eq!(prod(constant(2.0, 3, 3))?, 512.0);
    assert_eq!(sum(constant(1, 0, 0))?, 0);
    Ok(())
}

#[test]
fn matrix_vector_multiply_fuses_with_a_glm_link() -> Result<()> {
    // (7, 0): no columns, an empty matrix operand in a kernel over 7 rows.
    for (n, p) in [(1, 1), (65, 3), (1000, 50), (3, 200), (7, 0)] {
        let x = host(n, p, 5);
        let beta = host(p, 1, 6) / 10.0;
        let (dx, db) = (MatrixCl::try_from(&x)?, MatrixCl::try_from(&beta)?);
        let alpha = 0.3;
        let before = thread_kernel_stats();
        let mu = clfuse::clfuse_ops::inv_logit(matrix_vector_multiply(&dx, &db) + alpha).eval()?;
        assert_eq!((thread_kernel_stats() - before).launched, 1, "one kernel");
        let want: Vec<f64> = (&x * &beta)
            .iter()
            .map(|v| 1.0 / (1.0 + (-(v + alpha)).exp()))
            .collect();
        assert_close("inv_logit(x * beta + alpha)", &mu.to_vec()?, &want, 1e-13);
    }
    Ok(())
}

#[test]
fn views_bound_row_sums() -> Result<()> {
    let n = 65;
    let h = host(n, n, 7);
    let lower = MatrixCl::try_from(&h)?.with_view(View::Lower);
    let src = rowwise_sum(&lower).kernel_source()?;
    assert!(
        src.contains("min(i + 1,"),
        "the loop is bounded by the view:\n{src}"
    );
    let want: Vec<f64> = (0..n).map(|i| (0..=i).map(|j| h[(i, j)]).sum()).collect();
    assert_close(
        "rowwise_sum(lower)",
        &rowwise_sum(&lower).eval()?.to_vec()?,
        &want,
        1e-13,
    );
    let upper = MatrixCl::try_from(&h)?.with_view(View::Upper);
    let want: Vec<f64> = (0..n).map(|i| (i..n).map(|j| h[(i, j)]).sum()).collect();
    assert_close(
        "rowwise_sum(upper)",
        &rowwise_sum(&upper).eval()?.to_vec()?,
        &want,
        1e-13,
    );
    Ok(())
}

#[test]
fn element_wise_outputs_and_reductions_in_one_kernel() -> Result<()> {
    // A GLM-shaped pass: per-element derivative plus two sums.
    let n = 4097;
    let (hy, he) = (host(n, 1, 8), host(n, 1, 9));
    let (y, eta) = (MatrixCl::try_from(&hy)?, MatrixCl::try_from(&he)?);
    let derivative = MatrixCl::<f64>::zeros(n, 1)?;
    let (total, total_sq) = (MatrixCl::<f64>::zeros(1, 1)?, MatrixCl::<f64>::zeros(1, 1)?);
    let diff = &y - &eta;
    let before = thread_kernel_stats();
    fuse((
        output(&derivative, &diff * 2.0),
        output(&total, colwise_sum(&diff)),
        output(&total_sq, colwise_sum(square(&diff))),
    ))?;
    let delta = thread_kernel_stats() - before;
    assert_eq!(
        delta.launched,
        1 + 2,
        "one fused kernel, plus the two second steps of 4097 rows"
    );
    let d: Vec<f64> = hy.iter().zip(he.iter()).map(|(a, b)| a - b).collect();
    assert_close(
        "derivative",
        &derivative.to_vec()?,
        &d.iter().map(|v| v * 2.0).collect::<Vec<_>>(),
        1e-15,
    );
    assert_close("sum", &total.to_vec()?, &[d.iter().sum()], 1e-12);
    assert_close(
        "sum sq",
        &total_sq.to_vec()?,
        &[d.iter().map(|v| v * v).sum()],
        1e-12,
    );
    Ok(())
}

#[test]
fn optional_outputs_leave_the_kernel() -> Result<()> {
    let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
    let (d, g) = (MatrixCl::<f64>::zeros(3, 1)?, MatrixCl::<f64>::zeros(3, 1)?);
    let with = results((&d, &g)).kernel_source((&x * 2.0, lgamma(&x)))?;
    assert!(with.contains("lgamma("));
    for want_g in [false, true] {
        let list = (
            output(&d, &x * 2.0),
            optional(output(&g, lgamma(&x)), want_g),
        );
        let src = clfuse::clfuse_ops::source_of(&list)?;
        assert_eq!(src.contains("lgamma("), want_g, "{src}");
        fuse(list)?;
    }
    assert_eq!(d.to_vec()?, vec![2.0, 4.0, 6.0]);
    assert_close(
        "lgamma",
        &g.to_vec()?,
        &[0.0, 0.0, std::f64::consts::LN_2],
        1e-14,
    );
    Ok(())
}

/// A check that passes leaves its flag for a later check to take without a
/// reset; a failing check's flag must never be taken, and a check fused
/// into a kernel twice must see each run's own result.
#[test]
fn check_flags_are_reused_only_when_clean() -> Result<()> {
    let good = MatrixCl::from_slice(3, 1, &[0, 1, 1])?;
    let bad = MatrixCl::from_slice(3, 1, &[0, 1, 5])?;
    for round in 0..6 {
        assert!(
            check(&good, "f", "y", le(&good, 1)).run().is_ok(),
            "round {round}"
        );
        let e = check(&bad, "f", "y", le(&bad, 1)).run().unwrap_err();
        assert!(
            matches!(e, Error::CheckFailed { row: 2, col: 0, .. }),
            "round {round}: {e}"
        );
        assert!(
            check(&good, "f", "y", le(&good, 1)).run().is_ok(),
            "round {round}: a failing check's flag was taken"
        );
    }
    // One check object in two kernels: clean, then failing, then clean.
    let y = MatrixCl::from_slice(3, 1, &[0, 1, 1])?;
    let out = MatrixCl::<i32>::uninitialized(3, 1)?;
    let guard = check(&y, "f", "y", le(&y, 1));
    fuse((&guard, output(&out, &y + 1)))?;
    y.assign(&y * 3)?;
    assert!(fuse((&guard, output(&out, &y + 1))).is_err());
    y.assign(&y - &y)?;
    fuse((&guard, output(&out, &y + 1)))?;
    assert_eq!(out.to_vec()?, vec![1, 1, 1]);
    Ok(())
}

#[test]
fn checks_report_function_argument_position_and_value() -> Result<()> {
    let y = MatrixCl::from_slice(3, 2, &[0, 1, 1, 0, 7, 1])?;
    let e = check(&y, "bernoulli_logit_glm", "y", ge(&y, 0).and(le(&y, 1)))
        .requiring("0 or 1")
        .run()
        .unwrap_err();
    assert_eq!(
        e,
        Error::CheckFailed {
            function: "bernoulli_logit_glm".into(),
            argument: "y".into(),
            row: 1,
            col: 1,
            value: 7.0,
            requirement: "0 or 1".into()
        }
    );
    assert!(check(&y, "f", "y", ge(&y, 0)).run().is_ok());
    let m = MatrixCl::from_slice(2, 3, &[1.0, 2.0, f64::NAN, 4.0, f64::INFINITY, -1.0])?;
    let e = check_nan(&m, "f", "m").run().unwrap_err();
    assert!(
        matches!(e, Error::CheckFailed { row: 0, col: 1, .. }),
        "{e}"
    );
    let e = check_finite(&m, "f", "m").run().unwrap_err();
    assert!(
        matches!(e, Error::CheckFailed { row: 0, col: 1, .. }),
        "{e}"
    );
    let p = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, -4.0])?;
    let e = check_positive(&p, "f", "p").run().unwrap_err();
    assert!(
        matches!(e, Error::CheckFailed { row: 1, col: 1, value, .. } if value == -4.0),
        "{e}"
    );
    let s = MatrixCl::from_slice(3, 3, &[1.0, 2.0, 3.0, 2.0, 1.0, 5.0, 3.0, 5.5, 1.0])?;
    let e = check_symmetric(&s, 1e-8, "cholesky_decompose", "A")?
        .run()
        .unwrap_err();
    assert!(
        matches!(e, Error::CheckFailed { row: 2, col: 1, value, .. } if value == 5.0),
        "{e}"
    );
    assert!(check_symmetric(&MatrixCl::<f64>::zeros(2, 3)?, 1e-8, "f", "A").is_err());
    let z = MatrixCl::from_slice(2, 2, &[1.0, 0.0, 0.0, 0.0])?;
    let e = check_diagonal_zeros(&z, "mdivide_left_tri", "A")
        .run()
        .unwrap_err();
    assert!(
        matches!(e, Error::CheckFailed { row: 1, col: 0, .. }),
        "{e}"
    );
    // A check fused with an element-wise output.
    let d = MatrixCl::<f64>::zeros(2, 2)?;
    let err = fuse((output(&d, exp(&p)), check_positive(&p, "f", "p"))).unwrap_err();
    assert!(matches!(err, Error::CheckFailed { .. }));
    Ok(())
}

#[test]
fn fuse_then_runs_between_the_kernel_and_the_read_backs() -> Result<()> {
    use clfuse::clfuse_ops::{SumOp, full_reduction, fuse_then};
    let x = MatrixCl::from_slice(5000, 1, &vec![2.0f64; 5000])?;
    let d = MatrixCl::<f64>::zeros(5000, 1)?;
    let total = full_reduction::<SumOp, _>(&x);
    let mut sum_of_d = None;
    fuse_then((output(&d, &x * 3.0), &total), || {
        // The kernel's outputs are usable here (queued after it).
        sum_of_d = Some(colwise_sum(&d).eval()?);
        Ok(())
    })?;
    assert_eq!(total.value(), Some(10_000.0));
    let sum_of_d = sum_of_d.expect("then ran");
    assert_eq!(sum_of_d.to_vec()?, vec![30_000.0]);

    // A failing check wins over an error from `then`.
    let bad = MatrixCl::from_slice(3, 1, &[1.0f64, f64::NAN, 3.0])?;
    let err = fuse_then((check_finite(&bad, "f", "bad"),), || {
        Err(Error::InvalidArgument {
            function: "then",
            argument: "none",
            reason: "fails".into(),
        })
    })
    .unwrap_err();
    assert!(
        matches!(&err, Error::CheckFailed { argument, row: 1, .. } if argument == "bad"),
        "{err}"
    );
    Ok(())
}
