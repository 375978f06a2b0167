//! `a * b` between matrix expressions: the GEMM leaf inside a fused tree.
//!
//! A product is not fusable: its operands are evaluated (or used directly
//! when they are plain matrices), multiplied by the hand-written GEMM
//! kernel, and the result is read by the fused kernel like any matrix.

use crate::assign::eval_direct;
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape};
use fusion_core::expr::{Load, MatrixProduct, MatrixRef};
use fusion_core::{Access, ClFloat, Error, MatrixCl, Result, View};

/// `op` as a matrix: itself when it is one, else evaluated into a new one.
fn operand_matrix<O: Operation>(op: &O) -> Result<MatrixRef<'_, O::Scalar>> {
    match op.matrix() {
        Some(m) => Ok(MatrixRef::Borrowed(m)),
        None => Ok(MatrixRef::Owned(eval_direct(op)?)),
    }
}

/// The product, computed on first use.
fn computed<T: ClFloat, L: Operation<Scalar = T>, R: Operation<Scalar = T>>(
    p: &MatrixProduct<L, R>,
) -> Result<&MatrixCl<T>> {
    if p.result.get().is_none() {
        let (lhs, rhs) = (p.lhs.shape()?, p.rhs.shape()?);
        let (Some(l), Some(r)) = (lhs, rhs) else {
            return Err(Error::InvalidArgument {
                function: "multiply",
                argument: "operands",
                reason:
                    "`*` between expressions multiplies matrices; scale by a scalar with `* 2.0`"
                        .into(),
            });
        };
        if l.1 != r.0 {
            return Err(Error::DimensionMismatch {
                operation: "multiply".into(),
                lhs: l,
                rhs: r,
            });
        }
        let a = operand_matrix(&p.lhs)?;
        let b = operand_matrix(&p.rhs)?;
        let product = fusion_kernels::multiply(&a, &b)?;
        let _ = p.result.set(Box::new(product));
    }
    stored(p).ok_or_else(|| Error::InvalidArgument {
        function: "multiply",
        argument: "result",
        reason: "the product holds a matrix of another element type".into(),
    })
}

fn stored<T: ClFloat, L, R>(p: &MatrixProduct<L, R>) -> Option<&MatrixCl<T>> {
    p.result.get().and_then(|m| m.downcast_ref::<MatrixCl<T>>())
}

impl<T: ClFloat, L: Operation<Scalar = T>, R: Operation<Scalar = T>> Operation
    for MatrixProduct<L, R>
{
    type Scalar = T;
    // The fused kernel only reads the product: the same code as a matrix.
    type Key = Load<'static, T>;

    fn shape(&self) -> Result<Shape> {
        let m = computed(self)?;
        Ok(Some((m.rows(), m.cols())))
    }

    fn view(&self) -> View {
        match stored::<T, L, R>(self) {
            Some(m) => m.view(),
            None => self.lhs.view().union(self.rhs.view()),
        }
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        // Every assignment asks for the shape first, so the product exists;
        // if it does not (its computation failed), nothing is bound and the
        // launch reports the mismatch as an error.
        match computed(self) {
            Ok(m) => Load(MatrixRef::Borrowed(m)).generate(g, at),
            Err(_) => "0".to_string(),
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(m) = stored::<T, L, R>(self) {
            b.matrix(m, Access::Read, true);
        }
    }

    fn matrix(&self) -> Option<&MatrixCl<T>> {
        stored(self)
    }
}
