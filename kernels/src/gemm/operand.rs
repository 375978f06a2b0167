//! What a product reads: a block of a matrix, possibly transposed, with the
//! view it is read with.

use crate::basic::Block;
use clfuse_core::{ClFloat, MatrixCl, View};

/// One operand of a product: a block of a matrix, possibly read transposed,
/// with the view of the block as it is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operand<'a, T: ClFloat> {
    pub matrix: &'a MatrixCl<T>,
    pub block: Block,
    pub transposed: bool,
    pub view: View,
}

impl<'a, T: ClFloat> Operand<'a, T> {
    /// The whole matrix, as stored.
    pub fn whole(matrix: &'a MatrixCl<T>) -> Self {
        Operand {
            matrix,
            block: Block::new(0, 0, matrix.rows(), matrix.cols()),
            transposed: false,
            view: matrix.view(),
        }
    }

    /// A block, read as `view`.
    pub fn block(matrix: &'a MatrixCl<T>, block: Block, view: View) -> Self {
        Operand {
            matrix,
            block,
            transposed: false,
            view,
        }
    }

    /// The same operand read transposed.
    pub fn t(self) -> Self {
        Operand {
            transposed: !self.transposed,
            view: self.view.transpose(),
            ..self
        }
    }

    /// (rows, cols) as read.
    pub fn shape(&self) -> (usize, usize) {
        if self.transposed {
            (self.block.cols, self.block.rows)
        } else {
            (self.block.rows, self.block.cols)
        }
    }

    /// The block's first element in the matrix's buffer.
    pub fn offset(&self) -> usize {
        self.block.row + self.matrix.rows() * self.block.col
    }
}

/// `m` itself, or `stand_in` when `m` has no buffer (an empty inner
/// dimension): the kernel never reads it then, but OpenCL needs a buffer.
pub(crate) fn or_stand_in<'a, T: ClFloat>(
    m: &'a MatrixCl<T>,
    stand_in: &'a MatrixCl<T>,
) -> &'a MatrixCl<T> {
    if m.is_empty() { stand_in } else { m }
}
