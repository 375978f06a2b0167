//! Stan's matrix functions as compositions of existing operations.
//!
//! Each function builds an expression from the fusable nodes (row-wise
//! reductions, transposes, broadcasts, gathers, element-wise functions) or
//! from the GEMM leaf (`*` between matrix expressions); none adds a kernel
//! of its own. So each one fuses with what surrounds it, evaluates with
//! `.eval()` to a `MatrixCl` of constants, and to a recorded [`Var`] of
//! variables, differentiable through the tape without a derivative of its
//! own (the nodes it is made of carry theirs).
//!
//! A full reduction to a `1 x 1` operand (`dot_product`, `mean`, ...) is
//! two nested row-wise reductions ([`SumAll`], [`LogSumExpAll`]): a row's
//! sums, transposed, summed again, so it composes inside larger expressions
//! (a kernel output such as [`colwise_sum`](crate::colwise_sum) cannot).
//! A `1 x 1` value used against a whole matrix (the mean in `variance`,
//! the log-sum-exp in `log_softmax`) goes through
//! [`scalar_broadcast`](crate::scalar_broadcast), which evaluates it once
//! by its own kernel before the kernel that reads it.
//!
//! Functions that need their operands' sizes to build the expression
//! (`mean`, `variance`, `sd`, `log_softmax`, `reverse`, `cumulative_sum`,
//! `diag_pre_multiply`, `diag_post_multiply`, `quad_form_diag`) read them
//! when called and return `Result`, with the error Stan raises for empty or
//! mismatched arguments; the others check sizes when evaluated.
//!
//! Where Stan returns a real (`dot_product`, `mean`, `trace`, the vector
//! `log_mix`, ...), these return a `1 x 1` matrix expression.
//!
//! [`Var`]: crate::rev::Var

use crate::arithmetic::elt_multiply;
use crate::functions::{
    Log, Log1m, LogSumExp, Sqrt, Square, log, log_sum_exp, log1m, sqrt, square,
};
use crate::leaves::{ColIndex, RowIndex, col_index, row_index};
use crate::logic::{LessEq, Select, le};
use crate::operation::Operation;
use crate::reductions::{LogSumExpOp, RowwiseReduction, SumOp, rowwise_log_sum_exp, rowwise_sum};
use crate::structural::{
    Broadcast, Diagonal, DownRows, Indexing, ScalarBroadcast, Transpose, diagonal, indexing,
    rowwise_broadcast, scalar_broadcast, transpose,
};
use clfuse_core::expr::{Add, ElewiseDiv, ElewiseMul, MatrixProduct, Scalar, Sub};
use clfuse_core::{ClFloat, ClType, Error, Expr, IntoOperand, Result};

/// The sum of every element as a `1 x 1` operand: each row's sum,
/// transposed, summed again.
pub type SumAll<E> = RowwiseReduction<SumOp, Transpose<RowwiseReduction<SumOp, E>>>;
/// `log(Σ exp(x))` over every element as a `1 x 1` operand.
pub type LogSumExpAll<E> =
    RowwiseReduction<LogSumExpOp, Transpose<RowwiseReduction<LogSumExpOp, E>>>;
/// The node [`mean`] builds.
pub type Mean<E> = ElewiseDiv<SumAll<E>, Scalar<<E as Operation>::Scalar>>;
/// The node [`variance`] builds.
pub type Variance<E> =
    ElewiseDiv<SumAll<Square<Sub<E, ScalarBroadcast<Mean<E>>>>>, Scalar<<E as Operation>::Scalar>>;
/// A vector's elements read along a matrix's rows (`v[i]` at `(i, j)`),
/// whether the vector is a column or a row.
pub type AlongRows<V> =
    Indexing<V, ElewiseMul<RowIndex, Scalar<i32>>, ElewiseMul<RowIndex, Scalar<i32>>>;
/// A vector's elements read along a matrix's columns (`v[j]` at `(i, j)`).
pub type AlongCols<V> =
    Indexing<V, ElewiseMul<ColIndex, Scalar<i32>>, ElewiseMul<ColIndex, Scalar<i32>>>;
/// The node [`reverse`] builds.
pub type Reverse<V> = Indexing<V, Sub<Scalar<i32>, RowIndex>, Sub<Scalar<i32>, ColIndex>>;
/// The node [`cumulative_sum`] builds: each row `i` sums `v[k]` for `k <= i`.
pub type CumulativeSum<V> = RowwiseReduction<
    SumOp,
    Select<
        LessEq<ColIndex, RowIndex>,
        Broadcast<Transpose<V>, DownRows>,
        Scalar<<V as Operation>::Scalar>,
    >,
>;

fn sum_all<E: IntoOperand>(e: E) -> Expr<SumAll<E::Operand>> {
    rowwise_sum(transpose(rowwise_sum(e)))
}

fn log_sum_exp_all<E: IntoOperand>(e: E) -> Expr<LogSumExpAll<E::Operand>> {
    rowwise_log_sum_exp(transpose(rowwise_log_sum_exp(e)))
}

/// The operand's `rows x cols`, or an error naming `function` and `argument`.
fn dims<O: Operation>(
    function: &'static str,
    argument: &'static str,
    o: &O,
) -> Result<(usize, usize)> {
    o.shape()?.ok_or_else(|| Error::InvalidArgument {
        function,
        argument,
        reason: "needs a matrix or vector, not a scalar".into(),
    })
}

fn invalid(function: &'static str, argument: &'static str, reason: String) -> Error {
    Error::InvalidArgument {
        function,
        argument,
        reason,
    }
}

/// The length of a vector (`n x 1` or `1 x n`), or an error.
fn vector_length<O: Operation>(
    function: &'static str,
    argument: &'static str,
    o: &O,
) -> Result<usize> {
    let (r, c) = dims(function, argument, o)?;
    if r != 1 && c != 1 {
        return Err(invalid(
            function,
            argument,
            format!("must be a vector, but is {r} x {c}"),
        ));
    }
    Ok(r * c)
}

/// The index multipliers that read a vector `v` at a linear index: `(1, 0)`
/// for a column, `(0, 1)` for a row.
fn layout<O: Operation>(
    function: &'static str,
    argument: &'static str,
    v: &O,
) -> Result<(usize, i32, i32)> {
    let n = vector_length(function, argument, v)?;
    let (_, c) = dims(function, argument, v)?;
    Ok(if c == 1 { (n, 1, 0) } else { (n, 0, 1) })
}

fn along_rows<V: Operation>(
    v: V,
    rows: usize,
    cols: usize,
    (_, a, b): (usize, i32, i32),
) -> Expr<AlongRows<V>> {
    indexing(
        Expr(v),
        row_index(rows, cols) * a,
        row_index(rows, cols) * b,
    )
}

fn along_cols<V: Operation>(
    v: V,
    rows: usize,
    cols: usize,
    (_, a, b): (usize, i32, i32),
) -> Expr<AlongCols<V>> {
    indexing(
        Expr(v),
        col_index(rows, cols) * a,
        col_index(rows, cols) * b,
    )
}

/// Stan's `dot_product(a, b)`: `Σ a[i] b[i]` of two vectors (or matrices)
/// of the same shape, as a `1 x 1` expression.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let b = MatrixCl::from_slice(3, 1, &[4.0f64, 5.0, 6.0])?;
/// assert_eq!(dot_product(&a, &b).eval()?.to_vec()?, vec![32.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn dot_product<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<SumAll<ElewiseMul<A::Operand, B::Operand>>> {
    sum_all(elt_multiply(a, b))
}

/// Stan's `dot_self(v)`: `Σ v[i]²`, as a `1 x 1` expression.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(1, 2, &[3.0f64, 4.0])?;
/// assert_eq!(dot_self(&v).eval()?.to_vec()?, vec![25.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn dot_self<A: IntoOperand>(v: A) -> Expr<SumAll<Square<A::Operand>>> {
    sum_all(square(v))
}

/// Stan's `columns_dot_product(a, b)`: each column's dot product, a
/// `1 x cols` row.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(columns_dot_product(&a, &a).eval()?.to_vec()?, vec![5.0, 25.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn columns_dot_product<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<Transpose<RowwiseReduction<SumOp, Transpose<ElewiseMul<A::Operand, B::Operand>>>>> {
    transpose(rowwise_sum(transpose(elt_multiply(a, b))))
}

/// Stan's `rows_dot_product(a, b)`: each row's dot product, a `rows x 1`
/// column.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(rows_dot_product(&a, &a).eval()?.to_vec()?, vec![10.0, 20.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn rows_dot_product<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<RowwiseReduction<SumOp, ElewiseMul<A::Operand, B::Operand>>> {
    rowwise_sum(elt_multiply(a, b))
}

/// Stan's `columns_dot_self(a)`: each column's sum of squares, a
/// `1 x cols` row.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(columns_dot_self(&a).eval()?.to_vec()?, vec![5.0, 25.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn columns_dot_self<A: IntoOperand>(
    a: A,
) -> Expr<Transpose<RowwiseReduction<SumOp, Transpose<Square<A::Operand>>>>> {
    transpose(rowwise_sum(transpose(square(a))))
}

/// Stan's `rows_dot_self(a)`: each row's sum of squares, a `rows x 1`
/// column.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(rows_dot_self(&a).eval()?.to_vec()?, vec![10.0, 20.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn rows_dot_self<A: IntoOperand>(a: A) -> Expr<RowwiseReduction<SumOp, Square<A::Operand>>> {
    rowwise_sum(square(a))
}

/// Stan's `mean(x)`: the mean of every element, a `1 x 1` expression. An
/// empty `x` is an error, as in Stan.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 6.0])?;
/// assert_eq!(mean(&x)?.eval()?.to_vec()?, vec![3.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn mean<T, A>(x: A) -> Result<Expr<Mean<A::Operand>>>
where
    T: ClFloat,
    A: IntoOperand,
    A::Operand: Operation<Scalar = T>,
{
    let x = x.into_operand();
    let n = nonempty("mean", &x)?;
    Ok(Expr(ElewiseDiv(
        sum_all(Expr(x)).0,
        Scalar(T::from_f64(n as f64)),
    )))
}

fn nonempty<O: Operation>(function: &'static str, x: &O) -> Result<usize> {
    let (r, c) = dims(function, "x", x)?;
    if r * c == 0 {
        return Err(invalid(
            function,
            "x",
            "has size 0, but must have a non-zero size".into(),
        ));
    }
    Ok(r * c)
}

/// Stan's `variance(x)`: the sample variance of every element,
/// `Σ (x - mean)² / (n - 1)`, a `1 x 1` expression (0 for one element, as
/// in Stan; an empty `x` is an error). The mean is evaluated first, by a
/// kernel of its own.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(4, 1, &[1.0f64, 2.0, 3.0, 6.0])?;
/// assert_eq!(variance(&x)?.eval()?.to_vec()?, vec![14.0 / 3.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn variance<T, A>(x: A) -> Result<Expr<Variance<A::Operand>>>
where
    T: ClFloat,
    A: IntoOperand + Clone,
    A::Operand: Operation<Scalar = T>,
{
    let centre = mean(x.clone())?;
    let x = x.into_operand();
    let (r, c) = dims("variance", "x", &x)?;
    let n = nonempty("variance", &x)?;
    let centre = scalar_broadcast(centre, r, c);
    let squares = sum_all(square(Expr(Sub(x, centre.0))));
    let denominator = T::from_f64(n.saturating_sub(1).max(1) as f64);
    Ok(Expr(ElewiseDiv(squares.0, Scalar(denominator))))
}

/// Stan's `sd(x)`: the sample standard deviation, `sqrt(variance(x))`, a
/// `1 x 1` expression.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(1, 3, &[1.0f64, 3.0, 5.0])?;
/// assert_eq!(sd(&x)?.eval()?.to_vec()?, vec![2.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn sd<T, A>(x: A) -> Result<Expr<Sqrt<Variance<A::Operand>>>>
where
    T: ClFloat,
    A: IntoOperand + Clone,
    A::Operand: Operation<Scalar = T>,
{
    Ok(sqrt(variance(x)?))
}

/// Stan's `trace(m)`: the sum of the diagonal, a `1 x 1` expression.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(trace(&m).eval()?.to_vec()?, vec![5.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn trace<A: IntoOperand>(
    m: A,
) -> Expr<RowwiseReduction<SumOp, Transpose<Diagonal<A::Operand>>>> {
    rowwise_sum(transpose(diagonal(m)))
}

/// Stan's `diag_pre_multiply(v, m)`: `diag(v) · m`, row `i` of `m` scaled
/// by `v[i]`, element-wise (no product). `v` is a column or row vector of
/// `m`'s row count.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(2, 1, &[10.0f64, 100.0])?;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(diag_pre_multiply(&v, &m)?.eval()?.to_vec()?, vec![10.0, 200.0, 30.0, 400.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn diag_pre_multiply<V: IntoOperand, M: IntoOperand>(
    v: V,
    m: M,
) -> Result<Expr<ElewiseMul<AlongRows<V::Operand>, M::Operand>>>
where
    V::Operand: Operation,
    M::Operand: Operation,
{
    let (v, m) = (v.into_operand(), m.into_operand());
    let (r, c) = dims("diag_pre_multiply", "m", &m)?;
    let at = layout("diag_pre_multiply", "v", &v)?;
    if at.0 != r {
        return Err(invalid(
            "diag_pre_multiply",
            "v",
            format!("has {} elements, but m has {r} rows", at.0),
        ));
    }
    Ok(elt_multiply(along_rows(v, r, c, at), Expr(m)))
}

/// Stan's `diag_post_multiply(m, v)`: `m · diag(v)`, column `j` of `m`
/// scaled by `v[j]`, element-wise (no product). `v` is a column or row
/// vector of `m`'s column count.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// let v = MatrixCl::from_slice(1, 2, &[10.0f64, 100.0])?;
/// assert_eq!(diag_post_multiply(&m, &v)?.eval()?.to_vec()?, vec![10.0, 20.0, 300.0, 400.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn diag_post_multiply<M: IntoOperand, V: IntoOperand>(
    m: M,
    v: V,
) -> Result<Expr<ElewiseMul<M::Operand, AlongCols<V::Operand>>>>
where
    V::Operand: Operation,
    M::Operand: Operation,
{
    let (m, v) = (m.into_operand(), v.into_operand());
    let (r, c) = dims("diag_post_multiply", "m", &m)?;
    let at = layout("diag_post_multiply", "v", &v)?;
    if at.0 != c {
        return Err(invalid(
            "diag_post_multiply",
            "v",
            format!("has {} elements, but m has {c} columns", at.0),
        ));
    }
    Ok(elt_multiply(Expr(m), along_cols(v, r, c, at)))
}

/// Stan's `quad_form_diag(m, v)`: `diag(v) · m · diag(v)`, element
/// `v[i] m[i, j] v[j]` of a square `m`, element-wise (no product).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// let v = MatrixCl::from_slice(2, 1, &[1.0f64, 10.0])?;
/// assert_eq!(quad_form_diag(&m, &v)?.eval()?.to_vec()?, vec![1.0, 20.0, 30.0, 400.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn quad_form_diag<M: IntoOperand, V: IntoOperand + Clone>(
    m: M,
    v: V,
) -> Result<Expr<ElewiseMul<ElewiseMul<AlongRows<V::Operand>, M::Operand>, AlongCols<V::Operand>>>>
where
    V::Operand: Operation,
    M::Operand: Operation,
{
    let v_again = v.clone().into_operand();
    let (m, v) = (m.into_operand(), v.into_operand());
    let (r, c) = dims("quad_form_diag", "m", &m)?;
    if r != c {
        return Err(invalid(
            "quad_form_diag",
            "m",
            format!("must be square, but is {r} x {c}"),
        ));
    }
    let at = layout("quad_form_diag", "v", &v)?;
    if at.0 != r {
        return Err(invalid(
            "quad_form_diag",
            "v",
            format!("has {} elements, but m is {r} x {c}", at.0),
        ));
    }
    let scaled_rows = elt_multiply(along_rows(v_again, r, c, at), Expr(m));
    Ok(elt_multiply(scaled_rows, along_cols(v, r, c, at)))
}

/// Stan's `log_softmax(v)`: `v - log_sum_exp(v)`, over every element of
/// `v` (a vector in Stan; a matrix here is treated as one vector of all
/// its elements). The log-sum-exp is evaluated first, by a kernel of its
/// own. An empty `v` is an error, as in Stan.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(2, 1, &[0.0f64, 0.0])?;
/// let p = log_softmax(&v)?.eval()?.to_vec()?;
/// assert!(p.iter().all(|p| (p + 2f64.ln()).abs() < 1e-12));
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn log_softmax<A: IntoOperand + Clone>(
    v: A,
) -> Result<Expr<Sub<A::Operand, ScalarBroadcast<LogSumExpAll<A::Operand>>>>>
where
    A::Operand: Operation,
{
    let v_again = v.clone().into_operand();
    let v = v.into_operand();
    let (r, c) = dims("log_softmax", "v", &v)?;
    nonempty("log_softmax", &v)?;
    let total = scalar_broadcast(log_sum_exp_all(Expr(v_again)), r, c);
    Ok(Expr(Sub(v, total.0)))
}

/// Stan's two-component `log_mix(theta, lambda1, lambda2)`:
/// `log(θ exp(λ1) + (1 - θ) exp(λ2))`, element-wise, computed as
/// `log_sum_exp(log(θ) + λ1, log1m(θ) + λ2)` (no overflow for large `λ`).
/// Any argument may be a number.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let l1 = MatrixCl::from_slice(2, 1, &[0.0f64, 1000.0])?;
/// let l2 = MatrixCl::from_slice(2, 1, &[0.0f64, 1000.0])?;
/// let lp: Vec<f64> = log_mix(0.25, &l1, &l2).eval()?.to_vec()?;
/// assert!(lp[0].abs() < 1e-15 && (lp[1] - 1000.0).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn log_mix<Th: IntoOperand + Clone, L1: IntoOperand, L2: IntoOperand>(
    theta: Th,
    lambda1: L1,
    lambda2: L2,
) -> Expr<LogSumExp<Add<Log<Th::Operand>, L1::Operand>, Add<Log1m<Th::Operand>, L2::Operand>>> {
    log_sum_exp(log(theta.clone()) + lambda1, log1m(theta) + lambda2)
}

/// Stan's `log_mix(theta, lambda)` of a vector of mixing proportions and a
/// vector of log densities: `log Σ θ[k] exp(λ[k])`, a `1 x 1` expression
/// (named apart from the two-component [`log_mix`], as Rust does not
/// overload).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let theta = MatrixCl::from_slice(2, 1, &[0.25f64, 0.75])?;
/// let lambda = MatrixCl::from_slice(2, 1, &[0.0f64, 0.0])?;
/// let lp = log_mix_vector(&theta, &lambda).eval()?.to_vec()?;
/// assert!(lp[0].abs() < 1e-15);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn log_mix_vector<Th: IntoOperand, L: IntoOperand>(
    theta: Th,
    lambda: L,
) -> Expr<LogSumExpAll<Add<Log<Th::Operand>, L::Operand>>> {
    log_sum_exp_all(log(theta) + lambda)
}

/// Stan's `reverse(v)`: a vector (column or row) in reverse order.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// assert_eq!(reverse(&v)?.eval()?.to_vec()?, vec![3.0, 2.0, 1.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn reverse<A: IntoOperand>(v: A) -> Result<Expr<Reverse<A::Operand>>>
where
    A::Operand: Operation,
{
    let v = v.into_operand();
    vector_length("reverse", "v", &v)?;
    let (r, c) = dims("reverse", "v", &v)?;
    let (last_row, last_col) = (r as i32 - 1, c as i32 - 1);
    Ok(indexing(
        Expr(v),
        last_row - row_index(r, c),
        last_col - col_index(r, c),
    ))
}

/// Stan's `cumulative_sum(v)` of a column vector: element `i` is
/// `Σ v[k]` for `k <= i`. No scan: each element sums its prefix (a row-wise
/// sum over an `n x n` mask, `O(n²)` work in one fused kernel), so it
/// suits vectors of up to some thousands of elements. Its derivative (the
/// reverse cumulative sum of the adjoint) comes from the row-wise sum's and
/// the broadcast's. A row vector is an error: transpose it.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let v = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// assert_eq!(cumulative_sum(&v)?.eval()?.to_vec()?, vec![1.0, 3.0, 6.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn cumulative_sum<T, A>(v: A) -> Result<Expr<CumulativeSum<A::Operand>>>
where
    T: ClType,
    A: IntoOperand,
    A::Operand: Operation<Scalar = T>,
{
    let v = v.into_operand();
    let (n, c) = dims("cumulative_sum", "v", &v)?;
    if c != 1 {
        return Err(invalid(
            "cumulative_sum",
            "v",
            format!("must be a column vector, but is {n} x {c}"),
        ));
    }
    let prefix = le(col_index(n, n), row_index(n, n));
    let terms = Select(
        prefix.0,
        rowwise_broadcast(transpose(Expr(v)), n).0,
        Scalar(T::default()),
    );
    Ok(rowwise_sum(Expr(terms)))
}

/// Stan's `quad_form(a, b)`: `bᵀ · a · b`, by two matrix products (the
/// GEMM leaf). A vector `b` gives a `1 x 1` matrix where Stan returns a
/// real.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 2, &[2.0f64, 0.0, 0.0, 3.0])?;
/// let b = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// assert_eq!(quad_form(&a, &b).eval()?.to_vec()?, vec![14.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn quad_form<A: IntoOperand, B: IntoOperand + Clone>(
    a: A,
    b: B,
) -> Expr<MatrixProduct<Transpose<B::Operand>, MatrixProduct<A::Operand, B::Operand>>> {
    let ab = MatrixProduct::new(a.into_operand(), b.clone().into_operand());
    Expr(MatrixProduct::new(Transpose(b.into_operand()), ab))
}

/// Stan's `crossprod(a)`: `aᵀ · a`, by one matrix product.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[3.0f64, 4.0])?;
/// assert_eq!(crossprod(&a).eval()?.to_vec()?, vec![25.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn crossprod<A: IntoOperand + Clone>(
    a: A,
) -> Expr<MatrixProduct<Transpose<A::Operand>, A::Operand>> {
    Expr(MatrixProduct::new(
        Transpose(a.clone().into_operand()),
        a.into_operand(),
    ))
}

/// Stan's `tcrossprod(a)`: `a · aᵀ`, by one matrix product.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[3.0f64, 4.0])?;
/// assert_eq!(tcrossprod(&a).eval()?.to_vec()?, vec![9.0, 12.0, 12.0, 16.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn tcrossprod<A: IntoOperand + Clone>(
    a: A,
) -> Expr<MatrixProduct<A::Operand, Transpose<A::Operand>>> {
    Expr(MatrixProduct::new(
        a.clone().into_operand(),
        Transpose(a.into_operand()),
    ))
}
