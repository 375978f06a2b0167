//! Conversions between `faer` matrices and `MatrixCl` (feature `faer`).
//!
//! Both are column-major: each contiguous column is copied as a block, so
//! nothing is transposed; a strided view (a transpose, a row slice) is
//! gathered element by element.

use crate::{ClType, Error, MatrixCl};
use faer::{Mat, MatRef};

impl<T: ClType> TryFrom<MatRef<'_, T>> for MatrixCl<T> {
    type Error = Error;

    /// Copies a host matrix (or view) to the device.
    ///
    /// ```
    /// use clfuse_core::MatrixCl;
    /// let h = faer::Mat::from_fn(2, 3, |i, j| (i * 10 + j) as f64);
    /// let d = MatrixCl::try_from(h.as_ref())?;
    /// assert_eq!(d.to_vec()?, vec![0.0, 10.0, 1.0, 11.0, 2.0, 12.0]);
    /// let t = MatrixCl::try_from(h.transpose())?; // a strided view
    /// assert_eq!((t.rows(), t.cols()), (3, 2));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn try_from(m: MatRef<'_, T>) -> Result<Self, Error> {
        let (rows, cols) = (m.nrows(), m.ncols());
        let mut host = Vec::with_capacity(rows.saturating_mul(cols));
        for j in 0..cols {
            let column = m.col(j);
            match column.try_as_col_major() {
                Some(contiguous) => host.extend_from_slice(contiguous.as_slice()),
                None => host.extend(column.iter().copied()),
            }
        }
        MatrixCl::from_slice(rows, cols, &host)
    }
}

impl<T: ClType> TryFrom<&Mat<T>> for MatrixCl<T> {
    type Error = Error;

    /// Copies a host matrix to the device.
    ///
    /// ```
    /// use clfuse_core::MatrixCl;
    /// let h = faer::Mat::from_fn(2, 2, |i, j| (i + 2 * j) as f32);
    /// let d = MatrixCl::try_from(&h)?;
    /// assert_eq!(faer::Mat::try_from(&d)?, h);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn try_from(m: &Mat<T>) -> Result<Self, Error> {
        MatrixCl::try_from(m.as_ref())
    }
}

impl<T: ClType> TryFrom<&MatrixCl<T>> for Mat<T> {
    type Error = Error;

    /// Copies a device matrix to the host, a column at a time.
    fn try_from(m: &MatrixCl<T>) -> Result<Self, Error> {
        let host = m.to_vec()?;
        let rows = m.rows();
        Ok(Mat::from_fn(rows, m.cols(), |i, j| host[i + j * rows]))
    }
}
