//! Structural operations and targets against CPU references, and aliasing.

use crate::common;

use clfuse::Error;
use clfuse::Result;
use clfuse::prelude::*;
use common::assert_close;
use nalgebra::DMatrix;

fn host(rows: usize, cols: usize, salt: usize) -> DMatrix<f64> {
    DMatrix::from_fn(rows, cols, |i, j| {
        ((i * 31 + j * 17 + salt * 7) % 29) as f64 / 4.0 - 3.0
    })
}

fn dev(m: &DMatrix<f64>) -> Result<MatrixCl<f64>> {
    MatrixCl::try_from(m)
}

fn back(m: &MatrixCl<f64>) -> Result<DMatrix<f64>> {
    DMatrix::try_from(m)
}

const SHAPES: [(usize, usize); 6] = [(1, 1), (63, 2), (64, 3), (65, 65), (4097, 3), (3, 1000)];

#[test]
fn block_transpose_diagonal_on_the_right() -> Result<()> {
    for (r, c) in SHAPES {
        let h = host(r, c, 1);
        let m = dev(&h)?;
        let (br, bc) = (r / 3, c / 2);
        let (bh, bw) = (r - br, c - bc);
        assert_eq!(
            back(&block(&m, br, bc, bh, bw).eval()?)?,
            h.view((br, bc), (bh, bw)).clone_owned()
        );
        assert_eq!(back(&transpose(&m).eval()?)?, h.transpose());
        let d: Vec<f64> = (0..r.min(c)).map(|k| h[(k, k)]).collect();
        assert_eq!(diagonal(&m).eval()?.to_vec()?, d);
        // Composed: exp of a transposed block, fused.
        let e = exp(transpose(block(&m, br, bc, bh, bw))).eval()?;
        assert_close(
            "exp(transpose(block))",
            &e.to_vec()?,
            h.view((br, bc), (bh, bw))
                .transpose()
                .map(f64::exp)
                .as_slice(),
            1e-15,
        );
    }
    let m = dev(&host(3, 3, 0))?;
    assert!(matches!(
        block(&m, 2, 2, 2, 1).eval(),
        Err(Error::InvalidArgument {
            function: "block",
            ..
        })
    ));
    Ok(())
}

#[test]
fn broadcasts_and_appends() -> Result<()> {
    let row = host(1, 5, 2);
    let col = host(7, 1, 3);
    let (dr, dc) = (dev(&row)?, dev(&col)?);
    let rb = back(&rowwise_broadcast(&dr, 4).eval()?)?;
    assert_eq!(rb, DMatrix::from_fn(4, 5, |_, j| row[(0, j)]));
    let cb = back(&colwise_broadcast(&dc, 3).eval()?)?;
    assert_eq!(cb, DMatrix::from_fn(7, 3, |i, _| col[(i, 0)]));
    // Optional broadcast: one kernel for the broadcast and the full case.
    let full = host(7, 1, 4);
    let one = host(1, 1, 5);
    // Counted with sweeps off: a sweep of the one-element fill and the
    // broadcast (on GPUs) is a kernel of its own.
    let sweeps = clfuse::clfuse_core::set_launch_sweeps(clfuse::clfuse_core::LaunchSweeps::Never);
    let before = thread_kernel_stats();
    let a = optional_broadcast(&dev(&one)?, 7, 1).eval()?.to_vec()?;
    let b = optional_broadcast(&dev(&full)?, 7, 1).eval()?.to_vec()?;
    let built = (thread_kernel_stats() - before).built();
    clfuse::clfuse_core::set_launch_sweeps(sweeps);
    assert!(built <= 1);
    assert_eq!(a, vec![one[(0, 0)]; 7]);
    assert_eq!(b, full.as_slice());
    assert!(matches!(
        optional_broadcast(&dev(&host(2, 1, 0))?, 7, 1).eval(),
        Err(Error::DimensionMismatch { .. })
    ));
    // Appends.
    let top = host(3, 4, 6);
    let bottom = host(65, 4, 7);
    let ar = back(&append_row(&dev(&top)?, &dev(&bottom)?).eval()?)?;
    let mut want = DMatrix::zeros(68, 4);
    want.view_mut((0, 0), (3, 4)).copy_from(&top);
    want.view_mut((3, 0), (65, 4)).copy_from(&bottom);
    assert_eq!(ar, want);
    let left = host(5, 2, 8);
    let right = host(5, 63, 9);
    let ac = back(&append_col(&dev(&left)?, &dev(&right)?).eval()?)?;
    let mut want = DMatrix::zeros(5, 65);
    want.view_mut((0, 0), (5, 2)).copy_from(&left);
    want.view_mut((0, 2), (5, 63)).copy_from(&right);
    assert_eq!(ac, want);
    assert!(matches!(
        append_row(&dev(&left)?, &dev(&right)?).eval(),
        Err(Error::DimensionMismatch { .. })
    ));
    Ok(())
}

#[test]
fn indexing_gathers_and_scatters() -> Result<()> {
    let h = host(10, 4, 10);
    let m = dev(&h)?;
    let rows: Vec<i32> = (0..6).map(|k| k * 7 % 10).collect();
    let ri = MatrixCl::from_slice(6, 1, &rows)?;
    let g = indexing(&m, &ri, 2).eval()?.to_vec()?;
    assert_eq!(
        g,
        rows.iter().map(|r| h[(*r as usize, 2)]).collect::<Vec<_>>()
    );
    // Out of range is an error (see `gather_errors`).
    let bad = MatrixCl::from_slice(2, 1, &[-1, 10])?;
    assert!(matches!(
        indexing(&m, &bad, 0).eval(),
        Err(Error::IndexOutOfRange {
            row: 0,
            value: -1,
            ..
        })
    ));
    // Scatter: target[rows[k], 1] = values[k].
    let target = MatrixCl::<f64>::zeros(10, 4)?;
    let values = MatrixCl::from_slice(6, 1, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    indexing(&target, &ri, 1).assign(&values)?;
    let t = back(&target)?;
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(t[(*r as usize, 1)], (k + 1) as f64);
    }
    assert_eq!(t.column(0).iter().sum::<f64>(), 0.0);
    Ok(())
}

#[test]
fn structural_targets_and_views() -> Result<()> {
    // Writing a block of an Entire matrix.
    let h = host(6, 5, 11);
    let m = dev(&h)?;
    let src = host(2, 3, 12);
    block(&m, 1, 2, 2, 3).assign(&dev(&src)?)?;
    let mut want = h.clone();
    want.view_mut((1, 2), (2, 3)).copy_from(&src);
    assert_eq!(back(&m)?, want);
    // Writing into the upper part of a Lower matrix widens its view and keeps
    // the rest of the upper part zero (garbage there was outside the view).
    let l = dev(&host(4, 4, 13))?.with_view(View::Lower);
    let ones = MatrixCl::constant(1, 2, 1.0)?;
    block(&l, 0, 2, 1, 2).assign(&ones)?;
    assert_eq!(l.view(), View::Entire);
    let lv = back(&l)?;
    let hl = host(4, 4, 13);
    for i in 0..4 {
        for j in 0..4 {
            let want = if i == 0 && j >= 2 {
                1.0
            } else if j <= i {
                hl[(i, j)]
            } else {
                0.0
            };
            assert_eq!(lv[(i, j)], want, "({i},{j})");
        }
    }
    // A block below the diagonal keeps the Lower view.
    let l2 = dev(&host(4, 4, 14))?.with_view(View::Lower);
    block(&l2, 2, 0, 2, 2).assign(constant(5.0, 2, 2))?;
    assert_eq!(l2.view(), View::Lower);
    // Transpose and diagonal targets.
    let t = MatrixCl::<f64>::zeros(5, 6)?;
    transpose(&t).assign(&m)?;
    assert_eq!(back(&t)?, want.transpose());
    let sq = dev(&host(5, 5, 15))?;
    diagonal(&sq).assign(constant(9.0, 5, 1))?;
    let sqh = back(&sq)?;
    for k in 0..5 {
        assert_eq!(sqh[(k, k)], 9.0);
    }
    Ok(())
}

#[test]
fn compound_assignment_on_every_target() -> Result<()> {
    let h = host(5, 4, 16);
    let m = dev(&h)?;
    m.add_assign(1.0)?;
    m.sub_assign(&dev(&host(5, 4, 17))?)?;
    m.mul_assign(2.0)?;
    let want = (h.add_scalar(1.0) - host(5, 4, 17)) * 2.0;
    assert_close("compound", &m.to_vec()?, want.as_slice(), 1e-15);
    let blk = block(&m, 1, 1, 2, 2);
    blk.add_assign(constant(10.0, 2, 2))?;
    let got = back(&m)?;
    for i in 0..5 {
        for j in 0..4 {
            let extra = if (1..3).contains(&i) && (1..3).contains(&j) {
                10.0
            } else {
                0.0
            };
            assert!((got[(i, j)] - (want[(i, j)] + extra)).abs() < 1e-12);
        }
    }
    diagonal(&m).mul_assign(0.0)?;
    let got = back(&m)?;
    assert!((0..4).all(|k| got[(k, k)] == 0.0));
    Ok(())
}

#[test]
fn reading_other_positions_of_the_target_uses_a_temporary() -> Result<()> {
    for n in [1, 2, 33, 65] {
        let h = host(n, n, 18);
        let a = dev(&h)?;
        a.assign(transpose(&a))?;
        assert_eq!(back(&a)?, h.transpose(), "n={n}");
    }
    // Overlapping block: a(0..n-1, :) = a(1..n, :).
    let h = host(40, 3, 19);
    let a = dev(&h)?;
    block(&a, 0, 0, 39, 3).assign(block(&a, 1, 0, 39, 3))?;
    let mut want = h.clone();
    for i in 0..39 {
        for j in 0..3 {
            want[(i, j)] = h[(i + 1, j)];
        }
    }
    assert_eq!(back(&a)?, want);
    // Two outputs where one reads the other's target elsewhere.
    let x = dev(&host(4, 4, 20))?;
    let y = dev(&host(4, 4, 21))?;
    let (hx, hy) = (host(4, 4, 20), host(4, 4, 21));
    results((&x, &y)).assign((transpose(&y), &x + 1.0))?;
    assert_eq!(back(&x)?, hy.transpose());
    assert_eq!(back(&y)?, hx.add_scalar(1.0));
    Ok(())
}

#[test]
fn shared_sub_expressions_at_several_positions_bind_their_scalars_once() -> Result<()> {
    let h = host(6, 6, 22);
    let a = dev(&h)?;
    let s = &a * 3.0f64 + 1.0f64;
    let r = (transpose(&s) + &s).eval()?;
    let hs = h.map(|v| v * 3.0 + 1.0);
    assert_eq!(back(&r)?, hs.transpose() + &hs);
    let snippet = clfuse::clfuse_ops::CustomCode::<f64>::new("{y} = {x} * {x} + {c};", &["y"])
        .input("x", &a)
        .input("c", constant(0.5, 6, 6));
    let y = snippet.output("y")?;
    let r = (transpose(&y) - y).eval()?;
    let hy = h.map(|v| v * v + 0.5);
    assert_eq!(back(&r)?, hy.transpose() - &hy);
    assert!(snippet.output("nope").is_err());
    Ok(())
}
