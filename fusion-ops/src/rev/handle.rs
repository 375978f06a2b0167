//! A variable of any element type, as a step sees it.

use clfuse_core::{KernelArg, Result};
use std::any::Any;
use std::rc::Rc;

/// What a step needs of a variable of any element type: its identity, its
/// shape and its adjoint as a kernel argument.
pub trait VarHandle {
    /// The buffer id of its value.
    fn value_id(&self) -> u64;
    /// Rows and columns.
    fn shape(&self) -> (usize, usize);
    /// The OpenCL C element type.
    fn cl_type(&self) -> &'static str;
    /// Its adjoint as a reverse kernel's argument, and whether the kernel
    /// is to write it (`=`) rather than add to it: only when it is still
    /// zero and `covers_all` (the kernel writes every element). A zero
    /// adjoint that the kernel covers in part is filled with zeros first.
    fn adjoint_arg(&self, covers_all: bool) -> Result<(KernelArg<'_>, bool)>;
    /// Lends its adjoint's buffer to a step's forward kernel, to store the
    /// variable's partial in (an `Rc<LentAdjoint<T>>` of its element type):
    /// `None` unless the adjoint is zero and not lent already.
    fn lend_adjoint(&self) -> Option<Rc<dyn Any>>;
    /// Takes back its adjoint's buffer, lent to the step now running its
    /// reverse pass, as the adjoint that the partial held there is (at
    /// seed one): the kernel argument to scale it by the seed. With
    /// `keep_copy`, the step keeps a copy of the partial for another pass.
    fn adopt_lent_partial(&self, keep_copy: bool) -> Result<KernelArg<'_>>;
    /// Sets its adjoint to zero (no device work: the buffer is marked unwritten).
    fn zero_adjoint(&self) -> Result<()>;
    /// Fails if its adjoint could not be allocated.
    fn usable(&self, function: &'static str) -> Result<()>;
}

impl std::fmt::Debug for dyn VarHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variable")
            .field("buffer", &self.value_id())
            .field("shape", &self.shape())
            .finish()
    }
}
