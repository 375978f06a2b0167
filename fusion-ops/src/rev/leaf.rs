//! Steps whose forward pass is any computation and whose reverse pass is a
//! closure of the result's adjoint ([`leaf`], [`scalar_leaf`]: hand-written
//! kernels as differentiable leaves), and the operands of such steps.

use crate::rev::tape::{self, Step};
use crate::rev::var::{Var, VarData};
use crate::rev::{Dependence, Differentiable, Kept};
use clfuse_core::{ClType, Error, MatrixCl, Result};
use std::rc::Rc;

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

    pub(crate) fn var(&self) -> Option<&Var<T>> {
        match self {
            Operand::Variable(v) => Some(v),
            Operand::Constant(_) => None,
        }
    }
}

/// Evaluates an operand of a nested step: a variable itself, an expression
/// of variables as its own step, or a constant: a matrix kept as it is (no
/// copy, see [`Kept`]), an expression evaluated into a temporary.
pub(crate) fn operand<O: Differentiable>(op: &O) -> Result<Operand<O::Scalar>> {
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
        let Some(adjoint) = self.result.nonzero_adjoint()? else {
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
            let var: Rc<dyn crate::rev::VarHandle> = parent.0.clone();
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

/// The operand of a reduction of variables, as a variable (its own step).
pub(crate) fn variable_operand<O: Differentiable>(
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
