//! Triangular views: which part of a matrix may hold non-zeros (paper §2.2).

/// Which part of a matrix may be non-zero; code may skip the rest.
///
/// Elements outside a matrix's view are *structural zeros*: zero whatever
/// its buffer holds there. They are strong zeros, as in BLAS's triangular
/// routines: an element-wise product keeps only the intersection of its
/// operands' views, so a structural zero times inf or NaN stays 0. Values
/// never make structural zeros: a scalar or `constant` 0 has view `Entire`,
/// so `0.0 * x` follows IEEE (0 × inf is NaN) and reductions see every
/// element of it. Non-finite values inside a view are always computed with.
///
/// Encoded as two bits (lower part, upper part) so that unions and
/// intersections are bit operations, on the host and in generated kernels.
///
/// ```
/// use clfuse_core::View;
/// assert_eq!(View::Lower.union(View::Upper), View::Entire);
/// assert_eq!(View::Lower.intersection(View::Upper), View::Diagonal);
/// assert!(View::Lower.contains(3, 1));
/// assert!(!View::Lower.contains(1, 3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum View {
    /// Only the diagonal may be non-zero.
    Diagonal = 0,
    /// The diagonal and the part below it.
    Lower = 1,
    /// The diagonal and the part above it.
    Upper = 2,
    /// Any element may be non-zero.
    #[default]
    Entire = 3,
}

impl View {
    /// The two-bit code passed to kernels (`bit 0`: lower part, `bit 1`: upper part).
    pub fn bits(self) -> i32 {
        self as i32
    }

    /// The view with the given two-bit code.
    pub fn from_bits(bits: i32) -> View {
        match bits & 3 {
            0 => View::Diagonal,
            1 => View::Lower,
            2 => View::Upper,
            _ => View::Entire,
        }
    }

    /// Non-zeros of either operand may be non-zero (`+`, `-`).
    pub fn union(self, other: View) -> View {
        View::from_bits(self.bits() | other.bits())
    }

    /// Only positions non-zero in both may be non-zero (element-wise `*`, logical and).
    pub fn intersection(self, other: View) -> View {
        View::from_bits(self.bits() & other.bits())
    }

    /// The view of the transposed matrix.
    pub fn transpose(self) -> View {
        match self {
            View::Lower => View::Upper,
            View::Upper => View::Lower,
            v => v,
        }
    }

    /// Whether element (`row`, `col`) lies inside the view.
    pub fn contains(self, row: usize, col: usize) -> bool {
        row == col || (row > col && self.bits() & 1 != 0) || (row < col && self.bits() & 2 != 0)
    }
}
