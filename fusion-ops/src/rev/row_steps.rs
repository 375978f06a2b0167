//! Row-wise reductions of variables as steps of their own (so that a
//! reduction inside an element-wise expression is computed once, not per
//! element): the operand recorded, then the reduction, whose reverse pass
//! spreads the adjoint along each row.

use crate::operation::Operation;
use crate::rev::Differentiable;
use crate::rev::leaf::{leaf, variable_operand};
use crate::rev::var::Var;
use clfuse_core::Expr;
use clfuse_core::expr::Load;
use clfuse_core::{ClType, Error, MatrixCl, Result};
use std::marker::PhantomData;

/// `rowwise_sum(e)` of an expression of variables: `e` as its own step,
/// then the sums, whose reverse pass broadcasts the adjoint along rows.
pub(crate) fn rowwise_sum<O: Differentiable>(e: &O) -> Result<Var<O::Scalar>> {
    let inner = variable_operand(e, "rowwise_sum")?;
    let value = crate::driver::eval_direct(crate::reductions::rowwise_sum(inner.value()).0)?;
    let cols = inner.cols();
    leaf(value, &[&inner], move |_, adj| {
        Ok(vec![Some(crate::driver::eval_direct(
            crate::structural::colwise_broadcast(adj, cols).0,
        )?)])
    })
}

/// `rowwise_log_sum_exp(e)` of an expression of variables: `e` as its own
/// step, then the row-wise reduction, whose reverse pass is
/// `adj(e) = adj · exp(e - lse)` (the row's softmax), one fused kernel.
pub(crate) fn rowwise_log_sum_exp<O: Differentiable>(e: &O) -> Result<Var<O::Scalar>> {
    use crate::structural::colwise_broadcast;
    let inner = variable_operand(e, "rowwise_log_sum_exp")?;
    let value =
        crate::driver::eval_direct(crate::reductions::rowwise_log_sum_exp(inner.value()).0)?;
    let cols = inner.cols();
    let x = inner.clone();
    leaf(value, &[&inner], move |lse, adj| {
        // In double whatever the element type (exp needs a real type).
        let softmax = crate::functions::exp(real(x.value()) - colwise_broadcast(real(lse), cols));
        let contribution =
            crate::arithmetic::elt_multiply(colwise_broadcast(real(adj), cols), softmax);
        Ok(vec![Some(as_element::<O::Scalar, _>(contribution.0)?)])
    })
}

/// `m` read as `double` whatever its element type (the reverse formulas
/// below compute in double and cast back).
fn real<T: ClType>(m: &MatrixCl<T>) -> Expr<crate::logic::Cast<f64, Load<'_, T>>> {
    Expr(crate::logic::Cast(
        clfuse_core::IntoOperand::into_operand(m),
        PhantomData,
    ))
}

/// `contribution` (a double expression) evaluated as a `T` matrix.
fn as_element<T: ClType, O: Operation>(contribution: O) -> Result<MatrixCl<T>> {
    crate::driver::eval_direct(crate::logic::Cast::<T, _>(contribution, PhantomData))
}

/// The row-wise reduction `name` (`sum`, `log_sum_exp`, `max`, `min`,
/// `prod`) of an expression of variables, as its own step; the column-wise
/// ones of variables come here through transposes.
pub(crate) fn reduce_rows<O: Differentiable>(name: &str, e: &O) -> Result<Var<O::Scalar>> {
    match name {
        "sum" => rowwise_sum(e),
        "log_sum_exp" => rowwise_log_sum_exp(e),
        "max" | "min" => rowwise_extremum(e, name == "max"),
        "prod" => rowwise_prod(e),
        _ => Err(Error::InvalidArgument {
            function: "eval",
            argument: "expr",
            reason: format!("the reduction `{name}` has no derivative"),
        }),
    }
}

/// `rowwise_max(e)` or `rowwise_min(e)` of an expression of variables: `e`
/// as its own step, then the reduction. The reverse pass gives each row's
/// adjoint to the elements equal to the row's extremum, shared equally
/// among ties (a subgradient; JAX's convention): one kernel counts the
/// ties, one adds the shares.
fn rowwise_extremum<O: Differentiable>(e: &O, max: bool) -> Result<Var<O::Scalar>> {
    use crate::logic::eq;
    use crate::reductions::{rowwise_max, rowwise_min};
    use crate::structural::colwise_broadcast;
    let inner = variable_operand(e, if max { "rowwise_max" } else { "rowwise_min" })?;
    let value = if max {
        crate::driver::eval_direct(rowwise_max(inner.value()).0)?
    } else {
        crate::driver::eval_direct(rowwise_min(inner.value()).0)?
    };
    let cols = inner.cols();
    let x = inner.clone();
    leaf(value, &[&inner], move |extremum, adj| {
        let hit = || eq(real(x.value()), colwise_broadcast(real(extremum), cols));
        let ties = crate::driver::eval_direct(crate::reductions::rowwise_sum(hit()).0)?;
        let share = crate::arithmetic::elt_divide(real(adj), &ties);
        let contribution = crate::logic::select(hit(), colwise_broadcast(share, cols), 0.0);
        Ok(vec![Some(as_element::<O::Scalar, _>(contribution.0)?)])
    })
}

/// `rowwise_prod(e)` of an expression of variables: `e` as its own step,
/// then the products. Reverse: `adj(x_ij) = adj_i · Π_{k≠j} x_ik`, which is
/// `p_i / x_ij` in a row without zeros, the product of the other elements
/// at a row's only zero, and 0 elsewhere in a row with a zero (one kernel
/// counts the zeros and multiplies the non-zero elements, one adds).
fn rowwise_prod<O: Differentiable>(e: &O) -> Result<Var<O::Scalar>> {
    use crate::logic::{and, eq, ne, select};
    use crate::reductions::rowwise_prod;
    use crate::structural::colwise_broadcast;
    let inner = variable_operand(e, "rowwise_prod")?;
    let value = crate::driver::eval_direct(rowwise_prod(inner.value()).0)?;
    let (rows, cols) = (inner.rows(), inner.cols());
    let x = inner.clone();
    leaf(value, &[&inner], move |product, adj| {
        let zeros = MatrixCl::<i32>::uninitialized(rows, 1)?;
        let others = MatrixCl::<f64>::uninitialized(rows, 1)?;
        crate::driver::fuse((
            crate::outputs::output(
                &zeros,
                crate::reductions::rowwise_sum(eq(real(x.value()), 0.0)),
            ),
            crate::outputs::output(
                &others,
                rowwise_prod(select(ne(real(x.value()), 0.0), real(x.value()), 1.0)),
            ),
        ))?;
        let zeros_here = || colwise_broadcast(&zeros, cols);
        let without_zeros =
            crate::arithmetic::elt_divide(colwise_broadcast(real(product), cols), real(x.value()));
        let only_zero = and(eq(real(x.value()), 0.0), eq(zeros_here(), 1));
        let partial = select(
            eq(zeros_here(), 0),
            without_zeros,
            select(only_zero, colwise_broadcast(&others, cols), 0.0),
        );
        let contribution =
            crate::arithmetic::elt_multiply(colwise_broadcast(real(adj), cols), partial);
        Ok(vec![Some(as_element::<O::Scalar, _>(contribution.0)?)])
    })
}
