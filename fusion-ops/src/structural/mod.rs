//! Structural operations: blocks, transposes, diagonals, broadcasts,
//! concatenation and indexing. Each computes its operand at a transformed
//! index; none moves data by itself.

mod append;
mod block;
mod broadcast;
mod indexing;
mod scalar_broadcast;
mod transpose;

pub use append::{AppendCol, AppendRow, append_col, append_row};
pub use block::{Block, block};
pub use broadcast::{
    AcrossColumns, Broadcast, BroadcastAxis, ColwiseBroadcast, DownRows, OptionalBroadcast,
    RowwiseBroadcast, colwise_broadcast, optional_broadcast, rowwise_broadcast,
};
pub use indexing::{Indexing, indexing};
pub use scalar_broadcast::{ScalarBroadcast, scalar_broadcast};
pub(crate) use scalar_broadcast::{only_element, uniform_name};
pub use transpose::{Diagonal, Transpose, diagonal, transpose};

use crate::operation::Shape;
use clfuse_core::{Error, Result};

/// Whether `start .. start + len` lies inside `0 .. limit` (checked: an
/// offset near `usize::MAX` does not wrap around).
pub(crate) fn fits(start: usize, len: usize, limit: usize) -> bool {
    start.checked_add(len).is_some_and(|end| end <= limit)
}

/// `a + b` for a concatenation's size, or an error instead of wrapping.
pub(crate) fn concatenated(function: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_add(b).ok_or_else(|| Error::InvalidArgument {
        function,
        argument: "a, b",
        reason: format!("{a} + {b} overflows"),
    })
}

pub(crate) fn shape_or_err(function: &'static str, s: Shape, what: &str) -> Result<(usize, usize)> {
    s.ok_or_else(|| Error::InvalidArgument {
        function,
        argument: "expr",
        reason: format!("{what} needs a matrix operand, not a scalar"),
    })
}
