//! The element types a `MatrixCl` can hold and how each is spelled in OpenCL C.

/// An element type usable on the device: `f64`, `f32` or `i32`.
///
/// ```
/// use clfuse_core::ClType;
/// assert_eq!(<f64 as ClType>::CL_NAME, "double");
/// assert_eq!(<i32 as ClType>::CL_NAME, "int");
/// ```
pub trait ClType:
    Copy
    + Default
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + std::fmt::Debug
    + 'static
    + Promote<Self, Output = Self>
{
    /// The OpenCL C spelling of the type.
    const CL_NAME: &'static str;
    /// Whether the device needs fp64 support for this type.
    const NEEDS_FP64: bool;
    /// Rank in the promotion order `i32 < f32 < f64`.
    const RANK: u8;
    /// Converts to `f64` (for error messages and host references).
    fn to_f64(self) -> f64;
    /// Converts from `f64` with the C cast semantics (truncation for integers).
    fn from_f64(v: f64) -> Self;
    /// The multiplicative identity.
    fn one() -> Self;
}

impl ClType for f64 {
    const CL_NAME: &'static str = "double";
    const NEEDS_FP64: bool = true;
    const RANK: u8 = 2;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn one() -> Self {
        1.0
    }
}

impl ClType for f32 {
    const CL_NAME: &'static str = "float";
    const NEEDS_FP64: bool = false;
    const RANK: u8 = 1;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn one() -> Self {
        1.0
    }
}

impl ClType for i32 {
    const CL_NAME: &'static str = "int";
    const NEEDS_FP64: bool = false;
    const RANK: u8 = 0;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as i32
    }
    fn one() -> Self {
        1
    }
}

/// The type two operands promote to (`i32 + f64 -> f64`, `f32 + i32 -> f32`).
///
/// ```
/// use clfuse_core::Promote;
/// fn promoted<A: Promote<B>, B>() -> &'static str { std::any::type_name::<A::Output>() }
/// assert_eq!(promoted::<i32, f64>(), "f64");
/// assert_eq!(promoted::<f32, i32>(), "f32");
/// ```
pub trait Promote<Rhs> {
    /// The common type.
    type Output: ClType;
}

macro_rules! promote {
    ($($a:ty, $b:ty => $out:ty;)*) => { $(impl Promote<$b> for $a { type Output = $out; })* };
}

promote! {
    f64, f64 => f64; f64, f32 => f64; f64, i32 => f64;
    f32, f64 => f64; f32, f32 => f32; f32, i32 => f32;
    i32, f64 => f64; i32, f32 => f32; i32, i32 => i32;
}

/// A floating-point element type (`f64`, `f32`): what the linear-algebra
/// kernels (GEMM, triangular inverse, Cholesky) accept.
///
/// ```
/// fn needs_float<T: clfuse_core::ClFloat>() {}
/// needs_float::<f64>();
/// needs_float::<f32>();
/// ```
pub trait ClFloat: ClType {}
impl ClFloat for f64 {}
impl ClFloat for f32 {}
