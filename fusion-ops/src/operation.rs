//! The one trait every operation implements.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use clfuse_core::{ClType, Error, MatrixCl, Result, View};

/// The shape of an operand: `None` for a scalar broadcast to any shape.
pub type Shape = Option<(usize, usize)>;

/// A node of a lazy expression: what it computes and how it is spelled in OpenCL C.
///
/// An operation declares its element type, its shape, its triangular view, the
/// code it generates and the kernel arguments it binds. Everything else
/// (caching, launching, events) is shared machinery.
///
/// `generate` and `bind` walk the tree in the same order; a leaf that appears
/// twice (the same buffer, or the same shared sub-expression) is declared and
/// bound once. Which leaves coincide is part of the kernel cache key, so the
/// two walks always agree with the cached source.
pub trait Operation {
    /// Element type of the result.
    type Scalar: ClType;
    /// The same type with every lifetime replaced by `'static`: the part of
    /// the kernel cache key that identifies the generated code.
    type Key: 'static;
    /// Rows and columns of the result, or `None` for a broadcast scalar;
    /// `Err(DimensionMismatch)` when operands disagree.
    fn shape(&self) -> Result<Shape>;
    /// Which part of the result may be non-zero.
    fn view(&self) -> View;
    /// Emits the statements computing this node's element at `at` and
    /// returns the expression (usually a variable name) holding its value.
    fn generate(&self, g: &mut Generator, at: &Index) -> String;
    /// Appends this node's kernel arguments (values only, never code).
    fn bind<'a>(&'a self, b: &mut Binder<'a>);
    /// Runs the hand-written kernels of the non-fusable leaves below this
    /// node (GEMM products), so that the fused kernel reads their results.
    /// The driver calls it once per launch, before binding and generating;
    /// [`shape`](Self::shape) and [`view`](Self::view) never run anything.
    /// Leaves keep the default; every node with operands forwards to them,
    /// passing `held` on: the product whose GEMM the launching kernel runs
    /// itself (an epilogue), which is therefore not computed here.
    fn evaluate_leaves(&self, _held: HeldProduct) -> Result<()> {
        Ok(())
    }
    /// Whether a reduction (a loop over a row) is computed below this node.
    /// The broadcasts evaluate such an operand once into a temporary by its
    /// own kernel instead of recomputing it for every element they repeat
    /// it to (see the `structural` module). Leaves keep the default; nodes
    /// with operands ask them. The answer depends only on the node's type,
    /// so a cached kernel always matches it.
    fn contains_reduction(&self) -> bool {
        false
    }
    /// The matrix this operation reads unchanged, if it is just one (a
    /// leaf): hand-written kernels then use it directly instead of
    /// evaluating the operation into a copy.
    ///
    /// ```
    /// use clfuse_ops::{IntoOperand, Operation};
    /// use clfuse_ops::prelude::*;
    /// let a = MatrixCl::from_slice(1, 1, &[1.0f64])?;
    /// assert!((&a).into_operand().matrix().is_some());
    /// assert!((&a + 1.0).into_operand().matrix().is_none());
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    fn matrix(&self) -> Option<&MatrixCl<Self::Scalar>> {
        None
    }

    /// The matrix product this node reads at its own element only, through
    /// element-wise nodes: its GEMM can compute this node's element where it
    /// stores the product's (see [`crate::epilogue`]). Element-wise nodes
    /// ask their operands; the product answers itself; everything else
    /// keeps the default, none.
    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        None
    }

    /// After [`evaluate_leaves`](Self::evaluate_leaves): the whole result,
    /// when this node is a leaf that computed it into a temporary of its
    /// own (a row-wise softmax). `eval` then returns it instead of copying
    /// it. Everything else keeps the default.
    fn take_evaluated(&mut self) -> Option<MatrixCl<Self::Scalar>> {
        None
    }
}

/// The shape of two operands combined element-wise by `operation`.
pub fn combine_shapes(operation: &str, lhs: Shape, rhs: Shape) -> Result<Shape> {
    match (lhs, rhs) {
        (Some(l), Some(r)) if l != r => Err(Error::DimensionMismatch {
            operation: operation.to_string(),
            lhs: l,
            rhs: r,
        }),
        (Some(l), _) => Ok(Some(l)),
        (None, r) => Ok(r),
    }
}

/// An operation used by reference (re-evaluated where used, unlike a shared
/// `&Expr`, which is computed once per element).
impl<O: Operation + ?Sized> Operation for &O {
    type Scalar = O::Scalar;
    type Key = O::Key;

    fn shape(&self) -> Result<Shape> {
        (**self).shape()
    }

    fn view(&self) -> View {
        (**self).view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        (**self).generate(g, at)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        (**self).bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        (**self).evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        (**self).contains_reduction()
    }
    fn matrix(&self) -> Option<&MatrixCl<Self::Scalar>> {
        (**self).matrix()
    }

    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        (**self).epilogue_product()
    }
}

/// Which GEMM product node, if any, the kernel being launched computes in
/// its own epilogue: [`Operation::evaluate_leaves`] skips that product
/// (its GEMM is the launch) and evaluates every other. It travels as an
/// argument from the launch down the expression, so a leaf's own kernel
/// (a reduction under a broadcast, launched while the leaves are being
/// evaluated) starts again from [`HeldProduct::NONE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeldProduct(usize);

impl HeldProduct {
    /// No product held: every product below is computed by its own GEMM.
    pub const NONE: HeldProduct = HeldProduct(0);

    /// The product node at address `node` (see `EpilogueProduct::node`).
    pub(crate) fn of(node: usize) -> Self {
        HeldProduct(node)
    }

    /// Whether the product node at `node` is the held one.
    pub(crate) fn holds(self, node: usize) -> bool {
        self.0 != 0 && self.0 == node
    }
}
