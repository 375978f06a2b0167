//! Steps that are not one element-wise kernel: row-wise sums and
//! matrix-vector products of variables (materialised as their own steps, so
//! that a reduction inside an element-wise expression is computed once, not
//! per element), matrix products, and any hand-written kernel registered
//! with [`leaf`].

use crate::operation::Operation;
use crate::rev::tape::{self, Step};
use crate::rev::var::{Var, VarData};
use crate::rev::{Dependence, Kept};
use clfuse_core::Expr;
use clfuse_core::expr::Load;
use clfuse_core::{ClFloat, ClType, Error, MatrixCl, Result};
use std::any::Any;
use std::cell::OnceCell;
use std::marker::PhantomData;
use std::rc::Rc;

/// The variable a node computed as its own step, or the temporary a
/// constant node was evaluated into (set by `evaluate_leaves`); for a
/// product read inline by a scalar step (see `rev::inline`), its vector
/// operand as a variable.
#[derive(Default)]
pub struct Materialized(OnceCell<Box<dyn Any>>, OnceCell<Box<dyn Any>>);

impl Materialized {
    /// The stored variable, if the node was materialised.
    pub fn get<T: ClType>(&self) -> Option<&Var<T>> {
        self.0.get().and_then(|b| b.downcast_ref::<Var<T>>())
    }

    /// Stores `var` (the first value wins; a node is evaluated once).
    pub fn set<T: ClType>(&self, var: Var<T>) {
        let _ = self.0.set(Box::new(var));
    }

    /// The stored constant, if the node was evaluated into a temporary.
    pub fn matrix<T: ClType>(&self) -> Option<&MatrixCl<T>> {
        self.0.get().and_then(|b| b.downcast_ref::<MatrixCl<T>>())
    }

    /// Takes the stored constant out (for `eval`, which then returns it
    /// instead of copying it).
    pub fn take_matrix<T: ClType>(&mut self) -> Option<MatrixCl<T>> {
        match self.0.take()?.downcast::<MatrixCl<T>>() {
            Ok(m) => Some(*m),
            Err(other) => {
                let _ = self.0.set(other);
                None
            }
        }
    }

    /// Stores a constant temporary (the first value wins).
    pub fn set_matrix<T: ClType>(&self, matrix: MatrixCl<T>) {
        let _ = self.0.set(Box::new(matrix));
    }

    /// The vector operand of a product read inline, if the node is one
    /// (and was not materialised since: that takes precedence).
    pub fn inline_operand<T: ClType>(&self) -> Option<&Var<T>> {
        if self.0.get().is_some() {
            return None;
        }
        self.1.get().and_then(|b| b.downcast_ref::<Var<T>>())
    }

    /// Stores the vector operand of a product read inline (the first value wins).
    pub fn set_inline_operand<T: ClType>(&self, var: Var<T>) {
        let _ = self.1.set(Box::new(var));
    }
}

impl Clone for Materialized {
    /// A copy of an expression is evaluated afresh.
    fn clone(&self) -> Self {
        Materialized::default()
    }
}

impl std::fmt::Debug for Materialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Materialized(set)"
        } else {
            "Materialized(empty)"
        })
    }
}

/// An operand of a step: a variable, or a constant the reverse pass may need.
pub(crate) enum Operand<T: ClType> {
    Variable(Var<T>),
    Constant(Kept<T>),
}

impl<T: ClType> Operand<T> {
    /// Its value; for a constant, an error if it was written since it was kept.
    pub(crate) fn value(&self) -> Result<&MatrixCl<T>> {
        match self {
            Operand::Variable(v) => Ok(v.value()),
            Operand::Constant(kept) => kept.get("grad"),
        }
    }

    fn var(&self) -> Option<&Var<T>> {
        match self {
            Operand::Variable(v) => Some(v),
            Operand::Constant(_) => None,
        }
    }
}

/// Evaluates an operand of a nested step: a variable itself, an expression
/// of variables as its own step, or a constant: a matrix kept as it is (no
/// copy, see [`Kept`]), an expression evaluated into a temporary.
pub(crate) fn operand<O: Operation>(op: &O) -> Result<Operand<O::Scalar>> {
    if let Some(var) = op.variable() {
        return Ok(Operand::Variable(var.clone()));
    }
    if O::Dependence::VARIABLE {
        return Ok(Operand::Variable(crate::rev::Variable::eval(op)?));
    }
    if let Some(matrix) = op.matrix() {
        return Ok(Operand::Constant(Kept::new(matrix)));
    }
    Ok(Operand::Constant(Kept::new(&crate::driver::eval_direct(
        op,
    )?)))
}

/// A step whose reverse pass is a closure of the result's adjoint
/// returning one contribution per parent.
struct LeafStep<T: ClType> {
    result: Rc<VarData<T>>,
    parents: Vec<Var<T>>,
    reverse: Box<dyn Fn(&MatrixCl<T>, &MatrixCl<T>) -> Result<Vec<Option<MatrixCl<T>>>>>,
}

impl<T: ClType> Step for LeafStep<T> {
    fn reverse(&self) -> Result<()> {
        let Some(adjoint) = self.result.nonzero_adjoint() else {
            return Ok(()); // nothing reached the result: nothing to pass on
        };
        let contributions = (self.reverse)(&self.result.value, adjoint)?;
        for (parent, contribution) in self.parents.iter().zip(contributions) {
            if let Some(c) = contribution {
                parent.0.add_to_adjoint(&c)?;
            }
        }
        Ok(())
    }
}

/// Makes a hand-written kernel's result a differentiable variable: `value`
/// was computed from `parents`; in the reverse pass `reverse` receives the
/// result's value and adjoint and returns each parent's contribution
/// (`None` for none), which is added to that parent's adjoint.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?);
/// // y = 3 x, by any kernel at all; its adjoint rule is adj(x) += 3 adj(y).
/// let y = rev::leaf((x.value() * 3.0).eval()?, &[&x], |_y, adj_y| {
///     Ok(vec![Some((adj_y * 3.0).eval()?)])
/// })?;
/// colwise_sum(&y).eval()?.grad()?;
/// assert_eq!(x.adjoint().to_vec()?, vec![3.0, 3.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn leaf<T: ClType>(
    value: MatrixCl<T>,
    parents: &[&Var<T>],
    reverse: impl Fn(&MatrixCl<T>, &MatrixCl<T>) -> Result<Vec<Option<MatrixCl<T>>>> + 'static,
) -> Result<Var<T>> {
    for parent in parents {
        parent.usable("rev::leaf")?;
    }
    let result = Var::computed(value, None);
    result.usable("rev::leaf")?;
    let step = LeafStep {
        result: result.0.clone(),
        parents: parents.iter().map(|p| (*p).clone()).collect(),
        reverse: Box::new(reverse),
    };
    result.0.step.set(Some(tape::push(Box::new(step))?));
    Ok(result)
}

/// Makes a `1 x 1` result whose gradient with respect to each parent is
/// already known (a hand-written likelihood's analytic gradients) a
/// differentiable variable: `gradients[k]` has `parents[k]`'s shape, and the
/// reverse pass is one kernel adding `seed · gradients[k]` into every
/// parent's adjoint (written, not added, where the adjoint is still zero).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?);
/// // f(x) = Σ x², computed any way at all; its gradient is 2x.
/// let value = MatrixCl::from_slice(1, 1, &[5.0f64])?;
/// let gradient = (x.value() * 2.0).eval()?;
/// let f = rev::scalar_leaf(value, &[&x], vec![gradient])?;
/// (f * 3.0).eval()?.grad()?;
/// assert_eq!(x.adjoint().to_vec()?, vec![6.0, 12.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn scalar_leaf<T: ClType>(
    value: MatrixCl<T>,
    parents: &[&Var<T>],
    gradients: Vec<MatrixCl<T>>,
) -> Result<Var<T>> {
    const F: &str = "rev::scalar_leaf";
    if (value.rows(), value.cols()) != (1, 1) {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "value",
            reason: format!("must be 1 x 1, is {} x {}", value.rows(), value.cols()),
        });
    }
    if gradients.len() != parents.len() {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "gradients",
            reason: format!(
                "one per parent: {} parents, {} gradients",
                parents.len(),
                gradients.len()
            ),
        });
    }
    for (k, (parent, gradient)) in parents.iter().zip(&gradients).enumerate() {
        parent.usable(F)?;
        let (want, got) = (
            (parent.rows(), parent.cols()),
            (gradient.rows(), gradient.cols()),
        );
        if want != got {
            return Err(Error::InvalidArgument {
                function: F,
                argument: "gradients",
                reason: format!(
                    "gradient {k} is {} x {}, its parent {} x {}",
                    got.0, got.1, want.0, want.1
                ),
            });
        }
    }
    let result = Var::computed(value, None);
    result.usable(F)?;
    let specs = parents
        .iter()
        .zip(gradients)
        .map(|(parent, gradient)| {
            let var: Rc<dyn crate::rev::Differentiable> = parent.0.clone();
            crate::rev::forward::PartialSpec::summed(var, gradient)
        })
        .collect();
    let step = crate::rev::reverse::ElementwiseStep {
        result: result.0.clone(),
        root: crate::rev::forward::Root::ColwiseSum,
        grid: (1, 1),
        specs,
    };
    result.0.step.set(Some(tape::push(Box::new(step))?));
    Ok(result)
}

/// `rowwise_sum(e)` of an expression of variables: `e` as its own step,
/// then the sums, whose reverse pass broadcasts the adjoint along rows.
pub(crate) fn rowwise_sum<O: Operation>(e: &O) -> Result<Var<O::Scalar>> {
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
pub(crate) fn rowwise_log_sum_exp<O: Operation>(e: &O) -> Result<Var<O::Scalar>> {
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
pub(crate) fn reduce_rows<O: Operation>(name: &str, e: &O) -> Result<Var<O::Scalar>> {
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
fn rowwise_extremum<O: Operation>(e: &O, max: bool) -> Result<Var<O::Scalar>> {
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
fn rowwise_prod<O: Operation>(e: &O) -> Result<Var<O::Scalar>> {
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
    A: Operation,
    B: Operation<Scalar = A::Scalar>,
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
    X: Operation,
    V: Operation<Scalar = X::Scalar>,
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
    X: Operation,
    V: Operation<Scalar = X::Scalar>,
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
    L: Operation,
    R: Operation<Scalar = L::Scalar>,
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

/// The operand of a reduction of variables, as a variable (its own step).
pub(crate) fn variable_operand<O: Operation>(
    e: &O,
    function: &'static str,
) -> Result<Var<O::Scalar>> {
    match operand(e)? {
        Operand::Variable(var) => Ok(var),
        Operand::Constant(_) => Err(internal(function)),
    }
}

fn internal(function: &'static str) -> Error {
    Error::InvalidArgument {
        function,
        argument: "expr",
        reason: "internal: a variable expression evaluated to a constant".into(),
    }
}
