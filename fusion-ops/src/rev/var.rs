//! Variables: a device value and a device adjoint of the same shape.

use crate::assign::AssignExt;
use crate::rev::handle::VarHandle;
use crate::rev::tape;
use clfuse_core::{Access, ClType, Error, KernelArg, MatrixCl, Result};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The shared state of a [`Var`].
pub struct VarData<T: ClType> {
    pub(crate) value: MatrixCl<T>,
    adjoint: MatrixCl<T>,
    /// Whether the adjoint's buffer holds its values. Until something is
    /// added, the adjoint is zero and its buffer unwritten: the first
    /// reverse kernel that covers every element writes it instead of
    /// adding (no fill, no read), and a step whose result's adjoint is
    /// still zero contributes nothing and is skipped.
    written: Cell<bool>,
    /// Why the adjoint could not be allocated or zeroed, reported by the
    /// first fallible call that uses the variable.
    failure: RefCell<Option<String>>,
    /// The tape step that computed the value (none for an independent variable).
    pub(crate) step: Cell<Option<tape::StepId>>,
}

/// A differentiable matrix: a device value and a device adjoint of the same
/// shape. Cloning a `Var` clones a handle (both refer to one variable).
///
/// A `Var` belongs to the thread that made it (the tape is thread-local).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::Var;
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?);
/// let total = colwise_sum(elt_multiply(&x, &x)).eval()?; // a 1 x 1 Var
/// total.grad()?;
/// assert_eq!(total.value().to_vec()?, vec![5.0]);
/// assert_eq!(x.adjoint().to_vec()?, vec![2.0, 4.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub struct Var<T: ClType = f64>(pub(crate) Rc<VarData<T>>);

impl<T: ClType> Clone for Var<T> {
    fn clone(&self) -> Self {
        Var(Rc::clone(&self.0))
    }
}

impl<T: ClType> std::fmt::Debug for Var<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Var")
            .field("type", &T::CL_NAME)
            .field("rows", &self.0.value.rows())
            .field("cols", &self.0.value.cols())
            .finish()
    }
}

impl<T: ClType> Var<T> {
    /// An independent variable with value `value` and a zero adjoint.
    ///
    /// If the adjoint cannot be allocated, the variable reports that error
    /// from the first fallible call using it (`eval`, `grad`) and its
    /// [`adjoint`](Self::adjoint) is empty.
    pub fn new(value: MatrixCl<T>) -> Self {
        Self::computed(value, None)
    }

    pub(crate) fn computed(value: MatrixCl<T>, step: Option<tape::StepId>) -> Self {
        let (adjoint, failure) = match MatrixCl::uninitialized(value.rows(), value.cols()) {
            Ok(adjoint) => (adjoint, None),
            Err(e) => (MatrixCl::empty(), Some(e.to_string())),
        };
        let var = Var(Rc::new(VarData {
            value,
            adjoint,
            written: Cell::new(false),
            failure: RefCell::new(failure),
            step: Cell::new(step),
        }));
        tape::register(Rc::downgrade(&var.0) as std::rc::Weak<dyn VarHandle>);
        var
    }

    /// The value.
    pub fn value(&self) -> &MatrixCl<T> {
        &self.0.value
    }

    /// The adjoint: after [`grad`](Self::grad) of a result, the derivative
    /// of that result with respect to this variable.
    pub fn adjoint(&self) -> &MatrixCl<T> {
        // A zero adjoint is filled when it is first looked at. Should the
        // fill fail (a lost device), the variable reports it from its next
        // fallible call.
        if let Err(e) = self.0.settled_adjoint() {
            *self.0.failure.borrow_mut() = Some(e.to_string());
        }
        &self.0.adjoint
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.0.value.rows()
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.0.value.cols()
    }

    /// Runs the reverse pass from this `1 x 1` result: its adjoint becomes 1
    /// (added, as every adjoint is) and each recorded step that led to it,
    /// newest first, adds its operands' adjoints with one kernel.
    pub fn grad(&self) -> Result<()> {
        if (self.rows(), self.cols()) != (1, 1) {
            return Err(Error::InvalidArgument {
                function: "Var::grad",
                argument: "self",
                reason: format!(
                    "the result is {} x {}; only a 1 x 1 result has a gradient",
                    self.rows(),
                    self.cols()
                ),
            });
        }
        self.usable("Var::grad")?;
        self.0.seed()?;
        tape::reverse_range(0, self.0.step.get())
    }

    /// Whether two handles refer to the same variable.
    pub fn same(&self, other: &Var<T>) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn usable(&self, function: &'static str) -> Result<()> {
        match &*self.0.failure.borrow() {
            None => Ok(()),
            Some(reason) => Err(Error::InvalidArgument {
                function,
                argument: "var",
                reason: format!("its adjoint could not be allocated: {reason}"),
            }),
        }
    }
}

impl<T: ClType> VarData<T> {
    /// The adjoint as a reverse step reads it, or `None` while it is zero
    /// (the step then has nothing to pass on).
    pub(crate) fn nonzero_adjoint(&self) -> Option<&MatrixCl<T>> {
        self.written.get().then_some(&self.adjoint)
    }

    /// The adjoint with its buffer written (zeros filled in if nothing was
    /// added yet).
    pub(crate) fn settled_adjoint(&self) -> Result<&MatrixCl<T>> {
        if !self.written.get() {
            self.adjoint.fill(T::default())?;
            self.written.set(true);
        }
        Ok(&self.adjoint)
    }

    /// Sets the adjoint to zero without device work (marks it unwritten).
    pub(crate) fn clear_adjoint(&self) {
        self.written.set(false);
    }

    /// Sets the adjoint to one: the seed of a reverse pass.
    pub(crate) fn seed(&self) -> Result<()> {
        self.adjoint.fill(T::one())?;
        self.written.set(true);
        Ok(())
    }

    /// Adds `contribution` (same shape) into the adjoint with one fused
    /// kernel; into a zero adjoint, the contribution is assigned.
    pub(crate) fn add_to_adjoint(&self, contribution: &MatrixCl<T>) -> Result<()> {
        if self.written.get() {
            self.adjoint.add_assign(contribution)
        } else {
            self.adjoint.assign(contribution)?;
            self.written.set(true);
            Ok(())
        }
    }
}

impl<T: ClType> VarHandle for VarData<T> {
    fn value_id(&self) -> u64 {
        self.value.buffer_id()
    }
    fn shape(&self) -> (usize, usize) {
        (self.value.rows(), self.value.cols())
    }
    fn cl_type(&self) -> &'static str {
        T::CL_NAME
    }
    fn adjoint_arg(&self, covers_all: bool) -> Result<(KernelArg<'_>, bool)> {
        let overwrite = covers_all && !self.written.get();
        if overwrite {
            self.written.set(true);
        } else {
            self.settled_adjoint()?;
        }
        Ok((
            KernelArg::buffer(&self.adjoint, Access::ReadWrite),
            overwrite,
        ))
    }
    fn zero_adjoint(&self) -> Result<()> {
        self.clear_adjoint();
        Ok(())
    }
    fn usable(&self, function: &'static str) -> Result<()> {
        match &*self.failure.borrow() {
            None => Ok(()),
            Some(reason) => Err(Error::InvalidArgument {
                function,
                argument: "var",
                reason: format!("its adjoint could not be allocated: {reason}"),
            }),
        }
    }
}
