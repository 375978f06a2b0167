//! Conversions between `nalgebra::DMatrix` and `MatrixCl` (both column-major).

use crate::{ClType, Error, MatrixCl};
use nalgebra::{DMatrix, Scalar};

impl<T: ClType + Scalar> TryFrom<&DMatrix<T>> for MatrixCl<T> {
    type Error = Error;

    /// Copies a host matrix to the device.
    ///
    /// ```
    /// use clfuse_core::MatrixCl;
    /// let h = nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]);
    /// let d = MatrixCl::try_from(&h)?;
    /// assert_eq!(nalgebra::DMatrix::try_from(&d)?, h);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn try_from(m: &DMatrix<T>) -> Result<Self, Error> {
        MatrixCl::from_slice(m.nrows(), m.ncols(), m.as_slice())
    }
}

impl<T: ClType + Scalar> TryFrom<&MatrixCl<T>> for DMatrix<T> {
    type Error = Error;

    /// Copies a device matrix to the host.
    fn try_from(m: &MatrixCl<T>) -> Result<Self, Error> {
        Ok(DMatrix::from_vec(m.rows(), m.cols(), m.to_vec()?))
    }
}
