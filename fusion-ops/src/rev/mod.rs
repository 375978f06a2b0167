//! Reverse-mode automatic differentiation of fused expressions.
//!
//! A [`Var`] is a device value with a device adjoint. Any expression that
//! reads a `Var` (`&var` works wherever `&MatrixCl` does) evaluates with
//! `.eval()` to a new `Var`, and doing so records one *step* on a
//! thread-local tape:
//!
//! - **forward**: one fused kernel computes the value and, at every element,
//!   the local partial derivatives with respect to the variable elements it
//!   read (each operation declares its derivative next to its code, e.g.
//!   `d/dx = "{res}"` for `exp`); the partials are stored;
//! - **reverse**: [`Var::grad`] on a `1 x 1` result walks the steps newest
//!   first; each step's adjoint is ONE kernel adding `seed * partial` into
//!   every operand's adjoint (plain `+=` where each element has one writer,
//!   a work-group sum for `1 x 1` variables, atomic adds for scattered
//!   reads such as transposes, broadcasts and repeated indices). On a GPU,
//!   consecutive steps whose kernels fit one work-group (a model's `1 x 1`
//!   sums, scalar priors, parameter blocks, forward or reverse) run as one
//!   launch, their kernels called in order with a barrier between them
//!   ([`clfuse_core::set_launch_sweeps`]).
//!
//! A step whose result is `1 x 1` (a log-likelihood) reads a row-wise
//! product `x · β` of a constant matrix inline and sums `xᵀ·∂lp/∂(xβ)` in
//! its forward kernel, reading `x` once; its reverse kernel only scales
//! such sums by the seed (`inline.rs`).
//!
//! Constants (matrices, scalars) take no adjoint. An element-wise step
//! does not keep them: its stored partials are all its reverse pass needs.
//! A product that is a step of its own keeps its constant operand without
//! copying it ([`Kept`]); writing that matrix before the reverse pass makes
//! `grad` return an error.
//!
//! The tape belongs to the thread; [`clear`] drops it (and the temporaries
//! only it holds) and [`set_zero_all_adjoints`] resets every live variable,
//! so a sampler can evaluate gradients millions of times with flat memory.
//! [`value_and_grad`] does all of it for one evaluation.
//!
//! ```
//! use clfuse_ops::prelude::*;
//! use clfuse_ops::rev::Var;
//! let x = Var::new(MatrixCl::from_slice(3, 1, &[0.5f64, -1.0, 2.0])?);
//! let w = Var::new(MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, -0.5])?);
//! let lp = colwise_sum(log1p_exp(elt_multiply(&x, &w)) + elt_multiply(&x, &x)).eval()?;
//! lp.grad()?;
//! let gx = x.adjoint().to_vec()?;
//! // d/dx [log1p_exp(x w) + x²] = inv_logit(x w) w + 2x
//! let expected = 1.0 / (1.0 + (-0.5f64).exp()) * 1.0 + 1.0;
//! assert!((gx[0] - expected).abs() < 1e-12);
//! # Ok::<(), clfuse_ops::Error>(())
//! ```

pub(crate) mod boxed;
mod chain;
pub(crate) mod custom;
mod dependence;
mod derivatives;
mod differentiable;
pub(crate) mod dual;
mod eval;
pub(crate) mod forward;
mod gradient;
mod handle;
pub(crate) mod inline;
mod kept;
pub(crate) mod leaf;
mod operators;
pub(crate) mod product_steps;
mod replay;
pub(crate) mod reverse;
pub(crate) mod row_steps;
mod sweep;
mod tape;
pub(crate) mod var;
pub(crate) mod var_load;

pub use chain::{hoist, local_derivative};
pub use dependence::{Both, Constant, Dependence, Depends, ExprDependence, Variable};
pub use differentiable::Differentiable;
pub use dual::{Dual, Occurrence};
pub use eval::{Eval, ReductionMethods, eval_colwise_sum_with};
pub use gradient::{
    batch_value_and_grad_to_host, value_and_grad, value_and_grad_in_adjoints,
    value_and_grad_to_host,
};
pub use handle::VarHandle;
pub use inline::ProductReads;
pub use kept::Kept;
pub use leaf::{leaf, scalar_leaf};
pub use operators::VarScalar;
pub use replay::{Replay, StartedCall};
pub use tape::{clear, set_zero_all_adjoints, steps_recorded};
pub use var::{Var, VarData};
pub use var_load::{OwnedVarLoad, VarLoad};

use clfuse_core::Error;

/// The error for recording an operation that has no derivative.
pub fn not_differentiable<O: ?Sized>() -> Error {
    let full = std::any::type_name::<O>();
    let name = full.split('<').next().unwrap_or(full);
    let name = name.rsplit("::").next().unwrap_or(name);
    Error::InvalidArgument {
        function: "eval",
        argument: "expr",
        reason: format!("`{name}` has no derivative, so an expression of variables cannot use it"),
    }
}
