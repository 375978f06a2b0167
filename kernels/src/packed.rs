//! Packed triangular transfers: only the triangle crosses the bus; the
//! device packs and unpacks (paper §2.2, Figure 1).

use crate::launchers as cl;
use clfuse_core::{ClType, Error, MatrixCl, NdRange, Result, View};

/// Number of elements in the packed triangle of an `n x n` matrix.
///
/// ```
/// assert_eq!(clfuse_kernels::packed_len(4), 10);
/// ```
pub fn packed_len(n: usize) -> usize {
    n * (n + 1) / 2
}

fn view_bits(function: &'static str, view: View) -> Result<i32> {
    match view {
        View::Lower | View::Upper => Ok(view.bits()),
        _ => Err(Error::InvalidView {
            function,
            view,
            reason: "packed storage holds a Lower or Upper triangle",
        }),
    }
}

/// Packed transfers of triangular matrices.
pub trait PackedTransfer<T: ClType>: Sized {
    /// Builds an `n x n` matrix with `view` (Lower or Upper) from its packed
    /// triangle (column by column, `n * (n + 1) / 2` elements); the other
    /// triangle is zeroed on the device.
    ///
    /// ```
    /// use clfuse_core::{MatrixCl, View};
    /// use clfuse_kernels::prelude::*;
    /// // [1 0; 2 3] packed by columns: 1, 2 | 3
    /// let l = MatrixCl::from_packed(2, View::Lower, &[1.0, 2.0, 3.0])?;
    /// assert_eq!(l.to_vec()?, vec![1.0, 2.0, 0.0, 3.0]);
    /// assert_eq!(l.to_packed()?, vec![1.0, 2.0, 3.0]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn from_packed(n: usize, view: View, packed: &[T]) -> Result<Self>;

    /// The packed triangle selected by the matrix's view (Lower or Upper).
    fn to_packed(&self) -> Result<Vec<T>>;
}

impl<T: ClType> PackedTransfer<T> for MatrixCl<T> {
    fn from_packed(n: usize, view: View, packed: &[T]) -> Result<Self> {
        let bits = view_bits("MatrixCl::from_packed", view)?;
        if packed.len() != packed_len(n) {
            return Err(Error::SizeMismatch {
                function: "MatrixCl::from_packed",
                argument: "packed",
                expected: packed_len(n),
                actual: packed.len(),
            });
        }
        let out = MatrixCl::<T>::uninitialized(n, n)?;
        if n > 0 {
            let staged = MatrixCl::from_slice(packed.len(), 1, packed)?;
            cl::unpack::<T>().launch(NdRange::d2([n, n]), (&out, &staged, n as i32, bits))?;
        }
        out.set_view(view);
        Ok(out)
    }

    fn to_packed(&self) -> Result<Vec<T>> {
        let bits = view_bits("MatrixCl::to_packed", self.view())?;
        if self.rows() != self.cols() {
            return Err(Error::InvalidArgument {
                function: "MatrixCl::to_packed",
                argument: "self",
                reason: format!(
                    "packed storage needs a square matrix, got {} x {}",
                    self.rows(),
                    self.cols()
                ),
            });
        }
        let n = self.rows();
        if n == 0 {
            return Ok(Vec::new());
        }
        let staged = MatrixCl::<T>::uninitialized(packed_len(n), 1)?;
        cl::pack::<T>().launch(NdRange::d2([n, n]), (&staged, self, n as i32, bits))?;
        staged.to_vec()
    }
}
