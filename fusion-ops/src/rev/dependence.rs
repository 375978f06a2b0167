//! Whether an expression's value depends on a variable, in its type.
//!
//! Every operation names its [`Dependence`]: [`Constant`] for leaves and
//! anything computed from constants only, [`Variable`] once a [`Var`] is
//! below it. `eval()` returns a `MatrixCl` for the first and a `Var` (with a
//! recorded reverse step) for the second; see [`crate::rev`].

use crate::outputs::OutputList;
use crate::reductions::{ColwiseReduction, ReduceOp, SumOp};
use crate::rev::Var;
use crate::rev::{Differentiable, ProductReads};
use crate::transpose_product::TransposeVectorMultiply;
use clfuse_core::{ClType, MatrixCl, Result};

/// What an expression node's value depends on. Kept apart from
/// [`Operation`](crate::Operation) and implemented without bounds on element types, so that
/// `eval()`'s result type is known even before a literal's float type is.
pub trait Depends {
    /// [`Constant`] or [`Variable`].
    type Dependence: Dependence;
}

/// Constant or variable; see the module docs.
pub trait Dependence: 'static {
    /// Whether a variable is below.
    const VARIABLE: bool;
    /// The dependence of a value computed from this one and a `B` one.
    type Or<B: Dependence>: Dependence;
    /// What `eval()` returns for element type `T`.
    type Evaluated<T: ClType>;
    /// Evaluates an element-wise expression.
    fn eval<O: Differentiable>(op: O) -> Result<Self::Evaluated<O::Scalar>>;
    /// Evaluates a column-wise reduction (only sums have a derivative).
    fn eval_colwise<R: ReduceOp, E: Differentiable>(
        r: ColwiseReduction<R, E>,
    ) -> Result<Self::Evaluated<E::Scalar>>;
    /// Evaluates `xᵀ·v`.
    fn eval_transpose_vector<X: Differentiable, V: Differentiable>(
        t: TransposeVectorMultiply<X, V>,
    ) -> Result<Self::Evaluated<X::Scalar>>;
    /// Evaluates the column sums of `e` by a kernel that also computes
    /// `also`; when `also` fails (a check), nothing is recorded.
    fn eval_colwise_sum_with<E: Differentiable, L: OutputList>(
        e: E,
        also: &L,
    ) -> Result<Self::Evaluated<E::Scalar>>;
}

/// No variable below: evaluates to a `MatrixCl`.
#[derive(Debug, Clone, Copy)]
pub struct Constant;

/// A variable below: evaluates to a [`Var`] and records a reverse step.
#[derive(Debug, Clone, Copy)]
pub struct Variable;

impl Dependence for Constant {
    const VARIABLE: bool = false;
    type Or<B: Dependence> = B;
    type Evaluated<T: ClType> = MatrixCl<T>;
    fn eval<O: Differentiable>(op: O) -> Result<MatrixCl<O::Scalar>> {
        crate::evaluate::eval_operation(op)
    }
    fn eval_colwise<R: ReduceOp, E: Differentiable>(
        r: ColwiseReduction<R, E>,
    ) -> Result<MatrixCl<E::Scalar>> {
        crate::evaluate::eval_colwise(r)
    }
    fn eval_transpose_vector<X: Differentiable, V: Differentiable>(
        t: TransposeVectorMultiply<X, V>,
    ) -> Result<MatrixCl<X::Scalar>> {
        crate::transpose_product::eval_direct(t)
    }
    fn eval_colwise_sum_with<E: Differentiable, L: OutputList>(
        e: E,
        also: &L,
    ) -> Result<MatrixCl<E::Scalar>> {
        crate::evaluate::eval_colwise_sum_with(e, also)
    }
}

impl Dependence for Variable {
    const VARIABLE: bool = true;
    type Or<B: Dependence> = Variable;
    type Evaluated<T: ClType> = Var<T>;
    fn eval<O: Differentiable>(op: O) -> Result<Var<O::Scalar>> {
        // A node recorded as a step of its own just now (a product, a
        // row-wise reduction) is the result: no copy of it is recorded.
        let mark = crate::rev::tape::mark()?;
        op.record_leaves(ProductReads::Apart)?;
        if let Some(var) = op.variable()
            && var.0.step.get().is_some_and(|step| step > mark)
        {
            return Ok(var.clone());
        }
        crate::rev::forward::record(op, crate::rev::forward::Root::Elementwise)
    }
    fn eval_colwise<R: ReduceOp, E: Differentiable>(
        r: ColwiseReduction<R, E>,
    ) -> Result<Var<E::Scalar>> {
        if std::any::TypeId::of::<R>() == std::any::TypeId::of::<SumOp>() {
            return crate::rev::forward::record(r.0, crate::rev::forward::Root::ColwiseSum);
        }
        // The other column-wise reductions: the row-wise ones of the
        // transpose, transposed back (three steps, each differentiable).
        let transposed = crate::rev::forward::record(
            crate::structural::Transpose(&r.0),
            crate::rev::forward::Root::Elementwise,
        )?;
        let reduced = crate::rev::row_steps::reduce_rows(
            R::NAME,
            &clfuse_core::IntoOperand::into_operand(&transposed),
        )?;
        crate::rev::forward::record(
            crate::structural::transpose(&reduced).0,
            crate::rev::forward::Root::Elementwise,
        )
    }
    fn eval_transpose_vector<X: Differentiable, V: Differentiable>(
        t: TransposeVectorMultiply<X, V>,
    ) -> Result<Var<X::Scalar>> {
        let v = crate::logic::Cast::<X::Scalar, &V>(&t.1, std::marker::PhantomData);
        crate::rev::product_steps::transpose_vector_multiply(&t.0, &v)
    }
    fn eval_colwise_sum_with<E: Differentiable, L: OutputList>(
        e: E,
        also: &L,
    ) -> Result<Var<E::Scalar>> {
        // Steps nested below (products read apart, row-wise reductions)
        // are recorded before the kernel: a failure of `also` drops them.
        let mark = crate::rev::tape::mark()?;
        let recorded =
            crate::rev::forward::record_with(e, crate::rev::forward::Root::ColwiseSum, also);
        if recorded.is_err() {
            crate::rev::tape::truncate(mark)?;
        }
        recorded
    }
}

/// The dependence of a two-operand operation: variable if either operand is.
pub type Both<A, B> = <A as Dependence>::Or<B>;

/// The dependence of a generic helper's expression (`Constant` or
/// `Variable`): one that a constant operand leaves as it is, so that
/// `(e - mu) / s` and `square(e) + e` have the dependence of `e` (see
/// [`crate::Expression`]).
pub trait ExprDependence: Sized + Dependence<Or<Constant> = Self, Or<Self> = Self> {}
impl ExprDependence for Constant {}
impl ExprDependence for Variable {}
