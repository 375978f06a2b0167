//! Basic kernels (paper §3.5) that matrices are created with.

use fusion_core::{ClType, MatrixCl, NdRange, Result, View};

fusion_core::kernel! {
    /// Writes the identity into a `rows x cols` matrix.
    fn identity_kernel<T>(out a: T, rows: i32, cols: i32) = file "cl/identity.cl";
}

/// Constructors backed by hand-written kernels.
pub trait BasicConstructors<T: ClType>: Sized {
    /// The `n x n` identity (view `Diagonal`).
    ///
    /// ```
    /// use fusion_core::{MatrixCl, View};
    /// use fusion_kernels::prelude::*;
    /// let i = MatrixCl::<f32>::identity(2)?;
    /// assert_eq!(i.to_vec()?, vec![1.0, 0.0, 0.0, 1.0]);
    /// assert_eq!(i.view(), View::Diagonal);
    /// # Ok::<(), fusion_core::Error>(())
    /// ```
    fn identity(n: usize) -> Result<Self>;
}

impl<T: ClType> BasicConstructors<T> for MatrixCl<T> {
    fn identity(n: usize) -> Result<Self> {
        let m = MatrixCl::<T>::uninitialized(n, n)?;
        identity_kernel::<T>().launch(NdRange::d2([n, n]), (&m, n as i32, n as i32))?;
        m.set_view(View::Diagonal);
        Ok(m)
    }
}
