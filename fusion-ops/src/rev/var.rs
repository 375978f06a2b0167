//! Variables: a device value and a device adjoint of the same shape.

use crate::assign::AssignExt;
use crate::rev::handle::VarHandle;
use crate::rev::tape;
use clfuse_core::{Access, ClType, Error, KernelArg, MatrixCl, Result};
use std::any::Any;
use std::cell::{Cell, OnceCell, RefCell};
use std::rc::{Rc, Weak};

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
    /// The adjoint is a reverse pass's seed, one everywhere, not filled
    /// into the buffer yet: filled when a kernel or the host first reads
    /// the adjoint, never when no step needs it.
    pending_seed: Cell<bool>,
    /// The step whose partial the adjoint's buffer holds while the adjoint
    /// is zero ([`LentAdjoint`]); dead when none.
    lent: RefCell<Weak<LentAdjoint<T>>>,
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
            pending_seed: Cell::new(false),
            lent: RefCell::new(Weak::new()),
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
        self.reverse_pass("Var::grad", false)
    }

    /// Seeds this `1 x 1` result and runs the steps that led to it, newest
    /// first; `last` when they are dropped right after.
    fn reverse_pass(&self, function: &'static str, last: bool) -> Result<()> {
        if (self.rows(), self.cols()) != (1, 1) {
            return Err(Error::InvalidArgument {
                function,
                argument: "self",
                reason: format!(
                    "the result is {} x {}; only a 1 x 1 result has a gradient",
                    self.rows(),
                    self.cols()
                ),
            });
        }
        self.usable(function)?;
        self.0.seed()?;
        tape::reverse_range(0, self.0.step.get(), last)
    }

    /// [`grad`](Self::grad), then [`rev::clear`](crate::rev::clear): the
    /// reverse pass of a tape that is not needed again, as a sampler's
    /// evaluation is. Knowing that, a step whose `1 x 1` result summed a
    /// variable's partials straight into that variable's (zero) adjoint
    /// leaves them there: its reverse pass moves nothing when its seed is
    /// one. The tape is cleared whether or not the pass succeeds.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::rev::{self, Var};
    /// let mu = Var::new(MatrixCl::from_slice(3, 1, &[0.5f64, -1.0, 2.0])?);
    /// let lp = colwise_sum(-0.5f64 * square(&mu)).eval()?;
    /// lp.grad_and_clear()?;
    /// assert_eq!(mu.adjoint().to_vec()?, vec![-0.5, 1.0, -2.0]);
    /// assert_eq!(rev::steps_recorded(), 0);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    pub fn grad_and_clear(&self) -> Result<()> {
        let outcome = self.reverse_pass("Var::grad_and_clear", true);
        tape::clear()?;
        outcome
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

/// A variable's adjoint buffer, lent while the adjoint is zero to a step
/// with a `1 x 1` result that reads the variable at each element of its
/// grid (a density's vector location or scale): that step's forward kernel
/// stores the variable's partial there. Seeded with one, that partial *is*
/// the variable's adjoint from the step, so a reverse pass that will not
/// run again ([`Var::grad_and_clear`], `value_and_grad`) leaves it in place
/// and moves nothing. Anything else that needs the adjoint first (another
/// step adding to it, a read, a zeroing) copies the partial out (`moved`)
/// and takes the buffer back.
pub(crate) struct LentAdjoint<T: ClType> {
    /// The adjoint's buffer (shared): the forward kernel's store target.
    pub(crate) buffer: MatrixCl<T>,
    /// The partial, copied out when the variable took its buffer back.
    moved: OnceCell<MatrixCl<T>>,
    /// Left in place by a reverse pass that will not run again.
    consumed: Cell<bool>,
}

/// Where a lent partial is now, as a reverse pass finds it.
pub(crate) enum LentPartial<'a, T: ClType> {
    /// Still in the variable's adjoint buffer.
    InAdjoint,
    /// Copied out to this buffer.
    Moved(&'a MatrixCl<T>),
    /// Used up by a reverse pass that was not to run again.
    Consumed,
}

impl<T: ClType> LentAdjoint<T> {
    pub(crate) fn state(&self) -> LentPartial<'_, T> {
        match (self.moved.get(), self.consumed.get()) {
            (Some(moved), _) => LentPartial::Moved(moved),
            (None, true) => LentPartial::Consumed,
            (None, false) => LentPartial::InAdjoint,
        }
    }

    /// Copies the partial out of the adjoint buffer (once).
    fn move_out(&self) -> Result<()> {
        if self.moved.get().is_none() && !self.consumed.get() {
            let copy = self.buffer.try_clone()?;
            let _ = self.moved.set(copy);
        }
        Ok(())
    }
}

impl<T: ClType> VarData<T> {
    /// The adjoint as a reverse step reads it, or `None` while it is zero
    /// (the step then has nothing to pass on).
    pub(crate) fn nonzero_adjoint(&self) -> Result<Option<&MatrixCl<T>>> {
        self.reclaim()?;
        if !self.written.get() {
            return Ok(None);
        }
        self.fill_seed()?;
        Ok(Some(&self.adjoint))
    }

    /// Whether the adjoint may be nonzero, without device work.
    pub(crate) fn maybe_nonzero(&self) -> bool {
        self.written.get()
    }

    /// Fills a seed set by [`seed`](Self::seed) into the buffer.
    fn fill_seed(&self) -> Result<()> {
        if self.pending_seed.get() {
            self.adjoint.fill(T::one())?;
            self.pending_seed.set(false);
        }
        Ok(())
    }

    /// The adjoint with its buffer written (zeros filled in if nothing was
    /// added yet).
    pub(crate) fn settled_adjoint(&self) -> Result<&MatrixCl<T>> {
        self.reclaim()?;
        self.fill_seed()?;
        if !self.written.get() {
            self.adjoint.fill(T::default())?;
            self.written.set(true);
        }
        Ok(&self.adjoint)
    }

    /// Sets the adjoint to zero without device work (marks it unwritten).
    pub(crate) fn clear_adjoint(&self) -> Result<()> {
        self.reclaim()?;
        self.written.set(false);
        self.pending_seed.set(false);
        Ok(())
    }

    /// Sets the adjoint to one: the seed of a reverse pass. The buffer is
    /// filled when something first reads it (a reverse kernel, the host):
    /// a pass whose partials all lie in their adjoints never does.
    pub(crate) fn seed(&self) -> Result<()> {
        self.reclaim()?;
        self.written.set(true);
        self.pending_seed.set(true);
        Ok(())
    }

    /// Whether the adjoint is known on the host to be one everywhere: a
    /// seed that nothing has read or added to yet.
    pub(crate) fn is_unit(&self) -> bool {
        self.pending_seed.get()
    }

    /// Adds `contribution` (same shape) into the adjoint with one fused
    /// kernel; into a zero adjoint, the contribution is assigned.
    pub(crate) fn add_to_adjoint(&self, contribution: &MatrixCl<T>) -> Result<()> {
        self.reclaim()?;
        self.fill_seed()?;
        if self.written.get() {
            self.adjoint.add_assign(contribution)
        } else {
            self.adjoint.assign(contribution)?;
            self.written.set(true);
            Ok(())
        }
    }

    /// Lends the adjoint's buffer to a step's forward kernel while the
    /// adjoint is zero and not lent already.
    fn lend(&self) -> Option<Rc<LentAdjoint<T>>> {
        let free = !self.written.get()
            && self.failure.borrow().is_none()
            && self.lent.borrow().strong_count() == 0;
        free.then(|| {
            let lent = Rc::new(LentAdjoint {
                buffer: self.adjoint.share(),
                moved: OnceCell::new(),
                consumed: Cell::new(false),
            });
            *self.lent.borrow_mut() = Rc::downgrade(&lent);
            lent
        })
    }

    /// Takes the adjoint's buffer back from the step it is lent to, which
    /// keeps a copy of its partial: the adjoint is zero again.
    fn reclaim(&self) -> Result<()> {
        let lent = self.lent.borrow().upgrade();
        if let Some(lent) = lent {
            lent.move_out()?;
        }
        *self.lent.borrow_mut() = Weak::new();
        Ok(())
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
        self.reclaim()?;
        self.fill_seed()?;
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
    fn lend_adjoint(&self) -> Option<Rc<dyn Any>> {
        self.lend().map(|lent| lent as Rc<dyn Any>)
    }
    fn adopt_lent_partial(&self, keep_copy: bool) -> Result<KernelArg<'_>> {
        let lent = self
            .lent
            .borrow()
            .upgrade()
            .ok_or_else(|| Error::InvalidArgument {
                function: "Var::grad",
                argument: "tape",
                reason: "internal: a step's partial was not in its variable's adjoint".into(),
            })?;
        if keep_copy {
            lent.move_out()?;
        } else {
            lent.consumed.set(true);
        }
        *self.lent.borrow_mut() = Weak::new();
        self.written.set(true);
        Ok(KernelArg::buffer(&self.adjoint, Access::ReadWrite))
    }
    fn zero_adjoint(&self) -> Result<()> {
        self.clear_adjoint()
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
