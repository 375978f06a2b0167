//! Constrained parameters (`clfuse::params`): every transform's device
//! value against its host loop, the round trip through the inverse, the
//! log-Jacobian against a finite-difference log-determinant of the host
//! map, the gradient through it against finite differences, and the
//! boundary cases (infinite bounds, equal bounds, bounds from data and from
//! earlier parameters).

use crate::common::linalg::Rng;
use crate::rev_leaves::check_against_fd;
use clfuse::params::{Constraint, Parameters};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use nalgebra::DMatrix;

fn close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

/// Which outputs of the host map are its free coordinates (for the
/// log-determinant of the transform's Jacobian).
#[derive(Clone, Copy)]
enum Coordinates {
    All,
    /// A simplex or sum-to-zero vector: all but the last element.
    AllButLast,
    /// The strictly lower triangle of a `k x k` matrix.
    StrictlyLower(usize),
    /// The lower triangle with the diagonal of a `rows x cols` matrix.
    Lower(usize, usize),
}

fn pick(c: Coordinates, y: &[f64]) -> Vec<f64> {
    match c {
        Coordinates::All => y.to_vec(),
        Coordinates::AllButLast => y[..y.len().saturating_sub(1)].to_vec(),
        Coordinates::StrictlyLower(k) => (0..k)
            .flat_map(|j| (j + 1..k).map(move |i| (i, j)))
            .map(|(i, j)| y[i + j * k])
            .collect(),
        Coordinates::Lower(rows, cols) => (0..cols)
            .flat_map(|j| (j..rows).map(move |i| (i, j)))
            .map(|(i, j)| y[i + j * rows])
            .collect(),
    }
}

/// `log |det J|` of `x -> pick(constrain_host(x))` by central differences.
fn fd_log_det(p: &Parameters, x: &[f64], c: Coordinates) -> clfuse::Result<f64> {
    let m = x.len();
    let mut jacobian = DMatrix::zeros(m, m);
    for k in 0..m {
        let h = 1e-6;
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[k] += h;
        down[k] -= h;
        let (yu, yd) = (
            pick(c, &p.constrain_host(&up)?),
            pick(c, &p.constrain_host(&down)?),
        );
        assert_eq!(
            yu.len(),
            m,
            "the free coordinates are as many as the unconstrained values"
        );
        for r in 0..m {
            jacobian[(r, k)] = (yu[r] - yd[r]) / (2.0 * h);
        }
    }
    Ok(jacobian.determinant().abs().ln())
}

/// The device's value and log-Jacobian of the one parameter in `p` at `x`.
fn device(p: &Parameters, x: &[f64]) -> clfuse::Result<(Vec<f64>, Option<f64>)> {
    let theta = Var::new(MatrixCl::from_slice(x.len(), 1, x)?);
    let v = p.constrain(&theta)?;
    let handle = p.find("p").expect("the tests name their parameter p");
    let value = v[handle].value().to_vec()?;
    let jacobian = v.log_jacobian()?.map(|j| j.value().to_vec()).transpose()?;
    rev::clear()?;
    Ok((value, jacobian.map(|j| j[0])))
}

/// Device against host, the inverse, the log-Jacobian against the finite
/// differences and the gradient of `Σ w·y + log J` against finite
/// differences, at a few random points.
fn check(
    constraint: impl Fn() -> Constraint,
    rows: usize,
    cols: usize,
    c: Coordinates,
    scale: f64,
) -> clfuse::Result<()> {
    let mut p = Parameters::new();
    let handle = p.add("p", rows, cols, constraint())?;
    let m = p.dim();
    let name = constraint().name();
    let mut rng = Rng::new(17 + (rows * 31 + cols) as u64);
    for _ in 0..2 {
        let x: Vec<f64> = (0..m).map(|_| scale * rng.next()).collect();
        let (value, jacobian) = device(&p, &x)?;
        let host = p.constrain_host(&x)?;
        close(&format!("{name} {rows}x{cols} value"), &value, &host, 1e-11);
        let back = p.unconstrain(&[("p", &host)])?;
        close(
            &format!("{name} {rows}x{cols} round trip"),
            &p.constrain_host(&back)?,
            &host,
            1e-9,
        );
        // A unit vector's inverse picks the point on the sphere, not the
        // (radially free) original.
        if !matches!(constraint(), Constraint::UnitVector) {
            close(&format!("{name} {rows}x{cols} inverse"), &back, &x, 1e-7);
        }
        if m > 0 && !matches!(constraint(), Constraint::SumToZero | Constraint::UnitVector) {
            let want = fd_log_det(&p, &x, c)?;
            let got = jacobian.unwrap_or(0.0);
            assert!(
                (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                "{name} {rows}x{cols}: log-Jacobian {got} vs finite differences {want}"
            );
        }
        if m > 0 {
            let theta = Var::new(MatrixCl::from_slice(m, 1, &x)?);
            let weights: Vec<f64> = (0..rows * cols).map(|_| rng.next()).collect();
            let w = MatrixCl::from_slice(rows, cols, &weights)?;
            check_against_fd(
                &format!("{name} {rows}x{cols} gradient"),
                &[&theta],
                &|| {
                    let v = p.constrain(&theta)?;
                    let weighted =
                        rowwise_sum(transpose(rowwise_sum(elt_multiply(&v[handle], &w)))).eval()?;
                    v.log_density(weighted)
                },
            )?;
        }
    }
    Ok(())
}

#[test]
fn scalar_bounds_match_the_host_their_inverse_and_their_jacobian() -> clfuse::Result<()> {
    for (rows, cols) in [(1, 1), (3, 1), (2, 3)] {
        check(
            || Constraint::Unconstrained,
            rows,
            cols,
            Coordinates::All,
            1.0,
        )?;
        check(
            || Constraint::lower(-1.5),
            rows,
            cols,
            Coordinates::All,
            1.0,
        )?;
        check(|| Constraint::upper(2.0), rows, cols, Coordinates::All, 1.0)?;
        check(
            || Constraint::lower_upper(-1.0, 3.0),
            rows,
            cols,
            Coordinates::All,
            2.0,
        )?;
        check(
            || Constraint::offset_multiplier(1.0, 2.5),
            rows,
            cols,
            Coordinates::All,
            1.0,
        )?;
    }
    Ok(())
}

#[test]
fn vector_transforms_at_odd_sizes() -> clfuse::Result<()> {
    for n in [1, 2, 5, 33] {
        check(|| Constraint::Ordered, n, 1, Coordinates::All, 1.0)?;
        check(|| Constraint::PositiveOrdered, n, 1, Coordinates::All, 1.0)?;
        check(|| Constraint::Simplex, n, 1, Coordinates::AllButLast, 1.0)?;
        check(|| Constraint::SumToZero, n, 1, Coordinates::AllButLast, 1.0)?;
        check(|| Constraint::UnitVector, n, 1, Coordinates::All, 1.0)?;
    }
    Ok(())
}

#[test]
fn matrix_transforms_match_the_host_their_inverse_and_their_jacobian() -> clfuse::Result<()> {
    for k in [1, 2, 3, 5] {
        check(
            || Constraint::CholeskyFactorCorr,
            k,
            k,
            Coordinates::StrictlyLower(k),
            1.0,
        )?;
        check(
            || Constraint::CorrMatrix,
            k,
            k,
            Coordinates::StrictlyLower(k),
            1.0,
        )?;
        check(
            || Constraint::CovMatrix,
            k,
            k,
            Coordinates::Lower(k, k),
            1.0,
        )?;
        check(
            || Constraint::CholeskyFactorCov,
            k,
            k,
            Coordinates::Lower(k, k),
            1.0,
        )?;
    }
    check(
        || Constraint::CholeskyFactorCov,
        4,
        2,
        Coordinates::Lower(4, 2),
        1.0,
    )?;
    Ok(())
}

#[test]
fn unit_vector_and_sum_to_zero_terms() -> clfuse::Result<()> {
    // unit_vector: Stan's term is -|x|²/2 (a density for the radius), not
    // a Jacobian; sum_to_zero is isometric and adds none.
    let mut p = Parameters::new();
    p.vector("p", 3, Constraint::UnitVector)?;
    let (value, jacobian) = device(&p, &[1.0, 2.0, 2.0])?;
    close(
        "unit vector",
        &value,
        &[1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0],
        1e-14,
    );
    assert_eq!(jacobian, Some(-4.5));
    let mut p = Parameters::new();
    p.vector("p", 4, Constraint::SumToZero)?;
    let (value, jacobian) = device(&p, &[0.3, -1.0, 2.0])?;
    assert!(
        value.iter().sum::<f64>().abs() < 1e-14,
        "{value:?} sums to zero"
    );
    assert_eq!(jacobian, None);
    // The map is an isometry onto the sum-to-zero plane: the free
    // coordinates' log-determinant is the same everywhere.
    let a = fd_log_det(&p, &[0.3, -1.0, 2.0], Coordinates::AllButLast)?;
    let b = fd_log_det(&p, &[-2.0, 0.5, 0.1], Coordinates::AllButLast)?;
    assert!((a - b).abs() < 1e-6, "{a} vs {b}");
    Ok(())
}

#[test]
fn infinite_bounds_turn_a_bound_off_and_bad_bounds_are_errors() -> clfuse::Result<()> {
    let mut p = Parameters::new();
    p.real("p", Constraint::lower_upper(f64::NEG_INFINITY, 1.0))?;
    let (value, jacobian) = device(&p, &[0.5])?;
    close("upper only", &value, &[1.0 - 0.5f64.exp()], 1e-14);
    assert_eq!(jacobian, Some(0.5));
    let mut p = Parameters::new();
    p.real(
        "p",
        Constraint::lower_upper(f64::NEG_INFINITY, f64::INFINITY),
    )?;
    assert_eq!(device(&p, &[0.5])?, (vec![0.5], None));
    let mut p = Parameters::new();
    p.real("p", Constraint::lower(f64::NEG_INFINITY))?;
    assert_eq!(device(&p, &[0.5])?, (vec![0.5], None));

    let mut p = Parameters::new();
    let equal = p
        .real("p", Constraint::lower_upper(1.0, 1.0))
        .unwrap_err()
        .to_string();
    assert!(
        equal.contains("lower bound 1 is not below the upper bound 1"),
        "{equal}"
    );
    let multiplier = p
        .real("q", Constraint::offset_multiplier(0.0, -1.0))
        .unwrap_err()
        .to_string();
    assert!(
        multiplier.contains("multiplier -1 is not positive finite"),
        "{multiplier}"
    );
    let shape = p
        .add("r", 2, 2, Constraint::Simplex)
        .unwrap_err()
        .to_string();
    assert!(
        shape.contains("simplex does not apply to a 2 x 2 parameter"),
        "{shape}"
    );
    let data = MatrixCl::from_slice(3, 1, &[0.0, 1.0, 2.0])?;
    let bound = p
        .vector("s", 2, Constraint::lower(&data))
        .unwrap_err()
        .to_string();
    assert!(
        bound.contains("data bound is 3 x 1, but must be 1 x 1 or 2 x 1"),
        "{bound}"
    );
    // Values outside their constraint have no unconstrained value.
    let mut p = Parameters::new();
    p.vector("c", 3, Constraint::Ordered)?;
    let err = p
        .unconstrain(&[("c", &[0.0, 2.0, 1.0][..])])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("c[2, 0] is 1, but must be greater than the previous element"),
        "{err}"
    );
    let err = p.unconstrain(&[("d", &[0.0][..])]).unwrap_err().to_string();
    assert!(err.contains("no parameter is named `d`"), "{err}");
    let err = p
        .constrain(&Var::new(MatrixCl::zeros(2, 1)?))
        .err()
        .map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("has 2 values for 3 unconstrained parameters")));
    Ok(())
}

#[test]
fn bounds_from_data_and_from_earlier_parameters() -> clfuse::Result<()> {
    // theta[i] > lower[i] (data), and sigma < tau (an earlier parameter).
    let lower = MatrixCl::from_slice(3, 1, &[-1.0, 0.0, 2.0])?;
    let mut p = Parameters::new();
    let tau = p.real("tau", Constraint::lower(0.0))?;
    let sigma = p.real("sigma", Constraint::lower_upper(0.0, tau))?;
    let theta = p.vector("theta", 3, Constraint::lower(&lower))?;
    let x = [0.3, -0.4, 0.1, 0.2, -0.5];
    let host = p.constrain_host(&x)?;
    let tau_value = 0.3f64.exp();
    let sigma_value = tau_value / (1.0 + 0.4f64.exp());
    close(
        "tau and sigma",
        &host[..2],
        &[tau_value, sigma_value],
        1e-14,
    );
    close(
        "theta",
        &host[2..],
        &[-1.0 + 0.1f64.exp(), 0.2f64.exp(), 2.0 + (-0.5f64).exp()],
        1e-14,
    );
    let theta_var = Var::new(MatrixCl::from_slice(5, 1, &x)?);
    let v = p.constrain(&theta_var)?;
    close(
        "device sigma",
        &v[sigma].value().to_vec()?,
        &[sigma_value],
        1e-13,
    );
    close(
        "device theta",
        &v[theta].value().to_vec()?,
        &host[2..],
        1e-13,
    );
    rev::clear()?;
    // Jacobian and gradient through the parameter-dependent bound.
    check_against_fd("dependent bounds", &[&theta_var], &|| {
        let v = p.constrain(&theta_var)?;
        v.log_density((&v[sigma] * 1.0).eval()?)
    })?;
    let back = p.unconstrain(&[
        ("tau", &host[..1]),
        ("sigma", &host[1..2]),
        ("theta", &host[2..]),
    ])?;
    close("inverse with dependent bounds", &back, &x, 1e-9);
    Ok(())
}

/// Several parameters' log-Jacobian terms, added up by the step that adds
/// the log density: blocks of more than one element (a step each) and
/// one-element blocks below or above a bound (their element of `theta`,
/// read in place, at offsets other than 0), against the finite-difference
/// log-determinant of the whole map, and the gradient against finite
/// differences.
#[test]
fn log_jacobian_terms_of_several_parameters_add_up_in_one_step() -> clfuse::Result<()> {
    let mut p = Parameters::new();
    let a = p.vector("a", 3, Constraint::lower(0.5))?;
    let s = p.real("s", Constraint::lower(0.0))?;
    p.real("t", Constraint::upper(2.0))?;
    p.vector("u", 2, Constraint::lower_upper(-1.0, 1.0))?;
    p.real("free", Constraint::Unconstrained)?;
    let x = [0.3, -0.7, 1.1, -0.4, 0.9, 0.2, -1.3, 0.6];
    assert_eq!(p.dim(), x.len());
    let theta = Var::new(MatrixCl::from_slice(x.len(), 1, &x)?);
    let v = p.constrain(&theta)?;
    let want = fd_log_det(&p, &x, Coordinates::All)?;
    let got = v.log_jacobian()?.map(|j| j.value().to_vec()).transpose()?;
    let got = got.map_or(f64::NAN, |j| j[0]);
    assert!(
        (got - want).abs() <= 1e-6 * want.abs().max(1.0),
        "{got} vs {want}"
    );
    // The same sum through log_density, which adds lp in the same step.
    let lp = v.log_density((&v[s] * 2.0).eval()?)?;
    let host_s = p.constrain_host(&x)?[3];
    let total = lp.value().to_vec()?[0];
    assert!((total - (2.0 * host_s + want)).abs() <= 1e-6 * want.abs().max(1.0));
    rev::clear()?;
    let weights = MatrixCl::from_slice(3, 1, &[0.5, -1.0, 2.0])?;
    check_against_fd("several log-Jacobian terms", &[&theta], &|| {
        let v = p.constrain(&theta)?;
        let weighted = colwise_sum(elt_multiply(&v[a], &weights)).eval()?;
        v.log_density((&weighted + &v[s]).eval()?)
    })?;
    Ok(())
}

/// A one-element block below or above a bound records one step, its value:
/// its log-Jacobian is its element of `theta`, read by the step that adds
/// the log density (one step for `lp` and every term).
#[test]
fn bounded_scalars_record_no_log_jacobian_step() -> clfuse::Result<()> {
    let mut p = Parameters::new();
    let s = p.real("s", Constraint::lower(0.0))?;
    p.real("t", Constraint::upper(1.0))?;
    let theta = Var::new(MatrixCl::from_slice(2, 1, &[0.25, -0.5])?);
    rev::clear()?;
    let v = p.constrain(&theta)?;
    assert_eq!(rev::steps_recorded(), 2, "one step per value");
    let lp = v.log_density((&v[s] * 1.0).eval()?)?;
    assert_eq!(rev::steps_recorded(), 4, "lp and one step adding it up");
    // exp(0.25) + log J = exp(0.25) + 0.25 - 0.5.
    let want = 0.25f64.exp() + 0.25 - 0.5;
    assert!((lp.value().to_vec()?[0] - want).abs() < 1e-12);
    lp.grad()?;
    // d/dθ0 = exp(0.25) + 1, d/dθ1 = 1.
    let g = theta.adjoint().to_vec()?;
    assert!(
        (g[0] - (0.25f64.exp() + 1.0)).abs() < 1e-12 && (g[1] - 1.0).abs() < 1e-12,
        "{g:?}"
    );
    rev::clear()?;
    Ok(())
}

/// A model whose only parameter is one unconstrained column is `theta`
/// itself: no step, and the gradient reaches `theta` directly.
#[test]
fn an_unconstrained_column_that_is_all_of_theta_records_no_step() -> clfuse::Result<()> {
    let mut p = Parameters::new();
    let beta = p.vector("beta", 3, Constraint::Unconstrained)?;
    let theta = Var::new(MatrixCl::from_slice(3, 1, &[1.0, -2.0, 0.5])?);
    rev::clear()?;
    let v = p.constrain(&theta)?;
    assert_eq!(rev::steps_recorded(), 0);
    assert!(v[beta].same(&theta));
    let lp = v.log_density(colwise_sum(square(&v[beta])).eval()?)?;
    lp.grad()?;
    assert_eq!(theta.adjoint().to_vec()?, vec![2.0, -4.0, 1.0]);
    rev::clear()?;
    // With a second parameter the column is a block of theta: a step.
    let mut q = Parameters::new();
    let b = q.vector("b", 2, Constraint::Unconstrained)?;
    q.real("s", Constraint::lower(0.0))?;
    let v = q.constrain(&theta)?;
    assert!(!v[b].same(&theta));
    assert_eq!(v[b].value().to_vec()?, vec![1.0, -2.0]);
    rev::clear()?;
    Ok(())
}
