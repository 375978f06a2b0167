//! A variable of any element type, as a step sees it.

use clfuse_core::{KernelArg, Result};

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
