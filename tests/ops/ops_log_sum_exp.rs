//! Row- and column-wise log-sum-exp (one pass, overflow-free), the row-wise
//! softmax, and the nested-reduction rule (a broadcast reduction is
//! evaluated once by its own kernel), against CPU references.
use clfuse::Result;
use clfuse::clfuse_ops::source_of;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

fn values(n: usize, seed: f64, scale: f64) -> Vec<f64> {
    (0..n)
        .map(|k| (((k as f64 + seed) * 0.7548776662).fract() * 2.0 - 1.0) * scale)
        .collect()
}

/// `log Σ exp` of a slice the textbook way (max first, then the sum).
fn cpu_lse(row: &[f64]) -> f64 {
    let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m.is_nan() || row.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    if m.is_infinite() {
        return m;
    }
    m + row.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

fn row(m: &[f64], rows: usize, cols: usize, i: usize) -> Vec<f64> {
    (0..cols).map(|j| m[i + rows * j]).collect()
}

fn same(name: &str, got: f64, want: f64) {
    let ok = (got.is_nan() && want.is_nan())
        || got == want
        || (got - want).abs() <= 1e-12 * want.abs().max(1.0);
    assert!(ok, "{name}: {got} vs {want}");
}

#[test]
fn rowwise_and_colwise_log_sum_exp_match_the_cpu() -> Result<()> {
    for (rows, cols) in [(0, 3), (3, 0), (1, 1), (31, 33), (33, 257), (1000, 7)] {
        // Large magnitudes: a naive exp would overflow.
        let xs = values(rows * cols, 0.5, 800.0);
        let x = MatrixCl::from_slice(rows, cols, &xs)?;
        let by_row = rowwise_log_sum_exp(&x).eval()?.to_vec()?;
        assert_eq!(by_row.len(), rows);
        for (i, got) in by_row.iter().enumerate() {
            same(
                &format!("row {i} of {rows}x{cols}"),
                *got,
                cpu_lse(&row(&xs, rows, cols, i)),
            );
        }
        let by_col = colwise_log_sum_exp(&x).eval()?.to_vec()?;
        assert_eq!(by_col.len(), cols);
        for (j, got) in by_col.iter().enumerate() {
            same(
                &format!("column {j}"),
                *got,
                cpu_lse(&xs[j * rows..(j + 1) * rows]),
            );
        }
        // Fused with what uses it: one kernel.
        let shifted = (rowwise_log_sum_exp(&x) - 1.0f64).eval()?.to_vec()?;
        for (a, b) in shifted.iter().zip(&by_row) {
            same("fused", *a, b - 1.0);
        }
    }
    Ok(())
}

#[test]
fn log_sum_exp_handles_infinities_and_nan() -> Result<()> {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let rows: [&[f64]; 7] = [
        &[f64::NEG_INFINITY, f64::NEG_INFINITY],
        &[f64::NEG_INFINITY, 0.0],
        &[inf, 1.0],
        &[inf, inf],
        &[1.0, nan],
        &[inf, nan],
        &[-1e308, 1e308],
    ];
    for r in rows {
        let x = MatrixCl::from_slice(1, r.len(), r)?;
        let got = rowwise_log_sum_exp(&x).eval()?.to_vec()?[0];
        same(&format!("{r:?}"), got, cpu_lse(r));
    }
    Ok(())
}

#[test]
fn softmax_rows_match_the_cpu_and_sum_to_one() -> Result<()> {
    for (rows, cols) in [(0, 3), (3, 0), (1, 1), (31, 33), (257, 5), (1000, 3)] {
        let xs = values(rows * cols, 1.5, 50.0);
        let x = MatrixCl::from_slice(rows, cols, &xs)?;
        let p = rowwise_softmax(&x).eval()?;
        assert_eq!((p.rows(), p.cols()), (rows, cols));
        let p = p.to_vec()?;
        for i in 0..rows {
            let r = row(&xs, rows, cols, i);
            let lse = cpu_lse(&r);
            let mut total = 0.0f64;
            for j in 0..cols {
                same(&format!("p[{i},{j}]"), p[i + rows * j], (r[j] - lse).exp());
                total += p[i + rows * j];
            }
            assert!(
                cols == 0 || (total - 1.0).abs() < 1e-12,
                "row {i} sums to {total}"
            );
        }
    }
    Ok(())
}

#[test]
fn softmax_is_one_kernel_with_its_operand_fused() -> Result<()> {
    let (rows, cols) = (65, 7);
    let xs = values(rows * cols, 0.5, 20.0);
    let x = MatrixCl::from_slice(rows, cols, &xs)?;
    let scaled = 2.0f64 * &x + 1.0;
    rowwise_softmax(&scaled).eval()?;
    let before = thread_kernel_stats();
    let p = rowwise_softmax(&scaled).eval()?.to_vec()?;
    assert_eq!(
        (thread_kernel_stats() - before).launched,
        1,
        "one kernel, no copy"
    );
    for i in 0..rows {
        let r: Vec<f64> = row(&xs, rows, cols, i)
            .iter()
            .map(|v| 2.0 * v + 1.0)
            .collect();
        let lse = cpu_lse(&r);
        for j in 0..cols {
            same("softmax(2x + 1)", p[i + rows * j], (r[j] - lse).exp());
        }
    }
    // Inside a larger expression it is a leaf: its kernel, then the user's.
    let before = thread_kernel_stats();
    let logp = log(rowwise_softmax(&x)).eval()?.to_vec()?;
    assert_eq!((thread_kernel_stats() - before).launched, 2);
    for i in 0..rows {
        let lse = cpu_lse(&row(&xs, rows, cols, i));
        for j in 0..cols {
            same("log softmax", logp[i + rows * j], xs[i + rows * j] - lse);
        }
    }
    Ok(())
}

#[test]
fn softmax_of_variables_is_differentiable() -> Result<()> {
    for (rows, cols) in [(1, 1), (33, 4)] {
        let zs = values(rows * cols, 6.5, 4.0);
        let ws = values(rows * cols, 7.5, 1.0);
        let z = Var::new(MatrixCl::from_slice(rows, cols, &zs)?);
        let w = MatrixCl::from_slice(rows, cols, &ws)?;
        // f = Σ w ∘ softmax(z): df/dz_ij = p_ij (w_ij − Σ_k w_ik p_ik).
        let by_col = colwise_sum(elt_multiply(rowwise_softmax(&z), &w)).eval()?;
        colwise_sum(transpose(&by_col)).eval()?.grad()?;
        let got = z.adjoint().to_vec()?;
        for i in 0..rows {
            let r = row(&zs, rows, cols, i);
            let lse = cpu_lse(&r);
            let p: Vec<f64> = r.iter().map(|v| (v - lse).exp()).collect();
            let mean: f64 = (0..cols).map(|k| ws[i + rows * k] * p[k]).sum();
            for j in 0..cols {
                same("d/dz", got[i + rows * j], p[j] * (ws[i + rows * j] - mean));
            }
        }
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn a_broadcast_reduction_is_evaluated_once_by_its_own_kernel() -> Result<()> {
    let (rows, cols) = (33, 9);
    let xs = values(rows * cols, 2.5, 3.0);
    let x = MatrixCl::from_slice(rows, cols, &xs)?;
    let out = MatrixCl::<f64>::zeros(rows, cols)?;
    let softmax = |x| {
        let lse = colwise_broadcast(rowwise_log_sum_exp(x), cols);
        exp(x - lse)
    };
    // The outer kernel reads the temporary: no loop over the row in it.
    let source = source_of(&output(&out, softmax(&x)))?;
    assert!(
        !source.contains("for ("),
        "the reduction was hoisted:\n{source}"
    );
    // A reduction read at its own shape stays fused (its loop is in the kernel).
    let fused = source_of(&output(
        &MatrixCl::<f64>::zeros(rows, 1)?,
        rowwise_log_sum_exp(&x),
    ))?;
    assert!(fused.contains("for ("), "{fused}");
    out.assign(softmax(&x))?;
    let before = thread_kernel_stats();
    out.assign(softmax(&x))?;
    assert_eq!(
        (thread_kernel_stats() - before).launched,
        2,
        "reduction, then the element-wise kernel"
    );
    let p = out.to_vec()?;
    for i in 0..rows {
        let lse = cpu_lse(&row(&xs, rows, cols, i));
        for j in 0..cols {
            same("softmax", p[i + rows * j], (xs[i + rows * j] - lse).exp());
        }
    }
    Ok(())
}

#[test]
fn gradient_of_a_rowwise_log_sum_exp_is_the_softmax() -> Result<()> {
    for (rows, cols) in [(1, 1), (31, 33)] {
        let zs = values(rows * cols, 3.5, 5.0);
        let ws = values(rows, 4.5, 1.0);
        let z = Var::new(MatrixCl::from_slice(rows, cols, &zs)?);
        let w = MatrixCl::from_slice(rows, 1, &ws)?;
        // f = Σ_i w_i lse(z_i): d f / d z_ij = w_i softmax(z_i)_j.
        let total = colwise_sum(elt_multiply(rowwise_log_sum_exp(&z), &w)).eval()?;
        total.grad()?;
        let got = z.adjoint().to_vec()?;
        for i in 0..rows {
            let lse = cpu_lse(&row(&zs, rows, cols, i));
            for j in 0..cols {
                same(
                    "d/dz",
                    got[i + rows * j],
                    ws[i] * (zs[i + rows * j] - lse).exp(),
                );
            }
        }
        // A softmax written with the broadcast: hoisted as its own step, differentiable.
        rev::set_zero_all_adjoints()?;
        let lse = colwise_broadcast(rowwise_log_sum_exp(&z), cols);
        let by_col = colwise_sum(exp(&z - lse)).eval()?;
        colwise_sum(transpose(&by_col)).eval()?.grad()?;
        // Σ_ij softmax_ij = rows whatever z: the gradient is zero.
        for g in z.adjoint().to_vec()? {
            assert!(g.abs() < 1e-12, "d(Σ softmax)/dz = {g}");
        }
        rev::clear()?;
    }
    Ok(())
}
