//! Multivariate densities, over the columns of a matrix (each column one
//! observation): Dirichlet (simplexes) and the multivariate normal, with
//! its covariance or a Cholesky factor of it.
//!
//! Both sum terms over a `K x N` matrix: one kernel sums each column (and
//! makes the element checks), a second step sums the `1 x N` row. The
//! multivariate normal first solves `L z = y - μ` by the library's
//! triangular-solve leaf, so its argument checks run in a kernel of their
//! own before anything is recorded.

use super::common::{
    Checks, Density, LOG_SQRT_TWO_PI, Lp, Real, Req, Value, checked_eval_all, matrix_shape,
    per_column, same_type, value_of, zero,
};
use crate::linalg::{self, Op};
use crate::rev::{self, Var};
use clfuse_core::{Error, MatrixCl, Result, View};
use clfuse_ops::prelude::*;

/// Stan's `dirichlet_lpdf(theta | alpha)`: `theta` a simplex (`K x 1`) or
/// `N` simplexes, the columns of a `K x N` matrix; `alpha` the
/// concentrations, `K x 1` (shared by every column) or `K x N` (a number:
/// the same for every category). Over the columns,
/// `Σ lgamma(Σ_k α_k) - Σ_k lgamma(α_k) + Σ_k (α_k - 1) log θ_k`
/// (with `0 · log 0 = 0`).
///
/// Checks: `alpha` positive and finite; `theta` non-negative, each column
/// summing to 1 within `1e-8` (reported as `sum(theta)[0, j]`), at least
/// one row.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let theta = MatrixCl::from_slice(2, 1, &[0.25, 0.75])?;
/// let alpha = Var::new(MatrixCl::from_slice(2, 1, &[1.0, 1.0])?);
/// let lp = dist::dirichlet_lpdf(&theta, &alpha).eval()?;
/// // Dirichlet(1, 1) is uniform on the simplex: density Γ(2) = 1
/// assert!(lp.value().to_vec()?[0].abs() < 1e-12);
/// lp.grad()?; // d/dα_k = ψ(Σα) - ψ(α_k) + log θ_k = 1 + log θ_k at α = 1
/// let g = alpha.adjoint().to_vec()?;
/// assert!((g[0] - (1.0 + 0.25f64.ln())).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn dirichlet_lpdf<T: Real, A: Real>(
    theta: T,
    alpha: A,
) -> Density<impl FnOnce() -> Result<Lp<(T, A)>>> {
    Density::new(move || {
        const F: &str = "dirichlet_lpdf";
        let (k, n) = matrix_shape(&theta)?;
        if k == 0 {
            return Err(Error::InvalidArgument {
                function: F,
                argument: "theta",
                reason: "must have at least one row (category)".into(),
            });
        }
        per_column(F, "alpha", &alpha, k, n)?;
        let checks = Checks::new(F)
            .real("alpha", &alpha, Req::PositiveFinite)
            .real("theta", &theta, Req::NonNegative)
            .simplex("theta", "sum(theta)", &theta, n);
        let (theta, alpha) = (theta.leaf_at(k, n), alpha.leaf_at(k, n));
        // lgamma(Σ_k α_k), once per column (in its first row).
        let total = transpose(rowwise_sum(transpose(&alpha)));
        let first = eq(row_index(k, n), 0);
        let lp = lmultiply(&alpha - 1.0, &theta) - lgamma(&alpha)
            + select(first, lgamma(optional_broadcast(total, k, n)), 0.0);
        checked_eval_all::<(T, A), _>(k, n, lp, checks)
    })
}

/// Stan's `multi_normal_cholesky_lpdf(y | mu, L)`: the columns of `y`
/// (`K x N`, each an observation) under the normal with mean `mu` (`K x 1`,
/// shared by every column, or `K x N`; a number: the same everywhere) and
/// covariance `L Lᵀ`, `L` (`K x K`) lower triangular (its upper triangle is
/// not read):
/// `-N K/2 log(2π) - N Σ_k log L_kk - ½ Σ_cols ‖L⁻¹(y - μ)‖²`.
///
/// `L⁻¹(y - μ)` is the library's triangular solve
/// ([`rev::mdivide_left_tri`] of variables), the rest fused expressions;
/// differentiable in `y`, `mu` and `L`.
///
/// Checks (Stan's): `y` not NaN, `mu` finite, `L` `K x K`; made before
/// anything is recorded. (As in Stan, `L` is not checked to be a Cholesky
/// factor; the solve rejects a non-finite `y - μ`.)
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
/// let l = Var::new(MatrixCl::from_slice(2, 2, &[2.0, 0.0, 0.0, 1.0])?); // Σ = diag(4, 1)
/// let lp = dist::multi_normal_cholesky_lpdf(&y, 0.0, &l).eval()?;
/// let want = -2.0 * 0.918_938_533_204_672_8 - 2.0f64.ln() - 0.5 * (0.25 + 4.0);
/// assert!((lp.value().to_vec()?[0] - want).abs() < 1e-12);
/// lp.grad()?; // d/dL_00 = -1/L_00 + y_0²/L_00³ = -0.5 + 0.125
/// assert!((l.adjoint().to_vec()?[0] + 0.375).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn multi_normal_cholesky_lpdf<Y: Real, M: Real, L: Real>(
    y: Y,
    mu: M,
    l: L,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, L)>>> {
    Density::new(move || {
        const F: &str = "multi_normal_cholesky_lpdf";
        let (k, n) = checked_normal_arguments(F, &y, &mu, ("L", &l))?;
        if k == 0 || n == 0 {
            // No observation (or no coordinate): no term.
            return zero::<(Y, M, L)>();
        }
        let l = l.value()?;
        let z = solve(&l, &value_of(y.leaf_at(k, n) - mu.leaf_at(k, n))?)?;
        match (&z, &l) {
            (Value::Var(z), Value::Var(l)) => sum_terms::<(Y, M, L), _, _>(z, l, k, n),
            (Value::Var(z), Value::Matrix(l)) => sum_terms::<(Y, M, L), _, _>(z, &**l, k, n),
            (Value::Matrix(z), Value::Var(l)) => sum_terms::<(Y, M, L), _, _>(&**z, l, k, n),
            (Value::Matrix(z), Value::Matrix(l)) => sum_terms::<(Y, M, L), _, _>(&**z, &**l, k, n),
        }
    })
}

/// Stan's `multi_normal_lpdf(y | mu, Sigma)`: the columns of `y` (`K x N`,
/// each an observation) under the normal with mean `mu` (`K x 1`, shared by
/// every column, or `K x N`; a number: the same everywhere) and covariance
/// `Sigma` (`K x K`, symmetric positive definite):
/// `-N K/2 log(2π) - N/2 log|Σ| - ½ Σ_cols (y - μ)ᵀ Σ⁻¹ (y - μ)`.
///
/// The forward pass factors `Σ = L Lᵀ`, inverts `L`, forms `z = L⁻¹(y - μ)`
/// and `α = L⁻ᵀ z` by two products and sums the terms. Its gradient is
/// Stan's closed form, one step with no Cholesky adjoint: `adj(y) = -α`,
/// `adj(μ) = α` and `adj(Σ) = ½ (α αᵀ - N Σ⁻¹)`, symmetric (as Stan gives
/// it: a covariance built from parameters, such as [`gp_exp_quad_cov`],
/// sums both halves), with `Σ⁻¹ = L⁻ᵀ L⁻¹` one triangular product. For a Gaussian process this is the fast form:
/// `multi_normal_cholesky_lpdf(y, mu, rev::cholesky_decompose(&k)?)` gives
/// the same value and gradient through the Cholesky adjoint, at about
/// twice the flops.
///
/// Checks (Stan's): `y` not NaN, `mu` finite, made before anything is
/// recorded; `Sigma` `K x K`, finite, symmetric (relative tolerance 1e-8)
/// and positive definite, checked by its Cholesky factorization, whose
/// errors name this function and `Sigma`. An infinite `y` gives a value of
/// `-inf` or NaN.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::{dist, rev::Var};
/// let y = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
/// let sigma = Var::new(MatrixCl::from_slice(2, 2, &[4.0, 0.0, 0.0, 1.0])?);
/// let lp = dist::multi_normal_lpdf(&y, 0.0, &sigma).eval()?;
/// let want = -2.0 * 0.918_938_533_204_672_8 - 0.5 * 4.0f64.ln() - 0.5 * (0.25 + 4.0);
/// assert!((lp.value().to_vec()?[0] - want).abs() < 1e-12);
/// lp.grad()?; // d/dΣ_00 = ½ (α_0² - 1/Σ_00) = ½ (1/16 - 1/4)
/// assert!((sigma.adjoint().to_vec()?[0] + 0.09375).abs() < 1e-12);
///
/// let not_pd = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 2.0, 1.0])?;
/// let err = dist::multi_normal_lpdf(&y, 0.0, &not_pd).eval().unwrap_err();
/// assert!(err.to_string().starts_with("multi_normal_lpdf: argument `Sigma` is not positive definite"));
/// # Ok::<(), clfuse::Error>(())
/// ```
///
/// [`gp_exp_quad_cov`]: clfuse_ops::prelude::gp_exp_quad_cov
pub fn multi_normal_lpdf<Y: Real, M: Real, S: Real>(
    y: Y,
    mu: M,
    sigma: S,
) -> Density<impl FnOnce() -> Result<Lp<(Y, M, S)>>> {
    Density::new(move || {
        const F: &str = "multi_normal_lpdf";
        let (k, n) = checked_normal_arguments(F, &y, &mu, ("Sigma", &sigma))?;
        if k == 0 || n == 0 {
            return zero::<(Y, M, S)>();
        }
        let sigma = sigma.value()?;
        let factor =
            linalg::cholesky_decompose(matrix(&sigma)).map_err(|e| e.renamed(F, "Sigma"))?;
        // L⁻¹ once: the reverse pass needs it for Σ⁻¹, and the two solves
        // become two products (a blocked solve is two launches per block).
        let inverse = linalg::tri_inverse_prechecked(&factor)?;
        let residual = value_of(y.leaf_at(k, n) - mu.leaf_at(k, n))?;
        let z = linalg::multiply_transposed(&inverse, Op::N, matrix(&residual), Op::N)?;
        let alpha = linalg::multiply_transposed(&inverse, Op::T, &z, Op::N)?;
        let lp: MatrixCl<f64> = sum_terms::<(&MatrixCl<f64>,), _, _>(&z, &factor, k, n)?;
        let parents: Vec<&Var> = [&residual, &sigma]
            .into_iter()
            .filter_map(|v| match v {
                Value::Var(var) => Some(var),
                Value::Matrix(_) => None,
            })
            .collect();
        if parents.is_empty() {
            return same_type(lp);
        }
        let wants = (
            matches!(residual, Value::Var(_)),
            matches!(sigma, Value::Var(_)),
        );
        let lp = rev::leaf(lp, &parents, move |_, seed| {
            let mut contributions = Vec::new();
            if wants.0 {
                let adj = elt_multiply(optional_broadcast(seed, k, n), &alpha) * -1.0;
                contributions.push(Some(adj.eval()?));
            }
            if wants.1 {
                contributions.push(Some(covariance_adjoint(&inverse, &alpha, seed)?));
            }
            Ok(contributions)
        })?;
        same_type(lp)
    })
}

/// `seed · ½ (α αᵀ - N Σ⁻¹)`, with `Σ⁻¹ = L⁻ᵀ L⁻¹` from `L⁻¹` (`inverse`).
fn covariance_adjoint(
    inverse: &MatrixCl<f64>,
    alpha: &MatrixCl<f64>,
    seed: &MatrixCl<f64>,
) -> Result<MatrixCl<f64>> {
    let (k, n) = (alpha.rows(), alpha.cols());
    let precision = linalg::tri_crossprod(inverse)?;
    let half_seed = 0.5 * optional_broadcast(seed, k, k);
    if n == 1 {
        // One observation: α αᵀ element by element, in the same kernel.
        let outer = elt_multiply(
            optional_broadcast(alpha, k, k),
            optional_broadcast(transpose(alpha), k, k),
        );
        elt_multiply(half_seed, outer - &precision).eval()
    } else {
        let outer = linalg::multiply_transpose(alpha)?;
        elt_multiply(half_seed, &outer - (n as f64) * &precision).eval()
    }
}

/// The matrix of a value (a variable's value, or the matrix itself).
fn matrix<'v>(value: &'v Value<'_>) -> &'v MatrixCl<f64> {
    match value {
        Value::Var(var) => var.value(),
        Value::Matrix(m) => m,
    }
}

/// The multivariate normal's shapes and Stan's checks, before anything is
/// recorded: `y` `K x N` not NaN, `mu` per column and finite, the square
/// argument (`name`, the covariance or its factor) `K x K`. Gives `(K, N)`.
fn checked_normal_arguments<Y: Real, M: Real, S: Real>(
    function: &'static str,
    y: &Y,
    mu: &M,
    (name, square): (&'static str, &S),
) -> Result<(usize, usize)> {
    let (k, n) = matrix_shape(y)?;
    per_column(function, "mu", mu, k, n)?;
    let shape = matrix_shape(square)?;
    if shape != (k, k) {
        return Err(Error::InvalidArgument {
            function,
            argument: name,
            reason: format!(
                "must be {k} x {k} for y with {k} rows, is {} x {}",
                shape.0, shape.1
            ),
        });
    }
    let mu_shape = mu.shape()?.unwrap_or((1, 1));
    Checks::new(function)
        .ahead("y", y, (k, n), Req::NotNan)
        .ahead("mu", mu, mu_shape, Req::Finite)
        .run()?;
    Ok((k, n))
}

/// `l⁻¹ b` for lower-triangular `l`: a recorded step when either is a
/// variable.
fn solve(l: &Value<'_>, b: &Value<'_>) -> Result<Value<'static>> {
    Ok(match (l, b) {
        (Value::Var(l), Value::Var(b)) => Value::Var(rev::mdivide_left_tri(l, b)?),
        (Value::Var(l), Value::Matrix(b)) => Value::Var(rev::mdivide_left_tri(l, &**b)?),
        (Value::Matrix(l), Value::Var(b)) => Value::Var(rev::mdivide_left_tri(&**l, b)?),
        (Value::Matrix(l), Value::Matrix(b)) => {
            let lower = l.share().with_view(View::Lower);
            Value::Matrix(clfuse_core::expr::MatrixRef::Owned(
                crate::linalg::mdivide_left_tri(&lower, b)?,
            ))
        }
    })
}

/// `Σ -z²/2 - log L_kk - log √(2π)` over the `k x n` elements of `z`.
fn sum_terms<A: super::Args, Z: Real, C: Real>(z: Z, l: C, k: usize, n: usize) -> Result<Lp<A>> {
    let diagonal = optional_broadcast(diagonal(l.leaf_at(k, k)), k, n);
    let lp = -0.5 * square(z.leaf_at(k, n)) - log(diagonal) - LOG_SQRT_TWO_PI;
    checked_eval_all::<A, _>(k, n, lp, Checks::new("multi_normal_cholesky_lpdf"))
}
