//! The transforms on the device: each parameter's constrained value and
//! log-absolute-Jacobian built from fused, differentiable expressions over
//! its block of the sampler's unconstrained column `theta`, so gradients
//! flow back to `theta` without a host round trip.
//!
//! The sequential transforms are rewritten without loops: a running
//! product (the stick left in a simplex, the length left in a row of a
//! correlation factor) is the `exp` of an exclusive prefix sum of logs, and
//! a prefix sum along rows is a product with a strictly upper-triangular
//! matrix of ones.

use super::constraint::Constraint;
use crate::dist::Real;
use clfuse_core::{Error, IntoOperand, MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::rev::{Var, Variable};
use clfuse_ops::{DynOp, boxed};

/// A bound as the device transforms read it.
#[derive(Clone, Copy)]
pub(crate) enum DeviceBound<'v> {
    Number(f64),
    Matrix(&'v MatrixCl<f64>),
    Var(&'v Var),
}

/// One parameter's constrained value and its log-absolute-Jacobian
/// (`None` when the transform adds nothing).
pub(crate) struct Transformed {
    pub value: Var,
    pub log_jacobian: Option<LogJacobian>,
}

/// A transform's log-absolute-Jacobian: a recorded `1 x 1` variable, or
/// element `k` of `theta` itself (a one-element block with one bound, whose
/// log-Jacobian is its free value), which the step that adds the log
/// density up reads directly: no step of its own.
pub(crate) enum LogJacobian {
    Var(Var),
    Free(usize),
}

impl From<Var> for LogJacobian {
    fn from(v: Var) -> Self {
        LogJacobian::Var(v)
    }
}

impl LogJacobian {
    /// As a `1 x 1` variable (a step for [`LogJacobian::Free`]).
    pub(crate) fn into_var(self, theta: &Var) -> Result<Var> {
        match self {
            LogJacobian::Var(v) => Ok(v),
            LogJacobian::Free(k) => (block(theta, k, 0, 1, 1) + 0.0).eval(),
        }
    }
}

/// Where a parameter's unconstrained values sit in `theta`.
#[derive(Clone, Copy)]
pub(crate) struct Block<'p> {
    pub offset: usize,
    pub len: usize,
    pub rows: usize,
    pub cols: usize,
    /// For the triangular transforms: where each element of the
    /// `rows x cols` result reads `theta` ([`triangle_positions`], made
    /// once when the parameter is declared).
    pub positions: Option<&'p MatrixCl<i32>>,
}

type Free<'a> = Expr<DynOp<'a, f64, Variable>>;

/// The parameter's unconstrained values as a `rows x cols` matrix
/// (column-major, as Stan reads a matrix parameter).
fn free_matrix<'a>(theta: &'a Var, b: Block<'_>) -> Free<'a> {
    if b.cols == 1 {
        return boxed(block(theta, b.offset, 0, b.rows, 1));
    }
    let at =
        row_index(b.rows, b.cols) + col_index(b.rows, b.cols) * b.rows as i32 + b.offset as i32;
    boxed(indexing(theta, at, 0))
}

/// The unconstrained values as a column.
fn free_column<'a>(theta: &'a Var, b: Block<'_>) -> Free<'a> {
    boxed(block(theta, b.offset, 0, b.len, 1))
}

/// The sum of every element of `e`, `1 x 1`: one step for a column or a
/// row (a parameter's log-Jacobian is mostly a column), two for a matrix.
fn total<E>(e: E) -> Result<Var>
where
    E: IntoOperand,
    E::Operand: clfuse_ops::rev::Differentiable<Scalar = f64, Dependence = Variable>,
{
    let e = clfuse_core::Expr(e.into_operand());
    match clfuse_ops::Operation::shape(&e.0)? {
        Some((_, 1)) | None => colwise_sum(e).eval(),
        Some((1, _)) => rowwise_sum(e).eval(),
        Some(_) => {
            let columns: Var = colwise_sum(e).eval()?;
            rowwise_sum(&columns).eval()
        }
    }
}

/// Where each element of a triangular transform's `rows x cols` result
/// reads `theta` (positions outside the triangle read the block's first
/// value and are masked), or `None` for the other constraints. Made once,
/// when the parameter is declared: an upload per gradient would cost a
/// host-to-device copy on the sampler's hot path.
pub(crate) fn triangle_positions(
    c: &Constraint,
    rows: usize,
    cols: usize,
    offset: usize,
) -> Result<Option<MatrixCl<i32>>> {
    let k = rows;
    let at: Box<dyn Fn(usize, usize) -> Option<usize>> = match c {
        Constraint::CholeskyFactorCorr => Box::new(|i, j| (j < i).then(|| i * (i - 1) / 2 + j)),
        // Stan's read_corr_L: column by column.
        Constraint::CorrMatrix => Box::new(move |i, j| {
            (j < i).then(|| j * (k - 1) - j * j.saturating_sub(1) / 2 + (i - j - 1))
        }),
        // Row by row with the diagonal; rows below a wide factor's square
        // part hold `cols` values each.
        Constraint::CholeskyFactorCov | Constraint::CovMatrix => Box::new(move |i, j| {
            (j <= i).then(|| {
                if i < cols {
                    i * (i + 1) / 2 + j
                } else {
                    cols * (cols + 1) / 2 + (i - cols) * cols + j
                }
            })
        }),
        _ => return Ok(None),
    };
    let mut index = vec![offset as i32; rows * cols];
    for j in 0..cols {
        for i in 0..rows {
            if let Some(p) = at(i, j) {
                index[i + j * rows] = (offset + p) as i32;
            }
        }
    }
    Ok(Some(MatrixCl::from_slice(rows, cols, &index)?))
}

/// A triangular transform's positions ([`triangle_positions`]).
fn positions<'p>(b: &Block<'p>) -> Result<&'p MatrixCl<i32>> {
    b.positions.ok_or_else(|| Error::InvalidArgument {
        function: "Parameters::constrain",
        argument: "constraint",
        reason: "internal: a triangular transform without its positions".into(),
    })
}

/// Applies one constraint to `theta`'s block `b`.
pub(crate) fn transform(
    c: &Constraint,
    theta: &Var,
    b: Block<'_>,
    bounds: &[DeviceBound<'_>],
) -> Result<Transformed> {
    let lower = bounds.first().copied();
    let upper = bounds.get(1).copied();
    match c {
        // A column that is all of `theta` is `theta`: no copy, no step.
        Constraint::Unconstrained if b.offset == 0 && b.cols == 1 && b.rows == theta.rows() => {
            plain(theta.clone())
        }
        Constraint::Unconstrained => plain(free_matrix(theta, b).eval()?),
        Constraint::Lower(_) => one_bound(theta, b, lower, Side::Lower),
        Constraint::Upper(_) => one_bound(theta, b, lower, Side::Upper),
        Constraint::LowerUpper(..) => match (lower, upper) {
            (Some(DeviceBound::Number(l)), _) if l == f64::NEG_INFINITY => {
                one_bound(theta, b, upper, Side::Upper)
            }
            (_, Some(DeviceBound::Number(u))) if u == f64::INFINITY => {
                one_bound(theta, b, lower, Side::Lower)
            }
            (Some(l), Some(u)) => with_bound(l, b, |l| {
                with_bound(u, b, |u| lower_upper(theta, b, &l, &u))
            }),
            _ => Err(missing_bound(c)),
        },
        Constraint::OffsetMultiplier(..) => match (lower, upper) {
            (Some(o), Some(s)) => with_bound(o, b, |o| {
                with_bound(s, b, |s| offset_multiplier(theta, b, &o, &s))
            }),
            _ => Err(missing_bound(c)),
        },
        Constraint::Ordered => ordered(theta, b, false),
        Constraint::PositiveOrdered => ordered(theta, b, true),
        Constraint::Simplex => simplex(theta, b),
        Constraint::UnitVector => unit_vector(theta, b),
        Constraint::SumToZero => sum_to_zero(theta, b),
        Constraint::CholeskyFactorCorr => correlation_factor(theta, b, CpcOrder::RowByRow),
        Constraint::CorrMatrix => {
            let factor = correlation_factor(theta, b, CpcOrder::ColumnByColumn)?;
            Ok(Transformed {
                value: tcrossprod(&factor.value).eval()?,
                log_jacobian: factor.log_jacobian,
            })
        }
        Constraint::CholeskyFactorCov => covariance_factor(theta, b),
        Constraint::CovMatrix => {
            let factor = covariance_factor(theta, b)?;
            let k = b.rows;
            // Σ = L Lᵀ adds K log 2 + Σ_k (K - k) log L_kk (0-based k) to
            // the factor's own Σ_k log L_kk.
            let weights = cast::<f64, _>(row_index(k, 1) * -1 + k as i32);
            let extra = total(elt_multiply(log(diagonal(&factor.value)), weights))?;
            let two = k as f64 * std::f64::consts::LN_2;
            let log_jacobian = match factor.log_jacobian {
                Some(j) => (&j.into_var(theta)? + &extra + two).eval()?,
                None => (&extra + two).eval()?,
            };
            Ok(Transformed {
                value: tcrossprod(&factor.value).eval()?,
                log_jacobian: Some(log_jacobian.into()),
            })
        }
    }
}

fn plain(value: Var) -> Result<Transformed> {
    Ok(Transformed {
        value,
        log_jacobian: None,
    })
}

fn missing_bound(c: &Constraint) -> Error {
    Error::InvalidArgument {
        function: "Parameters::constrain",
        argument: "constraint",
        reason: format!("the {} constraint lacks a bound", c.name()),
    }
}

/// Calls `f` with the bound as an argument of the right kind (the
/// transforms are generic over numbers, data and variables).
fn with_bound<R>(
    bound: DeviceBound<'_>,
    b: Block<'_>,
    f: impl FnOnce(BoundLeaf<'_>) -> Result<R>,
) -> Result<R> {
    match bound {
        DeviceBound::Number(v) => f(BoundLeaf::Constant(v.leaf_at(b.rows, b.cols))),
        DeviceBound::Matrix(m) => f(BoundLeaf::Constant(m.leaf_at(b.rows, b.cols))),
        DeviceBound::Var(v) => f(BoundLeaf::Variable(v.leaf_at(b.rows, b.cols))),
    }
}

/// A bound spread to the parameter's shape.
enum BoundLeaf<'s> {
    Constant(Expr<DynOp<'s, f64, clfuse_ops::rev::Constant>>),
    Variable(Expr<DynOp<'s, f64, Variable>>),
}

/// Evaluates `$body` with `$leaf` bound to the bound's expression, whatever
/// its dependence.
macro_rules! on_leaf {
    ($bound:expr, |$leaf:ident| $body:expr) => {
        match $bound {
            BoundLeaf::Constant($leaf) => $body,
            BoundLeaf::Variable($leaf) => $body,
        }
    };
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Lower,
    Upper,
}

fn one_bound(
    theta: &Var,
    b: Block<'_>,
    bound: Option<DeviceBound<'_>>,
    side: Side,
) -> Result<Transformed> {
    let Some(bound) = bound else {
        return Err(missing_bound(&Constraint::Unconstrained));
    };
    let infinite = match bound {
        DeviceBound::Number(v) => v.is_infinite() && (v > 0.0) == (side == Side::Upper),
        _ => false,
    };
    if infinite {
        return plain(free_matrix(theta, b).eval()?);
    }
    let x = free_matrix(theta, b);
    let value = with_bound(bound, b, |leaf| {
        on_leaf!(leaf, |l| match side {
            Side::Lower => (exp(&x) + &l).eval(),
            Side::Upper => (&l - exp(&x)).eval(),
        })
    })?;
    // log |d(l + exp x)/dx| = x, and likewise below an upper bound.
    let log_jacobian = if b.len == 1 {
        LogJacobian::Free(b.offset)
    } else {
        total(free_column(theta, b))?.into()
    };
    Ok(Transformed {
        value,
        log_jacobian: Some(log_jacobian),
    })
}

fn lower_upper(
    theta: &Var,
    b: Block<'_>,
    l: &BoundLeaf<'_>,
    u: &BoundLeaf<'_>,
) -> Result<Transformed> {
    let x = free_matrix(theta, b);
    on_leaf!(l, |l| on_leaf!(u, |u| {
        let width = u - l;
        let width = &width;
        let value = (l + elt_multiply(width, inv_logit(&x))).eval()?;
        let log_jacobian = total(log(width) + log_inv_logit(&x) + log1m_inv_logit(&x))?;
        Ok(Transformed {
            value,
            log_jacobian: Some(log_jacobian.into()),
        })
    }))
}

fn offset_multiplier(
    theta: &Var,
    b: Block<'_>,
    o: &BoundLeaf<'_>,
    s: &BoundLeaf<'_>,
) -> Result<Transformed> {
    let x = free_matrix(theta, b);
    on_leaf!(o, |o| on_leaf!(s, |s| {
        let value = (o + elt_multiply(s, &x)).eval()?;
        // `log σ` once per element; `x * 0` keeps the sum a variable's
        // (and so a step of the tape) when σ is a number.
        let log_jacobian = total(log(s) + &x * 0.0)?;
        Ok(Transformed {
            value,
            log_jacobian: Some(log_jacobian.into()),
        })
    }))
}

fn ordered(theta: &Var, b: Block<'_>, positive: bool) -> Result<Transformed> {
    let n = b.rows;
    let x = free_column(theta, b);
    let first = eq(row_index(n, 1), 0);
    let steps = if positive {
        boxed(exp(&x))
    } else {
        boxed(select(first, &x, exp(&x)))
    };
    let value = cumulative_sum(steps)?.eval()?;
    let log_jacobian = if positive {
        total(&x)?
    } else {
        total(select(gt(row_index(n, 1), 0), &x, 0.0))?
    };
    Ok(Transformed {
        value,
        log_jacobian: Some(log_jacobian.into()),
    })
}

/// `Σ_{j < i} v_j` for `i` in `0..rows` over the column `v` of `len`
/// elements (an `O(rows · len)` masked row sum, like `cumulative_sum`).
fn exclusive_prefix_sum<'a, V>(
    v: V,
    rows: usize,
    len: usize,
) -> Expr<impl clfuse_ops::rev::Differentiable<Scalar = f64, Dependence = Variable> + 'a>
where
    V: IntoOperand + 'a,
    V::Operand: clfuse_ops::rev::Differentiable<Scalar = f64, Dependence = Variable>,
{
    let before = lt(col_index(rows, len), row_index(rows, len));
    rowwise_sum(select(before, rowwise_broadcast(transpose(v), rows), 0.0))
}

fn simplex(theta: &Var, b: Block<'_>) -> Result<Transformed> {
    let (n, m) = (b.rows, b.len);
    if m == 0 {
        return plain(Var::new(MatrixCl::from_slice(n, 1, &vec![1.0; n])?));
    }
    // Each share's logit is offset by log(m - k) so that x = 0 gives the
    // uniform simplex (Stan's `eq_share`).
    let shifted =
        (free_column(theta, b) - log(cast::<f64, _>(row_index(m, 1) * -1 + m as i32))).eval()?;
    let log_rest = log1m_inv_logit(&shifted).eval()?;
    // log of the stick left before share k, for k = 0..n.
    let log_stick = exclusive_prefix_sum(&log_rest, n, m).eval()?;
    let last = eq(row_index(n, 1), m as i32);
    let share_at = indexing(&shifted, select(last, 0, row_index(n, 1)), 0);
    let log_share = select(last, 0.0, log_inv_logit(share_at));
    let value = exp(&log_stick + log_share).eval()?;
    let log_jacobian = total(block(&log_stick, 0, 0, m, 1) + log_inv_logit(&shifted) + &log_rest)?;
    Ok(Transformed {
        value,
        log_jacobian: Some(log_jacobian.into()),
    })
}

fn unit_vector(theta: &Var, b: Block<'_>) -> Result<Transformed> {
    let n = b.rows;
    let x = free_column(theta, b);
    let squared_norm = dot_self(&x).eval()?;
    let value = elt_divide(&x, scalar_broadcast(sqrt(&squared_norm), n, 1)).eval()?;
    Ok(Transformed {
        value,
        log_jacobian: Some((&squared_norm * -0.5).eval()?.into()),
    })
}

fn sum_to_zero(theta: &Var, b: Block<'_>) -> Result<Transformed> {
    let (n, m) = (b.rows, b.len);
    if m == 0 {
        return plain(Var::new(MatrixCl::zeros(n, 1)?));
    }
    // w_k = x_{k-1} / sqrt(k (k + 1)) for k = 1..m, w_0 = 0; then
    // z_k = Σ_{j > k} w_j - k w_k (Stan's isometric construction).
    let k = row_index(n, 1);
    let kf = || cast::<f64, _>(row_index(n, 1));
    let previous = indexing(theta, select(gt(k, 0), k - 1, 0) + b.offset as i32, 0);
    let w = select(
        gt(k, 0),
        elt_divide(previous, sqrt(elt_multiply(kf(), kf() + 1.0))),
        0.0,
    )
    .eval()?;
    let after = lt(row_index(n, n), col_index(n, n));
    let suffix = rowwise_sum(select(after, rowwise_broadcast(transpose(&w), n), 0.0));
    let value = (suffix - elt_multiply(kf(), &w)).eval()?;
    plain(value)
}

#[derive(Clone, Copy, PartialEq)]
enum CpcOrder {
    /// `cholesky_factor_corr`: row by row.
    RowByRow,
    /// `corr_matrix`: column by column (Stan's `read_corr_L`).
    ColumnByColumn,
}

/// The Cholesky factor of a correlation matrix from `K (K - 1) / 2`
/// canonical partial correlations `z = tanh(x)`: `L_ij = z_ij · sqrt(Π_{k<j}
/// (1 - z_ik²))`, `L_ii = sqrt(Π_{k<i} (1 - z_ik²))`.
fn correlation_factor(theta: &Var, b: Block<'_>, order: CpcOrder) -> Result<Transformed> {
    let k = b.rows;
    if b.len == 0 {
        return plain(Var::new(MatrixCl::from_slice(k, k, &vec![1.0; k * k])?));
    }
    let at = positions(&b)?;
    let strictly_lower = || lt(col_index(k, k), row_index(k, k));
    let z = select(strictly_lower(), tanh(indexing(theta, at, 0)), 0.0).eval()?;
    // log(1 - z²), zero outside the triangle.
    let log_left = log1m(square(&z)).eval()?;
    // Row-wise exclusive prefix sums: a product with ones above the diagonal.
    let ones_above = cast::<f64, _>(lt(row_index(k, k), col_index(k, k)));
    let log_length = (&log_left * ones_above).eval()?;
    let on_diagonal = cast::<f64, _>(eq(row_index(k, k), col_index(k, k)));
    let value = select(
        le(col_index(k, k), row_index(k, k)),
        elt_multiply(&z + on_diagonal, exp(&log_length * 0.5)),
        0.0,
    )
    .eval()?;
    let log_jacobian = match order {
        // Stan's cholesky_corr_constrain: tanh's Jacobian and ½ log of each
        // element's remaining length.
        CpcOrder::RowByRow => total(&log_left + select(strictly_lower(), &log_length * 0.5, 0.0))?,
        // Stan's read_corr_L: column j's partial correlations weigh
        // (K - 2 - j) / 2.
        CpcOrder::ColumnByColumn => {
            let weight = cast::<f64, _>(col_index(k, k) * -1 + (k as i32 - 2)) * 0.5 + 1.0;
            total(elt_multiply(&log_left, weight))?
        }
    };
    Ok(Transformed {
        value,
        log_jacobian: Some(log_jacobian.into()),
    })
}

/// An `M x N` lower-triangular factor with a positive diagonal (`exp` of
/// its values), filled row by row; log-Jacobian the sum of the diagonal's
/// unconstrained values.
fn covariance_factor(theta: &Var, b: Block<'_>) -> Result<Transformed> {
    let (rows, cols) = (b.rows, b.cols);
    if b.len == 0 {
        return plain(Var::new(MatrixCl::zeros(rows, cols)?));
    }
    let at = positions(&b)?;
    let x = indexing(theta, at, 0).eval()?;
    let (row, col) = (|| row_index(rows, cols), || col_index(rows, cols));
    let value = select(lt(col(), row()), &x, select(eq(col(), row()), exp(&x), 0.0)).eval()?;
    let log_jacobian = total(select(eq(col(), row()), &x, 0.0))?;
    Ok(Transformed {
        value,
        log_jacobian: Some(log_jacobian.into()),
    })
}
