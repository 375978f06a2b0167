//! Conversions between `ndarray::Array2` and `MatrixCl` (feature `ndarray`).
//!
//! `MatrixCl` is column-major. An array in column-major (Fortran) order is
//! copied as one block; any other layout (the row-major default, a slice
//! with steps) is gathered in column order, one pass. Arrays made from a
//! device matrix are column-major, so a round trip copies no more than it must.

use crate::{ClType, Error, MatrixCl};
use ndarray::{Array2, ArrayBase, Data, Ix2, ShapeBuilder};

impl<T: ClType, S: Data<Elem = T>> TryFrom<&ArrayBase<S, Ix2>> for MatrixCl<T> {
    type Error = Error;

    /// Copies a host array (or view) to the device.
    ///
    /// ```
    /// use clfuse_core::MatrixCl;
    /// let h = ndarray::array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]; // row-major
    /// let d = MatrixCl::try_from(&h)?;
    /// assert_eq!(d.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// assert_eq!(ndarray::Array2::try_from(&d)?, h);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn try_from(a: &ArrayBase<S, Ix2>) -> Result<Self, Error> {
        let (rows, cols) = a.dim();
        // The transpose of a column-major array is in standard order.
        let columns = a.t();
        match columns.as_slice() {
            Some(contiguous) => MatrixCl::from_slice(rows, cols, contiguous),
            None => {
                let host: Vec<T> = columns.iter().copied().collect();
                MatrixCl::from_slice(rows, cols, &host)
            }
        }
    }
}

impl<T: ClType> TryFrom<&MatrixCl<T>> for Array2<T> {
    type Error = Error;

    /// Copies a device matrix to the host as a column-major array (no reordering).
    fn try_from(m: &MatrixCl<T>) -> Result<Self, Error> {
        let shape = (m.rows(), m.cols()).f();
        Array2::from_shape_vec(shape, m.to_vec()?).map_err(|e| Error::InvalidArgument {
            function: "Array2::try_from(&MatrixCl)",
            argument: "m",
            reason: format!("internal: {e}"),
        })
    }
}
