//! Products with a variable on either side as steps of their own: `a · b`
//! (GEMM), `x · v` and `xᵀ · v`, each operand's adjoint by one kernel.

use crate::rev::Differentiable;
use crate::rev::leaf::{leaf, operand};
use crate::rev::var::Var;
use clfuse_core::{ClFloat, MatrixCl, Result};

/// A product's contribution to one operand: `(a, b, adj) -> adj(operand)`.
type ProductAdjoint<T> = fn(&MatrixCl<T>, &MatrixCl<T>, &MatrixCl<T>) -> Result<MatrixCl<T>>;

/// A two-operand product with a variable on either side, as its own step:
/// the operands evaluated (a variable kept, an expression of variables
/// recorded, a constant kept without a copy), `forward` of their values, and in the
/// reverse pass each variable operand's adjoint from `adjoints`.
fn product_step<A, B>(
    a: &A,
    b: &B,
    forward: impl FnOnce(&MatrixCl<A::Scalar>, &MatrixCl<A::Scalar>) -> Result<MatrixCl<A::Scalar>>,
    adjoints: [ProductAdjoint<A::Scalar>; 2],
) -> Result<Var<A::Scalar>>
where
    A: Differentiable,
    B: Differentiable<Scalar = A::Scalar>,
{
    let (a, b) = (operand(a)?, operand(b)?);
    let value = forward(a.value()?, b.value()?)?;
    let parents: Vec<Var<A::Scalar>> = [a.var(), b.var()].into_iter().flatten().cloned().collect();
    let is_var = [a.var().is_some(), b.var().is_some()];
    let reverse = move |_: &MatrixCl<A::Scalar>, adj: &MatrixCl<A::Scalar>| {
        is_var
            .iter()
            .zip(adjoints)
            .filter(|(v, _)| **v)
            .map(|(_, adjoint)| adjoint(a.value()?, b.value()?, adj).map(Some))
            .collect()
    };
    let parents: Vec<&Var<A::Scalar>> = parents.iter().collect();
    leaf(value, &parents, reverse)
}

/// `x · v` with a variable on either side, as its own step.
pub(crate) fn matrix_vector_multiply<X, V>(x: &X, v: &V) -> Result<Var<X::Scalar>>
where
    X: Differentiable,
    V: Differentiable<Scalar = X::Scalar>,
{
    use crate::structural::{colwise_broadcast, rowwise_broadcast, transpose};
    product_step(
        x,
        v,
        |x, v| crate::driver::eval_direct(crate::reductions::matrix_vector_multiply(x, v).0),
        [
            // adj(x) = adj · vᵀ, one element-wise kernel.
            |_, v, adj| {
                let outer = crate::arithmetic::elt_multiply(
                    colwise_broadcast(adj, v.rows()),
                    rowwise_broadcast(transpose(v), adj.rows()),
                );
                crate::driver::eval_direct(outer.0)
            },
            // adj(v) = xᵀ · adj, one fused row-block kernel.
            |x, _, adj| {
                crate::transpose_product::eval_direct(
                    crate::transpose_product::transpose_vector_multiply(x, adj).0,
                )
            },
        ],
    )
}

/// `xᵀ · v` with a variable on either side, as its own step.
pub(crate) fn transpose_vector_multiply<X, V>(x: &X, v: &V) -> Result<Var<X::Scalar>>
where
    X: Differentiable,
    V: Differentiable<Scalar = X::Scalar>,
{
    use crate::structural::{colwise_broadcast, rowwise_broadcast, transpose};
    product_step(
        x,
        v,
        |x, v| {
            crate::transpose_product::eval_direct(
                crate::transpose_product::transpose_vector_multiply(x, v).0,
            )
        },
        [
            // adj(x) = v · adjᵀ, one element-wise kernel.
            |_, v, adj| {
                let outer = crate::arithmetic::elt_multiply(
                    colwise_broadcast(v, adj.rows()),
                    rowwise_broadcast(transpose(adj), v.rows()),
                );
                crate::driver::eval_direct(outer.0)
            },
            // adj(v) = x · adj, one fused row-wise reduction.
            |x, _, adj| {
                crate::driver::eval_direct(crate::reductions::matrix_vector_multiply(x, adj).0)
            },
        ],
    )
}

/// `a · b` (GEMM) with a variable on either side, as its own step.
pub(crate) fn multiply<L, R>(a: &L, b: &R) -> Result<Var<L::Scalar>>
where
    L: Differentiable,
    R: Differentiable<Scalar = L::Scalar>,
    L::Scalar: ClFloat,
{
    use clfuse_kernels::{Op, multiply_transposed};
    product_step(
        a,
        b,
        clfuse_kernels::multiply,
        [
            // adj(a) = adj · bᵀ, adj(b) = aᵀ · adj (transposes read in place).
            |_, b, adj| multiply_transposed(adj, Op::N, b, Op::T),
            |a, _, adj| multiply_transposed(a, Op::T, adj, Op::N),
        ],
    )
}
