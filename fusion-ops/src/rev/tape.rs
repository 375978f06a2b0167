//! The thread-local tape: the reverse steps recorded by evaluations of
//! expressions on variables, and the variables alive on this thread.

use crate::rev::handle::VarHandle;
use crate::rev::kept::Unchanged;
use crate::rev::sweep::{self, ReversePlan};
use clfuse_core::{Error, Result};
use std::cell::RefCell;
use std::rc::Weak;

/// Identifies a recorded step: a serial number, unique for the thread.
pub(crate) type StepId = u64;

/// One recorded step's reverse pass.
pub(crate) trait Step {
    /// Adds the step's contributions to its operands' adjoints (queued, not waited for).
    fn reverse(&self) -> Result<()>;

    /// The step's reverse kernel as a plan the tape may launch together
    /// with its neighbours' ([`sweep`]); `Own` for a step that launches
    /// its own way (through [`reverse`](Step::reverse)).
    fn plan(&self) -> Result<Planned<'_>> {
        Ok(Planned::Own)
    }
}

/// What a step's [`plan`](Step::plan) says its reverse pass is.
pub(crate) enum Planned<'s> {
    /// Its own launches: run [`reverse`](Step::reverse).
    Own,
    /// Nothing to do (no adjoint reached its result).
    Nothing,
    /// One reverse kernel.
    Kernel(ReversePlan<'s>),
}

#[derive(Default)]
struct Tape {
    next_id: StepId,
    steps: Vec<(StepId, Box<dyn Step>)>,
    vars: Vec<Weak<dyn VarHandle>>,
    /// Constants the steps keep, each with the mark at which it was kept:
    /// it belongs to a step with a larger id.
    kept: Vec<(StepId, Weak<dyn Unchanged>)>,
    /// Registered variables at the last pruning; the list is pruned again when it doubles.
    pruned_len: usize,
}

thread_local! {
    static TAPE: RefCell<Tape> = RefCell::new(Tape::default());
    /// Whether the reverse pass running now is the last over its steps.
    static FINAL_PASS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the reverse pass running now is the last over its steps (they
/// are dropped after it): a step may then use up what it stored.
pub(crate) fn final_pass() -> bool {
    FINAL_PASS.with(|f| f.get())
}

fn busy() -> Error {
    Error::InvalidArgument {
        function: "rev",
        argument: "tape",
        reason: "the tape is in use (a reverse step recorded a new step)".into(),
    }
}

fn with_tape<R>(f: impl FnOnce(&mut Tape) -> R) -> Result<R> {
    TAPE.with(|t| {
        t.try_borrow_mut()
            .map(|mut t| f(&mut t))
            .map_err(|_| busy())
    })
}

/// Appends a step; returns its id.
pub(crate) fn push(step: Box<dyn Step>) -> Result<StepId> {
    with_tape(|t| {
        t.next_id += 1;
        t.steps.push((t.next_id, step));
        t.next_id
    })
}

/// Notes a new variable, so that [`set_zero_all_adjoints`] reaches it.
pub(crate) fn register(weak: Weak<dyn VarHandle>) {
    // A tape in use only happens inside a reverse step, which makes no
    // variables; the weak handle is an optimisation target, not a must.
    let _ = with_tape(|t| {
        t.vars.push(weak);
        if t.vars.len() >= 2 * t.pruned_len.max(64) {
            t.vars.retain(|v| v.strong_count() > 0);
            t.pruned_len = t.vars.len();
        }
    });
}

/// Notes a constant kept by the step about to be recorded, so that a
/// reverse pass over that step checks it first.
pub(crate) fn keep(constant: Weak<dyn Unchanged>) {
    // As in `register`: only a reverse step could find the tape in use,
    // and it keeps nothing.
    let _ = with_tape(|t| {
        if t.kept.len() >= 64 && t.kept.len().is_power_of_two() {
            t.kept.retain(|(_, k)| k.strong_count() > 0);
        }
        t.kept.push((t.next_id, constant));
    });
}

/// The id the next step will get: steps recorded from now on have larger ids.
pub(crate) fn mark() -> Result<StepId> {
    with_tape(|t| t.next_id)
}

/// Runs the reverse pass of the steps with ids in `(after, upto]`, newest
/// first; `last` when the caller drops those steps right after.
pub(crate) fn reverse_range(after: StepId, upto: Option<StepId>, last: bool) -> Result<()> {
    let before = FINAL_PASS.with(|f| f.replace(last));
    let outcome = reverse_steps(after, upto);
    FINAL_PASS.with(|f| f.set(before));
    outcome
}

fn reverse_steps(after: StepId, upto: Option<StepId>) -> Result<()> {
    let Some(upto) = upto else {
        return Ok(()); // an independent variable: nothing computed it
    };
    TAPE.with(|t| {
        let t = t.try_borrow().map_err(|_| busy())?;
        let Ok(last) = t.steps.binary_search_by_key(&upto, |(id, _)| *id) else {
            return Err(Error::InvalidArgument {
                function: "Var::grad",
                argument: "self",
                reason: "the step that computed this result is no longer on the tape (rev::clear or value_and_grad dropped it)".into(),
            });
        };
        // Every constant these steps read must be as it was: checked before
        // any adjoint changes.
        for (mark, kept) in &t.kept {
            if (after..upto).contains(mark)
                && let Some(kept) = kept.upgrade()
            {
                kept.unchanged("Var::grad")?;
            }
        }
        // Kernels that fit one work-group join the device's sweep.
        for (id, step) in t.steps[..=last].iter().rev() {
            if *id <= after {
                break;
            }
            match step.plan()? {
                Planned::Kernel(plan) => sweep::launch_one(plan)?,
                Planned::Nothing => {}
                Planned::Own => step.reverse()?,
            }
        }
        Ok(())
    })
}

/// Drops the steps with ids above `after` and the temporaries they hold.
pub(crate) fn truncate(after: StepId) -> Result<()> {
    let dropped = with_tape(|t| {
        let keep = t.steps.partition_point(|(id, _)| *id <= after);
        t.kept.retain(|(mark, _)| *mark < after);
        t.steps.split_off(keep)
    })?;
    drop(dropped); // outside the borrow: dropping a step may drop variables
    Ok(())
}

/// Sets the adjoint of every live variable of this thread to zero, as a
/// sampler does between gradients. No device work: each adjoint is marked
/// unwritten, and the first reverse kernel that reaches it writes it.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(1, 1, &[3.0f64])?);
/// colwise_sum(elt_multiply(&x, &x)).eval()?.grad()?;
/// rev::set_zero_all_adjoints()?;
/// assert_eq!(x.adjoint().to_vec()?, vec![0.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn set_zero_all_adjoints() -> Result<()> {
    let live = with_tape(|t| {
        t.vars.retain(|v| v.strong_count() > 0);
        t.pruned_len = t.vars.len();
        t.vars.iter().filter_map(Weak::upgrade).collect::<Vec<_>>()
    })?;
    for var in live {
        var.zero_adjoint()?;
    }
    Ok(())
}

/// Drops the whole tape of this thread: its steps and the temporaries only
/// they hold. Results computed before can no longer be differentiated;
/// their values stay valid.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(1, 1, &[3.0f64])?);
/// let y = colwise_sum(elt_multiply(&x, &x)).eval()?;
/// rev::clear()?;
/// assert!(y.grad().is_err());
/// assert_eq!(y.value().to_vec()?, vec![9.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn clear() -> Result<()> {
    truncate(0)?;
    with_tape(|t| {
        t.vars.retain(|v| v.strong_count() > 0);
        t.pruned_len = t.vars.len();
    })
}

/// Steps on this thread's tape.
pub fn steps_recorded() -> usize {
    TAPE.with(|t| t.try_borrow().map_or(0, |t| t.steps.len()))
}
