//! Gradients through structural operations, aliasing and scatters, against
//! plain-loop references; each adjoint is checked element by element.
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use common::values;

use crate::common;

fn close(name: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{name}[{k}]: {g} vs {w}"
        );
    }
}

/// Sum of all elements of a Var expression: colwise then a second colwise.
fn total<E>(e: E) -> Result<Var>
where
    E: clfuse::clfuse_ops::IntoOperand,
    E::Operand: rev::Differentiable<Scalar = f64, Dependence = rev::Variable>,
{
    let by_column = colwise_sum(e).eval()?;
    colwise_sum(transpose(&by_column)).eval()
}

#[test]
fn a_variable_used_twice_gets_both_contributions() -> Result<()> {
    for n in [1, 31, 33, 300] {
        let xs = values(n, 0.5);
        let x = Var::new(MatrixCl::from_slice(n, 1, &xs)?);
        // x .* x + x: two reads at one element, merged before one store.
        colwise_sum(elt_multiply(&x, &x) + &x).eval()?.grad()?;
        let want: Vec<f64> = xs.iter().map(|v| 2.0 * v + 1.0).collect();
        close("x .* x + x", &x.adjoint().to_vec()?, &want);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn transpose_of_itself_races_nothing() -> Result<()> {
    for n in [1, 5, 33] {
        let xs = values(n * n, 1.5);
        let x = Var::new(MatrixCl::from_slice(n, n, &xs)?);
        // f = sum((x + xᵀ) .* x): df/dx[i,j] = 2 x[i,j] + x[j,i] + x[j,i]... computed by loop.
        let f = total(elt_multiply(&x + transpose(&x), &x))?;
        f.grad()?;
        let at = |i: usize, j: usize| xs[i + n * j];
        let mut want = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                // term (i,j): (x[i,j] + x[j,i]) * x[i,j]
                want[i + n * j] += 2.0 * at(i, j) + at(j, i);
                want[j + n * i] += at(i, j);
            }
        }
        close("(x + xᵀ) .* x", &x.adjoint().to_vec()?, &want);
        let value = f.value().to_vec()?[0];
        let expected: f64 = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| (at(i, j) + at(j, i)) * at(i, j))
            .sum();
        assert!((value - expected).abs() < 1e-10);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn a_scalar_variable_broadcast_sums_over_work_groups() -> Result<()> {
    // Every size after the first also checks that the last work-group set
    // the shared finished-groups counter back to zero.
    for n in [1, 33, 1000, 5003, 100_003] {
        let ys = values(n, 2.5);
        let y = MatrixCl::from_slice(n, 1, &ys)?;
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.3])?);
        let sigma = Var::new(MatrixCl::from_slice(1, 1, &[1.7])?);
        // sum(((y - α) / σ)²) through broadcasts of 1 x 1 variables.
        let z = elt_divide(
            &y - optional_broadcast(&alpha, n, 1),
            optional_broadcast(&sigma, n, 1),
        );
        colwise_sum(square(z)).eval()?.grad()?;
        let (a0, s0) = (0.3, 1.7);
        let d_alpha: f64 = ys.iter().map(|y| -2.0 * (y - a0) / (s0 * s0)).sum();
        let d_sigma: f64 = ys
            .iter()
            .map(|y| -2.0 * (y - a0) * (y - a0) / (s0 * s0 * s0))
            .sum();
        let got_a = alpha.adjoint().to_vec()?[0];
        let got_s = sigma.adjoint().to_vec()?[0];
        assert!(
            (got_a - d_alpha).abs() < 1e-9 * d_alpha.abs().max(1.0),
            "n = {n}: {got_a} vs {d_alpha}"
        );
        assert!(
            (got_s - d_sigma).abs() < 1e-9 * d_sigma.abs().max(1.0),
            "n = {n}: {got_s} vs {d_sigma}"
        );
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn repeated_indices_add_up_with_atomics() -> Result<()> {
    // 7 groups: summed in local memory per work-group first; 3001 groups
    // (more than that path holds): straight to the adjoint.
    for (groups, n) in [(7, 1), (7, 33), (7, 2000), (3001, 5000), (3001, 40_000)] {
        let g: Vec<i32> = (0..n).map(|k| ((k * 5) % groups) as i32).collect();
        let index = MatrixCl::from_slice(n, 1, &g)?;
        let zero = MatrixCl::from_slice(n, 1, &vec![0; n])?;
        let effects = values(groups, 3.5);
        let u = Var::new(MatrixCl::from_slice(groups, 1, &effects)?);
        // sum(u[g] ^ 2): du[k] = 2 u[k] * count(g == k).
        colwise_sum(square(indexing(&u, &index, &zero)))
            .eval()?
            .grad()?;
        let mut want = vec![0.0; groups];
        for &k in &g {
            want[k as usize] += 2.0 * effects[k as usize];
        }
        close("indexing", &u.adjoint().to_vec()?, &want);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn blocks_diagonals_broadcasts_and_appends() -> Result<()> {
    let (r, c) = (6, 5);
    let xs = values(r * c, 4.5);
    let vs = values(c, 5.5);
    let x = Var::new(MatrixCl::from_slice(r, c, &xs)?);
    let v = Var::new(MatrixCl::from_slice(1, c, &vs)?);
    // f = sum(block(x, 1, 1, 3, 3)²) + sum(diagonal(x)) + sum(x .* rowwise_broadcast(v, r))
    //   + sum(append_row(v, v) * 3)
    let f1 = colwise_sum(square(block(&x, 1, 1, 3, 3))).eval()?;
    let f2 = colwise_sum(diagonal(&x)).eval()?;
    let f3 = colwise_sum(elt_multiply(&x, rowwise_broadcast(&v, r))).eval()?;
    let f4 = colwise_sum(append_row(&v, &v) * 3.0).eval()?;
    let f = colwise_sum(transpose(append_col(append_col(&f1, &f3), &f4))).eval()?;
    let f = colwise_sum(&f + &f2).eval()?;
    f.grad()?;
    let at = |i: usize, j: usize| xs[i + r * j];
    let mut dx = vec![0.0; r * c];
    for i in 0..r {
        for j in 0..c {
            if (1..4).contains(&i) && (1..4).contains(&j) {
                dx[i + r * j] += 2.0 * at(i, j);
            }
            if i == j {
                dx[i + r * j] += 1.0;
            }
            dx[i + r * j] += vs[j];
        }
    }
    let dv: Vec<f64> = (0..c)
        .map(|j| (0..r).map(|i| at(i, j)).sum::<f64>() + 6.0)
        .collect();
    close("x", &x.adjoint().to_vec()?, &dx);
    close("v", &v.adjoint().to_vec()?, &dv);
    rev::clear()
}

#[test]
fn select_has_no_derivative_through_its_condition() -> Result<()> {
    let xs = values(33, 6.5);
    let x = Var::new(MatrixCl::from_slice(33, 1, &xs)?);
    // relu(x) + |x| via select; the condition reads x too.
    colwise_sum(select(gt(&x, 0.0), &x, 0.0) + select(lt(&x, 0.0), -&x, &x))
        .eval()?
        .grad()?;
    let want: Vec<f64> = xs
        .iter()
        .map(|v| if *v > 0.0 { 2.0 } else { -1.0 })
        .collect();
    close("select", &x.adjoint().to_vec()?, &want);
    rev::clear()
}

#[test]
fn empty_and_one_by_one_variables() -> Result<()> {
    let x = Var::new(MatrixCl::<f64>::zeros(0, 1)?);
    let s = colwise_sum(exp(&x)).eval()?;
    assert_eq!((s.rows(), s.cols()), (1, 1));
    s.grad()?;
    assert_eq!(s.value().to_vec()?, vec![0.0]);
    let y = Var::new(MatrixCl::from_slice(1, 1, &[2.0])?);
    colwise_sum(square(&y)).eval()?.grad()?;
    assert_eq!(y.adjoint().to_vec()?, vec![4.0]);
    rev::clear()
}

#[test]
fn grad_of_a_matrix_result_is_an_error() -> Result<()> {
    let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0, 2.0])?);
    let e = exp(&x).eval()?;
    let err = e.grad().unwrap_err().to_string();
    assert!(err.contains("1 x 1"), "{err}");
    rev::clear()
}

/// A 1 x 1 block of a variable broadcast over many rows scatters every
/// contribution to one element: the reverse kernel adds them up per work
/// item and per work-group before its atomic adds (no contention on one
/// address per element), and the sum is still exact to rounding.
#[test]
fn a_contended_scatter_target_gets_every_contribution() -> Result<()> {
    for n in [1, 257, 100_003] {
        let theta = Var::new(MatrixCl::from_slice(3, 1, &[0.5, -1.25, 2.0])?);
        let y = values(n, 0.7);
        let ys = MatrixCl::from_slice(n, 1, &y)?;
        // sum((y - θ[1])²) with θ[1] read through a broadcast 1 x 1 block:
        // d/dθ[1] = -2 Σ (y - θ[1]).
        let mean = colwise_broadcast(rowwise_broadcast(block(&theta, 1, 0, 1, 1), n), 1);
        colwise_sum(square(&ys - mean)).eval()?.grad()?;
        let want = -2.0 * y.iter().map(|v| v + 1.25).sum::<f64>();
        close(
            "contended scatter",
            &theta.adjoint().to_vec()?,
            &[0.0, want, 0.0],
        );
        rev::clear()?;
    }
    Ok(())
}
