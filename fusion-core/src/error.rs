//! The one error type of the whole workspace.

use crate::view::View;

/// Everything that can go wrong in fusion.
///
/// ```
/// use clfuse_core::Error;
/// let e = Error::DimensionMismatch { operation: "add".into(), lhs: (2, 3), rhs: (3, 2) };
/// assert!(e.to_string().contains("add"));
/// ```
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// No OpenCL platform could be found (no ICD loader or no vendor driver).
    #[error(
        "no OpenCL platform found ({detail}). Install one: on Debian/Ubuntu \
         `sudo apt-get install -y pocl-opencl-icd ocl-icd-libopencl1` (CPU), or your GPU vendor's \
         OpenCL driver; `clinfo -l` lists what is installed"
    )]
    NoPlatform {
        /// What the OpenCL loader reported.
        detail: String,
    },
    /// `FUSION_PLATFORM`/`FUSION_DEVICE` (or `select_device`) matched nothing.
    #[error("no OpenCL device matches {selector:?}; available devices: {available}")]
    NoDevice {
        /// The selector that matched nothing.
        selector: String,
        /// A short list of what exists.
        available: String,
    },
    /// A matrix of one device was given to work on another (OpenCL buffers
    /// cannot cross contexts; copy it with `MatrixCl::to_device`).
    #[error(
        "{what} runs on device {expected} but was given a matrix of device {found}; copy it with MatrixCl::to_device or run the work inside that device's Device::run"
    )]
    DeviceMismatch {
        /// The kernel or call that found the matrix.
        what: String,
        /// `[slot] name` of the device the work runs on.
        expected: String,
        /// `[slot] name` of the device the matrix belongs to.
        found: String,
    },
    /// The runtime was already created, so it can no longer be configured.
    #[error("the OpenCL runtime is already initialised; {what} must be called before first use")]
    AlreadyInitialized {
        /// Which configuration call came too late.
        what: &'static str,
    },
    /// An OpenCL API call failed.
    #[error("OpenCL error {code} ({name}) in {call}")]
    OpenCl {
        /// The raw OpenCL status code.
        code: i32,
        /// Its symbolic name.
        name: String,
        /// Which operation failed.
        call: &'static str,
    },
    /// A kernel failed to compile.
    #[error("kernel `{kernel}` failed to build with options `{options}`:\n{log}")]
    Build {
        /// Kernel name.
        kernel: String,
        /// Compile options used.
        options: String,
        /// The compiler's build log.
        log: String,
    },
    /// The device lacks a capability (fp64, ...).
    #[error("unsupported on this device: {what}")]
    Unsupported {
        /// What is missing.
        what: String,
    },
    /// Operands of an operation have incompatible shapes.
    #[error("{operation}: dimension mismatch, {lhs:?} vs {rhs:?} (rows, cols)")]
    DimensionMismatch {
        /// The operation that found the mismatch.
        operation: String,
        /// Shape of the first operand (rows, cols).
        lhs: (usize, usize),
        /// Shape of the second operand (rows, cols).
        rhs: (usize, usize),
    },
    /// A host slice does not have `rows * cols` elements.
    #[error("{function}: argument `{argument}` has {actual} elements, expected {expected}")]
    SizeMismatch {
        /// Function called.
        function: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
    /// An argument has an invalid value.
    #[error("{function}: argument `{argument}` is invalid: {reason}")]
    InvalidArgument {
        /// Function called.
        function: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// A matrix with this view cannot be used here.
    #[error("{function}: view {view:?} is not allowed here ({reason})")]
    InvalidView {
        /// Function called.
        function: &'static str,
        /// The offending view.
        view: View,
        /// Why.
        reason: &'static str,
    },
    /// A check on the device found a bad element.
    #[error("{function}: {argument}[{row}, {col}] is {value}, but must be {requirement}")]
    CheckFailed {
        /// Function that performed the check.
        function: String,
        /// Argument checked.
        argument: String,
        /// Row of the first failing element (0-based).
        row: usize,
        /// Column of the first failing element (0-based).
        col: usize,
        /// Its value.
        value: f64,
        /// What it must satisfy.
        requirement: String,
    },
    /// A gather (`indexing(m, rows, cols)`) found an index outside the
    /// matrix it reads, at element `[row, col]` of its result: checked by
    /// the kernel that reads it, which read 0 there instead.
    ///
    /// ```
    /// use clfuse_core::Error;
    /// let e = Error::IndexOutOfRange {
    ///     function: "indexing", argument: "rows", row: 3, col: 0, value: 5, bound: 5, rows: 5, cols: 2,
    /// };
    /// assert_eq!(e.to_string(), "indexing: rows[3, 0] is 5, but must be in 0..5 to index a 5 x 2 matrix");
    /// ```
    #[error(
        "{function}: {argument}[{row}, {col}] is {value}, but must be in 0..{bound} to index a {rows} x {cols} matrix"
    )]
    IndexOutOfRange {
        /// Function called.
        function: &'static str,
        /// Which index: `rows` (the row indices) or `cols` (the column indices).
        argument: &'static str,
        /// Row of the first result element with a bad index (0-based).
        row: usize,
        /// Its column (0-based).
        col: usize,
        /// The index there.
        value: i64,
        /// The indices allowed are `0..bound` (the matrix's rows or columns).
        bound: usize,
        /// Rows of the matrix indexed.
        rows: usize,
        /// Columns of the matrix indexed.
        cols: usize,
    },
    /// An assignment target reaches outside the matrix it writes: nothing
    /// was written.
    #[error(
        "{function}: the {target} target ({region}) lies outside its {rows} x {cols} matrix; nothing was written"
    )]
    TargetOutOfRange {
        /// Function called.
        function: &'static str,
        /// Kind of target (`block`, `scatter`, ...).
        target: &'static str,
        /// The region or index that does not fit.
        region: String,
        /// Rows of the matrix written.
        rows: usize,
        /// Columns of the matrix written.
        cols: usize,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("{function}: {argument}[{row}, {col}] is {value}, but must be finite")]
    NotFinite {
        /// Function called.
        function: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Row of the first non-finite element (0-based).
        row: usize,
        /// Column of the first non-finite element (0-based).
        col: usize,
        /// Its value (NaN, inf or -inf).
        value: f64,
    },
    /// A matrix that must be positive definite is not (Cholesky).
    #[error(
        "{function}: argument `{argument}` is not positive definite (pivot {index} is not positive)"
    )]
    NotPositiveDefinite {
        /// Function called.
        function: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Row/column of the first failing pivot (0-based).
        index: usize,
    },
    /// A matrix that must be symmetric is not.
    #[error(
        "{function}: argument `{argument}` is not symmetric: [{row}, {col}] differs from [{col}, {row}]"
    )]
    NotSymmetric {
        /// Function called.
        function: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Row of the first asymmetric element (0-based).
        row: usize,
        /// Column of the first asymmetric element (0-based).
        col: usize,
    },
    /// A matrix holds a NaN where none is allowed.
    #[error("{function}: argument `{argument}` is NaN at [{row}, {col}]")]
    NaN {
        /// Function called.
        function: &'static str,
        /// Argument name.
        argument: &'static str,
        /// Row of the first NaN (0-based).
        row: usize,
        /// Column of the first NaN (0-based).
        col: usize,
    },
}

/// Result alias used across fusion.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The same error as raised by `function` about its `argument`: for a
    /// function that hands its argument to another (a density to the
    /// Cholesky), so that the message names what the caller passed. Errors
    /// that name no argument are returned as they are.
    ///
    /// ```
    /// use clfuse_core::Error;
    /// let inner = Error::NotPositiveDefinite { function: "cholesky_decompose", argument: "a", index: 3 };
    /// let outer = inner.renamed("multi_normal_lpdf", "Sigma");
    /// assert_eq!(
    ///     outer.to_string(),
    ///     "multi_normal_lpdf: argument `Sigma` is not positive definite (pivot 3 is not positive)"
    /// );
    /// ```
    pub fn renamed(self, function: &'static str, argument: &'static str) -> Self {
        match self {
            Error::InvalidArgument { reason, .. } => Error::InvalidArgument {
                function,
                argument,
                reason,
            },
            Error::NotFinite {
                row, col, value, ..
            } => Error::NotFinite {
                function,
                argument,
                row,
                col,
                value,
            },
            Error::NotPositiveDefinite { index, .. } => Error::NotPositiveDefinite {
                function,
                argument,
                index,
            },
            Error::NotSymmetric { row, col, .. } => Error::NotSymmetric {
                function,
                argument,
                row,
                col,
            },
            Error::NaN { row, col, .. } => Error::NaN {
                function,
                argument,
                row,
                col,
            },
            other => other,
        }
    }

    /// Wraps an OpenCL status code from `call`.
    pub(crate) fn cl(call: &'static str, err: opencl3::error_codes::ClError) -> Self {
        Error::OpenCl {
            code: err.0,
            name: opencl3::error_codes::error_text(err.0).to_string(),
            call,
        }
    }
}

/// Converts an `opencl3` result into ours, naming the call.
pub(crate) trait ClResultExt<T> {
    fn call(self, call: &'static str) -> Result<T>;
}

impl<T> ClResultExt<T> for std::result::Result<T, opencl3::error_codes::ClError> {
    fn call(self, call: &'static str) -> Result<T> {
        self.map_err(|e| Error::cl(call, e))
    }
}
