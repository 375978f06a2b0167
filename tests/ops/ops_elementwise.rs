//! Arithmetic, logic, views, aliasing, multi-output and shape errors against CPU references.

use crate::common;

use clfuse::Error;
use clfuse::Result;
use clfuse::prelude::*;
use common::assert_close;

fn host(n: usize, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|k| ((k * 31 + salt * 17) % 23) as f64 / 4.0 - 2.5)
        .collect()
}

#[test]
fn the_headline_expression_in_every_operand_form() -> Result<()> {
    for (rows, cols) in [(0, 0), (1, 1), (1, 300), (300, 1), (33, 31)] {
        let (ha, hb) = (host(rows * cols, 1), host(rows * cols, 2));
        let a = MatrixCl::from_slice(rows, cols, &ha)?;
        let b = MatrixCl::from_slice(rows, cols, &hb)?;
        let d = MatrixCl::<f64>::zeros(rows, cols)?;
        let c = 1.5;
        let want: Vec<f64> = ha.iter().zip(&hb).map(|(x, y)| c * (x + y)).collect();
        d.assign(c * (&a + &b))?;
        assert_eq!(d.to_vec()?, want);
        // Owned temporary on the left, reference on the right (the README form).
        let a_owned = a.try_clone()?;
        d.assign(c * (a_owned + &b))?;
        assert_eq!(d.to_vec()?, want);
        // Nested expressions, scalars on either side, division and negation.
        d.assign(-((&a + &b) * c) / 2.0 + 1.0 - (2.0 - &a))?;
        let want2: Vec<f64> = ha
            .iter()
            .zip(&hb)
            .map(|(x, y)| -((x + y) * c) / 2.0 + 1.0 - (2.0 - x))
            .collect();
        assert_eq!(d.to_vec()?, want2);
        // Element-wise product and quotient, free and method forms.
        let p = elt_multiply(&a, &b)
            .elt_divide(1.0f64 + elt_multiply(&b, &b))
            .eval()?;
        let want3: Vec<f64> = ha
            .iter()
            .zip(&hb)
            .map(|(x, y)| x * y / (1.0 + y * y))
            .collect();
        assert_eq!(p.to_vec()?, want3);
    }
    Ok(())
}

#[test]
fn scalar_promotion() -> Result<()> {
    let i = MatrixCl::from_slice(1, 3, &[1, 2, 3])?;
    let f = MatrixCl::from_slice(1, 3, &[0.5f32, 1.5, 2.5])?;
    let x = MatrixCl::from_slice(1, 3, &[0.25f64, 0.5, 0.75])?;
    let r: MatrixCl<f64> = (&i + &x).eval()?;
    assert_eq!(r.to_vec()?, vec![1.25, 2.5, 3.75]);
    let r: MatrixCl<f32> = (&f + &i).eval()?;
    assert_eq!(r.to_vec()?, vec![1.5, 3.5, 5.5]);
    let r: MatrixCl<f32> = (&f * 2.0f32).eval()?;
    assert_eq!(r.to_vec()?, vec![1.0, 3.0, 5.0]);
    let r: MatrixCl<i32> = (&i * 3).eval()?;
    assert_eq!(r.to_vec()?, vec![3, 6, 9]);
    let r: MatrixCl<f64> = (&i * 0.5f64).eval()?;
    assert_eq!(r.to_vec()?, vec![0.5, 1.0, 1.5]);
    // Assigning converts with C semantics.
    let target = MatrixCl::<i32>::zeros(1, 3)?;
    target.assign(&x * 10.0)?;
    assert_eq!(target.to_vec()?, vec![2, 5, 7]);
    Ok(())
}

#[test]
fn comparisons_logic_select_cast_and_indices() -> Result<()> {
    let ha = host(37, 3);
    let hb = host(37, 4);
    let a = MatrixCl::from_slice(37, 1, &ha)?;
    let b = MatrixCl::from_slice(37, 1, &hb)?;
    let as_int = |v: bool| v as i32;
    let checks: Vec<(MatrixCl<i32>, Vec<i32>)> = vec![
        (
            lt(&a, &b).eval()?,
            ha.iter().zip(&hb).map(|(x, y)| as_int(x < y)).collect(),
        ),
        (
            (&a).le(&b).eval()?,
            ha.iter().zip(&hb).map(|(x, y)| as_int(x <= y)).collect(),
        ),
        (
            gt(&a, 0.0).eval()?,
            ha.iter().map(|x| as_int(*x > 0.0)).collect(),
        ),
        (
            ge(&a, &b).eval()?,
            ha.iter().zip(&hb).map(|(x, y)| as_int(x >= y)).collect(),
        ),
        (
            eq(&a, &b).eval()?,
            ha.iter().zip(&hb).map(|(x, y)| as_int(x == y)).collect(),
        ),
        (
            ne(&a, &b).eval()?,
            ha.iter().zip(&hb).map(|(x, y)| as_int(x != y)).collect(),
        ),
        (
            and(gt(&a, 0.0), lt(&b, 0.0)).eval()?,
            ha.iter()
                .zip(&hb)
                .map(|(x, y)| as_int(*x > 0.0 && *y < 0.0))
                .collect(),
        ),
        (
            gt(&a, 0.0).or(gt(&b, 1.0)).eval()?,
            ha.iter()
                .zip(&hb)
                .map(|(x, y)| as_int(*x > 0.0 || *y > 1.0))
                .collect(),
        ),
        (
            not(gt(&a, 0.0)).eval()?,
            ha.iter().map(|x| as_int(*x <= 0.0)).collect(),
        ),
        (
            cast::<i32, _>(&a * 4.0).eval()?,
            ha.iter().map(|x| (x * 4.0) as i32).collect(),
        ),
    ];
    for (k, (got, want)) in checks.into_iter().enumerate() {
        assert_eq!(got.to_vec()?, want, "check {k}");
    }
    let s = select(lt(&a, &b), &a, &b * 2.0).eval()?;
    let want: Vec<f64> = ha
        .iter()
        .zip(&hb)
        .map(|(x, y)| if x < y { *x } else { y * 2.0 })
        .collect();
    assert_eq!(s.to_vec()?, want);
    let f: MatrixCl<f32> = (&a).cast::<f32>().eval()?;
    assert_eq!(
        f.to_vec()?,
        ha.iter().map(|x| *x as f32).collect::<Vec<_>>()
    );
    let idx = (row_index(3, 2) * 10 + col_index(3, 2)).eval()?;
    assert_eq!(idx.to_vec()?, vec![0, 10, 20, 1, 11, 21]);
    assert_eq!(constant(7, 2, 2).eval()?.to_vec()?, vec![7; 4]);
    Ok(())
}

fn apply_view(v: &[f64], n: usize, view: View) -> Vec<f64> {
    (0..n * n)
        .map(|k| {
            if view.contains(k % n, k / n) {
                v[k]
            } else {
                0.0
            }
        })
        .collect()
}

#[test]
fn views_follow_the_rules_and_loads_outside_them_are_zero() -> Result<()> {
    let n = 33;
    let (ha, hb) = (host(n * n, 5), host(n * n, 6));
    let a = MatrixCl::from_slice(n, n, &ha)?.with_view(View::Lower);
    let b = MatrixCl::from_slice(n, n, &hb)?.with_view(View::Upper);
    let (la, ub) = (
        apply_view(&ha, n, View::Lower),
        apply_view(&hb, n, View::Upper),
    );
    let sum = (&a + &b).eval()?;
    assert_eq!(sum.view(), View::Entire);
    assert_eq!(
        sum.to_vec()?,
        la.iter().zip(&ub).map(|(x, y)| x + y).collect::<Vec<_>>()
    );
    let prod = elt_multiply(&a, &b).eval()?;
    assert_eq!(prod.view(), View::Diagonal);
    assert_eq!(
        prod.to_vec()?,
        la.iter().zip(&ub).map(|(x, y)| x * y).collect::<Vec<_>>()
    );
    let kept = sqrt(fabs(&a)).eval()?;
    assert_eq!(kept.view(), View::Lower);
    let entire = exp(&a).eval()?;
    assert_eq!(entire.view(), View::Entire);
    assert_close(
        "exp(lower)",
        &entire.to_vec()?,
        &la.iter().map(|x| x.exp()).collect::<Vec<_>>(),
        1e-14,
    );
    let scaled = (&a * 2.0f64).eval()?;
    assert_eq!(scaled.view(), View::Lower);
    let and_view = and(&a, &b).eval()?;
    assert_eq!(and_view.view(), View::Diagonal);
    Ok(())
}

#[test]
fn assigning_onto_an_operand_is_correct() -> Result<()> {
    let (ha, hb) = (host(1000, 7), host(1000, 8));
    let a = MatrixCl::from_slice(40, 25, &ha)?;
    let b = MatrixCl::from_slice(40, 25, &hb)?;
    a.assign(&a + &b)?;
    assert_eq!(
        a.to_vec()?,
        ha.iter().zip(&hb).map(|(x, y)| x + y).collect::<Vec<_>>()
    );
    a.assign(exp(&a) - &a)?;
    let want: Vec<f64> = ha
        .iter()
        .zip(&hb)
        .map(|(x, y)| (x + y).exp() - (x + y))
        .collect();
    assert_close("exp(a) - a", &a.to_vec()?, &want, 1e-14);
    Ok(())
}

#[test]
fn multi_output_kernel_reads_each_matrix_once() -> Result<()> {
    let (ha, hb) = (host(99, 9), host(99, 10));
    let a = MatrixCl::from_slice(9, 11, &ha)?;
    let b = MatrixCl::from_slice(9, 11, &hb)?;
    let d = MatrixCl::<f64>::zeros(9, 11)?;
    let e = MatrixCl::<f64>::zeros(9, 11)?;
    let f = MatrixCl::<i32>::zeros(9, 11)?;
    let src = results((&d, &e, &f)).kernel_source((&a + &b, &a - &b, lt(&a, &b)))?;
    assert_eq!(
        src.matches("var1_global[i + var1_rows * j]").count(),
        1,
        "{src}"
    );
    assert_eq!(
        src.matches("_global[i + ").count(),
        2 + 3,
        "two loads and three stores:\n{src}"
    );
    results((&d, &e, &f)).assign((&a + &b, &a - &b, lt(&a, &b)))?;
    assert_eq!(
        d.to_vec()?,
        ha.iter().zip(&hb).map(|(x, y)| x + y).collect::<Vec<_>>()
    );
    assert_eq!(
        e.to_vec()?,
        ha.iter().zip(&hb).map(|(x, y)| x - y).collect::<Vec<_>>()
    );
    assert_eq!(
        f.to_vec()?,
        ha.iter()
            .zip(&hb)
            .map(|(x, y)| (x < y) as i32)
            .collect::<Vec<_>>()
    );
    // An output that another output's expression reads sees the old values.
    results((&d, &e)).assign((&e * 2.0, &d + 0.0))?;
    assert_eq!(
        e.to_vec()?,
        ha.iter().zip(&hb).map(|(x, y)| x + y).collect::<Vec<_>>()
    );
    // The same target twice is refused before anything runs.
    let err = results((&d, &d)).assign((&a + 0.0, &b + 0.0)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    // Outputs of different shapes cannot share a kernel.
    let small = MatrixCl::<f64>::zeros(1, 1)?;
    let err = results((&d, &small))
        .assign((&a + 0.0, constant(1.0, 1, 1)))
        .unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    Ok(())
}

#[test]
fn a_shared_sub_expression_is_computed_once() -> Result<()> {
    let ha = host(50, 11);
    let a = MatrixCl::from_slice(50, 1, &ha)?;
    let s = exp(&a);
    let both = (&s + &s).elt_multiply(&s);
    let src = both.kernel_source()?;
    assert_eq!(src.matches("exp(").count(), 1, "{src}");
    let want: Vec<f64> = ha.iter().map(|x| 2.0 * x.exp() * x.exp()).collect();
    let got = both.eval()?.to_vec()?;
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-14 * w.abs());
    }
    Ok(())
}

#[test]
fn shape_mismatches_are_reported_before_launch() -> Result<()> {
    let a = MatrixCl::<f64>::zeros(3, 4)?;
    let b = MatrixCl::<f64>::zeros(4, 3)?;
    let d = MatrixCl::<f64>::zeros(3, 4)?;
    let before = kernel_stats();
    let e = d.assign(elt_multiply(&a, &b)).unwrap_err();
    assert_eq!(
        e,
        Error::DimensionMismatch {
            operation: "elt_multiply".into(),
            lhs: (3, 4),
            rhs: (4, 3)
        }
    );
    let e = d.assign(pow(&a, &b)).unwrap_err();
    assert!(e.to_string().contains("pow"), "{e}");
    let e = b.assign(&a + 1.0).unwrap_err();
    assert_eq!(
        e,
        Error::DimensionMismatch {
            operation: "assign".into(),
            lhs: (4, 3),
            rhs: (3, 4)
        }
    );
    assert!((constant(1.0, 2, 2) + 1.0).eval().is_ok());
    let scalar_only = clfuse::Expr(clfuse::clfuse_ops::Scalar(1.0f64));
    assert!(matches!(
        scalar_only.eval(),
        Err(Error::InvalidArgument { .. })
    ));
    let _ = before;
    Ok(())
}
