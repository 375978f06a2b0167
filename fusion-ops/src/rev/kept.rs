//! Constants that a reverse pass reads later, kept without a copy.
//!
//! A step such as `x · β` with a constant `x` needs `x` again in its reverse
//! pass (`adj(β) = xᵀ · adj`). Copying `x` at every evaluation would cost
//! a full read and write of it, more than the product itself. Instead the
//! step keeps a second handle to the caller's buffer ([`MatrixCl::share`]:
//! the buffer lives until the tape lets go) and the buffer's write count;
//! should anything write the buffer before the reverse pass reads it, the
//! gradient would mix old and new values, so the reverse pass returns an
//! error instead.

use crate::rev::tape;
use clfuse_core::{ClType, Error, MatrixCl, Result};
use std::rc::{Rc, Weak};

/// A constant kept for a reverse pass: the caller's buffer, shared, and how
/// often it had been written when it was kept. The tape checks every
/// constant its steps keep before a reverse pass begins, so a stale one
/// stops `grad` before any adjoint changes.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::Kept;
/// let x = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let kept = Kept::new(&x);
/// assert_eq!(kept.get("grad")?.to_vec()?, vec![1.0, 2.0]);
/// x.fill(0.0)?; // written after it was kept
/// assert!(kept.get("grad").is_err());
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub struct Kept<T: ClType>(Rc<Snapshot<T>>);

struct Snapshot<T: ClType> {
    matrix: MatrixCl<T>,
    writes: u64,
}

/// What the tape asks of a kept constant of any element type.
pub(crate) trait Unchanged {
    /// An error naming `function` if the constant was written since it was kept.
    fn unchanged(&self, function: &'static str) -> Result<()>;
}

impl<T: ClType> Unchanged for Snapshot<T> {
    fn unchanged(&self, function: &'static str) -> Result<()> {
        if self.matrix.events().write_count() == self.writes {
            return Ok(());
        }
        Err(Error::InvalidArgument {
            function,
            argument: "a constant the tape reads",
            reason: format!(
                "the {} x {} {} matrix was written after a step on the tape read \
                 it; a gradient would mix old and new values (rev::clear() the \
                 tape and evaluate again, or write to a copy)",
                self.matrix.rows(),
                self.matrix.cols(),
                T::CL_NAME
            ),
        })
    }
}

impl<T: ClType> Kept<T> {
    /// Keeps `matrix` as it is now (no copy) for the step about to be recorded.
    pub fn new(matrix: &MatrixCl<T>) -> Self {
        let snapshot = Rc::new(Snapshot {
            matrix: matrix.share(),
            writes: matrix.events().write_count(),
        });
        tape::keep(Rc::downgrade(&snapshot) as Weak<dyn Unchanged>);
        Kept(snapshot)
    }

    /// The kept matrix, or an error naming `function` if its buffer was
    /// written after it was kept.
    pub fn get(&self, function: &'static str) -> Result<&MatrixCl<T>> {
        self.0.unchanged(function)?;
        Ok(&self.0.matrix)
    }
}

impl<T: ClType> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("matrix", &self.0.matrix)
            .field("writes", &self.0.writes)
            .finish()
    }
}
