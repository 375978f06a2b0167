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
//!   reads such as transposes, broadcasts and repeated indices).
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

mod dependence;
pub(crate) mod dual;
pub(crate) mod forward;
pub(crate) mod inline;
mod kept;
pub(crate) mod nested;
mod operators;
pub(crate) mod reverse;
mod tape;
pub(crate) mod var;

pub use dependence::{Both, Constant, Dependence, Depends, Variable};
pub use dual::{Dual, Occurrence};
pub use kept::Kept;
pub use nested::{Materialized, leaf, scalar_leaf};
pub use operators::VarScalar;
pub use tape::{clear, set_zero_all_adjoints, steps_recorded};
pub use var::{Differentiable, OwnedVarLoad, Var, VarData, VarLoad};

use crate::generator::Generator;
use clfuse_core::{Error, MatrixCl, Result};

/// The local derivative `template` (operands `{x}`, `{y}`, result `{res}`)
/// as a variable, or the literal `1`.
pub fn local_derivative(
    g: &mut Generator,
    cl_type: &'static str,
    template: &str,
    res: &str,
    operands: &[&str],
) -> String {
    let code = crate::templates::expand(&template.replace("{res}", res), cl_type, operands);
    if code == "1" {
        return code;
    }
    g.declare(cl_type, &code)
}

/// Moves the tangents of `dual`, computed inside a branch, into variables
/// declared at `point` before it (one per variable element, shared by the
/// branches), so that they are visible after the branch. The holders start
/// at 0 (and scattered indices at -1): a branch not taken contributes nothing.
pub fn hoist(
    g: &mut Generator,
    point: &mut crate::generator::InsertionPoint,
    cl_type: &'static str,
    dual: &Dual,
    hoisted: &mut Vec<(Occurrence, String)>,
) {
    for (occurrence, tangent) in &dual.tangents {
        let existing = hoisted
            .iter()
            .find(|(o, _)| o.same_element(occurrence))
            .cloned();
        let (holder, flat) = match existing {
            Some((o, holder)) => (holder, o.flat),
            None => {
                let holder = g.fresh();
                g.insert_statement(point, &format!("{cl_type} {holder} = 0;"));
                let flat = g.fresh();
                g.insert_statement(point, &format!("int {flat} = -1;"));
                let mut moved = occurrence.clone();
                moved.flat = flat.clone();
                hoisted.push((moved, holder.clone()));
                (holder, flat)
            }
        };
        g.statement(&format!("{holder} = {tangent};"));
        g.statement(&format!("{flat} = {};", occurrence.flat));
    }
}

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

/// The value of `f()` (a `1 x 1` result of `inputs`) and its gradient with
/// respect to each input, like JAX's `value_and_grad`: the inputs'
/// adjoints are zeroed, `f` runs, the steps it recorded run in reverse, and
/// those steps are dropped again, so calling this in a loop keeps memory
/// flat. The gradients are copies; the inputs' adjoints hold them too.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 3.0])?);
/// let (value, grads) = rev::value_and_grad(&[&x], || colwise_sum(square(&x)).eval())?;
/// assert_eq!(value, 10.0);
/// assert_eq!(grads[0].to_vec()?, vec![2.0, 6.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn value_and_grad(
    inputs: &[&Var<f64>],
    f: impl FnOnce() -> Result<Var<f64>>,
) -> Result<(f64, Vec<MatrixCl<f64>>)> {
    differentiate("value_and_grad", inputs, f, |result| {
        let grads = inputs
            .iter()
            .map(|input| input.adjoint().try_clone())
            .collect::<Result<Vec<_>>>()?;
        let value = result
            .value()
            .to_vec()?
            .first()
            .copied()
            .unwrap_or(f64::NAN);
        Ok((value, grads))
    })
}

/// [`value_and_grad`] for a sampler: one column of parameters `theta`,
/// whose gradient is written to `gradient`, and the value returned. The
/// value and the gradient come to the host together, in one read of one
/// buffer that one fused kernel fills (`append_row` of the two): a
/// sampler pays one round trip per evaluation.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let theta = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 3.0])?);
/// let mut gradient = [0.0; 2];
/// let value = rev::value_and_grad_to_host(&theta, || colwise_sum(square(&theta)).eval(), &mut gradient)?;
/// assert_eq!((value, gradient), (10.0, [2.0, 6.0]));
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn value_and_grad_to_host(
    theta: &Var<f64>,
    f: impl FnOnce() -> Result<Var<f64>>,
    gradient: &mut [f64],
) -> Result<f64> {
    const F: &str = "value_and_grad_to_host";
    if theta.cols() != 1 || theta.rows() != gradient.len() {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "gradient",
            reason: format!(
                "theta must be a column and gradient as long: theta is {} x {}, gradient has {}",
                theta.rows(),
                theta.cols(),
                gradient.len()
            ),
        });
    }
    differentiate(F, &[theta], f, |result| {
        let both = crate::structural::append_row(result.value(), theta.adjoint());
        let host = crate::driver::eval_direct(both.0)?.to_vec()?;
        let (value, rest) = host.split_first().ok_or_else(|| Error::InvalidArgument {
            function: F,
            argument: "f",
            reason: "returned an empty result".into(),
        })?;
        gradient.copy_from_slice(rest);
        Ok(*value)
    })
}

/// Zeroes the inputs' adjoints, records `f`, runs the reverse pass of the
/// steps it recorded, hands the result to `read`, and drops those steps.
fn differentiate<R>(
    function: &'static str,
    inputs: &[&Var<f64>],
    f: impl FnOnce() -> Result<Var<f64>>,
    read: impl FnOnce(&Var<f64>) -> Result<R>,
) -> Result<R> {
    let mark = tape::mark()?;
    let outcome = (|| {
        for input in inputs {
            input.usable(function)?;
            input.0.clear_adjoint();
        }
        let result = f()?;
        if (result.rows(), result.cols()) != (1, 1) {
            return Err(Error::InvalidArgument {
                function,
                argument: "f",
                reason: format!(
                    "f returned a {} x {} result; a gradient needs a 1 x 1 one",
                    result.rows(),
                    result.cols()
                ),
            });
        }
        result.0.seed()?;
        tape::reverse_range(mark, result.0.step.get())?;
        read(&result)
    })();
    tape::truncate(mark)?;
    outcome
}
